//! `POST /tasks/:id/assign` (decision D-34): the `task.assigned` event with the previous
//! assignee (D-70), who can be assigned (404 / 409), closed tasks (409) and the body's
//! validation (D-3, D-4).

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Agent, Reply, TestApp, assert_error, assert_error_exact};
use crate::task_tools::{move_ok, task_state, text_without, types};

api_tests!(
    assignment_is_stored_with_the_previous_assignee_in_its_event,
    unknown_and_foreign_agents_are_404_alike,
    inactive_agents_are_409,
    orchestrators_and_observers_are_never_assignees,
    closed_tasks_are_409,
    invalid_assign_bodies_are_400_and_change_nothing,
    orchestrators_may_assign,
);

async fn assign(app: &TestApp, caller: &Agent, task: &str, assignee: impl ToString) -> Reply {
    let body = json!({ "assigneeId": assignee.to_string() }).to_string();
    app.post(caller, &format!("/tasks/{task}/assign"), &body)
        .await
}

async fn assignment_is_stored_with_the_previous_assignee_in_its_event(app: &TestApp) {
    let hr = &app.org.hr;
    let (first, second) = (app.worker(&app.org).await, app.worker(&app.org).await);
    let created = app.create_task(hr, &json!({ "title": "hand out" })).await;
    let id = created["id"].as_str().unwrap().to_owned();

    let task = assign(app, hr, &id, first.uuid).await.data().clone();
    assert_eq!(task["assigneeId"], first.uuid.to_string());
    assert_eq!(task["status"], "todo", "assigning does not move the task");
    for field in ["title", "priority", "creatorId", "tags", "createdAt"] {
        assert_eq!(task[field], created[field], "{field}");
    }
    assert_eq!(app.get(hr, &format!("/tasks/{id}")).await.data(), &task);
    let events = app.events_of(hr, &id).await;
    assert_eq!(types(&events), ["task.assigned", "task.created"]);
    assert_eq!(
        events[0]["payload"],
        json!({ "assigneeId": first.uuid, "previousAssigneeId": null })
    );
    assert_eq!(events[0]["actorId"], hr.uuid.to_string());
    assert_eq!(events[0]["entityId"], id);
    assert_eq!(events[0]["createdAt"], task["updatedAt"]);

    // Reassigning names the previous assignee.
    let task = assign(app, hr, &id, second.uuid).await.data().clone();
    assert_eq!(task["assigneeId"], second.uuid.to_string());
    let events = app.events_of(hr, &id).await;
    assert_eq!(events.len(), 3);
    assert_eq!(
        events[0]["payload"],
        json!({ "assigneeId": second.uuid, "previousAssigneeId": first.uuid })
    );

    // Assigning the current assignee again changes nothing and writes no event.
    let before = task_state(app, hr, &id).await;
    assert_eq!(assign(app, hr, &id, second.uuid).await.data(), &before.0);
    assert_eq!(task_state(app, hr, &id).await, before);

    // Any open status can be reassigned; the caller may assign itself.
    move_ok(app, hr, &id, "in_progress").await;
    move_ok(app, hr, &id, "blocked").await;
    let task = assign(app, &first, &id, first.uuid).await.data().clone();
    assert_eq!(task["assigneeId"], first.uuid.to_string());
    assert_eq!(task["status"], "blocked");
    let events = app.events_of(hr, &id).await;
    assert_eq!(events[0]["actorId"], first.uuid.to_string());
    assert_eq!(
        events[0]["payload"]["previousAssigneeId"],
        second.uuid.to_string()
    );
}

async fn unknown_and_foreign_agents_are_404_alike(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "nobody").await;
    let theirs = app.worker(&app.other).await;
    let before = task_state(app, hr, &id).await;
    let missing = Uuid::now_v7();
    let unknown = assign(app, hr, &id, missing).await;
    assert_error_exact(&unknown, 404, &format!("Agent {missing} not found"));
    let foreign = assign(app, hr, &id, theirs.uuid).await;
    assert_error(&foreign, 404, "");
    assert_eq!(
        text_without(&foreign, &theirs.uuid.to_string()),
        text_without(&unknown, &missing.to_string()),
        "another org's agent is answered exactly as a missing one"
    );
    // Nor is another org's HR agent (a different role) any different.
    let foreign_hr = assign(app, hr, &id, app.other.hr.uuid).await;
    assert_eq!(
        text_without(&foreign_hr, &app.other.hr.uuid.to_string()),
        text_without(&unknown, &missing.to_string()),
    );
    assert_eq!(task_state(app, hr, &id).await, before);
}

async fn inactive_agents_are_409(app: &TestApp) {
    let hr = &app.org.hr;
    let current = app.worker(&app.org).await;
    let id = crate::task_tools::task_with(
        app,
        hr,
        &json!({ "title": "keep", "assigneeId": current.uuid }),
    )
    .await;
    let before = task_state(app, hr, &id).await;
    for status in ["suspended", "revoked", "pending"] {
        let agent = app.add_agent(&app.org, "worker", status).await;
        assert_error_exact(
            &assign(app, hr, &id, agent.uuid).await,
            409,
            &format!("Agent {} is not active and cannot be assigned", agent.uuid),
        );
    }
    assert_eq!(task_state(app, hr, &id).await, before, "assignee kept");
}

async fn orchestrators_and_observers_are_never_assignees(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "execute").await;
    let before = task_state(app, hr, &id).await;
    for mode in ["orchestrator", "observer"] {
        let agent = app.add_agent(&app.org, mode, "active").await;
        assert_error_exact(
            &assign(app, hr, &id, agent.uuid).await,
            409,
            &format!(
                "Agent {} is an {mode} and does not execute tasks",
                agent.uuid
            ),
        );
    }
    // Not even by themselves: the orchestrator may assign, but not itself; the observer
    // may not assign at all.
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    assert_error_exact(
        &assign(app, &orchestrator, &id, orchestrator.uuid).await,
        409,
        &format!(
            "Agent {} is an orchestrator and does not execute tasks",
            orchestrator.uuid
        ),
    );
    let observer = app.add_agent(&app.org, "observer", "active").await;
    assert_error_exact(
        &assign(app, &observer, &id, observer.uuid).await,
        403,
        "observer agents are read-only",
    );
    assert_eq!(task_state(app, hr, &id).await, before);
}

async fn closed_tasks_are_409(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    let done = app.task_titled(hr, "done").await;
    move_ok(app, hr, &done, "in_progress").await;
    move_ok(app, hr, &done, "done").await;
    let cancelled = app.task_titled(hr, "cancelled").await;
    move_ok(app, hr, &cancelled, "cancelled").await;
    for (id, status) in [(&done, "done"), (&cancelled, "cancelled")] {
        let before = task_state(app, hr, id).await;
        assert_error_exact(
            &assign(app, hr, id, worker.uuid).await,
            409,
            &format!("Task is {status} and cannot be changed"),
        );
        assert_eq!(task_state(app, hr, id).await, before);
    }
}

async fn invalid_assign_bodies_are_400_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    let id = app.task_titled(hr, "validate").await;
    let path = format!("/tasks/{id}/assign");
    let before = task_state(app, hr, &id).await;
    let extra = json!({ "assigneeId": worker.uuid, "note": "x" }).to_string();
    let cases: Vec<(String, &str)> = vec![
        ("{}".into(), "assigneeId is required"),
        (
            r#"{"assignee":"x"}"#.into(),
            "property assignee should not exist",
        ),
        (r#"{"assigneeId":"not-a-uuid"}"#.into(), "assigneeId"),
        (r#"{"assigneeId":"123"}"#.into(), "assigneeId"),
        (r#"{"assigneeId":42}"#.into(), "assigneeId"),
        (r#"{"assigneeId":null}"#.into(), "assigneeId"),
        (r#"{"assigneeId":""}"#.into(), "assigneeId"),
        (extra, "property note should not exist"),
        (r#"{"assigneeId":"#.into(), "malformed JSON"),
        (String::new(), "JSON object"),
        (format!(r#"["{}"]"#, worker.uuid), "JSON object"),
    ];
    for (body, message) in &cases {
        let reply = app.post(hr, &path, body).await;
        assert_eq!(reply.status.as_u16(), 400, "body {body}: {}", reply.text);
        assert_error(&reply, 400, message);
    }
    assert_error_exact(
        &assign(app, hr, "not-a-task", worker.uuid).await,
        400,
        "id must be a UUID",
    );
    assert_eq!(task_state(app, hr, &id).await, before);
}

async fn orchestrators_may_assign(app: &TestApp) {
    let hr = &app.org.hr;
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let worker = app.worker(&app.org).await;
    let id = app.task_titled(hr, "delegate").await;
    let task = assign(app, &orchestrator, &id, worker.uuid)
        .await
        .data()
        .clone();
    assert_eq!(task["assigneeId"], worker.uuid.to_string());
    let events = app.events_of(hr, &id).await;
    assert_eq!(events[0]["type"], "task.assigned");
    assert_eq!(events[0]["actorId"], orchestrator.uuid.to_string());
    assert_eq!(events[0]["payload"]["previousAssigneeId"], Value::Null);
}
