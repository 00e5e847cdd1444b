//! Budgets (decisions D-57, D-60, D-61): the budget status and its rounding, who sets a
//! period limit, can-spend, the alerts, and the end of a period, rolled over lazily on
//! reads and spends and in bulk by the `BudgetRollover` job, once however many run.

use std::sync::Arc;

use muster_domain::model::instant::format_millis;
use muster_domain::model::{AgentRole, Level};
use muster_domain::rules::budget::BudgetPeriod;
use muster_domain::service::BudgetRollover;
use muster_persistence::Database;
use reqwest::Method;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use crate::agent_support::{active_child, agent_with, register};
use crate::economy_support::ledger_of;
use crate::helpers::{
    Agent, Org, Reply, TestApp, assert_bad_queries, assert_error, assert_error_exact,
    assert_timestamp, keys_of, send,
};
use crate::stored::{all_agents, change_agent, stored_agent};
use crate::task_support::{TestClock, another_instance, events_typed};
use crate::task_tools::{Caller, event_total, patch, user_id};

api_tests!(
    budget_reads_show_limits_and_utilization,
    budget_limits_are_set_by_overseers_only,
    budget_patch_checks_its_body_and_can_restart_the_period,
    can_spend_weighs_balance_period_and_status,
    alerts_list_active_agents_near_their_limit,
    an_ended_period_rolls_over_when_read_or_spent,
    the_rollover_job_rolls_each_ended_period_once,
);

/// The keys of a budget status object.
pub const BUDGET_KEYS: [&str; 7] = [
    "agentId",
    "budgetPeriodLimit",
    "budgetPeriodSpent",
    "budgetPeriodStart",
    "budgetRemaining",
    "currentBalance",
    "utilizationPercent",
];

/// `/agents/:id/budget`.
pub fn budget_path(agent: &Agent) -> String {
    format!("/agents/{}/budget", agent.uuid)
}

/// The budget status of `agent` as `reader` sees it (asserting 200).
pub async fn budget_of(app: &TestApp, reader: &Agent, agent: &Agent) -> Value {
    let reply = app.get(reader, &budget_path(agent)).await;
    let data = reply.data().clone();
    assert_eq!(keys_of(&data), BUDGET_KEYS, "{}", reply.text);
    data
}

/// An active agent of `org` (mode worker, no parent) with `role` and `level`, inserted
/// as stored: founder and admin agents are not registered by the HR agent.
pub async fn staff(app: &TestApp, org: &Org, role: &str, level: u8) -> Agent {
    let agent = app.add_agent(org, "worker", "active").await;
    let (role, level) = (
        AgentRole::parse(role).unwrap(),
        Level::new(level.into()).unwrap(),
    );
    change_agent(app, &agent, move |a| {
        a.role = role;
        a.level = level;
    })
    .await;
    agent
}

/// The stored `budget_period_spent` of `agent` (as stored: reads through the API roll an
/// ended period over).
pub async fn stored_spent(app: &TestApp, agent: &Agent) -> i64 {
    stored_agent(app, agent).await.budget_period_spent
}

/// Whether the stored `budget_period_start` of `agent` is `at`.
pub async fn stored_start_is(app: &TestApp, agent: &Agent, at: OffsetDateTime) -> bool {
    stored_agent(app, agent).await.budget_period_start == at
}

/// The start of today's budget period (00:00 UTC).
pub fn today() -> OffsetDateTime {
    BudgetPeriod::Day.start_of(OffsetDateTime::now_utc())
}

/// `at` as the API writes it.
pub fn wire(at: OffsetDateTime) -> String {
    format_millis(at).unwrap()
}

/// Puts `agent`'s period into yesterday with `spent` credits spent in it.
pub async fn spent_yesterday(app: &TestApp, agent: &Agent, spent: i64) {
    let yesterday = today() - Duration::days(1);
    change_agent(app, agent, move |a| {
        a.budget_period_start = yesterday;
        a.budget_period_spent = spent;
    })
    .await;
}

/// The `agentId` of each element of a list reply.
fn agent_ids(reply: &Reply) -> Vec<String> {
    reply
        .list()
        .iter()
        .map(|e| e["agentId"].as_str().unwrap().to_owned())
        .collect()
}

/// `PATCH /agents/:id/budget` with `body` as `caller`.
async fn set_budget(app: &TestApp, caller: &Caller, agent: &Agent, body: &Value) -> Reply {
    caller
        .call(app, Method::PATCH, &budget_path(agent), Some(body))
        .await
}

/// `GET /agents/:id/budget/can-spend?amount=N` as `reader`: `(canSpend, remaining)`.
async fn can_spend(app: &TestApp, reader: &Agent, agent: &Agent, amount: i64) -> (bool, i64) {
    let reply = app
        .get(
            reader,
            &format!("/agents/{}/budget/can-spend?amount={amount}", agent.uuid),
        )
        .await;
    let data = reply.data();
    assert_eq!(keys_of(data), ["canSpend", "remaining"], "{}", reply.text);
    (
        data["canSpend"].as_bool().unwrap(),
        data["remaining"].as_i64().unwrap(),
    )
}

/// The budget-updated events of `agent`, newest first.
async fn budget_events(app: &TestApp, agent: &Agent) -> Vec<Value> {
    events_typed(
        app,
        &app.org.hr,
        &agent.uuid.to_string(),
        "agent.budget_updated",
    )
    .await
}

async fn budget_reads_show_limits_and_utilization(app: &TestApp) {
    let (agent, _) = register(app, &app.org, &json!({})).await;
    // Without a limit: remaining and utilization are null.
    let status = budget_of(app, &agent, &agent).await;
    assert_eq!(status["agentId"], agent.uuid.to_string());
    assert_eq!(status["currentBalance"], 0);
    assert_eq!(status["budgetPeriodLimit"], Value::Null);
    assert_eq!(status["budgetPeriodSpent"], 0);
    assert_eq!(status["budgetRemaining"], Value::Null);
    assert_eq!(status["utilizationPercent"], Value::Null);
    assert_timestamp(&status, "budgetPeriodStart");
    assert_eq!(status["budgetPeriodStart"], wire(today()));
    change_agent(app, &agent, |a| {
        a.current_balance = 7;
        a.budget_period_spent = 5;
    })
    .await;
    let status = budget_of(app, &app.org.hr, &agent).await;
    assert_eq!(status["currentBalance"], 7);
    assert_eq!(status["budgetPeriodSpent"], 5);
    assert_eq!(status["budgetRemaining"], Value::Null);
    assert_eq!(status["utilizationPercent"], Value::Null);

    // (limit, spent) -> (remaining, utilization): round(100 × spent / limit), halves up;
    // 100 for a limit of 0; remaining = limit - spent, below 0 past a lowered limit.
    let cases = [
        (200, 3, 197, 2),
        (200, 2, 198, 1),
        (3, 2, 1, 67),
        (3, 1, 2, 33),
        (1000, 795, 205, 80),
        (1000, 794, 206, 79),
        (100, 0, 100, 0),
        (100, 100, 0, 100),
        (10, 25, -15, 250),
        (0, 0, 0, 100),
        (0, 5, -5, 100),
    ];
    for (limit, spent, remaining, utilization) in cases {
        change_agent(app, &agent, move |a| {
            a.budget_period_limit = Some(limit);
            a.budget_period_spent = spent;
        })
        .await;
        let status = budget_of(app, &app.org.hr, &agent).await;
        let case = format!("limit {limit}, spent {spent}");
        assert_eq!(status["budgetPeriodLimit"], limit, "{case}");
        assert_eq!(status["budgetPeriodSpent"], spent, "{case}");
        assert_eq!(status["budgetRemaining"], remaining, "{case}");
        assert_eq!(status["utilizationPercent"], utilization, "{case}");
        assert_eq!(status["currentBalance"], 7, "{case}");
    }

    // Any reader of the organization, users too; never another organization.
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let reply = send(app.bearer(&viewer, Method::GET, &budget_path(&agent), None)).await;
    assert_eq!(reply.data()["budgetPeriodLimit"], 0);
    let reply = app.get(&app.other.hr, &budget_path(&agent)).await;
    assert_error_exact(&reply, 404, &format!("Agent {} not found", agent.uuid));
    let unknown = uuid::Uuid::now_v7();
    let reply = app
        .get(&app.org.hr, &format!("/agents/{unknown}/budget"))
        .await;
    assert_error_exact(&reply, 404, &format!("Agent {unknown} not found"));
    let reply = app.get(&app.org.hr, "/agents/not-a-uuid/budget").await;
    assert_error(&reply, 400, "");
}

async fn budget_limits_are_set_by_overseers_only(app: &TestApp) {
    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let child = active_child(app, &parent, &json!({})).await;
    let sibling = active_child(app, &parent, &json!({})).await;
    let unrelated = agent_with(app, &app.org, 5, "worker", "worker").await;
    let level_nine = agent_with(app, &app.org, 9, "worker", "worker").await;
    let hr_below_ten = agent_with(app, &app.org, 5, "hr", "worker").await;
    let level_ten = agent_with(app, &app.org, 10, "worker", "worker").await;
    let admin_agent = staff(app, &app.org, "admin", 3).await;
    let admin = app.admin_token(&app.org).await;
    let admin_id = user_id(app, &admin).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let write_key = app.api_key(&admin, &["write"]).await;
    let read_key = app.api_key(&admin, &["read"]).await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;

    // Whoever oversees the child sets its limit; each change is an event by its actor.
    let as_agent = |a: &Agent, limit: i64| (Caller::Agent(a.clone()), a.uuid.to_string(), limit);
    let allowed = [
        as_agent(&parent, 11),
        as_agent(&level_ten, 12),
        as_agent(&app.org.hr, 13),
        as_agent(&admin_agent, 14),
        (Caller::Bearer(admin.clone()), admin_id.clone(), 15),
        (Caller::Bearer(admin_key), admin_id.clone(), 16),
        as_agent(&parent, 0),
    ];
    for (n, (caller, actor, limit)) in allowed.iter().enumerate() {
        let reply = set_budget(app, caller, &child, &json!({ "budgetPeriodLimit": limit })).await;
        let data = reply.data();
        assert_eq!(keys_of(data), BUDGET_KEYS, "{}", reply.text);
        assert_eq!(data["agentId"], child.uuid.to_string());
        assert_eq!(data["budgetPeriodLimit"], *limit, "{actor}");
        assert_eq!(
            budget_of(app, &child, &child).await["budgetPeriodLimit"],
            *limit
        );
        let events = budget_events(app, &child).await;
        assert_eq!(events.len(), n + 1, "{actor}");
        assert_eq!(events[0]["payload"], json!({ "budgetPeriodLimit": limit }));
        assert_eq!(events[0]["actorId"], actor.as_str());
        assert_eq!(events[0]["entityType"], "agent");
    }

    // Everybody else is refused, and nothing changes.
    let before = event_total(app, &app.org.hr).await;
    let refused: [(Caller, &str); 10] = [
        (Caller::Agent(unrelated.clone()), "only the agent's parent"),
        (Caller::Agent(child.clone()), "only the agent's parent"),
        (Caller::Agent(sibling.clone()), "only the agent's parent"),
        (Caller::Agent(level_nine.clone()), "only the agent's parent"),
        (
            Caller::Agent(hr_below_ten.clone()),
            "only the agent's parent",
        ),
        (Caller::Bearer(write_key), "API key lacks the admin scope"),
        (Caller::Bearer(read_key), "API key lacks the"),
        (Caller::Bearer(operator), "only the agent's parent"),
        (Caller::Bearer(viewer), "viewer users are read-only"),
        (Caller::Agent(app.other.hr.clone()), "not found"),
    ];
    for (caller, message) in &refused {
        let reply = set_budget(app, caller, &child, &json!({ "budgetPeriodLimit": 999 })).await;
        let status = if *message == "not found" { 404 } else { 403 };
        assert_error(&reply, status, message);
    }
    assert_eq!(event_total(app, &app.org.hr).await, before);
    let status = budget_of(app, &app.org.hr, &child).await;
    assert_eq!(status["budgetPeriodLimit"], 0);

    own_limit_needs_level_ten(app, &unrelated, &level_ten).await;
}

/// An agent sets its own limit only at level 10.
async fn own_limit_needs_level_ten(app: &TestApp, unrelated: &Agent, level_ten: &Agent) {
    let reply = set_budget(
        app,
        &Caller::Agent(unrelated.clone()),
        unrelated,
        &json!({ "budgetPeriodLimit": 5 }),
    )
    .await;
    assert_error_exact(
        &reply,
        403,
        "only the agent's parent, a level-10 agent or an admin may do this",
    );
    assert_eq!(
        budget_of(app, unrelated, unrelated).await["budgetPeriodLimit"],
        Value::Null
    );
    assert!(budget_events(app, unrelated).await.is_empty());
    let reply = set_budget(
        app,
        &Caller::Agent(level_ten.clone()),
        level_ten,
        &json!({ "budgetPeriodLimit": 5 }),
    )
    .await;
    assert_eq!(reply.data()["budgetPeriodLimit"], 5);
    assert_eq!(budget_events(app, level_ten).await.len(), 1);
}

async fn budget_patch_checks_its_body_and_can_restart_the_period(app: &TestApp) {
    let (agent, _) = register(app, &app.org, &json!({ "budgetPeriodLimit": 100 })).await;
    change_agent(app, &agent, |a| a.current_balance = 100).await;
    let reply = app
        .post(
            &agent,
            "/agents/credits/spend",
            &json!({ "amount": 40 }).to_string(),
        )
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let path = budget_path(&agent);

    let bad = [
        ("{}", "budgetPeriodLimit is required"),
        (
            r#"{"resetCurrentPeriod": true}"#,
            "budgetPeriodLimit is required",
        ),
        (
            r#"{"budgetPeriodLimit": -1}"#,
            "budgetPeriodLimit must be at least 0",
        ),
        (r#"{"budgetPeriodLimit": null}"#, "budgetPeriodLimit"),
        (r#"{"budgetPeriodLimit": "10"}"#, "budgetPeriodLimit"),
        (r#"{"budgetPeriodLimit": 1.5}"#, "budgetPeriodLimit"),
        (
            r#"{"budgetPeriodLimit": 10, "resetCurrentPeriod": "yes"}"#,
            "resetCurrentPeriod",
        ),
        (
            r#"{"budgetPeriodLimit": 10, "extra": 1}"#,
            "property extra should not exist",
        ),
        (r#"{"budgetPeriodLimit": 10"#, "malformed JSON"),
        ("", "request body must be a JSON object"),
    ];
    for (body, message) in bad {
        let reply = patch(app, &app.org.hr, &path, body).await;
        assert_error(&reply, 400, message);
    }
    let status = budget_of(app, &app.org.hr, &agent).await;
    assert_eq!(status["budgetPeriodLimit"], 100);
    assert_eq!(status["budgetPeriodSpent"], 40);
    assert!(budget_events(app, &agent).await.is_empty());

    // A new limit keeps what was spent; limit 0 is full, and what remains is below 0.
    let hr = Caller::Agent(app.org.hr.clone());
    let reply = set_budget(app, &hr, &agent, &json!({ "budgetPeriodLimit": 0 })).await;
    let data = reply.data();
    assert_eq!(
        (
            &data["budgetPeriodLimit"],
            &data["budgetPeriodSpent"],
            &data["budgetRemaining"],
            &data["utilizationPercent"],
        ),
        (&json!(0), &json!(40), &json!(-40), &json!(100))
    );
    let body = json!({ "budgetPeriodLimit": 60, "resetCurrentPeriod": false });
    let reply = set_budget(app, &hr, &agent, &body).await;
    let data = reply.data();
    assert_eq!(data["budgetPeriodSpent"], 40);
    assert_eq!(data["budgetRemaining"], 20);
    assert_eq!(data["utilizationPercent"], 67);
    assert_eq!(stored_spent(app, &agent).await, 40);
    assert_eq!(can_spend(app, &agent, &agent, 21).await, (false, 20));

    // resetCurrentPeriod starts the period afresh: nothing spent.
    let body = json!({ "budgetPeriodLimit": 60, "resetCurrentPeriod": true });
    let reply = set_budget(app, &hr, &agent, &body).await;
    let data = reply.data().clone();
    assert_eq!(data["budgetPeriodSpent"], 0);
    assert_eq!(data["budgetRemaining"], 60);
    assert_eq!(data["utilizationPercent"], 0);
    assert_eq!(data["currentBalance"], 60);
    assert_eq!(data["budgetPeriodStart"], wire(today()));
    assert_eq!(stored_spent(app, &agent).await, 0);
    assert_eq!(budget_of(app, &agent, &agent).await, data);
    let record = app
        .get(&agent, &format!("/agents/{}", agent.uuid))
        .await
        .data()
        .clone();
    assert_eq!(record["budgetPeriodLimit"], 60);
    assert_eq!(record["budgetPeriodSpent"], 0);
    assert_eq!(can_spend(app, &agent, &agent, 60).await, (true, 60));

    let limits: Vec<Value> = budget_events(app, &agent)
        .await
        .iter()
        .map(|e| e["payload"]["budgetPeriodLimit"].clone())
        .collect();
    assert_eq!(limits, [json!(60), json!(60), json!(0)]);
}

async fn can_spend_weighs_balance_period_and_status(app: &TestApp) {
    let (agent, _) = register(app, &app.org, &json!({})).await;
    let reader = app.worker(&app.org).await;
    change_agent(app, &agent, |a| a.current_balance = 100).await;
    // No limit: the balance decides.
    assert_eq!(can_spend(app, &reader, &agent, 1).await, (true, 100));
    assert_eq!(can_spend(app, &reader, &agent, 100).await, (true, 100));
    assert_eq!(can_spend(app, &reader, &agent, 101).await, (false, 100));
    // Within the balance, the period remainder decides.
    change_agent(app, &agent, |a| {
        a.budget_period_limit = Some(50);
        a.budget_period_spent = 20;
    })
    .await;
    assert_eq!(can_spend(app, &reader, &agent, 30).await, (true, 30));
    assert_eq!(can_spend(app, &reader, &agent, 31).await, (false, 30));
    // The balance caps what the period would allow.
    change_agent(app, &agent, |a| a.current_balance = 10).await;
    assert_eq!(can_spend(app, &reader, &agent, 10).await, (true, 10));
    assert_eq!(can_spend(app, &reader, &agent, 11).await, (false, 10));
    // A spent period allows nothing.
    change_agent(app, &agent, |a| {
        a.current_balance = 100;
        a.budget_period_spent = 50;
    })
    .await;
    assert_eq!(can_spend(app, &reader, &agent, 1).await, (false, 0));
    change_agent(app, &agent, |a| {
        a.budget_period_limit = Some(0);
        a.budget_period_spent = 0;
    })
    .await;
    assert_eq!(can_spend(app, &reader, &agent, 1).await, (false, 0));
    // A suspended agent cannot spend at all, whatever it holds.
    change_agent(app, &agent, |a| a.budget_period_limit = None).await;
    assert_eq!(can_spend(app, &reader, &agent, 5).await, (true, 100));
    let reply = app
        .post(&app.org.hr, &format!("/agents/{}/suspend", agent.uuid), "")
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(can_spend(app, &reader, &agent, 5).await, (false, 100));

    let path = format!("/agents/{}/budget/can-spend", agent.uuid);
    let reply = app.get(&reader, &path).await;
    assert_error_exact(&reply, 400, "amount is required");
    assert_bad_queries(
        app,
        &reader,
        &path,
        &[
            ("amount=0", "amount must be a positive integer"),
            ("amount=-1", "amount must be a positive integer"),
            ("amount=abc", "amount"),
            ("amount=1.5", "amount"),
            ("amount=", "amount"),
            ("amount=1&other=2", "property other should not exist"),
        ],
    )
    .await;
    let reply = app.get(&app.other.hr, &format!("{path}?amount=1")).await;
    assert_error_exact(&reply, 404, &format!("Agent {} not found", agent.uuid));
}

async fn alerts_list_active_agents_near_their_limit(app: &TestApp) {
    // (limit, spent, listed)
    let mut listed: Vec<(Agent, i64)> = Vec::new();
    let mut quiet: Vec<Agent> = Vec::new();
    for (limit, spent, utilization) in [
        (Some(100), 80, Some(80)),
        (Some(10), 10, Some(100)),
        (Some(1000), 795, Some(80)),
        (Some(10), 25, Some(250)),
        (Some(100), 79, None),
        (Some(1000), 794, None),
        (Some(0), 0, None),
        (None, 500, None),
    ] {
        let agent = app.worker(&app.org).await;
        change_agent(app, &agent, move |a| {
            a.budget_period_limit = limit;
            a.budget_period_spent = spent;
        })
        .await;
        match utilization {
            Some(u) => listed.push((agent, u)),
            None => quiet.push(agent),
        }
    }
    // Inactive agents, a period that has ended, and other organizations never show.
    let suspended = app.add_agent(&app.org, "worker", "suspended").await;
    let pending = app.add_agent(&app.org, "worker", "pending").await;
    for agent in [&suspended, &pending] {
        change_agent(app, agent, |a| {
            a.budget_period_limit = Some(10);
            a.budget_period_spent = 10;
        })
        .await;
    }
    let ended = app.worker(&app.org).await;
    change_agent(app, &ended, |a| a.budget_period_limit = Some(10)).await;
    spent_yesterday(app, &ended, 10).await;
    let foreign = app.worker(&app.other).await;
    change_agent(app, &foreign, |a| {
        a.budget_period_limit = Some(10);
        a.budget_period_spent = 9;
    })
    .await;

    // Highest first; equal ones by id.
    listed.sort_by(|(a, ua), (b, ub)| ub.cmp(ua).then(a.uuid.cmp(&b.uuid)));
    let expected: Vec<String> = listed.iter().map(|(a, _)| a.uuid.to_string()).collect();
    let reply = app.get(&app.org.hr, "/agents/budget/alerts").await;
    assert_eq!(agent_ids(&reply), expected, "{}", reply.text);
    for (element, (agent, utilization)) in reply.list().iter().zip(&listed) {
        assert_eq!(keys_of(element), BUDGET_KEYS);
        assert_eq!(element["utilizationPercent"], *utilization);
        assert_eq!(*element, budget_of(app, &app.org.hr, agent).await);
    }
    // Users read them too; the other organization sees only its own.
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let reply = send(app.bearer(&viewer, Method::GET, "/agents/budget/alerts", None)).await;
    assert_eq!(agent_ids(&reply), expected);
    let reply = app.get(&app.other.hr, "/agents/budget/alerts").await;
    assert_eq!(agent_ids(&reply), [foreign.uuid.to_string()]);
    assert_eq!(reply.list()[0]["utilizationPercent"], 90);
    // Reading changed nothing: the ended period is still stored as it was.
    assert_eq!(stored_spent(app, &ended).await, 10);
    assert!(
        quiet
            .iter()
            .all(|a| !expected.contains(&a.uuid.to_string()))
    );
}

async fn an_ended_period_rolls_over_when_read_or_spent(app: &TestApp) {
    let (agent, _) = register(app, &app.org, &json!({ "budgetPeriodLimit": 50 })).await;
    change_agent(app, &agent, |a| a.current_balance = 100).await;
    let yesterday = today() - Duration::days(1);
    spent_yesterday(app, &agent, 50).await;

    // Reads show the new period at once, before anything writes it.
    let status = budget_of(app, &agent, &agent).await;
    assert_eq!(status["budgetPeriodSpent"], 0);
    assert_eq!(status["budgetRemaining"], 50);
    assert_eq!(status["utilizationPercent"], 0);
    assert_eq!(status["budgetPeriodStart"], wire(today()));
    let record = app
        .get(&app.org.hr, &format!("/agents/{}", agent.uuid))
        .await
        .data()
        .clone();
    assert_eq!(record["budgetPeriodSpent"], 0);
    assert_eq!(record["budgetPeriodStart"], wire(today()));
    assert_eq!(can_spend(app, &agent, &agent, 50).await, (true, 50));
    assert_eq!(stored_spent(app, &agent).await, 50);
    assert!(stored_start_is(app, &agent, yesterday).await);

    // Spending rolls the period over and counts into the new one, up to the limit.
    let spend = |amount: i64| {
        let body = json!({ "amount": amount }).to_string();
        let agent = agent.clone();
        async move { app.post(&agent, "/agents/credits/spend", &body).await }
    };
    let reply = spend(50).await;
    assert_eq!(reply.data()["balanceAfter"], 50);
    assert_eq!(stored_spent(app, &agent).await, 50);
    assert!(stored_start_is(app, &agent, today()).await);
    let reply = spend(1).await;
    assert_error_exact(
        &reply,
        409,
        "Budget period limit exceeded: 0 credits remain in this period",
    );
    let status = budget_of(app, &agent, &agent).await;
    assert_eq!(status["budgetPeriodSpent"], 50);
    assert_eq!(status["currentBalance"], 50);
    assert_eq!(status["utilizationPercent"], 100);
    assert_eq!(ledger_of(app, &agent, &agent).await.len(), 1);

    // A transfer after the period ended is spending in the new period, too.
    let child = active_child(app, &app.org.hr, &json!({})).await;
    change_agent(app, &app.org.hr, |a| {
        a.current_balance = 30;
        a.budget_period_limit = Some(20);
    })
    .await;
    spent_yesterday(app, &app.org.hr, 20).await;
    let transfer = |amount: i64| {
        let body = json!({ "toAgentId": child.uuid, "amount": amount }).to_string();
        async move {
            app.post(&app.org.hr, "/agents/credits/transfer", &body)
                .await
        }
    };
    assert_eq!(transfer(20).await.data()["fromBalance"], 10);
    let reply = transfer(1).await;
    assert_error_exact(
        &reply,
        409,
        "Budget period limit exceeded: 0 credits remain in this period",
    );
    assert_eq!(stored_spent(app, &app.org.hr).await, 20);
    assert!(stored_start_is(app, &app.org.hr, today()).await);
}

/// A roll-over job over `db` whose clock shows `now`.
fn rollover(db: &Database, now: OffsetDateTime) -> BudgetRollover {
    BudgetRollover::new(Arc::new(db.clone()), TestClock::at(now), BudgetPeriod::Day)
}

async fn the_rollover_job_rolls_each_ended_period_once(app: &TestApp) {
    let now = OffsetDateTime::now_utc();
    let mut ended = Vec::new();
    for (n, org) in [&app.org, &app.org, &app.other].into_iter().enumerate() {
        let agent = app.worker(org).await;
        change_agent(app, &agent, |a| a.budget_period_limit = Some(100)).await;
        spent_yesterday(app, &agent, 10 * (i64::try_from(n).unwrap() + 1)).await;
        ended.push(agent);
    }
    let current = app.worker(&app.org).await;
    change_agent(app, &current, |a| {
        a.budget_period_limit = Some(100);
        a.budget_period_spent = 30;
    })
    .await;
    let current_start = budget_of(app, &current, &current).await["budgetPeriodStart"].clone();

    // A clock still in yesterday finds no period that has ended.
    let job = rollover(&app.db().db, now - Duration::days(1));
    assert_eq!(job.run_once().await.unwrap(), 0);
    assert_eq!(stored_spent(app, &ended[0]).await, 10);

    let job = rollover(&app.db().db, now);
    assert_eq!(job.run_once().await.unwrap(), 3);
    for agent in &ended {
        assert_eq!(stored_spent(app, agent).await, 0);
        assert!(stored_start_is(app, agent, today()).await);
    }
    assert_eq!(stored_spent(app, &current).await, 30);
    assert_eq!(
        budget_of(app, &current, &current).await["budgetPeriodStart"],
        current_start
    );
    assert_eq!(job.run_once().await.unwrap(), 0);
    assert_eq!(
        budget_of(app, &ended[0], &ended[0]).await["budgetRemaining"],
        100
    );

    // Two instances racing roll every agent exactly once between them.
    let mut racing = ended.clone();
    for _ in 0..5 {
        racing.push(app.worker(&app.org).await);
    }
    for agent in &racing {
        spent_yesterday(app, agent, 7).await;
    }
    let first = rollover(&another_instance(app).await, now);
    let second = rollover(&another_instance(app).await, now);
    let (a, b) = tokio::join!(first.run_once(), second.run_once());
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a + b, 8, "rolled {a} + {b}");
    for agent in &racing {
        assert_eq!(stored_spent(app, agent).await, 0);
        assert!(stored_start_is(app, agent, today()).await);
    }
    assert_eq!(stored_spent(app, &current).await, 30);
    let ended: Vec<String> = all_agents(app)
        .await
        .iter()
        .filter(|a| a.budget_period_start < today())
        .map(|a| a.handle.as_str().to_owned())
        .collect();
    assert!(ended.is_empty(), "periods not rolled over: {ended:?}");
    let (a, b) = tokio::join!(first.run_once(), second.run_once());
    assert_eq!((a.unwrap(), b.unwrap()), (0, 0));
}
