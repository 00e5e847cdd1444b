//! The OAuth identity provider against a fake provider: a raw TCP listener on
//! `127.0.0.1:0` that records each request and answers a canned HTTP/1.1 response.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fake;

use std::collections::HashMap;
use std::error::Error as _;
use std::fmt::Write as _;
use std::time::Duration;

use muster_domain::ports::{ExternalIdentity, IdentityProvider, ProviderError};
use muster_outbound::oauth::{
    DEFAULT_SCOPES, GOOGLE_AUTHORIZE_URL, GOOGLE_TOKEN_URL, GOOGLE_USERINFO_URL,
};
use muster_outbound::{HttpIdentityProvider, OAuthProviderConfig};
use tokio::net::TcpListener;

use fake::{Fake, Route};

pub const SECRET: &str = "client-secret-s3cr3t";
const CODE: &str = "4/0Ab+code with&odd=chars";
const VERIFIER: &str = "verifier-0123456789-abcdefghijklmnopqrstuvwxyz_~.";

fn token_ok() -> Route {
    (
        "/token",
        200,
        r#"{"access_token":"ya29.access-token","token_type":"Bearer","expires_in":3599}"#.into(),
    )
}

fn userinfo(body: &str) -> Route {
    ("/userinfo", 200, body.to_owned())
}

/// The error and its sources, as a log line would show them.
fn chain(error: &ProviderError) -> String {
    let mut text = format!("{error} / {error:?}");
    let mut source = error.source();
    while let Some(cause) = source {
        let _ = write!(text, " / {cause}");
        source = cause.source();
    }
    text
}

fn assert_unavailable(result: Result<ExternalIdentity, ProviderError>) {
    match result {
        Err(error @ ProviderError::Unavailable(_)) => {
            let text = chain(&error);
            for secret in [SECRET, CODE, VERIFIER, "ya29.access-token"] {
                assert!(!text.contains(secret), "{text} leaks {secret}");
            }
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn exchanges_the_code_and_returns_the_identity() {
    let fake = Fake::start(vec![
        token_ok(),
        userinfo(r#"{"sub":"1","email":"ada@example.com","email_verified":true}"#),
    ])
    .await;

    let identity = fake.provider().identify(CODE, VERIFIER).await.unwrap();

    assert_eq!(
        identity,
        ExternalIdentity {
            email: "ada@example.com".into(),
            email_verified: true
        }
    );
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    let token = &seen[0];
    assert_eq!(
        (token.method.as_str(), token.path.as_str()),
        ("POST", "/token")
    );
    assert_eq!(
        token.headers["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(token.headers["accept"], "application/json");
    let form = token.form();
    assert_eq!(form["grant_type"], "authorization_code");
    assert_eq!(form["code"], CODE);
    assert_eq!(form["code_verifier"], VERIFIER);
    assert_eq!(form["client_id"], "client-id.apps");
    assert_eq!(form["client_secret"], SECRET);
    assert_eq!(
        form["redirect_uri"],
        "https://muster.example/auth/callback?x=1"
    );
    assert_eq!(form.len(), 6);
    let info = &seen[1];
    assert_eq!(
        (info.method.as_str(), info.path.as_str()),
        ("GET", "/userinfo")
    );
    assert_eq!(info.headers["authorization"], "Bearer ya29.access-token");
}

#[tokio::test]
async fn reads_email_verified_sent_as_a_string_or_missing() {
    for (body, verified) in [
        (r#"{"email":"a@example.com","email_verified":"true"}"#, true),
        (
            r#"{"email":"a@example.com","email_verified":"false"}"#,
            false,
        ),
        (r#"{"email":"a@example.com"}"#, false),
    ] {
        let fake = Fake::start(vec![token_ok(), userinfo(body)]).await;
        let identity = fake.provider().identify(CODE, VERIFIER).await.unwrap();
        assert_eq!(identity.email_verified, verified, "{body}");
    }
}

#[tokio::test]
async fn a_refused_code_is_refused() {
    let fake = Fake::start(vec![(
        "/token",
        400,
        r#"{"error":"invalid_grant","error_description":"Bad Request"}"#.into(),
    )])
    .await;

    let result = fake.provider().identify(CODE, VERIFIER).await;

    assert!(
        matches!(&result, Err(ProviderError::Refused(e)) if e == "invalid_grant"),
        "{result:?}"
    );
    assert_eq!(fake.seen().len(), 1, "no userinfo request after a refusal");
}

#[tokio::test]
async fn a_4xx_without_an_error_code_is_refused_with_the_status() {
    let fake = Fake::start(vec![("/token", 401, "not json".into())]).await;
    let result = fake.provider().identify(CODE, VERIFIER).await;
    assert!(
        matches!(&result, Err(ProviderError::Refused(e)) if e.starts_with("401")),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_rejected_access_token_is_refused() {
    let fake = Fake::start(vec![token_ok(), ("/userinfo", 401, "{}".into())]).await;
    let result = fake.provider().identify(CODE, VERIFIER).await;
    assert!(
        matches!(result, Err(ProviderError::Refused(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_failing_provider_is_unavailable() {
    for routes in [
        vec![("/token", 500, r#"{"error":"internal"}"#.to_owned())],
        vec![("/token", 429, r#"{"error":"slow_down"}"#.to_owned())],
        vec![("/token", 200, "<html>not json</html>".to_owned())],
        vec![("/token", 200, r#"{"token_type":"Bearer"}"#.to_owned())],
        vec![(
            "/token",
            200,
            format!(r#"{{"pad":"{}"}}"#, "x".repeat(70_000)),
        )],
        vec![token_ok(), ("/userinfo", 503, "{}".to_owned())],
        vec![token_ok(), userinfo(r#"{"email_verified":true}"#)],
        vec![("/nothing", 200, String::new())],
    ] {
        let fake = Fake::start(routes).await;
        assert_unavailable(fake.provider().identify(CODE, VERIFIER).await);
    }
}

#[tokio::test]
async fn a_closed_port_is_unavailable() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let mut config = OAuthProviderConfig::google("id", SECRET, "https://m.example/cb");
    config.token_url = format!("http://{addr}/token");

    let result = HttpIdentityProvider::new(config)
        .unwrap()
        .identify(CODE, VERIFIER)
        .await;

    assert_unavailable(result);
}

#[tokio::test]
async fn a_silent_provider_times_out() {
    let fake = Fake::start(vec![("/token", 0, String::new())]).await;
    let provider = fake.provider().with_timeout(Duration::from_millis(300));

    let started = std::time::Instant::now();
    let result = provider.identify(CODE, VERIFIER).await;

    assert!(started.elapsed() < Duration::from_secs(5));
    assert_unavailable(result);
}

#[tokio::test]
async fn the_authorize_url_carries_every_parameter_encoded() {
    let fake = Fake::start(vec![]).await;
    let provider = fake.provider();
    let state = "st&te=1/+ é";
    let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    let url = provider.authorize_url(state, challenge);

    let prefix = format!("http://{}/authorize?", fake.addr);
    assert!(url.starts_with(&prefix), "{url}");
    let query = &url[prefix.len()..];
    assert!(
        query.contains("scope=openid+email+profile"),
        "spaces are encoded: {query}"
    );
    assert!(!query.contains(' ') && !query.contains('é'));
    let params: HashMap<String, String> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    assert_eq!(params.len(), 7);
    assert_eq!(params["response_type"], "code");
    assert_eq!(params["client_id"], "client-id.apps");
    assert_eq!(
        params["redirect_uri"],
        "https://muster.example/auth/callback?x=1"
    );
    assert_eq!(params["scope"], DEFAULT_SCOPES);
    assert_eq!(params["state"], state);
    assert_eq!(params["code_challenge"], challenge);
    assert_eq!(params["code_challenge_method"], "S256");
}

#[tokio::test]
async fn the_authorize_url_extends_an_existing_query() {
    let mut config = OAuthProviderConfig::google("id", SECRET, "https://m.example/cb");
    config.authorize_url = format!("{GOOGLE_AUTHORIZE_URL}?prompt=select_account");
    let url = HttpIdentityProvider::new(config)
        .unwrap()
        .authorize_url("s", "c");
    assert!(
        url.starts_with(&format!(
            "{GOOGLE_AUTHORIZE_URL}?prompt=select_account&response_type=code&"
        )),
        "{url}"
    );
    assert!(!url.contains(SECRET));
}

#[test]
fn google_is_the_default_and_debug_hides_the_secret() {
    let config = OAuthProviderConfig::google("id", SECRET, "https://m.example/cb");
    assert_eq!(config.authorize_url, GOOGLE_AUTHORIZE_URL);
    assert_eq!(config.token_url, GOOGLE_TOKEN_URL);
    assert_eq!(config.userinfo_url, GOOGLE_USERINFO_URL);
    assert_eq!(config.scopes, "openid email profile");
    let debug = format!("{config:?}");
    assert!(!debug.contains(SECRET) && debug.contains("***"), "{debug}");
}

#[tokio::test]
async fn rejects_urls_that_are_not_absolute_http() {
    for bad in ["/token", "ftp://example.com/token", "not a url", ""] {
        let mut config = OAuthProviderConfig::google("id", SECRET, "https://m.example/cb");
        config.token_url = bad.to_owned();
        assert!(HttpIdentityProvider::new(config).is_err(), "{bad}");
    }
}
