//! The three ways a caller proves who it is, and how each goes onto a request.

use std::time::{Duration, Instant};

use muster_signing::RequestSignature;
use muster_wire::auth::TokensResponse;
use reqwest::RequestBuilder;
use tokio::sync::Mutex;

/// Who the client acts as.
pub enum Credentials {
    /// An agent: every request is signed with HMAC-SHA256 and a fresh nonce.
    Agent {
        /// The agent's handle (`X-Agent-ID`), e.g. `builder-1`.
        agent_id: String,
        /// The 64-hex secret handed out at registration.
        secret: String,
    },
    /// An API key (`msk_…`), sent as a bearer token.
    ApiKey(String),
    /// A signed-in user: an access token, refreshed with the refresh token when it
    /// expires.
    User(UserSession),
    /// No credentials: `/health`, `/ready`, `/auth/login` and the like.
    None,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Agent { agent_id, .. } => f
                .debug_struct("Agent")
                .field("agent_id", agent_id)
                .finish_non_exhaustive(),
            Self::ApiKey(_) => f.write_str("ApiKey(***)"),
            Self::User(_) => f.write_str("User(***)"),
            Self::None => f.write_str("None"),
        }
    }
}

/// The tokens of a signed-in user, renewed as they run out.
pub struct UserSession {
    tokens: Mutex<Tokens>,
}

impl std::fmt::Debug for UserSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UserSession(***)")
    }
}

struct Tokens {
    access: String,
    refresh: String,
    /// When to refresh before sending: a little before the access token expires.
    renew_at: Instant,
}

/// How long before its expiry an access token is renewed, so a request never leaves
/// with one that runs out on the way.
const RENEW_MARGIN: Duration = Duration::from_secs(30);

impl UserSession {
    /// A session from the tokens of a login or a refresh.
    pub fn new(tokens: &TokensResponse) -> Self {
        Self {
            tokens: Mutex::new(Tokens::from(tokens)),
        }
    }

    /// The current access token, and whether it is due for renewal.
    pub(crate) async fn access(&self) -> (String, bool) {
        let tokens = self.tokens.lock().await;
        (tokens.access.clone(), Instant::now() >= tokens.renew_at)
    }

    /// The refresh token (for `/auth/refresh` and `/auth/logout`).
    pub(crate) async fn refresh_token(&self) -> String {
        self.tokens.lock().await.refresh.clone()
    }

    /// Takes the tokens of a refresh, unless another task has already renewed the pair
    /// `stale_refresh` belonged to.
    pub(crate) async fn replace(&self, stale_refresh: &str, fresh: &TokensResponse) {
        let mut tokens = self.tokens.lock().await;
        if tokens.refresh == stale_refresh {
            *tokens = Tokens::from(fresh);
        }
    }
}

impl From<&TokensResponse> for Tokens {
    fn from(tokens: &TokensResponse) -> Self {
        let lifetime = Duration::from_secs(tokens.expires_in).saturating_sub(RENEW_MARGIN);
        Self {
            access: tokens.access_token.clone(),
            refresh: tokens.refresh_token.clone(),
            renew_at: Instant::now() + lifetime,
        }
    }
}

impl Credentials {
    /// An agent's credentials.
    pub fn agent(agent_id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self::Agent {
            agent_id: agent_id.into(),
            secret: secret.into(),
        }
    }

    /// The four headers an agent's request carries, signed at `timestamp` with `nonce`
    /// (`target` is the path with its `?query` and `body` the raw bytes, both as sent).
    /// The client signs every request this way, with the current time and a fresh
    /// nonce; `None` when these credentials are not an agent's.
    ///
    /// ```
    /// use muster_client::Credentials;
    /// let agent = Credentials::agent(
    ///     "hr-acme",
    ///     "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a",
    /// );
    /// let headers = agent
    ///     .agent_headers("GET", "/tasks?status=todo&limit=5", b"", "1795000000",
    ///         "0f8e9d2c-4b6a-4e1f-9a3d-7c5b2e1f0a9d")
    ///     .unwrap();
    /// assert_eq!(headers[3], ("X-Signature",
    ///     "43b7abef5102706f37f7ca86c8fb99f4e0e3b957000ec16ea611bf1b344f0e62".to_owned()));
    /// ```
    pub fn agent_headers(
        &self,
        method: &str,
        target: &str,
        body: &[u8],
        timestamp: &str,
        nonce: &str,
    ) -> Option<[(&'static str, String); 4]> {
        let Self::Agent { agent_id, secret } = self else {
            return None;
        };
        let signed = RequestSignature::at(secret, method, target, timestamp, nonce, body);
        Some(headers(agent_id, signed))
    }
}

/// The headers of an agent's signature over one request, sent now with a fresh nonce.
pub(crate) fn sign_agent(
    request: RequestBuilder,
    agent_id: &str,
    secret: &str,
    method: &str,
    target: &str,
    body: &[u8],
) -> RequestBuilder {
    let signed = RequestSignature::now(secret, method, target, body);
    headers(agent_id, signed)
        .into_iter()
        .fold(request, |request, (name, value)| {
            request.header(name, value)
        })
}

fn headers(agent_id: &str, signed: RequestSignature) -> [(&'static str, String); 4] {
    [
        ("X-Agent-ID", agent_id.to_owned()),
        ("X-Timestamp", signed.timestamp),
        ("X-Nonce", signed.nonce),
        ("X-Signature", signed.signature),
    ]
}
