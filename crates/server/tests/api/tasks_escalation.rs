//! `POST /tasks/:id/escalate` and `GET /tasks/:id/escalations` (decision D-37): to whom
//! a task goes (the named target, the assignee's parent, the most senior agent above),
//! the record and the `task.escalated` event it leaves, and what is refused.

use muster_domain::model::{AgentMode, AgentStatus, Level};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{
    Agent, PAGE_REFUSALS, TestApp, assert_bad_queries, assert_error, assert_error_exact,
    assert_timestamp, keys_of, str_of, unique_handle,
};
use crate::stored::{change_agent, insert_worker, set_parent};
use crate::task_support::{assigned_task, escalations_of, events_typed, instant, task_of, walk};

api_tests!(
    escalating_to_a_named_target_reassigns_and_records_it,
    named_target_must_be_an_active_executing_agent_of_the_org,
    without_target_the_assignees_parent_takes_over,
    a_parent_that_does_not_execute_is_passed_over,
    without_parent_the_most_senior_agent_above_takes_over,
    nobody_strictly_above_is_409,
    no_assignee_and_no_target_is_409,
    closed_tasks_cannot_be_escalated,
    invalid_escalation_bodies_are_400_and_change_nothing,
    escalation_is_scoped_and_needs_write_access,
    escalations_are_listed_newest_first_in_pages,
);

/// Escalates `task` as `caller` with `body`.
async fn escalate(
    app: &TestApp,
    caller: &Agent,
    task: &str,
    body: &Value,
) -> crate::helpers::Reply {
    app.post(
        caller,
        &format!("/tasks/{task}/escalate"),
        &body.to_string(),
    )
    .await
}

/// Escalates without naming a target and answers the new assignee (asserting 200).
async fn escalate_to_default(app: &TestApp, task: &str) -> String {
    let reply = escalate(app, &app.org.hr, task, &json!({ "reason": "MANUAL" })).await;
    let data = reply.data();
    let to = str_of(data, "toAgentId");
    assert_eq!(task_of(app, &app.org.hr, task).await["assigneeId"], to);
    to
}

/// What an escalation attempt must leave untouched: the task and its escalations.
async fn unchanged(app: &TestApp, task: &str, before: &Value) {
    assert_eq!(&task_of(app, &app.org.hr, task).await, before);
    assert!(escalations_of(app, &app.org.hr, task).await.is_empty());
    assert!(
        events_typed(app, &app.org.hr, task, "task.escalated")
            .await
            .is_empty()
    );
}

async fn escalating_to_a_named_target_reassigns_and_records_it(app: &TestApp) {
    let from = app.worker(&app.org).await;
    let to = app.worker(&app.org).await;
    let task = assigned_task(app, &app.org.hr, &from, json!({})).await;

    let reply = escalate(
        app,
        &app.org.hr,
        &task,
        &json!({ "reason": "QUALITY_ISSUES", "notes": "third rework", "targetAgentId": to.uuid }),
    )
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(keys_of(&reply.body), ["data", "message"]);
    assert!(!str_of(&reply.body, "message").is_empty());
    let data = reply.data().clone();
    Uuid::parse_str(&str_of(&data, "id")).unwrap();
    assert_eq!(data["taskId"], task);
    assert_eq!(data["reason"], "QUALITY_ISSUES");
    assert_eq!(data["notes"], "third rework");
    assert_eq!(data["fromAgentId"], from.uuid.to_string());
    assert_eq!(data["toAgentId"], to.uuid.to_string());
    assert_eq!(data["automatic"], false);
    assert_timestamp(&data, "createdAt");

    // The task changed hands.
    assert_eq!(
        task_of(app, &app.org.hr, &task).await["assigneeId"],
        to.uuid.to_string()
    );
    // The record is listed, as answered.
    let listed = escalations_of(app, &app.org.hr, &task).await;
    assert_eq!(listed, std::slice::from_ref(&data));
    // And audited, as a warning.
    let events = events_typed(app, &app.org.hr, &task, "task.escalated").await;
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event["severity"], "warning");
    assert_eq!(event["entityType"], "task");
    assert_eq!(event["actorId"], app.org.hr.uuid.to_string());
    assert_eq!(event["payload"]["escalationId"], data["id"]);
    assert_eq!(event["payload"]["reason"], "QUALITY_ISSUES");
    assert_eq!(event["payload"]["fromAgentId"], from.uuid.to_string());
    assert_eq!(event["payload"]["toAgentId"], to.uuid.to_string());
}

async fn named_target_must_be_an_active_executing_agent_of_the_org(app: &TestApp) {
    let from = app.worker(&app.org).await;
    let task = assigned_task(app, &app.org.hr, &from, json!({})).await;
    let before = task_of(app, &app.org.hr, &task).await;

    let missing = Uuid::now_v7();
    let foreign = app.worker(&app.other).await;
    for target in [missing, foreign.uuid, app.other.hr.uuid] {
        let reply = escalate(
            app,
            &app.org.hr,
            &task,
            &json!({ "reason": "MANUAL", "targetAgentId": target }),
        )
        .await;
        assert_error(&reply, 404, "not found");
    }

    let suspended = app.add_agent(&app.org, "worker", "suspended").await;
    let revoked = app.add_agent(&app.org, "worker", "revoked").await;
    let pending = app.add_agent(&app.org, "worker", "pending").await;
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    for target in [&suspended, &revoked, &pending, &observer, &orchestrator] {
        let reply = escalate(
            app,
            &app.org.hr,
            &task,
            &json!({ "reason": "MANUAL", "targetAgentId": target.uuid }),
        )
        .await;
        assert_error(&reply, 409, &target.uuid.to_string());
    }
    unchanged(app, &task, &before).await;
}

async fn without_target_the_assignees_parent_takes_over(app: &TestApp) {
    let parent = app.worker(&app.org).await;
    change_agent(app, &parent, |a| a.level = Level::new(6).unwrap()).await;
    let child = app.worker(&app.org).await;
    set_parent(app, &child, &parent).await;
    let task = assigned_task(app, &app.org.hr, &child, json!({})).await;
    // HR (level 10) is more senior, yet the parent comes first.
    assert_eq!(
        escalate_to_default(app, &task).await,
        parent.uuid.to_string()
    );

    let listed = escalations_of(app, &app.org.hr, &task).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["fromAgentId"], child.uuid.to_string());
    assert_eq!(listed[0]["toAgentId"], parent.uuid.to_string());
    assert_eq!(listed[0]["reason"], "MANUAL");
    let events = events_typed(app, &app.org.hr, &task, "task.escalated").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["severity"], "warning");
}

async fn a_parent_that_does_not_execute_is_passed_over(app: &TestApp) {
    // HR (level 10, worker mode, the earliest agent) is the most senior agent above.
    for (mode, status) in [
        ("orchestrator", "active"),
        ("observer", "active"),
        ("worker", "suspended"),
    ] {
        let parent = app.add_agent(&app.org, mode, status).await;
        change_agent(app, &parent, |a| a.level = Level::new(9).unwrap()).await;
        let child = app.worker(&app.org).await;
        set_parent(app, &child, &parent).await;
        let task = assigned_task(app, &app.org.hr, &child, json!({})).await;
        assert_eq!(
            escalate_to_default(app, &task).await,
            app.org.hr.uuid.to_string(),
            "parent {mode}/{status}"
        );
    }
}

async fn without_parent_the_most_senior_agent_above_takes_over(app: &TestApp) {
    // HR steps down below everybody; the seniors are inserted as stored, with the
    // creation times the tie-break looks at.
    change_agent(app, &app.org.hr, |a| a.level = Level::new(3).unwrap()).await;
    let assignee = app.worker(&app.org).await; // level 5
    let senior = |level: i64, created: Option<&str>| {
        let created = created.map(instant);
        async move {
            let handle = unique_handle("senior");
            insert_worker(app, &app.org, &handle, move |a| {
                a.level = Level::new(level).unwrap();
                if let Some(created) = created {
                    a.created_at = created;
                }
            })
            .await
        }
    };
    let _later = senior(8, Some("2026-01-02T00:00:00.000Z")).await;
    let earliest = senior(8, Some("2026-01-01T00:00:00.000Z")).await;
    senior(7, None).await;
    // Higher, but not eligible: suspended, orchestrator, observer, pending.
    for (mode, status) in [
        ("worker", "suspended"),
        ("orchestrator", "active"),
        ("observer", "active"),
        ("worker", "pending"),
    ] {
        let (mode, status) = (
            AgentMode::parse(mode).unwrap(),
            AgentStatus::parse(status).unwrap(),
        );
        insert_worker(app, &app.org, &unique_handle("ineligible"), move |a| {
            a.level = Level::new(9).unwrap();
            a.mode = mode;
            a.status = status;
            a.created_at = instant("2025-01-01T00:00:00.000Z");
        })
        .await;
    }
    // Higher, but in another organization.
    change_agent(app, &app.other.hr, |a| a.level = Level::new(10).unwrap()).await;

    let task = assigned_task(app, &app.org.hr, &assignee, json!({})).await;
    assert_eq!(
        escalate_to_default(app, &task).await,
        earliest.uuid.to_string(),
        "level 8 ties go to the earliest created"
    );

    // Now at level 8: only the ineligible level-9 agents are above; `later` (also 8) is
    // not strictly above.
    let before = task_of(app, &app.org.hr, &task).await;
    let reply = escalate(app, &app.org.hr, &task, &json!({ "reason": "MANUAL" })).await;
    assert_error_exact(&reply, 409, "No agent to escalate the task to");
    assert_eq!(task_of(app, &app.org.hr, &task).await, before);
    assert_eq!(escalations_of(app, &app.org.hr, &task).await.len(), 1);
}

async fn nobody_strictly_above_is_409(app: &TestApp) {
    let assignee = app.worker(&app.org).await;
    let peer = app.worker(&app.org).await;
    let _ = peer; // level 5 like the assignee: not above it.
    change_agent(app, &app.org.hr, |a| a.level = Level::new(5).unwrap()).await;
    let task = assigned_task(app, &app.org.hr, &assignee, json!({})).await;
    let before = task_of(app, &app.org.hr, &task).await;
    let reply = escalate(
        app,
        &app.org.hr,
        &task,
        &json!({ "reason": "STALE_TASK", "notes": "nobody" }),
    )
    .await;
    assert_error_exact(&reply, 409, "No agent to escalate the task to");
    unchanged(app, &task, &before).await;
}

async fn no_assignee_and_no_target_is_409(app: &TestApp) {
    let task = app.task_titled(&app.org.hr, "nobody's").await;
    let before = task_of(app, &app.org.hr, &task).await;
    let reply = escalate(app, &app.org.hr, &task, &json!({ "reason": "MANUAL" })).await;
    assert_error_exact(&reply, 409, "No agent to escalate the task to");
    unchanged(app, &task, &before).await;

    // Naming a target works without an assignee.
    let target = app.worker(&app.org).await;
    let reply = escalate(
        app,
        &app.org.hr,
        &task,
        &json!({ "reason": "CAPACITY_OVERFLOW", "targetAgentId": target.uuid }),
    )
    .await;
    let data = reply.data();
    assert_eq!(data["fromAgentId"], Value::Null);
    assert_eq!(data["toAgentId"], target.uuid.to_string());
    assert_eq!(
        task_of(app, &app.org.hr, &task).await["assigneeId"],
        target.uuid.to_string()
    );
}

async fn closed_tasks_cannot_be_escalated(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let target = app.worker(&app.org).await;
    for (path, status) in [
        (&["in_progress", "done"][..], "done"),
        (&["cancelled"][..], "cancelled"),
    ] {
        let task = assigned_task(app, &app.org.hr, &worker, json!({})).await;
        walk(app, &worker, &task, path).await;
        let before = task_of(app, &app.org.hr, &task).await;
        for body in [
            json!({ "reason": "MANUAL" }),
            json!({ "reason": "MANUAL", "targetAgentId": target.uuid }),
        ] {
            let reply = escalate(app, &app.org.hr, &task, &body).await;
            assert_error(&reply, 409, status);
        }
        unchanged(app, &task, &before).await;
    }
}

async fn invalid_escalation_bodies_are_400_and_change_nothing(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let target = app.worker(&app.org).await;
    let task = assigned_task(app, &app.org.hr, &worker, json!({})).await;
    let before = task_of(app, &app.org.hr, &task).await;
    let cases = [
        (json!({ "reason": "BORED" }), "reason"),
        (json!({ "reason": "manual" }), "reason"),
        (json!({ "reason": 3 }), "reason"),
        (json!({}), "reason"),
        (json!({ "notes": "no reason" }), "reason"),
        (
            json!({ "reason": "MANUAL", "notes": "x".repeat(2001), "targetAgentId": target.uuid }),
            "notes",
        ),
        (
            json!({ "reason": "MANUAL", "targetAgentId": "not-a-uuid" }),
            "targetAgentId",
        ),
        (
            json!({ "reason": "MANUAL", "targetAgentId": target.uuid, "priority": "high" }),
            "priority",
        ),
    ];
    for (body, field) in cases {
        let reply = escalate(app, &app.org.hr, &task, &body).await;
        assert_error(&reply, 400, field);
    }
    let reply = app
        .post(
            &app.org.hr,
            &format!("/tasks/{task}/escalate"),
            "{\"reason\":",
        )
        .await;
    assert_error(&reply, 400, "JSON");
    unchanged(app, &task, &before).await;

    // 2,000 characters is the limit, not over it; multi-byte characters count once.
    let notes = "é".repeat(2000);
    let reply = escalate(
        app,
        &app.org.hr,
        &task,
        &json!({ "reason": "MANUAL", "notes": notes, "targetAgentId": target.uuid }),
    )
    .await;
    assert_eq!(reply.data()["notes"], notes.as_str());
}

async fn escalation_is_scoped_and_needs_write_access(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let target = app.worker(&app.org).await;
    let task = assigned_task(app, &app.org.hr, &worker, json!({})).await;
    let before = task_of(app, &app.org.hr, &task).await;
    let body = json!({ "reason": "MANUAL", "targetAgentId": target.uuid });

    // Another organization sees no such task, to escalate or to list.
    let reply = escalate(app, &app.other.hr, &task, &body).await;
    assert_error(&reply, 404, "not found");
    let reply = app
        .get(&app.other.hr, &format!("/tasks/{task}/escalations"))
        .await;
    assert_error(&reply, 404, "not found");
    // An unknown task is 404 too.
    let reply = escalate(app, &app.org.hr, &Uuid::now_v7().to_string(), &body).await;
    assert_error(&reply, 404, "not found");
    // Observers only read.
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let reply = escalate(app, &observer, &task, &body).await;
    assert_eq!(reply.status.as_u16(), 403, "{}", reply.text);
    unchanged(app, &task, &before).await;
    // ... but may list.
    assert!(escalations_of(app, &observer, &task).await.is_empty());
}

async fn escalations_are_listed_newest_first_in_pages(app: &TestApp) {
    let hr = &app.org.hr;
    let (one, two) = (app.worker(&app.org).await, app.worker(&app.org).await);
    let task = assigned_task(app, hr, &one, json!({})).await;
    let mut made = Vec::new();
    for (reason, to) in [("MANUAL", &two), ("STALE_TASK", &one), ("SLA_BREACH", &two)] {
        let body = json!({ "reason": reason, "targetAgentId": to.uuid });
        let reply = escalate(app, hr, &task, &body).await;
        assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
        made.push(reply.data().clone());
    }
    made.reverse(); // newest first

    let all = app.get(hr, &format!("/tasks/{task}/escalations")).await;
    assert_eq!(all.list(), &made);
    assert_eq!(keys_of(&all.body), ["data"], "no meta when nothing remains");

    let first = app
        .get(hr, &format!("/tasks/{task}/escalations?limit=2"))
        .await;
    assert_eq!(first.list(), &made[..2]);
    let cursor = str_of(&first.body["meta"], "nextCursor");
    let second = app
        .get(
            hr,
            &format!("/tasks/{task}/escalations?limit=2&cursor={cursor}"),
        )
        .await;
    assert_eq!(second.list(), &made[2..]);
    assert_eq!(keys_of(&second.body), ["data"]);
    let path = format!("/tasks/{task}/escalations");
    assert_bad_queries(app, hr, &path, &PAGE_REFUSALS).await;
    assert_eq!(app.get(hr, &path).await.list(), &made, "nothing changed");
}
