//! The sessions' writes: refresh tokens, recovery codes, OAuth states and login throttles.

use async_trait::async_trait;
use muster_domain::model::{
    LoginFamilyId, LoginThrottle, OAuthState, RefreshToken, RefreshTokenId, ThrottleKey, TokenHash,
    UserId,
};
use muster_domain::ports::{Lock, RepositoryError, SessionsTx};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{MemoryTransaction, insert_new};
use crate::state::{RecoveryCode, State};

#[async_trait]
impl SessionsTx for MemoryTransaction {
    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.refresh_tokens,
            token.id.as_uuid(),
            token.clone(),
            "refresh_tokens",
        )
    }

    async fn refresh_token_by_hash(
        &mut self,
        hash: &TokenHash,
        _lock: Lock,
    ) -> Result<Option<RefreshToken>, RepositoryError> {
        Ok(self
            .state
            .refresh_tokens
            .values()
            .find(|t| t.token_hash == *hash)
            .cloned())
    }

    async fn mark_refresh_token_replaced(
        &mut self,
        id: RefreshTokenId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        if let Some(token) = self.state.refresh_tokens.row_mut(&id.as_uuid()) {
            token.replaced_at = Some(at);
        }
        Ok(())
    }

    async fn revoke_login_family(
        &mut self,
        family: LoginFamilyId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError> {
        Ok(revoke(&mut self.state, at, |t| t.family_id == family))
    }

    async fn revoke_user_refresh_tokens(
        &mut self,
        user: UserId,
        at: OffsetDateTime,
    ) -> Result<u64, RepositoryError> {
        Ok(revoke(&mut self.state, at, |t| t.user_id == user))
    }

    async fn replace_recovery_codes(
        &mut self,
        user: UserId,
        hashes: &[TokenHash],
    ) -> Result<(), RepositoryError> {
        let codes = hashes
            .iter()
            .map(|h| RecoveryCode {
                hash: h.0,
                used_at: None,
            })
            .collect::<Vec<_>>();
        if codes.is_empty() {
            self.state.recovery_codes.take(&user.as_uuid());
        } else {
            self.state.recovery_codes.put(user.as_uuid(), codes);
        }
        Ok(())
    }

    async fn use_recovery_code(
        &mut self,
        user: UserId,
        hash: &TokenHash,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        let unused = self
            .state
            .recovery_codes
            .get(&user.as_uuid())
            .and_then(|codes| {
                codes
                    .iter()
                    .position(|c| c.hash == hash.0 && c.used_at.is_none())
            });
        let Some(index) = unused else {
            return Ok(false);
        };
        if let Some(codes) = self.state.recovery_codes.row_mut(&user.as_uuid()) {
            codes[index].used_at = Some(at);
        }
        Ok(true)
    }

    async fn insert_oauth_state(&mut self, state: &OAuthState) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.oauth_states,
            state.state_hash.0,
            state.clone(),
            "oauth_states",
        )
    }

    async fn take_oauth_state(
        &mut self,
        hash: &TokenHash,
    ) -> Result<Option<OAuthState>, RepositoryError> {
        Ok(self.state.oauth_states.take(&hash.0))
    }

    async fn login_throttle(
        &mut self,
        key: &ThrottleKey,
        now: OffsetDateTime,
    ) -> Result<LoginThrottle, RepositoryError> {
        if let Some(streak) = self.state.login_throttles.get(&key.0) {
            return Ok(*streak);
        }
        // Stored empty first, stamped `now`, as the databases do.
        let empty = LoginThrottle {
            failures: 0,
            last_failure_at: Some(now),
        };
        self.state.login_throttles.put(key.0, empty);
        Ok(empty)
    }

    async fn save_login_throttle(
        &mut self,
        key: &ThrottleKey,
        throttle: &LoginThrottle,
    ) -> Result<(), RepositoryError> {
        self.state.login_throttles.put(key.0, *throttle);
        Ok(())
    }

    async fn clear_login_throttle(&mut self, key: &ThrottleKey) -> Result<(), RepositoryError> {
        self.state.login_throttles.take(&key.0);
        Ok(())
    }
}

/// Revokes the not yet revoked refresh tokens `which` selects; how many.
fn revoke(state: &mut State, at: OffsetDateTime, which: impl Fn(&RefreshToken) -> bool) -> u64 {
    let ids: Vec<Uuid> = state
        .refresh_tokens
        .iter()
        .filter(|(_, t)| t.revoked_at.is_none() && which(t))
        .map(|(id, _)| *id)
        .collect();
    for id in &ids {
        if let Some(token) = state.refresh_tokens.row_mut(id) {
            token.revoked_at = Some(at);
        }
    }
    u64::try_from(ids.len()).unwrap_or(u64::MAX)
}
