//! Organizations are sealed off from each other (decision D-8): on every `/tasks` route
//! that takes an id, another organization's id is answered exactly as a missing one
//! (404, the same body apart from the id) and nothing changes on either side.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Agent, TestApp, assert_error, str_of};
use crate::task_tools::{Caller, depend, event_total, move_ok, task_state, text_without};

api_tests!(
    foreign_ids_are_404_like_missing_ones_on_every_route,
    foreign_ids_in_bodies_and_second_segments_are_404_like_missing_ones,
    a_dependency_is_removed_only_through_its_own_task,
);

/// What the second organization holds.
struct Theirs {
    /// Their task: needs approval, in review, so every route would accept it.
    task: String,
    /// Another task of theirs, to depend on.
    other: String,
    /// A dependency of `task`.
    dependency: String,
    /// Their template.
    template: String,
    /// Their active worker.
    worker: Agent,
}

async fn theirs(app: &TestApp) -> Theirs {
    let hr = &app.other.hr;
    let task = str_of(
        &app.create_task(
            hr,
            &json!({ "title": "their secret", "approvalRequired": true, "tags": ["x"] }),
        )
        .await,
        "id",
    );
    move_ok(app, hr, &task, "in_progress").await;
    move_ok(app, hr, &task, "review").await;
    let other = app.task_titled(hr, "their other").await;
    let removable = app.task_titled(hr, "their removable").await;
    let dependency = str_of(&depend(app, hr, &task, &removable, false).await, "id");
    let comment = json!({ "body": "their comment" }).to_string();
    app.post(hr, &format!("/tasks/{task}/comments"), &comment)
        .await
        .data();
    let template = app
        .post(
            hr,
            &format!("/tasks/{task}/create-template"),
            r#"{"name":"their template"}"#,
        )
        .await;
    Theirs {
        task,
        other,
        dependency,
        template: str_of(template.data(), "id"),
        worker: app.worker(&app.other).await,
    }
}

/// Everything either organization could see change.
async fn world(app: &TestApp, t: &Theirs) -> Vec<Value> {
    let (them, us) = (&app.other.hr, &app.org.hr);
    let (task, events) = task_state(app, them, &t.task).await;
    let mut state = vec![
        task,
        Value::Array(events),
        json!(event_total(app, them).await),
        json!(event_total(app, us).await),
    ];
    for (agent, path) in [
        (them, "/tasks?limit=500".to_owned()),
        (them, "/tasks/templates".to_owned()),
        (them, format!("/tasks/{}/dependencies", t.task)),
        (them, format!("/tasks/{}/comments", t.task)),
        (them, format!("/tasks/{}/escalations", t.task)),
        (us, "/tasks?limit=500".to_owned()),
        (us, "/tasks/templates".to_owned()),
    ] {
        state.push(app.get(agent, &path).await.data().clone());
    }
    state
}

/// One probe: the same request with the foreign id and with a missing one.
struct Probe {
    method: Method,
    /// The path with `{}` where the id goes.
    path: &'static str,
    body: Option<Value>,
}

fn probe(method: Method, path: &'static str, body: Option<Value>) -> Probe {
    Probe { method, path, body }
}

fn id_routes(t: &Theirs) -> Vec<Probe> {
    let worker = t.worker.uuid;
    vec![
        probe(Method::GET, "/tasks/{}", None),
        probe(
            Method::PATCH,
            "/tasks/{}",
            Some(json!({ "title": "hijacked" })),
        ),
        probe(
            Method::POST,
            "/tasks/{}/transition",
            Some(json!({ "status": "cancelled" })),
        ),
        probe(Method::POST, "/tasks/{}/approve", None),
        probe(
            Method::POST,
            "/tasks/{}/assign",
            Some(json!({ "assigneeId": worker })),
        ),
        probe(
            Method::POST,
            "/tasks/{}/dependencies",
            Some(json!({ "dependsOnId": t.other, "blocking": true })),
        ),
        probe(Method::GET, "/tasks/{}/dependencies", None),
        probe(
            Method::POST,
            "/tasks/{}/comments",
            Some(json!({ "body": "snooping" })),
        ),
        probe(Method::GET, "/tasks/{}/comments", None),
        probe(
            Method::POST,
            "/tasks/{}/escalate",
            Some(json!({ "reason": "MANUAL", "targetAgentId": worker })),
        ),
        probe(Method::GET, "/tasks/{}/escalations", None),
        probe(
            Method::POST,
            "/tasks/{}/create-template",
            Some(json!({ "name": "stolen" })),
        ),
        probe(Method::GET, "/tasks/{}/candidates", None),
        probe(
            Method::POST,
            "/tasks/{}/auto-assign",
            Some(json!({ "minCoverage": 0 })),
        ),
    ]
}

/// Asserts `foreign` (naming `foreign_id`) and `absent` (naming `missing_id`) are the
/// same 404 answer byte for byte apart from the id.
#[track_caller]
fn same_404(
    what: &str,
    foreign: &crate::helpers::Reply,
    foreign_id: &str,
    absent: &crate::helpers::Reply,
    missing_id: &str,
) {
    assert_error(foreign, 404, "");
    assert_error(absent, 404, "");
    assert_eq!(
        text_without(foreign, foreign_id),
        text_without(absent, missing_id),
        "{what}"
    );
    assert_eq!(
        foreign.headers.get("content-type"),
        absent.headers.get("content-type"),
        "{what}"
    );
}

async fn our_callers(app: &TestApp) -> Vec<Caller> {
    let admin = app.admin_token(&app.org).await;
    let key = app.api_key(&admin, &["admin"]).await;
    vec![
        Caller::Agent(app.org.hr.clone()),
        Caller::Bearer(admin),
        Caller::Bearer(key),
    ]
}

async fn foreign_ids_are_404_like_missing_ones_on_every_route(app: &TestApp) {
    let t = theirs(app).await;
    let callers = our_callers(app).await;
    let before = world(app, &t).await;
    for caller in &callers {
        let mut probes = id_routes(&t);
        probes.push(probe(Method::DELETE, "/tasks/{}/dependencies/DEP", None));
        probes.push(probe(
            Method::POST,
            "/tasks/templates/TEMPLATE/instantiate",
            Some(json!({})),
        ));
        for p in probes {
            let missing = Uuid::now_v7().to_string();
            let (foreign_id, placeholder) = if p.path.contains("TEMPLATE") {
                (&t.template, "TEMPLATE")
            } else {
                (&t.task, "{}")
            };
            let path_for = |id: &str| {
                p.path
                    .replace(placeholder, id)
                    .replace("DEP", &t.dependency)
            };
            let foreign = caller
                .call(
                    app,
                    p.method.clone(),
                    &path_for(foreign_id),
                    p.body.as_ref(),
                )
                .await;
            let absent = caller
                .call(app, p.method.clone(), &path_for(&missing), p.body.as_ref())
                .await;
            let what = format!("{} {} by {caller:?}", p.method, p.path);
            same_404(&what, &foreign, foreign_id, &absent, &missing);
        }
    }
    assert_eq!(world(app, &t).await, before, "nothing changed anywhere");
}

async fn foreign_ids_in_bodies_and_second_segments_are_404_like_missing_ones(app: &TestApp) {
    let t = theirs(app).await;
    let hr = &app.org.hr;
    let ours = app.task_titled(hr, "ours").await;
    let our_template = app
        .post(
            hr,
            &format!("/tasks/{ours}/create-template"),
            r#"{"name":"ours"}"#,
        )
        .await;
    let our_template = str_of(our_template.data(), "id");
    let callers = our_callers(app).await;
    let before = world(app, &t).await;
    let our_before = task_state(app, hr, &ours).await;

    // (method, path, body) with `ID` where the foreign or missing id goes.
    let worker = t.worker.uuid.to_string();
    let cases: Vec<(Method, String, Option<String>, &str)> = vec![
        (
            Method::POST,
            format!("/tasks/{ours}/dependencies"),
            Some(r#"{"dependsOnId":"ID","blocking":true}"#.to_owned()),
            t.task.as_str(),
        ),
        (
            Method::DELETE,
            format!("/tasks/{ours}/dependencies/ID"),
            None,
            t.dependency.as_str(),
        ),
        (
            Method::POST,
            format!("/tasks/{ours}/assign"),
            Some(r#"{"assigneeId":"ID"}"#.to_owned()),
            worker.as_str(),
        ),
        (
            Method::POST,
            format!("/tasks/{ours}/escalate"),
            Some(r#"{"reason":"MANUAL","targetAgentId":"ID"}"#.to_owned()),
            worker.as_str(),
        ),
        (
            Method::POST,
            "/tasks".to_owned(),
            Some(r#"{"title":"child","parentTaskId":"ID"}"#.to_owned()),
            t.task.as_str(),
        ),
        (
            Method::POST,
            "/tasks".to_owned(),
            Some(r#"{"title":"theirs to do","assigneeId":"ID"}"#.to_owned()),
            worker.as_str(),
        ),
        (
            Method::POST,
            format!("/tasks/templates/{our_template}/instantiate"),
            Some(r#"{"parentTaskId":"ID"}"#.to_owned()),
            t.task.as_str(),
        ),
        (
            Method::POST,
            format!("/tasks/templates/{our_template}/instantiate"),
            Some(r#"{"assigneeId":"ID"}"#.to_owned()),
            worker.as_str(),
        ),
    ];
    for caller in &callers {
        for (method, path, body, foreign_id) in &cases {
            let missing = Uuid::now_v7().to_string();
            let send = |id: &str| {
                let body: Option<Value> = body
                    .as_ref()
                    .map(|b| serde_json::from_str(&b.replace("ID", id)).unwrap());
                let path = path.replace("ID", id);
                let method = method.clone();
                async move { caller.call(app, method, &path, body.as_ref()).await }
            };
            let foreign = send(foreign_id).await;
            let absent = send(&missing).await;
            let what = format!("{method} {path} {body:?} by {caller:?}");
            same_404(&what, &foreign, foreign_id, &absent, &missing);
        }
    }
    assert_eq!(world(app, &t).await, before, "nothing changed for them");
    assert_eq!(task_state(app, hr, &ours).await, our_before, "nor for us");

    // Their lists never show up on our side, and our filters find nothing of theirs.
    for path in [
        format!("/tasks?parentTaskId={}", t.task),
        format!("/tasks?creatorId={}", app.other.hr.uuid),
        format!("/tasks?assigneeId={}", t.worker.uuid),
    ] {
        assert_eq!(app.get(hr, &path).await.list().len(), 0, "{path}");
    }
    let templates = app.get(hr, "/tasks/templates").await;
    assert_eq!(templates.ids(), [our_template]);
}

/// D-32: `depId` names a dependency of `:id`; one of a sibling task in the same
/// organization is not found there, and stays.
async fn a_dependency_is_removed_only_through_its_own_task(app: &TestApp) {
    let hr = &app.org.hr;
    let (a, b, c) = (
        app.task_titled(hr, "a").await,
        app.task_titled(hr, "b").await,
        app.task_titled(hr, "c").await,
    );
    let of_b = str_of(&depend(app, hr, &b, &c, true).await, "id");
    let before = (
        app.get(hr, &format!("/tasks/{b}/dependencies")).await.body,
        event_total(app, hr).await,
    );
    let missing = Uuid::now_v7().to_string();
    let wrong_task =
        crate::task_tools::delete(app, hr, &format!("/tasks/{a}/dependencies/{of_b}")).await;
    let absent =
        crate::task_tools::delete(app, hr, &format!("/tasks/{a}/dependencies/{missing}")).await;
    same_404(
        "dependency of another task",
        &wrong_task,
        &of_b,
        &absent,
        &missing,
    );
    assert_eq!(
        wrong_task.body["message"],
        format!("Dependency {of_b} not found")
    );
    // Nor through the task it points at.
    let reverse =
        crate::task_tools::delete(app, hr, &format!("/tasks/{c}/dependencies/{of_b}")).await;
    assert_error(&reverse, 404, "Dependency");
    let after = (
        app.get(hr, &format!("/tasks/{b}/dependencies")).await.body,
        event_total(app, hr).await,
    );
    assert_eq!(after, before);
    // Through its own task it goes, once.
    let removed =
        crate::task_tools::delete(app, hr, &format!("/tasks/{b}/dependencies/{of_b}")).await;
    assert_eq!(removed.body["message"], "Dependency removed");
    assert_eq!(removed.data()["id"], of_b);
    let again =
        crate::task_tools::delete(app, hr, &format!("/tasks/{b}/dependencies/{of_b}")).await;
    assert_error(&again, 404, "Dependency");
    assert_eq!(
        app.get(hr, &format!("/tasks/{b}/dependencies"))
            .await
            .list()
            .len(),
        0
    );
    let events = app.events_of(hr, &b).await;
    assert_eq!(events[0]["type"], "task.dependency_removed");
    assert_eq!(events[1]["type"], "task.dependency_added");
}
