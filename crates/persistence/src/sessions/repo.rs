//! The domain's `UserRepository` on [`Database`]: users and their API keys, and the purges
//! of expired sign-in state.

use async_trait::async_trait;
use muster_domain::model::{ApiKey, ApiKeyId, Email, OrgId, TokenHash, User, UserId};
use muster_domain::ports::{RepositoryError, UserRepository};
use time::OffsetDateTime;

use crate::Database;
use crate::db::detached;
use crate::error::from_diesel;
use crate::keys::api_keys;
use crate::organizations::users;
use crate::purge::purge_in_batches;

use super::{login_throttles, oauth_states};

#[async_trait]
impl UserRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.users.user", skip_all, fields(otel.kind = "client"))]
    async fn user(&self, org: OrgId, id: UserId) -> Result<Option<User>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = users::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(User::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.users.user_by_email", skip_all, fields(otel.kind = "client"))]
    async fn user_by_email(
        &self,
        org: OrgId,
        email: &Email,
    ) -> Result<Option<User>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = users::find_by_email(&mut pooled.conn(), org, email, None)
            .await
            .map_err(from_diesel)?;
        row.map(User::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.users.api_key_by_hash", skip_all, fields(otel.kind = "client"))]
    async fn api_key_by_hash(
        &self,
        hash: &TokenHash,
    ) -> Result<Option<(ApiKey, User)>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let found = api_keys::find_by_hash_with_owner(&mut pooled.conn(), hash)
            .await
            .map_err(from_diesel)?;
        found
            .map(|(key, owner)| Ok((ApiKey::try_from(key)?, User::try_from(owner)?)))
            .transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.users.api_keys_of", skip_all, fields(otel.kind = "client"))]
    async fn api_keys_of(&self, org: OrgId, user: UserId) -> Result<Vec<ApiKey>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = api_keys::list_of(&mut pooled.conn(), org, user)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(ApiKey::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.users.api_key", skip_all, fields(otel.kind = "client"))]
    async fn api_key(
        &self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = api_keys::find(&mut pooled.conn(), org, user, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(ApiKey::try_from).transpose()
    }

    /// A write outside any unit of work: on the writer connection (SQLite) and run to
    /// completion on its own task, like [`NonceStore::remember`](muster_domain::ports::NonceStore::remember).
    #[tracing::instrument(level = "debug", name = "db.users.touch_api_key", skip_all, fields(otel.kind = "client"))]
    async fn touch_api_key(
        &self,
        id: ApiKeyId,
        at: OffsetDateTime,
        unless_since: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        let db = self.clone();
        detached(async move {
            let mut pooled = db.pooled_for_write().await?;
            api_keys::touch(&mut pooled.conn(), id, at, unless_since)
                .await
                .map_err(from_diesel)
        })
        .await
    }

    #[tracing::instrument(level = "debug", name = "db.users.purge_expired_sign_ins", skip_all, fields(otel.kind = "client"))]
    async fn purge_expired_sign_ins(&self, now: OffsetDateTime) -> Result<u64, RepositoryError> {
        let db = self.clone();
        detached(
            async move { purge_in_batches!(db, conn => oauth_states::purge_expired(conn, now)) },
        )
        .await
    }

    #[tracing::instrument(level = "debug", name = "db.users.purge_login_throttles", skip_all, fields(otel.kind = "client"))]
    async fn purge_login_throttles(&self, before: OffsetDateTime) -> Result<u64, RepositoryError> {
        let db = self.clone();
        detached(async move { purge_in_batches!(db, conn => login_throttles::purge(conn, before)) })
            .await
    }
}
