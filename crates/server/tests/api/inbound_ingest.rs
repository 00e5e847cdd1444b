//! `POST /api/v1/webhooks/inbound/:key[/batch]` (decision D-80): tasks created by other
//! systems with the key's defaults merged in, the optional body signature, batches all or
//! nothing, refused keys, and the contract's limits.

use muster_auth::signing::sign;
use reqwest::Method;
use serde_json::{Value, json};

use crate::agent_auth::task_count;
use crate::helpers::{Reply, TestApp, assert_error, assert_error_exact, send, str_of};
use crate::inbound_keys::create;

api_tests!(
    a_task_is_created_with_the_key_defaults,
    the_payload_overrides_and_merges_with_the_defaults,
    a_body_signature_is_checked_when_present,
    refused_keys_are_404,
    a_batch_is_all_or_nothing,
    titles_and_limits_are_checked,
    unknown_fields_are_ignored,
    parallel_batches_on_one_key_all_land,
);

const NOT_FOUND: &str = "Webhook key not found or disabled";

/// A key of the first organization: (id, key, secret).
async fn new_key(app: &TestApp, body: &Value) -> (String, String, String) {
    let token = app.admin_token(&app.org).await;
    let reply = create(app, &token, body).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    (
        str_of(&reply.body, "id"),
        str_of(&reply.body, "key"),
        str_of(&reply.body, "secret"),
    )
}

async fn post(app: &TestApp, key: &str, body: &str, signature: Option<&str>) -> Reply {
    post_to(
        app,
        &format!("/api/v1/webhooks/inbound/{key}"),
        body,
        signature,
    )
    .await
}

async fn post_to(app: &TestApp, path: &str, body: &str, signature: Option<&str>) -> Reply {
    let mut request = app
        .anonymous(Method::POST, path)
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(signature) = signature {
        request = request.header("x-service-signature", signature);
    }
    send(request).await
}

async fn a_task_is_created_with_the_key_defaults(app: &TestApp) {
    let (id, key, _) = new_key(
        app,
        &json!({"name": "k", "defaultAgentId": app.org.hr.uuid, "defaultPriority": "high",
                "defaultTags": ["ext"]}),
    )
    .await;
    let reply = post(
        app,
        &key,
        &json!({"title": "  From CI  "}).to_string(),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let task = reply.data().clone();
    assert_eq!(task["title"], "From CI");
    assert_eq!(task["status"], "todo");
    assert_eq!(task["priority"], "high");
    assert_eq!(task["assigneeId"], json!(app.org.hr.uuid));
    assert_eq!(task["tags"], json!(["ext"]));
    assert_eq!(task["metadata"]["source"], "inbound_webhook");
    assert_eq!(task["metadata"]["inboundWebhookId"], id);
    assert_eq!(task["orgId"], json!(app.org.id));
    let fetched = app
        .get(&app.org.hr, &format!("/tasks/{}", str_of(&task, "id")))
        .await;
    assert_eq!(fetched.data(), &task, "the shape of GET /tasks/:id");
    let events = app.events_of(&app.org.hr, &str_of(&task, "id")).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "task.created");
    assert_eq!(events[0]["actorId"], json!(null), "no creator");
    let token = app.admin_token(&app.org).await;
    let record = send(app.bearer(
        &token,
        Method::GET,
        &format!("/api/v1/inbound-webhooks/{id}"),
        None,
    ))
    .await;
    assert!(record.body["lastUsedAt"].is_string(), "{}", record.text);

    // Without a default assignee and none in the payload: unassigned.
    let (_, bare, _) = new_key(app, &json!({"name": "bare"})).await;
    let reply = post(app, &bare, &json!({"title": "x"}).to_string(), None).await;
    assert_eq!(reply.data()["assigneeId"], json!(null));
    assert_eq!(reply.data()["priority"], "normal");
    // The other organization never sees them.
    let theirs = app.get(&app.other.hr, "/tasks?limit=500").await;
    assert!(theirs.list().is_empty());
}

async fn the_payload_overrides_and_merges_with_the_defaults(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let (_, key, _) = new_key(
        app,
        &json!({"name": "k", "defaultAgentId": app.org.hr.uuid, "defaultPriority": "high",
                "defaultTags": ["ext", "ci"]}),
    )
    .await;
    let body = json!({"title": "t", "description": "d", "priority": "low", "tags": ["ci", "deploy"],
                      "assigneeId": worker.uuid, "metadata": {"run": 42, "source": "spoofed"}});
    let reply = post(app, &key, &body.to_string(), None).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let task = reply.data();
    assert_eq!(task["priority"], "low");
    assert_eq!(task["assigneeId"], json!(worker.uuid));
    assert_eq!(task["tags"], json!(["ext", "ci", "deploy"]));
    assert_eq!(task["description"], "d");
    assert_eq!(task["metadata"]["run"], 42);
    assert_eq!(
        task["metadata"]["source"], "inbound_webhook",
        "set over the payload's"
    );
    // An assignee the task API would refuse is refused here too.
    let reply = post(
        app,
        &key,
        &json!({"title": "t", "assigneeId": app.other.hr.uuid}).to_string(),
        None,
    )
    .await;
    assert_error(&reply, 404, "not found");
}

async fn a_body_signature_is_checked_when_present(app: &TestApp) {
    let (_, key, secret) = new_key(app, &json!({"name": "signed"})).await;
    let body = json!({"title": "signed"}).to_string();
    let good = sign(&secret, body.as_bytes());
    let before = task_count(app).await;
    assert_eq!(post(app, &key, &body, Some(&good)).await.status, 200);
    for bad in [
        format!("sha256={good}"),
        good.to_uppercase(),
        sign("another secret", body.as_bytes()),
        sign(&secret, b"another body"),
        String::new(),
        "zz".into(),
    ] {
        let reply = post(app, &key, &body, Some(&bad)).await;
        assert_error_exact(&reply, 401, "Invalid webhook signature");
    }
    assert_eq!(
        task_count(app).await,
        before + 1,
        "refused requests created nothing"
    );
    // The signature is checked before the body: a bad body with a bad signature is 401.
    let reply = post(app, &key, "{not json", Some("00")).await;
    assert_error_exact(&reply, 401, "Invalid webhook signature");
    // Batches are signed the same way.
    let batch = json!({"tasks": [{"title": "a"}]}).to_string();
    let path = format!("/api/v1/webhooks/inbound/{key}/batch");
    assert_eq!(
        post_to(app, &path, &batch, Some(&sign(&secret, batch.as_bytes())))
            .await
            .status,
        200
    );
    assert_error_exact(
        &post_to(app, &path, &batch, Some(&good)).await,
        401,
        "Invalid webhook signature",
    );
}

async fn refused_keys_are_404(app: &TestApp) {
    let (id, key, _) = new_key(app, &json!({"name": "k"})).await;
    let body = json!({"title": "t"}).to_string();
    for unknown in [
        format!("iwk_{}", "0".repeat(64)),
        "iwk_short".to_owned(),
        key.to_uppercase(),
        "anything".to_owned(),
    ] {
        assert_error_exact(&post(app, &unknown, &body, None).await, 404, NOT_FOUND);
        let batch = format!("/api/v1/webhooks/inbound/{unknown}/batch");
        assert_error_exact(
            &post_to(
                app,
                &batch,
                &json!({"tasks": [{"title": "t"}]}).to_string(),
                None,
            )
            .await,
            404,
            NOT_FOUND,
        );
    }
    // Unknown key before a bad signature.
    assert_error_exact(
        &post(app, &format!("iwk_{}", "1".repeat(64)), &body, Some("00")).await,
        404,
        NOT_FOUND,
    );
    let token = app.admin_token(&app.org).await;
    let path = format!("/api/v1/inbound-webhooks/{id}");
    send(app.bearer(
        &token,
        Method::PATCH,
        &path,
        Some(&json!({"enabled": false})),
    ))
    .await;
    assert_error_exact(&post(app, &key, &body, None).await, 404, NOT_FOUND);
    send(app.bearer(
        &token,
        Method::PATCH,
        &path,
        Some(&json!({"enabled": true})),
    ))
    .await;
    assert_eq!(
        post(app, &key, &body, None).await.status,
        200,
        "enabled again"
    );
    // The other methods are not routes.
    let reply = send(app.anonymous(Method::GET, &format!("/api/v1/webhooks/inbound/{key}"))).await;
    assert_eq!(reply.status, 405);
}

async fn a_batch_is_all_or_nothing(app: &TestApp) {
    let (_, key, _) = new_key(app, &json!({"name": "k", "defaultTags": ["b"]})).await;
    let path = format!("/api/v1/webhooks/inbound/{key}/batch");
    let tasks: Vec<Value> = (0..100)
        .map(|n| json!({"title": format!("t{n}")}))
        .collect();
    let reply = post_to(app, &path, &json!({ "tasks": tasks }).to_string(), None).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let created = reply.list();
    assert_eq!(created.len(), 100);
    assert_eq!(created[0]["title"], "t0");
    assert_eq!(created[99]["title"], "t99");
    assert!(created.iter().all(|t| t["tags"] == json!(["b"])));
    let before = task_count(app).await;

    let too_many: Vec<Value> = (0..101)
        .map(|n| json!({"title": format!("t{n}")}))
        .collect();
    for (body, message) in [
        (
            json!({ "tasks": too_many }),
            "tasks must hold 1 to 100 items",
        ),
        (json!({"tasks": []}), "tasks must hold 1 to 100 items"),
        (
            json!({"tasks": [{"title": "ok"}, {"title": "   "}]}),
            "tasks[1].title must not be empty",
        ),
        (
            json!({"tasks": [{"title": "ok"}, {"priority": "low"}]}),
            "tasks[1]",
        ),
        (
            json!({"tasks": [{"title": "ok"}, {"title": "x", "tags": [""]}]}),
            "tasks[1].",
        ),
        (
            json!({"tasks": [{"title": "x"}], "other": 1, "tasks2": []}),
            "",
        ),
        (json!({}), "tasks"),
    ] {
        let reply = post_to(app, &path, &body.to_string(), None).await;
        if message.is_empty() {
            assert_eq!(
                reply.status, 200,
                "unknown fields are ignored: {}",
                reply.text
            );
        } else {
            assert_error(&reply, 400, message);
        }
    }
    assert_eq!(
        task_count(app).await,
        before + 1,
        "refused batches created nothing"
    );
    // An item the transaction refuses (an assignee of another org) rolls back the rest.
    let worker = app.worker(&app.org).await;
    let mixed = json!({"tasks": [{"title": "first", "assigneeId": worker.uuid}, {"title": "second", "assigneeId": app.other.hr.uuid}]});
    assert_error(
        &post_to(app, &path, &mixed.to_string(), None).await,
        404,
        "not found",
    );
    assert_eq!(task_count(app).await, before + 1);
}

async fn titles_and_limits_are_checked(app: &TestApp) {
    let (_, key, _) = new_key(app, &json!({"name": "k"})).await;
    let long = "é".repeat(500);
    let reply = post(app, &key, &json!({ "title": long }).to_string(), None).await;
    assert_eq!(reply.status, 200, "500 characters are allowed here");
    assert_eq!(reply.data()["title"], long.as_str());
    let id = str_of(reply.data(), "id");
    assert_eq!(
        app.get(&app.org.hr, &format!("/tasks/{id}")).await.status,
        200,
        "and read back"
    );
    let before = task_count(app).await;
    for (body, message) in [
        (
            json!({"title": "é".repeat(501)}),
            "title must be at most 500 characters",
        ),
        (json!({"title": ""}), "title must not be empty"),
        (json!({}), "title"),
        (json!({"title": 5}), "title"),
        (json!({"title": "t", "priority": "asap"}), "priority"),
        (json!({"title": "t", "assigneeId": "nope"}), "assigneeId"),
        (
            json!({"title": "t", "metadata": [1]}),
            "metadata must be a JSON object",
        ),
        (
            json!({"title": "t", "metadata": {"big": "x".repeat(70_000)}}),
            "metadata must be at most",
        ),
        (
            json!({"title": "t", "description": "d".repeat(100_001)}),
            "description must be at most",
        ),
        (
            json!({"title": "t", "tags": (0..51).map(|n| n.to_string()).collect::<Vec<_>>()}),
            "tags must hold at most 50",
        ),
    ] {
        assert_error(
            &post(app, &key, &body.to_string(), None).await,
            400,
            message,
        );
    }
    assert_error(&post(app, &key, "{", None).await, 400, "malformed JSON");
    assert_error(&post(app, &key, "[]", None).await, 400, "JSON object");
    assert_eq!(
        task_count(app).await,
        before,
        "refused requests created nothing"
    );
}

async fn unknown_fields_are_ignored(app: &TestApp) {
    let (_, key, _) = new_key(app, &json!({"name": "k"})).await;
    let body =
        json!({"title": "third party", "source": "github", "nested": {"a": 1}, "status": "done"});
    let reply = post(app, &key, &body.to_string(), None).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.data()["status"], "todo", "only known fields count");
}

/// Parallel requests through one key all succeed. Each ingest read the key row with a
/// share lock and then updated it, so two at once deadlocked on PostgreSQL (a 500 that
/// schemathesis found); the key is now locked for update from the start.
async fn parallel_batches_on_one_key_all_land(app: &TestApp) {
    let (_, key, _) = new_key(app, &json!({"name": "parallel"})).await;
    let before = task_count(app).await;
    let batch = json!({"tasks": [{"title": "one"}, {"title": "two"}]}).to_string();
    let single = json!({"title": "three"}).to_string();
    let requests = (0..16).map(|i| {
        let (path, body) = if i % 2 == 0 {
            (
                format!("/api/v1/webhooks/inbound/{key}/batch"),
                batch.clone(),
            )
        } else {
            (format!("/api/v1/webhooks/inbound/{key}"), single.clone())
        };
        async move { post_to(app, &path, &body, None).await }
    });
    for reply in futures_util::future::join_all(requests).await {
        assert_eq!(reply.status, 200, "{}", reply.text);
    }
    assert_eq!(task_count(app).await, before + 8 * 2 + 8);
}
