//! The users' reads: users, their sessions, keys, second factors and login throttles.

use async_trait::async_trait;
use muster_domain::model::{ApiKey, ApiKeyId, OrgId, TokenHash, User, UserId};
use muster_domain::ports::{RepositoryError, UserRepository};
use time::OffsetDateTime;

use super::newest_first;
use crate::MemoryStore;

#[async_trait]
impl UserRepository for MemoryStore {
    async fn user(&self, org: OrgId, id: UserId) -> Result<Option<User>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.users.in_org(&id.as_uuid(), org).cloned())
    }

    async fn user_by_email(
        &self,
        org: OrgId,
        email: &muster_domain::model::Email,
    ) -> Result<Option<User>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .users
            .values()
            .find(|u| u.org_id == org && u.email == *email)
            .cloned())
    }

    async fn api_key_by_hash(
        &self,
        hash: &TokenHash,
    ) -> Result<Option<(ApiKey, User)>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .api_keys
            .values()
            .find(|k| k.key_hash == *hash)
            .and_then(|k| {
                let owner = state.users.get(&k.user_id.as_uuid())?;
                Some((k.clone(), owner.clone()))
            }))
    }

    async fn api_keys_of(&self, org: OrgId, user: UserId) -> Result<Vec<ApiKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(newest_first(&state.api_keys, None)
            .filter(|k| k.org_id == org && k.user_id == user)
            .cloned()
            .collect())
    }

    async fn api_key(
        &self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .api_keys
            .get(&id.as_uuid())
            .filter(|k| k.org_id == org && k.user_id == user)
            .cloned())
    }

    async fn touch_api_key(
        &self,
        id: ApiKeyId,
        at: OffsetDateTime,
        unless_since: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        self.change(|state| {
            if let Some(key) = state.api_keys.row_mut(&id.as_uuid())
                && key.last_used_at.is_none_or(|last| last < unless_since)
            {
                key.last_used_at = Some(at);
            }
        })
        .await;
        Ok(())
    }

    async fn purge_expired_sign_ins(&self, now: OffsetDateTime) -> Result<u64, RepositoryError> {
        Ok(self
            .change(|state| state.oauth_states.retain(|_, s| s.expires_at >= now))
            .await)
    }

    async fn purge_login_throttles(&self, before: OffsetDateTime) -> Result<u64, RepositoryError> {
        Ok(self
            .change(|state| {
                state
                    .login_throttles
                    .retain(|_, s| s.last_failure_at.is_some_and(|last| last >= before))
            })
            .await)
    }
}
