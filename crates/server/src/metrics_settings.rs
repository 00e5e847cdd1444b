//! Prometheus metrics (`GET /metrics`): off unless a scrape token is set.

use std::sync::Arc;

use anyhow::bail;
use async_trait::async_trait;
use clap::Args;
use muster_http::{CensusProbe, JobOutcome, Metrics, MetricsAccess, PoolProbe};
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

    fn timeouts(&self) -> u64 {
        self.0.pool_status().timeouts
    }
}

/// The task and agent gauges count the database at each scrape.
struct DatabaseCensus(Database);

#[async_trait]
impl CensusProbe for DatabaseCensus {
    async fn census(
        &self,
    ) -> Result<(Vec<(String, String, i64)>, Vec<(String, String, i64)>), String> {
        let census = self.0.census().await.map_err(|e| e.to_string())?;
        let rows = |rows: Vec<muster_persistence::CensusRow>| {
            rows.into_iter()
                .map(|r| (r.org, r.status, r.count))
                .collect::<Vec<_>>()
        };
        Ok((rows(census.tasks), rows(census.agents)))
    }
}

impl MetricsSettings {
    /// The metrics over `db`, when a token is set.
    ///
    /// # Errors
    /// A token shorter than 16 characters.
    pub fn access(&self, db: &Database) -> anyhow::Result<Option<MetricsAccess>> {
        // An empty setting is no setting (`MUSTER_METRICS_TOKEN=` turns metrics off).
        let Some(token) = self
            .metrics_token
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        else {
            return Ok(None);
        };
        if token.chars().count() < 16 {
            bail!("MUSTER_METRICS_TOKEN must be at least 16 characters");
        }
        Ok(Some(MetricsAccess {
            metrics: Arc::new(Metrics::new(
                Some(Arc::new(DatabasePool(db.clone()))),
                Some(Arc::new(DatabaseCensus(db.clone()))),
            )),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(token: Option<&str>) -> MetricsSettings {
        MetricsSettings {
            metrics_token: token.map(str::to_owned),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_token_turns_metrics_on_and_a_short_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("muster-metrics-{}", uuid::Uuid::now_v7()));
        let url =
            muster_persistence::DatabaseUrl::parse(&format!("sqlite://{}/m.db", dir.display()))
                .unwrap();
        let db = Database::connect(&url, muster_persistence::PoolOptions::default())
            .await
            .unwrap();
        assert!(settings(None).access(&db).unwrap().is_none());
        assert!(settings(Some("  ")).access(&db).unwrap().is_none());
        let short = settings(Some("short")).access(&db).unwrap_err().to_string();
        assert!(short.contains("at least 16 characters"), "{short}");
        let on = settings(Some(" scrape-token-0123456789 "))
            .access(&db)
            .unwrap();
        assert_eq!(on.unwrap().token, "scrape-token-0123456789");
        let _ = std::fs::remove_dir_all(dir);
    }
}
