//! [`OrganizationsTx`] on a unit of work's transaction: organizations and their users.

use async_trait::async_trait;
use muster_domain::model::{Email, OrgId, Organization, User, UserId};
use muster_domain::ports::{Lock, OrganizationsTx, RepositoryError};
use time::OffsetDateTime;

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::rows::OrganizationRow;
use super::users::{UserChanges, UserRow};
use super::{queries as organizations, users};

#[async_trait]
impl OrganizationsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.any_organization", skip_all, fields(otel.kind = "client"))]
    async fn any_organization(&mut self) -> Result<bool, RepositoryError> {
        organizations::any(&mut self.conn)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_organization", skip_all, fields(otel.kind = "client"))]
    async fn insert_organization(&mut self, org: &Organization) -> Result<(), RepositoryError> {
        organizations::insert(&mut self.conn, &OrganizationRow::from(org))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_user", skip_all, fields(otel.kind = "client"))]
    async fn insert_user(&mut self, user: &User) -> Result<(), RepositoryError> {
        users::insert(&mut self.conn, &UserRow::from(user))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.default_organization", skip_all, fields(otel.kind = "client"))]
    async fn default_organization(&mut self) -> Result<Option<Organization>, RepositoryError> {
        let row = organizations::find_default(&mut self.conn)
            .await
            .map_err(from_diesel)?;
        row.map(Organization::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.user", skip_all, fields(otel.kind = "client"))]
    async fn user(
        &mut self,
        org: OrgId,
        id: UserId,
        lock: Lock,
    ) -> Result<Option<User>, RepositoryError> {
        let row = users::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(User::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.user_by_email", skip_all, fields(otel.kind = "client"))]
    async fn user_by_email(
        &mut self,
        org: OrgId,
        email: &Email,
        lock: Lock,
    ) -> Result<Option<User>, RepositoryError> {
        let row = users::find_by_email(&mut self.conn, org, email, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(User::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_user", skip_all, fields(otel.kind = "client"))]
    async fn update_user(
        &mut self,
        user: &User,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        let changes = UserChanges::new(user, at);
        users::update(&mut self.conn, user.org_id, user.id, &changes)
            .await
            .map_err(from_diesel)
    }
}
