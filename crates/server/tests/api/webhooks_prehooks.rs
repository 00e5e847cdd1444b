//! Pre-hooks (decision D-84): asked before the change with the would-be event, in
//! parallel; a blocking hook's `allow: false` refuses the change with 403 and changes
//! nothing but the record of the refusal; timeouts, errors and odd answers allow.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestApp, assert_error_exact, send, str_of};
use crate::hook_receiver::{Answer, Receiver};
use crate::webhook_support::{log, register};

api_tests!(with crate::webhook_support::loopback_hooks();
    an_allowing_pre_hook_sees_the_would_be_event,
    a_blocking_pre_hook_refuses_the_change,
    a_pre_hook_that_cannot_block_only_listens,
    timeouts_errors_and_odd_answers_allow,
    pre_hooks_are_asked_in_parallel,
    a_hanging_pre_hook_stalls_no_other_organization,
);

/// How many of org A's requests wait on its hanging hook at once: more than the test
/// database's pool holds connections (4), so that a pending question holding one would
/// leave none for anybody else.
const HANGING: usize = 6;

async fn pre_hook(
    app: &TestApp,
    token: &str,
    receiver: &Receiver,
    extra: serde_json::Value,
) -> String {
    let mut body = json!({"name": "gate", "url": receiver.url("/gate"), "hookType": "pre",
                          "canBlock": true, "events": ["task.created"], "timeoutMs": 1000});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    register(app, token, &body).await
}

async fn task_count(app: &TestApp) -> usize {
    app.get(&app.org.hr, "/tasks?limit=500").await.list().len()
}

async fn an_allowing_pre_hook_sees_the_would_be_event(app: &TestApp) {
    let receiver = Receiver::start();
    receiver.always(Answer::json(r#"{"allow": true}"#));
    let token = app.admin_token(&app.org).await;
    let hook_id = pre_hook(app, &token, &receiver, json!({})).await;
    let task = app
        .create_task(&app.org.hr, &json!({"title": "Asked first"}))
        .await;
    let got = receiver.received();
    assert_eq!(got.len(), 1, "asked before the answer");
    assert_eq!(got[0].header("x-service-hook-type"), Some("pre"));
    assert_eq!(got[0].header("x-service-event"), Some("task.created"));
    let body = got[0].json();
    assert_eq!(body["event"], "task.created");
    assert_eq!(body["data"]["entityId"], task["id"]);
    assert_eq!(body["data"]["data"]["title"], "Asked first");
    // Other event types are not asked about.
    let id = str_of(&task, "id");
    app.post(
        &app.org.hr,
        &format!("/tasks/{id}/comments"),
        &json!({"body": "hi"}).to_string(),
    )
    .await;
    assert_eq!(receiver.received().len(), 1);
    let entries = log(app, &token, &hook_id).await;
    assert_eq!(entries.len(), 1, "the question is in the hook's log");
    assert_eq!(entries[0]["statusCode"], 200);
    receiver.stop().await;
}

async fn a_blocking_pre_hook_refuses_the_change(app: &TestApp) {
    let receiver = Receiver::start();
    receiver.always(Answer::json(
        r#"{"allow": false, "reason": "change freeze"}"#,
    ));
    let token = app.admin_token(&app.org).await;
    let hook_id = pre_hook(app, &token, &receiver, json!({"name": "Freeze"})).await;
    let before = task_count(app).await;
    let reply = app
        .post(
            &app.org.hr,
            "/tasks",
            &json!({"title": "Not now"}).to_string(),
        )
        .await;
    assert_error_exact(&reply, 403, "Blocked by webhook Freeze: change freeze");
    assert_eq!(task_count(app).await, before, "nothing was written");
    let created = app.get(&app.org.hr, "/events?type=task.created").await;
    assert!(!created.text.contains("Not now"), "no task.created event");
    let blocked = app
        .get(
            &app.org.hr,
            &format!("/events?type=webhook.blocked&entityId={hook_id}"),
        )
        .await;
    assert_eq!(blocked.list().len(), 1, "{}", blocked.text);
    let event = &blocked.list()[0];
    assert_eq!(event["entityType"], "webhook");
    assert_eq!(event["actorId"], json!(app.org.hr.uuid));
    assert_eq!(event["payload"]["blockedEventType"], "task.created");
    assert_eq!(event["payload"]["reason"], "change freeze");

    // Without a reason, the message says so; other organizations are not gated.
    receiver.always(Answer::json(r#"{"allow": false}"#));
    let reply = app
        .post(
            &app.org.hr,
            "/tasks",
            &json!({"title": "Still not"}).to_string(),
        )
        .await;
    assert_error_exact(&reply, 403, "Blocked by webhook Freeze: no reason given");
    app.create_task(&app.other.hr, &json!({"title": "elsewhere"}))
        .await;
    // Switched off, it is not asked.
    let reply = send(app.bearer(
        &token,
        Method::PATCH,
        &format!("/api/v1/webhooks/{hook_id}"),
        Some(&json!({"enabled": false})),
    ))
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    app.create_task(&app.org.hr, &json!({"title": "Thawed"}))
        .await;
    receiver.stop().await;
}

async fn a_pre_hook_that_cannot_block_only_listens(app: &TestApp) {
    let receiver = Receiver::start();
    receiver.always(Answer::json(r#"{"allow": false, "reason": "nope"}"#));
    let token = app.admin_token(&app.org).await;
    pre_hook(app, &token, &receiver, json!({"canBlock": false})).await;
    app.create_task(&app.org.hr, &json!({"title": "Goes through"}))
        .await;
    assert_eq!(receiver.received().len(), 1, "asked all the same");
    receiver.stop().await;
}

async fn timeouts_errors_and_odd_answers_allow(app: &TestApp) {
    let receiver = Receiver::start();
    let token = app.admin_token(&app.org).await;
    let hook_id = pre_hook(app, &token, &receiver, json!({})).await;
    receiver.script([
        Answer::after(Duration::from_secs(3)),
        Answer::status(500),
        Answer::json("not json"),
        Answer::json(r#"{"allowed": false}"#),
        Answer {
            status: 302,
            body: r#"{"allow": false}"#.into(),
            delay: Duration::ZERO,
        },
    ]);
    let started = Instant::now();
    app.task_titled(&app.org.hr, "after a timeout").await;
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_millis(2500),
        "waited for the hook's timeoutMs only: {waited:?}"
    );
    for title in [
        "after a 500",
        "after non-JSON",
        "after another shape",
        "after a redirect",
    ] {
        app.task_titled(&app.org.hr, title).await;
    }
    assert_eq!(receiver.received().len(), 5);
    let entries = log(app, &token, &hook_id).await;
    assert_eq!(entries.len(), 5);
    assert!(
        entries[4]["error"].as_str().unwrap().contains("1s"),
        "{}",
        entries[4]
    );
    receiver.stop().await;
}

async fn pre_hooks_are_asked_in_parallel(app: &TestApp) {
    let first = Receiver::start();
    let second = Receiver::start();
    first.always(Answer::after(Duration::from_millis(700)));
    second.always(Answer::after(Duration::from_millis(700)));
    let token = app.admin_token(&app.org).await;
    pre_hook(
        app,
        &token,
        &first,
        json!({"name": "one", "timeoutMs": 5000}),
    )
    .await;
    pre_hook(
        app,
        &token,
        &second,
        json!({"name": "two", "timeoutMs": 5000}),
    )
    .await;
    let started = Instant::now();
    app.task_titled(&app.org.hr, "asked twice").await;
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_millis(1300),
        "in parallel: {waited:?}"
    );
    assert_eq!(first.received().len() + second.received().len(), 2);
    first.stop().await;
    second.stop().await;
}

/// A pre-hook is asked with no transaction open and no connection held: while one
/// organization's requests all wait on its hanging hook, another organization writes at
/// will (and the first organization's questions are asked side by side, not one after
/// the other behind the writer).
async fn a_hanging_pre_hook_stalls_no_other_organization(app: &TestApp) {
    let receiver = Receiver::start();
    receiver.always(Answer::json(r#"{"allow": true}"#));
    receiver.hold();
    let token = app.admin_token(&app.org).await;
    pre_hook(app, &token, &receiver, json!({"timeoutMs": 30_000})).await;
    let before = task_count(app).await;
    let hooked = futures_util::future::join_all((0..HANGING).map(|i| async move {
        let body = json!({"title": format!("hooked {i}")}).to_string();
        app.post(&app.org.hr, "/tasks", &body).await
    }));
    tokio::pin!(hooked);
    let asked = tokio::select! {
        biased;
        replies = &mut hooked => panic!("answered before the hook did: {replies:?}"),
        asked = receiver.wait_for(HANGING, Duration::from_secs(10)) => asked,
    };
    assert_eq!(
        asked.len(),
        HANGING,
        "every hooked request is asked at once"
    );
    let others = async {
        for i in 0..100 {
            let reply = app
                .post(
                    &app.other.hr,
                    "/tasks",
                    &json!({"title": format!("unhooked {i}")}).to_string(),
                )
                .await;
            assert_eq!(reply.status, 200, "create {i}: {}", reply.text);
        }
    };
    tokio::select! {
        biased;
        replies = &mut hooked => {
            panic!("org A was answered before org B's creates were done: {replies:?}")
        }
        () = others => {}
    }
    receiver.release();
    for reply in hooked.await {
        assert_eq!(reply.status, 200, "allowed once asked: {}", reply.text);
    }
    assert_eq!(task_count(app).await, before + HANGING);
    assert_eq!(receiver.received().len(), HANGING, "each asked once");
    receiver.stop().await;
}
