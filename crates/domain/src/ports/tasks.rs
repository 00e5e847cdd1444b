use async_trait::async_trait;

use super::RepositoryError;
use crate::model::{AgentId, OrgId, Task, TaskId, TaskStatus};

/// Filters of `GET /tasks`; `None` means "any".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    /// Only tasks in this status.
    pub status: Option<TaskStatus>,
    /// Only tasks assigned to this agent.
    pub assignee_id: Option<AgentId>,
    /// Only tasks created by this agent.
    pub creator_id: Option<AgentId>,
    /// Only sub-tasks of this task.
    pub parent_task_id: Option<TaskId>,
}

/// Stored tasks, for reading. Every method is scoped to one organization; changes go
/// through a [`Transaction`](super::Transaction).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TaskRepository: Send + Sync {
    /// The task with `id` in `org`, if any.
    async fn get(&self, org: OrgId, id: TaskId) -> Result<Option<Task>, RepositoryError>;

    /// Tasks of `org` matching `filter`, newest first, at most `limit`, strictly older
    /// than the task `before` when given (keyset paging).
    async fn list(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError>;
}
