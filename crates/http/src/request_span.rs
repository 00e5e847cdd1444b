//! The root span (and so the log line) of each request: tracing-actix-web's fields, with
//! the request target redacted where a path segment is a credential. An inbound webhook
//! is called at `/api/v1/webhooks/inbound/{key}`: the key must not reach the logs.

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use tracing::Span;
use tracing::field::Empty;
use tracing_actix_web::{DefaultRootSpanBuilder, RequestId, RootSpanBuilder};

use crate::ApiError;

/// Route parameters that are credentials.
const SECRET_PARAMS: [&str; 1] = ["{key}"];

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
        let path_and_query = request.uri().path_and_query().map_or("", |p| p.as_str());
        let target = redacted_target(&route, path_and_query);
        tracing::info_span!(
            "HTTP request",
            http.method = %method,
            http.route = %route,
            http.target = %target,
            http.status_code = Empty,
            otel.name = %format!("{method} {route}"),
            otel.kind = "server",
            otel.status_code = Empty,
            request_id = %request_id,
            exception.message = Empty,
            exception.details = Empty,
        )
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
        DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}

/// The target to log: as sent, unless the route has a credential in its path; then the
/// route template with that parameter masked (and no query string).
fn redacted_target(route: &str, path_and_query: &str) -> String {
    if SECRET_PARAMS.iter().any(|p| route.contains(p)) {
        SECRET_PARAMS
            .iter()
            .fold(route.to_owned(), |masked, p| masked.replace(p, "***"))
    } else {
        path_and_query.to_owned()
    }
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
}
