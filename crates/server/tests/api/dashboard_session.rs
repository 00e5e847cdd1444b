//! The dashboard's session: sign-in sets the API's token pair as `HttpOnly`, `SameSite=Strict`
//! cookies (Secure over https), pages need it, an expired access token is renewed with
//! the refresh token (once, even by parallel requests), and sign-out ends the login.

use reqwest::StatusCode;

use crate::dashboard_support::Browser;
use crate::helpers::{ADMIN_PASSWORD, TestApp};

api_tests!(
    root_and_pages_lead_to_sign_in,
    sign_in_sets_strict_http_only_cookies,
    a_wrong_password_shows_the_api_refusal_and_sets_no_session,
    a_forged_session_cookie_is_not_a_session,
    an_expired_access_token_is_renewed_once_by_parallel_requests,
    sign_out_ends_the_login,
);

async fn root_and_pages_lead_to_sign_in(app: &TestApp) {
    let browser = Browser::new(app);
    let root = browser.get("/").await;
    assert_eq!(root.status, StatusCode::SEE_OTHER);
    assert_eq!(root.location(), "/ui/board");
    for page in [
        "/ui/board",
        "/ui/agents",
        "/ui/audit",
        "/ui/webhooks",
        "/ui/account",
    ] {
        let answer = browser.get(page).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{page}");
        assert_eq!(answer.location(), "/ui/login", "{page}");
    }
    // A script (htmx, the board's) gets a 401 instead of a page.
    let live = browser.get("/ui/live").await;
    assert_eq!(live.status, StatusCode::UNAUTHORIZED);
    let login = browser.get("/ui/login").await;
    assert_eq!(login.status, StatusCode::OK);
    assert!(login.text.contains("name=\"password\""), "{}", login.text);
}

async fn sign_in_sets_strict_http_only_cookies(app: &TestApp) {
    let browser = Browser::new(app);
    browser.get("/ui/login").await;
    let before = browser.cookie("muster_csrf").unwrap();
    let done = browser
        .sign_in(&app.org.admin_email, ADMIN_PASSWORD, &app.org)
        .await;
    // A CSRF token known before the sign-in is not the session's.
    let after = browser.cookie("muster_csrf").unwrap();
    assert_ne!(before, after, "the CSRF token is renewed at sign-in");
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
    assert_eq!(done.location(), "/ui/board");
    for name in ["muster_session", "muster_refresh"] {
        let line = done
            .set_cookie(name)
            .unwrap_or_else(|| panic!("no {name} cookie"));
        assert!(line.contains("HttpOnly"), "{line}");
        assert!(line.contains("SameSite=Strict"), "{line}");
        assert!(line.contains("Path=/ui"), "{line}");
        assert!(!line.contains("Secure"), "plain http: {line}");
    }
    let board = browser.get("/ui/board").await;
    assert_eq!(board.status, StatusCode::OK, "{}", board.text);
    assert!(board.text.contains("<h1>Board</h1>"), "{}", board.text);
    // The session is the API's own access token.
    let token = browser.cookie("muster_session").unwrap();
    let me = app
        .client
        .get(app.url("/auth/me"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), StatusCode::OK);
}

/// Behind a TLS-terminating proxy the operator trusts (here, on loopback, where the
/// test client connects from): its `X-Forwarded-Proto` is believed. A stranger's is not
/// (see `forwarded_headers`).
pub(crate) mod behind_https {
    use super::cookies_are_secure_behind_https;

    pub(crate) fn trusted_proxy() -> crate::helpers::AppSettings {
        crate::helpers::EdgeSettings {
            trusted_proxies: vec!["127.0.0.1".to_owned()],
            ..crate::helpers::EdgeSettings::default()
        }
        .into()
    }

    api_tests!(with crate::dashboard_session::behind_https::trusted_proxy(); cookies_are_secure_behind_https);
}

async fn cookies_are_secure_behind_https(app: &TestApp) {
    let browser = Browser::new(app);
    let https = [("x-forwarded-proto", "https")];
    let form = browser
        .send(reqwest::Method::GET, "/ui/login", None, &https)
        .await;
    let csrf = form.set_cookie("muster_csrf").unwrap();
    assert!(
        csrf.contains("Secure") && csrf.contains("HttpOnly"),
        "{csrf}"
    );
    let token = browser.cookie("muster_csrf").unwrap();
    let org = app.org.id.to_string();
    let fields = [
        ("csrf", token.as_str()),
        ("email", app.org.admin_email.as_str()),
        ("password", ADMIN_PASSWORD),
        ("org", org.as_str()),
    ];
    let done = browser
        .send(reqwest::Method::POST, "/ui/login", Some(&fields), &https)
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
    let line = done.set_cookie("muster_session").unwrap();
    assert!(line.contains("Secure"), "{line}");
}

async fn a_wrong_password_shows_the_api_refusal_and_sets_no_session(app: &TestApp) {
    let browser = Browser::new(app);
    let refused = browser
        .sign_in(&app.org.admin_email, "not the password", &app.org)
        .await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(
        refused.text.contains("Invalid email or password"),
        "{}",
        refused.text
    );
    assert!(refused.set_cookie("muster_session").is_none());
    assert_eq!(browser.get("/ui/board").await.status, StatusCode::SEE_OTHER);
    // A malformed organization id is a clear 400, not a sign-in.
    let bad_org = browser
        .post(
            "/ui/login",
            &[
                ("email", &app.org.admin_email),
                ("password", ADMIN_PASSWORD),
                ("org", "acme"),
            ],
        )
        .await;
    assert_eq!(bad_org.status, StatusCode::BAD_REQUEST);
    assert!(
        bad_org.text.contains("organization id must be a UUID"),
        "{}",
        bad_org.text
    );
}

async fn a_forged_session_cookie_is_not_a_session(app: &TestApp) {
    let browser = Browser::new(app);
    browser.set("muster_session", "eyJhbGciOiJIUzI1NiJ9.e30.forged");
    browser.set("muster_refresh", "mrt_forged");
    let answer = browser.get("/ui/board").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    assert_eq!(answer.location(), "/ui/login");
}

async fn an_expired_access_token_is_renewed_once_by_parallel_requests(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    let refresh = browser.cookie("muster_refresh").unwrap();
    // The access token is no longer good (as when it has run out): every request falls
    // back on the refresh token, all at once.
    browser.set("muster_session", "expired");
    let pages = futures_util::future::join_all(
        (0..6).map(|_| browser.send(reqwest::Method::GET, "/ui/board", None, &[])),
    )
    .await;
    for page in &pages {
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.set_cookie("muster_session").is_some());
    }
    // One renewal for all of them: the login was not taken for stolen and ended.
    let renewed = browser.cookie("muster_refresh").unwrap();
    assert_ne!(renewed, refresh);
    let answer = app
        .post_public(
            "/auth/refresh",
            &serde_json::json!({ "refreshToken": renewed }),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
}

async fn sign_out_ends_the_login(app: &TestApp) {
    let browser = Browser::admin(app, &app.org).await;
    // A renewal just before: the retired token must not get the new pair after sign-out.
    let retired = browser.cookie("muster_refresh").unwrap();
    browser.set("muster_session", "expired");
    assert_eq!(browser.get("/ui/board").await.status, StatusCode::OK);
    let refresh = browser.cookie("muster_refresh").unwrap();
    let out = browser.post("/ui/logout", &[]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER, "{}", out.text);
    assert_eq!(out.location(), "/ui/login");
    assert!(
        out.set_cookie("muster_session")
            .is_some_and(|l| l.contains("Max-Age=0"))
    );
    assert!(browser.cookie("muster_session").is_none());
    assert_eq!(browser.get("/ui/board").await.status, StatusCode::SEE_OTHER);
    let answer = app
        .post_public(
            "/auth/refresh",
            &serde_json::json!({ "refreshToken": refresh }),
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.text);
    let thief = Browser::new(app);
    thief.set("muster_session", "expired");
    thief.set("muster_refresh", &retired);
    let stolen = thief.get("/ui/board").await;
    assert_eq!(stolen.status, StatusCode::SEE_OTHER, "{}", stolen.text);
}

/// Auth mode `none`: the dashboard is the owner's, with no sign-in and no sign-out.
mod none_mode {
    use reqwest::StatusCode;

    use crate::dashboard_support::Browser;
    use crate::helpers::TestApp;

    api_tests!(with crate::auth_modes::none_settings(); the_owner_needs_no_sign_in);

    async fn the_owner_needs_no_sign_in(app: &TestApp) {
        let browser = Browser::new(app);
        let board = browser.get("/ui/board").await;
        assert_eq!(board.status, StatusCode::OK, "{}", board.text);
        assert!(board.text.contains("New task"), "the owner is an admin");
        assert!(!board.text.contains("Sign out"));
        let login = browser.get("/ui/login").await;
        assert_eq!(login.status, StatusCode::SEE_OTHER);
        // Forms are still protected from other sites.
        let forged = browser
            .send(
                reqwest::Method::POST,
                "/ui/tasks",
                Some(&[("title", "x"), ("priority", "low")]),
                &[],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let done = browser
            .post(
                "/ui/tasks",
                &[("title", "Owner's task"), ("priority", "low")],
            )
            .await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
    }
}

/// Auth mode `local`: the deployment's password alone signs the owner in.
mod local_mode {
    use reqwest::StatusCode;

    use crate::auth_modes::LOCAL_PASSWORD;
    use crate::dashboard_support::Browser;
    use crate::helpers::TestApp;

    api_tests!(with crate::auth_modes::local_settings(); the_deployment_password_signs_in);

    async fn the_deployment_password_signs_in(app: &TestApp) {
        let browser = Browser::new(app);
        assert_eq!(browser.get("/ui/board").await.status, StatusCode::SEE_OTHER);
        let form = browser.get("/ui/login").await;
        assert!(!form.text.contains("name=\"email\""), "{}", form.text);
        let wrong = browser.post("/ui/login", &[("password", "guess")]).await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{}", wrong.text);
        let done = browser
            .post("/ui/login", &[("password", LOCAL_PASSWORD)])
            .await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
        let board = browser.get("/ui/board").await;
        assert_eq!(board.status, StatusCode::OK, "{}", board.text);
        assert!(board.text.contains("New task"));
    }
}
