//! The agents API end to end in one walk: register, read, spawn, activate, credits,
//! budget, capabilities, reputation.

use serde_json::json;

use crate::agent_support::{active_child, agent_record, agent_with, grant, register};
use crate::helpers::{TestApp, str_of};

api_tests!(agent_walkthrough);

async fn agent_walkthrough(app: &TestApp) {
    let (worker, data) = register(
        app,
        &app.org,
        &json!({"capabilities": [{"capability": " Rust ", "proficiency": "expert"}]}),
    )
    .await;
    assert_eq!(data["status"], "active");
    assert_eq!(data["level"], 1);
    assert_eq!(data["capabilities"][0]["capability"], "rust");
    // The new agent signs with its own secret.
    let me = agent_record(app, &worker, &worker).await;
    assert_eq!(me["agentId"], worker.handle.as_str());
    assert!(me.get("secret").is_none());

    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let child = active_child(app, &parent, &json!({})).await;
    let record = agent_record(app, &parent, &child).await;
    assert_eq!(record["level"], 4);
    assert_eq!(record["parentId"], parent.uuid.to_string());

    grant(app, &app.org, &parent, 100).await;
    let reply = app
        .post(
            &parent,
            "/agents/credits/transfer",
            &json!({"toAgentId": child.uuid, "amount": 30}).to_string(),
        )
        .await;
    let transfer = reply.data();
    assert_eq!(transfer["fromBalance"], 70);
    assert_eq!(transfer["toBalance"], 30);
    assert!(!str_of(transfer, "transferId").is_empty());

    let budget = app
        .get(&parent, &format!("/agents/{}/budget", parent.uuid))
        .await;
    assert_eq!(budget.data()["budgetPeriodSpent"], 30);
    assert_eq!(budget.data()["budgetRemaining"], serde_json::Value::Null);

    let history = app
        .get(&child, &format!("/agents/{}/credits/history", child.uuid))
        .await;
    assert_eq!(history.list()[0]["type"], "transfer_in");
    assert_eq!(history.list()[0]["balanceAfter"], 30);

    let matched = app
        .get(&parent, "/agents/capabilities/best-match?capabilities=rust")
        .await;
    assert_eq!(matched.data()["id"], worker.uuid.to_string());

    let bonus = app
        .post(
            &app.org.hr,
            &format!("/agents/{}/reputation/bonus", worker.uuid),
            &json!({"reason": "great work"}).to_string(),
        )
        .await;
    assert_eq!(bonus.data()["amount"], 10);
    let summary = app
        .get(&worker, &format!("/agents/{}/reputation", worker.uuid))
        .await;
    assert_eq!(summary.data()["reputationScore"], 60);
    assert_eq!(summary.data()["totalEvents"], 1);

    let tree = app
        .get(&parent, &format!("/agents/{}/hierarchy", parent.uuid))
        .await;
    assert_eq!(tree.data()["children"][0]["id"], child.uuid.to_string());
}
