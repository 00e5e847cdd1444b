//! Reads of projects and their progress (issue 66); they change through a
//! [`Transaction`](super::Transaction).

use async_trait::async_trait;
use time::OffsetDateTime;

use super::RepositoryError;
use crate::model::{OrgId, Project, ProjectId, ProjectStatus, ProjectTally};

/// When a project's task was created and, if it is done, when it was done: what a
/// burn-up chart is drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSpan {
    /// When the task was created.
    pub created_at: OffsetDateTime,
    /// When it was done (it entered `done`, which no move leaves); `None` while it is not.
    pub done_at: Option<OffsetDateTime>,
}

/// Projects and their progress, read outside a transaction.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ProjectRepository: Send + Sync {
    /// The project `id` of `org`.
    async fn project(&self, org: OrgId, id: ProjectId) -> Result<Option<Project>, RepositoryError>;

    /// Up to `limit` projects of `org` (only those in `status` when given), newest
    /// first, older than the `before` cursor when given.
    async fn projects(
        &self,
        org: OrgId,
        status: Option<ProjectStatus>,
        before: Option<ProjectId>,
        limit: u32,
    ) -> Result<Vec<Project>, RepositoryError>;

    /// The counts behind the progress of project `id` of `org` at `now`: its tasks by
    /// status, the overdue and blocked ones, and what their runs' usage cost.
    async fn tally(
        &self,
        org: OrgId,
        id: ProjectId,
        now: OffsetDateTime,
    ) -> Result<ProjectTally, RepositoryError>;

    /// When each task of project `id` was created and done, for those created before
    /// `until`; at most `limit` of them, oldest first.
    async fn task_spans(
        &self,
        org: OrgId,
        id: ProjectId,
        until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<TaskSpan>, RepositoryError>;
}
