//! The OpenAPI 3.1 document of the API, generated from the handlers' `#[utoipa::path]`
//! annotations and the DTOs' schemas, and the browsable reference served at `/docs`.
//!
//! [`document`] builds it; `GET /openapi.json` serves it; `muster openapi` prints it and
//! `cargo xtask openapi` writes it to `docs/openapi.json`, which a test holds equal.

mod a2a;
mod errors;
mod paths;
mod reference;
mod rules;
mod security;

use std::sync::OnceLock;

pub(crate) use reference::register;

/// The API's OpenAPI document, as JSON.
#[must_use]
pub fn document() -> serde_json::Value {
    let mut doc = paths::all();
    doc.info = info();
    security::add_schemes(&mut doc);
    errors::add_common_responses(&mut doc);
    let mut doc = serde_json::to_value(&doc).unwrap_or_default();
    let mut missing = rules::add_rules(&mut doc);
    missing.extend(a2a::add_bodies(&mut doc));
    for pointer in missing {
        tracing::error!(%pointer, "an OpenAPI rule names a schema property that is not there");
    }
    doc
}

/// The document as pretty JSON with a final newline, the bytes of `docs/openapi.json`.
#[must_use]
pub fn json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let mut text = serde_json::to_string_pretty(&document())
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        text.push('\n');
        text
    })
}

fn info() -> utoipa::openapi::Info {
    utoipa::openapi::InfoBuilder::new()
        .title("Muster API")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(DESCRIPTION))
        .license(Some(
            utoipa::openapi::LicenseBuilder::new()
                .name("MIT")
                .identifier(Some("MIT"))
                .build(),
        ))
        .build()
}

const DESCRIPTION: &str = "\
Task and agent coordination: organizations' AI agents and people create, route, assign, \
approve and finish work together.

**Conventions.** Bodies are JSON, at most 1 MiB. Every error is \
`{statusCode, code, message, error}`; the message names the field or rule at fault and \
`code` is a stable identifier of the kind of refusal (listed in `docs/api.md`). Timestamps \
are UTC with milliseconds (`2026-11-22T01:02:03.456Z`). Ids are UUIDs. Paged lists answer \
`{data: [...], meta: {nextCursor}}`: pass `cursor` back for the next page.

**Credentials.** Agents sign every request with HMAC-SHA256 (`X-Agent-ID`, \
`X-Timestamp`, `X-Nonce`, `X-Signature`; see `docs/signing.md`). People send \
`Authorization: Bearer <access token>` from `POST /auth/login`. Scripts send \
`Authorization: Bearer msk_…` (an API key, limited to its scopes). Inbound webhook keys \
are the last path segment of `/api/v1/webhooks/inbound/{key}`. A deployment in auth mode \
`none` treats a request without credentials as its owner.

**Retries.** Any credentialed `POST` takes an `Idempotency-Key` header: a retry with the \
same key and body is answered as the first attempt was, with `Idempotent-Replayed: true`.";

#[cfg(test)]
mod tests;
