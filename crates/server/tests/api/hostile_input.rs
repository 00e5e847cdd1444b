//! Requests schemathesis (`cargo xtask fuzz-api`) found refused although the OpenAPI
//! document allows them, kept as regressions: each was fixed in the server or in the
//! document, and the document's own tests hold the document side.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestApp, assert_error, send, unique_handle};

api_tests!(
    an_optional_body_may_be_left_out_but_is_not_null,
    a_whole_number_may_be_written_as_a_float,
    a_code_hosts_whole_float_is_an_installation_id,
    metadata_numbers_near_the_float_limit_read_back,
);

/// schemathesis read the document as allowing `null` for an optional body (utoipa
/// wrote "object or null"); the server refuses it, as it refuses any value of the wrong
/// JSON type (decision D-4), and the document now says so. Leaving the body out, or
/// sending `{}`, is what "optional" means.
async fn an_optional_body_may_be_left_out_but_is_not_null(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    for body in [None, Some(""), Some("{}")] {
        let reply = send(app.signed(&worker, Method::POST, "/tasks/claim", body)).await;
        assert_eq!(reply.status, 204, "{body:?}: {}", reply.text);
    }
    let reply = send(app.signed(&worker, Method::POST, "/tasks/claim", Some("null"))).await;
    assert_error(&reply, 400, "request body must be a JSON object");
}

/// JSON has one number type and the document says `integer`: `3.0` is 3. A fraction is
/// still refused, naming the field, and so is a number too large for the field.
async fn a_whole_number_may_be_written_as_a_float(app: &TestApp) {
    let handle = unique_handle("floaty");
    let body = json!({"agentId": handle, "name": "Floaty", "level": 3.0, "managementFeePct": 10.0});
    let reply = app
        .post(&app.org.hr, "/agents/register", &body.to_string())
        .await;
    let agent = reply.data();
    assert_eq!(agent["level"], 3, "{}", reply.text);
    assert_eq!(agent["managementFeePct"], 10, "{}", reply.text);

    let body = json!({"agentId": unique_handle("half"), "name": "Half", "level": 3.5});
    let reply = app
        .post(&app.org.hr, "/agents/register", &body.to_string())
        .await;
    assert_error(&reply, 400, "level");

    let body = json!({"agentId": unique_handle("huge"), "name": "Huge", "level": 1.0e300});
    let reply = app
        .post(&app.org.hr, "/agents/register", &body.to_string())
        .await;
    assert_error(&reply, 400, "level");
}

/// A third-party payload gets the same reading of numbers: `installation.id: 144.0`
/// names installation 144 (here unknown: 404), not "no installation" (400).
async fn a_code_hosts_whole_float_is_an_installation_id(app: &TestApp) {
    let request = app
        .anonymous(Method::POST, "/api/v1/integrations/codehost/webhook")
        .header("content-type", "application/json")
        .header("x-host-event", "ping")
        .header("x-host-signature-256", format!("sha256={}", "0".repeat(64)))
        .body(r#"{"installation": {"id": 144.0}}"#);
    let reply = send(request).await;
    assert_error(&reply, 404, "installation 144");
}

/// PostgreSQL's jsonb writes `1.7976931348623157e308` back as a 309-digit integer, which
/// `serde_json`'s fast path overflowed to an error: every later read of the agent or
/// task was a 500. Exact float parsing (`float_roundtrip`) reads it back as it went in.
async fn metadata_numbers_near_the_float_limit_read_back(app: &TestApp) {
    let extreme = json!({"max": f64::MAX, "min": f64::MIN, "tiny": 2.648_505_788_740_444_7e-301});
    let body = json!({"agentId": unique_handle("extreme"), "name": "Extreme", "metadata": extreme});
    let reply = app
        .post(&app.org.hr, "/agents/register", &body.to_string())
        .await;
    let id = reply.data()["id"].as_str().unwrap().to_owned();
    let reply = app.get(&app.org.hr, &format!("/agents/{id}")).await;
    assert_eq!(reply.data()["metadata"], extreme, "{}", reply.text);

    let task = app
        .create_task(
            &app.org.hr,
            &json!({"title": "Extreme", "metadata": extreme}),
        )
        .await;
    let reply = app
        .get(
            &app.org.hr,
            &format!("/tasks/{}", task["id"].as_str().unwrap()),
        )
        .await;
    assert_eq!(reply.data()["metadata"], extreme, "{}", reply.text);
}
