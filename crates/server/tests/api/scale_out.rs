//! Several instances over one database, as behind a load balancer: what one instance
//! decides holds on the others. A nonce used on A is refused on B; a refresh token
//! rotated on A is retired on B, and logging out everywhere on A is effective on B;
//! parallel transitions of one task spread over three instances have exactly one winner
//! per step.

use std::time::Duration;

use muster_persistence::{Database, PoolOptions};
use reqwest::Method;
use serde_json::json;

use crate::helpers::{Reply, TestApp, assert_error_exact, send, str_of};

api_tests!(
    a_nonce_used_on_one_instance_is_refused_on_another,
    refresh_tokens_and_logouts_hold_across_instances,
    parallel_transitions_across_instances_have_one_winner_per_step,
    an_exhausted_pool_fails_fast_with_503_and_recovers,
);

async fn a_nonce_used_on_one_instance_is_refused_on_another(app: &TestApp) {
    let sibling = app.sibling().await;
    let headers = TestApp::headers_for(&app.org.hr, &Method::GET, "/tasks", b"");
    let first = send(app.with_headers(Method::GET, "/tasks", &headers, None)).await;
    assert_eq!(first.status, 200, "{}", first.text);
    let again =
        send(app.with_headers_on(&sibling.base, Method::GET, "/tasks", &headers, None)).await;
    assert_error_exact(&again, 401, "nonce already used");
    TestApp::stop_sibling(sibling).await;
}

async fn refresh(app: &TestApp, base: &str, token: &str) -> Reply {
    send(
        app.client
            .post(format!("{base}/auth/refresh"))
            .json(&json!({ "refreshToken": token })),
    )
    .await
}

async fn refresh_tokens_and_logouts_hold_across_instances(app: &TestApp) {
    let sibling = app.sibling().await;
    let email = &app.org.admin_email;
    let first = app.login(email, crate::helpers::ADMIN_PASSWORD).await;
    let original = str_of(&first, "refreshToken");
    let rotated = refresh(app, &app.url(""), &original).await;
    assert_eq!(rotated.status, 200, "{}", rotated.text);
    let newer = str_of(&rotated.body, "refreshToken");
    // The retired token is refused on the other instance, and presenting it there ends
    // the whole login, on every instance.
    let replayed = refresh(app, &sibling.base, &original).await;
    assert_eq!(replayed.status, 401, "{}", replayed.text);
    let after = refresh(app, &app.url(""), &newer).await;
    assert_eq!(after.status, 401, "the login ended: {}", after.text);

    // Two other logins; logging out of every one on A ends them on B as well.
    let one = app.login(email, crate::helpers::ADMIN_PASSWORD).await;
    let two = app.login(email, crate::helpers::ADMIN_PASSWORD).await;
    let access = str_of(&one, "accessToken");
    let out = send(app.bearer(&access, Method::POST, "/auth/logout-all", None)).await;
    assert_eq!(out.status, 204, "{}", out.text);
    for login in [&one, &two] {
        let refused = refresh(app, &sibling.base, &str_of(login, "refreshToken")).await;
        assert_eq!(refused.status, 401, "{}", refused.text);
    }
    TestApp::stop_sibling(sibling).await;
}

async fn parallel_transitions_across_instances_have_one_winner_per_step(app: &TestApp) {
    let siblings = [app.sibling().await, app.sibling().await];
    let bases = [
        app.url(""),
        siblings[0].base.clone(),
        siblings[1].base.clone(),
    ];
    let worker = app.worker(&app.org).await;
    let task = str_of(
        &app.create_task(&worker, &json!({ "title": "Contended" }))
            .await,
        "id",
    );
    let path = format!("/tasks/{task}/transition");
    for to in ["in_progress", "review", "done"] {
        let body = json!({ "status": to }).to_string();
        let racers = (0..20).map(|n| {
            let request = app.signed_on(
                &bases[n % bases.len()],
                &worker,
                Method::POST,
                &path,
                Some(&body),
            );
            send(request)
        });
        let replies = futures_util::future::join_all(racers).await;
        let won = replies.iter().filter(|r| r.status == 200).count();
        let lost = replies.iter().filter(|r| r.status == 409).count();
        assert_eq!(
            (won, lost),
            (1, 19),
            "step to {to}: {:?}",
            replies
                .iter()
                .map(|r| (r.status, &r.text))
                .collect::<Vec<_>>()
        );
        let now = app.get(&worker, &format!("/tasks/{task}")).await;
        assert_eq!(now.data()["status"], to);
    }
    // One event per step, however many tried.
    let moves = app
        .events_of(&worker, &task)
        .await
        .into_iter()
        .filter(|e| e["type"] == "task.transitioned")
        .count();
    assert_eq!(moves, 3);
    for sibling in siblings {
        TestApp::stop_sibling(sibling).await;
    }
}

async fn an_exhausted_pool_fails_fast_with_503_and_recovers(app: &TestApp) {
    // An instance with a pool of one connection and a short wait for it.
    let small = Database::connect(
        &app.db().url,
        PoolOptions {
            max_size: 1,
            timeout: Duration::from_millis(300),
            ..PoolOptions::default()
        },
    )
    .await
    .unwrap();
    let sibling = app.sibling_over(&small).await;
    let list = || send(app.signed_on(&sibling.base, &app.org.hr, Method::GET, "/tasks", None));
    let ready = || send(app.client.get(format!("{}/ready", sibling.base)));
    assert_eq!(list().await.status, 200);
    assert_eq!(ready().await.status, 200);

    // Something holds the only connection: requests fail at once instead of queueing.
    let held = small.hold_connection().await;
    let refused = list().await;
    assert_error_exact(
        &refused,
        503,
        "Service temporarily unavailable; retry later",
    );
    assert_eq!(refused.headers["retry-after"], "1");
    assert!(
        small.pool_status().timeouts >= 1,
        "the wait that ran out is counted"
    );
    assert_eq!(ready().await.status, 503);
    // The other instance, with a pool of its own, serves on.
    assert_eq!(app.get(&app.org.hr, "/tasks").await.status, 200);

    drop(held);
    assert_eq!(list().await.status, 200, "recovered by itself");
    assert_eq!(ready().await.status, 200);
    TestApp::stop_sibling(sibling).await;
}
