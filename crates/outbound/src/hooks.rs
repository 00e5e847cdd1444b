//! The domain's `HookCaller` port over HTTP: one signed POST per call, with the delivery
//! headers of the contract, within the hook's timeout, following no redirect.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use http_body_util::Full;
use hyper::Request;
use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HeaderValue, USER_AGENT};
use muster_domain::ports::{CallResult, HookCall, HookCaller, MessageSigner};

use tracing::{Instrument, Span};

use crate::delivery_signature;
use crate::http_client::{HttpClient, HttpError};
use crate::ssrf::{TargetPolicy, parse_target};
use crate::tracing_calls::{call_span, propagate, record_outcome};

/// `X-Service-Signature`: `sha256=<hex>` of the raw body, when the hook has a secret.
pub const SIGNATURE_HEADER: &str = "x-service-signature";
/// `X-Service-Event`: the event type.
pub const EVENT_HEADER: &str = "x-service-event";
/// `X-Service-Delivery`: the delivery id, the same for every retry of one event.
pub const DELIVERY_HEADER: &str = "x-service-delivery";
/// `X-Service-Hook-Type`: `pre` or `post`.
pub const HOOK_TYPE_HEADER: &str = "x-service-hook-type";

/// Calls hooks with a shared HTTP client, checking every target again (decision D-81).
#[derive(Clone)]
pub struct HttpHookCaller {
    client: HttpClient,
    signer: Arc<dyn MessageSigner>,
    policy: TargetPolicy,
}

impl std::fmt::Debug for HttpHookCaller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpHookCaller")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl HttpHookCaller {
    /// A caller applying `policy`, signing with `signer`, sending through a client
    /// guarded by the same policy.
    pub fn new(
        policy: TargetPolicy,
        signer: Arc<dyn MessageSigner>,
    ) -> Result<Self, rustls::Error> {
        Ok(Self {
            client: HttpClient::guarded(policy)?,
            signer,
            policy,
        })
    }

    fn request(&self, call: &HookCall) -> Result<Request<Full<Bytes>>, String> {
        let mut builder = Request::post(call.url.as_str())
            .header(CONTENT_TYPE, HeaderValue::from_static(call.content_type))
            .header(
                USER_AGENT,
                HeaderValue::from_static(concat!("Muster-Webhooks/", env!("CARGO_PKG_VERSION"))),
            )
            .header(EVENT_HEADER, call.event_type.as_str())
            .header(DELIVERY_HEADER, call.delivery_id.to_string())
            .header(HOOK_TYPE_HEADER, call.hook_type.as_str());
        for (name, value) in &call.headers {
            builder = builder.header(*name, value.as_str());
        }
        if let Some(secret) = &call.secret {
            builder = builder.header(
                SIGNATURE_HEADER,
                delivery_signature(self.signer.as_ref(), secret, &call.body),
            );
        }
        builder
            .body(Full::new(Bytes::from(call.body.clone())))
            .map_err(|_| "the webhook URL or a header is not valid HTTP".to_owned())
    }
}

#[async_trait]
impl HookCaller for HttpHookCaller {
    /// One call in a span of its own (`hook.pre`, `webhook.delivery`, `a2a.push`,
    /// `a2a.handover`): a child of the current span, or of the trace a queued delivery
    /// kept. The receiver gets the span's `traceparent`.
    async fn call(&self, call: &HookCall) -> CallResult {
        let span = call_span(call.kind.as_str(), "POST", &call.url);
        if let Some(trace) = &call.trace {
            muster_telemetry::continue_trace(
                &span,
                Some(&trace.traceparent),
                trace.tracestate.as_deref(),
            );
        }
        span.record("muster.event.type", call.event_type.as_str());
        span.record("muster.delivery.id", call.delivery_id.to_string().as_str());
        span.record("muster.delivery.attempt", i64::from(call.attempt));
        let result = self.traced_call(call, &span).instrument(span.clone()).await;
        span.record("muster.call.duration_ms", i64::from(result.duration_ms));
        record_outcome(&span, result.status, result.error.is_some());
        result
    }
}

impl HttpHookCaller {
    async fn traced_call(&self, call: &HookCall, span: &Span) -> CallResult {
        let started = Instant::now();
        // Literal addresses never reach the client's resolver: check them here, and the
        // scheme, again at every call.
        if let Err(refusal) = parse_target(&call.url, self.policy) {
            return failed(started, None, format!("target refused: {refusal}"));
        }
        let mut request = match self.request(call) {
            Ok(request) => request,
            Err(error) => return failed(started, None, error),
        };
        propagate(span, &mut request);
        let timeout = Duration::from_millis(call.timeout_ms.into());
        match self
            .client
            .clone()
            .with_timeout(timeout)
            .send(request)
            .await
        {
            Ok(response) => {
                let status = response.status.as_u16();
                let error = (!response.status.is_success())
                    .then(|| format!("the receiver answered {status}"));
                CallResult {
                    status: Some(status),
                    duration_ms: elapsed_ms(started),
                    error,
                    body: response.body.to_vec(),
                }
            }
            Err(err) => failed(started, None, describe(&err)),
        }
    }
}

fn failed(started: Instant, status: Option<u16>, error: String) -> CallResult {
    CallResult {
        status,
        duration_ms: elapsed_ms(started),
        error: Some(error),
        body: Vec::new(),
    }
}

fn elapsed_ms(started: Instant) -> u32 {
    u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX)
}

/// A failure in words that name no URL, header or secret: the error and its causes.
pub(crate) fn describe(err: &HttpError) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
