//! Changing a task's reward (decision D-101): a raise escrows the difference from the
//! payer (409 and nothing changes when it cannot), a cut returns it ("lowered"); only
//! the payer may do either (the paying agent; for the treasury, users and their keys);
//! a closed task keeps its reward; a reward out of range is 400.

use reqwest::Method;
use serde_json::{Value, json};

use crate::agent_support::grant;
use crate::agents_budgets::budget_of;
use crate::economy_support::{
    DEFAULT_REWARD, PAYER_ONLY, REWARD_RANGE, admin, agent_payer, assert_chain, brief, created,
    events_as, id_of, ledger_of, reward_of, set_reward, treasury_balance, treasury_history,
    treasury_payer, walk_as,
};
use crate::helpers::{TestApp, assert_error, assert_error_exact};
use crate::task_tools::{Caller, event_total};

api_tests!(
    raising_and_cutting_a_treasury_reward_moves_the_difference,
    raising_and_cutting_an_agents_reward_moves_the_difference,
    only_the_payer_changes_a_reward,
    a_closed_task_keeps_its_reward,
    bad_rewards_on_patch_are_400_and_change_nothing,
);

/// Sets the reward as `caller`, asserting 200; answers the task.
async fn reprice(app: &TestApp, caller: &Caller, task: &str, reward: i64) -> Value {
    let reply = set_reward(app, caller, task, &json!(reward)).await;
    assert_eq!(
        reply.status.as_u16(),
        200,
        "reward {reward}: {}",
        reply.text
    );
    reply.data().clone()
}

async fn raising_and_cutting_a_treasury_reward_moves_the_difference(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 100).await;
    let task = created(app, &admin, &json!({ "title": "priced" })).await;
    let id = id_of(&task);
    assert_eq!(treasury_balance(app, &admin).await, 90);

    let raised = reprice(app, &admin, &id, 30).await;
    assert_eq!(raised["reward"], 30);
    assert_eq!(raised["rewardPayer"], treasury_payer(&app.org));
    assert_eq!(raised["title"], task["title"]);
    assert_eq!(treasury_balance(app, &admin).await, 70);
    let cut = reprice(app, &admin, &id, 5).await;
    assert_eq!(cut["reward"], 5);
    assert_eq!(treasury_balance(app, &admin).await, 95);
    let history = treasury_history(app, &admin).await;
    assert_eq!(
        brief(&history),
        [
            "refunded:25:95",
            "escrowed:-20:70",
            "escrowed:-10:90",
            "granted:100:100"
        ]
    );
    for entry in &history[..3] {
        assert_eq!(entry["taskId"], id.as_str());
    }
    let refunded = events_as(app, &admin, &id, "credits.refunded").await;
    assert_eq!(refunded.len(), 1);
    assert_eq!(
        refunded[0]["payload"],
        json!({
            "amount": 25, "payer": treasury_payer(&app.org), "balanceAfter": 95,
            "reason": "lowered",
        })
    );
    assert_eq!(
        events_as(app, &admin, &id, "credits.escrowed").await.len(),
        2
    );

    // The same reward again moves nothing.
    let events = event_total(app, &app.org.hr).await;
    assert_eq!(reprice(app, &admin, &id, 5).await["reward"], 5);
    assert_eq!(treasury_history(app, &admin).await.len(), 4);
    assert_eq!(event_total(app, &app.org.hr).await, events);

    // A raise the treasury cannot fund: 409, nothing changes.
    let reply = set_reward(app, &admin, &id, &json!(200)).await;
    assert_error_exact(
        &reply,
        409,
        "Insufficient treasury: 95 credits available, 195 needed",
    );
    let reply = admin
        .call(
            app,
            Method::PATCH,
            &format!("/tasks/{id}"),
            Some(&json!({ "title": "renamed", "reward": 101 })),
        )
        .await;
    assert_error(&reply, 409, "Insufficient treasury");
    let stored = crate::economy_support::task_as(app, &admin, &id).await;
    assert_eq!(stored["reward"], 5);
    assert_eq!(
        stored["title"], task["title"],
        "the whole change was refused"
    );
    assert_eq!(treasury_balance(app, &admin).await, 95);
    assert_eq!(event_total(app, &app.org.hr).await, events);

    // Down to 0 and up again, with another field.
    assert_eq!(reprice(app, &admin, &id, 0).await["reward"], 0);
    assert_eq!(treasury_balance(app, &admin).await, 100);
    let reply = admin
        .call(
            app,
            Method::PATCH,
            &format!("/tasks/{id}"),
            Some(&json!({ "title": "renamed", "reward": 100 })),
        )
        .await;
    assert_eq!(reply.data()["reward"], 100);
    assert_eq!(reply.data()["title"], "renamed");
    assert_eq!(treasury_balance(app, &admin).await, 0);
    assert_chain(&treasury_history(app, &admin).await, 0, "the treasury");
}

async fn raising_and_cutting_an_agents_reward_moves_the_difference(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let me = Caller::Agent(worker.clone());
    grant(app, &app.org, &worker, 50).await;
    let task = created(app, &me, &json!({ "title": "mine" })).await;
    let id = id_of(&task);
    assert_eq!(task["reward"], DEFAULT_REWARD);

    assert_eq!(reprice(app, &me, &id, 20).await["reward"], 20);
    let budget = budget_of(app, &worker, &worker).await;
    assert_eq!(budget["currentBalance"], 30);
    assert_eq!(budget["budgetPeriodSpent"], 20);
    assert_eq!(reprice(app, &me, &id, 0).await["reward"], 0);
    let ledger = ledger_of(app, &worker, &worker).await;
    assert_eq!(
        brief(&ledger),
        [
            "refunded:20:50",
            "escrowed:-10:30",
            "escrowed:-10:40",
            "granted:50:50"
        ]
    );
    assert_eq!(ledger[0]["taskId"], id.as_str());
    assert_chain(&ledger, 50, "the worker's ledger");
    let refunded = events_as(app, &me, &id, "credits.refunded").await;
    assert_eq!(
        refunded[0]["payload"],
        json!({
            "amount": 20, "payer": agent_payer(&worker), "balanceAfter": 50,
            "reason": "lowered",
        })
    );

    let reply = set_reward(app, &me, &id, &json!(51)).await;
    assert_error_exact(
        &reply,
        409,
        "Insufficient balance: 50 credits available, 51 needed",
    );
    assert_eq!(reward_of(app, &me, &id).await, 0);
    assert_eq!(ledger_of(app, &worker, &worker).await.len(), 4);
    assert_eq!(reprice(app, &me, &id, 50).await["reward"], 50);
    assert_eq!(budget_of(app, &worker, &worker).await["currentBalance"], 0);
}

async fn only_the_payer_changes_a_reward(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let admin = Caller::Bearer(token.clone());
    crate::economy_support::fund_treasury(app, &app.org, 100).await;
    let payer = app.worker(&app.org).await;
    grant(app, &app.org, &payer, 100).await;
    let assignee = app.worker(&app.org).await;
    let other = app.worker(&app.org).await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let write_key = app.api_key(&token, &["write"]).await;
    let founder = crate::agents_budgets::staff(app, &app.org, "founder", 8).await;

    let agents_task = id_of(
        &created(
            app,
            &Caller::Agent(payer.clone()),
            &json!({ "title": "the agent pays", "assigneeId": assignee.uuid }),
        )
        .await,
    );
    let treasury_task = id_of(
        &created(
            app,
            &admin,
            &json!({ "title": "the house pays", "assigneeId": assignee.uuid }),
        )
        .await,
    );
    let events = event_total(app, &app.org.hr).await;
    let refused: [(&str, Caller, &str); 10] = [
        (&agents_task, Caller::Agent(assignee.clone()), PAYER_ONLY),
        (&agents_task, Caller::Agent(other.clone()), PAYER_ONLY),
        (&agents_task, Caller::Agent(app.org.hr.clone()), PAYER_ONLY),
        (&agents_task, Caller::Agent(founder.clone()), PAYER_ONLY),
        (&agents_task, admin.clone(), PAYER_ONLY),
        (&treasury_task, Caller::Agent(assignee.clone()), PAYER_ONLY),
        (
            &treasury_task,
            Caller::Agent(app.org.hr.clone()),
            PAYER_ONLY,
        ),
        (&treasury_task, Caller::Agent(founder.clone()), PAYER_ONLY),
        (
            &treasury_task,
            Caller::Bearer(viewer),
            "viewer users are read-only",
        ),
        (&agents_task, Caller::Bearer(operator.clone()), PAYER_ONLY),
    ];
    for (task, caller, message) in &refused {
        let reply = set_reward(app, caller, task, &json!(12)).await;
        assert_eq!(reply.status.as_u16(), 403, "{caller:?}: {}", reply.text);
        assert_error(&reply, 403, message);
    }
    assert_eq!(event_total(app, &app.org.hr).await, events);
    assert_eq!(reward_of(app, &admin, &agents_task).await, DEFAULT_REWARD);
    assert_eq!(reward_of(app, &admin, &treasury_task).await, DEFAULT_REWARD);
    assert_eq!(treasury_balance(app, &admin).await, 90);
    assert_eq!(budget_of(app, &payer, &payer).await["currentBalance"], 90);

    // Whoever pays may.
    assert_eq!(
        reprice(app, &Caller::Agent(payer.clone()), &agents_task, 11).await["reward"],
        11
    );
    for (caller, reward) in [
        (admin.clone(), 12),
        (Caller::Bearer(operator), 13),
        (Caller::Bearer(write_key), 14),
    ] {
        assert_eq!(
            reprice(app, &caller, &treasury_task, reward).await["reward"],
            reward
        );
    }
    assert_eq!(treasury_balance(app, &admin).await, 86);
    assert_eq!(budget_of(app, &payer, &payer).await["currentBalance"], 89);
    // Anyone who may edit a task still edits its other fields.
    let reply = Caller::Agent(other)
        .call(
            app,
            Method::PATCH,
            &format!("/tasks/{agents_task}"),
            Some(&json!({ "title": "retitled" })),
        )
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(reply.data()["reward"], 11);
}

async fn a_closed_task_keeps_its_reward(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 100).await;
    let worker = app.worker(&app.org).await;
    let done = id_of(
        &created(
            app,
            &admin,
            &json!({ "title": "finished", "assigneeId": worker.uuid }),
        )
        .await,
    );
    walk_as(app, &admin, &done, &["in_progress", "done"]).await;
    let cancelled = id_of(&created(app, &admin, &json!({ "title": "dropped" })).await);
    walk_as(app, &admin, &cancelled, &["cancelled"]).await;
    let balance = treasury_balance(app, &admin).await;
    let entries = treasury_history(app, &admin).await.len();
    let events = event_total(app, &app.org.hr).await;
    for (task, status) in [(&done, "done"), (&cancelled, "cancelled")] {
        for reward in [0, 10, 20] {
            let reply = set_reward(app, &admin, task, &json!(reward)).await;
            assert_error_exact(
                &reply,
                409,
                &format!("Task is {status} and cannot be changed"),
            );
        }
    }
    assert_eq!(treasury_balance(app, &admin).await, balance);
    assert_eq!(treasury_history(app, &admin).await.len(), entries);
    assert_eq!(event_total(app, &app.org.hr).await, events);
}

async fn bad_rewards_on_patch_are_400_and_change_nothing(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 100).await;
    let task = id_of(&created(app, &admin, &json!({ "title": "priced" })).await);
    let events = event_total(app, &app.org.hr).await;
    for (reward, message) in [
        (json!(-1), REWARD_RANGE),
        (json!(1_000_000_001), REWARD_RANGE),
        (json!(i64::MAX), REWARD_RANGE),
        (json!("20"), "reward"),
        (json!(2.5), "reward"),
        (json!(true), "reward"),
        (json!([20]), "reward"),
    ] {
        let reply = set_reward(app, &admin, &task, &reward).await;
        assert_eq!(reply.status.as_u16(), 400, "{reward}: {}", reply.text);
        assert_error(&reply, 400, message);
    }
    assert_eq!(reward_of(app, &admin, &task).await, DEFAULT_REWARD);
    assert_eq!(treasury_balance(app, &admin).await, 90);
    assert_eq!(event_total(app, &app.org.hr).await, events);
}
