//! A small HTTP/1.1 client for the outbound adapters: hyper's pooled client over rustls
//! (ring provider, Mozilla's roots from `webpki-roots`) that also speaks plain `http://`,
//! with a deadline on every exchange and a cap on every response body.

use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// How long one exchange (connect, request, whole response) may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest response body read; a longer one is an error.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Why an exchange gave no response. The messages name no URL, header or body, so that
/// they can be logged without leaking a secret.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The exchange took longer than the deadline.
    #[error("no complete answer within {0:?}")]
    Timeout(Duration),
    /// The connection could not be made or broke (DNS, TCP, TLS, HTTP framing).
    #[error("the request failed")]
    Transport(#[source] hyper_util::client::legacy::Error),
    /// The response body could not be read, or exceeded [`MAX_BODY_BYTES`].
    #[error("the response body could not be read or exceeds {MAX_BODY_BYTES} bytes")]
    Body(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// A response read in full.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// The status line's code.
    pub status: StatusCode,
    /// The body, at most [`MAX_BODY_BYTES`] long.
    pub body: Bytes,
}

/// A pooled HTTP/1.1 client for `https://` (rustls) and `http://` URLs.
#[derive(Clone)]
pub struct HttpClient {
    inner: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    timeout: Duration,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client with the ring crypto provider, the `webpki-roots` trust anchors and
    /// [`DEFAULT_TIMEOUT`]. Fails only when rustls rejects its own safe defaults.
    pub fn new() -> Result<Self, rustls::Error> {
        let connector = HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())?
            .https_or_http()
            .enable_http1()
            .build();
        let inner = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        Ok(Self {
            inner,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// The same client with another deadline per exchange.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The deadline of one exchange.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends `request` and reads the whole response, within the deadline. Redirects are
    /// not followed: a 3xx is returned like any other status.
    pub async fn send(&self, request: Request<Full<Bytes>>) -> Result<HttpResponse, HttpError> {
        tokio::time::timeout(self.timeout, self.exchange(request))
            .await
            .map_err(|_| HttpError::Timeout(self.timeout))?
    }

    async fn exchange(&self, request: Request<Full<Bytes>>) -> Result<HttpResponse, HttpError> {
        let response = self
            .inner
            .request(request)
            .await
            .map_err(HttpError::Transport)?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_BODY_BYTES)
            .collect()
            .await
            .map_err(HttpError::Body)?
            .to_bytes();
        Ok(HttpResponse { status, body })
    }
}
