//! The SSRF guard (decision D-81) with the default settings: https only, and no internal
//! address, whether written as a literal in any spelling or reached through a name that
//! resolves to one; at registration, and again at every delivery.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestApp, WebhookSettings, assert_error_exact, send};
use crate::webhook_support::{log, register, try_register, wait_for_log};

api_tests!(
    internal_targets_are_refused,
    plain_http_is_refused,
    a_changed_url_is_checked_again,
);

/// The default guard, with the outbox polled (every 50 ms).
pub fn delivering() -> WebhookSettings {
    WebhookSettings {
        webhook_poll_ms: 50,
        ..WebhookSettings::default()
    }
}

const PRIVATE: &str = "Webhook URL cannot target internal/private IP addresses";

fn hook(url: &str) -> serde_json::Value {
    json!({"name": "n", "url": url, "events": ["task.created"]})
}

async fn internal_targets_are_refused(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    for url in [
        "https://127.0.0.1/",
        "https://127.1/",
        "https://2130706433/",
        "https://0x7f000001/",
        "https://0.0.0.0/",
        "https://10.0.0.1/",
        "https://10.255.255.255/",
        "https://100.64.0.1/",
        "https://169.254.169.254/latest/meta-data/",
        "https://172.16.0.1/",
        "https://172.31.255.255/",
        "https://192.0.0.8/",
        "https://192.168.1.1:8443/",
        "https://198.18.0.1/",
        "https://224.0.0.1/",
        "https://255.255.255.255/",
        "https://[::]/",
        "https://[::1]/",
        "https://[::ffff:10.0.0.1]/",
        "https://[::ffff:7f00:1]/",
        "https://[64:ff9b::a00:1]/",
        "https://[fc00::1]/",
        "https://[fd12:3456::1]/",
        "https://[fe80::1]/",
        "https://[ff02::1]/",
        "https://localhost/",
        "https://localhost:9443/hook",
    ] {
        let reply = try_register(app, &token, &hook(url)).await;
        assert_error_exact(&reply, 400, PRIVATE);
    }
    let list = send(app.bearer(&token, Method::GET, "/api/v1/webhooks", None)).await;
    assert!(list.list().is_empty(), "nothing stored");
    // Public addresses pass (no connection is made at registration).
    register(app, &token, &hook("https://203.0.113.10/hook")).await;
    register(app, &token, &hook("https://[2001:db8::1]/hook")).await;
    register(app, &token, &hook("https://172.32.0.1/")).await;
}

async fn plain_http_is_refused(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    for url in [
        "http://203.0.113.10/",
        "ftp://203.0.113.10/",
        "ws://203.0.113.10/",
    ] {
        let reply = try_register(app, &token, &hook(url)).await;
        assert_error_exact(&reply, 400, "url must use https");
    }
    for url in [
        "203.0.113.10/hook",
        "https://user:pw@203.0.113.10/",
        "https://",
    ] {
        let reply = try_register(app, &token, &hook(url)).await;
        assert_error_exact(&reply, 400, "url must be an absolute https URL");
    }
}

async fn a_changed_url_is_checked_again(app: &TestApp) {
    let token = app.admin_token(&app.org).await;
    let id = register(app, &token, &hook("https://203.0.113.10/hook")).await;
    let path = format!("/api/v1/webhooks/{id}");
    let reply = send(app.bearer(
        &token,
        Method::PATCH,
        &path,
        Some(&json!({"url": "https://10.1.2.3/"})),
    ))
    .await;
    assert_error_exact(&reply, 400, PRIVATE);
    let reply = send(app.bearer(&token, Method::GET, &path, None)).await;
    assert_eq!(reply.body["url"], "https://203.0.113.10/hook", "unchanged");
}

mod at_delivery {
    use muster_domain::model::HookUrl;

    use super::*;

    api_tests!(with crate::webhooks_targets::delivering();
        a_stored_internal_url_is_refused_at_delivery,
    );

    /// A URL that reached the store some other way (an older version, a restore, a hand
    /// edit) is checked again when a delivery is due: the delivery fails as refused, and no
    /// connection is tried.
    async fn a_stored_internal_url_is_refused_at_delivery(app: &TestApp) {
        let token = app.admin_token(&app.org).await;
        let id = register(app, &token, &hook("https://203.0.113.10/hook")).await;
        let internal = HookUrl::new("https://169.254.169.254/latest/meta-data/").unwrap();
        crate::stored::change_webhook(app, &app.org, &id, move |h| h.url = internal).await;
        assert!(log(app, &token, &id).await.is_empty());
        app.task_titled(&app.org.hr, "heard by the hook").await;
        let entries = wait_for_log(app, &token, &id, std::time::Duration::from_secs(15), |e| {
            !e.is_empty()
        })
        .await;
        assert!(!entries.is_empty(), "a delivery was attempted");
        let error = entries[0]["error"].as_str().unwrap_or_default();
        assert!(error.starts_with("target refused: "), "{}", entries[0]);
        assert_eq!(
            entries[0]["statusCode"],
            serde_json::Value::Null,
            "{}",
            entries[0]
        );
    }
}
