//! Tools shared by the task workflow tests: callers of every kind, a task's stored state
//! with its audit trail, statuses set as stored, and bodies compared modulo an id.

use muster_domain::model::TaskStatus;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Agent, Reply, TestApp, send, str_of};
use crate::stored::change_task;

/// Someone who calls the API: a signing agent, or a bearer credential (a user's access
/// token or an API key).
#[derive(Debug, Clone)]
pub enum Caller {
    /// HMAC-signed requests.
    Agent(Agent),
    /// `Authorization: Bearer <credential>`.
    Bearer(String),
}

impl Caller {
    /// Sends `method path` with the JSON `body` (none when `None`), answered.
    pub async fn call(
        &self,
        app: &TestApp,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Reply {
        match self {
            Self::Agent(agent) => {
                let text = body.map(Value::to_string);
                send(app.signed(agent, method, path, text.as_deref())).await
            }
            Self::Bearer(credential) => send(app.bearer(credential, method, path, body)).await,
        }
    }
}

/// Signed `PATCH` with a raw body, answered.
pub async fn patch(app: &TestApp, agent: &Agent, path: &str, body: &str) -> Reply {
    send(app.signed(agent, Method::PATCH, path, Some(body))).await
}

/// Signed `DELETE` without a body, answered.
pub async fn delete(app: &TestApp, agent: &Agent, path: &str) -> Reply {
    send(app.signed(agent, Method::DELETE, path, None)).await
}

/// A task as its organization's HR agent reads it, and its events (newest first).
pub async fn task_state(app: &TestApp, hr: &Agent, task: &str) -> (Value, Vec<Value>) {
    let stored = app.get(hr, &format!("/tasks/{task}")).await.data().clone();
    (stored, app.events_of(hr, task).await)
}

/// How many events `hr`'s organization holds.
pub async fn event_total(app: &TestApp, hr: &Agent) -> u64 {
    let reply = app.get(hr, "/events?limit=1").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    reply.body["meta"]["total"].as_u64().unwrap()
}

/// How many events of type `kind` the whole deployment holds: each organization's
/// count, as its HR agent reads it.
pub async fn events_everywhere(app: &TestApp, kind: &str) -> u64 {
    let mut total = 0;
    for hr in [&app.org.hr, &app.other.hr] {
        let reply = app.get(hr, &format!("/events?type={kind}&limit=1")).await;
        assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
        total += reply.body["meta"]["total"].as_u64().unwrap();
    }
    total
}

/// The `type` of each event.
pub fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

/// Puts tasks straight into `status` as stored (setup for states the workflow reaches
/// only through several moves), changing nothing else of them.
pub async fn set_status(app: &TestApp, tasks: &[&str], status: &str) {
    let status = TaskStatus::parse(status).unwrap();
    for task in tasks {
        change_task(app, task, move |t| t.status = status).await;
    }
}

/// Creates a task from `body` as `agent`, answering its id.
pub async fn task_with(app: &TestApp, agent: &Agent, body: &Value) -> String {
    str_of(&app.create_task(agent, body).await, "id")
}

/// Makes `task` depend on `depends_on` (asserting 200), answering the dependency.
pub async fn depend(
    app: &TestApp,
    agent: &Agent,
    task: &str,
    depends_on: &str,
    blocking: bool,
) -> Value {
    let body = json!({ "dependsOnId": depends_on, "blocking": blocking });
    let reply = app
        .post(
            agent,
            &format!("/tasks/{task}/dependencies"),
            &body.to_string(),
        )
        .await;
    reply.data().clone()
}

/// Moves `task` to `to` as `agent`, asserting it worked.
pub async fn move_ok(app: &TestApp, agent: &Agent, task: &str, to: &str) -> Value {
    let reply = app
        .transition(agent, task, &json!({ "status": to }).to_string())
        .await;
    let moved = reply.data().clone();
    assert_eq!(moved["status"], to, "{}", reply.text);
    moved
}

/// The raw body text with every occurrence of `id` replaced, to compare two answers
/// byte for byte apart from the id they name.
pub fn text_without(reply: &Reply, id: &str) -> String {
    reply.text.replace(id, "<id>")
}

/// The signed-in user's id (`GET /auth/me`).
pub async fn user_id(app: &TestApp, token: &str) -> String {
    let reply = send(app.bearer(token, Method::GET, "/auth/me", None)).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    str_of(&reply.body, "id")
}
