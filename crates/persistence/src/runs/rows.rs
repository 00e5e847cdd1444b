//! The rows of `runs`, `run_log_lines` and `usage_reports`, and their conversions to and
//! from the domain model. A run's usage is stored as the JSON text of [`RunUsage`].

use diesel::prelude::*;
use muster_domain::model::{
    AgentId, LogLine, LogStream, OrgId, Run, RunId, RunStatus, RunUsage, StopReason, TaskId,
    UsageReport,
};
use muster_domain::ports::RepositoryError;
use time::{OffsetDateTime, UtcOffset};

use crate::error::corrupt;
use crate::schema::{run_log_lines, runs, usage_reports};
use crate::types::{DbTime, DbUuid, db_uuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = runs, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct RunRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub task_id: DbUuid,
    pub agent_id: DbUuid,
    pub status: String,
    pub adapter: Option<String>,
    pub model: Option<String>,
    pub started_at: DbTime,
    pub ended_at: Option<DbTime>,
    pub exit_code: Option<i32>,
    pub summary: Option<String>,
    pub stop_requested: bool,
    pub stop_reason: Option<String>,
    /// The JSON text of the run's [`RunUsage`] (camelCase).
    pub usage: String,
    pub log_bytes: i64,
    pub log_lines: i64,
    pub log_truncated: bool,
    pub reserved_credits: i64,
    pub credits_per_usd: i64,
    pub trace_id: Option<String>,
}

impl TryFrom<&Run> for RunRow {
    type Error = RepositoryError;

    fn try_from(run: &Run) -> Result<Self, Self::Error> {
        Ok(Self {
            id: db_uuid(run.id),
            org_id: db_uuid(run.org_id),
            task_id: db_uuid(run.task_id),
            agent_id: db_uuid(run.agent_id),
            status: run.status.as_str().to_owned(),
            adapter: run.adapter.clone(),
            model: run.model.clone(),
            started_at: DbTime(run.started_at),
            ended_at: run.ended_at.map(DbTime),
            exit_code: run.exit_code,
            summary: run.summary.clone(),
            stop_requested: run.stop_requested,
            stop_reason: run.stop_reason.map(|r| r.as_str().to_owned()),
            usage: serde_json::to_string(&run.usage).map_err(RepositoryError::internal)?,
            log_bytes: run.log_bytes,
            log_lines: run.log_lines,
            log_truncated: run.log_truncated,
            reserved_credits: run.reserved_credits,
            credits_per_usd: run.credits_per_usd,
            trace_id: run.trace_id.clone(),
        })
    }
}

impl TryFrom<RunRow> for Run {
    type Error = RepositoryError;

    fn try_from(row: RunRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: RunId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            task_id: TaskId::from_uuid(row.task_id.0),
            agent_id: AgentId::from_uuid(row.agent_id.0),
            status: RunStatus::parse(&row.status)
                .ok_or_else(|| corrupt("run status", &row.status))?,
            adapter: row.adapter,
            model: row.model,
            started_at: row.started_at.0,
            ended_at: row.ended_at.map(|t| t.0),
            exit_code: row.exit_code,
            summary: row.summary,
            stop_requested: row.stop_requested,
            stop_reason: row
                .stop_reason
                .map(|r| StopReason::parse(&r).ok_or_else(|| corrupt("run stop reason", r)))
                .transpose()?,
            usage: serde_json::from_str::<RunUsage>(&row.usage)
                .map_err(|e| corrupt("run usage", e))?,
            log_bytes: row.log_bytes,
            log_lines: row.log_lines,
            log_truncated: row.log_truncated,
            reserved_credits: row.reserved_credits,
            credits_per_usd: row.credits_per_usd,
            trace_id: row.trace_id,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = run_log_lines, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct LogLineRow {
    pub org_id: DbUuid,
    pub run_id: DbUuid,
    pub seq: i64,
    pub stream: String,
    pub text: String,
    pub created_at: DbTime,
}

impl From<&LogLine> for LogLineRow {
    fn from(line: &LogLine) -> Self {
        Self {
            org_id: db_uuid(line.org_id),
            run_id: db_uuid(line.run_id),
            seq: line.seq,
            stream: line.stream.as_str().to_owned(),
            text: line.text.clone(),
            created_at: DbTime(line.at),
        }
    }
}

impl TryFrom<LogLineRow> for LogLine {
    type Error = RepositoryError;

    fn try_from(row: LogLineRow) -> Result<Self, Self::Error> {
        Ok(Self {
            org_id: OrgId::from_uuid(row.org_id.0),
            run_id: RunId::from_uuid(row.run_id.0),
            seq: row.seq,
            stream: LogStream::parse(&row.stream)
                .ok_or_else(|| corrupt("log line stream", &row.stream))?,
            text: row.text,
            at: row.created_at.0,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = usage_reports, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct UsageReportRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub run_id: DbUuid,
    pub task_id: DbUuid,
    pub agent_id: DbUuid,
    pub model: String,
    pub provider: Option<String>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub cost_microusd: Option<i64>,
    pub credits: i64,
    pub unfunded_credits: i64,
    pub report_id: Option<String>,
    /// `YYYY-MM-DD`, the UTC day of `created_at`: what usage is grouped by per day.
    pub day: String,
    pub created_at: DbTime,
}

/// The UTC day of `at`, `YYYY-MM-DD`.
pub(crate) fn utc_day(at: OffsetDateTime) -> String {
    let date = at.to_offset(UtcOffset::UTC).date();
    format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}

impl From<&UsageReport> for UsageReportRow {
    fn from(report: &UsageReport) -> Self {
        Self {
            id: db_uuid(report.id),
            org_id: db_uuid(report.org_id),
            run_id: db_uuid(report.run_id),
            task_id: db_uuid(report.task_id),
            agent_id: db_uuid(report.agent_id),
            model: report.model.clone(),
            provider: report.provider.clone(),
            input_tokens: report.input_tokens,
            output_tokens: report.output_tokens,
            cache_read_tokens: report.cache_read_tokens,
            cache_write_tokens: report.cache_write_tokens,
            cost_microusd: report.cost_microusd,
            credits: report.credits,
            unfunded_credits: report.unfunded_credits,
            report_id: report.report_id.clone(),
            day: utc_day(report.created_at),
            created_at: DbTime(report.created_at),
        }
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    #[test]
    fn the_day_is_the_utc_date() {
        assert_eq!(
            utc_day(datetime!(2026-03-01 23:59:59.999 UTC)),
            "2026-03-01"
        );
        assert_eq!(utc_day(datetime!(2026-03-02 00:30:00 +01:00)), "2026-03-01");
        assert_eq!(utc_day(datetime!(0999-12-31 00:00:00 UTC)), "0999-12-31");
    }
}
