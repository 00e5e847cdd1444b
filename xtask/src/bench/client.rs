//! A minimal HTTP/1.1 client: one keep-alive TCP connection per virtual client, as wrk
//! does, so that the numbers measure the server and not a connection pool.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use muster_auth::signing;

use super::sign::{Credentials, sign_now};

/// One request, described before it is signed.
#[derive(Debug, Clone)]
pub struct Call {
    /// HTTP method.
    pub method: Method,
    /// Path plus `?query`, exactly as sent and signed.
    pub target: String,
    /// Raw JSON body; empty for none.
    pub body: Bytes,
    /// Whether the request carries the agent signature headers.
    pub signed: bool,
    /// A user's access token for `Authorization: Bearer` (webhook management).
    pub bearer: Option<String>,
    /// Other headers, sent as they are (a code host's event headers).
    pub headers: Vec<(&'static str, String)>,
}

impl Call {
    /// An unsigned `GET` (only `/health` and `/ready` take those).
    pub fn public_get(target: &str) -> Self {
        Self {
            method: Method::GET,
            target: target.to_owned(),
            body: Bytes::new(),
            signed: false,
            bearer: None,
            headers: Vec::new(),
        }
    }

    /// An unsigned `POST` with a JSON body (`/auth/login`).
    pub fn public_post(target: &str, body: String) -> Self {
        Self {
            method: Method::POST,
            target: target.to_owned(),
            body: Bytes::from(body),
            signed: false,
            bearer: None,
            headers: Vec::new(),
        }
    }

    /// A signed `GET`.
    pub fn get(target: String) -> Self {
        Self {
            method: Method::GET,
            target,
            body: Bytes::new(),
            signed: true,
            bearer: None,
            headers: Vec::new(),
        }
    }

    /// A request with a user's access token and a JSON body (empty for none).
    pub fn bearer(method: Method, target: &str, body: String, token: &str) -> Self {
        Self {
            method,
            target: target.to_owned(),
            body: Bytes::from(body),
            signed: false,
            bearer: Some(token.to_owned()),
            headers: Vec::new(),
        }
    }

    /// A code host's event `event` (delivery id `delivery`), signed with the
    /// connection's `secret` as the code host signs it.
    pub fn host_event(event: &str, delivery: String, body: String, secret: &str) -> Self {
        let signature = format!("sha256={}", signing::sign(secret, body.as_bytes()));
        Self {
            method: Method::POST,
            target: "/api/v1/integrations/codehost/webhook".to_owned(),
            body: Bytes::from(body),
            signed: false,
            bearer: None,
            headers: vec![
                ("X-Host-Event", event.to_owned()),
                ("X-Host-Delivery", delivery),
                ("X-Host-Signature-256", signature),
            ],
        }
    }

    /// A signed `POST` with a JSON body.
    pub fn post(target: String, body: String) -> Self {
        Self {
            method: Method::POST,
            target,
            body: Bytes::from(body),
            signed: true,
            bearer: None,
            headers: Vec::new(),
        }
    }
}

/// What came back, and how long it took from sending the first byte to reading the last.
#[derive(Debug)]
pub struct Answer {
    /// Status code.
    pub status: StatusCode,
    /// The whole body.
    pub body: Bytes,
    /// Round trip, signing excluded.
    pub latency: Duration,
}

impl Answer {
    /// A short description of a failed answer, for the error samples.
    pub fn describe(&self, call: &Call) -> String {
        let body = String::from_utf8_lossy(&self.body);
        let body: String = body.chars().take(300).collect();
        format!("{} {} -> {}: {body}", call.method, call.target, self.status)
    }
}

/// A single connection to the server, reopened after the server closes it.
#[derive(Debug)]
pub struct Client {
    addr: SocketAddr,
    host: String,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Client {
    /// A client that connects on its first request.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            host: addr.to_string(),
            sender: None,
        }
    }

    /// Sends `call`, signed by `credentials` when it is a signed call. A transport error
    /// drops the connection so that the next call opens a new one.
    pub async fn send(&mut self, call: &Call, credentials: &Credentials) -> anyhow::Result<Answer> {
        let request = self.request(call, credentials)?;
        let result = self.round_trip(request).await;
        if result.is_err() {
            self.sender = None;
        }
        result
    }

    fn request(
        &self,
        call: &Call,
        credentials: &Credentials,
    ) -> anyhow::Result<Request<Full<Bytes>>> {
        let mut builder = Request::builder()
            .method(call.method.clone())
            .uri(call.target.as_str())
            .header(HOST, self.host.as_str());
        if !call.body.is_empty() {
            builder = builder.header(CONTENT_TYPE, "application/json");
        }
        if let Some(token) = &call.bearer {
            builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        for (name, value) in &call.headers {
            builder = builder.header(*name, value.as_str());
        }
        if call.signed {
            let signed = sign_now(credentials, call.method.as_str(), &call.target, &call.body);
            builder = builder
                .header("X-Agent-ID", credentials.agent_id.as_str())
                .header("X-Timestamp", signed.timestamp)
                .header("X-Nonce", signed.nonce)
                .header("X-Signature", signed.signature);
        }
        builder
            .body(Full::new(call.body.clone()))
            .context("cannot build the request")
    }

    async fn round_trip(&mut self, request: Request<Full<Bytes>>) -> anyhow::Result<Answer> {
        let sender = self.connected().await?;
        sender.ready().await.context("connection closed")?;
        let started = Instant::now();
        let response = sender
            .send_request(request)
            .await
            .context("request failed")?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .context("cannot read the response body")?
            .to_bytes();
        Ok(Answer {
            status,
            body,
            latency: started.elapsed(),
        })
    }

    async fn connected(&mut self) -> anyhow::Result<&mut SendRequest<Full<Bytes>>> {
        if self.sender.as_ref().is_some_and(SendRequest::is_closed) {
            self.sender = None;
        }
        if self.sender.is_none() {
            let stream = TcpStream::connect(self.addr)
                .await
                .with_context(|| format!("cannot connect to {}", self.addr))?;
            // Small requests: do not let Nagle hold them back.
            stream.set_nodelay(true)?;
            let (sender, connection) = http1::handshake(TokioIo::new(stream))
                .await
                .context("HTTP handshake failed")?;
            // The connection task drives the socket; it ends when the sender is dropped.
            tokio::spawn(connection);
            self.sender = Some(sender);
        }
        self.sender.as_mut().context("no connection")
    }
}
