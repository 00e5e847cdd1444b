//! The organizations' and their treasuries' reads.

use async_trait::async_trait;
use muster_domain::model::{OrgId, Organization, Treasury, TreasuryEntry, TreasuryEntryId};
use muster_domain::ports::{OrganizationRepository, RepositoryError, TreasuryRepository};

use super::{first, newest_first};
use crate::MemoryStore;

#[async_trait]
impl OrganizationRepository for MemoryStore {
    async fn get(&self, id: OrgId) -> Result<Option<Organization>, RepositoryError> {
        Ok(self.snapshot().organizations.get(&id.as_uuid()).cloned())
    }

    async fn default_organization(&self) -> Result<Option<Organization>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.organizations.values().find(|o| o.is_default).cloned())
    }

    async fn any_exists(&self) -> Result<bool, RepositoryError> {
        Ok(!self.snapshot().organizations.is_empty())
    }
}

#[async_trait]
impl TreasuryRepository for MemoryStore {
    async fn treasury(&self, org: OrgId) -> Result<Treasury, RepositoryError> {
        Ok(self
            .snapshot()
            .treasuries
            .get(&org.as_uuid())
            .cloned()
            .unwrap_or_else(|| Treasury::empty(org)))
    }

    async fn history(
        &self,
        org: OrgId,
        before: Option<TreasuryEntryId>,
        limit: u32,
    ) -> Result<Vec<TreasuryEntry>, RepositoryError> {
        let state = self.snapshot();
        let entries = newest_first(
            &state.treasury_entries,
            before.map(TreasuryEntryId::as_uuid),
        )
        .filter(|e| e.org_id == org)
        .cloned();
        Ok(first(entries, limit))
    }
}
