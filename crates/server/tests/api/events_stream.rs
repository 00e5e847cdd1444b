//! `GET /events/stream`: the organization's events as Server-Sent Events, each with its
//! id; `Last-Event-ID` resumes exactly after an event; heartbeats; filters of
//! `GET /events`; a bound on open streams; a client that stops reading is dropped with a
//! reason (writers never wait for it); an event written through one instance reaches a
//! stream on another.

use std::collections::HashSet;
use std::time::Duration;

use muster_domain::model::{AgentStatus, Event, EventId, OrgId};
use muster_domain::ports::{EventLog, transact};
use muster_http::StreamOptions;
use reqwest::Method;
use serde_json::Value;
use uuid::Uuid;

use crate::helpers::{Agent, TestApp, assert_error, send, str_of};

/// Quick polls and heartbeats, so that the tests wait little.
pub(crate) fn quick() -> StreamOptions {
    StreamOptions {
        poll: Duration::from_millis(20),
        heartbeat: Duration::from_millis(700),
        ..StreamOptions::default()
    }
}

api_tests!(with crate::events_stream::quick();
    events_arrive_live_with_their_ids,
    filters_and_bad_input_are_checked,
    resuming_after_a_disconnect_loses_nothing,
    heartbeats_keep_an_idle_stream_alive,
    concurrent_writers_lose_nothing,
    an_event_on_one_instance_reaches_a_stream_on_another,
);

/// One stream at most per instance.
mod bounded {
    use super::open_streams_are_bounded;

    api_tests!(with muster_http::StreamOptions {
        max_streams: 1,
        ..crate::events_stream::quick()
    };
        open_streams_are_bounded,
    );
}

/// Streams that live two seconds.
mod short_lived {
    use super::a_stream_ends_at_its_longest_life_and_credentials_are_checked_again;

    api_tests!(with muster_http::StreamOptions {
        lifetime: std::time::Duration::from_secs(2),
        ..crate::events_stream::quick()
    };
        a_stream_ends_at_its_longest_life_and_credentials_are_checked_again,
    );
}

/// A buffer of 16 events, so that a client that stops reading is soon dropped.
mod slow_client {
    use super::a_client_that_stops_reading_is_dropped_and_resumes;

    api_tests!(with muster_http::StreamOptions {
        buffer: 16,
        ..crate::events_stream::quick()
    };
        a_client_that_stops_reading_is_dropped_and_resumes,
    );
}

/// One Server-Sent Events frame: `: comment` lines, `id:`, `event:` and `data:` fields.
#[derive(Debug, Default, Clone)]
pub(crate) struct Frame {
    pub(crate) comments: Vec<String>,
    pub(crate) id: Option<String>,
    pub(crate) event: Option<String>,
    pub(crate) data: Option<String>,
}

impl Frame {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(self.data.as_deref().unwrap()).unwrap()
    }
}

/// An open stream, read frame by frame.
pub(crate) struct Sse {
    response: reqwest::Response,
    buffer: String,
}

impl Sse {
    /// Reads `response` (a stream that opened).
    pub(crate) fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next frame, or `None` when the stream ended; fails after `within`.
    pub(crate) async fn frame(&mut self, within: Duration) -> Option<Frame> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let raw: String = self.buffer.drain(..end + 2).collect();
                return Some(parse(&raw));
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .expect("no frame in time")
                .unwrap();
            match chunk {
                Some(bytes) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                None => return None,
            }
        }
    }

    /// The next frame that carries an event (heartbeats skipped), within 10 s.
    pub(crate) async fn event(&mut self) -> Frame {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let frame = self.frame(left).await.expect("stream ended");
            if frame.data.is_some() {
                return frame;
            }
        }
    }
}

fn parse(raw: &str) -> Frame {
    let mut frame = Frame::default();
    for line in raw.lines().filter(|l| !l.is_empty()) {
        if let Some(comment) = line.strip_prefix(':') {
            frame.comments.push(comment.trim().to_owned());
        } else if let Some((field, value)) = line.split_once(": ") {
            match field {
                "id" => frame.id = Some(value.to_owned()),
                "event" => frame.event = Some(value.to_owned()),
                "data" => frame.data = Some(value.to_owned()),
                _ => {}
            }
        }
    }
    frame
}

/// A signed `GET path` on the instance at `base`, with `Last-Event-ID` when given.
fn stream_request(
    app: &TestApp,
    base: &str,
    agent: &Agent,
    path: &str,
    last: Option<&str>,
) -> reqwest::RequestBuilder {
    // Only a bound on the whole stream: every read has its own, shorter deadline (see
    // `Sse::frame`), which is what catches a stalled stream. A stream that keeps
    // delivering may take long on a loaded machine (12,000 events in `slow_client`).
    let mut request = app
        .signed_on(base, agent, Method::GET, path, None)
        .timeout(Duration::from_secs(600));
    if let Some(last) = last {
        request = request.header("Last-Event-ID", last);
    }
    request
}

/// Opens a stream (asserting 200 and the SSE headers) and reads its opening frame, so
/// that what is written next is after its start.
async fn open_at(app: &TestApp, base: &str, path: &str, last: Option<&str>) -> Sse {
    let response = stream_request(app, base, &app.org.hr, path, last)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    let mut sse = Sse {
        response,
        buffer: String::new(),
    };
    let first = sse.frame(Duration::from_secs(10)).await.unwrap();
    assert_eq!(first.comments, ["connected"], "{first:?}");
    sse
}

async fn open(app: &TestApp, path: &str, last: Option<&str>) -> Sse {
    open_at(app, &app.url(""), path, last).await
}

async fn events_arrive_live_with_their_ids(app: &TestApp) {
    let before = app.task_titled(&app.org.hr, "Before the stream").await;
    let mut sse = open(app, "/events/stream", None).await;
    let task = app.task_titled(&app.org.hr, "Watch me").await;
    let frame = sse.event().await;
    let event = frame.json();
    assert_eq!(event["type"], "task.created");
    assert_eq!(str_of(&event, "entityId"), task, "not the earlier {before}");
    let id = frame.id.clone().unwrap();
    assert_eq!(str_of(&event, "id"), id, "the SSE id is the event's id");
    // The same event, field for field, as GET /events/:id shows it.
    let stored = app.get(&app.org.hr, &format!("/events/{id}")).await;
    assert_eq!(stored.data(), &event);
    // The next change follows in order; the other organization's never shows.
    app.task_titled(&app.other.hr, "Elsewhere").await;
    let comment = app
        .post(
            &app.org.hr,
            &format!("/tasks/{task}/comments"),
            r#"{"body":"On it"}"#,
        )
        .await;
    assert_eq!(comment.status, 200, "{}", comment.text);
    let next = sse.event().await.json();
    assert_eq!(str_of(&next, "orgId"), app.org.id.to_string());
    assert_ne!(str_of(&next, "id"), id);
}

async fn filters_and_bad_input_are_checked(app: &TestApp) {
    let mut sse = open(app, "/events/stream?type=task.updated", None).await;
    let task = app.task_titled(&app.org.hr, "Filtered").await;
    let updated = app
        .signed(
            &app.org.hr,
            Method::PATCH,
            &format!("/tasks/{task}"),
            Some(r#"{"title":"Filtered, renamed"}"#),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(updated.status(), 200);
    let event = sse.event().await.json();
    assert_eq!(
        event["type"], "task.updated",
        "task.created was filtered out"
    );
    assert_eq!(str_of(&event, "entityId"), task);

    for (path, message) in [
        ("/events/stream?severity=loud", "severity"),
        (
            "/events/stream?page=2",
            "page and limit do not apply to a stream",
        ),
        ("/events/stream?colour=red", "colour"),
        ("/events/stream?startDate=yesterday", "startDate"),
    ] {
        let reply = send(stream_request(app, &app.url(""), &app.org.hr, path, None)).await;
        assert_error(&reply, 400, message);
    }
    let reply = send(stream_request(
        app,
        &app.url(""),
        &app.org.hr,
        "/events/stream",
        Some("not-an-id"),
    ))
    .await;
    assert_error(
        &reply,
        400,
        "Last-Event-ID must be the id (a UUID) of an event",
    );
    // Another organization's event is not a place to resume from.
    let theirs = app.task_titled(&app.other.hr, "Theirs").await;
    let their_event = str_of(&app.events_of(&app.other.hr, &theirs).await[0], "id");
    let reply = send(stream_request(
        app,
        &app.url(""),
        &app.org.hr,
        "/events/stream",
        Some(&their_event),
    ))
    .await;
    assert_error(&reply, 404, "not found");
    let reply = send(app.anonymous(Method::GET, "/events/stream")).await;
    assert_eq!(reply.status, 401);
    let reply = send(app.signed(&app.org.hr, Method::POST, "/events/stream", Some("{}"))).await;
    assert_eq!(reply.status, 405);
}

async fn resuming_after_a_disconnect_loses_nothing(app: &TestApp) {
    let mut sse = open(app, "/events/stream?type=task.created", None).await;
    let first = app.task_titled(&app.org.hr, "Seen").await;
    let seen = sse.event().await;
    assert_eq!(str_of(&seen.json(), "entityId"), first);
    drop(sse);

    let mut missed = Vec::new();
    for n in 0..5 {
        missed.push(app.task_titled(&app.org.hr, &format!("Missed {n}")).await);
    }
    let last = seen.id.unwrap();
    let mut sse = open(app, "/events/stream?type=task.created", Some(&last)).await;
    for expected in &missed {
        let event = sse.event().await.json();
        assert_eq!(&str_of(&event, "entityId"), expected, "in order, none lost");
    }
    let live = app.task_titled(&app.org.hr, "After the resume").await;
    let event = sse.event().await.json();
    assert_eq!(str_of(&event, "entityId"), live, "no duplicate before it");
}

async fn concurrent_writers_lose_nothing(app: &TestApp) {
    let mut sse = open(app, "/events/stream?type=task.created", None).await;
    let writers = (0..8).map(|w| async move {
        let mut ids = Vec::new();
        for n in 0..25 {
            ids.push(app.task_titled(&app.org.hr, &format!("w{w} n{n}")).await);
        }
        ids
    });
    let written: HashSet<String> = futures_util::future::join_all(writers)
        .await
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(written.len(), 200);
    let mut seen = HashSet::new();
    while seen.len() < written.len() {
        let event = sse.event().await.json();
        let task = str_of(&event, "entityId");
        assert!(written.contains(&task), "not one of ours: {task}");
        assert!(seen.insert(task.clone()), "twice: {task}");
    }
}

async fn heartbeats_keep_an_idle_stream_alive(app: &TestApp) {
    let mut sse = open(app, "/events/stream", None).await;
    for _ in 0..2 {
        let frame = sse.frame(Duration::from_secs(5)).await.unwrap();
        assert_eq!(frame.comments, ["heartbeat"], "{frame:?}");
        assert!(frame.data.is_none());
    }
}

async fn an_event_on_one_instance_reaches_a_stream_on_another(app: &TestApp) {
    let sibling = app.sibling().await;
    let mut sse = open_at(app, &sibling.base, "/events/stream?type=task.created", None).await;
    let task = app.task_titled(&app.org.hr, "Written on A").await;
    let event = sse.event().await.json();
    assert_eq!(str_of(&event, "entityId"), task);
    drop(sse);
    TestApp::stop_sibling(sibling).await;
}

async fn open_streams_are_bounded(app: &TestApp) {
    let sse = open(app, "/events/stream", None).await;
    let refused = send(stream_request(
        app,
        &app.url(""),
        &app.org.hr,
        "/events/stream",
        None,
    ))
    .await;
    assert_error(
        &refused,
        503,
        "Too many open event streams (1); retry later",
    );
    assert!(refused.headers.contains_key("retry-after"));
    // The place is free again once the client goes away.
    drop(sse);
    let mut reopened = None;
    for _ in 0..50 {
        let response = stream_request(app, &app.url(""), &app.org.hr, "/events/stream", None)
            .send()
            .await
            .unwrap();
        if response.status() == 200 {
            reopened = Some(response);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(reopened.is_some(), "the slot was never given back");
}

/// Appends `n` copies of event `id` with fresh ids and the type `test.bulk`, in one
/// transaction (far more than the stream buffers; no route writes events in bulk).
async fn append_copies(app: &TestApp, id: &str, n: u32) {
    let db = &app.db().db;
    let org = OrgId::from_uuid(app.org.id);
    let template = EventLog::get(db, org, EventId::from_uuid(Uuid::parse_str(id).unwrap()))
        .await
        .unwrap()
        .unwrap();
    let copies: Vec<Event> = (0..n)
        .map(|_| Event {
            id: EventId::from_uuid(Uuid::now_v7()),
            event_type: "test.bulk".to_owned(),
            ..template.clone()
        })
        .collect();
    transact(db, move |tx| {
        Box::pin(async move {
            // In statements of a thousand rows: PostgreSQL binds at most 65,535 values.
            for chunk in copies.chunks(1_000) {
                tx.append_events(chunk).await?;
            }
            Ok(())
        })
    })
    .await
    .unwrap();
}

async fn a_client_that_stops_reading_is_dropped_and_resumes(app: &TestApp) {
    const COPIES: u32 = 12_000;
    let task = app.task_titled(&app.org.hr, "Template").await;
    let template = str_of(&app.events_of(&app.org.hr, &task).await[0], "id");
    let mut sse = open(app, "/events/stream?type=test.bulk", None).await;
    append_copies(app, &template, COPIES).await;
    // The client reads nothing for a while: the server fills what the network and the
    // stream's buffer hold, waits one heartbeat interval, and lets the client go. Writers
    // carry on meanwhile.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let written = app.task_titled(&app.org.hr, "Not held up").await;
    assert!(!written.is_empty());
    tokio::time::sleep(Duration::from_secs(3)).await;

    let mut seen = HashSet::new();
    let mut last = None;
    let reason = loop {
        let frame = sse
            .frame(Duration::from_secs(20))
            .await
            .expect("the stream ended without saying why");
        if frame.event.as_deref() == Some("dropped") {
            break frame.json();
        }
        if let Some(id) = frame.id {
            assert!(seen.insert(id.clone()), "duplicate {id}");
            last = Some(id);
        }
    };
    assert!(
        reason["reason"]
            .as_str()
            .unwrap()
            .contains("reconnect with Last-Event-ID"),
        "{reason}"
    );
    assert!(sse.frame(Duration::from_secs(5)).await.is_none(), "ended");
    let received = u32::try_from(seen.len()).unwrap();
    assert!(received < COPIES, "dropped before the end ({received})");

    // Resuming after the last event it got hands over exactly the rest.
    let mut sse = open(app, "/events/stream?type=test.bulk", last.as_deref()).await;
    while seen.len() < COPIES as usize {
        let frame = sse.event().await;
        let id = frame.id.unwrap();
        assert!(seen.insert(id.clone()), "duplicate {id} after the resume");
    }
}

async fn a_stream_ends_at_its_longest_life_and_credentials_are_checked_again(app: &TestApp) {
    let worker = app.worker(&app.org).await;
    let response = stream_request(app, &app.url(""), &worker, "/events/stream", None)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut sse = Sse {
        response,
        buffer: String::new(),
    };
    // The worker is suspended while its stream is open: the stream ends by itself...
    crate::stored::change_agent(app, &worker, |a| a.status = AgentStatus::Suspended).await;
    let reason = loop {
        let frame = sse
            .frame(Duration::from_secs(10))
            .await
            .expect("ended without saying why");
        if frame.event.as_deref() == Some("dropped") {
            break frame.json();
        }
    };
    assert!(
        reason["reason"].as_str().unwrap().contains("longest life"),
        "{reason}"
    );
    assert!(sse.frame(Duration::from_secs(5)).await.is_none());
    // ... and reconnecting shows the credentials again: refused now. (The credential
    // cache forgets a suspension within a second.)
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let again = send(stream_request(
        app,
        &app.url(""),
        &worker,
        "/events/stream",
        None,
    ))
    .await;
    assert_error(&again, 401, "agent is not active");
}
