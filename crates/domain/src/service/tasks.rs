use std::sync::Arc;

use time::OffsetDateTime;

use super::{Conflict, Entity, NotFound, ServiceError};
use crate::ValidationError;
use crate::model::{
    Actor, AgentId, AgentMode, AuditEvent, Description, Event, EventId, Metadata, OrgId, Reason,
    Tags, Task, TaskCreated, TaskId, TaskPriority, TaskStatus, TaskTransitioned, Title,
};
use crate::policy;
use crate::ports::{
    Clock, IdGenerator, Lock, TaskFilter, TaskRepository, Transaction, UnitOfWork, transact,
};
use crate::rules::transition::check_transition;

/// A task to create, already validated field by field.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    /// Short summary.
    pub title: Title,
    /// Markdown body.
    pub description: Option<Description>,
    /// Urgency.
    pub priority: TaskPriority,
    /// Agent to assign right away.
    pub assignee_id: Option<AgentId>,
    /// Parent task.
    pub parent_task_id: Option<TaskId>,
    /// Whether closing needs approval.
    pub approval_required: bool,
    /// Deadline.
    pub due_at: Option<OffsetDateTime>,
    /// Labels.
    pub tags: Tags,
    /// Arbitrary JSON object.
    pub metadata: Metadata,
}

/// One page of tasks and, when more remain, the cursor for the next page.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPage {
    /// Newest first.
    pub tasks: Vec<Task>,
    /// Pass as `before` to get the next page.
    pub next_cursor: Option<TaskId>,
}

/// Creating, reading and moving tasks.
#[derive(Clone)]
pub struct TaskService {
    tasks: Arc<dyn TaskRepository>,
    uow: Arc<dyn UnitOfWork>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for TaskService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskService").finish_non_exhaustive()
    }
}

impl TaskService {
    /// Page size of `GET /tasks` when none is asked for (decision D-7).
    pub const DEFAULT_PAGE_SIZE: u32 = 100;
    /// Largest page size of `GET /tasks` (decision D-7).
    pub const MAX_PAGE_SIZE: u32 = 500;

    /// Wires the service to its ports: `tasks` for reads, `uow` for changes.
    pub fn new(
        tasks: Arc<dyn TaskRepository>,
        uow: Arc<dyn UnitOfWork>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            tasks,
            uow,
            clock,
            ids,
        }
    }

    /// Creates a task in status `todo` in the actor's organization, with a
    /// `task.created` event. The assignee and parent checks and the writes are one
    /// transaction, so an assignee suspended meanwhile is never assigned.
    pub async fn create(&self, actor: &Actor, new: NewTask) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        let now = self.clock.now();
        let task = Task {
            id: TaskId::from_uuid(self.ids.new_id()),
            org_id: actor.org_id,
            title: new.title,
            description: new.description,
            status: TaskStatus::Todo,
            priority: new.priority,
            assignee_id: new.assignee_id,
            creator_id: actor.agent_id(),
            parent_task_id: new.parent_task_id,
            approval_required: new.approval_required,
            due_at: new.due_at,
            tags: new.tags,
            metadata: new.metadata,
            created_at: now,
            updated_at: now,
            version: 1,
        };
        let created = AuditEvent::TaskCreated(TaskCreated {
            title: task.title.as_str().to_owned(),
            status: task.status,
            priority: task.priority,
            assignee_id: task.assignee_id,
            parent_task_id: task.parent_task_id,
        });
        let event = self.event(actor, task.id, now, &created);
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                if let Some(assignee) = task.assignee_id {
                    check_assignable(tx, task.org_id, assignee).await?;
                }
                if let Some(parent) = task.parent_task_id
                    && tx.task(task.org_id, parent, Lock::Share).await?.is_none()
                {
                    return Err(NotFound::new(Entity::ParentTask, parent).into());
                }
                tx.insert_task(&task).await?;
                tx.append_events(&[event]).await?;
                Ok(task)
            })
        })
        .await
    }

    /// The task, if it is in the actor's organization.
    pub async fn get(&self, actor: &Actor, id: TaskId) -> Result<Task, ServiceError> {
        self.tasks
            .get(actor.org_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::Task, id).into())
    }

    /// Tasks of the actor's organization, newest first. `limit` is the page size;
    /// `before` is the cursor from the previous page.
    pub async fn list(
        &self,
        actor: &Actor,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, ServiceError> {
        if !(1..=Self::MAX_PAGE_SIZE).contains(&limit) {
            return Err(ValidationError::new(format!(
                "limit must be between 1 and {}",
                Self::MAX_PAGE_SIZE
            ))
            .into());
        }
        let mut tasks = self
            .tasks
            .list(actor.org_id, filter, before, limit + 1)
            .await?;
        let more = tasks.len() > limit as usize;
        tasks.truncate(limit as usize);
        let next_cursor = if more {
            tasks.last().map(|t| t.id)
        } else {
            None
        };
        Ok(TaskPage { tasks, next_cursor })
    }

    /// Moves a task to `to` if the transition table, the approval rule and the actor's
    /// permissions allow it. Writes `task.transitioned`, plus `task.done` or
    /// `task.cancelled` when the task closes. The task is read locked, so concurrent
    /// moves of one task run one after the other and each sees the other's result.
    pub async fn transition(
        &self,
        actor: &Actor,
        id: TaskId,
        to: TaskStatus,
        reason: Option<Reason>,
    ) -> Result<Task, ServiceError> {
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = tx
                    .task(actor.org_id, id, Lock::Update)
                    .await?
                    .ok_or(NotFound::new(Entity::Task, id))?;
                policy::may_transition(&actor, to)?;
                check_transition(&current, to)?;

                let now = service.clock.now();
                let mut task = current.clone();
                task.status = to;
                task.updated_at = now;
                task.version += 1;

                let moved = TaskTransitioned {
                    from: current.status,
                    to,
                    reason: reason.as_ref().map(|r| r.as_str().to_owned()),
                };
                let mut events = vec![service.event(
                    &actor,
                    id,
                    now,
                    &AuditEvent::TaskTransitioned(moved.clone()),
                )];
                let closing = match to {
                    TaskStatus::Done => Some(AuditEvent::TaskDone(moved)),
                    TaskStatus::Cancelled => Some(AuditEvent::TaskCancelled(moved)),
                    _ => None,
                };
                if let Some(closing) = closing {
                    events.push(service.event(&actor, id, now, &closing));
                }

                if !tx.update_task(&task, current.version).await? {
                    return Err(Conflict::ChangedConcurrently {
                        entity: Entity::Task,
                    }
                    .into());
                }
                tx.append_events(&events).await?;
                Ok(task)
            })
        })
        .await
    }

    /// The audit record of `what`, done by `actor` to the task `task` at `at`.
    fn event(&self, actor: &Actor, task: TaskId, at: OffsetDateTime, what: &AuditEvent) -> Event {
        Event::record(
            EventId::from_uuid(self.ids.new_id()),
            actor.org_id,
            actor.actor_id(),
            task.as_uuid(),
            at,
            what,
        )
    }
}

/// An assignee must be an active agent of the organization that executes work
/// (decision D-34). The agent row is share-locked: it cannot be suspended until the
/// task is stored.
async fn check_assignable(
    tx: &mut dyn Transaction,
    org: OrgId,
    id: AgentId,
) -> Result<(), ServiceError> {
    let agent = tx
        .agent(org, id, Lock::Share)
        .await?
        .ok_or(NotFound::new(Entity::Agent, id))?;
    if policy::agent_may_act(&agent).is_err() {
        return Err(Conflict::AssigneeNotActive { agent: id }.into());
    }
    if matches!(agent.mode, AgentMode::Orchestrator | AgentMode::Observer) {
        return Err(Conflict::AssigneeDoesNotExecute {
            agent: id,
            mode: agent.mode,
        }
        .into());
    }
    Ok(())
}
