//! Real refusals carry their stable `code` beside `statusCode`, `message` and `error`
//! (decision D-102), the code docs/api.md lists for them, on both engines and over MCP
//! and A2A as over REST.

use reqwest::Method;
use serde_json::json;
use uuid::Uuid;

use crate::helpers::{Headers, TestApp, assert_error_code, new_nonce, now_secs, send, signature};

api_tests!(
    refusals_of_the_rules_carry_their_code,
    refusals_of_the_request_carry_their_code,
    each_signature_check_has_its_code,
    a2a_refusals_carry_the_code_in_their_error_info,
);

async fn refusals_of_the_rules_carry_their_code(app: &TestApp) {
    let hr = &app.org.hr;
    let long = json!({"title": "x".repeat(256)}).to_string();
    assert_error_code(
        &app.post(hr, "/tasks", &long).await,
        400,
        "validation_failed",
    );
    let missing = app.get(hr, &format!("/tasks/{}", Uuid::now_v7())).await;
    assert_error_code(&missing, 404, "task_not_found");
    // Another organization's task is not found with the same code (decision D-8).
    let theirs = app.task_titled(&app.other.hr, "Theirs").await;
    let foreign = app.get(hr, &format!("/tasks/{theirs}")).await;
    assert_error_code(&foreign, 404, "task_not_found");

    let task = app.task_titled(hr, "Coded").await;
    let skip = app.transition(hr, &task, r#"{"status":"done"}"#).await;
    assert_error_code(&skip, 409, "transition_not_allowed");
    assert!(
        skip.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("todo -> done")),
        "{}",
        skip.text
    );

    // A fresh agent holds far less than the largest movement.
    let worker = app.worker(&app.org).await;
    let spend = json!({"amount": 1_000_000_000}).to_string();
    let broke = app.post(&worker, "/agents/credits/spend", &spend).await;
    assert_error_code(&broke, 409, "insufficient_balance");

    let observer = app.add_agent(&app.org, "observer", "active").await;
    let create = json!({"title": "Not by an observer"}).to_string();
    let read_only = app.post(&observer, "/tasks", &create).await;
    assert_error_code(&read_only, 403, "observer_read_only");
    let admin = app.admin_token(&app.org).await;
    let reader = app.api_key(&admin, &["read"]).await;
    let body = json!({"title": "Not with a read key"});
    let unscoped = send(app.bearer(&reader, Method::POST, "/tasks", Some(&body))).await;
    assert_error_code(&unscoped, 403, "missing_scope");
}

async fn refusals_of_the_request_carry_their_code(app: &TestApp) {
    let hr = &app.org.hr;
    assert_error_code(&app.post(hr, "/tasks", "{").await, 400, "invalid_json");
    assert_error_code(&app.post(hr, "/tasks", "[]").await, 400, "invalid_json");
    let unknown = json!({"title": "t", "colour": "red"}).to_string();
    assert_error_code(
        &app.post(hr, "/tasks", &unknown).await,
        400,
        "validation_failed",
    );
    let no_route = send(app.anonymous(Method::GET, "/nope")).await;
    assert_error_code(&no_route, 404, "route_not_found");
    let no_method = send(app.signed(hr, Method::DELETE, "/tasks", None)).await;
    assert_error_code(&no_method, 405, "method_not_allowed");
    let anonymous = send(app.anonymous(Method::GET, "/tasks")).await;
    assert_error_code(&anonymous, 401, "missing_credentials");
    let garbled = send(
        app.anonymous(Method::GET, "/tasks")
            .header("Authorization", "Basic YWRhOmxvdmVsYWNl"),
    )
    .await;
    assert_error_code(&garbled, 401, "malformed_authorization");
    let forged = send(app.bearer("not-a-token", Method::GET, "/tasks", None)).await;
    assert_error_code(&forged, 401, "invalid_access_token");
}

/// `GET /tasks` signed by `agent` at `offset` seconds from now with `nonce`.
fn signed_get(agent: &crate::helpers::Agent, offset: i64, nonce: &str) -> Headers {
    let ts = (now_secs() + offset).to_string();
    Headers {
        agent_id: Some(agent.handle.clone()),
        signature: Some(signature(&agent.secret, "GET", "/tasks", &ts, nonce, b"")),
        timestamp: Some(ts),
        nonce: Some(nonce.to_owned()),
    }
}

async fn each_signature_check_has_its_code(app: &TestApp) {
    let hr = &app.org.hr;
    let get = |headers: Headers| async move {
        send(app.with_headers(Method::GET, "/tasks", &headers, None)).await
    };
    let stale = get(signed_get(hr, -3_600, &new_nonce())).await;
    assert_error_code(&stale, 401, "stale_timestamp");

    let once = signed_get(hr, 0, &new_nonce());
    assert_eq!(get(once.clone()).await.status.as_u16(), 200);
    assert_error_code(&get(once).await, 401, "nonce_reused");

    let mut forged = signed_get(hr, 0, &new_nonce());
    forged.signature = Some("0".repeat(64));
    assert_error_code(&get(forged).await, 401, "invalid_signature");

    let mut unsigned = signed_get(hr, 0, &new_nonce());
    unsigned.signature = None;
    assert_error_code(&get(unsigned).await, 401, "missing_signing_header");

    let mut lettered = signed_get(hr, 0, &new_nonce());
    lettered.timestamp = Some("soon".to_owned());
    assert_error_code(&get(lettered).await, 401, "invalid_timestamp");

    let long_nonce = "n".repeat(129);
    assert_error_code(
        &get(signed_get(hr, 0, &long_nonce)).await,
        401,
        "invalid_nonce",
    );

    let suspended = app.add_agent(&app.org, "worker", "suspended").await;
    let inactive = get(signed_get(&suspended, 0, &new_nonce())).await;
    assert_error_code(&inactive, 401, "agent_not_active");
}

async fn a2a_refusals_carry_the_code_in_their_error_info(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let reader = app.api_key(&admin, &["read"]).await;
    let params = json!({"message": crate::a2a::message("Not with a read key")});
    let body = crate::a2a::rpc(app, &reader, "SendMessage", &params).await;
    let error = &body["error"];
    assert_eq!(error["code"], -32040, "{body}");
    assert_eq!(
        error["data"][0]["metadata"],
        json!({"code": "missing_scope"}),
        "{body}"
    );
    assert_eq!(error["data"][0]["domain"], "muster", "{body}");
    // The protocol's own errors are named by their reason alone.
    let missing = json!({"id": Uuid::now_v7().to_string()});
    let body = crate::a2a::rpc(app, &reader, "GetTask", &missing).await;
    assert_eq!(body["error"]["data"][0]["metadata"], json!({}), "{body}");
}
