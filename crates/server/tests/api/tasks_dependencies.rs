//! `POST|GET /tasks/:id/dependencies` and `DELETE /tasks/:id/dependencies/:depId`: the
//! dependency record, self / duplicate / cycle conflicts (D-32), blocking (D-31),
//! scoping (D-8), validation (D-3, D-4), audit events (D-70), a cycle check over a long
//! chain, and concurrent additions that together would close a cycle.

use muster_domain::model::{DependencyId, OrgId, Task, TaskDependency, TaskId, Title};
use muster_domain::ports::transact;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{
    Agent, Reply, TestApp, assert_error, assert_timestamp, keys_of, send, str_of,
};
use crate::task_support::instant;

api_tests!(
    dependency_is_added_listed_and_removed,
    dependency_changes_are_audited,
    self_duplicate_and_cyclic_dependencies_are_409_and_change_nothing,
    dependencies_across_organizations_or_of_unknown_ids_are_404,
    invalid_dependency_requests_are_400_and_change_nothing,
    blocking_dependencies_hold_work_back_until_done,
    read_only_callers_cannot_change_dependencies,
    cycle_check_walks_a_chain_of_a_thousand_tasks,
    concurrent_additions_never_close_a_cycle,
);

/// `POST /tasks/{task}/dependencies` with `body`.
async fn depend(app: &TestApp, agent: &Agent, task: &str, body: &Value) -> Reply {
    app.post(
        agent,
        &format!("/tasks/{task}/dependencies"),
        &body.to_string(),
    )
    .await
}

/// Makes `task` depend on `on` (not blocking).
async fn depend_on(app: &TestApp, agent: &Agent, task: &str, on: &str) -> Reply {
    depend(app, agent, task, &json!({ "dependsOnId": on })).await
}

/// `DELETE /tasks/{task}/dependencies/{dependency}`.
async fn undepend(app: &TestApp, agent: &Agent, task: &str, dependency: &str) -> Reply {
    let path = format!("/tasks/{task}/dependencies/{dependency}");
    send(app.signed(agent, Method::DELETE, &path, None)).await
}

/// The dependencies of `task` as listed.
async fn dependencies_of(app: &TestApp, agent: &Agent, task: &str) -> Vec<Value> {
    app.get(agent, &format!("/tasks/{task}/dependencies"))
        .await
        .list()
        .clone()
}

async fn dependency_is_added_listed_and_removed(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let a = app.task_titled(&worker, "a").await;
    let b = app.task_titled(&worker, "b").await;
    let c = app.task_titled(&worker, "c").await;

    let reply = depend_on(app, &worker, &a, &b).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(keys_of(&reply.body), ["data"]);
    let ab = reply.data().clone();
    assert_eq!(
        keys_of(&ab),
        ["blocking", "createdAt", "dependsOnId", "id", "taskId"]
    );
    let id = Uuid::parse_str(&str_of(&ab, "id")).unwrap();
    assert_eq!(id.get_version_num(), 7, "ids are UUID v7 (D-6)");
    assert_eq!(ab["taskId"], a);
    assert_eq!(ab["dependsOnId"], b);
    assert_eq!(ab["blocking"], false, "blocking defaults to false");
    assert_timestamp(&ab, "createdAt");

    let ac = depend(
        app,
        &worker,
        &a,
        &json!({ "dependsOnId": c, "blocking": true }),
    )
    .await
    .data()
    .clone();
    assert_eq!(ac["blocking"], true);
    let bc = depend(
        app,
        &worker,
        &b,
        &json!({ "dependsOnId": c, "blocking": false }),
    )
    .await
    .data()
    .clone();
    assert_eq!(bc["blocking"], false);

    // Listed as answered, oldest first, per task.
    assert_eq!(
        dependencies_of(app, &worker, &a).await,
        [ab.clone(), ac.clone()]
    );
    assert_eq!(
        dependencies_of(app, &worker, &b).await,
        std::slice::from_ref(&bc)
    );
    assert!(dependencies_of(app, &worker, &c).await.is_empty());

    // Removal by the dependency's own id answers {data, message}.
    let ab_id = str_of(&ab, "id");
    let reply = undepend(app, &worker, &a, &ab_id).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(keys_of(&reply.body), ["data", "message"]);
    assert_eq!(reply.body["data"], ab);
    assert!(
        !str_of(&reply.body, "message").is_empty(),
        "a message for people"
    );
    assert_eq!(dependencies_of(app, &worker, &a).await, [ac]);
    assert_eq!(dependencies_of(app, &worker, &b).await, [bc]);

    // Gone: a second removal finds nothing.
    assert_error(&undepend(app, &worker, &a, &ab_id).await, 404, "not found");

    // The same pair can be added again, as a new record.
    let again = depend_on(app, &worker, &a, &b).await.data().clone();
    assert_ne!(again["id"], ab["id"]);
    assert_eq!(again["dependsOnId"], b);
}

async fn dependency_changes_are_audited(app: &TestApp) {
    let hr = &app.org.hr;
    let a = app.task_titled(hr, "waits").await;
    let b = app.task_titled(hr, "waited for").await;
    let added = depend(app, hr, &a, &json!({ "dependsOnId": b, "blocking": true }))
        .await
        .data()
        .clone();
    let dep_id = str_of(&added, "id");

    // Removed by a user: the event names the user as its actor.
    let (_, token) = app.user_token(&app.org, "operator").await;
    let me = send(app.bearer(&token, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text);
    let user_id = str_of(&me.body, "id");
    let path = format!("/tasks/{a}/dependencies/{dep_id}");
    let reply = send(app.bearer(&token, Method::DELETE, &path, None)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);

    let events = app.events_of(hr, &a).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "task.dependency_removed",
            "task.dependency_added",
            "task.created"
        ],
        "newest first"
    );
    let (removed, added_event) = (&events[0], &events[1]);
    for event in [removed, added_event] {
        assert_eq!(event["entityType"], "task");
        assert_eq!(event["entityId"], a);
        assert_eq!(event["severity"], "info");
    }
    assert_eq!(added_event["actorId"], hr.uuid.to_string());
    assert_eq!(added_event["payload"]["dependencyId"], dep_id);
    assert_eq!(added_event["payload"]["dependsOnTaskId"], b);
    assert_eq!(added_event["payload"]["blocking"], true);
    assert_eq!(removed["actorId"], user_id);
    assert_eq!(removed["payload"]["dependencyId"], dep_id);
    assert_eq!(removed["payload"]["dependsOnTaskId"], b);

    // Readable by type too.
    for kind in ["task.dependency_added", "task.dependency_removed"] {
        let reply = app.get(hr, &format!("/events?type={kind}")).await;
        assert_eq!(reply.list().len(), 1, "{kind}: {}", reply.text);
    }
    // The task depended on is not changed and gets no event.
    assert_eq!(app.events_of(hr, &b).await.len(), 1);
}

async fn self_duplicate_and_cyclic_dependencies_are_409_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let [a, b, c, d] = [
        app.task_titled(hr, "a").await,
        app.task_titled(hr, "b").await,
        app.task_titled(hr, "c").await,
        app.task_titled(hr, "d").await,
    ];

    assert_error(&depend_on(app, hr, &a, &a).await, 409, "itself");

    let ab = depend_on(app, hr, &a, &b).await.data().clone();
    assert_error(&depend_on(app, hr, &a, &b).await, 409, "already depends");
    let blocking = json!({ "dependsOnId": b, "blocking": true });
    assert_error(
        &depend(app, hr, &a, &blocking).await,
        409,
        "already depends",
    );

    // Two tasks waiting for each other.
    assert_error(&depend_on(app, hr, &b, &a).await, 409, "cycle");

    // A -> B, B -> C, then C -> A closes a cycle of three.
    let bc = depend_on(app, hr, &b, &c).await.data().clone();
    assert_error(&depend_on(app, hr, &c, &a).await, 409, "cycle");
    assert_error(&depend_on(app, hr, &c, &b).await, 409, "cycle");

    // Not cycles: a shortcut over the chain and a diamond.
    let ac = depend_on(app, hr, &a, &c).await.data().clone();
    let da = depend_on(app, hr, &d, &a).await.data().clone();
    let dc = depend_on(app, hr, &d, &c).await.data().clone();

    // The refusals stored nothing and wrote no event.
    assert_eq!(dependencies_of(app, hr, &a).await, [ab, ac]);
    assert_eq!(
        dependencies_of(app, hr, &b).await,
        std::slice::from_ref(&bc)
    );
    assert!(dependencies_of(app, hr, &c).await.is_empty());
    assert_eq!(dependencies_of(app, hr, &d).await, [da, dc]);
    let added = |task: &str| {
        let task = task.to_owned();
        async move {
            app.events_of(hr, &task)
                .await
                .iter()
                .filter(|e| e["type"] == "task.dependency_added")
                .count()
        }
    };
    assert_eq!(added(&a).await, 2);
    assert_eq!(added(&b).await, 1);
    assert_eq!(added(&c).await, 0);

    // Once the chain is cut, the former cycle edge is fine: C -> B (B depends on
    // nothing now); C -> A still closes one through A -> C.
    let reply = undepend(app, hr, &b, &str_of(&bc, "id")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(depend_on(app, hr, &c, &b).await.status, StatusCode::OK);
    assert_error(&depend_on(app, hr, &c, &a).await, 409, "cycle");
}

async fn dependencies_across_organizations_or_of_unknown_ids_are_404(app: &TestApp) {
    let hr = &app.org.hr;
    let theirs = &app.other.hr;
    let a = app.task_titled(hr, "a").await;
    let b = app.task_titled(hr, "b").await;
    let c = app.task_titled(hr, "c").await;
    let x = app.task_titled(theirs, "theirs").await;
    let missing = Uuid::now_v7().to_string();

    // The task depended on must be in the caller's organization.
    assert_error(&depend_on(app, hr, &a, &x).await, 404, "not found");
    assert_error(&depend_on(app, hr, &a, &missing).await, 404, "not found");
    // So must the task in the path, for every method.
    assert_error(&depend_on(app, hr, &x, &a).await, 404, "not found");
    assert_error(&depend_on(app, theirs, &a, &b).await, 404, "not found");
    assert_error(&depend_on(app, hr, &missing, &a).await, 404, "not found");
    let foreign_list = app.get(theirs, &format!("/tasks/{a}/dependencies")).await;
    assert_error(&foreign_list, 404, "not found");
    let missing_list = app.get(hr, &format!("/tasks/{missing}/dependencies")).await;
    assert_error(&missing_list, 404, "not found");

    let ab = depend_on(app, hr, &a, &b).await.data().clone();
    let bc = depend_on(app, hr, &b, &c).await.data().clone();
    let (ab_id, bc_id) = (str_of(&ab, "id"), str_of(&bc, "id"));
    // An unknown dependency id.
    let reply = undepend(app, hr, &a, &Uuid::now_v7().to_string()).await;
    assert_error(&reply, 404, "not found");
    // A dependency of another task, under this one (and under the task it points to).
    assert_error(&undepend(app, hr, &a, &bc_id).await, 404, "not found");
    assert_error(&undepend(app, hr, &c, &bc_id).await, 404, "not found");
    // A task id in place of the dependency id.
    assert_error(&undepend(app, hr, &a, &b).await, 404, "not found");
    // Another organization, or an unknown task.
    assert_error(&undepend(app, theirs, &a, &ab_id).await, 404, "not found");
    assert_error(&undepend(app, hr, &missing, &ab_id).await, 404, "not found");
    assert_error(&undepend(app, hr, &x, &ab_id).await, 404, "not found");

    // Nothing was removed, nothing was recorded for the refusals.
    assert_eq!(dependencies_of(app, hr, &a).await, [ab]);
    assert_eq!(dependencies_of(app, hr, &b).await, [bc]);
    assert_eq!(app.events_of(hr, &a).await.len(), 2);
    assert_eq!(app.events_of(hr, &b).await.len(), 2);
    assert_eq!(app.events_of(theirs, &x).await.len(), 1);
    // The other organization's events are untouched and ours are invisible to it.
    assert!(app.events_of(theirs, &a).await.is_empty());
}

async fn invalid_dependency_requests_are_400_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let a = app.task_titled(hr, "a").await;
    let b = app.task_titled(hr, "b").await;
    let cases: Vec<(String, &str)> = vec![
        ("{}".into(), "dependsOnId is required"),
        (r#"{"blocking":true}"#.into(), "dependsOnId is required"),
        (r#"{"dependsOnId":"nope"}"#.into(), "dependsOnId"),
        (r#"{"dependsOnId":null}"#.into(), "dependsOnId"),
        (r#"{"dependsOnId":42}"#.into(), "dependsOnId"),
        (
            format!(r#"{{"dependsOnId":"{b}","blocking":"yes"}}"#),
            "blocking",
        ),
        (
            format!(r#"{{"dependsOnId":"{b}","blocking":1}}"#),
            "blocking",
        ),
        (
            format!(r#"{{"dependsOnId":"{b}","blocking":null}}"#),
            "blocking",
        ),
        (
            format!(r#"{{"dependsOnId":"{b}","taskId":"{a}"}}"#),
            "property taskId should not exist",
        ),
        (format!(r#"{{"dependsOnId":"{b}""#), "malformed JSON"),
        (String::new(), "JSON object"),
        // Not an object: the fields in order as an array, or nothing usable.
        (format!(r#"["{b}"]"#), "JSON object"),
        (format!(r#"["{b}",true]"#), "JSON object"),
        ("[]".into(), ""),
        ("null".into(), ""),
        (format!(r#""{b}""#), ""),
    ];
    for (body, message) in &cases {
        let reply = app
            .post(hr, &format!("/tasks/{a}/dependencies"), body)
            .await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "body {body}: {}",
            reply.text
        );
        assert_error(&reply, 400, message);
    }

    // Ids in the path that are not UUIDs.
    let body = json!({ "dependsOnId": b }).to_string();
    let reply = app.post(hr, "/tasks/not-a-uuid/dependencies", &body).await;
    assert_error(&reply, 400, "id must be a UUID");
    let reply = app.get(hr, "/tasks/not-a-uuid/dependencies").await;
    assert_error(&reply, 400, "id must be a UUID");
    let dep = Uuid::now_v7();
    let reply = undepend(app, hr, "not-a-uuid", &dep.to_string()).await;
    assert_error(&reply, 400, "id must be a UUID");
    let reply = undepend(app, hr, &a, "not-a-uuid").await;
    assert_error(&reply, 400, "depId must be a UUID");
    let reply = undepend(app, hr, &a, "42").await;
    assert_error(&reply, 400, "depId must be a UUID");

    assert!(dependencies_of(app, hr, &a).await.is_empty());
    assert_eq!(app.events_of(hr, &a).await.len(), 1, "only task.created");
}

/// D-31: a blocking dependency holds back `in_progress`, `review` and `done` until its task is
/// done; a non-blocking one never does.
async fn blocking_dependencies_hold_work_back_until_done(app: &TestApp) {
    let hr = &app.org.hr;
    let a = app.task_titled(hr, "waits").await;
    let b = app.task_titled(hr, "blocks").await;
    let c = app.task_titled(hr, "informs").await;
    depend(app, hr, &a, &json!({ "dependsOnId": b, "blocking": true }))
        .await
        .data();
    depend_on(app, hr, &a, &c).await.data();

    let reply = app.transition(hr, &a, r#"{"status":"in_progress"}"#).await;
    assert_error(&reply, 409, &b);
    assert!(
        !reply.body["message"].as_str().unwrap().contains(&c),
        "a non-blocking dependency is not named: {}",
        reply.text
    );
    // Moves that do not start work are fine.
    let reply = app.transition(hr, &a, r#"{"status":"backlog"}"#).await;
    assert_eq!(reply.data()["status"], "backlog");
    let reply = app.transition(hr, &a, r#"{"status":"todo"}"#).await;
    assert_eq!(reply.data()["status"], "todo");

    // Started but not done is still open.
    let reply = app.transition(hr, &b, r#"{"status":"in_progress"}"#).await;
    assert_eq!(reply.data()["status"], "in_progress");
    assert_error(
        &app.transition(hr, &a, r#"{"status":"in_progress"}"#).await,
        409,
        &b,
    );
    let reply = app.transition(hr, &b, r#"{"status":"done"}"#).await;
    assert_eq!(reply.data()["status"], "done");

    // Done: work may start, and finish, while the non-blocking one is still todo.
    for to in ["in_progress", "review", "done"] {
        let reply = app
            .transition(hr, &a, &json!({ "status": to }).to_string())
            .await;
        assert_eq!(reply.data()["status"], to);
    }

    // A blocking dependency added to work under way holds back review and done, but
    // not blocked; and once blocked, not the way back to in_progress.
    let started = app.task_titled(hr, "started").await;
    let late = app.task_titled(hr, "late blocker").await;
    let reply = app
        .transition(hr, &started, r#"{"status":"in_progress"}"#)
        .await;
    assert_eq!(reply.data()["status"], "in_progress");
    let body = json!({ "dependsOnId": late, "blocking": true });
    let dependency = depend(app, hr, &started, &body).await.data().clone();
    for to in ["review", "done"] {
        let reply = app
            .transition(hr, &started, &json!({ "status": to }).to_string())
            .await;
        assert_error(&reply, 409, &late);
    }
    let reply = app
        .transition(hr, &started, r#"{"status":"blocked"}"#)
        .await;
    assert_eq!(reply.data()["status"], "blocked");
    let reply = app
        .transition(hr, &started, r#"{"status":"in_progress"}"#)
        .await;
    assert_error(&reply, 409, &late);
    // Removing the dependency frees it.
    let reply = undepend(app, hr, &started, &str_of(&dependency, "id")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let reply = app
        .transition(hr, &started, r#"{"status":"in_progress"}"#)
        .await;
    assert_eq!(reply.data()["status"], "in_progress");

    // Approval applies the done transition with its dependency check (D-33).
    let assignee = app.worker(&app.org).await;
    let gated = app
        .create_task(
            hr,
            &json!({ "title": "gated", "approvalRequired": true, "assigneeId": assignee.uuid }),
        )
        .await;
    let gated = str_of(&gated, "id");
    for to in ["in_progress", "review"] {
        let reply = app
            .transition(&assignee, &gated, &json!({ "status": to }).to_string())
            .await;
        assert_eq!(reply.data()["status"], to);
    }
    let blocker = app.task_titled(hr, "approval blocker").await;
    let body = json!({ "dependsOnId": blocker, "blocking": true });
    depend(app, hr, &gated, &body).await.data();
    let approve = format!("/tasks/{gated}/approve");
    assert_error(&app.post(hr, &approve, "").await, 409, &blocker);
    for to in ["in_progress", "done"] {
        let reply = app
            .transition(hr, &blocker, &json!({ "status": to }).to_string())
            .await;
        assert_eq!(reply.data()["status"], to);
    }
    assert_eq!(app.post(hr, &approve, "").await.data()["status"], "done");
}

/// Observers are read-only (D-55), viewers too (D-14), and a `read` API key may not
/// mutate (D-17): each is 403 and changes nothing, but may list.
async fn read_only_callers_cannot_change_dependencies(app: &TestApp) {
    let hr = &app.org.hr;
    let a = app.task_titled(hr, "a").await;
    let b = app.task_titled(hr, "b").await;
    let c = app.task_titled(hr, "c").await;
    let ab = depend_on(app, hr, &a, &b).await.data().clone();
    let ab_id = str_of(&ab, "id");

    let observer = app.add_agent(&app.org, "observer", "active").await;
    assert_error(&depend_on(app, &observer, &a, &c).await, 403, "");
    assert_error(&undepend(app, &observer, &a, &ab_id).await, 403, "");
    assert_eq!(
        dependencies_of(app, &observer, &a).await,
        std::slice::from_ref(&ab)
    );

    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let admin = app.admin_token(&app.org).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    for credential in [&viewer, &read_key] {
        let body = json!({ "dependsOnId": c });
        let path = format!("/tasks/{a}/dependencies");
        let reply = send(app.bearer(credential, Method::POST, &path, Some(&body))).await;
        assert_error(&reply, 403, "");
        let path = format!("/tasks/{a}/dependencies/{ab_id}");
        let reply = send(app.bearer(credential, Method::DELETE, &path, None)).await;
        assert_error(&reply, 403, "");
        let path = format!("/tasks/{a}/dependencies");
        let reply = send(app.bearer(credential, Method::GET, &path, None)).await;
        assert_eq!(reply.list(), std::slice::from_ref(&ab));
    }
    // A write key may.
    let write_key = app.api_key(&admin, &["write"]).await;
    let body = json!({ "dependsOnId": c });
    let path = format!("/tasks/{a}/dependencies");
    let reply = send(app.bearer(&write_key, Method::POST, &path, Some(&body))).await;
    assert_eq!(reply.data()["dependsOnId"], c);

    assert_eq!(dependencies_of(app, hr, &a).await.len(), 2);
}

/// Seeds `count` tasks of `org` as stored, in one transaction (a thousand through the
/// API would take most of the test), and chains them: each depends on the next. Answers
/// the task ids in chain order.
async fn seed_chain(app: &TestApp, org: Uuid, count: usize) -> Vec<String> {
    let org = OrgId::from_uuid(org);
    let at = instant("2026-01-01T00:00:00.000Z");
    let ids: Vec<TaskId> = (0..count)
        .map(|_| TaskId::from_uuid(Uuid::now_v7()))
        .collect();
    let tasks: Vec<Task> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| {
            Task::new(
                *id,
                org,
                Title::new(&format!("chain {}", n + 1)).unwrap(),
                at,
            )
        })
        .collect();
    let edges: Vec<TaskDependency> = ids
        .iter()
        .zip(ids.iter().skip(1))
        .map(|(task, on)| TaskDependency {
            id: DependencyId::from_uuid(Uuid::now_v7()),
            org_id: org,
            task_id: *task,
            depends_on_id: *on,
            blocking: false,
            created_at: at,
        })
        .collect();
    transact(&app.db().db, move |tx| {
        Box::pin(async move {
            for task in &tasks {
                tx.insert_task(task).await?;
            }
            for edge in &edges {
                tx.insert_dependency(edge).await?;
            }
            Ok(())
        })
    })
    .await
    .unwrap();
    ids.iter().map(|id| id.as_uuid().to_string()).collect()
}

/// The cycle check is one recursive query: it finds a cycle closed over a chain of a
/// thousand tasks, and lets through what closes none.
async fn cycle_check_walks_a_chain_of_a_thousand_tasks(app: &TestApp) {
    let hr = &app.org.hr;
    let chain = seed_chain(app, app.org.id, 1000).await;
    let (first, last) = (&chain[0], &chain[999]);

    // The seeded rows are what the API sees.
    let task = app.get(hr, &format!("/tasks/{first}")).await;
    assert_eq!(task.data()["title"], "chain 1");
    assert_eq!(
        dependencies_of(app, hr, first).await[0]["dependsOnId"],
        chain[1]
    );
    assert_eq!(
        dependencies_of(app, hr, &chain[998]).await[0]["dependsOnId"],
        *last
    );
    assert!(dependencies_of(app, hr, last).await.is_empty());

    // t1000 -> t1 closes a cycle through all 1,000 tasks; so does t999 -> t2.
    assert_error(&depend_on(app, hr, last, first).await, 409, "cycle");
    assert_error(
        &depend_on(app, hr, &chain[998], &chain[1]).await,
        409,
        "cycle",
    );
    assert!(dependencies_of(app, hr, last).await.is_empty());

    // What closes no cycle is added: a new task waiting for the whole chain (the walk
    // covers all of it and finds nothing), a shortcut along the chain, and the end of
    // the chain waiting for a new task.
    let outside = app.task_titled(hr, "outside").await;
    let reply = depend_on(app, hr, &outside, first).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let reply = depend_on(app, hr, first, last).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let fresh = app.task_titled(hr, "fresh").await;
    let reply = depend_on(app, hr, last, &fresh).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    // ... and now the fresh task waiting for the chain's start is a cycle too.
    assert_error(&depend_on(app, hr, &fresh, first).await, 409, "cycle");
    assert_error(&depend_on(app, hr, &fresh, &outside).await, 409, "cycle");

    // Cutting the chain in the middle opens the way: t1000 -> t1 is no cycle once
    // t500 no longer depends on t501 (and t1 -> t1000 no longer walks there).
    let middle = dependencies_of(app, hr, &chain[499]).await;
    assert_eq!(middle.len(), 1);
    assert_eq!(middle[0]["dependsOnId"], chain[500]);
    let reply = undepend(app, hr, &chain[499], &str_of(&middle[0], "id")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let shortcut = dependencies_of(app, hr, first).await;
    let shortcut = shortcut.iter().find(|d| d["dependsOnId"] == *last).unwrap();
    let reply = undepend(app, hr, first, &str_of(shortcut, "id")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let reply = depend_on(app, hr, last, first).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    // ... which makes the two halves one loop-free chain again: t500 -> t501 closes one.
    assert_error(
        &depend_on(app, hr, &chain[499], &chain[500]).await,
        409,
        "cycle",
    );

    // Another organization's graph is its own: the same shape there is no cycle here.
    let theirs = &app.other.hr;
    let their_chain = seed_chain(app, app.other.id, 3).await;
    let reply = depend_on(app, theirs, &their_chain[2], &their_chain[0]).await;
    assert_error(&reply, 409, "cycle");
    let one = app.task_titled(theirs, "one").await;
    let reply = depend_on(app, theirs, &one, &their_chain[0]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
}

/// Two requests that each alone are fine but together close a cycle: exactly one is
/// stored, the other answers 409; likewise three that close a cycle of three, and two
/// that add the same dependency.
async fn concurrent_additions_never_close_a_cycle(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    for round in 0..8 {
        let waits = race_opposite_pair(app, &worker, round).await;
        race_triangle(app, &worker, round).await;
        race_duplicate(app, &worker, &waits, round).await;
    }
    let added = app
        .get(hr, "/events?type=task.dependency_added&limit=200")
        .await;
    assert_eq!(
        added.list().len(),
        8 * (1 + 2 + 1),
        "one event per stored dependency"
    );
}

/// A -> B and B -> A at once; answers A.
async fn race_opposite_pair(app: &TestApp, worker: &Agent, round: usize) -> String {
    let hr = &app.org.hr;
    let first = app.task_titled(hr, &format!("a{round}")).await;
    let second = app.task_titled(hr, &format!("b{round}")).await;
    let (forth, back) = tokio::join!(
        depend_on(app, hr, &first, &second),
        depend_on(app, worker, &second, &first)
    );
    let mut statuses = [forth.status.as_u16(), back.status.as_u16()];
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        [200, 409],
        "round {round}: {} / {}",
        forth.text,
        back.text
    );
    for reply in [&forth, &back] {
        if reply.status == StatusCode::CONFLICT {
            assert_error(reply, 409, "cycle");
        }
    }
    let stored = dependencies_of(app, hr, &first).await.len()
        + dependencies_of(app, hr, &second).await.len();
    assert_eq!(stored, 1, "round {round}");
    first
}

/// The three edges of a triangle at once: any two are fine, all three never.
async fn race_triangle(app: &TestApp, worker: &Agent, round: usize) {
    let hr = &app.org.hr;
    let one = app.task_titled(hr, &format!("c{round}")).await;
    let two = app.task_titled(hr, &format!("d{round}")).await;
    let three = app.task_titled(hr, &format!("e{round}")).await;
    let (first, second, third) = tokio::join!(
        depend_on(app, hr, &one, &two),
        depend_on(app, worker, &two, &three),
        depend_on(app, hr, &three, &one)
    );
    let replies = [&first, &second, &third];
    for reply in replies {
        if reply.status != StatusCode::OK {
            assert_error(reply, 409, "cycle");
        }
    }
    let ok = replies
        .iter()
        .filter(|r| r.status == StatusCode::OK)
        .count();
    assert_eq!(
        ok, 2,
        "round {round}: {} / {} / {}",
        first.text, second.text, third.text
    );
}

/// The same dependency twice at once: stored once, the other is a duplicate.
async fn race_duplicate(app: &TestApp, worker: &Agent, on: &str, round: usize) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, &format!("f{round}")).await;
    let (first, second) = tokio::join!(
        depend_on(app, hr, &task, on),
        depend_on(app, worker, &task, on)
    );
    let mut statuses = [first.status.as_u16(), second.status.as_u16()];
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        [200, 409],
        "round {round}: {} / {}",
        first.text,
        second.text
    );
    for reply in [&first, &second] {
        if reply.status == StatusCode::CONFLICT {
            assert_error(reply, 409, "already depends");
        }
    }
    assert_eq!(dependencies_of(app, hr, &task).await.len(), 1);
}
