//! The run metrics (decision D-106): tokens by model and kind, the priced cost by model,
//! runs finished by status and how long they took.
//!
//! They are counted where the domain tells of a committed change (its
//! [`RunObserver`] port), not in a handler: a report or a run is counted once, whether
//! it came through the REST routes, an MCP tool or the lease sweep (which loses runs
//! outside any request), and never for a refused or rolled-back change or a repeated
//! `reportId`.
//!
//! Model names are the callers' to choose, so their label is bounded: the first
//! [`MAX_MODEL_LABELS`] distinct names this process sees keep their own, every later
//! one is counted as `other`. A name is escaped as both formats require, so it cannot
//! end its label or write lines of its own.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use muster_domain::model::{Run, RunStatus, UsageReport};
use muster_domain::ports::RunObserver;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::Metrics;
use super::exposition::escape_label_value;

/// Distinct model names that get a label value of their own.
pub(super) const MAX_MODEL_LABELS: usize = 100;

/// The label value of every model past the first [`MAX_MODEL_LABELS`].
const OTHER_MODEL: &str = "other";

/// Upper bounds of the run-duration buckets, in seconds: a second to a day (agent runs
/// take seconds to hours).
const DURATION_BUCKETS: [f64; 15] = [
    1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1_200.0, 1_800.0, 3_600.0, 7_200.0, 14_400.0,
    28_800.0, 86_400.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    model: String,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

/// The run families, and the model names given a label so far.
pub(super) struct RunMetrics {
    tokens: Family<TokenLabels, Counter>,
    cost: Family<ModelLabels, Counter>,
    finished: Family<StatusLabels, Counter>,
    durations: Histogram,
    models: Mutex<HashSet<String>>,
}

impl RunMetrics {
    /// Registers the run families in `registry`.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            tokens: Family::default(),
            cost: Family::default(),
            finished: Family::default(),
            durations: Histogram::new(DURATION_BUCKETS),
            models: Mutex::new(HashSet::new()),
        };
        registry.register(
            "run_tokens",
            "Tokens runs reported, by model and kind (input, output, cache_read, cache_write); \
             models past the first 100 are counted as other",
            metrics.tokens.clone(),
        );
        registry.register(
            "run_cost_microusd",
            "Cost of the priced usage reports (reported, or from the price table), in \
             millionths of a US dollar, by model",
            metrics.cost.clone(),
        );
        registry.register(
            "runs_finished",
            "Runs that ended, by status (succeeded, failed, cancelled, stopped, lost)",
            metrics.finished.clone(),
        );
        registry.register(
            "run_duration_seconds",
            "How long runs took from start to end, lost ones included",
            metrics.durations.clone(),
        );
        // Every final status is there from the start, at 0: a rate of lost runs is 0
        // before the first one, not absent.
        for status in RunStatus::ALL.iter().filter(|status| !status.is_open()) {
            metrics
                .finished
                .get_or_create(&StatusLabels {
                    status: status.as_str(),
                })
                .inc_by(0);
        }
        metrics
    }

    /// Counts a recorded report's tokens and, when it was priced, its cost.
    fn usage(&self, report: &UsageReport) {
        let model = self.model_label(&report.model);
        for (kind, tokens) in [
            ("input", report.input_tokens),
            ("output", report.output_tokens),
            ("cache_read", report.cache_read_tokens),
            ("cache_write", report.cache_write_tokens),
        ] {
            self.tokens
                .get_or_create(&TokenLabels {
                    model: model.clone(),
                    kind,
                })
                .inc_by(count(tokens));
        }
        if let Some(cost) = report.cost_microusd {
            self.cost
                .get_or_create(&ModelLabels { model })
                .inc_by(count(cost));
        }
    }

    /// Counts a run that ended, and how long it took.
    fn finished(&self, run: &Run) {
        if run.status.is_open() {
            return;
        }
        self.finished
            .get_or_create(&StatusLabels {
                status: run.status.as_str(),
            })
            .inc();
        if let Some(ended) = run.ended_at {
            let took = (ended - run.started_at).as_seconds_f64();
            self.durations.observe(took.max(0.0));
        }
    }

    /// The label value of `model`: its own (escaped) while fewer than
    /// [`MAX_MODEL_LABELS`] names have one, else `other`.
    fn model_label(&self, model: &str) -> String {
        // A panic elsewhere while holding the set leaves it whole: keep using it.
        let mut seen = self.models.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.contains(model) {
            return escape_label_value(model);
        }
        if seen.len() < MAX_MODEL_LABELS {
            seen.insert(model.to_owned());
            return escape_label_value(model);
        }
        OTHER_MODEL.to_owned()
    }
}

/// A non-negative amount (the domain checks tokens and costs are) as a counter step.
fn count(amount: i64) -> u64 {
    u64::try_from(amount).unwrap_or(0)
}

impl RunObserver for Metrics {
    fn usage_recorded(&self, report: &UsageReport) {
        self.runs.usage(report);
    }

    fn run_ended(&self, run: &Run) {
        self.runs.finished(run);
    }
}

#[cfg(test)]
mod tests {
    use muster_domain::model::{AgentId, OrgId, RunId, RunUsage, TaskId, UsageReportId};
    use time::{Duration, OffsetDateTime};
    use uuid::Uuid;

    use super::*;
    use crate::metrics::Exposition;

    fn report(model: &str, cost: Option<i64>) -> UsageReport {
        UsageReport {
            id: UsageReportId::from_uuid(Uuid::now_v7()),
            org_id: OrgId::from_uuid(Uuid::now_v7()),
            run_id: RunId::from_uuid(Uuid::now_v7()),
            task_id: TaskId::from_uuid(Uuid::now_v7()),
            agent_id: AgentId::from_uuid(Uuid::now_v7()),
            model: model.to_owned(),
            provider: None,
            input_tokens: 1_000,
            output_tokens: 200,
            cache_read_tokens: 30,
            cache_write_tokens: 4,
            cost_microusd: cost,
            credits: 0,
            unfunded_credits: 0,
            report_id: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn run(status: RunStatus, seconds: i64) -> Run {
        let started_at = OffsetDateTime::UNIX_EPOCH;
        Run {
            id: RunId::from_uuid(Uuid::now_v7()),
            org_id: OrgId::from_uuid(Uuid::now_v7()),
            task_id: TaskId::from_uuid(Uuid::now_v7()),
            agent_id: AgentId::from_uuid(Uuid::now_v7()),
            status,
            adapter: None,
            model: None,
            started_at,
            ended_at: Some(started_at + Duration::seconds(seconds)),
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

    fn assert_has(text: &str, expected: &[&str]) {
        for line in expected {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
    }

    #[test]
    fn reports_count_tokens_by_kind_and_priced_cost_by_model() {
        let metrics = Metrics::new(None, None);
        metrics.usage_recorded(&report("claude-sonnet-4-5", Some(150_000)));
        metrics.usage_recorded(&report("claude-sonnet-4-5", Some(50_000)));
        // Unpriced: its tokens count, its cost does not exist.
        metrics.usage_recorded(&report("local-llama", None));
        let text = metrics.render(Exposition::OpenMetrics);
        assert_has(
            &text,
            &[
                r#"muster_run_tokens_total{model="claude-sonnet-4-5",kind="input"} 2000"#,
                r#"muster_run_tokens_total{model="claude-sonnet-4-5",kind="output"} 400"#,
                r#"muster_run_tokens_total{model="claude-sonnet-4-5",kind="cache_read"} 60"#,
                r#"muster_run_tokens_total{model="claude-sonnet-4-5",kind="cache_write"} 8"#,
                r#"muster_run_tokens_total{model="local-llama",kind="input"} 1000"#,
                r#"muster_run_cost_microusd_total{model="claude-sonnet-4-5"} 200000"#,
            ],
        );
        assert!(
            !text.contains(r#"muster_run_cost_microusd_total{model="local-llama"}"#),
            "{text}"
        );
    }

    #[test]
    fn runs_count_by_status_with_their_durations() {
        let metrics = Metrics::new(None, None);
        let text = metrics.render(Exposition::Text);
        // Every final status is there before any run ended.
        for status in ["succeeded", "failed", "cancelled", "stopped", "lost"] {
            assert_has(
                &text,
                &[&format!(
                    "muster_runs_finished_total{{status=\"{status}\"}} 0"
                )],
            );
        }
        assert!(!text.contains("status=\"running\""), "{text}");
        metrics.run_ended(&run(RunStatus::Succeeded, 42));
        metrics.run_ended(&run(RunStatus::Lost, 5_400));
        // An open run is never counted as ended.
        metrics.run_ended(&run(RunStatus::Running, 1));
        let text = metrics.render(Exposition::OpenMetrics);
        assert_has(
            &text,
            &[
                r#"muster_runs_finished_total{status="succeeded"} 1"#,
                r#"muster_runs_finished_total{status="lost"} 1"#,
                r#"muster_runs_finished_total{status="failed"} 0"#,
                "muster_run_duration_seconds_count 2\n",
                "muster_run_duration_seconds_sum 5442.0\n",
                r#"muster_run_duration_seconds_bucket{le="30.0"} 0"#,
                r#"muster_run_duration_seconds_bucket{le="60.0"} 1"#,
                r#"muster_run_duration_seconds_bucket{le="3600.0"} 1"#,
                r#"muster_run_duration_seconds_bucket{le="7200.0"} 2"#,
                r#"muster_run_duration_seconds_bucket{le="+Inf"} 2"#,
            ],
        );
    }

    #[test]
    fn models_past_the_cap_share_one_label() {
        let metrics = Metrics::new(None, None);
        for n in 0..MAX_MODEL_LABELS + 5 {
            metrics.usage_recorded(&report(&format!("model-{n}"), Some(1)));
        }
        // A model seen before the cap keeps its label after it.
        metrics.usage_recorded(&report("model-0", Some(1)));
        let text = metrics.render(Exposition::OpenMetrics);
        assert_has(
            &text,
            &[
                r#"muster_run_cost_microusd_total{model="model-0"} 2"#,
                r#"muster_run_cost_microusd_total{model="model-99"} 1"#,
                r#"muster_run_cost_microusd_total{model="other"} 5"#,
            ],
        );
        assert!(!text.contains(r#"model="model-100""#), "{text}");
        let labelled = text
            .lines()
            .filter(|l| l.starts_with("muster_run_cost_microusd_total{"))
            .count();
        assert_eq!(labelled, MAX_MODEL_LABELS + 1);
    }

    #[test]
    fn a_model_name_cannot_write_lines_of_its_own() {
        let metrics = Metrics::new(None, None);
        metrics.usage_recorded(&report("evil\"} 1\nmuster_forged 99\n# \\", Some(7)));
        for format in [Exposition::OpenMetrics, Exposition::Text] {
            let text = metrics.render(format);
            assert_has(
                &text,
                &[
                    "muster_run_cost_microusd_total{model=\"evil\\\"} 1\\nmuster_forged 99\\n# \\\\\"} 7\n",
                ],
            );
            assert!(!text.lines().any(|line| line.starts_with("muster_forged")));
        }
    }
}
