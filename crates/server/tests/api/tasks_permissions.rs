//! Who may call each task route (decisions D-14, D-17, D-55): read-only callers (observer
//! agents, viewer users, `read`-scoped API keys) get 403 on every write and 200 on every
//! read; orchestrators do everything but start work; users act as themselves.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Agent, TestApp, assert_error_exact, str_of};
use crate::task_tools::{Caller, depend, event_total, move_ok, task_with, user_id};

api_tests!(
    read_only_callers_get_403_on_every_write_and_change_nothing,
    writers_of_every_kind_may_call_every_write_route,
    orchestrators_do_everything_but_start_work,
    every_caller_may_read_every_task_route,
    tasks_created_by_users_name_the_user_as_creator,
);

/// Everything the write routes need, made by the org's HR agent.
struct Fixture {
    /// An open task for the edits.
    task: String,
    /// A task to move.
    moving: String,
    /// A task that needs approval, in review, unassigned.
    review: String,
    /// A task to depend on.
    target: String,
    /// A dependency of `task`, to remove.
    dependency: String,
    /// A template.
    template: String,
    /// An active worker to assign.
    worker: Agent,
}

async fn fixture(app: &TestApp) -> Fixture {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "subject").await;
    let moving = app.task_titled(hr, "moving").await;
    let review = task_with(
        app,
        hr,
        &json!({ "title": "sign", "approvalRequired": true }),
    )
    .await;
    move_ok(app, hr, &review, "in_progress").await;
    move_ok(app, hr, &review, "review").await;
    let target = app.task_titled(hr, "target").await;
    let removable = app.task_titled(hr, "removable").await;
    let dependency = str_of(&depend(app, hr, &task, &removable, true).await, "id");
    let name = format!("template {}", Uuid::now_v7());
    let template = app
        .post(
            hr,
            &format!("/tasks/{task}/create-template"),
            &json!({ "name": name }).to_string(),
        )
        .await;
    let template = str_of(template.data(), "id");
    Fixture {
        task,
        moving,
        review,
        target,
        dependency,
        template,
        worker: app.worker(&app.org).await,
    }
}

/// Every write route under `/tasks`, each with a body that a permitted caller gets 200
/// for: (method, path, body).
fn write_requests(f: &Fixture, hr: &Agent) -> Vec<(Method, String, Option<Value>)> {
    let task = &f.task;
    vec![
        (
            Method::POST,
            "/tasks".to_owned(),
            Some(json!({ "title": "by the caller" })),
        ),
        (
            Method::PATCH,
            format!("/tasks/{task}"),
            Some(json!({ "title": "patched", "priority": "high" })),
        ),
        (
            Method::POST,
            format!("/tasks/{}/transition", f.moving),
            Some(json!({ "status": "cancelled" })),
        ),
        (Method::POST, format!("/tasks/{}/approve", f.review), None),
        (
            Method::POST,
            format!("/tasks/{task}/assign"),
            Some(json!({ "assigneeId": f.worker.uuid })),
        ),
        (
            Method::POST,
            format!("/tasks/{task}/dependencies"),
            Some(json!({ "dependsOnId": f.target, "blocking": false })),
        ),
        (
            Method::DELETE,
            format!("/tasks/{task}/dependencies/{}", f.dependency),
            None,
        ),
        (
            Method::POST,
            format!("/tasks/{task}/comments"),
            Some(json!({ "body": "a comment" })),
        ),
        (
            Method::POST,
            format!("/tasks/{task}/escalate"),
            Some(json!({ "reason": "MANUAL", "notes": "help", "targetAgentId": hr.uuid })),
        ),
        (
            Method::POST,
            format!("/tasks/{task}/create-template"),
            Some(json!({ "name": format!("made by caller {}", Uuid::now_v7()) })),
        ),
        (
            Method::POST,
            format!("/tasks/{task}/auto-assign"),
            Some(json!({ "minCoverage": 0 })),
        ),
        (
            Method::POST,
            format!("/tasks/templates/{}/instantiate", f.template),
            Some(json!({})),
        ),
    ]
}

/// Every read route under `/tasks` (and the audit trail of one task).
fn read_paths(f: &Fixture) -> Vec<String> {
    let task = &f.task;
    vec![
        "/tasks".to_owned(),
        format!("/tasks?creatorId={}", Uuid::now_v7()),
        format!("/tasks/{task}"),
        format!("/tasks/{task}/dependencies"),
        format!("/tasks/{task}/comments"),
        format!("/tasks/{task}/escalations"),
        format!("/tasks/{task}/candidates"),
        format!("/tasks/{task}/candidates?minCoverage=0&maxResults=5"),
        "/tasks/templates".to_owned(),
        format!("/events?entityId={task}"),
    ]
}

/// What the org holds that any write route would change.
async fn org_state(app: &TestApp, f: &Fixture) -> Vec<Value> {
    let hr = &app.org.hr;
    let mut state = vec![json!(event_total(app, hr).await)];
    for path in [
        "/tasks?limit=500".to_owned(),
        "/tasks/templates".to_owned(),
        format!("/tasks/{}/dependencies", f.task),
        format!("/tasks/{}/comments", f.task),
        format!("/tasks/{}/escalations", f.task),
    ] {
        let reply = app.get(hr, &path).await;
        state.push(reply.data().clone());
    }
    state
}

async fn read_only_callers_get_403_on_every_write_and_change_nothing(app: &TestApp) {
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let admin = app.admin_token(&app.org).await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let admin_read_key = app.api_key(&admin, &["read"]).await;
    let operator_read_key = app.api_key(&operator, &["read"]).await;
    // A viewer's key, even with the write scope, never lifts the viewer's role.
    let viewer_write_key = app.api_key(&viewer, &["write"]).await;
    let callers = [
        (Caller::Agent(observer), "observer agents are read-only"),
        (Caller::Bearer(viewer), "viewer users are read-only"),
        (
            Caller::Bearer(admin_read_key),
            "API key lacks the write scope",
        ),
        (
            Caller::Bearer(operator_read_key),
            "API key lacks the write scope",
        ),
        (
            Caller::Bearer(viewer_write_key),
            "viewer users are read-only",
        ),
    ];
    let f = fixture(app).await;
    let before = org_state(app, &f).await;
    for (caller, message) in &callers {
        for (method, path, body) in write_requests(&f, &app.org.hr) {
            let reply = caller.call(app, method.clone(), &path, body.as_ref()).await;
            assert_eq!(
                reply.status.as_u16(),
                403,
                "{method} {path} by {caller:?}: {}",
                reply.text
            );
            assert_error_exact(&reply, 403, message);
        }
    }
    assert_eq!(org_state(app, &f).await, before, "nothing changed");
}

async fn writers_of_every_kind_may_call_every_write_route(app: &TestApp) {
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let admin = app.admin_token(&app.org).await;
    let write_key = app.api_key(&admin, &["write"]).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let callers = [
        Caller::Agent(app.worker(&app.org).await),
        Caller::Agent(app.org.hr.clone()),
        Caller::Bearer(operator),
        Caller::Bearer(admin),
        Caller::Bearer(write_key),
        Caller::Bearer(admin_key),
    ];
    for caller in &callers {
        let f = fixture(app).await;
        for (method, path, body) in write_requests(&f, &app.org.hr) {
            let reply = caller.call(app, method.clone(), &path, body.as_ref()).await;
            assert_eq!(
                reply.status.as_u16(),
                200,
                "{method} {path} by {caller:?}: {}",
                reply.text
            );
        }
    }
}

async fn orchestrators_do_everything_but_start_work(app: &TestApp) {
    let hr = &app.org.hr;
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let caller = Caller::Agent(orchestrator.clone());
    let f = fixture(app).await;
    for (method, path, body) in write_requests(&f, hr) {
        let reply = caller.call(app, method.clone(), &path, body.as_ref()).await;
        assert_eq!(
            reply.status.as_u16(),
            200,
            "{method} {path} by an orchestrator: {}",
            reply.text
        );
    }

    // Never to in_progress, from wherever that move is legal.
    let id = app.task_titled(hr, "not for orchestrators").await;
    for from in ["todo", "blocked", "review"] {
        crate::task_tools::set_status(app, &[&id], from).await;
        let before = crate::task_tools::task_state(app, hr, &id).await;
        let reply = app
            .transition(&orchestrator, &id, r#"{"status":"in_progress"}"#)
            .await;
        assert_error_exact(&reply, 403, "orchestrator agents do not execute tasks");
        assert_eq!(crate::task_tools::task_state(app, hr, &id).await, before);
    }
    // Every other legal move is theirs to make.
    crate::task_tools::set_status(app, &[&id], "todo").await;
    move_ok(app, &orchestrator, &id, "backlog").await;
    move_ok(app, &orchestrator, &id, "todo").await;
    move_ok(app, hr, &id, "in_progress").await;
    move_ok(app, &orchestrator, &id, "blocked").await;
    move_ok(app, hr, &id, "in_progress").await;
    move_ok(app, &orchestrator, &id, "review").await;
    move_ok(app, &orchestrator, &id, "done").await;
}

async fn every_caller_may_read_every_task_route(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let read_key = app.api_key(&admin, &["read"]).await;
    let viewer_key = app.api_key(&viewer, &["read"]).await;
    let callers = [
        Caller::Agent(app.add_agent(&app.org, "observer", "active").await),
        Caller::Agent(app.add_agent(&app.org, "orchestrator", "active").await),
        Caller::Agent(app.worker(&app.org).await),
        Caller::Agent(app.org.hr.clone()),
        Caller::Bearer(viewer),
        Caller::Bearer(operator),
        Caller::Bearer(admin),
        Caller::Bearer(read_key),
        Caller::Bearer(viewer_key),
    ];
    let f = fixture(app).await;
    // Something to see on each list.
    let hr = &app.org.hr;
    let comment = json!({ "body": "visible" }).to_string();
    app.post(hr, &format!("/tasks/{}/comments", f.task), &comment)
        .await
        .data();
    let escalate = json!({ "reason": "MANUAL", "targetAgentId": f.worker.uuid }).to_string();
    app.post(hr, &format!("/tasks/{}/escalate", f.task), &escalate)
        .await
        .data();
    let expected: Vec<Value> = {
        let mut all = Vec::new();
        for path in read_paths(&f) {
            all.push(app.get(hr, &path).await.body);
        }
        all
    };
    for caller in &callers {
        for (path, seen) in read_paths(&f).iter().zip(&expected) {
            let reply = caller.call(app, Method::GET, path, None).await;
            assert_eq!(
                reply.status.as_u16(),
                200,
                "GET {path} by {caller:?}: {}",
                reply.text
            );
            if !path.starts_with("/events") {
                assert_eq!(&reply.body, seen, "GET {path} by {caller:?}");
            }
        }
    }
}

async fn tasks_created_by_users_name_the_user_as_creator(app: &TestApp) {
    let hr = &app.org.hr;
    let (_, token) = app.user_token(&app.org, "operator").await;
    let user = user_id(app, &token).await;
    let agent_task = app.task_titled(hr, "by the agent").await;

    let user_caller = Caller::Bearer(token.clone());
    let reply = user_caller
        .call(
            app,
            Method::POST,
            "/tasks",
            Some(&json!({ "title": "by the user" })),
        )
        .await;
    let task = reply.data().clone();
    let id = str_of(&task, "id");
    assert_eq!(task["creatorId"], user);
    assert_eq!(task["orgId"], app.org.id.to_string());
    let events = app.events_of(hr, &id).await;
    assert_eq!(events[0]["type"], "task.created");
    assert_eq!(events[0]["actorId"], user);

    // Through an API key the creator is still the key's user.
    let key = app.api_key(&token, &["write"]).await;
    let by_key = Caller::Bearer(key.clone())
        .call(
            app,
            Method::POST,
            "/tasks",
            Some(&json!({ "title": "by the user's key" })),
        )
        .await;
    let by_key = by_key.data().clone();
    assert_eq!(by_key["creatorId"], user);
    let key_id = str_of(&by_key, "id");

    // The filter finds exactly the user's tasks, for agents and users alike.
    let path = format!("/tasks?creatorId={user}");
    for caller in [
        Caller::Agent(hr.clone()),
        Caller::Bearer(token.clone()),
        Caller::Bearer(key),
    ] {
        let reply = caller.call(app, Method::GET, &path, None).await;
        assert_eq!(reply.ids(), [key_id.clone(), id.clone()], "{caller:?}");
    }
    let by_agent = app
        .get(hr, &format!("/tasks?creatorId={}", hr.uuid))
        .await
        .ids();
    assert_eq!(by_agent, [agent_task]);

    // A user's comment names the user as its author.
    let comment = user_caller
        .call(
            app,
            Method::POST,
            &format!("/tasks/{id}/comments"),
            Some(&json!({ "body": "from a human" })),
        )
        .await;
    let comment = comment.data();
    assert_eq!(comment["userId"], user);
    assert_eq!(comment["agentId"], Value::Null);

    // Another organization's admin sees none of it.
    let theirs = app.admin_token(&app.other).await;
    let reply = Caller::Bearer(theirs)
        .call(app, Method::GET, &path, None)
        .await;
    assert_eq!(reply.list().len(), 0);
}
