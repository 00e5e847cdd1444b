//! The domain's `ProjectRepository` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{OrgId, Project, ProjectId, ProjectStatus, ProjectTally};
use muster_domain::ports::{ProjectRepository, RepositoryError, TaskSpan};
use time::OffsetDateTime;

use crate::Database;
use crate::error::from_diesel;

use super::{queries, tally};

#[async_trait]
impl ProjectRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.projects.project", skip_all, fields(otel.kind = "client"))]
    async fn project(&self, org: OrgId, id: ProjectId) -> Result<Option<Project>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = queries::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(Project::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.projects.projects", skip_all, fields(otel.kind = "client"))]
    async fn projects(
        &self,
        org: OrgId,
        status: Option<ProjectStatus>,
        before: Option<ProjectId>,
        limit: u32,
    ) -> Result<Vec<Project>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = queries::list(&mut pooled.conn(), org, status, before, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Project::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.projects.tally", skip_all, fields(otel.kind = "client"))]
    async fn tally(
        &self,
        org: OrgId,
        id: ProjectId,
        now: OffsetDateTime,
    ) -> Result<ProjectTally, RepositoryError> {
        let mut pooled = self.pooled().await?;
        tally::tally(&mut pooled.conn(), org, id, now).await
    }

    #[tracing::instrument(level = "debug", name = "db.projects.task_spans", skip_all, fields(otel.kind = "client"))]
    async fn task_spans(
        &self,
        org: OrgId,
        id: ProjectId,
        until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<TaskSpan>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = queries::spans(&mut pooled.conn(), org, id, until, limit)
            .await
            .map_err(from_diesel)?;
        Ok(rows
            .into_iter()
            .map(
                |(created_at, status, status_changed_at, updated_at)| TaskSpan {
                    created_at: created_at.0,
                    done_at: (status == queries::DONE)
                        .then(|| status_changed_at.map_or(updated_at.0, |t| t.0)),
                },
            )
            .collect())
    }
}
