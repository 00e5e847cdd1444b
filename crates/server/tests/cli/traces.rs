//! With `MUSTER_OTLP_ENDPOINT` set, `muster serve` sends its spans over OTLP/HTTP to a
//! collector: here a receiver on loopback that keeps every request it is sent. The
//! request's span carries its request id; the database work is spans of its own.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use crate::Scratch;
use crate::shutdown::{sigterm, start_with, stderr_of, wait_exit};

/// One request a loopback receiver got: its path, headers (names in lower case) and body.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

/// Accepts OTLP/HTTP exports on loopback, answering each `200`.
pub(crate) fn receiver() -> (u16, Arc<Mutex<Vec<Received>>>) {
    receiver_answering("application/x-protobuf", b"")
}

/// A receiver on loopback that keeps every request it gets and answers each `200` with
/// `answer` as `content_type`.
pub(crate) fn receiver_answering(
    content_type: &'static str,
    answer: &'static [u8],
) -> (u16, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let got = Arc::new(Mutex::new(Vec::new()));
    let keep = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let keep = keep.clone();
            std::thread::spawn(move || serve(stream, &keep, content_type, answer));
        }
    });
    (port, got)
}

/// Reads requests on one connection (keep-alive) until it closes.
fn serve(stream: TcpStream, keep: &Mutex<Vec<Received>>, content_type: &str, answer: &[u8]) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line.split(' ').nth(1).unwrap_or("").to_owned();
        let mut headers = HashMap::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.insert(name.to_ascii_lowercase(), value.trim().to_owned());
            }
        }
        let length = headers
            .get("content-length")
            .map_or(0, |length| length.parse().unwrap());
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        keep.lock().unwrap().push(Received {
            path,
            headers,
            body,
        });
        write!(
            writer,
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            answer.len()
        )
        .unwrap();
        writer.write_all(answer).unwrap();
    }
}

/// Creates a task over plain HTTP; answers the `x-request-id` of the answer.
fn create_task(port: u16) -> String {
    create_task_with(port, "")
}

/// [`create_task`] with `headers` (each line ended by `\r\n`).
fn create_task_with(port: u16, headers: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = r#"{"title":"traced"}"#;
    let request = format!(
        "POST /tasks HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         {headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    answer
        .lines()
        .find_map(|l| l.strip_prefix("x-request-id: "))
        .expect("the answer has an x-request-id header")
        .trim()
        .to_owned()
}

#[test]
fn spans_reach_the_collector_with_the_request_id_and_the_database_work() {
    let (collector, got) = receiver();
    let scratch = Scratch::new();
    let endpoint = format!("http://127.0.0.1:{collector}");
    let mut server = start_with(
        &scratch,
        &[
            ("MUSTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("MUSTER_AUTH_MODE", "none"),
        ],
        Stdio::null(),
    );
    let request_id = create_task(server.port);
    // Stopping flushes what the batch exporter still holds.
    sigterm(&server);
    assert!(wait_exit(&mut server).success());

    let exports = got.lock().unwrap();
    assert!(!exports.is_empty(), "nothing reached the collector");
    for export in exports.iter() {
        assert_eq!(export.path, "/v1/traces");
        assert_eq!(
            export.headers.get("content-type").map(String::as_str),
            Some("application/x-protobuf")
        );
    }
    let spans: Vec<Span> = exports
        .iter()
        .flat_map(|e| {
            ExportTraceServiceRequest::decode(e.body.as_slice())
                .unwrap()
                .resource_spans
        })
        .inspect(|r| {
            let service = r
                .resource
                .as_ref()
                .map(|res| attribute(&res.attributes, "service.name"));
            assert_eq!(service, Some(Some("muster".to_owned())));
        })
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .collect();
    let named = |name: &str| {
        spans
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| unreachable!("no span {name:?} among {:?}", names(&spans)))
    };
    let request = named("POST /tasks");
    assert_eq!(
        attribute(&request.attributes, "request_id"),
        Some(request_id)
    );
    assert_eq!(
        attribute(&request.attributes, "http.route"),
        Some("/tasks".to_owned())
    );
    // The unit of work runs inside the request, its transaction inside it, and each
    // statement inside the transaction.
    let child_of = |parent: &Span, name: &str| {
        spans
            .iter()
            .find(|s| s.name == name && s.parent_span_id == parent.span_id)
            .unwrap_or_else(|| {
                unreachable!("no {name:?} under {:?}: {:?}", parent.name, names(&spans))
            })
    };
    let unit = child_of(request, "unit_of_work");
    let transaction = child_of(unit, "db.transaction");
    let insert = child_of(transaction, "db.tx.insert_task");
    assert_eq!(insert.trace_id, request.trace_id);
}

pub(crate) fn names(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}

/// The string value of the attribute `key`, if there is one.
pub(crate) fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|a| a.key == key).and_then(|a| {
        match a.value.as_ref()?.value.as_ref()? {
            Value::StringValue(text) => Some(text.clone()),
            _ => None,
        }
    })
}

#[test]
fn an_endpoint_that_is_not_a_url_is_refused_at_start() {
    let out = crate::muster()
        .args(["serve", "--otlp-endpoint", "collector:4318"])
        .output()
        .unwrap();
    crate::assert_one_clear_error(
        &out,
        "MUSTER_OTLP_ENDPOINT must be an http:// or https:// URL",
    );
}

#[test]
fn log_lines_carry_the_trace_and_span_ids_of_their_request() {
    let (collector, _got) = receiver();
    let scratch = Scratch::new();
    let endpoint = format!("http://127.0.0.1:{collector}");
    let mut server = start_with(
        &scratch,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("MUSTER_AUTH_MODE", "none"),
            ("MUSTER_LOG_FORMAT", "json"),
            ("MUSTER_LOG", "info"),
        ],
        Stdio::piped(),
    );
    let request_id = create_task_with(
        server.port,
        "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n",
    );
    sigterm(&server);
    assert!(wait_exit(&mut server).success());
    let logs = stderr_of(&mut server);
    let line: serde_json::Value = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|l| l["span"]["request_id"] == request_id.as_str())
        .unwrap_or_else(|| unreachable!("no log line of the request:\n{logs}"));
    assert_eq!(line["span"]["trace_id"], "0af7651916cd43dd8448eb211c80319c");
    let span_id = line["span"]["span_id"].as_str().unwrap();
    assert_eq!(span_id.len(), 16);
    assert_ne!(span_id, "b7ad6b7169203331");
}

#[test]
fn a_bad_standard_setting_is_refused_at_start_with_one_line() {
    for (name, value, expected) in [
        (
            "OTEL_TRACES_SAMPLER",
            "sometimes",
            "OTEL_TRACES_SAMPLER must be always_on",
        ),
        (
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "grpc",
            "OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf",
        ),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "novalue",
            "OTEL_RESOURCE_ATTRIBUTES must be key=value pairs",
        ),
    ] {
        let out = crate::muster()
            .args(["serve"])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
            .env(name, value)
            .output()
            .unwrap();
        crate::assert_one_clear_error(&out, expected);
    }
}

#[test]
fn database_spans_never_reach_the_log_even_at_debug() {
    let scratch = Scratch::new();
    let mut server = start_with(
        &scratch,
        &[("MUSTER_LOG", "debug"), ("MUSTER_AUTH_MODE", "none")],
        Stdio::piped(),
    );
    create_task(server.port);
    sigterm(&server);
    assert!(wait_exit(&mut server).success());
    let logs = stderr_of(&mut server);
    assert!(logs.contains("POST"), "the request is logged:\n{logs}");
    assert!(
        !logs.contains("db.transaction"),
        "a database span was logged:\n{logs}"
    );
    assert!(
        !logs.contains("db.tx."),
        "a database span was logged:\n{logs}"
    );
}
