//! The run metrics of `GET /metrics` (decision D-106): tokens by model and kind, the
//! priced cost by model, runs finished by status and their durations, counted once per
//! committed change whichever way it came (REST, an MCP tool, the lease sweep a claim
//! runs), in both exposition formats.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{AppSettings, MetricsSettings, TestApp, send, str_of};
use crate::mcp::tool;
use crate::runs_support::{funded_worker, report, start_run, task_in_progress};

api_tests!(with crate::metrics_runs::metered();
    runs_count_tokens_cost_and_how_they_ended,
    a_run_lost_in_the_lease_sweep_is_counted,
);

/// Metrics on, over the price table of the run tests (`model-a` at $3/$15 per million
/// input/output tokens, cache reads at $0.30).
pub(crate) fn metered() -> AppSettings {
    AppSettings {
        metrics: MetricsSettings {
            metrics_token: Some(crate::metrics::TOKEN.to_owned()),
        },
        ..crate::runs_support::priced()
    }
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0";

/// The scrape, in the text format and in `OpenMetrics`.
async fn scrapes(app: &TestApp) -> [String; 2] {
    let mut texts = [String::new(), String::new()];
    for (text, accept) in texts.iter_mut().zip(["text/plain", OPENMETRICS]) {
        let reply = send(
            app.anonymous(Method::GET, "/metrics")
                .bearer_auth(crate::metrics::TOKEN)
                .header("accept", accept),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        *text = reply.text;
    }
    texts
}

fn assert_lines(text: &str, expected: &[&str]) {
    for line in expected {
        assert!(
            text.lines().any(|l| l == *line),
            "{line} missing from\n{text}"
        );
    }
}

/// The value of the sample named `name` (with its labels), as written.
fn sample(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("{name} missing from\n{text}"))
        .parse()
        .unwrap()
}

async fn runs_count_tokens_cost_and_how_they_ended(app: &TestApp) {
    let worker = funded_worker(app, 1_000).await;
    let task = task_in_progress(app, &worker).await;
    let run = str_of(&start_run(app, &worker, &task, &json!({})).await, "id");
    // Priced by the table: 1,000 × 3 + 100 × 15 + 2,000 × 0.3 = 5,100 millionths.
    let priced = json!({"model": "model-a", "inputTokens": 1_000, "outputTokens": 100,
        "cacheReadTokens": 2_000, "reportId": "turn-1"});
    assert_eq!(report(app, &worker, &run, &priced).await.status, 201);
    // Resent: counted once.
    assert_eq!(report(app, &worker, &run, &priced).await.status, 200);
    // Through MCP, with a cost of its own.
    let reported = json!({"id": run, "model": "model-a", "inputTokens": 10,
        "outputTokens": 1, "costMicrousd": 999});
    let answer = tool(app, &worker, "report_usage", reported).await;
    assert_eq!(answer["isError"], false, "{answer}");
    // Unpriced: its tokens count, it has no cost.
    let unpriced = json!({"model": "local-llama", "inputTokens": 50, "outputTokens": 5,
        "cacheWriteTokens": 7});
    assert_eq!(report(app, &worker, &run, &unpriced).await.status, 201);
    // Refused: counted nowhere.
    let stranger = funded_worker(app, 0).await;
    assert_eq!(report(app, &stranger, &run, &unpriced).await.status, 403);
    let finished = tool(
        app,
        &worker,
        "finish_run",
        json!({"id": run, "status": "succeeded"}),
    )
    .await;
    assert_eq!(finished["isError"], false, "{finished}");
    // A second finish is refused and counts nothing.
    let again = app
        .post(
            &worker,
            &format!("/runs/{run}/finish"),
            r#"{"status":"failed"}"#,
        )
        .await;
    assert_eq!(again.status, 409, "{}", again.text);

    let [text, open_metrics] = scrapes(app).await;
    for scrape in [&text, &open_metrics] {
        assert_lines(
            scrape,
            &[
                r#"muster_run_tokens_total{model="model-a",kind="input"} 1010"#,
                r#"muster_run_tokens_total{model="model-a",kind="output"} 101"#,
                r#"muster_run_tokens_total{model="model-a",kind="cache_read"} 2000"#,
                r#"muster_run_tokens_total{model="model-a",kind="cache_write"} 0"#,
                r#"muster_run_tokens_total{model="local-llama",kind="input"} 50"#,
                r#"muster_run_tokens_total{model="local-llama",kind="output"} 5"#,
                r#"muster_run_tokens_total{model="local-llama",kind="cache_read"} 0"#,
                r#"muster_run_tokens_total{model="local-llama",kind="cache_write"} 7"#,
                r#"muster_run_cost_microusd_total{model="model-a"} 6099"#,
                r#"muster_runs_finished_total{status="succeeded"} 1"#,
                r#"muster_runs_finished_total{status="failed"} 0"#,
                r#"muster_runs_finished_total{status="cancelled"} 0"#,
                r#"muster_runs_finished_total{status="stopped"} 0"#,
                r#"muster_runs_finished_total{status="lost"} 0"#,
                "muster_run_duration_seconds_count 1",
                r#"muster_run_duration_seconds_bucket{le="+Inf"} 1"#,
                r#"muster_run_duration_seconds_bucket{le="86400.0"} 1"#,
            ],
        );
        assert!(
            !scrape.contains(r#"muster_run_cost_microusd_total{model="local-llama"}"#),
            "an unpriced model has no cost: {scrape}"
        );
        assert!(!scrape.contains(&run), "an id became a label");
        // Started and finished within the test.
        let took = sample(scrape, "muster_run_duration_seconds_sum");
        assert!((0.0..600.0).contains(&took), "{took}");
    }
    // Each format's own metadata.
    for (family, kind) in [
        ("muster_run_tokens_total", "counter"),
        ("muster_run_cost_microusd_total", "counter"),
        ("muster_runs_finished_total", "counter"),
        ("muster_run_duration_seconds", "histogram"),
    ] {
        assert_lines(&text, &[&format!("# TYPE {family} {kind}")]);
        let open = family.trim_end_matches("_total");
        assert_lines(&open_metrics, &[&format!("# TYPE {open} {kind}")]);
    }
}

async fn a_run_lost_in_the_lease_sweep_is_counted(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let task = app.task_titled(&app.org.hr, "leased briefly").await;
    let claimed = app
        .post(&worker, "/tasks/claim", r#"{"leaseSeconds": 1}"#)
        .await;
    assert_eq!(str_of(claimed.data(), "id"), task);
    let run = str_of(&start_run(app, &worker, &task, &json!({})).await, "id");
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    // The next claim of the organization hands back the lapsed task first, and loses
    // its run.
    let again = app
        .post(&worker, "/tasks/claim", r#"{"leaseSeconds": 60}"#)
        .await;
    assert_eq!(again.status, 200, "{}", again.text);
    let lost = app.get(&worker, &format!("/runs/{run}")).await;
    assert_eq!(lost.data()["status"], "lost", "{}", lost.text);
    // Another claim finds nothing more to lose.
    app.post(&worker, "/tasks/claim", r#"{"leaseSeconds": 60}"#)
        .await;

    for scrape in scrapes(app).await {
        assert_lines(
            &scrape,
            &[
                r#"muster_runs_finished_total{status="lost"} 1"#,
                r#"muster_runs_finished_total{status="succeeded"} 0"#,
                "muster_run_duration_seconds_count 1",
                r#"muster_run_duration_seconds_bucket{le="1.0"} 0"#,
                r#"muster_run_duration_seconds_bucket{le="+Inf"} 1"#,
            ],
        );
        let took = sample(&scrape, "muster_run_duration_seconds_sum");
        assert!((1.0..600.0).contains(&took), "{took}");
    }
}
