//! Code-host connections and events as the code host sends them: full payloads shaped
//! like a real host's (fixtures), signed with the connection's secret.

use std::sync::atomic::{AtomicI64, Ordering};

use muster_auth::signing::sign;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Reply, TestApp, send, str_of};

pub const CONNECTIONS: &str = "/api/v1/integrations/codehost/connections";
pub const WEBHOOK: &str = "/api/v1/integrations/codehost/webhook";

/// An installation id no other test uses (the ids are unique across a deployment).
pub fn fresh_installation() -> i64 {
    static NEXT: AtomicI64 = AtomicI64::new(0);
    let base = i64::from(std::process::id() % 100_000) * 1_000_000;
    base + 1 + NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A fixture payload by event name, with its installation set to `installation`.
pub fn payload(event: &str, installation: i64) -> Value {
    let text = match event {
        "issues" => include_str!("fixtures/codehost/issues.json"),
        "issue_comment" => include_str!("fixtures/codehost/issue_comment.json"),
        "pull_request" => include_str!("fixtures/codehost/pull_request.json"),
        "check_suite" => include_str!("fixtures/codehost/check_suite.json"),
        other => panic!("no fixture for {other}"),
    };
    let mut value: Value = serde_json::from_str(text).unwrap();
    value["installation"]["id"] = json!(installation);
    value
}

/// GitHub's ping of a new organization webhook, as it sends it: no installation, no
/// repository; the organization (id `organization`) and the hook.
pub fn organization_ping(organization: i64) -> Value {
    let text = include_str!("fixtures/codehost/ping_organization.json");
    let mut value: Value = serde_json::from_str(text).unwrap();
    value["organization"]["id"] = json!(organization);
    value
}

pub async fn try_connect(app: &TestApp, token: &str, body: &Value) -> Reply {
    send(app.bearer(token, Method::POST, CONNECTIONS, Some(body))).await
}

/// A connection of `installation` made by `token`'s admin: its id and secret.
pub async fn connect(
    app: &TestApp,
    token: &str,
    installation: i64,
    repository: Option<&str>,
) -> (String, String) {
    let reply = try_connect(
        app,
        token,
        &json!({"installationId": installation, "name": "acme", "repository": repository}),
    )
    .await;
    assert_eq!(reply.status, 200, "connect: {}", reply.text);
    (
        str_of(&reply.body, "id"),
        str_of(&reply.body, "webhookSecret"),
    )
}

pub async fn connection(
    app: &TestApp,
    token: &str,
    method: Method,
    id: &str,
    body: Option<&Value>,
) -> Reply {
    send(app.bearer(token, method, &format!("{CONNECTIONS}/{id}"), body)).await
}

/// Posts `body` as event `event` signed with `secret`, with a fresh delivery id.
pub async fn deliver(app: &TestApp, secret: &str, event: &str, body: &Value) -> Reply {
    deliver_as(app, secret, event, &Uuid::new_v4().to_string(), body).await
}

/// Posts `body` as event `event` with delivery id `delivery`, signed with `secret`.
pub async fn deliver_as(
    app: &TestApp,
    secret: &str,
    event: &str,
    delivery: &str,
    body: &Value,
) -> Reply {
    deliver_at(app, &app.base, secret, event, delivery, body).await
}

/// [`deliver_as`] to the instance at `base` (a sibling of `app` on the same database).
pub async fn deliver_at(
    app: &TestApp,
    base: &str,
    secret: &str,
    event: &str,
    delivery: &str,
    body: &Value,
) -> Reply {
    let raw = serde_json::to_vec(body).unwrap();
    let signature = format!("sha256={}", sign(secret, &raw));
    send(
        app.client
            .post(format!("{base}{WEBHOOK}"))
            .header("content-type", "application/json")
            .header("x-host-event", event)
            .header("x-host-delivery", delivery)
            .header("x-host-signature-256", signature)
            .body(raw),
    )
    .await
}
