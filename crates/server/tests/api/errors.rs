//! The error envelope outside any one resource: unknown routes, wrong methods, content
//! type and the request id.

use reqwest::{Method, StatusCode};
use uuid::Uuid;

use crate::helpers::{Reply, TestApp, assert_error, assert_error_exact, send};

api_tests!(
    unknown_route_is_a_json_404,
    wrong_method_is_a_json_405,
    every_error_is_json,
    responses_carry_a_request_id,
);

async fn unknown_route_is_a_json_404(app: &TestApp) {
    let reply = send(app.anonymous(Method::GET, "/nope")).await;
    assert_error_exact(&reply, 404, "Cannot GET /nope");

    // Signed or not, an unknown route is 404 (not 401).
    let reply = app.get(&app.org.hr, "/tasks/1/nothing-here").await;
    assert_error(&reply, 404, "/tasks/1/nothing-here");
    let reply = send(app.anonymous(Method::POST, "/api/v2/tasks")).await;
    assert_error(&reply, 404, "Cannot POST /api/v2/tasks");

    // Routes are grouped by their first segment: a group's bare prefix or a longer
    // first segment is no route of the group. (One trailing slash is served as the path
    // without it, see `trailing_slashes.rs`; two are not.)
    for path in [
        "/tasks//",
        "/health//",
        "/tasksx",
        "/eventsx/1",
        "/agents//",
        "/.well-known",
    ] {
        let reply = app.get(&app.org.hr, path).await;
        assert_error(&reply, 404, path);
    }
}

async fn wrong_method_is_a_json_405(app: &TestApp) {
    let path = format!("/tasks/{}", Uuid::now_v7());
    for method in [Method::DELETE, Method::PUT, Method::POST] {
        let reply = send(app.signed(&app.org.hr, method.clone(), &path, Some("{}"))).await;
        assert_error(&reply, 405, method.as_str());
        assert_eq!(reply.headers["allow"], "GET, PATCH");
    }
    let reply = send(app.signed(&app.org.hr, Method::DELETE, "/tasks", None)).await;
    assert_error(&reply, 405, "DELETE");
    assert_eq!(reply.headers["allow"], "GET, POST");
    let reply = send(app.signed(
        &app.org.hr,
        Method::GET,
        &format!("{path}/transition"),
        None,
    ))
    .await;
    assert_error(&reply, 405, "GET");
}

async fn every_error_is_json(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "a task").await;
    let replies: Vec<Reply> = vec![
        app.post(hr, "/tasks", "{").await,                          // 400
        send(app.anonymous(Method::GET, "/tasks")).await,           // 401
        app.get(hr, &format!("/tasks/{}", Uuid::now_v7())).await,   // 404
        send(app.signed(hr, Method::DELETE, "/tasks", None)).await, // 405
        app.transition(hr, &task, r#"{"status":"done"}"#).await,    // 409
    ];
    for (reply, status) in replies.iter().zip([400, 401, 404, 405, 409]) {
        // assert_error checks the exact keys and that content-type is application/json.
        assert_error(reply, status, "");
    }
}

async fn responses_carry_a_request_id(app: &TestApp) {
    let replies = [
        send(app.anonymous(Method::GET, "/health")).await,
        app.get(&app.org.hr, "/tasks").await,
        send(app.anonymous(Method::GET, "/tasks")).await,
        send(app.anonymous(Method::GET, "/nope")).await,
    ];
    let mut seen = Vec::new();
    for reply in &replies {
        let id = reply
            .headers
            .get("x-request-id")
            .unwrap_or_else(|| panic!("no x-request-id on a {} answer", reply.status))
            .to_str()
            .unwrap()
            .to_owned();
        assert!(!id.is_empty());
        assert!(!seen.contains(&id), "request id {id} repeated");
        seen.push(id);
    }
    assert_eq!(replies[0].status, StatusCode::OK);
}
