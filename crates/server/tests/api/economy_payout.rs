//! Where an escrow goes (decision D-101): done pays it to the assignee less the parent's
//! management fee; cancelled returns it to the payer ("cancelled"), and so does done with
//! nobody assigned ("unassigned"); reassignment leaves it in escrow; a payer that does
//! its own task gets it back in full, with no fee ("self").

use muster_domain::model::FeePct;
use serde_json::{Value, json};

use crate::agent_support::grant;
use crate::economy_support::{
    DEFAULT_REWARD, admin, agent_payer, assert_chain, assign_as, balance_of, brief, created,
    events_as, id_of, ledger_of, of_type, treasury_balance, treasury_history, treasury_payer,
    walk_as,
};
use crate::helpers::{Agent, TestApp};
use crate::stored::{change_agent, set_parent};
use crate::task_tools::Caller;

api_tests!(
    done_pays_the_escrow_with_the_parents_fee,
    cancelling_returns_the_escrow_to_the_payer,
    done_without_an_assignee_returns_the_escrow,
    reassignment_keeps_the_escrow,
    the_payer_doing_its_own_task_gets_it_back_without_fee,
);

/// A parent taking `fee_pct` and a child of it, both active workers.
async fn family(app: &TestApp, fee_pct: i64) -> (Agent, Agent) {
    let parent = app.worker(&app.org).await;
    let fee = FeePct::new(fee_pct).unwrap();
    change_agent(app, &parent, move |a| a.management_fee_pct = fee).await;
    let child = app.worker(&app.org).await;
    set_parent(app, &child, &parent).await;
    (parent, child)
}

/// The one `credits.refunded` payload of `task`.
async fn refund_of(app: &TestApp, caller: &Caller, task: &str) -> Value {
    let events = events_as(app, caller, task, "credits.refunded").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["entityType"], "task");
    events[0]["payload"].clone()
}

async fn done_pays_the_escrow_with_the_parents_fee(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 100).await;
    let (parent, child) = family(app, 20).await;

    // Paid by the treasury: 10, of which the parent takes 2.
    let task = created(
        app,
        &admin,
        &json!({ "title": "for the house", "assigneeId": child.uuid }),
    )
    .await;
    let id = id_of(&task);
    walk_as(
        app,
        &Caller::Agent(child.clone()),
        &id,
        &["in_progress", "done"],
    )
    .await;
    assert_eq!(balance_of(app, &child, &child).await, 8);
    assert_eq!(balance_of(app, &child, &parent).await, 2);
    let earned = ledger_of(app, &child, &child).await;
    assert_eq!(brief(&earned), ["earned:8:8"]);
    assert_eq!(earned[0]["taskId"], id.as_str());
    let fee = ledger_of(app, &child, &parent).await;
    assert_eq!(brief(&fee), ["fee:2:2"]);
    assert_eq!(fee[0]["counterpartyId"], child.uuid.to_string());
    // The treasury paid once, at creation.
    assert_eq!(treasury_balance(app, &admin).await, 90);
    assert_eq!(
        brief(&treasury_history(app, &admin).await),
        ["escrowed:-10:90", "granted:100:100"]
    );
    assert!(
        events_as(app, &admin, &id, "credits.refunded")
            .await
            .is_empty()
    );
    let sources: Vec<Value> = events_as(app, &admin, &parent.uuid.to_string(), "credits.earned")
        .await
        .iter()
        .map(|e| e["payload"]["source"].clone())
        .collect();
    assert_eq!(sources, [json!("management_fee")]);
    let child_earned = events_as(app, &admin, &child.uuid.to_string(), "credits.earned").await;
    assert_eq!(child_earned[0]["payload"]["source"], "reward");
    assert_eq!(child_earned[0]["payload"]["amount"], 8);

    // Paid by an unrelated agent: 25, of which the parent takes 5.
    let payer = app.worker(&app.org).await;
    grant(app, &app.org, &payer, 30).await;
    let task = created(
        app,
        &Caller::Agent(payer.clone()),
        &json!({ "title": "for me", "assigneeId": child.uuid, "reward": 25 }),
    )
    .await;
    assert_eq!(task["rewardPayer"], agent_payer(&payer));
    walk_as(
        app,
        &Caller::Agent(child.clone()),
        &id_of(&task),
        &["in_progress", "review", "done"],
    )
    .await;
    assert_eq!(balance_of(app, &child, &child).await, 8 + 20);
    assert_eq!(balance_of(app, &child, &parent).await, 2 + 5);
    assert_eq!(
        brief(&ledger_of(app, &payer, &payer).await),
        ["escrowed:-25:5", "granted:30:30"]
    );
    for agent in [&child, &parent, &payer] {
        let ledger = ledger_of(app, agent, agent).await;
        let balance = balance_of(app, agent, agent).await;
        assert_chain(&ledger, balance, "a ledger");
    }
}

async fn cancelling_returns_the_escrow_to_the_payer(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 100).await;
    let (parent, child) = family(app, 20).await;

    let task = id_of(
        &created(
            app,
            &admin,
            &json!({ "title": "dropped", "assigneeId": child.uuid }),
        )
        .await,
    );
    walk_as(
        app,
        &Caller::Agent(child.clone()),
        &task,
        &["in_progress", "cancelled"],
    )
    .await;
    assert_eq!(treasury_balance(app, &admin).await, 100);
    let history = treasury_history(app, &admin).await;
    assert_eq!(
        brief(&history),
        ["refunded:10:100", "escrowed:-10:90", "granted:100:100"]
    );
    assert_eq!(history[0]["taskId"], task.as_str());
    assert_eq!(
        refund_of(app, &admin, &task).await,
        json!({
            "amount": 10, "payer": treasury_payer(&app.org), "balanceAfter": 100,
            "reason": "cancelled",
        })
    );
    assert!(ledger_of(app, &child, &child).await.is_empty());
    assert!(ledger_of(app, &child, &parent).await.is_empty());

    // An agent's escrow comes back to the agent, cancelled before any work.
    let payer = app.worker(&app.org).await;
    grant(app, &app.org, &payer, 40).await;
    let task = id_of(
        &created(
            app,
            &Caller::Agent(payer.clone()),
            &json!({ "title": "never mind", "assigneeId": child.uuid, "reward": 15 }),
        )
        .await,
    );
    assert_eq!(balance_of(app, &payer, &payer).await, 25);
    walk_as(app, &Caller::Agent(payer.clone()), &task, &["cancelled"]).await;
    let ledger = ledger_of(app, &payer, &payer).await;
    assert_eq!(
        brief(&ledger),
        ["refunded:15:40", "escrowed:-15:25", "granted:40:40"]
    );
    assert_eq!(ledger[0]["taskId"], task.as_str());
    assert_chain(&ledger, 40, "the payer's ledger");
    assert_eq!(
        refund_of(app, &admin, &task).await,
        json!({
            "amount": 15, "payer": agent_payer(&payer), "balanceAfter": 40,
            "reason": "cancelled",
        })
    );
    assert_eq!(balance_of(app, &child, &child).await, 0);
}

async fn done_without_an_assignee_returns_the_escrow(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 100).await;
    let task = id_of(&created(app, &admin, &json!({ "title": "nobody's", "reward": 30 })).await);
    walk_as(app, &admin, &task, &["in_progress", "review", "done"]).await;
    let history = treasury_history(app, &admin).await;
    assert_eq!(
        brief(&history),
        ["refunded:30:100", "escrowed:-30:70", "granted:100:100"]
    );
    assert_eq!(refund_of(app, &admin, &task).await["reason"], "unassigned");

    let payer = app.worker(&app.org).await;
    grant(app, &app.org, &payer, 10).await;
    let me = Caller::Agent(payer.clone());
    let task = id_of(&created(app, &me, &json!({ "title": "unclaimed" })).await);
    walk_as(app, &me, &task, &["in_progress", "done"]).await;
    let ledger = ledger_of(app, &payer, &payer).await;
    assert_eq!(
        brief(&ledger),
        ["refunded:10:10", "escrowed:-10:0", "granted:10:10"]
    );
    assert_eq!(refund_of(app, &me, &task).await["reason"], "unassigned");
    assert_eq!(
        crate::economy_support::task_as(app, &me, &task).await["status"],
        "done"
    );
}

async fn reassignment_keeps_the_escrow(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    crate::economy_support::fund_treasury(app, &app.org, 100).await;
    let (first, second) = (app.worker(&app.org).await, app.worker(&app.org).await);
    let task = id_of(
        &created(
            app,
            &admin,
            &json!({ "title": "handed on", "assigneeId": first.uuid, "reward": 20 }),
        )
        .await,
    );
    walk_as(app, &Caller::Agent(first.clone()), &task, &["in_progress"]).await;
    assign_as(app, &admin, &task, &second).await;
    assign_as(app, &Caller::Agent(second.clone()), &task, &first).await;
    assign_as(app, &Caller::Agent(first.clone()), &task, &second).await;
    // Nothing moved: the escrow waits for the task to close.
    assert_eq!(treasury_balance(app, &admin).await, 80);
    assert_eq!(treasury_history(app, &admin).await.len(), 2);
    let stored = crate::economy_support::task_as(app, &admin, &task).await;
    assert_eq!(stored["reward"], 20);
    assert_eq!(stored["rewardPayer"], treasury_payer(&app.org));
    assert!(ledger_of(app, &first, &first).await.is_empty());

    walk_as(app, &Caller::Agent(second.clone()), &task, &["done"]).await;
    assert_eq!(
        brief(&ledger_of(app, &second, &second).await),
        ["earned:20:20"]
    );
    assert!(ledger_of(app, &first, &first).await.is_empty());
    assert_eq!(treasury_balance(app, &admin).await, 80);
}

async fn the_payer_doing_its_own_task_gets_it_back_without_fee(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    let (parent, child) = family(app, 50).await;
    grant(app, &app.org, &child, 60).await;
    let me = Caller::Agent(child.clone());
    // Created unassigned, taken later: still its own money.
    let task = id_of(&created(app, &me, &json!({ "title": "mine", "reward": 40 })).await);
    assert_eq!(balance_of(app, &child, &child).await, 20);
    assign_as(app, &me, &task, &child).await;
    walk_as(app, &me, &task, &["in_progress", "done"]).await;
    assert_eq!(balance_of(app, &child, &child).await, 60);
    assert_eq!(balance_of(app, &child, &parent).await, 0);
    let ledger = ledger_of(app, &child, &child).await;
    assert_eq!(
        brief(&ledger),
        ["refunded:40:60", "escrowed:-40:20", "granted:60:60"]
    );
    assert!(of_type(&ledger, "earned").is_empty());
    assert!(ledger_of(app, &child, &parent).await.is_empty());
    assert_eq!(
        refund_of(app, &admin, &task).await,
        json!({
            "amount": 40, "payer": agent_payer(&child), "balanceAfter": 60, "reason": "self",
        })
    );
    assert!(
        events_as(app, &admin, &child.uuid.to_string(), "credits.earned")
            .await
            .is_empty()
    );

    // The same task done by someone else pays as usual.
    let task = id_of(&created(app, &me, &json!({ "title": "theirs" })).await);
    let other = app.worker(&app.org).await;
    assign_as(app, &me, &task, &other).await;
    walk_as(
        app,
        &Caller::Agent(other.clone()),
        &task,
        &["in_progress", "done"],
    )
    .await;
    assert_eq!(balance_of(app, &other, &other).await, DEFAULT_REWARD);
    assert_eq!(balance_of(app, &child, &child).await, 50);
}
