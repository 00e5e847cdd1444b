//! Auth modes (decision D-20): what a request without credentials gets in `none`,
//! `local` and `full`, and that supplied credentials are verified in every mode.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{
    AuthModeSetting, AuthSettings, LocalPassword, TestApp, assert_error, assert_error_exact, send,
    str_of,
};

pub(crate) const LOCAL_PASSWORD: &str = "the deployment password";

pub fn none_settings() -> AuthSettings {
    AuthSettings {
        mode: AuthModeSetting::None,
        ..AuthSettings::default()
    }
}

pub fn local_settings() -> AuthSettings {
    AuthSettings {
        mode: AuthModeSetting::Local,
        local_password: Some(LocalPassword::Plain(LOCAL_PASSWORD.to_owned())),
        ..AuthSettings::default()
    }
}

/// Auth mode `local` with the deployment password given as its argon2 hash
/// (`MUSTER_LOCAL_PASSWORD_HASH`) rather than in the clear.
pub fn local_hash_settings() -> AuthSettings {
    let phc = muster_auth::password::hash_password(LOCAL_PASSWORD).unwrap();
    AuthSettings {
        mode: AuthModeSetting::Local,
        local_password: Some(LocalPassword::Hash(phc)),
        ..AuthSettings::default()
    }
}

/// Wrong credentials are refused whatever the mode.
async fn supplied_credentials_are_still_verified(app: &TestApp) {
    let mut forged = TestApp::headers_for(&app.org.hr, &Method::GET, "/tasks", b"");
    forged.signature = Some("00".repeat(32));
    let reply = send(app.with_headers(Method::GET, "/tasks", &forged, None)).await;
    assert_error_exact(&reply, 401, "invalid signature");
    let reply = send(app.bearer("not-a-token", Method::GET, "/tasks", None)).await;
    assert_error_exact(&reply, 401, "invalid access token");
    let reply = send(app.bearer("msk_unknown", Method::GET, "/tasks", None)).await;
    assert_error_exact(&reply, 401, "invalid API key");
    // And good ones work as themselves.
    assert_eq!(app.get(&app.org.hr, "/tasks").await.status, 200);
}

mod none {
    use super::*;

    api_tests!(with crate::auth_modes::none_settings();
        requests_without_credentials_act_as_the_owner,
        supplied_credentials_are_still_verified,
    );

    async fn requests_without_credentials_act_as_the_owner(app: &TestApp) {
        let created = app
            .post_public("/tasks", &json!({"title": "open mode"}))
            .await;
        assert_eq!(created.status, 200, "{}", created.text);
        assert_eq!(str_of(created.data(), "orgId"), app.org.id.to_string());
        let list = send(app.anonymous(Method::GET, "/tasks")).await;
        assert_eq!(list.status, 200);
        let me = send(app.anonymous(Method::GET, "/auth/me")).await;
        assert_eq!(me.body["email"], "owner@muster.local");
        assert_eq!(me.body["role"], "admin");
        // The task's creation event names the owner.
        let id = str_of(created.data(), "id");
        let events = app.events_of(&app.org.hr, &id).await;
        assert_eq!(events[0]["actorId"], me.body["id"]);
    }

    pub(super) async fn supplied_credentials_are_still_verified(app: &TestApp) {
        super::supplied_credentials_are_still_verified(app).await;
    }
}

mod local {
    use super::*;

    api_tests!(with crate::auth_modes::local_settings();
        the_deployment_password_signs_in_the_owner,
        supplied_credentials_are_still_verified,
    );

    pub(super) async fn the_deployment_password_signs_in_the_owner(app: &TestApp) {
        let anonymous = app.post_public("/tasks", &json!({"title": "no"})).await;
        assert_eq!(anonymous.status, 401);
        let wrong = app
            .post_public("/auth/login", &json!({"password": "wrong password"}))
            .await;
        assert_error_exact(&wrong, 401, "Invalid email or password");
        let login = app
            .post_public("/auth/login", &json!({"password": LOCAL_PASSWORD}))
            .await;
        assert_eq!(login.status, 200, "{}", login.text);
        assert_eq!(login.body["user"]["email"], "owner@muster.local");
        let token = str_of(&login.body, "accessToken");
        let created = send(app.bearer(
            &token,
            Method::POST,
            "/tasks",
            Some(&json!({"title": "local"})),
        ))
        .await;
        assert_eq!(created.status, 200, "{}", created.text);
        // E-mail logins keep working beside it.
        app.admin_token(&app.org).await;
    }

    pub(super) async fn supplied_credentials_are_still_verified(app: &TestApp) {
        super::supplied_credentials_are_still_verified(app).await;
    }
}

mod local_hash {
    use super::*;

    api_tests!(with crate::auth_modes::local_hash_settings();
        the_deployment_password_signs_in_the_owner,
    );

    pub(super) async fn the_deployment_password_signs_in_the_owner(app: &TestApp) {
        super::local::the_deployment_password_signs_in_the_owner(app).await;
    }
}

mod full {
    use super::*;

    api_tests!(
        requests_without_credentials_are_401,
        supplied_credentials_are_still_verified,
    );

    async fn requests_without_credentials_are_401(app: &TestApp) {
        let reply = app.post_public("/tasks", &json!({"title": "no"})).await;
        assert_error(&reply, 401, "missing credentials");
        let login = app
            .post_public("/auth/login", &json!({"password": "anything at all"}))
            .await;
        assert_error_exact(&login, 400, "email is required");
    }

    pub(super) async fn supplied_credentials_are_still_verified(app: &TestApp) {
        super::supplied_credentials_are_still_verified(app).await;
    }
}
