//! Tools of the webhook tests: settings that let hooks reach a loopback receiver, and
//! registering a hook.

use std::time::Duration;

use muster_domain::rules::delivery::RetrySchedule;
use reqwest::Method;
use serde_json::Value;

use crate::helpers::{Reply, TestApp, WebhookSettings, send, str_of};

/// Hooks may call loopback over http; the outbox is polled every 50 ms; retries come
/// after 300 ms (six attempts, as decision D-83 has, only faster).
pub fn loopback_hooks() -> WebhookSettings {
    WebhookSettings {
        webhook_allow_private: true,
        webhook_allow_http: true,
        webhook_poll_ms: 50,
        retry_schedule: RetrySchedule::new(vec![
            time::Duration::ZERO,
            time::Duration::milliseconds(300),
            time::Duration::milliseconds(300),
            time::Duration::milliseconds(300),
            time::Duration::milliseconds(300),
            time::Duration::milliseconds(300),
        ]),
        ..WebhookSettings::default()
    }
}

/// `POST /api/v1/webhooks` as the org's admin, answered.
pub async fn try_register(app: &TestApp, token: &str, body: &Value) -> Reply {
    send(app.bearer(token, Method::POST, "/api/v1/webhooks", Some(body))).await
}

/// Registers a hook (asserting 200) and answers its id.
pub async fn register(app: &TestApp, token: &str, body: &Value) -> String {
    let reply = try_register(app, token, body).await;
    assert_eq!(reply.status, 200, "register webhook: {}", reply.text);
    str_of(&reply.body, "id")
}

/// The hook as `GET /api/v1/webhooks/:id` answers it.
pub async fn hook(app: &TestApp, token: &str, id: &str) -> Value {
    let reply = send(app.bearer(token, Method::GET, &format!("/api/v1/webhooks/{id}"), None)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body
}

/// The hook's delivery log, newest first.
pub async fn log(app: &TestApp, token: &str, id: &str) -> Vec<Value> {
    let path = format!("/api/v1/webhooks/{id}/deliveries");
    let reply = send(app.bearer(token, Method::GET, &path, None)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.list().clone()
}

/// Waits (up to `within`) until `check` holds for the hook's log.
pub async fn wait_for_log(
    app: &TestApp,
    token: &str,
    id: &str,
    within: Duration,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let entries = log(app, token, id).await;
        if check(&entries) || tokio::time::Instant::now() >= deadline {
            return entries;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
