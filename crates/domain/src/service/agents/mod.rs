//! Agent use cases ([`AgentService`]): reading and administering agents here, and in
//! the submodules spawning, capabilities, budgets, credits and reputation.

mod budgets;
mod capabilities;
mod credits;
mod lifecycle;
mod reputation;
mod rollover;
mod spawning;

use std::sync::Arc;

use time::OffsetDateTime;

pub use self::budgets::{BudgetStatus, CanSpend};
pub use self::capabilities::{CapabilityMatch, MatchQuery};
pub(crate) use self::credits::refuse;
pub use self::credits::{CreditAmount, LedgerPage, Transfer};
pub(crate) use self::lifecycle::insert_new;
pub use self::lifecycle::{AgentPatch, NewAgent, Registered, budget_limit};
pub use self::reputation::{
    HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, LEADERBOARD_DEFAULT_LIMIT, LEADERBOARD_MAX_LIMIT,
    LeaderboardEntry, ReputationSummary, ScoreChange, limit_of,
};
pub use self::rollover::BudgetRollover;
pub use self::spawning::{Capacity, HierarchyNode, NewChild, hierarchy_depth};
use super::{Entity, NotFound, Page, PageRequest, ServiceError};
use crate::model::{
    Actor, Agent, AgentId, AuditEvent, Capability, CapabilityId, CapabilityName, Event, EventId,
    OrgId, Proficiency,
};
use crate::ports::{
    AgentChanges, AgentFilter, AgentRepository, AgentsTx, Clock, IdGenerator, Lock, SecretSealer,
    UnitOfWork,
};
use crate::rules::budget::{BudgetPeriod, roll_over};

/// One page of agents, newest first.
pub type AgentPage = Page<Agent, AgentId>;

/// An agent with its capabilities: the full record of `GET /agents/:id`.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentView {
    /// The agent, its budget period rolled over when due.
    pub agent: Agent,
    /// Its capabilities, by name.
    pub capabilities: Vec<Capability>,
}

/// Registering, spawning, reading and administering agents, their capabilities, budgets,
/// credits and reputation.
#[derive(Clone)]
pub struct AgentService {
    agents: Arc<dyn AgentRepository>,
    uow: Arc<dyn UnitOfWork>,
    sealer: Arc<dyn SecretSealer>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    period: BudgetPeriod,
    changes: Option<Arc<dyn AgentChanges>>,
}

impl std::fmt::Debug for AgentService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentService")
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

impl AgentService {
    /// Wires the service to its ports: `agents` for reads, `uow` for changes, `sealer`
    /// for new agents' secrets. Budget periods are days until
    /// [`with_period`](Self::with_period) says otherwise.
    pub fn new(
        agents: Arc<dyn AgentRepository>,
        uow: Arc<dyn UnitOfWork>,
        sealer: Arc<dyn SecretSealer>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            agents,
            uow,
            sealer,
            clock,
            ids,
            period: BudgetPeriod::Day,
            changes: None,
        }
    }

    /// Tells `changes` of every committed change of an agent's status, role, mode or
    /// level, and of every agent removed (a cache of credentials forgets it).
    #[must_use]
    pub fn with_changes(mut self, changes: Arc<dyn AgentChanges>) -> Self {
        self.changes = Some(changes);
        self
    }

    /// Passes on that `agent` changed, when someone listens.
    fn changed(&self, agent: AgentId) {
        if let Some(changes) = &self.changes {
            changes.changed(agent);
        }
    }

    /// Sets the length of budget periods (decision D-57).
    #[must_use]
    pub fn with_period(mut self, period: BudgetPeriod) -> Self {
        self.period = period;
        self
    }

    /// The agent with its capabilities, if it is in the actor's organization. Never its
    /// secret.
    pub async fn get(&self, actor: &Actor, id: AgentId) -> Result<AgentView, ServiceError> {
        let agent = self.find(actor.org_id, id).await?;
        let capabilities = self.agents.capabilities(actor.org_id, id).await?;
        Ok(AgentView {
            agent,
            capabilities,
        })
    }

    /// Agents of the actor's organization matching `filter`, newest first (decision D-7).
    pub async fn list(
        &self,
        actor: &Actor,
        filter: &AgentFilter,
        page: PageRequest<AgentId>,
    ) -> Result<AgentPage, ServiceError> {
        page.check()?;
        let rows = self
            .agents
            .list(actor.org_id, filter, page.cursor, page.fetch())
            .await?;
        let now = self.clock.now();
        let rows = rows.into_iter().map(|a| self.current(a, now)).collect();
        Ok(Page::cut(rows, page.limit, |a| a.id))
    }

    /// The agent `id` of `org` as it stands now (its budget period rolled over when
    /// due), or 404.
    async fn find(&self, org: OrgId, id: AgentId) -> Result<Agent, ServiceError> {
        let agent = self
            .agents
            .get(org, id)
            .await?
            .ok_or(NotFound::new(Entity::Agent, id))?;
        Ok(self.current(agent, self.clock.now()))
    }

    /// `agent` with its budget period rolled over when the stored one has ended: what
    /// the roll-over job will write, shown before it runs.
    fn current(&self, mut agent: Agent, now: OffsetDateTime) -> Agent {
        roll_over(&mut agent, self.period, now);
        agent
    }

    /// The audit record of `what`, done by `actor` to the agent `agent` at `at`.
    fn event(&self, actor: &Actor, agent: AgentId, at: OffsetDateTime, what: &AuditEvent) -> Event {
        Event::record(
            EventId::from_uuid(self.ids.new_id()),
            actor.org_id,
            actor.actor_id(),
            agent.as_uuid(),
            at,
            what,
        )
    }

    /// New capability rows of `agent` for `declared`.
    fn capability_rows(
        &self,
        agent: &Agent,
        declared: &[(CapabilityName, Proficiency)],
        now: OffsetDateTime,
    ) -> Vec<Capability> {
        declared
            .iter()
            .map(|(name, proficiency)| Capability {
                id: CapabilityId::from_uuid(self.ids.new_id()),
                org_id: agent.org_id,
                agent_id: agent.id,
                name: name.clone(),
                proficiency: *proficiency,
                created_at: now,
            })
            .collect()
    }
}

/// The agent `id` of `org`, locked for update until the commit, or 404.
async fn locked_agent<T: AgentsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    id: AgentId,
) -> Result<Agent, ServiceError> {
    tx.agent(org, id, Lock::Update)
        .await?
        .ok_or_else(|| NotFound::new(Entity::Agent, id).into())
}

/// Refuses a list of capabilities that names one twice (decision D-50).
pub fn unique_capabilities(
    declared: &[(CapabilityName, Proficiency)],
) -> Result<(), crate::ValidationError> {
    for (i, (name, _)) in declared.iter().enumerate() {
        if declared[..i].iter().any(|(other, _)| other == name) {
            return Err(crate::ValidationError::new(format!(
                "capabilities must not repeat \"{}\"",
                name.as_str()
            )));
        }
    }
    Ok(())
}
