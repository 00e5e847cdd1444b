//! Task templates (D-38): `POST /tasks/:id/create-template`, `GET /tasks/templates`
//! (paged newest first, D-7) and `POST /tasks/templates/:id/instantiate`, with their
//! validation (D-3, D-4), scoping (D-8) and events (D-70).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{
    Agent, Reply, TestApp, assert_bad_queries, assert_error, assert_timestamp, keys_of, send,
    str_of,
};

api_tests!(
    template_is_saved_from_a_task,
    template_creation_is_audited,
    template_names_are_unique_per_org_ignoring_case,
    invalid_template_requests_are_400_and_change_nothing,
    templates_of_missing_or_foreign_tasks_are_404,
    templates_are_listed_newest_first_in_pages_per_org,
    bad_paging_queries_are_400,
    instantiate_copies_the_template,
    instantiate_applies_overrides,
    invalid_overrides_are_refused_and_create_nothing,
    unknown_or_foreign_templates_are_404,
    read_only_callers_cannot_create_or_instantiate,
    concurrent_templates_of_one_name_store_one,
);

/// `POST /tasks/{task}/create-template` with a raw body.
async fn create_raw(app: &TestApp, agent: &Agent, task: &str, body: &str) -> Reply {
    app.post(agent, &format!("/tasks/{task}/create-template"), body)
        .await
}

/// `POST /tasks/{task}/create-template` named `name`.
async fn create_named(app: &TestApp, agent: &Agent, task: &str, name: &str) -> Reply {
    create_raw(app, agent, task, &json!({ "name": name }).to_string()).await
}

/// Saves `task` as template `name`, answering the template (asserting 200).
async fn template(app: &TestApp, agent: &Agent, task: &str, name: &str) -> Value {
    create_named(app, agent, task, name).await.data().clone()
}

/// `POST /tasks/templates/{id}/instantiate` with an optional raw body.
async fn instantiate(app: &TestApp, agent: &Agent, id: &str, body: Option<&str>) -> Reply {
    let path = format!("/tasks/templates/{id}/instantiate");
    send(app.signed(agent, Method::POST, &path, body)).await
}

/// Every template `agent` lists (first page).
async fn templates_of(app: &TestApp, agent: &Agent) -> Vec<Value> {
    app.get(agent, "/tasks/templates").await.list().clone()
}

/// The number of tasks and of `task.created` events `agent` sees.
async fn task_counts(app: &TestApp, agent: &Agent) -> (usize, usize) {
    let tasks = app.get(agent, "/tasks").await.list().len();
    let events = app.get(agent, "/events?type=task.created&limit=200").await;
    (tasks, events.list().len())
}

/// A task with every field a template copies.
async fn rich_task(app: &TestApp, agent: &Agent) -> Value {
    app.create_task(
        agent,
        &json!({
            "title": "Weekly report",
            "description": "Collect **numbers**",
            "priority": "high",
            "approvalRequired": true,
            "tags": ["report", "weekly"],
            "metadata": { "requiredCapabilities": ["writing"], "n": 2, "nested": { "a": [1, null] } },
            "dueAt": "2026-12-01T00:00:00Z",
        }),
    )
    .await
}

async fn template_is_saved_from_a_task(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let task = rich_task(app, &worker).await;
    let task_id = str_of(&task, "id");

    let reply = create_named(app, &worker, &task_id, "Weekly Report").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(keys_of(&reply.body), ["data"]);
    let saved = reply.data().clone();
    assert_eq!(
        keys_of(&saved),
        [
            "approvalRequired",
            "createdAt",
            "createdFromTaskId",
            "description",
            "id",
            "metadata",
            "name",
            "priority",
            "tags",
            "title"
        ]
    );
    let id = Uuid::parse_str(&str_of(&saved, "id")).unwrap();
    assert_eq!(id.get_version_num(), 7, "ids are UUID v7 (D-6)");
    assert_eq!(saved["name"], "Weekly Report");
    for field in [
        "title",
        "description",
        "priority",
        "tags",
        "approvalRequired",
        "metadata",
    ] {
        assert_eq!(saved[field], task[field], "{field} is copied");
    }
    assert_eq!(saved["createdFromTaskId"], task_id);
    assert_timestamp(&saved, "createdAt");

    // Listed as answered.
    assert_eq!(
        templates_of(app, &worker).await,
        std::slice::from_ref(&saved)
    );

    // A bare task makes a bare template; the source task is left as it was.
    let bare = app.task_titled(&worker, "bare").await;
    let plain = template(app, &worker, &bare, "plain").await;
    assert_eq!(plain["title"], "bare");
    assert_eq!(plain["description"], Value::Null);
    assert_eq!(plain["priority"], "normal");
    assert_eq!(plain["tags"], json!([]));
    assert_eq!(plain["approvalRequired"], false);
    assert_eq!(plain["metadata"], json!({}));
    let reread = app.get(&worker, &format!("/tasks/{task_id}")).await;
    assert_eq!(reread.data(), &task);

    // One task may be the source of several templates.
    let again = template(app, &worker, &task_id, "Weekly Report (copy)").await;
    assert_eq!(again["createdFromTaskId"], task_id);
    assert_ne!(again["id"], saved["id"]);
}

async fn template_creation_is_audited(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "source").await;
    let saved = template(app, hr, &task, "Audited").await;
    let id = str_of(&saved, "id");

    let events = app.events_of(hr, &id).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event["type"], "template.created");
    assert_eq!(event["entityType"], "template");
    assert_eq!(event["entityId"], id);
    assert_eq!(event["actorId"], hr.uuid.to_string());
    assert_eq!(event["severity"], "info");
    assert_eq!(event["payload"]["name"], "Audited");
    assert_eq!(event["payload"]["createdFromTaskId"], task);
    assert_eq!(event["createdAt"], saved["createdAt"]);
    let by_type = app
        .get(hr, "/events?type=template.created&entityType=template")
        .await;
    assert_eq!(by_type.list().len(), 1);
    // The source task gets no event.
    assert_eq!(app.events_of(hr, &task).await.len(), 1);
    // A refused template writes none.
    assert_error(&create_named(app, hr, &task, "audited").await, 409, "");
    let by_type = app.get(hr, "/events?type=template.created").await;
    assert_eq!(by_type.list().len(), 1);
}

async fn template_names_are_unique_per_org_ignoring_case(app: &TestApp) {
    let hr = &app.org.hr;
    let a = app.task_titled(hr, "a").await;
    let b = app.task_titled(hr, "b").await;
    let first = template(app, hr, &a, "Weekly Report").await;
    for name in [
        "Weekly Report",
        "weekly report",
        "WEEKLY REPORT",
        "wEEKLY rEPORT",
    ] {
        for task in [&a, &b] {
            let reply = create_named(app, hr, task, name).await;
            assert_error(&reply, 409, "already exists");
        }
    }
    // Case beyond ASCII.
    template(app, hr, &a, "Ärger Über Größe").await;
    assert_error(
        &create_named(app, hr, &b, "ärger über größe").await,
        409,
        "already exists",
    );
    // A different name is fine, and so is the same name in another organization.
    template(app, hr, &a, "Weekly Report 2").await;
    let theirs = app.task_titled(&app.other.hr, "theirs").await;
    let their_template = template(app, &app.other.hr, &theirs, "Weekly Report").await;
    assert_eq!(their_template["name"], "Weekly Report");

    let names: Vec<String> = templates_of(app, hr)
        .await
        .iter()
        .map(|t| str_of(t, "name"))
        .collect();
    assert_eq!(
        names,
        ["Weekly Report 2", "Ärger Über Größe", "Weekly Report"]
    );
    assert_eq!(templates_of(app, hr).await[2], first);
}

async fn invalid_template_requests_are_400_and_change_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "source").await;
    let cases: Vec<(String, &str)> = vec![
        (json!({ "name": "" }).to_string(), "name"),
        (json!({ "name": "   " }).to_string(), "name"),
        (json!({ "name": "\t\n" }).to_string(), "name"),
        (
            json!({ "name": "n".repeat(256) }).to_string(),
            "name must be at most 255 characters",
        ),
        (
            json!({ "name": "é".repeat(256) }).to_string(),
            "name must be at most 255 characters",
        ),
        ("{}".into(), "name is required"),
        (r#"{"name":null}"#.into(), "name"),
        (r#"{"name":42}"#.into(), "name"),
        (
            r#"{"name":"x","title":"other"}"#.into(),
            "property title should not exist",
        ),
        (r#"{"name":"x""#.into(), "malformed JSON"),
        (String::new(), "JSON object"),
        (r#"["x"]"#.into(), "JSON object"),
        (r#""x""#.into(), "JSON object"),
    ];
    for (body, message) in &cases {
        let reply = create_raw(app, hr, &task, body).await;
        let shown: String = body.chars().take(60).collect();
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "body {shown}: {}",
            reply.text
        );
        assert_error(&reply, 400, message);
    }
    let reply = create_named(app, hr, "not-a-uuid", "x").await;
    assert_error(&reply, 400, "id must be a UUID");
    assert!(templates_of(app, hr).await.is_empty());
    let events = app.get(hr, "/events?type=template.created").await;
    assert!(events.list().is_empty());

    // The bounds: 255 characters (also as two-byte characters), and one.
    for name in ["n".repeat(255), "é".repeat(255), "x".to_owned()] {
        let saved = template(app, hr, &task, &name).await;
        assert_eq!(saved["name"], name);
    }
}

async fn templates_of_missing_or_foreign_tasks_are_404(app: &TestApp) {
    let hr = &app.org.hr;
    let theirs = app.task_titled(&app.other.hr, "theirs").await;
    let mine = app.task_titled(hr, "mine").await;
    let missing = Uuid::now_v7().to_string();
    assert_error(
        &create_named(app, hr, &missing, "x").await,
        404,
        "not found",
    );
    assert_error(&create_named(app, hr, &theirs, "x").await, 404, "not found");
    let reply = create_named(app, &app.other.hr, &mine, "x").await;
    assert_error(&reply, 404, "not found");
    assert!(templates_of(app, hr).await.is_empty());
    assert!(templates_of(app, &app.other.hr).await.is_empty());
}

async fn templates_are_listed_newest_first_in_pages_per_org(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "source").await;
    let mut saved = Vec::new();
    for n in 1..=5 {
        saved.push(template(app, hr, &task, &format!("t{n}")).await);
    }
    saved.reverse(); // newest first
    let theirs = app.task_titled(&app.other.hr, "theirs").await;
    let their_template = template(app, &app.other.hr, &theirs, "t1").await;

    let all = app.get(hr, "/tasks/templates").await;
    assert_eq!(all.list(), &saved);
    assert_eq!(keys_of(&all.body), ["data"], "no meta when nothing remains");
    assert_eq!(templates_of(app, &app.other.hr).await, [their_template]);

    // Users see their organization's templates too.
    let (_, token) = app.user_token(&app.org, "viewer").await;
    let reply = send(app.bearer(&token, Method::GET, "/tasks/templates", None)).await;
    assert_eq!(reply.list(), &saved);

    let first = app.get(hr, "/tasks/templates?limit=2").await;
    assert_eq!(first.list(), &saved[..2]);
    let cursor = str_of(&first.body["meta"], "nextCursor");
    let second = app
        .get(hr, &format!("/tasks/templates?limit=2&cursor={cursor}"))
        .await;
    assert_eq!(second.list(), &saved[2..4]);
    let cursor = str_of(&second.body["meta"], "nextCursor");
    let last = app
        .get(hr, &format!("/tasks/templates?cursor={cursor}&limit=2"))
        .await;
    assert_eq!(last.list(), &saved[4..]);
    assert_eq!(keys_of(&last.body), ["data"]);
    for limit in [5, 500] {
        let whole = app
            .get(hr, &format!("/tasks/templates?limit={limit}"))
            .await;
        assert_eq!(whole.list(), &saved);
        assert_eq!(keys_of(&whole.body), ["data"], "limit {limit}");
    }
    // The other organization's (newer) template as a cursor reveals nothing of it.
    let their_id = str_of(&templates_of(app, &app.other.hr).await[0], "id");
    let reply = app
        .get(hr, &format!("/tasks/templates?cursor={their_id}"))
        .await;
    assert_eq!(reply.list(), &saved);
}

async fn bad_paging_queries_are_400(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "source").await;
    template(app, hr, &task, "one").await;
    assert_bad_queries(
        app,
        hr,
        "/tasks/templates",
        &[
            ("limit=0", "limit must be between 1 and 500"),
            ("limit=501", "limit must be between 1 and 500"),
            ("limit=-1", "limit"),
            ("limit=abc", "limit"),
            ("cursor=abc", "cursor"),
            ("name=one", "property name should not exist"),
        ],
    )
    .await;
    for query in ["limit=1", "limit=500"] {
        let reply = app.get(hr, &format!("/tasks/templates?{query}")).await;
        assert_eq!(reply.list().len(), 1, "{query}");
    }
}

async fn instantiate_copies_the_template(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    let source = rich_task(app, hr).await;
    let source_id = str_of(&source, "id");
    let saved = template(app, hr, &source_id, "Weekly").await;
    let id = str_of(&saved, "id");
    // The template is a copy: later changes of its source do not reach it.
    let patch = json!({ "title": "changed", "priority": "low", "tags": [], "metadata": {} });
    let reply = send(app.signed(
        hr,
        Method::PATCH,
        &format!("/tasks/{source_id}"),
        Some(&patch.to_string()),
    ))
    .await;
    assert_eq!(reply.data()["title"], "changed");

    for body in [None, Some(""), Some("{}"), Some(" {} ")] {
        let reply = instantiate(app, &worker, &id, body).await;
        assert_eq!(reply.status, StatusCode::OK, "{body:?}: {}", reply.text);
        assert_eq!(keys_of(&reply.body), ["data"]);
        let task = reply.data().clone();
        let task_id = str_of(&task, "id");
        assert_ne!(task_id, source_id);
        assert_eq!(task["status"], "todo");
        assert_eq!(task["orgId"], app.org.id.to_string());
        for field in [
            "title",
            "description",
            "priority",
            "tags",
            "approvalRequired",
            "metadata",
        ] {
            assert_eq!(task[field], saved[field], "{field} comes from the template");
        }
        assert_eq!(task["title"], "Weekly report");
        assert_eq!(task["assigneeId"], Value::Null);
        assert_eq!(task["parentTaskId"], Value::Null);
        assert_eq!(task["dueAt"], Value::Null, "deadlines are not copied");
        assert_eq!(task["creatorId"], worker.uuid.to_string());
        assert_timestamp(&task, "createdAt");

        // A real task: stored as answered, audited as created by the caller.
        let read = app.get(hr, &format!("/tasks/{task_id}")).await;
        assert_eq!(read.data(), &task);
        let events = app.events_of(hr, &task_id).await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["type"], "task.created");
        assert_eq!(events[0]["entityType"], "task");
        assert_eq!(events[0]["actorId"], worker.uuid.to_string());
    }
    // Instantiating changes neither the template nor its events.
    assert_eq!(templates_of(app, hr).await, [saved]);
    assert_eq!(app.events_of(hr, &id).await.len(), 1);
    // The copies behave like any task: the approval flag carries over (D-33).
    let copy = instantiate(app, hr, &id, None).await.data().clone();
    let copy_id = str_of(&copy, "id");
    for to in ["in_progress", "review"] {
        let reply = app
            .transition(hr, &copy_id, &json!({ "status": to }).to_string())
            .await;
        assert_eq!(reply.data()["status"], to);
    }
    let reply = app.transition(hr, &copy_id, r#"{"status":"done"}"#).await;
    assert_error(&reply, 403, "approval");
}

async fn instantiate_applies_overrides(app: &TestApp) {
    let hr = &app.org.hr;
    let assignee = app.worker(&app.org).await;
    let source = rich_task(app, hr).await;
    let parent = app.task_titled(hr, "epic").await;
    let saved = template(app, hr, &str_of(&source, "id"), "Weekly").await;
    let id = str_of(&saved, "id");

    let body = json!({
        "title": "  Report for week 48 ",
        "assigneeId": assignee.uuid,
        "dueAt": "2026-12-01T10:00:00+02:00",
        "parentTaskId": parent,
    });
    let reply = instantiate(app, hr, &id, Some(&body.to_string())).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let task = reply.data().clone();
    assert_eq!(
        task["title"], "Report for week 48",
        "titles are trimmed (D-5)"
    );
    assert_eq!(task["assigneeId"], assignee.uuid.to_string());
    assert_eq!(task["dueAt"], "2026-12-01T08:00:00.000Z");
    assert_eq!(task["parentTaskId"], parent);
    assert_eq!(task["status"], "todo");
    for field in [
        "description",
        "priority",
        "tags",
        "approvalRequired",
        "metadata",
    ] {
        assert_eq!(task[field], saved[field], "{field} comes from the template");
    }
    let created = app.events_of(hr, &str_of(&task, "id")).await;
    assert_eq!(created.len(), 1);
    assert_eq!(created[0]["type"], "task.created");
    assert_eq!(
        created[0]["payload"]["assigneeId"],
        assignee.uuid.to_string()
    );

    // Each override alone; null means "not given".
    let only_title = instantiate(app, hr, &id, Some(r#"{"title":"just this"}"#)).await;
    let only_title = only_title.data().clone();
    assert_eq!(only_title["title"], "just this");
    assert_eq!(only_title["assigneeId"], Value::Null);
    let nulls = r#"{"title":null,"assigneeId":null,"dueAt":null,"parentTaskId":null}"#;
    let plain = instantiate(app, hr, &id, Some(nulls)).await.data().clone();
    assert_eq!(plain["title"], "Weekly report");
    assert_eq!(plain["dueAt"], Value::Null);
    // The assignee's own listing finds the task.
    let mine = app
        .get(hr, &format!("/tasks?assigneeId={}", assignee.uuid))
        .await;
    assert_eq!(mine.ids(), [str_of(&task, "id")]);
    let children = app.get(hr, &format!("/tasks?parentTaskId={parent}")).await;
    assert_eq!(children.ids(), [str_of(&task, "id")]);
}

async fn invalid_overrides_are_refused_and_create_nothing(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "source").await;
    let id = str_of(&template(app, hr, &task, "t").await, "id");
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let suspended = app.add_agent(&app.org, "worker", "suspended").await;
    let foreign_agent = app.other.hr.uuid;
    let foreign_task = app.task_titled(&app.other.hr, "theirs").await;
    let missing = Uuid::now_v7();
    let before = task_counts(app, hr).await;

    let cases: Vec<(String, u16, &str)> = vec![
        (r#"{"title":""}"#.into(), 400, "title"),
        (r#"{"title":"   "}"#.into(), 400, "title"),
        (
            json!({ "title": "t".repeat(256) }).to_string(),
            400,
            "title must be at most 255 characters",
        ),
        (r#"{"title":5}"#.into(), 400, "title"),
        (r#"{"assigneeId":"nope"}"#.into(), 400, "assigneeId"),
        (r#"{"parentTaskId":"42"}"#.into(), 400, "parentTaskId"),
        (r#"{"dueAt":"tomorrow"}"#.into(), 400, "dueAt"),
        (r#"{"dueAt":1795000000}"#.into(), 400, "dueAt"),
        (
            r#"{"priority":"low"}"#.into(),
            400,
            "property priority should not exist",
        ),
        (
            r#"{"name":"t"}"#.into(),
            400,
            "property name should not exist",
        ),
        (r#"{"title":"x""#.into(), 400, "malformed JSON"),
        (r#"["x"]"#.into(), 400, "JSON object"),
        ("null".into(), 400, "JSON object"),
        (
            json!({ "assigneeId": missing }).to_string(),
            404,
            "not found",
        ),
        (
            json!({ "assigneeId": foreign_agent }).to_string(),
            404,
            "not found",
        ),
        (
            json!({ "assigneeId": observer.uuid }).to_string(),
            409,
            "observer",
        ),
        (
            json!({ "assigneeId": suspended.uuid }).to_string(),
            409,
            "not active",
        ),
        (
            json!({ "parentTaskId": missing }).to_string(),
            404,
            "not found",
        ),
        (
            json!({ "parentTaskId": foreign_task }).to_string(),
            404,
            "not found",
        ),
    ];
    for (body, status, message) in &cases {
        let reply = instantiate(app, hr, &id, Some(body)).await;
        assert_eq!(
            reply.status.as_u16(),
            *status,
            "body {body}: {}",
            reply.text
        );
        assert_error(&reply, *status, message);
    }
    assert_eq!(task_counts(app, hr).await, before, "nothing was created");
}

async fn unknown_or_foreign_templates_are_404(app: &TestApp) {
    let hr = &app.org.hr;
    let theirs = &app.other.hr;
    let their_task = app.task_titled(theirs, "theirs").await;
    let their_template = str_of(&template(app, theirs, &their_task, "theirs").await, "id");
    let before = task_counts(app, hr).await;

    let missing = Uuid::now_v7().to_string();
    for id in [&missing, &their_template] {
        assert_error(&instantiate(app, hr, id, None).await, 404, "not found");
        let body = r#"{"title":"x"}"#;
        assert_error(
            &instantiate(app, hr, id, Some(body)).await,
            404,
            "not found",
        );
    }
    // A task's id is not a template's.
    assert_error(
        &instantiate(app, hr, &their_task, None).await,
        404,
        "not found",
    );
    let reply = instantiate(app, hr, "not-a-uuid", None).await;
    assert_error(&reply, 400, "id must be a UUID");
    // Only GET and POST paths exist under /tasks/templates.
    let reply = send(app.signed(
        hr,
        Method::GET,
        &format!("/tasks/templates/{missing}/instantiate"),
        None,
    ))
    .await;
    assert_eq!(
        reply.status,
        StatusCode::METHOD_NOT_ALLOWED,
        "{}",
        reply.text
    );

    assert_eq!(task_counts(app, hr).await, before);
    assert_eq!(task_counts(app, theirs).await.0, 1);
}

/// Observers (D-55), viewers (D-14) and `read` keys (D-17) may list templates, not save
/// or instantiate them.
async fn read_only_callers_cannot_create_or_instantiate(app: &TestApp) {
    let hr = &app.org.hr;
    let task = app.task_titled(hr, "source").await;
    let saved = template(app, hr, &task, "saved").await;
    let id = str_of(&saved, "id");
    let observer = app.add_agent(&app.org, "observer", "active").await;
    assert_error(&create_named(app, &observer, &task, "no").await, 403, "");
    assert_error(&instantiate(app, &observer, &id, None).await, 403, "");
    assert_eq!(
        templates_of(app, &observer).await,
        std::slice::from_ref(&saved)
    );

    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let admin = app.admin_token(&app.org).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    for credential in [&viewer, &read_key] {
        let body = json!({ "name": "no" });
        let path = format!("/tasks/{task}/create-template");
        let reply = send(app.bearer(credential, Method::POST, &path, Some(&body))).await;
        assert_error(&reply, 403, "");
        let path = format!("/tasks/templates/{id}/instantiate");
        let reply = send(app.bearer(credential, Method::POST, &path, None)).await;
        assert_error(&reply, 403, "");
        let reply = send(app.bearer(credential, Method::GET, "/tasks/templates", None)).await;
        assert_eq!(reply.list(), std::slice::from_ref(&saved));
    }
    // An operator may, through a JWT; the task's creator is then the user.
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let path = format!("/tasks/templates/{id}/instantiate");
    let reply = send(app.bearer(&operator, Method::POST, &path, None)).await;
    assert_eq!(reply.data()["title"], "source");
    assert_eq!(templates_of(app, hr).await, [saved]);
    assert_eq!(app.get(hr, "/tasks").await.list().len(), 2);
}

/// Two requests for one name (in different cases) at once: one template, one 409.
async fn concurrent_templates_of_one_name_store_one(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = app.worker(&app.org).await;
    let task = app.task_titled(hr, "source").await;
    for round in 0..5 {
        let (upper, lower) = (format!("Race {round}"), format!("race {round}"));
        let (first, second) = tokio::join!(
            create_named(app, hr, &task, &upper),
            create_named(app, &worker, &task, &lower)
        );
        let mut statuses = [first.status.as_u16(), second.status.as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "{} / {}", first.text, second.text);
        for reply in [&first, &second] {
            if reply.status == StatusCode::CONFLICT {
                assert_error(reply, 409, "already exists");
            }
        }
    }
    assert_eq!(templates_of(app, hr).await.len(), 5);
    let events = app.get(hr, "/events?type=template.created").await;
    assert_eq!(events.list().len(), 5);
}
