//! [`RunsTx`]: what a transaction reads and writes of runs, their logs and their usage
//! reports (decision D-106).

use async_trait::async_trait;

use crate::model::{ClaimReservation, LogLine, OrgId, Run, RunId, TaskId, UsageReport};
use crate::ports::{Lock, RepositoryError};

/// Runs, their log lines and their usage reports. Part of
/// [`Transaction`](crate::ports::Transaction); every method is scoped to one organization.
#[async_trait]
pub trait RunsTx: Send {
    /// The run `id` of `org`, locked as asked.
    async fn run(
        &mut self,
        org: OrgId,
        id: RunId,
        lock: Lock,
    ) -> Result<Option<Run>, RepositoryError>;

    /// The open (`running`) run of `task`, locked as asked; a task has at most one.
    async fn open_run(
        &mut self,
        org: OrgId,
        task: TaskId,
        lock: Lock,
    ) -> Result<Option<Run>, RepositoryError>;

    /// Stores a new run. A second open run of one task is refused by the store
    /// (`Duplicate(UniqueKey::OpenRun)`), whoever raced to start it.
    async fn insert_run(&mut self, run: &Run) -> Result<(), RepositoryError>;

    /// Stores a run's new state (its row was locked with [`Lock::Update`]).
    async fn update_run(&mut self, run: &Run) -> Result<(), RepositoryError>;

    /// Appends lines to a run's log (numbered by the caller, after the run's last).
    async fn insert_log_lines(&mut self, lines: &[LogLine]) -> Result<(), RepositoryError>;

    /// Whether `run` already has a usage report with the reporter's id `report_id`.
    async fn usage_report_exists(
        &mut self,
        org: OrgId,
        run: RunId,
        report_id: &str,
    ) -> Result<bool, RepositoryError>;

    /// Stores a usage report.
    async fn insert_usage_report(&mut self, report: &UsageReport) -> Result<(), RepositoryError>;

    /// The credits reserved by the claim of `task`, locked as asked; a task holds at most
    /// one reservation.
    async fn claim_reservation(
        &mut self,
        org: OrgId,
        task: TaskId,
        lock: Lock,
    ) -> Result<Option<ClaimReservation>, RepositoryError>;

    /// Stores the reservation of a claim. A second one for the same task is refused by
    /// the store (`Duplicate`).
    async fn insert_claim_reservation(
        &mut self,
        reservation: &ClaimReservation,
    ) -> Result<(), RepositoryError>;

    /// Removes the reservation of the claim of `task`; whether there was one.
    async fn delete_claim_reservation(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<bool, RepositoryError>;
}
