//! Post-hook delivery from the outbox (decision D-83) to a receiver on loopback: the
//! contract's headers and body, a signature the receiver verifies over the raw body,
//! order per hook, retries with a stable delivery id, the switch-off after ten
//! failures, resumption after a restart, and a slow receiver holding nobody up.

use std::time::{Duration, Instant};

use muster_auth::signing::HmacSha256;
use muster_outbound::delivery_signature;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestApp, send, str_of};
use crate::hook_receiver::{Answer, Receiver};
use crate::webhook_support::{hook, log, register, wait_for_log};

api_tests!(with crate::webhook_support::loopback_hooks();
    a_post_hook_gets_the_signed_event,
    events_reach_a_hook_in_order,
    a_failed_delivery_is_retried_with_the_same_delivery_id,
    ten_failures_in_a_row_switch_a_hook_off,
    a_hanging_receiver_holds_up_neither_requests_nor_other_hooks,
    a_test_delivery_is_made_at_once,
    a_lease_left_by_a_dead_instance_runs_out_and_another_delivers,
);

const WAIT: Duration = Duration::from_secs(10);

async fn a_post_hook_gets_the_signed_event(app: &TestApp) {
    let receiver = Receiver::start();
    let token = app.admin_token(&app.org).await;
    let hook_id = register(
        app,
        &token,
        &json!({"name": "audit", "url": receiver.url("/in"), "secret": "whsec-test",
                "events": ["task.created"]}),
    )
    .await;
    let task = app
        .create_task(&app.org.hr, &json!({"title": "Ship"}))
        .await;
    let got = receiver.wait_for(1, WAIT).await;
    assert_eq!(got.len(), 1, "one delivery");
    let delivery = &got[0];
    assert_eq!(delivery.path, "/in");
    assert_eq!(delivery.header("content-type"), Some("application/json"));
    assert_eq!(delivery.header("x-service-event"), Some("task.created"));
    assert_eq!(delivery.header("x-service-hook-type"), Some("post"));
    let delivery_id = delivery.header("x-service-delivery").unwrap();
    assert!(uuid::Uuid::parse_str(delivery_id).is_ok(), "{delivery_id}");
    assert_eq!(
        delivery.header("x-service-signature").unwrap(),
        delivery_signature(&HmacSha256, "whsec-test", &delivery.body),
        "the signature covers the raw body"
    );
    let body = delivery.json();
    let mut keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["data", "event", "timestamp"]);
    assert_eq!(body["event"], "task.created");
    let data = &body["data"];
    let mut keys: Vec<&str> = data
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "actorId",
            "createdAt",
            "data",
            "entityId",
            "entityType",
            "id",
            "severity"
        ]
    );
    assert_eq!(data["entityType"], "task");
    assert_eq!(data["entityId"], task["id"]);
    assert_eq!(data["actorId"], json!(app.org.hr.uuid));
    assert_eq!(data["severity"], "info");
    assert!(data["data"].is_object());
    let event = send(app.signed(
        &app.org.hr,
        Method::GET,
        &format!("/events/{}", str_of(data, "id")),
        None,
    ))
    .await;
    assert_eq!(event.status, 200, "data.id is the stored event");
    assert_eq!(event.data()["type"], "task.created");

    let entries = wait_for_log(app, &token, &hook_id, WAIT, |e| !e.is_empty()).await;
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["attempt"], 1);
    assert_eq!(entries[0]["statusCode"], 200);
    assert_eq!(entries[0]["deliveryId"], delivery_id);
    assert_eq!(entries[0]["error"], json!(null));
    assert!(entries[0]["durationMs"].is_u64());

    // Not subscribed, not delivered; other organizations' events never.
    app.post(&app.org.hr, "/tasks", &json!({"title": "x"}).to_string())
        .await;
    app.create_task(&app.other.hr, &json!({"title": "other org"}))
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let types: Vec<String> = receiver
        .received()
        .iter()
        .map(|r| r.json()["event"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(types, ["task.created", "task.created"]);
    assert!(
        receiver
            .received()
            .iter()
            .all(|r| r.json()["data"]["data"]["title"] != "other org")
    );
    receiver.stop().await;
}

async fn events_reach_a_hook_in_order(app: &TestApp) {
    let receiver = Receiver::start();
    let token = app.admin_token(&app.org).await;
    register(
        app,
        &token,
        &json!({"name": "all", "url": receiver.url("/"), "events": ["*"]}),
    )
    .await;
    let mut ids = Vec::new();
    for n in 0..8 {
        ids.push(app.task_titled(&app.org.hr, &format!("t{n}")).await);
    }
    // Nine: the hook hears its own `webhook.created` too.
    let got = receiver.wait_for(9, WAIT).await;
    assert_eq!(got[0].json()["event"], "webhook.created");
    let created: Vec<String> = got
        .iter()
        .map(crate::hook_receiver::Received::json)
        .filter(|b| b["event"] == "task.created")
        .map(|b| str_of(&b["data"], "entityId"))
        .collect();
    assert_eq!(created, ids, "in event order");
    assert!(
        got.iter()
            .all(|r| r.header("x-service-signature").is_none()),
        "no secret, no signature"
    );
    receiver.stop().await;
}

async fn a_failed_delivery_is_retried_with_the_same_delivery_id(app: &TestApp) {
    let receiver = Receiver::start();
    receiver.script([Answer::status(500), Answer::status(503)]);
    let token = app.admin_token(&app.org).await;
    let hook_id = register(
        app,
        &token,
        &json!({"name": "flaky", "url": receiver.url("/"), "events": ["task.created"]}),
    )
    .await;
    app.task_titled(&app.org.hr, "retry me").await;
    let got = receiver.wait_for(3, WAIT).await;
    assert_eq!(got.len(), 3, "two failures, then success");
    let ids: Vec<&str> = got
        .iter()
        .map(|r| r.header("x-service-delivery").unwrap())
        .collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "stable across retries: {ids:?}"
    );
    let entries = wait_for_log(app, &token, &hook_id, WAIT, |e| e.len() == 3).await;
    let summary: Vec<(u64, u64)> = entries
        .iter()
        .map(|e| {
            (
                e["attempt"].as_u64().unwrap(),
                e["statusCode"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(summary, [(3, 200), (2, 503), (1, 500)], "newest first");
    assert!(entries[1]["error"].as_str().unwrap().contains("503"));
    let hook = hook(app, &token, &hook_id).await;
    assert_eq!(hook["consecutiveFailures"], 0, "a success resets the count");
    assert_eq!(hook["enabled"], true);
    receiver.stop().await;
}

async fn ten_failures_in_a_row_switch_a_hook_off(app: &TestApp) {
    let receiver = Receiver::start();
    receiver.always(Answer::status(500));
    let token = app.admin_token(&app.org).await;
    let hook_id = register(
        app,
        &token,
        &json!({"name": "broken", "url": receiver.url("/"), "events": ["task.created"]}),
    )
    .await;
    // Two events, six attempts each at most: the tenth failure switches the hook off.
    app.task_titled(&app.org.hr, "one").await;
    app.task_titled(&app.org.hr, "two").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let hook = loop {
        let hook = hook(app, &token, &hook_id).await;
        if hook["enabled"] == false || Instant::now() > deadline {
            break hook;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(hook["enabled"], false, "{hook}");
    assert_eq!(hook["consecutiveFailures"], 10);
    assert!(
        hook["lastError"].as_str().unwrap().contains("500"),
        "{hook}"
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        receiver.received().len(),
        10,
        "no call after the switch-off"
    );
    let events = app
        .get(
            &app.org.hr,
            &format!("/events?type=webhook.disabled&entityId={hook_id}"),
        )
        .await;
    assert_eq!(events.list().len(), 1, "{}", events.text);
    assert_eq!(events.list()[0]["payload"]["consecutiveFailures"], 10);

    // Switched back on: the count starts again, and deliveries resume.
    receiver.always(Answer::status(200));
    let reply = send(app.bearer(
        &token,
        Method::PATCH,
        &format!("/api/v1/webhooks/{hook_id}"),
        Some(&json!({"enabled": true})),
    ))
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["enabled"], true);
    assert_eq!(reply.body["consecutiveFailures"], 0);
    app.task_titled(&app.org.hr, "three").await;
    // Each event had one attempt left: they resume with the hook, in order, then the new
    // one.
    let deadline = Instant::now() + WAIT;
    let titles = loop {
        let titles: Vec<String> = receiver.received()[10..]
            .iter()
            .map(|r| str_of(&r.json()["data"]["data"], "title"))
            .collect();
        if titles.contains(&"three".to_owned()) || Instant::now() > deadline {
            break titles;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(titles, ["one", "two", "three"]);
    receiver.stop().await;
}

/// A restart needs the app by value: one test per engine, by hand.
mod restart {
    use muster_domain::rules::delivery::RetrySchedule;
    use muster_persistence::Engine;

    use crate::helpers::{WebhookSettings, spawn_app_with};
    use crate::webhook_support::loopback_hooks;

    /// Retries 2 s apart, five of them: the delivery is still pending however long
    /// the restart takes on a loaded machine (the loopback schedule's 300 ms retries
    /// could run out before it), and six failures stay below the switch-off at ten.
    fn slow_retries() -> WebhookSettings {
        WebhookSettings {
            retry_schedule: RetrySchedule::new(
                std::iter::once(time::Duration::ZERO)
                    .chain(std::iter::repeat_n(time::Duration::seconds(2), 5))
                    .collect(),
            ),
            ..loopback_hooks()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_deliveries_resume_after_a_restart() {
        if let Some(app) = spawn_app_with(Engine::Sqlite, slow_retries()).await {
            Box::pin(super::deliveries_resume_after_a_restart(app)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_deliveries_resume_after_a_restart() {
        if let Some(app) = spawn_app_with(Engine::Postgres, slow_retries()).await {
            Box::pin(super::deliveries_resume_after_a_restart(app)).await;
        }
    }
}

async fn deliveries_resume_after_a_restart(app: TestApp) {
    let receiver = Receiver::start();
    receiver.always(Answer::status(503));
    let token = app.admin_token(&app.org).await;
    let hook_id = register(
        &app,
        &token,
        &json!({"name": "later", "url": receiver.url("/"), "events": ["task.created"]}),
    )
    .await;
    app.task_titled(&app.org.hr, "survive a restart").await;
    receiver.wait_for(1, WAIT).await;
    let app = app.restart().await;
    receiver.always(Answer::status(200));
    let got = receiver.wait_for(2, WAIT).await;
    assert!(got.len() >= 2, "delivered after the restart");
    assert_eq!(
        got.last().unwrap().json()["data"]["data"]["title"],
        "survive a restart"
    );
    let entries = wait_for_log(&app, &token, &hook_id, WAIT, |e| {
        e.first().is_some_and(|e| e["statusCode"] == 200)
    })
    .await;
    assert_eq!(entries[0]["statusCode"], 200);
    app.stop().await;
    receiver.stop().await;
}

async fn a_hanging_receiver_holds_up_neither_requests_nor_other_hooks(app: &TestApp) {
    let slow = Receiver::start();
    slow.always(Answer::after(Duration::from_secs(4)));
    let fast = Receiver::start();
    let token = app.admin_token(&app.org).await;
    let body = |name: &str, url: String| json!({"name": name, "url": url, "events": ["task.created"], "timeoutMs": 5000});
    register(app, &token, &body("slow", slow.url("/"))).await;
    register(app, &token, &body("fast", fast.url("/"))).await;
    app.task_titled(&app.org.hr, "first").await;
    slow.wait_for(1, WAIT).await;
    // The slow hook is now hanging on its first call.
    let started = Instant::now();
    for n in 0..5 {
        app.task_titled(&app.org.hr, &format!("more {n}")).await;
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "requests do not wait for deliveries"
    );
    let got = fast.wait_for(6, Duration::from_secs(3)).await;
    assert_eq!(
        got.len(),
        6,
        "the fast hook got everything while the slow one hung"
    );
    slow.stop().await;
    fast.stop().await;
}

async fn a_test_delivery_is_made_at_once(app: &TestApp) {
    let receiver = Receiver::start();
    let token = app.admin_token(&app.org).await;
    let hook_id = register(
        app,
        &token,
        &json!({"name": "t", "url": receiver.url("/t"), "secret": "k", "events": ["task.done"]}),
    )
    .await;
    let path = format!("/api/v1/webhooks/{hook_id}/test");
    let reply = send(app.bearer(&token, Method::POST, &path, None)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let data = reply.data();
    assert_eq!(data["delivered"], true);
    assert_eq!(data["statusCode"], 200);
    assert_eq!(data["error"], json!(null));
    assert!(data["durationMs"].is_u64());
    let got = receiver.received();
    assert_eq!(got.len(), 1, "delivered before the answer");
    assert_eq!(got[0].header("x-service-event"), Some("webhook.test"));
    let body = got[0].json();
    assert_eq!(body["event"], "webhook.test");
    assert_eq!(
        body["data"]["data"],
        json!({"message": "Test delivery from Muster"})
    );
    assert_eq!(
        got[0].header("x-service-signature").unwrap(),
        delivery_signature(&HmacSha256, "k", &got[0].body)
    );

    receiver.always(Answer::status(500));
    let reply = send(app.bearer(&token, Method::POST, &path, None)).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.data()["delivered"], false);
    assert_eq!(reply.data()["statusCode"], 500);
    assert!(reply.data()["error"].is_string());
    let entries = log(app, &token, &hook_id).await;
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["eventType"], "webhook.test");
    let hook = hook(app, &token, &hook_id).await;
    assert_eq!(hook["consecutiveFailures"], 0, "tests do not count");
    receiver.stop().await;
}

/// Two instances on one PostgreSQL: each event reaches the hook exactly once, one call at
/// a time, in order, whichever instance delivers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_two_instances_never_call_one_hook_at_once() {
    let Some(app) = crate::helpers::spawn_app_with(
        muster_persistence::Engine::Postgres,
        crate::webhook_support::loopback_hooks(),
    )
    .await
    else {
        return;
    };
    let sibling = app.sibling().await;
    let receiver = Receiver::start();
    receiver.always(Answer::after(Duration::from_millis(30)));
    let token = app.admin_token(&app.org).await;
    register(
        &app,
        &token,
        &json!({"name": "shared", "url": receiver.url("/"), "events": ["task.created"]}),
    )
    .await;
    // Half the changes come through each instance.
    let mut ids = Vec::new();
    for n in 0..30 {
        if n % 2 == 0 {
            ids.push(app.task_titled(&app.org.hr, &format!("t{n}")).await);
        } else {
            let body = json!({"title": format!("t{n}")}).to_string();
            let request = app.signed_on(
                &sibling.base,
                &app.org.hr,
                Method::POST,
                "/tasks",
                Some(&body),
            );
            let reply = send(request).await;
            assert_eq!(reply.status, 200, "{}", reply.text);
            ids.push(str_of(reply.data(), "id"));
        }
    }
    let got = receiver.wait_for(30, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = receiver.received().len().max(got.len());
    assert_eq!(got, 30, "each event once");
    let delivered: Vec<String> = receiver
        .received()
        .iter()
        .map(|r| str_of(&r.json()["data"], "entityId"))
        .collect();
    assert_eq!(delivered, ids, "in event order");
    assert_eq!(
        receiver.most_in_flight(),
        1,
        "never two calls to one hook at once"
    );
    TestApp::stop_sibling(sibling).await;
    app.stop().await;
    receiver.stop().await;
}

/// An instance that died (`kill -9`) while it held a hook's delivery lease: nobody else
/// calls that hook until the lease runs out, then a live instance delivers what is due,
/// once.
async fn a_lease_left_by_a_dead_instance_runs_out_and_another_delivers(app: &TestApp) {
    let receiver = Receiver::start();
    let token = app.admin_token(&app.org).await;
    let hook_id = register(
        app,
        &token,
        &json!({"name": "orphaned", "url": receiver.url("/"), "events": ["task.created"]}),
    )
    .await;
    // The dead instance's lease, as it left it: two more seconds to run.
    let until = muster_domain::model::instant::format_millis(
        time::OffsetDateTime::now_utc() + time::Duration::seconds(2),
    )
    .unwrap();
    // Raw SQL: leaves a dead instance's lease; leases are the worker's own, no port sets one.
    app.db()
        .execute(&format!(
            "UPDATE webhooks SET lease_holder = '{}', lease_until = '{until}' \
             WHERE id = '{hook_id}'",
            uuid::Uuid::now_v7()
        ))
        .await;
    let task = app.task_titled(&app.org.hr, "Orphaned delivery").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        receiver.received().is_empty(),
        "delivered while another instance's lease held the hook"
    );
    let got = receiver.wait_for(1, WAIT).await;
    assert_eq!(got.len(), 1, "delivered once the lease ran out");
    assert_eq!(str_of(&got[0].json()["data"], "entityId"), task);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), 1, "and only once");
    receiver.stop().await;
}
