//! A2A's HTTP+JSON binding under `/a2a/rest`: the same answers as JSON-RPC, errors as a
//! `google.rpc.Status` with the HTTP status of the A2A error.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::a2a::{message, rest, result, writer_key};
use crate::helpers::{Reply, TestApp, send, str_of};

api_tests!(
    the_rest_binding_answers_as_json_rpc_does,
    rest_errors_carry_the_http_status_and_reason,
    bodies_are_read_as_the_openapi_document_describes_them,
);

async fn send_over_rest(app: &TestApp, key: &str, text: &str) -> String {
    let body = json!({"message": message(text), "configuration": {}});
    let sent = send(rest(app, key, Method::POST, "/a2a/rest/message:send").json(&body)).await;
    assert_eq!(sent.status, StatusCode::OK, "{}", sent.text);
    assert_eq!(sent.headers["content-type"], "application/a2a+json");
    str_of(&sent.body["task"], "id")
}

async fn the_rest_binding_answers_as_json_rpc_does(app: &TestApp) {
    let key = writer_key(app).await;
    let id = send_over_rest(app, &key, "Over REST").await;
    let path = format!("/a2a/rest/tasks/{id}?historyLength=1");
    let read = send(rest(app, &key, Method::GET, &path)).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let params = json!({"id": id, "historyLength": 1});
    assert_eq!(read.body, result(app, &key, "GetTask", &params).await);
    let path = "/a2a/rest/tasks?pageSize=1&status=TASK_STATE_SUBMITTED";
    let listed = send(rest(app, &key, Method::GET, path)).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    assert_eq!(listed.body["tasks"][0]["id"], id.as_str());
    assert_eq!(listed.body["pageSize"], 1);
    let path = format!("/a2a/rest/tasks/{id}:cancel");
    let canceled = send(rest(app, &key, Method::POST, &path).json(&json!({"id": id}))).await;
    assert_eq!(canceled.status, StatusCode::OK, "{}", canceled.text);
    assert_eq!(canceled.body["status"]["state"], "TASK_STATE_CANCELED");
    // The version may come as a query parameter.
    let path = format!("/a2a/rest/tasks/{id}?A2A-Version=1.0");
    let by_query = send(app.bearer(&key, Method::GET, &path, None)).await;
    assert_eq!(by_query.status, StatusCode::OK, "{}", by_query.text);
    // A cancel without a body works; one whose body names another task does not.
    let other = send_over_rest(app, &key, "Another").await;
    let path = format!("/a2a/rest/tasks/{other}:cancel");
    let mismatch = send(rest(app, &key, Method::POST, &path).json(&json!({"id": id}))).await;
    assert_eq!(
        mismatch.status,
        StatusCode::BAD_REQUEST,
        "{}",
        mismatch.text
    );
    let bare = send(rest(app, &key, Method::POST, &path)).await;
    assert_eq!(bare.status, StatusCode::OK, "{}", bare.text);
}

fn assert_rest_error(reply: &Reply, status: u16, reason: &str) {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.text);
    let error = &reply.body["error"];
    assert_eq!(error["code"], status, "{}", reply.text);
    assert!(error["status"].is_string(), "{}", reply.text);
    assert!(error["message"].is_string(), "{}", reply.text);
    assert_eq!(error["details"][0]["reason"], reason, "{}", reply.text);
}

async fn rest_errors_carry_the_http_status_and_reason(app: &TestApp) {
    let key = writer_key(app).await;
    let id = send_over_rest(app, &key, "Cancel me twice").await;
    let path = format!("/a2a/rest/tasks/{id}:cancel");
    let first = send(rest(app, &key, Method::POST, &path)).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text);
    let again = send(rest(app, &key, Method::POST, &path)).await;
    assert_rest_error(&again, 400, "TASK_NOT_CANCELABLE");
    let missing = uuid::Uuid::now_v7();
    let path = format!("/a2a/rest/tasks/{missing}");
    assert_rest_error(
        &send(rest(app, &key, Method::GET, &path)).await,
        404,
        "TASK_NOT_FOUND",
    );
    let path = format!("/a2a/rest/tasks/{id}:archive");
    let verb = send(rest(app, &key, Method::POST, &path)).await;
    assert_rest_error(&verb, 404, "METHOD_NOT_FOUND");
    let path = format!("/a2a/rest/tasks/{id}");
    let unversioned = send(app.bearer(&key, Method::GET, &path, None)).await;
    assert_rest_error(&unversioned, 400, "VERSION_NOT_SUPPORTED");
    let path = format!("/a2a/rest/tasks/{id}/pushNotificationConfigs");
    let config = json!({"url": "https://127.0.0.1/hook"});
    let push = send(rest(app, &key, Method::POST, &path).json(&config)).await;
    assert_rest_error(&push, 400, "INVALID_PARAMS");
    let path = format!("/a2a/rest/tasks/{id}/pushNotificationConfigs/c1");
    let push = send(app.bearer(&key, Method::DELETE, &path, None)).await;
    assert_rest_error(&push, 400, "VERSION_NOT_SUPPORTED");
    let raw = json!({"message": {"messageId": "r", "role": "ROLE_USER",
                                 "parts": [{"raw": "aGk="}]}});
    let path = "/a2a/rest/message:send";
    let refused = send(rest(app, &key, Method::POST, path).json(&raw)).await;
    assert_rest_error(&refused, 400, "CONTENT_TYPE_NOT_SUPPORTED");
    let malformed = send(
        rest(app, &key, Method::POST, path)
            .header("content-type", "application/json")
            .body("{nope"),
    )
    .await;
    assert_rest_error(&malformed, 400, "INVALID_REQUEST");
    let query = send(rest(app, &key, Method::GET, "/a2a/rest/tasks?pageSize=x")).await;
    assert_rest_error(&query, 400, "INVALID_PARAMS");
    let admin = app.admin_token(&app.org).await;
    let reader = app.api_key(&admin, &["read"]).await;
    let body = json!({"message": message("Not allowed")});
    let forbidden = send(rest(app, &reader, Method::POST, path).json(&body)).await;
    assert_rest_error(&forbidden, 403, "PERMISSION_DENIED");
}

/// What the OpenAPI document's A2A schemas say, held by the server: a body is a JSON
/// object (serde alone would fill a request from an array), a whole float is an
/// integer, a part holds exactly one non-null content, `null` fields hold nothing, and
/// a `tenant` must be empty.
async fn bodies_are_read_as_the_openapi_document_describes_them(app: &TestApp) {
    let key = writer_key(app).await;
    let before = crate::a2a::task_count(app).await;
    let post = |path: &str, body: String| {
        send(
            rest(app, &key, Method::POST, path)
                .header("content-type", "application/json")
                .body(body),
        )
    };
    let id = send_over_rest(app, &key, "Read by the schema").await;
    let cancel = format!("/a2a/rest/tasks/{id}:cancel");
    for not_an_object in ["[]", "[\"\", \"\"]", "null", "5", "\"x\""] {
        let reply = post(&cancel, not_an_object.to_owned()).await;
        assert_rest_error(&reply, 400, "INVALID_PARAMS");
    }
    let path = "/a2a/rest/message:send";
    let refused = [
        json!([{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}]),
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x", "data": 1}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": null}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": null}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_UNSPECIFIED", "parts": [{"text": "x"}]}}),
        json!({"message": {"messageId": " ", "role": "ROLE_USER", "parts": [{"text": "x"}]}}),
        json!({"message": {"messageId": "m".repeat(256), "role": "ROLE_USER", "parts": [{"text": "x"}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}),
        json!({"message": message("x"), "tenant": "t"}),
        json!({"message": message("x"), "configuration": {"historyLength": 1.5}}),
    ];
    for body in refused {
        let reply = post(path, body.to_string()).await;
        assert_rest_error(&reply, 400, "INVALID_PARAMS");
    }
    assert_eq!(
        crate::a2a::task_count(app).await,
        before + 1,
        "refused bodies created nothing"
    );
    let accepted = [
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x", "data": null, "raw": null}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"url": "https://example.com/a", "filename": null}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": {"k": [1, null]}}]}}),
        json!({"message": message("x"), "tenant": "", "configuration": {"historyLength": 2.0}, "metadata": null}),
    ];
    for body in accepted {
        let reply = post(path, body.to_string()).await;
        assert_eq!(reply.status, StatusCode::OK, "{body}: {}", reply.text);
    }
}
