//! The API keys' writes.

use async_trait::async_trait;
use muster_domain::model::{ApiKey, ApiKeyId, InboundKey, InboundKeyId, OrgId, UserId};
use muster_domain::ports::{KeysTx, Lock, RepositoryError};
use time::OffsetDateTime;

use super::{MemoryTransaction, primary_key};

#[async_trait]
impl KeysTx for MemoryTransaction {
    async fn insert_api_key(&mut self, key: &ApiKey) -> Result<(), RepositoryError> {
        let taken = self.state.api_keys.contains_key(&key.id.as_uuid())
            || self
                .state
                .api_keys
                .values()
                .any(|k| k.key_hash == key.key_hash);
        if taken {
            return Err(primary_key("api_keys"));
        }
        self.state.api_keys.put(key.id.as_uuid(), key.clone());
        Ok(())
    }

    async fn delete_api_key(
        &mut self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError> {
        let owned = self
            .state
            .api_keys
            .get(&id.as_uuid())
            .is_some_and(|k| k.org_id == org && k.user_id == user);
        Ok(if owned {
            self.state.api_keys.take(&id.as_uuid())
        } else {
            None
        })
    }

    async fn inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
        _lock: Lock,
    ) -> Result<Option<InboundKey>, RepositoryError> {
        Ok(self.state.inbound_keys.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_inbound_key(&mut self, key: &InboundKey) -> Result<(), RepositoryError> {
        let taken = self.state.inbound_keys.contains_key(&key.id.as_uuid())
            || self.state.inbound_keys.values().any(|k| k.key == key.key);
        if taken {
            return Err(primary_key("inbound_keys"));
        }
        self.state.inbound_keys.put(key.id.as_uuid(), key.clone());
        Ok(())
    }

    async fn update_inbound_key(&mut self, key: &InboundKey) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .inbound_keys
            .row_in_org(&key.id.as_uuid(), key.org_id);
        Ok(stored.map(|k| *k = key.clone()).is_some())
    }

    async fn delete_inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<bool, RepositoryError> {
        Ok(self
            .state
            .inbound_keys
            .take_in_org(&id.as_uuid(), org)
            .is_some())
    }

    async fn touch_inbound_key(
        &mut self,
        id: InboundKeyId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        if let Some(key) = self.state.inbound_keys.row_mut(&id.as_uuid()) {
            key.last_used_at = Some(at);
        }
        Ok(())
    }
}
