//! W3C trace context (`traceparent`, `tracestate`) for Muster's spans.
//!
//! The spans are the `tracing` spans the service already has; when `muster serve` (or
//! `muster worker`) exports traces, the OpenTelemetry layer gives each one a trace and a
//! span id. This crate reads and writes those ids as the W3C headers:
//!
//! - [`continue_trace`]: a request's `traceparent` becomes the parent of its span;
//! - [`Propagated::of`]: the headers a call made inside a span carries, so that the
//!   receiver (a webhook, a pre-hook, a remote agent, the server the worker talks to)
//!   continues the trace; also what a queued delivery keeps for later;
//! - [`ids`]: a span's trace and span id as hex, for log lines and for runs.
//!
//! With no OpenTelemetry layer installed (traces off), every function is a no-op that
//! answers `None`: a lookup of the subscriber's layer and nothing more.

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The W3C header that names the trace and the parent span.
pub const TRACEPARENT: &str = "traceparent";
/// The W3C header of vendor-specific trace state.
pub const TRACESTATE: &str = "tracestate";

/// Longest `tracestate` kept (the W3C limit is 32 members; 512 bytes covers them in
/// practice): a longer one is dropped rather than stored or sent on.
const MAX_TRACESTATE: usize = 512;

/// The trace context handed on: the `traceparent` value and, when there is one, the
/// `tracestate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Propagated {
    /// `00-<trace id>-<span id>-<flags>`.
    pub traceparent: String,
    /// Vendor entries, as received.
    pub tracestate: Option<String>,
}

impl Propagated {
    /// The context to send from within `span`, if it belongs to a trace.
    pub fn of(span: &Span) -> Option<Self> {
        let context = span.context();
        if !context.span().span_context().is_valid() {
            return None;
        }
        let mut carrier = Carrier::default();
        TraceContextPropagator::new().inject_context(&context, &mut carrier);
        let traceparent = carrier.traceparent?;
        Some(Self {
            traceparent,
            tracestate: carrier.tracestate.filter(|state| !state.is_empty()),
        })
    }

    /// The context of the current span, if it belongs to a trace.
    pub fn current() -> Option<Self> {
        Self::of(&Span::current())
    }
}

/// Makes the trace of `traceparent` (and `tracestate`) the parent of `span`, which must
/// not have been entered yet. A missing, malformed or unsupported `traceparent` is
/// ignored: the span starts a trace of its own, as the W3C specification asks.
pub fn continue_trace(span: &Span, traceparent: Option<&str>, tracestate: Option<&str>) {
    let Some(traceparent) = traceparent else {
        return;
    };
    let carrier = Carrier {
        traceparent: Some(traceparent.to_owned()),
        tracestate: tracestate
            .filter(|state| state.len() <= MAX_TRACESTATE)
            .map(str::to_owned),
    };
    let parent = TraceContextPropagator::new().extract(&carrier);
    if parent.span().span_context().is_valid() {
        // Fails only when traces are off or the span already started: nothing to do.
        let _ = span.set_parent(parent);
    }
}

/// The trace id and span id of `span` as lowercase hex, when it belongs to a trace.
pub fn ids(span: &Span) -> Option<(String, String)> {
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context.is_valid().then(|| {
        (
            span_context.trace_id().to_string(),
            span_context.span_id().to_string(),
        )
    })
}

/// The trace id of `span` when its trace is sampled (exported): what a metric's exemplar
/// may point to.
pub fn sampled_trace_id(span: &Span) -> Option<String> {
    let context = span.context();
    let span_context = context.span().span_context().clone();
    (span_context.is_valid() && span_context.is_sampled())
        .then(|| span_context.trace_id().to_string())
}

/// Records `trace_id` and `span_id` on `span` (fields it declares as `Empty`), so that
/// the log lines written inside it carry them. Nothing when it belongs to no trace.
pub fn record_ids(span: &Span) {
    if let Some((trace_id, span_id)) = ids(span) {
        span.record("trace_id", trace_id.as_str());
        span.record("span_id", span_id.as_str());
    }
}

/// The two headers, as the propagator reads and writes them.
#[derive(Debug, Default)]
struct Carrier {
    traceparent: Option<String>,
    tracestate: Option<String>,
}

impl Extractor for Carrier {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent.as_deref(),
            TRACESTATE => self.tracestate.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE]
    }
}

impl Injector for Carrier {
    fn set(&mut self, key: &str, value: String) {
        match key {
            TRACEPARENT => self.traceparent = Some(value),
            TRACESTATE => self.tracestate = Some(value),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    fn traced<T>(work: impl FnOnce() -> T) -> T {
        let provider = SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        tracing::subscriber::with_default(subscriber, work)
    }

    #[test]
    fn a_span_continues_the_trace_it_is_given_and_hands_on_its_own_span() {
        traced(|| {
            let span = tracing::info_span!("request", trace_id = tracing::field::Empty);
            continue_trace(&span, Some(PARENT), Some("vendor=1"));
            let (trace_id, span_id) = ids(&span).unwrap();
            assert_eq!(trace_id, "0af7651916cd43dd8448eb211c80319c");
            assert_ne!(span_id, "b7ad6b7169203331");
            let sent = span.in_scope(Propagated::current).unwrap();
            assert_eq!(
                sent.traceparent,
                format!("00-0af7651916cd43dd8448eb211c80319c-{span_id}-01")
            );
            assert_eq!(sent.tracestate.as_deref(), Some("vendor=1"));
        });
    }

    #[test]
    fn a_malformed_traceparent_starts_a_trace_of_its_own() {
        traced(|| {
            for bad in [
                "",
                "garbage",
                "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
                "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ] {
                let span = tracing::info_span!("request");
                continue_trace(&span, Some(bad), None);
                let (trace_id, _) = ids(&span).unwrap();
                assert_ne!(trace_id, "0af7651916cd43dd8448eb211c80319c", "{bad}");
                assert_ne!(trace_id, "00000000000000000000000000000000", "{bad}");
            }
        });
    }

    #[test]
    fn an_oversized_tracestate_is_not_handed_on() {
        traced(|| {
            let span = tracing::info_span!("request");
            let huge = format!("vendor={}", "x".repeat(MAX_TRACESTATE));
            continue_trace(&span, Some(PARENT), Some(&huge));
            let sent = Propagated::of(&span).unwrap();
            assert!(
                sent.traceparent
                    .contains("0af7651916cd43dd8448eb211c80319c")
            );
            assert_eq!(sent.tracestate, None);
        });
    }

    #[test]
    fn with_traces_off_nothing_is_read_or_sent() {
        let span = tracing::info_span!("request");
        continue_trace(&span, Some(PARENT), None);
        assert_eq!(ids(&span), None);
        assert_eq!(Propagated::of(&span), None);
    }
}
