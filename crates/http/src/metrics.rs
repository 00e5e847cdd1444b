//! Prometheus metrics, served at `GET /metrics` when turned on: requests by route
//! template, method and status with their latency; authentication failures by reason;
//! the database pool; background jobs; webhook deliveries; runs' tokens, cost, ends and
//! durations (see `runs.rs`). Label values are route templates, fixed reasons, job
//! names and at most 100 model names: never an id, never a secret.
//! The exposition is `OpenMetrics` or the Prometheus text format, as the scraper asks
//! (see `exposition.rs`).

mod exposition;
mod runs;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::exemplar::HistogramWithExemplars;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

pub use exposition::Exposition;

/// How busy the database pool is, read at each scrape.
pub trait PoolProbe: Send + Sync {
    /// `(max, open, idle, waiting)` connections and requests.
    fn pool(&self) -> (usize, usize, usize, usize);

    /// Requests that gave up waiting for a connection, since start.
    fn timeouts(&self) -> u64;
}

/// Counts of tasks and agents by organization name and status, read at each scrape.
#[async_trait::async_trait]
pub trait CensusProbe: Send + Sync {
    /// `(org, status, count)` of tasks, then of agents.
    async fn census(
        &self,
    ) -> Result<(Vec<(String, String, i64)>, Vec<(String, String, i64)>), String>;
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OrgStatusLabels {
    org: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    job: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobName {
    job: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

/// The exemplar of a latency bucket: the trace of a request that fell in it (only when
/// traces are exported and that trace was sampled).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TraceExemplar {
    trace_id: String,
}

/// A latency histogram whose buckets keep their latest traced request as exemplar.
type LatencyHistogram = HistogramWithExemplars<TraceExemplar>;

/// Seconds buckets from 1 ms to about 16 s.
fn latency_histogram() -> LatencyHistogram {
    LatencyHistogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        0.001, 2.0, 15,
    ))
}

/// The process's metrics; cheap to share (`Arc`).
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, LatencyHistogram, fn() -> LatencyHistogram>,
    auth_failures: Family<ReasonLabels, Counter>,
    job_runs: Family<JobLabels, Counter>,
    job_items: Family<JobName, Counter>,
    job_last_run: Family<JobName, Gauge<f64, AtomicU64>>,
    deliveries: Family<OutcomeLabels, Counter>,
    pool_gauges: PoolGauges,
    pool: Option<Arc<dyn PoolProbe>>,
    tasks: Family<OrgStatusLabels, Gauge>,
    agents: Family<OrgStatusLabels, Gauge>,
    census: Option<Arc<dyn CensusProbe>>,
    runs: runs::RunMetrics,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// The database pool's figures, set from a [`PoolProbe`] at each scrape.
struct PoolGauges {
    max: Gauge,
    open: Gauge,
    idle: Gauge,
    waiting: Gauge,
    timeouts: Counter,
    /// The probe's count at the previous scrape (the counter moves by the difference).
    timeouts_seen: AtomicU64,
}

impl PoolGauges {
    fn register(registry: &mut Registry) -> Self {
        let gauges = Self {
            max: Gauge::default(),
            open: Gauge::default(),
            idle: Gauge::default(),
            waiting: Gauge::default(),
            timeouts: Counter::default(),
            timeouts_seen: AtomicU64::new(0),
        };
        for (name, help, gauge) in [
            (
                "db_pool_max_connections",
                "Most database connections this instance opens",
                &gauges.max,
            ),
            (
                "db_pool_open_connections",
                "Database connections open",
                &gauges.open,
            ),
            (
                "db_pool_idle_connections",
                "Open database connections not in use",
                &gauges.idle,
            ),
            (
                "db_pool_waiting_requests",
                "Requests waiting for a database connection",
                &gauges.waiting,
            ),
        ] {
            registry.register(name, help, gauge.clone());
        }
        registry.register(
            "db_pool_timeouts",
            "Requests that gave up waiting for a database connection (answered 503)",
            gauges.timeouts.clone(),
        );
        gauges
    }

    fn update(&self, pool: &dyn PoolProbe) {
        let (max, open, idle, waiting) = pool.pool();
        let gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.max.set(gauge(max));
        self.open.set(gauge(open));
        self.idle.set(gauge(idle));
        self.waiting.set(gauge(waiting));
        let total = pool.timeouts();
        let seen = self.timeouts_seen.swap(total, Ordering::Relaxed);
        self.timeouts.inc_by(total.saturating_sub(seen));
    }
}

/// What a background job run came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOutcome {
    /// It ran, acting on this many items (0: nothing was due).
    Done(u64),
    /// It failed; the next run tries again.
    Failed,
}

impl Metrics {
    /// Registers every metric; `pool` and `census` are read at each scrape.
    pub fn new(pool: Option<Arc<dyn PoolProbe>>, census: Option<Arc<dyn CensusProbe>>) -> Self {
        let mut registry = Registry::with_prefix("muster");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, route template and status",
            requests.clone(),
        );
        let latency =
            Family::<RouteLabels, LatencyHistogram, fn() -> LatencyHistogram>::new_with_constructor(
                latency_histogram,
            );
        registry.register(
            "http_request_duration_seconds",
            "Time from reading a request to its answer, by method and route template",
            latency.clone(),
        );
        let auth_failures = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "auth_failures",
            "Requests refused for their credentials, by reason",
            auth_failures.clone(),
        );
        let job_runs = Family::<JobLabels, Counter>::default();
        registry.register(
            "job_runs",
            "Background job runs, by job and outcome (ok, failed)",
            job_runs.clone(),
        );
        let job_items = Family::<JobName, Counter>::default();
        registry.register(
            "job_items",
            "Items background jobs acted on (escalations, roll-overs, expired leases, ...)",
            job_items.clone(),
        );
        let job_last_run = Family::<JobName, Gauge<f64, AtomicU64>>::default();
        registry.register(
            "job_last_run_timestamp_seconds",
            "Unix time a background job last finished a run (its lag is now minus this)",
            job_last_run.clone(),
        );
        let deliveries = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "webhook_deliveries",
            "Webhook delivery attempts, by outcome (delivered, failed)",
            deliveries.clone(),
        );
        let pool_gauges = PoolGauges::register(&mut registry);
        let tasks = Family::<OrgStatusLabels, Gauge>::default();
        registry.register(
            "tasks",
            "Tasks by organization name and status",
            tasks.clone(),
        );
        let agents = Family::<OrgStatusLabels, Gauge>::default();
        registry.register(
            "agents",
            "Agents by organization name and status",
            agents.clone(),
        );
        let runs = runs::RunMetrics::register(&mut registry);
        Self {
            registry,
            requests,
            latency,
            auth_failures,
            job_runs,
            job_items,
            job_last_run,
            deliveries,
            pool_gauges,
            pool,
            tasks,
            agents,
            census,
            runs,
        }
    }

    /// Counts one answered request; `trace_id`, the sampled trace it belongs to, becomes
    /// its latency bucket's exemplar (`OpenMetrics` only).
    pub fn request(
        &self,
        method: &str,
        route: &str,
        status: u16,
        took: Duration,
        trace_id: Option<String>,
    ) {
        self.requests
            .get_or_create(&RequestLabels {
                method: method.to_owned(),
                route: route.to_owned(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                method: method.to_owned(),
                route: route.to_owned(),
            })
            .observe(
                took.as_secs_f64(),
                trace_id.map(|trace_id| TraceExemplar { trace_id }),
                None,
            );
    }

    /// Counts one request refused for its credentials; `message` is the answer's
    /// (a fixed sentence), turned into a label value.
    pub fn auth_failure(&self, message: &str) {
        self.auth_failures
            .get_or_create(&ReasonLabels {
                reason: reason_label(message),
            })
            .inc();
    }

    /// Records one run of the background job `job`.
    pub fn job(&self, job: &'static str, outcome: JobOutcome) {
        let (label, items) = match outcome {
            JobOutcome::Done(items) => ("ok", items),
            JobOutcome::Failed => ("failed", 0),
        };
        self.job_runs
            .get_or_create(&JobLabels {
                job,
                outcome: label,
            })
            .inc();
        self.job_items.get_or_create(&JobName { job }).inc_by(items);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.job_last_run.get_or_create(&JobName { job }).set(now);
    }

    /// Counts webhook delivery attempts.
    pub fn deliveries(&self, delivered: u64, failed: u64) {
        for (outcome, count) in [("delivered", delivered), ("failed", failed)] {
            if count > 0 {
                self.deliveries
                    .get_or_create(&OutcomeLabels { outcome })
                    .inc_by(count);
            }
        }
    }

    /// Reads the census into the task and agent gauges (kept as they were when the
    /// database cannot answer).
    pub async fn refresh_census(&self) {
        let Some(census) = &self.census else {
            return;
        };
        match census.census().await {
            Ok((tasks, agents)) => {
                for (family, rows) in [(&self.tasks, tasks), (&self.agents, agents)] {
                    family.clear();
                    for (org, status, count) in rows {
                        // An organization's name is its admins' to choose: escaped, it
                        // cannot end its label and write lines of its own.
                        let labels = OrgStatusLabels {
                            org: exposition::escape_label_value(&org),
                            status: exposition::escape_label_value(&status),
                        };
                        family.get_or_create(&labels).set(count);
                    }
                }
            }
            Err(err) => tracing::warn!(%err, "cannot count tasks and agents for the metrics"),
        }
    }

    /// The exposition of every metric in `format`.
    pub fn render(&self, format: Exposition) -> String {
        if let Some(pool) = &self.pool {
            self.pool_gauges.update(pool.as_ref());
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        match format {
            Exposition::OpenMetrics => text,
            Exposition::Text => exposition::to_text_format(&text),
        }
    }
}

/// `"nonce already used"` → `nonce_already_used`: a fixed answer as a label value.
fn reason_label(message: &str) -> String {
    let mut label = String::with_capacity(message.len());
    for c in message.chars().take(60) {
        if c.is_ascii_alphanumeric() {
            label.push(c.to_ascii_lowercase());
        } else if !label.ends_with('_') {
            label.push('_');
        }
    }
    label.trim_matches('_').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_become_label_values() {
        assert_eq!(reason_label("nonce already used"), "nonce_already_used");
        assert_eq!(
            reason_label("missing X-Agent-ID header"),
            "missing_x_agent_id_header"
        );
    }

    struct FakePool(std::sync::atomic::AtomicU64);

    impl PoolProbe for FakePool {
        fn pool(&self) -> (usize, usize, usize, usize) {
            (16, 3, 1, 2)
        }

        fn timeouts(&self) -> u64 {
            self.0.load(Ordering::Relaxed)
        }
    }

    #[test]
    fn the_pool_is_read_at_each_scrape() {
        let pool = Arc::new(FakePool(AtomicU64::new(3)));
        let metrics = Metrics::new(Some(pool.clone()), None);
        let text = metrics.render(Exposition::OpenMetrics);
        for expected in [
            "muster_db_pool_max_connections 16",
            "muster_db_pool_open_connections 3",
            "muster_db_pool_idle_connections 1",
            "muster_db_pool_waiting_requests 2",
            "muster_db_pool_timeouts_total 3",
        ] {
            assert!(text.contains(expected), "{expected} missing from\n{text}");
        }
        pool.0.store(5, Ordering::Relaxed);
        assert!(
            metrics
                .render(Exposition::OpenMetrics)
                .contains("muster_db_pool_timeouts_total 5")
        );
        assert!(
            metrics
                .render(Exposition::OpenMetrics)
                .contains("muster_db_pool_timeouts_total 5"),
            "no double count"
        );
    }

    struct HostileCensus;

    #[async_trait::async_trait]
    impl CensusProbe for HostileCensus {
        async fn census(
            &self,
        ) -> Result<(Vec<(String, String, i64)>, Vec<(String, String, i64)>), String> {
            let org = "Evil\"} 1\nmuster_forged 99\n# \\".to_owned();
            Ok((vec![(org, "todo".to_owned(), 2)], Vec::new()))
        }
    }

    #[test]
    fn a_traced_request_is_its_latency_buckets_exemplar_in_openmetrics_only() {
        let metrics = Metrics::new(None, None);
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        metrics.request(
            "GET",
            "/tasks/{id}",
            200,
            Duration::from_millis(3),
            Some(trace.to_owned()),
        );
        let open = metrics.render(Exposition::OpenMetrics);
        let bucket = open
            .lines()
            .find(|l| l.contains(&format!("# {{trace_id=\"{trace}\"}}")))
            .unwrap_or_else(|| unreachable!("no exemplar:\n{open}"));
        assert!(
            bucket.starts_with("muster_http_request_duration_seconds_bucket{"),
            "{bucket}"
        );
        assert!(bucket.contains("le=\"0.004\""), "{bucket}");
        let text = metrics.render(Exposition::Text);
        assert!(!text.contains(trace), "{text}");
        assert!(
            text.lines().any(
                |l| l.starts_with("muster_http_request_duration_seconds_bucket{")
                    && l.contains("le=\"0.004\"")
                    && l.ends_with(" 1")
            ),
            "{text}"
        );
    }

    #[test]
    fn an_organization_name_cannot_write_lines_of_its_own() {
        let metrics = Metrics::new(None, Some(Arc::new(HostileCensus)));
        actix_web::rt::System::new().block_on(metrics.refresh_census());
        for format in [Exposition::OpenMetrics, Exposition::Text] {
            let text = metrics.render(format);
            assert!(
                text.contains(
                    "muster_tasks{org=\"Evil\\\"} 1\\nmuster_forged 99\\n# \\\\\",status=\"todo\"} 2\n"
                ),
                "{text}"
            );
            assert!(!text.lines().any(|line| line.starts_with("muster_forged")));
        }
    }

    #[test]
    fn the_exposition_names_every_family() {
        let metrics = Metrics::new(None, None);
        metrics.request("GET", "/tasks/{id}", 200, Duration::from_millis(3), None);
        metrics.auth_failure("invalid signature");
        metrics.job("escalation_sweep", JobOutcome::Done(2));
        metrics.deliveries(3, 1);
        let text = metrics.render(Exposition::OpenMetrics);
        for expected in [
            "muster_http_requests_total{method=\"GET\",route=\"/tasks/{id}\",status=\"200\"} 1",
            "muster_http_request_duration_seconds_count{method=\"GET\",route=\"/tasks/{id}\"} 1",
            "muster_auth_failures_total{reason=\"invalid_signature\"} 1",
            "muster_job_runs_total{job=\"escalation_sweep\",outcome=\"ok\"} 1",
            "muster_job_items_total{job=\"escalation_sweep\"} 2",
            "muster_webhook_deliveries_total{outcome=\"delivered\"} 3",
            "muster_webhook_deliveries_total{outcome=\"failed\"} 1",
        ] {
            assert!(text.contains(expected), "{expected} missing from\n{text}");
        }
    }
}
