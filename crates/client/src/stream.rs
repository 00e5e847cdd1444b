//! Reading `GET /events/stream` and `GET /runs/:id/log/stream` (Server-Sent Events),
//! resuming after a drop.

use std::time::Duration;

use muster_wire::events::EventResponse;
use muster_wire::runs::{LogLineResponse, RunResponse};
use reqwest::{Method, Response};
use uuid::Uuid;

use crate::client::Extra;
use crate::error::from_answer;
use crate::{Client, Error};

/// A live stream of audit events. Call [`EventStream::next`] in a loop.
#[derive(Debug)]
pub struct EventStream {
    sse: Sse,
    last_event_id: Option<Uuid>,
}

impl EventStream {
    pub(crate) fn new(client: Client, target: String, after: Option<Uuid>) -> Self {
        Self {
            sse: Sse::new(client, target),
            last_event_id: after,
        }
    }

    /// The id of the last event handed out: where a new stream would resume.
    pub fn last_event_id(&self) -> Option<Uuid> {
        self.last_event_id
    }

    /// Waits for the next event. A broken connection, or the server ending a stream it
    /// was not read fast enough, is resumed after the last event by itself; an error
    /// the server answers when (re)connecting (401, 403, 404 …) or a server that cannot
    /// be reached is returned, and the next call tries again.
    pub async fn next(&mut self) -> Result<EventResponse, Error> {
        loop {
            let last = self.last_event_id.map(|id| id.to_string());
            let frame = self.sse.next_frame(last.as_deref()).await?;
            match (frame.event.as_deref(), frame.data) {
                (None, Some(data)) => {
                    let event: EventResponse = decode_frame(&data, "event")?;
                    self.last_event_id = Some(event.id);
                    return Ok(event);
                }
                // The server ended the stream (this client fell behind): resume after
                // the last event handed out.
                (Some("dropped"), _) => self.sse.disconnect(),
                _ => {}
            }
        }
    }
}

/// A run's log, live (`GET /runs/:id/log/stream`). Call [`RunLogStream::next`] until it
/// answers `None`: the run ended and every line was handed out; [`RunLogStream::end`]
/// then holds the run as it ended.
#[derive(Debug)]
pub struct RunLogStream {
    sse: Sse,
    last: i64,
    end: Option<Box<RunResponse>>,
}

impl RunLogStream {
    pub(crate) fn new(client: Client, target: String, after: i64) -> Self {
        Self {
            sse: Sse::new(client, target),
            last: after,
            end: None,
        }
    }

    /// The number of the last line handed out (or the one the stream started after):
    /// where a new stream would resume.
    pub fn last(&self) -> i64 {
        self.last
    }

    /// The run as it ended, once [`next`](Self::next) answered `None`.
    pub fn end(&self) -> Option<&RunResponse> {
        self.end.as_deref()
    }

    /// Waits for the next line; `None` once the run is no longer running and every line
    /// was handed out (and on every call after). A broken connection, or the server
    /// ending the stream (the client fell behind, the stream reached its longest life),
    /// is resumed after the last line by itself; an error the server answers when
    /// (re)connecting (401, 404 …) or a server that cannot be reached is returned, and
    /// the next call tries again.
    pub async fn next(&mut self) -> Result<Option<LogLineResponse>, Error> {
        if self.end.is_some() {
            return Ok(None);
        }
        loop {
            let last = self.last.to_string();
            let frame = self.sse.next_frame(Some(&last)).await?;
            match (frame.event.as_deref(), frame.data) {
                (None, Some(data)) => {
                    let line: LogLineResponse = decode_frame(&data, "log line")?;
                    // A line already handed out (a server resuming a little early) is
                    // not handed out twice.
                    if line.seq <= self.last {
                        continue;
                    }
                    self.last = line.seq;
                    return Ok(Some(line));
                }
                (Some("end"), Some(data)) => {
                    let run: RunResponse = decode_frame(&data, "end")?;
                    self.end = Some(Box::new(run));
                    self.sse.disconnect();
                    return Ok(None);
                }
                (Some("dropped"), _) => self.sse.disconnect(),
                _ => {}
            }
        }
    }
}

/// The JSON of one frame's `data`, or what it should have been.
fn decode_frame<T: serde::de::DeserializeOwned>(data: &str, what: &str) -> Result<T, Error> {
    serde_json::from_str(data).map_err(|err| Error::Unexpected {
        status: 200,
        detail: format!("{what} frame: {err}"),
    })
}

/// One Server-Sent Events connection, reconnected when it breaks.
#[derive(Debug)]
struct Sse {
    client: Client,
    target: String,
    response: Option<Response>,
    buffer: Vec<u8>,
    retry: Duration,
}

/// One frame's fields (its `id:` is also in `data`, which the streams read).
#[derive(Debug, Default)]
struct Frame {
    event: Option<String>,
    data: Option<String>,
}

impl Sse {
    fn new(client: Client, target: String) -> Self {
        Self {
            client,
            target,
            response: None,
            buffer: Vec::new(),
            retry: Duration::from_secs(2),
        }
    }

    /// The next frame that names an event or carries data (comments skipped). Connects
    /// when not connected, resuming after `last` (sent as `Last-Event-ID`); after a
    /// broken or ended connection, waits the server's `retry` and connects again.
    async fn next_frame(&mut self, last: Option<&str>) -> Result<Frame, Error> {
        loop {
            if let Some(frame) = self.take_frame() {
                if frame.event.is_some() || frame.data.is_some() {
                    return Ok(frame);
                }
                continue;
            }
            let Some(response) = self.response.as_mut() else {
                self.connect(last).await?;
                continue;
            };
            if let Ok(Some(bytes)) = response.chunk().await {
                self.buffer.extend_from_slice(&bytes);
            } else {
                // The connection ended or broke: resume after the last frame.
                self.disconnect();
                tokio::time::sleep(self.retry).await;
            }
        }
    }

    /// Drops the connection: the next frame comes from a new one.
    fn disconnect(&mut self) {
        self.response = None;
        self.buffer.clear();
    }

    async fn connect(&mut self, last: Option<&str>) -> Result<(), Error> {
        let extra = Extra {
            event_stream: true,
            last_event_id: last,
            ..Extra::default()
        };
        let response = self
            .client
            .send(Method::GET, &self.target, None, extra)
            .await?;
        if !response.status().is_success() {
            let status = response.status().as_u16();
            let body = response.bytes().await?;
            return Err(from_answer(status, &body));
        }
        self.response = Some(response);
        Ok(())
    }

    /// The next complete frame in the buffer, if one has arrived.
    fn take_frame(&mut self) -> Option<Frame> {
        let end = self.buffer.windows(2).position(|w| w == b"\n\n")?;
        let raw: Vec<u8> = self.buffer.drain(..end + 2).collect();
        let text = String::from_utf8_lossy(&raw);
        let mut frame = Frame::default();
        for line in text.lines() {
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => frame.event = Some(value.to_owned()),
                "data" => {
                    let data = frame.data.get_or_insert_with(String::new);
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(value);
                }
                "retry" => {
                    if let Ok(ms) = value.parse::<u64>() {
                        self.retry = Duration::from_millis(ms);
                    }
                }
                _ => {}
            }
        }
        Some(frame)
    }
}
