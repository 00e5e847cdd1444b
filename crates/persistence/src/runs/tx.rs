//! [`RunsTx`] on a unit of work's transaction: runs, their log lines and their usage
//! reports.

use async_trait::async_trait;
use muster_domain::model::{ClaimReservation, LogLine, OrgId, Run, RunId, TaskId, UsageReport};
use muster_domain::ports::{Lock, RepositoryError, RunsTx};

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::claim_holds::{self, ClaimReservationRow};
use super::queries as runs;
use super::rows::{LogLineRow, RunRow, UsageReportRow};

#[async_trait]
impl RunsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.run", skip_all, fields(otel.kind = "client"))]
    async fn run(
        &mut self,
        org: OrgId,
        id: RunId,
        lock: Lock,
    ) -> Result<Option<Run>, RepositoryError> {
        let row = runs::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Run::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.open_run", skip_all, fields(otel.kind = "client"))]
    async fn open_run(
        &mut self,
        org: OrgId,
        task: TaskId,
        lock: Lock,
    ) -> Result<Option<Run>, RepositoryError> {
        let row = runs::find_open(&mut self.conn, org, task, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Run::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_run", skip_all, fields(otel.kind = "client"))]
    async fn insert_run(&mut self, run: &Run) -> Result<(), RepositoryError> {
        runs::insert(&mut self.conn, &RunRow::try_from(run)?)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_run", skip_all, fields(otel.kind = "client"))]
    async fn update_run(&mut self, run: &Run) -> Result<(), RepositoryError> {
        runs::update(&mut self.conn, &RunRow::try_from(run)?)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_log_lines", skip_all, fields(otel.kind = "client"))]
    async fn insert_log_lines(&mut self, lines: &[LogLine]) -> Result<(), RepositoryError> {
        let rows: Vec<LogLineRow> = lines.iter().map(LogLineRow::from).collect();
        runs::insert_lines(&mut self.conn, &rows)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.usage_report_exists", skip_all, fields(otel.kind = "client"))]
    async fn usage_report_exists(
        &mut self,
        org: OrgId,
        run: RunId,
        report_id: &str,
    ) -> Result<bool, RepositoryError> {
        runs::report_exists(&mut self.conn, org, run, report_id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_usage_report", skip_all, fields(otel.kind = "client"))]
    async fn insert_usage_report(&mut self, report: &UsageReport) -> Result<(), RepositoryError> {
        runs::insert_report(&mut self.conn, &UsageReportRow::from(report))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.claim_reservation", skip_all, fields(otel.kind = "client"))]
    async fn claim_reservation(
        &mut self,
        org: OrgId,
        task: TaskId,
        lock: Lock,
    ) -> Result<Option<ClaimReservation>, RepositoryError> {
        let row = claim_holds::find(&mut self.conn, org, task, Some(lock))
            .await
            .map_err(from_diesel)?;
        Ok(row.map(ClaimReservation::from))
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_claim_reservation", skip_all, fields(otel.kind = "client"))]
    async fn insert_claim_reservation(
        &mut self,
        reservation: &ClaimReservation,
    ) -> Result<(), RepositoryError> {
        claim_holds::insert(&mut self.conn, &ClaimReservationRow::from(reservation))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_claim_reservation", skip_all, fields(otel.kind = "client"))]
    async fn delete_claim_reservation(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<bool, RepositoryError> {
        claim_holds::delete(&mut self.conn, org, task)
            .await
            .map_err(from_diesel)
    }
}
