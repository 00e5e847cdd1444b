//! 200 usage reports at once against one agent's credits (decision D-106), on both
//! engines: four runs of the same agent, fifty reports each, all in flight together,
//! costing more than the agent holds. Afterwards the books must be exact: what the
//! usage rows charged is what the ledger took and what the balance lost, no balance went
//! below zero, and charged plus unfunded is what the usage cost.

use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use reqwest::Method;
use serde_json::json;

use crate::economy_support::{ledger_of, sum_of};
use crate::helpers::{TestApp, send, str_of};
use crate::runs_support::{funded_worker, money_of, run_of, start_run, task_in_progress};

api_tests!(two_hundred_concurrent_reports_keep_the_books_exact);

/// Runs of the agent.
const RUNS: usize = 4;
/// Reports per run.
const REPORTS: usize = 50;
/// What each report costs: 3 credits at 1,000 a dollar.
const COST: i64 = 3_000;
/// What the agent is granted: less than the 600 credits the reports come to.
const FUNDS: i64 = 400;

async fn two_hundred_concurrent_reports_keep_the_books_exact(app: &TestApp) {
    let worker = funded_worker(app, FUNDS).await;
    let (start, _, _) = money_of(app, &worker).await;
    let mut runs = Vec::new();
    for _ in 0..RUNS {
        let task = task_in_progress(app, &worker).await;
        runs.push(str_of(
            &start_run(app, &worker, &task, &json!({})).await,
            "id",
        ));
    }
    let requests = (0..RUNS * REPORTS).map(|i| {
        let run = runs[i % RUNS].clone();
        let body = json!({"model": format!("model-{}", i % 3), "inputTokens": 10,
            "outputTokens": 5, "costMicrousd": COST, "reportId": format!("r{i}")})
        .to_string();
        let request = app.signed(
            &worker,
            Method::POST,
            &format!("/runs/{run}/usage"),
            Some(&body),
        );
        async move { tokio::time::timeout(Duration::from_secs(60), send(request)).await }
    });
    let replies: Vec<_> = stream::iter(requests)
        .buffer_unordered(RUNS * REPORTS)
        .collect()
        .await;
    let mut charged = 0;
    let mut unfunded = 0;
    for reply in replies {
        let reply = reply.expect("a report hung");
        assert_eq!(reply.status.as_u16(), 201, "{}", reply.text);
        let recorded = &reply.body["report"];
        charged += recorded["credits"].as_i64().unwrap();
        unfunded += recorded["unfundedCredits"].as_i64().unwrap();
    }
    let owed = i64::try_from(RUNS * REPORTS).unwrap() * COST / 1_000;
    assert_eq!(
        charged + unfunded,
        owed,
        "charged {charged}, unfunded {unfunded}"
    );
    assert_eq!(charged, start, "everything the agent held was spent");
    let (balance, reserved, exhausted) = money_of(app, &worker).await;
    assert_eq!((balance, reserved, exhausted), (0, 0, true));
    // The ledger took exactly what the reports charged.
    let ledger = ledger_of(app, &worker, &worker).await;
    assert_eq!(sum_of(&ledger, "usage"), -charged);
    // The usage rows, added up, say the same; so do the runs.
    let summary = app.get(&worker, "/usage?groupBy=agent").await;
    let group = &summary.list()[0];
    assert_eq!(group["credits"], charged, "{}", summary.text);
    assert_eq!(group["unfundedCredits"], unfunded);
    assert_eq!(group["reports"], RUNS * REPORTS);
    assert_eq!(group["runs"], RUNS);
    assert_eq!(group["costMicrousd"], owed * 1_000);
    let by_model = app.get(&worker, "/usage?groupBy=model").await;
    let total: i64 = by_model
        .list()
        .iter()
        .map(|g| g["credits"].as_i64().unwrap())
        .sum();
    assert_eq!(total, charged);
    let mut from_runs = (0, 0, 0);
    for run in &runs {
        let run = run_of(app, &worker, run).await;
        from_runs.0 += run["usage"]["credits"].as_i64().unwrap();
        from_runs.1 += run["usage"]["unfundedCredits"].as_i64().unwrap();
        from_runs.2 += run["usage"]["reports"].as_i64().unwrap();
        assert_eq!(run["usage"]["reports"], REPORTS, "{run}");
    }
    assert_eq!(
        from_runs,
        (charged, unfunded, i64::try_from(RUNS * REPORTS).unwrap())
    );
}
