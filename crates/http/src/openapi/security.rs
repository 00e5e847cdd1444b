//! The credential schemes, as OpenAPI security schemes. Agent signing is four headers
//! required together; OpenAPI has no HMAC scheme, so each header is an `apiKey` scheme
//! and operations require all four at once.

use utoipa::openapi::OpenApi;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};

const SIGNING: &str = "Agent request signing, one of four headers sent together (X-Agent-ID, \
X-Timestamp, X-Nonce, X-Signature). X-Signature is the lowercase hex HMAC-SHA256, keyed with \
the agent's secret string as UTF-8, of: the method in upper case, the request target as \
sent (path and query), X-Timestamp, X-Nonce and the raw body, concatenated without \
separators. See docs/signing.md for a worked example.";

/// Adds every scheme the operations name.
pub(super) fn add_schemes(doc: &mut OpenApi) {
    let components = doc.components.get_or_insert_with(Default::default);
    let header = |name: &str, what: &str| {
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            name.to_owned(),
            format!("{what} {SIGNING}"),
        )))
    };
    let schemes = [
        ("agentId", header("X-Agent-ID", "The agent's id.")),
        (
            "agentTimestamp",
            header(
                "X-Timestamp",
                "Unix seconds, within ±300 s of the server's clock.",
            ),
        ),
        (
            "agentNonce",
            header(
                "X-Nonce",
                "1 to 128 printable ASCII characters, new for every request.",
            ),
        ),
        ("agentSignature", header("X-Signature", "The signature.")),
        (
            "userToken",
            bearer(
                "JWT",
                "A user's access token from POST /auth/login or /auth/refresh.",
            ),
        ),
        (
            "apiKey",
            bearer(
                "msk_…",
                "An API key from POST /api-keys, limited to its scopes.",
            ),
        ),
        (
            "metricsToken",
            bearer("token", "The deployment's MUSTER_METRICS_TOKEN."),
        ),
        (
            "chatToken",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Chat-Token".to_owned(),
                "The deployment's MUSTER_CHAT_TOKEN; without one the chat route is off (404)."
                    .to_owned(),
            ))),
        ),
        (
            "hostSignature",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Host-Signature-256".to_owned(),
                "`sha256=` and the lowercase hex HMAC-SHA256 of the raw body, keyed with the \
                 connection's webhook secret."
                    .to_owned(),
            ))),
        ),
    ];
    for (name, scheme) in schemes {
        components.add_security_scheme(name, scheme);
    }
}

fn bearer(format: &str, description: &str) -> SecurityScheme {
    SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format(format)
            .description(Some(description))
            .build(),
    )
}
