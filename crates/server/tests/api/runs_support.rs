//! What the run tests share: a worker with a task in progress, runs started and fed
//! through the API as a real agent does, and the settings of a priced deployment.

use serde_json::{Value, json};

use crate::agent_support::grant;
use crate::helpers::{Agent, AppSettings, Reply, RunSettings, TaskSettings, TestApp, str_of};
use crate::task_support::{assigned_task, walk};

/// A task created by the organization's HR agent, assigned to `worker` and moved by it
/// to `in_progress`; answers its id.
pub async fn task_in_progress(app: &TestApp, worker: &Agent) -> String {
    let task = assigned_task(app, &app.org.hr, worker, json!({})).await;
    walk(app, worker, &task, &["in_progress"]).await;
    task
}

/// A fresh worker holding `credits` more than it started with (granted by the admin).
pub async fn funded_worker(app: &TestApp, credits: i64) -> Agent {
    let worker = app.worker(&app.org).await;
    if credits > 0 {
        grant(app, &app.org, &worker, credits).await;
    }
    worker
}

/// `POST /tasks/:task/runs` as `agent` with `body`.
pub async fn start_reply(app: &TestApp, agent: &Agent, task: &str, body: &Value) -> Reply {
    app.post(agent, &format!("/tasks/{task}/runs"), &body.to_string())
        .await
}

/// Starts a run of `task` as `agent` (asserting 201), answering the run.
pub async fn start_run(app: &TestApp, agent: &Agent, task: &str, body: &Value) -> Value {
    let reply = start_reply(app, agent, task, body).await;
    assert_eq!(reply.status.as_u16(), 201, "start run: {}", reply.text);
    reply.body["data"].clone()
}

/// A worker, a task in progress of it and a run of it started with `body`:
/// `(worker, task, run id)`.
pub async fn running(app: &TestApp, credits: i64, body: &Value) -> (Agent, String, String) {
    let worker = funded_worker(app, credits).await;
    let task = task_in_progress(app, &worker).await;
    let run = start_run(app, &worker, &task, body).await;
    (worker, task, str_of(&run, "id"))
}

/// `POST /runs/:run/usage` as `agent` with `body`.
pub async fn report(app: &TestApp, agent: &Agent, run: &str, body: &Value) -> Reply {
    app.post(agent, &format!("/runs/{run}/usage"), &body.to_string())
        .await
}

/// The run as `reader` reads it.
pub async fn run_of(app: &TestApp, reader: &Agent, run: &str) -> Value {
    app.get(reader, &format!("/runs/{run}"))
        .await
        .data()
        .clone()
}

/// The stored agent's `(current balance, reserved credits, budget exhausted)`.
pub async fn money_of(app: &TestApp, agent: &Agent) -> (i64, i64, bool) {
    let stored = crate::task_support::agent_record(app, &app.org, agent).await;
    (
        stored.current_balance,
        stored.reserved_credits,
        stored.budget_exhausted,
    )
}

/// The settings of a deployment with a price table (written to a file of its own) of
/// `model-a` at $3/$15 per million input/output tokens, cache reads at $0.30, and
/// `prefix` at $1/$2 for every model whose name starts with it; 2,000 credits per US
/// dollar.
pub fn priced() -> AppSettings {
    let path = std::env::temp_dir().join(format!("muster-prices-{}.json", uuid::Uuid::now_v7()));
    let table = json!({
        "model-a": {"input": 3, "output": 15, "cacheRead": 0.3},
        "prefix": {"input": 1, "output": 2},
    });
    std::fs::write(&path, table.to_string()).unwrap();
    TaskSettings {
        runs: RunSettings {
            price_table: Some(path),
            credits_per_usd: 2_000,
        },
        ..TaskSettings::default()
    }
    .into()
}
