//! [`OrganizationsTx`]: what a transaction reads and writes of organizations and their
//! users.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::model::{Email, OrgId, Organization, User, UserId};
use crate::ports::{Lock, RepositoryError};

/// Organizations and their users. Part of [`Transaction`](crate::ports::Transaction); every
/// method is scoped to one organization except where it says otherwise.
#[async_trait]
pub trait OrganizationsTx: Send {
    /// Whether any organization exists yet (across the deployment).
    async fn any_organization(&mut self) -> Result<bool, RepositoryError>;

    /// Stores a new organization.
    async fn insert_organization(&mut self, org: &Organization) -> Result<(), RepositoryError>;

    /// Stores a new user; a taken e-mail in the organization is
    /// [`UniqueKey::UserEmail`](crate::ports::UniqueKey::UserEmail).
    async fn insert_user(&mut self, user: &User) -> Result<(), RepositoryError>;

    /// The deployment's default organization (decision D-14), if any.
    async fn default_organization(&mut self) -> Result<Option<Organization>, RepositoryError>;

    /// The user with `id` in `org`, held with `lock` until the end of the transaction.
    async fn user(
        &mut self,
        org: OrgId,
        id: UserId,
        lock: Lock,
    ) -> Result<Option<User>, RepositoryError>;

    /// The user of `org` with that (normalized) e-mail, held with `lock`.
    async fn user_by_email(
        &mut self,
        org: OrgId,
        email: &Email,
        lock: Lock,
    ) -> Result<Option<User>, RepositoryError>;

    /// Replaces the stored user's mutable fields (e-mail, name, role, password hash,
    /// `email_verified`, second factor, throttle, last login) with those of `user`,
    /// stamped `at`. `false` when no such user exists in its organization; a taken e-mail
    /// is [`UniqueKey::UserEmail`](crate::ports::UniqueKey::UserEmail).
    async fn update_user(
        &mut self,
        user: &User,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError>;
}
