//! With `MUSTER_METRICS_TOKEN` set, the bench runs the server with metrics on, scrapes
//! `GET /metrics` around each scenario, and checks that the server's own count of
//! answered requests moved at least as far as the load generator measured.

use std::net::SocketAddr;

use anyhow::Context;
use hyper::Method;

use super::client::{Call, Client};
use super::sign::Credentials;

/// The variable that turns the server's metrics (and this check) on.
pub const TOKEN_VAR: &str = "MUSTER_METRICS_TOKEN";

/// The scrape token, when the run has one.
pub fn token() -> Option<String> {
    std::env::var(TOKEN_VAR)
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
}

/// Answered requests in an exposition, `(2xx, other)`, not counting the scrapes.
pub fn answered(exposition: &str) -> (u64, u64) {
    let mut ok = 0;
    let mut other = 0;
    for line in exposition.lines() {
        let Some(rest) = line.strip_prefix("muster_http_requests_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.split_once("} ") else {
            continue;
        };
        if label(labels, "route") == Some("/metrics") {
            continue;
        }
        let Ok(count) = value.trim().parse::<f64>() else {
            continue;
        };
        // Counters are whole numbers well below 2^53.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let count = count as u64;
        if label(labels, "status").is_some_and(|s| s.starts_with('2')) {
            ok += count;
        } else {
            other += count;
        }
    }
    (ok, other)
}

/// The value of label `name` in `a="x",b="y"` (values hold no quotes here).
fn label<'a>(labels: &'a str, name: &str) -> Option<&'a str> {
    labels.split("\",").find_map(|pair| {
        let (key, value) = pair.split_once("=\"")?;
        (key == name).then(|| value.trim_end_matches('"'))
    })
}

/// `GET /metrics` with the token: the exposition.
pub async fn scrape(
    addr: SocketAddr,
    token: &str,
    credentials: &Credentials,
) -> anyhow::Result<String> {
    let answer = Client::new(addr)
        .send(
            &Call::bearer(Method::GET, "/metrics", String::new(), token),
            credentials,
        )
        .await?;
    anyhow::ensure!(
        answer.status.is_success(),
        "GET /metrics answered {}",
        answer.status
    );
    String::from_utf8(answer.body.to_vec()).context("the exposition is not UTF-8")
}

/// What the server had counted before a scenario, when the run scrapes.
pub struct Counted {
    scrape: Option<(String, SocketAddr, Credentials, u64)>,
}

impl Counted {
    /// Scrapes now (when `token` is set).
    pub async fn now(
        token: Option<&str>,
        addr: SocketAddr,
        credentials: &Credentials,
    ) -> anyhow::Result<Self> {
        let Some(token) = token else {
            return Ok(Self { scrape: None });
        };
        let before = answered(&scrape(addr, token, credentials).await?).0;
        Ok(Self {
            scrape: Some((token.to_owned(), addr, credentials.clone(), before)),
        })
    }

    /// After a scenario: the server must have counted at least the `measured` answers
    /// since [`Counted::now`]. Prints both figures.
    pub async fn check(&self, label: &str, measured: usize) -> anyhow::Result<()> {
        let Some((token, addr, credentials, before)) = &self.scrape else {
            return Ok(());
        };
        let after = answered(&scrape(*addr, token, credentials).await?).0;
        let counted = after.saturating_sub(*before);
        let measured = u64::try_from(measured).unwrap_or(u64::MAX);
        eprintln!(
            "xtask: {label}: /metrics counted {counted} answered requests; the load \
             generator measured {measured} (plus its warm-up)"
        );
        anyhow::ensure!(
            counted >= measured,
            "{label}: the server's metrics counted fewer answers ({counted}) than were \
             measured ({measured})"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answered_requests_are_summed_from_the_exposition() {
        let text = "# HELP muster_http_requests Answered.\n\
            # TYPE muster_http_requests counter\n\
            muster_http_requests_total{method=\"GET\",route=\"/tasks/{id}\",status=\"200\"} 120\n\
            muster_http_requests_total{method=\"POST\",route=\"/tasks\",status=\"201\"} 3\n\
            muster_http_requests_total{method=\"GET\",route=\"/tasks\",status=\"401\"} 2\n\
            muster_http_requests_total{method=\"GET\",route=\"/metrics\",status=\"200\"} 7\n\
            muster_http_request_duration_seconds_count{method=\"GET\",route=\"/tasks/{id}\"} 120\n\
            # EOF\n";
        assert_eq!(answered(text), (123, 2));
        assert_eq!(answered(""), (0, 0));
    }
}
