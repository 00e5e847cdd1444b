//! The root span (and so the log line) of each request: tracing-actix-web's fields, with
//! the request target redacted where a path segment is a credential. An inbound webhook
//! is called at `/api/v1/webhooks/inbound/{key}`: the key must not reach the logs, also
//! when the path matches no route (a trailing slash, a doubled `/`, a typo after the key).

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use tracing::Span;
use tracing::field::Empty;
use tracing_actix_web::{DefaultRootSpanBuilder, RequestId, RootSpanBuilder};

use crate::error::ApiError;

/// Route parameters that are credentials.
const SECRET_PARAMS: [&str; 1] = ["{key}"];

/// Paths under which every segment may be a credential, whatever route (if any) matches.
const SECRET_PREFIXES: [&str; 1] = ["/api/v1/webhooks/inbound"];

/// The id of the trace the current request belongs to, when traces are exported.
pub(crate) fn current_trace_id() -> Option<String> {
    muster_telemetry::ids(&Span::current()).map(|(trace_id, _)| trace_id)
}

/// Builds the root span of every request.
pub(crate) struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let route = request
            .match_pattern()
            .unwrap_or_else(|| "default".to_owned());
        let method = request.method().as_str().to_owned();
        let request_id = request
            .extensions()
            .get::<RequestId>()
            .map(ToString::to_string)
            .unwrap_or_default();
        // The path only: a query string may carry what a client should not have put
        // there, and no route reads one that names a resource.
        let path = request.uri().path();
        let target = redacted_target(&route, path);
        let span = tracing::info_span!(
            "HTTP request",
            http.request.method = %method,
            http.route = %route,
            url.path = %target,
            http.status_code = Empty,
            http.response.status_code = Empty,
            otel.name = %format!("{method} {route}"),
            otel.kind = "server",
            otel.status_code = Empty,
            request_id = %request_id,
            trace_id = Empty,
            span_id = Empty,
            exception.message = Empty,
            exception.details = Empty,
        );
        let header = |name: &str| {
            request
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
        };
        // A caller's `traceparent` makes this request a step of its trace.
        muster_telemetry::continue_trace(
            &span,
            header(muster_telemetry::TRACEPARENT),
            header(muster_telemetry::TRACESTATE),
        );
        muster_telemetry::record_ids(&span);
        span
    }

    /// Records the status (and the error, if any) on the span, whose closing line is the
    /// request's log line. A client's error (4xx) is not logged on its own: whoever sends
    /// bad requests could otherwise fill the logs. A server error answered by an
    /// [`ApiError`] was logged with its cause where it was made; any other is logged here.
    fn on_request_end<B: MessageBody>(
        span: Span,
        outcome: &Result<ServiceResponse<B>, actix_web::Error>,
    ) {
        let unlogged = match outcome {
            Ok(response) => response
                .response()
                .error()
                .filter(|_| response.status().is_server_error())
                .filter(|err| err.as_error::<ApiError>().is_none())
                .map(|err| (response.status(), err.to_string())),
            Err(err) => Some(err.as_response_error().status_code())
                .filter(actix_web::http::StatusCode::is_server_error)
                .filter(|_| err.as_error::<ApiError>().is_none())
                .map(|status| (status, err.to_string())),
        };
        if let Some((status, error)) = unlogged {
            span.in_scope(|| tracing::error!(status = status.as_u16(), %error, "server error"));
        }
        let status = match outcome {
            Ok(response) => response.status(),
            Err(err) => err.as_response_error().status_code(),
        };
        span.record("http.response.status_code", i64::from(status.as_u16()));
        DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}

/// The target to log: as sent, unless the route has a credential in its path; then the
/// route template with that parameter masked (and no query string). A path that matches
/// no route but lies under a credential prefix is logged as the prefix and `/***`.
fn redacted_target(route: &str, path_and_query: &str) -> String {
    if SECRET_PARAMS.iter().any(|p| route.contains(p)) {
        SECRET_PARAMS
            .iter()
            .fold(route.to_owned(), |masked, p| masked.replace(p, "***"))
    } else if let Some(prefix) = secret_prefix(path_and_query) {
        format!("{prefix}/***")
    } else {
        path_and_query.to_owned()
    }
}

/// The credential prefix `path_and_query` lies under, if anything follows it. The path is
/// compared as a lenient server or proxy might read it (percent-decoded, runs of `/`
/// merged, any case), so that no spelling of a key's URL reaches the log.
fn secret_prefix(path_and_query: &str) -> Option<&'static str> {
    let path = path_and_query.split(['?', '#']).next().unwrap_or_default();
    let mut lenient = String::with_capacity(path.len());
    for c in percent_decoded(path).chars() {
        if !(c == '/' && lenient.ends_with('/')) {
            lenient.push(c.to_ascii_lowercase());
        }
    }
    let lenient = without_dot_segments(&lenient);
    SECRET_PREFIXES.into_iter().find(|prefix| {
        lenient
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'))
    })
}

/// `path` with its `.` and `..` segments resolved (RFC 3986, 5.2.4), as a proxy that
/// normalizes paths would read it: `/x/../webhooks/./inbound/k` is `/webhooks/inbound/k`.
fn without_dot_segments(path: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." => {}
            ".." => {
                // The leading empty segment (the root) stays.
                if kept.len() > 1 {
                    kept.pop();
                }
            }
            other => kept.push(other),
        }
        // A path ending in a dot segment still ends in a `/`.
        if i == last && matches!(*segment, "." | "..") {
            kept.push("");
        }
    }
    kept.join("/")
}

/// `text` with each `%XX` escape decoded (invalid UTF-8 replaced; a stray `%` kept).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes
            .get(i + 1..i + 3)
            .filter(|_| bytes[i] == b'%')
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        if let Some(byte) = escaped {
            decoded.push(byte);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_in_the_path_is_masked_and_other_targets_kept() {
        assert_eq!(
            redacted_target(
                "/api/v1/webhooks/inbound/{key}",
                "/api/v1/webhooks/inbound/ik_s3cret"
            ),
            "/api/v1/webhooks/inbound/***"
        );
        assert_eq!(
            redacted_target(
                "/api/v1/webhooks/inbound/{key}/batch",
                "/api/v1/webhooks/inbound/ik_s3cret/batch?x=1"
            ),
            "/api/v1/webhooks/inbound/***/batch"
        );
        assert_eq!(
            redacted_target("/tasks/{id}", "/tasks/42?fields=all"),
            "/tasks/42?fields=all"
        );
    }

    #[test]
    fn a_key_under_the_inbound_prefix_is_masked_whatever_the_spelling() {
        for target in [
            "/api/v1/webhooks/inbound/ik_s3cret/",
            "/api/v1/webhooks/inbound//ik_s3cret",
            "/api/v1/webhooks/inbound/ik_s3cret/batch/",
            "/api/v1/webhooks/inbound/ik_s3cret/batch/more?x=1",
            "//api/v1//webhooks/inbound/ik_s3cret",
            "/API/V1/Webhooks/Inbound/ik_s3cret",
            "/api/v1/webhooks/inbound%2Fik_s3cret",
            "/api/v1/webhooks/%69nbound/ik_s3cret",
            "/api/v1/webhooks/./inbound/ik_s3cret",
            "/api/v1/x/../webhooks/inbound/ik_s3cret",
            "/api/v1/webhooks/inbound/./ik_s3cret",
            "/api/v1/webhooks/%2e%2e/webhooks/inbound/ik_s3cret",
        ] {
            assert_eq!(
                redacted_target("default", target),
                "/api/v1/webhooks/inbound/***",
                "{target}"
            );
        }
        for target in [
            "/api/v1/webhooks/inbound",
            "/api/v1/webhooks/inbound/",
            "/api/v1/webhooks/inbound-keys",
            "/api/v1/webhooks/%zz",
        ] {
            assert_eq!(redacted_target("default", target), target);
        }
    }
}
