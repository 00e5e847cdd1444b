//! [`ProjectsTx`] on a unit of work's transaction.

use async_trait::async_trait;
use muster_domain::model::{OrgId, Project, ProjectId};
use muster_domain::ports::{Lock, ProjectsTx, RepositoryError};

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::queries;
use super::rows::ProjectRow;

#[async_trait]
impl ProjectsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.project", skip_all, fields(otel.kind = "client"))]
    async fn project(
        &mut self,
        org: OrgId,
        id: ProjectId,
        lock: Lock,
    ) -> Result<Option<Project>, RepositoryError> {
        let row = queries::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Project::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_project", skip_all, fields(otel.kind = "client"))]
    async fn insert_project(&mut self, project: &Project) -> Result<(), RepositoryError> {
        queries::insert(&mut self.conn, &ProjectRow::from(project))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_project", skip_all, fields(otel.kind = "client"))]
    async fn update_project(
        &mut self,
        project: &Project,
        expected_version: i64,
    ) -> Result<bool, RepositoryError> {
        queries::update(&mut self.conn, &ProjectRow::from(project), expected_version)
            .await
            .map_err(from_diesel)
    }
}
