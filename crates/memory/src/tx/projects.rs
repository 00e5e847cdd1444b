//! The projects' writes (issue 66).

use async_trait::async_trait;
use muster_domain::model::{OrgId, Project, ProjectId};
use muster_domain::ports::{Lock, ProjectsTx, RepositoryError};

use super::{MemoryTransaction, insert_new};

#[async_trait]
impl ProjectsTx for MemoryTransaction {
    async fn project(
        &mut self,
        org: OrgId,
        id: ProjectId,
        _lock: Lock,
    ) -> Result<Option<Project>, RepositoryError> {
        Ok(self.state.projects.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_project(&mut self, project: &Project) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.projects,
            project.id.as_uuid(),
            project.clone(),
            "projects",
        )
    }

    async fn update_project(
        &mut self,
        project: &Project,
        expected_version: i64,
    ) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .projects
            .row_mut(&project.id.as_uuid())
            .filter(|p| p.org_id == project.org_id && p.version == expected_version);
        Ok(stored.map(|p| *p = project.clone()).is_some())
    }
}
