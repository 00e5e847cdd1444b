//! The organization's treasury (decision D-101): `GET /org/treasury`, its history paged
//! newest first, and `POST /org/treasury/grant`, open to admin users (and admin-scoped
//! keys) and founder or admin agents only; bad amounts and bodies are 400 and change
//! nothing; every organization sees only its own.

use muster_domain::model::AgentMode;
use reqwest::Method;
use serde_json::{Value, json};

use crate::agents_budgets::staff;
use crate::economy_support::{
    TREASURY_ADMINS, TREASURY_ENTRY_KEYS, admin, all_pages, assert_chain, brief, raw_as,
    treasury_balance, treasury_grant_as, treasury_history, treasury_reply,
};
use crate::helpers::{
    TestApp, assert_error, assert_error_exact, assert_timestamp, keys_of, send, str_of,
};
use crate::stored::change_agent;
use crate::task_tools::{Caller, event_total, user_id};

api_tests!(
    the_treasury_starts_empty_and_admins_fund_it,
    treasury_history_pages_newest_first,
    only_admins_see_or_fund_the_treasury,
    bad_treasury_grants_are_400_and_change_nothing,
    each_organization_sees_its_own_treasury,
);

/// The three treasury routes, with a body for the grant.
fn routes() -> [(Method, &'static str, Option<Value>); 3] {
    [
        (Method::GET, "/org/treasury", None),
        (Method::GET, "/org/treasury/history", None),
        (
            Method::POST,
            "/org/treasury/grant",
            Some(json!({ "amount": 7 })),
        ),
    ]
}

/// Asserts `entry` is a treasury grant of `amount` leaving `after`, by `actor`.
#[track_caller]
fn assert_grant(entry: &Value, org: uuid::Uuid, amount: i64, after: i64, actor: &str) {
    assert_eq!(keys_of(entry), TREASURY_ENTRY_KEYS, "{entry}");
    assert_eq!(entry["orgId"], org.to_string());
    assert_eq!(entry["type"], "granted");
    assert_eq!(entry["amount"], amount);
    assert_eq!(entry["balanceAfter"], after);
    assert_eq!(entry["taskId"], Value::Null);
    assert_eq!(entry["actorId"], actor);
    assert_timestamp(entry, "createdAt");
}

async fn the_treasury_starts_empty_and_admins_fund_it(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let admin_id = user_id(app, &token).await;
    let admin = Caller::Bearer(token.clone());
    let reply = treasury_reply(app, &admin).await;
    assert_eq!(keys_of(&reply.body), ["data"], "{}", reply.text);
    let empty = reply.data();
    assert_eq!(keys_of(empty), ["balance", "orgId", "updatedAt"]);
    assert_eq!(empty["orgId"], app.org.id.to_string());
    assert_eq!(empty["balance"], 0);
    assert!(treasury_history(app, &admin).await.is_empty());

    let founder = staff(app, &app.org, "founder", 8).await;
    let admin_agent = staff(app, &app.org, "admin", 3).await;
    let admin_key = app.api_key(&token, &["admin"]).await;
    let granters: [(Caller, String, i64, Option<&str>); 4] = [
        (admin.clone(), admin_id.clone(), 500, Some("seed")),
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
        (
            Caller::Bearer(admin_key),
            admin_id.clone(),
            2,
            Some("by key"),
        ),
    ];
    let mut total = 0;
    for (n, (caller, actor, amount, reason)) in granters.iter().enumerate() {
        total += amount;
        let mut body = json!({ "amount": amount });
        if let Some(reason) = reason {
            body["reason"] = json!(reason);
        }
        let reply = treasury_grant_as(app, caller, &body).await;
        assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
        let entry = reply.data();
        assert_grant(entry, app.org.id, *amount, total, actor);
        assert_eq!(entry["reason"], json!(reason));

        let treasury = treasury_reply(app, caller).await;
        assert_eq!(treasury.data()["balance"], total);
        assert_timestamp(treasury.data(), "updatedAt");
        let history = treasury_history(app, caller).await;
        assert_eq!(history.len(), n + 1);
        assert_eq!(
            &history[0], entry,
            "the history shows the entry as answered"
        );

        // Audited on the organization, by whoever granted.
        let events = all_pages(
            app,
            &admin,
            &format!("/events?type=treasury.granted&entityId={}", app.org.id),
        )
        .await;
        assert_eq!(events.len(), n + 1);
        assert_eq!(events[0]["entityType"], "organization");
        assert_eq!(events[0]["entityId"], app.org.id.to_string());
        assert_eq!(events[0]["actorId"], actor.as_str());
        assert_eq!(
            events[0]["payload"],
            json!({ "amount": amount, "reason": reason, "balanceAfter": total })
        );
    }
    let history = treasury_history(app, &admin).await;
    assert_eq!(
        brief(&history),
        [
            "granted:2:508",
            "granted:1:506",
            "granted:5:505",
            "granted:500:500"
        ]
    );
    assert_chain(&history, 508, "the treasury");
    // A treasury grant gives no agent anything.
    let agents = all_pages(app, &admin, "/agents").await;
    assert!(
        agents.iter().all(|a| a["currentBalance"] == 0),
        "{agents:?}"
    );
}

async fn treasury_history_pages_newest_first(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    for amount in 1..=5 {
        let reply = treasury_grant_as(app, &admin, &json!({ "amount": amount })).await;
        assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    }
    let expected = [
        "granted:5:15",
        "granted:4:10",
        "granted:3:6",
        "granted:2:3",
        "granted:1:1",
    ];
    let get = |query: &str| {
        let path = format!("/org/treasury/history{query}");
        let admin = admin.clone();
        async move { admin.call(app, Method::GET, &path, None).await }
    };
    let all = get("").await;
    assert_eq!(brief(all.list()), expected);
    assert_eq!(keys_of(&all.body), ["data"], "no meta when nothing remains");
    let exact = get("?limit=5").await;
    assert_eq!(brief(exact.list()), expected);
    assert_eq!(keys_of(&exact.body), ["data"]);

    // Pages of 2: a cursor while more remain, none on the last page.
    let first = get("?limit=2").await;
    assert_eq!(brief(first.list()), expected[..2]);
    let cursor = str_of(&first.body["meta"], "nextCursor");
    assert_eq!(cursor, str_of(&first.list()[1], "id"));
    let second = get(&format!("?limit=2&cursor={cursor}")).await;
    assert_eq!(brief(second.list()), expected[2..4]);
    let cursor = str_of(&second.body["meta"], "nextCursor");
    let third = get(&format!("?limit=2&cursor={cursor}")).await;
    assert_eq!(brief(third.list()), expected[4..]);
    assert_eq!(keys_of(&third.body), ["data"], "the last page");
    let mut ids = all.ids();
    ids.sort();
    ids.reverse();
    assert_eq!(ids, all.ids(), "newest first is id order");
    for entry in all.list() {
        assert_eq!(keys_of(entry), TREASURY_ENTRY_KEYS, "{entry}");
        assert_eq!(entry["reason"], Value::Null);
    }

    for (query, message) in [
        ("limit=0", "limit must be between 1 and 500"),
        ("limit=501", "limit must be between 1 and 500"),
        ("limit=ten", "limit"),
        ("cursor=nope", "cursor is not valid"),
        ("page=2", "property page should not exist"),
    ] {
        let reply = get(&format!("?{query}")).await;
        assert_error(&reply, 400, message);
    }
}

async fn only_admins_see_or_fund_the_treasury(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let admin = Caller::Bearer(token.clone());
    let reply = treasury_grant_as(app, &admin, &json!({ "amount": 40 })).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);

    let (_, operator) = app.user_token(&app.org, "operator").await;
    let (_, viewer) = app.user_token(&app.org, "viewer").await;
    let write_key = app.api_key(&token, &["write"]).await;
    let read_key = app.api_key(&token, &["read"]).await;
    let worker = app.worker(&app.org).await;
    let level_ten = crate::agent_support::agent_with(app, &app.org, 10, "worker", "worker").await;
    let observer_founder = staff(app, &app.org, "founder", 8).await;
    change_agent(app, &observer_founder, |a| a.mode = AgentMode::Observer).await;
    let refused: [(Caller, &str); 8] = [
        (Caller::Bearer(operator), TREASURY_ADMINS),
        (Caller::Bearer(viewer), "viewer users are read-only"),
        (Caller::Bearer(write_key), "API key lacks the admin scope"),
        (Caller::Bearer(read_key), "API key lacks the"),
        (Caller::Agent(worker), TREASURY_ADMINS),
        (Caller::Agent(level_ten), TREASURY_ADMINS),
        (Caller::Agent(app.org.hr.clone()), TREASURY_ADMINS),
        (
            Caller::Agent(observer_founder),
            "observer agents are read-only",
        ),
    ];
    let events = event_total(app, &app.org.hr).await;
    for (caller, message) in &refused {
        for (method, path, body) in routes() {
            let reply = caller.call(app, method.clone(), path, body.as_ref()).await;
            assert_eq!(
                reply.status.as_u16(),
                403,
                "{method} {path}: {}",
                reply.text
            );
            assert_error(&reply, 403, message);
        }
    }

    // Nobody signed in: 401 on each route.
    for (method, path, body) in routes() {
        let mut request = app.anonymous(method.clone(), path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let reply = send(request).await;
        assert_error_exact(
            &reply,
            401,
            "missing credentials: sign the request as an agent or send Authorization: Bearer <token>",
        );
    }
    // A founder agent may.
    let founder = staff(app, &app.org, "founder", 8).await;
    let founder = Caller::Agent(founder);
    assert_eq!(treasury_balance(app, &founder).await, 40);
    let reply = treasury_grant_as(app, &founder, &json!({ "amount": 2 })).await;
    assert_eq!(reply.data()["balanceAfter"], 42);

    assert_eq!(treasury_balance(app, &admin).await, 42);
    assert_eq!(treasury_history(app, &admin).await.len(), 2);
    assert_eq!(event_total(app, &app.org.hr).await, events + 1);
}

async fn bad_treasury_grants_are_400_and_change_nothing(app: &TestApp) {
    let admin = admin(app, &app.org).await;
    let range = "amount must be between 1 and 1000000000";
    let bad = [
        (json!({ "amount": 0 }), range),
        (json!({ "amount": -5 }), range),
        (json!({ "amount": 1_000_000_001 }), range),
        (json!({ "amount": "10" }), "amount"),
        (json!({ "amount": 1.5 }), "amount"),
        (json!({ "amount": null }), "amount"),
        (json!({}), "amount is required"),
        (json!({ "reason": "no amount" }), "amount is required"),
        (
            json!({ "amount": 1, "to": "me" }),
            "property to should not exist",
        ),
        (
            json!({ "amount": 1, "orgId": uuid::Uuid::now_v7() }),
            "property orgId should not exist",
        ),
        (
            json!({ "amount": 1, "reason": "r".repeat(2001) }),
            "reason must be at most 2000 characters",
        ),
        (json!({ "amount": 1, "reason": 5 }), "reason"),
    ];
    let events = event_total(app, &app.org.hr).await;
    for (body, message) in &bad {
        let reply = treasury_grant_as(app, &admin, body).await;
        assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
        assert_error(&reply, 400, message);
    }
    for raw in [r#"{"amount": 1"#, r#"{"amount": 1} trailing"#] {
        let reply = raw_as(app, &admin, Method::POST, "/org/treasury/grant", raw).await;
        assert_error(&reply, 400, "malformed JSON");
    }
    assert_eq!(treasury_balance(app, &admin).await, 0);
    assert!(treasury_history(app, &admin).await.is_empty());
    assert_eq!(event_total(app, &app.org.hr).await, events);

    // The largest amount is fine.
    let reply = treasury_grant_as(app, &admin, &json!({ "amount": 1_000_000_000 })).await;
    assert_eq!(reply.data()["balanceAfter"], 1_000_000_000);
    assert_eq!(treasury_balance(app, &admin).await, 1_000_000_000);
}

async fn each_organization_sees_its_own_treasury(app: &TestApp) {
    let ours = admin(app, &app.org).await;
    let theirs = admin(app, &app.other).await;
    let reply = treasury_grant_as(app, &ours, &json!({ "amount": 70 })).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    let reply = treasury_grant_as(app, &theirs, &json!({ "amount": 3 })).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
    assert_eq!(reply.data()["orgId"], app.other.id.to_string());
    assert_eq!(reply.data()["balanceAfter"], 3);

    let reply = treasury_reply(app, &theirs).await;
    assert_eq!(reply.data()["orgId"], app.other.id.to_string());
    assert_eq!(reply.data()["balance"], 3);
    assert_eq!(
        brief(&treasury_history(app, &theirs).await),
        ["granted:3:3"]
    );
    let reply = treasury_reply(app, &ours).await;
    assert_eq!(reply.data()["orgId"], app.org.id.to_string());
    assert_eq!(reply.data()["balance"], 70);
    assert_eq!(
        brief(&treasury_history(app, &ours).await),
        ["granted:70:70"]
    );

    // Their founder funds their treasury, never ours; their cursor pages nothing of ours.
    let founder = Caller::Agent(staff(app, &app.other, "founder", 8).await);
    let reply = treasury_grant_as(app, &founder, &json!({ "amount": 4 })).await;
    assert_eq!(reply.data()["orgId"], app.other.id.to_string());
    assert_eq!(treasury_balance(app, &ours).await, 70);
    assert_eq!(treasury_balance(app, &theirs).await, 7);
    let our_entry = str_of(&treasury_history(app, &ours).await[0], "id");
    let reply = theirs
        .call(
            app,
            Method::GET,
            &format!("/org/treasury/history?cursor={our_entry}"),
            None,
        )
        .await;
    // Either no page at all, or a page of theirs only.
    if reply.status.as_u16() == 200 {
        assert!(
            reply
                .list()
                .iter()
                .all(|e| e["orgId"] == app.other.id.to_string()),
            "{}",
            reply.text
        );
    } else {
        assert_error(&reply, 400, "cursor");
    }
}
