use async_trait::async_trait;
use time::OffsetDateTime;

use super::RepositoryError;
use crate::model::{ApiKey, ApiKeyId, Email, OrgId, TokenHash, User, UserId};

/// Stored users and their API keys (reads; changes go through a
/// [`Transaction`](super::Transaction)).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait UserRepository: Send + Sync {
    /// The user with `id` in `org`, if any.
    async fn user(&self, org: OrgId, id: UserId) -> Result<Option<User>, RepositoryError>;

    /// The user of `org` with that (normalized) e-mail, if any.
    async fn user_by_email(
        &self,
        org: OrgId,
        email: &Email,
    ) -> Result<Option<User>, RepositoryError>;

    /// The API key whose hash is `hash`, with its owner as stored now. Keys are found by
    /// their secret, so this is the one lookup not scoped to an organization.
    async fn api_key_by_hash(
        &self,
        hash: &TokenHash,
    ) -> Result<Option<(ApiKey, User)>, RepositoryError>;

    /// The keys of `user`, newest first.
    async fn api_keys_of(&self, org: OrgId, user: UserId) -> Result<Vec<ApiKey>, RepositoryError>;

    /// The key `id` if `user` of `org` owns it.
    async fn api_key(
        &self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError>;

    /// Records that key `id` was used at `at`, unless a use at or after `unless_since`
    /// is already recorded (so a busy key costs one write a minute, not one a request).
    async fn touch_api_key(
        &self,
        id: ApiKeyId,
        at: OffsetDateTime,
        unless_since: OffsetDateTime,
    ) -> Result<(), RepositoryError>;

    /// Forgets started identity-provider sign-ins that expired before `now` (abandoned
    /// in the browser); how many. May run as several transactions, oldest first (anyone
    /// can start sign-ins, so there may be many): on an error the ones already forgotten
    /// stay forgotten.
    async fn purge_expired_sign_ins(&self, now: OffsetDateTime) -> Result<u64, RepositoryError>;

    /// Forgets the login-throttle streaks whose last failure was before `before` (over,
    /// see [`FORGOTTEN_AFTER`](crate::rules::login::FORGOTTEN_AFTER)); how many. May run
    /// as several transactions, oldest first (anyone can start streaks, one per e-mail
    /// typed): on an error the ones already forgotten stay forgotten.
    async fn purge_login_throttles(&self, before: OffsetDateTime) -> Result<u64, RepositoryError>;
}
