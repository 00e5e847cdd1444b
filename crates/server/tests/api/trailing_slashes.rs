//! Every URL the README and the guides name works with and without its trailing slash:
//! pages answer the same, and API calls are served (not redirected), their agent
//! signature checked over the path exactly as sent.

use reqwest::redirect::Policy;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{ADMIN_PASSWORD, TestApp, send, str_of, unique_handle};

api_tests!(with crate::helpers::MetricsSettings {
    metrics_token: Some(crate::metrics::TOKEN.to_owned()),
};
    documented_pages_answer_with_and_without_a_trailing_slash,
    the_dashboard_is_at_ui_with_and_without_its_slash,
    api_calls_are_served_with_a_trailing_slash,
);

/// The other spelling of `path`: with its trailing slash if it has none, else without.
fn other_form(path: &str) -> String {
    path.strip_suffix('/')
        .map_or_else(|| format!("{path}/"), str::to_owned)
}

async fn documented_pages_answer_with_and_without_a_trailing_slash(app: &TestApp) {
    let pages = [
        "/ui/",
        "/docs/",
        "/openapi.json",
        "/health",
        "/ready",
        "/metrics",
        "/.well-known/agent-card.json",
    ];
    for page in pages {
        let mut answers = Vec::new();
        for path in [page.to_owned(), other_form(page)] {
            // The test client follows redirects, as a browser does.
            let response = app
                .anonymous(Method::GET, &path)
                .bearer_auth(crate::metrics::TOKEN)
                .send()
                .await
                .unwrap();
            let content_type = response.headers().get("content-type").cloned();
            assert_eq!(response.status(), StatusCode::OK, "GET {path}");
            answers.push(content_type);
        }
        assert_eq!(answers[0], answers[1], "{page}: {answers:?}");
    }
}

async fn the_dashboard_is_at_ui_with_and_without_its_slash(app: &TestApp) {
    let client = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap();
    for path in ["/", "/ui", "/ui/"] {
        let reply = client.get(app.url(path)).send().await.unwrap();
        assert_eq!(reply.status(), StatusCode::SEE_OTHER, "GET {path}");
        assert_eq!(reply.headers()["location"], "/ui/board", "GET {path}");
    }
    let reply = client.get(app.url("/ui/login/")).send().await.unwrap();
    assert_eq!(reply.status(), StatusCode::OK);
}

async fn api_calls_are_served_with_a_trailing_slash(app: &TestApp) {
    let hr = &app.org.hr;
    // Signed over the path as sent, slash included.
    let created = app
        .post(hr, "/tasks/", &json!({"title": "Slashed"}).to_string())
        .await;
    let id = str_of(created.data(), "id");
    let moved = app
        .post(
            hr,
            &format!("/tasks/{id}/transition/"),
            &json!({"status": "in_progress"}).to_string(),
        )
        .await;
    assert_eq!(moved.data()["status"], "in_progress");
    for path in ["/tasks/", "/tasks/?status=in_progress", "/events/"] {
        let reply = app.get(hr, path).await;
        assert!(!reply.list().is_empty(), "GET {path}: {}", reply.text);
    }
    let body = json!({"agentId": unique_handle("slash"), "name": "Slash"}).to_string();
    let registered = app.post(hr, "/agents/register/", &body).await;
    assert_eq!(registered.status, StatusCode::OK, "{}", registered.text);
    let worker = app.worker(&app.org).await;
    let claimed = app.post(&worker, "/tasks/claim/", "{}").await;
    assert!(claimed.status.is_success(), "{}", claimed.text);
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let reply = app.post(hr, "/mcp/", &ping).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);

    // A signature made over the path without the slash does not cover the path with it.
    let headers = TestApp::headers_for(hr, &Method::GET, "/tasks", b"");
    let reply = send(app.with_headers(Method::GET, "/tasks/", &headers, None)).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.text);

    // People and other systems.
    let login = json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD});
    let reply = app.post_public("/auth/login/", &login).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let token = str_of(&reply.body, "accessToken");
    let key = json!({"name": "slash", "scopes": ["read"]});
    let reply = send(app.bearer(&token, Method::POST, "/api-keys/", Some(&key))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let stream = app
        .bearer(&token, Method::GET, "/events/stream/", None)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    drop(stream);
    let inbound = json!({"name": "slash"});
    let created = crate::inbound_keys::create(app, &token, &inbound).await;
    let path = format!("/api/v1/webhooks/inbound/{}/", str_of(&created.body, "key"));
    let reply = app
        .post_public(&path, &json!({"title": "Slashed inbound"}))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
}
