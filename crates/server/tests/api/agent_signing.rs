//! What an agent signature covers (decision D-10): the method, the request target as
//! sent (query and percent escapes included) and the raw body bytes, under the agent's
//! own secret. Anything else is 401 "invalid signature", and changes nothing.

use reqwest::Method;
use serde_json::json;

use crate::agent_auth::{list_with, task_count};
use crate::helpers::{Agent, TestApp, assert_error_exact, send, signature, str_of, unique_handle};

api_tests!(
    wrong_signature_is_401,
    signature_covers_method_path_query_and_body,
    unknown_agent_is_401_invalid_signature,
    raw_body_with_spaces_is_verified_as_sent,
    raw_query_is_verified_as_sent,
    a_sealed_secret_copied_from_another_agent_does_not_open,
);

/// Sealed secrets are bound to their agent: someone with write access to the database
/// who copies the HR agent's sealed secret onto another agent's row gains nothing. The
/// request fails as a server error (the row is corrupt), never as a success.
async fn a_sealed_secret_copied_from_another_agent_does_not_open(app: &TestApp) {
    let hr = &app.org.hr;
    let copy = app.worker(&app.org).await;
    // Raw SQL: simulates a hand edit of the database, which is what this test is about.
    let sql = format!(
        "UPDATE agents SET encrypted_secret = \
         (SELECT encrypted_secret FROM agents WHERE agent_id = '{}') WHERE agent_id = '{}'",
        hr.handle, copy.handle
    );
    app.db().execute(&sql).await;
    // `copy` signs with the HR agent's secret (add_agent gives it the same one), so only
    // the binding of the sealed value to its row can refuse it.
    let reply = app.get(&copy, "/tasks").await;
    assert_error_exact(&reply, 500, "Internal server error");
    // The HR agent itself is unaffected.
    assert_eq!(app.get(hr, "/tasks").await.status.as_u16(), 200);
}

async fn wrong_signature_is_401(app: &TestApp) {
    let hr = &app.org.hr;
    let good = TestApp::headers_for(hr, &Method::GET, "/tasks", b"");
    let real = good.signature.clone().unwrap();
    let mut flipped = real.clone().into_bytes();
    flipped[0] = if flipped[0] == b'0' { b'1' } else { b'0' };
    let other_secret = "f".repeat(64);
    let ts = good.timestamp.clone().unwrap();
    let nonce = good.nonce.clone().unwrap();
    for bad in [
        "0".repeat(64),
        String::from_utf8(flipped).unwrap(),
        real[..62].to_owned(),
        format!("{real}00"),
        "not hex at all".to_owned(),
        signature(&other_secret, "GET", "/tasks", &ts, &nonce, b""),
        signature(&app.other.hr.secret, "GET", "/tasks", &ts, &nonce, b""),
    ] {
        let mut headers = good.clone();
        headers.signature = Some(bad.clone());
        assert_error_exact(&list_with(app, &headers).await, 401, "invalid signature");
    }
    assert_eq!(list_with(app, &good).await.status.as_u16(), 200);
}

async fn signature_covers_method_path_query_and_body(app: &TestApp) {
    let hr = &app.org.hr;
    // Signed for one target, sent to another.
    let mismatches = [
        ("/tasks?limit=1", "/tasks?limit=2"),
        ("/tasks", "/tasks?limit=5"),
        ("/tasks?limit=5", "/tasks"),
        ("/tasks", "/events"),
        ("/tasks?status=todo&limit=5", "/tasks?limit=5&status=todo"),
    ];
    for (signed_for, sent_to) in mismatches {
        let headers = TestApp::headers_for(hr, &Method::GET, signed_for, b"");
        let reply = send(app.with_headers(Method::GET, sent_to, &headers, None)).await;
        assert_error_exact(&reply, 401, "invalid signature");
    }
    // Signed as GET, sent as POST.
    let body = r#"{"title":"method swap"}"#;
    let headers = TestApp::headers_for(hr, &Method::GET, "/tasks", body.as_bytes());
    let reply = send(app.with_headers(Method::POST, "/tasks", &headers, Some(body.into()))).await;
    assert_error_exact(&reply, 401, "invalid signature");
    // Signed over one body, sent with another (or with none).
    let signed_body = r#"{"title":"signed"}"#;
    for sent in [r#"{"title":"tampered"}"#, r#"{"title":"signed"} "#, ""] {
        let headers = TestApp::headers_for(hr, &Method::POST, "/tasks", signed_body.as_bytes());
        let request = app.with_headers(Method::POST, "/tasks", &headers, Some(sent.into()));
        assert_error_exact(&send(request).await, 401, "invalid signature");
    }
    // Signed with an empty body, sent with one.
    let headers = TestApp::headers_for(hr, &Method::POST, "/tasks", b"");
    let request = app.with_headers(Method::POST, "/tasks", &headers, Some(signed_body.into()));
    assert_error_exact(&send(request).await, 401, "invalid signature");
    assert_eq!(
        task_count(app).await,
        0,
        "no forged request created anything"
    );
}

async fn unknown_agent_is_401_invalid_signature(app: &TestApp) {
    let ghost = Agent {
        uuid: uuid::Uuid::now_v7(),
        handle: unique_handle("ghost"),
        secret: app.org.hr.secret.clone(),
    };
    let reply = app.get(&ghost, "/tasks").await;
    assert_error_exact(&reply, 401, "invalid signature");
    let reply = app.post(&ghost, "/tasks", r#"{"title":"ghost"}"#).await;
    assert_error_exact(&reply, 401, "invalid signature");
    // The agent's UUID is not its handle.
    let by_uuid = Agent {
        handle: app.org.hr.uuid.to_string(),
        ..app.org.hr.clone()
    };
    assert_error_exact(&app.get(&by_uuid, "/tasks").await, 401, "invalid signature");
    assert_eq!(task_count(app).await, 0);
}

async fn raw_body_with_spaces_is_verified_as_sent(app: &TestApp) {
    let hr = &app.org.hr;
    let body = "{\n  \"title\" : \"pretty\",\n  \"tags\": [ \"a\" ,\"b\" ]\n}\n";
    let created = app.post(hr, "/tasks", body).await;
    assert_eq!(created.data()["title"], "pretty");
    let id = str_of(created.data(), "id");
    let reply = app
        .transition(hr, &id, r#"{"status": "in_progress"}"#)
        .await;
    assert_eq!(reply.data()["status"], "in_progress");
    let reply = app
        .transition(
            hr,
            &id,
            "{ \"status\" :\t\"review\" , \"reason\": \"é ✓\" }",
        )
        .await;
    assert_eq!(reply.data()["status"], "review");
    let events = app.events_of(hr, &id).await;
    assert_eq!(events[0]["payload"]["reason"], "é ✓");
    // The same body re-serialized compactly does not match the spaced signature.
    let spaced = r#"{"status": "done"}"#;
    let headers = TestApp::headers_for(
        hr,
        &Method::POST,
        &format!("/tasks/{id}/transition"),
        spaced.as_bytes(),
    );
    let compact = json!({ "status": "done" }).to_string();
    let request = app.with_headers(
        Method::POST,
        &format!("/tasks/{id}/transition"),
        &headers,
        Some(compact.into()),
    );
    assert_error_exact(&send(request).await, 401, "invalid signature");
}

async fn raw_query_is_verified_as_sent(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "raw").await;
    // The query is signed byte for byte, percent escapes included, and decoded after.
    let reply = app
        .get(hr, &format!("/events?type=task%2Ecreated&entityId={id}"))
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(reply.body["meta"]["total"], 1);
    // Signed in decoded form but sent escaped: a different target.
    let decoded = format!("/events?type=task.created&entityId={id}");
    let headers = TestApp::headers_for(hr, &Method::GET, &decoded, b"");
    let sent = format!("/events?type=task%2Ecreated&entityId={id}");
    let reply = send(app.with_headers(Method::GET, &sent, &headers, None)).await;
    assert_error_exact(&reply, 401, "invalid signature");
}
