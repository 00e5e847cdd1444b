//! `kill -9` under load, on real processes: every write that was acknowledged with a
//! 2xx is in the database afterwards. On SQLite the next start opens the file cleanly;
//! with two instances on one PostgreSQL the surviving instance serves on.

use std::process::Stdio;
use std::time::Duration;

use muster_auth::signing::{canonical_message, sign};
use muster_domain::model::{OrgId, TaskId};
use muster_domain::ports::TaskRepository;
use muster_persistence::testing::TestDatabase;
use muster_persistence::{Database, DatabaseUrl, Engine, PoolOptions};
use serde_json::Value;
use uuid::Uuid;

use crate::shutdown::{Server, start_on};
use crate::{Scratch, muster, stderr};

/// An organization's HR agent, as `muster bootstrap` printed it.
#[derive(Clone)]
struct Hr {
    org: OrgId,
    handle: String,
    secret: String,
}

fn bootstrap(url: &str, env: &[(&str, &str)]) -> Hr {
    let out = muster()
        .args([
            "bootstrap",
            "--org-name",
            "Crash Test",
            "--admin-email",
            "a@example.com",
        ])
        .args(["--admin-password", "correct horse", "--database-url", url])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    Hr {
        org: OrgId::from_uuid(json["orgId"].as_str().unwrap().parse().unwrap()),
        handle: json["hrAgent"]["agentId"].as_str().unwrap().to_owned(),
        secret: json["hrAgent"]["secret"].as_str().unwrap().to_owned(),
    }
}

/// Creates a task through the server on `port`, signed by `hr`: its id on a 2xx.
async fn create_task(client: &reqwest::Client, port: u16, hr: &Hr, title: &str) -> Option<Uuid> {
    let body = serde_json::json!({ "title": title }).to_string();
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string();
    let nonce = Uuid::now_v7().to_string();
    let message = canonical_message("POST", "/tasks", &timestamp, &nonce, body.as_bytes());
    let reply = client
        .post(format!("http://127.0.0.1:{port}/tasks"))
        .header("Content-Type", "application/json")
        .header("X-Agent-ID", &hr.handle)
        .header("X-Timestamp", &timestamp)
        .header("X-Nonce", &nonce)
        .header("X-Signature", sign(&hr.secret, &message))
        .body(body)
        .send()
        .await
        .ok()?;
    if !reply.status().is_success() {
        return None;
    }
    let json: Value = reply.json().await.ok()?;
    json["data"]["id"].as_str()?.parse().ok()
}

/// Writes tasks through `port` until a write fails (or `max` succeed): the ids of
/// those that were acknowledged.
async fn write_until_failure(port: u16, hr: Hr, writer: usize, max: usize) -> Vec<Uuid> {
    // reqwest's TLS (turned on by muster-client) needs a crypto provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut acknowledged = Vec::new();
    for n in 0..max {
        match create_task(&client, port, &hr, &format!("w{writer} n{n}")).await {
            Some(id) => acknowledged.push(id),
            None => break,
        }
    }
    acknowledged
}

/// Every id in `ids` is a task of `org` in `db`.
async fn assert_all_stored(db: &Database, org: OrgId, ids: &[Uuid]) {
    for id in ids {
        let task = TaskRepository::get(db, org, TaskId::from_uuid(*id))
            .await
            .unwrap();
        assert!(task.is_some(), "acknowledged task {id} is missing");
    }
}

fn kill_9(server: &mut Server) {
    server.child.kill().unwrap();
    server.child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_kill_9_during_writes_loses_no_acknowledged_write() {
    let scratch = Scratch::new();
    let url = scratch.sqlite_url();
    let hr = bootstrap(&url, &[]);
    let mut server = start_on(&url, &[], Stdio::null());
    let port = server.port;
    let writers: Vec<_> = (0..8)
        .map(|w| tokio::spawn(write_until_failure(port, hr.clone(), w, 100_000)))
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    kill_9(&mut server);
    let mut acknowledged = Vec::new();
    for writer in writers {
        acknowledged.extend(writer.await.unwrap());
    }
    assert!(!acknowledged.is_empty(), "the load never got going");

    // The next start opens the file cleanly and serves.
    let _again = start_on(&url, &[], Stdio::null());
    let db = Database::connect(&DatabaseUrl::parse(&url).unwrap(), PoolOptions::default())
        .await
        .unwrap();
    assert_all_stored(&db, hr.org, &acknowledged).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_kill_9_of_one_instance_loses_nothing_and_the_other_serves_on() {
    let Some(test_db) = TestDatabase::new(Engine::Postgres).await else {
        return;
    };
    let DatabaseUrl::Postgres(url) = &test_db.url else {
        unreachable!("a PostgreSQL test database");
    };
    let key = "11".repeat(32);
    let env = [("MUSTER_SECRET_KEY", key.as_str())];
    let hr = bootstrap(url, &env);
    let mut doomed = start_on(url, &env, Stdio::null());
    let survivor = start_on(url, &env, Stdio::null());
    let (doomed_port, survivor_port) = (doomed.port, survivor.port);
    let on_doomed: Vec<_> = (0..4)
        .map(|w| tokio::spawn(write_until_failure(doomed_port, hr.clone(), w, 100_000)))
        .collect();
    let on_survivor: Vec<_> = (4..8)
        .map(|w| tokio::spawn(write_until_failure(survivor_port, hr.clone(), w, 150)))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    kill_9(&mut doomed);

    let mut acknowledged = Vec::new();
    for writer in on_doomed {
        acknowledged.extend(writer.await.unwrap());
    }
    for writer in on_survivor {
        let written = writer.await.unwrap();
        assert_eq!(written.len(), 150, "the surviving instance refused a write");
        acknowledged.extend(written);
    }
    assert_all_stored(&test_db.db, hr.org, &acknowledged).await;
    drop(survivor);
}
