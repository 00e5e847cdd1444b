//! `/api/v1/inbound-webhooks` (decision D-80): the key record with its key always and its
//! secret only when drawn, validation, patches, rotation, deletion, who may manage keys,
//! other organizations, and the audit events.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Reply, TestApp, assert_error, assert_error_exact, keys_of, send, str_of};

api_tests!(
    a_key_is_created_with_its_secret_once,
    key_fields_are_validated,
    a_patch_changes_what_it_names,
    rotation_replaces_key_and_secret,
    deletion_is_permanent,
    only_signed_in_users_manage_keys_and_viewers_only_read,
    keys_of_another_organization_are_not_found,
    key_changes_are_audited_without_secrets,
);

const KEYS: [&str; 11] = [
    "createdAt",
    "defaultAgentId",
    "defaultPriority",
    "defaultTags",
    "enabled",
    "id",
    "key",
    "lastUsedAt",
    "name",
    "orgId",
    "updatedAt",
];

pub async fn create(app: &TestApp, token: &str, body: &Value) -> Reply {
    send(app.bearer(token, Method::POST, "/api/v1/inbound-webhooks", Some(body))).await
}

async fn one(app: &TestApp, token: &str, method: Method, id: &str, body: Option<&Value>) -> Reply {
    send(app.bearer(
        token,
        method,
        &format!("/api/v1/inbound-webhooks/{id}"),
        body,
    ))
    .await
}

fn is_hex64(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

async fn a_key_is_created_with_its_secret_once(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let reply = create(
        app,
        &token,
        &json!({"name": "  CI alerts ", "defaultAgentId": app.org.hr.uuid,
                "defaultPriority": "high", "defaultTags": ["ci", "alerts", "ci"]}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let mut with_secret = KEYS.to_vec();
    with_secret.push("secret");
    with_secret.sort_unstable();
    assert_eq!(keys_of(&reply.body), with_secret);
    let created = reply.body;
    let key = str_of(&created, "key");
    assert!(key.starts_with("iwk_") && is_hex64(&key[4..]), "{key}");
    assert!(is_hex64(&str_of(&created, "secret")));
    assert_eq!(created["name"], "CI alerts");
    assert_eq!(created["defaultAgentId"], json!(app.org.hr.uuid));
    assert_eq!(created["defaultPriority"], "high");
    assert_eq!(created["defaultTags"], json!(["ci", "alerts"]));
    assert_eq!(created["enabled"], true);
    assert_eq!(created["lastUsedAt"], json!(null));
    assert_eq!(created["orgId"], json!(app.org.id));
    let id = str_of(&created, "id");

    let read = one(app, &token, Method::GET, &id, None).await;
    assert_eq!(keys_of(&read.body), KEYS, "no secret after creation");
    assert_eq!(
        read.body["key"], created["key"],
        "the key is the URL: shown on reads"
    );
    let list = send(app.bearer(&token, Method::GET, "/api/v1/inbound-webhooks", None)).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.ids(), std::slice::from_ref(&id));
    assert!(!list.text.contains(&str_of(&created, "secret")));

    let plain = create(app, &token, &json!({"name": "plain"})).await;
    assert_eq!(plain.body["defaultAgentId"], json!(null));
    assert_eq!(plain.body["defaultPriority"], "normal");
    assert_eq!(plain.body["defaultTags"], json!([]));
    assert_ne!(plain.body["key"], created["key"]);
}

async fn key_fields_are_validated(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let missing_agent = uuid::Uuid::now_v7();
    for (body, status, message) in [
        (json!({}), 400, "name"),
        (json!({"name": ""}), 400, "name must not be empty"),
        (
            json!({"name": "n".repeat(256)}),
            400,
            "name must be at most 255 characters",
        ),
        (
            json!({"name": "n", "defaultPriority": "asap"}),
            400,
            "defaultPriority",
        ),
        (
            json!({"name": "n", "defaultAgentId": "nope"}),
            400,
            "defaultAgentId",
        ),
        (
            json!({"name": "n", "defaultAgentId": missing_agent}),
            404,
            "not found",
        ),
        (
            json!({"name": "n", "defaultAgentId": app.other.hr.uuid}),
            404,
            "not found",
        ),
        (
            json!({"name": "n", "defaultTags": [""]}),
            400,
            "each tag must be 1 to 100 characters",
        ),
        (
            json!({"name": "n", "defaultTags": "ci"}),
            400,
            "defaultTags",
        ),
        (
            json!({"name": "n", "key": "iwk_mine"}),
            400,
            "property key should not exist",
        ),
    ] {
        let reply = create(app, &token, &body).await;
        assert_error(&reply, status, message);
    }
    let malformed = send(
        app.client
            .post(app.url("/api/v1/inbound-webhooks"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body("{"),
    )
    .await;
    assert_error(&malformed, 400, "malformed JSON");
    let list = send(app.bearer(&token, Method::GET, "/api/v1/inbound-webhooks", None)).await;
    assert!(list.list().is_empty(), "nothing stored");
}

async fn a_patch_changes_what_it_names(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let created = create(
        app,
        &token,
        &json!({"name": "k", "defaultAgentId": app.org.hr.uuid}),
    )
    .await;
    let id = str_of(&created.body, "id");
    let reply = one(
        app,
        &token,
        Method::PATCH,
        &id,
        Some(&json!({"name": "renamed", "defaultPriority": "low", "defaultTags": ["x"], "enabled": false})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(keys_of(&reply.body), KEYS);
    assert_eq!(reply.body["name"], "renamed");
    assert_eq!(reply.body["defaultPriority"], "low");
    assert_eq!(reply.body["defaultTags"], json!(["x"]));
    assert_eq!(reply.body["enabled"], false);
    assert_eq!(
        reply.body["key"], created.body["key"],
        "a patch keeps the key"
    );
    assert_eq!(reply.body["defaultAgentId"], json!(app.org.hr.uuid));
    let cleared = one(
        app,
        &token,
        Method::PATCH,
        &id,
        Some(&json!({"defaultAgentId": null})),
    )
    .await;
    assert_eq!(cleared.body["defaultAgentId"], json!(null));
    for (body, message) in [
        (json!({}), "the update must name at least one field"),
        (json!({"name": null}), "name must not be null"),
        (json!({"enabled": "yes"}), "enabled"),
        (json!({"secret": "x"}), "property secret should not exist"),
    ] {
        let reply = one(app, &token, Method::PATCH, &id, Some(&body)).await;
        assert_error(&reply, 400, message);
    }
    let reply = one(
        app,
        &token,
        Method::PATCH,
        &id,
        Some(&json!({"defaultAgentId": uuid::Uuid::now_v7()})),
    )
    .await;
    assert_error(&reply, 404, "not found");
    let reply = one(
        app,
        &token,
        Method::PATCH,
        "nope",
        Some(&json!({"enabled": true})),
    )
    .await;
    assert_error(&reply, 400, "id");
}

async fn rotation_replaces_key_and_secret(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let created = create(app, &token, &json!({"name": "k"})).await.body;
    let id = str_of(&created, "id");
    let path = format!("/api/v1/inbound-webhooks/{id}/rotate");
    let rotated = send(app.bearer(&token, Method::POST, &path, None)).await;
    assert_eq!(rotated.status, 200, "{}", rotated.text);
    assert!(rotated.body["secret"].is_string());
    assert_ne!(rotated.body["key"], created["key"]);
    assert_ne!(rotated.body["secret"], created["secret"]);
    assert_eq!(rotated.body["id"], created["id"]);
    let old = send(
        app.anonymous(
            Method::POST,
            &format!("/api/v1/webhooks/inbound/{}", str_of(&created, "key")),
        )
        .json(&json!({"title": "t"})),
    )
    .await;
    assert_error_exact(&old, 404, "Webhook key not found or disabled");
    let new = send(
        app.anonymous(
            Method::POST,
            &format!("/api/v1/webhooks/inbound/{}", str_of(&rotated.body, "key")),
        )
        .json(&json!({"title": "t"})),
    )
    .await;
    assert_eq!(new.status, 200, "{}", new.text);
}

async fn deletion_is_permanent(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let created = create(app, &token, &json!({"name": "k"})).await.body;
    let id = str_of(&created, "id");
    let reply = one(app, &token, Method::DELETE, &id, None).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.body,
        json!({"message": "Inbound webhook key deleted"})
    );
    for method in [Method::GET, Method::DELETE] {
        assert_error(
            &one(app, &token, method, &id, None).await,
            404,
            "Inbound webhook key",
        );
    }
    let used = send(
        app.anonymous(
            Method::POST,
            &format!("/api/v1/webhooks/inbound/{}", str_of(&created, "key")),
        )
        .json(&json!({"title": "t"})),
    )
    .await;
    assert_error_exact(&used, 404, "Webhook key not found or disabled");
}

async fn only_signed_in_users_manage_keys_and_viewers_only_read(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let id = str_of(&create(app, &admin, &json!({"name": "k"})).await.body, "id");
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let api_key = app.api_key(&admin, &["read", "write", "admin"]).await;
    let one_path = format!("/api/v1/inbound-webhooks/{id}");
    assert_eq!(
        send(app.bearer(&viewer, Method::GET, &one_path, None))
            .await
            .status,
        200
    );
    let writes = [
        (
            Method::POST,
            "/api/v1/inbound-webhooks".to_owned(),
            Some(json!({"name": "v"})),
        ),
        (
            Method::PATCH,
            one_path.clone(),
            Some(json!({"enabled": false})),
        ),
        (Method::POST, format!("{one_path}/rotate"), None),
        (Method::DELETE, one_path.clone(), None),
    ];
    for (method, path, body) in &writes {
        let reply = send(app.bearer(&viewer, method.clone(), path, body.as_ref())).await;
        assert_error_exact(&reply, 403, "viewer users are read-only");
    }
    assert_eq!(
        create(app, &operator, &json!({"name": "ops"})).await.status,
        200
    );
    let reads = [
        (Method::GET, "/api/v1/inbound-webhooks".to_owned(), None),
        (Method::GET, one_path.clone(), None),
    ];
    for (method, path, body) in writes.iter().chain(reads.iter()) {
        let reply = send(app.bearer(&api_key, method.clone(), path, body.as_ref())).await;
        assert_eq!(reply.status, 401, "API key on {method} {path}");
        let raw = body.as_ref().map(Value::to_string);
        let reply = send(app.signed(&app.org.hr, method.clone(), path, raw.as_deref())).await;
        assert_eq!(reply.status, 401, "agent on {method} {path}");
        let reply = send(app.anonymous(method.clone(), path)).await;
        assert_eq!(reply.status, 401, "anonymous {method} {path}");
    }
    assert_eq!(
        one(app, &admin, Method::GET, &id, None).await.body["enabled"],
        true
    );
}

async fn keys_of_another_organization_are_not_found(app: &TestApp) {
    let ours = app.admin_token(&app.org).await;
    let theirs = app.admin_token(&app.other).await;
    let id = str_of(
        &create(app, &theirs, &json!({"name": "k"})).await.body,
        "id",
    );
    for (method, path, body) in [
        (Method::GET, format!("/api/v1/inbound-webhooks/{id}"), None),
        (
            Method::PATCH,
            format!("/api/v1/inbound-webhooks/{id}"),
            Some(json!({"enabled": false})),
        ),
        (
            Method::POST,
            format!("/api/v1/inbound-webhooks/{id}/rotate"),
            None,
        ),
        (
            Method::DELETE,
            format!("/api/v1/inbound-webhooks/{id}"),
            None,
        ),
    ] {
        let reply = send(app.bearer(&ours, method, &path, body.as_ref())).await;
        assert_error(&reply, 404, "Inbound webhook key");
    }
    let list = send(app.bearer(&ours, Method::GET, "/api/v1/inbound-webhooks", None)).await;
    assert!(list.list().is_empty());
}

async fn key_changes_are_audited_without_secrets(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let created = create(app, &token, &json!({"name": "audited"})).await.body;
    let id = str_of(&created, "id");
    one(
        app,
        &token,
        Method::PATCH,
        &id,
        Some(&json!({"name": "two"})),
    )
    .await;
    let rotated = send(app.bearer(
        &token,
        Method::POST,
        &format!("/api/v1/inbound-webhooks/{id}/rotate"),
        None,
    ))
    .await
    .body;
    one(app, &token, Method::DELETE, &id, None).await;
    let events = app.events_of(&app.org.hr, &id).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "inbound_webhook.deleted",
            "inbound_webhook.rotated",
            "inbound_webhook.updated",
            "inbound_webhook.created"
        ]
    );
    assert_eq!(events[3]["entityType"], "inbound_webhook");
    assert_eq!(events[3]["payload"], json!({"name": "audited"}));
    let all = serde_json::to_string(&events).unwrap();
    for secret in [
        &created["secret"],
        &created["key"],
        &rotated["secret"],
        &rotated["key"],
    ] {
        assert!(
            !all.contains(secret.as_str().unwrap()),
            "no key or secret in events"
        );
    }
}
