//! What a task's outcome is worth (decisions D-58, D-63, D-101): the reward escrowed from
//! the treasury when an admin creates the task, paid on done less the parent's
//! management fee (floored), its ledger rows and `credits.earned` events, the reputation
//! each move earns or costs with `reputation.changed`, the score's clamps, and twenty
//! children of one parent finishing at once.

use std::collections::BTreeSet;

use muster_domain::model::FeePct;
use serde_json::{Value, json};

use crate::economy_support::{
    admin, created, events_as, fund_treasury, id_of, ledger_of, treasury_balance, treasury_history,
};
use crate::helpers::{Agent, TestApp};
use crate::stored::{all_ledger, change_agent, reputation_event_total, set_parent};
use crate::task_support::{assigned_task, balance, events_typed, reputation, task_of, walk};
use crate::task_tools::{Caller, events_everywhere};

api_tests!(
    done_pays_the_assignee_and_the_parents_fee,
    approving_pays_like_finishing,
    the_fee_is_a_floored_share_of_the_reward,
    nothing_is_paid_without_an_assignee_or_before_done,
    reputation_follows_each_outcome,
    reputation_clamps_but_events_keep_the_nominal_amount,
    concurrent_completions_pay_the_parent_every_fee,
);

/// The reward a task gets by default, escrowed when it is created (decisions D-58, D-101).
const REWARD: i64 = 10;

/// Funds the treasury with `amount` and answers the admin user, whose tasks it pays for.
async fn house(app: &TestApp, amount: i64) -> Caller {
    fund_treasury(app, &app.org, amount).await;
    admin(app, &app.org).await
}

/// The reason of the one `credits.refunded` event of `task`.
async fn refund_reason(app: &TestApp, admin: &Caller, task: &str) -> Value {
    let refunds = events_as(app, admin, task, "credits.refunded").await;
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    refunds[0]["payload"]["reason"].clone()
}

/// Creates a task for `assignee` as `admin` (the treasury pays its reward), with `extra`
/// fields; answers its id.
async fn house_task(app: &TestApp, admin: &Caller, assignee: &Agent, extra: Value) -> String {
    let mut body = json!({ "title": "assigned work", "assigneeId": assignee.uuid });
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    id_of(&created(app, admin, &body).await)
}

/// A parent with `fee_pct` and a child of it, both active workers.
async fn family(app: &TestApp, fee_pct: i64) -> (Agent, Agent) {
    let parent = app.worker(&app.org).await;
    let fee = FeePct::new(fee_pct).unwrap();
    change_agent(app, &parent, move |a| a.management_fee_pct = fee).await;
    let child = app.worker(&app.org).await;
    set_parent(app, &child, &parent).await;
    (parent, child)
}

/// `value` as text, `-` for null.
fn or_dash(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `type:amount:balanceAfter:taskId:counterpartyId` of each ledger row of `agent` (as the
/// HR agent reads them), in the order of its balances.
async fn ledger(app: &TestApp, agent: &Agent) -> Vec<String> {
    let mut rows = ledger_of(app, &app.org.hr, agent).await;
    rows.sort_by_key(|r| (r["balanceAfter"].as_i64().unwrap(), or_dash(&r["id"])));
    rows.iter()
        .map(|r| {
            [
                &r["type"],
                &r["amount"],
                &r["balanceAfter"],
                &r["taskId"],
                &r["counterpartyId"],
            ]
            .map(or_dash)
            .join(":")
        })
        .collect()
}

/// `type:amount:taskId` of each reputation event of `agent` (as the HR agent reads its
/// history), sorted.
async fn reputation_rows(app: &TestApp, agent: &Agent) -> Vec<String> {
    let path = format!("/agents/{}/reputation/history?limit=100", agent.uuid);
    let reply = app.get(&app.org.hr, &path).await;
    assert!(reply.list().len() < 100, "{}", reply.text);
    let mut rows: Vec<String> = reply
        .list()
        .iter()
        .map(|r| {
            [&r["type"], &r["amount"], &r["taskId"]]
                .map(or_dash)
                .join(":")
        })
        .collect();
    rows.sort();
    rows
}

/// How many ledger rows the whole deployment stores (no route lists every ledger).
async fn ledger_total(app: &TestApp) -> usize {
    all_ledger(app).await.len()
}

/// The `credits.earned` payloads of `agent`, oldest first.
async fn earned(app: &TestApp, agent: &Agent) -> Vec<Value> {
    let mut events =
        events_typed(app, &app.org.hr, &agent.uuid.to_string(), "credits.earned").await;
    events.reverse();
    for event in &events {
        assert_eq!(event["entityType"], "agent");
        assert_eq!(event["severity"], "info");
    }
    events.into_iter().map(|e| e["payload"].clone()).collect()
}

/// The `reputation.changed` payloads of `agent`, sorted by type.
async fn reputation_changes(app: &TestApp, agent: &Agent) -> Vec<Value> {
    let mut events: Vec<Value> = events_typed(
        app,
        &app.org.hr,
        &agent.uuid.to_string(),
        "reputation.changed",
    )
    .await
    .into_iter()
    .map(|e| e["payload"].clone())
    .collect();
    events.sort_by_key(|p| p["type"].as_str().unwrap_or_default().to_owned());
    events
}

async fn done_pays_the_assignee_and_the_parents_fee(app: &TestApp) {
    let (parent, child) = family(app, 15).await;
    change_agent(app, &child, |a| a.current_balance = 100).await;
    change_agent(app, &parent, |a| a.current_balance = 7).await;
    let admin = house(app, 100).await;
    let task = house_task(app, &admin, &child, json!({})).await;
    assert_eq!(treasury_balance(app, &admin).await, 100 - REWARD);
    walk(app, &child, &task, &["in_progress", "done"]).await;

    // 15% of 10 is 1.5: the parent takes 1, the child keeps 9.
    assert_eq!(balance(app, &app.org, &child).await, 109);
    assert_eq!(balance(app, &app.org, &parent).await, 8);
    assert_eq!(
        ledger(app, &child).await,
        [format!("earned:9:109:{task}:-")]
    );
    assert_eq!(
        ledger(app, &parent).await,
        [format!("fee:1:8:{task}:{}", child.uuid)]
    );
    let child_earned = earned(app, &child).await;
    assert_eq!(child_earned.len(), 1);
    assert_eq!(child_earned[0]["amount"], 9);
    assert_eq!(child_earned[0]["source"], "reward");
    assert_eq!(child_earned[0]["balanceAfter"], 109);
    assert_eq!(child_earned[0]["taskId"], task);
    let parent_earned = earned(app, &parent).await;
    assert_eq!(parent_earned.len(), 1);
    assert_eq!(parent_earned[0]["amount"], 1);
    assert_eq!(parent_earned[0]["source"], "management_fee");
    assert_eq!(parent_earned[0]["balanceAfter"], 8);
    assert_eq!(parent_earned[0]["taskId"], task);

    // Finishing is worth +5 to the assignee, nothing to its parent.
    assert_eq!(reputation(app, &app.org, &child).await, 55);
    assert_eq!(reputation(app, &app.org, &parent).await, 50);
    assert_eq!(
        reputation_rows(app, &child).await,
        [format!("task_completed:5:{task}")]
    );
    assert!(reputation_rows(app, &parent).await.is_empty());
    let changes = reputation_changes(app, &child).await;
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["type"], "task_completed");
    assert_eq!(changes[0]["amount"], 5);
    assert_eq!(changes[0]["scoreBefore"], 50);
    assert_eq!(changes[0]["scoreAfter"], 55);
    assert_eq!(changes[0]["taskId"], task);
    assert!(reputation_changes(app, &parent).await.is_empty());
    // The treasury paid once, when the task was made.
    assert_eq!(treasury_balance(app, &admin).await, 100 - REWARD);
}

async fn approving_pays_like_finishing(app: &TestApp) {
    let (parent, child) = family(app, 50).await;
    let admin = house(app, REWARD).await;
    let task = house_task(app, &admin, &child, json!({ "approvalRequired": true })).await;
    walk(app, &child, &task, &["in_progress", "review"]).await;
    assert_eq!(balance(app, &app.org, &child).await, 0);
    let reply = app
        .post(&app.org.hr, &format!("/tasks/{task}/approve"), "")
        .await;
    assert_eq!(reply.data()["status"], "done");
    assert_eq!(balance(app, &app.org, &child).await, 5);
    assert_eq!(balance(app, &app.org, &parent).await, 5);
    assert_eq!(ledger(app, &child).await, [format!("earned:5:5:{task}:-")]);
    assert_eq!(
        ledger(app, &parent).await,
        [format!("fee:5:5:{task}:{}", child.uuid)]
    );
    assert_eq!(earned(app, &child).await[0]["source"], "reward");
    assert_eq!(earned(app, &parent).await[0]["source"], "management_fee");
    assert_eq!(reputation(app, &app.org, &child).await, 55);
    assert_eq!(
        reputation_rows(app, &child).await,
        [format!("task_completed:5:{task}")]
    );
}

async fn the_fee_is_a_floored_share_of_the_reward(app: &TestApp) {
    let admin = house(app, 11 * REWARD).await;
    for fee_pct in [0, 1, 9, 10, 15, 19, 20, 33, 49, 50] {
        let (parent, child) = family(app, fee_pct).await;
        let task = house_task(app, &admin, &child, json!({})).await;
        walk(app, &child, &task, &["in_progress", "review", "done"]).await;
        let fee = REWARD * fee_pct / 100;
        assert_eq!(
            balance(app, &app.org, &child).await,
            REWARD - fee,
            "{fee_pct}%"
        );
        assert_eq!(balance(app, &app.org, &parent).await, fee, "{fee_pct}%");
        assert_eq!(
            ledger(app, &child).await,
            [format!("earned:{}:{}:{task}:-", REWARD - fee, REWARD - fee)]
        );
        if fee == 0 {
            assert!(ledger(app, &parent).await.is_empty(), "{fee_pct}%");
            assert!(earned(app, &parent).await.is_empty(), "{fee_pct}%");
        } else {
            assert_eq!(
                ledger(app, &parent).await,
                [format!("fee:{fee}:{fee}:{task}:{}", child.uuid)]
            );
            assert_eq!(earned(app, &parent).await.len(), 1);
        }
    }
    // No parent: the whole reward.
    let orphan = app.worker(&app.org).await;
    let task = house_task(app, &admin, &orphan, json!({})).await;
    walk(app, &orphan, &task, &["in_progress", "done"]).await;
    assert_eq!(balance(app, &app.org, &orphan).await, REWARD);
    assert_eq!(
        ledger(app, &orphan).await,
        [format!("earned:10:10:{task}:-")]
    );
}

async fn nothing_is_paid_without_an_assignee_or_before_done(app: &TestApp) {
    let admin = house(app, 3 * REWARD).await;
    let task = id_of(&created(app, &admin, &json!({ "title": "nobody's" })).await);
    walk(app, &app.org.hr, &task, &["in_progress", "review", "done"]).await;
    // The escrow went back to the treasury.
    assert_eq!(treasury_balance(app, &admin).await, 3 * REWARD);
    assert_eq!(refund_reason(app, &admin, &task).await, "unassigned");
    assert_eq!(ledger_total(app).await, 0);
    assert_eq!(reputation_event_total(app).await, 0);
    assert_eq!(events_everywhere(app, "credits.earned").await, 0);
    assert_eq!(events_everywhere(app, "reputation.changed").await, 0);
    assert_eq!(balance(app, &app.org, &app.org.hr).await, 0);

    // Moves that do not close pay nothing; done pays once, however the task got there.
    let (parent, child) = family(app, 20).await;
    let task = house_task(app, &admin, &child, json!({})).await;
    walk(
        app,
        &child,
        &task,
        &[
            "backlog",
            "todo",
            "in_progress",
            "blocked",
            "in_progress",
            "review",
        ],
    )
    .await;
    assert_eq!(ledger_total(app).await, 0);
    assert_eq!(balance(app, &app.org, &child).await, 0);
    walk(app, &child, &task, &["done"]).await;
    assert_eq!(balance(app, &app.org, &child).await, 8);
    assert_eq!(balance(app, &app.org, &parent).await, 2);
    assert_eq!(ledger_total(app).await, 2);

    // Cancelling pays nothing: the escrow goes back to the treasury.
    let cancelled = house_task(app, &admin, &child, json!({})).await;
    assert_eq!(treasury_balance(app, &admin).await, REWARD);
    walk(app, &child, &cancelled, &["in_progress", "cancelled"]).await;
    assert_eq!(balance(app, &app.org, &child).await, 8);
    assert_eq!(ledger_total(app).await, 2);
    assert_eq!(treasury_balance(app, &admin).await, 2 * REWARD);
    assert_eq!(refund_reason(app, &admin, &cancelled).await, "cancelled");
    assert_eq!(treasury_history(app, &admin).await[0]["type"], "refunded");
}

/// One move sequence and what it is worth to the assignee's reputation.
struct Outcome {
    /// The statuses the task goes through after `todo`.
    path: &'static [&'static str],
    /// Its due date (RFC 3339), given when the task is created.
    due: Option<&'static str>,
    /// The reputation events it writes: type and nominal amount.
    kinds: &'static [(&'static str, i32)],
    /// The score afterwards, from 50.
    score: i32,
}

const PAST: &str = "2020-01-01T00:00:00.000Z";
const FUTURE: &str = "2999-01-01T00:00:00.000Z";

const OUTCOMES: [Outcome; 9] = [
    Outcome {
        path: &["in_progress", "done"],
        due: None,
        kinds: &[("task_completed", 5)],
        score: 55,
    },
    Outcome {
        path: &["in_progress", "review", "done"],
        due: Some(FUTURE),
        kinds: &[("on_time_delivery", 2), ("task_completed", 5)],
        score: 57,
    },
    Outcome {
        path: &["in_progress", "done"],
        due: Some(PAST),
        kinds: &[("late_delivery", -5), ("task_completed", 5)],
        score: 50,
    },
    Outcome {
        path: &["in_progress", "cancelled"],
        due: None,
        kinds: &[("task_failed", -10)],
        score: 40,
    },
    Outcome {
        path: &["in_progress", "review", "cancelled"],
        due: None,
        kinds: &[("task_failed", -10)],
        score: 40,
    },
    Outcome {
        path: &["in_progress", "blocked", "cancelled"],
        due: None,
        kinds: &[("task_failed", -10)],
        score: 40,
    },
    // Cancelled before work started: no failure.
    Outcome {
        path: &["cancelled"],
        due: None,
        kinds: &[],
        score: 50,
    },
    Outcome {
        path: &["backlog", "cancelled"],
        due: Some(PAST),
        kinds: &[],
        score: 50,
    },
    Outcome {
        path: &["in_progress", "review", "in_progress"],
        due: None,
        kinds: &[("task_rework", -3)],
        score: 47,
    },
];

async fn reputation_follows_each_outcome(app: &TestApp) {
    for outcome in &OUTCOMES {
        let Outcome {
            path,
            due,
            kinds,
            score,
        } = outcome;
        let agent = app.worker(&app.org).await;
        let extra = due.map_or_else(|| json!({}), |due| json!({ "dueAt": due }));
        let task = assigned_task(app, &app.org.hr, &agent, extra).await;
        walk(app, &agent, &task, path).await;
        assert_eq!(
            reputation(app, &app.org, &agent).await,
            *score,
            "{path:?} due {due:?}"
        );
        let expected: Vec<String> = kinds
            .iter()
            .map(|(kind, amount)| format!("{kind}:{amount}:{task}"))
            .collect();
        assert_eq!(reputation_rows(app, &agent).await, expected, "{path:?}");
        let got: Vec<(String, i64)> = reputation_changes(app, &agent)
            .await
            .iter()
            .map(|c| {
                (
                    c["type"].as_str().unwrap().to_owned(),
                    c["amount"].as_i64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, i64)> = kinds
            .iter()
            .map(|(kind, amount)| ((*kind).to_owned(), i64::from(*amount)))
            .collect();
        assert_eq!(got, want, "{path:?}");
    }

    // Rework twice, then finished on time: every cycle counts.
    let agent = app.worker(&app.org).await;
    let task = assigned_task(
        app,
        &app.org.hr,
        &agent,
        json!({ "dueAt": "2999-01-01T00:00:00.000Z" }),
    )
    .await;
    walk(
        app,
        &agent,
        &task,
        &[
            "in_progress",
            "review",
            "in_progress",
            "review",
            "in_progress",
            "review",
            "done",
        ],
    )
    .await;
    assert_eq!(reputation(app, &app.org, &agent).await, 50 - 3 - 3 + 5 + 2);
    assert_eq!(reputation_rows(app, &agent).await.len(), 4);
    assert_eq!(task_of(app, &app.org.hr, &task).await["status"], "done");
}

async fn reputation_clamps_but_events_keep_the_nominal_amount(app: &TestApp) {
    // Near the top: +5 and +2 stop at 100.
    let star = app.worker(&app.org).await;
    change_agent(app, &star, |a| a.reputation_score = 98).await;
    let task = assigned_task(
        app,
        &app.org.hr,
        &star,
        json!({ "dueAt": "2999-01-01T00:00:00.000Z" }),
    )
    .await;
    walk(app, &star, &task, &["in_progress", "done"]).await;
    assert_eq!(reputation(app, &app.org, &star).await, 100);
    assert_eq!(
        reputation_rows(app, &star).await,
        [
            format!("on_time_delivery:2:{task}"),
            format!("task_completed:5:{task}"),
        ]
    );
    for change in reputation_changes(app, &star).await {
        let after = change["scoreAfter"].as_i64().unwrap();
        assert!(after <= 100, "{change}");
    }
    let last_after: BTreeSet<i64> = reputation_changes(app, &star)
        .await
        .iter()
        .map(|c| c["scoreAfter"].as_i64().unwrap())
        .collect();
    assert!(last_after.contains(&100), "{last_after:?}");

    // Near the bottom: -10 stops at 0.
    let failing = app.worker(&app.org).await;
    change_agent(app, &failing, |a| a.reputation_score = 3).await;
    let task = assigned_task(app, &app.org.hr, &failing, json!({})).await;
    walk(app, &failing, &task, &["in_progress", "cancelled"]).await;
    assert_eq!(reputation(app, &app.org, &failing).await, 0);
    assert_eq!(
        reputation_rows(app, &failing).await,
        [format!("task_failed:-10:{task}")]
    );
    let changes = reputation_changes(app, &failing).await;
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["amount"], -10);
    assert_eq!(changes[0]["scoreBefore"], 3);
    assert_eq!(changes[0]["scoreAfter"], 0);
    // At 0 already, a late delivery stays at 0 (and the completion still counts).
    let task = assigned_task(app, &app.org.hr, &failing, json!({ "dueAt": PAST })).await;
    walk(app, &failing, &task, &["in_progress", "done"]).await;
    assert_eq!(reputation(app, &app.org, &failing).await, 0);
}

async fn concurrent_completions_pay_the_parent_every_fee(app: &TestApp) {
    const CHILDREN: usize = 20;
    let fee_pct = 15;
    let fee = REWARD * fee_pct / 100;
    let parent = app.worker(&app.org).await;
    let fee_pct_of = FeePct::new(fee_pct).unwrap();
    change_agent(app, &parent, move |a| a.management_fee_pct = fee_pct_of).await;
    let admin = house(app, 20 * REWARD).await;
    let mut work = Vec::new();
    for _ in 0..CHILDREN {
        let child = app.worker(&app.org).await;
        set_parent(app, &child, &parent).await;
        let task = house_task(app, &admin, &child, json!({})).await;
        walk(app, &child, &task, &["in_progress"]).await;
        work.push((child, task));
    }
    let done = json!({ "status": "done" }).to_string();
    let finishing = work
        .iter()
        .map(|(child, task)| app.transition(child, task, &done));
    for reply in futures_util::future::join_all(finishing).await {
        assert_eq!(reply.data()["status"], "done");
    }

    let children = i64::try_from(CHILDREN).unwrap();
    assert_eq!(balance(app, &app.org, &parent).await, children * fee);
    for (child, task) in &work {
        assert_eq!(balance(app, &app.org, child).await, REWARD - fee);
        assert_eq!(
            ledger(app, child).await,
            [format!("earned:{}:{}:{task}:-", REWARD - fee, REWARD - fee)]
        );
        assert_eq!(reputation(app, &app.org, child).await, 55);
    }
    // Each fee saw the balance the one before left: 1, 2, ..., 20.
    let rows = ledger(app, &parent).await;
    assert_eq!(rows.len(), CHILDREN);
    let afters: Vec<i64> = rows
        .iter()
        .map(|row| row.split(':').nth(2).unwrap().parse().unwrap())
        .collect();
    let expected: Vec<i64> = (1..=children).map(|n| n * fee).collect();
    assert_eq!(afters, expected);
    assert!(rows.iter().all(|r| r.starts_with(&format!("fee:{fee}:"))));
    assert_eq!(earned(app, &parent).await.len(), CHILDREN);
    assert_eq!(
        events_everywhere(app, "credits.earned").await,
        u64::try_from(2 * children).unwrap()
    );
}
