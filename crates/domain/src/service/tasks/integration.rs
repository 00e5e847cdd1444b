//! Status moves driven by integrations (decision D-88): along the shortest legal path,
//! each step recorded as its own transition, never past what the table and the rules
//! allow.

use super::{TaskService, locked_task};
use crate::model::{Actor, Reason, Task, TaskId, TaskStatus};
use crate::policy;
use crate::ports::transact;
use crate::rules::integration_moves::path_to;
use crate::service::ServiceError;

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
    /// Moves the task toward `target` (`done` or `cancelled`) for an integration: every
    /// step of the shortest legal path is a transition with `reason`, with its events,
    /// reward and reputation, all in one transaction. A closed task never moves; toward
    /// `done`, a task that needs approval stops at `review`, and one with an open
    /// blocking dependency does not move at all.
    pub async fn advance(
        &self,
        actor: &Actor,
        id: TaskId,
        target: TaskStatus,
        reason: Reason,
    ) -> Result<IntegrationMove, ServiceError> {
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut current = locked_task(tx, actor.org_id, id).await?;
                if current.status.is_terminal() {
                    return Ok(IntegrationMove {
                        task: current,
                        steps: Vec::new(),
                        held: Some("the task is already closed"),
                    });
                }
                let path = path_to(current.status, target, current.approval_required);
                let waits_for_approval = target == TaskStatus::Done
                    && current.approval_required
                    && path.last().is_none_or(|last| *last == TaskStatus::Review);
                if target == TaskStatus::Done
                    && !tx
                        .open_blocking_dependencies(actor.org_id, current.id)
                        .await?
                        .is_empty()
                {
                    return Ok(IntegrationMove {
                        task: current,
                        steps: Vec::new(),
                        held: Some("a blocking dependency is still open"),
                    });
                }
                let now = service.clock.now();
                for step in &path {
                    let next = service
                        .move_to(
                            tx,
                            &actor,
                            &current,
                            current.clone(),
                            *step,
                            Some(reason.clone()),
                            Vec::new(),
                            now,
                        )
                        .await?;
                    current = next;
                }
                Ok(IntegrationMove {
                    task: current,
                    steps: path,
                    held: waits_for_approval.then_some("the task needs approval to be done"),
                })
            })
        })
        .await
    }
}
