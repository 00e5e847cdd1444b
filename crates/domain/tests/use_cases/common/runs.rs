//! Helpers of the run tests (decision D-106) on the in-memory store: a worker on a task
//! in progress, runs started, reports and finishes.

use futures_executor::block_on;
use muster_domain::model::{
    Actor, Agent, AgentId, Event, Lease, Run, RunId, RunStatus, Task, TaskStatus,
};
use muster_domain::rules::usage::PriceTable;
use muster_domain::service::{
    ClaimRequest, FinishRun, NewUsage, RunService, ServiceError, StartRun, UsageAnswer,
};

use super::economy::{grant, move_to};
use super::world::World;

/// The price table of docs/runs.md.
pub const DOC_PRICES: &str = r#"{
  "claude-sonnet-4-5": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
  "gpt-5": {"input": 1.25, "output": 10, "cacheRead": 0.125}
}"#;

/// The world's run service, pricing with the table of docs/runs.md.
pub fn priced(world: &World) -> RunService {
    world
        .runs
        .clone()
        .with_prices(PriceTable::parse_json(DOC_PRICES).unwrap())
}

/// A worker `handle` granted `balance` credits (none when 0).
pub fn funded(world: &World, handle: &str, balance: i64) -> (Agent, Actor) {
    let (agent, actor) = world.worker(handle, 3, &[]);
    if balance > 0 {
        grant(world, agent.id, balance);
    }
    (agent, actor)
}

/// A new task assigned (by the admin) to `agent` and moved to in progress by `actor`,
/// held without a lease.
pub fn task_for(world: &World, agent: AgentId, actor: &Actor, title: &str) -> Task {
    let task = world.task(title);
    block_on(world.tasks.assign(&world.admin, task.id, agent)).unwrap();
    move_to(world, actor, task.id, TaskStatus::InProgress)
}

/// The one task of the world claimed by `actor` with a lease of `seconds`.
pub fn claimed(world: &World, actor: &Actor, seconds: i64) -> Task {
    block_on(world.tasks.claim(actor, claim_request(seconds)))
        .unwrap()
        .unwrap()
}

/// A claim with a lease of `seconds`.
pub fn claim_request(seconds: i64) -> ClaimRequest {
    ClaimRequest {
        capabilities: None,
        lease: Lease::seconds(Some(seconds)).unwrap(),
        reserve_credits: 0,
        project_id: None,
    }
}

/// Starts a run of `task` as `actor`, reserving `reserve` credits.
pub fn start(world: &World, actor: &Actor, task: &Task, reserve: i64) -> Result<Run, ServiceError> {
    let start = StartRun {
        adapter: Some("claude-code".into()),
        model: Some("claude-sonnet-4-5".into()),
        reserve_credits: reserve,
        trace_id: None,
    };
    block_on(world.runs.start(actor, task.id, start))
}

/// A worker `handle` granted `balance`, on a task in progress, with a run started.
pub fn running(world: &World, handle: &str, balance: i64) -> (Agent, Actor, Task, Run) {
    let (agent, actor) = funded(world, handle, balance);
    let task = task_for(world, agent.id, &actor, &format!("work of {handle}"));
    let run = start(world, &actor, &task, 0).unwrap();
    (agent, actor, task, run)
}

/// A report of `model` with `input` and `output` tokens and, when given, its cost.
pub fn usage(model: &str, input: i64, output: i64, cost: Option<i64>) -> NewUsage {
    NewUsage {
        model: model.into(),
        input_tokens: input,
        output_tokens: output,
        cost_microusd: cost,
        ..NewUsage::default()
    }
}

/// Reports `usage` of `run` as `actor` through `runs`.
pub fn report(
    runs: &RunService,
    actor: &Actor,
    run: RunId,
    usage: NewUsage,
) -> Result<UsageAnswer, ServiceError> {
    block_on(runs.report_usage(actor, run, usage))
}

/// Finishes `run` as `actor` with `status`.
pub fn finish(
    world: &World,
    actor: &Actor,
    run: RunId,
    status: RunStatus,
) -> Result<Run, ServiceError> {
    let finish = FinishRun {
        status,
        exit_code: Some(0),
        summary: None,
    };
    block_on(world.runs.finish(actor, run, finish))
}

/// The run `id` as stored now.
pub fn reread(world: &World, id: RunId) -> Run {
    block_on(world.runs.get(&world.admin, id)).unwrap()
}

/// The events of `event_type` about the entity `entity`, oldest first.
pub fn events_of(world: &World, event_type: &str, entity: uuid::Uuid) -> Vec<Event> {
    world
        .events(event_type)
        .into_iter()
        .filter(|e| e.entity_id == entity)
        .collect()
}

/// The stable code of a refusal.
pub fn code<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> &'static str {
    result.unwrap_err().code()
}
