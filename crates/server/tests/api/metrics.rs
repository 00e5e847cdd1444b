//! `GET /metrics`: off unless a token is set (404); with one, a scrape must present it,
//! and sees requests by route template (never an id), authentication failures by reason
//! and the database pool, in the format the scraper's `Accept` asks for (`OpenMetrics`, or
//! else the Prometheus text format 0.0.4).

use reqwest::Method;

use crate::helpers::{TestApp, assert_error_exact, send};

api_tests!(metrics_are_off_unless_a_token_is_set);

pub(crate) const TOKEN: &str = "scrape-token-0123456789";

mod on {
    use super::the_scrape_counts_routes_failures_and_the_pool;

    use super::the_scrape_is_in_the_format_accept_asks_for;

    api_tests!(with crate::helpers::MetricsSettings {
        metrics_token: Some(crate::metrics::TOKEN.to_owned()),
    };
        the_scrape_counts_routes_failures_and_the_pool,
        the_scrape_is_in_the_format_accept_asks_for,
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

/// What Prometheus 2 and 3 send by default.
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

async fn scrape_accepting(app: &TestApp, accept: Option<&str>) -> crate::helpers::Reply {
    let mut request = app.anonymous(Method::GET, "/metrics").bearer_auth(TOKEN);
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    send(request).await
}

/// `OpenMetrics` when asked for (as Prometheus asks), the text format 0.0.4 otherwise;
/// the same samples in both, and each format's own metadata: a counter family is named
/// `muster_http_requests` in `OpenMetrics` and `muster_http_requests_total` in the text
/// format, and only `OpenMetrics` ends with `# EOF`.
async fn the_scrape_is_in_the_format_accept_asks_for(app: &TestApp) {
    app.task_titled(&app.org.hr, "Counted").await;
    for (accept, expected) in [
        (None, TEXT_FORMAT),
        (Some("*/*"), TEXT_FORMAT),
        (Some("text/plain"), TEXT_FORMAT),
        (
            Some("text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.3"),
            TEXT_FORMAT,
        ),
        (Some(PROMETHEUS_ACCEPT), OPENMETRICS),
        (
            Some("application/openmetrics-text; version=1.0.0"),
            OPENMETRICS,
        ),
    ] {
        let reply = scrape_accepting(app, accept).await;
        assert_eq!(reply.status, 200, "{accept:?}: {}", reply.text);
        assert_eq!(reply.headers["content-type"], expected, "{accept:?}");
        assert_eq!(reply.headers["vary"], "Accept", "{accept:?}");
        let text = &reply.text;
        let sample = r#"muster_http_requests_total{method="POST",route="/tasks",status="200"} 1"#;
        assert!(text.contains(sample), "{accept:?}: {text}");
        if expected == OPENMETRICS {
            assert!(text.ends_with("# EOF\n"), "{accept:?}: {text}");
            assert!(
                text.contains("# TYPE muster_http_requests counter\n"),
                "{text}"
            );
        } else {
            assert!(!text.contains("# EOF"), "{accept:?}: {text}");
            assert!(!text.contains("# UNIT"), "{accept:?}: {text}");
            assert!(
                text.contains("# TYPE muster_http_requests_total counter\n"),
                "{text}"
            );
            assert!(
                text.contains("# HELP muster_http_requests_total "),
                "{text}"
            );
        }
    }
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
    assert_eq!(reply.headers["content-type"], TEXT_FORMAT);
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
