//! The runaway guard's spend breaker counts a reward an agent escrows like a spend
//! (decision D-101): creating or re-pricing tasks cannot drain a balance past the hourly
//! threshold that spends alone could not; the change that goes past is refused with
//! nothing moved, and the agent is suspended.

use reqwest::Method;
use serde_json::json;

use crate::agent_support::grant;
use crate::economy_support::{balance_of, ledger_of, set_reward, task_total};
use crate::helpers::{Agent, TestApp, assert_error, send, str_of};
use crate::task_tools::Caller;

api_tests!(escrowed_rewards_count_toward_the_spend_breaker);

/// The agent's status as the HR agent reads it.
async fn status_of(app: &TestApp, agent: &Agent) -> String {
    let reply = app
        .get(&app.org.hr, &format!("/agents/{}", agent.uuid))
        .await;
    str_of(reply.data(), "status")
}

async fn escrowed_rewards_count_toward_the_spend_breaker(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let reply = send(app.bearer(
        &token,
        Method::PATCH,
        "/agents/guard",
        Some(&json!({ "creditsPerHour": 100 })),
    ))
    .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let worker = app.worker(&app.org).await;
    grant(app, &app.org, &worker, 1_000).await;
    let me = Caller::Agent(worker.clone());

    let spent = app
        .post(
            &worker,
            "/agents/credits/spend",
            &json!({ "amount": 40 }).to_string(),
        )
        .await;
    assert_eq!(spent.status.as_u16(), 200, "{}", spent.text);
    let made = app
        .post(
            &worker,
            "/tasks",
            &json!({ "title": "priced", "reward": 50 }).to_string(),
        )
        .await;
    assert_eq!(made.status.as_u16(), 200, "{}", made.text);
    let task = str_of(made.data(), "id");
    let raised = set_reward(app, &me, &task, &json!(60)).await;
    assert_eq!(raised.status.as_u16(), 200, "{}", raised.text);
    assert_eq!(status_of(app, &worker).await, "active", "100 of 100");
    assert_eq!(balance_of(app, &app.org.hr, &worker).await, 900);

    // One more credit in escrow goes past the threshold.
    let over = app
        .post(
            &worker,
            "/tasks",
            &json!({ "title": "one too many", "reward": 1 }).to_string(),
        )
        .await;
    assert_error(&over, 429, "runaway guard: 101 credits spent within");
    assert_eq!(status_of(app, &worker).await, "suspended");
    assert_eq!(balance_of(app, &app.org.hr, &worker).await, 900);
    assert_eq!(task_total(app, &Caller::Bearer(token)).await, 1);
    assert_eq!(ledger_of(app, &app.org.hr, &worker).await.len(), 4);
    let events = app
        .events_of_type(&app.org.hr, &worker.uuid.to_string(), "agent.suspended")
        .await;
    assert_eq!(events.len(), 1);
    let breaker = &events[0]["payload"]["breaker"];
    assert_eq!(breaker["kind"], "spend_velocity");
    assert_eq!(breaker["measured"], 101);
    assert_eq!(breaker["limit"], 100);
}
