//! `GET /health` and `GET /ready`.

use muster_persistence::testing::TestDatabase;
use muster_persistence::{DatabaseUrl, Engine};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{TestApp, assert_error_exact, send, spawn_app};

api_tests!(
    health_is_public_and_ok,
    ready_is_ok_while_the_database_answers
);

async fn health_is_public_and_ok(app: &TestApp) {
    let reply = send(app.anonymous(Method::GET, "/health")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body, json!({ "status": "ok" }));
    let content_type = reply.headers.get("content-type").unwrap().to_str().unwrap();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
}

async fn ready_is_ok_while_the_database_answers(app: &TestApp) {
    let reply = send(app.anonymous(Method::GET, "/ready")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert!(reply.body.is_object(), "{}", reply.text);
}

/// Drops the test database under the running server, from a second database on the same
/// PostgreSQL server (a database cannot drop itself).
async fn drop_database(app: &TestApp) {
    let DatabaseUrl::Postgres(url) = &app.db().url else {
        panic!("not a PostgreSQL test database");
    };
    let name = url
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    let admin = TestDatabase::new(Engine::Postgres).await.unwrap();
    // Raw SQL: takes the database away from under the server; nothing else can.
    admin
        .execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await;
}

async fn ready_is_503_when_the_database_is_gone(app: &TestApp) {
    let before = send(app.anonymous(Method::GET, "/ready")).await;
    assert_eq!(before.status, StatusCode::OK, "{}", before.text);

    drop_database(app).await;

    let reply = send(app.anonymous(Method::GET, "/ready")).await;
    assert_error_exact(&reply, 503, "database is not reachable");
    // The liveness probe does not depend on the database.
    let health = send(app.anonymous(Method::GET, "/health")).await;
    assert_eq!(health.status, StatusCode::OK, "{}", health.text);
}

/// Only PostgreSQL can be taken away from a running server (a SQLite file is local).
mod postgres_only {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ready_is_503_when_the_database_is_gone() {
        let Some(app) = spawn_app(Engine::Postgres).await else {
            return;
        };
        super::ready_is_503_when_the_database_is_gone(&app).await;
        app.stop().await;
    }
}
