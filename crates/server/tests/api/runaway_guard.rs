//! The runaway guard through the API on both engines: its thresholds read and changed
//! (who may, what is refused); the write breaker and the spend breaker trip above their
//! thresholds and not at them, refuse the change that goes past, suspend the agent with
//! an `agent.suspended` event naming the breaker, and tell post-hooks; an HR caller
//! unsuspends it with a fresh window; parallel writes of one agent spread over two
//! instances of one database are counted exactly.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::agent_support::grant;
use crate::helpers::{Agent, Org, Reply, TestApp, assert_error, assert_error_exact, send, str_of};
use crate::hook_receiver::Receiver;
use crate::webhook_support::register;

api_tests!(with crate::webhook_support::loopback_hooks();
    thresholds_are_read_by_anyone_and_changed_by_admins,
    bad_thresholds_are_refused_and_change_nothing,
    the_write_breaker_trips_above_its_threshold_and_not_at_it,
    the_spend_breaker_trips_above_its_hourly_threshold,
    parallel_writes_over_two_instances_are_counted_exactly,
);

async fn patch_guard(app: &TestApp, token: &str, body: &Value) -> Reply {
    send(app.bearer(token, Method::PATCH, "/agents/guard", Some(body))).await
}

/// Sets `org`'s own thresholds as its admin, asserting 200.
async fn set_guard(app: &TestApp, org: &Org, body: &Value) -> Value {
    let token = app.admin_token(org).await;
    let reply = patch_guard(app, &token, body).await;
    reply.data().clone()
}

async fn status_of(app: &TestApp, agent: &Agent) -> String {
    let reply = app
        .get(&app.org.hr, &format!("/agents/{}", agent.uuid))
        .await;
    str_of(reply.data(), "status")
}

async fn create(app: &TestApp, agent: &Agent, title: &str) -> Reply {
    app.post(agent, "/tasks", &json!({ "title": title }).to_string())
        .await
}

async fn tasks_by(app: &TestApp, agent: &Agent) -> usize {
    let reply = app
        .get(
            &app.org.hr,
            &format!("/tasks?creatorId={}&limit=100", agent.uuid),
        )
        .await;
    reply.list().len()
}

/// Asserts a signed read of `agent` is refused as from an inactive agent: at once, as
/// the instance that suspended it forgot the credentials it had cached (the agent
/// signed its requests just before).
async fn assert_locked_out(app: &TestApp, agent: &Agent) {
    let refused = send(app.signed(agent, Method::GET, "/tasks", None)).await;
    assert_error_exact(&refused, 401, "agent is not active");
}

async fn suspensions(app: &TestApp, agent: &Agent) -> Vec<Value> {
    app.events_of_type(&app.org.hr, &agent.uuid.to_string(), "agent.suspended")
        .await
}

async fn thresholds_are_read_by_anyone_and_changed_by_admins(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let read = app.get(&worker, "/agents/guard").await;
    assert_eq!(
        read.data(),
        &json!({"actionsPerMinute": 0, "creditsPerHour": 0,
                "own": {"actionsPerMinute": null, "creditsPerHour": null},
                "defaults": {"actionsPerMinute": 0, "creditsPerHour": 0}})
    );

    let refused = app.post(&worker, "/agents/guard", "{}").await;
    assert_eq!(refused.status, 405, "{}", refused.text);
    let by_worker = send(app.signed(
        &worker,
        Method::PATCH,
        "/agents/guard",
        Some(&json!({"actionsPerMinute": 1}).to_string()),
    ))
    .await;
    assert_error_exact(
        &by_worker,
        403,
        "only admin users and founder or admin agents may change the runaway guard",
    );
    let (_, operator) = app.user_token(&app.org, "operator").await;
    let by_operator = patch_guard(app, &operator, &json!({"actionsPerMinute": 1})).await;
    assert_error(&by_operator, 403, "runaway guard");

    let set = set_guard(app, &app.org, &json!({"actionsPerMinute": 600})).await;
    assert_eq!(set["actionsPerMinute"], 600);
    assert_eq!(
        set["own"],
        json!({"actionsPerMinute": 600, "creditsPerHour": null})
    );
    let off = set_guard(app, &app.org, &json!({"creditsPerHour": 0})).await;
    assert_eq!(
        off["own"],
        json!({"actionsPerMinute": 600, "creditsPerHour": 0})
    );
    let back = set_guard(app, &app.org, &json!({"actionsPerMinute": null})).await;
    assert_eq!(back["actionsPerMinute"], 0, "the default again");
    assert_eq!(back["own"]["actionsPerMinute"], Value::Null);

    // Each change is audited; the other organization keeps its defaults.
    let events = app
        .get(&app.org.hr, "/events?type=guard.updated&limit=10")
        .await;
    assert_eq!(events.list().len(), 3, "{}", events.text);
    assert_eq!(
        events.list()[0]["payload"],
        json!({"actionsPerMinute": null, "creditsPerHour": 0})
    );
    let other = app.get(&app.other.hr, "/agents/guard").await;
    assert_eq!(other.data()["own"]["creditsPerHour"], Value::Null);
}

async fn bad_thresholds_are_refused_and_change_nothing(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let cases = [
        (
            json!({"actionsPerMinute": -1}),
            "actionsPerMinute must be between 0 (off) and 1000000",
        ),
        (
            json!({"actionsPerMinute": 1_000_001}),
            "actionsPerMinute must be between 0 (off) and 1000000",
        ),
        (
            json!({"creditsPerHour": -5}),
            "creditsPerHour must be between 0 (off) and 1000000000000",
        ),
        (json!({"actionsPerMinute": "ten"}), "actionsPerMinute"),
        (json!({"actionsPerMinute": 1.5}), "actionsPerMinute"),
        (json!({"perMinute": 10}), "perMinute"),
        (
            json!({}),
            "at least one of actionsPerMinute and creditsPerHour must be given",
        ),
    ];
    for (body, message) in cases {
        let reply = patch_guard(app, &token, &body).await;
        assert_error(&reply, 400, message);
    }
    let malformed = send(
        app.bearer(&token, Method::PATCH, "/agents/guard", None)
            .header("content-type", "application/json")
            .body("{\"actionsPerMinute\": "),
    )
    .await;
    assert_eq!(malformed.status, 400, "{}", malformed.text);
    let read = app.get(&app.org.hr, "/agents/guard").await;
    assert_eq!(
        read.data()["own"],
        json!({"actionsPerMinute": null, "creditsPerHour": null})
    );
}

async fn the_write_breaker_trips_above_its_threshold_and_not_at_it(app: &TestApp) {
    let receiver = Receiver::start();
    let token = app.admin_token(&app.org).await;
    register(
        app,
        &token,
        &json!({"name": "guard", "url": receiver.url("/in"), "events": ["agent.suspended"]}),
    )
    .await;
    set_guard(app, &app.org, &json!({"actionsPerMinute": 5})).await;
    let worker = app.worker(&app.org).await;
    // Reads are not writes.
    for _ in 0..8 {
        assert_eq!(app.get(&worker, "/tasks?limit=1").await.status, 200);
    }
    for n in 1..=5 {
        let made = create(app, &worker, &format!("write {n}")).await;
        assert_eq!(made.status, 200, "write {n}: {}", made.text);
    }
    assert_eq!(status_of(app, &worker).await, "active", "at the threshold");

    let sixth = create(app, &worker, "write 6").await;
    assert_error(&sixth, 429, "runaway guard: 6 writes within");
    assert_error(&sixth, 429, "goes past the limit of 5 per minute");
    assert_eq!(
        tasks_by(app, &worker).await,
        5,
        "the refused write changed nothing"
    );
    assert_eq!(status_of(app, &worker).await, "suspended");
    let events = suspensions(app, &worker).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["severity"], "warning");
    assert_eq!(
        events[0]["actorId"],
        Value::Null,
        "the service suspended it"
    );
    let breaker = &events[0]["payload"]["breaker"];
    assert_eq!(
        (
            &breaker["kind"],
            &breaker["measured"],
            &breaker["limit"],
            &breaker["per"]
        ),
        (
            &json!("action_rate"),
            &json!(6),
            &json!(5),
            &json!("minute")
        )
    );
    assert!(
        breaker["withinSeconds"]
            .as_i64()
            .is_some_and(|s| (0..60).contains(&s))
    );
    assert_locked_out(app, &worker).await;
    let heard = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(heard[0].json()["event"], "agent.suspended");
    assert_eq!(
        heard[0].json()["data"]["data"]["breaker"]["kind"],
        "action_rate"
    );

    // HR lets it back in with a fresh window.
    let path = format!("/agents/{}/unsuspend", worker.uuid);
    let back = app.post(&app.org.hr, &path, "{}").await;
    assert_eq!(back.status, 200, "{}", back.text);
    // At once: the suspended agent's last (refused) request was cached as such.
    for n in 7..=11 {
        let made = create(app, &worker, &format!("write {n}")).await;
        assert_eq!(made.status, 200, "write {n}: {}", made.text);
    }
    receiver.stop().await;
}

async fn spend(app: &TestApp, agent: &Agent, amount: i64) -> Reply {
    app.post(
        agent,
        "/agents/credits/spend",
        &json!({ "amount": amount }).to_string(),
    )
    .await
}

async fn the_spend_breaker_trips_above_its_hourly_threshold(app: &TestApp) {
    set_guard(app, &app.org, &json!({"creditsPerHour": 100})).await;
    let worker = app.worker(&app.org).await;
    grant(app, &app.org, &worker, 1_000).await;
    assert_eq!(spend(app, &worker, 60).await.status, 200);
    assert_eq!(spend(app, &worker, 40).await.status, 200);
    assert_eq!(status_of(app, &worker).await, "active", "100 of 100");

    let over = spend(app, &worker, 1).await;
    assert_error(&over, 429, "runaway guard: 101 credits spent within");
    assert_eq!(status_of(app, &worker).await, "suspended");
    let balance = app
        .get(
            &app.org.hr,
            &format!("/agents/{}/credits/balance", worker.uuid),
        )
        .await;
    assert_eq!(balance.data()["currentBalance"], 900, "{}", balance.text);
    let events = suspensions(app, &worker).await;
    let breaker = &events[0]["payload"]["breaker"];
    assert_eq!(
        (
            &breaker["kind"],
            &breaker["measured"],
            &breaker["limit"],
            &breaker["per"]
        ),
        (
            &json!("spend_velocity"),
            &json!(101),
            &json!(100),
            &json!("hour")
        )
    );
}

async fn parallel_writes_over_two_instances_are_counted_exactly(app: &TestApp) {
    let sibling = app.sibling().await;
    set_guard(app, &app.org, &json!({"actionsPerMinute": 10})).await;
    // The sibling reads the thresholds at most a second late.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let worker = app.worker(&app.org).await;
    let bases = [app.url(""), sibling.base.clone()];
    let racers = (0..30).map(|n| {
        let body = json!({ "title": format!("racer {n}") }).to_string();
        send(app.signed_on(&bases[n % 2], &worker, Method::POST, "/tasks", Some(&body)))
    });
    let replies = futures_util::future::join_all(racers).await;
    let made = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies
        .iter()
        .filter(|r| r.status == 429 || r.status == 401)
        .count();
    assert_eq!(
        (made, refused),
        (10, 20),
        "{:?}",
        replies
            .iter()
            .map(|r| (r.status, &r.text))
            .collect::<Vec<_>>()
    );
    assert_eq!(tasks_by(app, &worker).await, 10);
    assert_eq!(suspensions(app, &worker).await.len(), 1, "suspended once");
    assert_eq!(status_of(app, &worker).await, "suspended");
    TestApp::stop_sibling(sibling).await;
}
