//! The runs' writes: runs, their log lines and their usage reports (decision D-106).

use async_trait::async_trait;
use muster_domain::model::{ClaimReservation, LogLine, OrgId, Run, RunId, TaskId, UsageReport};
use muster_domain::ports::{Lock, RepositoryError, RunsTx, UniqueKey};

use super::{MemoryTransaction, duplicate, insert_new};
use crate::state::State;

/// Whether a run of `task` other than `run` is `running`: the databases' partial unique
/// index on `runs (task_id) WHERE status = 'running'`.
fn other_open_run(state: &State, run: &Run) -> bool {
    run.status.is_open()
        && state
            .runs
            .values()
            .any(|r| r.id != run.id && r.task_id == run.task_id && r.status.is_open())
}

#[async_trait]
impl RunsTx for MemoryTransaction {
    async fn run(
        &mut self,
        org: OrgId,
        id: RunId,
        _lock: Lock,
    ) -> Result<Option<Run>, RepositoryError> {
        Ok(self.state.runs.in_org(&id.as_uuid(), org).cloned())
    }

    async fn open_run(
        &mut self,
        org: OrgId,
        task: TaskId,
        _lock: Lock,
    ) -> Result<Option<Run>, RepositoryError> {
        Ok(self
            .state
            .runs
            .values()
            .find(|r| r.org_id == org && r.task_id == task && r.status.is_open())
            .cloned())
    }

    async fn insert_run(&mut self, run: &Run) -> Result<(), RepositoryError> {
        if !self.state.runs.contains_key(&run.id.as_uuid()) && other_open_run(&self.state, run) {
            return duplicate(UniqueKey::OpenRun);
        }
        insert_new(&mut self.state.runs, run.id.as_uuid(), run.clone(), "runs")
    }

    async fn update_run(&mut self, run: &Run) -> Result<(), RepositoryError> {
        if self
            .state
            .runs
            .in_org(&run.id.as_uuid(), run.org_id)
            .is_none()
        {
            return Ok(());
        }
        if other_open_run(&self.state, run) {
            return duplicate(UniqueKey::OpenRun);
        }
        if let Some(stored) = self.state.runs.row_in_org(&run.id.as_uuid(), run.org_id) {
            *stored = run.clone();
        }
        Ok(())
    }

    async fn insert_log_lines(&mut self, lines: &[LogLine]) -> Result<(), RepositoryError> {
        lines.iter().try_for_each(|line| {
            insert_new(
                &mut self.state.run_log_lines,
                (line.run_id.as_uuid(), line.seq),
                line.clone(),
                "run_log_lines",
            )
        })
    }

    async fn usage_report_exists(
        &mut self,
        org: OrgId,
        run: RunId,
        report_id: &str,
    ) -> Result<bool, RepositoryError> {
        Ok(self.state.usage_reports.values().any(|r| {
            r.org_id == org && r.run_id == run && r.report_id.as_deref() == Some(report_id)
        }))
    }

    async fn insert_usage_report(&mut self, report: &UsageReport) -> Result<(), RepositoryError> {
        if let Some(report_id) = report.report_id.as_deref() {
            let taken = self.state.usage_reports.values().any(|r| {
                r.id != report.id
                    && r.run_id == report.run_id
                    && r.report_id.as_deref() == Some(report_id)
            });
            if taken {
                return duplicate(UniqueKey::Other(
                    "usage_reports_run_id_report_id_key".to_owned(),
                ));
            }
        }
        insert_new(
            &mut self.state.usage_reports,
            report.id.as_uuid(),
            report.clone(),
            "usage_reports",
        )
    }

    async fn claim_reservation(
        &mut self,
        org: OrgId,
        task: TaskId,
        _lock: Lock,
    ) -> Result<Option<ClaimReservation>, RepositoryError> {
        Ok(self
            .state
            .claim_reservations
            .in_org(&task.as_uuid(), org)
            .cloned())
    }

    async fn insert_claim_reservation(
        &mut self,
        reservation: &ClaimReservation,
    ) -> Result<(), RepositoryError> {
        // The databases' CHECK (credits > 0).
        super::check(reservation.credits > 0, "claim_reservations_credits_check")?;
        insert_new(
            &mut self.state.claim_reservations,
            reservation.task_id.as_uuid(),
            reservation.clone(),
            "claim_reservations",
        )
    }

    async fn delete_claim_reservation(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<bool, RepositoryError> {
        Ok(self
            .state
            .claim_reservations
            .take_in_org(&task.as_uuid(), org)
            .is_some())
    }
}

#[cfg(test)]
mod tests {
    use futures_executor::block_on;
    use muster_domain::model::{AgentId, RunStatus, RunUsage};
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;

    fn run(id: u128, task: u128, status: RunStatus) -> Run {
        Run {
            id: RunId::from_uuid(Uuid::from_u128(id)),
            org_id: OrgId::from_uuid(Uuid::from_u128(1)),
            task_id: TaskId::from_uuid(Uuid::from_u128(task)),
            agent_id: AgentId::from_uuid(Uuid::from_u128(2)),
            status,
            adapter: None,
            model: None,
            started_at: OffsetDateTime::UNIX_EPOCH,
            ended_at: None,
            exit_code: None,
            summary: None,
            stop_requested: false,
            stop_reason: None,
            usage: RunUsage::default(),
            log_bytes: 0,
            log_lines: 0,
            log_truncated: false,
            reserved_credits: 0,
            credits_per_usd: 1_000,
            trace_id: None,
        }
    }

    fn refused_as_open_run(result: &Result<(), RepositoryError>) -> bool {
        matches!(result, Err(RepositoryError::Duplicate(UniqueKey::OpenRun)))
    }

    #[test]
    fn a_task_has_at_most_one_running_run_in_the_store() {
        let mut tx = MemoryTransaction::new(State::default());
        block_on(tx.insert_run(&run(10, 7, RunStatus::Running))).unwrap_or_default();
        assert!(refused_as_open_run(&block_on(tx.insert_run(&run(
            11,
            7,
            RunStatus::Running
        )))));
        // A finished run beside the open one, and an open run of another task, fit.
        assert!(block_on(tx.insert_run(&run(12, 7, RunStatus::Failed))).is_ok());
        assert!(block_on(tx.insert_run(&run(13, 8, RunStatus::Running))).is_ok());
        // Reopening the finished one is refused too (the index holds on updates).
        assert!(refused_as_open_run(&block_on(tx.update_run(&run(
            12,
            7,
            RunStatus::Running
        )))));
        // Once the open one finished, another may run.
        assert!(block_on(tx.update_run(&run(10, 7, RunStatus::Succeeded))).is_ok());
        assert!(block_on(tx.insert_run(&run(11, 7, RunStatus::Running))).is_ok());
        assert!(matches!(
            block_on(tx.insert_run(&run(11, 7, RunStatus::Failed))),
            Err(RepositoryError::Duplicate(UniqueKey::Other(_)))
        ));
        let org = OrgId::from_uuid(Uuid::from_u128(1));
        let open = block_on(tx.open_run(org, TaskId::from_uuid(Uuid::from_u128(7)), Lock::Share));
        assert_eq!(
            open.ok().flatten().map(|r| r.id.as_uuid()),
            Some(Uuid::from_u128(11))
        );
        let other_org = OrgId::from_uuid(Uuid::from_u128(99));
        let hidden = block_on(tx.run(
            other_org,
            RunId::from_uuid(Uuid::from_u128(11)),
            Lock::Nothing,
        ));
        assert!(hidden.is_ok_and(|r| r.is_none()));
    }

    #[test]
    fn a_report_id_is_unique_per_run() {
        let mut tx = MemoryTransaction::new(State::default());
        let report = |id: u128, run: u128, report_id: Option<&str>| UsageReport {
            id: muster_domain::model::UsageReportId::from_uuid(Uuid::from_u128(id)),
            org_id: OrgId::from_uuid(Uuid::from_u128(1)),
            run_id: RunId::from_uuid(Uuid::from_u128(run)),
            task_id: TaskId::from_uuid(Uuid::from_u128(7)),
            agent_id: AgentId::from_uuid(Uuid::from_u128(2)),
            model: "m".into(),
            provider: None,
            input_tokens: 1,
            output_tokens: 1,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_microusd: None,
            credits: 0,
            unfunded_credits: 0,
            report_id: report_id.map(str::to_owned),
            created_at: OffsetDateTime::UNIX_EPOCH,
        };
        assert!(block_on(tx.insert_usage_report(&report(1, 10, Some("a")))).is_ok());
        assert!(block_on(tx.insert_usage_report(&report(2, 10, Some("a")))).is_err());
        assert!(block_on(tx.insert_usage_report(&report(3, 11, Some("a")))).is_ok());
        assert!(block_on(tx.insert_usage_report(&report(4, 10, None))).is_ok());
        assert!(
            block_on(tx.insert_usage_report(&report(5, 10, None))).is_ok(),
            "NULLs distinct"
        );
        let org = OrgId::from_uuid(Uuid::from_u128(1));
        let run = RunId::from_uuid(Uuid::from_u128(10));
        assert!(block_on(tx.usage_report_exists(org, run, "a")).is_ok_and(|b| b));
        assert!(block_on(tx.usage_report_exists(org, run, "b")).is_ok_and(|b| !b));
    }
}
