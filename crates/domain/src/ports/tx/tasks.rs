//! [`TasksTx`]: what a transaction reads and writes of tasks, their dependencies, comments,
//! escalations and templates, and claiming.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::model::{
    Comment, CommentId, DependencyId, Escalation, OrgId, ProjectId, Task, TaskDependency, TaskId,
    TaskTemplate,
};
use crate::ports::{Lock, RepositoryError};

/// Tasks, their dependencies, comments, escalations and templates, and claiming. Part of
/// [`Transaction`](crate::ports::Transaction); every method is scoped to one organization
/// except where it says otherwise.
#[async_trait]
pub trait TasksTx: Send {
    /// The task with `id` in `org`, held with `lock` until the end of the transaction.
    async fn task(
        &mut self,
        org: OrgId,
        id: TaskId,
        lock: Lock,
    ) -> Result<Option<Task>, RepositoryError>;

    /// Stores a new task.
    async fn insert_task(&mut self, task: &Task) -> Result<(), RepositoryError>;

    /// Replaces the stored task with `task` (whose `version` is already bumped) only if
    /// the stored version is still `expected_version`; `false` when it is not (or the
    /// task is gone).
    async fn update_task(
        &mut self,
        task: &Task,
        expected_version: i64,
    ) -> Result<bool, RepositoryError>;

    /// Marks that something happened to the task (a comment) at `at`, without changing
    /// it: the stale-task sweep looks at this.
    async fn touch_task(
        &mut self,
        org: OrgId,
        id: TaskId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;

    /// Serializes changes to the dependency graph of `org` until the end of the
    /// transaction, so that two concurrent additions cannot close a cycle that neither
    /// saw (PostgreSQL: a transaction-scoped advisory lock; SQLite: its one writer).
    async fn lock_dependency_graph(&mut self, org: OrgId) -> Result<(), RepositoryError>;

    /// Whether `to` is reachable from `from` by following "depends on" edges of `org`,
    /// in one query however long the chain.
    async fn depends_transitively(
        &mut self,
        org: OrgId,
        from: TaskId,
        to: TaskId,
    ) -> Result<bool, RepositoryError>;

    /// Stores a new dependency; an existing one between the same two tasks is
    /// [`UniqueKey::Dependency`](crate::ports::UniqueKey::Dependency).
    async fn insert_dependency(
        &mut self,
        dependency: &TaskDependency,
    ) -> Result<(), RepositoryError>;

    /// Deletes the dependency `id` of `task`; the deleted dependency, or `None`.
    async fn delete_dependency(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: DependencyId,
    ) -> Result<Option<TaskDependency>, RepositoryError>;

    /// The tasks `task` depends on through blocking dependencies that are not `done`,
    /// oldest dependency first.
    async fn open_blocking_dependencies(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskId>, RepositoryError>;

    /// The comment `id` of `task`.
    async fn comment(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: CommentId,
    ) -> Result<Option<Comment>, RepositoryError>;

    /// Stores a new comment.
    async fn insert_comment(&mut self, comment: &Comment) -> Result<(), RepositoryError>;

    /// Stores an escalation. An automatic one is stored at most once per task and reason:
    /// `false` when it was already there (nothing stored).
    async fn insert_escalation(&mut self, escalation: &Escalation)
    -> Result<bool, RepositoryError>;

    /// Stores a new template; a taken name is
    /// [`UniqueKey::TemplateName`](crate::ports::UniqueKey::TemplateName).
    async fn insert_template(&mut self, template: &TaskTemplate) -> Result<(), RepositoryError>;

    /// Claimable tasks of `org` (only those of `project` when given): `todo`,
    /// unassigned, with every blocking dependency done; by priority (urgent first), then
    /// oldest first; `limit` of them from `offset`.
    async fn claim_candidates(
        &mut self,
        org: OrgId,
        project: Option<ProjectId>,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError>;

    /// Locks, until the commit, the first task of `ids` (in their order) that is still
    /// claimable in `org` and that no other transaction holds, without waiting for the
    /// holders of the others: its id, or `None` when none is. One statement on
    /// PostgreSQL, however many of them other claimers hold.
    async fn try_lock_first_claimable(
        &mut self,
        org: OrgId,
        ids: &[TaskId],
    ) -> Result<Option<TaskId>, RepositoryError>;
}
