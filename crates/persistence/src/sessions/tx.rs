//! [`SessionsTx`] on a unit of work's transaction: refresh tokens, recovery codes, started
//! sign-ins and sign-in throttles.

use async_trait::async_trait;
use muster_domain::model::{
    LoginFamilyId, OAuthState, RefreshToken, RefreshTokenId, TokenHash, UserId,
};
use muster_domain::ports::{Lock, RepositoryError, SessionsTx};
use time::OffsetDateTime;

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::login_throttles::LoginThrottleRow;
use super::oauth_states::OAuthStateRow;
use super::refresh_tokens::RefreshTokenRow;
use super::{login_throttles, oauth_states, recovery_codes, refresh_tokens};

#[async_trait]
impl SessionsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.insert_refresh_token", skip_all, fields(otel.kind = "client"))]
    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), RepositoryError> {
        refresh_tokens::insert(&mut self.conn, &RefreshTokenRow::from(token))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.refresh_token_by_hash", skip_all, fields(otel.kind = "client"))]
    async fn refresh_token_by_hash(
        &mut self,
        hash: &TokenHash,
        lock: Lock,
    ) -> Result<Option<RefreshToken>, RepositoryError> {
        let row = refresh_tokens::find_by_hash(&mut self.conn, hash, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(RefreshToken::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.mark_refresh_token_replaced", skip_all, fields(otel.kind = "client"))]
    async fn mark_refresh_token_replaced(
        &mut self,
        id: RefreshTokenId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        refresh_tokens::mark_replaced(&mut self.conn, id, at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.revoke_login_family", skip_all, fields(otel.kind = "client"))]
    async fn revoke_login_family(
        &mut self,
        family: LoginFamilyId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError> {
        let revoked = refresh_tokens::revoke_family(&mut self.conn, family, at)
            .await
            .map_err(from_diesel)?;
        Ok(revoked as u64)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.revoke_user_refresh_tokens", skip_all, fields(otel.kind = "client"))]
    async fn revoke_user_refresh_tokens(
        &mut self,
        user: UserId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError> {
        let revoked = refresh_tokens::revoke_of_user(&mut self.conn, user, at)
            .await
            .map_err(from_diesel)?;
        Ok(revoked as u64)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.replace_recovery_codes", skip_all, fields(otel.kind = "client"))]
    async fn replace_recovery_codes(
        &mut self,
        user: UserId,
        hashes: &[TokenHash],
    ) -> Result<(), RepositoryError> {
        recovery_codes::replace(&mut self.conn, user, hashes)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.use_recovery_code", skip_all, fields(otel.kind = "client"))]
    async fn use_recovery_code(
        &mut self,
        user: UserId,
        hash: &TokenHash,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        recovery_codes::use_once(&mut self.conn, user, hash, at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_oauth_state", skip_all, fields(otel.kind = "client"))]
    async fn insert_oauth_state(&mut self, state: &OAuthState) -> Result<(), RepositoryError> {
        oauth_states::insert(&mut self.conn, &OAuthStateRow::from(state))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.take_oauth_state", skip_all, fields(otel.kind = "client"))]
    async fn take_oauth_state(
        &mut self,
        hash: &TokenHash,
    ) -> Result<Option<OAuthState>, RepositoryError> {
        let row = oauth_states::take(&mut self.conn, hash)
            .await
            .map_err(from_diesel)?;
        row.map(OAuthState::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.login_throttle", skip_all, fields(otel.kind = "client"))]
    async fn login_throttle(
        &mut self,
        key: &muster_domain::model::ThrottleKey,
        now: OffsetDateTime,
    ) -> Result<muster_domain::model::LoginThrottle, RepositoryError> {
        let row = login_throttles::lock(&mut self.conn, key, now)
            .await
            .map_err(from_diesel)?;
        muster_domain::model::LoginThrottle::try_from(row)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.save_login_throttle", skip_all, fields(otel.kind = "client"))]
    async fn save_login_throttle(
        &mut self,
        key: &muster_domain::model::ThrottleKey,
        throttle: &muster_domain::model::LoginThrottle,
    ) -> Result<(), RepositoryError> {
        let row = LoginThrottleRow::new(key, throttle);
        login_throttles::save(&mut self.conn, row)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.clear_login_throttle", skip_all, fields(otel.kind = "client"))]
    async fn clear_login_throttle(
        &mut self,
        key: &muster_domain::model::ThrottleKey,
    ) -> Result<(), RepositoryError> {
        login_throttles::clear(&mut self.conn, key)
            .await
            .map_err(from_diesel)
    }
}
