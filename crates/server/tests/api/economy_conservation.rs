//! Conservation under concurrency, on both engines (decision D-101): a funded treasury and
//! eight funded agents in a hierarchy with management fees go through 1,000 mixed
//! operations over real HTTP, 24 in flight (see `economy_race`). After each quarter,
//! read through the public API only: the agents' balances, the treasury and the rewards
//! of the open tasks add up to what was granted less what was spent; no balance and no
//! `balanceAfter` is negative; every ledger is one unbroken chain; and each task's
//! escrow rows net to minus its reward while it is open and to 0 once it is closed.

use std::collections::HashMap;
use std::time::Instant;

use futures_util::stream::{self, StreamExt};
use reqwest::Method;
use serde_json::{Value, json};

use crate::agent_support::{active_child, agent_with, grant};
use crate::economy_race::{Op, World, operations};
use crate::economy_support::{
    all_pages, assert_chain, fund_treasury, sum_of, treasury_balance, treasury_history,
};
use crate::helpers::{Agent, TestApp, str_of};
use crate::task_support::is_postgres;
use crate::task_tools::{Caller, patch};

api_tests!(credits_are_conserved_under_concurrency);

/// Operations in the race.
const OPERATIONS: usize = 1_000;
/// Requests in flight at once.
const IN_FLIGHT: usize = 24;
/// The race runs in this many waves, checked after each.
const WAVES: usize = 4;
/// The treasury's first funds.
const TREASURY: i64 = 3_000;
/// Each agent's first funds.
const FUNDS: i64 = 300;
/// The period limit of one of the agents.
const PERIOD_LIMIT: i64 = 400;

/// A root (fee 20%) with three children, the first (fee 10%) with two children of its
/// own, the last of them with a period limit; and two agents of no one. Answers them in
/// that order with the transfer pairs along the hierarchy, all funded.
async fn arrange(app: &TestApp) -> (Vec<Agent>, Vec<(usize, usize)>) {
    let root = agent_with(app, &app.org, 9, "worker", "worker").await;
    let mut agents = vec![root.clone()];
    for _ in 0..3 {
        agents.push(active_child(app, &root, &json!({})).await);
    }
    let first = agents[1].clone();
    for _ in 0..2 {
        agents.push(active_child(app, &first, &json!({})).await);
    }
    for _ in 0..2 {
        agents.push(agent_with(app, &app.org, 5, "worker", "worker").await);
    }
    for (agent, fee) in [(&root, 20), (&first, 10)] {
        let reply = patch(
            app,
            &app.org.hr,
            &format!("/agents/{}", agent.uuid),
            &json!({ "managementFeePct": fee }).to_string(),
        )
        .await;
        assert_eq!(reply.data()["managementFeePct"], fee);
    }
    let reply = patch(
        app,
        &first,
        &format!("/agents/{}/budget", agents[5].uuid),
        &json!({ "budgetPeriodLimit": PERIOD_LIMIT }).to_string(),
    )
    .await;
    assert_eq!(reply.data()["budgetPeriodLimit"], PERIOD_LIMIT);
    for agent in &agents {
        grant(app, &app.org, agent, FUNDS).await;
    }
    fund_treasury(app, &app.org, TREASURY).await;
    let one_way = [
        (0, 1),
        (0, 2),
        (0, 3),
        (1, 2),
        (2, 3),
        (1, 3),
        (1, 4),
        (1, 5),
        (4, 5),
    ];
    let pairs = one_way
        .iter()
        .flat_map(|&(a, b)| [(a, b), (b, a)])
        .collect();
    (agents, pairs)
}

/// What the public API shows of the organization's money.
#[derive(Debug, Default)]
struct Books {
    balances: i64,
    treasury: i64,
    open_escrow: i64,
    granted: i64,
    spent: i64,
    /// Net of every escrow movement (escrowed, refunded, earned, fee) by task.
    by_task: HashMap<String, i64>,
    /// Rows of each kind, across agents and the treasury.
    kinds: HashMap<String, usize>,
}

/// `row["key"]` as an integer.
#[track_caller]
fn int(row: &Value, key: &str) -> i64 {
    row[key]
        .as_i64()
        .unwrap_or_else(|| panic!("{key} is not an integer in {row}"))
}

/// Reads the books, checking every ledger's chain and that nothing is negative.
async fn read_books(app: &TestApp, admin: &Caller) -> Books {
    let mut books = Books::default();
    let agents = all_pages(app, admin, "/agents").await;
    for agent in &agents {
        let id = str_of(agent, "id");
        let balance = int(agent, "currentBalance");
        assert!(balance >= 0, "agent {id} has a negative balance {balance}");
        books.balances += balance;
        let ledger = all_pages(app, admin, &format!("/agents/{id}/credits/history")).await;
        assert_chain(&ledger, balance, &format!("agent {id}'s ledger"));
        books.granted += sum_of(&ledger, "granted");
        books.spent -= sum_of(&ledger, "spent");
        tally(
            &mut books,
            &ledger,
            &["escrowed", "refunded", "earned", "fee"],
        );
    }

    books.treasury = treasury_balance(app, admin).await;
    assert!(
        books.treasury >= 0,
        "a negative treasury {}",
        books.treasury
    );
    let history = treasury_history(app, admin).await;
    assert_chain(&history, books.treasury, "the treasury's history");
    books.granted += sum_of(&history, "granted");
    tally(&mut books, &history, &["escrowed", "refunded"]);
    for row in &history {
        *books
            .kinds
            .entry(format!("treasury {}", row["type"]))
            .or_default() += 1;
    }

    let org = app.org.id.to_string();
    for task in all_pages(app, admin, "/tasks").await {
        let id = str_of(&task, "id");
        let reward = int(&task, "reward");
        assert!(reward >= 0, "task {id} has a negative reward");
        let payer = &task["rewardPayer"];
        match payer["kind"].as_str() {
            Some("agent") => assert_eq!(payer["id"], task["creatorId"], "{task}"),
            Some("treasury") => assert_eq!(payer["id"], org.as_str(), "{task}"),
            _ => panic!("rewardPayer of {task}"),
        }
        let open = !matches!(task["status"].as_str(), Some("done" | "cancelled"));
        let escrowed = if open { reward } else { 0 };
        books.open_escrow += escrowed;
        let net = books.by_task.remove(&id).unwrap_or(0);
        assert_eq!(
            net, -escrowed,
            "task {id} ({}, reward {reward}): its escrow rows net to {net}",
            task["status"]
        );
    }
    assert!(
        books.by_task.is_empty(),
        "escrow rows of tasks nobody lists: {:?}",
        books.by_task
    );
    books
}

/// Adds the rows of `kinds` of `rows` to the books' per-task nets and kind counts.
fn tally(books: &mut Books, rows: &[Value], kinds: &[&str]) {
    for row in rows {
        let kind = row["type"].as_str().unwrap_or_default();
        *books.kinds.entry(kind.to_owned()).or_default() += 1;
        if !kinds.contains(&kind) {
            continue;
        }
        let task = row["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a {kind} row without a task: {row}"));
        *books.by_task.entry(task.to_owned()).or_default() += int(row, "amount");
    }
}

/// The equation, after `wave`.
fn assert_conserved(books: &Books, wave: usize) {
    let held = books.balances + books.treasury + books.open_escrow;
    assert_eq!(
        held,
        books.granted - books.spent,
        "after wave {wave}: agents {} + treasury {} + open escrow {} != granted {} - spent {}",
        books.balances,
        books.treasury,
        books.open_escrow,
        books.granted,
        books.spent
    );
}

async fn credits_are_conserved_under_concurrency(app: &TestApp) {
    let (agents, pairs) = arrange(app).await;
    let token = app.admin_token(&app.org).await;
    let admin = Caller::Bearer(token.clone());
    let ops = operations(0x5DEE_CE66_D1CE_4E5B, OPERATIONS, agents.len(), pairs.len());
    let world = World::new(agents, token, pairs);
    let books = read_books(app, &admin).await;
    assert_eq!(books.granted, TREASURY + 8 * FUNDS);
    assert_conserved(&books, 0);

    let started = Instant::now();
    for (wave, chunk) in ops.chunks(OPERATIONS / WAVES).enumerate() {
        stream::iter(chunk.iter().copied())
            .map(|op: Op| world.run(app, op))
            .buffer_unordered(IN_FLIGHT)
            .collect::<Vec<()>>()
            .await;
        let books = read_books(app, &admin).await;
        assert_conserved(&books, wave + 1);
        eprintln!("economy race, wave {}: {books:?}", wave + 1);
    }
    let engine = if is_postgres(app) {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    eprintln!(
        "economy race on {engine}: {OPERATIONS} operations, {IN_FLIGHT} in flight, {:?}: {:?}",
        started.elapsed(),
        world.tallies()
    );

    // The race pressed on what it means to test.
    for op in [
        "agent task",
        "user task",
        "finish",
        "cancel",
        "reprice",
        "transfer",
        "spend",
    ] {
        assert!(world.answered(op, 200) > 0, "no {op} went through");
    }
    assert!(
        world.answered("agent task", 409) > 0,
        "no agent task was refused"
    );
    assert!(
        world.answered("user task", 409) > 0,
        "no user task was refused"
    );
    let books = read_books(app, &admin).await;
    for kind in [
        "earned",
        "fee",
        "escrowed",
        "refunded",
        "transfer_out",
        "spent",
    ] {
        assert!(
            books.kinds.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} row: {:?}",
            books.kinds
        );
    }
    let limited = &world.agents[5];
    let reply = app
        .get(limited, &format!("/agents/{}/budget", limited.uuid))
        .await;
    let spent = int(reply.data(), "budgetPeriodSpent");
    assert!(spent <= PERIOD_LIMIT, "spent {spent} of {PERIOD_LIMIT}");
    let reply = admin.call(app, Method::GET, "/org/treasury", None).await;
    assert_eq!(int(reply.data(), "balance"), books.treasury);
}
