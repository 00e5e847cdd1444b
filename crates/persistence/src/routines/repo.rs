//! The domain's `RoutineRepository` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{OrgId, Routine, RoutineId};
use muster_domain::ports::{RepositoryError, RoutineRepository};
use time::OffsetDateTime;

use crate::Database;
use crate::error::from_diesel;

use super::queries;

#[async_trait]
impl RoutineRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.routines.routine", skip_all, fields(otel.kind = "client"))]
    async fn routine(&self, org: OrgId, id: RoutineId) -> Result<Option<Routine>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = queries::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(Routine::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.routines.routines", skip_all, fields(otel.kind = "client"))]
    async fn routines(
        &self,
        org: OrgId,
        before: Option<RoutineId>,
        limit: u32,
    ) -> Result<Vec<Routine>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = queries::list(&mut pooled.conn(), org, before, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Routine::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.routines.due", skip_all, fields(otel.kind = "client"))]
    async fn due_routines(
        &self,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<(OrgId, RoutineId)>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = queries::due(&mut pooled.conn(), now, limit)
            .await
            .map_err(from_diesel)?;
        Ok(rows
            .into_iter()
            .map(|(org, id)| (OrgId::from_uuid(org.0), RoutineId::from_uuid(id.0)))
            .collect())
    }
}
