//! The span of each call Muster makes to another server, and the W3C trace headers it
//! sends so that the receiver continues the trace. A span names the target by host and
//! port only: a hook's path or query may hold a token (chat webhooks do), and no header
//! or body is recorded.

use hyper::Request;
use hyper::header::HeaderValue;
use tracing::Span;
use tracing::field::Empty;

/// A client span for a call of kind `name` (`hook.pre`, `webhook.delivery`,
/// `a2a.handover`, `a2a.card`...) to `url` with `method`.
pub(crate) fn call_span(name: &'static str, method: &'static str, url: &str) -> Span {
    let (host, port) = host_and_port(url);
    // Debug level: a span for traces, never a log line (the log filter drops it).
    tracing::debug_span!(
        "outbound call",
        otel.name = name,
        otel.kind = "client",
        otel.status_code = Empty,
        http.request.method = method,
        server.address = host.as_deref().unwrap_or(""),
        server.port = i64::from(port),
        http.response.status_code = Empty,
        error.type = Empty,
        muster.event.type = Empty,
        muster.delivery.id = Empty,
        muster.delivery.attempt = Empty,
        muster.call.duration_ms = Empty,
    )
}

/// Records how the call ended: the status, or the failure's kind (never its words,
/// which may quote the receiver).
pub(crate) fn record_outcome(span: &Span, status: Option<u16>, failed: bool) {
    if let Some(status) = status {
        span.record("http.response.status_code", i64::from(status));
    }
    if failed {
        span.record(
            "error.type",
            status.map_or("transport".to_owned(), |s| s.to_string()),
        );
        span.record("otel.status_code", "ERROR");
    }
}

/// Adds `traceparent` (and `tracestate`) of `span` to `request`, when it is traced.
pub(crate) fn propagate<B>(span: &Span, request: &mut Request<B>) {
    let Some(context) = muster_telemetry::Propagated::of(span) else {
        return;
    };
    let headers = request.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&context.traceparent) {
        headers.insert(muster_telemetry::TRACEPARENT, value);
    }
    if let Some(Ok(value)) = context.tracestate.as_deref().map(HeaderValue::from_str) {
        headers.insert(muster_telemetry::TRACESTATE, value);
    }
}

/// The host and port of `url`, nothing else of it.
fn host_and_port(url: &str) -> (Option<String>, u16) {
    match url::Url::parse(url) {
        Ok(parsed) => (
            parsed.host_str().map(str::to_owned),
            parsed.port_or_known_default().unwrap_or(0),
        ),
        Err(_) => (None, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_host_and_port_of_a_target_are_kept() {
        assert_eq!(
            host_and_port("https://user:pw@hooks.slack.test/services/T0/B0/s3cret?token=x"),
            (Some("hooks.slack.test".to_owned()), 443)
        );
        assert_eq!(
            host_and_port("http://127.0.0.1:9000/in"),
            (Some("127.0.0.1".to_owned()), 9000)
        );
        assert_eq!(host_and_port("not a url"), (None, 0));
    }
}
