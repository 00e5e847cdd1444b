//! [`RoutinesTx`] on a unit of work's transaction.

use async_trait::async_trait;
use muster_domain::model::{OrgId, Routine, RoutineFiring, RoutineId};
use muster_domain::ports::{Lock, RepositoryError, RoutinesTx};

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::queries;
use super::rows::{FiringRow, RoutineRow};

#[async_trait]
impl RoutinesTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.routine", skip_all, fields(otel.kind = "client"))]
    async fn routine(
        &mut self,
        org: OrgId,
        id: RoutineId,
        lock: Lock,
    ) -> Result<Option<Routine>, RepositoryError> {
        let row = queries::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Routine::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_routine", skip_all, fields(otel.kind = "client"))]
    async fn insert_routine(&mut self, routine: &Routine) -> Result<(), RepositoryError> {
        queries::insert(&mut self.conn, &RoutineRow::try_from(routine)?)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_routine", skip_all, fields(otel.kind = "client"))]
    async fn update_routine(
        &mut self,
        routine: &Routine,
        expected_version: i64,
    ) -> Result<bool, RepositoryError> {
        queries::update(
            &mut self.conn,
            &RoutineRow::try_from(routine)?,
            expected_version,
        )
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_routine", skip_all, fields(otel.kind = "client"))]
    async fn delete_routine(&mut self, org: OrgId, id: RoutineId) -> Result<bool, RepositoryError> {
        queries::delete(&mut self.conn, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_routine_firing", skip_all, fields(otel.kind = "client"))]
    async fn insert_routine_firing(
        &mut self,
        firing: &RoutineFiring,
    ) -> Result<(), RepositoryError> {
        queries::insert_firing(&mut self.conn, &FiringRow::from(firing))
            .await
            .map_err(from_diesel)
    }
}
