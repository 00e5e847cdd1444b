//! Issue 62's probe, replayed (decision D-101): a level-3 worker agent, signing its own
//! requests, creates tasks assigned to itself and moves each to done, five times. With
//! nothing to pay the reward from the tasks carry none; with a balance each escrow comes
//! back in full, with no management fee. Either way the balance and the reputation end
//! where they started, and nothing is left to transfer on.

use serde_json::{Value, json};

use crate::agent_support::{agent_with, grant};
use crate::economy_support::{
    DEFAULT_REWARD, agent_payer, assert_chain, balance_of, brief, created_payload, id_of,
    ledger_of, of_type, score_of,
};
use crate::helpers::{Agent, TestApp, str_of};
use crate::stored::set_parent;
use crate::task_support::walk;
use crate::task_tools::{Caller, patch};

api_tests!(
    self_dealing_without_funds_mints_nothing,
    self_dealing_with_funds_gets_each_escrow_back,
);

/// Loops the worker did.
const LOOPS: usize = 5;

/// The reputation history's length of `agent`.
async fn reputation_events(app: &TestApp, agent: &Agent) -> i64 {
    let reply = app
        .get(&app.org.hr, &format!("/agents/{}/reputation", agent.uuid))
        .await;
    reply.data()["totalEvents"].as_i64().unwrap()
}

/// One loop: a task assigned to itself, moved to done; answers the created task.
async fn self_deal(app: &TestApp, worker: &Agent, n: usize) -> Value {
    let body = json!({ "title": format!("my own work {n}"), "assigneeId": worker.uuid });
    let task = app.create_task(worker, &body).await;
    assert_eq!(task["creatorId"], worker.uuid.to_string());
    assert_eq!(task["assigneeId"], worker.uuid.to_string());
    assert_eq!(task["rewardPayer"], agent_payer(worker), "{task}");
    walk(app, worker, &id_of(&task), &["in_progress", "done"]).await;
    task
}

/// A transfer of 1 credit to `to` is refused for the balance.
async fn nothing_to_move_on(app: &TestApp, from: &Agent, to: &Agent, balance: i64) {
    let body = json!({ "toAgentId": to.uuid, "amount": balance + 1 }).to_string();
    let reply = app.post(from, "/agents/credits/transfer", &body).await;
    assert_eq!(reply.status.as_u16(), 409, "{}", reply.text);
    assert_eq!(
        reply.body["message"],
        format!(
            "Insufficient balance: {balance} credits available, {} needed",
            balance + 1
        )
    );
}

async fn self_dealing_without_funds_mints_nothing(app: &TestApp) {
    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let worker = agent_with(app, &app.org, 3, "worker", "worker").await;
    set_parent(app, &worker, &parent).await;
    let reply = patch(
        app,
        &app.org.hr,
        &format!("/agents/{}", parent.uuid),
        &json!({ "managementFeePct": 50 }).to_string(),
    )
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(balance_of(app, &worker, &worker).await, 0);
    assert_eq!(score_of(app, &worker, &worker).await, 50);

    for n in 0..LOOPS {
        let task = self_deal(app, &worker, n).await;
        // Nothing to escrow the default reward from: the task carries none, and says so.
        assert_eq!(task["reward"], 0, "{task}");
        let payload = created_payload(app, &Caller::Agent(worker.clone()), &id_of(&task)).await;
        assert_eq!(payload["reward"], 0, "{payload}");
        assert_eq!(payload["rewardUnfunded"], DEFAULT_REWARD, "{payload}");
        let stored = app.get(&worker, &format!("/tasks/{}", id_of(&task))).await;
        assert_eq!(stored.data()["status"], "done");
        assert_eq!(balance_of(app, &worker, &worker).await, 0, "loop {n}");
        assert_eq!(score_of(app, &worker, &worker).await, 50, "loop {n}");
    }

    assert!(ledger_of(app, &worker, &worker).await.is_empty());
    assert!(ledger_of(app, &worker, &parent).await.is_empty());
    assert_eq!(balance_of(app, &worker, &parent).await, 0);
    assert_eq!(reputation_events(app, &worker).await, 0);
    let earned = app
        .get(
            &app.org.hr,
            &format!("/events?type=credits.earned&entityId={}", worker.uuid),
        )
        .await;
    assert_eq!(earned.body["meta"]["total"], 0, "{}", earned.text);
    nothing_to_move_on(app, &worker, &parent, 0).await;
}

async fn self_dealing_with_funds_gets_each_escrow_back(app: &TestApp) {
    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let worker = agent_with(app, &app.org, 3, "worker", "worker").await;
    set_parent(app, &worker, &parent).await;
    let reply = patch(
        app,
        &app.org.hr,
        &format!("/agents/{}", parent.uuid),
        &json!({ "managementFeePct": 50 }).to_string(),
    )
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    grant(app, &app.org, &worker, 100).await;

    let mut expected = vec!["granted:100:100".to_owned()];
    for n in 0..LOOPS {
        let task = self_deal(app, &worker, n).await;
        // The reward was escrowed from its own balance, and came back in full.
        assert_eq!(task["reward"], DEFAULT_REWARD, "{task}");
        let id = id_of(&task);
        let payload = created_payload(app, &Caller::Agent(worker.clone()), &id).await;
        assert_eq!(payload["reward"], DEFAULT_REWARD, "{payload}");
        assert_eq!(payload["rewardUnfunded"], Value::Null, "{payload}");
        assert_eq!(balance_of(app, &worker, &worker).await, 100, "loop {n}");
        assert_eq!(score_of(app, &worker, &worker).await, 50, "loop {n}");
        expected.insert(0, "escrowed:-10:90".to_owned());
        expected.insert(0, "refunded:10:100".to_owned());
        let ledger = ledger_of(app, &worker, &worker).await;
        assert_eq!(brief(&ledger), expected, "loop {n}");
        assert_eq!(ledger[0]["taskId"], id.as_str());
        assert_eq!(ledger[1]["taskId"], id.as_str());
        let refunds = app
            .get(
                &worker,
                &format!("/events?type=credits.refunded&entityId={id}"),
            )
            .await;
        let refund = &refunds.list()[0]["payload"];
        assert_eq!(refund["reason"], "self", "{refund}");
        assert_eq!(refund["amount"], DEFAULT_REWARD, "{refund}");
        assert_eq!(refund["payer"], agent_payer(&worker), "{refund}");
        assert_eq!(refund["balanceAfter"], 100, "{refund}");
    }

    let ledger = ledger_of(app, &worker, &worker).await;
    assert_chain(&ledger, 100, "the worker's ledger");
    assert!(of_type(&ledger, "earned").is_empty(), "{ledger:?}");
    // The parent took no fee from its child's own money.
    assert!(ledger_of(app, &worker, &parent).await.is_empty());
    assert_eq!(balance_of(app, &worker, &parent).await, 0);
    assert_eq!(reputation_events(app, &worker).await, 0);
    let earned = app
        .get(
            &app.org.hr,
            &format!("/events?type=credits.earned&entityId={}", parent.uuid),
        )
        .await;
    assert_eq!(earned.body["meta"]["total"], 0, "{}", earned.text);
    // Only the 100 granted can go on.
    nothing_to_move_on(app, &worker, &parent, 100).await;
    let reply = app
        .get(&worker, &format!("/agents/{}/credits/balance", worker.uuid))
        .await;
    assert_eq!(str_of(reply.data(), "agentId"), worker.uuid.to_string());
}
