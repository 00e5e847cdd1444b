use async_trait::async_trait;

use super::RepositoryError;
use crate::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRole, AgentStatus, Capability,
    CapabilityName, LedgerEntry, LedgerEntryId, OrgId, ReputationEvent,
};
use crate::rules::candidates::RosterEntry;

/// Filters of `GET /agents`; `None` means "any".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentFilter {
    /// Only agents in this status.
    pub status: Option<AgentStatus>,
    /// Only agents with this role.
    pub role: Option<AgentRole>,
    /// Only agents in this mode.
    pub mode: Option<AgentMode>,
    /// Only children of this agent.
    pub parent_id: Option<AgentId>,
}

/// Stored agents and what hangs off them, for reading. Every method is scoped to one
/// organization except [`find_credentials`](Self::find_credentials).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AgentRepository: Send + Sync {
    /// The agent with `id` in `org`, if any.
    async fn get(&self, org: OrgId, id: AgentId) -> Result<Option<Agent>, RepositoryError>;

    /// The agent `id` in whichever organization it is: for the operator's own
    /// configuration (the chat author map), never for a caller's input.
    async fn anywhere(&self, id: AgentId) -> Result<Option<Agent>, RepositoryError>;

    /// The agent whose `agentId` is `handle`, with its sealed secret. Handles are unique
    /// across the deployment (decision D-11), so this is the one lookup not scoped to an
    /// organization: it is how a signed request finds its organization.
    async fn find_credentials(
        &self,
        handle: &AgentHandle,
    ) -> Result<Option<AgentCredentials>, RepositoryError>;

    /// Up to `limit` agents of `org` matching `filter`, newest first, older than the
    /// agent `before` when given.
    async fn list(
        &self,
        org: OrgId,
        filter: &AgentFilter,
        before: Option<AgentId>,
        limit: u32,
    ) -> Result<Vec<Agent>, RepositoryError>;

    /// The capabilities of `agent`, by name.
    async fn capabilities(
        &self,
        org: OrgId,
        agent: AgentId,
    ) -> Result<Vec<Capability>, RepositoryError>;

    /// The distinct capability names declared in `org`, alphabetical.
    async fn capability_names(&self, org: OrgId) -> Result<Vec<CapabilityName>, RepositoryError>;

    /// Every agent of `org` (only the active ones when `active_only`) with its
    /// capabilities and its count of open tasks, for capability matching.
    async fn roster(
        &self,
        org: OrgId,
        active_only: bool,
    ) -> Result<Vec<RosterEntry>, RepositoryError>;

    /// Pending agents of `org`, newest first: the children of `parent`, or all of them
    /// when `None`.
    async fn pending(
        &self,
        org: OrgId,
        parent: Option<AgentId>,
    ) -> Result<Vec<Agent>, RepositoryError>;

    /// The children of any of `parents`.
    async fn children(
        &self,
        org: OrgId,
        parents: &[AgentId],
    ) -> Result<Vec<Agent>, RepositoryError>;

    /// Active agents of `org` with a budget limit above 0.
    async fn limited(&self, org: OrgId) -> Result<Vec<Agent>, RepositoryError>;

    /// Up to `limit` ledger entries of `agent`, newest first, older than `before`.
    async fn ledger(
        &self,
        org: OrgId,
        agent: AgentId,
        before: Option<LedgerEntryId>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, RepositoryError>;

    /// Up to `limit` reputation events of `agent` after skipping `offset`, newest first,
    /// and how many there are in all.
    async fn reputation_history(
        &self,
        org: OrgId,
        agent: AgentId,
        limit: u32,
        offset: u64,
    ) -> Result<(Vec<ReputationEvent>, u64), RepositoryError>;

    /// The `limit` active agents of `org` with the highest reputation (ties by
    /// `agentId`), each with how many tasks it completed.
    async fn leaderboard(
        &self,
        org: OrgId,
        limit: u32,
    ) -> Result<Vec<(Agent, u64)>, RepositoryError>;
}

/// Told when this instance has committed a change to what signing as an agent rests on
/// (its status, role, mode or level) or removed the agent, so that whatever a cache holds
/// of it is read again at its next request: a suspension or revocation is refused at
/// once where it was made. Other instances read the agent again when their own copy
/// expires.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait AgentChanges: Send + Sync {
    /// `agent` changed or is gone.
    fn changed(&self, agent: AgentId);
}
