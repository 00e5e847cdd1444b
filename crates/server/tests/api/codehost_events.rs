//! `POST /api/v1/integrations/codehost/webhook` (decisions D-87, D-88): signed events
//! of a connected installation open, edit, comment on, block and close tasks along the
//! legal path; refusals come in a fixed order and change nothing; a redelivery is
//! answered again without a second effect, also when it races itself on one instance
//! or across two.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::codehost_support::{
    WEBHOOK, connect, deliver, deliver_as, deliver_at, fresh_installation, organization_ping,
    payload,
};
use crate::helpers::{TestApp, assert_error, assert_error_exact, send, str_of};

api_tests!(
    refusals_come_in_order_and_change_nothing,
    an_issue_becomes_a_task_and_follows_it,
    a_reopened_issue_gets_a_new_task_only_when_its_task_is_closed,
    a_pull_request_goes_to_review_and_ci_blocks_and_unblocks_it,
    closing_follows_the_rules_of_the_task_api,
    a_redelivery_is_answered_again_without_a_second_effect,
    concurrent_redeliveries_create_one_task,
    redeliveries_racing_across_two_instances_create_one_task,
    other_events_and_repositories_are_ignored,
    the_owner_id_routes_events_without_an_installation,
    an_organization_webhook_ping_is_answered_ignored,
);

/// Connects a fresh installation to the first organization: its id and secret.
async fn connected(app: &TestApp, repository: Option<&str>) -> (i64, String) {
    let admin = app.admin_token(&app.org).await;
    let installation = fresh_installation();
    let (_, secret) = connect(app, &admin, installation, repository).await;
    (installation, secret)
}

async fn task(app: &TestApp, id: &str) -> Value {
    let reply = app.get(&app.org.hr, &format!("/tasks/{id}")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.data().clone()
}

async fn task_count(app: &TestApp) -> usize {
    app.get(&app.org.hr, "/tasks?limit=100").await.list().len()
}

/// The (from, to) of each transition of a task, oldest first.
async fn moves(app: &TestApp, id: &str) -> Vec<(String, String)> {
    let mut moves: Vec<(String, String)> = app
        .events_of(&app.org.hr, id)
        .await
        .iter()
        .filter(|e| e["type"] == "task.transitioned")
        .map(|e| (str_of(&e["payload"], "from"), str_of(&e["payload"], "to")))
        .collect();
    moves.reverse();
    moves
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

fn with_action(mut body: Value, action: &str) -> Value {
    body["action"] = json!(action);
    body
}

async fn refusals_come_in_order_and_change_nothing(app: &TestApp) {
    let (installation, secret) = connected(app, None).await;
    let body = payload("issues", installation);
    let raw = serde_json::to_vec(&body).unwrap();
    let good = format!("sha256={}", muster_auth::signing::sign(&secret, &raw));
    let post = |headers: &[(&str, &str)], raw: &[u8]| {
        let mut request = app
            .anonymous(Method::POST, WEBHOOK)
            .header("content-type", "application/json")
            .body(raw.to_vec());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        send(request)
    };
    let no_signature = post(&[("x-host-event", "issues")], &raw).await;
    assert_error_exact(
        &no_signature,
        400,
        "X-Host-Signature-256 header is required",
    );
    let no_event = post(&[("x-host-signature-256", &good)], &raw).await;
    assert_error_exact(&no_event, 400, "X-Host-Event header is required");
    let blank_event = post(
        &[("x-host-signature-256", &good), ("x-host-event", " ")],
        &raw,
    )
    .await;
    assert_error_exact(&blank_event, 400, "X-Host-Event header is required");
    let signed = |raw: &[u8]| format!("sha256={}", muster_auth::signing::sign(&secret, raw));
    let malformed = b"{\"action\": \"opened\",";
    let reply = post(
        &[
            ("x-host-event", "issues"),
            ("x-host-signature-256", &signed(malformed)),
        ],
        malformed,
    )
    .await;
    assert_error(&reply, 400, "malformed JSON");
    let nowhere = br#"{"action": "opened", "zen": "Design for failure."}"#;
    let reply = post(
        &[
            ("x-host-event", "issues"),
            ("x-host-signature-256", &signed(nowhere)),
        ],
        nowhere,
    )
    .await;
    assert_error(&reply, 400, "the payload names no installation");
    let mut stranger = body.clone();
    stranger["installation"]["id"] = json!(fresh_installation());
    let unknown = deliver(app, &secret, "issues", &stranger).await;
    assert_error_exact(
        &unknown,
        404,
        &format!(
            "No code-host connection for installation {}",
            stranger["installation"]["id"]
        ),
    );
    let wrong_key = deliver(app, &"0".repeat(64), "issues", &body).await;
    assert_error_exact(&wrong_key, 401, "Invalid code-host signature");
    let bare_hex = muster_auth::signing::sign(&secret, &raw);
    let unprefixed = post(
        &[
            ("x-host-event", "issues"),
            ("x-host-signature-256", &bare_hex),
        ],
        &raw,
    )
    .await;
    assert_error_exact(&unprefixed, 401, "Invalid code-host signature");
    // The signature covers the raw bytes: the same JSON re-serialized does not verify.
    let pretty = serde_json::to_vec_pretty(&body).unwrap();
    let reformatted = post(
        &[("x-host-event", "issues"), ("x-host-signature-256", &good)],
        &pretty,
    )
    .await;
    assert_error_exact(&reformatted, 401, "Invalid code-host signature");
    refusals_of_the_body_and_its_delivery_id(app, &body, &secret).await;
}

async fn refusals_of_the_body_and_its_delivery_id(app: &TestApp, body: &Value, secret: &str) {
    let raw = serde_json::to_vec(body).unwrap();
    let bare_hex = muster_auth::signing::sign(secret, &raw);
    let good = format!("sha256={bare_hex}");
    let post = |headers: &[(&str, &str)]| {
        let mut request = app
            .anonymous(Method::POST, WEBHOOK)
            .header("content-type", "application/json")
            .body(raw.clone());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        send(request)
    };
    let long_delivery = "d".repeat(201);
    let reply = post(&[
        ("x-host-event", "issues"),
        ("x-host-signature-256", &good),
        ("x-host-delivery", &long_delivery),
    ])
    .await;
    assert_error(&reply, 400, "X-Host-Delivery must be at most 200");
    let mut broken = body.clone();
    broken["issue"]["number"] = json!("twelve");
    let reply = deliver(app, secret, "issues", &broken).await;
    assert_error(&reply, 400, "issue:");
    assert_eq!(task_count(app).await, 0, "no refusal created a task");
    // The genuine article, with uppercase hex, goes through.
    let upper = format!("sha256={}", bare_hex.to_uppercase());
    let reply = post(&[("x-host-event", "issues"), ("x-host-signature-256", &upper)]).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.data()["action"], "created");
}

async fn an_issue_becomes_a_task_and_follows_it(app: &TestApp) {
    let (installation, secret) = connected(app, None).await;
    let opened = payload("issues", installation);
    let reply = deliver(app, &secret, "issues", &opened).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.data()["action"], "created");
    assert_eq!(reply.data()["reason"], Value::Null);
    let id = str_of(reply.data(), "taskId");
    let created = task(app, &id).await;
    assert_eq!(
        created["title"],
        "Press #3 jams when the feed rate exceeds 40/min"
    );
    assert!(str_of(&created, "description").starts_with("### Steps"));
    assert_eq!(created["status"], "todo");
    assert_eq!(created["priority"], "normal");
    assert_eq!(created["metadata"]["source"], "codehost");
    assert_eq!(created["metadata"]["repository"], "acme/widgets");
    assert_eq!(created["metadata"]["kind"], "issue");
    assert_eq!(created["metadata"]["number"], 12);
    assert_eq!(
        created["metadata"]["url"],
        "https://code.example/acme/widgets/issues/12"
    );
    assert_eq!(created["metadata"]["author"], "ada-l");

    let again = deliver(app, &secret, "issues", &opened).await;
    assert_eq!(
        again.data()["action"],
        "ignored",
        "a second opened is not a second task"
    );
    assert_eq!(str_of(again.data(), "taskId"), id);
    assert_eq!(task_count(app).await, 1);

    let mut edited = with_action(opened.clone(), "edited");
    edited["issue"]["title"] = json!("Press #3 jams above 40/min");
    edited["issue"]["body"] = json!(null);
    edited["changes"] =
        json!({"title": {"from": "Press #3 jams when the feed rate exceeds 40/min"}});
    let reply = deliver(app, &secret, "issues", &edited).await;
    assert_eq!(reply.data()["action"], "updated", "{}", reply.text);
    let after = task(app, &id).await;
    assert_eq!(after["title"], "Press #3 jams above 40/min");
    assert_eq!(after["description"], Value::Null);

    let comment = payload("issue_comment", installation);
    let reply = deliver(app, &secret, "issue_comment", &comment).await;
    assert_eq!(reply.data()["action"], "commented", "{}", reply.text);
    let comments = app.get(&app.org.hr, &format!("/tasks/{id}/comments")).await;
    let text = str_of(&comments.list()[0], "body");
    assert!(
        text.starts_with("ada-l commented on issue #12 of acme/widgets"),
        "{text}"
    );
    assert!(text.ends_with("Reproduced on press #2 as well, at 42/min."));
    let edited_comment = with_action(comment, "edited");
    let reply = deliver(app, &secret, "issue_comment", &edited_comment).await;
    assert_eq!(reply.data()["action"], "ignored");

    let mut closed = with_action(opened, "closed");
    closed["issue"]["state"] = json!("closed");
    closed["issue"]["state_reason"] = json!("completed");
    let reply = deliver(app, &secret, "issues", &closed).await;
    assert_eq!(reply.data()["action"], "completed", "{}", reply.text);
    assert_eq!(task(app, &id).await["status"], "done");
    assert_eq!(
        moves(app, &id).await,
        pairs(&[("todo", "in_progress"), ("in_progress", "done")]),
        "each step its own transition"
    );
    let events = app.events_of(&app.org.hr, &id).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    for expected in [
        "task.created",
        "task.updated",
        "task.commented",
        "task.done",
    ] {
        assert!(types.contains(&expected), "{expected} in {types:?}");
    }
    assert!(
        events.iter().all(|e| e["actorId"].is_null()),
        "the service itself acts"
    );
    let done = events.iter().find(|e| e["type"] == "task.done").unwrap();
    assert_eq!(
        done["payload"]["reason"],
        "issue #12 of acme/widgets was closed as completed on the code host"
    );
    let closed_again = deliver(app, &secret, "issues", &closed).await;
    assert_eq!(closed_again.data()["action"], "ignored");
    assert_eq!(closed_again.data()["reason"], "the task is already closed");
    let late_edit = deliver(app, &secret, "issues", &edited).await;
    assert_eq!(late_edit.data()["reason"], "the linked task is closed");
}

async fn a_reopened_issue_gets_a_new_task_only_when_its_task_is_closed(app: &TestApp) {
    let (installation, secret) = connected(app, None).await;
    let opened = payload("issues", installation);
    let reopened = with_action(opened.clone(), "reopened");
    let unlinked = deliver(app, &secret, "issues", &reopened).await;
    assert_eq!(unlinked.data()["action"], "ignored");
    assert_eq!(
        unlinked.data()["reason"],
        "issue #12 of acme/widgets is not linked to a task"
    );
    let first = str_of(
        deliver(app, &secret, "issues", &opened).await.data(),
        "taskId",
    );
    let still_open = deliver(app, &secret, "issues", &reopened).await;
    assert_eq!(still_open.data()["action"], "ignored");
    assert_eq!(still_open.data()["reason"], "the linked task is still open");
    assert_eq!(task_count(app).await, 1);

    let mut not_planned = with_action(opened.clone(), "closed");
    not_planned["issue"]["state_reason"] = json!("not_planned");
    let reply = deliver(app, &secret, "issues", &not_planned).await;
    assert_eq!(reply.data()["action"], "cancelled", "{}", reply.text);
    assert_eq!(task(app, &first).await["status"], "cancelled");
    assert_eq!(
        moves(app, &first).await,
        pairs(&[("todo", "cancelled")]),
        "one step"
    );

    let reply = deliver(app, &secret, "issues", &reopened).await;
    assert_eq!(reply.data()["action"], "created", "{}", reply.text);
    let second = str_of(reply.data(), "taskId");
    assert_ne!(second, first);
    assert_eq!(task(app, &second).await["status"], "todo");
    // The issue now leads to the new task.
    let comment = payload("issue_comment", installation);
    let reply = deliver(app, &secret, "issue_comment", &comment).await;
    assert_eq!(str_of(reply.data(), "taskId"), second);
}

async fn a_pull_request_goes_to_review_and_ci_blocks_and_unblocks_it(app: &TestApp) {
    let (installation, secret) = connected(app, Some("Acme/Widgets")).await;
    let opened = payload("pull_request", installation);
    let reply = deliver(app, &secret, "pull_request", &opened).await;
    assert_eq!(reply.data()["action"], "created", "{}", reply.text);
    let id = str_of(reply.data(), "taskId");
    let created = task(app, &id).await;
    assert_eq!(created["status"], "review");
    assert_eq!(created["metadata"]["kind"], "pull_request");
    assert_eq!(created["metadata"]["number"], 31);
    assert_eq!(
        moves(app, &id).await,
        pairs(&[("todo", "in_progress"), ("in_progress", "review")])
    );

    let failed = payload("check_suite", installation);
    let reply = deliver(app, &secret, "check_suite", &failed).await;
    assert_eq!(reply.data()["action"], "moved", "{}", reply.text);
    assert_eq!(str_of(reply.data(), "taskId"), id);
    assert_eq!(task(app, &id).await["status"], "blocked");
    let mut timed_out = failed.clone();
    timed_out["check_suite"]["conclusion"] = json!("timed_out");
    let reply = deliver(app, &secret, "check_suite", &timed_out).await;
    assert_eq!(reply.data()["reason"], "the task is blocked already");

    let mut passed = failed.clone();
    passed["check_suite"]["conclusion"] = json!("success");
    let reply = deliver(app, &secret, "check_suite", &passed).await;
    assert_eq!(reply.data()["action"], "moved", "{}", reply.text);
    assert_eq!(task(app, &id).await["status"], "in_progress");
    let reply = deliver(app, &secret, "check_suite", &passed).await;
    assert_eq!(reply.data()["reason"], "the task is not blocked");
    let mut neutral = failed.clone();
    neutral["check_suite"]["conclusion"] = json!("neutral");
    let reply = deliver(app, &secret, "check_suite", &neutral).await;
    assert_eq!(reply.data()["action"], "ignored");
    assert_eq!(task(app, &id).await["status"], "in_progress");
    assert_eq!(
        moves(app, &id).await,
        pairs(&[
            ("todo", "in_progress"),
            ("in_progress", "review"),
            ("review", "in_progress"),
            ("in_progress", "blocked"),
            ("blocked", "in_progress"),
        ]),
        "review to blocked goes through in_progress, as the table says"
    );

    let mut merged = with_action(opened.clone(), "closed");
    merged["pull_request"]["merged"] = json!(true);
    merged["pull_request"]["merged_at"] = json!("2026-11-24T12:00:00Z");
    let reply = deliver(app, &secret, "pull_request", &merged).await;
    assert_eq!(reply.data()["action"], "completed", "{}", reply.text);
    assert_eq!(task(app, &id).await["status"], "done");

    let mut other = opened.clone();
    other["number"] = json!(32);
    other["pull_request"]["number"] = json!(32);
    let other_id = str_of(
        deliver(app, &secret, "pull_request", &other).await.data(),
        "taskId",
    );
    let unmerged = with_action(other, "closed");
    let reply = deliver(app, &secret, "pull_request", &unmerged).await;
    assert_eq!(reply.data()["action"], "cancelled", "{}", reply.text);
    assert_eq!(task(app, &other_id).await["status"], "cancelled");

    let mut unknown_pull = failed;
    unknown_pull["check_suite"]["pull_requests"][0]["number"] = json!(99);
    let reply = deliver(app, &secret, "check_suite", &unknown_pull).await;
    assert_eq!(
        reply.data()["reason"],
        "the check suite names no pull request linked to a task"
    );
}

async fn closing_follows_the_rules_of_the_task_api(app: &TestApp) {
    let (installation, secret) = connected(app, None).await;
    let opened = payload("issues", installation);
    let id = str_of(
        deliver(app, &secret, "issues", &opened).await.data(),
        "taskId",
    );
    // A blocking dependency that is still open holds the task where it is.
    let blocker = app.task_titled(&app.org.hr, "Order the new feeder").await;
    let reply = app
        .post(
            &app.org.hr,
            &format!("/tasks/{id}/dependencies"),
            &json!({"dependsOnId": blocker, "blocking": true}).to_string(),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let closed = with_action(opened, "closed");
    let reply = deliver(app, &secret, "issues", &closed).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.data()["action"], "ignored");
    assert_eq!(
        reply.data()["reason"],
        "a blocking dependency is still open"
    );
    assert_eq!(task(app, &id).await["status"], "todo");
    assert!(moves(app, &id).await.is_empty());
}

async fn a_redelivery_is_answered_again_without_a_second_effect(app: &TestApp) {
    let (installation, secret) = connected(app, None).await;
    let opened = payload("issues", installation);
    let delivery = Uuid::new_v4().to_string();
    let first = deliver_as(app, &secret, "issues", &delivery, &opened).await;
    assert_eq!(first.data()["action"], "created");
    let again = deliver_as(app, &secret, "issues", &delivery, &opened).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.body, first.body, "the same answer, word for word");
    assert_eq!(task_count(app).await, 1);

    let comment = payload("issue_comment", installation);
    let delivery = Uuid::new_v4().to_string();
    for _ in 0..3 {
        let reply = deliver_as(app, &secret, "issue_comment", &delivery, &comment).await;
        assert_eq!(reply.data()["action"], "commented");
    }
    let id = str_of(first.data(), "taskId");
    let comments = app.get(&app.org.hr, &format!("/tasks/{id}/comments")).await;
    assert_eq!(comments.list().len(), 1, "one comment for three deliveries");
}

async fn concurrent_redeliveries_create_one_task(app: &TestApp) {
    let (installation, secret) = connected(app, None).await;
    let opened = payload("issues", installation);
    let delivery = Uuid::new_v4().to_string();
    let racers = (0..8).map(|_| deliver_as(app, &secret, "issues", &delivery, &opened));
    let replies = futures_util::future::join_all(racers).await;
    for reply in &replies {
        assert_eq!(reply.status, 200, "{}", reply.text);
        assert_eq!(
            reply.body, replies[0].body,
            "every racer gets the one answer"
        );
    }
    assert_eq!(replies[0].data()["action"], "created");
    assert_eq!(task_count(app).await, 1, "one effect");
    let id = str_of(replies[0].data(), "taskId");
    let created = app
        .events_of(&app.org.hr, &id)
        .await
        .iter()
        .filter(|e| e["type"] == "task.created")
        .count();
    assert_eq!(created, 1);
}

async fn redeliveries_racing_across_two_instances_create_one_task(app: &TestApp) {
    let (installation, secret) = connected(app, None).await;
    let sibling = app.sibling().await;
    let opened = payload("pull_request", installation);
    let delivery = Uuid::new_v4().to_string();
    let racers = (0..8).map(|n| {
        let base = if n % 2 == 0 { &app.base } else { &sibling.base };
        deliver_at(app, base, &secret, "pull_request", &delivery, &opened)
    });
    let replies = futures_util::future::join_all(racers).await;
    for reply in &replies {
        assert_eq!(reply.status, 200, "{}", reply.text);
        assert_eq!(
            reply.body, replies[0].body,
            "one answer from both instances"
        );
    }
    assert_eq!(task_count(app).await, 1, "one effect");
    let id = str_of(replies[0].data(), "taskId");
    assert_eq!(task(app, &id).await["status"], "review");
    assert_eq!(moves(app, &id).await.len(), 2, "moved to review once");
    TestApp::stop_sibling(sibling).await;
}

async fn other_events_and_repositories_are_ignored(app: &TestApp) {
    let (installation, secret) = connected(app, Some("acme/gadgets")).await;
    let issue = payload("issues", installation);
    let reply = deliver(app, &secret, "issues", &issue).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.data()["action"], "ignored");
    assert_eq!(
        reply.data()["reason"],
        "the connection does not cover this repository"
    );
    let ping = json!({"zen": "Practicality beats purity.", "hook_id": 1,
                      "hook": {"type": "App", "events": ["issues"]}, "installation": {"id": installation}});
    let reply = deliver(app, &secret, "ping", &ping).await;
    assert_eq!(
        reply.data(),
        &json!({"action": "ignored", "taskId": null,
                                      "reason": "the event \"ping\" is not handled"})
    );
    let labeled = with_action(issue, "labeled");
    let reply = deliver(app, &secret, "issues", &labeled).await;
    assert_eq!(
        reply.data()["reason"],
        "the issues action \"labeled\" is not handled"
    );
    assert_eq!(task_count(app).await, 0);
}

async fn the_owner_id_routes_events_without_an_installation(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let owner = fresh_installation();
    let (_, secret) = connect(app, &admin, owner, None).await;
    let mut body = payload("issues", 1);
    body.as_object_mut().unwrap().remove("installation");
    body["repository"]["owner"]["id"] = json!(owner);
    let reply = deliver(app, &secret, "issues", &body).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.data()["action"], "created");
}

/// An organization's own webhook: its ping names the organization, no installation and
/// no repository. Connected by the organization's id, the ping is checked like any event
/// and answered 200 `ignored`, so the code host shows the hook working; a ping that names
/// nothing to route is answered `ignored` too.
async fn an_organization_webhook_ping_is_answered_ignored(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let organization = fresh_installation();
    let (_, secret) = connect(app, &admin, organization, None).await;
    let ping = organization_ping(organization);
    assert!(ping.get("installation").is_none() && ping.get("repository").is_none());
    let reply = deliver(app, &secret, "ping", &ping).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.data(),
        &json!({"action": "ignored", "taskId": null,
                "reason": "the event \"ping\" is not handled"})
    );
    // The ping is how the host's owner learns the secret is wrong, or the connection
    // missing.
    let wrong = deliver(app, &"0".repeat(64), "ping", &ping).await;
    assert_error_exact(&wrong, 401, "Invalid code-host signature");
    let stranger = fresh_installation();
    let unknown = deliver(app, &secret, "ping", &organization_ping(stranger)).await;
    assert_error_exact(
        &unknown,
        404,
        &format!("No code-host connection for installation {stranger}"),
    );
    // A ping naming no installation, repository or organization (an app's own hook,
    // before anything is installed) has nothing to route or check.
    let mut bare = ping.clone();
    bare.as_object_mut().unwrap().remove("organization");
    bare["hook"]["type"] = json!("App");
    let reply = deliver(app, &"0".repeat(64), "ping", &bare).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.data(),
        &json!({"action": "ignored", "taskId": null,
                "reason": "the ping names no installation: nothing to check or do"})
    );
    // Other events still need an installation.
    let reply = deliver(app, &secret, "issues", &bare).await;
    assert_error(&reply, 400, "the payload names no installation");
    assert_eq!(task_count(app).await, 0);
}
