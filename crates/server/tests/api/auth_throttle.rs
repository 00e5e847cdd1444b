//! The login throttle (decision D-14, hardened by issue 61): one streak per account and
//! client address, counting every password and code check — `/auth/login` and the
//! signed-in routes that ask for one (`/auth/password`, `/auth/totp/*`) — each of which
//! answers one message for any wrong credential and, once the streak locks, 429 without a
//! check; an unknown e-mail is throttled exactly like a known one; a stranger's streak
//! from one address does not lock the owner out from another.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration as StdDuration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::auth_totp::{Secret, code};
use crate::dashboard_support::Browser;
use crate::helpers::{ADMIN_PASSWORD, Reply, TestApp, assert_error, assert_error_exact, send};

api_tests!(
    a_password_change_counts_toward_the_login_throttle,
    totp_setup_counts_toward_the_login_throttle,
    totp_verify_counts_toward_the_login_throttle,
    totp_disable_counts_toward_the_login_throttle,
    logins_and_token_routes_share_one_streak,
    unknown_and_known_emails_answer_alike_under_a_failure_streak,
    a_strangers_streak_from_one_address_does_not_lock_the_owner_out_from_another,
);

/// The one answer of the token routes to a wrong password or code.
const WRONG: &str = "Invalid password or code";

/// A signed-in user of the first organization, made for one test.
struct User {
    id: Uuid,
    email: String,
    token: String,
}

async fn new_user(app: &TestApp) -> User {
    let (email, token) = app.user_token(&app.org, "operator").await;
    let me = send(app.bearer(&token, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.status, 200, "{}", me.text);
    User {
        id: Uuid::parse_str(me.body["id"].as_str().unwrap()).unwrap(),
        email,
        token,
    }
}

async fn post(app: &TestApp, user: &User, path: &str, body: &Value) -> Reply {
    send(app.bearer(&user.token, Method::POST, path, Some(body))).await
}

/// A client whose connections come from `ip` (a loopback address other than 127.0.0.1
/// stands for another machine).
fn client_from(ip: Ipv4Addr) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::V4(ip))
        .timeout(StdDuration::from_secs(30))
        .build()
        .unwrap()
}

async fn login_from(app: &TestApp, client: &reqwest::Client, email: &str, password: &str) -> Reply {
    let body = json!({"email": email, "password": password});
    send(client.post(app.url("/auth/login")).json(&body)).await
}

/// Checks a refusal of a locked streak: 429, the login throttle's message, and a
/// `Retry-After` of about 15 minutes (the first lock of a streak).
#[track_caller]
fn assert_locked(reply: &Reply) {
    assert_error(reply, 429, "Too many failed logins");
    let retry: u64 = reply.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((890..=900).contains(&retry), "Retry-After: {retry}");
}

/// After ten wrong attempts (made by `wrong`), the right credential (sent by `right`)
/// is refused without a check, and so is the user's login with the right password from
/// the same address: the streak is the login throttle's.
async fn ten_wrong_then_locked<W, R, FW, FR>(app: &TestApp, user: &User, wrong: W, right: R)
where
    W: Fn(usize) -> FW,
    FW: Future<Output = Reply>,
    R: Fn() -> FR,
    FR: Future<Output = Reply>,
{
    for n in 0..10 {
        assert_error_exact(&wrong(n).await, 401, WRONG);
    }
    assert_locked(&right().await);
    assert_locked(&login_from(app, &app.client, &user.email, ADMIN_PASSWORD).await);
}

async fn a_password_change_counts_toward_the_login_throttle(app: &TestApp) {
    let user = &new_user(app).await;
    let change = |current: &'static str| {
        let body = json!({"currentPassword": current, "newPassword": "a new password"});
        async move { post(app, user, "/auth/password", &body).await }
    };
    ten_wrong_then_locked(
        app,
        user,
        |_| change("wrong password"),
        || change(ADMIN_PASSWORD),
    )
    .await;
    // The password did not change.
    let me = send(app.bearer(&user.token, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.status, 200);
}

async fn totp_setup_counts_toward_the_login_throttle(app: &TestApp) {
    let user = &new_user(app).await;
    let setup = |password: &'static str| {
        let body = json!({"password": password});
        async move { post(app, user, "/auth/totp/setup", &body).await }
    };
    ten_wrong_then_locked(
        app,
        user,
        |_| setup("wrong password"),
        || setup(ADMIN_PASSWORD),
    )
    .await;
}

async fn totp_verify_counts_toward_the_login_throttle(app: &TestApp) {
    let user = &new_user(app).await;
    let started = post(
        app,
        user,
        "/auth/totp/setup",
        &json!({"password": ADMIN_PASSWORD}),
    )
    .await;
    assert_eq!(started.status, 200, "{}", started.text);
    let good = code(app, user.id, Secret::Pending, OffsetDateTime::now_utc()).await;
    // Codes that are not the good one (nor of a neighbouring step, with luck).
    let wrong = |n: usize| {
        let body =
            json!({"code": format!("{:06}", (good.parse::<usize>().unwrap() + 1 + n) % 1_000_000)});
        async move { post(app, user, "/auth/totp/verify", &body).await }
    };
    let right = || {
        let body = json!({"code": good.clone()});
        async move { post(app, user, "/auth/totp/verify", &body).await }
    };
    ten_wrong_then_locked(app, user, wrong, right).await;
    let me = send(app.bearer(&user.token, Method::GET, "/auth/me", None)).await;
    assert_eq!(
        me.body["totpEnabled"], false,
        "the good code was not checked"
    );
}

async fn totp_disable_counts_toward_the_login_throttle(app: &TestApp) {
    let user = &new_user(app).await;
    let setup = post(
        app,
        user,
        "/auth/totp/setup",
        &json!({"password": ADMIN_PASSWORD}),
    )
    .await;
    assert_eq!(setup.status, 200, "{}", setup.text);
    let recovery: Vec<String> = setup.body["recoveryCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    let first = code(app, user.id, Secret::Pending, OffsetDateTime::now_utc()).await;
    let on = post(app, user, "/auth/totp/verify", &json!({"code": first})).await;
    assert_eq!(on.status, 204, "{}", on.text);
    // A wrong password with a good (recovery) code, and the right password with a wrong
    // code: the same answer.
    let wrong = |n: usize| {
        let body = if n.is_multiple_of(2) {
            json!({"password": "wrong password", "code": recovery[0]})
        } else {
            json!({"password": ADMIN_PASSWORD, "code": "WXYZ-0000"})
        };
        async move { post(app, user, "/auth/totp/disable", &body).await }
    };
    let right = || {
        let body = json!({"password": ADMIN_PASSWORD, "code": recovery[1]});
        async move { post(app, user, "/auth/totp/disable", &body).await }
    };
    ten_wrong_then_locked(app, user, wrong, right).await;
    let me = send(app.bearer(&user.token, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.body["totpEnabled"], true, "nothing was turned off");
}

async fn logins_and_token_routes_share_one_streak(app: &TestApp) {
    let user = new_user(app).await;
    for _ in 0..5 {
        let reply = login_from(app, &app.client, &user.email, "wrong password").await;
        assert_error_exact(&reply, 401, "Invalid email or password");
    }
    let body = json!({"currentPassword": "wrong password", "newPassword": "a new password"});
    for _ in 0..5 {
        assert_error_exact(&post(app, &user, "/auth/password", &body).await, 401, WRONG);
    }
    // The tenth failure of the streak was a password change: the login is refused.
    assert_locked(&login_from(app, &app.client, &user.email, ADMIN_PASSWORD).await);
}

/// What a client learns from one answer: the status, the message (its figures aside:
/// the seconds to wait may tick between two answers), and whether it was told to wait
/// about 15 minutes.
fn seen(reply: &Reply) -> (StatusCode, String, bool) {
    let waits = reply
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .is_some_and(|secs| (890..=900).contains(&secs));
    let message: String = reply.body["message"]
        .as_str()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .collect();
    (reply.status, message, waits)
}

async fn unknown_and_known_emails_answer_alike_under_a_failure_streak(app: &TestApp) {
    let unknown = format!("nobody-{}@example.com", Uuid::now_v7().simple());
    let mut answers = Vec::new();
    for email in [app.org.admin_email.as_str(), unknown.as_str()] {
        let mut streak = Vec::new();
        for _ in 0..12 {
            let reply = login_from(app, &app.client, email, "wrong password").await;
            streak.push(seen(&reply));
        }
        answers.push(streak);
    }
    let wrong = (
        StatusCode::UNAUTHORIZED,
        "Invalid email or password".to_owned(),
        false,
    );
    assert_eq!(answers[0][..10], vec![wrong; 10][..], "{:?}", answers[0]);
    assert_eq!(
        answers[0][10].0,
        StatusCode::TOO_MANY_REQUESTS,
        "{:?}",
        answers[0]
    );
    assert!(answers[0][10].2, "{:?}", answers[0]);
    assert_eq!(answers[0], answers[1], "known, then unknown");
}

async fn a_strangers_streak_from_one_address_does_not_lock_the_owner_out_from_another(
    app: &TestApp,
) {
    let stranger = client_from(Ipv4Addr::new(127, 0, 0, 2));
    let owner = &app.org.admin_email;
    for _ in 0..10 {
        let reply = login_from(app, &stranger, owner, "wrong password").await;
        assert_error_exact(&reply, 401, "Invalid email or password");
    }
    assert_locked(&login_from(app, &stranger, owner, "wrong password").await);
    // The owner, from their own address, signs in through the API and the dashboard...
    let signed_in = login_from(app, &app.client, owner, ADMIN_PASSWORD).await;
    assert_eq!(signed_in.status, 200, "{}", signed_in.text);
    let page = Browser::new(app)
        .sign_in(owner, ADMIN_PASSWORD, &app.org)
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.text);
    // ...while the stranger's address stays locked, even with the right password.
    assert_locked(&login_from(app, &stranger, owner, ADMIN_PASSWORD).await);
}
