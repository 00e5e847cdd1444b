//! `GET /openapi.json` and the reference at `/docs`, against the running server: the
//! served document is the committed one, every documented operation is served, and the
//! page's assets come from the binary with a strict Content-Security-Policy.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::helpers::{AppSettings, MetricsSettings, TestApp, WebhookSettings, send};

mod with_every_optional_route {
    use super::every_documented_operation_is_served;

    api_tests!(with crate::openapi::every_route_on();
        every_documented_operation_is_served,
    );
}

api_tests!(
    the_served_document_is_the_committed_one,
    the_reference_page_and_its_assets_are_served_from_the_binary,
    error_answers_have_the_documented_shape,
);

/// Settings that switch on the routes that answer 404 while off: Google sign-in,
/// `/metrics` and the chat integration.
pub fn every_route_on() -> AppSettings {
    AppSettings {
        auth: crate::oauth::provider_settings(),
        metrics: MetricsSettings {
            metrics_token: Some(crate::metrics::TOKEN.to_owned()),
        },
        hooks: Some(WebhookSettings {
            chat_token: Some("chat-token-0123456789".to_owned()),
            ..WebhookSettings::default()
        }),
        ..AppSettings::default()
    }
}

async fn served_document(app: &TestApp) -> Value {
    let reply = send(app.anonymous(Method::GET, "/openapi.json")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.body
}

async fn the_served_document_is_the_committed_one(app: &TestApp) {
    let reply = send(app.anonymous(Method::GET, "/openapi.json")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let content_type = reply.headers["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let committed = include_str!("../../../../docs/openapi.json");
    assert!(
        reply.text == committed,
        "GET /openapi.json differs from docs/openapi.json: run `cargo xtask openapi`"
    );
}

/// A value for a path parameter: a fresh UUID for ids, a real asset for `/docs/{file}`.
fn sample(name: &str) -> String {
    match name {
        "file" => "index.html".to_owned(),
        "key" => "not-a-real-key".to_owned(),
        _ => uuid::Uuid::new_v4().to_string(),
    }
}

fn fill(template: &str) -> String {
    let mut path = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').map(|c| open + c).unwrap();
        path.push_str(&rest[..open]);
        path.push_str(&sample(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    path.push_str(rest);
    path
}

/// Without credentials, with an empty JSON object for a body: every documented operation
/// answers something of its own (401, 400, 404 for the made-up id, 200 ...), never the
/// router's "Cannot GET ..." 404 or a 405.
async fn every_documented_operation_is_served(app: &TestApp) {
    let doc = served_document(app).await;
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut checked = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let path = fill(template);
            let mut request = no_redirects.request(method.clone(), app.url(&path));
            if method != Method::GET && method != Method::DELETE {
                request = request
                    .header("content-type", "application/json")
                    .body("{}");
            }
            let reply = send(request).await;
            assert_ne!(
                reply.status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {path}: {}",
                reply.text
            );
            let routed_nowhere = reply.status == StatusCode::NOT_FOUND
                && reply.body["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("Cannot "));
            assert!(!routed_nowhere, "{method} {path}: {}", reply.text);
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} operations");
}

async fn the_reference_page_and_its_assets_are_served_from_the_binary(app: &TestApp) {
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let root = send(no_redirects.get(app.url("/docs"))).await;
    assert_eq!(root.status, StatusCode::PERMANENT_REDIRECT, "{}", root.text);
    assert_eq!(root.headers["location"], "/docs/");

    let page = send(app.anonymous(Method::GET, "/docs/")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(
        page.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert_eq!(page.headers["x-content-type-options"], "nosniff");
    assert!(page.text.contains("swagger-ui-bundle.js"), "{}", page.text);

    let init = send(app.anonymous(Method::GET, "/docs/swagger-initializer.js")).await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.text);
    assert!(init.text.contains("/openapi.json"), "{}", init.text);
    assert!(!init.text.contains("{{config}}"), "{}", init.text);

    let bundle = send(app.anonymous(Method::GET, "/docs/swagger-ui-bundle.js")).await;
    assert_eq!(bundle.status, StatusCode::OK);
    assert!(bundle.text.len() > 100_000, "{} bytes", bundle.text.len());

    let missing = send(app.anonymous(Method::GET, "/docs/no-such-asset.js")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.text);
    assert_eq!(missing.body["statusCode"], 404);
}

/// The `ErrorBody` schema lists exactly the fields of a real error answer.
async fn error_answers_have_the_documented_shape(app: &TestApp) {
    let doc = served_document(app).await;
    let schema = &doc["components"]["schemas"]["ErrorBody"];
    let mut documented: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    documented.sort_unstable();
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort_unstable();
    let reply = send(app.anonymous(Method::GET, "/tasks")).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    let mut answered: Vec<&str> = reply
        .body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    answered.sort_unstable();
    assert_eq!(answered, documented);
    assert_eq!(answered, required);
}
