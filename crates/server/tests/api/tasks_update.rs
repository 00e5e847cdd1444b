//! `PATCH /tasks/:id` (decision D-39): every editable field, its limits (D-5), `null`
//! where it clears and where it is refused, closed tasks (409) and the `task.updated`
//! event naming what changed (D-70).

use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_error, assert_error_exact, assert_timestamp, str_of};
use crate::task_tools::{depend, event_total, move_ok, patch, task_state, task_with, types};

api_tests!(
    each_field_is_edited_with_its_own_event,
    several_fields_at_once_name_each_in_one_event,
    unchanged_values_write_no_event,
    limits_are_accepted_up_to_and_refused_beyond,
    invalid_patches_are_400_and_change_nothing,
    closed_tasks_are_409_and_change_nothing,
    array_bodies_are_400_on_every_task_route_with_a_body,
);

/// Sends `PATCH /tasks/:id` for `task` as the org's HR agent, asserting 200 and that the answer is what is
/// stored.
async fn patch_ok(app: &TestApp, task: &str, body: &Value) -> Value {
    let hr = &app.org.hr;
    let reply = patch(app, hr, &format!("/tasks/{task}"), &body.to_string()).await;
    let updated = reply.data().clone();
    let stored = app.get(hr, &format!("/tasks/{task}")).await;
    assert_eq!(&updated, stored.data(), "answer is the stored task");
    updated
}

/// The `fields` of the newest `task.updated` event, sorted.
fn updated_fields(event: &Value) -> Vec<String> {
    assert_eq!(event["type"], "task.updated", "{event}");
    let mut fields: Vec<String> = event["payload"]["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("fields is not an array: {event}"))
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect();
    fields.sort();
    fields
}

/// One edit per step: (body, the field it changes, the field's value afterwards).
fn field_steps() -> Vec<(Value, &'static str, Value)> {
    vec![
        (
            json!({ "title": "  Renamed \t\n" }),
            "title",
            json!("Renamed"),
        ),
        (
            json!({ "description": "second *md*" }),
            "description",
            json!("second *md*"),
        ),
        (json!({ "description": null }), "description", Value::Null),
        (
            json!({ "description": "back" }),
            "description",
            json!("back"),
        ),
        (json!({ "priority": "urgent" }), "priority", json!("urgent")),
        (
            json!({ "dueAt": "2027-01-02T05:04:05.678+02:00" }),
            "dueAt",
            json!("2027-01-02T03:04:05.678Z"),
        ),
        (
            json!({ "dueAt": "2027-03-04" }),
            "dueAt",
            json!("2027-03-04T00:00:00.000Z"),
        ),
        (json!({ "dueAt": null }), "dueAt", Value::Null),
        (
            json!({ "tags": ["z", "y", "z", "x", "y"] }),
            "tags",
            json!(["z", "y", "x"]),
        ),
        (json!({ "tags": [] }), "tags", json!([])),
        (
            json!({ "metadata": { "new": [1, { "deep": null }] } }),
            "metadata",
            json!({ "new": [1, { "deep": null }] }),
        ),
        (json!({ "metadata": {} }), "metadata", json!({})),
    ]
}

/// Every field of a task but `updatedAt`.
const TASK_FIELDS: [&str; 16] = [
    "id",
    "orgId",
    "title",
    "description",
    "status",
    "priority",
    "assigneeId",
    "creatorId",
    "parentTaskId",
    "approvalRequired",
    "dueAt",
    "tags",
    "metadata",
    "approvedBy",
    "approvedAt",
    "createdAt",
];

async fn each_field_is_edited_with_its_own_event(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    let created = app
        .create_task(
            &worker,
            &json!({
                "title": "original",
                "description": "first",
                "priority": "low",
                "dueAt": "2026-10-01T00:00:00Z",
                "tags": ["a", "b"],
                "metadata": { "old": true, "keep": "no" },
            }),
        )
        .await;
    let id = str_of(&created, "id");

    let steps = field_steps();
    let mut previous = created.clone();
    for (body, field, expected) in steps {
        let before = app.events_of(hr, &id).await.len();
        let updated = patch_ok(app, &id, &body).await;
        assert_eq!(updated[field], expected, "{field} after {body}");
        // Nothing else changed.
        for other in TASK_FIELDS {
            if other != field {
                assert_eq!(
                    updated[other], previous[other],
                    "{other} after patching {field}"
                );
            }
        }
        assert_timestamp(&updated, "updatedAt");
        let events = app.events_of(hr, &id).await;
        assert_eq!(events.len(), before + 1, "one event per edit: {body}");
        assert_eq!(updated_fields(&events[0]), [field], "after {body}");
        assert_eq!(events[0]["actorId"], hr.uuid.to_string());
        assert_eq!(events[0]["entityType"], "task");
        assert_eq!(events[0]["entityId"], id);
        assert_eq!(events[0]["severity"], "info");
        previous = updated;
    }
    // The event is in the same change as the edit.
    let events = app.events_of(hr, &id).await;
    assert_eq!(events[0]["createdAt"], previous["updatedAt"]);
}

async fn several_fields_at_once_name_each_in_one_event(app: &TestApp) {
    let hr = &app.org.hr;
    let id = task_with(app, hr, &json!({ "title": "many", "priority": "high" })).await;
    let body = json!({
        "title": "many more",
        "description": "d",
        "priority": "low",
        "dueAt": "2027-05-05T05:05:05Z",
        "tags": ["t"],
        "metadata": { "k": "v" },
    });
    let updated = patch_ok(app, &id, &body).await;
    assert_eq!(updated["title"], "many more");
    assert_eq!(updated["description"], "d");
    assert_eq!(updated["priority"], "low");
    assert_eq!(updated["dueAt"], "2027-05-05T05:05:05.000Z");
    assert_eq!(updated["tags"], json!(["t"]));
    assert_eq!(updated["metadata"], json!({ "k": "v" }));
    assert_eq!(updated["status"], "todo", "PATCH never moves a task");

    let events = app.events_of(hr, &id).await;
    assert_eq!(types(&events), ["task.updated", "task.created"]);
    assert_eq!(
        updated_fields(&events[0]),
        [
            "description",
            "dueAt",
            "metadata",
            "priority",
            "tags",
            "title"
        ]
    );
    // The payload names the fields; it does not carry their values.
    let payload = events[0]["payload"].as_object().unwrap();
    assert_eq!(payload.keys().collect::<Vec<_>>(), ["fields"]);

    // A mix of changed and unchanged values names only the changed ones.
    let body = json!({ "title": "many more", "priority": "urgent", "tags": ["t"] });
    patch_ok(app, &id, &body).await;
    let events = app.events_of(hr, &id).await;
    assert_eq!(events.len(), 3);
    assert_eq!(updated_fields(&events[0]), ["priority"]);
}

async fn unchanged_values_write_no_event(app: &TestApp) {
    let hr = &app.org.hr;
    let created = app
        .create_task(
            hr,
            &json!({
                "title": "stable",
                "description": "same",
                "priority": "high",
                "dueAt": "2027-01-01T00:00:00Z",
                "tags": ["a", "b"],
                "metadata": { "n": 1 },
            }),
        )
        .await;
    let id = str_of(&created, "id");
    let before = task_state(app, hr, &id).await;
    for body in [
        json!({ "title": "stable" }),
        // Trimmed to the same title.
        json!({ "title": "  stable  " }),
        json!({ "description": "same" }),
        json!({ "priority": "high" }),
        json!({ "dueAt": "2027-01-01T02:00:00+02:00" }),
        json!({ "tags": ["a", "b", "a"] }),
        json!({ "metadata": { "n": 1 } }),
        json!({
            "title": "stable", "description": "same", "priority": "high",
            "dueAt": "2027-01-01", "tags": ["a", "b"], "metadata": { "n": 1 },
        }),
    ] {
        let reply = patch(app, hr, &format!("/tasks/{id}"), &body.to_string()).await;
        assert_eq!(
            reply.data(),
            &before.0,
            "an edit that changes nothing answers the task as it is: {body}"
        );
    }
    assert_eq!(task_state(app, hr, &id).await, before, "no event, no write");

    // Clearing what is already empty changes nothing either.
    let bare = task_with(app, hr, &json!({ "title": "bare" })).await;
    let before = task_state(app, hr, &bare).await;
    let reply = patch(
        app,
        hr,
        &format!("/tasks/{bare}"),
        r#"{"description":null,"dueAt":null}"#,
    )
    .await;
    assert_eq!(reply.data(), &before.0);
    assert_eq!(task_state(app, hr, &bare).await, before);
}

async fn limits_are_accepted_up_to_and_refused_beyond(app: &TestApp) {
    let hr = &app.org.hr;
    let id = app.task_titled(hr, "limits").await;
    let path = format!("/tasks/{id}");

    // Exactly at each limit: accepted.
    let title = "t".repeat(255);
    let updated = patch_ok(app, &id, &json!({ "title": format!("  {title}  ") })).await;
    assert_eq!(updated["title"], title);
    let updated = patch_ok(app, &id, &json!({ "title": "é".repeat(255) })).await;
    assert_eq!(updated["title"].as_str().unwrap().chars().count(), 255);
    let description = "d".repeat(100_000);
    let updated = patch_ok(app, &id, &json!({ "description": description })).await;
    assert_eq!(updated["description"], description);
    let tags: Vec<String> = (0..50).map(|i| format!("{i:0>100}")).collect();
    let updated = patch_ok(app, &id, &json!({ "tags": tags })).await;
    assert_eq!(updated["tags"], json!(tags));
    // `{"blob":""}` is 11 bytes: this metadata serializes to exactly 64 KiB.
    let blob = "x".repeat(64 * 1024 - 11);
    let metadata = json!({ "blob": blob });
    assert_eq!(metadata.to_string().len(), 64 * 1024);
    let updated = patch_ok(app, &id, &json!({ "metadata": metadata })).await;
    assert_eq!(updated["metadata"], metadata);

    // One beyond: refused, and nothing changes.
    let before = task_state(app, hr, &id).await;
    let over: Vec<(Value, &str)> = vec![
        (
            json!({ "title": "t".repeat(256) }),
            "title must be at most 255 characters",
        ),
        (
            json!({ "description": "d".repeat(100_001) }),
            "description must be at most 100000 characters",
        ),
        (
            json!({ "tags": (0..51).map(|i| i.to_string()).collect::<Vec<_>>() }),
            "tags must hold at most 50 entries",
        ),
        (
            json!({ "tags": ["x".repeat(101)] }),
            "each tag must be 1 to 100 characters",
        ),
        (
            json!({ "tags": [""] }),
            "each tag must be 1 to 100 characters",
        ),
        (
            json!({ "metadata": { "blob": "x".repeat(64 * 1024 - 10) } }),
            "metadata must be at most 65536 bytes",
        ),
    ];
    for (body, message) in &over {
        let reply = patch(app, hr, &path, &body.to_string()).await;
        assert_error(&reply, 400, message);
    }
    assert_eq!(task_state(app, hr, &id).await, before);
}

async fn invalid_patches_are_400_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let id = task_with(
        app,
        hr,
        &json!({ "title": "guarded", "description": "keep", "tags": ["k"] }),
    )
    .await;
    let path = format!("/tasks/{id}");
    let before = task_state(app, hr, &id).await;
    let cases: Vec<(&str, &str)> = vec![
        ("{}", "at least one field must be given"),
        (r#"{"title":null}"#, "title must not be null"),
        (r#"{"priority":null}"#, "priority must not be null"),
        (r#"{"tags":null}"#, "tags must not be null"),
        (r#"{"metadata":null}"#, "metadata must not be null"),
        (r#"{"foo":1}"#, "property foo should not exist"),
        (r#"{"title":"x","foo":1}"#, "property foo should not exist"),
        (r#"{"status":"done"}"#, "property status should not exist"),
        (
            r#"{"assigneeId":"0190a7c4-0000-7000-8000-000000000000"}"#,
            "property assigneeId should not exist",
        ),
        (
            r#"{"approvalRequired":true}"#,
            "property approvalRequired should not exist",
        ),
        (r#"{"priority":"critical"}"#, "priority"),
        (r#"{"priority":"URGENT"}"#, "priority"),
        (r#"{"priority":3}"#, "priority"),
        (r#"{"title":5}"#, "title"),
        (r#"{"title":""}"#, "title must not be empty"),
        (r#"{"title":"  \t "}"#, "title must not be empty"),
        (r#"{"description":7}"#, "description"),
        (
            r#"{"dueAt":"tomorrow"}"#,
            "dueAt must be an ISO 8601 date-time",
        ),
        (
            r#"{"dueAt":"2026-02-30"}"#,
            "dueAt must be an ISO 8601 date-time",
        ),
        (r#"{"dueAt":1795000000}"#, "dueAt"),
        (r#"{"tags":"a,b"}"#, "tags"),
        (r#"{"tags":[1]}"#, "tags"),
        (r#"{"metadata":[1,2]}"#, "metadata must be a JSON object"),
        (r#"{"metadata":"{}"}"#, "metadata must be a JSON object"),
        // One bad field spoils the whole edit.
        (r#"{"title":"changed","priority":"nope"}"#, "priority"),
        (
            r#"{"title":"changed","tags":[""]}"#,
            "each tag must be 1 to 100 characters",
        ),
        (
            r#"{"description":null,"metadata":null}"#,
            "metadata must not be null",
        ),
        (r#"{"title":"x""#, "malformed JSON"),
        ("", "JSON object"),
        ("[]", "JSON object"),
        // A struct is not a positional array (D-4: wrong JSON type).
        (r#"["positional title"]"#, "JSON object"),
        ("null", ""),
    ];
    for (body, message) in &cases {
        let reply = patch(app, hr, &path, body).await;
        let shown: String = body.chars().take(60).collect();
        assert_eq!(reply.status.as_u16(), 400, "body {shown}: {}", reply.text);
        assert_error(&reply, 400, message);
        if body.starts_with(r#"{"priority""#) {
            let text = reply.body["message"].as_str().unwrap();
            assert!(!text.contains("malformed"), "{body} is well-formed: {text}");
        }
    }
    assert_error_exact(
        &patch(app, hr, "/tasks/nope", r#"{"title":"x"}"#).await,
        400,
        "id must be a UUID",
    );
    assert_eq!(task_state(app, hr, &id).await, before, "nothing changed");
}

async fn closed_tasks_are_409_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let done = app.task_titled(hr, "finished").await;
    move_ok(app, hr, &done, "in_progress").await;
    move_ok(app, hr, &done, "done").await;
    let cancelled = app.task_titled(hr, "dropped").await;
    move_ok(app, hr, &cancelled, "cancelled").await;

    for (id, status) in [(&done, "done"), (&cancelled, "cancelled")] {
        let before = task_state(app, hr, id).await;
        for body in [
            json!({ "title": "reopened?" }),
            json!({ "description": null }),
            json!({ "priority": "urgent" }),
            json!({ "tags": ["late"] }),
            json!({ "metadata": { "late": true } }),
            json!({ "dueAt": "2030-01-01" }),
            // Even an edit that would change nothing.
            json!({ "title": before.0["title"] }),
        ] {
            let reply = patch(app, hr, &format!("/tasks/{id}"), &body.to_string()).await;
            assert_error_exact(
                &reply,
                409,
                &format!("Task is {status} and cannot be changed"),
            );
        }
        assert_eq!(task_state(app, hr, id).await, before);
    }

    // Every open status can still be edited.
    let open = app.task_titled(hr, "open").await;
    for (to, title) in [
        ("backlog", "b"),
        ("todo", "t"),
        ("in_progress", "i"),
        ("blocked", "bl"),
        ("in_progress", "i2"),
        ("review", "r"),
    ] {
        move_ok(app, hr, &open, to).await;
        let updated = patch_ok(app, &open, &json!({ "title": title })).await;
        assert_eq!(updated["status"], to);
        assert_eq!(updated["title"], title);
    }
}

/// D-4: a body is a JSON object. An array is a wrong JSON type even where its items would
/// fill the fields in order (serde's positional form of a struct), on every route.
async fn array_bodies_are_400_on_every_task_route_with_a_body(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    let id = task_with(
        app,
        hr,
        &json!({ "title": "whole", "approvalRequired": true }),
    )
    .await;
    let other = app.task_titled(hr, "other").await;
    depend(app, hr, &id, &other, false).await;
    let template = app
        .post(
            hr,
            &format!("/tasks/{id}/create-template"),
            r#"{"name":"tpl"}"#,
        )
        .await;
    let template = str_of(template.data(), "id");
    let before = (task_state(app, hr, &id).await, event_total(app, hr).await);
    let cases: Vec<(reqwest::Method, String, String)> = vec![
        (
            reqwest::Method::POST,
            "/tasks".into(),
            r#"["positional",null,null,null,null,null,null,null,null]"#.into(),
        ),
        (
            reqwest::Method::PATCH,
            format!("/tasks/{id}"),
            r#"["t"]"#.into(),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/{id}/transition"),
            r#"["cancelled"]"#.into(),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/{id}/transition"),
            r#"["cancelled", "why"]"#.into(),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/{id}/assign"),
            format!(r#"["{}"]"#, worker.uuid),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/{id}/dependencies"),
            format!(r#"["{other}", true]"#),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/{id}/comments"),
            r#"["hello", null]"#.into(),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/{id}/escalate"),
            format!(r#"["MANUAL", null, "{}"]"#, worker.uuid),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/{id}/create-template"),
            r#"["positional"]"#.into(),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/{id}/auto-assign"),
            r"[0, []]".into(),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/{id}/approve"),
            "[]".into(),
        ),
        (
            reqwest::Method::POST,
            format!("/tasks/templates/{template}/instantiate"),
            r#"["positional", null, null, null]"#.into(),
        ),
    ];
    for (method, path, body) in &cases {
        let reply = crate::helpers::send(app.signed(hr, method.clone(), path, Some(body))).await;
        assert_eq!(
            reply.status.as_u16(),
            400,
            "{method} {path} {body}: {}",
            reply.text
        );
        assert_error_exact(&reply, 400, "request body must be a JSON object");
    }
    assert_eq!(
        (task_state(app, hr, &id).await, event_total(app, hr).await),
        before,
        "nothing changed"
    );
}
