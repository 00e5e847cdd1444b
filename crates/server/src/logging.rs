//! Structured logs with `tracing`, on stderr (stdout is kept for command output).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

use crate::cli::LogFormat;

/// Installs the global subscriber. An invalid filter falls back to `info` with a warning.
pub fn init(filter: &str, format: LogFormat) {
    let (filter, bad_filter) = match EnvFilter::try_new(filter) {
        Ok(filter) => (filter, None),
        Err(err) => (EnvFilter::new("info"), Some(err)),
    };
    // Closing each request span logs one line per request, with its id and duration.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_span_events(FmtSpan::CLOSE);
    let installed = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
        LogFormat::Text => builder.try_init(),
    };
    if installed.is_ok()
        && let Some(err) = bad_filter
    {
        tracing::warn!(%err, "invalid MUSTER_LOG filter; using `info`");
    }
}
