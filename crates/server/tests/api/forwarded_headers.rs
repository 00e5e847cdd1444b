//! What a request may claim about how it reached the server: nothing, unless it came
//! through a proxy the operator trusts. The Agent Card (cached publicly) names the
//! configured public URL or the listening address, never a request's `Host` or
//! `X-Forwarded-*`; cookies are `Secure` when a trusted proxy says https or the request
//! names an https public URL. Every answer carries `X-Content-Type-Options: nosniff`.

use reqwest::{Method, StatusCode};

use crate::dashboard_support::Browser;
use crate::helpers::{AppSettings, EdgeSettings, Reply, TestApp, send};

/// The headers a client can send to claim another name or scheme.
const CLAIMS: [(&str, &str); 4] = [
    ("x-forwarded-host", "evil.example"),
    ("forwarded", "host=evil.example;proto=https"),
    ("x-forwarded-proto", "https"),
    ("host", "evil.example"),
];

async fn card(app: &TestApp, headers: &[(&str, &str)]) -> Reply {
    let mut request = app.anonymous(Method::GET, "/.well-known/agent-card.json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let reply = send(request).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply
}

fn urls(card: &Reply) -> Vec<String> {
    let mut urls: Vec<String> = card.body["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["url"].as_str().unwrap().to_owned())
        .collect();
    urls.push(card.body["documentationUrl"].as_str().unwrap().to_owned());
    urls
}

/// Whether the sign-in page's CSRF cookie came back `Secure`.
async fn secure_cookie(app: &TestApp, headers: &[(&str, &str)]) -> bool {
    let page = Browser::new(app)
        .send(Method::GET, "/ui/login", None, headers)
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    let line = page.set_cookie("muster_csrf").unwrap();
    line.split(';').any(|part| part.trim() == "Secure")
}

api_tests!(
    the_card_names_the_listening_address_whatever_the_request_says,
    a_strangers_forwarded_proto_does_not_make_cookies_secure,
    every_answer_says_nosniff,
);

async fn the_card_names_the_listening_address_whatever_the_request_says(app: &TestApp) {
    let expected = vec![
        app.url("/a2a/jsonrpc"),
        app.url("/a2a/rest"),
        app.url("/docs"),
    ];
    assert_eq!(urls(&card(app, &[]).await), expected);
    let claimed = card(app, &CLAIMS).await;
    assert_eq!(urls(&claimed), expected, "{}", claimed.text);
    // Nothing shapes it but the configuration: one cached copy serves everyone.
    assert!(
        claimed.headers.get("vary").is_none(),
        "{:?}",
        claimed.headers
    );
    assert_eq!(claimed.headers["cache-control"], "public, max-age=300");
}

async fn a_strangers_forwarded_proto_does_not_make_cookies_secure(app: &TestApp) {
    assert!(!secure_cookie(app, &[("x-forwarded-proto", "https")]).await);
    assert!(!secure_cookie(app, &[("forwarded", "proto=https")]).await);
    assert!(!secure_cookie(app, &[]).await);
}

async fn every_answer_says_nosniff(app: &TestApp) {
    let signed = app.get(&app.org.hr, "/tasks").await;
    let created = app
        .post(&app.org.hr, "/tasks", r#"{"title": "sniffed?"}"#)
        .await;
    let unsigned = send(app.anonymous(Method::GET, "/tasks")).await;
    let missing = send(app.anonymous(Method::GET, "/no-such-route")).await;
    let health = send(app.anonymous(Method::GET, "/health")).await;
    let card = card(app, &[]).await;
    let document = send(app.anonymous(Method::GET, "/openapi.json")).await;
    let page = send(app.anonymous(Method::GET, "/ui/login")).await;
    let refused = send(
        app.anonymous(Method::GET, "/ui/login")
            .header("host", "evil.example"),
    )
    .await;
    for (what, reply, status) in [
        ("a list", &signed, 200),
        ("a creation", &created, 200),
        ("a 401", &unsigned, 401),
        ("a 404", &missing, 404),
        ("the probe", &health, 200),
        ("the card", &card, 200),
        ("the document", &document, 200),
        ("a page", &page, 200),
        ("a refused Host", &refused, 403),
    ] {
        assert_eq!(reply.status.as_u16(), status, "{what}: {}", reply.text);
        assert_eq!(
            reply
                .headers
                .get("x-content-type-options")
                .and_then(|v| v.to_str().ok()),
            Some("nosniff"),
            "{what}: {:?}",
            reply.headers
        );
    }
}

/// A proxy on loopback (where the test client connects from) is trusted.
pub(crate) fn behind_a_proxy() -> AppSettings {
    EdgeSettings {
        trusted_proxies: vec!["127.0.0.0/8".to_owned(), "::1".to_owned()],
        ..EdgeSettings::default()
    }
    .into()
}

mod behind_a_trusted_proxy {
    use super::*;

    api_tests!(with crate::forwarded_headers::behind_a_proxy(); its_forwarded_proto_decides_the_cookies_and_not_the_card);

    async fn its_forwarded_proto_decides_the_cookies_and_not_the_card(app: &TestApp) {
        assert!(secure_cookie(app, &[("x-forwarded-proto", "https")]).await);
        assert!(secure_cookie(app, &[("forwarded", "for=192.0.2.1;proto=https")]).await);
        assert!(!secure_cookie(app, &[("x-forwarded-proto", "http")]).await);
        assert!(!secure_cookie(app, &[]).await);
        // The card still names what is configured: a proxy's headers vary per request.
        let claimed = card(app, &CLAIMS).await;
        assert_eq!(
            urls(&claimed)[0],
            app.url("/a2a/jsonrpc"),
            "{}",
            claimed.text
        );
    }
}

/// An https public URL, and another one on plain http.
pub(crate) fn public() -> AppSettings {
    EdgeSettings {
        public_urls: vec![
            "https://muster.example.com/".to_owned(),
            "http://muster.lan:8080".to_owned(),
        ],
        ..EdgeSettings::default()
    }
    .into()
}

mod with_a_public_url {
    use super::*;

    api_tests!(with crate::forwarded_headers::public(); the_card_names_it_and_its_https_makes_cookies_secure);

    async fn the_card_names_it_and_its_https_makes_cookies_secure(app: &TestApp) {
        let expected = [
            "https://muster.example.com/a2a/jsonrpc",
            "https://muster.example.com/a2a/rest",
            "https://muster.example.com/docs",
        ];
        assert_eq!(urls(&card(app, &[]).await), expected);
        assert_eq!(urls(&card(app, &CLAIMS).await), expected);
        let lan = card(app, &[("host", "muster.lan:8080")]).await;
        assert_eq!(
            urls(&lan),
            expected,
            "the first public URL is the canonical one"
        );
        // Cookies are Secure on the https name, not on the plain one nor on loopback,
        // and a stranger's header changes neither.
        assert!(secure_cookie(app, &[("host", "muster.example.com")]).await);
        assert!(!secure_cookie(app, &[("host", "muster.lan:8080")]).await);
        assert!(
            !secure_cookie(
                app,
                &[("host", "muster.lan:8080"), ("x-forwarded-proto", "https")]
            )
            .await
        );
        assert!(!secure_cookie(app, &[]).await);
    }
}
