//! The run's log on its way to the server: lines gathered into batches (a call per
//! quarter second at most, well within the log route's 10,000 lines and 1 MiB per
//! call), kept for the next attempt when a call does not get through.

use muster_client::types::runs::{LogBody, LogLineBody};

use super::adapters::Stream;

/// Lines in one call, at most.
pub const MAX_BATCH_LINES: usize = 1_000;
/// Bytes of text in one call, at most (the route takes up to 1 MiB).
pub const MAX_BATCH_BYTES: usize = 512 * 1024;
/// Bytes held while the server cannot be reached; past them the oldest lines go, and a
/// `system` line says how many.
pub const MAX_HELD_BYTES: usize = 8 * 1024 * 1024;

/// Lines not yet sent.
#[derive(Debug, Default)]
pub struct LogBatch {
    lines: std::collections::VecDeque<LogLineBody>,
    bytes: usize,
    dropped: u64,
}

impl LogBatch {
    /// Adds a line.
    pub fn push(&mut self, stream: Stream, text: String) {
        self.bytes += text.len();
        self.lines.push_back(LogLineBody {
            stream: stream.name().to_owned(),
            text,
        });
        while self.bytes > MAX_HELD_BYTES {
            match self.lines.pop_front() {
                Some(line) => {
                    self.bytes -= line.text.len();
                    self.dropped += 1;
                }
                None => break,
            }
        }
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.dropped == 0
    }

    /// Whether a call should go now rather than at the next tick.
    pub fn is_full(&self) -> bool {
        self.lines.len() >= MAX_BATCH_LINES || self.bytes >= MAX_BATCH_BYTES
    }

    /// The next call's lines (taken out; [`LogBatch::put_back`] them when it fails).
    pub fn take(&mut self) -> LogBody {
        let mut lines = Vec::new();
        let mut bytes = 0;
        if self.dropped > 0 {
            lines.push(LogLineBody {
                stream: Stream::System.name().to_owned(),
                text: format!(
                    "[muster worker] {} lines were dropped while the server could not be reached",
                    self.dropped
                ),
            });
            self.dropped = 0;
        }
        while let Some(line) = self.lines.front() {
            let size = line.text.len();
            if !lines.is_empty()
                && (lines.len() >= MAX_BATCH_LINES || bytes + size > MAX_BATCH_BYTES)
            {
                break;
            }
            bytes += size;
            self.bytes -= size;
            if let Some(line) = self.lines.pop_front() {
                lines.push(line);
            }
        }
        LogBody { lines }
    }

    /// Puts a batch that could not be sent back in front, to go with the next call.
    pub fn put_back(&mut self, body: LogBody) {
        for line in body.lines.into_iter().rev() {
            self.bytes += line.text.len();
            self.lines.push_front(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_stay_within_the_routes_limits_and_keep_order() {
        let mut batch = LogBatch::default();
        for n in 0..2_500 {
            batch.push(Stream::Stdout, format!("line {n}"));
        }
        assert!(batch.is_full());
        let first = batch.take();
        assert_eq!(first.lines.len(), MAX_BATCH_LINES);
        assert_eq!(first.lines[0].text, "line 0");
        batch.put_back(first);
        let again = batch.take();
        assert_eq!(again.lines[0].text, "line 0");
        assert_eq!(batch.take().lines[0].text, "line 1000");
        assert_eq!(batch.take().lines.len(), 500);
        assert!(batch.is_empty());
    }

    #[test]
    fn big_lines_split_batches_by_bytes() {
        let mut batch = LogBatch::default();
        for _ in 0..3 {
            batch.push(Stream::Stderr, "x".repeat(300 * 1024));
        }
        assert_eq!(batch.take().lines.len(), 1);
        assert_eq!(batch.take().lines.len(), 1);
        let last = batch.take();
        assert_eq!(last.lines[0].stream, "stderr");
        assert!(batch.is_empty());
    }

    #[test]
    fn what_cannot_be_held_is_dropped_and_said() {
        let mut batch = LogBatch::default();
        for _ in 0..20 {
            batch.push(Stream::Stdout, "y".repeat(1024 * 1024));
        }
        let body = batch.take();
        assert_eq!(body.lines[0].stream, "system");
        assert!(
            body.lines[0].text.contains("12 lines were dropped"),
            "{}",
            body.lines[0].text
        );
    }
}
