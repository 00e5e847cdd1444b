//! What the escalation, sweep, routing and reward tests share: stored agents read back
//! through the persistence port, tasks made and moved through the API, a clock the tests
//! set, and an escalation sweep over the test database. (Agents and tasks arranged as no
//! route allows are in [`crate::stored`].)

use std::sync::{Arc, Mutex};

use muster_domain::model::{AgentId, OrgId};
use muster_domain::ports::{AgentRepository, Clock};
use muster_domain::rules::escalation::SweepThresholds;
use muster_domain::service::{EscalationSweep, TaskService};
use muster_persistence::{Database, DatabaseUrl, PoolOptions};
use muster_server::adapters::UuidV7Ids;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::helpers::{Agent, Org, TestApp, str_of};

/// Whether the test database is PostgreSQL.
pub fn is_postgres(app: &TestApp) -> bool {
    matches!(app.db().url, DatabaseUrl::Postgres(_))
}

/// The stored agent, read through the persistence port.
pub async fn agent_record(app: &TestApp, org: &Org, agent: &Agent) -> muster_domain::model::Agent {
    app.db()
        .db
        .get(OrgId::from_uuid(org.id), AgentId::from_uuid(agent.uuid))
        .await
        .unwrap()
        .expect("agent exists")
}

/// An agent's `current_balance`.
pub async fn balance(app: &TestApp, org: &Org, agent: &Agent) -> i64 {
    agent_record(app, org, agent).await.current_balance
}

/// An agent's `reputation_score`.
pub async fn reputation(app: &TestApp, org: &Org, agent: &Agent) -> i32 {
    agent_record(app, org, agent).await.reputation_score
}

/// Creates a task assigned to `assignee` (created by `creator`), answering its id.
pub async fn assigned_task(
    app: &TestApp,
    creator: &Agent,
    assignee: &Agent,
    extra: Value,
) -> String {
    let mut body = json!({ "title": "assigned work", "assigneeId": assignee.uuid });
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    str_of(&app.create_task(creator, &body).await, "id")
}

/// Moves `task` through each status of `path` as `agent`, asserting every step is 200.
pub async fn walk(app: &TestApp, agent: &Agent, task: &str, path: &[&str]) {
    for to in path {
        let reply = app
            .transition(agent, task, &json!({ "status": to }).to_string())
            .await;
        assert_eq!(reply.status.as_u16(), 200, "{task} -> {to}: {}", reply.text);
    }
}

/// The stored task as the API shows it.
pub async fn task_of(app: &TestApp, agent: &Agent, task: &str) -> Value {
    app.get(agent, &format!("/tasks/{task}"))
        .await
        .data()
        .clone()
}

/// The task's escalations, as `GET /tasks/:id/escalations` lists them (newest first).
pub async fn escalations_of(app: &TestApp, agent: &Agent, task: &str) -> Vec<Value> {
    app.get(agent, &format!("/tasks/{task}/escalations"))
        .await
        .list()
        .clone()
}

/// The events of `entity` of type `kind`, newest first.
pub async fn events_typed(app: &TestApp, agent: &Agent, entity: &str, kind: &str) -> Vec<Value> {
    app.events_of(agent, entity)
        .await
        .into_iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

/// An instant from RFC 3339 text.
pub fn instant(text: &str) -> OffsetDateTime {
    OffsetDateTime::parse(text, &Rfc3339).unwrap()
}

/// A clock the test sets.
#[derive(Debug)]
pub struct TestClock(Mutex<OffsetDateTime>);

impl TestClock {
    /// A clock showing `at`.
    pub fn at(at: OffsetDateTime) -> Arc<Self> {
        Arc::new(Self(Mutex::new(at)))
    }

    /// Sets the time.
    pub fn set(&self, at: OffsetDateTime) {
        *self.0.lock().unwrap() = at;
    }
}

impl Clock for TestClock {
    fn current(&self) -> OffsetDateTime {
        *self.0.lock().unwrap()
    }
}

/// A task service over `db` on `clock`.
pub fn task_service(db: &Database, clock: Arc<TestClock>) -> TaskService {
    TaskService::new(
        Arc::new(db.clone()),
        Arc::new(db.clone()),
        clock,
        Arc::new(UuidV7Ids),
    )
}

/// An escalation sweep with the decided thresholds over the test database, on `clock`.
pub fn sweep_on(app: &TestApp, clock: Arc<TestClock>) -> EscalationSweep {
    EscalationSweep::new(
        task_service(&app.db().db, clock),
        SweepThresholds::default(),
    )
}

/// A second connection pool to the test database: another instance of the service.
pub async fn another_instance(app: &TestApp) -> Database {
    Database::connect(&app.db().url, PoolOptions::default())
        .await
        .unwrap()
}
