//! Two-factor authentication (decision D-15): setup with the password, a scannable QR
//! code and ten recovery codes, verification, login with codes that work once, and
//! disabling with password and code.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use muster_auth::totp::TotpService;
use muster_domain::model::UserId;
use reqwest::Method;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::helpers::{
    ADMIN_PASSWORD, TestApp, assert_error, assert_error_exact, keys_of, send, str_of,
};
use crate::stored::stored_user;

api_tests!(
    setup_verify_login_and_disable,
    setup_and_verify_refuse_bad_input
);

struct Admin {
    id: Uuid,
    token: String,
}

async fn admin(app: &TestApp) -> Admin {
    let login = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    Admin {
        id: Uuid::parse_str(&str_of(&login["user"], "id")).unwrap(),
        token: str_of(&login, "accessToken"),
    }
}

async fn post(app: &TestApp, token: &str, path: &str, body: &Value) -> crate::helpers::Reply {
    send(app.bearer(token, Method::POST, path, Some(body))).await
}

/// Which of a user's stored TOTP secrets.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Secret {
    /// The one of a setup not yet verified.
    Pending,
    /// The one in use.
    InUse,
}

/// A code of the user's sealed `secret` as stored (no route shows it), for `at`.
pub(crate) async fn code(app: &TestApp, user: Uuid, secret: Secret, at: OffsetDateTime) -> String {
    let totp = stored_user(app, user).await.totp;
    let sealed = match secret {
        Secret::Pending => totp.pending_secret,
        Secret::InUse => totp.secret,
    }
    .unwrap_or_else(|| panic!("user {user} has no {secret:?} secret"));
    TotpService::from_server_key(app.server_key())
        .current_code(UserId::from_uuid(user), &sealed, at)
        .unwrap()
}

fn login_body(app: &TestApp, code: Option<&str>) -> Value {
    let mut body = json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD});
    if let Some(code) = code {
        body["totpCode"] = json!(code);
    }
    body
}

async fn setup_verify_login_and_disable(app: &TestApp) {
    let admin = admin(app).await;
    let (recovery, first, now) = enable(app, &admin).await;
    log_in_with_codes(app, &admin, &recovery, &first, now).await;
    disable(app, &admin, &recovery).await;
}

/// Sets the second factor up and verifies it: the recovery codes, the code accepted at
/// verification, and when.
async fn enable(app: &TestApp, admin: &Admin) -> (Vec<String>, String, OffsetDateTime) {
    let setup = post(
        app,
        &admin.token,
        "/auth/totp/setup",
        &json!({"password": ADMIN_PASSWORD}),
    )
    .await;
    assert_eq!(setup.status, 200, "{}", setup.text);
    assert_eq!(keys_of(&setup.body), ["message", "qrCode", "recoveryCodes"]);
    let qr = str_of(&setup.body, "qrCode");
    let png = STANDARD
        .decode(
            qr.strip_prefix("data:image/png;base64,")
                .expect("a PNG data URL"),
        )
        .unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let recovery: Vec<String> = setup.body["recoveryCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(recovery.len(), 10);
    assert!(
        recovery.iter().all(|c| c.len() == 9 && &c[4..5] == "-"),
        "{recovery:?}"
    );

    // Not on until verified.
    assert!(
        app.post_public("/auth/login", &login_body(app, None))
            .await
            .body["accessToken"]
            .is_string()
    );
    let now = OffsetDateTime::now_utc();
    let first = code(app, admin.id, Secret::Pending, now).await;
    let verified = post(
        app,
        &admin.token,
        "/auth/totp/verify",
        &json!({"code": first}),
    )
    .await;
    assert_eq!(verified.status, 204, "{}", verified.text);
    let me = send(app.bearer(&admin.token, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.body["totpEnabled"], true);
    (recovery, first, now)
}

async fn log_in_with_codes(
    app: &TestApp,
    admin: &Admin,
    recovery: &[String],
    first: &str,
    now: OffsetDateTime,
) {
    // Without a code: asked for one, and no tokens.
    let asked = app.post_public("/auth/login", &login_body(app, None)).await;
    assert_eq!(asked.status, 200);
    assert_eq!(keys_of(&asked.body), ["message", "requiresTwoFactor"]);
    assert_eq!(asked.body["requiresTwoFactor"], true);
    // The code already accepted at verification is not accepted again...
    let reused = app
        .post_public("/auth/login", &login_body(app, Some(first)))
        .await;
    assert_error_exact(&reused, 401, "Invalid two-factor code");
    let wrong = app
        .post_public("/auth/login", &login_body(app, Some("000000")))
        .await;
    assert_error_exact(&wrong, 401, "Invalid two-factor code");
    // ...the next step's code is, once.
    let next = code(app, admin.id, Secret::InUse, now + Duration::seconds(30)).await;
    let signed_in = app
        .post_public("/auth/login", &login_body(app, Some(&next)))
        .await;
    assert_eq!(signed_in.status, 200, "{}", signed_in.text);
    assert!(signed_in.body["accessToken"].is_string());
    let again = app
        .post_public("/auth/login", &login_body(app, Some(&next)))
        .await;
    assert_eq!(again.status, 401);

    // A recovery code, typed loosely, works once.
    let loose = recovery[0].to_lowercase().replace('-', "");
    let by_recovery = app
        .post_public("/auth/login", &login_body(app, Some(&loose)))
        .await;
    assert_eq!(by_recovery.status, 200, "{}", by_recovery.text);
    let reused = app
        .post_public("/auth/login", &login_body(app, Some(&recovery[0])))
        .await;
    assert_eq!(reused.status, 401);
    let events = app.events_of(&app.org.hr, &admin.id.to_string()).await;
    assert_eq!(
        events[1]["payload"],
        json!({"method": "password", "twoFactor": true})
    );
}

async fn disable(app: &TestApp, admin: &Admin, recovery: &[String]) {
    // Setup again while on: refused.
    let twice = post(
        app,
        &admin.token,
        "/auth/totp/setup",
        &json!({"password": ADMIN_PASSWORD}),
    )
    .await;
    assert_error(&twice, 409, "already enabled");

    // Disable: password and a code both needed.
    let disable = |password: &str, code: &str| {
        let body = json!({"password": password, "code": code});
        let token = admin.token.clone();
        async move { post(app, &token, "/auth/totp/disable", &body).await }
    };
    assert_eq!(disable("wrong password", &recovery[1]).await.status, 401);
    // One answer, whichever of the two was wrong.
    assert_error_exact(
        &disable("wrong password", &recovery[1]).await,
        401,
        "Invalid password or code",
    );
    assert_error_exact(
        &disable(ADMIN_PASSWORD, "123456").await,
        401,
        "Invalid password or code",
    );
    let off = disable(ADMIN_PASSWORD, &recovery[1]).await;
    assert_eq!(off.status, 204, "{}", off.text);
    assert!(
        app.post_public("/auth/login", &login_body(app, None))
            .await
            .body["accessToken"]
            .is_string()
    );
    assert_error(
        &disable(ADMIN_PASSWORD, &recovery[2]).await,
        409,
        "not enabled",
    );
    let types: Vec<String> = app
        .events_of(&app.org.hr, &admin.id.to_string())
        .await
        .iter()
        .map(|e| str_of(e, "type"))
        .collect();
    assert!(types.contains(&"user.totp_enabled".to_owned()));
    assert!(types.contains(&"user.totp_disabled".to_owned()));
}

async fn setup_and_verify_refuse_bad_input(app: &TestApp) {
    let admin = admin(app).await;
    let verify = post(
        app,
        &admin.token,
        "/auth/totp/verify",
        &json!({"code": "123456"}),
    )
    .await;
    assert_error(&verify, 409, "setup has not been started");
    let wrong = post(
        app,
        &admin.token,
        "/auth/totp/setup",
        &json!({"password": "wrong password"}),
    )
    .await;
    assert_error_exact(&wrong, 401, "Invalid password or code");
    assert_error(
        &post(app, &admin.token, "/auth/totp/setup", &json!({})).await,
        400,
        "password is required",
    );
    post(
        app,
        &admin.token,
        "/auth/totp/setup",
        &json!({"password": ADMIN_PASSWORD}),
    )
    .await;
    for bad in ["000000", "12345", "abcdef", ""] {
        let reply = post(
            app,
            &admin.token,
            "/auth/totp/verify",
            &json!({"code": bad}),
        )
        .await;
        assert_error_exact(&reply, 401, "Invalid password or code");
    }
    let me = send(app.bearer(&admin.token, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.body["totpEnabled"], false);
    assert_eq!(
        send(app.anonymous(Method::POST, "/auth/totp/setup"))
            .await
            .status,
        401
    );
}
