//! Access and refresh tokens: rotation with reuse detection, logout, forged and expired
//! access tokens, and one credential scheme per request.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use muster_auth::keys::ServerKey;
use muster_auth::tokens::TokenService;
use muster_domain::model::{AccessGrant, OrgId, UserId, UserRole};
use muster_domain::ports::TokenMinter as _;
use reqwest::Method;
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::helpers::{
    ADMIN_PASSWORD, TestApp, assert_error, assert_error_exact, keys_of, send, str_of,
};

api_tests!(
    refresh_rotates_and_reuse_ends_the_login,
    refresh_refuses_unknown_and_expired_tokens,
    logout_ends_one_login_and_logout_all_every_login,
    forged_and_expired_access_tokens_are_401,
    one_credential_scheme_per_request,
);

async fn refresh(app: &TestApp, token: &str) -> crate::helpers::Reply {
    app.post_public("/auth/refresh", &json!({ "refreshToken": token }))
        .await
}

async fn refresh_rotates_and_reuse_ends_the_login(app: &TestApp) {
    let first = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let other_login = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let old = str_of(&first, "refreshToken");
    let rotated = refresh(app, &old).await;
    assert_eq!(rotated.status, 200, "{}", rotated.text);
    assert_eq!(
        keys_of(&rotated.body),
        ["accessToken", "expiresIn", "refreshToken"]
    );
    let new = str_of(&rotated.body, "refreshToken");
    assert_ne!(new, old);
    let access = str_of(&rotated.body, "accessToken");
    let me = send(app.bearer(&access, Method::GET, "/auth/me", None)).await;
    assert_eq!(me.status, 200, "{}", me.text);

    // The rotated token shown again: refused, and the whole login ends with it...
    assert_error_exact(
        &refresh(app, &old).await,
        401,
        "Invalid or expired refresh token",
    );
    assert_eq!(refresh(app, &new).await.status, 401);
    // ...but not the user's other login.
    let other = str_of(&other_login, "refreshToken");
    assert_eq!(refresh(app, &other).await.status, 200);
}

async fn refresh_refuses_unknown_and_expired_tokens(app: &TestApp) {
    for bad in ["", "mrt_nope", "garbage"] {
        assert_eq!(refresh(app, bad).await.status, 401, "{bad:?}");
    }
    assert_error(
        &app.post_public("/auth/refresh", &json!({})).await,
        400,
        "refreshToken is required",
    );
    let login = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    // Raw SQL: backdates the token's expiry; no route moves time, no port changes a token.
    app.db()
        .execute("UPDATE refresh_tokens SET expires_at = '2000-01-01T00:00:00.000Z'")
        .await;
    assert_eq!(
        refresh(app, &str_of(&login, "refreshToken")).await.status,
        401
    );
}

async fn logout_ends_one_login_and_logout_all_every_login(app: &TestApp) {
    let a = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let b = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let c = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let access = str_of(&a, "accessToken");
    let body = json!({ "refreshToken": str_of(&a, "refreshToken") });
    let out = send(app.bearer(&access, Method::POST, "/auth/logout", Some(&body))).await;
    assert_eq!(out.status, 204, "{}", out.text);
    assert!(out.text.is_empty());
    assert_eq!(refresh(app, &str_of(&a, "refreshToken")).await.status, 401);
    assert_eq!(refresh(app, &str_of(&b, "refreshToken")).await.status, 200);
    // Logout needs the access token.
    let anonymous = app.post_public("/auth/logout", &body).await;
    assert_eq!(anonymous.status, 401);

    let all = send(app.bearer(&access, Method::POST, "/auth/logout-all", None)).await;
    assert_eq!(all.status, 204, "{}", all.text);
    assert_eq!(refresh(app, &str_of(&c, "refreshToken")).await.status, 401);

    // Each logout is in the audit log (the refused one is not), newest first.
    let user = str_of(&a["user"], "id");
    let logouts = app.events_of_type(&app.org.hr, &user, "user.logout").await;
    assert_eq!(logouts.len(), 2, "{logouts:?}");
    assert_eq!(logouts[0]["payload"], json!({"allSessions": true}));
    assert_eq!(logouts[1]["payload"], json!({"allSessions": false}));
    assert_eq!(logouts[0]["actorId"], user.as_str());
}

fn grant(app: &TestApp, user: Uuid) -> AccessGrant {
    AccessGrant {
        user_id: UserId::from_uuid(user),
        org_id: OrgId::from_uuid(app.org.id),
        role: UserRole::Admin,
    }
}

async fn forged_and_expired_access_tokens_are_401(app: &TestApp) {
    let login = app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    let good = str_of(&login, "accessToken");
    let user = Uuid::parse_str(&str_of(&login["user"], "id")).unwrap();
    let (header, rest) = good.split_once('.').unwrap();
    let (claims, signature) = rest.split_once('.').unwrap();

    let other_key = TokenService::new(&ServerKey::generate().unwrap());
    let foreign = other_key
        .access_token(&grant(app, user), OffsetDateTime::now_utc())
        .unwrap();
    let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let mut flipped = signature.to_owned();
    let last = if flipped.ends_with('A') { "B" } else { "A" };
    flipped.replace_range(flipped.len() - 1.., last);
    let cases = [
        ("alg none", format!("{none_header}.{claims}.")),
        ("tampered signature", format!("{header}.{claims}.{flipped}")),
        (
            "another deployment's key",
            foreign.token.expose().to_owned(),
        ),
        ("garbage", "not-a-jwt".to_owned()),
    ];
    for (what, token) in cases {
        let reply = send(app.bearer(&token, Method::GET, "/tasks", None)).await;
        assert_error_exact(&reply, 401, "invalid access token");
        assert!(!reply.text.contains(&token), "{what}: the token is echoed");
    }
    // This deployment's key, issued an hour ago: expired.
    let service = TokenService::new(app.server_key());
    let hour_ago = OffsetDateTime::now_utc() - time::Duration::hours(1);
    let expired = service.access_token(&grant(app, user), hour_ago).unwrap();
    let reply = send(app.bearer(expired.token.expose(), Method::GET, "/tasks", None)).await;
    assert_error_exact(&reply, 401, "access token expired");
}

async fn one_credential_scheme_per_request(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let both = app
        .signed(&app.org.hr, Method::GET, "/tasks", None)
        .bearer_auth(&token);
    assert_error(&send(both).await, 401, "one credential scheme");
    for header in ["Basic abc", "Bearer", "Bearer ", "Token abc", "Bearer a b"] {
        let reply = send(
            app.anonymous(Method::GET, "/tasks")
                .header("Authorization", header),
        )
        .await;
        assert_error_exact(&reply, 401, "Authorization must be `Bearer <token>`");
    }
    // /auth and /api-keys take a user access token only.
    let signed = send(app.signed(&app.org.hr, Method::GET, "/auth/me", None)).await;
    assert_error_exact(&signed, 401, "this route needs a user access token");
    let key = app.api_key(&token, &["admin"]).await;
    for path in ["/auth/me", "/api-keys"] {
        let reply = send(app.bearer(&key, Method::GET, path, None)).await;
        assert_error_exact(&reply, 401, "this route needs a user access token");
    }
    let nothing = send(app.anonymous(Method::GET, "/auth/me")).await;
    assert_eq!(nothing.status, 401);
}
