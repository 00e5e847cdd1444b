//! A2A streams: `SendStreamingMessage` follows the task it created until it closes or
//! waits for the client; `SubscribeToTask` until it closes. Both bindings, live changes
//! made through the API.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::a2a::{message, request, rest, result, stream_error_code, writer_key};
use crate::events_stream::Sse;
use crate::helpers::{TestApp, send, str_of};
use crate::task_support::walk;

api_tests!(with crate::events_stream::quick();
    a_stream_follows_the_task_until_it_is_the_clients_turn,
    a_subscription_ends_when_the_task_closes,
    every_move_is_streamed_in_order_however_quick,
);

/// One stream at most per instance.
mod bounded {
    use super::a_full_house_refuses_a_stream_before_it_creates_a_task;

    api_tests!(with muster_http::StreamOptions {
        max_streams: 1,
        ..crate::events_stream::quick()
    };
        a_full_house_refuses_a_stream_before_it_creates_a_task,
    );
}

/// Opens a stream with a JSON-RPC request, asserting it opened.
async fn open_rpc_stream(app: &TestApp, token: &str, method: &str, params: &Value) -> Sse {
    let response = app
        .bearer(token, Method::POST, "/a2a/jsonrpc", None)
        .header("A2A-Version", "1.0")
        .header("content-type", "application/json")
        .body(request(method, params))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    Sse::new(response)
}

/// The stream's next event's result (a JSON-RPC response to `r-1`).
async fn next_result(sse: &mut Sse) -> Value {
    let event = sse.event().await.json();
    assert_eq!(event["id"], "r-1", "{event}");
    event["result"].clone()
}

async fn a_stream_follows_the_task_until_it_is_the_clients_turn(app: &TestApp) {
    let key = writer_key(app).await;
    let params = json!({"message": message("Stream me")});
    let mut sse = open_rpc_stream(app, &key, "SendStreamingMessage", &params).await;
    let first = next_result(&mut sse).await;
    let id = str_of(&first["task"], "id");
    assert_eq!(first["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
    walk(app, &app.org.hr, &id, &["in_progress"]).await;
    let working = next_result(&mut sse).await;
    assert_eq!(working["statusUpdate"]["taskId"], id.as_str());
    assert_eq!(working["statusUpdate"]["contextId"], id.as_str());
    assert_eq!(
        working["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    walk(app, &app.org.hr, &id, &["blocked"]).await;
    let blocked = next_result(&mut sse).await;
    assert_eq!(
        blocked["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    let note = blocked["statusUpdate"]["status"]["message"]["parts"][0]["text"].as_str();
    assert!(note.unwrap().contains("blocked"), "{blocked}");
    walk(app, &app.org.hr, &id, &["in_progress", "done"]).await;
    // Back to plain working, then completed; the stream ends there.
    let mut last = Value::Null;
    while let Some(frame) = sse.frame(Duration::from_secs(10)).await {
        if frame.data.is_some() {
            last = frame.json()["result"].clone();
        }
    }
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    // Over REST, the bare events; a task that waits for its approval ends the stream.
    let body = json!({"message": message("Approve me")});
    let response = rest(app, &key, Method::POST, "/a2a/rest/message:stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut sse = Sse::new(response);
    let first = sse.event().await.json();
    let id = str_of(&first["task"], "id");
    // A2A sends create no approval, and no route sets one on an existing task: as stored.
    crate::stored::change_task(app, &id, |t| t.approval_required = true).await;
    walk(app, &app.org.hr, &id, &["in_progress", "review"]).await;
    let mut states = Vec::new();
    while let Some(frame) = sse.frame(Duration::from_secs(10)).await {
        if frame.data.is_some() {
            states.push(str_of(&frame.json()["statusUpdate"]["status"], "state"));
        }
    }
    assert_eq!(
        states.last().map(String::as_str),
        Some("TASK_STATE_INPUT_REQUIRED"),
        "{states:?}"
    );
}

async fn a_subscription_ends_when_the_task_closes(app: &TestApp) {
    let key = writer_key(app).await;
    let sent = result(
        app,
        &key,
        "SendMessage",
        &json!({"message": message("Watch me")}),
    )
    .await;
    let id = str_of(&sent["task"], "id");
    let mut sse = open_rpc_stream(app, &key, "SubscribeToTask", &json!({"id": id})).await;
    let first = next_result(&mut sse).await;
    assert_eq!(first["task"]["id"], id.as_str());
    assert!(
        first["task"]["history"].is_array(),
        "the snapshot carries the history"
    );
    let reply = send(
        app.bearer(
            &key,
            Method::POST,
            &format!("/a2a/rest/tasks/{id}:cancel"),
            None,
        )
        .header("A2A-Version", "1.0"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let canceled = next_result(&mut sse).await;
    assert_eq!(
        canceled["statusUpdate"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    assert!(
        sse.frame(Duration::from_secs(10)).await.is_none(),
        "the stream ends"
    );
    // A closed task has nothing to stream: the stream is its error, and ends.
    assert_eq!(
        stream_error_code(app, &key, "SubscribeToTask", &json!({"id": id})).await,
        -32004
    );
    let rest_reply = send(rest(
        app,
        &key,
        Method::GET,
        &format!("/a2a/rest/tasks/{id}:subscribe"),
    ))
    .await;
    assert_eq!(
        rest_reply.status,
        StatusCode::BAD_REQUEST,
        "{}",
        rest_reply.text
    );
    assert_eq!(
        rest_reply.body["error"]["details"][0]["reason"],
        "UNSUPPORTED_OPERATION"
    );
}

async fn every_move_is_streamed_in_order_however_quick(app: &TestApp) {
    let key = writer_key(app).await;
    let params = json!({"message": message("Quick moves")});
    let mut sse = open_rpc_stream(app, &key, "SendStreamingMessage", &params).await;
    let first = next_result(&mut sse).await;
    let id = str_of(&first["task"], "id");
    // A claim (assigned and claimed events, then the move), a comment (no move) between
    // moves, all at once: each move is sent once, in order.
    let claimed = app.post(&app.org.hr, "/tasks/claim", "{}").await;
    assert_eq!(claimed.data()["id"], id.as_str(), "{}", claimed.text);
    walk(app, &app.org.hr, &id, &["blocked"]).await;
    let comment = json!({"body": "unblocked soon"}).to_string();
    let said = app
        .post(&app.org.hr, &format!("/tasks/{id}/comments"), &comment)
        .await;
    assert_eq!(said.status, StatusCode::OK, "{}", said.text);
    walk(app, &app.org.hr, &id, &["in_progress", "review", "done"]).await;
    let mut seen = Vec::new();
    while let Some(frame) = sse.frame(Duration::from_secs(10)).await {
        if frame.data.is_some() {
            let status = frame.json()["result"]["statusUpdate"]["status"].clone();
            let note = status["message"]["parts"][0]["text"].as_str().map(|text| {
                ["blocked", "review"]
                    .into_iter()
                    .find(|word| text.contains(word))
                    .unwrap_or(text)
                    .to_owned()
            });
            seen.push((str_of(&status, "state"), note));
        }
    }
    let working = "TASK_STATE_WORKING".to_owned();
    assert_eq!(
        seen,
        [
            (working.clone(), None),
            (working.clone(), Some("blocked".to_owned())),
            (working.clone(), None),
            (working, Some("review".to_owned())),
            ("TASK_STATE_COMPLETED".to_owned(), None),
        ]
    );
}

async fn a_full_house_refuses_a_stream_before_it_creates_a_task(app: &TestApp) {
    let key = writer_key(app).await;
    let sent = result(
        app,
        &key,
        "SendMessage",
        &json!({"message": message("Hold")}),
    )
    .await;
    let id = str_of(&sent["task"], "id");
    let mut held = open_rpc_stream(app, &key, "SubscribeToTask", &json!({"id": id})).await;
    assert_eq!(next_result(&mut held).await["task"]["id"], id.as_str());
    let before = crate::a2a::task_count(app).await;
    let params = json!({"message": message("No room")});
    assert_eq!(
        stream_error_code(app, &key, "SendStreamingMessage", &params).await,
        -32042
    );
    let over_rest =
        send(rest(app, &key, Method::POST, "/a2a/rest/message:stream").json(&params)).await;
    assert_eq!(
        over_rest.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        over_rest.text
    );
    assert_eq!(
        over_rest.body["error"]["details"][0]["reason"],
        "RESOURCE_EXHAUSTED"
    );
    assert_eq!(
        crate::a2a::task_count(app).await,
        before,
        "a refused stream created no task"
    );
    drop(held);
}
