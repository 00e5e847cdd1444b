//! Usage reports paid from the agent's credits (decision D-106): the reported cost and
//! an unknown one, the default rate of 1,000 credits a dollar, the run's reservation
//! drawn first and released at the end, and a budget that runs out mid-run.

use serde_json::{Value, json};

use crate::economy_support::{ledger_of, of_type, sum_of};
use crate::helpers::{TestApp, assert_error_code, str_of};
use crate::runs_support::{
    funded_worker, money_of, report, run_of, running, start_reply, task_in_progress,
};

api_tests!(
    reported_costs_are_paid_and_unknown_ones_cost_nothing,
    a_reservation_is_drawn_first_and_released_at_the_end,
    a_budget_running_out_mid_run_stops_it_and_holds_the_agent_back,
);

async fn reported_costs_are_paid_and_unknown_ones_cost_nothing(app: &TestApp) {
    let (worker, _task, run) = running(app, 5_000, &json!({})).await;
    let (before, _, _) = money_of(app, &worker).await;
    // One dollar is 1,000 credits.
    let paid = report(
        app,
        &worker,
        &run,
        &json!({"model": "m", "inputTokens": 1000, "outputTokens": 10, "costMicrousd": 1_000_000}),
    )
    .await;
    assert_eq!(paid.status.as_u16(), 201, "{}", paid.text);
    assert_eq!(paid.body["report"]["credits"], 1_000);
    // No cost given and no price table: unknown, no credits, its tokens unpriced.
    let unknown = report(
        app,
        &worker,
        &run,
        &json!({"model": "other", "inputTokens": 300, "outputTokens": 20, "cacheWriteTokens": 5}),
    )
    .await;
    assert_eq!(unknown.status.as_u16(), 201, "{}", unknown.text);
    assert_eq!(unknown.body["report"]["costMicrousd"], Value::Null);
    assert_eq!(unknown.body["report"]["credits"], 0);
    let usage = &unknown.body["data"]["usage"];
    assert_eq!(usage["costMicrousd"], 1_000_000);
    assert_eq!(usage["unpricedTokens"], 325);
    assert_eq!(usage["credits"], 1_000);
    assert_eq!(usage["reports"], 2);
    // Costs add up before they turn into credits: three reports of 400 millionths are
    // 1.2 credits, so 2, not 3.
    for _ in 0..3 {
        let small = report(
            app,
            &worker,
            &run,
            &json!({"model": "m", "inputTokens": 1, "outputTokens": 1, "costMicrousd": 400}),
        )
        .await;
        assert_eq!(small.status.as_u16(), 201, "{}", small.text);
    }
    let after = run_of(app, &worker, &run).await;
    assert_eq!(after["usage"]["credits"], 1_002, "{after}");
    let (balance, _, exhausted) = money_of(app, &worker).await;
    assert_eq!(balance, before - 1_002);
    assert!(!exhausted);
    // The ledger says the same, row for row, as `usage` entries tied to the task.
    let ledger = ledger_of(app, &worker, &worker).await;
    assert_eq!(sum_of(&ledger, "usage"), -1_002);
    assert_eq!(of_type(&ledger, "usage").len(), 3, "{ledger:?}");
    let by_model = app
        .get(&worker, &format!("/agents/{}/usage", worker.uuid))
        .await;
    let groups: Vec<(String, Value, Value)> = by_model
        .list()
        .iter()
        .map(|g| {
            (
                str_of(g, "key"),
                g["costMicrousd"].clone(),
                g["unpricedTokens"].clone(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            ("m".to_owned(), json!(1_001_200), json!(0)),
            ("other".to_owned(), Value::Null, json!(325)),
        ]
    );
}

async fn a_reservation_is_drawn_first_and_released_at_the_end(app: &TestApp) {
    let worker = funded_worker(app, 100).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let task = task_in_progress(app, &worker).await;
    // More than it may spend cannot be held.
    let greedy = start_reply(app, &worker, &task, &json!({"reserveCredits": balance + 1})).await;
    assert_error_code(&greedy, 409, "budget_exhausted");
    let started = start_reply(app, &worker, &task, &json!({"reserveCredits": 60})).await;
    assert_eq!(started.status.as_u16(), 201, "{}", started.text);
    let run = str_of(&started.body["data"], "id");
    assert_eq!(started.body["data"]["reservedCredits"], 60);
    assert_eq!(money_of(app, &worker).await, (balance, 60, false));
    // What is held cannot be spent elsewhere.
    let spend = json!({"amount": balance - 59}).to_string();
    let refused = app.post(&worker, "/agents/credits/spend", &spend).await;
    assert_eq!(refused.status.as_u16(), 409, "{}", refused.text);
    // 20 credits of usage come out of the reservation.
    let paid = report(
        app,
        &worker,
        &run,
        &json!({"model": "m", "inputTokens": 1, "outputTokens": 1, "costMicrousd": 20_000}),
    )
    .await;
    assert_eq!(paid.body["report"]["credits"], 20, "{}", paid.text);
    assert_eq!(paid.body["data"]["reservedCredits"], 40);
    assert_eq!(money_of(app, &worker).await, (balance - 20, 40, false));
    // The end releases the rest.
    let done = app
        .post(
            &worker,
            &format!("/runs/{run}/finish"),
            r#"{"status":"succeeded"}"#,
        )
        .await;
    assert_eq!(done.data()["reservedCredits"], 0);
    assert_eq!(money_of(app, &worker).await, (balance - 20, 0, false));
}

async fn a_budget_running_out_mid_run_stops_it_and_holds_the_agent_back(app: &TestApp) {
    let worker = funded_worker(app, 0).await;
    let (balance, _, _) = money_of(app, &worker).await;
    let task = task_in_progress(app, &worker).await;
    let second = task_in_progress(app, &worker).await;
    let started = start_reply(app, &worker, &task, &json!({})).await;
    let run = str_of(&started.body["data"], "id");
    // It costs 5 credits more than the agent holds.
    let cost = (balance + 5) * 1_000;
    let over = report(
        app,
        &worker,
        &run,
        &json!({"model": "m", "inputTokens": 1, "outputTokens": 1, "costMicrousd": cost}),
    )
    .await;
    assert_eq!(over.status.as_u16(), 201, "{}", over.text);
    assert_eq!(over.body["report"]["credits"], balance);
    assert_eq!(over.body["report"]["unfundedCredits"], 5);
    let data = &over.body["data"];
    assert_eq!(data["stopRequested"], true);
    assert_eq!(data["stopReason"], "budget");
    assert_eq!(data["usage"]["unfundedCredits"], 5);
    assert_eq!(money_of(app, &worker).await, (0, 0, true));
    let exhausted = app
        .events_of_type(&app.org.hr, &worker.uuid.to_string(), "budget.exhausted")
        .await;
    assert_eq!(exhausted.len(), 1, "{exhausted:?}");
    assert_eq!(exhausted[0]["payload"]["unfundedCredits"], 5);
    let stops = app
        .events_of_type(&app.org.hr, &run, "run.stop_requested")
        .await;
    assert_eq!(stops.len(), 1);
    // Held back: no claim, no run.
    app.task_titled(&app.org.hr, "claimable").await;
    let claim = app.post(&worker, "/tasks/claim", "").await;
    assert_error_code(&claim, 409, "budget_exhausted");
    let another = start_reply(app, &worker, &second, &json!({})).await;
    assert_error_code(&another, 409, "budget_exhausted");
    // Later reports are recorded, all unfunded, and the run is asked to stop once.
    let more = report(
        app,
        &worker,
        &run,
        &json!({"model": "m", "inputTokens": 1, "outputTokens": 1, "costMicrousd": 3_000}),
    )
    .await;
    assert_eq!(more.body["report"]["unfundedCredits"], 3, "{}", more.text);
    assert_eq!(
        app.events_of_type(&app.org.hr, &run, "run.stop_requested")
            .await
            .len(),
        1
    );
    // The balance never went below zero; funded again, it works again.
    assert_eq!(money_of(app, &worker).await.0, 0);
    crate::agent_support::grant(app, &app.org, &worker, 50).await;
    let finished = app
        .post(
            &worker,
            &format!("/runs/{run}/finish"),
            r#"{"status":"stopped"}"#,
        )
        .await;
    assert_eq!(finished.data()["status"], "stopped");
    let again = start_reply(app, &worker, &second, &json!({})).await;
    assert_eq!(again.status.as_u16(), 201, "{}", again.text);
}
