//! A run's log, live (`GET /runs/:id/log/stream`): Server-Sent Events, one per line,
//! each with the line's number as its id, then `event: end` with the run once it is no
//! longer running and every line was sent.
//!
//! A log line writes no audit event, so a stream does not wait on the event log's head:
//! it reads its run (one row) every poll interval and, when the run has more lines than
//! were sent, reads them straight from the database. Nothing is kept in memory between
//! instances: lines appended through any instance reach every stream, and a stream
//! resumed with `Last-Event-ID` (or `?after=`) continues exactly after that line. It
//! shares the event stream's bounds (the instance's and the organization's share), its
//! heartbeats, its buffer and its longest life.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use actix_web::web::Bytes;
use muster_domain::model::{Actor, RunId};
use muster_domain::rules::runs::MAX_LOG_PAGE;
use muster_domain::service::RunService;
use tokio::sync::{mpsc, watch};

use crate::dto::runs::{LogLineResponse, RunResponse};
use crate::streams::{ClientQueue, EventBody, EventStreams, Next, StreamSlot};

/// Opens the live log of `run` (already read as `actor`'s) after line `after`; the
/// returned body holds `slot` until the client goes away.
pub(crate) fn open(
    streams: &EventStreams,
    runs: RunService,
    actor: Actor,
    run: RunId,
    after: i64,
    slot: StreamSlot,
) -> EventBody {
    let options = streams.options();
    let (tx, rx) = mpsc::channel(options.buffer.max(1));
    let dropped = Arc::new(OnceLock::new());
    let feed = Feed {
        runs,
        actor,
        run,
        cursor: after,
        queue: ClientQueue {
            tx,
            dropped: Arc::clone(&dropped),
            buffer: options.buffer,
            patience: options.heartbeat,
            unit: "lines",
        },
    };
    tokio::spawn(feed.run(
        streams.closing(),
        options.poll,
        options.heartbeat,
        options.lifetime,
    ));
    EventBody::fed(rx, dropped, slot)
}

/// The producing half of one stream: reads the run's new lines into the client's
/// buffer.
struct Feed {
    runs: RunService,
    actor: Actor,
    run: RunId,
    /// The number of the last line sent (or the one the client resumed after).
    cursor: i64,
    queue: ClientQueue,
}

impl Feed {
    async fn run(
        mut self,
        mut closing: watch::Receiver<bool>,
        poll: Duration,
        heartbeat: Duration,
        lifetime: Duration,
    ) {
        let mut look = tokio::time::interval(poll);
        look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        look.tick().await;
        let mut beat = tokio::time::interval(heartbeat);
        beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        beat.tick().await;
        let ends = tokio::time::Instant::now() + lifetime;
        loop {
            if tokio::time::Instant::now() >= ends {
                self.queue.drop_client(
                    "this stream reached its longest life; reconnect with Last-Event-ID \
                     (your credentials are checked again)",
                );
                return;
            }
            if let Next::Stop = self.catch_up().await {
                return;
            }
            tokio::select! {
                _ = look.tick() => {}
                _ = beat.tick() => {
                    if let Next::Stop = self.queue.send(Bytes::from_static(b": heartbeat\n\n")).await {
                        return;
                    }
                }
                // Closed, or every `EventStreams` is gone: the server is shutting down.
                () = shutting_down(&mut closing) => {
                    self.queue.drop_client("the server is shutting down; reconnect with Last-Event-ID");
                    return;
                }
                () = self.queue.tx.closed() => return,
                () = tokio::time::sleep_until(ends) => {}
            }
        }
    }

    /// Sends every line after the cursor that can be read now, and the end when the
    /// run is no longer running.
    async fn catch_up(&mut self) -> Next {
        // The run before its lines: a closed run takes no more, so once it reads closed,
        // the lines read after it are all there will ever be.
        let run = match self.runs.get(&self.actor, self.run).await {
            Ok(run) => run,
            Err(err) => return self.unreadable(&err),
        };
        while self.cursor < run.log_lines {
            let page = match self
                .runs
                .log(&self.actor, self.run, self.cursor, MAX_LOG_PAGE)
                .await
            {
                Ok(page) => page,
                Err(err) => return self.unreadable(&err),
            };
            if page.lines.is_empty() {
                break;
            }
            for line in page.lines {
                let seq = line.seq;
                if let Next::Stop = self
                    .queue
                    .send(line_frame(&LogLineResponse::from(line)))
                    .await
                {
                    return Next::Stop;
                }
                self.cursor = seq;
            }
        }
        if run.status.is_open() {
            return Next::Continue;
        }
        // Sent whatever the wait; the stream ends either way.
        let _ = self.queue.send(end_frame(&RunResponse::from(run))).await;
        Next::Stop
    }

    /// Ends the stream when its run or its log cannot be read (a database outage).
    fn unreadable(&self, err: &dyn std::fmt::Display) -> Next {
        tracing::warn!(error = %err, run = %self.run, "cannot read a run's log for a stream");
        self.queue
            .drop_client("the run's log could not be read; reconnect with Last-Event-ID");
        Next::Stop
    }
}

/// Returns when the server begins to shut down (the switch is on, or gone).
async fn shutting_down(closing: &mut watch::Receiver<bool>) {
    // The guard it answers must not be held: only whether it returned matters.
    let _ = closing.wait_for(|closed| *closed).await.map(|_| ());
}

/// One line as a Server-Sent Events frame: its number (for `Last-Event-ID`) and the
/// line as `GET /runs/:id/log` shows it.
fn line_frame(line: &LogLineResponse) -> Bytes {
    let data = serde_json::to_string(line).unwrap_or_else(|_| "{}".to_owned());
    Bytes::from(format!("id: {}\ndata: {data}\n\n", line.seq))
}

/// The last frame: the run, as `GET /runs/:id` shows it, once it ended and its whole
/// log was sent.
fn end_frame(run: &RunResponse) -> Bytes {
    let data = serde_json::to_string(run).unwrap_or_else(|_| "{}".to_owned());
    Bytes::from(format!("event: end\ndata: {data}\n\n"))
}
