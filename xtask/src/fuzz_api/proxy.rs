//! The signing proxy between schemathesis and `muster serve`. schemathesis fills the
//! security schemes of the document with placeholders; this proxy swaps them for real
//! credentials on the bytes it forwards: a fresh agent signature (timestamp, nonce,
//! HMAC over the exact method, target and body) or a real bearer token. A request that
//! carries no placeholder is forwarded unsigned, so schemathesis can still check that
//! a request without credentials is refused. Before signing, it applies the rules a
//! schema cannot state (`adjust.rs`).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use super::adjust;
use crate::bench::sign::{Credentials, sign_now};

/// The placeholder schemathesis sends as `X-Agent-ID` (and the other signing headers).
pub const AGENT_PLACEHOLDER: &str = "proxy-signs-this";
/// The placeholder bearer token for a user's access token.
pub const USER_PLACEHOLDER: &str = "proxy-user-token";
/// The placeholder bearer token for an API key.
pub const KEY_PLACEHOLDER: &str = "proxy-api-key";

/// A body larger than the server takes, so that its 413 is what the fuzzer sees.
const MAX_FORWARDED_BODY: usize = 4 * 1024 * 1024;

/// The real credentials the placeholders stand for.
pub struct RealCredentials {
    /// The agent that signs.
    pub agent: Credentials,
    /// An admin user's access token.
    pub user_token: String,
    /// An admin-scoped API key.
    pub api_key: String,
}

/// Starts the proxy on a free loopback port in front of `server`; it runs until the
/// runtime ends.
pub async fn start(server: SocketAddr, real: RealCredentials) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot bind the signing proxy")?;
    let addr = listener.local_addr()?;
    let real = Arc::new(real);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let real = Arc::clone(&real);
            tokio::spawn(async move {
                let service = service_fn(move |req| forward(server, Arc::clone(&real), req));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

type Answer = Response<http_body_util::combinators::BoxBody<Bytes, hyper::Error>>;

async fn forward(
    server: SocketAddr,
    real: Arc<RealCredentials>,
    req: Request<Incoming>,
) -> Result<Answer, std::convert::Infallible> {
    Ok(match relay(server, &real, req).await {
        Ok(answer) => answer,
        Err(err) => {
            let text = format!("signing proxy: {err:#}");
            Response::builder()
                .status(StatusCode::BAD_GATEWAY)
                .body(
                    Full::new(Bytes::from(text))
                        .map_err(|never| match never {})
                        .boxed(),
                )
                .unwrap_or_default()
        }
    })
}

async fn relay(
    server: SocketAddr,
    real: &RealCredentials,
    req: Request<Incoming>,
) -> anyhow::Result<Answer> {
    let (mut parts, body) = req.into_parts();
    let body = Limited::new(body, MAX_FORWARDED_BODY)
        .collect()
        .await
        .map_err(|e| anyhow::anyhow!("cannot read the request body: {e}"))?
        .to_bytes();
    let sent = parts
        .uri
        .path_and_query()
        .map_or_else(|| "/".to_owned(), ToString::to_string);
    let target = adjust::query(&sent);
    let path = parts.uri.path().to_owned();
    let body = adjust::body(parts.method.as_str(), &path, &body).map_or(body, Bytes::from);
    let headers = &mut parts.headers;
    let dropped: Vec<HeaderName> = headers
        .iter()
        .filter(|(name, value)| adjust::drop_header(&path, name.as_str(), value.as_bytes()))
        .map(|(name, _)| name.clone())
        .collect();
    for name in dropped {
        headers.remove(name);
    }
    if headers.contains_key(hyper::header::CONTENT_LENGTH) {
        headers.insert(hyper::header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    }
    if headers
        .get("x-agent-id")
        .is_some_and(|v| v.as_bytes() == AGENT_PLACEHOLDER.as_bytes())
    {
        let signed = sign_now(&real.agent, parts.method.as_str(), &target, &body);
        let mut put = |name: &'static str, value: &str| -> anyhow::Result<()> {
            headers.insert(HeaderName::from_static(name), HeaderValue::from_str(value)?);
            Ok(())
        };
        put("x-agent-id", &real.agent.agent_id)?;
        put("x-timestamp", &signed.timestamp)?;
        put("x-nonce", &signed.nonce)?;
        put("x-signature", &signed.signature)?;
    }
    let bearer = headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let swapped = match bearer {
        Some(USER_PLACEHOLDER) => Some(format!("Bearer {}", real.user_token)),
        Some(KEY_PLACEHOLDER) => Some(format!("Bearer {}", real.api_key)),
        _ => None,
    };
    if let Some(value) = swapped {
        headers.insert(hyper::header::AUTHORIZATION, HeaderValue::from_str(&value)?);
    }
    headers.insert(
        hyper::header::HOST,
        HeaderValue::from_str(&server.to_string())?,
    );
    parts.uri = target.parse()?;
    let upstream = Request::from_parts(parts, Full::new(body));

    let stream = TcpStream::connect(server)
        .await
        .context("cannot reach muster serve")?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let answer = sender.send_request(upstream).await?;
    // Streamed through (the event stream never ends by itself): dropped with the client.
    Ok(answer.map(BodyExt::boxed))
}
