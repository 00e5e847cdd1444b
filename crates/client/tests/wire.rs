//! What the client puts on the wire: agent signatures byte for byte as the documented
//! vectors say, over each request exactly as sent; and which POSTs carry an
//! `Idempotency-Key`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use muster_client::types::model::{TaskPriority, TaskStatus};
use muster_client::types::tasks::{CreateTaskRequest, ListTasksQuery};
use muster_client::{Client, Credentials};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const SECRET: &str = "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a";
const TIMESTAMP: &str = "1795000000";
const NONCE: &str = "0f8e9d2c-4b6a-4e1f-9a3d-7c5b2e1f0a9d";

/// (method, request target, raw body, X-Signature), as documented.
const VECTORS: [(&str, &str, &str, &str); 4] = [
    (
        "GET",
        "/tasks?status=todo&limit=5",
        "",
        "43b7abef5102706f37f7ca86c8fb99f4e0e3b957000ec16ea611bf1b344f0e62",
    ),
    (
        "POST",
        "/tasks",
        r#"{"title":"Write the report","priority":"high","tags":["q4"]}"#,
        "184d5eb61965750d632fb9668d371ab59a2978bdc7e077607e8bc7ba0a75dd99",
    ),
    (
        "POST",
        "/tasks/01936f7e-8a4b-7c3d-9e2f-1a2b3c4d5e6f/transition",
        r#"{"status": "in_progress", "reason": "starting"}"#,
        "583ec40485bfbd46a8b3a016badcf9e857eb07e3ecfb248cdc61e5af2f0ed672",
    ),
    (
        "DELETE",
        "/tasks/01936f7e-8a4b-7c3d-9e2f-1a2b3c4d5e6f/dependencies/01936f7e-8a4b-7c3d-9e2f-000000000001",
        "",
        "0c8904fb6052df951e7afa4ff11ee6de7abe7f7b62e097b38421a282890c91f6",
    ),
];

#[test]
fn agent_headers_reproduce_the_signing_vectors() {
    let agent = Credentials::agent("hr-acme", SECRET);
    for (method, target, body, signature) in VECTORS {
        let headers = agent
            .agent_headers(method, target, body.as_bytes(), TIMESTAMP, NONCE)
            .unwrap();
        assert_eq!(
            headers,
            [
                ("X-Agent-ID", "hr-acme".to_owned()),
                ("X-Timestamp", TIMESTAMP.to_owned()),
                ("X-Nonce", NONCE.to_owned()),
                ("X-Signature", signature.to_owned()),
            ],
            "{method} {target}"
        );
    }
    // Another secret, another signature; other credentials sign nothing.
    let other = Credentials::agent("hr-acme", "0".repeat(64));
    let (method, target, body, signature) = VECTORS[0];
    let headers = other
        .agent_headers(method, target, body.as_bytes(), TIMESTAMP, NONCE)
        .unwrap();
    assert_ne!(headers[3].1, signature);
    assert!(
        Credentials::ApiKey("msk_x".into())
            .agent_headers(method, target, b"", TIMESTAMP, NONCE)
            .is_none()
    );
}

/// One request as the server would read it.
struct Seen {
    method: String,
    target: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

/// Accepts one connection, reads one request, answers `answer` (a JSON body).
async fn capture_one(listener: TcpListener, answer: &'static str) -> Seen {
    let (mut socket, _) = listener.accept().await.unwrap();
    let mut raw = Vec::new();
    let mut buf = [0_u8; 4096];
    let head_end = loop {
        let n = socket.read(&mut buf).await.unwrap();
        assert!(n > 0, "connection closed before the headers ended");
        raw.extend_from_slice(&buf[..n]);
        if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
    };
    let head = String::from_utf8(raw[..head_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap().split(' ');
    let method = request_line.next().unwrap().to_owned();
    let target = request_line.next().unwrap().to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .map_or(0, |v| v.parse().unwrap());
    let mut body = raw[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut buf).await.unwrap();
        assert!(n > 0, "connection closed before the body ended");
        body.extend_from_slice(&buf[..n]);
    }
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    );
    socket.write_all(response.as_bytes()).await.unwrap();
    Seen {
        method,
        target,
        headers,
        body,
    }
}

/// The signature the request should carry, recomputed from what arrived.
fn expected_signature(seen: &Seen) -> String {
    Credentials::agent("hr-acme", SECRET)
        .agent_headers(
            &seen.method,
            &seen.target,
            &seen.body,
            &seen.headers["x-timestamp"],
            &seen.headers["x-nonce"],
        )
        .unwrap()[3]
        .1
        .clone()
}

#[tokio::test]
async fn what_the_client_sends_is_signed_as_sent() {
    // A query: the target signed is the path with its query, as on the request line.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(capture_one(listener, r#"{"data":[]}"#));
    let client = Client::agent(&base, "hr-acme", SECRET).unwrap();
    let query = ListTasksQuery {
        status: Some(TaskStatus::Todo),
        limit: Some(5),
        ..Default::default()
    };
    client.list_tasks(&query).await.unwrap();
    let seen = server.await.unwrap();
    assert_eq!(seen.target, "/tasks?status=todo&limit=5");
    assert_eq!(seen.headers["x-agent-id"], "hr-acme");
    assert_eq!(seen.headers["x-signature"], expected_signature(&seen));

    // A body: signed byte for byte as it went out, with a fresh nonce each time.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    // (The answer is not a task: only the request matters here.)
    let server = tokio::spawn(capture_one(listener, "{}"));
    let client = Client::agent(&base, "hr-acme", SECRET).unwrap();
    let body = CreateTaskRequest {
        title: "Write the report".to_owned(),
        priority: Some(TaskPriority::High),
        ..Default::default()
    };
    let _not_a_task = client.create_task(&body).await;
    let seen = server.await.unwrap();
    assert_eq!(
        (seen.method.as_str(), seen.target.as_str()),
        ("POST", "/tasks")
    );
    assert!(!seen.body.is_empty());
    assert_eq!(seen.headers["x-signature"], expected_signature(&seen));
    assert_ne!(seen.headers["x-nonce"], NONCE);
}

#[tokio::test]
async fn only_tool_calls_relayed_to_mcp_carry_an_idempotency_key() {
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"claim_task"}}"#,
            true,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, false),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, false),
    ];
    for (message, keyed) in cases {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(capture_one(listener, answer));
        let client = Client::agent(&base, "hr-acme", SECRET).unwrap();
        let relayed = client.mcp_message(message.as_bytes().to_vec()).await;
        let seen = server.await.unwrap();
        assert_eq!(relayed.unwrap().unwrap(), answer.as_bytes());
        assert_eq!(seen.body, message.as_bytes());
        assert_eq!(
            seen.headers.contains_key("idempotency-key"),
            keyed,
            "{message}"
        );
        assert_eq!(seen.headers["x-signature"], expected_signature(&seen));
    }
}
