//! The codes the HTTP adapter answers of its own (decision D-102), for refusals no use
//! case makes: a body that cannot be read, missing credentials, a route that does not
//! exist. A refusal of a use case or of a credential carries the domain's or the
//! authenticator's code ([`ServiceError::code`](muster_domain::service::ServiceError::code),
//! [`AgentAuthError::code`](muster_auth::agent::AgentAuthError::code)). docs/api.md lists
//! every code; a test holds the list and the table to each other.

/// Declares each code as a constant and [`ALL`] as the list of them, so that no code
/// can be declared and left off the list.
macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident = $code:literal;)*) => {
        $($(#[$doc])* pub const $name: &str = $code;)*
        /// Every code above, in order.
        pub const ALL: &[&str] = &[$($name),*];
    };
}

codes! {
    /// 400: a field, parameter or header is missing or breaks a rule (the message names
    /// it); the same code as the domain's validation failures.
    VALIDATION_FAILED = "validation_failed";
    /// 400: the request body could not be read.
    BAD_REQUEST = "bad_request";
    /// 400: the body is not JSON, or not a JSON object.
    INVALID_JSON = "invalid_json";
    /// 401: no credentials on a route that needs them.
    MISSING_CREDENTIALS = "missing_credentials";
    /// 401: both agent signature headers and `Authorization` on one request.
    MIXED_CREDENTIALS = "mixed_credentials";
    /// 401: an `Authorization` header that is not `Bearer <token>`.
    MALFORMED_AUTHORIZATION = "malformed_authorization";
    /// 401: a route for signed-in users reached with another credential.
    ACCESS_TOKEN_REQUIRED = "access_token_required";
    /// 401: a signing header that is not visible ASCII.
    INVALID_SIGNING_HEADER = "invalid_signing_header";
    /// 401: `GET /metrics` without the metrics token.
    INVALID_METRICS_TOKEN = "invalid_metrics_token";
    /// 403: a `Host` this server does not answer to (decision D-105).
    HOST_NOT_ALLOWED = "host_not_allowed";
    /// 403: an `Origin` that is not this server's (decision D-105).
    ORIGIN_NOT_ALLOWED = "origin_not_allowed";
    /// 404: no route at this path (or a feature that is off, which answers alike).
    ROUTE_NOT_FOUND = "route_not_found";
    /// 405: the path exists, the method does not.
    METHOD_NOT_ALLOWED = "method_not_allowed";
    /// 409: a request with this `Idempotency-Key` is still being handled.
    IDEMPOTENCY_KEY_IN_PROGRESS = "idempotency_key_in_progress";
    /// 413: the body is larger than 1 MiB.
    PAYLOAD_TOO_LARGE = "payload_too_large";
    /// 415: a body that is not declared as JSON.
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type";
    /// 422: this `Idempotency-Key` came with a different body before.
    IDEMPOTENCY_KEY_MISMATCH = "idempotency_key_mismatch";
    /// 429: too many attempts; retry after `Retry-After` (the domain's code for
    /// throttled logins, and this adapter's for sign-ins started too fast).
    RATE_LIMITED = "rate_limited";
    /// 500: a failure on the server; details are in its log only.
    INTERNAL = "internal";
    /// 503: the database cannot be reached; retry after `Retry-After`.
    UNAVAILABLE = "unavailable";
    /// 503: too many event streams are open; retry after `Retry-After`.
    TOO_MANY_STREAMS = "too_many_streams";
}

/// The code an idempotent replay holds. It is never sent: a replay answers the kept
/// response as it was.
pub(crate) const REPLAYED: &str = "replayed";
