//! Status moves driven by integrations (decision D-88): along the shortest legal path,
//! each step recorded as its own transition, never past what the table and the rules
//! allow.

use super::{TaskService, locked_task};
use crate::model::{Actor, AgentId, Reason, Task, TaskId, TaskOutcome, TaskResult, TaskStatus};
use crate::policy;
use crate::ports::{AgentsTx, LedgerTx, RunsTx, TasksTx, WebhooksTx, transact};
use crate::rules::integration_moves::path_to;
use crate::service::{Conflict, ServiceError};

/// What else an integration's move does: the result and outcome given with its last
/// step (the outcome only toward `cancelled`), the assignee the task must still have
/// (checked under the task's lock), and whether a task in review (waiting for approval,
/// or for whoever reviews it) is moved only toward `done` or `cancelled`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Closing {
    pub(crate) result: Option<TaskResult>,
    pub(crate) outcome: Option<TaskOutcome>,
    pub(crate) assignee: Option<AgentId>,
    pub(crate) review_holds: bool,
}

/// What an integration's move of a task came to.
#[derive(Debug, Clone, PartialEq)]
pub struct IntegrationMove {
    /// The task afterwards.
    pub task: Task,
    /// The statuses it went through, in order (empty when it did not move).
    pub steps: Vec<TaskStatus>,
    /// Why it did not reach the target, when it did not.
    pub held: Option<&'static str>,
}

impl TaskService {
    /// Moves the task toward `target` for an integration: every step of the shortest
    /// legal path is a transition with `reason`, with its events, reward and reputation,
    /// all in one transaction. A closed task never moves; toward `done`, a task that
    /// needs approval stops at `review`; a path through `in_progress`, `review` or
    /// `done` is not taken at all while a blocking dependency is open.
    pub async fn advance(
        &self,
        actor: &Actor,
        id: TaskId,
        target: TaskStatus,
        reason: Reason,
    ) -> Result<IntegrationMove, ServiceError> {
        policy::may_write(actor)?;
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move { service.advance_in(tx, &actor, id, target, reason).await })
        })
        .await
    }

    /// [`advance`](Self::advance) inside a transaction that also writes other things.
    pub(crate) async fn advance_in<
        T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + RunsTx + ?Sized,
    >(
        &self,
        tx: &mut T,
        actor: &Actor,
        id: TaskId,
        target: TaskStatus,
        reason: Reason,
    ) -> Result<IntegrationMove, ServiceError> {
        let closing = Closing::default();
        self.advance_closing_in(tx, actor, id, (target, reason), closing)
            .await
    }

    /// [`advance_in`](Self::advance_in) with what [`Closing`] asks for.
    pub(crate) async fn advance_closing_in<
        T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + RunsTx + ?Sized,
    >(
        &self,
        tx: &mut T,
        actor: &Actor,
        id: TaskId,
        (target, reason): (TaskStatus, Reason),
        closing: Closing,
    ) -> Result<IntegrationMove, ServiceError> {
        policy::may_write(actor)?;
        let Closing {
            result,
            outcome,
            assignee,
            review_holds,
        } = closing;
        let outcome = outcome.filter(|_| target == TaskStatus::Cancelled);
        let mut current = locked_task(tx, actor.org_id, id).await?;
        if let Some(agent) = assignee
            && current.assignee_id != Some(agent)
        {
            return Err(Conflict::NotHandedOver { task: id }.into());
        }
        let hold = |task: Task, why| {
            Ok(IntegrationMove {
                task,
                steps: Vec::new(),
                held: Some(why),
            })
        };
        if current.status.is_terminal() {
            return hold(current, "the task is already closed");
        }
        if review_holds && current.status == TaskStatus::Review && !target.is_terminal() {
            return hold(
                current,
                "the task is in review: only a final state moves it",
            );
        }
        let path = path_to(current.status, target, current.approval_required);
        let waits_for_approval = target == TaskStatus::Done
            && current.approval_required
            && path.last().is_none_or(|last| *last == TaskStatus::Review);
        let needs_dependencies = path.iter().any(|step| {
            matches!(
                step,
                TaskStatus::InProgress | TaskStatus::Review | TaskStatus::Done
            )
        });
        if needs_dependencies
            && !tx
                .open_blocking_dependencies(actor.org_id, current.id)
                .await?
                .is_empty()
        {
            return hold(current, "a blocking dependency is still open");
        }
        let now = self.clock.now();
        for (n, step) in path.iter().enumerate() {
            let mut task = current.clone();
            // The last step carries the result (even when approval holds the task in
            // review) and, toward cancelled, the outcome.
            if n + 1 == path.len() {
                if let Some(result) = result.clone() {
                    task.result = Some(result);
                }
                task.outcome = outcome;
            }
            current = self
                .move_to(
                    tx,
                    actor,
                    &current,
                    task,
                    *step,
                    Some(reason.clone()),
                    Vec::new(),
                    now,
                )
                .await?;
        }
        Ok(IntegrationMove {
            task: current,
            steps: path,
            held: waits_for_approval.then_some("the task needs approval to be done"),
        })
    }
}
