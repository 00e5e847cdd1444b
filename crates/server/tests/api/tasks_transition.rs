//! `POST /tasks/:id/transition`: the workflow table (D-30), approval (D-33), modes (D-55),
//! scoping (D-8), validation (D-4, D-5) and the audit events it writes (D-70).

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, assert_error, assert_error_exact, str_of};

api_tests!(
    task_moves_through_the_workflow,
    done_writes_transitioned_and_done_events,
    cancel_writes_transitioned_and_cancelled_events,
    disallowed_moves_are_409_and_change_nothing,
    approval_required_task_cannot_be_transitioned_to_done,
    orchestrators_cannot_start_work_but_can_cancel,
    observers_cannot_transition,
    other_org_task_is_404,
    invalid_transition_bodies_are_400_and_change_nothing,
    status_of_the_wrong_json_type_is_400_naming_the_field,
    concurrent_transitions_apply_once,
);

/// The task as stored and the number of its events.
async fn snapshot(app: &TestApp, task: &str) -> (Value, usize) {
    let stored = app
        .get(&app.org.hr, &format!("/tasks/{task}"))
        .await
        .data()
        .clone();
    (stored, app.events_of(&app.org.hr, task).await.len())
}

/// Moves `task` to `to` and checks the answer is the updated task.
async fn move_to(app: &TestApp, agent: &crate::helpers::Agent, task: &str, to: &str) -> Value {
    let reply = app
        .transition(agent, task, &json!({ "status": to }).to_string())
        .await;
    let updated = reply.data().clone();
    assert_eq!(updated["id"], task);
    assert_eq!(updated["status"], to);
    updated
}

async fn task_moves_through_the_workflow(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let created = app
        .create_task(&worker, &json!({ "title": "flow", "tags": ["a"] }))
        .await;
    let id = str_of(&created, "id");
    let mut previous = created.clone();
    for to in ["in_progress", "review", "done"] {
        let updated = move_to(app, &worker, &id, to).await;
        // Only the status (and the update time) changes.
        for field in [
            "orgId",
            "title",
            "priority",
            "assigneeId",
            "creatorId",
            "tags",
            "createdAt",
        ] {
            assert_eq!(
                updated[field], created[field],
                "{field} after moving to {to}"
            );
        }
        assert_eq!(
            updated,
            app.get(&worker, &format!("/tasks/{id}"))
                .await
                .data()
                .clone()
        );
        previous = updated;
    }
    assert_eq!(previous["status"], "done");

    // Other legal paths of the table.
    let id = app.task_titled(&worker, "detours").await;
    for to in [
        "backlog",
        "todo",
        "in_progress",
        "blocked",
        "in_progress",
        "todo",
        "in_progress",
    ] {
        move_to(app, &worker, &id, to).await;
    }
    for to in ["review", "in_progress", "review", "cancelled"] {
        move_to(app, &worker, &id, to).await;
    }
}

async fn done_writes_transitioned_and_done_events(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "audited").await;
    let steps = [
        ("todo", "in_progress", Some("starting")),
        ("in_progress", "review", None),
    ];
    for (_, to, reason) in steps {
        let body = match reason {
            Some(reason) => json!({ "status": to, "reason": reason }),
            None => json!({ "status": to }),
        };
        assert_eq!(
            app.transition(hr, &id, &body.to_string()).await.data()["status"],
            to
        );
    }
    let reply = app
        .transition(hr, &id, r#"{"status":"done","reason":"shipped"}"#)
        .await;
    assert_eq!(reply.data()["status"], "done");

    let events = app.events_of(hr, &id).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "task.done",
            "task.transitioned",
            "task.transitioned",
            "task.transitioned",
            "task.created"
        ],
        "newest first"
    );
    let payloads: Vec<&Value> = events.iter().map(|e| &e["payload"]).collect();
    assert_eq!(payloads[0]["from"], "review");
    assert_eq!(payloads[0]["to"], "done");
    assert_eq!(payloads[0]["reason"], "shipped");
    assert_eq!(payloads[1]["from"], "review");
    assert_eq!(payloads[1]["to"], "done");
    assert_eq!(payloads[1]["reason"], "shipped");
    assert_eq!(payloads[2]["from"], "in_progress");
    assert_eq!(payloads[2]["to"], "review");
    assert_eq!(payloads[2]["reason"], Value::Null);
    assert_eq!(payloads[3]["from"], "todo");
    assert_eq!(payloads[3]["to"], "in_progress");
    assert_eq!(payloads[3]["reason"], "starting");
    for event in &events {
        assert_eq!(event["actorId"], hr.uuid.to_string());
        assert_eq!(event["entityType"], "task");
        assert_eq!(event["entityId"], id);
    }
    // The done pair is written in one change, at one instant.
    assert_eq!(events[0]["createdAt"], events[1]["createdAt"]);
    let done = app
        .get(hr, &format!("/events?type=task.done&entityId={id}"))
        .await;
    assert_eq!(done.body["meta"]["total"], 1);
}

async fn cancel_writes_transitioned_and_cancelled_events(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let id = app.task_titled(&worker, "to cancel").await;
    let reply = app
        .transition(&worker, &id, r#"{"status":"cancelled","reason":"dup"}"#)
        .await;
    assert_eq!(reply.data()["status"], "cancelled");
    let events = app.events_of(&worker, &id).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["task.cancelled", "task.transitioned", "task.created"]
    );
    for event in &events[..2] {
        assert_eq!(event["payload"]["from"], "todo");
        assert_eq!(event["payload"]["to"], "cancelled");
        assert_eq!(event["payload"]["reason"], "dup");
        assert_eq!(event["actorId"], worker.uuid.to_string());
    }
    let done = app
        .get(&worker, &format!("/events?type=task.done&entityId={id}"))
        .await;
    assert_eq!(done.body["meta"]["total"], 0);
}

async fn disallowed_moves_are_409_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "strict").await;
    let before = snapshot(app, &id).await;
    for (to, message) in [
        ("done", "Invalid transition: todo -> done"),
        ("review", "Invalid transition: todo -> review"),
        ("blocked", "Invalid transition: todo -> blocked"),
        ("todo", "Invalid transition: todo -> todo"),
    ] {
        let reply = app
            .transition(hr, &id, &json!({ "status": to }).to_string())
            .await;
        assert_error_exact(&reply, 409, message);
    }
    assert_eq!(
        snapshot(app, &id).await,
        before,
        "a refused move changes nothing"
    );

    // Terminal states have no way out.
    move_to(app, hr, &id, "in_progress").await;
    move_to(app, hr, &id, "done").await;
    let done = snapshot(app, &id).await;
    for to in [
        "todo",
        "in_progress",
        "review",
        "cancelled",
        "done",
        "backlog",
    ] {
        let reply = app
            .transition(hr, &id, &json!({ "status": to }).to_string())
            .await;
        assert_error_exact(&reply, 409, &format!("Invalid transition: done -> {to}"));
    }
    assert_eq!(snapshot(app, &id).await, done);

    let cancelled = app.task_titled(hr, "cancelled").await;
    move_to(app, hr, &cancelled, "cancelled").await;
    let reply = app.transition(hr, &cancelled, r#"{"status":"todo"}"#).await;
    assert_error_exact(&reply, 409, "Invalid transition: cancelled -> todo");
}

async fn approval_required_task_cannot_be_transitioned_to_done(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app
        .create_task(hr, &json!({ "title": "gated", "approvalRequired": true }))
        .await;
    let id = str_of(&task, "id");
    move_to(app, hr, &id, "in_progress").await;
    let before = snapshot(app, &id).await;
    let reply = app.transition(hr, &id, r#"{"status":"done"}"#).await;
    assert_error_exact(&reply, 403, "Task requires approval");
    assert_eq!(snapshot(app, &id).await, before);

    move_to(app, hr, &id, "review").await;
    let before = snapshot(app, &id).await;
    let reply = app.transition(hr, &id, r#"{"status":"done"}"#).await;
    assert_error_exact(&reply, 403, "Task requires approval");
    assert_eq!(snapshot(app, &id).await, before);
    // Cancelling stays possible.
    move_to(app, hr, &id, "cancelled").await;
}

async fn orchestrators_cannot_start_work_but_can_cancel(app: &TestApp) {
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let id = app.task_titled(&app.org.hr, "coordinate").await;
    let before = snapshot(app, &id).await;
    let reply = app
        .transition(&orchestrator, &id, r#"{"status":"in_progress"}"#)
        .await;
    assert_error(&reply, 403, "orchestrator");
    assert_eq!(snapshot(app, &id).await, before);

    move_to(app, &orchestrator, &id, "backlog").await;
    move_to(app, &orchestrator, &id, "cancelled").await;
    let events = app.events_of(&app.org.hr, &id).await;
    assert_eq!(events[0]["actorId"], orchestrator.uuid.to_string());
}

async fn observers_cannot_transition(app: &TestApp) {
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let id = app.task_titled(&app.org.hr, "watch only").await;
    let before = snapshot(app, &id).await;
    for to in ["in_progress", "cancelled", "backlog"] {
        let reply = app
            .transition(&observer, &id, &json!({ "status": to }).to_string())
            .await;
        assert_error_exact(&reply, 403, "observer agents are read-only");
    }
    assert_eq!(snapshot(app, &id).await, before);
}

async fn other_org_task_is_404(app: &TestApp) {
    let theirs = app.task_titled(&app.other.hr, "theirs").await;
    let reply = app
        .transition(&app.org.hr, &theirs, r#"{"status":"cancelled"}"#)
        .await;
    assert_error(&reply, 404, "");
    let reply = app
        .transition(
            &app.org.hr,
            &Uuid::now_v7().to_string(),
            r#"{"status":"cancelled"}"#,
        )
        .await;
    assert_error(&reply, 404, "");
    let reply = app
        .transition(&app.org.hr, "nope", r#"{"status":"cancelled"}"#)
        .await;
    assert_error_exact(&reply, 400, "id must be a UUID");

    let stored = app.get(&app.other.hr, &format!("/tasks/{theirs}")).await;
    assert_eq!(stored.data()["status"], "todo");
    assert_eq!(app.events_of(&app.other.hr, &theirs).await.len(), 1);
}

async fn invalid_transition_bodies_are_400_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "validate").await;
    let before = snapshot(app, &id).await;
    let long_reason = json!({ "status": "in_progress", "reason": "r".repeat(2001) }).to_string();
    let cases: Vec<(String, &str)> = vec![
        (r#"{"status":"finished"}"#.into(), "status"),
        (r#"{"status":"IN_PROGRESS"}"#.into(), "status"),
        ("{}".into(), "status is required"),
        (r#"{"reason":"why"}"#.into(), "status is required"),
        (long_reason, "reason must be at most 2000 characters"),
        (r#"{"status":"in_progress","reason":5}"#.into(), "reason"),
        (
            r#"{"status":"in_progress","foo":1}"#.into(),
            "property foo should not exist",
        ),
        (r#"{"status":"in_progress""#.into(), "malformed JSON"),
        (String::new(), "JSON object"),
        (
            r#"{"status":"in_progress","outcome":"failed"}"#.into(),
            "outcome is only for a move to cancelled",
        ),
        (
            r#"{"status":"cancelled","outcome":"exploded"}"#.into(),
            "outcome",
        ),
        (
            r#"{"status":"in_progress","result":" "}"#.into(),
            "result must not be empty",
        ),
        (
            json!({ "status": "in_progress", "result": "r".repeat(20_001) }).to_string(),
            "result must be at most 20000 characters",
        ),
    ];
    for (body, message) in &cases {
        let reply = app.transition(hr, &id, body).await;
        let shown: String = body.chars().take(60).collect();
        assert_eq!(reply.status.as_u16(), 400, "body {shown}: {}", reply.text);
        assert_error(&reply, 400, message);
    }
    assert_eq!(snapshot(app, &id).await, before, "nothing changed");

    // 2,000 characters is the limit, not beyond it.
    let reason = "r".repeat(2000);
    let body = json!({ "status": "in_progress", "reason": reason }).to_string();
    assert_eq!(
        app.transition(hr, &id, &body).await.data()["status"],
        "in_progress"
    );
    assert_eq!(app.events_of(hr, &id).await[0]["payload"]["reason"], reason);
}

/// D-4: a wrong JSON type is 400, and D-2: the message names the field. A number or
/// `null` where the `status` enum belongs is well-formed JSON, not "malformed JSON".
async fn status_of_the_wrong_json_type_is_400_naming_the_field(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "typed").await;
    let before = snapshot(app, &id).await;
    for body in [
        r#"{"status":3}"#,
        r#"{"status":null}"#,
        r#"{"status":true}"#,
        r#"{"status":["done"]}"#,
    ] {
        let reply = app.transition(hr, &id, body).await;
        assert_eq!(reply.status.as_u16(), 400, "body {body}: {}", reply.text);
        assert_error(&reply, 400, "status");
        let message = reply.body["message"].as_str().unwrap();
        assert!(
            !message.contains("malformed"),
            "body {body} is well-formed JSON: {message}"
        );
    }
    assert_eq!(snapshot(app, &id).await, before);
}

/// Five simultaneous moves of one task: one wins, the others get 409, and the audit log
/// holds exactly one transition (the update and its events are one change).
async fn concurrent_transitions_apply_once(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "race").await;
    let body = r#"{"status":"in_progress"}"#;
    let replies = tokio::join!(
        app.transition(hr, &id, body),
        app.transition(hr, &id, body),
        app.transition(hr, &id, body),
        app.transition(hr, &id, body),
        app.transition(hr, &id, body),
    );
    let replies = [replies.0, replies.1, replies.2, replies.3, replies.4];
    let won = replies.iter().filter(|r| r.status.as_u16() == 200).count();
    assert_eq!(
        won,
        1,
        "{:?}",
        replies.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    for reply in replies.iter().filter(|r| r.status.as_u16() != 200) {
        assert_error(reply, 409, "");
    }
    let events = app.events_of(hr, &id).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["task.transitioned", "task.created"]);
    let stored = app.get(hr, &format!("/tasks/{id}")).await;
    assert_eq!(stored.data()["status"], "in_progress");
}
