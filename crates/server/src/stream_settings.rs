//! The live streams' bounds and timings (`GET /events/stream`, and the dashboard's live
//! board and A2A streams, which take places in the same pool), from flags or `MUSTER_*`
//! variables.

use std::time::Duration;

use clap::Args;
use muster_http::StreamOptions;

/// The stream settings of `muster serve`.
#[derive(Debug, Clone, Args)]
pub struct StreamSettings {
    /// Streams this instance keeps open at once (event streams, live boards and A2A
    /// streams together); more are refused with 503.
    #[arg(long, env = "MUSTER_STREAM_MAX", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub stream_max: u32,
    /// Event streams one organization may hold open on this instance at once (its fair
    /// share); more are refused with 503 even when the instance has room. Default: a
    /// quarter of `--stream-max`, rounded up. Set it to `--stream-max` to turn it off.
    #[arg(long, env = "MUSTER_STREAM_MAX_PER_ORG",
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub stream_max_per_org: Option<u32>,
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
    /// The organization's share: as set, or a quarter of the instance's bound (rounded
    /// up, so never 0), and never more than that bound.
    fn per_org(&self) -> u32 {
        self.stream_max_per_org
            .unwrap_or_else(|| self.stream_max.div_ceil(4))
            .min(self.stream_max)
    }

    /// The options the HTTP layer runs with.
    pub fn options(&self) -> StreamOptions {
        StreamOptions {
            max_streams: usize::try_from(self.stream_max).unwrap_or(usize::MAX),
            max_streams_per_org: usize::try_from(self.per_org()).unwrap_or(usize::MAX),
            buffer: usize::try_from(self.stream_buffer).unwrap_or(usize::MAX),
            heartbeat: Duration::from_secs(self.stream_heartbeat_secs),
            poll: Duration::from_millis(self.stream_poll_ms),
            lifetime: Duration::from_secs(self.stream_max_secs),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::StreamSettings;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        streams: StreamSettings,
    }

    fn per_org(args: &[&str]) -> usize {
        let serve =
            Serve::try_parse_from(std::iter::once("serve").chain(args.iter().copied())).unwrap();
        serve.streams.options().max_streams_per_org
    }

    #[test]
    fn an_organizations_share_defaults_to_a_quarter_of_the_instances() {
        assert_eq!(per_org(&[]), 64);
        assert_eq!(per_org(&["--stream-max", "10"]), 3);
        assert_eq!(per_org(&["--stream-max", "1"]), 1);
        assert_eq!(per_org(&["--stream-max-per-org", "100"]), 100);
        // Never more than the instance's bound.
        assert_eq!(
            per_org(&["--stream-max", "8", "--stream-max-per-org", "100"]),
            8
        );
        assert!(Serve::try_parse_from(["serve", "--stream-max-per-org", "0"]).is_err());
    }
}
