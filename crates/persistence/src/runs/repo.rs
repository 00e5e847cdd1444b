//! The domain's `RunRepository` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{LogLine, OrgId, Run, RunId};
use muster_domain::ports::{RepositoryError, RunFilter, RunRepository, UsageGroup, UsageQuery};

use crate::Database;
use crate::error::from_diesel;

use super::{queries as runs, summary};

#[async_trait]
impl RunRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.runs.run", skip_all, fields(otel.kind = "client"))]
    async fn run(&self, org: OrgId, id: RunId) -> Result<Option<Run>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = runs::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(Run::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.runs.runs", skip_all, fields(otel.kind = "client"))]
    async fn runs(
        &self,
        org: OrgId,
        filter: &RunFilter,
        before: Option<RunId>,
        limit: u32,
    ) -> Result<Vec<Run>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = runs::list(&mut pooled.conn(), org, filter, before, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Run::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.runs.log_lines", skip_all, fields(otel.kind = "client"))]
    async fn log_lines(
        &self,
        org: OrgId,
        run: RunId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<LogLine>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = runs::lines(&mut pooled.conn(), org, run, after, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(LogLine::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.runs.usage", skip_all, fields(otel.kind = "client"))]
    async fn usage(
        &self,
        org: OrgId,
        query: &UsageQuery,
    ) -> Result<Vec<UsageGroup>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        summary::usage(&mut pooled.conn(), org, query)
            .await
            .map_err(from_diesel)
    }
}
