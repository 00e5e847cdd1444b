//! The A2A streams (`SendStreamingMessage`, `SubscribeToTask`): Server-Sent Events, the
//! task first, then a status update each time its A2A status changes, until it closes.
//!
//! A stream reads the task's events in the audit log (waking when the log grows, the
//! same signal as `GET /events/stream`, so a change made through any instance reaches
//! it): each move sends the status it led to, in order, however quickly moves follow
//! one another. It shares the event stream's bounds on open streams (the instance's and
//! the organization's share) and its longest life.

use std::convert::Infallible;
use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::web::{Bytes, Data};
use muster_a2a::mapping;
use muster_a2a::types::{StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent};
use muster_a2a::{A2aError, ErrorKind};
use muster_domain::model::{Actor, EventPosition, Task as MusterTask, TaskStatus as MusterStatus};
use muster_domain::ports::EventFilter;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::ops::refusal;
use crate::state::AppState;
use crate::streams::{StreamScope, StreamSlot};

/// Longest silence on an open stream: clients time out reads that wait longer.
const KEEP_ALIVE: Duration = Duration::from_secs(2);

/// How events are wrapped.
#[derive(Debug, Clone)]
pub(super) enum Framing {
    /// Each event is a JSON-RPC response to the request with this id.
    JsonRpc(Value),
    /// Each event is the bare `StreamResponse` (HTTP+JSON).
    Rest,
}

impl Framing {
    fn event(&self, event: &StreamResponse) -> Bytes {
        let data = match self {
            Self::JsonRpc(id) => json!({"jsonrpc": "2.0", "id": id, "result": event}),
            Self::Rest => serde_json::to_value(event).unwrap_or(Value::Null),
        };
        Bytes::from(format!("data: {data}\n\n"))
    }

    fn error(&self, error: &A2aError) -> Bytes {
        let data = match self {
            Self::JsonRpc(id) => json!({"jsonrpc": "2.0", "id": id, "error": error.json_rpc()}),
            Self::Rest => error.rest_body(),
        };
        Bytes::from(format!("event: error\ndata: {data}\n\n"))
    }
}

/// A streaming method refused before its stream opened (an unknown or closed task, no
/// room for a stream), answered as the stream the client asked for: one `error` event,
/// then the end. It holds no place among the open streams.
pub(super) fn refused(framing: &Framing, error: &A2aError) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-store"))
        .body(framing.error(error))
}

/// When a stream is over.
#[derive(Debug, Clone, Copy)]
pub(super) enum Until {
    /// At a terminal state (`SubscribeToTask`).
    Terminal,
    /// At a terminal or an interrupted state (`SendStreamingMessage`: the client's turn).
    Interrupted,
}

impl Until {
    fn reached(self, status: &TaskStatus) -> bool {
        status.state.is_terminal()
            || (matches!(self, Self::Interrupted) && status.state.is_interrupted())
    }
}

/// A place for one more stream of `actor`'s organization, taken before anything is
/// changed: a send refused for want of one creates no task.
pub(super) fn reserve(state: &AppState, actor: &Actor) -> Result<StreamSlot, A2aError> {
    state.streams.reserve(actor.org_id).map_err(|full| {
        let whose = match full.scope {
            StreamScope::Instance => "",
            StreamScope::Organization => " for this organization",
        };
        A2aError::new(
            ErrorKind::ResourceExhausted,
            format!("too many open streams{whose} ({}); retry later", full.max),
        )
    })
}

/// Opens the stream of `task`, whose first event is `first`, in `slot`.
pub(super) fn open(
    state: Data<AppState>,
    actor: Actor,
    (task, first): (MusterTask, Task),
    until: Until,
    framing: Framing,
    slot: StreamSlot,
) -> HttpResponse {
    let (tx, rx) = mpsc::channel::<Bytes>(16);
    let follow = Follow {
        state,
        actor,
        framing,
        until,
        tx,
    };
    tokio::spawn(follow.run(task, first));
    let body = futures_util::stream::unfold((rx, slot), |(mut rx, slot)| async move {
        rx.recv()
            .await
            .map(|frame| (Ok::<_, Infallible>(frame), (rx, slot)))
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-store"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body)
}

/// The producing half of one stream.
struct Follow {
    state: Data<AppState>,
    actor: Actor,
    framing: Framing,
    until: Until,
    tx: mpsc::Sender<Bytes>,
}

/// Events read from the log in one go.
const BATCH: u32 = 100;

/// Where a stream is in its task's events.
struct Feed {
    cursor: EventPosition,
    /// Positions after the start recorded before it: passed over.
    recorded: Vec<EventPosition>,
    /// The task as its events have moved it.
    task: MusterTask,
}

/// What a stream does next.
enum Next {
    Continue,
    Stop,
}

/// Whether two statuses say the same (their timestamps and message ids aside).
fn same(a: &TaskStatus, b: &TaskStatus) -> bool {
    let text = |s: &TaskStatus| s.message.as_ref().map(|m| m.parts.clone());
    a.state == b.state && text(a) == text(b)
}

impl Follow {
    async fn run(self, task: MusterTask, first: Task) {
        let options = self.state.streams.options();
        let mut changes = self.state.streams.changes();
        let mut last = first.status.clone();
        if !self
            .send(self.framing.event(&StreamResponse::Task(first)))
            .await
            || self.until.reached(&last)
        {
            return;
        }
        let filter = EventFilter {
            entity_id: Some(task.id.as_uuid()),
            ..EventFilter::default()
        };
        let mut feed = match self.start(&filter, task).await {
            Ok(feed) => feed,
            Err(error) => {
                self.send(self.framing.error(&error)).await;
                return;
            }
        };
        // What changed between the first event and the start of the feed.
        let now = feed.task.clone();
        if let Next::Stop = self.update(&now, &mut last).await {
            return;
        }
        let ends = tokio::time::Instant::now() + options.lifetime;
        let mut beat = tokio::time::interval(KEEP_ALIVE.min(options.heartbeat));
        beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        beat.tick().await;
        loop {
            tokio::select! {
                moved = changes.changed() => {
                    if moved.is_err() {
                        return;
                    }
                }
                _ = beat.tick() => {
                    if !self.send(Bytes::from_static(b": keep-alive\n\n")).await {
                        return;
                    }
                    continue;
                }
                () = self.tx.closed() => return,
                () = tokio::time::sleep_until(ends) => return,
            }
            match self.catch_up(&filter, &mut feed, &mut last).await {
                Ok(Next::Continue) => {}
                Ok(Next::Stop) => return,
                Err(error) => {
                    self.send(self.framing.error(&error)).await;
                    return;
                }
            }
        }
    }

    /// Where the task's events start, and the task as it is from there on.
    async fn start(&self, filter: &EventFilter, task: MusterTask) -> Result<Feed, A2aError> {
        let events = &self.state.events;
        let start = events
            .stream_from(&self.actor, filter, None)
            .await
            .map_err(refusal)?;
        let now = self.reread(&task).await?;
        Ok(Feed {
            cursor: start.after,
            recorded: start.recorded,
            task: now,
        })
    }

    /// Sends a status update for each change of the task's status in its events since
    /// the cursor: a move names the status it led to; the rest is read from the task.
    async fn catch_up(
        &self,
        filter: &EventFilter,
        feed: &mut Feed,
        last: &mut TaskStatus,
    ) -> Result<Next, A2aError> {
        loop {
            let batch = self
                .state
                .events
                .after(&self.actor, filter, feed.cursor, BATCH)
                .await
                .map_err(refusal)?;
            let full = batch.len() >= BATCH as usize;
            for (position, event) in batch {
                feed.cursor = position;
                if feed.recorded.binary_search(&position).is_ok() {
                    continue;
                }
                let moved_to = event
                    .payload
                    .get("to")
                    .and_then(Value::as_str)
                    .and_then(MusterStatus::parse);
                // The task's other fields as they are now, at the status the events led
                // to so far: a later move is sent by its own event.
                let now = self.reread(&feed.task).await?;
                let (status, since) = match moved_to {
                    Some(to) => (to, event.created_at),
                    None => (feed.task.status, feed.task.status_changed_at),
                };
                feed.task = MusterTask {
                    status,
                    status_changed_at: since,
                    ..now
                };
                if let Next::Stop = self.update(&feed.task, last).await {
                    return Ok(Next::Stop);
                }
            }
            if !full {
                return Ok(Next::Continue);
            }
        }
    }

    async fn reread(&self, task: &MusterTask) -> Result<MusterTask, A2aError> {
        self.state
            .tasks
            .get(&self.actor, task.id)
            .await
            .map_err(|err| {
                let error = refusal(err);
                if error.kind == ErrorKind::Internal {
                    tracing::warn!(error = %error, "an A2A stream cannot read its task");
                }
                error
            })
    }

    /// Sends `task`'s status when it says something `last` did not.
    async fn update(&self, task: &MusterTask, last: &mut TaskStatus) -> Next {
        let status = mapping::status(task);
        if same(&status, last) {
            return Next::Continue;
        }
        let update = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: task.id.to_string(),
            context_id: mapping::context_id(task),
            status: status.clone(),
        });
        let sent = self.send(self.framing.event(&update)).await;
        *last = status;
        if !sent || self.until.reached(last) {
            Next::Stop
        } else {
            Next::Continue
        }
    }

    /// Queues a frame; `false` once the client is gone or has not read for a heartbeat
    /// interval (it subscribes again).
    async fn send(&self, frame: Bytes) -> bool {
        let patience = self.state.streams.options().heartbeat;
        matches!(
            tokio::time::timeout(patience, self.tx.send(frame)).await,
            Ok(Ok(()))
        )
    }
}
