//! The background jobs of `muster serve` report their runs to `GET /metrics`.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::Scratch;
use crate::shutdown::start_on;

const TOKEN: &str = "scrape-token-0123456789";

fn scrape(port: u16) -> String {
    crate::send_raw(
        port,
        &format!(
            "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\
             Connection: close\r\n\r\n"
        ),
    )
}

#[test]
fn background_jobs_report_their_runs() {
    let scratch = Scratch::new();
    let server = start_on(
        &scratch.sqlite_url(),
        &[
            ("MUSTER_METRICS_TOKEN", TOKEN),
            ("MUSTER_LEASE_SWEEP_SECS", "1"),
            ("MUSTER_BUDGET_ROLLOVER_SECS", "1"),
            ("MUSTER_ESCALATION_SWEEP_SECS", "1"),
        ],
        Stdio::null(),
    );
    let expected = [
        r#"muster_job_runs_total{job="lease_expiry",outcome="ok"}"#,
        r#"muster_job_runs_total{job="budget_rollover",outcome="ok"}"#,
        r#"muster_job_runs_total{job="escalation_sweep",outcome="ok"}"#,
        r#"muster_job_runs_total{job="purge",outcome="ok"}"#,
        r#"muster_job_last_run_timestamp_seconds{job="purge"}"#,
        "muster_db_pool_max_connections",
    ];
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = scrape(server.port);
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        let missing: Vec<&str> = expected
            .iter()
            .copied()
            .filter(|e| !text.contains(e))
            .collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never reported: {missing:?}\n{text}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
