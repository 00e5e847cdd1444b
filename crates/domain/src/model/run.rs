//! Runs: one attempt at a task by its assignee, with its log, its token usage and what
//! that usage cost (decision D-106).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{AgentId, OrgId, RunId, TaskId, UsageReportId};

macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The stored and wire name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $wire),+
                }
            }

            /// Parses a stored or wire name.
            pub fn parse(value: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == value)
            }
        }
    };
}

wire_enum!(
    /// Where a run stands. Only `running` is open; the others are final.
    RunStatus {
        /// Started and not finished.
        Running = "running",
        /// The agent finished it and says it succeeded.
        Succeeded = "succeeded",
        /// The agent finished it and says it failed.
        Failed = "failed",
        /// The agent finished it because its task was cancelled.
        Cancelled = "cancelled",
        /// The agent finished it because it was asked to stop.
        Stopped = "stopped",
        /// Its task's lease lapsed: nobody finished it.
        Lost = "lost",
    }
);

impl RunStatus {
    /// Whether the run is still open (`running`).
    pub const fn is_open(self) -> bool {
        matches!(self, Self::Running)
    }

    /// Whether an agent may finish a run with this status (every final status but
    /// `lost`, which only the lease sweep gives).
    pub const fn may_finish_with(self) -> bool {
        matches!(
            self,
            Self::Succeeded | Self::Failed | Self::Cancelled | Self::Stopped
        )
    }
}

wire_enum!(
    /// Why a run was asked to stop.
    StopReason {
        /// Its task was cancelled.
        Cancelled = "cancelled",
        /// Its task went to another agent, or back to nobody.
        Reassigned = "reassigned",
        /// The agent's credits or period budget ran out.
        Budget = "budget",
        /// Someone who oversees the agent asked.
        Requested = "requested",
    }
);

wire_enum!(
    /// Which output a log line came from.
    LogStream {
        /// The program's standard output.
        Stdout = "stdout",
        /// The program's standard error.
        Stderr = "stderr",
        /// The worker or the service itself (a truncation marker, say).
        System = "system",
    }
);

/// Token and cost totals, of a run or of one model within it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UsageTotals {
    /// Input (prompt) tokens.
    pub input_tokens: i64,
    /// Output (completion) tokens.
    pub output_tokens: i64,
    /// Tokens read from a prompt cache.
    pub cache_read_tokens: i64,
    /// Tokens written to a prompt cache.
    pub cache_write_tokens: i64,
    /// What the priced reports cost, in millionths of a US dollar; `None` while no
    /// report could be priced.
    pub cost_microusd: Option<i64>,
    /// Tokens of the reports that could not be priced (their cost is unknown).
    pub unpriced_tokens: i64,
    /// Credits spent from the agent for them.
    pub credits: i64,
    /// Credits the cost came to beyond what the agent could still spend.
    pub unfunded_credits: i64,
    /// Reports counted.
    pub reports: i64,
}

impl UsageTotals {
    /// Every token of the totals.
    pub fn tokens(&self) -> i64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }

    /// Adds one report.
    pub fn add(&mut self, report: &UsageReport) {
        self.input_tokens = self.input_tokens.saturating_add(report.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(report.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(report.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(report.cache_write_tokens);
        match report.cost_microusd {
            Some(cost) => {
                self.cost_microusd = Some(self.cost_microusd.unwrap_or(0).saturating_add(cost));
            }
            None => self.unpriced_tokens = self.unpriced_tokens.saturating_add(report.tokens()),
        }
        self.credits = self.credits.saturating_add(report.credits);
        self.unfunded_credits = self
            .unfunded_credits
            .saturating_add(report.unfunded_credits);
        self.reports = self.reports.saturating_add(1);
    }
}

/// One model's share of a run's usage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// The model, as reported.
    pub model: String,
    /// Its totals.
    #[serde(flatten)]
    pub totals: UsageTotals,
}

/// A run's usage: its totals, and the same by model (in the order models first
/// reported).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunUsage {
    /// The whole run.
    #[serde(flatten)]
    pub totals: UsageTotals,
    /// By model.
    #[serde(default)]
    pub by_model: Vec<ModelUsage>,
}

impl RunUsage {
    /// Adds one report to the totals and to its model's.
    pub fn add(&mut self, report: &UsageReport) {
        self.totals.add(report);
        if let Some(model) = self.by_model.iter_mut().find(|m| m.model == report.model) {
            model.totals.add(report);
        } else {
            let mut totals = UsageTotals::default();
            totals.add(report);
            self.by_model.push(ModelUsage {
                model: report.model.clone(),
                totals,
            });
        }
    }
}

/// One attempt at a task by its assignee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// Identity.
    pub id: RunId,
    /// The owning organization.
    pub org_id: OrgId,
    /// The task attempted.
    pub task_id: TaskId,
    /// The agent running it (the task's assignee when it started).
    pub agent_id: AgentId,
    /// Where it stands.
    pub status: RunStatus,
    /// What ran it (`claude-code`, `codex`, a command...), as the agent says.
    pub adapter: Option<String>,
    /// The model it used, as the agent says.
    pub model: Option<String>,
    /// When it started.
    pub started_at: OffsetDateTime,
    /// When it finished; `None` while open.
    pub ended_at: Option<OffsetDateTime>,
    /// The program's exit code, when it finished with one.
    pub exit_code: Option<i32>,
    /// A closing summary from the agent.
    pub summary: Option<String>,
    /// Whether the run has been asked to stop.
    pub stop_requested: bool,
    /// Why it was asked to stop (the first reason given).
    pub stop_reason: Option<StopReason>,
    /// Its usage so far.
    pub usage: RunUsage,
    /// Bytes of log text kept.
    pub log_bytes: i64,
    /// Log lines kept (the next line's number is `log_lines + 1`).
    pub log_lines: i64,
    /// Whether the log reached its limit (one marker line, then nothing more).
    pub log_truncated: bool,
    /// Credits still held for this run (drawn before the agent's free balance,
    /// released when it finishes).
    pub reserved_credits: i64,
    /// The credits one US dollar of cost came to when the run started.
    pub credits_per_usd: i64,
    /// The id of the trace the run was started in (32 lowercase hex digits), when the
    /// server exported traces: where to look for its spans.
    pub trace_id: Option<String>,
}

/// Credits an agent reserved when it claimed a task (decision D-106): held for the task
/// while the agent holds it in progress, moved into the first run it starts on it, and
/// released when the task leaves it without one. The agent's
/// [`reserved_credits`](super::Agent::reserved_credits) counts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimReservation {
    /// The organization.
    pub org_id: OrgId,
    /// The task claimed (a task holds at most one).
    pub task_id: TaskId,
    /// The agent that claimed it, whose credits are held.
    pub agent_id: AgentId,
    /// The credits held (more than 0).
    pub credits: i64,
    /// When the claim made it.
    pub created_at: OffsetDateTime,
}

/// A line to append to a run's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLogLine {
    /// Where it came from.
    pub stream: LogStream,
    /// The text (one line, as printed).
    pub text: String,
}

/// A line of a run's log as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// The organization.
    pub org_id: OrgId,
    /// The run.
    pub run_id: RunId,
    /// Its number in the run, from 1.
    pub seq: i64,
    /// Where it came from.
    pub stream: LogStream,
    /// The text.
    pub text: String,
    /// When it was appended.
    pub at: OffsetDateTime,
}

/// One usage report of a run: tokens of one model, and what they cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageReport {
    /// Identity.
    pub id: UsageReportId,
    /// The organization.
    pub org_id: OrgId,
    /// The run.
    pub run_id: RunId,
    /// The run's task.
    pub task_id: TaskId,
    /// The run's agent, who paid.
    pub agent_id: AgentId,
    /// The model.
    pub model: String,
    /// Who served it (`anthropic`, `openai`...), as reported.
    pub provider: Option<String>,
    /// Input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Cache-read tokens.
    pub cache_read_tokens: i64,
    /// Cache-write tokens.
    pub cache_write_tokens: i64,
    /// The cost in millionths of a US dollar: as reported, else from the price table;
    /// `None` when unknown.
    pub cost_microusd: Option<i64>,
    /// Credits spent from the agent for it.
    pub credits: i64,
    /// Credits it came to beyond what the agent could still spend.
    pub unfunded_credits: i64,
    /// The reporter's id for it: a repeated one counts once.
    pub report_id: Option<String>,
    /// When it was recorded.
    pub created_at: OffsetDateTime,
}

impl UsageReport {
    /// Every token of the report.
    pub fn tokens(&self) -> i64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip_and_unknown_names_are_refused() {
        for status in RunStatus::ALL {
            assert_eq!(RunStatus::parse(status.as_str()), Some(*status));
        }
        for reason in StopReason::ALL {
            assert_eq!(StopReason::parse(reason.as_str()), Some(*reason));
        }
        for stream in LogStream::ALL {
            assert_eq!(LogStream::parse(stream.as_str()), Some(*stream));
        }
        assert_eq!(RunStatus::parse("Running"), None);
        assert_eq!(StopReason::parse(""), None);
        assert_eq!(LogStream::parse("stdin"), None);
    }

    #[test]
    fn only_running_is_open_and_lost_is_not_an_agents_to_give() {
        let open: Vec<_> = RunStatus::ALL.iter().filter(|s| s.is_open()).collect();
        assert_eq!(open, [&RunStatus::Running]);
        let finishing: Vec<_> = RunStatus::ALL
            .iter()
            .filter(|s| s.may_finish_with())
            .map(|s| s.as_str())
            .collect();
        assert_eq!(finishing, ["succeeded", "failed", "cancelled", "stopped"]);
    }

    fn report(model: &str, cost: Option<i64>, credits: i64) -> UsageReport {
        let id = uuid::Uuid::nil();
        UsageReport {
            id: UsageReportId::from_uuid(id),
            org_id: OrgId::from_uuid(id),
            run_id: RunId::from_uuid(id),
            task_id: TaskId::from_uuid(id),
            agent_id: AgentId::from_uuid(id),
            model: model.to_owned(),
            provider: None,
            input_tokens: 100,
            output_tokens: 20,
            cache_read_tokens: 3,
            cache_write_tokens: 4,
            cost_microusd: cost,
            credits,
            unfunded_credits: 1,
            report_id: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn usage_adds_up_by_model_and_keeps_unpriced_tokens_apart() {
        let mut usage = RunUsage::default();
        usage.add(&report("a", None, 0));
        assert_eq!(usage.totals.cost_microusd, None, "nothing priced yet");
        usage.add(&report("b", Some(500), 2));
        usage.add(&report("a", Some(250), 1));
        assert_eq!(usage.totals.input_tokens, 300);
        assert_eq!(usage.totals.tokens(), 381);
        assert_eq!(usage.totals.cost_microusd, Some(750));
        assert_eq!(usage.totals.unpriced_tokens, 127);
        assert_eq!(usage.totals.credits, 3);
        assert_eq!(usage.totals.unfunded_credits, 3);
        assert_eq!(usage.totals.reports, 3);
        let models: Vec<_> = usage.by_model.iter().map(|m| m.model.as_str()).collect();
        assert_eq!(models, ["a", "b"]);
        assert_eq!(usage.by_model[0].totals.cost_microusd, Some(250));
        assert_eq!(usage.by_model[0].totals.unpriced_tokens, 127);
        assert_eq!(usage.by_model[1].totals.reports, 1);
    }

    #[test]
    fn usage_serializes_in_camel_case_with_models_flattened() {
        let mut usage = RunUsage::default();
        usage.add(&report("m", Some(7), 1));
        let json = serde_json::to_value(&usage).unwrap_or_default();
        assert_eq!(json["inputTokens"], 100);
        assert_eq!(json["costMicrousd"], 7);
        assert_eq!(json["byModel"][0]["model"], "m");
        assert_eq!(json["byModel"][0]["cacheWriteTokens"], 4);
        let back: RunUsage = serde_json::from_value(json).unwrap_or_default();
        assert_eq!(back, usage);
    }
}
