//! Reads of runs, their logs and usage (decision D-106); they change through a
//! [`Transaction`](super::Transaction).

use async_trait::async_trait;
use time::OffsetDateTime;

use super::RepositoryError;
use crate::model::{AgentId, LogLine, OrgId, Run, RunId, RunStatus, TaskId, UsageTotals};

/// Which runs a list holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// Only this agent's.
    pub agent: Option<AgentId>,
    /// Only this task's.
    pub task: Option<TaskId>,
    /// Only runs with this status.
    pub status: Option<RunStatus>,
    /// Only runs started at or after this instant.
    pub from: Option<OffsetDateTime>,
    /// Only runs started before this instant.
    pub to: Option<OffsetDateTime>,
}

/// How usage is grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UsageGroupBy {
    /// By the agent who ran.
    Agent,
    /// By model.
    Model,
    /// By task.
    Task,
    /// By UTC day of the report.
    Day,
}

impl UsageGroupBy {
    /// Every grouping.
    pub const ALL: [Self; 4] = [Self::Agent, Self::Model, Self::Task, Self::Day];

    /// The query name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Model => "model",
            Self::Task => "task",
            Self::Day => "day",
        }
    }

    /// Parses a query name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.as_str() == value)
    }
}

/// Which usage reports a summary adds up, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageQuery {
    /// The grouping.
    pub group_by: UsageGroupBy,
    /// Only this agent's reports.
    pub agent: Option<AgentId>,
    /// Only this task's reports.
    pub task: Option<TaskId>,
    /// Only reports recorded at or after this instant.
    pub from: Option<OffsetDateTime>,
    /// Only reports recorded before this instant.
    pub to: Option<OffsetDateTime>,
}

/// One group of a usage summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageGroup {
    /// The group's key: an agent or task UUID, a model name, or a day `YYYY-MM-DD`.
    pub key: String,
    /// Its totals (`reports` counts the reports).
    pub totals: UsageTotals,
    /// Distinct runs reporting in it.
    pub runs: i64,
}

/// Runs, their logs and their usage, read outside a transaction.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait RunRepository: Send + Sync {
    /// The run `id` of `org`.
    async fn run(&self, org: OrgId, id: RunId) -> Result<Option<Run>, RepositoryError>;

    /// Up to `limit` runs of `org` matching `filter`, newest first, older than the
    /// `before` cursor when given.
    async fn runs(
        &self,
        org: OrgId,
        filter: &RunFilter,
        before: Option<RunId>,
        limit: u32,
    ) -> Result<Vec<Run>, RepositoryError>;

    /// Up to `limit` lines of the log of `run`, in order, numbered after `after`.
    async fn log_lines(
        &self,
        org: OrgId,
        run: RunId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<LogLine>, RepositoryError>;

    /// The usage reports of `org` matching `query`, added up per group, ordered by key.
    async fn usage(
        &self,
        org: OrgId,
        query: &UsageQuery,
    ) -> Result<Vec<UsageGroup>, RepositoryError>;
}
