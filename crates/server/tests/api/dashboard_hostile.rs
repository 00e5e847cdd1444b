//! Hostile input to every dashboard route: forms with missing, repeated, unknown and
//! hostile values, ids of nothing, of another organization and of no UUID at all, and
//! bodies that are not forms. The dashboard's routes are HTML, outside the OpenAPI
//! document that `cargo xtask fuzz-api` drives, so this is their fuzzer: seeded (the
//! seed is in every failure message), bounded, and asserting what must hold for any
//! input: no 5xx, no unescaped markup sent back, nothing of another organization
//! changed, and the server still serving.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::dashboard_support::{Browser, Page};
use crate::helpers::{Rng, TestApp, str_of};

api_tests!(
    every_dashboard_form_survives_hostile_values,
    every_dashboard_page_survives_hostile_queries_and_ids,
    bodies_that_are_not_forms_are_refused,
);

/// The seed of the value picker: fixed, so a failure replays.
const SEED: u64 = 0x6d75_7374_6572;

/// Forms sent to each POST route.
const FORMS_PER_ROUTE: usize = 12;

/// Markup that must never come back unescaped.
const SCRIPT: &str = "<script>alert(1)</script>";
const IMAGE: &str = "\"><img src=x onerror=alert(1)>";

/// The values each field is also sent alone with.
const SHARPEST: [&str; 6] = [
    "",
    "a\u{0}b",
    SCRIPT,
    "99999999999999999999",
    "-1",
    "\u{202e}🙂",
];

/// What the hostile forms draw.
impl Rng {
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'v>(&mut self, values: &'v [String]) -> &'v str {
        &values[self.below(values.len())]
    }
}

/// The ids a path or a field may name: real ones, another organization's, and ones
/// that name nothing or are not ids at all.
struct Ids {
    task: String,
    project: String,
    other_task: String,
    agent: String,
    run: String,
    all: Vec<String>,
}

async fn ids(app: &TestApp) -> Ids {
    let task = app.task_titled(&app.org.hr, "Target").await;
    let blocker = app.task_titled(&app.org.hr, "Blocker").await;
    let other_task = app.task_titled(&app.other.hr, "Another org's").await;
    let worker = app.worker(&app.org).await;
    let other_agent = app.other.hr.uuid.to_string();
    let agent = worker.uuid.to_string();
    let (_, _, run) = crate::runs_support::running(app, 1_000, &json!({})).await;
    let reply = app
        .post(
            &app.org.hr,
            "/projects",
            &json!({"name": "Target project"}).to_string(),
        )
        .await;
    let project = str_of(&reply.body["data"], "id");
    let ids = vec![
        run.clone(),
        project.clone(),
        task.clone(),
        blocker,
        other_task.clone(),
        agent.clone(),
        other_agent,
        uuid::Uuid::now_v7().to_string(),
        uuid::Uuid::nil().to_string(),
        "not-a-uuid".to_owned(),
        "%00".to_owned(),
        "..%2F..%2Fetc".to_owned(),
        "9".repeat(300),
    ];
    Ids {
        task,
        project,
        other_task,
        agent,
        run,
        all: ids,
    }
}

/// Hostile and ordinary values for any field.
fn values(ids: &Ids) -> Vec<String> {
    let mut values: Vec<String> = [
        "",
        " ",
        "x",
        "-1",
        "0",
        "11",
        "99999999999999999999",
        "1e309",
        "NaN",
        "null",
        "true",
        "on",
        SCRIPT,
        IMAGE,
        "' OR 1=1 --",
        "%",
        "\u{0}",
        "a\u{0}b",
        "\u{202e}gnp.exe",
        "🙂🙂",
        "\r\n\r\n",
        "todo",
        "in_progress",
        "done",
        "cancelled",
        "critical",
        "low",
        "worker",
        "manager",
        "autonomous",
        "supervised",
        "read",
        "admin",
        "2026-13-45",
        "2026-01-01T00:00:00Z",
        "123456",
        "rust, go,, ,rust",
        "task.created",
        "/ui/board",
        "https://evil.example/",
        "//evil.example",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    values.push("x".repeat(256));
    values.push("y".repeat(100_001));
    values.extend(ids.all.iter().cloned());
    values
}

/// Every POST route of the dashboard, with its path's ids as `{}` and its fields.
const FORMS: &[(&str, &[&str])] = &[
    (
        "/ui/tasks",
        &["title", "priority", "tags", "description", "approval"],
    ),
    ("/ui/tasks/{}/move", &["status", "reason", "back"]),
    ("/ui/tasks/{}/approve", &[]),
    ("/ui/tasks/{}/assign", &["assignee"]),
    ("/ui/tasks/{}/auto-assign", &[]),
    (
        "/ui/tasks/{}/edit",
        &["title", "priority", "tags", "description"],
    ),
    ("/ui/tasks/{}/comments", &["body", "parent"]),
    ("/ui/tasks/{}/dependencies", &["dependsOn", "blocking"]),
    ("/ui/tasks/{}/dependencies/{}/remove", &[]),
    ("/ui/tasks/{}/escalate", &["notes"]),
    (
        "/ui/agents",
        &["agentId", "name", "level", "mode", "role", "capabilities"],
    ),
    ("/ui/agents/{}/suspend", &[]),
    ("/ui/agents/{}/unsuspend", &[]),
    ("/ui/agents/{}/revoke", &[]),
    ("/ui/agents/{}/activate", &[]),
    ("/ui/agents/{}/reject", &[]),
    ("/ui/runs/{}/stop", &[]),
    ("/ui/projects", &["name", "goal", "due"]),
    ("/ui/projects/{}/archive", &[]),
    ("/ui/webhooks/{}/test", &[]),
    ("/ui/account/api-keys", &["name", "scope", "expiresInDays"]),
    ("/ui/account/api-keys/{}/delete", &[]),
    ("/ui/account/totp/setup", &["password", "code"]),
    ("/ui/account/totp/verify", &["password", "code"]),
    ("/ui/account/totp/disable", &["password", "code"]),
    ("/ui/login", &["email", "password", "code", "org"]),
];

/// Every GET route with the query fields it reads (`/ui/live` streams: its own tests).
const PAGES: &[(&str, &[&str])] = &[
    ("/ui", &[]),
    ("/ui/login", &[]),
    (
        "/ui/board",
        &["assignee", "priority", "tag", "q", "project"],
    ),
    (
        "/ui/board/columns",
        &["assignee", "priority", "tag", "q", "project"],
    ),
    ("/ui/projects", &[]),
    ("/ui/projects/{}", &[]),
    ("/ui/tasks/{}", &[]),
    (
        "/ui/audit",
        &[
            "type",
            "actorId",
            "entityType",
            "entityId",
            "severity",
            "startDate",
            "endDate",
            "page",
        ],
    ),
    ("/ui/agents", &[]),
    ("/ui/agents/{}", &[]),
    ("/ui/runs/{}", &["after"]),
    ("/ui/runs/{}/log", &["from", "after", "seen"]),
    ("/ui/spend", &[]),
    ("/ui/webhooks", &[]),
    ("/ui/webhooks/{}", &[]),
    ("/ui/account", &[]),
];

/// `template` with each `{}` replaced by an id the picker chooses (a real task most of
/// the time, so the route's own logic runs).
fn path(template: &str, picker: &mut Rng, ids: &Ids) -> String {
    let mut path = String::new();
    let mut parts = template.split("{}").peekable();
    while let Some(part) = parts.next() {
        path.push_str(part);
        if parts.peek().is_some() {
            let id = if picker.chance(50) {
                if template.starts_with("/ui/agents/") {
                    ids.agent.clone()
                } else if template.starts_with("/ui/runs/") {
                    ids.run.clone()
                } else if template.starts_with("/ui/projects/") {
                    ids.project.clone()
                } else {
                    ids.task.clone()
                }
            } else {
                ids.all[picker.below(ids.all.len())].clone()
            };
            path.push_str(&id);
        }
    }
    path
}

/// A form over `fields`: each field present or not, sometimes twice, sometimes with a
/// field the route does not read.
fn form(fields: &[&str], picker: &mut Rng, values: &[String]) -> Vec<(String, String)> {
    let mut form = Vec::new();
    for field in fields {
        if picker.chance(80) {
            form.push(((*field).to_owned(), picker.pick(values).to_owned()));
        }
        if picker.chance(5) {
            form.push(((*field).to_owned(), picker.pick(values).to_owned()));
        }
    }
    if picker.chance(10) {
        form.push(("unexpected".to_owned(), picker.pick(values).to_owned()));
    }
    form
}

/// What must hold for any answer.
fn check(page: &Page, what: &str) {
    assert!(
        !page.status.is_server_error(),
        "{what}: {} {}",
        page.status,
        page.text.chars().take(500).collect::<String>()
    );
    assert!(
        !page.text.contains(SCRIPT) && !page.text.contains("<img src=x"),
        "{what}: markup sent back unescaped"
    );
}

/// The other organization's task, as its own agent reads it.
async fn other_task_state(app: &TestApp, ids: &Ids) -> serde_json::Value {
    let reply = app
        .get(&app.other.hr, &format!("/tasks/{}", ids.other_task))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.data().clone()
}

async fn every_dashboard_form_survives_hostile_values(app: &TestApp) {
    let ids = ids(app).await;
    let values = values(&ids);
    let before = other_task_state(app, &ids).await;
    let mut picker = Rng(SEED);
    let browser = Browser::admin(app, &app.org).await;
    // Sign-in attempts come from a browser of their own: the admin's stays signed in.
    let stranger = Browser::new(app);
    stranger.get("/ui/login").await;
    for (template, fields) in FORMS {
        for n in 0..FORMS_PER_ROUTE {
            let path = path(template, &mut picker, &ids);
            let form = form(fields, &mut picker, &values);
            let pairs: Vec<(&str, &str)> =
                form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let who = if *template == "/ui/login" {
                &stranger
            } else {
                &browser
            };
            let page = who.post(&path, &pairs).await;
            let shown: Vec<(&str, String)> = pairs
                .iter()
                .map(|(k, v)| (*k, v.chars().take(40).collect()))
                .collect();
            check(
                &page,
                &format!("seed {SEED:#x}, form {n} to {path}: {shown:?}"),
            );
        }
    }
    // And each field alone with each of the values most likely to break something.
    for (template, fields) in FORMS {
        for field in *fields {
            for value in SHARPEST {
                let path = path(template, &mut picker, &ids);
                let who = if *template == "/ui/login" {
                    &stranger
                } else {
                    &browser
                };
                let page = who.post(&path, &[(field, value)]).await;
                check(&page, &format!("{path} with {field}={value:?}"));
            }
        }
    }
    assert_eq!(
        other_task_state(app, &ids).await,
        before,
        "another organization's task changed"
    );
    let board = browser.get("/ui/board").await;
    assert_eq!(board.status, StatusCode::OK, "still signed in and serving");
    let health = crate::helpers::send(app.anonymous(Method::GET, "/health")).await;
    assert_eq!(health.body, json!({"status": "ok"}));
}

async fn every_dashboard_page_survives_hostile_queries_and_ids(app: &TestApp) {
    let ids = ids(app).await;
    // A URL holds at most 64 KiB: the longest value goes in forms only.
    let values: Vec<String> = values(&ids)
        .into_iter()
        .filter(|v| v.len() <= 1_000)
        .collect();
    let mut picker = Rng(SEED ^ 0xff);
    let browser = Browser::admin(app, &app.org).await;
    for (template, fields) in PAGES {
        for n in 0..FORMS_PER_ROUTE {
            let path = path(template, &mut picker, &ids);
            let query = serde_urlencoded::to_string(form(fields, &mut picker, &values)).unwrap();
            let target = if query.is_empty() {
                path
            } else {
                format!("{path}?{query}")
            };
            let page = browser.get(&target).await;
            let shown: String = target.chars().take(200).collect();
            check(&page, &format!("seed {SEED:#x}, page {n}: {shown}"));
        }
    }
    for (template, fields) in PAGES {
        for field in *fields {
            for value in SHARPEST {
                let path = path(template, &mut picker, &ids);
                let query = serde_urlencoded::to_string([(field, value)]).unwrap();
                let page = browser.get(&format!("{path}?{query}")).await;
                check(&page, &format!("{path} with {field}={value:?}"));
            }
        }
    }
    // Found by this test: PostgreSQL cannot bind a NUL, and a board filter holding one
    // was a 500 there. It is refused, by name.
    let page = browser.get("/ui/board/columns?tag=a%00b").await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.text);
    assert!(
        page.text.contains("tag must not contain the NUL character"),
        "{}",
        page.text
    );
    // A task of another organization is not found, not shown.
    let page = browser.get(&format!("/ui/tasks/{}", ids.other_task)).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(!page.text.contains("Another org&#39;s") && !page.text.contains("Another org's"));
    // Queries that are not even a form: bad escapes, bare separators, a thousand keys.
    let thousand = "a=1&".repeat(1_000);
    for query in ["%", "%ZZ", "&&==&", "q=%FF%FE", "q=%00", thousand.as_str()] {
        let page = browser.get(&format!("/ui/board?{query}")).await;
        check(&page, &format!("query {}", &query[..query.len().min(40)]));
    }
}

async fn bodies_that_are_not_forms_are_refused(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let task = app.task_titled(&app.org.hr, "Untouched").await;
    let token = browser.cookie("muster_csrf").unwrap_or_default();
    let bodies: [&[u8]; 6] = [
        b"%",
        b"title=%ZZ&priority=nope",
        b"\xff\xfe\x00title",
        b"{\"title\": \"json\"}",
        b"title=a&title=b&title=c",
        b"=&=&=",
    ];
    let before = crate::helpers::send(app.anonymous(Method::GET, "/health")).await;
    for body in bodies {
        for path in [
            "/ui/tasks".to_owned(),
            format!("/ui/tasks/{task}/edit"),
            format!("/ui/tasks/{task}/comments"),
        ] {
            let page = browser.send_raw(&path, body.to_vec(), &token).await;
            let what = format!("{path}: {}", String::from_utf8_lossy(body));
            check(&page, &what);
            assert!(page.status.is_client_error(), "{what}: {}", page.status);
        }
    }
    let comments = app
        .get(&app.org.hr, &format!("/tasks/{task}/comments"))
        .await;
    assert_eq!(
        comments.list().len(),
        0,
        "no body that is not a form commented"
    );
    assert_eq!(
        str_of(
            &app.get(&app.org.hr, &format!("/tasks/{task}"))
                .await
                .data()
                .clone(),
            "title"
        ),
        "Untouched"
    );
    assert_eq!(before.status, StatusCode::OK);
}
