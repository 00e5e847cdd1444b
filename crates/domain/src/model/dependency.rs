use time::OffsetDateTime;

use super::{DependencyId, OrgId, TaskId};

/// "`task_id` depends on `depends_on_id`". A blocking dependency keeps the task from
/// starting, going to review or closing until the other task is `done` (decision D-31);
/// a non-blocking one is informational.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskDependency {
    /// Identity (the `depId` of `DELETE /tasks/:id/dependencies/:depId`).
    pub id: DependencyId,
    /// The owning organization.
    pub org_id: OrgId,
    /// The task that waits.
    pub task_id: TaskId,
    /// The task waited for.
    pub depends_on_id: TaskId,
    /// Whether it holds the task back until the other is done.
    pub blocking: bool,
    /// When it was added.
    pub created_at: OffsetDateTime,
}
