//! `GET /metrics`: off unless a token is set (404); with one, a scrape must present it,
//! and sees requests by route template (never an id), authentication failures by reason
//! and the database pool.

use reqwest::Method;

use crate::helpers::{TestApp, assert_error_exact, send};

api_tests!(metrics_are_off_unless_a_token_is_set);

pub(crate) const TOKEN: &str = "scrape-token-0123456789";

mod on {
    use super::the_scrape_counts_routes_failures_and_the_pool;

    api_tests!(with crate::helpers::MetricsSettings {
        metrics_token: Some(crate::metrics::TOKEN.to_owned()),
    };
        the_scrape_counts_routes_failures_and_the_pool,
    );
}

async fn metrics_are_off_unless_a_token_is_set(app: &TestApp) {
    let reply = send(app.anonymous(Method::GET, "/metrics").bearer_auth(TOKEN)).await;
    assert_error_exact(&reply, 404, "Cannot GET /metrics");
}

async fn scrape(app: &TestApp, token: Option<&str>) -> crate::helpers::Reply {
    let request = app.anonymous(Method::GET, "/metrics");
    send(match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    })
    .await
}

async fn the_scrape_counts_routes_failures_and_the_pool(app: &TestApp) {
    let task = app.task_titled(&app.org.hr, "Counted").await;
    assert_eq!(
        app.get(&app.org.hr, &format!("/tasks/{task}")).await.status,
        200
    );
    assert_eq!(
        app.get(&app.org.hr, &format!("/tasks/{task}")).await.status,
        200
    );
    let mut forged = TestApp::headers_for(&app.org.hr, &Method::GET, "/tasks", b"");
    forged.signature = Some("0".repeat(64));
    let refused = send(app.with_headers(Method::GET, "/tasks", &forged, None)).await;
    assert_eq!(refused.status, 401);
    assert_eq!(
        send(app.anonymous(Method::GET, "/nowhere")).await.status,
        404
    );

    assert_error_exact(
        &scrape(app, None).await,
        401,
        "GET /metrics needs the metrics token as a bearer token",
    );
    assert_eq!(scrape(app, Some("not-the-token-at-all")).await.status, 401);
    let reply = scrape(app, Some(TOKEN)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(
        reply.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/openmetrics-text")
    );
    let text = &reply.text;
    for expected in [
        r#"muster_http_requests_total{method="GET",route="/tasks/{id}",status="200"} 2"#,
        r#"muster_http_requests_total{method="POST",route="/tasks",status="200"} 1"#,
        r#"muster_http_requests_total{method="GET",route="/tasks",status="401"} 1"#,
        r#"muster_http_requests_total{method="GET",route="unmatched",status="404"} 1"#,
        r#"muster_http_request_duration_seconds_count{method="GET",route="/tasks/{id}"} 2"#,
        r#"muster_auth_failures_total{reason="invalid_signature"} 1"#,
        "muster_db_pool_max_connections 4",
        r#"muster_tasks{org="Acme",status="todo"} 1"#,
        r#"muster_agents{org="Acme",status="active"} 1"#,
        r#"muster_agents{org="Globex",status="active"} 1"#,
    ] {
        assert!(text.contains(expected), "{expected} missing from\n{text}");
    }
    assert!(!text.contains(&task), "an id became a label");
    assert!(!text.contains(TOKEN), "the token is shown");

    // The counts are read again at every scrape: a status nobody has any more goes.
    let moved = app
        .transition(&app.org.hr, &task, r#"{"status":"cancelled"}"#)
        .await;
    assert_eq!(moved.status, 200, "{}", moved.text);
    let text = scrape(app, Some(TOKEN)).await.text;
    assert!(
        text.contains(r#"muster_tasks{org="Acme",status="cancelled"} 1"#),
        "{text}"
    );
    assert!(
        !text.contains(r#"muster_tasks{org="Acme",status="todo"}"#),
        "{text}"
    );
}
