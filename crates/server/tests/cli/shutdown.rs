use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{Scratch, muster};

pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `muster serve` on a free port and waits until it answers.
pub(crate) fn start(scratch: &Scratch) -> Server {
    start_with(scratch, &[], Stdio::null())
}

pub(crate) fn start_with(scratch: &Scratch, env: &[(&str, &str)], stderr: Stdio) -> Server {
    start_on(&scratch.sqlite_url(), env, stderr)
}

/// Starts `muster serve` over the database at `url` on a free port and waits until it
/// answers.
pub(crate) fn start_on(url: &str, env: &[(&str, &str)], stderr: Stdio) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = muster()
        .args([
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--workers",
            "1",
        ])
        .args(["--database-url", url])
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    // Ready means answering HTTP, not just accepting connections: the port is bound
    // (and queues connections) before the server runs and handles signals.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !answers_health(port) {
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server { child, port }
}

/// Whether `GET /health` on `port` answers 200.
fn answers_health(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut status_line = String::new();
    BufReader::new(stream).read_line(&mut status_line).is_ok()
        && status_line.starts_with("HTTP/1.1 200")
}

/// Everything the stopped server wrote on its piped stderr.
pub(crate) fn stderr_of(server: &mut Server) -> String {
    let mut logs = String::new();
    server
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    logs
}

pub(crate) fn signal(server: &Server, name: &str) {
    let status = Command::new("kill")
        .args([name, &server.child.id().to_string()])
        .status();
    assert!(status.unwrap().success());
}

pub(crate) fn sigterm(server: &Server) {
    signal(server, "-TERM");
}

pub(crate) fn wait_exit(server: &mut Server) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "server did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_finishes_the_request_in_flight_then_exits_zero() {
    let scratch = Scratch::new();
    let mut server = start(&scratch);

    // Start a request whose body is still arriving when the signal comes.
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let body = r#"{"title":"in flight"}"#;
    let head = format!(
        "POST /tasks HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&body.as_bytes()[..5]).unwrap();
    std::thread::sleep(Duration::from_millis(300));

    sigterm(&server);
    std::thread::sleep(Duration::from_millis(300));
    stream.write_all(&body.as_bytes()[5..]).unwrap();

    // The request is answered (401: it is unsigned), not cut off.
    let mut status_line = String::new();
    let mut reader = BufReader::new(stream);
    reader.read_line(&mut status_line).unwrap();
    assert!(status_line.starts_with("HTTP/1.1 401"), "{status_line:?}");
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    assert!(rest.contains(r#""statusCode":401"#), "{rest}");

    let status = wait_exit(&mut server);
    assert!(status.success(), "exit status {status:?}");
    // New connections are refused once it has stopped.
    assert!(TcpStream::connect(("127.0.0.1", server.port)).is_err());
}

#[test]
fn sigterm_when_idle_exits_zero() {
    let scratch = Scratch::new();
    let mut server = start(&scratch);
    sigterm(&server);
    assert!(wait_exit(&mut server).success());
}

#[test]
fn sigint_exits_zero_too() {
    let scratch = Scratch::new();
    let mut server = start(&scratch);
    signal(&server, "-INT");
    assert!(wait_exit(&mut server).success());
}

#[test]
fn json_logs_carry_a_request_id_per_request() {
    let scratch = Scratch::new();
    let env = [("MUSTER_LOG_FORMAT", "json"), ("MUSTER_LOG", "info")];
    let mut server = start_with(&scratch, &env, Stdio::piped());
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let request_id = answer
        .lines()
        .find_map(|line| line.strip_prefix("x-request-id: "))
        .expect("x-request-id header")
        .to_owned();
    sigterm(&server);
    assert!(wait_exit(&mut server).success());

    let logs = stderr_of(&mut server);
    let lines: Vec<serde_json::Value> = logs
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    let request_line = lines
        .iter()
        .find(|l| l["span"]["request_id"] == request_id.as_str())
        .unwrap_or_else(|| panic!("no log line with request id {request_id}:\n{logs}"));
    assert_eq!(request_line["span"]["http.route"], "/health");
    assert_eq!(request_line["span"]["http.status_code"], 200);
}

#[test]
fn auth_mode_none_warns_that_the_service_is_open() {
    let scratch = Scratch::new();
    let env = [("MUSTER_AUTH_MODE", "none"), ("MUSTER_LOG", "warn")];
    let mut server = start_with(&scratch, &env, Stdio::piped());
    sigterm(&server);
    assert!(wait_exit(&mut server).success());
    let logs = stderr_of(&mut server);
    assert!(
        logs.contains("auth mode is `none`") && logs.contains("Do not expose this service"),
        "{logs}"
    );
}

/// An open event stream ends when the signal comes (its client told why, and to
/// reconnect), so the graceful shutdown does not wait for it for its whole timeout.
#[test]
fn sigterm_ends_open_event_streams_and_exits() {
    let scratch = Scratch::new();
    let env = [("MUSTER_AUTH_MODE", "none")];
    let mut server = start_with(&scratch, &env, Stdio::null());
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
        .write_all(b"GET /events/stream HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut seen = String::new();
    while !seen.contains(": connected") {
        let read = reader.read_line(&mut seen).unwrap();
        assert!(read > 0, "the stream ended before it began: {seen}");
    }
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");

    sigterm(&server);
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    assert!(
        rest.contains("event: dropped") && rest.contains("shutting down"),
        "{rest}"
    );
    assert!(wait_exit(&mut server).success());
}
