//! Reading `GET /events/stream` (Server-Sent Events), resuming after a drop.

use std::time::Duration;

use muster_wire::events::EventResponse;
use reqwest::{Method, Response};
use uuid::Uuid;

use crate::client::Extra;
use crate::error::from_answer;
use crate::{Client, Error};

/// A live stream of audit events. Call [`EventStream::next`] in a loop.
#[derive(Debug)]
pub struct EventStream {
    client: Client,
    target: String,
    last_event_id: Option<Uuid>,
    response: Option<Response>,
    buffer: Vec<u8>,
    retry: Duration,
}

/// One frame's fields (its `id:` is the event's, which `data` holds too).
#[derive(Debug, Default)]
struct Frame {
    event: Option<String>,
    data: Option<String>,
}

impl EventStream {
    pub(crate) fn new(client: Client, target: String, after: Option<Uuid>) -> Self {
        Self {
            client,
            target,
            last_event_id: after,
            response: None,
            buffer: Vec::new(),
            retry: Duration::from_secs(2),
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
            if let Some(frame) = self.take_frame() {
                match (frame.event.as_deref(), frame.data) {
                    (None, Some(data)) => {
                        let event: EventResponse =
                            serde_json::from_str(&data).map_err(|err| Error::Unexpected {
                                status: 200,
                                detail: format!("event frame: {err}"),
                            })?;
                        self.last_event_id = Some(event.id);
                        return Ok(event);
                    }
                    // The server ended the stream (this client fell behind): resume
                    // after the last event handed out.
                    (Some("dropped"), _) => self.reconnect_later(),
                    _ => {}
                }
                continue;
            }
            let Some(response) = self.response.as_mut() else {
                self.connect().await?;
                continue;
            };
            if let Ok(Some(bytes)) = response.chunk().await {
                self.buffer.extend_from_slice(&bytes);
            } else {
                // The connection ended or broke: resume after the last event.
                self.reconnect_later();
                tokio::time::sleep(self.retry).await;
            }
        }
    }

    fn reconnect_later(&mut self) {
        self.response = None;
        self.buffer.clear();
    }

    async fn connect(&mut self) -> Result<(), Error> {
        let last = self.last_event_id.map(|id| id.to_string());
        let extra = Extra {
            event_stream: true,
            last_event_id: last.as_deref(),
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
