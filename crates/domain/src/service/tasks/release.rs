//! An agent giving back a task it holds (beyond the contract): the hand-back the lease
//! sweep makes of a silent agent's task, made by the agent itself.

use super::{TaskService, locked_task};
use crate::model::{Actor, Reason, Task, TaskId, TaskStatus};
use crate::policy;
use crate::ports::transact;
use crate::rules::runs::{StartRefusal, may_start};
use crate::service::{Conflict, ServiceError};

impl TaskService {
    /// Gives the task `id`, held by the calling agent, back to the pool: it goes to
    /// `todo`, unassigned and without a lease, so that any agent may claim it again,
    /// exactly as when its lease runs out. Only the agent the task is assigned to may,
    /// while the task is `in_progress` (claimed, or moved there by the agent itself; a
    /// lease that already ran out is no obstacle): otherwise 409 `task_not_in_progress`
    /// or `not_task_assignee`, and users are refused (403). In one transaction: the
    /// claim's reservation goes back to the agent, an open run of the task is asked to
    /// stop (`reassigned`), and the transition `in_progress → todo` is written with the
    /// reason "released" (or "released: " and the `reason` given). Of two releases of
    /// one task, one wins; the other finds the task in `todo`.
    pub async fn release(
        &self,
        actor: &Actor,
        id: TaskId,
        reason: Option<Reason>,
    ) -> Result<Task, ServiceError> {
        let agent = policy::acting_agent(actor)?;
        policy::may_transition(actor, TaskStatus::Todo)?;
        let worded = match &reason {
            Some(given) => Reason::prefixed("released: ", given),
            None => Reason::new("released".to_owned())?,
        };
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked_task(tx, actor.org_id, id).await?;
                // The hold a run's start needs is the one a release gives up.
                may_start(&current, agent).map_err(|refusal| match refusal {
                    StartRefusal::NotInProgress(status) => Conflict::TaskNotInProgress { status },
                    StartRefusal::NotAssignee => Conflict::NotTaskAssignee,
                })?;
                let now = service.clock.now();
                let mut task = current.clone();
                task.assignee_id = None;
                // The move ends the claim: its lease goes, its reservation is given back
                // and the run of the agent losing the task is asked to stop.
                service
                    .move_to(
                        tx,
                        &actor,
                        &current,
                        task,
                        TaskStatus::Todo,
                        Some(worded),
                        Vec::new(),
                        now,
                    )
                    .await
            })
        })
        .await
    }
}
