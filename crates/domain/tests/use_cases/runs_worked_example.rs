//! The worked example of docs/runs.md ("A worked example"), number for number, on the
//! in-memory store.

use crate::common::economy::checked;
use crate::common::runs::{claim_request, claimed, code, events_of, finish, funded, priced, start};
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{AgentId, RunStatus, StopReason};
use muster_domain::ports::{UsageGroupBy, UsageQuery};
use muster_domain::rules::budget::spendable;
use muster_domain::service::{NewUsage, RunService, StartRun};
use serde_json::json;
use time::Duration;

fn query(group_by: UsageGroupBy, agent: Option<AgentId>) -> UsageQuery {
    UsageQuery {
        group_by,
        agent,
        task: None,
        from: None,
        to: None,
    }
}

/// A report of `model`: input, output and cache-read tokens, and its cost if known.
fn report_of(model: &str, [input, output, cache_read]: [i64; 3], cost: Option<i64>) -> NewUsage {
    NewUsage {
        model: model.into(),
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cost_microusd: cost,
        ..NewUsage::default()
    }
}

#[test]
fn the_worked_example_of_docs_runs_md() {
    // The operator's price table, 1,000 credits per dollar. `coder` has 500 credits and
    // a daily budget of 400.
    let world = World::new();
    let runs = priced(&world);
    let (coder, actor) = funded(&world, "coder", 500);
    block_on(world.agents.set_budget(&world.hr, coder.id, 400, false)).unwrap();
    world.task("the task");

    // 1. It claims a task and starts a run reserving 100: 300 left to spend elsewhere.
    let task = claimed(&world, &actor, 3_600);
    let run = block_on(runs.start(
        &actor,
        task.id,
        StartRun {
            adapter: Some("claude-code".into()),
            model: Some("claude-sonnet-4-5".into()),
            reserve_credits: 100,
            trace_id: None,
        },
    ))
    .unwrap();
    assert_eq!(run.reserved_credits, 100);
    let books = checked(&world);
    assert_eq!(spendable(books.agent(coder.id)), 300);
    assert_eq!(books.agent(coder.id).reserved_credits, 100);

    // 2. Claude Code reports $0.15: 150 credits, 100 from the reservation, 50 free.
    let second = block_on(runs.report_usage(
        &actor,
        run.id,
        report_of("claude-sonnet-4-5", [20_000, 4_000, 100_000], Some(150_000)),
    ))
    .unwrap();
    let report = second.report.unwrap();
    assert_eq!((report.cost_microusd, report.credits), (Some(150_000), 150));
    assert_eq!(second.run.reserved_credits, 0);
    let agent = checked(&world).agent(coder.id).clone();
    assert_eq!(agent.current_balance, 350);
    assert_eq!(agent.budget_period_spent, 150);
    assert_eq!(agent.reserved_credits, 0);

    // 3. gpt-5 without a cost: the table prices it at 130,000 millionths; the run's
    //    priced total is 280 credits, of which 150 were billed: 130 more.
    let third =
        block_on(runs.report_usage(&actor, run.id, report_of("gpt-5", [40_000, 8_000, 0], None)))
            .unwrap();
    let report = third.report.unwrap();
    assert_eq!((report.cost_microusd, report.credits), (Some(130_000), 130));
    assert_eq!(third.run.usage.totals.cost_microusd, Some(280_000));
    let agent = checked(&world).agent(coder.id).clone();
    assert_eq!(agent.current_balance, 220);
    assert_eq!(agent.budget_period_spent, 280);

    // 4. $0.25 = 250 credits with 120 left in today's budget: 120 paid, 130 unfunded,
    //    the run asked to stop (budget).
    let fourth = block_on(runs.report_usage(
        &actor,
        run.id,
        report_of("claude-sonnet-4-5", [30_000, 10_000, 0], Some(250_000)),
    ))
    .unwrap();
    let report = fourth.report.unwrap();
    assert_eq!((report.credits, report.unfunded_credits), (120, 130));
    assert!(fourth.run.stop_requested);
    assert_eq!(fourth.run.stop_reason, Some(StopReason::Budget));
    let agent = checked(&world).agent(coder.id).clone();
    assert_eq!(agent.budget_period_spent, 400);
    assert_eq!(agent.current_balance, 100);
    assert!(agent.budget_exhausted);
    assert_eq!(
        events_of(&world, "budget.exhausted", coder.id.as_uuid())[0].payload,
        json!({"runId": run.id, "unfundedCredits": 130, "balanceAfter": 100})
    );
    // ... and `coder` cannot claim or start another run.
    world.task("another task");
    assert_eq!(
        code(block_on(world.tasks.claim(&actor, claim_request(3_600)))),
        "budget_exhausted"
    );

    // 5. The worker stops Claude Code and finishes the run `stopped`: 3 reports, cost
    //    530,000 millionths, 400 credits spent, 130 unfunded.
    let done = finish(&world, &actor, run.id, RunStatus::Stopped).unwrap();
    let totals = &done.usage.totals;
    assert_eq!(totals.reports, 3);
    assert_eq!(totals.cost_microusd, Some(530_000));
    assert_eq!(totals.credits, 400);
    assert_eq!(totals.unfunded_credits, 130);
    assert_eq!(totals.unpriced_tokens, 0);
    assert_eq!(code(start(&world, &actor, &task, 0)), "budget_exhausted");
    let finished = events_of(&world, "run.finished", run.id.as_uuid());
    assert_eq!(finished[0].payload["usage"]["credits"], 400);
    assert_eq!(finished[0].payload["usage"]["unfundedCredits"], 130);
    let books = checked(&world);
    assert_eq!(books.spent(), 400, "usage is a spend: the books balance");

    summaries_show_the_models_apart_and_the_days_total(&world, &runs, coder.id);

    // Tomorrow's budget lets it work again.
    world.clock.advance(Duration::days(1));
    assert!(
        block_on(world.tasks.claim(&actor, claim_request(3_600)))
            .unwrap()
            .is_some()
    );
    checked(&world);
}

/// `GET /usage?groupBy=model` shows the two models apart, and
/// `GET /agents/<coder>/usage?groupBy=day` the day's total.
fn summaries_show_the_models_apart_and_the_days_total(
    world: &World,
    runs: &RunService,
    coder: AgentId,
) {
    // GET /usage?groupBy=model shows the two models apart ...
    let by_model = block_on(runs.usage(&world.admin, &query(UsageGroupBy::Model, None))).unwrap();
    let models: Vec<_> = by_model
        .iter()
        .map(|g| {
            (
                g.key.as_str(),
                g.totals.reports,
                g.totals.cost_microusd,
                g.totals.credits,
                g.totals.unfunded_credits,
            )
        })
        .collect();
    assert_eq!(
        models,
        [
            ("claude-sonnet-4-5", 2, Some(400_000), 270, 130),
            ("gpt-5", 1, Some(130_000), 130, 0)
        ]
    );
    // ... and GET /agents/<coder>/usage?groupBy=day the day's total.
    let by_day =
        block_on(runs.usage(&world.admin, &query(UsageGroupBy::Day, Some(coder)))).unwrap();
    assert_eq!(by_day.len(), 1);
    assert_eq!(by_day[0].key, "2026-03-02");
    assert_eq!(by_day[0].totals.cost_microusd, Some(530_000));
    assert_eq!(by_day[0].totals.credits, 400);
    assert_eq!(by_day[0].totals.unfunded_credits, 130);
    assert_eq!((by_day[0].totals.reports, by_day[0].runs), (3, 1));
}
