//! A small HTTP/1.1 client for the outbound adapters: hyper's pooled client over rustls
//! (ring provider, Mozilla's roots from `webpki-roots`) that also speaks plain `http://`,
//! with a deadline on every exchange and a cap on every response body.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use crate::ssrf::{TargetPolicy, check_addresses};

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

/// A pooled HTTP/1.1 client for `https://` (rustls) and `http://` URLs. Every host name
/// is resolved through [`GuardedResolver`], so the address connected to is one that was
/// checked (decision D-81) when the client is [`guarded`](Self::guarded).
#[derive(Clone)]
pub struct HttpClient {
    inner: Client<HttpsConnector<HttpConnector<GuardedResolver>>, Full<Bytes>>,
    timeout: Duration,
}

/// Resolves host names for the client's connector and refuses the whole answer when one
/// of its addresses is blocked by the policy: the connector then connects only to
/// addresses that passed, so a DNS answer that changes after a check cannot redirect a
/// delivery (no DNS rebinding). IP-literal hosts never reach a resolver: callers check
/// them with [`crate::ssrf::parse_target`].
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    policy: TargetPolicy,
}

impl tower_service::Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let policy = self.policy;
        Box::pin(async move {
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            check_addresses(&addresses, policy).map_err(|refusal| {
                std::io::Error::new(std::io::ErrorKind::PermissionDenied, refusal.to_string())
            })?;
            Ok(addresses.into_iter())
        })
    }
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
    /// [`DEFAULT_TIMEOUT`], that may reach any address (the identity provider's URLs are
    /// the operator's own settings). Fails only when rustls rejects its own safe defaults.
    pub fn new() -> Result<Self, rustls::Error> {
        Self::guarded(TargetPolicy {
            allow_private: true,
            allow_http: true,
        })
    }

    /// [`new`](Self::new), resolving host names through a [`GuardedResolver`] applying
    /// `policy`: the client of webhook deliveries.
    pub fn guarded(policy: TargetPolicy) -> Result<Self, rustls::Error> {
        let mut http = HttpConnector::new_with_resolver(GuardedResolver { policy });
        http.enforce_http(false);
        let connector = HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())?
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
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
