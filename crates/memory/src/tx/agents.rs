//! The agents' writes: agents with their credentials and capabilities, held to the agents
//! table's constraints on money and reputation.

use async_trait::async_trait;
use muster_domain::model::{
    Agent, AgentCredentials, AgentId, AgentMode, AgentStatus, Capability, CapabilityId, Level,
    OrgId, Tally,
};
use muster_domain::ports::{AgentsTx, Lock, RepositoryError, UniqueKey};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{MemoryTransaction, check, duplicate, primary_key};
use crate::state::AgentRecord;

/// The agents table's constraints on money and reputation.
fn check_agent(agent: &Agent) -> Result<(), RepositoryError> {
    check(agent.current_balance >= 0, "current_balance >= 0")?;
    check(agent.budget_period_spent >= 0, "budget_period_spent >= 0")?;
    check(
        agent.budget_period_limit.is_none_or(|limit| limit >= 0),
        "budget_period_limit >= 0",
    )?;
    check(
        (0..=100).contains(&agent.reputation_score),
        "reputation_score BETWEEN 0 AND 100",
    )
}

#[async_trait]
impl AgentsTx for MemoryTransaction {
    async fn agent(
        &mut self,
        org: OrgId,
        id: AgentId,
        _lock: Lock,
    ) -> Result<Option<Agent>, RepositoryError> {
        Ok(self
            .state
            .agents
            .in_org(&id.as_uuid(), org)
            .map(|r| r.credentials.agent.clone()))
    }

    async fn insert_agent(&mut self, agent: &AgentCredentials) -> Result<(), RepositoryError> {
        check_agent(&agent.agent)?;
        let id = agent.agent.id.as_uuid();
        if self.state.agents.contains_key(&id) {
            return Err(primary_key("agents"));
        }
        // Unique regardless of case, as the databases' index on lower(agent_id) is.
        let key = agent.agent.handle.key();
        let taken = self
            .state
            .agents
            .values()
            .any(|r| r.credentials.agent.handle.key() == key);
        if taken {
            return duplicate(UniqueKey::AgentHandle);
        }
        self.state.agents.put(
            id,
            AgentRecord {
                credentials: agent.clone(),
                tally: Tally {
                    actions: 0,
                    actions_since: None,
                    credits: 0,
                    credits_since: None,
                },
            },
        );
        Ok(())
    }

    async fn update_agent(
        &mut self,
        agent: &Agent,
        _at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        check_agent(agent)?;
        let Some(record) = self
            .state
            .agents
            .row_in_org(&agent.id.as_uuid(), agent.org_id)
        else {
            return Ok(false);
        };
        let stored = &record.credentials.agent;
        let (handle, created_at) = (stored.handle.clone(), stored.created_at);
        record.credentials.agent = Agent {
            handle,
            created_at,
            ..agent.clone()
        };
        Ok(true)
    }

    async fn delete_agent(&mut self, org: OrgId, id: AgentId) -> Result<bool, RepositoryError> {
        if self.state.agents.take_in_org(&id.as_uuid(), org).is_none() {
            return Ok(false);
        }
        self.state.capabilities.retain(|_, c| c.agent_id != id);
        Ok(true)
    }

    async fn live_children(&mut self, org: OrgId, parent: AgentId) -> Result<u32, RepositoryError> {
        let live = self
            .state
            .agents
            .values()
            .map(|r| &r.credentials.agent)
            .filter(|a| {
                a.org_id == org
                    && a.parent_id == Some(parent)
                    && matches!(a.status, AgentStatus::Active | AgentStatus::Pending)
            })
            .count();
        Ok(u32::try_from(live).unwrap_or(u32::MAX))
    }

    async fn capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
        _lock: Lock,
    ) -> Result<Option<Capability>, RepositoryError> {
        Ok(self.state.capabilities.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_capabilities(
        &mut self,
        capabilities: &[Capability],
    ) -> Result<(), RepositoryError> {
        for capability in capabilities {
            if self
                .state
                .capabilities
                .contains_key(&capability.id.as_uuid())
            {
                return Err(primary_key("agent_capabilities"));
            }
            let taken = self
                .state
                .capabilities
                .values()
                .any(|c| c.agent_id == capability.agent_id && c.name == capability.name);
            if taken {
                return duplicate(UniqueKey::Capability);
            }
            self.state
                .capabilities
                .put(capability.id.as_uuid(), capability.clone());
        }
        Ok(())
    }

    async fn update_capability(
        &mut self,
        capability: &Capability,
    ) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .capabilities
            .row_in_org(&capability.id.as_uuid(), capability.org_id);
        Ok(stored
            .map(|c| c.proficiency = capability.proficiency)
            .is_some())
    }

    async fn delete_capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
    ) -> Result<bool, RepositoryError> {
        Ok(self
            .state
            .capabilities
            .take_in_org(&id.as_uuid(), org)
            .is_some())
    }

    async fn roll_budget_periods(&mut self, start: OffsetDateTime) -> Result<u64, RepositoryError> {
        let due: Vec<Uuid> = self
            .state
            .agents
            .iter()
            .filter(|(_, r)| r.credentials.agent.budget_period_start < start)
            .map(|(id, _)| *id)
            .collect();
        for id in &due {
            if let Some(record) = self.state.agents.row_mut(id) {
                record.credentials.agent.budget_period_spent = 0;
                record.credentials.agent.budget_exhausted = false;
                record.credentials.agent.budget_period_start = start;
            }
        }
        Ok(u64::try_from(due.len()).unwrap_or(u64::MAX))
    }

    async fn senior_agent_above(
        &mut self,
        org: OrgId,
        level: Option<Level>,
    ) -> Result<Option<Agent>, RepositoryError> {
        let floor = level.map_or(0, Level::get);
        Ok(self
            .state
            .agents
            .values()
            .map(|r| &r.credentials.agent)
            .filter(|a| {
                a.org_id == org
                    && a.status == AgentStatus::Active
                    && a.mode == AgentMode::Worker
                    && a.level.get() > floor
            })
            .min_by(|a, b| {
                b.level
                    .cmp(&a.level)
                    .then(a.created_at.cmp(&b.created_at))
                    .then(a.id.cmp(&b.id))
            })
            .cloned())
    }
}
