//! Remote A2A agents (`POST /agents/remote`): an outside agent registered from its card
//! stands as an agent of the organization; a task assigned to it is handed over as a
//! JSON-RPC `SendMessage` with a push config back to Muster, and the agent's pushes move
//! the task through the transition rules, as the agent. A loopback receiver plays a
//! scripted remote agent (to see the wire); a second Muster instance plays a real one.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::a2a::writer_key;
use crate::helpers::{Reply, TestApp, send, spawn_app_with, str_of};
use crate::hook_receiver::{Answer, Receiver};
use crate::task_support::walk;
use crate::webhook_support::loopback_hooks;

api_tests!(with crate::webhook_support::loopback_hooks();
    a_task_assigned_to_a_remote_agent_is_sent_with_a_push_config_back,
    an_assignment_hands_over_and_a_failure_cancels_with_its_outcome,
    a_refused_hand_over_is_retried,
    pushes_need_the_tasks_token_and_its_assignment,
    registering_needs_an_admin_and_a_readable_card,
    another_muster_works_the_task_and_its_updates_move_ours,
);

const WAIT: Duration = Duration::from_secs(15);

/// A card whose JSON-RPC endpoint is `/rpc` on the receiver.
fn card(receiver: &Receiver) -> String {
    json!({
        "name": "Translator Bot",
        "description": "Translates documents",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": receiver.url("/rest"), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": receiver.url("/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"pushNotifications": true},
        "skills": [{"id": "translate", "name": "Translate", "description": "", "tags": []}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"]
    })
    .to_string()
}

/// A JSON-RPC answer with a submitted task.
fn accepted() -> Answer {
    Answer::json(
        &json!({"jsonrpc": "2.0", "id": "x", "result": {"task": {
            "id": "remote-1", "contextId": "ctx-1",
            "status": {"state": "TASK_STATE_SUBMITTED"}}}})
        .to_string(),
    )
}

async fn register(app: &TestApp, token: &str, body: &Value) -> Reply {
    send(app.bearer(token, Method::POST, "/agents/remote", Some(body))).await
}

/// Registers the receiver's agent as the org's admin; the agent's id.
async fn register_fake(app: &TestApp, receiver: &Receiver) -> String {
    receiver.script([Answer::json(&card(receiver))]);
    let admin = app.admin_token(&app.org).await;
    let reply = register(
        app,
        &admin,
        &json!({"cardUrl": receiver.url("/card"),
                "authentication": {"scheme": "Bearer", "credentials": "remote-cred"}}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    str_of(&reply.body["data"], "id")
}

/// Waits until the task's status is `status`; the task.
async fn wait_for_status(app: &TestApp, id: &str, status: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let reply = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
        let task = reply.data().clone();
        if task["status"] == status || tokio::time::Instant::now() >= deadline {
            assert_eq!(task["status"], status, "{task}");
            return task;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A push to Muster as the remote agent would send it.
async fn push(app: &TestApp, url: &str, token: Option<&str>, body: &Value) -> Reply {
    let mut request = app
        .client
        .post(url)
        .header("content-type", "application/a2a+json")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.header("x-a2a-notification-token", token);
    }
    send(request).await
}

fn status_update(state: &str, text: Option<&str>) -> Value {
    let mut status = json!({"state": state, "timestamp": "2026-11-27T10:00:00Z"});
    if let Some(text) = text {
        status["message"] = json!({"messageId": "m-1", "role": "ROLE_AGENT",
                                   "parts": [{"text": text}]});
    }
    json!({"statusUpdate": {"taskId": "remote-1", "contextId": "ctx-1", "status": status}})
}

/// The agent is an active worker named and skilled after the card; its channel is not
/// one of the organization's webhooks.
async fn stands_for_the_card(app: &TestApp, agent: &str, receiver: &Receiver) {
    let shown = app.get(&app.org.hr, &format!("/agents/{agent}")).await;
    let shown = shown.data();
    assert_eq!(shown["status"], "active");
    assert_eq!(shown["mode"], "worker");
    assert_eq!(shown["name"], "Translator Bot");
    assert_eq!(shown["metadata"]["source"], "a2a");
    assert_eq!(shown["metadata"]["endpoint"], receiver.url("/rpc"));
    assert_eq!(
        shown["capabilities"][0]["capability"], "translate",
        "{shown}"
    );
    let admin = app.admin_token(&app.org).await;
    let hooks = send(app.bearer(&admin, Method::GET, "/api/v1/webhooks", None)).await;
    assert_eq!(hooks.list().len(), 0, "{}", hooks.text);
}

async fn a_task_assigned_to_a_remote_agent_is_sent_with_a_push_config_back(app: &TestApp) {
    let receiver = Receiver::start();
    let agent = register_fake(app, &receiver).await;
    stands_for_the_card(app, &agent, &receiver).await;

    receiver.always(accepted());
    let created = app
        .create_task(
            &app.org.hr,
            &json!({"title": "Translate the manual", "description": "Into French.",
                    "assigneeId": agent}),
        )
        .await;
    let id = str_of(&created, "id");
    let got = receiver.wait_for(2, WAIT).await;
    assert_eq!(got.len(), 2, "the card, then one hand-over");
    let call = &got[1];
    assert_eq!(call.path, "/rpc");
    assert_eq!(call.header("content-type"), Some("application/json"));
    assert_eq!(call.header("a2a-version"), Some("1.0"));
    assert_eq!(call.header("authorization"), Some("Bearer remote-cred"));
    let body = call.json();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["method"], "SendMessage");
    assert!(body["id"].is_string());
    let message = &body["params"]["message"];
    assert_eq!(message["role"], "ROLE_USER");
    assert_eq!(message["messageId"], body["id"]);
    assert_eq!(
        message["parts"][0]["text"],
        "Translate the manual\n\nInto French."
    );
    assert_eq!(message["metadata"]["musterTaskId"], json!(id));
    let config = &body["params"]["configuration"]["taskPushNotificationConfig"];
    let url = str_of(config, "url");
    assert_eq!(
        url,
        app.url(&format!("/a2a/remote/{agent}/tasks/{id}/push"))
    );
    let token = str_of(config, "token");
    assert_eq!(token.len(), 64);

    // The agent works the task: it moves, as the agent.
    let reply = push(
        app,
        &url,
        Some(&token),
        &status_update("TASK_STATE_WORKING", Some("on it")),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["status"], "in_progress");
    let events = app.events_of(&app.org.hr, &id).await;
    let moved = events
        .iter()
        .find(|e| e["type"] == "task.transitioned")
        .unwrap_or_else(|| panic!("a move: {events:?}"));
    assert_eq!(moved["actorId"], json!(agent), "{moved}");
    assert_eq!(
        moved["payload"]["reason"],
        "the remote agent reported working: on it"
    );
    // A v0.3 agent pushes the bare task with short state names: taken the same.
    let reply = push(
        app,
        &url,
        Some(&token),
        &json!({"id": "remote-1", "kind": "task", "status": {"state": "input-required"}}),
    )
    .await;
    assert_eq!(reply.body["status"], "blocked", "{}", reply.text);
    // An artifact update reports no state: taken, nothing moves.
    let reply = push(app, &url, Some(&token), &json!({"artifactUpdate": {}})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(reply.body.get("status").is_none());
    // Completed: along the legal path to done, the status message as the result.
    let reply = push(
        app,
        &url,
        Some(&token),
        &status_update("TASK_STATE_COMPLETED", Some("Voilà: le manuel.")),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let done = wait_for_status(app, &id, "done").await;
    assert_eq!(done["result"], "Voilà: le manuel.");
    // A closed task stays closed.
    let reply = push(
        app,
        &url,
        Some(&token),
        &status_update("TASK_STATE_WORKING", None),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["status"], "done");
    assert_eq!(reply.body["held"], "the task is already closed");
}

/// An assignment (not a creation) hands a task over too; a failure cancels it with that
/// outcome.
async fn an_assignment_hands_over_and_a_failure_cancels_with_its_outcome(app: &TestApp) {
    let receiver = Receiver::start();
    let agent = register_fake(app, &receiver).await;
    receiver.always(accepted());
    let other = app.task_titled(&app.org.hr, "Summarise the minutes").await;
    let assigned = app
        .post(
            &app.org.hr,
            &format!("/tasks/{other}/assign"),
            &json!({"assigneeId": agent}).to_string(),
        )
        .await;
    assert_eq!(assigned.status, 200, "{}", assigned.text);
    let got = receiver.wait_for(2, WAIT).await;
    assert_eq!(got.len(), 2, "the card, then the hand-over");
    let config = got[1].json()["params"]["configuration"]["taskPushNotificationConfig"].clone();
    let reply = push(
        app,
        &str_of(&config, "url"),
        Some(&str_of(&config, "token")),
        &status_update("TASK_STATE_FAILED", Some("cannot read the file")),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let failed = wait_for_status(app, &other, "cancelled").await;
    assert_eq!(failed["outcome"], "failed", "{failed}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), 2, "nothing handed over twice");
}

async fn a_refused_hand_over_is_retried(app: &TestApp) {
    let receiver = Receiver::start();
    let agent = register_fake(app, &receiver).await;
    receiver.script([Answer::json(
        &json!({"jsonrpc": "2.0", "id": "x",
                "error": {"code": -32603, "message": "busy, try later"}})
        .to_string(),
    )]);
    receiver.always(accepted());
    let id = str_of(
        &app.create_task(
            &app.org.hr,
            &json!({"title": "Retry me", "assigneeId": agent}),
        )
        .await,
        "id",
    );
    let got = receiver.wait_for(3, WAIT).await;
    assert_eq!(got.len(), 3, "the card, a refused hand-over, its retry");
    assert_eq!(got[1].body, got[2].body, "the same request again");
    assert_eq!(
        got[2].json()["params"]["message"]["metadata"]["musterTaskId"],
        json!(id)
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        receiver.received().len(),
        3,
        "the accepted one is not sent again"
    );
}

async fn pushes_need_the_tasks_token_and_its_assignment(app: &TestApp) {
    let receiver = Receiver::start();
    let agent = register_fake(app, &receiver).await;
    receiver.always(accepted());
    let ids: Vec<String> = [
        app.create_task(&app.org.hr, &json!({"title": "First", "assigneeId": agent}))
            .await,
        app.create_task(
            &app.org.hr,
            &json!({"title": "Second", "assigneeId": agent}),
        )
        .await,
    ]
    .iter()
    .map(|t| str_of(t, "id"))
    .collect();
    let got = receiver.wait_for(3, WAIT).await;
    let configs: Vec<Value> = got[1..]
        .iter()
        .map(|r| r.json()["params"]["configuration"]["taskPushNotificationConfig"].clone())
        .collect();
    let (url, token) = (str_of(&configs[0], "url"), str_of(&configs[0], "token"));
    let first = usize::from(!url.contains(&ids[0]));
    let other_token = str_of(&configs[1], "token");
    let working = status_update("TASK_STATE_WORKING", None);

    for token in [None, Some("wrong"), Some(other_token.as_str())] {
        let reply = push(app, &url, token, &working).await;
        assert_eq!(reply.status, 401, "{token:?}: {}", reply.text);
    }
    let reply = push(app, &url, Some(&token), &json!("not an object")).await;
    assert_eq!(reply.status, 400, "{}", reply.text);
    let reply = push(
        app,
        &url,
        Some(&token),
        &status_update("TASK_STATE_DREAMING", None),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.text);
    assert!(reply.text.contains("TASK_STATE_DREAMING"), "{}", reply.text);
    // An unknown agent is a wrong token: nothing is said about which ids exist.
    let unknown = url.replace(&agent, &uuid::Uuid::now_v7().to_string());
    let reply = push(app, &unknown, Some(&token), &working).await;
    assert_eq!(reply.status, 401, "{}", reply.text);
    // A body is judged only once the token holds.
    let reply = push(app, &url, Some("wrong"), &json!("not an object")).await;
    assert_eq!(reply.status, 401, "{}", reply.text);
    let reply = push(app, &url, None, &json!({"artifactUpdate": {}})).await;
    assert_eq!(reply.status, 401, "{}", reply.text);
    let task = &ids[first];
    assert_eq!(
        app.get(&app.org.hr, &format!("/tasks/{task}")).await.data()["status"],
        "todo",
        "refused pushes move nothing"
    );

    // Once the task is someone else's, the remote agent's pushes are refused.
    let assigned = app
        .post(
            &app.org.hr,
            &format!("/tasks/{task}/assign"),
            &json!({"assigneeId": app.org.hr.uuid}).to_string(),
        )
        .await;
    assert_eq!(assigned.status, 200, "{}", assigned.text);
    let reply = push(app, &url, Some(&token), &working).await;
    assert_eq!(reply.status, 409, "{}", reply.text);
    // And from an agent that was suspended.
    let admin = app.admin_token(&app.org).await;
    let suspended = send(app.bearer(
        &admin,
        Method::POST,
        &format!("/agents/{agent}/suspend"),
        Some(&json!({})),
    ))
    .await;
    assert_eq!(suspended.status, 200, "{}", suspended.text);
    let second_url = str_of(&configs[1], "url");
    let reply = push(app, &second_url, Some(&other_token), &working).await;
    assert_eq!(reply.status, 409, "{}", reply.text);
}

async fn registering_needs_an_admin_and_a_readable_card(app: &TestApp) {
    let receiver = Receiver::start();
    let admin = app.admin_token(&app.org).await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let body = json!({"cardUrl": receiver.url("/card")});
    let reply = register(app, &operator, &body).await;
    assert_eq!(reply.status, 403, "{}", reply.text);
    let text = body.to_string();
    let reply = send(app.signed(&app.org.hr, Method::POST, "/agents/remote", Some(&text))).await;
    assert_eq!(
        reply.status, 403,
        "agents do not register remote agents: {}",
        reply.text
    );
    assert!(
        receiver.received().is_empty(),
        "no card read for a refused caller"
    );

    for (answer, why) in [
        (Answer::status(404), "answered 404"),
        (Answer::json("[1]"), "not a JSON object"),
        (
            Answer::json(
                &json!({"name": "x", "supportedInterfaces": [
                {"url": "http://a", "protocolBinding": "GRPC"}]})
                .to_string(),
            ),
            "no A2A 1.0 JSON-RPC interface",
        ),
    ] {
        receiver.script([answer]);
        let reply = register(app, &admin, &body).await;
        assert_eq!(reply.status, 400, "{}", reply.text);
        assert!(reply.text.contains(why), "{why}: {}", reply.text);
    }
    for bad in [
        json!({}),
        json!({"cardUrl": ""}),
        json!({"cardUrl": receiver.url("/card"), "callbackUrl": "ftp://x"}),
        json!({"cardUrl": receiver.url("/card"), "agentId": ""}),
        json!({"cardUrl": receiver.url("/card"), "authentication": {"scheme": "Bear er", "credentials": "x"}}),
        json!({"cardUrl": receiver.url("/card"), "extra": 1}),
    ] {
        let reply = register(app, &admin, &bad).await;
        assert_eq!(reply.status, 400, "{bad}: {}", reply.text);
    }
    // A taken agentId is a conflict, and nothing is left behind.
    receiver.script([Answer::json(&card(&receiver))]);
    let taken = json!({"cardUrl": receiver.url("/card"), "agentId": app.org.hr.handle});
    let reply = register(app, &admin, &taken).await;
    assert_eq!(reply.status, 409, "{}", reply.text);
    // Given an agentId and a callback, both are kept.
    receiver.script([Answer::json(&card(&receiver))]);
    let named = json!({"cardUrl": receiver.url("/card"), "agentId": "translator",
                       "callbackUrl": "https://muster.example.com/"});
    let reply = register(app, &admin, &named).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["data"]["agentId"], "translator");
    assert_eq!(reply.body["callbackUrl"], "https://muster.example.com");
    assert_eq!(reply.body["card"]["endpoint"], receiver.url("/rpc"));
    assert_eq!(reply.body["card"]["skills"], json!(["translate"]));
    assert!(!reply.text.contains("remote-cred"));
}

async fn another_muster_works_the_task_and_its_updates_move_ours(app: &TestApp) {
    let remote = spawn_app_with(app.engine(), loopback_hooks())
        .await
        .expect("the remote instance");
    let key = writer_key(&remote).await;
    let admin = app.admin_token(&app.org).await;
    let reply = register(
        app,
        &admin,
        &json!({"cardUrl": remote.url("/.well-known/agent-card.json"),
                "authentication": {"scheme": "Bearer", "credentials": key}}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["card"]["endpoint"], remote.url("/a2a/jsonrpc"));
    let agent = str_of(&reply.body["data"], "id");
    let id = str_of(
        &app.create_task(
            &app.org.hr,
            &json!({"title": "Check the invoices", "description": "All of March.",
                    "assigneeId": agent}),
        )
        .await,
        "id",
    );
    // The other instance took the task in.
    let deadline = tokio::time::Instant::now() + WAIT;
    let theirs = loop {
        let listed = remote.get(&remote.org.hr, "/tasks?limit=50").await;
        let found = listed
            .list()
            .iter()
            .find(|t| t["title"] == "Check the invoices")
            .cloned();
        if let Some(task) = found {
            break task;
        }
        assert!(tokio::time::Instant::now() < deadline, "never handed over");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        theirs["description"]
            .as_str()
            .unwrap()
            .contains("All of March."),
        "{theirs}"
    );
    let theirs = str_of(&theirs, "id");
    // Its people work it; each move comes back as a push and moves ours.
    walk(&remote, &remote.org.hr, &theirs, &["in_progress"]).await;
    wait_for_status(app, &id, "in_progress").await;
    walk(&remote, &remote.org.hr, &theirs, &["review", "done"]).await;
    wait_for_status(app, &id, "done").await;
    let events = app.events_of(&app.org.hr, &id).await;
    assert!(
        events
            .iter()
            .filter(|e| e["type"] == "task.transitioned")
            .all(|e| e["actorId"] == json!(agent)),
        "every move is the remote agent's: {events:?}"
    );
    remote.stop().await;
}
