//! The agents' reads: agents, their credentials, capabilities, ledger and reputation.

use std::collections::BTreeSet;

use async_trait::async_trait;
use muster_domain::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentStatus, Capability, CapabilityName,
    LedgerEntry, LedgerEntryId, OrgId, ReputationEvent, ReputationKind,
};
use muster_domain::ports::{AgentFilter, AgentRepository, RepositoryError};
use muster_domain::rules::candidates::RosterEntry;

use super::{agents_of, capabilities_of, count, first, newest_first, page, roster};
use crate::MemoryStore;

#[async_trait]
impl AgentRepository for MemoryStore {
    async fn get(&self, org: OrgId, id: AgentId) -> Result<Option<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .agents
            .in_org(&id.as_uuid(), org)
            .map(|r| r.credentials.agent.clone()))
    }

    async fn anywhere(&self, id: AgentId) -> Result<Option<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .agents
            .get(&id.as_uuid())
            .map(|r| r.credentials.agent.clone()))
    }

    async fn find_credentials(
        &self,
        handle: &AgentHandle,
    ) -> Result<Option<AgentCredentials>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .agents
            .values()
            .find(|r| r.credentials.agent.handle == *handle)
            .map(|r| r.credentials.clone()))
    }

    async fn list(
        &self,
        org: OrgId,
        filter: &AgentFilter,
        before: Option<AgentId>,
        limit: u32,
    ) -> Result<Vec<Agent>, RepositoryError> {
        let state = self.snapshot();
        let agents = newest_first(&state.agents, before.map(AgentId::as_uuid))
            .map(|r| &r.credentials.agent)
            .filter(|a| a.org_id == org)
            .filter(|a| filter.status.is_none_or(|s| a.status == s))
            .filter(|a| filter.role.is_none_or(|r| a.role == r))
            .filter(|a| filter.mode.is_none_or(|m| a.mode == m))
            .filter(|a| filter.parent_id.is_none_or(|p| a.parent_id == Some(p)))
            .cloned();
        Ok(first(agents, limit))
    }

    async fn capabilities(
        &self,
        org: OrgId,
        agent: AgentId,
    ) -> Result<Vec<Capability>, RepositoryError> {
        Ok(capabilities_of(&self.snapshot(), org, agent))
    }

    async fn capability_names(&self, org: OrgId) -> Result<Vec<CapabilityName>, RepositoryError> {
        let state = self.snapshot();
        let names: BTreeSet<CapabilityName> = state
            .capabilities
            .values()
            .filter(|c| c.org_id == org)
            .map(|c| c.name.clone())
            .collect();
        Ok(names.into_iter().collect())
    }

    async fn roster(
        &self,
        org: OrgId,
        active_only: bool,
    ) -> Result<Vec<RosterEntry>, RepositoryError> {
        Ok(roster(&self.snapshot(), org, active_only))
    }

    async fn pending(
        &self,
        org: OrgId,
        parent: Option<AgentId>,
    ) -> Result<Vec<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(agents_of(&state)
            .rev()
            .filter(|a| a.org_id == org && a.status == AgentStatus::Pending)
            .filter(|a| parent.is_none_or(|p| a.parent_id == Some(p)))
            .cloned()
            .collect())
    }

    async fn children(
        &self,
        org: OrgId,
        parents: &[AgentId],
    ) -> Result<Vec<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(agents_of(&state)
            .filter(|a| a.org_id == org && a.parent_id.is_some_and(|p| parents.contains(&p)))
            .cloned()
            .collect())
    }

    async fn limited(&self, org: OrgId) -> Result<Vec<Agent>, RepositoryError> {
        let state = self.snapshot();
        Ok(agents_of(&state)
            .filter(|a| a.org_id == org && a.status == AgentStatus::Active)
            .filter(|a| a.budget_period_limit.is_some_and(|limit| limit > 0))
            .cloned()
            .collect())
    }

    async fn ledger(
        &self,
        org: OrgId,
        agent: AgentId,
        before: Option<LedgerEntryId>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, RepositoryError> {
        let state = self.snapshot();
        let entries = newest_first(&state.ledger, before.map(LedgerEntryId::as_uuid))
            .filter(|e| e.org_id == org && e.agent_id == agent)
            .cloned();
        Ok(first(entries, limit))
    }

    async fn reputation_history(
        &self,
        org: OrgId,
        agent: AgentId,
        limit: u32,
        offset: u64,
    ) -> Result<(Vec<ReputationEvent>, u64), RepositoryError> {
        let state = self.snapshot();
        let of_agent = || {
            newest_first(&state.reputation, None).filter(|e| e.org_id == org && e.agent_id == agent)
        };
        Ok((
            page(of_agent().cloned(), offset, limit),
            count(of_agent().count()),
        ))
    }

    async fn leaderboard(
        &self,
        org: OrgId,
        limit: u32,
    ) -> Result<Vec<(Agent, u64)>, RepositoryError> {
        let state = self.snapshot();
        let mut top: Vec<&Agent> = agents_of(&state)
            .filter(|a| a.org_id == org && a.status == AgentStatus::Active)
            .collect();
        top.sort_by(|a, b| {
            b.reputation_score
                .cmp(&a.reputation_score)
                .then(a.handle.as_str().cmp(b.handle.as_str()))
        });
        let completed = |agent: &Agent| {
            count(
                state
                    .reputation
                    .values()
                    .filter(|e| {
                        e.org_id == org
                            && e.agent_id == agent.id
                            && e.kind == ReputationKind::TaskCompleted
                    })
                    .count(),
            )
        };
        Ok(first(
            top.into_iter().map(|a| (a.clone(), completed(a))),
            limit,
        ))
    }
}
