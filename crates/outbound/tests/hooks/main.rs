//! The hook caller against a raw TCP listener on loopback: the SSRF guard refuses
//! loopback by name and by literal unless private targets are allowed, and a redirect is
//! answered as it is, never followed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use muster_auth::signing::HmacSha256;
use muster_domain::model::HookType;
use muster_domain::ports::{CallKind, HookCall, HookCaller};
use muster_outbound::{HttpHookCaller, TargetPolicy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A listener answering every connection with `response`; counts the connections.
async fn listener(response: &'static str) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            let mut buf = vec![0u8; 8192];
            let _ = stream.read(&mut buf).await;
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    });
    (port, count)
}

fn call(url: String) -> HookCall {
    HookCall {
        url,
        secret: Some("s".into()),
        timeout_ms: 2000,
        hook_type: HookType::Post,
        event_type: "task.created".into(),
        delivery_id: uuid::Uuid::now_v7(),
        body: b"{}".to_vec(),
        content_type: HookCall::JSON,
        headers: Vec::new(),
        kind: CallKind::Webhook,
        attempt: 1,
        trace: None,
    }
}

fn caller(allow_private: bool, allow_http: bool) -> HttpHookCaller {
    HttpHookCaller::new(
        TargetPolicy {
            allow_private,
            allow_http,
        },
        Arc::new(HmacSha256),
    )
    .unwrap()
}

const OK: &str = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}";

#[tokio::test]
async fn loopback_is_refused_by_default_and_reached_when_allowed() {
    let (port, connections) = listener(OK).await;
    let strict = caller(false, true);
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://2130706433:{port}/"),
    ] {
        let result = strict.call(&call(url.clone())).await;
        assert_eq!(result.status, None, "{url}");
        let error = result.error.unwrap();
        assert!(
            error.contains("cannot target internal/private IP addresses"),
            "{url}: {error}"
        );
    }
    let https_only = caller(true, false)
        .call(&call(format!("http://127.0.0.1:{port}/")))
        .await;
    assert!(https_only.error.unwrap().contains("url must use https"));
    assert_eq!(connections.load(Ordering::SeqCst), 0, "never connected");

    let relaxed = caller(true, true);
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
    ] {
        let result = relaxed.call(&call(url)).await;
        assert_eq!(result.status, Some(200), "{:?}", result.error);
        assert_eq!(result.error, None);
        assert_eq!(result.body, b"{}");
    }
    assert_eq!(connections.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_redirect_is_a_failure_not_followed() {
    let (target, followed) = listener(OK).await;
    let redirect: &'static str = Box::leak(
        format!(
            "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{target}/\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
        .into_boxed_str(),
    );
    let (port, _) = listener(redirect).await;
    let result = caller(true, true)
        .call(&call(format!("http://127.0.0.1:{port}/")))
        .await;
    assert_eq!(result.status, Some(302));
    assert!(result.error.unwrap().contains("302"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        followed.load(Ordering::SeqCst),
        0,
        "the redirect was not followed"
    );
}

#[tokio::test]
async fn a_silent_receiver_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let mut slow = call(format!("http://127.0.0.1:{port}/"));
    slow.timeout_ms = 1000;
    let started = std::time::Instant::now();
    let result = caller(true, true).call(&slow).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(result.status, None);
    assert!(result.error.unwrap().contains("no complete answer"));
    assert!(result.duration_ms >= 1000);
}
