//! Bad requests to the run routes (decision D-106): a bad signature, a body over 1 MiB,
//! malformed JSON, unknown fields and enum values, bad query values; each refused with
//! its code and nothing changed.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{Agent, TestApp, assert_error, assert_error_code, send};
use crate::runs_support::{run_of, running};

api_tests!(bad_run_requests_are_refused_and_change_nothing);

async fn bad_run_requests_are_refused_and_change_nothing(app: &TestApp) {
    let (worker, task, run) = running(app, 10, &json!({})).await;
    let posts = [
        format!("/tasks/{task}/runs"),
        format!("/runs/{run}/log"),
        format!("/runs/{run}/usage"),
        format!("/runs/{run}/heartbeat"),
        format!("/runs/{run}/finish"),
        format!("/runs/{run}/stop"),
    ];
    let oversized = format!(
        r#"{{"lines": [{{"stream": "stdout", "text": "{}"}}]}}"#,
        "x".repeat(1024 * 1024)
    );
    for path in &posts {
        // Signed over another body.
        let mut headers = TestApp::headers_for(&worker, &Method::POST, path, b"{}");
        headers.nonce = Some(crate::helpers::new_nonce());
        let forged =
            send(app.with_headers(Method::POST, path, &headers, Some(b"{}".to_vec()))).await;
        assert_eq!(forged.status.as_u16(), 401, "{path}: {}", forged.text);
        let malformed = app.post(&worker, path, "{").await;
        assert_error_code(&malformed, 400, "invalid_json");
        let unknown = app.post(&worker, path, r#"{"colour": "red"}"#).await;
        assert_error(&unknown, 400, "property colour should not exist");
        let big = app.post(&worker, path, &oversized).await;
        assert_error_code(&big, 413, "payload_too_large");
    }
    let enums = [
        (
            format!("/runs/{run}/finish"),
            json!({"status": "lost"}),
            "status must be one of succeeded, failed, cancelled, stopped",
        ),
        (
            format!("/runs/{run}/finish"),
            json!({"status": "done"}),
            "status must be one of",
        ),
        (
            format!("/runs/{run}/log"),
            json!({"lines": [{"stream": "video", "text": "x"}]}),
            "stream must be one of stdout, stderr, system",
        ),
        (
            format!("/runs/{run}/usage"),
            json!({"model": "", "inputTokens": 1, "outputTokens": 1}),
            "model must not be empty",
        ),
        (
            format!("/runs/{run}/usage"),
            json!({"model": "m", "inputTokens": -1, "outputTokens": 1}),
            "inputTokens",
        ),
        (
            format!("/runs/{run}/usage"),
            json!({"model": "m", "outputTokens": 1}),
            "inputTokens is required",
        ),
        (
            format!("/runs/{run}/usage"),
            json!({"model": "m", "inputTokens": 1, "outputTokens": 1, "reportId": ""}),
            "reportId must not be empty",
        ),
        (
            format!("/runs/{run}/heartbeat"),
            json!({"leaseSeconds": 0}),
            "leaseSeconds",
        ),
        (
            format!("/tasks/{task}/runs"),
            json!({"reserveCredits": -1}),
            "reserveCredits",
        ),
        (
            format!("/tasks/{task}/runs"),
            json!({"adapter": "a".repeat(101)}),
            "adapter",
        ),
    ];
    for (path, body, message) in &enums {
        let reply = app.post(&worker, path, &body.to_string()).await;
        assert_error(&reply, 400, message);
    }
    bad_queries(app, &worker).await;
    let unchanged = run_of(app, &worker, &run).await;
    assert_eq!(unchanged["status"], "running");
    assert_eq!(unchanged["logLines"], 0);
    assert_eq!(unchanged["usage"]["reports"], 0);
    assert_eq!(unchanged["stopRequested"], false);
}

/// Bad query values and ids of the reads.
async fn bad_queries(app: &TestApp, worker: &Agent) {
    for (path, message) in [
        ("/runs?status=done", "status"),
        ("/runs?agentId=nope", "agentId"),
        ("/runs?from=yesterday", "from must be an ISO 8601 date-time"),
        ("/runs?limit=0", "limit must be between 1 and 500"),
        ("/runs?cursor=nope", "cursor is not valid"),
        ("/usage?groupBy=week", "groupBy"),
        ("/usage?to=soon", "to must be an ISO 8601 date-time"),
        ("/usage?colour=red", "colour"),
    ] {
        let reply = app.get(worker, path).await;
        assert_error(&reply, 400, message);
    }
    let unknown_agent = app
        .get(worker, &format!("/agents/{}/usage", uuid::Uuid::now_v7()))
        .await;
    assert_error_code(&unknown_agent, 404, "agent_not_found");
    let bad_id = app.get(worker, "/runs/nope").await;
    assert_error(&bad_id, 400, "id must be a UUID");
}
