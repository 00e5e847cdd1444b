//! Runs, their logs and their usage (decision D-106): request bodies and answers.

use muster_domain::ValidationError;
use muster_domain::model::{
    AgentId, LogLine, LogStream, ModelUsage, NewLogLine, Run, RunId, RunStatus, StopReason, TaskId,
    UsageTotals,
};
use muster_domain::ports::{RunFilter, UsageGroup, UsageGroupBy, UsageQuery};
use muster_domain::rules::runs::MAX_LOG_PAGE;
use muster_domain::service::{FinishRun, NewUsage, PageRequest, StartRun};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::time::DayEdge;

/// Body of `POST /tasks/:id/runs` (all optional; no body at all is `{}`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartRunBody {
    /// What runs it: `claude-code`, `codex`, `gemini`, a command... (at most 100
    /// characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 100, pattern = "^[^\\x00]*$"))]
    pub adapter: Option<String>,
    /// The model it uses (at most 100 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 100, pattern = "^[^\\x00]*$"))]
    pub model: Option<String>,
    /// Credits to hold for the run's usage, drawn before the agent's free balance and
    /// released at finish.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1_000_000_000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve_credits: Option<i64>,
}

impl StartRunBody {
    /// The checked request, started in the trace `trace_id` (the request's own, as the
    /// adapter reads it; `None` when traces are off).
    pub fn into_start(self, trace_id: Option<String>) -> Result<StartRun, ValidationError> {
        let start = StartRun {
            adapter: self.adapter,
            model: self.model,
            reserve_credits: self.reserve_credits.unwrap_or(0),
            trace_id,
        };
        start.check()?;
        Ok(start)
    }
}

/// One line of `POST /runs/:id/log`.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LogLineBody {
    /// `stdout`, `stderr` or `system`.
    #[cfg_attr(feature = "openapi", schema(schema_with = log_streams))]
    pub stream: String,
    /// The line's text.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[^\\x00]*$"))]
    pub text: String,
}

/// Body of `POST /runs/:id/log`: at most 10,000 lines and 1 MiB a call.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LogBody {
    /// The lines, in order.
    #[cfg_attr(feature = "openapi", schema(max_items = 10_000))]
    pub lines: Vec<LogLineBody>,
}

impl LogBody {
    /// The checked lines.
    pub fn into_lines(self) -> Result<Vec<NewLogLine>, ValidationError> {
        self.lines
            .into_iter()
            .map(|line| {
                let stream = LogStream::parse(&line.stream).ok_or_else(|| {
                    ValidationError::new("stream must be one of stdout, stderr, system")
                })?;
                Ok(NewLogLine {
                    stream,
                    text: line.text,
                })
            })
            .collect()
    }
}

/// Body of `POST /runs/:id/usage`: the tokens one model used, and their cost when the
/// agent knows it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UsageBody {
    /// The model (1..=100 characters); priced by the operator's table when no cost is
    /// given.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 100,
            pattern = "^[^\\x00]*[^\\x00\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000][^\\x00]*$"
        )
    )]
    pub model: String,
    /// Who served it (`anthropic`, `openai`...).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 100, pattern = "^[^\\x00]*$"))]
    pub provider: Option<String>,
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1_000_000_000_000_i64)
    )]
    pub input_tokens: i64,
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1_000_000_000_000_i64)
    )]
    pub output_tokens: i64,
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1_000_000_000_000_i64)
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<i64>,
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1_000_000_000_000_i64)
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<i64>,
    /// What it cost, in millionths of a US dollar (Claude Code reports it).
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1_000_000_000_000_i64)
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_microusd: Option<i64>,
    /// The reporter's id for this report: a repeated one counts once.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = "^[^\\x00]*$")
    )]
    pub report_id: Option<String>,
}

impl UsageBody {
    /// The checked report.
    pub fn into_usage(self) -> Result<NewUsage, ValidationError> {
        let usage = NewUsage {
            model: self.model,
            provider: self.provider,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_tokens.unwrap_or(0),
            cache_write_tokens: self.cache_write_tokens.unwrap_or(0),
            cost_microusd: self.cost_microusd,
            report_id: self.report_id,
        };
        usage.check()?;
        Ok(usage)
    }
}

/// A string of `values` only, as a document's enum (the field is read as a string, so
/// its refusal keeps the API's own sentence).
#[cfg(feature = "openapi")]
fn string_enum<'a>(
    values: impl IntoIterator<Item = &'a str>,
    description: &str,
) -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(values))
        .description(Some(description))
        .build()
}

/// A log line's stream, as the document shows it.
#[cfg(feature = "openapi")]
fn log_streams() -> utoipa::openapi::Object {
    string_enum(
        LogStream::ALL.iter().map(|stream| stream.as_str()),
        "`stdout`, `stderr` or `system`.",
    )
}

/// The statuses a run is finished with, as the document shows them.
#[cfg(feature = "openapi")]
fn finish_statuses() -> utoipa::openapi::Object {
    string_enum(
        RunStatus::ALL
            .iter()
            .filter(|status| status.may_finish_with())
            .map(|status| status.as_str()),
        "`succeeded`, `failed`, `cancelled` or `stopped`.",
    )
}

/// Body of `POST /runs/:id/finish`.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FinishRunBody {
    /// `succeeded`, `failed`, `cancelled` or `stopped`.
    #[cfg_attr(feature = "openapi", schema(schema_with = finish_statuses))]
    pub status: String,
    /// The program's exit code (a 32-bit integer).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = -2_147_483_648_i64, maximum = 2_147_483_647)
    )]
    pub exit_code: Option<i32>,
    /// At most 10,000 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 10000, pattern = "^[^\\x00]*$")
    )]
    pub summary: Option<String>,
}

impl FinishRunBody {
    /// The checked request.
    pub fn into_finish(self) -> Result<FinishRun, ValidationError> {
        let status = RunStatus::parse(&self.status)
            .filter(|s| s.may_finish_with())
            .ok_or_else(|| {
                ValidationError::new("status must be one of succeeded, failed, cancelled, stopped")
            })?;
        Ok(FinishRun {
            status,
            exit_code: self.exit_code,
            summary: self.summary,
        })
    }
}

/// Body of `POST /runs/:id/stop` (optional).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StopRunBody {
    /// Why (free text for people, at most 500 characters, trimmed): it goes into the
    /// `run.stop_requested` event as `note`; the run's `stopReason` is `requested`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 500, pattern = "^[^\\x00]*$"))]
    pub reason: Option<String>,
}

/// Token and cost totals.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsageTotalsResponse {
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    /// What the priced reports cost, in millionths of a US dollar; `null` while none
    /// could be priced.
    pub cost_microusd: Option<i64>,
    /// Tokens of the reports whose cost is unknown.
    pub unpriced_tokens: i64,
    /// Credits spent from the agent.
    pub credits: i64,
    /// Credits the cost came to beyond what the agent could spend.
    pub unfunded_credits: i64,
    /// Reports counted.
    pub reports: i64,
}

impl From<UsageTotals> for UsageTotalsResponse {
    fn from(t: UsageTotals) -> Self {
        Self {
            input_tokens: t.input_tokens,
            output_tokens: t.output_tokens,
            cache_read_tokens: t.cache_read_tokens,
            cache_write_tokens: t.cache_write_tokens,
            cost_microusd: t.cost_microusd,
            unpriced_tokens: t.unpriced_tokens,
            credits: t.credits,
            unfunded_credits: t.unfunded_credits,
            reports: t.reports,
        }
    }
}

/// One model's share of a run's usage.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ModelUsageResponse {
    pub model: String,
    #[serde(flatten)]
    pub totals: UsageTotalsResponse,
}

impl From<ModelUsage> for ModelUsageResponse {
    fn from(m: ModelUsage) -> Self {
        Self {
            model: m.model,
            totals: m.totals.into(),
        }
    }
}

/// A run's usage: its totals and the same by model.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RunUsageResponse {
    #[serde(flatten)]
    pub totals: UsageTotalsResponse,
    pub by_model: Vec<ModelUsageResponse>,
}

/// A run: one attempt at a task by its assignee.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RunResponse {
    pub id: Uuid,
    pub task_id: Uuid,
    pub agent_id: Uuid,
    pub status: RunStatus,
    pub adapter: Option<String>,
    pub model: Option<String>,
    #[serde(with = "super::time::rfc3339")]
    pub started_at: OffsetDateTime,
    #[serde(with = "super::time::option")]
    pub ended_at: Option<OffsetDateTime>,
    pub exit_code: Option<i32>,
    pub summary: Option<String>,
    /// Whether the run has been asked to stop: its agent should stop its work and
    /// finish it (`stopped`, or `cancelled` for a cancelled task).
    pub stop_requested: bool,
    /// Why: `cancelled`, `reassigned`, `budget` or `requested`.
    pub stop_reason: Option<StopReason>,
    pub usage: RunUsageResponse,
    /// Bytes of log text kept (at most 10 MiB, then one marker line).
    pub log_bytes: i64,
    /// Lines kept.
    pub log_lines: i64,
    /// Whether the log reached its limit.
    pub log_truncated: bool,
    /// Credits still held for the run.
    pub reserved_credits: i64,
    /// The trace the run was started in (32 hex digits), when the server exports
    /// traces: the worker's trace, with the spans of its claim, CLI process and calls.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9a-f]{32}$"))]
    pub trace_id: Option<String>,
}

impl From<Run> for RunResponse {
    fn from(r: Run) -> Self {
        Self {
            id: r.id.as_uuid(),
            task_id: r.task_id.as_uuid(),
            agent_id: r.agent_id.as_uuid(),
            status: r.status,
            adapter: r.adapter,
            model: r.model,
            started_at: r.started_at,
            ended_at: r.ended_at,
            exit_code: r.exit_code,
            summary: r.summary,
            stop_requested: r.stop_requested,
            stop_reason: r.stop_reason,
            usage: RunUsageResponse {
                totals: r.usage.totals.into(),
                by_model: r.usage.by_model.into_iter().map(Into::into).collect(),
            },
            log_bytes: r.log_bytes,
            log_lines: r.log_lines,
            log_truncated: r.log_truncated,
            reserved_credits: r.reserved_credits,
            trace_id: r.trace_id,
        }
    }
}

/// One line of a run's log.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LogLineResponse {
    /// Its number in the run, from 1.
    pub seq: i64,
    pub stream: LogStream,
    pub text: String,
    #[serde(with = "super::time::rfc3339")]
    pub at: OffsetDateTime,
}

impl From<LogLine> for LogLineResponse {
    fn from(l: LogLine) -> Self {
        Self {
            seq: l.seq,
            stream: l.stream,
            text: l.text,
            at: l.at,
        }
    }
}

/// A page of a run's log: `{data, last, truncated}`; pass `last` as the next `after`.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LogPageResponse {
    pub data: Vec<LogLineResponse>,
    /// The number of the last line given (the `after` asked when none).
    pub last: i64,
    /// Whether the log was cut at its limit.
    pub truncated: bool,
}

/// What `POST /runs/:id/usage` answers: the run, and the report as recorded (`null`
/// when its `reportId` was already counted).
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsageAnswerResponse {
    pub data: RunResponse,
    pub report: Option<UsageReportResponse>,
}

/// One usage report as recorded.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsageReportResponse {
    pub id: Uuid,
    pub model: String,
    pub provider: Option<String>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    /// Reported, else priced by the operator's table; `null` when unknown.
    pub cost_microusd: Option<i64>,
    /// Credits spent from the agent for it.
    pub credits: i64,
    /// Credits beyond what the agent could spend.
    pub unfunded_credits: i64,
    pub report_id: Option<String>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<muster_domain::model::UsageReport> for UsageReportResponse {
    fn from(r: muster_domain::model::UsageReport) -> Self {
        Self {
            id: r.id.as_uuid(),
            model: r.model,
            provider: r.provider,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            cache_read_tokens: r.cache_read_tokens,
            cache_write_tokens: r.cache_write_tokens,
            cost_microusd: r.cost_microusd,
            credits: r.credits,
            unfunded_credits: r.unfunded_credits,
            report_id: r.report_id,
            created_at: r.created_at,
        }
    }
}

/// One group of a usage summary.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsageGroupResponse {
    /// The agent or task UUID, the model, or the UTC day `YYYY-MM-DD`.
    pub key: String,
    #[serde(flatten)]
    pub totals: UsageTotalsResponse,
    /// Distinct runs in the group.
    pub runs: i64,
}

impl From<UsageGroup> for UsageGroupResponse {
    fn from(g: UsageGroup) -> Self {
        Self {
            key: g.key,
            totals: g.totals.into(),
            runs: g.runs,
        }
    }
}

/// Query of `GET /runs` (paged like every list).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListRunsQuery {
    /// Only this agent's runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// Only this task's runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    /// Only runs with this status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    /// Only runs started at or after this instant (ISO 8601; a plain date is its
    /// start, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    pub from: Option<String>,
    /// Only runs started before this instant (ISO 8601; a plain date counts whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    pub to: Option<String>,
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `meta.nextCursor` of the previous page.
    #[cfg_attr(feature = "openapi", param(value_type = Option<uuid::Uuid>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl ListRunsQuery {
    /// The checked filter.
    pub fn filter(&self) -> Result<RunFilter, ValidationError> {
        let (from, to) = span(self.from.as_deref(), self.to.as_deref())?;
        Ok(RunFilter {
            agent: self.agent_id.map(AgentId::from_uuid),
            task: self.task_id.map(TaskId::from_uuid),
            status: self.status,
            from,
            to,
        })
    }

    /// The page asked for (the use case checks the range of `limit`).
    pub fn page(&self) -> Result<PageRequest<RunId>, ValidationError> {
        super::paging::page_request(self.limit, self.cursor.as_deref())
    }
}

/// The instants of a `from` and a `to` query value: `from` a date-time or the start of
/// a UTC day; `to` (exclusive) a date-time, or a whole UTC day when a plain date.
fn span(
    from: Option<&str>,
    to: Option<&str>,
) -> Result<(Option<OffsetDateTime>, Option<OffsetDateTime>), ValidationError> {
    let from = from
        .map(|v| super::time::parse("from", v, DayEdge::Start))
        .transpose()?;
    // Instants are kept to the millisecond: before the next one is up to this one.
    let to = to
        .map(|v| {
            super::time::parse("to", v, DayEdge::End)
                .map(|at| at.saturating_add(time::Duration::milliseconds(1)))
        })
        .transpose()?;
    Ok((from, to))
}

/// How `GET /usage` groups its reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum UsageGrouping {
    /// By the agent who ran (key: its UUID).
    Agent,
    /// By model.
    Model,
    /// By task (key: its UUID).
    Task,
    /// By UTC day of the report (key: `YYYY-MM-DD`).
    Day,
}

impl From<UsageGrouping> for UsageGroupBy {
    fn from(g: UsageGrouping) -> Self {
        match g {
            UsageGrouping::Agent => Self::Agent,
            UsageGrouping::Model => Self::Model,
            UsageGrouping::Task => Self::Task,
            UsageGrouping::Day => Self::Day,
        }
    }
}

/// Query of `GET /usage` and `GET /agents/:id/usage`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UsageQueryParams {
    /// `agent`, `model`, `task` or `day` (default: `agent` for `/usage`, `model` for
    /// an agent's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(inline))]
    pub group_by: Option<UsageGrouping>,
    /// Only reports recorded at or after this instant (ISO 8601; a plain date is its
    /// start, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    pub from: Option<String>,
    /// Only reports recorded before this instant (ISO 8601; a plain date counts whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    pub to: Option<String>,
    /// Only this agent's reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// Only this task's reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
}

impl UsageQueryParams {
    /// The checked query, grouped by `default` when the query names no grouping.
    pub fn query(&self, default: UsageGroupBy) -> Result<UsageQuery, ValidationError> {
        let (from, to) = span(self.from.as_deref(), self.to.as_deref())?;
        Ok(UsageQuery {
            group_by: self.group_by.map_or(default, Into::into),
            agent: self.agent_id.map(AgentId::from_uuid),
            task: self.task_id.map(TaskId::from_uuid),
            from,
            to,
        })
    }
}

/// Query of `GET /runs/:id/log`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LogQuery {
    /// Lines numbered after this one (default 0: from the first); pass the previous
    /// page's `last`.
    #[cfg_attr(feature = "openapi", param(minimum = 0))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<i64>,
    /// Lines to give at most (default and largest 1,000).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 1000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

impl LogQuery {
    /// `after`, 0 when not given.
    pub fn after(&self) -> i64 {
        self.after.unwrap_or(0)
    }

    /// `limit`, [`MAX_LOG_PAGE`] when not given (the use case checks its range).
    pub fn limit(&self) -> u32 {
        self.limit.unwrap_or(MAX_LOG_PAGE)
    }
}

/// Query of `GET /runs/:id/log/stream`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LogStreamQuery {
    /// Lines numbered after this one (default 0: from the first); a `Last-Event-ID`
    /// header, when sent, takes its place.
    #[cfg_attr(feature = "openapi", param(minimum = 0))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<i64>,
}

/// A summary of usage: one entry per group, ordered by key.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsageSummaryResponse {
    pub data: Vec<UsageGroupResponse>,
}
