use std::sync::Arc;

use serde_json::json;
use time::OffsetDateTime;

use super::{Happening, ServiceError, record};
use crate::model::{
    Actor, AgentId, AgentMode, Description, EventSeverity, Metadata, Reason, Tags, Task, TaskId,
    TaskPriority, TaskStatus, Title, event_types,
};
use crate::policy;
use crate::ports::{AgentRepository, Clock, IdGenerator, TaskFilter, TaskRepository};
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
    agents: Arc<dyn AgentRepository>,
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

    /// Wires the service to its ports.
    pub fn new(
        tasks: Arc<dyn TaskRepository>,
        agents: Arc<dyn AgentRepository>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            tasks,
            agents,
            clock,
            ids,
        }
    }

    /// Creates a task in status `todo` in the actor's organization, with a
    /// `task.created` event.
    pub async fn create(&self, actor: &Actor, new: NewTask) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        if let Some(assignee) = new.assignee_id {
            self.check_assignable(actor, assignee).await?;
        }
        if let Some(parent) = new.parent_task_id
            && self.tasks.get(actor.org_id, parent).await?.is_none()
        {
            return Err(ServiceError::NotFound(format!(
                "Parent task {parent} not found"
            )));
        }
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
        let event = record(
            self.ids.as_ref(),
            actor.org_id,
            actor.actor_id(),
            now,
            Happening {
                event_type: event_types::TASK_CREATED,
                entity_type: "task",
                entity_id: task.id.as_uuid(),
                severity: EventSeverity::Info,
                payload: json!({
                    "title": task.title.as_str(),
                    "status": task.status.as_str(),
                    "priority": task.priority.as_str(),
                    "assigneeId": task.assignee_id,
                    "parentTaskId": task.parent_task_id,
                }),
            },
        );
        self.tasks.insert(&task, &[event]).await?;
        Ok(task)
    }

    /// The task, if it is in the actor's organization.
    pub async fn get(&self, actor: &Actor, id: TaskId) -> Result<Task, ServiceError> {
        self.tasks
            .get(actor.org_id, id)
            .await?
            .ok_or_else(|| not_found(id))
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
            return Err(ServiceError::Validation(format!(
                "limit must be between 1 and {}",
                Self::MAX_PAGE_SIZE
            )));
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
    /// `task.cancelled` when the task closes.
    pub async fn transition(
        &self,
        actor: &Actor,
        id: TaskId,
        to: TaskStatus,
        reason: Option<Reason>,
    ) -> Result<Task, ServiceError> {
        let current = self.get(actor, id).await?;
        policy::may_transition(actor, to)?;
        check_transition(&current, to)?;

        let now = self.clock.now();
        let mut task = current.clone();
        task.status = to;
        task.updated_at = now;
        task.version += 1;

        let reason_text = reason.as_ref().map(Reason::as_str);
        let payload =
            json!({ "from": current.status.as_str(), "to": to.as_str(), "reason": reason_text });
        let mut happenings = vec![Happening {
            event_type: event_types::TASK_TRANSITIONED,
            entity_type: "task",
            entity_id: id.as_uuid(),
            severity: EventSeverity::Info,
            payload: payload.clone(),
        }];
        let closing = match to {
            TaskStatus::Done => Some(event_types::TASK_DONE),
            TaskStatus::Cancelled => Some(event_types::TASK_CANCELLED),
            _ => None,
        };
        if let Some(event_type) = closing {
            happenings.push(Happening {
                event_type,
                entity_type: "task",
                entity_id: id.as_uuid(),
                severity: EventSeverity::Info,
                payload,
            });
        }
        let events: Vec<_> = happenings
            .into_iter()
            .map(|h| record(self.ids.as_ref(), actor.org_id, actor.actor_id(), now, h))
            .collect();

        if self.tasks.update(&task, current.version, &events).await? {
            Ok(task)
        } else {
            Err(ServiceError::Conflict(
                "Task was changed by another request; reload it and retry".into(),
            ))
        }
    }

    /// An assignee must be an active agent of the organization that executes work
    /// (decision D-34).
    async fn check_assignable(&self, actor: &Actor, id: AgentId) -> Result<(), ServiceError> {
        let agent = self
            .agents
            .get(actor.org_id, id)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("Agent {id} not found")))?;
        if !agent.is_active() {
            return Err(ServiceError::Conflict(format!(
                "Agent {id} is not active and cannot be assigned"
            )));
        }
        if matches!(agent.mode, AgentMode::Orchestrator | AgentMode::Observer) {
            return Err(ServiceError::Conflict(format!(
                "Agent {id} is an {} and does not execute tasks",
                agent.mode.as_str()
            )));
        }
        Ok(())
    }
}

fn not_found(id: TaskId) -> ServiceError {
    ServiceError::NotFound(format!("Task {id} not found"))
}
