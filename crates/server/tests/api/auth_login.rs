//! `POST /auth/login`: tokens and the user, the same 401 for every wrong credential,
//! throttling after ten failures (also under parallel attempts), the default
//! organization, and the token working on a task route. The throttle's reach (token
//! routes, unknown e-mails, other addresses) is in `auth_throttle.rs`.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{
    ADMIN_PASSWORD, TestApp, assert_error, assert_error_exact, keys_of, send, str_of,
};

api_tests!(
    login_answers_tokens_and_the_user,
    the_access_token_works_on_task_routes,
    wrong_credentials_are_the_same_401,
    login_bodies_are_validated,
    ten_failures_lock_the_account,
    parallel_failures_all_count,
    login_without_a_default_org_needs_org_id,
    login_is_recorded_in_the_audit_log,
);

async fn login_answers_tokens_and_the_user(app: &TestApp) {
    let body = app
        .login(&app.org.admin_email.to_uppercase(), ADMIN_PASSWORD)
        .await;
    assert_eq!(
        keys_of(&body),
        ["accessToken", "expiresIn", "refreshToken", "user"]
    );
    assert_eq!(body["expiresIn"], 900);
    let refresh = str_of(&body, "refreshToken");
    assert!(
        refresh.starts_with("mrt_") && refresh.len() == 47,
        "{refresh}"
    );
    assert_eq!(str_of(&body["user"], "email"), app.org.admin_email);
    assert_eq!(str_of(&body["user"], "role"), "admin");
    assert_eq!(keys_of(&body["user"]), ["email", "id", "name", "role"]);
    // With the organization named explicitly.
    let reply = app
        .post_public(
            "/auth/login",
            &json!({"email": app.other.admin_email, "password": ADMIN_PASSWORD, "orgId": app.other.id}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

async fn the_access_token_works_on_task_routes(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let created = send(app.bearer(
        &token,
        Method::POST,
        "/tasks",
        Some(&json!({"title": "From a human"})),
    ))
    .await;
    let id = str_of(created.data(), "id");
    let read = send(app.bearer(&token, Method::GET, &format!("/tasks/{id}"), None)).await;
    assert_eq!(str_of(read.data(), "title"), "From a human");
    // Scoped to the user's organization.
    let other = app.admin_token(&app.other).await;
    let hidden = send(app.bearer(&other, Method::GET, &format!("/tasks/{id}"), None)).await;
    assert_error(&hidden, 404, "not found");
}

async fn wrong_credentials_are_the_same_401(app: &TestApp) {
    let cases = [
        json!({"email": app.org.admin_email, "password": "wrong password"}),
        json!({"email": "nobody@example.com", "password": ADMIN_PASSWORD}),
        json!({"email": "not an email", "password": ADMIN_PASSWORD}),
        // Right credentials, other organization.
        json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD, "orgId": app.other.id}),
        json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD,
               "orgId": "00000000-0000-7000-8000-000000000000"}),
    ];
    for body in cases {
        let reply = app.post_public("/auth/login", &body).await;
        assert_error_exact(&reply, 401, "Invalid email or password");
    }
}

async fn login_bodies_are_validated(app: &TestApp) {
    let reply = send(
        app.anonymous(Method::POST, "/auth/login")
            .header("Content-Type", "application/json")
            .body("{not json"),
    )
    .await;
    assert_error(&reply, 400, "malformed JSON");
    let cases: [(Value, &str); 4] = [
        (json!({"password": ADMIN_PASSWORD}), "email is required"),
        (
            json!({"email": app.org.admin_email}),
            "password is required",
        ),
        (
            json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD, "extra": 1}),
            "property extra should not exist",
        ),
        (
            json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD, "orgId": "x"}),
            "orgId",
        ),
    ];
    for (body, message) in cases {
        assert_error(&app.post_public("/auth/login", &body).await, 400, message);
    }
}

fn wrong(app: &TestApp) -> Value {
    json!({"email": app.org.admin_email, "password": "wrong password"})
}

async fn ten_failures_lock_the_account(app: &TestApp) {
    for _ in 0..9 {
        assert_eq!(
            app.post_public("/auth/login", &wrong(app)).await.status,
            401
        );
    }
    // Nine failures do not lock; a success resets the count.
    app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    for _ in 0..10 {
        assert_eq!(
            app.post_public("/auth/login", &wrong(app)).await.status,
            401
        );
    }
    let right = json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD});
    let locked = app.post_public("/auth/login", &right).await;
    assert_error(&locked, 429, "Too many failed logins");
    let retry: u64 = locked.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    // The first lock of a streak lasts 15 minutes (later ones double, up to 4 hours).
    assert!((890..=900).contains(&retry), "{retry}");
    // Other accounts are not affected.
    app.admin_token(&app.other).await;
}

async fn parallel_failures_all_count(app: &TestApp) {
    let body = wrong(app);
    let attempts = (0..10).map(|_| app.post_public("/auth/login", &body));
    for reply in futures_util::future::join_all(attempts).await {
        assert_eq!(reply.status, 401, "{}", reply.text);
    }
    let right = json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD});
    assert_eq!(app.post_public("/auth/login", &right).await.status, 429);
}

async fn login_without_a_default_org_needs_org_id(app: &TestApp) {
    // Raw SQL: no route or port unsets the default organization (bootstrap always sets one).
    app.db()
        .execute("UPDATE organizations SET is_default = false")
        .await;
    let right = json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD});
    assert_error(
        &app.post_public("/auth/login", &right).await,
        400,
        "orgId is required",
    );
    let named =
        json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD, "orgId": app.org.id});
    assert_eq!(app.post_public("/auth/login", &named).await.status, 200);
}

async fn login_is_recorded_in_the_audit_log(app: &TestApp) {
    app.post_public("/auth/login", &wrong(app)).await;
    let body = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let user_id = str_of(&body["user"], "id");
    let events = app.events_of(&app.org.hr, &user_id).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(
        types.starts_with(&["user.login", "user.login_failed"]),
        "{types:?}"
    );
    assert_eq!(
        events[0]["payload"],
        json!({"method": "password", "twoFactor": false})
    );
    assert_eq!(
        events[1]["payload"],
        json!({"reason": "invalid_credentials"})
    );
    assert_eq!(events[0]["entityType"], "user");
}
