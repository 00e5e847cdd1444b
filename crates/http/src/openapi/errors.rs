//! The error answers every operation shares, added once here rather than repeated on
//! each handler: what an operation can answer follows from its credentials, its path
//! parameters, its body and its method.

use utoipa::openapi::path::{HttpMethod, Operation};
use utoipa::openapi::{
    ContentBuilder, HeaderBuilder, OpenApi, Ref, RefOr, Response, ResponseBuilder,
};

use crate::error::ErrorBody;

/// (status, component name, description, has `Retry-After`).
const SHARED: &[(&str, &str, &str, bool)] = &[
    (
        "400",
        "BadRequest",
        "Malformed JSON, an unknown field, or a value that breaks a rule; nothing was changed",
        false,
    ),
    (
        "401",
        "Unauthorized",
        "Missing or invalid credentials (the message says which check failed)",
        false,
    ),
    (
        "403",
        "Forbidden",
        "The caller may not do this (role, mode, scope or organization)",
        false,
    ),
    (
        "404",
        "NotFound",
        "No such resource in the caller's organization",
        false,
    ),
    (
        "409",
        "Conflict",
        "The resource is not in a state that allows this, or a request with the same Idempotency-Key is still being handled",
        false,
    ),
    ("413", "PayloadTooLarge", "The body is over 1 MiB", false),
    (
        "415",
        "UnsupportedMediaType",
        "The body is not declared as `Content-Type: application/json` (A2A routes also take `application/a2a+json`)",
        false,
    ),
    (
        "422",
        "IdempotencyMismatch",
        "This Idempotency-Key was used with a different request body",
        false,
    ),
    (
        "429",
        "RunawayGuard",
        "The calling agent's change went past a runaway-guard threshold of its organization: it was refused and the agent is suspended",
        false,
    ),
    (
        "500",
        "InternalError",
        "Something failed on the server; details are in its log, never in the answer",
        false,
    ),
    (
        "503",
        "Unavailable",
        "The database or a configured bound is unavailable now; retry after Retry-After seconds",
        true,
    ),
];

/// Adds the shared error answers as components and refers each operation to those that
/// apply to it; an answer an operation documents itself is kept.
pub(super) fn add_common_responses(doc: &mut OpenApi) {
    let components = doc.components.get_or_insert_with(Default::default);
    components.schemas.insert(
        "ErrorBody".to_owned(),
        <ErrorBody as utoipa::PartialSchema>::schema(),
    );
    for (_, name, description, retry_after) in SHARED {
        components.responses.insert(
            (*name).to_owned(),
            RefOr::T(error_response(description, *retry_after)),
        );
    }
    for (path, item) in &mut doc.paths.paths {
        let has_params = path.contains('{');
        let operations = [
            (HttpMethod::Get, item.get.as_mut()),
            (HttpMethod::Post, item.post.as_mut()),
            (HttpMethod::Patch, item.patch.as_mut()),
            (HttpMethod::Delete, item.delete.as_mut()),
        ];
        for (method, operation) in operations {
            if let Some(operation) = operation {
                add_to(operation, &method, has_params);
            }
        }
    }
}

fn add_to(operation: &mut Operation, method: &HttpMethod, has_params: bool) {
    let credentialed = operation.security.as_ref().is_some_and(|requirements| {
        serde_json::to_value(requirements).is_ok_and(|v| {
            v.as_array().is_some_and(|all| {
                all.iter()
                    .any(|r| r.as_object().is_some_and(|o| !o.is_empty()))
            })
        })
    });
    let user_or_agent = operation.security.as_ref().is_some_and(|requirements| {
        serde_json::to_string(requirements)
            .is_ok_and(|text| text.contains("userToken") || text.contains("agentId"))
    });
    let agent_writes = *method != HttpMethod::Get
        && operation.security.as_ref().is_some_and(|requirements| {
            serde_json::to_string(requirements).is_ok_and(|text| text.contains("agentId"))
        });
    let has_body = operation.request_body.is_some();
    let keyed = *method == HttpMethod::Post && user_or_agent;
    for (status, name, _, _) in SHARED {
        let applies = match *status {
            "401" => credentialed,
            "403" => user_or_agent,
            // An id in the path, or one in the body (an assignee, a parent task).
            "404" => has_params || user_or_agent,
            "409" => {
                keyed || matches!(method, HttpMethod::Patch | HttpMethod::Delete) && has_params
            }
            "413" | "415" => has_body,
            "422" => keyed,
            "429" => agent_writes,
            _ => true,
        };
        if applies {
            operation
                .responses
                .responses
                .entry((*status).to_owned())
                .or_insert_with(|| RefOr::Ref(Ref::from_response_name(*name)));
        }
    }
}

fn error_response(description: &str, retry_after: bool) -> Response {
    let mut response = ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ErrorBody")))
            .build(),
    );
    if retry_after {
        response = response.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(Some(<u64 as utoipa::PartialSchema>::schema()))
                .description(Some("Seconds to wait before retrying"))
                .build(),
        );
    }
    response.build()
}
