//! The runs' reads: runs newest first, log pages and usage summaries (decision D-106).

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use muster_domain::model::{LogLine, OrgId, Run, RunId, UsageReport, UsageTotals};
use muster_domain::ports::{
    RepositoryError, RunFilter, RunRepository, UsageGroup, UsageGroupBy, UsageQuery,
};
use time::{OffsetDateTime, UtcOffset};

use super::{first, newest_first};
use crate::MemoryStore;

/// Whether `run` is one `filter` holds (`from` inclusive, `to` exclusive, on its start).
fn matches(filter: &RunFilter, run: &Run) -> bool {
    filter.agent.is_none_or(|a| run.agent_id == a)
        && filter.task.is_none_or(|t| run.task_id == t)
        && filter.status.is_none_or(|s| run.status == s)
        && filter.from.is_none_or(|from| run.started_at >= from)
        && filter.to.is_none_or(|to| run.started_at < to)
}

/// Whether `report` is one `query` adds up (`from` inclusive, `to` exclusive).
fn counts(query: &UsageQuery, report: &UsageReport) -> bool {
    query.agent.is_none_or(|a| report.agent_id == a)
        && query.task.is_none_or(|t| report.task_id == t)
        && query.from.is_none_or(|from| report.created_at >= from)
        && query.to.is_none_or(|to| report.created_at < to)
}

/// The UTC day of `at`, `YYYY-MM-DD`, as the databases store it.
fn day(at: OffsetDateTime) -> String {
    let date = at.to_offset(UtcOffset::UTC).date();
    format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}

/// The key of `report`'s group.
fn key(group_by: UsageGroupBy, report: &UsageReport) -> String {
    match group_by {
        UsageGroupBy::Agent => report.agent_id.as_uuid().hyphenated().to_string(),
        UsageGroupBy::Model => report.model.clone(),
        UsageGroupBy::Task => report.task_id.as_uuid().hyphenated().to_string(),
        UsageGroupBy::Day => day(report.created_at),
    }
}

#[async_trait]
impl RunRepository for MemoryStore {
    async fn run(&self, org: OrgId, id: RunId) -> Result<Option<Run>, RepositoryError> {
        Ok(self.snapshot().runs.in_org(&id.as_uuid(), org).cloned())
    }

    async fn runs(
        &self,
        org: OrgId,
        filter: &RunFilter,
        before: Option<RunId>,
        limit: u32,
    ) -> Result<Vec<Run>, RepositoryError> {
        let state = self.snapshot();
        let runs = newest_first(&state.runs, before.map(RunId::as_uuid))
            .filter(|r| r.org_id == org && matches(filter, r))
            .cloned();
        Ok(first(runs, limit))
    }

    async fn log_lines(
        &self,
        org: OrgId,
        run: RunId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<LogLine>, RepositoryError> {
        let state = self.snapshot();
        let run = run.as_uuid();
        let lines = state
            .run_log_lines
            .range((run, after.saturating_add(1))..=(run, i64::MAX))
            .map(|(_, line)| line)
            .filter(|line| line.org_id == org && line.seq > after)
            .cloned();
        Ok(first(lines, limit))
    }

    async fn usage(
        &self,
        org: OrgId,
        query: &UsageQuery,
    ) -> Result<Vec<UsageGroup>, RepositoryError> {
        let state = self.snapshot();
        let mut groups: BTreeMap<String, (UsageTotals, BTreeSet<RunId>)> = BTreeMap::new();
        for report in state
            .usage_reports
            .values()
            .filter(|r| r.org_id == org && counts(query, r))
        {
            let (totals, runs) = groups.entry(key(query.group_by, report)).or_default();
            totals.add(report);
            runs.insert(report.run_id);
        }
        Ok(groups
            .into_iter()
            .map(|(key, (totals, runs))| UsageGroup {
                key,
                totals,
                runs: i64::try_from(runs.len()).unwrap_or(i64::MAX),
            })
            .collect())
    }
}
