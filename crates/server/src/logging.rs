//! Structured logs with `tracing`, on stderr (stdout is kept for command output), and,
//! when an OTLP endpoint is configured, the same spans exported as OpenTelemetry traces.

use std::io::IsTerminal;

use anyhow::Context;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::{FilterExt, Targets, filter_fn};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::cli::LogFormat;

/// What must be flushed before the process exits: the trace exporter, if any.
#[derive(Debug, Default)]
#[must_use = "dropping it early loses the traces not yet sent"]
pub struct Telemetry(Option<SdkTracerProvider>);

impl Telemetry {
    /// Sends the spans still queued and stops the exporter (waits a few seconds at most).
    pub fn shutdown(self) {
        if let Some(provider) = self.0
            && let Err(err) = provider.shutdown()
        {
            tracing::warn!(%err, "could not flush the last traces");
        }
    }
}

/// Installs the global subscriber: logs filtered by `filter` (an invalid filter falls
/// back to `info` with a warning) and, with `otlp_endpoint`, traces. An endpoint that is
/// not a URL is an error; a collector that is down is not (spans are dropped, logged).
pub fn init(
    filter: &str,
    format: LogFormat,
    otlp_endpoint: Option<&str>,
) -> anyhow::Result<Telemetry> {
    let (filter, bad_filter) = match EnvFilter::try_new(filter) {
        Ok(filter) => (filter, None),
        Err(err) => (EnvFilter::new("info"), Some(err)),
    };
    // The database spans are for traces: never a log line, whatever the filter says.
    // (The hint keeps the log filter's level as the process-wide maximum, so callsites
    // below it stay disabled for free.)
    let filter = filter.and(
        filter_fn(|meta| !(meta.is_span() && meta.target().starts_with("muster_persistence")))
            .with_max_level_hint(LevelFilter::TRACE),
    );
    // Closing each request span logs one line per request, with its id and duration.
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_span_events(FmtSpan::CLOSE);
    let logs = match format {
        LogFormat::Json => logs
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_filter(filter)
            .boxed(),
        LogFormat::Text => logs.with_filter(filter).boxed(),
    };
    let provider = otlp_endpoint.map(tracer_provider).transpose()?;
    // Not an `Option` layer: an absent one still claims interest in every callsite, which
    // turned on every span and event of every crate and tripled the cost of a request.
    let installed = match &provider {
        Some(provider) => tracing_subscriber::registry()
            .with(logs)
            .with(
                tracing_opentelemetry::layer()
                    .with_tracer(provider.tracer("muster"))
                    .with_filter(traced()),
            )
            .try_init(),
        None => tracing_subscriber::registry().with(logs).try_init(),
    };
    if installed.is_ok()
        && let Some(err) = bad_filter
    {
        tracing::warn!(%err, "invalid MUSTER_LOG filter; using `info`");
    }
    Ok(Telemetry(provider))
}

/// What becomes a span in the traces, whatever the log filter: requests and the rest of
/// Muster at `info`, the database spans (`debug`, so that they never reach the logs);
/// never the exporter's own HTTP client, whose spans would feed themselves.
fn traced() -> Targets {
    Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("muster_persistence", LevelFilter::DEBUG)
        .with_target("opentelemetry", LevelFilter::OFF)
        .with_target("opentelemetry_sdk", LevelFilter::OFF)
        .with_target("opentelemetry_otlp", LevelFilter::OFF)
        .with_target("reqwest", LevelFilter::OFF)
        .with_target("hyper", LevelFilter::OFF)
        .with_target("hyper_util", LevelFilter::OFF)
        .with_target("h2", LevelFilter::OFF)
}

/// A batch exporter to `<endpoint>/v1/traces`, service name `muster`.
fn tracer_provider(endpoint: &str) -> anyhow::Result<SdkTracerProvider> {
    let base = endpoint.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        anyhow::bail!("MUSTER_OTLP_ENDPOINT must be an http:// or https:// URL, got {endpoint:?}");
    }
    let exporter = SpanExporter::builder()
        .with_http()
        .with_endpoint(format!("{base}/v1/traces"))
        .build()
        .context("cannot set up the OTLP trace exporter")?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name("muster")
                .with_attribute(opentelemetry::KeyValue::new(
                    "service.version",
                    env!("CARGO_PKG_VERSION"),
                ))
                .build(),
        )
        .build())
}
