//! The live event stream (`GET /events/stream`): one watcher per process notices when
//! the audit log may have grown, and each open stream then reads its organization's
//! events after the last one it sent, straight from the database. Nothing is kept in
//! memory between instances, so an event written through any instance reaches every
//! stream, and a stream resumed with `Last-Event-ID` continues exactly where it stopped.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::web::Bytes;
use futures_util::Stream;
use muster_domain::model::{Actor, EventPosition, OrgId, StreamStart};
use muster_domain::ports::EventFilter;
use muster_domain::service::EventService;
use tokio::sync::{mpsc, watch};

use crate::dto::events::EventResponse;
use crate::stream_slots::Slots;
pub use crate::stream_slots::{StreamScope, StreamSlot, TooManyStreams};

/// Events read from the database in one go by a stream.
const BATCH: u32 = 100;

/// Limits and timings of the event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOptions {
    /// Streams one process keeps open at once; more are refused with 503.
    pub max_streams: usize,
    /// Streams one organization may hold open on one process at once (at most
    /// `max_streams`): one tenant cannot take the places the others need.
    pub max_streams_per_org: usize,
    /// Events a stream holds for a client that is not reading. A client that leaves
    /// them all unread for a heartbeat interval is dropped (it resumes with
    /// `Last-Event-ID`); writers never wait for it.
    pub buffer: usize,
    /// Time between two heartbeats of an idle stream.
    pub heartbeat: Duration,
    /// Time between two looks at whether the log grew.
    pub poll: Duration,
    /// Longest a stream stays open. Its credentials were checked when it opened; ending
    /// it makes the client reconnect (with `Last-Event-ID`, losing nothing), and so
    /// shows them again: a suspended agent or a revoked key stops receiving events.
    pub lifetime: Duration,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            max_streams: 256,
            max_streams_per_org: 64,
            buffer: 1024,
            heartbeat: Duration::from_secs(15),
            poll: Duration::from_millis(250),
            lifetime: Duration::from_secs(900),
        }
    }
}

/// The process's open streams: their bound, the signal that the log may have grown, and
/// the switch that ends them all when the server shuts down.
#[derive(Debug, Clone)]
pub struct EventStreams {
    options: StreamOptions,
    slots: Arc<Slots>,
    grown: watch::Receiver<EventPosition>,
    closing: Arc<watch::Sender<bool>>,
}

impl EventStreams {
    /// Starts the watcher on the current Tokio runtime. It polls the log's head only while
    /// a stream is open, and stops when every clone of the returned value is dropped or
    /// [`close`](Self::close) is called.
    pub fn start(events: EventService, options: StreamOptions) -> Self {
        let (tx, grown) = watch::channel(EventPosition::default());
        let (closing, closed) = watch::channel(false);
        tokio::spawn(watch_head(events, tx, closed, options.poll));
        Self {
            options,
            slots: Slots::new(options.max_streams, options.max_streams_per_org),
            grown,
            closing: Arc::new(closing),
        }
    }

    /// Ends every open stream (and any opened later) at once: an event stream's client
    /// is told the server is shutting down and to reconnect with `Last-Event-ID`. A
    /// server's graceful shutdown waits for open responses, and a stream never ends by
    /// itself; call this when the shutdown begins.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// The signal that the log may have grown, for streams of another shape (A2A's).
    pub(crate) fn changes(&self) -> watch::Receiver<EventPosition> {
        self.grown.clone()
    }

    /// The limits and timings streams follow.
    pub(crate) const fn options(&self) -> StreamOptions {
        self.options
    }

    /// The switch [`close`](Self::close) turns on, for streams that do not follow the
    /// log (a run's log): `true`, or its sender gone, means the server is shutting down.
    pub(crate) fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// A place for one more stream of `org`, if both the instance's bound and the
    /// organization's share allow.
    pub fn reserve(&self, org: OrgId) -> Result<StreamSlot, TooManyStreams> {
        self.slots.reserve(org)
    }

    /// Opens a stream of `actor`'s organization's events matching `filter` from `from`;
    /// the returned body holds `slot` until the client goes away.
    pub fn open(
        &self,
        events: EventService,
        actor: Actor,
        filter: EventFilter,
        from: StreamStart,
        slot: StreamSlot,
    ) -> EventBody {
        let (tx, rx) = mpsc::channel(self.options.buffer.max(1));
        let dropped = Arc::new(OnceLock::new());
        let feed = Feed {
            events,
            actor,
            filter,
            cursor: from.after,
            recorded: from.recorded,
            queue: ClientQueue {
                tx,
                dropped: Arc::clone(&dropped),
                buffer: self.options.buffer,
                patience: self.options.heartbeat,
                unit: "events",
            },
        };
        tokio::spawn(feed.run(
            self.grown.clone(),
            self.options.heartbeat,
            self.options.lifetime,
        ));
        EventBody {
            first: Some(Bytes::from_static(b"retry: 2000\n: connected\n\n")),
            rx,
            dropped,
            ended: false,
            _slot: slot,
        }
    }
}

/// Polls the log's head while anyone listens, and tells the streams when it moved. When
/// it returns (closed, or nobody left), `tx` is dropped: every stream then ends.
async fn watch_head(
    events: EventService,
    tx: watch::Sender<EventPosition>,
    mut closed: watch::Receiver<bool>,
    every: Duration,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            // Closed, or every `EventStreams` is gone.
            _ = closed.wait_for(|closed| *closed) => return,
        }
        // The value in `EventStreams` is one receiver; streams hold the others.
        match tx.receiver_count() {
            0 => return,
            1 => continue,
            _ => {}
        }
        match events.head().await {
            Ok(head) => {
                tx.send_if_modified(|seen| {
                    let moved = *seen != head;
                    *seen = head;
                    moved
                });
            }
            Err(err) => tracing::warn!(error = %err, "cannot read the event log's head"),
        }
    }
}

/// The producing half of one stream: reads events into the client's buffer.
struct Feed {
    events: EventService,
    actor: Actor,
    filter: EventFilter,
    cursor: EventPosition,
    /// Events after the start that were recorded before it: not sent.
    recorded: Vec<EventPosition>,
    queue: ClientQueue,
}

/// What a feed does next.
pub(crate) enum Next {
    Continue,
    Stop,
}

/// The client's side of a stream as its feed sees it: the bounded buffer it fills, and
/// the reason it ends the stream with (shared by the event stream and the run log
/// stream).
pub(crate) struct ClientQueue {
    pub(crate) tx: mpsc::Sender<Bytes>,
    pub(crate) dropped: Arc<OnceLock<String>>,
    pub(crate) buffer: usize,
    pub(crate) patience: Duration,
    /// What the stream carries, for the message to a dropped client ("events").
    pub(crate) unit: &'static str,
}

impl ClientQueue {
    /// Queues a frame for the client. A client that leaves its buffer full for a whole
    /// heartbeat interval is dropped: it resumes with `Last-Event-ID`.
    pub(crate) async fn send(&self, frame: Bytes) -> Next {
        match tokio::time::timeout(self.patience, self.tx.send(frame)).await {
            Ok(Ok(())) => Next::Continue,
            Ok(Err(_)) => Next::Stop,
            Err(_) => {
                self.drop_client(&format!(
                    "this client left {} {} unread for {} s; reconnect with Last-Event-ID \
                     to resume",
                    self.buffer,
                    self.unit,
                    self.patience.as_secs_f64()
                ));
                Next::Stop
            }
        }
    }

    /// Ends the stream, telling the client why once it has read what is buffered.
    pub(crate) fn drop_client(&self, reason: &str) {
        let _ = self.dropped.set(reason.to_owned());
    }
}

impl Feed {
    async fn run(
        mut self,
        mut grown: watch::Receiver<EventPosition>,
        heartbeat: Duration,
        lifetime: Duration,
    ) {
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
                changed = grown.changed() => {
                    if changed.is_err() {
                        self.queue.drop_client("the server is shutting down; reconnect with Last-Event-ID");
                        return;
                    }
                }
                _ = beat.tick() => {
                    if let Next::Stop = self.queue.send(Bytes::from_static(b": heartbeat\n\n")).await {
                        return;
                    }
                }
                () = self.queue.tx.closed() => return,
                () = tokio::time::sleep_until(ends) => {}
            }
        }
    }

    /// Sends every event after the cursor that can be read now.
    async fn catch_up(&mut self) -> Next {
        loop {
            let batch = match self
                .events
                .after(&self.actor, &self.filter, self.cursor, BATCH)
                .await
            {
                Ok(batch) => batch,
                Err(err) => {
                    tracing::warn!(error = %err, "cannot read events for a stream");
                    self.queue.drop_client(
                        "the event log could not be read; reconnect with Last-Event-ID",
                    );
                    return Next::Stop;
                }
            };
            let full = batch.len() >= BATCH as usize;
            for (position, event) in batch {
                if self.recorded.binary_search(&position).is_ok() {
                    self.cursor = position;
                    continue;
                }
                if let Next::Stop = self.queue.send(frame(&EventResponse::from(event))).await {
                    return Next::Stop;
                }
                self.cursor = position;
            }
            if !full {
                return Next::Continue;
            }
        }
    }
}

/// One event as a Server-Sent Events frame: its id (for `Last-Event-ID`) and the event
/// as `GET /events` shows it.
fn frame(event: &EventResponse) -> Bytes {
    let id = event.id();
    let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_owned());
    Bytes::from(format!("id: {id}\ndata: {data}\n\n"))
}

/// The response body of one stream. Dropping it (the client went away) frees its slot
/// and stops its feed.
pub struct EventBody {
    first: Option<Bytes>,
    rx: mpsc::Receiver<Bytes>,
    dropped: Arc<OnceLock<String>>,
    ended: bool,
    _slot: StreamSlot,
}

impl EventBody {
    /// The body of a stream of another shape (a run's log), fed through `rx` by its own
    /// task: the opening frames, then `rx`'s frames, then `event: dropped` with the
    /// reason `dropped` holds, if any, once `rx` closes. It holds `slot` until the
    /// client goes away.
    pub(crate) fn fed(
        rx: mpsc::Receiver<Bytes>,
        dropped: Arc<OnceLock<String>>,
        slot: StreamSlot,
    ) -> Self {
        Self {
            first: Some(Bytes::from_static(b"retry: 2000\n: connected\n\n")),
            rx,
            dropped,
            ended: false,
            _slot: slot,
        }
    }
}

impl std::fmt::Debug for EventBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBody")
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Stream for EventBody {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(first)));
        }
        if self.ended {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(frame)) => Poll::Ready(Some(Ok(frame))),
            Poll::Ready(None) => {
                self.ended = true;
                Poll::Ready(self.dropped.get().map(|reason| {
                    let data = serde_json::json!({ "reason": reason });
                    Ok(Bytes::from(format!("event: dropped\ndata: {data}\n\n")))
                }))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
