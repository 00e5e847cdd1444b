//! `POST /api/v1/webhooks/chat` (decisions D-86, D-88, D-100): off until a token is
//! configured; then every request carries it, messages create tasks in the default
//! organization or as a mapped agent, only mapped authors complete the task a hint names
//! along the legal path, messages are ignored with a reason otherwise, and reach
//! post-hooks through the audit log.

use std::time::Duration;

use muster_persistence::Engine;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{
    Reply, TestApp, WebhookSettings, assert_error, assert_error_exact, send, spawn_app_with, str_of,
};
use crate::hook_receiver::Receiver;
use crate::webhook_support::{loopback_hooks, register};

/// The chat token of these tests.
const CHAT_TOKEN: &str = "chat-token-0123456789";

/// Hooks reach loopback, and chat is on with [`CHAT_TOKEN`].
fn chat_on() -> WebhookSettings {
    WebhookSettings {
        chat_token: Some(CHAT_TOKEN.into()),
        ..loopback_hooks()
    }
}

api_tests!(with crate::chat_integration::chat_on();
    a_prefixed_message_creates_a_task,
    unmapped_authors_create_but_never_complete,
    every_request_needs_the_token,
    bots_are_ignored_unless_mapped,
    odd_bodies_are_refused_or_ignored,
    a_chat_task_reaches_a_post_hook,
);

/// A message as a chat platform sends it, with the fields we do not read.
fn message(author: &str, bot: bool, content: &str) -> Value {
    json!({
        "id": "1180001234567890123",
        "channel_id": "1179999999999999999",
        "guild_id": "1170000000000000000",
        "author": {"id": author, "username": "ada", "discriminator": "0", "bot": bot,
                   "avatar": "a_1b2c", "global_name": "Ada"},
        "content": content,
        "timestamp": "2026-11-23T10:00:00.000000+00:00",
        "edited_timestamp": null,
        "tts": false,
        "mentions": [],
        "attachments": [],
        "embeds": [],
        "type": 0
    })
}

/// `body` posted with the chat token.
async fn chat(app: &TestApp, body: &Value) -> Reply {
    send(
        app.anonymous(Method::POST, "/api/v1/webhooks/chat")
            .header("x-chat-token", CHAT_TOKEN)
            .json(body),
    )
    .await
}

async fn a_prefixed_message_creates_a_task(app: &TestApp) {
    let reply = chat(
        app,
        &message(
            "77",
            false,
            "Morning!\n✅ Task: Renew the TLS certificate ASAP\nthanks",
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let data = reply.data();
    assert_eq!(data["action"], "created");
    assert_eq!(data["reason"], json!(null));
    let id = str_of(data, "taskId");
    let task = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    assert_eq!(task.status, 200, "created in the default organization");
    let task = task.data();
    assert_eq!(task["title"], "Renew the TLS certificate ASAP");
    assert_eq!(task["priority"], "urgent");
    assert_eq!(task["status"], "todo");
    assert_eq!(task["metadata"]["source"], "chat");
    assert_eq!(task["metadata"]["chatAuthorId"], "77");
    let events = app.events_of(&app.org.hr, &id).await;
    assert_eq!(events[0]["type"], "task.created");
    assert_eq!(events[0]["actorId"], json!(null), "the service itself");
}

async fn completion_walks_the_legal_path_to_done(app: &TestApp) {
    let id = app
        .task_titled(&app.org.hr, "Rotate the signing keys")
        .await;
    app.task_titled(&app.org.hr, "Write the rotation runbook")
        .await;
    let reply = chat(
        app,
        &message("42", false, "Completed: rotate the SIGNING keys — done"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    // The hint carries the rest of the line: no exact title, and no title contains it.
    assert_eq!(reply.data()["action"], "ignored");
    let reply = chat(
        app,
        &message("42", false, "All done.\nCompleted: rotate the SIGNING keys"),
    )
    .await;
    assert_eq!(reply.data()["action"], "completed", "{}", reply.text);
    assert_eq!(str_of(reply.data(), "taskId"), id);
    let task = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    assert_eq!(task.data()["status"], "done");
    let events = app.events_of(&app.org.hr, &id).await;
    let moves: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["type"] == "task.transitioned")
        .map(|e| (str_of(&e["payload"], "from"), str_of(&e["payload"], "to")))
        .collect();
    assert_eq!(
        moves,
        [
            ("in_progress".to_owned(), "done".to_owned()),
            ("todo".to_owned(), "in_progress".to_owned())
        ],
        "each step its own transition, newest first"
    );
    assert!(events.iter().any(|e| e["type"] == "task.done"));
    assert!(
        events
            .iter()
            .filter(|e| e["type"] == "task.transitioned")
            .all(|e| e["payload"]["reason"] == "completed from chat")
    );
    // A closed task is never moved again; the contains-rule finds the other one.
    let again = chat(app, &message("42", false, "finished\nCompleted: runbook")).await;
    assert_eq!(again.data()["action"], "completed");
}

async fn completion_stops_where_the_rules_say(app: &TestApp) {
    let hr = &app.org.hr;
    let gated = app
        .create_task(
            hr,
            &json!({"title": "Ship the release", "approvalRequired": true}),
        )
        .await;
    let gated_id = str_of(&gated, "id");
    let reply = chat(
        app,
        &message("42", false, "Completed: ship the release. Done!"),
    )
    .await;
    // "ship the release. Done!" is the hint: not a title. Say it plainly.
    assert_eq!(reply.data()["action"], "ignored");
    let reply = chat(
        app,
        &message("42", false, "done\nCompleted: Ship the release"),
    )
    .await;
    assert_eq!(reply.data()["action"], "ignored", "{}", reply.text);
    assert_eq!(str_of(reply.data(), "taskId"), gated_id);
    assert!(str_of(reply.data(), "reason").contains("approval"));
    let task = app.get(hr, &format!("/tasks/{gated_id}")).await;
    assert_eq!(task.data()["status"], "review", "it stopped at review");

    let first = app.task_titled(hr, "Migrate the database").await;
    let second = app.task_titled(hr, "Switch the traffic").await;
    let reply = app
        .post(
            hr,
            &format!("/tasks/{second}/dependencies"),
            &json!({"dependsOnId": first, "blocking": true}).to_string(),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let reply = chat(
        app,
        &message("42", false, "done\nCompleted: Switch the traffic"),
    )
    .await;
    assert_eq!(reply.data()["action"], "ignored");
    assert!(str_of(reply.data(), "reason").contains("blocking dependency"));
    let task = app.get(hr, &format!("/tasks/{second}")).await;
    assert_eq!(task.data()["status"], "todo", "no move at all");

    let reply = chat(app, &message("42", false, "done\nCompleted: the")).await;
    assert_eq!(
        reply.data()["action"],
        "ignored",
        "several titles contain it"
    );
    let reply = chat(
        app,
        &message("42", false, "Completed: Migrate the database"),
    )
    .await;
    assert_eq!(reply.data()["action"], "ignored", "no completion word");
}

/// An unmapped author may create, but a completion from one changes nothing and its
/// answer is the same whatever the hint names: such an author could read no task.
async fn unmapped_authors_create_but_never_complete(app: &TestApp) {
    let hr = &app.org.hr;
    let gated = app
        .create_task(
            hr,
            &json!({"title": "Pay the contractor", "approvalRequired": true}),
        )
        .await;
    let id = str_of(&gated, "id");
    app.task_titled(hr, "Pay the plumber").await;
    let mut answers = Vec::new();
    for hint in [
        "Pay the contractor",
        "contractor",
        "Pay the",
        "no such task",
    ] {
        let text = format!("All done.\nCompleted: {hint}");
        let reply = chat(app, &message("77", false, &text)).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        answers.push(reply.data().clone());
    }
    for answer in &answers {
        assert_eq!(
            answer,
            &json!({"action": "ignored", "taskId": null,
                    "reason": "only chat authors mapped to an agent may complete tasks"})
        );
    }
    let task = app.get(hr, &format!("/tasks/{id}")).await;
    assert_eq!(task.data()["status"], "todo", "not moved");
    let moved = app.events_of(hr, &id).await;
    assert!(moved.iter().all(|e| e["type"] != "task.transitioned"));
    let created = chat(app, &message("77", false, "✅ Task: Order more paper")).await;
    assert_eq!(created.data()["action"], "created", "{}", created.text);
}

/// Without the exact token nothing is read: the same 401 whatever the body says, and no
/// task is created or moved.
async fn every_request_needs_the_token(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "Rotate the signing keys").await;
    let before = app.get(hr, "/tasks?limit=500").await.list().len();
    let longer = format!("{CHAT_TOKEN}x");
    let bodies = [
        message("77", false, "✅ Task: From a stranger"),
        message("77", false, "done\nCompleted: Rotate the signing keys"),
        message("77", false, "done\nCompleted: no such task"),
        json!({"not": "a message"}),
    ];
    for token in [
        None,
        Some(""),
        Some("wrong"),
        Some(&CHAT_TOKEN[..CHAT_TOKEN.len() - 1]),
        Some(longer.as_str()),
        Some(" chat-token-0123456789x"),
    ] {
        for body in &bodies {
            let mut request = app
                .anonymous(Method::POST, "/api/v1/webhooks/chat")
                .json(body);
            if let Some(token) = token {
                request = request.header("x-chat-token", token);
            }
            assert_error_exact(&send(request).await, 401, "Invalid chat token");
        }
    }
    assert_eq!(app.get(hr, "/tasks?limit=500").await.list().len(), before);
    let task = app.get(hr, &format!("/tasks/{id}")).await;
    assert_eq!(task.data()["status"], "todo");
}

async fn bots_are_ignored_unless_mapped(app: &TestApp) {
    let before = app.get(&app.org.hr, "/tasks?limit=500").await.list().len();
    let reply = chat(app, &message("bot-1", true, "✅ Task: from a bot")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.data()["action"], "ignored");
    assert!(str_of(reply.data(), "reason").contains("bot"));
    let reply = chat(app, &message("42", false, "just chatting")).await;
    assert_eq!(reply.data()["action"], "ignored");
    assert_eq!(
        app.get(&app.org.hr, "/tasks?limit=500").await.list().len(),
        before
    );
}

async fn odd_bodies_are_refused_or_ignored(app: &TestApp) {
    for (body, message) in [
        (json!({"content": "✅ Task: x"}), "author is required"),
        (json!({"author": {"id": "1"}}), "content is required"),
        (json!({"author": {"id": 5}, "content": "x"}), "author.id"),
        (json!([1]), "JSON object"),
    ] {
        assert_error(&chat(app, &body).await, 400, message);
    }
    let reply = send(
        app.anonymous(Method::POST, "/api/v1/webhooks/chat")
            .header("x-chat-token", CHAT_TOKEN)
            .header("content-type", "application/json")
            .body("{"),
    )
    .await;
    assert_error(&reply, 400, "malformed JSON");
    // The minimal shape works; unknown fields are ignored.
    let reply = chat(
        app,
        &json!({"author": {"id": "7"}, "content": "Created task: minimal", "extra": 1}),
    )
    .await;
    assert_eq!(reply.data()["action"], "created", "{}", reply.text);
}

async fn a_chat_task_reaches_a_post_hook(app: &TestApp) {
    let receiver = Receiver::start();
    let token = app.admin_token(&app.org).await;
    register(
        app,
        &token,
        &json!({"name": "chat feed", "url": receiver.url("/"), "events": ["task.created"]}),
    )
    .await;
    let reply = chat(
        app,
        &message("42", false, "Task created: Triage the pager alert"),
    )
    .await;
    let id = str_of(reply.data(), "taskId");
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 1);
    let body = got[0].json();
    assert_eq!(body["event"], "task.created");
    assert_eq!(body["data"]["entityId"], id.as_str());
    assert_eq!(body["data"]["data"]["title"], "Triage the pager alert");
    receiver.stop().await;
}

/// Without `MUSTER_CHAT_TOKEN` the route does not exist.
mod off {
    use super::*;

    api_tests!(with crate::webhook_support::loopback_hooks(); the_route_is_off_until_a_token_is_configured);

    async fn the_route_is_off_until_a_token_is_configured(app: &TestApp) {
        let before = app.get(&app.org.hr, "/tasks?limit=500").await.list().len();
        for token in [None, Some(""), Some(CHAT_TOKEN)] {
            let mut request = app
                .anonymous(Method::POST, "/api/v1/webhooks/chat")
                .json(&message("42", false, "✅ Task: Anyone may write"));
            if let Some(token) = token {
                request = request.header("x-chat-token", token);
            }
            let reply = send(request).await;
            // Word for word the answer of a path that serves nothing.
            assert_error_exact(&reply, 404, "Cannot POST /api/v1/webhooks/chat");
        }
        assert_eq!(
            app.get(&app.org.hr, "/tasks?limit=500").await.list().len(),
            before,
            "nothing created"
        );
    }
}

/// Tests with chat authors mapped to agents: `42` to the first organization's HR agent,
/// `u-1` and the bot `bot-9` to the second's, `ghost` to no agent. Settings naming
/// agents need them to exist: these start, then restart with the map.
mod mapped {
    use super::*;

    macro_rules! mapped_tests {
        ($($name:ident),+ $(,)?) => {
            mapped_tests!(@engine sqlite, Sqlite, $($name),+);
            mapped_tests!(@engine postgres, Postgres, $($name),+);
        };
        (@engine $module:ident, $engine:ident, $($name:ident),+) => {
            mod $module {
                $(
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn $name() {
                        let Some(app) = super::mapped_app(::muster_persistence::Engine::$engine).await else {
                            return;
                        };
                        super::super::$name(&app).await;
                        app.stop().await;
                    }
                )+
            }
        };
    }

    mapped_tests!(
        completion_walks_the_legal_path_to_done,
        completion_stops_where_the_rules_say,
        a_mapped_author_acts_as_its_agent,
    );

    async fn mapped_app(engine: Engine) -> Option<TestApp> {
        let app = spawn_app_with(engine, chat_on()).await?;
        let agent = muster_domain::model::AgentId::from_uuid;
        let map = std::collections::HashMap::from([
            ("42".to_owned(), agent(app.org.hr.uuid)),
            ("u-1".to_owned(), agent(app.other.hr.uuid)),
            ("bot-9".to_owned(), agent(app.other.hr.uuid)),
            ("ghost".to_owned(), agent(uuid::Uuid::now_v7())),
        ]);
        let settings = WebhookSettings {
            chat_agent_map: muster_server::webhook_settings::AgentMap(map),
            ..chat_on()
        };
        Some(app.restart_with(settings).await)
    }
}

async fn a_mapped_author_acts_as_its_agent(app: &TestApp) {
    let theirs = app.other.hr.uuid;
    let reply = chat(
        app,
        &message(
            "u-1",
            false,
            "Created task: Mapped author's task, important",
        ),
    )
    .await;
    assert_eq!(reply.data()["action"], "created", "{}", reply.text);
    let id = str_of(reply.data(), "taskId");
    let task = app.get(&app.other.hr, &format!("/tasks/{id}")).await;
    assert_eq!(task.status, 200, "in the mapped agent's organization");
    assert_eq!(task.data()["priority"], "high");
    assert_eq!(task.data()["creatorId"], json!(theirs), "{}", task.text);
    assert_eq!(
        app.get(&app.org.hr, &format!("/tasks/{id}")).await.status,
        404
    );
    // A mapped bot is heard; an author mapped to no agent is not.
    let reply = chat(app, &message("bot-9", true, "✅ Task: From the mapped bot")).await;
    assert_eq!(reply.data()["action"], "created");
    let reply = chat(app, &message("ghost", false, "✅ Task: From nobody")).await;
    assert_eq!(reply.data()["action"], "ignored");
    assert_eq!(
        reply.data()["reason"],
        "the author is mapped to an agent that does not exist"
    );
}
