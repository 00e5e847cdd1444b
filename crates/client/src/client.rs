//! The client itself: building, signing, sending, retrying and decoding one call.

use std::sync::Arc;
use std::time::Duration;

use muster_wire::auth::{LoginBody, RefreshBody, TokensResponse};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{Method, Response, StatusCode, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::credentials::{Credentials, UserSession, sign_agent};
use crate::error::{Error, from_answer};

/// A Muster API client. Cloning is cheap and clones share their connections and, for a
/// user, their tokens.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: Arc<Url>,
    credentials: Arc<Credentials>,
    retries: u32,
    trace: Option<TraceSource>,
}

/// Where a client reads the W3C trace context (`traceparent`, `tracestate`) each call
/// carries: the caller's tracing, called as each request is made ([`Client::traced`]).
pub type TraceSource = fn() -> Option<(String, Option<String>)>;

/// How many times a call is sent again after the connection failed.
const DEFAULT_RETRIES: u32 = 2;

impl Client {
    /// A client of the server at `base_url` (e.g. `http://127.0.0.1:8080`) acting as
    /// `credentials`.
    pub fn new(base_url: &str, credentials: Credentials) -> Result<Self, Error> {
        let base = Url::parse(base_url)
            .map_err(|err| Error::Request(format!("{base_url} is not a URL: {err}")))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(Error::Request(format!(
                "{base_url} is not an http:// or https:// URL"
            )));
        }
        // This client brings its own TLS configuration; installing ring as the process's
        // default too (a no-op when one is set) keeps other reqwest clients of the same
        // build working, since this crate turns reqwest's provider-less TLS on for all.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .user_agent(concat!("muster-client/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .tls_backend_preconfigured(tls_config()?)
            .build()?;
        Ok(Self {
            http,
            base: Arc::new(base),
            credentials: Arc::new(credentials),
            retries: DEFAULT_RETRIES,
            trace: None,
        })
    }

    /// A client that signs every request as the agent `agent_id` with `secret`.
    pub fn agent(
        base_url: &str,
        agent_id: impl Into<String>,
        secret: impl Into<String>,
    ) -> Result<Self, Error> {
        Self::new(
            base_url,
            Credentials::Agent {
                agent_id: agent_id.into(),
                secret: secret.into(),
            },
        )
    }

    /// A client that sends the API key `key` (`msk_…`).
    pub fn api_key(base_url: &str, key: impl Into<String>) -> Result<Self, Error> {
        Self::new(base_url, Credentials::ApiKey(key.into()))
    }

    /// A client without credentials, for the public routes.
    pub fn anonymous(base_url: &str) -> Result<Self, Error> {
        Self::new(base_url, Credentials::None)
    }

    /// Signs a user in (`POST /auth/login`) and answers a client acting as that user.
    /// Its access token is renewed with the refresh token whenever it runs out.
    ///
    /// An account with a second factor answers [`Error::TwoFactorRequired`] until
    /// `totp_code` is given.
    pub async fn login(base_url: &str, body: &LoginBody) -> Result<Self, Error> {
        let anonymous = Self::anonymous(base_url)?;
        let answer: serde_json::Value = anonymous.call(Method::POST, "/auth/login", body).await?;
        if answer
            .get("requiresTwoFactor")
            .and_then(serde_json::Value::as_bool)
            == Some(true)
        {
            return Err(Error::TwoFactorRequired);
        }
        let tokens: TokensResponse =
            serde_json::from_value(answer).map_err(|err| Error::Unexpected {
                status: 200,
                detail: err.to_string(),
            })?;
        Ok(Self {
            credentials: Arc::new(Credentials::User(UserSession::new(&tokens))),
            ..anonymous
        })
    }

    /// How many times a call is sent again when the connection fails (2 by default).
    /// A POST is retried only with the same `Idempotency-Key`, so it takes effect once.
    #[must_use]
    pub fn with_retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// A client whose calls carry the trace context `source` answers (when it answers
    /// one): the server then records its spans in the caller's trace. `muster worker`
    /// passes the current span's, so a run is one trace from claim to finish.
    #[must_use]
    pub fn traced(mut self, source: TraceSource) -> Self {
        self.trace = Some(source);
        self
    }

    /// Who this client acts as.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The server's base URL.
    pub fn base_url(&self) -> &Url {
        &self.base
    }

    /// `GET path` (with its query), decoded as `R`.
    pub(crate) async fn get<R: DeserializeOwned>(&self, path: &str) -> Result<R, Error> {
        decode(self.send(Method::GET, path, None, Extra::default()).await?).await
    }

    /// `GET path?query`, decoded as `R`.
    pub(crate) async fn get_query<Q: Serialize, R: DeserializeOwned>(
        &self,
        path: &str,
        query: &Q,
    ) -> Result<R, Error> {
        self.get(&with_query(path, query)?).await
    }

    /// `method path` with a JSON body, decoded as `R`.
    pub(crate) async fn call<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &B,
    ) -> Result<R, Error> {
        let body = serde_json::to_vec(body).map_err(|err| Error::Request(err.to_string()))?;
        decode(
            self.send(method, path, Some(body), Extra::default())
                .await?,
        )
        .await
    }

    /// `method path` without a body, decoded as `R`.
    pub(crate) async fn call_empty<R: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
    ) -> Result<R, Error> {
        decode(self.send(method, path, None, Extra::default()).await?).await
    }

    /// Sends one call: signed or with a bearer token, renewed and retried as needed.
    /// Answers the response whatever its status; [`decode`] turns it into a result.
    pub(crate) async fn send(
        &self,
        method: Method,
        target: &str,
        body: Option<Vec<u8>>,
        extra: Extra<'_>,
    ) -> Result<Response, Error> {
        let url = self
            .base
            .join(target)
            .map_err(|err| Error::Request(format!("{target}: {err}")))?;
        // Every POST that carries a credential takes an Idempotency-Key (unless it
        // changes nothing): a retry after a broken connection then takes effect at most
        // once.
        let key = (method == Method::POST
            && !extra.no_idempotency_key
            && !matches!(*self.credentials, Credentials::None))
        .then(|| uuid::Uuid::now_v7().to_string());
        let mut attempt = 0;
        let mut renewed = false;
        loop {
            let request = self
                .request(&method, &url, body.as_deref(), key.as_deref(), extra)
                .await?;
            match request.send().await {
                Ok(response)
                    if response.status() == StatusCode::UNAUTHORIZED
                        && !renewed
                        && matches!(*self.credentials, Credentials::User(_)) =>
                {
                    // An access token that ran out early (or was renewed elsewhere):
                    // renew once and send again.
                    renewed = true;
                    if self.renew().await.is_err() {
                        return Ok(response);
                    }
                }
                Ok(response) => return Ok(response),
                Err(err)
                    if attempt < self.retries
                        && retryable(&err, &method, key.is_some() || extra.no_idempotency_key) =>
                {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
                }
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// One attempt's request, with fresh credentials headers.
    async fn request(
        &self,
        method: &Method,
        url: &Url,
        body: Option<&[u8]>,
        idempotency_key: Option<&str>,
        extra: Extra<'_>,
    ) -> Result<reqwest::RequestBuilder, Error> {
        let mut request = self.http.request(method.clone(), url.clone());
        if let Some(body) = body {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_vec());
        }
        if let Some(key) = idempotency_key {
            request = request.header("Idempotency-Key", key);
        }
        if extra.event_stream {
            request = request.header(ACCEPT, "text/event-stream");
        }
        if let Some(id) = extra.last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        if let Some((traceparent, tracestate)) = self.trace.and_then(|source| source()) {
            request = request.header("traceparent", traceparent);
            if let Some(tracestate) = tracestate {
                request = request.header("tracestate", tracestate);
            }
        }
        Ok(match &*self.credentials {
            Credentials::Agent { agent_id, secret } => {
                let target = match url.query() {
                    Some(query) => format!("{}?{query}", url.path()),
                    None => url.path().to_owned(),
                };
                sign_agent(
                    request,
                    agent_id,
                    secret,
                    method.as_str(),
                    &target,
                    body.unwrap_or_default(),
                )
            }
            Credentials::ApiKey(key) => request.header(AUTHORIZATION, format!("Bearer {key}")),
            Credentials::User(session) => {
                let (mut access, due) = session.access().await;
                if due {
                    self.renew().await?;
                    access = session.access().await.0;
                }
                request.header(AUTHORIZATION, format!("Bearer {access}"))
            }
            Credentials::None => request,
        })
    }

    /// Renews a user's tokens with `POST /auth/refresh` (sent directly: it carries no
    /// credentials and is never renewed itself).
    async fn renew(&self) -> Result<(), Error> {
        let Credentials::User(session) = &*self.credentials else {
            return Ok(());
        };
        let refresh_token = session.refresh_token().await;
        let url = self
            .base
            .join("/auth/refresh")
            .map_err(|err| Error::Request(err.to_string()))?;
        let body = RefreshBody {
            refresh_token: refresh_token.clone(),
        };
        let response = self.http.post(url).json(&body).send().await?;
        let fresh: TokensResponse = decode(response).await?;
        session.replace(&refresh_token, &fresh).await;
        Ok(())
    }

    /// The refresh token of a signed-in user (for `/auth/logout`).
    pub(crate) async fn refresh_token(&self) -> Option<String> {
        match &*self.credentials {
            Credentials::User(session) => Some(session.refresh_token().await),
            _ => None,
        }
    }
}

/// TLS for `https://` servers: rustls with the ring provider, trusting the Mozilla roots
/// (webpki-roots), HTTP/1.1.
fn tls_config() -> Result<rustls::ClientConfig, Error> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|err| Error::Request(format!("TLS: {err}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Headers a few calls add.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Extra<'a> {
    /// `Accept: text/event-stream`.
    pub(crate) event_stream: bool,
    /// `Last-Event-ID`: resume a stream after this event.
    pub(crate) last_event_id: Option<&'a str>,
    /// No `Idempotency-Key` on this POST (it changes nothing, so a retry is harmless
    /// and keeping its answer for a day is waste).
    pub(crate) no_idempotency_key: bool,
}

/// Whether a failed attempt may be sent again: reads, PATCH and DELETE always (they are
/// safe to repeat); a POST only when it is safe to repeat (an Idempotency-Key, or a
/// message that changes nothing), or when it never left.
fn retryable(err: &reqwest::Error, method: &Method, has_key: bool) -> bool {
    if err.is_connect() {
        return true;
    }
    let broken = err.is_timeout() || err.is_request();
    broken && (method != Method::POST || has_key)
}

/// `path?query`, or `path` when the query is empty.
pub(crate) fn with_query<Q: Serialize>(path: &str, query: &Q) -> Result<String, Error> {
    let query =
        serde_urlencoded::to_string(query).map_err(|err| Error::Request(err.to_string()))?;
    Ok(if query.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{query}")
    })
}

/// A 2xx answer decoded as `R` (an empty body reads as `null`, for `()` and `Option`);
/// anything else as the error it stands for.
pub(crate) async fn decode<R: DeserializeOwned>(response: Response) -> Result<R, Error> {
    let status = response.status().as_u16();
    let body = response.bytes().await?;
    if !(200..300).contains(&status) {
        return Err(from_answer(status, &body));
    }
    let json: &[u8] = if body.is_empty() { b"null" } else { &body };
    serde_json::from_slice(json).map_err(|err| Error::Unexpected {
        status,
        detail: err.to_string(),
    })
}

/// A login body for `email` and `password`, without a second factor.
pub fn login_body(email: impl Into<String>, password: impl Into<String>) -> LoginBody {
    LoginBody {
        email: Some(email.into()),
        password: password.into(),
        totp_code: None,
        org_id: None,
    }
}
