use async_trait::async_trait;

use super::RepositoryError;
use crate::model::{AgentId, Event, OrgId, Task, TaskId, TaskStatus};

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

/// Stored tasks. Every method is scoped to one organization.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TaskRepository: Send + Sync {
    /// Stores a new task and its audit events in one transaction.
    async fn insert(&self, task: &Task, events: &[Event]) -> Result<(), RepositoryError>;

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

    /// Replaces the stored task with `task` (whose `version` is already bumped) and
    /// appends `events`, in one transaction, only if the stored version is still
    /// `expected_version`. Returns `false`, changing nothing, when another writer got
    /// there first.
    async fn update(
        &self,
        task: &Task,
        expected_version: i64,
        events: &[Event],
    ) -> Result<bool, RepositoryError>;
}
