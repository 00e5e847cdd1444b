//! Runs (decision D-106): an agent's attempt at its task, with a live log, usage reports
//! priced and paid from its credits in the report's own transaction, and a stop that
//! the agent learns from every answer. [`RunService`] holds the use cases; the rules
//! are in [`rules::runs`](crate::rules::runs) and [`rules::usage`](crate::rules::usage).

mod claimed;
mod close;
mod log;
mod start;
mod usage;

use std::sync::Arc;

use time::OffsetDateTime;

pub(crate) use self::claimed::{
    holder_losing, refuse_unfundable, release_claim, reserve_for_claim,
};
pub use self::close::FinishRun;
pub(crate) use self::close::{follow_task, lose_open_run};
pub use self::log::LogPage;
pub use self::start::StartRun;
pub use self::usage::{NewUsage, UsageAnswer};
use super::{Entity, NotFound, Page, PageRequest, ServiceError};
use crate::model::{Actor, Agent, AgentId, AuditEvent, Event, EventId, OrgId, Run, RunId, TaskId};
use crate::ports::{
    Clock, IdGenerator, Lock, RunFilter, RunObserver, RunRepository, RunsTx, UnitOfWork,
    Unobserved, UsageGroup, UsageQuery,
};
use crate::rules::budget::BudgetPeriod;
use crate::rules::usage::{DEFAULT_CREDITS_PER_USD, PriceTable};

/// One page of runs, newest first.
pub type RunPage = Page<Run, RunId>;

/// The run use cases.
#[derive(Clone)]
pub struct RunService {
    runs: Arc<dyn RunRepository>,
    uow: Arc<dyn UnitOfWork>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    prices: Arc<PriceTable>,
    credits_per_usd: i64,
    period: BudgetPeriod,
    observer: Arc<dyn RunObserver>,
}

impl std::fmt::Debug for RunService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunService")
            .field("priced_models", &self.prices.len())
            .field("credits_per_usd", &self.credits_per_usd)
            .finish_non_exhaustive()
    }
}

impl RunService {
    /// Wires the service to its ports, with an empty price table and
    /// [`DEFAULT_CREDITS_PER_USD`].
    pub fn new(
        runs: Arc<dyn RunRepository>,
        uow: Arc<dyn UnitOfWork>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            runs,
            uow,
            clock,
            ids,
            prices: Arc::new(PriceTable::default()),
            credits_per_usd: DEFAULT_CREDITS_PER_USD,
            period: BudgetPeriod::default(),
            observer: Arc::new(Unobserved),
        }
    }

    /// Prices reports that carry no cost of their own.
    #[must_use]
    pub fn with_prices(mut self, prices: PriceTable) -> Self {
        self.prices = Arc::new(prices);
        self
    }

    /// Sets how many credits one US dollar of cost comes to.
    #[must_use]
    pub fn with_credits_per_usd(mut self, rate: i64) -> Self {
        self.credits_per_usd = rate;
        self
    }

    /// Sets the agents' budget period (decision D-57).
    #[must_use]
    pub fn with_budget_period(mut self, period: BudgetPeriod) -> Self {
        self.period = period;
        self
    }

    /// Tells `observer` of each usage report recorded and each run its agent finishes,
    /// once committed (the task service tells of the runs the lease sweep loses).
    #[must_use]
    pub fn with_observer(mut self, observer: Arc<dyn RunObserver>) -> Self {
        self.observer = observer;
        self
    }

    /// The run `id` of the caller's organization.
    pub async fn get(&self, actor: &Actor, id: RunId) -> Result<Run, ServiceError> {
        self.runs
            .run(actor.org_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::Run, id).into())
    }

    /// One page of the organization's runs matching `filter`, newest first.
    pub async fn list(
        &self,
        actor: &Actor,
        filter: &RunFilter,
        page: PageRequest<RunId>,
    ) -> Result<RunPage, ServiceError> {
        page.check()?;
        let rows = self
            .runs
            .runs(actor.org_id, filter, page.cursor, page.fetch())
            .await?;
        Ok(Page::cut(rows, page.limit, |run| run.id))
    }

    /// Usage of the caller's organization, added up per group.
    pub async fn usage(
        &self,
        actor: &Actor,
        query: &UsageQuery,
    ) -> Result<Vec<UsageGroup>, ServiceError> {
        Ok(self.runs.usage(actor.org_id, query).await?)
    }

    /// The audit record of `what`, done by `actor` to the entity `entity` at `at`.
    fn event(
        &self,
        actor: &Actor,
        entity: uuid::Uuid,
        at: OffsetDateTime,
        what: &AuditEvent,
    ) -> Event {
        record(self.ids.as_ref(), actor, entity, at, what)
    }
}

/// The audit record of `what`, done by `actor` to `entity` at `at`.
fn record(
    ids: &dyn IdGenerator,
    actor: &Actor,
    entity: uuid::Uuid,
    at: OffsetDateTime,
    what: &AuditEvent,
) -> Event {
    Event::record(
        EventId::from_uuid(ids.new_id()),
        actor.org_id,
        actor.actor_id(),
        entity,
        at,
        what,
    )
}

/// The run `id` of `org`, locked for update until the commit.
async fn locked_run<T: RunsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    id: RunId,
) -> Result<Run, ServiceError> {
    tx.run(org, id, Lock::Update)
        .await?
        .ok_or_else(|| NotFound::new(Entity::Run, id).into())
}

/// The calling agent, which must be the one running `run`.
fn runner(actor: &Actor, run: &Run) -> Result<AgentId, ServiceError> {
    match actor.agent_id() {
        Some(agent) if agent == run.agent_id => Ok(agent),
        _ => Err(crate::policy::Forbidden::RunAgentRequired.into()),
    }
}

/// Refuses changes to a finished run.
fn ensure_open(run: &Run) -> Result<(), ServiceError> {
    if run.status.is_open() {
        Ok(())
    } else {
        Err(super::Conflict::RunClosed { status: run.status }.into())
    }
}

/// The filter of a task's runs.
pub fn of_task(task: TaskId) -> RunFilter {
    RunFilter {
        task: Some(task),
        ..RunFilter::default()
    }
}

/// Releases what `agent` held for `run`: its reservation's rest goes back to what the
/// agent may spend.
fn release(agent: &mut Agent, run: &mut Run) {
    agent.reserved_credits = agent
        .reserved_credits
        .saturating_sub(run.reserved_credits)
        .max(0);
    run.reserved_credits = 0;
}
