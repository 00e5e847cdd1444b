//! `/api-keys` and API-key requests: the secret shown once, keys private to their owner,
//! the scope matrix of decision D-17 on every kind of root route, expiry, deletion, and
//! the owner's current role.

use muster_domain::model::UserRole;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_error, assert_error_exact, keys_of, send, str_of};
use crate::stored::change_user;

api_tests!(
    a_key_is_shown_once_and_listed_without_its_secret,
    keys_are_private_to_their_owner,
    key_input_is_validated,
    scopes_gate_every_kind_of_route,
    deleted_and_expired_keys_are_401,
    a_key_acts_with_its_owners_current_role,
    last_use_is_recorded_without_a_write_per_request,
);

async fn create(app: &TestApp, token: &str, body: &Value) -> crate::helpers::Reply {
    send(app.bearer(token, Method::POST, "/api-keys", Some(body))).await
}

async fn a_key_is_shown_once_and_listed_without_its_secret(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let created = create(app, &token, &json!({"name": " ci "})).await;
    assert_eq!(created.status, 200, "{}", created.text);
    assert_eq!(
        keys_of(&created.body),
        [
            "createdAt",
            "id",
            "keyPrefix",
            "lastUsedAt",
            "name",
            "scopes",
            "secret"
        ]
    );
    let secret = str_of(&created.body, "secret");
    assert!(secret.starts_with("msk_") && secret.len() == 47, "{secret}");
    assert_eq!(str_of(&created.body, "keyPrefix"), secret[..12]);
    assert_eq!(created.body["scopes"], json!(["read"]));
    assert_eq!(created.body["name"], "ci");
    let id = str_of(&created.body, "id");

    let dated = create(
        app,
        &token,
        &json!({"name": "d", "scopes": ["write", "read", "write"], "expiresInDays": 30}),
    )
    .await;
    assert_eq!(dated.body["scopes"], json!(["read", "write"]));
    assert!(dated.body["expiresAt"].is_string());

    let list = send(app.bearer(&token, Method::GET, "/api-keys", None)).await;
    let keys = list.list();
    assert_eq!(keys.len(), 2);
    assert_eq!(str_of(&keys[1], "id"), id, "newest first");
    assert!(!list.text.contains(&secret));
    for key in keys {
        assert!(key.get("secret").is_none());
    }
    let one = send(app.bearer(&token, Method::GET, &format!("/api-keys/{id}"), None)).await;
    assert_eq!(one.status, 200);
    assert!(one.body.get("secret").is_none());
    assert!(one.body.get("expiresAt").is_none(), "no expiry: absent");
    // The audit log never holds the key.
    let events = app.get(&app.org.hr, "/events?type=api_key.created").await;
    assert!(!events.text.contains(&secret));
    assert_eq!(events.list()[1]["payload"]["keyPrefix"], secret[..12]);
}

async fn keys_are_private_to_their_owner(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let created = create(app, &admin, &json!({"name": "mine"})).await;
    let id = str_of(&created.body, "id");
    for method in [Method::GET, Method::DELETE] {
        let reply = send(app.bearer(&operator, method, &format!("/api-keys/{id}"), None)).await;
        assert_error(&reply, 404, "not found");
    }
    let other_org = app.admin_token(&app.other).await;
    let reply = send(app.bearer(&other_org, Method::GET, &format!("/api-keys/{id}"), None)).await;
    assert_error(&reply, 404, "not found");
    let list = send(app.bearer(&operator, Method::GET, "/api-keys", None)).await;
    assert!(list.list().is_empty());
    let bad = send(app.bearer(&admin, Method::GET, "/api-keys/not-a-uuid", None)).await;
    assert_error_exact(&bad, 400, "id must be a UUID");
}

async fn key_input_is_validated(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let cases: [(Value, &str); 7] = [
        (json!({}), "name is required"),
        (json!({"name": ""}), "name must not be empty"),
        (
            json!({"name": "x".repeat(256)}),
            "name must be at most 255 characters",
        ),
        (
            json!({"name": "k", "scopes": []}),
            "scopes must not be empty",
        ),
        (json!({"name": "k", "scopes": ["root"]}), "scopes"),
        (
            json!({"name": "k", "expiresInDays": 0}),
            "expiresInDays must be between 1 and 3650",
        ),
        (
            json!({"name": "k", "expiresInDays": 3651}),
            "expiresInDays must be between 1 and 3650",
        ),
    ];
    for (body, message) in cases {
        assert_error(&create(app, &token, &body).await, 400, message);
    }
    let list = send(app.bearer(&token, Method::GET, "/api-keys", None)).await;
    assert!(list.list().is_empty(), "nothing was created");
}

/// One request of each kind of root route, as `key`: its status.
async fn statuses(app: &TestApp, key: &str, task_id: &str) -> Vec<(String, u16, String)> {
    let requests: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, "/tasks".into(), None),
        (Method::GET, format!("/tasks/{task_id}"), None),
        (Method::GET, "/events".into(), None),
        (
            Method::POST,
            "/tasks".into(),
            Some(json!({"title": "via key"})),
        ),
        (
            Method::POST,
            format!("/tasks/{task_id}/transition"),
            Some(json!({"status": "backlog"})),
        ),
    ];
    let mut out = Vec::new();
    for (method, path, body) in requests {
        let label = format!("{method} {path}");
        let reply = send(app.bearer(key, method, &path, body.as_ref())).await;
        out.push((
            label,
            reply.status.as_u16(),
            reply.body["message"].as_str().unwrap_or("").to_owned(),
        ));
    }
    out
}

async fn scopes_gate_every_kind_of_route(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    for (scope, may_write) in [("read", false), ("write", true), ("admin", true)] {
        let key = app.api_key(&token, &[scope]).await;
        let task = app.task_titled(&app.org.hr, "scoped").await;
        for (route, status, message) in statuses(app, &key, &task).await {
            let is_write = route.starts_with("POST");
            if is_write && !may_write {
                assert_eq!(status, 403, "{scope}: {route}");
                assert_eq!(message, "API key lacks the write scope", "{scope}: {route}");
            } else {
                assert_eq!(status, 200, "{scope}: {route}: {message}");
            }
        }
    }
    // The read key changed nothing.
    let key = app.api_key(&token, &["read"]).await;
    let before = app.get(&app.org.hr, "/tasks?limit=500").await.list().len();
    send(app.bearer(&key, Method::POST, "/tasks", Some(&json!({"title": "no"})))).await;
    assert_eq!(
        app.get(&app.org.hr, "/tasks?limit=500").await.list().len(),
        before
    );
}

async fn deleted_and_expired_keys_are_401(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let created = create(app, &token, &json!({"name": "gone"})).await;
    let (id, key) = (str_of(&created.body, "id"), str_of(&created.body, "secret"));
    assert_eq!(
        send(app.bearer(&key, Method::GET, "/tasks", None))
            .await
            .status,
        200
    );
    let deleted = send(app.bearer(&token, Method::DELETE, &format!("/api-keys/{id}"), None)).await;
    assert_eq!(deleted.status, 200, "{}", deleted.text);
    assert_eq!(deleted.body, json!({"message": "API key revoked"}));
    let reply = send(app.bearer(&key, Method::GET, "/tasks", None)).await;
    assert_error_exact(&reply, 401, "invalid API key");
    let again = send(app.bearer(&token, Method::DELETE, &format!("/api-keys/{id}"), None)).await;
    assert_error(&again, 404, "not found");
    let revoked = app
        .get(
            &app.org.hr,
            &format!("/events?entityId={id}&type=api_key.revoked"),
        )
        .await;
    assert_eq!(revoked.list().len(), 1);

    let expiring = app.api_key(&token, &["read"]).await;
    // Raw SQL: backdates a key's expiry; no route moves time, no port changes a key.
    app.db()
        .execute("UPDATE api_keys SET expires_at = '2000-01-01T00:00:00.000Z'")
        .await;
    let reply = send(app.bearer(&expiring, Method::GET, "/tasks", None)).await;
    assert_error_exact(&reply, 401, "API key expired");
    let unknown = send(app.bearer(
        "msk_0000000000000000000000000000000000000000000",
        Method::GET,
        "/tasks",
        None,
    ))
    .await;
    assert_error_exact(&unknown, 401, "invalid API key");
}

async fn a_key_acts_with_its_owners_current_role(app: &TestApp) {
    let (email, token) = app.user_token(&app.org, "operator").await;
    let key = app.api_key(&token, &["write"]).await;
    let body = json!({"title": "by operator key"});
    assert_eq!(
        send(app.bearer(&key, Method::POST, "/tasks", Some(&body)))
            .await
            .status,
        200
    );
    // No route changes a user's role.
    change_user(app, &app.org, &email, |u| u.role = UserRole::Viewer).await;
    let reply = send(app.bearer(&key, Method::POST, "/tasks", Some(&body))).await;
    assert_error_exact(&reply, 403, "viewer users are read-only");
    assert_eq!(
        send(app.bearer(&key, Method::GET, "/tasks", None))
            .await
            .status,
        200
    );
}

async fn last_use_is_recorded_without_a_write_per_request(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let created = create(app, &token, &json!({"name": "used"})).await;
    let (id, key) = (str_of(&created.body, "id"), str_of(&created.body, "secret"));
    assert!(created.body["lastUsedAt"].is_null());
    send(app.bearer(&key, Method::GET, "/tasks", None)).await;
    let first = send(app.bearer(&token, Method::GET, &format!("/api-keys/{id}"), None)).await;
    let used_at = str_of(&first.body, "lastUsedAt");
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    send(app.bearer(&key, Method::GET, "/tasks", None)).await;
    let second = send(app.bearer(&token, Method::GET, &format!("/api-keys/{id}"), None)).await;
    assert_eq!(
        str_of(&second.body, "lastUsedAt"),
        used_at,
        "coalesced within a minute"
    );
}
