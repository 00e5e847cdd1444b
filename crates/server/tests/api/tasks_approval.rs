//! `POST /tasks/:id/approve` (decision D-33): the approved task and its events (D-70),
//! each refusal with its status, and the blocking-dependency check it shares with the
//! done transition (D-31).

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Agent, TestApp, assert_error, assert_error_exact, assert_timestamp, str_of};
use crate::task_tools::{Caller, depend, move_ok, set_status, task_state, task_with, types};

api_tests!(
    approval_closes_the_task_with_its_events,
    users_approve_as_themselves,
    task_without_approval_required_is_409,
    task_not_in_review_is_409,
    assignee_cannot_approve,
    read_only_callers_cannot_approve,
    transition_to_done_is_403_on_approval_tasks,
    open_blocking_dependency_blocks_approval,
    approve_body_is_empty_or_an_empty_object,
    simultaneous_approvals_close_the_task_once,
);

/// A task that needs approval, assigned to `assignee`, moved into review.
async fn task_in_review(app: &TestApp, assignee: Option<&Agent>) -> String {
    let hr = &app.org.hr;
    let mut body = json!({ "title": "needs sign-off", "approvalRequired": true });
    if let Some(assignee) = assignee {
        body["assigneeId"] = json!(assignee.uuid);
    }
    let id = task_with(app, hr, &body).await;
    move_ok(app, hr, &id, "in_progress").await;
    move_ok(app, hr, &id, "review").await;
    id
}

/// The task's own events (`task.*`, newest first), after checking its reward was
/// escrowed once and paid out to the assignee once, never refunded.
async fn task_events(app: &TestApp, task: &str) -> Vec<Value> {
    let events = app.events_of(&app.org.hr, task).await;
    let count = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(count("credits.escrowed"), 1, "{events:?}");
    assert_eq!(count("credits.refunded"), 0, "{events:?}");
    events
        .into_iter()
        .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("task.")))
        .collect()
}

async fn approve(app: &TestApp, caller: &Caller, task: &str) -> crate::helpers::Reply {
    caller
        .call(app, Method::POST, &format!("/tasks/{task}/approve"), None)
        .await
}

async fn approval_closes_the_task_with_its_events(app: &TestApp) {
    let hr = &app.org.hr;
    let assignee = app.worker(&app.org).await;
    let approver = app.worker(&app.org).await;
    // The HR agent pays the reward it sets (decision D-101).
    crate::agent_support::grant(app, &app.org, hr, 10).await;
    let id = task_in_review(app, Some(&assignee)).await;
    let before = app.get(hr, &format!("/tasks/{id}")).await.data().clone();
    assert_eq!(before["approvedBy"], Value::Null);
    assert_eq!(before["approvedAt"], Value::Null);

    let reply = approve(app, &Caller::Agent(approver.clone()), &id).await;
    let task = reply.data().clone();
    assert_eq!(task["id"], id);
    assert_eq!(task["status"], "done");
    assert_eq!(task["approvedBy"], approver.uuid.to_string());
    assert_timestamp(&task, "approvedAt");
    assert_eq!(task["approvedAt"], task["updatedAt"]);
    assert_eq!(
        task["assigneeId"],
        assignee.uuid.to_string(),
        "assignee kept"
    );
    for field in ["title", "priority", "creatorId", "tags", "createdAt"] {
        assert_eq!(task[field], before[field], "{field}");
    }
    assert_eq!(
        app.get(hr, &format!("/tasks/{id}")).await.data(),
        &task,
        "stored as answered"
    );

    let events = task_events(app, &id).await;
    assert_eq!(
        types(&events[..3]),
        ["task.done", "task.transitioned", "task.approved"],
        "newest first"
    );
    assert_eq!(events.len(), 6, "created, two moves, then the approval");
    assert_eq!(
        events[2]["payload"]["approvedBy"],
        approver.uuid.to_string()
    );
    for event in &events[..2] {
        assert_eq!(event["payload"]["from"], "review");
        assert_eq!(event["payload"]["to"], "done");
    }
    for event in &events[..3] {
        assert_eq!(event["actorId"], approver.uuid.to_string());
        assert_eq!(event["entityType"], "task");
        assert_eq!(event["createdAt"], task["approvedAt"], "one change");
    }
    // The done move pays the assignee (decision D-58), not the approver.
    let earned = app
        .get(
            hr,
            &format!("/events?type=credits.earned&entityId={}", assignee.uuid),
        )
        .await;
    assert_eq!(earned.body["meta"]["total"], 1, "{}", earned.text);
    let earned = app
        .get(
            hr,
            &format!("/events?type=credits.earned&entityId={}", approver.uuid),
        )
        .await;
    assert_eq!(earned.body["meta"]["total"], 0, "{}", earned.text);

    // Approving again: the task is no longer in review.
    let again = approve(app, &Caller::Agent(approver), &id).await;
    assert_error_exact(
        &again,
        409,
        "Task must be in review to be approved; it is done",
    );
}

async fn users_approve_as_themselves(app: &TestApp) {
    let hr = &app.org.hr;
    for role in ["operator", "admin"] {
        let (_, token) = app.user_token(&app.org, role).await;
        let user = crate::task_tools::user_id(app, &token).await;
        let id = task_in_review(app, Some(hr)).await;
        let task = approve(app, &Caller::Bearer(token.clone()), &id)
            .await
            .data()
            .clone();
        assert_eq!(task["status"], "done");
        assert_eq!(task["approvedBy"], user, "{role}");
        let events = app.events_of(hr, &id).await;
        assert_eq!(events[2]["type"], "task.approved");
        assert_eq!(events[2]["payload"]["approvedBy"], user);
        assert_eq!(events[2]["actorId"], user);

        // Through a write-scoped API key the user approves as themselves too.
        let key = app.api_key(&token, &["write"]).await;
        let id = task_in_review(app, None).await;
        let task = approve(app, &Caller::Bearer(key), &id).await.data().clone();
        assert_eq!(task["approvedBy"], user, "{role} key");
    }
}

async fn task_without_approval_required_is_409(app: &TestApp) {
    let hr = &app.org.hr;
    let approver = Caller::Agent(app.worker(&app.org).await);
    let id = app.task_titled(hr, "plain").await;
    move_ok(app, hr, &id, "in_progress").await;
    move_ok(app, hr, &id, "review").await;
    let before = task_state(app, hr, &id).await;
    assert_error_exact(
        &approve(app, &approver, &id).await,
        409,
        "Task does not require approval",
    );
    assert_eq!(task_state(app, hr, &id).await, before);
    // It closes through the ordinary transition instead.
    move_ok(app, hr, &id, "done").await;
    assert_error_exact(
        &approve(app, &approver, &id).await,
        409,
        "Task does not require approval",
    );
}

async fn task_not_in_review_is_409(app: &TestApp) {
    let hr = &app.org.hr;
    let approver = Caller::Agent(app.worker(&app.org).await);
    for status in ["backlog", "todo", "in_progress", "blocked", "cancelled"] {
        let id = task_with(
            app,
            hr,
            &json!({ "title": status, "approvalRequired": true }),
        )
        .await;
        if status != "todo" {
            set_status(app, &[&id], status).await;
        }
        let before = task_state(app, hr, &id).await;
        assert_error_exact(
            &approve(app, &approver, &id).await,
            409,
            &format!("Task must be in review to be approved; it is {status}"),
        );
        assert_eq!(task_state(app, hr, &id).await, before, "{status}");
    }
}

async fn assignee_cannot_approve(app: &TestApp) {
    let hr = &app.org.hr;
    let assignee = app.worker(&app.org).await;
    let id = task_in_review(app, Some(&assignee)).await;
    let before = task_state(app, hr, &id).await;
    assert_error_exact(
        &approve(app, &Caller::Agent(assignee.clone()), &id).await,
        403,
        "the assignee cannot approve their own task",
    );
    assert_eq!(task_state(app, hr, &id).await, before);

    // The HR agent assigned to its own task cannot approve it either.
    let own = task_in_review(app, Some(hr)).await;
    let before = task_state(app, hr, &own).await;
    assert_error_exact(
        &approve(app, &Caller::Agent(hr.clone()), &own).await,
        403,
        "the assignee cannot approve their own task",
    );
    assert_eq!(task_state(app, hr, &own).await, before);
    // Someone else can.
    let other = Caller::Agent(app.worker(&app.org).await);
    assert_eq!(approve(app, &other, &own).await.data()["status"], "done");
}

async fn read_only_callers_cannot_approve(app: &TestApp) {
    let hr = &app.org.hr;
    let id = task_in_review(app, None).await;
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let admin = app.admin_token(&app.org).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    let before = task_state(app, hr, &id).await;
    let cases = [
        (Caller::Agent(observer), "observer agents are read-only"),
        (Caller::Bearer(viewer), "viewer users are read-only"),
        (Caller::Bearer(read_key), "API key lacks the write scope"),
    ];
    for (caller, message) in &cases {
        assert_error_exact(&approve(app, caller, &id).await, 403, message);
    }
    assert_eq!(task_state(app, hr, &id).await, before);
    // An orchestrator coordinates, and may approve.
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let task = approve(app, &Caller::Agent(orchestrator.clone()), &id).await;
    assert_eq!(task.data()["approvedBy"], orchestrator.uuid.to_string());
}

async fn transition_to_done_is_403_on_approval_tasks(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    let id = task_with(
        app,
        hr,
        &json!({ "title": "gated", "approvalRequired": true, "assigneeId": worker.uuid }),
    )
    .await;
    move_ok(app, hr, &id, "in_progress").await;
    for caller in [hr, &worker] {
        let before = task_state(app, hr, &id).await;
        let reply = app.transition(caller, &id, r#"{"status":"done"}"#).await;
        assert_error_exact(&reply, 403, "Task requires approval");
        assert_eq!(task_state(app, hr, &id).await, before);
    }
    move_ok(app, hr, &id, "review").await;
    for caller in [hr, &worker] {
        let before = task_state(app, hr, &id).await;
        let reply = app
            .transition(caller, &id, r#"{"status":"done","reason":"please"}"#)
            .await;
        assert_error_exact(&reply, 403, "Task requires approval");
        assert_eq!(task_state(app, hr, &id).await, before);
    }
    // Where the table refuses the move anyway, the table's answer comes first.
    let todo = task_with(app, hr, &json!({ "title": "t", "approvalRequired": true })).await;
    let reply = app.transition(hr, &todo, r#"{"status":"done"}"#).await;
    assert_error_exact(&reply, 409, "Invalid transition: todo -> done");
    // Approval is the way.
    assert_eq!(
        approve(app, &Caller::Agent(hr.clone()), &id).await.data()["status"],
        "done"
    );
}

async fn open_blocking_dependency_blocks_approval(app: &TestApp) {
    let hr = &app.org.hr;
    let id = task_in_review(app, None).await;
    let first = app.task_titled(hr, "first").await;
    let second = app.task_titled(hr, "second").await;
    let informational = app.task_titled(hr, "fyi").await;
    depend(app, hr, &id, &first, true).await;
    depend(app, hr, &id, &second, true).await;
    depend(app, hr, &id, &informational, false).await;
    let approver = Caller::Agent(app.worker(&app.org).await);

    let before = task_state(app, hr, &id).await;
    let reply = approve(app, &approver, &id).await;
    assert_error(&reply, 409, "Task has open blocking dependencies: ");
    let message = reply.body["message"].as_str().unwrap();
    assert!(
        message.contains(&first) && message.contains(&second),
        "{message}"
    );
    assert!(!message.contains(&informational), "{message}");
    let after = task_state(app, hr, &id).await;
    assert_eq!(after, before, "no approval recorded");
    assert_eq!(after.0["approvedBy"], Value::Null);

    // One done, one still open: still blocked, naming only the open one.
    move_ok(app, hr, &first, "in_progress").await;
    move_ok(app, hr, &first, "done").await;
    let reply = approve(app, &approver, &id).await;
    assert_error_exact(
        &reply,
        409,
        &format!("Task has open blocking dependencies: {second}"),
    );
    // A cancelled dependency is not done: it still blocks (decision D-31).
    move_ok(app, hr, &second, "cancelled").await;
    let reply = approve(app, &approver, &id).await;
    assert_error_exact(
        &reply,
        409,
        &format!("Task has open blocking dependencies: {second}"),
    );
    assert_eq!(task_state(app, hr, &id).await, before);

    // Once the dependency is removed, the approval goes through.
    let deps = app.get(hr, &format!("/tasks/{id}/dependencies")).await;
    let blocking_second = deps
        .list()
        .iter()
        .find(|d| d["dependsOnId"] == second)
        .map(|d| str_of(d, "id"))
        .unwrap();
    let removed = crate::task_tools::delete(
        app,
        hr,
        &format!("/tasks/{id}/dependencies/{blocking_second}"),
    )
    .await;
    assert_eq!(removed.status.as_u16(), 200, "{}", removed.text);
    assert_eq!(approve(app, &approver, &id).await.data()["status"], "done");
}

async fn approve_body_is_empty_or_an_empty_object(app: &TestApp) {
    let hr = &app.org.hr;
    let approver = app.worker(&app.org).await;
    let id = task_in_review(app, None).await;
    let before = task_state(app, hr, &id).await;
    let path = format!("/tasks/{id}/approve");
    for (body, message) in [
        (r#"{"approved":true}"#, "property approved should not exist"),
        (r"{", "malformed JSON"),
        ("[1]", ""),
    ] {
        let reply = app.post(&approver, &path, body).await;
        assert_error(&reply, 400, message);
    }
    assert_eq!(task_state(app, hr, &id).await, before);
    assert_error_exact(
        &app.post(&approver, "/tasks/xyz/approve", "").await,
        400,
        "id must be a UUID",
    );
    let missing = Uuid::now_v7();
    assert_error_exact(
        &app.post(&approver, &format!("/tasks/{missing}/approve"), "")
            .await,
        404,
        &format!("Task {missing} not found"),
    );
    assert_eq!(
        app.post(&approver, &path, "{}").await.data()["status"],
        "done"
    );
}

/// Twenty approvals of one task at once: one closes it, the others find it done, and
/// the approval, the move and the reward are each recorded once.
async fn simultaneous_approvals_close_the_task_once(app: &TestApp) {
    let hr = &app.org.hr;
    let assignee = app.worker(&app.org).await;
    crate::agent_support::grant(app, &app.org, hr, 10).await;
    let id = task_in_review(app, Some(&assignee)).await;
    let mut approvers = Vec::new();
    for _ in 0..4 {
        approvers.push(Caller::Agent(app.worker(&app.org).await));
    }
    let replies = futures_util::future::join_all(
        (0..20).map(|i| approve(app, &approvers[i % approvers.len()], &id)),
    )
    .await;
    let won: Vec<_> = replies
        .iter()
        .filter(|r| r.status.as_u16() == 200)
        .collect();
    assert_eq!(
        won.len(),
        1,
        "{:?}",
        replies.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    for reply in replies.iter().filter(|r| r.status.as_u16() != 200) {
        assert_error(reply, 409, "");
    }
    let events = task_events(app, &id).await;
    assert_eq!(
        types(&events),
        [
            "task.done",
            "task.transitioned",
            "task.approved",
            "task.transitioned",
            "task.transitioned",
            "task.created"
        ]
    );
    assert_eq!(
        events[2]["payload"]["approvedBy"],
        won[0].data()["approvedBy"]
    );
    let earned = app
        .get(
            hr,
            &format!("/events?type=credits.earned&entityId={}", assignee.uuid),
        )
        .await;
    assert_eq!(earned.body["meta"]["total"], 1, "{}", earned.text);
}
