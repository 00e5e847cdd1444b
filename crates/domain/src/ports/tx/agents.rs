//! [`AgentsTx`]: what a transaction reads and writes of agents, their capabilities and
//! budget periods.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::model::{Agent, AgentCredentials, AgentId, Capability, CapabilityId, Level, OrgId};
use crate::ports::{Lock, RepositoryError};

/// Agents, their capabilities and budget periods. Part of
/// [`Transaction`](crate::ports::Transaction); every method is scoped to one organization
/// except where it says otherwise.
#[async_trait]
pub trait AgentsTx: Send {
    /// The agent with `id` in `org`, held with `lock` until the end of the transaction.
    async fn agent(
        &mut self,
        org: OrgId,
        id: AgentId,
        lock: Lock,
    ) -> Result<Option<Agent>, RepositoryError>;

    /// Stores a new agent with its sealed secret; a taken handle, in any case (compared
    /// by [`AgentHandle::key`](crate::model::AgentHandle::key)), is
    /// [`UniqueKey::AgentHandle`](crate::ports::UniqueKey::AgentHandle).
    async fn insert_agent(&mut self, agent: &AgentCredentials) -> Result<(), RepositoryError>;

    /// Replaces the stored agent's mutable fields with those of `agent`, stamped `at`.
    /// Returns `false` when no such agent exists in its organization.
    async fn update_agent(
        &mut self,
        agent: &Agent,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError>;

    /// Deletes the agent `id` of `org` (a rejected pending agent, decision D-53) with its
    /// capabilities; whether it existed.
    async fn delete_agent(&mut self, org: OrgId, id: AgentId) -> Result<bool, RepositoryError>;

    /// How many children of `parent` are `active` or `pending` (decision D-51).
    async fn live_children(&mut self, org: OrgId, parent: AgentId) -> Result<u32, RepositoryError>;

    /// The capability `id` of `org`, held with `lock`.
    async fn capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
        lock: Lock,
    ) -> Result<Option<Capability>, RepositoryError>;

    /// Stores new capabilities; a name the agent already has is
    /// [`UniqueKey::Capability`](crate::ports::UniqueKey::Capability).
    async fn insert_capabilities(
        &mut self,
        capabilities: &[Capability],
    ) -> Result<(), RepositoryError>;

    /// Writes the proficiency of `capability`; whether it exists.
    async fn update_capability(&mut self, capability: &Capability)
    -> Result<bool, RepositoryError>;

    /// Deletes the capability `id` of `org`; whether it existed.
    async fn delete_capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
    ) -> Result<bool, RepositoryError>;

    /// Starts a new budget period at `start` for every agent (of every organization)
    /// whose period began before it: nothing spent yet. How many agents rolled over.
    /// Running it again for the same `start` changes nothing, so instances may race.
    async fn roll_budget_periods(&mut self, start: OffsetDateTime) -> Result<u64, RepositoryError>;

    /// The most senior agent of `org` that can take work above `level`: active,
    /// executing, the highest level strictly above it, the earliest created among equals.
    async fn senior_agent_above(
        &mut self,
        org: OrgId,
        level: Option<Level>,
    ) -> Result<Option<Agent>, RepositoryError>;
}
