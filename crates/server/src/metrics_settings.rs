//! Prometheus metrics (`GET /metrics`): off unless a scrape token is set.

use std::sync::Arc;

use anyhow::bail;
use clap::Args;
use muster_http::{JobOutcome, Metrics, MetricsAccess, PoolProbe};
use muster_persistence::Database;

/// The metrics settings of `muster serve`.
#[derive(Debug, Clone, Default, Args)]
pub struct MetricsSettings {
    /// Bearer token a Prometheus scrape of `GET /metrics` must present (at least 16
    /// characters). Without it metrics are off: the route answers 404 and nothing is
    /// counted.
    #[arg(long, env = "MUSTER_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
}

/// The pool gauges read the database's pool at each scrape.
struct DatabasePool(Database);

impl PoolProbe for DatabasePool {
    fn pool(&self) -> (usize, usize, usize, usize) {
        let status = self.0.pool_status();
        (
            status.max_size,
            status.size,
            status.available,
            status.waiting,
        )
    }
}

impl MetricsSettings {
    /// The metrics over `db`, when a token is set.
    ///
    /// # Errors
    /// A token shorter than 16 characters.
    pub fn access(&self, db: &Database) -> anyhow::Result<Option<MetricsAccess>> {
        let Some(token) = self.metrics_token.as_deref().map(str::trim) else {
            return Ok(None);
        };
        if token.chars().count() < 16 {
            bail!("MUSTER_METRICS_TOKEN must be at least 16 characters");
        }
        Ok(Some(MetricsAccess {
            metrics: Arc::new(Metrics::new(Some(Arc::new(DatabasePool(db.clone()))))),
            token: token.to_owned(),
        }))
    }
}

/// Records a background job's run, when metrics are on.
pub fn record(metrics: Option<&Arc<Metrics>>, job: &'static str, outcome: JobOutcome) {
    if let Some(metrics) = metrics {
        metrics.job(job, outcome);
    }
}
