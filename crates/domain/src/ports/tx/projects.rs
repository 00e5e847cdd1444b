//! [`ProjectsTx`]: what a transaction reads and writes of projects (issue 66).

use async_trait::async_trait;

use crate::model::{OrgId, Project, ProjectId};
use crate::ports::{Lock, RepositoryError};

/// Projects. Part of [`Transaction`](crate::ports::Transaction); every method is scoped
/// to one organization.
#[async_trait]
pub trait ProjectsTx: Send {
    /// The project `id` of `org`, held with `lock` until the end of the transaction.
    async fn project(
        &mut self,
        org: OrgId,
        id: ProjectId,
        lock: Lock,
    ) -> Result<Option<Project>, RepositoryError>;

    /// Stores a new project.
    async fn insert_project(&mut self, project: &Project) -> Result<(), RepositoryError>;

    /// Replaces the stored project with `project` (whose `version` is already bumped)
    /// only if the stored version is still `expected_version`; `false` when it is not.
    async fn update_project(
        &mut self,
        project: &Project,
        expected_version: i64,
    ) -> Result<bool, RepositoryError>;
}
