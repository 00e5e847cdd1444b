//! Routines over HTTP (decision D-108): every route, refusals that change nothing,
//! another organization's routine not found on every route, who may change a routine,
//! and the proof the issue asks for: a 2-second routine fired for 10 seconds by two
//! instances (two connection pools on one PostgreSQL database; two firers on one SQLite
//! file) creates exactly one task per due time.

use std::sync::Arc;
use std::time::Duration;

use muster_domain::service::{RoutineService, TaskService};
use muster_persistence::Database;
use muster_server::adapters::{SystemClock, UuidV7Ids};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Reply, TestApp, assert_error_code, send, str_of};
use crate::task_support::another_instance;

api_tests!(
    a_routine_goes_through_every_route,
    bad_input_is_refused_and_changes_nothing,
    another_organizations_routine_is_not_found_on_every_route,
    only_its_owner_or_an_admin_changes_a_routine,
    two_instances_fire_each_due_time_once,
);

fn triage(schedule: &str) -> Value {
    json!({
        "name": "Morning triage",
        "schedule": schedule,
        "timezone": "Europe/Berlin",
        "task": {"title": "Triage new issues", "priority": "high", "tags": ["ops"], "reward": 0},
    })
}

async fn create(app: &TestApp, body: &Value) -> Reply {
    app.post(&app.org.hr, "/routines", &body.to_string()).await
}

/// Creates a routine (asserting 201), answering it.
async fn routine(app: &TestApp, body: &Value) -> Value {
    let reply = create(app, body).await;
    assert_eq!(reply.status.as_u16(), 201, "create routine: {}", reply.text);
    reply.body["data"].clone()
}

async fn patch(app: &TestApp, agent: &crate::helpers::Agent, id: &str, body: &Value) -> Reply {
    let body = body.to_string();
    send(app.signed(
        agent,
        Method::PATCH,
        &format!("/routines/{id}"),
        Some(&body),
    ))
    .await
}

async fn a_routine_goes_through_every_route(app: &TestApp) {
    let hr = &app.org.hr;
    let created = routine(app, &triage("0 9 * * MON-FRI")).await;
    let id = str_of(&created, "id");
    assert_eq!(created["name"], "Morning triage");
    assert_eq!(created["schedule"], "0 9 * * MON-FRI");
    assert_eq!(created["timezone"], "Europe/Berlin");
    assert_eq!(created["task"]["title"], "Triage new issues");
    assert_eq!(created["task"]["priority"], "high");
    assert_eq!(created["templateId"], Value::Null);
    assert_eq!(created["enabled"], true);
    assert_eq!(created["catchUp"], "one");
    assert_eq!(created["ownerId"], hr.uuid.to_string());
    assert_eq!(created["lastRunAt"], Value::Null);
    crate::helpers::assert_timestamp(&created, "nextRunAt");

    assert_eq!(
        app.get(hr, "/routines").await.ids(),
        std::slice::from_ref(&id)
    );
    let read = app.get(hr, &format!("/routines/{id}")).await;
    assert_eq!(read.data()["nextRunAt"], created["nextRunAt"]);

    let edited = patch(app, hr, &id, &json!({"catchUp": "skip", "enabled": false})).await;
    assert_eq!(edited.status.as_u16(), 200, "{}", edited.text);
    assert_eq!(edited.data()["nextRunAt"], Value::Null, "off: no next time");

    let ran = app.post(hr, &format!("/routines/{id}/run"), "").await;
    assert_eq!(ran.status.as_u16(), 200, "{}", ran.text);
    let task = ran.data().clone();
    assert_eq!(task["title"], "Triage new issues");
    assert_eq!(task["creatorId"], hr.uuid.to_string());
    assert_eq!(task["rewardPayer"]["kind"], "treasury");
    let read = app.get(hr, &format!("/routines/{id}")).await;
    assert_eq!(read.data()["lastTaskId"], task["id"]);

    let deleted = send(app.signed(hr, Method::DELETE, &format!("/routines/{id}"), None)).await;
    assert_eq!(deleted.status.as_u16(), 204, "{}", deleted.text);
    let gone = app.get(hr, &format!("/routines/{id}")).await;
    assert_error_code(&gone, 404, "routine_not_found");
    // The task it created stays.
    let kept = app
        .get(hr, &format!("/tasks/{}", str_of(&task, "id")))
        .await;
    assert_eq!(kept.status.as_u16(), 200);

    let types: Vec<String> = app
        .events_of(hr, &id)
        .await
        .iter()
        .map(|e| str_of(e, "type"))
        .collect();
    assert_eq!(
        types,
        [
            "routine.deleted",
            "routine.fired",
            "routine.updated",
            "routine.created"
        ]
    );
    let fired = app.events_of_type(hr, &id, "routine.fired").await;
    assert_eq!(fired[0]["payload"]["manual"], true);
    assert_eq!(fired[0]["payload"]["taskId"], task["id"]);
}

async fn bad_input_is_refused_and_changes_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let with = |field: &str, value: Value| {
        let mut body = triage("0 9 * * *");
        body[field] = value;
        body
    };
    let both = {
        let mut body = triage("0 9 * * *");
        body["templateId"] = json!(Uuid::now_v7());
        body
    };
    let neither = json!({"name": "N", "schedule": "0 9 * * *"});
    for body in [
        with("schedule", json!("0 9 * *")),
        with("schedule", json!("0 9 * * * * *")),
        with("schedule", json!("61 9 * * *")),
        with("schedule", json!("0 0 30 2 *")),
        with("schedule", json!(9)),
        with("timezone", json!("Mars/Olympus")),
        with("name", json!("  ")),
        with("catchUp", json!("sometimes")),
        with("owner", json!("me")),
        with("task", json!({"title": ""})),
        with("task", json!({"title": "t", "reward": -1})),
        both,
        neither,
    ] {
        let reply = create(app, &body).await;
        assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
        assert!(reply.body["code"].is_string(), "{}", reply.text);
    }
    let malformed = app.post(hr, "/routines", "{\"name\": ").await;
    assert_eq!(malformed.status.as_u16(), 400, "{}", malformed.text);
    let template = create(
        app,
        &json!({"name": "T", "schedule": "0 9 * * *",
        "templateId": Uuid::now_v7()}),
    )
    .await;
    assert_error_code(&template, 404, "template_not_found");
    let archived = {
        let reply = app
            .post(hr, "/projects", &json!({"name": "Old"}).to_string())
            .await;
        let id = str_of(&reply.body["data"], "id");
        app.post(hr, &format!("/projects/{id}/archive"), "").await;
        id
    };
    let refused = create(
        app,
        &with("task", json!({"title": "t", "projectId": archived})),
    )
    .await;
    assert_error_code(&refused, 409, "project_archived");
    assert!(
        app.get(hr, "/routines").await.list().is_empty(),
        "nothing created"
    );

    let id = str_of(&routine(app, &triage("0 9 * * *")).await, "id");
    for body in [
        json!({}),
        json!({"enabled": null}),
        json!({"schedule": "nope"}),
        json!({"timezone": "Nowhere"}),
        json!({"task": {"title": "x"}, "templateId": Uuid::now_v7()}),
        json!({"nextRunAt": "2030-01-01T00:00:00Z"}),
    ] {
        let reply = patch(app, hr, &id, &body).await;
        assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
    }
    for query in ["limit=0", "limit=501", "cursor=nope", "status=on"] {
        let reply = app.get(hr, &format!("/routines?{query}")).await;
        assert_eq!(reply.status.as_u16(), 400, "{query}: {}", reply.text);
    }
    let not_an_id = app.get(hr, "/routines/not-a-uuid").await;
    assert_eq!(not_an_id.status.as_u16(), 400, "{}", not_an_id.text);
    let read = app.get(hr, &format!("/routines/{id}")).await;
    assert_eq!(read.data()["schedule"], "0 9 * * *");
    assert_eq!(
        app.events_of(hr, &id).await.len(),
        1,
        "only routine.created"
    );
}

async fn another_organizations_routine_is_not_found_on_every_route(app: &TestApp) {
    let id = str_of(&routine(app, &triage("0 9 * * *")).await, "id");
    let theirs = &app.other.hr;
    let patch_body = json!({"name": "Theirs now"}).to_string();
    for (method, path, body) in [
        (Method::GET, format!("/routines/{id}"), None),
        (
            Method::PATCH,
            format!("/routines/{id}"),
            Some(patch_body.as_str()),
        ),
        (Method::DELETE, format!("/routines/{id}"), None),
        (Method::POST, format!("/routines/{id}/run"), Some("")),
    ] {
        let reply = send(app.signed(theirs, method.clone(), &path, body)).await;
        assert_error_code(&reply, 404, "routine_not_found");
        let unknown = path.replace(&id, &Uuid::now_v7().to_string());
        let reply = send(app.signed(theirs, method, &unknown, body)).await;
        assert_error_code(&reply, 404, "routine_not_found");
    }
    assert!(app.get(theirs, "/routines").await.list().is_empty());
    let read = app.get(&app.org.hr, &format!("/routines/{id}")).await;
    assert_eq!(read.data()["name"], "Morning triage");
    assert_eq!(read.data()["lastTaskId"], Value::Null);
}

async fn only_its_owner_or_an_admin_changes_a_routine(app: &TestApp) {
    let id = str_of(&routine(app, &triage("0 9 * * *")).await, "id");
    let other = app.worker(&app.org).await;
    let refused = patch(app, &other, &id, &json!({"name": "Mine"})).await;
    assert_error_code(&refused, 403, "routine_owner_required");
    let refused = app.post(&other, &format!("/routines/{id}/run"), "").await;
    assert_error_code(&refused, 403, "routine_owner_required");
    let refused = send(app.signed(&other, Method::DELETE, &format!("/routines/{id}"), None)).await;
    assert_error_code(&refused, 403, "routine_owner_required");
    // Anyone of the organization reads it.
    assert_eq!(
        app.get(&other, &format!("/routines/{id}"))
            .await
            .status
            .as_u16(),
        200
    );
    // An admin user may change it, and owns it from then on.
    let admin = app.admin_token(&app.org).await;
    let body = json!({"name": "Admin's now"});
    let reply = send(app.bearer(
        &admin,
        Method::PATCH,
        &format!("/routines/{id}"),
        Some(&body),
    ))
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_ne!(reply.data()["ownerId"], app.org.hr.uuid.to_string());
    let refused = patch(app, &app.org.hr, &id, &json!({"name": "Back"})).await;
    assert_error_code(&refused, 403, "routine_owner_required");
}

/// The routine service of one instance: its own connection pool, the system clock.
fn instance(db: &Database) -> RoutineService {
    let db = Arc::new(db.clone());
    let tasks = TaskService::new(
        db.clone(),
        db.clone(),
        Arc::new(SystemClock),
        Arc::new(UuidV7Ids),
    );
    RoutineService::new(
        db.clone(),
        db.clone(),
        db,
        tasks,
        Arc::new(SystemClock),
        Arc::new(UuidV7Ids),
    )
}

async fn two_instances_fire_each_due_time_once(app: &TestApp) {
    let hr = &app.org.hr;
    let body = json!({
        "name": "Every two seconds",
        "schedule": "*/2 * * * * *",
        "task": {"title": "Tick", "reward": 0},
    });
    let id = str_of(&routine(app, &body).await, "id");
    let first = instance(&app.db().db);
    let second_db = if crate::task_support::is_postgres(app) {
        another_instance(app).await
    } else {
        // SQLite is one instance per file: two firers on its one pool.
        app.db().db.clone()
    };
    let second = instance(&second_db);
    let run = |service: RoutineService| async move {
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        let mut created = 0;
        while tokio::time::Instant::now() < until {
            created += service.fire_due().await.unwrap().created;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        created
    };
    let (a, b) = tokio::join!(run(first), run(second));
    let fired = app.events_of_type(hr, &id, "routine.fired").await;
    let mut due: Vec<String> = fired
        .iter()
        .map(|e| str_of(&e["payload"], "dueAt"))
        .collect();
    due.sort();
    let count = due.len();
    due.dedup();
    assert_eq!(due.len(), count, "a due time fired twice: {due:?}");
    assert!(
        (4..=6).contains(&count),
        "10 s of a 2-second routine: {count} firings"
    );
    assert_eq!(a + b, count, "each instance counted what it created");
    let tasks = app.get(hr, "/tasks?limit=100").await;
    let ticks = tasks.list().iter().filter(|t| t["title"] == "Tick").count();
    assert_eq!(ticks, count, "one task per due time");
    // Consecutive due times two seconds apart: none skipped.
    let instants: Vec<time::OffsetDateTime> = due
        .iter()
        .map(|d| crate::task_support::instant(d))
        .collect();
    for pair in instants.windows(2) {
        assert_eq!(pair[1] - pair[0], time::Duration::seconds(2), "{due:?}");
    }
}
