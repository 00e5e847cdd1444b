//! The runaway guard's writes: its settings and each agent's tally.

use async_trait::async_trait;
use muster_domain::model::{AgentId, GuardSettings, OrgId, Tally, TallyAdd};
use muster_domain::ports::{GuardTx, RepositoryError};
use muster_domain::rules::guard;
use uuid::Uuid;

use super::MemoryTransaction;

#[async_trait]
impl GuardTx for MemoryTransaction {
    async fn tally_agent(
        &mut self,
        org: OrgId,
        actor: Uuid,
        add: &TallyAdd,
    ) -> Result<Option<Tally>, RepositoryError> {
        let Some(record) = self.state.agents.row_in_org(&actor, org) else {
            return Ok(None);
        };
        record.tally = guard::count(record.tally, *add);
        Ok(Some(record.tally))
    }

    async fn reset_tally(&mut self, org: OrgId, id: AgentId) -> Result<(), RepositoryError> {
        if let Some(record) = self.state.agents.row_in_org(&id.as_uuid(), org) {
            record.tally = Tally {
                actions: 0,
                actions_since: None,
                credits: 0,
                credits_since: None,
            };
        }
        Ok(())
    }

    async fn guard_settings(&mut self, org: OrgId) -> Result<GuardSettings, RepositoryError> {
        Ok(self
            .state
            .guard_settings
            .get(&org.as_uuid())
            .copied()
            .unwrap_or_default())
    }

    async fn set_guard_settings(
        &mut self,
        org: OrgId,
        settings: &GuardSettings,
    ) -> Result<(), RepositoryError> {
        if self.state.organizations.contains_key(&org.as_uuid()) {
            self.state.guard_settings.put(org.as_uuid(), *settings);
        }
        Ok(())
    }
}
