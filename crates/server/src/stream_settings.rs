//! The live event stream's bound and timings (`GET /events/stream`), from flags or
//! `MUSTER_*` variables.

use std::time::Duration;

use clap::Args;
use muster_http::StreamOptions;

/// The stream settings of `muster serve`.
#[derive(Debug, Clone, Args)]
pub struct StreamSettings {
    /// Event streams this instance keeps open at once; more are refused with 503.
    #[arg(long, env = "MUSTER_STREAM_MAX", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub stream_max: u32,
    /// Events a stream holds for a client that is not reading; a client that leaves
    /// them unread for a heartbeat interval is dropped (it resumes with Last-Event-ID).
    #[arg(long, env = "MUSTER_STREAM_BUFFER", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub stream_buffer: u32,
    /// Seconds between two heartbeats of an idle stream.
    #[arg(long, env = "MUSTER_STREAM_HEARTBEAT_SECS", default_value_t = 15,
          value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub stream_heartbeat_secs: u64,
    /// Milliseconds between two looks at whether the audit log grew (how late, at most,
    /// an event reaches the streams).
    #[arg(long, env = "MUSTER_STREAM_POLL_MS", default_value_t = 250,
          value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub stream_poll_ms: u64,
    /// Seconds a stream stays open at most; the client then reconnects with
    /// Last-Event-ID (losing nothing) and its credentials are checked again.
    #[arg(long, env = "MUSTER_STREAM_MAX_SECS", default_value_t = 900,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub stream_max_secs: u64,
}

impl StreamSettings {
    /// The options the HTTP layer runs with.
    pub fn options(&self) -> StreamOptions {
        StreamOptions {
            max_streams: usize::try_from(self.stream_max).unwrap_or(usize::MAX),
            buffer: usize::try_from(self.stream_buffer).unwrap_or(usize::MAX),
            heartbeat: Duration::from_secs(self.stream_heartbeat_secs),
            poll: Duration::from_millis(self.stream_poll_ms),
            lifetime: Duration::from_secs(self.stream_max_secs),
        }
    }
}
