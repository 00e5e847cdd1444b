//! What the request log shows: never a credential carried in the path (an inbound
//! webhook's key), always the request's route.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

use crate::Scratch;
use crate::shutdown::{sigterm, start_with, stderr_of, wait_exit};

#[test]
fn an_inbound_key_in_the_path_never_reaches_the_log() {
    let scratch = Scratch::new();
    let mut server = start_with(&scratch, &[("MUSTER_LOG", "info")], Stdio::piped());
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let body = r#"{"title":"from a form"}"#;
    let request = format!(
        "POST /api/v1/webhooks/inbound/leaky-key-0123456789 HTTP/1.1\r\nHost: localhost\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");

    sigterm(&server);
    assert!(wait_exit(&mut server).success());
    let logs = stderr_of(&mut server);
    assert!(
        logs.contains("/api/v1/webhooks/inbound/***"),
        "the request is logged by its route:\n{logs}"
    );
    assert!(
        !logs.contains("leaky-key"),
        "the key reached the log:\n{logs}"
    );
}
