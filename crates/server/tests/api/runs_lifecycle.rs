//! Runs over HTTP (decision D-106): every route's answer on the way from start to
//! finish, one open run per task, who may start and feed a run, and another
//! organization's run not found on every route.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Agent, TestApp, assert_error_code, send, str_of};
use crate::runs_support::{
    funded_worker, report, run_of, running, start_reply, start_run, task_in_progress,
};
use crate::task_support::{assigned_task, walk};

api_tests!(
    a_run_goes_from_start_to_finish_through_every_route,
    a_task_has_one_open_run_at_a_time,
    only_the_assignee_of_a_task_in_progress_starts_a_run,
    only_the_runs_agent_feeds_and_finishes_it,
    another_organizations_run_is_not_found_on_every_route,
);

async fn a_run_goes_from_start_to_finish_through_every_route(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = funded_worker(app, 100).await;
    let task = task_in_progress(app, &worker).await;
    let started = start_run(
        app,
        &worker,
        &task,
        &json!({"adapter": "claude-code", "model": "claude-sonnet-4-5"}),
    )
    .await;
    let run = str_of(&started, "id");
    assert_eq!(started["taskId"], task);
    assert_eq!(started["agentId"], worker.uuid.to_string());
    assert_eq!(started["status"], "running");
    assert_eq!(started["adapter"], "claude-code");
    assert_eq!(started["model"], "claude-sonnet-4-5");
    assert_eq!(started["endedAt"], Value::Null);
    assert_eq!(started["stopRequested"], false);
    assert_eq!(started["stopReason"], Value::Null);
    assert_eq!(started["usage"]["reports"], 0);
    assert_eq!(started["usage"]["costMicrousd"], Value::Null);
    assert_eq!(started["usage"]["byModel"], json!([]));
    assert_eq!(started["logLines"], 0);
    assert_eq!(started["reservedCredits"], 0);
    crate::helpers::assert_timestamp(&started, "startedAt");

    reads(app, &task, &run, &worker).await;
    logs(app, &run, &worker).await;
    reports(app, &run, &worker).await;
    stops_and_finishes(app, &run, &worker).await;
    adds_up(app, &task, &worker).await;
    // Its events.
    let types: Vec<String> = app
        .events_of(hr, &run)
        .await
        .iter()
        .map(|e| str_of(e, "type"))
        .collect();
    assert_eq!(types, ["run.finished", "run.stop_requested", "run.started"]);
}

/// The run read back: by id, among its task's runs, in the filtered list.
async fn reads(app: &TestApp, task: &str, run: &str, worker: &Agent) {
    let hr = &app.org.hr;
    assert_eq!(run_of(app, hr, run).await["id"], run);
    let listed = app.get(hr, &format!("/tasks/{task}/runs")).await;
    assert_eq!(listed.ids(), [run.to_owned()]);
    for (query, found) in [
        (format!("taskId={task}&status=running"), 1),
        (format!("agentId={}", worker.uuid), 1),
        (format!("agentId={}", hr.uuid), 0),
        ("status=succeeded".to_owned(), 0),
        ("from=2000-01-01&to=2999-12-31".to_owned(), 1),
        ("to=2000-01-01".to_owned(), 0),
    ] {
        let reply = app.get(hr, &format!("/runs?{query}")).await;
        assert_eq!(reply.list().len(), found, "{query}: {}", reply.text);
    }
}

/// Lines appended, and read back.
async fn logs(app: &TestApp, run: &str, worker: &Agent) {
    let hr = &app.org.hr;
    let lines = json!({"lines": [
        {"stream": "stdout", "text": "hello"},
        {"stream": "stderr", "text": "oops"},
    ]});
    let logged = app
        .post(worker, &format!("/runs/{run}/log"), &lines.to_string())
        .await;
    assert_eq!(logged.data()["logLines"], 2, "{}", logged.text);
    assert_eq!(logged.data()["logBytes"], 9);
    let log = app.get(hr, &format!("/runs/{run}/log")).await;
    assert_eq!(log.status.as_u16(), 200, "{}", log.text);
    assert_eq!(log.body["last"], 2);
    assert_eq!(log.body["truncated"], false);
    let got: Vec<(i64, &str, &str)> = log.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            crate::helpers::assert_timestamp(l, "at");
            (
                l["seq"].as_i64().unwrap(),
                l["stream"].as_str().unwrap(),
                l["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [(1, "stdout", "hello"), (2, "stderr", "oops")]);
}

/// Reports paid, once per `reportId`.
async fn reports(app: &TestApp, run: &str, worker: &Agent) {
    // A report: 2,500 millionths of a dollar is 2.5 credits at 1,000 a dollar, so 3.
    let body = json!({"model": "claude-sonnet-4-5", "provider": "anthropic",
        "inputTokens": 100, "outputTokens": 50, "cacheReadTokens": 7,
        "costMicrousd": 2_500, "reportId": "r-1"});
    let first = report(app, worker, run, &body).await;
    assert_eq!(first.status.as_u16(), 201, "{}", first.text);
    let recorded = &first.body["report"];
    assert_eq!(recorded["credits"], 3, "{}", first.text);
    assert_eq!(recorded["unfundedCredits"], 0);
    assert_eq!(recorded["costMicrousd"], 2_500);
    assert_eq!(recorded["reportId"], "r-1");
    assert_eq!(recorded["provider"], "anthropic");
    assert_eq!(recorded["cacheWriteTokens"], 0);
    let usage = &first.body["data"]["usage"];
    assert_eq!(usage["reports"], 1);
    assert_eq!(usage["credits"], 3);
    assert_eq!(usage["inputTokens"], 100);
    assert_eq!(usage["byModel"][0]["model"], "claude-sonnet-4-5");
    assert_eq!(usage["byModel"][0]["cacheReadTokens"], 7);
    // The same reportId again counts once: 200 and no report.
    let again = report(app, worker, run, &body).await;
    assert_eq!(again.status.as_u16(), 200, "{}", again.text);
    assert_eq!(again.body["report"], Value::Null);
    assert_eq!(again.body["data"]["usage"]["reports"], 1);
    assert_eq!(again.body["data"]["usage"]["credits"], 3);
}

/// Heartbeats, a stop asked by HR (a level-10 agent), the finish.
async fn stops_and_finishes(app: &TestApp, run: &str, worker: &Agent) {
    let hr = &app.org.hr;
    let beat = app
        .post(
            worker,
            &format!("/runs/{run}/heartbeat"),
            r#"{"leaseSeconds": 600}"#,
        )
        .await;
    assert_eq!(beat.data()["status"], "running");
    let beat = app
        .post(worker, &format!("/runs/{run}/heartbeat"), "")
        .await;
    assert_eq!(beat.data()["stopRequested"], false);
    let stopped = app
        .post(hr, &format!("/runs/{run}/stop"), r#"{"reason": "enough"}"#)
        .await;
    assert_eq!(stopped.data()["stopRequested"], true, "{}", stopped.text);
    assert_eq!(stopped.data()["stopReason"], "requested");
    // The agent learns it from its next answer.
    let beat = app
        .post(worker, &format!("/runs/{run}/heartbeat"), "")
        .await;
    assert_eq!(beat.data()["stopRequested"], true);
    let finish = json!({"status": "stopped", "exitCode": 130, "summary": "asked to stop"});
    let finished = app
        .post(worker, &format!("/runs/{run}/finish"), &finish.to_string())
        .await;
    let data = finished.data();
    assert_eq!(data["status"], "stopped");
    assert_eq!(data["exitCode"], 130);
    assert_eq!(data["summary"], "asked to stop");
    crate::helpers::assert_timestamp(data, "endedAt");
    let twice = app
        .post(worker, &format!("/runs/{run}/finish"), &finish.to_string())
        .await;
    assert_error_code(&twice, 409, "run_closed");
    let late = report(
        app,
        worker,
        run,
        &json!({"model": "m", "inputTokens": 1, "outputTokens": 1}),
    )
    .await;
    assert_error_code(&late, 409, "run_closed");
    // Stopping a finished run changes nothing.
    let stop_again = app.post(hr, &format!("/runs/{run}/stop"), "").await;
    assert_eq!(stop_again.data()["status"], "stopped");
}

/// The usage, added up.
async fn adds_up(app: &TestApp, task: &str, worker: &Agent) {
    let hr = &app.org.hr;
    let by_model = app.get(hr, "/usage?groupBy=model").await;
    let groups = by_model.list();
    assert_eq!(groups.len(), 1, "{}", by_model.text);
    assert_eq!(groups[0]["key"], "claude-sonnet-4-5");
    assert_eq!(groups[0]["credits"], 3);
    assert_eq!(groups[0]["reports"], 1);
    assert_eq!(groups[0]["runs"], 1);
    assert_eq!(groups[0]["costMicrousd"], 2_500);
    assert_eq!(groups[0]["unpricedTokens"], 0);
    let by_agent = app.get(hr, "/usage").await;
    assert_eq!(by_agent.list()[0]["key"], worker.uuid.to_string());
    let by_task = app
        .get(hr, &format!("/usage?groupBy=task&taskId={task}"))
        .await;
    assert_eq!(by_task.list()[0]["key"], task);
    let by_day = app.get(hr, "/usage?groupBy=day").await;
    assert_eq!(by_day.list()[0]["key"].as_str().unwrap().len(), 10);
    let none = app.get(hr, "/usage?to=2000-01-01").await;
    assert!(none.list().is_empty(), "{}", none.text);
    let of_agent = app.get(hr, &format!("/agents/{}/usage", worker.uuid)).await;
    assert_eq!(
        of_agent.list()[0]["key"],
        "claude-sonnet-4-5",
        "{}",
        of_agent.text
    );
    let of_hr = app.get(hr, &format!("/agents/{}/usage", hr.uuid)).await;
    assert!(of_hr.list().is_empty());
}

async fn a_task_has_one_open_run_at_a_time(app: &TestApp) {
    let (worker, task, run) = running(app, 0, &json!({})).await;
    let second = start_reply(app, &worker, &task, &json!({})).await;
    assert_error_code(&second, 409, "run_already_open");
    assert!(second.text.contains(&run), "{}", second.text);
    let done = app
        .post(
            &worker,
            &format!("/runs/{run}/finish"),
            r#"{"status":"failed","exitCode":1}"#,
        )
        .await;
    assert_eq!(done.data()["status"], "failed");
    // Once it ended, the next attempt starts: newest first in the task's runs.
    let next = start_run(app, &worker, &task, &json!({})).await;
    let listed = app.get(&worker, &format!("/tasks/{task}/runs")).await;
    assert_eq!(listed.ids(), [str_of(&next, "id"), run.clone()]);
    let paged = app
        .get(&worker, &format!("/tasks/{task}/runs?limit=1"))
        .await;
    assert_eq!(paged.ids(), [str_of(&next, "id")]);
    let cursor = str_of(&paged.body["meta"], "nextCursor");
    let rest = app
        .get(
            &worker,
            &format!("/tasks/{task}/runs?limit=1&cursor={cursor}"),
        )
        .await;
    assert_eq!(rest.ids(), [run]);
}

async fn only_the_assignee_of_a_task_in_progress_starts_a_run(app: &TestApp) {
    let worker = funded_worker(app, 0).await;
    let stranger = funded_worker(app, 0).await;
    let task = task_in_progress(app, &worker).await;
    for agent in [&stranger, &app.org.hr] {
        let reply = start_reply(app, agent, &task, &json!({})).await;
        assert_error_code(&reply, 409, "not_task_assignee");
    }
    let waiting = assigned_task(app, &app.org.hr, &worker, json!({})).await;
    let reply = start_reply(app, &worker, &waiting, &json!({})).await;
    assert_error_code(&reply, 409, "task_not_in_progress");
    walk(app, &worker, &waiting, &["in_progress", "review"]).await;
    let reply = start_reply(app, &worker, &waiting, &json!({})).await;
    assert_error_code(&reply, 409, "task_not_in_progress");
    let missing = start_reply(app, &worker, &Uuid::now_v7().to_string(), &json!({})).await;
    assert_error_code(&missing, 404, "task_not_found");
    // A person is no agent: runs are started by agents.
    let admin = app.admin_token(&app.org).await;
    let person = send(app.bearer(
        &admin,
        Method::POST,
        &format!("/tasks/{task}/runs"),
        Some(&json!({})),
    ))
    .await;
    assert_eq!(person.status.as_u16(), 403, "{}", person.text);
    // None of it left a run.
    let runs = app.get(&app.org.hr, "/runs").await;
    assert!(runs.list().is_empty(), "{}", runs.text);
}

async fn only_the_runs_agent_feeds_and_finishes_it(app: &TestApp) {
    let (worker, _task, run) = running(app, 10, &json!({})).await;
    let stranger = funded_worker(app, 10).await;
    let log = json!({"lines": [{"stream": "stdout", "text": "x"}]}).to_string();
    let usage = json!({"model": "m", "inputTokens": 1, "outputTokens": 1}).to_string();
    let finish = json!({"status": "succeeded"}).to_string();
    for (path, body) in [
        ("log", log.as_str()),
        ("usage", usage.as_str()),
        ("finish", finish.as_str()),
        ("heartbeat", ""),
    ] {
        let reply = app
            .post(&stranger, &format!("/runs/{run}/{path}"), body)
            .await;
        assert_error_code(&reply, 403, "run_agent_required");
    }
    // A fellow worker does not oversee it either.
    let stop = app.post(&stranger, &format!("/runs/{run}/stop"), "").await;
    assert_error_code(&stop, 403, "overseer_required");
    let unchanged = run_of(app, &worker, &run).await;
    assert_eq!(unchanged["status"], "running");
    assert_eq!(unchanged["logLines"], 0);
    assert_eq!(unchanged["usage"]["reports"], 0);
    assert_eq!(unchanged["stopRequested"], false);
    // Its own agent may ask itself to stop.
    let own = app.post(&worker, &format!("/runs/{run}/stop"), "").await;
    assert_eq!(own.data()["stopRequested"], true);
}

async fn another_organizations_run_is_not_found_on_every_route(app: &TestApp) {
    let (worker, task, run) = running(app, 10, &json!({})).await;
    let theirs = &app.other.hr;
    let log = json!({"lines": [{"stream": "stdout", "text": "x"}]}).to_string();
    let usage = json!({"model": "m", "inputTokens": 1, "outputTokens": 1}).to_string();
    let finish = json!({"status": "succeeded"}).to_string();
    for (method, path, body) in [
        (Method::GET, format!("/runs/{run}"), None),
        (Method::GET, format!("/runs/{run}/log"), None),
        (Method::GET, format!("/runs/{run}/log/stream"), None),
        (Method::POST, format!("/runs/{run}/log"), Some(log.as_str())),
        (
            Method::POST,
            format!("/runs/{run}/usage"),
            Some(usage.as_str()),
        ),
        (Method::POST, format!("/runs/{run}/heartbeat"), Some("")),
        (
            Method::POST,
            format!("/runs/{run}/finish"),
            Some(finish.as_str()),
        ),
        (Method::POST, format!("/runs/{run}/stop"), Some("")),
    ] {
        let reply = send(app.signed(theirs, method.clone(), &path, body)).await;
        assert_error_code(&reply, 404, "run_not_found");
        // As an unknown id is.
        let unknown = path.replace(&run, &Uuid::now_v7().to_string());
        let reply = send(app.signed(theirs, method, &unknown, body)).await;
        assert_error_code(&reply, 404, "run_not_found");
    }
    for path in ["/runs", "/usage"] {
        let reply = app.get(theirs, path).await;
        assert!(reply.list().is_empty(), "{path}: {}", reply.text);
    }
    let task_runs = app.get(theirs, &format!("/tasks/{task}/runs")).await;
    assert_error_code(&task_runs, 404, "task_not_found");
    let agent_usage = app
        .get(theirs, &format!("/agents/{}/usage", worker.uuid))
        .await;
    assert_error_code(&agent_usage, 404, "agent_not_found");
    // Untouched.
    let run = run_of(app, &app.org.hr, &run).await;
    assert_eq!(run["status"], "running");
    assert_eq!(run["stopRequested"], false);
}
