//! The operator's price table and rate (decision D-106): a deployment started with
//! `MUSTER_PRICE_TABLE` (here a file with `model-a` and a `prefix` entry) and
//! `MUSTER_CREDITS_PER_USD` 2,000 prices the reports that carry no cost, by exact name
//! or the longest prefix; a reported cost wins; an unpriced model costs nothing known.

use serde_json::{Value, json};

use crate::helpers::TestApp;
use crate::runs_support::{report, running};

api_tests!(with crate::runs_support::priced(); the_price_table_prices_reports_without_a_cost);

async fn the_price_table_prices_reports_without_a_cost(app: &TestApp) {
    let (worker, _task, run) = running(app, 10_000, &json!({})).await;
    // model-a: 1,000 x $3 + 200 x $15 + 10,000 x $0.30 per million = 9,000 millionths,
    // 18 credits at 2,000 a dollar.
    let priced = report(
        app,
        &worker,
        &run,
        &json!({"model": "model-a", "inputTokens": 1_000, "outputTokens": 200,
            "cacheReadTokens": 10_000}),
    )
    .await;
    assert_eq!(priced.status.as_u16(), 201, "{}", priced.text);
    assert_eq!(priced.body["report"]["costMicrousd"], 9_000);
    assert_eq!(priced.body["report"]["credits"], 18);
    // `prefix-2025` is priced by the `prefix` entry: 1,000 x $1 + 1,000 x $2 = 3,000
    // millionths; the run's cost so far is 12,000, 24 credits: 6 more.
    let by_prefix = report(
        app,
        &worker,
        &run,
        &json!({"model": "prefix-2025", "inputTokens": 1_000, "outputTokens": 1_000}),
    )
    .await;
    assert_eq!(
        by_prefix.body["report"]["costMicrousd"], 3_000,
        "{}",
        by_prefix.text
    );
    assert_eq!(by_prefix.body["report"]["credits"], 6);
    // A reported cost wins over the table.
    let reported = report(
        app,
        &worker,
        &run,
        &json!({"model": "model-a", "inputTokens": 1_000_000, "outputTokens": 0,
            "costMicrousd": 500}),
    )
    .await;
    assert_eq!(reported.body["report"]["costMicrousd"], 500);
    assert_eq!(reported.body["report"]["credits"], 1);
    // Neither reported nor in the table: unknown.
    let unknown = report(
        app,
        &worker,
        &run,
        &json!({"model": "mystery", "inputTokens": 10, "outputTokens": 10}),
    )
    .await;
    assert_eq!(unknown.body["report"]["costMicrousd"], Value::Null);
    assert_eq!(unknown.body["report"]["credits"], 0);
    let usage = &unknown.body["data"]["usage"];
    assert_eq!(usage["costMicrousd"], 12_500);
    assert_eq!(usage["credits"], 25);
    assert_eq!(usage["unpricedTokens"], 20);
}
