//! Faults an operator meets. The PostgreSQL server restarts under the service: while it
//! is down `/ready` says so and requests answer 503 at once (no hang); when it is back
//! the service recovers by itself, without a restart, and loses nothing it acknowledged.
//! The database cannot take writes (a full disk, a read-only server): writes answer
//! 503, reads go on, nothing is damaged.

use std::time::Duration;

use muster_persistence::testing::TestDatabase;
use muster_persistence::testing::cluster::Cluster;
use muster_persistence::{DatabaseUrl, PoolOptions};
use serde_json::json;

use crate::helpers::{TestApp, send, spawn_app_over, str_of};

async fn ready(app: &TestApp) -> u16 {
    send(app.anonymous(reqwest::Method::GET, "/ready"))
        .await
        .status
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgresql_restart_is_survived_without_restarting_the_service() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = DatabaseUrl::parse(&cluster.url("127.0.0.1", "sslmode=require")).unwrap();
    let options = PoolOptions {
        max_size: 4,
        timeout: Duration::from_secs(1),
        ..PoolOptions::default()
    };
    let app = spawn_app_over(TestDatabase::adopt(url, options).await).await;
    let before = app.task_titled(&app.org.hr, "Before the restart").await;
    assert_eq!(ready(&app).await, 200);

    cluster.stop().unwrap();
    assert_eq!(ready(&app).await, 503, "/ready tells the load balancer");
    for _ in 0..3 {
        let reply = app.get(&app.org.hr, "/tasks").await;
        assert_eq!(reply.status, 503, "{}", reply.text);
        assert_eq!(reply.headers["retry-after"], "1");
        let write = app
            .post(&app.org.hr, "/tasks", r#"{"title":"During the outage"}"#)
            .await;
        assert_eq!(write.status, 503, "{}", write.text);
    }

    cluster.start_again().unwrap();
    let mut recovered = false;
    for _ in 0..100 {
        if ready(&app).await == 200 {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(recovered, "/ready never came back");
    let after = app
        .create_task(&app.org.hr, &json!({ "title": "After the restart" }))
        .await;
    let listed = app.get(&app.org.hr, "/tasks?limit=100").await;
    let titles: Vec<String> = listed.list().iter().map(|t| str_of(t, "title")).collect();
    assert!(
        titles.contains(&"Before the restart".to_owned()),
        "{titles:?}"
    );
    assert!(titles.contains(&"After the restart".to_owned()));
    assert!(
        !titles.contains(&"During the outage".to_owned()),
        "a refused write left nothing"
    );
    assert_ne!(before, str_of(&after, "id"));
    app.stop().await;
}

api_tests!(a_database_that_cannot_take_writes_refuses_them_and_serves_reads);

/// The name of the PostgreSQL test database.
fn database_name(app: &TestApp) -> String {
    let DatabaseUrl::Postgres(url) = &app.db().url else {
        unreachable!("a PostgreSQL test database");
    };
    let path = url.split('?').next().unwrap_or_default();
    path.rsplit('/').next().unwrap_or_default().to_owned()
}

/// A full disk (SQLite: the file may not grow by a page) or a server that turned
/// read-only (PostgreSQL, as after a fail-over to a replica): writes answer 503 with
/// `Retry-After` and do nothing; reads by a signed-in user go on (a signed agent request
/// records its nonce, a write, so it is refused rather than left open to replays);
/// once writing is possible again everything works and nothing is damaged.
async fn a_database_that_cannot_take_writes_refuses_them_and_serves_reads(app: &TestApp) {
    let kept = app.task_titled(&app.org.hr, "Written before").await;
    let token = app.admin_token(&app.org).await;
    let postgres = crate::task_support::is_postgres(app);
    let small = PoolOptions {
        max_size: 2,
        ..PoolOptions::default()
    };
    let read_only = if postgres {
        let name = database_name(app);
        // Raw SQL: turns the server read-only, as a fail-over to a replica would.
        app.db()
            .execute(&format!(
                "ALTER DATABASE {name} SET default_transaction_read_only = on"
            ))
            .await;
        Some(
            muster_persistence::Database::connect(&app.db().url, small)
                .await
                .unwrap(),
        )
    } else {
        // SQLite never lowers the limit below the file's size: it may just not grow.
        // Raw SQL: fills the disk, as it were; only the engine's own setting can.
        app.db().db.on_writer("PRAGMA max_page_count = 1").await;
        None
    };
    let sibling = match &read_only {
        Some(db) => Some(app.sibling_over(db).await),
        None => None,
    };
    let base = sibling
        .as_ref()
        .map_or_else(|| app.url(""), |s| s.base.clone());

    let mut refused = 0;
    for n in 0..200 {
        let body = json!({ "title": format!("During {n}"), "description": "x".repeat(2_000) });
        let reply = send(
            app.client
                .post(format!("{base}/tasks"))
                .bearer_auth(&token)
                .json(&body),
        )
        .await;
        if reply.status == 503 {
            assert_eq!(reply.headers["retry-after"], "1");
            refused += 1;
            if refused == 3 {
                break;
            }
        } else {
            assert_eq!(reply.status, 200, "{}", reply.text);
        }
    }
    assert_eq!(refused, 3, "writes kept succeeding");
    let reads = send(
        app.client
            .get(format!("{base}/tasks/{kept}"))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(reads.status, 200, "reads go on: {}", reads.text);

    if postgres {
        let name = database_name(app);
        // Raw SQL: the server takes writes again, as after the fail-over.
        app.db()
            .execute(&format!(
                "BEGIN READ WRITE; \
                 ALTER DATABASE {name} SET default_transaction_read_only = off; COMMIT"
            ))
            .await;
    } else {
        // Raw SQL: frees the disk again (the engine's own setting).
        app.db()
            .db
            .on_writer("PRAGMA max_page_count = 1073741823")
            .await;
        // Raw SQL: the engine's own integrity check; no route or port runs it.
        let check = app
            .db()
            .db
            .text_of("SELECT integrity_check AS v FROM pragma_integrity_check")
            .await;
        assert_eq!(check, "ok");
    }
    if let Some(sibling) = sibling {
        TestApp::halt_sibling(sibling).await;
    }
    let after = app.task_titled(&app.org.hr, "Written after").await;
    assert!(!after.is_empty());
}
