//! `GET /runs/:id/log/stream`: a run's log as Server-Sent Events, one per line with the
//! line's number for its id; `Last-Event-ID` (or `?after=`) resumes right after a line;
//! `event: end` with the run closes the stream once the run ended and its log was sent;
//! another organization's run is not found and a bad `Last-Event-ID` is refused. And
//! `POST /runs/:id/stop {reason?}`: the reason goes into `run.stop_requested`.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::events_stream::{Frame, Sse};
use crate::helpers::{Agent, TestApp, assert_error, assert_error_code, send, str_of};
use crate::runs_support::{run_of, running};

api_tests!(with crate::events_stream::quick();
    lines_appended_while_connected_arrive,
    resuming_sends_only_the_later_lines,
    the_stream_ends_with_the_run_once_it_finished,
    the_stream_is_refused_across_organizations_and_for_bad_input,
    a_stop_keeps_its_reason_in_its_event,
);

/// A signed `GET path` as `agent`, with `Last-Event-ID` when given.
fn stream_request(
    app: &TestApp,
    agent: &Agent,
    path: &str,
    last: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut request = app
        .signed(agent, Method::GET, path, None)
        .timeout(Duration::from_secs(120));
    if let Some(last) = last {
        request = request.header("Last-Event-ID", last);
    }
    request
}

/// Opens the live log of `run` as `reader` (asserting 200 and the SSE headers) and
/// reads its opening frame.
async fn open(app: &TestApp, reader: &Agent, run: &str, query: &str, last: Option<&str>) -> Sse {
    let path = format!("/runs/{run}/log/stream{query}");
    let response = stream_request(app, reader, &path, last)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    let mut sse = Sse::new(response);
    let first = sse.frame(Duration::from_secs(10)).await.unwrap();
    assert_eq!(first.comments, ["connected"], "{first:?}");
    sse
}

/// Appends `texts` to `run`'s log as its agent (stdout lines).
async fn append(app: &TestApp, worker: &Agent, run: &str, texts: &[&str]) {
    let lines: Vec<Value> = texts
        .iter()
        .map(|text| json!({"stream": "stdout", "text": text}))
        .collect();
    let reply = app
        .post(
            worker,
            &format!("/runs/{run}/log"),
            &json!({ "lines": lines }).to_string(),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

/// Finishes `run` as its agent.
async fn finish(app: &TestApp, worker: &Agent, run: &str) {
    let body = json!({"status": "succeeded", "exitCode": 0});
    let reply = app
        .post(worker, &format!("/runs/{run}/finish"), &body.to_string())
        .await;
    assert_eq!(reply.data()["status"], "succeeded");
}

/// The next line event: `(its id, its text)`, checking that the id is the line's `seq`.
async fn line(sse: &mut Sse) -> (i64, String) {
    let frame = sse.event().await;
    assert_eq!(frame.event, None, "a line, not {frame:?}");
    let data = frame.json();
    let seq = data["seq"].as_i64().unwrap();
    assert_eq!(frame.id.as_deref(), Some(seq.to_string().as_str()));
    (seq, str_of(&data, "text"))
}

/// The next frame that names an event or carries data (heartbeats skipped), within 10 s.
async fn next_event(sse: &mut Sse) -> Option<Frame> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let frame = sse.frame(left).await?;
        if frame.data.is_some() || frame.event.is_some() {
            return Some(frame);
        }
    }
}

/// Reads the `end` event (asserting it and that the stream closes after it): the run.
async fn end(sse: &mut Sse) -> Value {
    let frame = next_event(sse).await.expect("an end event");
    assert_eq!(frame.event.as_deref(), Some("end"), "{frame:?}");
    assert_eq!(frame.id, None, "the end leaves the last line's id in place");
    let run = frame.json();
    assert!(
        sse.frame(Duration::from_secs(10)).await.is_none(),
        "the stream ends after `end`"
    );
    run
}

async fn lines_appended_while_connected_arrive(app: &TestApp) {
    let (worker, _task, run) = running(app, 0, &json!({})).await;
    append(app, &worker, &run, &["before one", "before two"]).await;
    // Anyone of the organization follows it: here its HR agent.
    let hr = &app.org.hr;
    let mut sse = open(app, hr, &run, "", None).await;
    assert_eq!(line(&mut sse).await, (1, "before one".to_owned()));
    let second = sse.event().await;
    // The same line, field for field, as `GET /runs/:id/log` shows it.
    let page = app.get(hr, &format!("/runs/{run}/log?after=1")).await;
    assert_eq!(second.json(), page.body["data"][0], "{}", page.text);
    assert_eq!(second.id.as_deref(), Some("2"));

    append(app, &worker, &run, &["live three"]).await;
    assert_eq!(line(&mut sse).await, (3, "live three".to_owned()));
    append(app, &worker, &run, &["live four", "live five"]).await;
    assert_eq!(line(&mut sse).await, (4, "live four".to_owned()));
    assert_eq!(line(&mut sse).await, (5, "live five".to_owned()));
    // An idle stream of a running run keeps sending heartbeats, not an end.
    let idle = sse.frame(Duration::from_secs(5)).await.unwrap();
    assert_eq!(idle.comments, ["heartbeat"], "{idle:?}");
}

async fn resuming_sends_only_the_later_lines(app: &TestApp) {
    let (worker, _task, run) = running(app, 0, &json!({})).await;
    append(app, &worker, &run, &["one", "two", "three", "four", "five"]).await;
    let hr = &app.org.hr;
    // A browser's reconnection: the last id it saw.
    let mut sse = open(app, hr, &run, "", Some("3")).await;
    assert_eq!(line(&mut sse).await, (4, "four".to_owned()));
    assert_eq!(line(&mut sse).await, (5, "five".to_owned()));
    append(app, &worker, &run, &["six"]).await;
    assert_eq!(line(&mut sse).await, (6, "six".to_owned()), "none twice");
    drop(sse);
    // `after` in the query does the same; `Last-Event-ID` wins over it (a browser keeps
    // the first URL when it reconnects).
    let mut sse = open(app, hr, &run, "?after=5", None).await;
    assert_eq!(line(&mut sse).await, (6, "six".to_owned()));
    drop(sse);
    let mut sse = open(app, hr, &run, "?after=1", Some(" 4 ")).await;
    assert_eq!(line(&mut sse).await, (5, "five".to_owned()));
    drop(sse);
    // After the last line, the next one is the first sent.
    let mut sse = open(app, hr, &run, "", Some("6")).await;
    append(app, &worker, &run, &["seven"]).await;
    assert_eq!(line(&mut sse).await, (7, "seven".to_owned()));
}

async fn the_stream_ends_with_the_run_once_it_finished(app: &TestApp) {
    let (worker, _task, run) = running(app, 0, &json!({})).await;
    let hr = &app.org.hr;
    let mut sse = open(app, hr, &run, "", None).await;
    append(app, &worker, &run, &["working", "done"]).await;
    finish(app, &worker, &run).await;
    assert_eq!(line(&mut sse).await, (1, "working".to_owned()));
    assert_eq!(line(&mut sse).await, (2, "done".to_owned()));
    let ended = end(&mut sse).await;
    assert_eq!(str_of(&ended, "id"), run);
    assert_eq!(ended["status"], "succeeded");
    assert_eq!(ended["exitCode"], 0);
    assert_eq!(ended["logLines"], 2);
    assert_eq!(
        ended,
        run_of(app, hr, &run).await,
        "the run as GET shows it"
    );

    // A finished run's stream sends what is left, then the end, at once.
    let mut sse = open(app, hr, &run, "", Some("1")).await;
    assert_eq!(line(&mut sse).await, (2, "done".to_owned()));
    assert_eq!(end(&mut sse).await["status"], "succeeded");
    let mut sse = open(app, hr, &run, "?after=2", None).await;
    assert_eq!(end(&mut sse).await["status"], "succeeded");
    // A run that ends without a line ends its stream too.
    let (worker, _task, quiet) = running(app, 0, &json!({})).await;
    let mut sse = open(app, &worker, &quiet, "", None).await;
    finish(app, &worker, &quiet).await;
    assert_eq!(end(&mut sse).await["logLines"], 0);
}

async fn the_stream_is_refused_across_organizations_and_for_bad_input(app: &TestApp) {
    let (worker, _task, run) = running(app, 0, &json!({})).await;
    append(app, &worker, &run, &["secret"]).await;
    let path = format!("/runs/{run}/log/stream");
    // Another organization's run is not there, whatever it asks.
    let theirs = send(stream_request(app, &app.other.hr, &path, None)).await;
    assert_error_code(&theirs, 404, "run_not_found");
    let theirs = send(stream_request(app, &app.other.hr, &path, Some("0"))).await;
    assert_error_code(&theirs, 404, "run_not_found");
    let unknown = format!("/runs/{}/log/stream", uuid::Uuid::now_v7());
    let reply = send(stream_request(app, &app.org.hr, &unknown, None)).await;
    assert_error_code(&reply, 404, "run_not_found");
    let reply = send(stream_request(
        app,
        &app.org.hr,
        "/runs/nope/log/stream",
        None,
    ))
    .await;
    assert_eq!(reply.status, 400, "{}", reply.text);

    // A Last-Event-ID that is not a line's number: 400, as the event stream answers one
    // that is not an event's id.
    for last in [
        "abc",
        "-1",
        "1.5",
        "019a0000-0000-7000-8000-000000000000",
        "",
    ] {
        let reply = send(stream_request(app, &app.org.hr, &path, Some(last))).await;
        assert_error(
            &reply,
            400,
            "Last-Event-ID must be the number (0 or more) of a line of the run's log",
        );
        assert_eq!(reply.body["code"], "validation_failed", "{last:?}");
    }
    for (query, message) in [
        ("?after=-1", "after must be 0 or more"),
        ("?after=x", "after"),
        ("?limit=5", "limit"),
    ] {
        let reply = send(stream_request(
            app,
            &app.org.hr,
            &format!("{path}{query}"),
            None,
        ))
        .await;
        assert_error(&reply, 400, message);
        assert_eq!(reply.body["code"], "validation_failed", "{query}");
    }
    let reply = send(app.anonymous(Method::GET, &path)).await;
    assert_eq!(reply.status, 401);
    let reply = send(app.signed(&app.org.hr, Method::POST, &path, Some("{}"))).await;
    assert_eq!(reply.status, 405);
}

async fn a_stop_keeps_its_reason_in_its_event(app: &TestApp) {
    let hr = &app.org.hr;
    let (worker, _task, run) = running(app, 0, &json!({})).await;
    let stop = format!("/runs/{run}/stop");
    // Too long: refused, and nothing changes.
    let long = json!({"reason": "x".repeat(501)}).to_string();
    let refused = app.post(hr, &stop, &long).await;
    assert_error(&refused, 400, "reason must be at most 500 characters");
    assert_eq!(refused.body["code"], "validation_failed");
    let refused = app.post(hr, &stop, r#"{"reason": 5}"#).await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert_eq!(run_of(app, hr, &run).await["stopRequested"], false);
    assert!(
        app.events_of_type(hr, &run, "run.stop_requested")
            .await
            .is_empty()
    );

    let asked = app
        .post(hr, &stop, r#"{"reason": "  over the time box \n"}"#)
        .await;
    assert_eq!(asked.data()["stopRequested"], true);
    assert_eq!(asked.data()["stopReason"], "requested");
    let events = app.events_of_type(hr, &run, "run.stop_requested").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["payload"]["reason"], "requested");
    assert_eq!(events[0]["payload"]["note"], "over the time box", "trimmed");
    // Asked again (with another reason): nothing changes, no second event.
    let again = app.post(hr, &stop, r#"{"reason": "again"}"#).await;
    assert_eq!(again.data()["stopReason"], "requested");
    let events = app.events_of_type(hr, &run, "run.stop_requested").await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        worker.uuid.to_string(),
        str_of(&events[0]["payload"], "agentId")
    );

    // No body at all, an empty object and a blank reason still stop; the event has no
    // note.
    for body in ["", "{}", r#"{"reason": "   "}"#, r#"{"reason": null}"#] {
        let (_worker, _task, run) = running(app, 0, &json!({})).await;
        let asked = app.post(hr, &format!("/runs/{run}/stop"), body).await;
        assert_eq!(asked.data()["stopReason"], "requested", "{body:?}");
        let events = app.events_of_type(hr, &run, "run.stop_requested").await;
        assert_eq!(events.len(), 1, "{body:?}");
        assert_eq!(events[0]["payload"].get("note"), None, "{body:?}");
    }
    // The longest reason is kept whole.
    let (_worker, _task, run) = running(app, 0, &json!({})).await;
    let longest = "é".repeat(500);
    let body = json!({ "reason": longest }).to_string();
    let asked = app.post(hr, &format!("/runs/{run}/stop"), &body).await;
    assert_eq!(asked.data()["stopRequested"], true);
    let events = app.events_of_type(hr, &run, "run.stop_requested").await;
    assert_eq!(events[0]["payload"]["note"], longest.as_str());
}
