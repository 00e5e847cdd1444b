//! A task's reward is escrowed when it is set (decision D-101): from the treasury when a
//! user or an API key creates the task, from the creating agent's balance (within its
//! period limit) otherwise. An explicit reward the payer cannot fund is 409 and changes
//! nothing; the default one makes a task with reward 0 and says so in `task.created`.

use serde_json::{Value, json};

use crate::agent_support::grant;
use crate::agents_budgets::budget_of;
use crate::economy_support::{
    DEFAULT_REWARD, REWARD_RANGE, admin, agent_payer, assert_chain, brief, create_as, created,
    created_payload, events_as, id_of, ledger_of, task_total, treasury_balance, treasury_history,
    treasury_payer,
};
use crate::helpers::{TestApp, assert_error, assert_error_exact};
use crate::stored::change_agent;
use crate::task_tools::{Caller, event_total};

api_tests!(
    a_user_task_escrows_its_reward_from_the_treasury,
    an_agent_task_escrows_its_reward_from_the_agent,
    an_explicit_reward_nobody_can_fund_is_409_and_changes_nothing,
    an_unfundable_default_reward_makes_a_task_without_one,
    bad_rewards_on_create_are_400_and_change_nothing,
);

async fn a_user_task_escrows_its_reward_from_the_treasury(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let admin = Caller::Bearer(token.clone());
    crate::economy_support::fund_treasury(app, &app.org, 100).await;

    // The default reward.
    let task = created(app, &admin, &json!({ "title": "paid by the house" })).await;
    let id = id_of(&task);
    assert_eq!(task["reward"], DEFAULT_REWARD, "{task}");
    assert_eq!(task["rewardPayer"], treasury_payer(&app.org), "{task}");
    assert_eq!(treasury_balance(app, &admin).await, 90);
    let history = treasury_history(app, &admin).await;
    assert_eq!(brief(&history), ["escrowed:-10:90", "granted:100:100"]);
    assert_eq!(history[0]["taskId"], id.as_str());
    assert_eq!(history[0]["orgId"], app.org.id.to_string());
    let payload = created_payload(app, &admin, &id).await;
    assert_eq!(payload["reward"], DEFAULT_REWARD);
    // Absent or null: nothing went unfunded.
    assert_eq!(payload["rewardUnfunded"], Value::Null, "{payload}");
    let escrowed = events_as(app, &admin, &id, "credits.escrowed").await;
    assert_eq!(escrowed.len(), 1);
    assert_eq!(escrowed[0]["entityType"], "task");
    assert_eq!(
        escrowed[0]["payload"],
        json!({ "amount": 10, "payer": treasury_payer(&app.org), "balanceAfter": 90 })
    );
    // The stored task is the answered one.
    let read = admin
        .call(app, reqwest::Method::GET, &format!("/tasks/{id}"), None)
        .await;
    assert_eq!(read.data(), &task);

    // An explicit reward, by a write key and by an operator: the treasury pays for both.
    let key = Caller::Bearer(app.api_key(&token, &["write"]).await);
    let task = created(app, &key, &json!({ "title": "by key", "reward": 25 })).await;
    assert_eq!(task["reward"], 25);
    assert_eq!(task["rewardPayer"], treasury_payer(&app.org));
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let operator = Caller::Bearer(operator);
    let task = created(
        app,
        &operator,
        &json!({ "title": "by operator", "reward": 5 }),
    )
    .await;
    assert_eq!(task["rewardPayer"], treasury_payer(&app.org));
    assert_eq!(treasury_balance(app, &admin).await, 60);

    // A reward of 0 escrows nothing.
    let events = event_total(app, &app.org.hr).await;
    let task = created(app, &admin, &json!({ "title": "free", "reward": 0 })).await;
    assert_eq!(task["reward"], 0);
    assert_eq!(task["rewardPayer"], treasury_payer(&app.org));
    assert!(
        events_as(app, &admin, &id_of(&task), "credits.escrowed")
            .await
            .is_empty()
    );
    assert_eq!(event_total(app, &app.org.hr).await, events + 1);
    assert_eq!(
        created_payload(app, &admin, &id_of(&task)).await["rewardUnfunded"],
        Value::Null
    );
    let history = treasury_history(app, &admin).await;
    assert_eq!(history.len(), 4);
    assert_chain(&history, 60, "the treasury");
}

async fn an_agent_task_escrows_its_reward_from_the_agent(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 100).await;
    grant(app, &app.org, &worker, 50).await;

    let task = app
        .create_task(&worker, &json!({ "title": "paid by me" }))
        .await;
    let id = id_of(&task);
    assert_eq!(task["reward"], DEFAULT_REWARD);
    assert_eq!(task["rewardPayer"], agent_payer(&worker));
    let budget = budget_of(app, &worker, &worker).await;
    assert_eq!(budget["currentBalance"], 40);
    // Escrowing is spending, for the period.
    assert_eq!(budget["budgetPeriodSpent"], 10);
    let ledger = ledger_of(app, &worker, &worker).await;
    assert_eq!(brief(&ledger), ["escrowed:-10:40", "granted:50:50"]);
    assert_eq!(ledger[0]["taskId"], id.as_str());
    assert_eq!(ledger[0]["counterpartyId"], Value::Null);
    let escrowed = events_as(app, &admin, &id, "credits.escrowed").await;
    assert_eq!(escrowed.len(), 1);
    assert_eq!(escrowed[0]["actorId"], worker.uuid.to_string());
    assert_eq!(
        escrowed[0]["payload"],
        json!({ "amount": 10, "payer": agent_payer(&worker), "balanceAfter": 40 })
    );

    let task = app
        .create_task(&worker, &json!({ "title": "dearer", "reward": 15 }))
        .await;
    assert_eq!(task["reward"], 15);
    let ledger = ledger_of(app, &worker, &worker).await;
    assert_eq!(
        brief(&ledger),
        ["escrowed:-15:25", "escrowed:-10:40", "granted:50:50"]
    );
    assert_chain(&ledger, 25, "the worker's ledger");
    // The treasury paid for none of it.
    assert_eq!(treasury_balance(app, &admin).await, 100);
    assert_eq!(treasury_history(app, &admin).await.len(), 1);
}

async fn an_explicit_reward_nobody_can_fund_is_409_and_changes_nothing(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 5).await;
    let worker = app.worker(&app.org).await;
    grant(app, &app.org, &worker, 5).await;
    let limited = app.worker(&app.org).await;
    grant(app, &app.org, &limited, 100).await;
    change_agent(app, &limited, |a| a.budget_period_limit = Some(20)).await;
    let events = event_total(app, &app.org.hr).await;

    let reply = create_as(app, &admin, &json!({ "title": "too dear", "reward": 6 })).await;
    assert_error_exact(
        &reply,
        409,
        "Insufficient treasury: 5 credits available, 6 needed",
    );
    let reply = create_as(
        app,
        &Caller::Agent(worker.clone()),
        &json!({ "title": "too dear", "reward": 6 }),
    )
    .await;
    assert_error_exact(
        &reply,
        409,
        "Insufficient balance: 5 credits available, 6 needed",
    );
    let reply = create_as(
        app,
        &Caller::Agent(limited.clone()),
        &json!({ "title": "over the period", "reward": 21 }),
    )
    .await;
    assert_error_exact(
        &reply,
        409,
        "Budget period limit exceeded: 20 credits remain in this period",
    );
    let assignee = app.worker(&app.org).await;
    let reply = create_as(
        app,
        &admin,
        &json!({ "title": "assigned", "reward": 1_000_000_000, "assigneeId": assignee.uuid }),
    )
    .await;
    assert_error(&reply, 409, "Insufficient treasury");

    // Nothing changed: no task, no event, no money moved.
    assert_eq!(task_total(app, &admin).await, 0);
    assert_eq!(event_total(app, &app.org.hr).await, events);
    assert_eq!(treasury_balance(app, &admin).await, 5);
    assert_eq!(treasury_history(app, &admin).await.len(), 1);
    assert_eq!(
        brief(&ledger_of(app, &worker, &worker).await),
        ["granted:5:5"]
    );
    let budget = budget_of(app, &limited, &limited).await;
    assert_eq!(budget["currentBalance"], 100);
    assert_eq!(budget["budgetPeriodSpent"], 0);

    // Exactly what is there is fine.
    let task = created(app, &admin, &json!({ "title": "all of it", "reward": 5 })).await;
    assert_eq!(task["reward"], 5);
    assert_eq!(treasury_balance(app, &admin).await, 0);
    let task = created(
        app,
        &Caller::Agent(limited.clone()),
        &json!({ "title": "the period's worth", "reward": 20 }),
    )
    .await;
    assert_eq!(task["reward"], 20);
    assert_eq!(
        budget_of(app, &limited, &limited).await["currentBalance"],
        80
    );
}

async fn an_unfundable_default_reward_makes_a_task_without_one(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    let poor = app.worker(&app.org).await;
    grant(app, &app.org, &poor, 3).await;
    let limited = app.worker(&app.org).await;
    grant(app, &app.org, &limited, 100).await;
    change_agent(app, &limited, |a| a.budget_period_limit = Some(5)).await;

    let callers = [
        (admin.clone(), treasury_payer(&app.org)),
        (Caller::Agent(poor.clone()), agent_payer(&poor)),
        (Caller::Agent(limited.clone()), agent_payer(&limited)),
    ];
    for (caller, payer) in &callers {
        let task = created(app, caller, &json!({ "title": "on credit" })).await;
        assert_eq!(task["reward"], 0, "{task}");
        assert_eq!(&task["rewardPayer"], payer, "{task}");
        let id = id_of(&task);
        let payload = created_payload(app, &admin, &id).await;
        assert_eq!(payload["reward"], 0, "{payload}");
        assert_eq!(payload["rewardUnfunded"], DEFAULT_REWARD, "{payload}");
        assert!(
            events_as(app, &admin, &id, "credits.escrowed")
                .await
                .is_empty()
        );
    }
    assert_eq!(treasury_balance(app, &admin).await, 0);
    assert!(treasury_history(app, &admin).await.is_empty());
    assert_eq!(brief(&ledger_of(app, &poor, &poor).await), ["granted:3:3"]);
    let budget = budget_of(app, &limited, &limited).await;
    assert_eq!(budget["currentBalance"], 100);
    assert_eq!(budget["budgetPeriodSpent"], 0);
    assert_eq!(task_total(app, &admin).await, 3);
}

async fn bad_rewards_on_create_are_400_and_change_nothing(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 1_000_000_000).await;
    let worker = app.worker(&app.org).await;
    grant(app, &app.org, &worker, 1_000).await;
    let events = event_total(app, &app.org.hr).await;
    let bad = [
        (json!({ "title": "x", "reward": -1 }), REWARD_RANGE),
        (
            json!({ "title": "x", "reward": 1_000_000_001 }),
            REWARD_RANGE,
        ),
        (json!({ "title": "x", "reward": i64::MIN }), REWARD_RANGE),
        (json!({ "title": "x", "reward": "10" }), "reward"),
        (json!({ "title": "x", "reward": 1.5 }), "reward"),
        (json!({ "title": "x", "reward": [10] }), "reward"),
        (
            json!({ "title": "x", "reward": { "amount": 10 } }),
            "reward",
        ),
        (
            json!({ "title": "x", "rewardPayer": { "kind": "agent", "id": worker.uuid } }),
            "property rewardPayer should not exist",
        ),
    ];
    for caller in [admin.clone(), Caller::Agent(worker.clone())] {
        for (body, message) in &bad {
            let reply = create_as(app, &caller, body).await;
            assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
            assert_error(&reply, 400, message);
        }
    }
    assert_eq!(task_total(app, &admin).await, 0);
    assert_eq!(event_total(app, &app.org.hr).await, events);
    assert_eq!(treasury_balance(app, &admin).await, 1_000_000_000);
    assert_eq!(
        budget_of(app, &worker, &worker).await["currentBalance"],
        1_000
    );

    // The largest reward is fine.
    let task = created(
        app,
        &admin,
        &json!({ "title": "the largest", "reward": 1_000_000_000 }),
    )
    .await;
    assert_eq!(task["reward"], 1_000_000_000);
    assert_eq!(treasury_balance(app, &admin).await, 0);
}
