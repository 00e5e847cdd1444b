//! Faults an operator meets: the PostgreSQL server restarts under the service. While it
//! is down `/ready` says so and requests answer 503 at once (no hang); when it is back
//! the service recovers by itself, without a restart, and loses nothing it acknowledged.

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
