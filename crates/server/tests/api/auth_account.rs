//! The signed-in user's own account (`/auth/me`, `/auth/profile`, `/auth/password`) and
//! user creation by admins (`/auth/register`).

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{
    ADMIN_PASSWORD, TestApp, assert_error, assert_error_exact, keys_of, send, str_of,
};

api_tests!(
    me_answers_the_whole_user,
    profile_changes_name_and_email,
    password_change_checks_the_current_one_and_ends_logins,
    admins_create_users_in_their_own_org,
    register_refuses_bad_input,
);

async fn me_answers_the_whole_user(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let me = send(app.bearer(&token, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(
        keys_of(&me.body),
        [
            "createdAt",
            "email",
            "emailVerified",
            "id",
            "lastLoginAt",
            "name",
            "orgId",
            "role",
            "totpEnabled"
        ]
    );
    assert_eq!(str_of(&me.body, "orgId"), app.org.id.to_string());
    assert_eq!(me.body["totpEnabled"], false);
    assert!(me.body["lastLoginAt"].is_string());
}

async fn profile_changes_name_and_email(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let (taken_email, _) = app.user_token(&app.org, "viewer").await;
    let post = |body: Value| send(app.bearer(&token, Method::POST, "/auth/profile", Some(&body)));
    let updated = post(json!({"name": "  Ada  ", "email": "Ada@Example.com"})).await;
    assert_eq!(updated.status, 200, "{}", updated.text);
    assert_eq!(keys_of(&updated.body), ["email", "id", "name", "role"]);
    assert_eq!(updated.body["name"], "Ada");
    assert_eq!(updated.body["email"], "ada@example.com");
    app.login("ada@example.com", ADMIN_PASSWORD).await;

    assert_error_exact(
        &post(json!({"email": taken_email})).await,
        400,
        "email is already in use in this organization",
    );
    assert_error(
        &post(json!({"name": ""})).await,
        400,
        "name must not be empty",
    );
    assert_error(&post(json!({"email": "nope"})).await, 400, "email");
    assert_error(
        &post(json!({"role": "admin"})).await,
        400,
        "property role should not exist",
    );
    // Nothing of the refused changes was stored.
    let me = send(app.bearer(&token, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.body["email"], "ada@example.com");
    assert_eq!(me.body["name"], "Ada");
}

async fn password_change_checks_the_current_one_and_ends_logins(app: &TestApp) {
    let login = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let token = str_of(&login, "accessToken");
    let change = |current: &str, new: &str| {
        let body = json!({"currentPassword": current, "newPassword": new});
        send(app.bearer(&token, Method::POST, "/auth/password", Some(&body)))
    };
    assert_error_exact(
        &change("wrong password", "a new password").await,
        401,
        "Invalid password or code",
    );
    assert_error(
        &change(ADMIN_PASSWORD, "short").await,
        400,
        "newPassword must be 8 to 128 characters",
    );
    let done = change(ADMIN_PASSWORD, "a new password").await;
    assert_eq!(done.status, 204, "{}", done.text);
    let refreshed = app
        .post_public(
            "/auth/refresh",
            &json!({"refreshToken": str_of(&login, "refreshToken")}),
        )
        .await;
    assert_eq!(refreshed.status, 401);
    let old = json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD});
    assert_eq!(app.post_public("/auth/login", &old).await.status, 401);
    app.login(&app.org.admin_email, "a new password").await;
    // One `user.password_changed`, saying nothing of either password; the two refused
    // attempts wrote none.
    let user = str_of(&login["user"], "id");
    let changed = app
        .events_of_type(&app.org.hr, &user, "user.password_changed")
        .await;
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(changed[0]["payload"], json!({}));
    assert_eq!(changed[0]["actorId"], user.as_str());
}

async fn admins_create_users_in_their_own_org(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let body = json!({"email": "Op@Example.com", "password": "op password", "name": "Op", "orgId": app.org.id});
    let created = send(app.bearer(&admin, Method::POST, "/auth/register", Some(&body))).await;
    assert_eq!(created.status, 200, "{}", created.text);
    assert_eq!(created.body["role"], "operator");
    assert_eq!(created.body["email"], "op@example.com");
    assert_eq!(str_of(&created.body, "orgId"), app.org.id.to_string());
    let again = send(app.bearer(&admin, Method::POST, "/auth/register", Some(&body))).await;
    assert_error(&again, 409, "email is already in use");
    // `user.created` on the new user, once: never its password.
    let events = app
        .events_of(&app.org.hr, &str_of(&created.body, "id"))
        .await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "user.created");
    assert_eq!(
        events[0]["payload"],
        json!({"email": "op@example.com", "role": "operator"})
    );

    // Operators and viewers are not admins: 401, as the contract says.
    let operator = str_of(
        &app.login("op@example.com", "op password").await,
        "accessToken",
    );
    let by_operator = json!({"email": "x@example.com", "password": "x password", "name": "X", "orgId": app.org.id});
    let refused = send(app.bearer(
        &operator,
        Method::POST,
        "/auth/register",
        Some(&by_operator),
    ))
    .await;
    assert_error_exact(&refused, 401, "Only admin users may create users");
    // Another organization: refused, nothing created there.
    let elsewhere = json!({"email": "y@example.com", "password": "y password", "name": "Y", "orgId": app.other.id});
    let refused = send(app.bearer(&admin, Method::POST, "/auth/register", Some(&elsewhere))).await;
    assert_error(&refused, 403, "your own organization");
    let login = json!({"email": "y@example.com", "password": "y password", "orgId": app.other.id});
    assert_eq!(app.post_public("/auth/login", &login).await.status, 401);
    // An agent, even HR, is not a user.
    let signed = app
        .post(&app.org.hr, "/auth/register", &by_operator.to_string())
        .await;
    assert_eq!(signed.status, 401);
}

async fn register_refuses_bad_input(app: &TestApp) {
    let admin = app.admin_token(&app.org).await;
    let org = app.org.id;
    let cases: [(Value, &str); 6] = [
        (
            json!({"email": "a@example.com", "password": "short", "name": "A", "orgId": org}),
            "password must be 8 to 128 characters",
        ),
        (
            json!({"email": "bad", "password": "long enough", "name": "A", "orgId": org}),
            "email must be a valid e-mail address",
        ),
        (
            json!({"email": "a@example.com", "password": "long enough", "name": " ", "orgId": org}),
            "name must not be empty",
        ),
        (
            json!({"email": "a@example.com", "password": "long enough", "name": "A", "orgId": org, "role": "owner"}),
            "role",
        ),
        (
            json!({"email": "a@example.com", "password": "long enough", "name": "A"}),
            "orgId is required",
        ),
        (
            json!({"email": "a@example.com", "password": "long enough", "name": "A", "orgId": "nope"}),
            "orgId",
        ),
    ];
    for (body, message) in cases {
        let reply = send(app.bearer(&admin, Method::POST, "/auth/register", Some(&body))).await;
        assert_error(&reply, 400, message);
    }
    let login = json!({"email": "a@example.com", "password": "long enough"});
    assert_eq!(app.post_public("/auth/login", &login).await.status, 401);
}
