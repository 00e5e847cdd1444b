//! The identity provider of the sign-in redirect flow (decision D-16): OAuth 2.0
//! authorization code with `state` and PKCE (S256), then the `OpenID` Connect userinfo
//! endpoint for the e-mail. Endpoints, client id and secret come from the configuration;
//! [`OAuthProviderConfig::google`] fills in Google's.
//!
//! No secret (client secret, authorization code, verifier, access token) ever reaches an
//! error message or a log line.

use std::time::Duration;

use async_trait::async_trait;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use muster_domain::ports::{BoxError, ExternalIdentity, IdentityProvider, ProviderError};
use serde_json::Value;

use crate::http_client::{HttpClient, HttpError, HttpResponse};

mod config;

pub use config::{
    DEFAULT_SCOPES, GOOGLE_AUTHORIZE_URL, GOOGLE_TOKEN_URL, GOOGLE_USERINFO_URL,
    OAuthProviderConfig,
};

/// Why an [`HttpIdentityProvider`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum OAuthSetupError {
    /// A configured URL is not an absolute `http://` or `https://` URL.
    #[error("the OAuth {0} is not an absolute http(s) URL")]
    InvalidUrl(&'static str),
    /// rustls rejected its configuration.
    #[error("the TLS client could not be configured")]
    Tls(#[from] rustls::Error),
}

/// The [`IdentityProvider`] port over HTTP: any OAuth 2.0 / `OpenID` Connect provider
/// with a token and a userinfo endpoint (Google by default).
#[derive(Debug, Clone)]
pub struct HttpIdentityProvider {
    config: OAuthProviderConfig,
    token_uri: Uri,
    userinfo_uri: Uri,
    client: HttpClient,
}

impl HttpIdentityProvider {
    /// A provider for `config`, with a 10 s deadline on every request. Fails when a
    /// configured URL is not an absolute `http(s)` URL.
    pub fn new(config: OAuthProviderConfig) -> Result<Self, OAuthSetupError> {
        parse_url(&config.authorize_url, "authorize URL")?;
        let token_uri = parse_url(&config.token_url, "token URL")?;
        let userinfo_uri = parse_url(&config.userinfo_url, "userinfo URL")?;
        Ok(Self {
            config,
            token_uri,
            userinfo_uri,
            client: HttpClient::new()?,
        })
    }

    /// The same provider with another deadline per request.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.client = self.client.with_timeout(timeout);
        self
    }

    /// The configuration this provider was built with.
    pub fn config(&self) -> &OAuthProviderConfig {
        &self.config
    }

    /// Exchanges the code for an access token at the token endpoint.
    async fn access_token(&self, code: &str, code_verifier: &str) -> Result<String, ProviderError> {
        let form = form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", code)
            .append_pair("redirect_uri", &self.config.redirect_url)
            .append_pair("client_id", &self.config.client_id)
            .append_pair("client_secret", &self.config.client_secret)
            .append_pair("code_verifier", code_verifier)
            .finish();
        let request = Request::builder()
            .method(Method::POST)
            .uri(self.token_uri.clone())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ACCEPT, "application/json")
            .body(Full::new(Bytes::from(form)))
            .map_err(|e| unavailable(e.into()))?;
        let response = self.send(request, "token").await?;
        let status = response.status;
        if status.is_client_error() && !is_transient(status) {
            let error = json(&response, "token")
                .ok()
                .and_then(|body| body.get("error").and_then(Value::as_str).map(str::to_owned))
                .filter(|error| is_error_code(error))
                .unwrap_or_else(|| status.to_string());
            return Err(ProviderError::Refused(error));
        }
        if !status.is_success() {
            return Err(failure(format!("the token endpoint answered {status}")));
        }
        match json(&response, "token")?.get("access_token") {
            Some(Value::String(token)) if !token.is_empty() => Ok(token.clone()),
            _ => Err(failure("the token endpoint answered no access token")),
        }
    }

    /// Asks the userinfo endpoint whose token `access_token` is.
    async fn userinfo(&self, access_token: &str) -> Result<ExternalIdentity, ProviderError> {
        let mut bearer = HeaderValue::try_from(format!("Bearer {access_token}"))
            .map_err(|_| failure("the access token is not a valid header value"))?;
        bearer.set_sensitive(true);
        let request = Request::builder()
            .method(Method::GET)
            .uri(self.userinfo_uri.clone())
            .header(AUTHORIZATION, bearer)
            .header(ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| unavailable(e.into()))?;
        let response = self.send(request, "userinfo").await?;
        let status = response.status;
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(ProviderError::Refused(format!("userinfo: {status}")));
        }
        if !status.is_success() {
            return Err(failure(format!("the userinfo endpoint answered {status}")));
        }
        let body = json(&response, "userinfo")?;
        let Some(email) = body.get("email").and_then(Value::as_str) else {
            return Err(failure("the userinfo endpoint answered no e-mail"));
        };
        let email_verified = match body.get("email_verified") {
            Some(Value::Bool(verified)) => *verified,
            Some(Value::String(verified)) => verified.eq_ignore_ascii_case("true"),
            _ => false,
        };
        Ok(ExternalIdentity {
            email: email.to_owned(),
            email_verified,
        })
    }

    async fn send(
        &self,
        request: Request<Full<Bytes>>,
        endpoint: &'static str,
    ) -> Result<HttpResponse, ProviderError> {
        self.client.send(request).await.map_err(|source| {
            ProviderError::Unavailable(Box::new(EndpointError { endpoint, source }))
        })
    }
}

/// A failed exchange with one of the provider's endpoints.
#[derive(Debug, thiserror::Error)]
#[error("the {endpoint} endpoint could not be asked")]
struct EndpointError {
    endpoint: &'static str,
    #[source]
    source: HttpError,
}

#[async_trait]
impl IdentityProvider for HttpIdentityProvider {
    fn authorize_url(&self, state: &str, code_challenge: &str) -> String {
        let query = form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", &self.config.redirect_url)
            .append_pair("scope", &self.config.scopes)
            .append_pair("state", state)
            .append_pair("code_challenge", code_challenge)
            .append_pair("code_challenge_method", "S256")
            .finish();
        let base = &self.config.authorize_url;
        let separator = match base.rfind('?') {
            None => "?",
            Some(at) if at + 1 == base.len() || base.ends_with('&') => "",
            Some(_) => "&",
        };
        format!("{base}{separator}{query}")
    }

    async fn identify(
        &self,
        code: &str,
        code_verifier: &str,
    ) -> Result<ExternalIdentity, ProviderError> {
        let access_token = self.access_token(code, code_verifier).await?;
        self.userinfo(&access_token).await
    }
}

fn parse_url(url: &str, what: &'static str) -> Result<Uri, OAuthSetupError> {
    let uri: Uri = url.parse().map_err(|_| OAuthSetupError::InvalidUrl(what))?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
    if scheme_ok && uri.host().is_some_and(|host| !host.is_empty()) {
        Ok(uri)
    } else {
        Err(OAuthSetupError::InvalidUrl(what))
    }
}

/// The body as JSON; the parser's message is dropped, as it may quote the body.
fn json(response: &HttpResponse, endpoint: &str) -> Result<Value, ProviderError> {
    serde_json::from_slice(&response.body)
        .map_err(|_| failure(format!("the {endpoint} endpoint answered no JSON")))
}

/// A 4xx that says "try again later" rather than "no".
fn is_transient(status: StatusCode) -> bool {
    status == StatusCode::REQUEST_TIMEOUT || status == StatusCode::TOO_MANY_REQUESTS
}

/// Whether `error` looks like an RFC 6749 error code, safe to pass on as it is.
fn is_error_code(error: &str) -> bool {
    !error.is_empty()
        && error.len() <= 64
        && error
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn failure(message: impl Into<String>) -> ProviderError {
    unavailable(message.into().into())
}

fn unavailable(cause: BoxError) -> ProviderError {
    ProviderError::Unavailable(cause)
}
