//! `Idempotency-Key` on POSTs: a retry is answered from the first attempt, byte for
//! byte, without a second effect; the key is the caller's own (per credential, method
//! and path); another body is 422; racing copies give one effect and 409 to the rest
//! while it runs; a request that failed on our side leaves the key free.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{Reply, TestApp, assert_error, assert_error_exact, send, str_of};

api_tests!(
    a_retry_replays_the_first_answer_without_a_second_effect,
    keys_belong_to_a_credential_method_and_path,
    the_same_key_with_another_body_is_422,
    racing_copies_have_one_effect,
    bad_keys_are_refused,
    users_and_api_keys_have_keys_of_their_own,
    a_retry_on_another_instance_is_replayed,
);

async fn post_with_key(
    app: &TestApp,
    agent: &crate::helpers::Agent,
    path: &str,
    body: &str,
    key: &str,
) -> Reply {
    send(
        app.signed(agent, Method::POST, path, Some(body))
            .header("Idempotency-Key", key),
    )
    .await
}

async fn task_count(app: &TestApp) -> usize {
    app.get(&app.org.hr, "/tasks?limit=100").await.list().len()
}

async fn a_retry_replays_the_first_answer_without_a_second_effect(app: &TestApp) {
    let body = r#"{"title":"Pay the invoice"}"#;
    let first = post_with_key(app, &app.org.hr, "/tasks", body, "invoice-42").await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert!(first.headers.get("idempotent-replayed").is_none());
    let again = post_with_key(app, &app.org.hr, "/tasks", body, "invoice-42").await;
    assert_eq!(again.status, 200);
    assert_eq!(again.text, first.text, "the same answer, byte for byte");
    assert_eq!(again.headers["idempotent-replayed"], "true");
    assert_eq!(again.headers["content-type"], first.headers["content-type"]);
    assert_eq!(task_count(app).await, 1, "one task");
    // A refused request is kept too: its retry is refused the same way, nothing done.
    let bad = r#"{"title":""}"#;
    let refused = post_with_key(app, &app.org.hr, "/tasks", bad, "empty-title").await;
    assert_eq!(refused.status, 400);
    let again = post_with_key(app, &app.org.hr, "/tasks", bad, "empty-title").await;
    assert_eq!(
        (again.status, again.text.clone()),
        (refused.status, refused.text.clone())
    );
    // Without the header every POST is its own.
    app.post(&app.org.hr, "/tasks", body).await;
    app.post(&app.org.hr, "/tasks", body).await;
    assert_eq!(task_count(app).await, 3);
    // A transition retried after it was applied does not fail as a second move would.
    let id = str_of(first.data(), "id");
    let path = format!("/tasks/{id}/transition");
    let moved = post_with_key(
        app,
        &app.org.hr,
        &path,
        r#"{"status":"in_progress"}"#,
        "start",
    )
    .await;
    assert_eq!(moved.status, 200, "{}", moved.text);
    let retried = post_with_key(
        app,
        &app.org.hr,
        &path,
        r#"{"status":"in_progress"}"#,
        "start",
    )
    .await;
    assert_eq!(retried.status, 200, "not 409 Invalid transition");
    assert_eq!(retried.text, moved.text);
}

async fn keys_belong_to_a_credential_method_and_path(app: &TestApp) {
    let body = r#"{"title":"Shared key"}"#;
    let worker = app.add_agent(&app.org, "worker", "active").await;
    let mine = post_with_key(app, &app.org.hr, "/tasks", body, "k-1").await;
    let theirs = post_with_key(app, &worker, "/tasks", body, "k-1").await;
    assert_eq!(theirs.status, 200);
    assert!(
        theirs.headers.get("idempotent-replayed").is_none(),
        "another agent's key"
    );
    assert_ne!(str_of(mine.data(), "id"), str_of(theirs.data(), "id"));
    let other_org = post_with_key(app, &app.other.hr, "/tasks", body, "k-1").await;
    assert!(other_org.headers.get("idempotent-replayed").is_none());
    // Another path with the same key is another request.
    let id = str_of(mine.data(), "id");
    let comment = post_with_key(
        app,
        &app.org.hr,
        &format!("/tasks/{id}/comments"),
        r#"{"body":"hi"}"#,
        "k-1",
    )
    .await;
    assert_eq!(comment.status, 200, "{}", comment.text);
    assert!(comment.headers.get("idempotent-replayed").is_none());
    assert_eq!(task_count(app).await, 2);
}

async fn the_same_key_with_another_body_is_422(app: &TestApp) {
    post_with_key(app, &app.org.hr, "/tasks", r#"{"title":"One"}"#, "same").await;
    let other = post_with_key(app, &app.org.hr, "/tasks", r#"{"title":"Two"}"#, "same").await;
    assert_error_exact(
        &other,
        422,
        "This Idempotency-Key was used with a different request body",
    );
    assert_eq!(task_count(app).await, 1);
}

async fn racing_copies_have_one_effect(app: &TestApp) {
    let body = r#"{"title":"Exactly once"}"#;
    let copies = (0..8).map(|_| post_with_key(app, &app.org.hr, "/tasks", body, "race"));
    let replies = futures_util::future::join_all(copies).await;
    let ok: Vec<&Reply> = replies.iter().filter(|r| r.status == 200).collect();
    assert!(!ok.is_empty());
    for reply in &replies {
        match reply.status.as_u16() {
            200 => assert_eq!(reply.text, ok[0].text, "every success is the one answer"),
            409 => assert_error_exact(
                reply,
                409,
                "A request with this Idempotency-Key is still being handled; retry later",
            ),
            other => panic!("unexpected {other}: {}", reply.text),
        }
    }
    assert_eq!(task_count(app).await, 1, "one effect");
    let after = post_with_key(app, &app.org.hr, "/tasks", body, "race").await;
    assert_eq!(after.text, ok[0].text, "and afterwards, the answer");
}

async fn bad_keys_are_refused(app: &TestApp) {
    let body = r#"{"title":"Never"}"#;
    for key in ["", &"k".repeat(256), "caf\u{e9}"] {
        let reply = send(
            app.signed(&app.org.hr, Method::POST, "/tasks", Some(body))
                .header("Idempotency-Key", key.as_bytes().to_vec()),
        )
        .await;
        assert_error(
            &reply,
            400,
            "Idempotency-Key must be 1 to 255 printable ASCII characters",
        );
    }
    assert_eq!(task_count(app).await, 0);
    let longest = "k".repeat(255);
    assert_eq!(
        post_with_key(app, &app.org.hr, "/tasks", body, &longest)
            .await
            .status,
        200
    );
    // Only POSTs use it: a PATCH with a key is an ordinary PATCH.
    let id = str_of(
        &app.create_task(&app.org.hr, &json!({"title": "x"})).await,
        "id",
    );
    for title in ["a", "b"] {
        let reply = send(
            app.signed(
                &app.org.hr,
                Method::PATCH,
                &format!("/tasks/{id}"),
                Some(&json!({"title": title}).to_string()),
            )
            .header("Idempotency-Key", "patch"),
        )
        .await;
        assert_eq!(reply.data()["title"], title);
    }
}

async fn users_and_api_keys_have_keys_of_their_own(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let api_key = app.api_key(&admin, &["read", "write"]).await;
    let body = json!({"title": "From a person"});
    let post = |credential: &str| {
        send(
            app.bearer(credential, Method::POST, "/tasks", Some(&body))
                .header("Idempotency-Key", "person-1"),
        )
    };
    let first = post(&admin).await;
    let again = post(&admin).await;
    assert_eq!(again.text, first.text);
    assert_eq!(again.headers["idempotent-replayed"], "true");
    let by_key = post(&api_key).await;
    assert_eq!(by_key.status, 200);
    assert!(
        by_key.headers.get("idempotent-replayed").is_none(),
        "the API key is another credential"
    );
    assert_eq!(task_count(app).await, 2);
}

async fn a_retry_on_another_instance_is_replayed(app: &TestApp) {
    let body = r#"{"title":"Behind a load balancer"}"#;
    let first = post_with_key(app, &app.org.hr, "/tasks", body, "lb-1").await;
    let sibling = app.sibling().await;
    let request = app
        .signed_on(
            &sibling.base,
            &app.org.hr,
            Method::POST,
            "/tasks",
            Some(body),
        )
        .header("Idempotency-Key", "lb-1");
    let again = send(request).await;
    assert_eq!(again.text, first.text);
    assert_eq!(again.headers["idempotent-replayed"], "true");
    assert_eq!(task_count(app).await, 1);
    TestApp::stop_sibling(sibling).await;
}
