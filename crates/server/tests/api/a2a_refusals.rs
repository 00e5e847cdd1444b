//! A2A over JSON-RPC: every refusal is a JSON-RPC error with the protocol's code and an
//! `ErrorInfo`, answered HTTP 200 as JSON-RPC over HTTP has it (D-104: a body that is not
//! an A2A 1.0 request at all too; only missing credentials keep their 401), and changes
//! nothing. A streaming method's own error is a stream of one `error` event.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::a2a::{error_code, message, request, result, stream_error_code, task_count, writer_key};
use crate::helpers::{Reply, TestApp, send, str_of};

api_tests!(
    requests_that_are_not_a2a_1_0_get_their_json_rpc_code,
    malformed_requests_are_answered_200_with_their_error,
    bad_params_are_refused_and_store_nothing,
    unknown_tasks_and_missing_rights_are_refused,
    a_version_refusal_lets_the_idempotency_key_go,
);

/// Posts `body` with the writer key and, when given, an `A2A-Version`.
async fn post(app: &TestApp, key: &str, body: String, version: Option<&str>) -> Reply {
    let mut request = app
        .bearer(key, Method::POST, "/a2a/jsonrpc", None)
        .header("content-type", "application/json")
        .body(body);
    if let Some(version) = version {
        request = request.header("A2A-Version", version);
    }
    send(request).await
}

/// The JSON-RPC error code of a request refused before any method ran: HTTP 200, as
/// every JSON-RPC error.
fn code(reply: &Reply) -> i64 {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["jsonrpc"], "2.0", "{}", reply.text);
    reply.body["error"]["code"].as_i64().unwrap()
}

async fn requests_that_are_not_a2a_1_0_get_their_json_rpc_code(app: &TestApp) {
    let key = writer_key(app).await;
    let before = task_count(app).await;
    let valid = request("SendMessage", &json!({"message": message("Never stored")}));
    let no_version = post(app, &key, valid.clone(), None).await;
    assert_eq!(code(&no_version), -32009);
    assert_eq!(no_version.body["id"], "r-1");
    for version in ["0.3", "2.0", "1.1", "1.0.x", "1.0.", "1.0.0.0", "1"] {
        let reply = post(app, &key, valid.clone(), Some(version)).await;
        assert_eq!(code(&reply), -32009, "{version}");
    }
    assert_eq!(
        task_count(app).await,
        before,
        "no refused request created a task"
    );
    let patched = post(app, &key, valid, Some("1.0.3")).await;
    let created = &patched.body["result"]["task"];
    assert!(
        created.is_object(),
        "a patch number is ignored: {}",
        patched.text
    );
    let parse = post(app, &key, "{not json".to_owned(), Some("1.0")).await;
    assert_eq!(
        (code(&parse), parse.body["id"].clone()),
        (-32700, Value::Null)
    );
    let batch = format!("[{}]", request("GetTask", &json!({})));
    assert_eq!(code(&post(app, &key, batch, Some("1.0")).await), -32600);
    let no_id = json!({"jsonrpc": "2.0", "method": "GetTask", "params": {}}).to_string();
    assert_eq!(code(&post(app, &key, no_id, Some("1.0")).await), -32600);
    let object_id = json!({"jsonrpc": "2.0", "id": {}, "method": "GetTask"}).to_string();
    assert_eq!(code(&post(app, &key, object_id, Some("1.0")).await), -32600);
    let old_rpc = json!({"jsonrpc": "1.0", "id": 1, "method": "GetTask"}).to_string();
    let reply = post(app, &key, old_rpc, Some("1.0")).await;
    assert_eq!((code(&reply), reply.body["id"].clone()), (-32600, json!(1)));
    let list_params = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": [1]});
    assert_eq!(
        code(&post(app, &key, list_params.to_string(), Some("1.0")).await),
        -32600
    );
    let long = json!({"jsonrpc": "2.0", "id": 1, "method": "M".repeat(101)}).to_string();
    assert_eq!(code(&post(app, &key, long, Some("1.0")).await), -32600);
    let float_id = json!({"jsonrpc": "2.0", "id": 1.5, "method": "GetTask"}).to_string();
    assert_eq!(code(&post(app, &key, float_id, Some("1.0")).await), -32600);
    let text_params = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": "x"});
    let reply = post(app, &key, text_params.to_string(), Some("1.0")).await;
    assert_eq!(code(&reply), -32600);
    // An integer id written with a zero fraction is an integer.
    let integral = r#"{"jsonrpc": "2.0", "id": 517846.0, "method": "ListTasks"}"#;
    let reply = post(app, &key, integral.to_owned(), Some("1.0")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["id"], 517_846, "{}", reply.text);
    // `params: null` is read as no params (the document allows it).
    let null_params = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": null});
    let reply = post(app, &key, null_params.to_string(), Some("1.0")).await;
    assert!(reply.body["result"]["tasks"].is_array(), "{}", reply.text);
    // A method this server does not have is the method's error: 200.
    let old = request("message/send", &json!({"message": message("old")}));
    let reply = post(app, &key, old, Some("1.0")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["error"]["code"], -32601, "{}", reply.text);
    assert_eq!(task_count(app).await, before + 1);
}

/// The malformed requests of the A2A TCK's mandatory JSON-RPC tests, as it sends them:
/// each answered 200 with its JSON-RPC error, and the request's id when it has one.
async fn malformed_requests_are_answered_200_with_their_error(app: &TestApp) {
    let key = writer_key(app).await;
    let before = task_count(app).await;
    let send_message = json!({"message": message("Never stored")});
    let cases = [
        // A wrong `jsonrpc` and no id; no method and no id; an id that is an object.
        (
            json!({"jsonrpc": "aaa", "method": "SendMessage", "params": {}}),
            -32600,
            Value::Null,
        ),
        (json!({"jsonrpc": "2.0", "params": {}}), -32600, Value::Null),
        (
            json!({"jsonrpc": "2.0", "method": "SendMessage", "params": {}, "id": {"bad": 1}}),
            -32600,
            Value::Null,
        ),
        // With an id, answered with it: JSON-RPC 1.0, no method.
        (
            json!({"jsonrpc": "1.0", "id": "v1", "method": "SendMessage", "params": send_message}),
            -32600,
            json!("v1"),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 7, "params": send_message}),
            -32600,
            json!(7),
        ),
        // An unknown method, params that do not fit.
        (
            json!({"jsonrpc": "2.0", "id": "3", "method": "SendMessageXXX", "params": {}}),
            -32601,
            json!("3"),
        ),
        (
            json!({"jsonrpc": "2.0", "id": "4", "method": "SendMessage", "params": {"": "x"}}),
            -32602,
            json!("4"),
        ),
    ];
    for (body, expected, id) in cases {
        let reply = post(app, &key, body.to_string(), Some("1.0")).await;
        assert_eq!(reply.status, StatusCode::OK, "{body}: {}", reply.text);
        assert_eq!(
            reply.body["error"]["code"], expected,
            "{body}: {}",
            reply.text
        );
        assert_eq!(reply.body["id"], id, "{body}: {}", reply.text);
        assert!(reply.body.get("result").is_none(), "{}", reply.text);
    }
    // Not JSON at all: -32700, id null.
    let unclosed = r#"{"jsonrpc": "2.0", "method": "SendMessage", "params": {"a": true"#;
    let reply = post(app, &key, unclosed.to_owned(), Some("1.0")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(
        (
            reply.body["error"]["code"].clone(),
            reply.body["id"].clone()
        ),
        (json!(-32700), Value::Null),
        "{}",
        reply.text
    );
    assert_eq!(
        task_count(app).await,
        before,
        "no malformed request created a task"
    );
}

async fn bad_params_are_refused_and_store_nothing(app: &TestApp) {
    let key = writer_key(app).await;
    let before = task_count(app).await;
    let user = |extra: Value| {
        let mut message = json!({"messageId": "x", "role": "ROLE_USER"});
        message
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"message": message})
    };
    let bad_params = [
        user(json!({"parts": []})),
        json!({"message": {"role": "ROLE_USER", "parts": [{"text": "no id"}]}}),
        json!({"message": {"messageId": "x", "parts": [{"text": "no role"}]}}),
        json!({"message": {"messageId": "x", "role": "ROLE_BOT", "parts": [{"text": "?"}]}}),
        user(json!({"parts": [{"text": "a", "url": "https://e.x"}]})),
        user(json!({"parts": [{"text": "x".repeat(100_001)}]})),
        user(json!({"parts": [{"text": "nul \u{0} inside"}]})),
        user(json!({"contextId": uuid::Uuid::now_v7(), "parts": [{"text": "lost"}]})),
        json!({"message": message("t"), "tenant": "acme"}),
        json!({"message": message("t"), "configuration": {"historyLength": -2}}),
        json!({}),
    ];
    for params in &bad_params {
        let code = error_code(app, &key, "SendMessage", params).await;
        assert_eq!(code, -32602, "{params}");
    }
    assert_eq!(
        error_code(app, &key, "GetTask", &json!({"id": 7})).await,
        -32602
    );
    let raw = user(json!({"parts": [{"raw": "aGk="}]}));
    assert_eq!(error_code(app, &key, "SendMessage", &raw).await, -32005);
    // A push config that may not be set creates no task: a private address, a
    // config naming a task, a bad token.
    for config in [
        json!({"url": "https://127.0.0.1/hook"}),
        json!({"url": "http://hooks.example/in"}),
        json!({"url": "https://hooks.example/in", "taskId": uuid::Uuid::now_v7()}),
        json!({"url": "https://hooks.example/in", "token": "a b"}),
    ] {
        let configuration = json!({"taskPushNotificationConfig": config});
        let push = json!({"message": message("t"), "configuration": configuration});
        assert_eq!(
            error_code(app, &key, "SendMessage", &push).await,
            -32602,
            "{push}"
        );
    }
    for method in [
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    ] {
        let params = json!({"taskId": "x", "id": "c", "url": "https://hooks.example/in"});
        let code = error_code(app, &key, method, &params).await;
        assert_eq!(code, -32001, "{method}");
    }
    assert_eq!(
        task_count(app).await,
        before,
        "no refused request created a task"
    );
}

async fn unknown_tasks_and_missing_rights_are_refused(app: &TestApp) {
    let key = writer_key(app).await;
    let before = task_count(app).await;
    let missing = uuid::Uuid::now_v7().to_string();
    for method in ["GetTask", "CancelTask"] {
        for id in [missing.as_str(), "not-a-uuid"] {
            let code = error_code(app, &key, method, &json!({"id": id})).await;
            assert_eq!(code, -32001, "{method} {id}");
        }
    }
    // Subscribing to an unknown task asked for a stream: its error is the stream's one
    // event (as the A2A TCK expects).
    for id in [missing.as_str(), "not-a-uuid"] {
        let code = stream_error_code(app, &key, "SubscribeToTask", &json!({"id": id})).await;
        assert_eq!(code, -32001, "SubscribeToTask {id}");
    }
    let reply = json!({"message": {"messageId": "x", "role": "ROLE_USER", "taskId": missing,
                                   "parts": [{"text": "hi"}]}});
    assert_eq!(error_code(app, &key, "SendMessage", &reply).await, -32001);
    // A read-only key may read but not create.
    let admin = app.admin_token(&app.org).await;
    let reader = app.api_key(&admin, &["read"]).await;
    let params = json!({"message": message("no")});
    assert_eq!(
        error_code(app, &reader, "SendMessage", &params).await,
        -32040
    );
    assert!(result(app, &reader, "ListTasks", &json!({})).await["tasks"].is_array());
    // No credentials: the API's 401.
    let anonymous = send(
        app.anonymous(Method::POST, "/a2a/jsonrpc")
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .body(request("ListTasks", &json!({}))),
    )
    .await;
    assert_eq!(
        anonymous.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        anonymous.text
    );
    assert_eq!(
        task_count(app).await,
        before,
        "no refused request created a task"
    );
}

async fn a_version_refusal_lets_the_idempotency_key_go(app: &TestApp) {
    let key = writer_key(app).await;
    let before = task_count(app).await;
    let idempotency = uuid::Uuid::now_v7().to_string();
    let body = json!({"message": message("Once")});
    let path = "/a2a/rest/message:send";
    let unversioned = send(
        app.bearer(&key, Method::POST, path, None)
            .header("Idempotency-Key", &idempotency)
            .json(&body),
    )
    .await;
    assert_eq!(
        unversioned.status,
        StatusCode::BAD_REQUEST,
        "{}",
        unversioned.text
    );
    let mut created = Vec::new();
    for _ in 0..2 {
        let reply = send(
            crate::a2a::rest(app, &key, Method::POST, path)
                .header("Idempotency-Key", &idempotency)
                .json(&body),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        created.push(str_of(&reply.body["task"], "id"));
    }
    assert_eq!(created[0], created[1], "the retry is answered from the key");
    assert_eq!(task_count(app).await, before + 1, "one task for one key");
}
