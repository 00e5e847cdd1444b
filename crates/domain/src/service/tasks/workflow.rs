//! Moving tasks: transition (decisions D-30, D-31), approve (D-33), assign (D-34).

use crate::service::locks::lock_agents_as;
use crate::service::runs::{follow_task, holder_losing, release_claim};
use time::OffsetDateTime;

use super::{TaskService, check_assignable, ensure_open, locked_task};
use crate::ValidationError;
use crate::model::{
    Actor, AgentId, AuditEvent, Reason, Task, TaskApproved, TaskAssigned, TaskId, TaskOutcome,
    TaskResult, TaskStatus, TaskTransitioned,
};
use crate::policy;
use crate::ports::{AgentsTx, LedgerTx, Lock, RunsTx, TasksTx, WebhooksTx, transact};
use crate::rules::transition::check_transition;
use crate::service::{Conflict, ServiceError};

/// A move with what came of the task ([`TaskService::transition_with`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskMove {
    /// The status to move to.
    pub to: TaskStatus,
    /// Why, as given.
    pub reason: Option<Reason>,
    /// What came of the task (replaces its result when given).
    pub result: Option<TaskResult>,
    /// How a cancelled task ended; only with `to: cancelled`.
    pub outcome: Option<TaskOutcome>,
}

impl TaskService {
    /// Moves a task to `to` if the transition table, the approval rule, its blocking
    /// dependencies and the actor's permissions allow it. Writes `task.transitioned`,
    /// plus `task.done` or `task.cancelled` when the task closes, and settles the
    /// assignee's reward and reputation in the same transaction. The task is read
    /// locked, so concurrent moves of one task run one after the other and each sees the
    /// other's result.
    pub async fn transition(
        &self,
        actor: &Actor,
        id: TaskId,
        to: TaskStatus,
        reason: Option<Reason>,
    ) -> Result<Task, ServiceError> {
        let to = TaskMove {
            to,
            reason,
            result: None,
            outcome: None,
        };
        self.transition_with(actor, id, to).await
    }

    /// [`transition`](Self::transition) with what came of the task: a `result` replaces
    /// the one it has; an `outcome` (failed, rejected) only goes with a move to
    /// `cancelled`.
    pub async fn transition_with(
        &self,
        actor: &Actor,
        id: TaskId,
        to: TaskMove,
    ) -> Result<Task, ServiceError> {
        let TaskMove {
            to,
            reason,
            result,
            outcome,
        } = to;
        if outcome.is_some() && to != TaskStatus::Cancelled {
            return Err(ValidationError::new(
                "outcome is only for a move to cancelled (failed or rejected)",
            )
            .into());
        }
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked_task(tx, actor.org_id, id).await?;
                policy::may_transition(&actor, to)?;
                check_transition(&current, to)?;
                let now = service.clock.now();
                let mut task = current.clone();
                if let Some(result) = result {
                    task.result = Some(result);
                }
                task.outcome = outcome;
                service
                    .move_to(tx, &actor, &current, task, to, reason, Vec::new(), now)
                    .await
            })
        })
        .await
    }

    /// Approves a task in review that requires approval and moves it to `done`
    /// (decision D-33): `task.approved`, then the done transition with its dependency
    /// check, reward and reputation.
    pub async fn approve(&self, actor: &Actor, id: TaskId) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked_task(tx, actor.org_id, id).await?;
                if !current.approval_required {
                    return Err(Conflict::ApprovalNotRequired.into());
                }
                if current.status != TaskStatus::Review {
                    return Err(Conflict::NotInReview {
                        status: current.status,
                    }
                    .into());
                }
                policy::may_approve(&actor, &current)?;
                let now = service.clock.now();
                let mut task = current.clone();
                let approver = actor.actor_id();
                task.approved_by = approver;
                task.approved_at = Some(now);
                let approval = AuditEvent::TaskApproved(TaskApproved {
                    approved_by: approver.unwrap_or_default(),
                });
                service
                    .move_to(
                        tx,
                        &actor,
                        &current,
                        task,
                        TaskStatus::Done,
                        None,
                        vec![approval],
                        now,
                    )
                    .await
            })
        })
        .await
    }

    /// Assigns a task that is not closed to an active agent that executes work
    /// (decision D-34), with `task.assigned`. Assigning the current assignee again
    /// changes nothing.
    pub async fn assign(
        &self,
        actor: &Actor,
        id: TaskId,
        assignee: AgentId,
    ) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked_task(tx, actor.org_id, id).await?;
                ensure_open(&current)?;
                lock_for_reassign(tx, &current, assignee).await?;
                check_assignable(tx, actor.org_id, assignee).await?;
                service.reassign(tx, &actor, current, assignee).await
            })
        })
        .await
    }

    /// Hands `current` (locked, open) to the checked `assignee`, with `task.assigned`;
    /// what the previous assignee's claim reserved goes back to it (decision D-106).
    pub(super) async fn reassign<T: AgentsTx + TasksTx + WebhooksTx + RunsTx + ?Sized>(
        &self,
        tx: &mut T,
        actor: &Actor,
        current: Task,
        assignee: AgentId,
    ) -> Result<Task, ServiceError> {
        if current.assignee_id == Some(assignee) {
            return Ok(current);
        }
        let now = self.clock.now();
        let mut task = current.clone();
        task.assignee_id = Some(assignee);
        // A claim is the claimer's: handing the task on ends it.
        task.lease_expires_at = None;
        let handed = AuditEvent::TaskAssigned(TaskAssigned {
            assignee_id: assignee,
            previous_assignee_id: current.assignee_id,
        });
        let event = self.task_event_at(actor, task.id, now, &handed);
        // The run of the agent losing the task is asked to stop (decision D-106).
        follow_task(tx, self.ids.as_ref(), actor, &current, &task, now).await?;
        release_claim(tx, &current, &task, now).await?;
        self.save(tx, &current, task, now, vec![event]).await
    }

    /// Moves `task` (a changed copy of the locked `current`) to `to` after the checks
    /// every move shares: blocking dependencies for work, review and done (D-31). Writes
    /// the `before` events, `task.transitioned`, the closing event, and the outcome's
    /// credits and reputation.
    #[allow(clippy::too_many_arguments)] // one private step shared by three use cases
    pub(super) async fn move_to<T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + RunsTx + ?Sized>(
        &self,
        tx: &mut T,
        actor: &Actor,
        current: &Task,
        mut task: Task,
        to: TaskStatus,
        reason: Option<Reason>,
        before: Vec<AuditEvent>,
        now: OffsetDateTime,
    ) -> Result<Task, ServiceError> {
        if matches!(
            to,
            TaskStatus::InProgress | TaskStatus::Review | TaskStatus::Done
        ) {
            let open = tx
                .open_blocking_dependencies(actor.org_id, current.id)
                .await?;
            if !open.is_empty() {
                return Err(Conflict::OpenDependencies { tasks: open }.into());
            }
        }
        task.status = to;
        // A claim holds a task while it is in progress only.
        if to != TaskStatus::InProgress {
            task.lease_expires_at = None;
        }
        // A cancelled task's run, or that of the agent losing it, is asked to stop
        // (decision D-106); the run is locked after the task and before any agent.
        follow_task(tx, self.ids.as_ref(), actor, current, &task, now).await?;
        let moved = TaskTransitioned {
            from: current.status,
            to,
            reason: reason.map(|r| r.as_str().to_owned()),
        };
        let mut what = before;
        what.push(AuditEvent::TaskTransitioned(moved.clone()));
        match to {
            TaskStatus::Done => what.push(AuditEvent::TaskDone(moved)),
            TaskStatus::Cancelled => what.push(AuditEvent::TaskCancelled(moved)),
            _ => {}
        }
        let mut events: Vec<_> = what
            .iter()
            .map(|w| self.task_event_at(actor, task.id, now, w))
            .collect();
        events.extend(self.settle(tx, actor, current, &task, now).await?);
        // A claim's reservation goes back when the move ends the claim (decision D-106).
        // After the settlement: it locked the holder with the other agents it changes,
        // or no agent at all, so the holder is never locked out of order.
        release_claim(tx, current, &task, now).await?;
        self.save(tx, current, task, now, events).await
    }
}

/// Before the new `assignee` of `current` is checked (share-locked): locks it together
/// with the holder of the claim's reservation that the reassignment gives back, in the
/// one ascending order of agent locks.
pub(super) async fn lock_for_reassign<T: AgentsTx + RunsTx + ?Sized>(
    tx: &mut T,
    current: &Task,
    assignee: AgentId,
) -> Result<(), ServiceError> {
    if let Some(holder) = holder_losing(tx, current, assignee).await? {
        lock_agents_as(
            tx,
            current.org_id,
            &[(assignee, Lock::Share), (holder, Lock::Update)],
        )
        .await?;
    }
    Ok(())
}
