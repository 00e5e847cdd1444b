//! The integrations' reads: inbound keys and code-host connections.

use async_trait::async_trait;
use muster_domain::model::{
    CodeHostConnection, CodeHostConnectionId, InboundKey, InboundKeyId, InstallationId, OrgId,
};
use muster_domain::ports::{CodeHostRepository, InboundKeyRepository, RepositoryError};

use super::newest_created;
use crate::MemoryStore;

#[async_trait]
impl InboundKeyRepository for MemoryStore {
    async fn list(&self, org: OrgId) -> Result<Vec<InboundKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(newest_created(
            state
                .inbound_keys
                .values()
                .filter(|k| k.org_id == org)
                .cloned(),
            |k| (k.created_at, k.id.as_uuid()),
        ))
    }

    async fn get(
        &self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<Option<InboundKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.inbound_keys.in_org(&id.as_uuid(), org).cloned())
    }

    async fn by_key(&self, key: &str) -> Result<Option<InboundKey>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.inbound_keys.values().find(|k| k.key == key).cloned())
    }
}

#[async_trait]
impl CodeHostRepository for MemoryStore {
    async fn list(&self, org: OrgId) -> Result<Vec<CodeHostConnection>, RepositoryError> {
        let state = self.snapshot();
        Ok(newest_created(
            state.codehost.values().filter(|c| c.org_id == org).cloned(),
            |c| (c.created_at, c.id.as_uuid()),
        ))
    }

    async fn get(
        &self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<Option<CodeHostConnection>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.codehost.in_org(&id.as_uuid(), org).cloned())
    }

    async fn by_installation(
        &self,
        installation: InstallationId,
    ) -> Result<Vec<CodeHostConnection>, RepositoryError> {
        let state = self.snapshot();
        let mut found: Vec<CodeHostConnection> = state
            .codehost
            .values()
            .filter(|c| c.installation_id == installation)
            .cloned()
            .collect();
        found.sort_by_key(|c| (c.created_at, c.id.as_uuid()));
        Ok(found)
    }
}
