//! Credits (decisions D-58, D-59): balances, grants by admins and founders, spending
//! within the balance and the period limit, transfers along the hierarchy with their two
//! ledger rows, the ledger's paging, and a finished task's reward (escrowed from the
//! treasury, decision D-101) with the parent's fee.

use muster_domain::model::{AgentId, AgentMode};
use reqwest::Method;
use serde_json::{Value, json};

use crate::agent_support::{active_child, agent_with, register, try_spawn};
use crate::agents_budgets::{budget_of, staff};
use crate::economy_support::ledger_of;
use crate::helpers::{
    Agent, Reply, TestApp, assert_bad_queries, assert_error, assert_error_exact, assert_timestamp,
    keys_of, send, str_of,
};
use crate::stored::{all_ledger, change_agent};
use crate::task_support::{events_typed, walk};
use crate::task_tools::{Caller, event_total, events_everywhere, patch, user_id};

api_tests!(
    balances_and_grants_by_admins_and_founders,
    grants_check_the_amount_and_the_target,
    spending_takes_the_balance_within_the_period,
    transfers_follow_the_hierarchy,
    transfers_check_the_balance_and_the_period_and_write_both_sides,
    history_pages_newest_first,
    a_finished_task_pays_the_child_and_the_parents_fee,
);

/// The keys of a ledger entry.
const LEDGER_KEYS: [&str; 9] = [
    "agentId",
    "amount",
    "balanceAfter",
    "counterpartyId",
    "createdAt",
    "id",
    "reason",
    "taskId",
    "type",
];

/// `GET /agents/:id/credits/balance` as `reader`: the balance.
async fn balance(app: &TestApp, reader: &Agent, agent: &Agent) -> i64 {
    let reply = app
        .get(reader, &format!("/agents/{}/credits/balance", agent.uuid))
        .await;
    let data = reply.data();
    assert_eq!(
        keys_of(data),
        ["agentId", "currentBalance"],
        "{}",
        reply.text
    );
    assert_eq!(data["agentId"], agent.uuid.to_string());
    data["currentBalance"].as_i64().unwrap()
}

/// The balance of each of `agents`, as the HR agent reads them.
async fn balances(app: &TestApp, agents: &[&Agent]) -> Vec<i64> {
    let mut all = Vec::new();
    for agent in agents {
        all.push(balance(app, &app.org.hr, agent).await);
    }
    all
}

/// `POST /agents/:id/credits/grant` with `body` as `caller`.
async fn grant_as(app: &TestApp, caller: &Caller, agent: &Agent, body: &Value) -> Reply {
    caller
        .call(
            app,
            Method::POST,
            &format!("/agents/{}/credits/grant", agent.uuid),
            Some(body),
        )
        .await
}

/// `POST /agents/credits/spend` of `amount` by `agent`.
async fn spend(app: &TestApp, agent: &Agent, amount: i64) -> Reply {
    app.post(
        agent,
        "/agents/credits/spend",
        &json!({ "amount": amount }).to_string(),
    )
    .await
}

/// `POST /agents/credits/transfer` of `amount` from `from` to `to`.
async fn transfer(app: &TestApp, from: &Agent, to: &Agent, amount: i64) -> Reply {
    app.post(
        from,
        "/agents/credits/transfer",
        &json!({ "toAgentId": to.uuid, "amount": amount }).to_string(),
    )
    .await
}

/// How many ledger rows `agent` has, as the HR agent reads them.
async fn ledger_rows(app: &TestApp, agent: &Agent) -> usize {
    ledger_of(app, &app.org.hr, agent).await.len()
}

/// How many ledger rows the whole deployment stores (no route lists every ledger).
async fn ledger_total(app: &TestApp) -> usize {
    all_ledger(app).await.len()
}

/// The first page of `agent`'s ledger as `reader` sees it, newest first.
async fn history(app: &TestApp, reader: &Agent, agent: &Agent) -> Vec<Value> {
    let reply = app
        .get(reader, &format!("/agents/{}/credits/history", agent.uuid))
        .await;
    let rows = reply.list().clone();
    for row in &rows {
        assert_eq!(keys_of(row), LEDGER_KEYS, "{row}");
        assert_eq!(row["agentId"], agent.uuid.to_string());
        assert_timestamp(row, "createdAt");
    }
    rows
}

/// `type:amount:balanceAfter` of each row.
fn brief(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            format!(
                "{}:{}:{}",
                r["type"].as_str().unwrap(),
                r["amount"],
                r["balanceAfter"]
            )
        })
        .collect()
}

/// The payloads of `agent`'s events of type `kind`, newest first.
async fn payloads(app: &TestApp, agent: &Agent, kind: &str) -> Vec<Value> {
    events_typed(app, &app.org.hr, &agent.uuid.to_string(), kind)
        .await
        .into_iter()
        .map(|e| e["payload"].clone())
        .collect()
}

async fn balances_and_grants_by_admins_and_founders(app: &TestApp) {
    let (target, _) = register(app, &app.org, &json!({})).await;
    assert_eq!(balance(app, &target, &target).await, 0);
    let reply = app
        .get(
            &app.other.hr,
            &format!("/agents/{}/credits/balance", target.uuid),
        )
        .await;
    assert_error_exact(&reply, 404, &format!("Agent {} not found", target.uuid));

    let founder = staff(app, &app.org, "founder", 8).await;
    let admin_agent = staff(app, &app.org, "admin", 3).await;
    let admin = app.admin_token(&app.org).await;
    let admin_id = user_id(app, &admin).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;

    // Admin users (a key needs the admin scope) and founder or admin agents create credits.
    let granters: [(Caller, String, i64, Option<&str>); 4] = [
        (
            Caller::Bearer(admin.clone()),
            admin_id.clone(),
            100,
            Some("seed"),
        ),
        (
            Caller::Agent(founder.clone()),
            founder.uuid.to_string(),
            5,
            None,
        ),
        (
            Caller::Agent(admin_agent.clone()),
            admin_agent.uuid.to_string(),
            1,
            Some("bonus"),
        ),
        (Caller::Bearer(admin_key), admin_id.clone(), 2, Some("")),
    ];
    let mut total = 0;
    for (n, (caller, actor, amount, reason)) in granters.iter().enumerate() {
        total += amount;
        let mut body = json!({ "amount": amount });
        if let Some(reason) = reason {
            body["reason"] = json!(reason);
        }
        let reply = grant_as(app, caller, &target, &body).await;
        let entry = reply.data();
        assert_eq!(keys_of(entry), LEDGER_KEYS, "{}", reply.text);
        assert_eq!(reply.body["message"], format!("Granted {amount} credits"));
        assert_eq!(entry["agentId"], target.uuid.to_string());
        assert_eq!(entry["type"], "granted");
        assert_eq!(entry["amount"], *amount);
        assert_eq!(entry["balanceAfter"], total);
        assert_eq!(entry["reason"], json!(reason));
        assert_eq!(entry["taskId"], Value::Null);
        assert_eq!(entry["counterpartyId"], Value::Null);
        assert_timestamp(entry, "createdAt");
        assert_eq!(balance(app, &app.org.hr, &target).await, total);
        let events = events_typed(
            app,
            &app.org.hr,
            &target.uuid.to_string(),
            "credits.granted",
        )
        .await;
        assert_eq!(events.len(), n + 1);
        assert_eq!(events[0]["actorId"], actor.as_str());
        assert_eq!(
            events[0]["payload"],
            json!({ "amount": amount, "reason": reason, "balanceAfter": total })
        );
        // A grant is not spending.
        assert_eq!(
            budget_of(app, &target, &target).await["budgetPeriodSpent"],
            0
        );
    }
    assert_eq!(
        brief(&history(app, &target, &target).await),
        [
            "granted:2:108",
            "granted:1:106",
            "granted:5:105",
            "granted:100:100"
        ]
    );

    others_never_grant(app, &target, &admin).await;
}

/// Nobody but admins and founders grants, and a refusal changes nothing.
async fn others_never_grant(app: &TestApp, target: &Agent, admin: &str) {
    // Nobody else does, and a refusal changes nothing.
    let write_key = app.api_key(admin, &["write"]).await;
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let observer_founder = staff(app, &app.org, "founder", 8).await;
    change_agent(app, &observer_founder, |a| a.mode = AgentMode::Observer).await;
    let level_ten = agent_with(app, &app.org, 10, "worker", "worker").await;
    let granter = "only admin users and founder or admin agents may grant credits";
    let refused: [(Caller, &str); 8] = [
        (Caller::Agent(app.org.hr.clone()), granter),
        (Caller::Agent(level_ten), granter),
        (Caller::Agent(target.clone()), granter),
        (Caller::Bearer(operator), granter),
        (Caller::Bearer(viewer), "viewer users are read-only"),
        (Caller::Bearer(write_key), "API key lacks the admin scope"),
        (
            Caller::Agent(observer_founder),
            "observer agents are read-only",
        ),
        (Caller::Agent(app.other.hr.clone()), granter),
    ];
    let events = event_total(app, &app.org.hr).await;
    for (caller, message) in &refused {
        let reply = grant_as(app, caller, target, &json!({ "amount": 7 })).await;
        assert_error_exact(&reply, 403, message);
    }
    assert_eq!(balance(app, target, target).await, 108);
    assert_eq!(ledger_rows(app, target).await, 4);
    assert_eq!(ledger_total(app).await, 4);
    assert_eq!(event_total(app, &app.org.hr).await, events);
}

async fn grants_check_the_amount_and_the_target(app: &TestApp) {
    let target = app.worker(&app.org).await;
    let admin = Caller::Bearer(app.admin_token(&app.org).await);
    let path = format!("/agents/{}/credits/grant", target.uuid);
    let range = "amount must be between 1 and 1000000000";
    let bad = [
        (json!({ "amount": 0 }), range),
        (json!({ "amount": -5 }), range),
        (json!({ "amount": 1_000_000_001 }), range),
        (json!({ "amount": "x" }), "amount"),
        (json!({ "amount": 1.5 }), "amount"),
        (json!({ "amount": null }), "amount"),
        (json!({ "reason": "no amount" }), "amount is required"),
        (
            json!({ "amount": 1, "to": "me" }),
            "property to should not exist",
        ),
        (
            json!({ "amount": 1, "reason": "r".repeat(2001) }),
            "reason must be at most 2000 characters",
        ),
        (json!({ "amount": 1, "reason": 5 }), "reason"),
    ];
    for (body, message) in &bad {
        let reply = admin.call(app, Method::POST, &path, Some(body)).await;
        assert_error(&reply, 400, message);
    }
    let reply = send(
        app.bearer(
            match &admin {
                Caller::Bearer(token) => token,
                Caller::Agent(_) => unreachable!(),
            },
            Method::POST,
            &path,
            None,
        )
        .header("content-type", "application/json")
        .body("{\"amount\": 1"),
    )
    .await;
    assert_error(&reply, 400, "malformed JSON");
    assert_eq!(ledger_total(app).await, 0);
    assert_eq!(balance(app, &target, &target).await, 0);

    // The largest amount is fine.
    let reply = grant_as(app, &admin, &target, &json!({ "amount": 1_000_000_000 })).await;
    assert_eq!(reply.data()["balanceAfter"], 1_000_000_000);

    // Only active agents of the organization receive credits.
    let suspended = app.worker(&app.org).await;
    let reply = app
        .post(
            &app.org.hr,
            &format!("/agents/{}/suspend", suspended.uuid),
            "",
        )
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let reply = grant_as(app, &admin, &suspended, &json!({ "amount": 5 })).await;
    assert_error_exact(
        &reply,
        409,
        &format!("Agent {} is not active", suspended.uuid),
    );
    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let pending = try_spawn(app, &parent, &json!({})).await;
    let pending_id = str_of(pending.data(), "id");
    let reply = admin
        .call(
            app,
            Method::POST,
            &format!("/agents/{pending_id}/credits/grant"),
            Some(&json!({ "amount": 5 })),
        )
        .await;
    assert_error_exact(&reply, 409, &format!("Agent {pending_id} is not active"));
    let foreign = app.worker(&app.other).await;
    let reply = grant_as(app, &admin, &foreign, &json!({ "amount": 5 })).await;
    assert_error_exact(&reply, 404, &format!("Agent {} not found", foreign.uuid));
    let unknown = uuid::Uuid::now_v7();
    let reply = admin
        .call(
            app,
            Method::POST,
            &format!("/agents/{unknown}/credits/grant"),
            Some(&json!({ "amount": 5 })),
        )
        .await;
    assert_error_exact(&reply, 404, &format!("Agent {unknown} not found"));
    let reply = admin
        .call(
            app,
            Method::POST,
            "/agents/nope/credits/grant",
            Some(&json!({ "amount": 5 })),
        )
        .await;
    assert_error(&reply, 400, "");

    assert_eq!(ledger_total(app).await, 1);
    assert_eq!(events_everywhere(app, "credits.granted").await, 1);
    assert_eq!(balance(app, &app.other.hr, &foreign).await, 0);
    assert_eq!(balance(app, &app.org.hr, &suspended).await, 0);
}

async fn spending_takes_the_balance_within_the_period(app: &TestApp) {
    let (agent, _) = register(app, &app.org, &json!({ "budgetPeriodLimit": 50 })).await;
    change_agent(app, &agent, |a| a.current_balance = 100).await;

    let reply = app
        .post(
            &agent,
            "/agents/credits/spend",
            &json!({ "amount": 20, "reason": "tokens" }).to_string(),
        )
        .await;
    let entry = reply.data().clone();
    assert_eq!(keys_of(&entry), LEDGER_KEYS);
    assert_eq!(reply.body["message"], "Spent 20 credits");
    assert_eq!(entry["type"], "spent");
    assert_eq!(entry["amount"], -20);
    assert_eq!(entry["balanceAfter"], 80);
    assert_eq!(entry["reason"], "tokens");
    assert_eq!(entry["agentId"], agent.uuid.to_string());
    assert_eq!(entry["counterpartyId"], Value::Null);
    assert_eq!(
        history(app, &app.org.hr, &agent).await,
        std::slice::from_ref(&entry)
    );
    let status = budget_of(app, &agent, &agent).await;
    assert_eq!(status["currentBalance"], 80);
    assert_eq!(status["budgetPeriodSpent"], 20);
    assert_eq!(status["budgetRemaining"], 30);
    let events = events_typed(app, &app.org.hr, &agent.uuid.to_string(), "credits.spent").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["actorId"], agent.uuid.to_string());
    assert_eq!(
        events[0]["payload"],
        json!({ "amount": 20, "reason": "tokens", "balanceAfter": 80 })
    );

    // Refusals: over the period, over the balance, not an agent, read-only, bad amounts.
    let admin = app.admin_token(&app.org).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let observer = app.add_agent(&app.org, "observer", "active").await;
    change_agent(app, &observer, |a| a.current_balance = 100).await;
    let events_before = event_total(app, &app.org.hr).await;
    assert_error_exact(
        &spend(app, &agent, 31).await,
        409,
        "Budget period limit exceeded: 30 credits remain in this period",
    );
    assert_error_exact(
        &spend(app, &agent, 81).await,
        409,
        "Insufficient balance: 80 credits available, 81 needed",
    );
    for token in [&admin, &admin_key] {
        let reply = send(app.bearer(
            token,
            Method::POST,
            "/agents/credits/spend",
            Some(&json!({ "amount": 1 })),
        ))
        .await;
        assert_error_exact(&reply, 403, "only agents may do this");
    }
    assert_error_exact(
        &spend(app, &observer, 1).await,
        403,
        "observer agents are read-only",
    );
    for (body, message) in [
        (
            json!({ "amount": 0 }),
            "amount must be between 1 and 1000000000",
        ),
        (
            json!({ "amount": -1 }),
            "amount must be between 1 and 1000000000",
        ),
        (json!({ "amount": "x" }), "amount"),
        (json!({}), "amount is required"),
    ] {
        let reply = app
            .post(&agent, "/agents/credits/spend", &body.to_string())
            .await;
        assert_error(&reply, 400, message);
    }
    assert_eq!(event_total(app, &app.org.hr).await, events_before);
    assert_eq!(ledger_rows(app, &agent).await, 1);
    assert_eq!(ledger_rows(app, &observer).await, 0);
    let status = budget_of(app, &agent, &agent).await;
    assert_eq!(status["currentBalance"], 80);
    assert_eq!(status["budgetPeriodSpent"], 20);

    // Up to the limit exactly, then nothing.
    assert_eq!(spend(app, &agent, 30).await.data()["balanceAfter"], 50);
    assert_error_exact(
        &spend(app, &agent, 1).await,
        409,
        "Budget period limit exceeded: 0 credits remain in this period",
    );
    let status = budget_of(app, &agent, &agent).await;
    assert_eq!(status["budgetPeriodSpent"], 50);
    assert_eq!(status["utilizationPercent"], 100);

    the_balance_bounds_spending_without_a_limit(app).await;
}

/// Without a limit, the balance is the only bound.
async fn the_balance_bounds_spending_without_a_limit(app: &TestApp) {
    // Without a limit, the balance is the only bound.
    let free = app.worker(&app.org).await;
    change_agent(app, &free, |a| a.current_balance = 10).await;
    assert_error_exact(
        &spend(app, &free, 11).await,
        409,
        "Insufficient balance: 10 credits available, 11 needed",
    );
    assert_eq!(spend(app, &free, 10).await.data()["balanceAfter"], 0);
    assert_error_exact(
        &spend(app, &free, 1).await,
        409,
        "Insufficient balance: 0 credits available, 1 needed",
    );
    assert_eq!(budget_of(app, &free, &free).await["budgetPeriodSpent"], 10);
    assert_eq!(brief(&history(app, &free, &free).await), ["spent:-10:0"]);
}

async fn transfers_follow_the_hierarchy(app: &TestApp) {
    let parent = agent_with(app, &app.org, 5, "worker", "worker").await;
    let child = active_child(app, &parent, &json!({})).await;
    let sibling = active_child(app, &parent, &json!({})).await;
    let unrelated = agent_with(app, &app.org, 5, "worker", "worker").await;
    let root = agent_with(app, &app.org, 9, "worker", "worker").await;
    let level_ten = agent_with(app, &app.org, 10, "worker", "worker").await;
    let everyone = [&parent, &child, &sibling, &unrelated, &root, &level_ten];
    for agent in everyone.iter().copied().chain([&app.org.hr]) {
        change_agent(app, agent, |a| a.current_balance = 1000).await;
    }

    // To a child, the parent, a sibling; a level-10 sender to anyone.
    let accepted = [
        (&parent, &child, 10),
        (&child, &parent, 5),
        (&child, &sibling, 3),
        (&sibling, &child, 1),
        (&level_ten, &unrelated, 7),
        (&level_ten, &child, 2),
        (&app.org.hr, &root, 4),
    ];
    for (n, (from, to, amount)) in accepted.iter().enumerate() {
        let reply = transfer(app, from, to, *amount).await;
        assert_eq!(reply.data()["amount"], *amount, "transfer {n}");
        assert_eq!(ledger_total(app).await, 2 * (n + 1));
    }
    let expected = vec![
        1000 - 10 + 5,
        1000 + 10 - 5 - 3 + 1 + 2,
        1000 + 3 - 1,
        1000 + 7,
        1000 + 4,
        1000 - 7 - 2,
    ];
    assert_eq!(balances(app, &everyone).await, expected);

    // Anyone else is out of reach; two agents without a parent are no siblings.
    let relation = "credits can only be transferred to your parent, children or siblings";
    let (suspended_child, pending) = inactive_children(app, &parent).await;
    let foreign = app.worker(&app.other).await;
    let unknown = Agent {
        uuid: uuid::Uuid::now_v7(),
        handle: "nobody".to_owned(),
        secret: String::new(),
    };
    let refused: [(&Agent, &Agent, u16, String); 10] = [
        (&parent, &unrelated, 403, relation.to_owned()),
        (&unrelated, &child, 403, relation.to_owned()),
        (&child, &unrelated, 403, relation.to_owned()),
        (&unrelated, &root, 403, relation.to_owned()),
        (&root, &level_ten, 403, relation.to_owned()),
        (
            &child,
            &child,
            400,
            "cannot transfer credits to yourself".to_owned(),
        ),
        (
            &parent,
            &unknown,
            404,
            format!("Agent {} not found", unknown.uuid),
        ),
        (
            &level_ten,
            &foreign,
            404,
            format!("Agent {} not found", foreign.uuid),
        ),
        (
            &parent,
            &suspended_child,
            409,
            format!("Agent {} is not active", suspended_child.uuid),
        ),
        (
            &parent,
            &pending,
            409,
            format!("Agent {} is not active", pending.uuid),
        ),
    ];
    let events = event_total(app, &app.org.hr).await;
    for (from, to, status, message) in &refused {
        let reply = transfer(app, from, to, 1).await;
        assert_error_exact(&reply, *status, message);
    }
    assert_eq!(ledger_total(app).await, 14);
    assert_eq!(balances(app, &everyone).await, expected);
    assert_eq!(balance(app, &app.other.hr, &foreign).await, 0);
    assert_eq!(balance(app, &app.org.hr, &suspended_child).await, 0);
    assert_eq!(event_total(app, &app.org.hr).await, events);
    assert_eq!(events_everywhere(app, "credits.transferred").await, 7);
}

/// A suspended and a pending child of `parent`.
async fn inactive_children(app: &TestApp, parent: &Agent) -> (Agent, Agent) {
    let suspended_child = active_child(app, parent, &json!({})).await;
    let pending = try_spawn(app, parent, &json!({})).await;
    let pending = Agent {
        uuid: str_of(pending.data(), "id").parse().unwrap(),
        handle: str_of(pending.data(), "agentId"),
        secret: String::new(),
    };
    let reply = app
        .post(
            &app.org.hr,
            &format!("/agents/{}/suspend", suspended_child.uuid),
            "",
        )
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    (suspended_child, pending)
}

async fn transfers_check_the_balance_and_the_period_and_write_both_sides(app: &TestApp) {
    let (parent, _) = register(
        app,
        &app.org,
        &json!({ "level": 5, "budgetPeriodLimit": 50 }),
    )
    .await;
    let child = active_child(app, &parent, &json!({})).await;
    change_agent(app, &parent, |a| a.current_balance = 40).await;
    let events = event_total(app, &app.org.hr).await;
    assert_error_exact(
        &transfer(app, &parent, &child, 41).await,
        409,
        "Insufficient balance: 40 credits available, 41 needed",
    );
    change_agent(app, &parent, |a| a.current_balance = 100).await;
    assert_error_exact(
        &transfer(app, &parent, &child, 51).await,
        409,
        "Budget period limit exceeded: 50 credits remain in this period",
    );
    assert_eq!(ledger_total(app).await, 0);
    assert_eq!(event_total(app, &app.org.hr).await, events);

    let reply = app
        .post(
            &parent,
            "/agents/credits/transfer",
            &json!({ "toAgentId": child.uuid, "amount": 30, "reason": "share" }).to_string(),
        )
        .await;
    let moved = reply.data().clone();
    assert_eq!(
        keys_of(&moved),
        [
            "amount",
            "createdAt",
            "fromAgentId",
            "fromBalance",
            "reason",
            "toAgentId",
            "toBalance",
            "transferId",
        ]
    );
    assert_eq!(moved["fromAgentId"], parent.uuid.to_string());
    assert_eq!(moved["toAgentId"], child.uuid.to_string());
    assert_eq!(moved["amount"], 30);
    assert_eq!(moved["reason"], "share");
    assert_eq!(moved["fromBalance"], 70);
    assert_eq!(moved["toBalance"], 30);
    assert_timestamp(&moved, "createdAt");

    both_sides_are_written(app, &parent, &child, &moved).await;
    // The period now has 20 left, for transfers and spending alike.
    assert_error_exact(
        &transfer(app, &parent, &child, 21).await,
        409,
        "Budget period limit exceeded: 20 credits remain in this period",
    );
    assert_eq!(spend(app, &parent, 15).await.data()["balanceAfter"], 55);
    assert_error_exact(
        &transfer(app, &parent, &child, 6).await,
        409,
        "Budget period limit exceeded: 5 credits remain in this period",
    );
    assert_eq!(
        transfer(app, &parent, &child, 5).await.data()["fromBalance"],
        50
    );
    // The receiver, without a limit, passes it back freely.
    assert_eq!(
        transfer(app, &child, &parent, 35).await.data()["toBalance"],
        85
    );
    assert_eq!(ledger_total(app).await, 7);

    users_and_observers_never_transfer(app, &parent, &child).await;
}

/// Two ledger rows, one a side, naming each other, and an event on the sender.
async fn both_sides_are_written(app: &TestApp, parent: &Agent, child: &Agent, moved: &Value) {
    let transfer_id = str_of(moved, "transferId");
    // Two ledger rows, one a side, naming each other.
    assert_eq!(ledger_total(app).await, 2);
    let out = history(app, child, parent).await;
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["id"], transfer_id);
    assert_eq!(out[0]["type"], "transfer_out");
    assert_eq!(out[0]["amount"], -30);
    assert_eq!(out[0]["balanceAfter"], 70);
    assert_eq!(out[0]["counterpartyId"], child.uuid.to_string());
    assert_eq!(out[0]["reason"], "share");
    assert_eq!(out[0]["createdAt"], moved["createdAt"]);
    let into = history(app, parent, child).await;
    assert_eq!(into.len(), 1);
    assert_eq!(into[0]["type"], "transfer_in");
    assert_eq!(into[0]["amount"], 30);
    assert_eq!(into[0]["balanceAfter"], 30);
    assert_eq!(into[0]["counterpartyId"], parent.uuid.to_string());
    assert_eq!(into[0]["taskId"], Value::Null);
    assert_ne!(into[0]["id"], transfer_id);

    // The sender spent it; the receiver did not.
    assert_eq!(
        budget_of(app, parent, parent).await["budgetPeriodSpent"],
        30
    );
    assert_eq!(budget_of(app, child, child).await["budgetPeriodSpent"], 0);
    let sent = events_typed(
        app,
        &app.org.hr,
        &parent.uuid.to_string(),
        "credits.transferred",
    )
    .await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["actorId"], parent.uuid.to_string());
    assert_eq!(
        sent[0]["payload"],
        json!({
            "transferId": transfer_id, "fromAgentId": parent.uuid, "toAgentId": child.uuid,
            "amount": 30, "reason": "share",
        })
    );
    assert!(payloads(app, child, "credits.transferred").await.is_empty());
}

/// Users and observers never transfer; bad bodies are 400. Nothing changes.
async fn users_and_observers_never_transfer(app: &TestApp, parent: &Agent, child: &Agent) {
    // Users and observers never transfer; bad bodies are 400. Nothing changes.
    let admin = app.admin_token(&app.org).await;
    let admin_key = app.api_key(&admin, &["admin"]).await;
    let (observer, _) = register(app, &app.org, &json!({ "mode": "observer" })).await;
    let parent_id = AgentId::from_uuid(parent.uuid);
    change_agent(app, &observer, move |a| {
        a.parent_id = Some(parent_id);
        a.current_balance = 100;
    })
    .await;
    let events = event_total(app, &app.org.hr).await;
    for token in [&admin, &admin_key] {
        let reply = send(app.bearer(
            token,
            Method::POST,
            "/agents/credits/transfer",
            Some(&json!({ "toAgentId": child.uuid, "amount": 1 })),
        ))
        .await;
        assert_error_exact(&reply, 403, "only agents may do this");
    }
    assert_error_exact(
        &transfer(app, &observer, child, 1).await,
        403,
        "observer agents are read-only",
    );
    let range = "amount must be between 1 and 1000000000";
    for (body, message) in [
        (json!({ "toAgentId": child.uuid, "amount": 0 }), range),
        (
            json!({ "toAgentId": child.uuid, "amount": 1_000_000_001 }),
            range,
        ),
        (json!({ "toAgentId": child.uuid, "amount": "x" }), "amount"),
        (json!({ "toAgentId": child.uuid }), "amount is required"),
        (json!({ "amount": 1 }), "toAgentId is required"),
        (json!({ "toAgentId": "nope", "amount": 1 }), "toAgentId"),
        (
            json!({ "toAgentId": child.uuid, "amount": 1, "note": "x" }),
            "property note should not exist",
        ),
    ] {
        let reply = app
            .post(parent, "/agents/credits/transfer", &body.to_string())
            .await;
        assert_error(&reply, 400, message);
    }
    assert_eq!(event_total(app, &app.org.hr).await, events);
    assert_eq!(ledger_total(app).await, 7);
    assert_eq!(balance(app, parent, parent).await, 85);
    assert_eq!(balance(app, parent, child).await, 0);
    assert_eq!(balance(app, parent, &observer).await, 100);
    assert_eq!(
        budget_of(app, parent, parent).await["budgetPeriodSpent"],
        50
    );
}

async fn history_pages_newest_first(app: &TestApp) {
    let agent = app.worker(&app.org).await;
    let other = app.worker(&app.org).await;
    let admin = Caller::Bearer(app.admin_token(&app.org).await);
    grant_as(app, &admin, &other, &json!({ "amount": 9 }))
        .await
        .data();
    for amount in 1..=5 {
        grant_as(app, &admin, &agent, &json!({ "amount": amount }))
            .await
            .data();
    }
    spend(app, &agent, 2).await.data();
    let expected = [
        "spent:-2:13",
        "granted:5:15",
        "granted:4:10",
        "granted:3:6",
        "granted:2:3",
        "granted:1:1",
    ];
    let path = format!("/agents/{}/credits/history", agent.uuid);
    let reader = app.worker(&app.org).await;
    let all = app.get(&reader, &path).await;
    assert_eq!(brief(all.list()), expected);
    assert!(all.body.get("meta").is_none(), "{}", all.text);
    let exact = app.get(&reader, &format!("{path}?limit=6")).await;
    assert_eq!(brief(exact.list()), expected);
    assert!(exact.body.get("meta").is_none(), "{}", exact.text);

    // Pages of 4: a cursor while more remain, none on the last page.
    let first = app.get(&reader, &format!("{path}?limit=4")).await;
    assert_eq!(brief(first.list()), expected[..4]);
    let cursor = first.body["meta"]["nextCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("no cursor: {}", first.text))
        .to_owned();
    assert_eq!(cursor, str_of(&first.list()[3], "id"));
    let second = app
        .get(&reader, &format!("{path}?limit=4&cursor={cursor}"))
        .await;
    assert_eq!(brief(second.list()), expected[4..]);
    assert!(second.body.get("meta").is_none(), "{}", second.text);
    let ones = app.get(&reader, &format!("{path}?limit=1")).await;
    assert_eq!(brief(ones.list()), expected[..1]);
    let mut ids = all.ids();
    ids.sort();
    ids.reverse();
    assert_eq!(ids, all.ids(), "newest first is id order");

    // The ledger is the agent's own; paging is checked; other organizations see nothing.
    assert_eq!(brief(&history(app, &agent, &other).await), ["granted:9:9"]);
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let reply = send(app.bearer(&viewer, Method::GET, &path, None)).await;
    assert_eq!(brief(reply.list()), expected);
    assert_bad_queries(
        app,
        &reader,
        &path,
        &[
            ("limit=501", "limit must be between 1 and 500"),
            ("limit=0", "limit must be between 1 and 500"),
            ("limit=x", "limit"),
            ("cursor=abc", "cursor is not valid"),
            ("page=2", "property page should not exist"),
        ],
    )
    .await;
    let reply = app.get(&reader, &format!("{path}?limit=500")).await;
    assert_eq!(reply.list().len(), 6);
    let reply = app.get(&app.other.hr, &path).await;
    assert_error_exact(&reply, 404, &format!("Agent {} not found", agent.uuid));
    let unknown = uuid::Uuid::now_v7();
    let reply = app
        .get(&reader, &format!("/agents/{unknown}/credits/history"))
        .await;
    assert_error_exact(&reply, 404, &format!("Agent {unknown} not found"));
}

async fn a_finished_task_pays_the_child_and_the_parents_fee(app: &TestApp) {
    let (parent, record) = register(app, &app.org, &json!({ "level": 5 })).await;
    assert_eq!(record["managementFeePct"], 0);
    let reply = patch(
        app,
        &app.org.hr,
        &format!("/agents/{}", parent.uuid),
        &json!({ "managementFeePct": 20 }).to_string(),
    )
    .await;
    assert_eq!(reply.data()["managementFeePct"], 20);
    let child = active_child(app, &parent, &json!({})).await;
    // The reward comes from the treasury, funded first; nothing is made from nothing.
    crate::economy_support::fund_treasury(app, &app.org, 10).await;
    let admin = crate::economy_support::admin(app, &app.org).await;
    let body = json!({ "title": "assigned work", "assigneeId": child.uuid });
    let task = str_of(
        &crate::economy_support::created(app, &admin, &body).await,
        "id",
    );
    walk(app, &child, &task, &["in_progress"]).await;
    assert_eq!(ledger_total(app).await, 0);
    walk(app, &child, &task, &["done"]).await;

    assert_eq!(balance(app, &child, &child).await, 8);
    assert_eq!(balance(app, &child, &parent).await, 2);
    let earned = history(app, &parent, &child).await;
    assert_eq!(brief(&earned), ["earned:8:8"]);
    assert_eq!(earned[0]["taskId"], task);
    assert_eq!(earned[0]["counterpartyId"], Value::Null);
    let fee = history(app, &child, &parent).await;
    assert_eq!(brief(&fee), ["fee:2:2"]);
    assert_eq!(fee[0]["taskId"], task);
    assert_eq!(fee[0]["counterpartyId"], child.uuid.to_string());
    // Earnings are not spending.
    assert_eq!(budget_of(app, &child, &child).await["budgetPeriodSpent"], 0);
    assert_eq!(
        budget_of(app, &parent, &parent).await["budgetPeriodSpent"],
        0
    );
    let sources: Vec<Value> = payloads(app, &parent, "credits.earned")
        .await
        .iter()
        .map(|p| p["source"].clone())
        .collect();
    assert_eq!(sources, [json!("management_fee")]);
    assert_eq!(
        payloads(app, &child, "credits.earned").await[0]["amount"],
        8
    );
    assert_eq!(
        crate::economy_support::treasury_balance(app, &admin).await,
        0
    );
}
