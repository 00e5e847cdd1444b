//! [`SessionsTx`]: what a transaction reads and writes of sign-in state: refresh tokens,
//! recovery codes, identity-provider sign-ins and login throttles.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::model::{LoginFamilyId, OAuthState, RefreshToken, RefreshTokenId, TokenHash, UserId};
use crate::ports::{Lock, RepositoryError};

/// Sign-in state: refresh tokens, recovery codes, identity-provider sign-ins and login
/// throttles. Part of [`Transaction`](crate::ports::Transaction); every method is scoped to
/// one organization except where it says otherwise.
#[async_trait]
pub trait SessionsTx: Send {
    /// Stores a new refresh token.
    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), RepositoryError>;

    /// The refresh token whose hash is `hash`, held with `lock`. Found by its secret, so
    /// not scoped to an organization.
    async fn refresh_token_by_hash(
        &mut self,
        hash: &TokenHash,
        lock: Lock,
    ) -> Result<Option<RefreshToken>, RepositoryError>;

    /// Marks the refresh token `id` as replaced by a successor at `at`.
    async fn mark_refresh_token_replaced(
        &mut self,
        id: RefreshTokenId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;

    /// Revokes every not yet revoked token of the login `family`; how many.
    async fn revoke_login_family(
        &mut self,
        family: LoginFamilyId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError>;

    /// Revokes every not yet revoked refresh token of `user`; how many.
    async fn revoke_user_refresh_tokens(
        &mut self,
        user: UserId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError>;

    /// Replaces all recovery codes of `user` with `hashes` (none removes them).
    async fn replace_recovery_codes(
        &mut self,
        user: UserId,
        hashes: &[TokenHash],
    ) -> Result<(), RepositoryError>;

    /// Uses up the unused recovery code `hash` of `user` at `at`; `false` when the user
    /// has no such unused code.
    async fn use_recovery_code(
        &mut self,
        user: UserId,
        hash: &TokenHash,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError>;

    /// Stores a started identity-provider sign-in.
    async fn insert_oauth_state(&mut self, state: &OAuthState) -> Result<(), RepositoryError>;

    /// Removes and answers the started sign-in whose state hashes to `hash`, so each
    /// state is accepted once.
    async fn take_oauth_state(
        &mut self,
        hash: &TokenHash,
    ) -> Result<Option<OAuthState>, RepositoryError>;

    /// The login-throttle streak stored under `key` (empty when none), held until the
    /// end of the transaction so that concurrent attempts are counted one after the
    /// other. A missing streak is stored empty first (stamped `now`), so that even the
    /// first attempts of a streak queue behind each other.
    async fn login_throttle(
        &mut self,
        key: &crate::model::ThrottleKey,
        now: OffsetDateTime,
    ) -> Result<crate::model::LoginThrottle, RepositoryError>;

    /// Stores `throttle` as the streak under `key`.
    async fn save_login_throttle(
        &mut self,
        key: &crate::model::ThrottleKey,
        throttle: &crate::model::LoginThrottle,
    ) -> Result<(), RepositoryError>;

    /// Forgets the streak under `key`, if any.
    async fn clear_login_throttle(
        &mut self,
        key: &crate::model::ThrottleKey,
    ) -> Result<(), RepositoryError>;
}
