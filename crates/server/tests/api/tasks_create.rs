//! `POST /tasks`: the created task, its validation (D-2 to D-5), assignees (D-34),
//! parents, modes (D-55) and credentials (D-19).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, assert_error, assert_error_exact, assert_timestamp, send, str_of};

api_tests!(
    created_task_is_answered_in_full,
    created_task_is_stored_and_audited,
    defaults_and_boundaries_are_accepted,
    invalid_bodies_are_400_and_change_nothing,
    priority_of_the_wrong_json_type_is_400_naming_the_field,
    body_over_one_mib_is_413,
    assignee_must_be_an_active_executing_agent_of_the_org,
    parent_task_must_be_in_the_org,
    observers_cannot_create_but_orchestrators_can,
    no_credentials_is_401,
);

/// Tasks and `task.created` events visible to the first organization.
async fn task_and_created_event_counts(app: &TestApp) -> (usize, u64) {
    let tasks = app.get(&app.org.hr, "/tasks").await.list().len();
    let events = app.get(&app.org.hr, "/events?type=task.created").await;
    assert_eq!(events.status, StatusCode::OK, "{}", events.text);
    (tasks, events.body["meta"]["total"].as_u64().unwrap())
}

async fn created_task_is_answered_in_full(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let assignee = app.worker(&app.org).await;
    let body = json!({
        "title": "  Ship the release \t",
        "description": "Do **it**",
        "priority": "urgent",
        "assigneeId": assignee.uuid,
        "approvalRequired": true,
        "dueAt": "2026-11-22T03:02:03.456789+02:00",
        "tags": ["q4", "ops", "q4", "infra", "ops"],
        "metadata": { "source": "test", "n": 1.5, "nested": { "list": [1, null, "x"] } },
    });
    let reply = app.post(&worker, "/tasks", &body.to_string()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let task = reply.data();

    let id = Uuid::parse_str(&str_of(task, "id")).unwrap();
    assert_eq!(id.get_version_num(), 7, "ids are UUID v7 (D-6)");
    assert_eq!(task["orgId"], app.org.id.to_string());
    assert_eq!(task["title"], "Ship the release");
    assert_eq!(task["description"], "Do **it**");
    assert_eq!(task["status"], "todo");
    assert_eq!(task["priority"], "urgent");
    assert_eq!(task["assigneeId"], assignee.uuid.to_string());
    assert_eq!(task["creatorId"], worker.uuid.to_string());
    assert_eq!(task["parentTaskId"], Value::Null);
    assert_eq!(task["approvalRequired"], true);
    assert_eq!(task["dueAt"], "2026-11-22T01:02:03.456Z");
    assert_eq!(task["tags"], json!(["q4", "ops", "infra"]));
    assert_eq!(task["metadata"], body["metadata"]);
    assert_timestamp(task, "createdAt");
}

async fn created_task_is_stored_and_audited(app: &TestApp) {
    let hr = &app.org.hr;
    let created = app
        .create_task(hr, &json!({ "title": "Audit me", "tags": ["a"] }))
        .await;
    let id = str_of(&created, "id");
    assert_eq!(created["priority"], "normal", "default priority");
    assert_eq!(created["assigneeId"], Value::Null);
    assert_eq!(created["creatorId"], hr.uuid.to_string());

    // Read back: the stored task is the answered one (timestamps survive storage).
    let read = app.get(hr, &format!("/tasks/{id}")).await;
    assert_eq!(read.data(), &created);

    let events = app.events_of(hr, &id).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event["type"], "task.created");
    assert_eq!(event["actorId"], hr.uuid.to_string());
    assert_eq!(event["entityType"], "task");
    assert_eq!(event["entityId"], id);
    assert_eq!(event["orgId"], app.org.id.to_string());
    assert_eq!(event["severity"], "info");
    assert_eq!(
        event["createdAt"], created["createdAt"],
        "same transaction, same instant"
    );
}

async fn defaults_and_boundaries_are_accepted(app: &TestApp) {
    let hr = &app.org.hr;
    let title = "t".repeat(255);
    let task = app
        .create_task(
            hr,
            &json!({
                "title": format!("   {title}   "),
                "description": "d".repeat(100_000),
                "tags": (0..50).map(|i| format!("{i:0>100}")).collect::<Vec<_>>(),
                "dueAt": "2026-12-31",
                "metadata": {},
            }),
        )
        .await;
    assert_eq!(task["title"], title, "255 characters after trimming");
    assert_eq!(task["tags"].as_array().unwrap().len(), 50);
    assert_eq!(
        task["dueAt"], "2026-12-31T00:00:00.000Z",
        "a plain date is midnight UTC"
    );
    assert_eq!(task["approvalRequired"], false);
    assert_eq!(task["tags"][0].as_str().unwrap().len(), 100);

    // Non-ASCII characters are counted as characters, not bytes.
    let task = app
        .create_task(hr, &json!({ "title": "é".repeat(255) }))
        .await;
    assert_eq!(task["title"].as_str().unwrap().chars().count(), 255);

    // Every priority value is accepted.
    for priority in ["urgent", "high", "normal", "low"] {
        let task = app
            .create_task(hr, &json!({ "title": "p", "priority": priority }))
            .await;
        assert_eq!(task["priority"], priority);
    }
}

/// Bodies of `POST /tasks` that must be refused, each with a part of its D-2 message.
fn invalid_create_bodies() -> Vec<(String, &'static str)> {
    let big_metadata = json!({ "blob": "x".repeat(64 * 1024) }).to_string();
    vec![
        (r#"{"description":"no title"}"#.into(), "title is required"),
        (
            json!({ "title": "t".repeat(256) }).to_string(),
            "title must be at most 255 characters",
        ),
        (r#"{"title":" \t\n "}"#.into(), "title must not be empty"),
        (r#"{"title":""}"#.into(), "title must not be empty"),
        (
            r#"{"title":"x","foo":1}"#.into(),
            "property foo should not exist",
        ),
        (r#"{"title":"a","title":"b"}"#.into(), "title"),
        (
            r#"{"title":"x","orgId":"0190a7c4-0000-7000-8000-000000000000"}"#.into(),
            "property orgId should not exist",
        ),
        (r#"{"title":"x","priority":"critical"}"#.into(), "priority"),
        (
            r#"{"title":"x","status":"done"}"#.into(),
            "property status should not exist",
        ),
        (r#"{"title": "x""#.into(), "malformed JSON"),
        (r#"{"title": "x"} trailing"#.into(), "malformed JSON"),
        (String::new(), "JSON object"),
        (r#"{"title":5}"#.into(), "title"),
        (r#"{"title":null}"#.into(), "title"),
        (
            r#"{"title":"x","approvalRequired":"yes"}"#.into(),
            "approvalRequired",
        ),
        (r#"{"title":"x","tags":"a,b"}"#.into(), "tags"),
        (
            json!({ "title": "x", "tags": (0..51).map(|i| i.to_string()).collect::<Vec<_>>() })
                .to_string(),
            "tags must hold at most 50 entries",
        ),
        (
            json!({ "title": "x", "tags": ["x".repeat(101)] }).to_string(),
            "each tag must be 1 to 100 characters",
        ),
        (
            r#"{"title":"x","tags":[""]}"#.into(),
            "each tag must be 1 to 100 characters",
        ),
        (
            r#"{"title":"x","metadata":[1,2]}"#.into(),
            "metadata must be a JSON object",
        ),
        (
            r#"{"title":"x","metadata":"{}"}"#.into(),
            "metadata must be a JSON object",
        ),
        (
            format!(r#"{{"title":"x","metadata":{big_metadata}}}"#),
            "metadata must be at most 65536 bytes",
        ),
        (
            json!({ "title": "x", "description": "d".repeat(100_001) }).to_string(),
            "description must be at most 100000 characters",
        ),
        (
            r#"{"title":"x","dueAt":"tomorrow"}"#.into(),
            "dueAt must be an ISO 8601 date-time",
        ),
        (
            r#"{"title":"x","dueAt":"2026-02-30"}"#.into(),
            "dueAt must be an ISO 8601 date-time",
        ),
        (
            // Valid syntax, but year 10000 in UTC: refused, never a crash.
            r#"{"title":"x","dueAt":"9999-12-31T23:59:59-23:59"}"#.into(),
            "dueAt must be an ISO 8601 date-time",
        ),
        (
            // Year -1 in UTC: not storable as RFC 3339 on SQLite.
            r#"{"title":"x","dueAt":"0000-01-01T00:00:00+00:01"}"#.into(),
            "dueAt must be an ISO 8601 date-time",
        ),
        (r#"{"title":"x","dueAt":1795000000}"#.into(), "dueAt"),
        (
            r#"{"title":"x","assigneeId":"not-a-uuid"}"#.into(),
            "assigneeId",
        ),
        (
            r#"{"title":"x","parentTaskId":"42"}"#.into(),
            "parentTaskId",
        ),
    ]
}

async fn invalid_bodies_are_400_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let before = task_and_created_event_counts(app).await;
    assert_eq!(before.0, 0);
    let cases = invalid_create_bodies();
    for (body, message) in &cases {
        let reply = app.post(hr, "/tasks", body).await;
        let shown: String = body.chars().take(80).collect();
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "body {shown}: {}",
            reply.text
        );
        assert_error(&reply, 400, message);
    }
    // Not an object at all.
    for body in ["[]", "null", "\"title\"", "42"] {
        let reply = app.post(hr, "/tasks", body).await;
        assert_error(&reply, 400, "");
    }
    assert_eq!(
        task_and_created_event_counts(app).await,
        before,
        "nothing was created"
    );
}

/// D-4: a wrong JSON type is 400, and D-2: the message names the field. A number where
/// the `priority` enum belongs is well-formed JSON, not "malformed JSON".
async fn priority_of_the_wrong_json_type_is_400_naming_the_field(app: &TestApp) {
    let hr = &app.org.hr;
    for body in [
        r#"{"title":"x","priority":5}"#,
        r#"{"title":"x","priority":true}"#,
    ] {
        let reply = app.post(hr, "/tasks", body).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "body {body}: {}",
            reply.text
        );
        assert_error(&reply, 400, "priority");
        let message = reply.body["message"].as_str().unwrap();
        assert!(
            !message.contains("malformed"),
            "body {body} is well-formed JSON: {message}"
        );
    }
    assert_eq!(task_and_created_event_counts(app).await, (0, 0));
}

async fn body_over_one_mib_is_413(app: &TestApp) {
    const MIB: usize = 1024 * 1024;
    let hr = &app.org.hr;
    // Valid JSON followed by whitespace, to an exact size.
    let padded = |size: usize| {
        let mut body = br#"{"title":"padded"}"#.to_vec();
        body.resize(size, b' ');
        body
    };
    let reply = send(app.signed_bytes(hr, Method::POST, "/tasks", Some(padded(MIB)))).await;
    assert_eq!(
        reply.status,
        StatusCode::OK,
        "exactly 1 MiB is accepted: {}",
        reply.text
    );

    let over = padded(MIB + 1);
    let before = task_and_created_event_counts(app).await;
    let reply = send(app.signed_bytes(hr, Method::POST, "/tasks", Some(over))).await;
    assert_error(&reply, 413, "body");
    assert_eq!(task_and_created_event_counts(app).await, before);
}

async fn assignee_must_be_an_active_executing_agent_of_the_org(app: &TestApp) {
    let hr = &app.org.hr;
    let add = |mode: &'static str, status: &'static str| async move {
        app.add_agent(&app.org, mode, status).await
    };
    let suspended = add("worker", "suspended").await;
    let revoked = add("worker", "revoked").await;
    let pending = add("worker", "pending").await;
    let orchestrator = add("orchestrator", "active").await;
    let observer = add("observer", "active").await;
    let before = task_and_created_event_counts(app).await;

    let create = |assignee: Uuid| async move {
        app.post(
            hr,
            "/tasks",
            &json!({ "title": "assign me", "assigneeId": assignee }).to_string(),
        )
        .await
    };
    assert_error(&create(Uuid::now_v7()).await, 404, "");
    // Another organization's agent is not found, exactly like a missing one (D-8).
    let foreign = create(app.other.hr.uuid).await;
    assert_error(&foreign, 404, "");
    let missing = Uuid::now_v7();
    let unknown = create(missing).await;
    assert_eq!(
        unknown.body["message"]
            .as_str()
            .unwrap()
            .replace(&missing.to_string(), "<id>"),
        foreign.body["message"]
            .as_str()
            .unwrap()
            .replace(&app.other.hr.uuid.to_string(), "<id>"),
    );
    for agent in [&suspended, &revoked, &pending] {
        assert_error(&create(agent.uuid).await, 409, "not active");
    }
    assert_error(&create(orchestrator.uuid).await, 409, "orchestrator");
    assert_error(&create(observer.uuid).await, 409, "observer");
    assert_eq!(
        task_and_created_event_counts(app).await,
        before,
        "nothing was created"
    );

    // An active worker, and the caller itself, can be assigned.
    let task = app
        .create_task(hr, &json!({ "title": "mine", "assigneeId": hr.uuid }))
        .await;
    assert_eq!(task["assigneeId"], hr.uuid.to_string());
}

async fn parent_task_must_be_in_the_org(app: &TestApp) {
    let hr = &app.org.hr;
    let foreign_parent = app.task_titled(&app.other.hr, "theirs").await;
    let before = task_and_created_event_counts(app).await;
    let body = json!({ "title": "child", "parentTaskId": foreign_parent }).to_string();
    assert_error(&app.post(hr, "/tasks", &body).await, 404, "");
    let body = json!({ "title": "child", "parentTaskId": Uuid::now_v7() }).to_string();
    assert_error(&app.post(hr, "/tasks", &body).await, 404, "");
    assert_eq!(task_and_created_event_counts(app).await, before);

    let parent = app.task_titled(hr, "parent").await;
    let child = app
        .create_task(hr, &json!({ "title": "child", "parentTaskId": parent }))
        .await;
    assert_eq!(child["parentTaskId"], parent);
}

async fn observers_cannot_create_but_orchestrators_can(app: &TestApp) {
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let before = task_and_created_event_counts(app).await;
    let reply = app.post(&observer, "/tasks", r#"{"title":"nope"}"#).await;
    assert_error_exact(&reply, 403, "observer agents are read-only");
    assert_eq!(task_and_created_event_counts(app).await, before);

    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let task = app
        .create_task(&orchestrator, &json!({ "title": "coordinated" }))
        .await;
    assert_eq!(task["creatorId"], orchestrator.uuid.to_string());
}

async fn no_credentials_is_401(app: &TestApp) {
    let reply = send(
        app.anonymous(Method::POST, "/tasks")
            .header("Content-Type", "application/json")
            .body(r#"{"title":"anonymous"}"#),
    )
    .await;
    assert_error_exact(
        &reply,
        401,
        "missing credentials: sign the request as an agent or send Authorization: Bearer <token>",
    );
    assert_eq!(task_and_created_event_counts(app).await, (0, 0));
}
