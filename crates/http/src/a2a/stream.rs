//! The A2A streams (`SendStreamingMessage`, `SubscribeToTask`): Server-Sent Events, the
//! task first, then a status update each time its A2A status changes, until it closes.
//!
//! A stream wakes when the audit log grows (the same signal as `GET /events/stream`, so
//! a change made through any instance reaches it), reads the task again and sends what
//! changed. It shares the event stream's bound on open streams and its longest life.

use std::convert::Infallible;
use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::web::{Bytes, Data};
use muster_a2a::mapping;
use muster_a2a::types::{StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent};
use muster_a2a::{A2aError, ErrorKind};
use muster_domain::model::{Actor, Task as MusterTask};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::ops::refusal;
use crate::state::AppState;

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

/// Opens the stream of `task`, whose first event is `first`.
pub(super) fn open(
    state: Data<AppState>,
    actor: Actor,
    task: MusterTask,
    first: Task,
    until: Until,
    framing: Framing,
) -> Result<HttpResponse, A2aError> {
    let slot = state.streams.reserve().map_err(|full| {
        A2aError::new(
            ErrorKind::ResourceExhausted,
            format!("too many open streams ({}); retry later", full.max),
        )
    })?;
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
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-store"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body))
}

/// The producing half of one stream.
struct Follow {
    state: Data<AppState>,
    actor: Actor,
    framing: Framing,
    until: Until,
    tx: mpsc::Sender<Bytes>,
}

/// Whether two statuses say the same (their timestamps and message ids aside).
fn same(a: &TaskStatus, b: &TaskStatus) -> bool {
    let text = |s: &TaskStatus| s.message.as_ref().map(|m| m.parts.clone());
    a.state == b.state && text(a) == text(b)
}

impl Follow {
    async fn run(self, mut task: MusterTask, first: Task) {
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
            let now = match self.state.tasks.get(&self.actor, task.id).await {
                Ok(now) => now,
                Err(err) => {
                    let error = refusal(err);
                    if error.kind == ErrorKind::Internal {
                        tracing::warn!(error = %error, "an A2A stream cannot read its task");
                    }
                    self.send(self.framing.error(&error)).await;
                    return;
                }
            };
            if now.version == task.version {
                continue;
            }
            task = now;
            let status = mapping::status(&task);
            if same(&status, &last) {
                continue;
            }
            let update = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: task.id.to_string(),
                context_id: mapping::context_id(&task),
                status: status.clone(),
            });
            if !self.send(self.framing.event(&update)).await || self.until.reached(&status) {
                return;
            }
            last = status;
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
