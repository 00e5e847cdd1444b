//! Request bodies are declared JSON (decision D-103): `application/json`, with or without
//! parameters, in any case; the A2A routes also take `application/a2a+json`. A body sent
//! as text, as a form or with no type is 415 and changes nothing, so a browser page
//! cannot post one cross-site (to a key-in-URL route, say) without asking first. An empty
//! body needs no type.

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};

use crate::a2a::{message, request, writer_key};
use crate::helpers::{Agent, TestApp, assert_error_exact, send, str_of};

api_tests!(
    text_form_and_untyped_bodies_are_415_and_create_nothing,
    an_inbound_key_takes_json_bodies_alone,
    json_with_parameters_in_any_case_is_taken,
    protocol_routes_take_their_own_types_alone,
    an_empty_body_needs_no_type,
);

const NOT_JSON: &str = "Content-Type must be application/json";

/// The types a browser may send cross-site without a preflight, and none at all.
const REFUSED: [Option<&str>; 5] = [
    Some("text/plain"),
    Some("text/plain;charset=UTF-8"),
    Some("application/x-www-form-urlencoded"),
    Some("multipart/form-data; boundary=x"),
    None,
];

/// `request` with `content_type` (or none) and `body`.
fn typed(request: RequestBuilder, content_type: Option<&str>, body: &str) -> RequestBuilder {
    let request = request.body(body.to_owned());
    match content_type {
        Some(value) => request.header("content-type", value),
        None => request,
    }
}

/// A POST signed by `agent` over `body`, sent with `content_type`.
fn signed_post(
    app: &TestApp,
    agent: &Agent,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> RequestBuilder {
    let headers = TestApp::headers_for(agent, &Method::POST, path, body.as_bytes());
    typed(
        app.with_headers(Method::POST, path, &headers, None),
        content_type,
        body,
    )
}

async fn titled(app: &TestApp, title: &str) -> usize {
    let reply = app.get(&app.org.hr, "/tasks?limit=500").await;
    reply
        .list()
        .iter()
        .filter(|task| task["title"] == title)
        .count()
}

async fn text_form_and_untyped_bodies_are_415_and_create_nothing(app: &TestApp) {
    let json_body = json!({"title": "Cross-site"}).to_string();
    let admin = app.admin_token(&app.org).await;
    for content_type in REFUSED {
        let reply = send(signed_post(
            app,
            &app.org.hr,
            "/tasks",
            content_type,
            &json_body,
        ))
        .await;
        assert_error_exact(&reply, 415, NOT_JSON);
        let reply = send(typed(
            app.bearer(&admin, Method::POST, "/tasks", None),
            content_type,
            &json_body,
        ))
        .await;
        assert_error_exact(&reply, 415, NOT_JSON);
    }
    // A form's own encoding of the fields is refused the same way.
    let reply = send(signed_post(
        app,
        &app.org.hr,
        "/tasks",
        Some("application/x-www-form-urlencoded"),
        "title=Cross-site",
    ))
    .await;
    assert_error_exact(&reply, 415, NOT_JSON);
    assert_eq!(titled(app, "Cross-site").await, 0);
}

async fn an_inbound_key_takes_json_bodies_alone(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let created = crate::inbound_keys::create(app, &token, &json!({"name": "ci"})).await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.text);
    let key = str_of(&created.body, "key");
    let one = format!("/api/v1/webhooks/inbound/{key}");
    let batch = format!("{one}/batch");
    let single_body = json!({"title": "Via key"}).to_string();
    let batch_body = json!({"tasks": [{"title": "Via key"}]}).to_string();
    for content_type in REFUSED {
        for (path, body) in [(&one, &single_body), (&batch, &batch_body)] {
            let reply = send(typed(app.anonymous(Method::POST, path), content_type, body)).await;
            assert_error_exact(&reply, 415, NOT_JSON);
        }
    }
    assert_eq!(titled(app, "Via key").await, 0);

    for (path, body) in [(&one, &single_body), (&batch, &batch_body)] {
        let reply = send(typed(
            app.anonymous(Method::POST, path),
            Some("application/json; charset=utf-8"),
            body,
        ))
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    }
    assert_eq!(titled(app, "Via key").await, 2);
}

async fn json_with_parameters_in_any_case_is_taken(app: &TestApp) {
    for (i, content_type) in [
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        "Application/JSON",
    ]
    .into_iter()
    .enumerate()
    {
        let body = json!({"title": format!("Typed {i}")}).to_string();
        let reply = send(signed_post(
            app,
            &app.org.hr,
            "/tasks",
            Some(content_type),
            &body,
        ))
        .await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "{content_type}: {}",
            reply.text
        );
    }
}

/// An answer to `body` posted to `path` with a writer key and `content_type`.
async fn protocol_post(
    app: &TestApp,
    key: &str,
    path: &str,
    content_type: &str,
    body: &Value,
) -> crate::helpers::Reply {
    send(typed(
        app.bearer(key, Method::POST, path, None)
            .header("A2A-Version", "1.0"),
        Some(content_type),
        &body.to_string(),
    ))
    .await
}

async fn protocol_routes_take_their_own_types_alone(app: &TestApp) {
    let key = writer_key(app).await;
    let list: Value = serde_json::from_str(&request("ListTasks", &json!({}))).unwrap();
    let send_message = json!({"message": message("Typed A2A")});
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    // A2A, both bindings: its own type, and JSON.
    for content_type in ["application/a2a+json", "application/json; charset=utf-8"] {
        let reply = protocol_post(app, &key, "/a2a/jsonrpc", content_type, &list).await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "{content_type}: {}",
            reply.text
        );
        assert!(reply.body["result"]["tasks"].is_array(), "{}", reply.text);
        let path = "/a2a/rest/message:send";
        let reply = protocol_post(app, &key, path, content_type, &send_message).await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "{content_type}: {}",
            reply.text
        );
    }
    let reply = protocol_post(app, &key, "/a2a/jsonrpc", "text/plain", &list).await;
    assert_error_exact(
        &reply,
        415,
        "Content-Type must be application/json or application/a2a+json",
    );
    // MCP speaks JSON alone; so does the task API.
    let reply = protocol_post(app, &key, "/mcp", "application/json", &ping).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    for path in ["/mcp", "/tasks"] {
        let body = json!({"title": "Not A2A"});
        let sent = if path == "/mcp" { &ping } else { &body };
        let reply = protocol_post(app, &key, path, "application/a2a+json", sent).await;
        assert_error_exact(&reply, 415, NOT_JSON);
    }
    assert_eq!(titled(app, "Not A2A").await, 0);
}

async fn an_empty_body_needs_no_type(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let path = format!("/agents/{}/suspend", worker.uuid);
    let reply = send(app.signed(&app.org.hr, Method::POST, &path, None)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let path = format!("/agents/{}/unsuspend", worker.uuid);
    let reply = send(signed_post(app, &app.org.hr, &path, Some("text/plain"), "")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
}
