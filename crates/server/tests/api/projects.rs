//! Projects over HTTP (issue 66): every route from creation to archive, tasks joining
//! them and filtered, claimed and audited by them, the progress of a fixture counted by
//! hand (its spend from a real run's usage), refusals that change nothing, another
//! organization's project not found on every route, and an archive racing task
//! creations.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Agent, Reply, TestApp, assert_error_code, send, str_of};
use crate::runs_support::{report, start_run, task_in_progress};
use crate::task_support::walk;

api_tests!(
    a_project_goes_through_every_route,
    tasks_join_projects_and_are_found_by_them,
    progress_matches_a_fixture_counted_by_hand,
    bad_input_is_refused_and_changes_nothing,
    an_archived_or_missing_project_takes_no_task,
    another_organizations_project_is_not_found_on_every_route,
    an_archive_racing_task_creations_lets_none_in_after_it,
);

async fn create(app: &TestApp, agent: &Agent, body: &Value) -> Reply {
    app.post(agent, "/projects", &body.to_string()).await
}

/// Creates a project named `name` as `agent` (asserting 201), answering its id.
async fn project(app: &TestApp, agent: &Agent, name: &str) -> String {
    let reply = create(app, agent, &json!({"name": name})).await;
    assert_eq!(reply.status.as_u16(), 201, "create project: {}", reply.text);
    str_of(&reply.body["data"], "id")
}

async fn patch(app: &TestApp, agent: &Agent, path: &str, body: &Value) -> Reply {
    let body = body.to_string();
    send(app.signed(agent, Method::PATCH, path, Some(&body))).await
}

async fn a_project_goes_through_every_route(app: &TestApp) {
    let hr = &app.org.hr;
    let reply = create(
        app,
        hr,
        &json!({"name": " Launch ", "goal": "Ten customers", "dueAt": "2027-01-31"}),
    )
    .await;
    assert_eq!(reply.status.as_u16(), 201, "{}", reply.text);
    let created = reply.body["data"].clone();
    let id = str_of(&created, "id");
    assert_eq!(created["name"], "Launch");
    assert_eq!(created["goal"], "Ten customers");
    assert_eq!(created["description"], Value::Null);
    assert_eq!(created["dueAt"], "2027-01-31T00:00:00.000Z");
    assert_eq!(created["status"], "active");
    assert_eq!(created["creatorId"], hr.uuid.to_string());
    assert_eq!(created["archivedAt"], Value::Null);
    assert_eq!(created["orgId"], app.org.id.to_string());
    assert!(created.get("progress").is_none(), "{created}");
    crate::helpers::assert_timestamp(&created, "createdAt");

    let read = app.get(hr, &format!("/projects/{id}")).await;
    assert_eq!(read.status.as_u16(), 200, "{}", read.text);
    let progress = &read.data()["progress"];
    assert_eq!(progress["total"], 0);
    assert_eq!(progress["donePct"], 0);
    assert_eq!(progress["byStatus"]["in_progress"], 0);
    assert_eq!(progress["overdueTasks"], json!([]));

    let second = project(app, hr, "Later").await;
    let listed = app.get(hr, "/projects?limit=1").await;
    assert_eq!(listed.ids(), std::slice::from_ref(&second));
    let cursor = str_of(&listed.body["meta"], "nextCursor");
    let rest = app
        .get(hr, &format!("/projects?limit=1&cursor={cursor}"))
        .await;
    assert_eq!(rest.ids(), std::slice::from_ref(&id));
    assert!(rest.body.get("meta").is_none(), "{}", rest.text);

    let edited = patch(
        app,
        hr,
        &format!("/projects/{id}"),
        &json!({"goal": null, "description": "All of it"}),
    )
    .await;
    assert_eq!(edited.status.as_u16(), 200, "{}", edited.text);
    assert_eq!(edited.data()["goal"], Value::Null);
    assert_eq!(edited.data()["description"], "All of it");

    let archived = app.post(hr, &format!("/projects/{id}/archive"), "").await;
    assert_eq!(archived.status.as_u16(), 200, "{}", archived.text);
    assert_eq!(archived.data()["status"], "archived");
    crate::helpers::assert_timestamp(archived.data(), "archivedAt");
    let again = app.post(hr, &format!("/projects/{id}/archive"), "{}").await;
    assert_eq!(again.data()["archivedAt"], archived.data()["archivedAt"]);
    let only_archived = app.get(hr, "/projects?status=archived").await;
    assert_eq!(only_archived.ids(), std::slice::from_ref(&id));
    let only_active = app.get(hr, "/projects?status=active").await;
    assert_eq!(only_active.ids(), [second]);

    let types: Vec<String> = app
        .events_of(hr, &id)
        .await
        .iter()
        .map(|e| str_of(e, "type"))
        .collect();
    assert_eq!(
        types,
        ["project.archived", "project.updated", "project.created"]
    );
    let updated = app.events_of_type(hr, &id, "project.updated").await;
    assert_eq!(
        updated[0]["payload"]["fields"],
        json!(["goal", "description"])
    );
    assert_eq!(updated[0]["entityType"], "project");
}

async fn tasks_join_projects_and_are_found_by_them(app: &TestApp) {
    let hr = &app.org.hr;
    let launch = project(app, hr, "Launch").await;
    let parent = app
        .create_task(hr, &json!({"title": "parent", "projectId": launch}))
        .await;
    assert_eq!(parent["projectId"], launch);
    let child = app
        .create_task(
            hr,
            &json!({"title": "child", "parentTaskId": str_of(&parent, "id")}),
        )
        .await;
    assert_eq!(
        child["projectId"], launch,
        "a sub-task joins its parent's project"
    );
    let loose = app.create_task(hr, &json!({"title": "loose"})).await;
    assert!(loose.get("projectId").is_none(), "{loose}");

    let listed = app.get(hr, &format!("/tasks?projectId={launch}")).await;
    let mut ids = listed.ids();
    ids.sort();
    let mut expected = vec![str_of(&parent, "id"), str_of(&child, "id")];
    expected.sort();
    assert_eq!(ids, expected);

    // Out of the project, then claimed within it: only the parent is left to claim.
    let child_id = str_of(&child, "id");
    let out = patch(
        app,
        hr,
        &format!("/tasks/{child_id}"),
        &json!({"projectId": null}),
    )
    .await;
    assert_eq!(out.status.as_u16(), 200, "{}", out.text);
    assert!(out.data().get("projectId").is_none(), "{}", out.text);
    let worker = app.worker(&app.org).await;
    let body = json!({"projectId": launch, "leaseSeconds": 60}).to_string();
    let claimed = app.post(&worker, "/tasks/claim", &body).await;
    assert_eq!(claimed.status.as_u16(), 200, "{}", claimed.text);
    assert_eq!(claimed.data()["id"], parent["id"]);
    let none_left = app.post(&worker, "/tasks/claim", &body).await;
    assert_eq!(none_left.status.as_u16(), 204, "{}", none_left.text);

    let events = app
        .get(hr, &format!("/events?projectId={launch}&limit=100"))
        .await;
    let about: Vec<String> = events
        .list()
        .iter()
        .map(|e| str_of(e, "entityId"))
        .collect();
    assert!(about.contains(&launch));
    assert!(about.contains(&str_of(&parent, "id")));
    assert!(!about.contains(&child_id), "the child left with its events");
    assert!(!about.contains(&str_of(&loose, "id")));
    assert_eq!(events.body["meta"]["total"], about.len());
}

/// The fixture of docs/projects.md over HTTP: six tasks in the project (todo past due,
/// cancelled past due, blocked, two done, one in progress with a run that cost
/// $0.50), one outside it.
async fn progress_matches_a_fixture_counted_by_hand(app: &TestApp) {
    let hr = &app.org.hr;
    let launch = project(app, hr, "Launch").await;
    let in_launch = |title: &str, extra: Value| {
        let mut body = json!({"title": title, "projectId": launch, "reward": 0});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        body
    };
    let late = app
        .create_task(hr, &in_launch("late", json!({"dueAt": "2020-01-01"})))
        .await;
    let dropped = app
        .create_task(hr, &in_launch("dropped", json!({"dueAt": "2020-01-01"})))
        .await;
    walk(app, hr, &str_of(&dropped, "id"), &["cancelled"]).await;
    let stuck = app.create_task(hr, &in_launch("stuck", json!({}))).await;
    walk(app, hr, &str_of(&stuck, "id"), &["in_progress", "blocked"]).await;
    for title in ["shipped", "tested"] {
        let done = app.create_task(hr, &in_launch(title, json!({}))).await;
        walk(app, hr, &str_of(&done, "id"), &["in_progress", "done"]).await;
    }
    let worker = crate::runs_support::funded_worker(app, 1_000).await;
    let busy = task_in_progress(app, &worker).await;
    let moved = patch(
        app,
        hr,
        &format!("/tasks/{busy}"),
        &json!({"projectId": launch}),
    )
    .await;
    assert_eq!(moved.status.as_u16(), 200, "{}", moved.text);
    let run = start_run(app, &worker, &busy, &json!({})).await;
    let usage = json!({"model": "gpt-5", "inputTokens": 1000, "outputTokens": 100,
        "costMicrousd": 500_000});
    let paid = report(app, &worker, &str_of(&run, "id"), &usage).await;
    assert_eq!(paid.status.as_u16(), 201, "{}", paid.text);
    app.task_titled(hr, "not in it").await;

    let read = app.get(hr, &format!("/projects/{launch}")).await;
    let progress = &read.data()["progress"];
    assert_eq!(
        (
            &progress["total"],
            &progress["open"],
            &progress["done"],
            &progress["donePct"]
        ),
        (&json!(6), &json!(3), &json!(2), &json!(40)),
        "{progress}"
    );
    assert_eq!(
        progress["byStatus"],
        json!({"backlog": 0, "todo": 1, "in_progress": 1, "review": 0, "done": 2,
               "blocked": 1, "cancelled": 1})
    );
    assert_eq!(progress["overdue"], 1);
    assert_eq!(progress["overdueTasks"][0]["id"], late["id"]);
    assert_eq!(progress["overdueTasks"][0]["title"], "late");
    assert_eq!(
        progress["overdueTasks"][0]["dueAt"],
        "2020-01-01T00:00:00.000Z"
    );
    assert_eq!(progress["blocked"], 1);
    assert_eq!(progress["blockedTasks"][0]["id"], stuck["id"]);
    assert_eq!(progress["blockedTasks"][0]["status"], "blocked");
    assert_eq!(progress["spentCredits"], 500);
    assert_eq!(progress["costMicrousd"], 500_000);
}

async fn bad_input_is_refused_and_changes_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let id = project(app, hr, "Launch").await;
    let long_goal = "g".repeat(2_001);
    for body in [
        json!({}).to_string(),
        json!({"name": "   "}).to_string(),
        json!({"name": "x".repeat(256)}).to_string(),
        json!({"name": "L", "goal": long_goal}).to_string(),
        json!({"name": "L", "dueAt": "soon"}).to_string(),
        json!({"name": "L", "owner": "me"}).to_string(),
        json!({"name": 7}).to_string(),
        "{\"name\": ".to_owned(),
    ] {
        let reply = app.post(hr, "/projects", &body).await;
        assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
        assert!(reply.body["code"].is_string(), "{}", reply.text);
    }
    for body in [
        json!({}),
        json!({"name": null}),
        json!({"status": "archived"}),
    ] {
        let reply = patch(app, hr, &format!("/projects/{id}"), &body).await;
        assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
    }
    for query in [
        "status=closed",
        "limit=0",
        "limit=501",
        "cursor=nope",
        "sort=name",
    ] {
        let reply = app.get(hr, &format!("/projects?{query}")).await;
        assert_eq!(reply.status.as_u16(), 400, "{query}: {}", reply.text);
    }
    let not_an_id = app.get(hr, "/projects/not-a-uuid").await;
    assert_eq!(not_an_id.status.as_u16(), 400, "{}", not_an_id.text);
    let archive_body = app
        .post(hr, &format!("/projects/{id}/archive"), "{\"x\":1}")
        .await;
    assert_eq!(archive_body.status.as_u16(), 400, "{}", archive_body.text);
    // An observer reads but changes nothing.
    let observer = app.add_agent(&app.org, "observer", "active").await;
    assert_eq!(
        app.get(&observer, &format!("/projects/{id}"))
            .await
            .status
            .as_u16(),
        200
    );
    let refused = create(app, &observer, &json!({"name": "Mine"})).await;
    assert_error_code(&refused, 403, "observer_read_only");
    let refused = app
        .post(&observer, &format!("/projects/{id}/archive"), "")
        .await;
    assert_error_code(&refused, 403, "observer_read_only");
    // Nothing changed.
    let listed = app.get(hr, "/projects").await;
    assert_eq!(listed.ids(), std::slice::from_ref(&id));
    let read = app.get(hr, &format!("/projects/{id}")).await;
    assert_eq!(read.data()["status"], "active");
    assert_eq!(
        app.events_of(hr, &id).await.len(),
        1,
        "only project.created"
    );
}

async fn an_archived_or_missing_project_takes_no_task(app: &TestApp) {
    let hr = &app.org.hr;
    let archived = project(app, hr, "Done with").await;
    app.post(hr, &format!("/projects/{archived}/archive"), "")
        .await;
    let refused = app
        .post(
            hr,
            "/tasks",
            &json!({"title": "late", "projectId": archived}).to_string(),
        )
        .await;
    assert_error_code(&refused, 409, "project_archived");
    let edit = patch(
        app,
        hr,
        &format!("/projects/{archived}"),
        &json!({"name": "Again"}),
    )
    .await;
    assert_error_code(&edit, 409, "project_archived");
    let task = app.task_titled(hr, "loose").await;
    let moved = patch(
        app,
        hr,
        &format!("/tasks/{task}"),
        &json!({"projectId": archived}),
    )
    .await;
    assert_error_code(&moved, 409, "project_archived");
    let missing = Uuid::now_v7().to_string();
    let refused = app
        .post(
            hr,
            "/tasks",
            &json!({"title": "lost", "projectId": missing}).to_string(),
        )
        .await;
    assert_error_code(&refused, 404, "project_not_found");
    let worker = app.worker(&app.org).await;
    let claim = app
        .post(
            &worker,
            "/tasks/claim",
            &json!({"projectId": missing}).to_string(),
        )
        .await;
    assert_error_code(&claim, 404, "project_not_found");
    let listed = app.get(hr, "/tasks").await;
    assert_eq!(
        listed.ids(),
        std::slice::from_ref(&task),
        "nothing else was created"
    );
    let read = app.get(hr, &format!("/tasks/{task}")).await;
    assert!(read.data().get("projectId").is_none(), "{}", read.text);
}

async fn another_organizations_project_is_not_found_on_every_route(app: &TestApp) {
    let id = project(app, &app.org.hr, "Ours").await;
    let theirs = &app.other.hr;
    let patch_body = json!({"name": "Theirs now"}).to_string();
    for (method, path, body) in [
        (Method::GET, format!("/projects/{id}"), None),
        (
            Method::PATCH,
            format!("/projects/{id}"),
            Some(patch_body.as_str()),
        ),
        (Method::POST, format!("/projects/{id}/archive"), Some("")),
    ] {
        let reply = send(app.signed(theirs, method.clone(), &path, body)).await;
        assert_error_code(&reply, 404, "project_not_found");
        let unknown = path.replace(&id, &Uuid::now_v7().to_string());
        let reply = send(app.signed(theirs, method, &unknown, body)).await;
        assert_error_code(&reply, 404, "project_not_found");
    }
    assert!(app.get(theirs, "/projects").await.list().is_empty());
    let task = app
        .post(
            theirs,
            "/tasks",
            &json!({"title": "in", "projectId": id}).to_string(),
        )
        .await;
    assert_error_code(&task, 404, "project_not_found");
    let events = app.get(theirs, &format!("/events?projectId={id}")).await;
    assert!(events.list().is_empty(), "{}", events.text);
    let tasks = app.get(theirs, &format!("/tasks?projectId={id}")).await;
    assert!(tasks.list().is_empty(), "{}", tasks.text);
    // Untouched.
    let read = app.get(&app.org.hr, &format!("/projects/{id}")).await;
    assert_eq!(read.data()["name"], "Ours");
    assert_eq!(read.data()["status"], "active");
}

/// Twenty task creations race an archive of their project: every creation either got in
/// before the archive (its task created no later than the project was archived) or was
/// refused with 409 `project_archived`; none joined the archived project after it.
async fn an_archive_racing_task_creations_lets_none_in_after_it(app: &TestApp) {
    let hr = &app.org.hr;
    let id = project(app, hr, "Racing").await;
    let creations = (0..20).map(|i| {
        let body = json!({"title": format!("racer {i}"), "projectId": id, "reward": 0});
        async move { app.post(hr, "/tasks", &body.to_string()).await }
    });
    let archive = async { app.post(hr, &format!("/projects/{id}/archive"), "").await };
    let (replies, archived) = tokio::join!(futures_util::future::join_all(creations), archive);
    assert_eq!(archived.status.as_u16(), 200, "{}", archived.text);
    let archived_at = str_of(archived.data(), "archivedAt");
    let mut joined = 0;
    for reply in &replies {
        match reply.status.as_u16() {
            200 => {
                joined += 1;
                let created = str_of(reply.data(), "createdAt");
                assert!(created <= archived_at, "{created} after {archived_at}");
            }
            _ => assert_error_code(reply, 409, "project_archived"),
        }
    }
    let listed = app
        .get(hr, &format!("/tasks?projectId={id}&limit=100"))
        .await;
    assert_eq!(listed.list().len(), joined);
    let progress = app.get(hr, &format!("/projects/{id}")).await;
    assert_eq!(progress.data()["progress"]["total"], joined);
}
