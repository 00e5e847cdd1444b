//! A2A v1.0: the Agent Card, and both bindings (JSON-RPC at `/a2a/jsonrpc`, HTTP+JSON
//! under `/a2a/rest`) spoken as an A2A client speaks them: messages become tasks and
//! comments, tasks are read, canceled and kept to their organization. Lists, the REST
//! binding, streams and refusals have files of their own (`a2a_*.rs`).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{TestApp, send, str_of};
use crate::stored::add_capability;

api_tests!(with crate::events_stream::quick();
    the_agent_card_is_public_and_names_both_bindings,
    a_message_becomes_a_task_and_a_reply_a_comment,
    cancel_closes_a_task_once,
    other_organizations_tasks_are_not_found,
    results_are_artifacts_and_outcomes_final_states,
);

pub(crate) fn message(text: &str) -> Value {
    json!({"messageId": uuid::Uuid::now_v7().to_string(), "role": "ROLE_USER",
           "parts": [{"text": text}]})
}

pub(crate) fn request(method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": "r-1", "method": method, "params": params}).to_string()
}

/// One JSON-RPC request with a bearer token and `A2A-Version: 1.0`, answered 200.
pub(crate) async fn rpc(app: &TestApp, token: &str, method: &str, params: &Value) -> Value {
    let reply = send(
        app.bearer(token, Method::POST, "/a2a/jsonrpc", None)
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .body(request(method, params)),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["jsonrpc"], "2.0", "{}", reply.text);
    assert_eq!(reply.body["id"], "r-1", "{}", reply.text);
    reply.body
}

/// The result of a request that succeeds.
pub(crate) async fn result(app: &TestApp, token: &str, method: &str, params: &Value) -> Value {
    let body = rpc(app, token, method, params).await;
    assert!(body.get("error").is_none(), "{body}");
    body["result"].clone()
}

/// The error code of a request that fails, checking its `ErrorInfo` reason is there.
pub(crate) async fn error_code(app: &TestApp, token: &str, method: &str, params: &Value) -> i64 {
    let body = rpc(app, token, method, params).await;
    rpc_error_code(&body)
}

/// The error code of a streaming request that fails: answered 200 as a stream of one
/// `error` event, the JSON-RPC error response (its `ErrorInfo` reason there), which
/// then ends.
pub(crate) async fn stream_error_code(
    app: &TestApp,
    token: &str,
    method: &str,
    params: &Value,
) -> i64 {
    let response = app
        .bearer(token, Method::POST, "/a2a/jsonrpc", None)
        .header("A2A-Version", "1.0")
        .header("content-type", "application/json")
        .body(request(method, params))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut sse = crate::events_stream::Sse::new(response);
    let frame = sse.event().await;
    assert_eq!(frame.event.as_deref(), Some("error"), "{frame:?}");
    let body = frame.json();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["id"], "r-1", "{body}");
    let ends = sse.frame(std::time::Duration::from_secs(10)).await;
    assert!(ends.is_none(), "the stream ends after its error: {ends:?}");
    rpc_error_code(&body)
}

/// The code of a JSON-RPC error response, checking its `ErrorInfo` reason is there.
fn rpc_error_code(body: &Value) -> i64 {
    let error = &body["error"];
    assert!(body.get("result").is_none(), "{body}");
    assert_eq!(
        error["data"][0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
        "{body}"
    );
    assert!(error["data"][0]["reason"].is_string(), "{body}");
    assert!(!error["message"].as_str().unwrap().is_empty(), "{body}");
    error["code"].as_i64().unwrap()
}

pub(crate) async fn writer_key(app: &TestApp) -> String {
    let admin = app.admin_token(&app.org).await;
    app.api_key(&admin, &["read", "write"]).await
}

/// A REST request with a bearer token and the version header.
pub(crate) fn rest(
    app: &TestApp,
    token: &str,
    method: Method,
    path: &str,
) -> reqwest::RequestBuilder {
    app.bearer(token, method, path, None)
        .header("A2A-Version", "1.0")
}

pub(crate) async fn task_count(app: &TestApp) -> usize {
    let reply = app.get(&app.org.hr, "/tasks?limit=500").await;
    reply.data().as_array().unwrap().len()
}

async fn the_agent_card_is_public_and_names_both_bindings(app: &TestApp) {
    let reply = send(app.anonymous(Method::GET, "/.well-known/agent-card.json")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let card = reply.body;
    assert_eq!(card["name"], "Muster");
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    let urls: Vec<(&str, &str, &str)> = interfaces
        .iter()
        .map(|i| {
            (
                i["url"].as_str().unwrap(),
                i["protocolBinding"].as_str().unwrap(),
                i["protocolVersion"].as_str().unwrap(),
            )
        })
        .collect();
    let jsonrpc = app.url("/a2a/jsonrpc");
    let restful = app.url("/a2a/rest");
    assert_eq!(
        urls,
        [
            (jsonrpc.as_str(), "JSONRPC", "1.0"),
            (restful.as_str(), "HTTP+JSON", "1.0")
        ]
    );
    // The same for everyone: it names the configured public URL or the listening
    // address, so nothing varies it (see `forwarded_headers`).
    assert!(reply.headers.get("vary").is_none(), "{:?}", reply.headers);
    // Forwarding headers any client can send do not move the addresses, nor make them
    // https.
    let forwarded = send(
        app.anonymous(Method::GET, "/.well-known/agent-card.json")
            .header("x-forwarded-host", "evil.example")
            .header("forwarded", "host=evil.example;proto=https")
            .header("x-forwarded-proto", "https"),
    )
    .await;
    let url = forwarded.body["supportedInterfaces"][0]["url"]
        .as_str()
        .unwrap();
    assert_eq!(url, jsonrpc, "{}", forwarded.text);
    // Nor does the Host, plain or not: the card names the server's own address.
    for odd in [
        "evil.example",
        "evil.example/phish",
        "user@evil.example",
        "evil.example?x=1",
    ] {
        let reply = send(
            app.anonymous(Method::GET, "/.well-known/agent-card.json")
                .header("host", odd),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{odd}: {}", reply.text);
        let url = reply.body["supportedInterfaces"][0]["url"]
            .as_str()
            .unwrap();
        assert_eq!(url, jsonrpc, "{odd}");
    }
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"bearer": {}}}])
    );
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        skills,
        ["task-intake"],
        "the public card names no capability"
    );
    // The extended card lists the organization's capabilities, and only its own.
    add_capability(app, &app.org.hr, "rust", "expert").await;
    add_capability(app, &app.other.hr, "cobol", "expert").await;
    let key = writer_key(app).await;
    let extended = result(app, &key, "GetExtendedAgentCard", &json!({})).await;
    let ids: Vec<&str> = extended["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["task-intake", "capability:rust"]);
    let by_rest = send(rest(app, &key, Method::GET, "/a2a/rest/extendedAgentCard")).await;
    assert_eq!(by_rest.status, StatusCode::OK, "{}", by_rest.text);
    assert_eq!(by_rest.body, extended);
    assert_eq!(by_rest.headers["content-type"], "application/a2a+json");
}

async fn a_message_becomes_a_task_and_a_reply_a_comment(app: &TestApp) {
    let key = writer_key(app).await;
    let first = message("Fix the login page\nIt times out after 30 s.");
    let sent = result(
        app,
        &key,
        "SendMessage",
        &json!({"message": first, "configuration": {}}),
    )
    .await;
    let task = &sent["task"];
    let id = str_of(task, "id");
    assert_eq!(
        task["contextId"],
        id.as_str(),
        "a task without parent is its own context"
    );
    assert_eq!(task["status"]["state"], "TASK_STATE_SUBMITTED");
    assert!(task["status"]["timestamp"].is_string());
    assert_eq!(task["history"][0]["messageId"], first["messageId"]);
    assert_eq!(task["history"][0]["role"], "ROLE_USER");
    assert_eq!(task["metadata"]["muster"]["status"], "todo");
    // It is a Muster task like any other, with its origin in its metadata.
    let stored = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    let stored = stored.data();
    assert_eq!(stored["title"], "Fix the login page");
    assert_eq!(
        stored["description"],
        "Fix the login page\nIt times out after 30 s."
    );
    assert_eq!(stored["metadata"]["source"], "a2a");
    assert_eq!(stored["metadata"]["a2aMessageId"], first["messageId"]);
    // A message naming the task is a comment on it, and joins the history.
    let reply = json!({"messageId": "m-2", "role": "ROLE_USER", "taskId": id,
                       "contextId": id, "parts": [{"text": "Any news?"}]});
    let answered = result(app, &key, "SendMessage", &json!({"message": reply})).await;
    let history = answered["task"]["history"].as_array().unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1]["parts"][0]["text"], "Any news?");
    assert_eq!(
        history[1]["role"], "ROLE_USER",
        "the task's creator speaks as the user"
    );
    // The agent doing the work answers as the agent.
    let comment = json!({"body": "Looking into it"}).to_string();
    let reply = app
        .post(&app.org.hr, &format!("/tasks/{id}/comments"), &comment)
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let read = result(app, &key, "GetTask", &json!({"id": id})).await;
    let history = read["history"].as_array().unwrap();
    assert_eq!(history.len(), 3);
    assert_eq!(history[2]["role"], "ROLE_AGENT");
    let last_one = result(app, &key, "GetTask", &json!({"id": id, "historyLength": 1})).await;
    assert_eq!(last_one["history"].as_array().unwrap().len(), 1);
    assert_eq!(
        last_one["history"][0]["parts"][0]["text"],
        "Looking into it"
    );
    let none = result(app, &key, "GetTask", &json!({"id": id, "historyLength": 0})).await;
    assert!(none.get("history").is_none(), "{none}");
    // A message in the task's context without taskId is a sub-task.
    let child = json!({"messageId": "m-3", "role": "ROLE_USER", "contextId": id,
                       "parts": [{"text": "Add a regression test"}]});
    let sub = result(app, &key, "SendMessage", &json!({"message": child})).await;
    assert_eq!(sub["task"]["contextId"], id.as_str());
    let sub_id = str_of(&sub["task"], "id");
    let stored = app.get(&app.org.hr, &format!("/tasks/{sub_id}")).await;
    assert_eq!(stored.data()["parentTaskId"], id.as_str());
    // Audited as the key's user, as any change.
    let events = app.events_of(&app.org.hr, &id).await;
    assert!(
        events.iter().any(|e| e["type"] == "task.created"),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| e["type"] == "task.commented"),
        "{events:?}"
    );
    // An agent signs A2A requests as it signs the API's.
    let signed = send(
        app.signed(
            &app.org.hr,
            Method::POST,
            "/a2a/jsonrpc",
            Some(&request("GetTask", &json!({"id": id, "historyLength": 0}))),
        )
        .header("A2A-Version", "1.0"),
    )
    .await;
    assert_eq!(signed.body["result"]["id"], id.as_str(), "{}", signed.text);
}

async fn cancel_closes_a_task_once(app: &TestApp) {
    let key = writer_key(app).await;
    let sent = result(
        app,
        &key,
        "SendMessage",
        &json!({"message": message("Drop me")}),
    )
    .await;
    let id = str_of(&sent["task"], "id");
    let canceled = result(app, &key, "CancelTask", &json!({"id": id})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let stored = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    assert_eq!(stored.data()["status"], "cancelled");
    assert_eq!(
        error_code(app, &key, "CancelTask", &json!({"id": id})).await,
        -32002
    );
    // A closed task takes no more messages.
    let late = json!({"messageId": "late", "role": "ROLE_USER", "taskId": id,
                      "parts": [{"text": "wait"}]});
    assert_eq!(
        error_code(app, &key, "SendMessage", &json!({"message": late})).await,
        -32004
    );
    let comments = app.get(&app.org.hr, &format!("/tasks/{id}/comments")).await;
    assert_eq!(comments.data(), &json!([]));
}

async fn other_organizations_tasks_are_not_found(app: &TestApp) {
    let key = writer_key(app).await;
    let theirs = app.task_titled(&app.other.hr, "Not yours").await;
    for method in ["GetTask", "CancelTask"] {
        assert_eq!(
            error_code(app, &key, method, &json!({"id": theirs})).await,
            -32001,
            "{method}"
        );
    }
    assert_eq!(
        stream_error_code(app, &key, "SubscribeToTask", &json!({"id": theirs})).await,
        -32001
    );
    let reply = json!({"message": {"messageId": "x", "role": "ROLE_USER", "taskId": theirs, "parts": [{"text": "hi"}]}});
    assert_eq!(error_code(app, &key, "SendMessage", &reply).await, -32001);
    let context = json!({"message": {"messageId": "x", "role": "ROLE_USER", "contextId": theirs, "parts": [{"text": "hi"}]}});
    assert_eq!(error_code(app, &key, "SendMessage", &context).await, -32602);
    // Their task has a sub-task: its context lists nothing for us.
    let sub = json!({"title": "Their sub-task", "parentTaskId": theirs});
    app.create_task(&app.other.hr, &sub).await;
    let listed = result(app, &key, "ListTasks", &json!({"contextId": theirs})).await;
    assert_eq!(listed["totalSize"], 0);
    assert_eq!(listed["tasks"], json!([]));
    let all = result(app, &key, "ListTasks", &json!({})).await;
    let ids: Vec<&Value> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["id"])
        .collect();
    assert!(!ids.contains(&&json!(theirs)));
    let stored = app.get(&app.other.hr, &format!("/tasks/{theirs}")).await;
    assert_eq!(stored.data()["status"], "todo", "untouched");
    let comments = app
        .get(&app.other.hr, &format!("/tasks/{theirs}/comments"))
        .await;
    assert_eq!(comments.data(), &json!([]));
}

async fn results_are_artifacts_and_outcomes_final_states(app: &TestApp) {
    let key = writer_key(app).await;
    let hr = &app.org.hr;
    let mut ids = Vec::new();
    for title in ["Will fail", "Will be turned down", "Just dropped"] {
        ids.push(app.task_titled(hr, title).await);
    }
    let working = json!({"status": "in_progress", "result": "Half way"}).to_string();
    let moved = app.transition(hr, &ids[0], &working).await;
    assert_eq!(moved.data()["result"], "Half way", "{}", moved.text);
    assert!(moved.data().get("outcome").is_none(), "{}", moved.text);
    let failed = json!({"status": "cancelled", "outcome": "failed", "result": "It crashed"});
    let moved = app.transition(hr, &ids[0], &failed.to_string()).await;
    assert_eq!(moved.data()["outcome"], "failed", "{}", moved.text);
    assert_eq!(moved.data()["result"], "It crashed");
    let rejected = json!({"status": "cancelled", "outcome": "rejected"}).to_string();
    app.transition(hr, &ids[1], &rejected).await;
    app.transition(hr, &ids[2], r#"{"status":"cancelled"}"#)
        .await;

    let task = result(app, &key, "GetTask", &json!({"id": ids[0]})).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED");
    assert_eq!(
        task["artifacts"],
        json!([{"artifactId": "result", "name": "Result", "parts": [{"text": "It crashed"}]}])
    );
    let task = result(app, &key, "GetTask", &json!({"id": ids[1]})).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_REJECTED");
    assert!(task.get("artifacts").is_none(), "{task}");
    for (state, id) in [
        ("TASK_STATE_FAILED", &ids[0]),
        ("TASK_STATE_REJECTED", &ids[1]),
        ("TASK_STATE_CANCELED", &ids[2]),
    ] {
        let listed = result(app, &key, "ListTasks", &json!({"status": state})).await;
        let tasks = listed["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 1, "{state}: {listed}");
        assert_eq!(tasks[0]["id"], json!(id));
        assert!(
            tasks[0].get("artifacts").is_none(),
            "no artifacts unless asked"
        );
    }
    let with = json!({"status": "TASK_STATE_FAILED", "includeArtifacts": true});
    let listed = result(app, &key, "ListTasks", &with).await;
    assert_eq!(listed["tasks"][0]["artifacts"][0]["artifactId"], "result");
}
