//! Structured logs with `tracing`, on stderr (stdout is kept for command output), and,
//! when an OTLP endpoint is configured, the same spans exported as OpenTelemetry traces.

use std::io::IsTerminal;

use anyhow::Context;
use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::{FilterExt, Targets, filter_fn};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::cli::LogFormat;
use crate::telemetry_settings::{ParentlessSampler, SamplerSetting, TraceSettings};

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
    traces: Option<&TraceSettings>,
) -> anyhow::Result<Telemetry> {
    let (filter, bad_filter) = match EnvFilter::try_new(filter) {
        Ok(filter) => (filter, None),
        Err(err) => (EnvFilter::new("info"), Some(err)),
    };
    // The spans of the database, the units of work, the calls out and the background
    // jobs are for traces: never a log line, whatever the filter says. (The hint keeps
    // the log filter's level as the process-wide maximum, so callsites below it stay
    // disabled for free.)
    let filter = filter.and(
        filter_fn(|meta| {
            !(meta.is_span()
                && TRACE_ONLY
                    .iter()
                    .any(|target| meta.target().starts_with(target)))
        })
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
    let provider = traces.map(tracer_provider).transpose()?;
    // Not an `Option` layer: an absent one still claims interest in every callsite, which
    // turned on every span and event of every crate and tripled the cost of a request.
    let installed = match &provider {
        Some(provider) => tracing_subscriber::registry()
            .with(logs)
            .with(
                // Lean spans: each of these defaults costs every span, sampled or not
                // (a clock reading at every poll of an instrumented future for the
                // busy/idle times, the thread-local context swapped at every poll,
                // attributes that repeat the span's name), and the bench measured
                // them (docs/benchmarks.md, "Traces").
                tracing_opentelemetry::layer()
                    .with_tracer(provider.tracer("muster"))
                    .with_tracked_inactivity(false)
                    .with_context_activation(false)
                    .with_threads(false)
                    .with_location(false)
                    .with_target(false)
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
    TRACE_ONLY
        .iter()
        .fold(Targets::new(), |targets, target| {
            targets.with_target(*target, LevelFilter::DEBUG)
        })
        .with_default(LevelFilter::INFO)
        .with_target("opentelemetry", LevelFilter::OFF)
        .with_target("opentelemetry_sdk", LevelFilter::OFF)
        .with_target("opentelemetry_otlp", LevelFilter::OFF)
        .with_target("reqwest", LevelFilter::OFF)
        .with_target("hyper", LevelFilter::OFF)
        .with_target("hyper_util", LevelFilter::OFF)
        .with_target("h2", LevelFilter::OFF)
}

/// The crates (and targets) whose spans are debug-level and go to traces only: the
/// database's, the units of work's (`muster_domain`), the calls out, the background
/// jobs' and the worker's.
const TRACE_ONLY: [&str; 5] = [
    "muster_persistence",
    "muster_domain",
    "muster_outbound",
    "muster_jobs",
    "muster_worker",
];

/// A batch exporter to the settings' endpoint, with their resource and sampler.
fn tracer_provider(settings: &TraceSettings) -> anyhow::Result<SdkTracerProvider> {
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(settings.endpoint.as_str())
        .build()
        .context("cannot set up the OTLP trace exporter")?;
    let resource = Resource::builder_empty()
        .with_attributes(
            settings
                .resource
                .iter()
                .map(|(key, value)| KeyValue::new(key.clone(), value.clone())),
        )
        .with_service_name(settings.service_name.clone())
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_sampler(sampler(settings.sampler))
        .with_resource(resource)
        .build())
}

/// The SDK's sampler for a setting.
fn sampler(setting: SamplerSetting) -> Sampler {
    match setting {
        SamplerSetting::AlwaysOn => Sampler::AlwaysOn,
        SamplerSetting::AlwaysOff => Sampler::AlwaysOff,
        SamplerSetting::Ratio(ratio) => Sampler::TraceIdRatioBased(ratio),
        SamplerSetting::ParentBased(root) => Sampler::ParentBased(Box::new(match root {
            ParentlessSampler::AlwaysOn => Sampler::AlwaysOn,
            ParentlessSampler::AlwaysOff => Sampler::AlwaysOff,
            ParentlessSampler::Ratio(ratio) => Sampler::TraceIdRatioBased(ratio),
        })),
    }
}
