//! The root span (and so the log line) of each request: tracing-actix-web's fields, with
//! the request target redacted where a path segment is a credential. An inbound webhook
//! is called at `/api/v1/webhooks/inbound/{key}`: the key must not reach the logs.

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use tracing::Span;
use tracing::field::Empty;
use tracing_actix_web::{DefaultRootSpanBuilder, RequestId, RootSpanBuilder};

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

    fn on_request_end<B: MessageBody>(
        span: Span,
        outcome: &Result<ServiceResponse<B>, actix_web::Error>,
    ) {
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
