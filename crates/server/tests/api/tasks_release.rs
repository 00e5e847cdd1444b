//! `POST /tasks/:id/release`: the agent holding a task gives it back to the pool, as the
//! lease sweep does for a silent agent: `todo`, unassigned, no lease, claimable again;
//! the claim's reservation back; an open run asked to stop. Anyone else, a task not in
//! progress, a user, a bad body: refused with nothing changed. Of racing releases, one
//! wins. The MCP tool `release_task` does the same.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Agent, Reply, TestApp, assert_error, assert_error_code, send, str_of};
use crate::mcp::{call, names, tool};
use crate::runs_support::{funded_worker, money_of, run_of, start_run};

api_tests!(
    a_released_task_is_claimable_again_and_its_reservation_back,
    an_open_run_of_a_released_task_is_asked_to_stop,
    refused_releases_change_nothing,
    racing_releases_of_one_task_let_one_win,
    an_agent_releases_through_mcp,
);

/// `POST /tasks/:task/release` as `agent` with the raw `body` ("" for none).
async fn release(app: &TestApp, agent: &Agent, task: &str, body: &str) -> Reply {
    app.post(agent, &format!("/tasks/{task}/release"), body)
        .await
}

/// A new task (created by HR) claimed by `agent` reserving `credits`; answers its id.
async fn claimed(app: &TestApp, agent: &Agent, credits: i64) -> String {
    let task = app.task_titled(&app.org.hr, "to give back").await;
    let body = json!({"reserveCredits": credits}).to_string();
    let reply = app.post(agent, "/tasks/claim", &body).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(str_of(reply.data(), "id"), task);
    task
}

/// The task as HR reads it.
async fn task_of(app: &TestApp, task: &str) -> Value {
    app.get(&app.org.hr, &format!("/tasks/{task}"))
        .await
        .data()
        .clone()
}

/// The `(from, to, reason)` of the task's transitions, oldest first.
async fn moves_of(app: &TestApp, task: &str) -> Vec<(String, String, Value)> {
    let mut events = app
        .events_of_type(&app.org.hr, task, "task.transitioned")
        .await;
    events.reverse();
    events
        .iter()
        .map(|e| {
            let p = &e["payload"];
            (str_of(p, "from"), str_of(p, "to"), p["reason"].clone())
        })
        .collect()
}

async fn a_released_task_is_claimable_again_and_its_reservation_back(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let task = claimed(app, &worker, 40).await;
    assert_eq!(money_of(app, &worker).await, (balance, 40, false));

    let reply = release(app, &worker, &task, r#"{"reason": "  tests failed  "}"#).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let data = reply.data();
    assert_eq!(str_of(data, "id"), task);
    assert_eq!(data["status"], "todo");
    assert_eq!(data["assigneeId"], Value::Null);
    assert!(data.get("leaseExpiresAt").is_none(), "{data}");
    assert_eq!(&task_of(app, &task).await, data, "stored as answered");
    assert_eq!(
        money_of(app, &worker).await,
        (balance, 0, false),
        "the reservation went back, nothing spent"
    );

    // The transition, by the agent, with the trimmed reason; no new kind of event.
    let events = app.events_of(&app.org.hr, &task).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "task.transitioned",
            "task.transitioned",
            "task.claimed",
            "task.assigned",
            "task.created"
        ],
        "newest first"
    );
    assert_eq!(events[0]["actorId"], worker.uuid.to_string());
    assert_eq!(
        events[0]["payload"],
        json!({"from": "in_progress", "to": "todo", "reason": "released: tests failed"})
    );

    // Any agent may claim it now; a release without a body (or a blank reason) says
    // just "released".
    let next = app.worker(&app.org).await;
    let again = app.post(&next, "/tasks/claim", "").await;
    assert_eq!(again.status.as_u16(), 200, "{}", again.text);
    assert_eq!(str_of(again.data(), "id"), task);
    assert_eq!(str_of(again.data(), "assigneeId"), next.uuid.to_string());
    let plain = release(app, &next, &task, "").await;
    assert_eq!(plain.status.as_u16(), 200, "{}", plain.text);
    app.post(&next, "/tasks/claim", "{}").await;
    let blank = release(app, &next, &task, r#"{"reason": "   "}"#).await;
    assert_eq!(blank.status.as_u16(), 200, "{}", blank.text);
    let reasons: Vec<Value> = moves_of(app, &task)
        .await
        .into_iter()
        .map(|(_, _, reason)| reason)
        .collect();
    assert_eq!(
        reasons,
        [
            json!("claimed"),
            json!("released: tests failed"),
            json!("claimed"),
            json!("released"),
            json!("claimed"),
            json!("released"),
        ]
    );
    let longest = "r".repeat(2000);
    app.post(&next, "/tasks/claim", "").await;
    let long = release(app, &next, &task, &json!({"reason": longest}).to_string()).await;
    assert_eq!(long.status.as_u16(), 200, "{}", long.text);
    let last = moves_of(app, &task).await.pop().unwrap();
    assert_eq!(last.2, json!(format!("released: {longest}")));
}

async fn an_open_run_of_a_released_task_is_asked_to_stop(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let task = claimed(app, &worker, 30).await;
    let run = start_run(app, &worker, &task, &json!({"reserveCredits": 5})).await;
    let run = str_of(&run, "id");
    assert_eq!(money_of(app, &worker).await, (balance, 35, false));

    let reply = release(app, &worker, &task, "").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(reply.data()["status"], "todo");
    let asked = run_of(app, &worker, &run).await;
    assert_eq!(
        asked["status"], "running",
        "the worker finishes it: {asked}"
    );
    assert_eq!(asked["stopRequested"], true);
    assert_eq!(asked["stopReason"], "reassigned");
    let events = app
        .events_of_type(&app.org.hr, &run, "run.stop_requested")
        .await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["payload"]["reason"], "reassigned");
    assert_eq!(events[0]["actorId"], worker.uuid.to_string());

    // The run keeps what it holds until it finishes; then all is back.
    assert_eq!(money_of(app, &worker).await, (balance, 35, false));
    let finish = app
        .post(
            &worker,
            &format!("/runs/{run}/finish"),
            r#"{"status": "stopped"}"#,
        )
        .await;
    assert_eq!(finish.status.as_u16(), 200, "{}", finish.text);
    assert_eq!(money_of(app, &worker).await, (balance, 0, false));
    assert_eq!(task_of(app, &task).await["status"], "todo");
}

async fn refused_releases_change_nothing(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let task = claimed(app, &worker, 20).await;
    let held = task_of(app, &task).await;
    let money = money_of(app, &worker).await;
    let events = app.events_of(&app.org.hr, &task).await.len();

    let stranger = app.worker(&app.org).await;
    let reply = release(app, &stranger, &task, "").await;
    assert_error_code(&reply, 409, "not_task_assignee");
    assert_error(&reply, 409, "only its assignee starts a run or releases it");
    let observer = app.add_agent(&app.org, "observer", "active").await;
    assert_error_code(
        &release(app, &observer, &task, "").await,
        403,
        "observer_read_only",
    );
    let outsider = app.worker(&app.other).await;
    assert_error_code(
        &release(app, &outsider, &task, "").await,
        404,
        "task_not_found",
    );
    let missing = uuid::Uuid::now_v7();
    assert_error_code(
        &release(app, &worker, &missing.to_string(), "").await,
        404,
        "task_not_found",
    );
    let path = format!("/tasks/{task}/release");
    let admin = app.admin_token(&app.org).await;
    let writer = app.api_key(&admin, &["read", "write"]).await;
    for token in [&admin, &writer] {
        let user = send(app.bearer(token, Method::POST, &path, Some(&json!({})))).await;
        assert_error_code(&user, 403, "agent_required");
        assert_error(&user, 403, "only agents may do this");
    }
    for (body, code, message) in [
        (
            json!({"reason": "r".repeat(2001)}).to_string(),
            "validation_failed",
            "reason must be at most 2000 characters",
        ),
        (r#"{"reason": 7}"#.to_owned(), "validation_failed", "reason"),
        (
            r#"{"why": "x"}"#.to_owned(),
            "validation_failed",
            "property why should not exist",
        ),
        (
            r#"{"reason": "x""#.to_owned(),
            "invalid_json",
            "malformed JSON",
        ),
        (r#"["x"]"#.to_owned(), "invalid_json", "JSON object"),
    ] {
        let reply = release(app, &worker, &task, &body).await;
        assert_error(&reply, 400, message);
        assert_error_code(&reply, 400, code);
    }
    let bad_id = release(app, &worker, "not-a-uuid", "").await;
    assert_eq!(bad_id.status.as_u16(), 400, "{}", bad_id.text);
    assert_eq!(task_of(app, &task).await, held, "nothing changed");
    assert_eq!(money_of(app, &worker).await, money);
    assert_eq!(app.events_of(&app.org.hr, &task).await.len(), events);

    // Out of in_progress even the assignee cannot; nor is an unassigned task anyone's.
    let review = app
        .transition(&worker, &task, r#"{"status": "review"}"#)
        .await;
    assert_eq!(review.status.as_u16(), 200, "{}", review.text);
    let reply = release(app, &worker, &task, "").await;
    assert_error_code(&reply, 409, "task_not_in_progress");
    assert_error(&reply, 409, "Task is review");
    assert_eq!(task_of(app, &task).await["status"], "review");
    let open = app.task_titled(&app.org.hr, "nobody's").await;
    assert_error_code(
        &release(app, &worker, &open, "").await,
        409,
        "task_not_in_progress",
    );
}

async fn racing_releases_of_one_task_let_one_win(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let task = app.task_titled(&app.org.hr, "contested").await;
    let claim = json!({"reserveCredits": 10}).to_string();
    for round in 0..5 {
        let reply = app.post(&worker, "/tasks/claim", &claim).await;
        assert_eq!(str_of(reply.data(), "id"), task, "{}", reply.text);
        assert_eq!(money_of(app, &worker).await, (balance, 10, false));
        let racers = (0..4).map(|_| release(app, &worker, &task, ""));
        let replies = futures_util::future::join_all(racers).await;
        let won = replies.iter().filter(|r| r.status.as_u16() == 200).count();
        assert_eq!(won, 1, "round {round}: one release wins");
        for reply in replies.iter().filter(|r| r.status.as_u16() != 200) {
            assert_error_code(reply, 409, "task_not_in_progress");
        }
        let handed_back = moves_of(app, &task)
            .await
            .iter()
            .filter(|(from, to, _)| from == "in_progress" && to == "todo")
            .count();
        assert_eq!(handed_back, round + 1, "round {round}: one more hand-back");
        assert_eq!(
            money_of(app, &worker).await,
            (balance, 0, false),
            "round {round}: given back once"
        );
    }
}

async fn an_agent_releases_through_mcp(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let seen = names(&call(app, &worker, "tools/list", &json!({})).await);
    assert!(seen.iter().any(|n| n == "release_task"), "{seen:?}");
    let orchestrator = app.add_agent(&app.org, "orchestrator", "active").await;
    let seen = names(&call(app, &orchestrator, "tools/list", &json!({})).await);
    assert!(!seen.iter().any(|n| n == "release_task"), "{seen:?}");

    let task = claimed(app, &worker, 0).await;
    let stranger = app.worker(&app.org).await;
    let refused = tool(app, &stranger, "release_task", json!({"id": task})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["structuredContent"]["code"], "not_task_assignee",
        "{refused}"
    );
    let bad = tool(
        app,
        &worker,
        "release_task",
        json!({"id": task, "why": "x"}),
    )
    .await;
    assert_eq!(bad["structuredContent"]["statusCode"], 400, "{bad}");

    let released = tool(
        app,
        &worker,
        "release_task",
        json!({"id": task, "reason": "out of budget"}),
    )
    .await;
    assert_eq!(released["isError"], false, "{released}");
    let data = &released["structuredContent"]["data"];
    assert_eq!(data["status"], "todo", "{released}");
    assert_eq!(data["assigneeId"], Value::Null);
    let last = moves_of(app, &task).await.pop().unwrap();
    assert_eq!(last.2, "released: out of budget");
}
