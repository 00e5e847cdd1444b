//! The bodies of A2A push notifications: a `StreamResponse` status update, the status
//! the event led to (a move names its new status; the task's other fields are read
//! when the push is sent), exactly as a streaming client sees it.

use std::sync::Arc;

use async_trait::async_trait;
use muster_domain::model::{Event, OrgId, Task, TaskId, TaskStatus};
use muster_domain::ports::{HandoverTarget, PushRenderer, RepositoryError, TaskRepository};
use serde_json::Value;

use crate::mapping;
use crate::types::{StreamResponse, TaskStatusUpdateEvent};

/// Writes push bodies from the stored tasks.
#[derive(Clone)]
pub struct TaskPushRenderer {
    tasks: Arc<dyn TaskRepository>,
}

impl std::fmt::Debug for TaskPushRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskPushRenderer").finish_non_exhaustive()
    }
}

impl TaskPushRenderer {
    /// A renderer reading tasks from `tasks`.
    pub fn new(tasks: Arc<dyn TaskRepository>) -> Self {
        Self { tasks }
    }
}

/// The status update `event` stands for, on `task` as it is now.
pub fn status_update(task: Task, event: &Event) -> StreamResponse {
    let moved_to = event
        .payload
        .get("to")
        .and_then(Value::as_str)
        .and_then(TaskStatus::parse);
    let task = match moved_to {
        Some(status) => Task {
            status,
            status_changed_at: event.created_at,
            ..task
        },
        None => task,
    };
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.to_string(),
        context_id: mapping::context_id(&task),
        status: mapping::status(&task),
    })
}

#[async_trait]
impl PushRenderer for TaskPushRenderer {
    async fn render(
        &self,
        org: OrgId,
        task: TaskId,
        event: &Event,
    ) -> Result<Value, RepositoryError> {
        let stored = self.tasks.get(org, task).await?.ok_or_else(|| {
            RepositoryError::Internal(format!("the task {task} of a push config is gone").into())
        })?;
        serde_json::to_value(status_update(stored, event))
            .map_err(|e| RepositoryError::Internal(e.into()))
    }

    async fn render_handover(
        &self,
        org: OrgId,
        task: TaskId,
        target: &HandoverTarget,
    ) -> Result<Option<Value>, RepositoryError> {
        let Some(stored) = self.tasks.get(org, task).await? else {
            return Ok(None);
        };
        if stored.status.is_terminal() || stored.assignee_id != Some(target.agent) {
            return Ok(None);
        }
        Ok(Some(crate::remote::handover_request(
            &stored,
            target.request_id,
            &target.push_url,
            &target.token,
        )))
    }
}
