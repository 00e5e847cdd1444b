//! Starting a run: the task's assignee, on a task in progress, one open run per task,
//! with an optional reservation of credits (decision D-106).

use super::RunService;
use super::claimed::{refuse_unfundable, take_for_run};
use crate::ValidationError;
use crate::model::{Actor, AuditEvent, Run, RunId, RunStarted, RunStatus, RunUsage, TaskId};
use crate::policy;
use crate::ports::{Lock, RepositoryError, UniqueKey, transact};
use crate::rules::budget::roll_over;
use crate::rules::runs::{MAX_NAME_CHARS, StartRefusal, may_start};
use crate::service::locks::lock_agents;
use crate::service::{Conflict, Entity, NotFound, ServiceError};

/// What an agent says when it starts a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartRun {
    /// What runs it (`claude-code`, `codex`, a command...).
    pub adapter: Option<String>,
    /// The model it uses.
    pub model: Option<String>,
    /// Credits to hold for the run's usage (0 for none).
    pub reserve_credits: i64,
    /// The trace the run is started in, as the adapter that received the request reads
    /// it (never from the request body): kept on the run.
    pub trace_id: Option<String>,
}

impl StartRun {
    /// Checks the fields: names of at most 100 characters, a reservation from 0 to
    /// 1,000,000,000 credits.
    pub fn check(&self) -> Result<(), ValidationError> {
        for (field, value) in [("adapter", &self.adapter), ("model", &self.model)] {
            if let Some(value) = value {
                crate::validation::max_chars(field, value, MAX_NAME_CHARS)?;
                crate::validation::no_nul(field, value)?;
            }
        }
        crate::rules::usage::check_amount(
            "reserveCredits",
            self.reserve_credits,
            crate::service::CreditAmount::MAX,
        )
    }
}

/// Whether `id` is a W3C trace id: 32 lowercase hex digits, not all zero.
fn is_trace_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && id.bytes().any(|b| b != b'0')
}

impl RunService {
    /// Starts a run of `task` by the calling agent: the task must be `in_progress` and
    /// assigned to it, with no open run; the agent must not be held back by an
    /// exhausted budget, and a reservation must fit what it may spend (409
    /// `budget_exhausted` otherwise). What the agent's claim of the task reserved moves
    /// into the run, on top of its own reservation. The run, the hold and `run.started`
    /// are one transaction.
    pub async fn start(
        &self,
        actor: &Actor,
        task: TaskId,
        start: StartRun,
    ) -> Result<Run, ServiceError> {
        start.check()?;
        let agent_id = policy::acting_agent(actor)?;
        policy::may_write(actor)?;
        policy::may_transition(actor, crate::model::TaskStatus::InProgress)?;
        let (service, actor) = (self.clone(), actor.clone());
        let id = RunId::from_uuid(self.ids.new_id());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = tx
                    .task(actor.org_id, task, Lock::Update)
                    .await?
                    .ok_or(NotFound::new(Entity::Task, task))?;
                may_start(&current, agent_id).map_err(|refusal| match refusal {
                    StartRefusal::NotInProgress(status) => Conflict::TaskNotInProgress { status },
                    StartRefusal::NotAssignee => Conflict::NotTaskAssignee,
                })?;
                if let Some(open) = tx.open_run(actor.org_id, task, Lock::Share).await? {
                    return Err(Conflict::RunAlreadyOpen { run: open.id }.into());
                }
                let now = service.clock.now();
                // What the claim reserved moves into the run (already held by the agent).
                let claimed = take_for_run(tx, actor.org_id, task, agent_id, now).await?;
                let mut agent = lock_agents(tx, actor.org_id, &[agent_id]).await?.remove(0);
                let rolled = roll_over(&mut agent, service.period, now);
                let reserve = start.reserve_credits;
                refuse_unfundable(&agent, reserve)?;
                if reserve > 0 || rolled {
                    agent.reserved_credits = agent.reserved_credits.saturating_add(reserve);
                    tx.update_agent(&agent, now).await?;
                }
                let run = Run {
                    id,
                    org_id: actor.org_id,
                    task_id: task,
                    agent_id,
                    status: RunStatus::Running,
                    adapter: start.adapter,
                    model: start.model,
                    started_at: now,
                    ended_at: None,
                    exit_code: None,
                    summary: None,
                    stop_requested: false,
                    stop_reason: None,
                    usage: RunUsage::default(),
                    log_bytes: 0,
                    log_lines: 0,
                    log_truncated: false,
                    reserved_credits: reserve.saturating_add(claimed),
                    credits_per_usd: service.credits_per_usd,
                    trace_id: start.trace_id.filter(|id| is_trace_id(id)),
                };
                match tx.insert_run(&run).await {
                    Err(RepositoryError::Duplicate(UniqueKey::OpenRun)) => {
                        return Err(Conflict::ChangedConcurrently {
                            entity: Entity::Run,
                        }
                        .into());
                    }
                    other => other?,
                }
                let started = AuditEvent::RunStarted(RunStarted {
                    task_id: task,
                    agent_id,
                    adapter: run.adapter.clone(),
                    model: run.model.clone(),
                    reserved_credits: run.reserved_credits,
                });
                tx.append_events(&[service.event(&actor, id.as_uuid(), now, &started)])
                    .await?;
                Ok(run)
            })
        })
        .await
    }
}
