//! Credits reserved at claim (decision D-106), end to end on both engines: `POST
//! /tasks/claim {reserveCredits}` holds them for the task, the first run on it takes them
//! over, its usage draws them first and its end releases the rest; a claim whose
//! reservation cannot be made is refused and changes nothing; a lapsed lease, a
//! reassignment or a cancellation gives them back; claims racing against one agent's
//! credits never hold more than it has.

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use reqwest::Method;
use serde_json::{Value, json};

use crate::economy_support::{ledger_of, sum_of};
use crate::helpers::{Agent, Reply, TestApp, assert_error, assert_error_code, send, str_of};
use crate::runs_support::{funded_worker, money_of, report, start_run};
use crate::task_support::{TestClock, task_of, task_service};

api_tests!(
    a_claims_reservation_moves_into_the_run_and_is_drawn_first,
    a_claim_that_cannot_reserve_is_refused_and_changes_nothing,
    a_task_leaving_its_agent_gives_the_claims_reservation_back,
    racing_claims_never_reserve_more_than_the_agent_has,
    racing_escalations_give_every_claims_reservation_back,
);

/// `POST /tasks/claim` as `agent` with `body`.
async fn claim(app: &TestApp, agent: &Agent, body: &Value) -> Reply {
    app.post(agent, "/tasks/claim", &body.to_string()).await
}

/// A new todo task (created by HR), claimed by `agent` reserving `credits` with a lease
/// of `lease` seconds; answers its id.
async fn claimed(app: &TestApp, agent: &Agent, credits: i64, lease: i64) -> String {
    let task = app.task_titled(&app.org.hr, "claimed").await;
    let reply = claim(
        app,
        agent,
        &json!({"reserveCredits": credits, "leaseSeconds": lease}),
    )
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(str_of(reply.data(), "id"), task);
    task
}

async fn a_claims_reservation_moves_into_the_run_and_is_drawn_first(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let task = claimed(app, &worker, 40, 900).await;
    assert_eq!(money_of(app, &worker).await, (balance, 40, false));
    // Held means not spendable elsewhere.
    let spend = json!({"amount": balance - 39}).to_string();
    let refused = app.post(&worker, "/agents/credits/spend", &spend).await;
    assert_eq!(refused.status.as_u16(), 409, "{}", refused.text);

    // The run holds the claim's 40 and its own 10.
    let run = start_run(app, &worker, &task, &json!({"reserveCredits": 10})).await;
    assert_eq!(run["reservedCredits"], 50, "{run}");
    let run = str_of(&run, "id");
    assert_eq!(money_of(app, &worker).await, (balance, 50, false));
    let started = app.events_of_type(&app.org.hr, &run, "run.started").await;
    assert_eq!(started[0]["payload"]["reservedCredits"], 50);

    // 45 credits of usage come out of what is held.
    let paid = report(
        app,
        &worker,
        &run,
        &json!({"model": "m", "inputTokens": 1, "outputTokens": 1, "costMicrousd": 45_000}),
    )
    .await;
    assert_eq!(paid.status.as_u16(), 201, "{}", paid.text);
    assert_eq!(paid.body["report"]["credits"], 45);
    assert_eq!(paid.body["data"]["reservedCredits"], 5);
    assert_eq!(money_of(app, &worker).await, (balance - 45, 5, false));

    // The end releases the rest; the ledger took exactly the usage.
    let done = app
        .post(
            &worker,
            &format!("/runs/{run}/finish"),
            r#"{"status":"succeeded"}"#,
        )
        .await;
    assert_eq!(done.data()["reservedCredits"], 0, "{}", done.text);
    assert_eq!(money_of(app, &worker).await, (balance - 45, 0, false));
    let ledger = ledger_of(app, &worker, &worker).await;
    assert_eq!(sum_of(&ledger, "usage"), -45);
    // A second run on the task holds only its own.
    let again = start_run(app, &worker, &task, &json!({"reserveCredits": 3})).await;
    assert_eq!(again["reservedCredits"], 3);
    assert_eq!(money_of(app, &worker).await, (balance - 45, 3, false));
}

async fn a_claim_that_cannot_reserve_is_refused_and_changes_nothing(app: &TestApp) {
    let worker = funded_worker(app, 30).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let task = app.task_titled(&app.org.hr, "too dear").await;
    let refused = claim(app, &worker, &json!({"reserveCredits": balance + 1})).await;
    assert_error_code(&refused, 409, "budget_exhausted");
    let unclaimed = task_of(app, &worker, &task).await;
    assert_eq!(unclaimed["status"], "todo", "{unclaimed}");
    assert_eq!(unclaimed["assigneeId"], Value::Null);
    assert!(unclaimed.get("leaseExpiresAt").is_none(), "{unclaimed}");
    let events = app.events_of(&app.org.hr, &task).await;
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types, ["task.created"]);
    assert_eq!(money_of(app, &worker).await, (balance, 0, false));

    // Bad reservations are bad requests, and change nothing either.
    for (body, message) in [
        (json!({"reserveCredits": -1}), "reserveCredits"),
        (json!({"reserveCredits": 1_000_000_001}), "reserveCredits"),
        (json!({"reserveCredits": "ten"}), "reserveCredits"),
    ] {
        assert_error(&claim(app, &worker, &body).await, 400, message);
    }
    assert_eq!(task_of(app, &worker, &task).await["status"], "todo");

    // What one claim holds, the next cannot have; exactly what is left can be.
    let first = claim(app, &worker, &json!({"reserveCredits": balance - 10})).await;
    assert_eq!(str_of(first.data(), "id"), task);
    let second = app.task_titled(&app.org.hr, "second").await;
    let over = claim(app, &worker, &json!({"reserveCredits": 11})).await;
    assert_error_code(&over, 409, "budget_exhausted");
    assert_eq!(task_of(app, &worker, &second).await["status"], "todo");
    let exact = claim(app, &worker, &json!({"reserveCredits": 10})).await;
    assert_eq!(str_of(exact.data(), "id"), second);
    assert_eq!(money_of(app, &worker).await, (balance, balance, false));
}

async fn a_task_leaving_its_agent_gives_the_claims_reservation_back(app: &TestApp) {
    let hr = &app.org.hr;
    let worker = funded_worker(app, 200).await;
    let other = funded_worker(app, 0).await;
    let (balance, _, _) = money_of(app, &worker).await;

    // A lapsed lease: the expiry job hands the task back and the credits with it.
    let lapsed = claimed(app, &worker, 20, 60).await;
    assert_eq!(money_of(app, &worker).await, (balance, 20, false));
    let clock = TestClock::at(time::OffsetDateTime::now_utc() + time::Duration::minutes(5));
    let tasks = task_service(&app.db().db, clock);
    let org = muster_domain::model::OrgId::from_uuid(app.org.id);
    let expired = tasks.expire_leases(Some(org), 100).await.unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(task_of(app, &worker, &lapsed).await["status"], "todo");
    assert_eq!(money_of(app, &worker).await, (balance, 0, false));
    // Taken back by someone else, so that the next claims get new tasks.
    let taken = app
        .post(
            hr,
            &format!("/tasks/{lapsed}/assign"),
            &json!({"assigneeId": other.uuid}).to_string(),
        )
        .await;
    assert_eq!(taken.status.as_u16(), 200, "{}", taken.text);

    // Reassigned: the new assignee's run takes nothing of it.
    let reassigned = claimed(app, &worker, 30, 900).await;
    assert_eq!(money_of(app, &worker).await, (balance, 30, false));
    let body = json!({"assigneeId": other.uuid}).to_string();
    let moved = app
        .post(hr, &format!("/tasks/{reassigned}/assign"), &body)
        .await;
    assert_eq!(moved.status.as_u16(), 200, "{}", moved.text);
    assert_eq!(money_of(app, &worker).await, (balance, 0, false));
    let theirs = start_run(app, &other, &reassigned, &json!({})).await;
    assert_eq!(theirs["reservedCredits"], 0);

    // Cancelled.
    let cancelled = claimed(app, &worker, 40, 900).await;
    assert_eq!(money_of(app, &worker).await, (balance, 40, false));
    let reply = app
        .transition(
            hr,
            &cancelled,
            r#"{"status":"cancelled","reason":"not needed"}"#,
        )
        .await;
    assert_eq!(reply.data()["status"], "cancelled", "{}", reply.text);
    assert_eq!(money_of(app, &worker).await, (balance, 0, false));

    // Done without a run.
    let done = claimed(app, &worker, 50, 900).await;
    let reply = app.transition(&worker, &done, r#"{"status":"done"}"#).await;
    assert_eq!(reply.data()["status"], "done", "{}", reply.text);
    let (after, reserved, exhausted) = money_of(app, &worker).await;
    assert_eq!((reserved, exhausted), (0, false));
    assert!(
        after >= balance,
        "a reservation spends nothing: {after} < {balance}"
    );
}

/// Claims racing against one agent's credits.
const CLAIMS: usize = 12;

async fn racing_claims_never_reserve_more_than_the_agent_has(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let (balance, _, _) = money_of(app, &worker).await;
    // Each claim holds a fifth of what the agent has, and a little more: four fit.
    let each = balance / 5 + 1;
    let fit = usize::try_from(balance / each).unwrap();
    assert!(fit < CLAIMS, "{balance} / {each}");
    let mut tasks = BTreeSet::new();
    for i in 0..CLAIMS {
        tasks.insert(app.task_titled(&app.org.hr, &format!("race {i}")).await);
    }
    let body = json!({"reserveCredits": each}).to_string();
    let requests = (0..CLAIMS).map(|_| {
        let request = app.signed(&worker, Method::POST, "/tasks/claim", Some(&body));
        async move { tokio::time::timeout(Duration::from_secs(60), send(request)).await }
    });
    let replies: Vec<_> = stream::iter(requests)
        .buffer_unordered(CLAIMS)
        .collect()
        .await;
    let mut won = BTreeSet::new();
    let mut refused = 0;
    for reply in replies {
        let reply = reply.expect("a claim hung");
        match reply.status.as_u16() {
            200 => {
                assert!(won.insert(str_of(reply.data(), "id")), "claimed twice");
            }
            409 => {
                assert_error_code(&reply, 409, "budget_exhausted");
                refused += 1;
            }
            other => panic!("{other}: {}", reply.text),
        }
    }
    assert_eq!((won.len(), refused), (fit, CLAIMS - fit));
    assert!(won.is_subset(&tasks));
    let held = i64::try_from(fit).unwrap() * each;
    assert!(held <= balance);
    assert_eq!(money_of(app, &worker).await, (balance, held, false));
    // Every task not won is still there to claim, untouched.
    for task in tasks.difference(&won) {
        let left = task_of(app, &worker, task).await;
        assert_eq!(left["status"], "todo", "{left}");
        assert_eq!(left["assigneeId"], Value::Null);
    }
    // A run on a won task takes its claim's share.
    let first = won.iter().next().unwrap();
    let run = start_run(app, &worker, first, &json!({})).await;
    assert_eq!(run["reservedCredits"], each);
    assert_eq!(money_of(app, &worker).await, (balance, held, false));
}

/// Escalations racing over one agent's reserved tasks.
const ESCALATIONS: usize = 6;

async fn racing_escalations_give_every_claims_reservation_back(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let mut tasks = Vec::new();
    for _ in 0..ESCALATIONS {
        tasks.push(claimed(app, &worker, 5, 900).await);
    }
    let held = 5 * i64::try_from(ESCALATIONS).unwrap();
    assert_eq!(money_of(app, &worker).await, (balance, held, false));
    // Every hand-over gives the holder its credits back at the same time: none may
    // deadlock against another (each locks the holder for update from the start).
    let body = json!({"reason": "MANUAL"}).to_string();
    let requests = tasks.iter().map(|task| {
        let path = format!("/tasks/{task}/escalate");
        let request = app.signed(&app.org.hr, Method::POST, &path, Some(&body));
        async move { tokio::time::timeout(Duration::from_secs(60), send(request)).await }
    });
    let replies: Vec<_> = stream::iter(requests)
        .buffer_unordered(ESCALATIONS)
        .collect()
        .await;
    for reply in replies {
        let reply = reply.expect("an escalation hung");
        assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    }
    assert_eq!(money_of(app, &worker).await, (balance, 0, false));
    for task in &tasks {
        let moved = task_of(app, &worker, task).await;
        assert_ne!(
            moved["assigneeId"],
            json!(worker.uuid.to_string()),
            "{moved}"
        );
    }
}
