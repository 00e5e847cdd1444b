//! `/api/v1/webhooks` management (decisions D-17, D-81, D-82, D-85): the record without
//! its secret, validation of every field, who may read and who may write, another
//! organization's hooks, and the audit events.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_error, assert_error_exact, keys_of, send, str_of};
use crate::webhook_support::{hook, register, try_register};

api_tests!(with crate::webhook_support::loopback_hooks();
    a_hook_is_answered_without_its_secret,
    hook_fields_are_validated,
    a_patch_changes_what_it_names,
    deletion_removes_the_hook_and_its_log,
    only_signed_in_users_manage_hooks_and_viewers_only_read,
    hooks_of_another_organization_are_not_found,
    hook_changes_are_audited,
);

const RECORD_KEYS: [&str; 14] = [
    "canBlock",
    "consecutiveFailures",
    "createdAt",
    "enabled",
    "events",
    "hasSecret",
    "hookType",
    "id",
    "lastError",
    "name",
    "orgId",
    "timeoutMs",
    "updatedAt",
    "url",
];

fn body(extra: &Value) -> Value {
    let mut body =
        json!({"name": "n", "url": "https://203.0.113.10/hook", "events": ["task.created"]});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn patch(app: &TestApp, token: &str, id: &str, body: &Value) -> crate::helpers::Reply {
    send(app.bearer(
        token,
        Method::PATCH,
        &format!("/api/v1/webhooks/{id}"),
        Some(body),
    ))
    .await
}

async fn a_hook_is_answered_without_its_secret(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let reply = try_register(
        app,
        &token,
        &body(&json!({"name": "  Audit  ", "secret": "whsec-abc", "events": ["task.created", "task.done", "task.created"]})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(keys_of(&reply.body), RECORD_KEYS);
    assert!(!reply.text.contains("whsec-abc"), "D-82: never the secret");
    let created = &reply.body;
    assert_eq!(created["name"], "Audit");
    assert_eq!(created["url"], "https://203.0.113.10/hook");
    assert_eq!(created["events"], json!(["task.created", "task.done"]));
    assert_eq!(created["hookType"], "post", "default");
    assert_eq!(created["canBlock"], false);
    assert_eq!(created["timeoutMs"], 5000, "default");
    assert_eq!(created["enabled"], true);
    assert_eq!(created["hasSecret"], true);
    assert_eq!(created["consecutiveFailures"], 0);
    assert_eq!(created["lastError"], json!(null));
    assert_eq!(created["orgId"], json!(app.org.id));
    let id = str_of(created, "id");

    let fetched = hook(app, &token, &id).await;
    assert_eq!(&fetched, created);
    let list = send(app.bearer(&token, Method::GET, "/api/v1/webhooks", None)).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.ids(), std::slice::from_ref(&id));
    assert!(!list.text.contains("whsec-abc"));

    let pre = register(
        app,
        &token,
        &body(&json!({"hookType": "pre", "canBlock": true, "timeoutMs": 1000, "events": ["*"]})),
    )
    .await;
    let pre = hook(app, &token, &pre).await;
    assert_eq!(pre["hookType"], "pre");
    assert_eq!(pre["canBlock"], true);
    assert_eq!(pre["hasSecret"], false);
    assert_eq!(pre["events"], json!(["*"]));
    let list = send(app.bearer(&token, Method::GET, "/api/v1/webhooks", None)).await;
    assert_eq!(list.list().len(), 2);
    assert_eq!(str_of(&list.list()[1], "id"), id, "newest first");
}

async fn hook_fields_are_validated(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"name": "x", "url": "https://203.0.113.10", "events": ["a.b"], "bogus": 1}),
            "property bogus should not exist",
        ),
        (
            json!({"url": "https://203.0.113.10", "events": ["a.b"]}),
            "name",
        ),
        (json!({"name": "x", "events": ["a.b"]}), "url"),
        (
            json!({"name": "x", "url": "https://203.0.113.10"}),
            "events",
        ),
        (body(&json!({"name": "   "})), "name must not be empty"),
        (
            body(&json!({"name": "n".repeat(256)})),
            "name must be at most 255 characters",
        ),
        (body(&json!({"url": "   "})), "url must not be empty"),
        (
            body(&json!({"url": format!("https://203.0.113.10/{}", "a".repeat(2048))})),
            "url must be at most 2048 characters",
        ),
        (body(&json!({"events": []})), "events must not be empty"),
        (
            body(&json!({"events": ["Task Created"]})),
            "events[0] must be",
        ),
        (
            body(&json!({"events": ["task.created", ""]})),
            "events[1] must be",
        ),
        (body(&json!({"events": "task.created"})), "events"),
        (body(&json!({"hookType": "during"})), "hookType"),
        (
            body(&json!({"canBlock": true})),
            "canBlock is only allowed for pre hooks",
        ),
        (
            body(&json!({"hookType": "post", "canBlock": true})),
            "canBlock is only allowed for pre hooks",
        ),
        (
            body(&json!({"timeoutMs": 999})),
            "timeoutMs must be between 1000 and 30000",
        ),
        (
            body(&json!({"timeoutMs": 30001})),
            "timeoutMs must be between 1000 and 30000",
        ),
        (body(&json!({"timeoutMs": "5000"})), "timeoutMs"),
        (body(&json!({"secret": ""})), "secret must not be empty"),
        (
            body(&json!({"secret": "s".repeat(256)})),
            "secret must be at most 255 characters",
        ),
        (body(&json!({"url": "ftp://e.com/x"})), "url must"),
        (body(&json!({"url": "not a url"})), "url must"),
    ];
    for (case, message) in cases {
        let reply = try_register(app, &token, &case).await;
        assert_error(&reply, 400, message);
    }
    for timeout in [1000, 30000] {
        register(app, &token, &body(&json!({"timeoutMs": timeout}))).await;
    }
    let malformed = send(
        app.client
            .post(app.url("/api/v1/webhooks"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body("{\"name\":"),
    )
    .await;
    assert_error(&malformed, 400, "malformed JSON");
    let list = send(app.bearer(&token, Method::GET, "/api/v1/webhooks", None)).await;
    assert_eq!(list.list().len(), 2, "nothing else was stored");
}

async fn a_patch_changes_what_it_names(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let id = register(app, &token, &body(&json!({"secret": "old"}))).await;
    let before = hook(app, &token, &id).await;

    let reply = patch(
        app,
        &token,
        &id,
        &json!({"name": "Renamed", "events": ["*"], "timeoutMs": 2500}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(keys_of(&reply.body), RECORD_KEYS);
    assert_eq!(reply.body["name"], "Renamed");
    assert_eq!(reply.body["events"], json!(["*"]));
    assert_eq!(reply.body["timeoutMs"], 2500);
    assert_eq!(reply.body["url"], before["url"]);
    assert_eq!(reply.body["hasSecret"], true);
    assert_eq!(reply.body["createdAt"], before["createdAt"]);

    let reply = patch(app, &token, &id, &json!({"secret": null})).await;
    assert_eq!(reply.body["hasSecret"], false, "null removes the secret");
    let reply = patch(
        app,
        &token,
        &id,
        &json!({"hookType": "pre", "canBlock": true}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["canBlock"], true);
    let reply = patch(app, &token, &id, &json!({"hookType": "post"})).await;
    assert_eq!(reply.body["canBlock"], false, "a post hook cannot block");
    let reply = patch(app, &token, &id, &json!({"enabled": false})).await;
    assert_eq!(reply.body["enabled"], false);

    for (case, message) in [
        (json!({}), "the update must name at least one field"),
        (json!({"name": null}), "name must not be null"),
        (
            json!({"canBlock": true}),
            "canBlock is only allowed for pre hooks",
        ),
        (
            json!({"timeoutMs": 0}),
            "timeoutMs must be between 1000 and 30000",
        ),
        (json!({"events": []}), "events must not be empty"),
        (json!({"url": "ftp://x"}), "url must use https"),
        (json!({"id": "x"}), "property id should not exist"),
    ] {
        let reply = patch(app, &token, &id, &case).await;
        assert_error(&reply, 400, message);
    }
    let reply = patch(app, &token, "not-a-uuid", &json!({"enabled": true})).await;
    assert_error(&reply, 400, "id");
    let reply = patch(
        app,
        &token,
        &uuid::Uuid::now_v7().to_string(),
        &json!({"enabled": true}),
    )
    .await;
    assert_error(&reply, 404, "Webhook");
    assert_eq!(
        hook(app, &token, &id).await["enabled"],
        false,
        "refused patches change nothing"
    );
}

async fn deletion_removes_the_hook_and_its_log(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let id = register(app, &token, &body(&json!({}))).await;
    let path = format!("/api/v1/webhooks/{id}");
    let reply = send(app.bearer(&token, Method::DELETE, &path, None)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body, json!({"message": "Webhook deleted"}));
    for method in [Method::GET, Method::DELETE] {
        let reply = send(app.bearer(&token, method, &path, None)).await;
        assert_error(&reply, 404, "Webhook");
    }
    let reply = send(app.bearer(&token, Method::GET, &format!("{path}/deliveries"), None)).await;
    assert_error(&reply, 404, "Webhook");
    let reply = send(app.bearer(&token, Method::POST, &format!("{path}/test"), None)).await;
    assert_error(&reply, 404, "Webhook");
}

async fn only_signed_in_users_manage_hooks_and_viewers_only_read(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let id = register(app, &admin, &body(&json!({}))).await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let key = app.api_key(&admin, &["read", "write", "admin"]).await;
    let one = format!("/api/v1/webhooks/{id}");

    // Viewers read; their writes are refused.
    assert_eq!(
        send(app.bearer(&viewer, Method::GET, "/api/v1/webhooks", None))
            .await
            .status,
        200
    );
    assert_eq!(
        send(app.bearer(&viewer, Method::GET, &one, None))
            .await
            .status,
        200
    );
    let writes = [
        (
            Method::POST,
            "/api/v1/webhooks".to_owned(),
            Some(body(&json!({}))),
        ),
        (Method::PATCH, one.clone(), Some(json!({"enabled": false}))),
        (Method::DELETE, one.clone(), None),
        (Method::POST, format!("{one}/test"), None),
    ];
    for (method, path, payload) in &writes {
        let reply = send(app.bearer(&viewer, method.clone(), path, payload.as_ref())).await;
        assert_error_exact(&reply, 403, "viewer users are read-only");
    }
    // Operators manage hooks.
    let reply = try_register(app, &operator, &body(&json!({"name": "ops"}))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);

    // An API key, an agent signature or nothing at all: 401 on every route.
    for (method, path, payload) in writes.iter().chain(
        [
            (Method::GET, "/api/v1/webhooks".to_owned(), None),
            (Method::GET, one.clone(), None),
            (Method::GET, format!("{one}/deliveries"), None),
        ]
        .iter(),
    ) {
        let reply = send(app.bearer(&key, method.clone(), path, payload.as_ref())).await;
        assert_eq!(
            reply.status, 401,
            "API key on {method} {path}: {}",
            reply.text
        );
        let raw = payload.as_ref().map(Value::to_string);
        let reply = send(app.signed(&app.org.hr, method.clone(), path, raw.as_deref())).await;
        assert_eq!(
            reply.status, 401,
            "agent on {method} {path}: {}",
            reply.text
        );
        let reply = send(app.anonymous(method.clone(), path)).await;
        assert_eq!(
            reply.status, 401,
            "anonymous {method} {path}: {}",
            reply.text
        );
    }
    assert_eq!(
        hook(app, &admin, &id).await["enabled"],
        true,
        "nothing changed"
    );
}

async fn hooks_of_another_organization_are_not_found(app: &TestApp) {
    let ours = app.admin_token(&app.org).await;
    let theirs = app.admin_token(&app.other).await;
    let id = register(app, &theirs, &body(&json!({}))).await;
    let one = format!("/api/v1/webhooks/{id}");
    for (method, path, payload) in [
        (Method::GET, one.clone(), None),
        (Method::PATCH, one.clone(), Some(json!({"enabled": false}))),
        (Method::DELETE, one.clone(), None),
        (Method::GET, format!("{one}/deliveries"), None),
        (Method::POST, format!("{one}/test"), None),
    ] {
        let reply = send(app.bearer(&ours, method.clone(), &path, payload.as_ref())).await;
        assert_error(&reply, 404, "Webhook");
    }
    let list = send(app.bearer(&ours, Method::GET, "/api/v1/webhooks", None)).await;
    assert!(list.list().is_empty());
    assert_eq!(hook(app, &theirs, &id).await["enabled"], true);
}

async fn hook_changes_are_audited(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let id = register(app, &token, &body(&json!({"secret": "topsecret"}))).await;
    patch(app, &token, &id, &json!({"name": "two"})).await;
    send(app.bearer(
        &token,
        Method::DELETE,
        &format!("/api/v1/webhooks/{id}"),
        None,
    ))
    .await;
    let events = app.events_of(&app.org.hr, &id).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["webhook.deleted", "webhook.updated", "webhook.created"]
    );
    assert_eq!(events[2]["entityType"], "webhook");
    assert_eq!(events[2]["payload"]["url"], "https://203.0.113.10/hook");
    assert_eq!(events[1]["payload"]["name"], "two");
    assert!(events.iter().all(|e| !e.to_string().contains("topsecret")));
    assert!(events.iter().all(|e| e["actorId"].is_string()));
}
