//! How runs end and stop: the agent finishes its run, an overseer asks it to stop, its
//! task's change (cancelled, reassigned) asks it to stop, its task's lapsed lease loses
//! it; and the heartbeat that keeps the task's lease (decision D-106).

use time::OffsetDateTime;

use super::{RunService, ensure_open, locked_run, record, release, runner};
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, Event, Lease, OrgId, Run, RunFinished, RunId, RunStatus, RunStopRequested,
    StopReason, Task, TaskId, TaskStatus, instant,
};
use crate::policy;
use crate::ports::{AgentsTx, IdGenerator, Lock, RunsTx, WebhooksTx, transact};
use crate::rules::runs::{MAX_SUMMARY_CHARS, request_stop, stop_for_task_change, stop_note};
use crate::service::{Conflict, Entity, NotFound, ServiceError};

/// How the agent says its run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishRun {
    /// `succeeded`, `failed`, `cancelled` or `stopped`.
    pub status: RunStatus,
    /// The program's exit code.
    pub exit_code: Option<i32>,
    /// A closing summary (at most 10,000 characters).
    pub summary: Option<String>,
}

impl RunService {
    /// Extends the lease of the task of the caller's open run `id` by `lease` from now,
    /// as the task heartbeat does (a task held without a lease keeps none). Answers the
    /// run, so that its agent learns of a stop.
    pub async fn heartbeat(
        &self,
        actor: &Actor,
        id: RunId,
        lease: Lease,
    ) -> Result<Run, ServiceError> {
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let org = actor.org_id;
                // Tasks before runs: read the run's task, lock it, then the run.
                let seen = tx
                    .run(org, id, Lock::Nothing)
                    .await?
                    .ok_or(NotFound::new(Entity::Run, id))?;
                runner(&actor, &seen)?;
                let task = tx
                    .task(org, seen.task_id, Lock::Update)
                    .await?
                    .ok_or(NotFound::new(Entity::Task, seen.task_id))?;
                let run = locked_run(tx, org, id).await?;
                ensure_open(&run)?;
                let now = service.clock.now();
                if let Some(expires) = task.lease_expires_at
                    && task.status == TaskStatus::InProgress
                    && task.assignee_id == Some(run.agent_id)
                {
                    if expires <= now {
                        return Err(Conflict::LeaseExpired.into());
                    }
                    let mut extended = task.clone();
                    extended.lease_expires_at = Some(instant::to_millis(now + lease.duration()));
                    extended.updated_at = now;
                    extended.version = task.version + 1;
                    if !tx.update_task(&extended, task.version).await? {
                        return Err(Conflict::ChangedConcurrently {
                            entity: Entity::Task,
                        }
                        .into());
                    }
                }
                Ok(run)
            })
        })
        .await
    }

    /// The caller finishes its open run `id`: its status, exit code and summary, the
    /// rest of its reservation released, and `run.finished` with its usage. The run
    /// observer hears of it once it is committed.
    pub async fn finish(
        &self,
        actor: &Actor,
        id: RunId,
        finish: FinishRun,
    ) -> Result<Run, ServiceError> {
        if !finish.status.may_finish_with() {
            return Err(ValidationError::new(
                "status must be one of succeeded, failed, cancelled, stopped",
            )
            .into());
        }
        if let Some(summary) = &finish.summary {
            crate::validation::max_chars("summary", summary, MAX_SUMMARY_CHARS)?;
            crate::validation::no_nul("summary", summary)?;
        }
        let (service, actor) = (self.clone(), actor.clone());
        let run = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut run = locked_run(tx, actor.org_id, id).await?;
                runner(&actor, &run)?;
                ensure_open(&run)?;
                let now = service.clock.now();
                run.exit_code = finish.exit_code;
                run.summary = finish.summary;
                let event = close(
                    tx,
                    service.ids.as_ref(),
                    &actor,
                    &mut run,
                    finish.status,
                    now,
                )
                .await?;
                tx.update_run(&run).await?;
                tx.append_events(&[event]).await?;
                Ok(run)
            })
        })
        .await?;
        self.observer.run_ended(&run);
        Ok(run)
    }

    /// Asks run `id` to stop (`requested`): its agent learns it from its next answer.
    /// Whoever oversees the run's agent may; asking again, or of a finished run, changes
    /// nothing.
    pub async fn stop(&self, actor: &Actor, id: RunId) -> Result<Run, ServiceError> {
        self.stop_with_reason(actor, id, None).await
    }

    /// [`stop`](Self::stop), with the asker's free-text `reason` (at most 500
    /// characters, trimmed) in `run.stop_requested`'s `note`; the run's `stopReason`
    /// is `requested` all the same.
    pub async fn stop_with_reason(
        &self,
        actor: &Actor,
        id: RunId,
        reason: Option<String>,
    ) -> Result<Run, ServiceError> {
        let note = stop_note(reason)?;
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut run = locked_run(tx, actor.org_id, id).await?;
                let runner = tx
                    .agent(actor.org_id, run.agent_id, Lock::Nothing)
                    .await?
                    .ok_or(NotFound::new(Entity::Agent, run.agent_id))?;
                policy::may_stop_run(&actor, &runner)?;
                if request_stop(&mut run, StopReason::Requested) {
                    let now = service.clock.now();
                    tx.update_run(&run).await?;
                    let event = stop_event(service.ids.as_ref(), &actor, &run, now, note);
                    tx.append_events(&[event]).await?;
                }
                Ok(run)
            })
        })
        .await
    }
}

/// Ends `run` with `status` at `now`: releases what it held and answers its
/// `run.finished` record. The caller stores the run and the event.
async fn close<T: AgentsTx + ?Sized>(
    tx: &mut T,
    ids: &dyn IdGenerator,
    actor: &Actor,
    run: &mut Run,
    status: RunStatus,
    now: OffsetDateTime,
) -> Result<Event, ServiceError> {
    run.status = status;
    run.ended_at = Some(now);
    if run.reserved_credits > 0 {
        let mut agent = tx
            .agent(run.org_id, run.agent_id, Lock::Update)
            .await?
            .ok_or(NotFound::new(Entity::Agent, run.agent_id))?;
        release(&mut agent, run);
        tx.update_agent(&agent, now).await?;
    }
    let duration = (now - run.started_at).whole_milliseconds();
    let finished = AuditEvent::RunFinished(RunFinished {
        task_id: run.task_id,
        agent_id: run.agent_id,
        status: status.as_str(),
        exit_code: run.exit_code,
        duration_ms: i64::try_from(duration).unwrap_or(i64::MAX).max(0),
        usage: run.usage.clone(),
    });
    Ok(record(ids, actor, run.id.as_uuid(), now, &finished))
}

fn stop_event(
    ids: &dyn IdGenerator,
    actor: &Actor,
    run: &Run,
    now: OffsetDateTime,
    note: Option<String>,
) -> Event {
    let asked = AuditEvent::RunStopRequested(RunStopRequested {
        task_id: run.task_id,
        agent_id: run.agent_id,
        reason: run.stop_reason.map_or("requested", StopReason::as_str),
        note,
    });
    record(ids, actor, run.id.as_uuid(), now, &asked)
}

/// Loses the open run of `task` (its lease lapsed and the sweep hands the task back):
/// `lost`, what it held released, `run.finished`. Call with the task locked, before
/// the task changes. Answers the run lost; nothing when the task has no open run.
pub(crate) async fn lose_open_run<T: RunsTx + AgentsTx + WebhooksTx + ?Sized>(
    tx: &mut T,
    ids: &dyn IdGenerator,
    org: OrgId,
    task: TaskId,
    now: OffsetDateTime,
) -> Result<Option<Run>, ServiceError> {
    let Some(mut run) = tx.open_run(org, task, Lock::Update).await? else {
        return Ok(None);
    };
    let system = Actor {
        org_id: org,
        kind: crate::model::ActorKind::System,
    };
    let event = close(tx, ids, &system, &mut run, RunStatus::Lost, now).await?;
    tx.update_run(&run).await?;
    tx.append_events(&[event]).await?;
    Ok(Some(run))
}

/// Asks the open run of a task that changed from `before` to `after` to stop when the
/// change takes the task from its agent (cancelled, reassigned, unassigned). Call in
/// the change's transaction, with the task locked. Reads nothing unless the task had
/// an assignee and lost it or was cancelled.
pub(crate) async fn follow_task<T: RunsTx + WebhooksTx + ?Sized>(
    tx: &mut T,
    ids: &dyn IdGenerator,
    actor: &Actor,
    before: &Task,
    after: &Task,
    now: OffsetDateTime,
) -> Result<(), ServiceError> {
    let cancelled = after.status == TaskStatus::Cancelled && before.status != TaskStatus::Cancelled;
    if before.assignee_id.is_none() || (before.assignee_id == after.assignee_id && !cancelled) {
        return Ok(());
    }
    let Some(mut run) = tx.open_run(before.org_id, before.id, Lock::Update).await? else {
        return Ok(());
    };
    let Some(reason) = stop_for_task_change(&run, before, after) else {
        return Ok(());
    };
    if request_stop(&mut run, reason) {
        tx.update_run(&run).await?;
        tx.append_events(&[stop_event(ids, actor, &run, now, None)])
            .await?;
    }
    Ok(())
}
