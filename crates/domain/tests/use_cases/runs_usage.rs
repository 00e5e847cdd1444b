//! Usage reports on the in-memory store (decision D-106): priced as reported, else by
//! the price table, else unknown; billed on the run's running total; paid from the
//! reservation first; a hard stop when the agent cannot pay; a repeated `reportId`
//! counted once; the books balanced throughout.

use crate::common::economy::{checked, grant};
use crate::common::runs::{
    claim_request, code, events_of, finish, funded, priced, report, reread, running, start,
    task_for, usage,
};
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{CreditKind, RunStatus, StopReason};
use muster_domain::ports::{RunRepository, UsageGroupBy, UsageQuery};
use muster_domain::service::NewUsage;
use serde_json::json;
use time::Duration;

#[test]
fn a_repeated_report_id_is_counted_once() {
    let world = World::new();
    let (me, actor, _, run) = running(&world, "resender", 100);
    let once = NewUsage {
        report_id: Some("turn-1".into()),
        ..usage("gpt-5", 10, 5, Some(2_000))
    };
    let first = report(&world.runs, &actor, run.id, once.clone()).unwrap();
    let recorded = first.report.unwrap();
    assert_eq!(recorded.report_id.as_deref(), Some("turn-1"));
    assert_eq!(recorded.credits, 2);
    let again = report(&world.runs, &actor, run.id, once.clone()).unwrap();
    assert_eq!(again.report, None, "already counted");
    assert_eq!(again.run, first.run);
    assert_eq!(reread(&world, run.id).usage.totals.reports, 1);
    assert_eq!(checked(&world).balance(me.id), 98);

    // Another id, or none, counts; the same id on another run counts there.
    report(
        &world.runs,
        &actor,
        run.id,
        NewUsage {
            report_id: Some("turn-2".into()),
            ..once.clone()
        },
    )
    .unwrap();
    report(
        &world.runs,
        &actor,
        run.id,
        usage("gpt-5", 1, 1, Some(1_000)),
    )
    .unwrap();
    let (_, other_actor, _, other) = running(&world, "other", 10);
    let there = report(&world.runs, &other_actor, other.id, once).unwrap();
    assert!(there.report.is_some());
    assert_eq!(reread(&world, run.id).usage.totals.reports, 3);
    assert_eq!(checked(&world).balance(me.id), 95);
}

#[test]
fn a_report_costs_what_it_says_else_what_the_table_says_else_nothing() {
    let world = World::new();
    let (me, actor, _, run) = running(&world, "counter", 1_000);
    let runs = priced(&world);

    let reported = report(&runs, &actor, run.id, usage("mystery", 1, 1, Some(5_000)))
        .unwrap()
        .report
        .unwrap();
    assert_eq!((reported.cost_microusd, reported.credits), (Some(5_000), 5));

    // 40,000 x 1.25 + 8,000 x 10 = 130,000 millionths; a dated name priced by its prefix.
    let tabled = report(
        &runs,
        &actor,
        run.id,
        usage("gpt-5-2025-08-07", 40_000, 8_000, None),
    )
    .unwrap()
    .report
    .unwrap();
    assert_eq!((tabled.cost_microusd, tabled.credits), (Some(130_000), 130));
    let cached = NewUsage {
        cache_read_tokens: 10_000,
        cache_write_tokens: 1_000,
        ..usage("claude-sonnet-4-5", 1_000, 200, None)
    };
    // 1,000 x 3 + 200 x 15 + 10,000 x 0.3 + 1,000 x 3.75 = 12,750.
    let with_cache = report(&runs, &actor, run.id, cached)
        .unwrap()
        .report
        .unwrap();
    assert_eq!(with_cache.cost_microusd, Some(12_750));

    let unknown = report(
        &runs,
        &actor,
        run.id,
        usage("gemini-2.5-pro", 700, 300, None),
    )
    .unwrap();
    let unknown_report = unknown.report.unwrap();
    assert_eq!(unknown_report.cost_microusd, None);
    assert_eq!(
        (unknown_report.credits, unknown_report.unfunded_credits),
        (0, 0)
    );
    let totals = &unknown.run.usage.totals;
    assert_eq!(totals.reports, 4);
    assert_eq!(totals.cost_microusd, Some(147_750));
    assert_eq!(totals.unpriced_tokens, 1_000);
    assert_eq!(totals.input_tokens, 1 + 40_000 + 1_000 + 700);
    assert_eq!(totals.cache_read_tokens, 10_000);
    // 147,750 millionths at 1,000 per dollar: 147.75, billed on the total as 148.
    assert_eq!(totals.credits, 148);
    let models: Vec<_> = unknown
        .run
        .usage
        .by_model
        .iter()
        .map(|m| (m.model.as_str(), m.totals.cost_microusd))
        .collect();
    assert_eq!(
        models,
        [
            ("mystery", Some(5_000)),
            ("gpt-5-2025-08-07", Some(130_000)),
            ("claude-sonnet-4-5", Some(12_750)),
            ("gemini-2.5-pro", None)
        ]
    );
    let books = checked(&world);
    assert_eq!(books.balance(me.id), 1_000 - 148);
    let usage_rows: Vec<_> = books
        .ledger
        .iter()
        .filter(|e| e.kind == CreditKind::Usage)
        .map(|e| e.amount)
        .collect();
    assert_eq!(usage_rows.iter().sum::<i64>(), -148);
    assert_eq!(usage_rows.len(), 3, "no row for a report that cost nothing");
    assert_eq!(books.spent(), 148, "usage is a spend");

    // Only the run's agent reports; the world's service has no table.
    let (_, other) = funded(&world, "other", 0);
    assert_eq!(
        code(report(&runs, &other, run.id, usage("gpt-5", 1, 1, None))),
        "run_agent_required"
    );
    let plain = report(&world.runs, &actor, run.id, usage("gpt-5", 1, 1, None)).unwrap();
    assert_eq!(plain.report.unwrap().cost_microusd, None);
}

#[test]
fn invalid_reports_are_refused() {
    let world = World::new();
    let (_, actor, _, run) = running(&world, "sloppy", 10);
    for bad in [
        usage("", 1, 1, None),
        usage(" ", 1, 1, None),
        usage("gpt-5", -1, 1, None),
        usage("gpt-5", 1, 1, Some(-1)),
        NewUsage {
            report_id: Some(String::new()),
            ..usage("gpt-5", 1, 1, None)
        },
        usage(&"m".repeat(101), 1, 1, None),
    ] {
        assert_eq!(
            code(report(&world.runs, &actor, run.id, bad.clone())),
            "validation_failed",
            "{bad:?}"
        );
    }
    assert_eq!(reread(&world, run.id).usage.totals.reports, 0);
}

#[test]
fn a_run_is_billed_on_its_running_total() {
    let world = World::new();
    let (me, actor, _, run) = running(&world, "nibbler", 10);
    let mut credits = Vec::new();
    for _ in 0..10 {
        let answer = report(&world.runs, &actor, run.id, usage("gpt-5", 1, 1, Some(100))).unwrap();
        credits.push(answer.report.unwrap().credits);
    }
    assert_eq!(credits, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let run = reread(&world, run.id);
    assert_eq!(run.usage.totals.cost_microusd, Some(1_000));
    assert_eq!(
        run.usage.totals.credits, 1,
        "ten tenths of a credit are one credit"
    );
    report(&world.runs, &actor, run.id, usage("gpt-5", 1, 1, Some(1))).unwrap();
    assert_eq!(
        reread(&world, run.id).usage.totals.credits,
        2,
        "a started credit"
    );
    assert_eq!(checked(&world).balance(me.id), 8);
}

#[test]
fn usage_draws_on_the_reservation_first_and_the_rest_is_released_at_finish() {
    let world = World::new();
    let (me, actor) = funded(&world, "planner", 100);
    let task = task_for(&world, me.id, &actor, "planned");
    let run = start(&world, &actor, &task, 60).unwrap();

    let answer = report(
        &world.runs,
        &actor,
        run.id,
        usage("gpt-5", 1, 1, Some(20_000)),
    )
    .unwrap();
    assert_eq!(answer.run.reserved_credits, 40);
    let books = checked(&world);
    assert_eq!(books.agent(me.id).reserved_credits, 40);
    assert_eq!(books.balance(me.id), 80);

    // 40 held, 40 free: a report of 70 takes the 40 held, then 30 free.
    let answer = report(
        &world.runs,
        &actor,
        run.id,
        usage("gpt-5", 1, 1, Some(70_000)),
    )
    .unwrap();
    assert_eq!(answer.run.reserved_credits, 0);
    assert!(!answer.run.stop_requested);
    let books = checked(&world);
    assert_eq!(books.agent(me.id).reserved_credits, 0);
    assert_eq!(books.balance(me.id), 10);

    let second = task_for(&world, me.id, &actor, "second");
    let held = start(&world, &actor, &second, 10).unwrap();
    report(
        &world.runs,
        &actor,
        held.id,
        usage("gpt-5", 1, 1, Some(4_000)),
    )
    .unwrap();
    assert_eq!(checked(&world).agent(me.id).reserved_credits, 6);
    let done = finish(&world, &actor, held.id, RunStatus::Succeeded).unwrap();
    assert_eq!(done.reserved_credits, 0);
    let books = checked(&world);
    assert_eq!(books.agent(me.id).reserved_credits, 0, "the rest released");
    assert_eq!(books.balance(me.id), 6);
    assert_eq!(
        events_of(&world, "run.finished", held.id.as_uuid())[0].payload["usage"]["credits"],
        4
    );
}

#[test]
fn a_report_the_agent_cannot_pay_is_recorded_in_full_and_stops_the_run() {
    let world = World::new();
    let (me, actor, task, run) = running(&world, "spender", 10);
    let answer = report(
        &world.runs,
        &actor,
        run.id,
        usage("gpt-5", 9, 9, Some(25_000)),
    )
    .unwrap();
    let recorded = answer.report.unwrap();
    assert_eq!(recorded.cost_microusd, Some(25_000));
    assert_eq!((recorded.credits, recorded.unfunded_credits), (10, 15));
    assert_eq!((recorded.input_tokens, recorded.output_tokens), (9, 9));
    let stopped = answer.run;
    assert!(stopped.stop_requested);
    assert_eq!(stopped.stop_reason, Some(StopReason::Budget));
    assert_eq!(stopped.status, RunStatus::Running);
    assert_eq!(stopped.usage.totals.credits, 10);
    assert_eq!(stopped.usage.totals.unfunded_credits, 15);
    let books = checked(&world);
    assert_eq!(books.balance(me.id), 0, "never below zero");
    assert!(books.agent(me.id).budget_exhausted);

    let exhausted = events_of(&world, "budget.exhausted", me.id.as_uuid());
    assert_eq!(exhausted.len(), 1);
    assert_eq!(exhausted[0].entity_type, "agent");
    assert_eq!(
        exhausted[0].payload,
        json!({"runId": run.id, "unfundedCredits": 15, "balanceAfter": 0})
    );
    let asked = events_of(&world, "run.stop_requested", run.id.as_uuid());
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].payload["reason"], "budget");

    // A later report is still recorded; unfunded again, no second stop.
    let later = report(
        &world.runs,
        &actor,
        run.id,
        usage("gpt-5", 1, 1, Some(3_000)),
    )
    .unwrap();
    assert_eq!(later.report.unwrap().unfunded_credits, 3);
    assert_eq!(later.run.usage.totals.unfunded_credits, 18);
    assert_eq!(world.events("run.stop_requested").len(), 1);
    assert_eq!(world.events("budget.exhausted").len(), 2);
    checked(&world);

    // Held back: no claim, no run.
    world.task("next");
    assert_eq!(
        code(block_on(world.tasks.claim(&actor, claim_request(60)))),
        "budget_exhausted"
    );
    let finished = finish(&world, &actor, run.id, RunStatus::Stopped).unwrap();
    assert_eq!(finished.stop_reason, Some(StopReason::Budget));
    assert_eq!(code(start(&world, &actor, &task, 0)), "budget_exhausted");

    // Funded again, it works again.
    grant(&world, me.id, 5);
    assert!(
        block_on(world.tasks.claim(&actor, claim_request(60)))
            .unwrap()
            .is_some()
    );
    let again = start(&world, &actor, &task, 0).unwrap();
    assert!(!again.stop_requested);
    let paid = report(
        &world.runs,
        &actor,
        again.id,
        usage("gpt-5", 1, 1, Some(2_000)),
    )
    .unwrap();
    assert_eq!(paid.report.unwrap().credits, 2);
    let books = checked(&world);
    assert_eq!(books.balance(me.id), 3);
    assert!(!books.agent(me.id).budget_exhausted, "paid in full");
}

#[test]
fn usage_is_summed_by_agent_model_task_and_day() {
    let world = World::new();
    let (a, a_actor, a_task, a_run) = running(&world, "alpha", 100);
    let (b, b_actor, _, b_run) = running(&world, "beta", 100);
    report(
        &world.runs,
        &a_actor,
        a_run.id,
        usage("gpt-5", 10, 1, Some(3_000)),
    )
    .unwrap();
    report(
        &world.runs,
        &a_actor,
        a_run.id,
        usage("mystery", 5, 5, None),
    )
    .unwrap();
    world.clock.advance(Duration::days(1));
    report(
        &world.runs,
        &b_actor,
        b_run.id,
        usage("gpt-5", 20, 2, Some(4_000)),
    )
    .unwrap();

    let groups = |group_by, agent| {
        let query = UsageQuery {
            group_by,
            agent,
            task: None,
            from: None,
            to: None,
        };
        block_on(world.runs.usage(&world.admin, &query)).unwrap()
    };
    let by_model = groups(UsageGroupBy::Model, None);
    let keys: Vec<_> = by_model.iter().map(|g| g.key.as_str()).collect();
    assert_eq!(keys, ["gpt-5", "mystery"], "ordered by key");
    let gpt = &by_model[0];
    assert_eq!(gpt.totals.reports, 2);
    assert_eq!(gpt.runs, 2);
    assert_eq!(gpt.totals.cost_microusd, Some(7_000));
    assert_eq!(gpt.totals.credits, 7);
    assert_eq!(gpt.totals.input_tokens, 30);
    assert_eq!(by_model[1].totals.cost_microusd, None, "nothing priced");
    assert_eq!(by_model[1].totals.unpriced_tokens, 10);

    let by_day = groups(UsageGroupBy::Day, None);
    let days: Vec<_> = by_day
        .iter()
        .map(|g| (g.key.as_str(), g.totals.reports))
        .collect();
    assert_eq!(days, [("2026-03-02", 2), ("2026-03-03", 1)]);
    let mut agents = [a.id.to_string(), b.id.to_string()];
    agents.sort();
    let by_agent: Vec<_> = groups(UsageGroupBy::Agent, None)
        .into_iter()
        .map(|g| g.key)
        .collect();
    assert_eq!(by_agent, agents);
    let of_a = groups(UsageGroupBy::Task, Some(a.id));
    assert_eq!(of_a.len(), 1);
    assert_eq!(of_a[0].key, a_task.id.to_string());
    assert_eq!(of_a[0].totals.reports, 2);
    assert_eq!(of_a[0].runs, 1);

    let windowed = UsageQuery {
        group_by: UsageGroupBy::Agent,
        agent: None,
        task: None,
        from: Some(world.clock_now()),
        to: None,
    };
    let late = block_on(RunRepository::usage(&world.store, world.org, &windowed)).unwrap();
    assert_eq!(late.len(), 1);
    assert_eq!(late[0].key, b.id.to_string());
    let before = UsageQuery {
        from: None,
        to: Some(world.clock_now()),
        ..windowed
    };
    let early = block_on(RunRepository::usage(&world.store, world.org, &before)).unwrap();
    assert_eq!(early.len(), 1);
    assert_eq!(early[0].key, a.id.to_string(), "`to` is exclusive");
    let stranger = block_on(RunRepository::usage(
        &world.store,
        muster_domain::model::OrgId::from_uuid(uuid::Uuid::now_v7()),
        &before,
    ))
    .unwrap();
    assert!(stranger.is_empty());
}
