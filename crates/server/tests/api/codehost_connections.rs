//! `/api/v1/integrations/codehost/connections` (decision D-87): admin users create,
//! list, read, switch and delete connections; the webhook secret is shown once; every
//! bad body is a 400 that stores nothing; an installation id is unique within an
//! organization, and another organization's use of it is neither refused nor told.

use reqwest::Method;
use serde_json::{Value, json};

use crate::codehost_support::{
    CONNECTIONS, connect, connection, deliver, fresh_installation, payload, try_connect,
};
use crate::helpers::{TestApp, assert_error, assert_error_exact, keys_of, send, str_of};

api_tests!(
    an_admin_manages_a_connection_and_sees_the_secret_once,
    connection_bodies_are_checked_field_by_field,
    one_connection_per_installation_in_an_organization,
    an_installation_id_taken_elsewhere_reveals_nothing_and_cannot_be_squatted,
    only_admin_users_manage_connections,
    connections_are_private_to_their_organization,
);

const FIELDS: [&str; 8] = [
    "createdAt",
    "enabled",
    "id",
    "installationId",
    "name",
    "orgId",
    "repository",
    "updatedAt",
];

async fn an_admin_manages_a_connection_and_sees_the_secret_once(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let installation = fresh_installation();
    let reply = try_connect(
        app,
        &admin,
        &json!({"installationId": installation, "name": "Acme widgets", "repository": "acme/widgets"}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let created = &reply.body;
    let secret = str_of(created, "webhookSecret");
    assert_eq!(secret.len(), 64);
    assert!(secret.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(created["installationId"], installation);
    assert_eq!(created["repository"], "acme/widgets");
    assert_eq!(created["enabled"], true);
    assert_eq!(created["orgId"], app.org.id.to_string());
    let id = str_of(created, "id");

    let listed = send(app.bearer(&admin, Method::GET, CONNECTIONS, None)).await;
    assert_eq!(listed.status, 200);
    let one = &listed.list()[0];
    assert_eq!(keys_of(one), FIELDS, "no secret on reads");
    let got = connection(app, &admin, Method::GET, &id, None).await;
    assert_eq!(keys_of(&got.body), FIELDS);
    assert!(!got.text.contains(&secret));

    let off = connection(
        app,
        &admin,
        Method::PATCH,
        &id,
        Some(&json!({"enabled": false})),
    )
    .await;
    assert_eq!(off.status, 200, "{}", off.text);
    assert_eq!(off.body["enabled"], false);
    // A switched-off connection still checks signatures, then does nothing.
    let event = payload("issues", installation);
    let ignored = deliver(app, &secret, "issues", &event).await;
    assert_eq!(ignored.status, 200, "{}", ignored.text);
    assert_eq!(ignored.data()["action"], "ignored");
    assert_eq!(ignored.data()["reason"], "the connection is disabled");
    let tasks = app.get(&app.org.hr, "/tasks?limit=100").await;
    assert!(
        tasks.list().is_empty(),
        "no task from a disabled connection"
    );
    let on = connection(
        app,
        &admin,
        Method::PATCH,
        &id,
        Some(&json!({"enabled": true})),
    )
    .await;
    assert_eq!(on.body["enabled"], true);
    assert_eq!(
        deliver(app, &secret, "issues", &event).await.data()["action"],
        "created"
    );

    let deleted = connection(app, &admin, Method::DELETE, &id, None).await;
    assert_eq!(deleted.status, 200, "{}", deleted.text);
    let gone = connection(app, &admin, Method::GET, &id, None).await;
    assert_error_exact(&gone, 404, &format!("Code-host connection {id} not found"));
    let unknown = deliver(app, &secret, "issues", &event).await;
    assert_error_exact(
        &unknown,
        404,
        &format!("No code-host connection for installation {installation}"),
    );

    let events = app.events_of(&app.org.hr, &id).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "codehost_connection.deleted",
            "codehost_connection.updated",
            "codehost_connection.updated",
            "codehost_connection.created"
        ]
    );
    assert_eq!(
        events[3]["payload"],
        json!({"name": "Acme widgets", "installationId": installation,
               "repository": "acme/widgets", "enabled": true})
    );
    assert!(
        events.iter().all(|e| !e.to_string().contains(&secret)),
        "the secret never reaches the audit log"
    );
}

async fn connection_bodies_are_checked_field_by_field(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let ok = fresh_installation();
    let cases: [(Value, &str); 11] = [
        (json!({"name": "x"}), "installationId is required"),
        (json!({"installationId": ok}), "name is required"),
        (
            json!({"installationId": 0, "name": "x"}),
            "installationId must be a positive integer",
        ),
        (
            json!({"installationId": -4, "name": "x"}),
            "installationId must be a positive integer",
        ),
        (
            json!({"installationId": "12", "name": "x"}),
            "installationId",
        ),
        (
            json!({"installationId": 1.5, "name": "x"}),
            "installationId",
        ),
        (json!({"installationId": ok, "name": ""}), "name"),
        (
            json!({"installationId": ok, "name": "x".repeat(256)}),
            "name",
        ),
        (
            json!({"installationId": ok, "name": "x", "repository": "widgets"}),
            "repository must be a full repository name",
        ),
        (
            json!({"installationId": ok, "name": "x", "repository": "acme/wid gets"}),
            "repository",
        ),
        (
            json!({"installationId": ok, "name": "x", "secret": "mine"}),
            "secret",
        ),
    ];
    for (body, message) in cases {
        let reply = try_connect(app, &admin, &body).await;
        assert_error(&reply, 400, message);
    }
    let malformed = send(
        app.bearer(&admin, Method::POST, CONNECTIONS, None)
            .header("content-type", "application/json")
            .body("{\"installationId\": 1,"),
    )
    .await;
    assert_error(&malformed, 400, "malformed JSON");
    let listed = send(app.bearer(&admin, Method::GET, CONNECTIONS, None)).await;
    assert!(listed.list().is_empty(), "nothing stored: {}", listed.text);

    let (id, _) = connect(app, &admin, ok, None).await;
    for (body, message) in [
        (json!({}), "the update must name enabled"),
        (json!({"enabled": null}), "the update must name enabled"),
        (json!({"enabled": "no"}), "enabled"),
        (json!({"name": "other"}), "name"),
    ] {
        let reply = connection(app, &admin, Method::PATCH, &id, Some(&body)).await;
        assert_error(&reply, 400, message);
    }
    let bad_id = connection(app, &admin, Method::GET, "not-a-uuid", None).await;
    assert_error_exact(&bad_id, 400, "id must be a UUID");
    let missing = uuid::Uuid::now_v7();
    let reply = connection(app, &admin, Method::DELETE, &missing.to_string(), None).await;
    assert_error_exact(
        &reply,
        404,
        &format!("Code-host connection {missing} not found"),
    );
}

async fn one_connection_per_installation_in_an_organization(app: &TestApp) {
    let installation = fresh_installation();
    let admin = app.admin_token(&app.org).await;
    connect(app, &admin, installation, None).await;
    let again = try_connect(
        app,
        &admin,
        &json!({"installationId": installation, "name": "b"}),
    )
    .await;
    assert_error_exact(
        &again,
        409,
        "A connection for that installation already exists",
    );
}

/// Another organization's connection of the same id is not refused (a refusal would
/// tell that someone has it, and would let whoever connects an id first keep its owner
/// out): each organization gets its own connection and secret, and an event goes to
/// the connection whose secret signed it, whoever connected first.
async fn an_installation_id_taken_elsewhere_reveals_nothing_and_cannot_be_squatted(app: &TestApp) {
    let installation = fresh_installation();
    let (ours, theirs) = (
        app.admin_token(&app.org).await,
        app.admin_token(&app.other).await,
    );
    // The other organization connects the id first.
    let (squatter_id, squatter_secret) = connect(app, &theirs, installation, None).await;
    let (owner_id, owner_secret) = connect(app, &ours, installation, None).await;
    assert_ne!(owner_secret, squatter_secret);
    for (token, only) in [(&ours, &owner_id), (&theirs, &squatter_id)] {
        let listed = send(app.bearer(token, Method::GET, CONNECTIONS, None)).await;
        let ids: Vec<String> = listed.list().iter().map(|c| str_of(c, "id")).collect();
        assert_eq!(ids, std::slice::from_ref(only), "each sees its own only");
    }
    let reply = connection(app, &ours, Method::GET, &squatter_id, None).await;
    assert_eq!(reply.status, 404, "{}", reply.text);

    // The code host signs with the secret its owner gave it: the owner's organization
    // gets the event, the squatter's nothing.
    let mut body = payload("issues", installation);
    body["issue"]["number"] = json!(71);
    let reply = deliver(app, &owner_secret, "issues", &body).await;
    assert_eq!(reply.data()["action"], "created", "{}", reply.text);
    let task = str_of(reply.data(), "taskId");
    let path = format!("/tasks/{task}");
    assert_eq!(app.get(&app.org.hr, &path).await.status, 200);
    assert_eq!(app.get(&app.other.hr, &path).await.status, 404);
    // The squatter's own secret reaches only its own connection.
    body["issue"]["number"] = json!(72);
    let reply = deliver(app, &squatter_secret, "issues", &body).await;
    let theirs_task = str_of(reply.data(), "taskId");
    let path = format!("/tasks/{theirs_task}");
    assert_eq!(app.get(&app.other.hr, &path).await.status, 200);
    assert_eq!(app.get(&app.org.hr, &path).await.status, 404);
    // Neither secret: refused as any bad signature.
    let reply = deliver(app, &"0".repeat(64), "issues", &body).await;
    assert_error_exact(&reply, 401, "Invalid code-host signature");
    // Switched off, the squatter's connection still changes nothing for the owner.
    let off = json!({"enabled": false});
    let reply = connection(app, &theirs, Method::PATCH, &squatter_id, Some(&off)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    body["issue"]["number"] = json!(73);
    let reply = deliver(app, &owner_secret, "issues", &body).await;
    assert_eq!(reply.data()["action"], "created", "{}", reply.text);
}

async fn only_admin_users_manage_connections(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let (id, _) = connect(app, &admin, fresh_installation(), None).await;
    let one_path = format!("{CONNECTIONS}/{id}");
    let calls = [
        (
            Method::POST,
            CONNECTIONS.to_owned(),
            Some(json!({"installationId": fresh_installation(), "name": "x"})),
        ),
        (Method::GET, CONNECTIONS.to_owned(), None),
        (Method::GET, one_path.clone(), None),
        (
            Method::PATCH,
            one_path.clone(),
            Some(json!({"enabled": false})),
        ),
        (Method::DELETE, one_path.clone(), None),
    ];
    for role in ["operator", "viewer"] {
        let (_, token) = app.user_token(&app.org, role).await;
        for (method, path, body) in &calls {
            let reply = send(app.bearer(&token, method.clone(), path, body.as_ref())).await;
            assert_error_exact(
                &reply,
                403,
                "only admin users may manage code-host connections",
            );
        }
    }
    let api_key = app.api_key(&admin, &["read", "write", "admin"]).await;
    for (method, path, body) in &calls {
        let reply = send(app.bearer(&api_key, method.clone(), path, body.as_ref())).await;
        assert_eq!(reply.status, 401, "API key on {method} {path}");
        let raw = body.as_ref().map(Value::to_string);
        let reply = send(app.signed(&app.org.hr, method.clone(), path, raw.as_deref())).await;
        assert_eq!(reply.status, 401, "agent on {method} {path}");
        let reply = send(app.anonymous(method.clone(), path)).await;
        assert_eq!(reply.status, 401, "anonymous {method} {path}");
    }
    let still = connection(app, &admin, Method::GET, &id, None).await;
    assert_eq!(still.body["enabled"], true, "nothing changed");
}

async fn connections_are_private_to_their_organization(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let (id, _) = connect(app, &admin, fresh_installation(), None).await;
    let other = app.admin_token(&app.other).await;
    for (method, body) in [
        (Method::GET, None),
        (Method::PATCH, Some(json!({"enabled": false}))),
        (Method::DELETE, None),
    ] {
        let reply = connection(app, &other, method.clone(), &id, body.as_ref()).await;
        assert_error_exact(&reply, 404, &format!("Code-host connection {id} not found"));
    }
    let theirs = send(app.bearer(&other, Method::GET, CONNECTIONS, None)).await;
    assert!(theirs.list().is_empty());
    assert_eq!(
        connection(app, &admin, Method::GET, &id, None).await.body["enabled"],
        true
    );
}
