//! What the escalation, sweep, routing and reward tests share: agents arranged with SQL
//! (levels, parents, fees, scores, capabilities), values read back with SQL on either
//! engine, a clock the tests set, and an escalation sweep over the test database.

use std::sync::{Arc, Mutex};

use muster_domain::model::instant::format_millis;
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

/// The one text column `v` of the first row `inner` selects, on either engine
/// (`"NULL"` for SQL NULL): `blob` is the only reader the harness offers, so the value
/// travels as the bytes of its text.
pub async fn sql_text(app: &TestApp, inner: &str) -> String {
    let wrapped = if is_postgres(app) {
        format!(
            "SELECT convert_to(COALESCE(CAST(q.v AS text), 'NULL'), 'UTF8') AS value \
             FROM ({inner}) AS q"
        )
    } else {
        format!(
            "SELECT CAST(COALESCE(CAST(q.v AS TEXT), 'NULL') AS BLOB) AS value FROM ({inner}) AS q"
        )
    };
    String::from_utf8(app.db().blob(&wrapped).await).unwrap()
}

/// [`sql_text`] as an integer.
pub async fn sql_int(app: &TestApp, inner: &str) -> i64 {
    let text = sql_text(app, inner).await;
    text.parse()
        .unwrap_or_else(|_| panic!("not an integer: {text:?} from {inner}"))
}

/// How many rows of `from_where` (`table WHERE ...`) there are.
pub async fn count(app: &TestApp, from_where: &str) -> i64 {
    sql_int(app, &format!("SELECT COUNT(*) AS v FROM {from_where}")).await
}

/// The column `v` of every row `ordered` selects (it must have an `ORDER BY`), in order.
pub async fn sql_rows(app: &TestApp, ordered: &str) -> Vec<String> {
    let total = sql_int(app, &format!("SELECT COUNT(*) AS v FROM ({ordered}) AS c")).await;
    let mut rows = Vec::new();
    for offset in 0..total {
        rows.push(sql_text(app, &format!("{ordered} LIMIT 1 OFFSET {offset}")).await);
    }
    rows
}

/// `UPDATE agents SET {assignments}` on `agent`.
pub async fn set_agent(app: &TestApp, agent: &Agent, assignments: &str) {
    app.db()
        .execute(&format!(
            "UPDATE agents SET {assignments} WHERE id = '{}'",
            agent.uuid
        ))
        .await;
}

/// `UPDATE tasks SET {assignments}` on the task `task`.
pub async fn set_task(app: &TestApp, task: &str, assignments: &str) {
    app.db()
        .execute(&format!(
            "UPDATE tasks SET {assignments} WHERE id = '{task}'"
        ))
        .await;
}

/// Makes `child` a child of `parent`.
pub async fn set_parent(app: &TestApp, child: &Agent, parent: &Agent) {
    set_agent(app, child, &format!("parent_id = '{}'", parent.uuid)).await;
}

/// Gives `agent` of `org` a capability.
pub async fn add_capability(
    app: &TestApp,
    org: &Org,
    agent: &Agent,
    capability: &str,
    proficiency: &str,
) {
    let id = uuid::Uuid::now_v7();
    app.db()
        .execute(&format!(
            "INSERT INTO agent_capabilities (id, org_id, agent_id, capability, proficiency, \
             created_at) VALUES ('{id}', '{org}', '{agent}', '{capability}', '{proficiency}', \
             '2026-01-01T00:00:00.000Z')",
            org = org.id,
            agent = agent.uuid,
        ))
        .await;
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

/// `at` as a SQL literal both engines read as a timestamp (the stored text form).
pub fn sql_time(at: OffsetDateTime) -> String {
    format!("'{}'", format_millis(at).unwrap())
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
