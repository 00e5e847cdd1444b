//! Authentication of agent requests signed with HMAC (interface "Authentication 1",
//! decision D-10).
//!
//! [`AgentAuthenticator::authenticate`] checks, in this order, and stops at the first
//! failure:
//!
//! 1. the four headers are present ([`AgentAuthError::MissingHeader`]);
//! 2. `X-Timestamp` is a decimal integer ([`AgentAuthError::InvalidTimestamp`]) within
//!    [`TIMESTAMP_TOLERANCE_SECS`] of server time, bounds included
//!    ([`AgentAuthError::StaleTimestamp`]);
//! 3. `X-Nonce` is 1..=128 printable ASCII characters ([`AgentAuthError::InvalidNonce`]);
//! 4. `X-Agent-ID` names a stored agent and `X-Signature` is the HMAC of the canonical
//!    message under its secret ([`AgentAuthError::InvalidSignature`] for either failure,
//!    so callers cannot probe which agents exist);
//! 5. the agent may act by domain policy ([`muster_domain::policy::agent_may_act`]: it is
//!    active; else [`AgentAuthError::AgentNotActive`]), checked only after the
//!    signature so that only the key holder learns the status;
//! 6. the nonce is new for this agent ([`AgentAuthError::NonceReused`]). It is recorded
//!    only now, so a forged request cannot burn a nonce.

mod cache;
mod error;
mod headers;

pub use cache::CREDENTIAL_TTL;
pub use error::AgentAuthError;

use std::fmt;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use muster_domain::model::{Actor, ActorKind, AgentCredentials, AgentHandle, AgentId};
use muster_domain::policy;
use muster_domain::ports::{AgentChanges, AgentRepository, Clock, NonceOutcome, NonceStore};
use time::{Duration, OffsetDateTime};

use self::cache::{CredentialCache, OpenedCredentials};
use crate::keys::SecretCipher;
use crate::signing::{canonical_message, verify_with_key};

/// How far `X-Timestamp` may be from server time, either way, in seconds (inclusive).
pub const TIMESTAMP_TOLERANCE_SECS: i64 = 300;

/// How long a nonce is remembered per agent, in seconds.
pub const NONCE_RETENTION_SECS: i64 = 600;

/// Header naming the agent by its `agentId`.
pub const AGENT_ID_HEADER: &str = "X-Agent-ID";
/// Header carrying the Unix time in seconds.
pub const TIMESTAMP_HEADER: &str = "X-Timestamp";
/// Header carrying the per-request nonce.
pub const NONCE_HEADER: &str = "X-Nonce";
/// Header carrying the hex HMAC-SHA256.
pub const SIGNATURE_HEADER: &str = "X-Signature";

/// Key of the stand-in HMAC computed for unknown agents, as long as a real secret, so
/// that a miss costs about as much as a hit.
const DUMMY_KEY: &[u8; 64] = &[b'0'; 64];

/// The parts of an HTTP request that authentication reads. Header values are `None`
/// when absent; an empty value counts as absent.
#[derive(Debug, Clone, Copy)]
pub struct SignedRequest<'a> {
    /// `X-Agent-ID`.
    pub agent_id: Option<&'a str>,
    /// `X-Timestamp`.
    pub timestamp: Option<&'a str>,
    /// `X-Nonce`.
    pub nonce: Option<&'a str>,
    /// `X-Signature`, hex in either case.
    pub signature: Option<&'a str>,
    /// The method as received (an uppercase verb).
    pub method: &'a str,
    /// The request target as received: path plus `?query`, byte for byte.
    pub path_and_query: &'a str,
    /// The raw body, empty when there is none.
    pub body: &'a [u8],
}

/// Authenticates signed agent requests against the stored agents and the shared nonce
/// store.
pub struct AgentAuthenticator {
    agents: Arc<dyn AgentRepository>,
    nonces: Arc<dyn NonceStore>,
    clock: Arc<dyn Clock>,
    cipher: SecretCipher,
    cache: CredentialCache,
}

impl fmt::Debug for AgentAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentAuthenticator").finish_non_exhaustive()
    }
}

impl AgentAuthenticator {
    /// Wires the authenticator to its ports; `cipher` opens the stored agent secrets.
    /// An agent's opened credentials are reused for [`CREDENTIAL_TTL`].
    pub fn new(
        agents: Arc<dyn AgentRepository>,
        nonces: Arc<dyn NonceStore>,
        clock: Arc<dyn Clock>,
        cipher: SecretCipher,
    ) -> Self {
        Self::with_credential_ttl(agents, nonces, clock, cipher, CREDENTIAL_TTL)
    }

    /// Like [`new`](Self::new) with another time-to-live for cached credentials (zero
    /// reads the agent on every request).
    pub fn with_credential_ttl(
        agents: Arc<dyn AgentRepository>,
        nonces: Arc<dyn NonceStore>,
        clock: Arc<dyn Clock>,
        cipher: SecretCipher,
        ttl: std::time::Duration,
    ) -> Self {
        Self {
            agents,
            nonces,
            clock,
            cipher,
            cache: CredentialCache::new(ttl),
        }
    }

    /// The agent that signed `req`, as the [`Actor`] of its organization. See the
    /// [module documentation](self) for the checks and their order.
    pub async fn authenticate(&self, req: &SignedRequest<'_>) -> Result<Actor, AgentAuthError> {
        let agent_id = headers::required(req.agent_id, AGENT_ID_HEADER)?;
        let timestamp = headers::required(req.timestamp, TIMESTAMP_HEADER)?;
        let nonce = headers::required(req.nonce, NONCE_HEADER)?;
        let signature = headers::required(req.signature, SIGNATURE_HEADER)?;

        let now = self.clock.now();
        let sent_at = headers::parse_timestamp(timestamp)?;
        let tolerance = TIMESTAMP_TOLERANCE_SECS.unsigned_abs();
        if !headers::is_fresh(sent_at, now.unix_timestamp(), tolerance) {
            return Err(AgentAuthError::StaleTimestamp);
        }
        headers::check_nonce(nonce)?;

        let message = canonical_message(req.method, req.path_and_query, timestamp, nonce, req.body);
        let Some(opened) = self.opened_credentials(agent_id).await? else {
            black_box(verify_with_key(DUMMY_KEY, &message, signature));
            return Err(AgentAuthError::InvalidSignature);
        };
        if !verify_with_key(&opened.secret, &message, signature) {
            return Err(AgentAuthError::InvalidSignature);
        }
        let agent = &opened.agent;
        policy::agent_may_act(agent).map_err(|_| AgentAuthError::AgentNotActive)?;

        let expires_at = nonce_expiry(now, sent_at)?;
        match self
            .nonces
            .remember(agent.id, nonce, now, expires_at)
            .await?
        {
            NonceOutcome::Fresh => Ok(Actor {
                org_id: agent.org_id,
                kind: ActorKind::Agent {
                    id: agent.id,
                    role: agent.role,
                    mode: agent.mode,
                    level: agent.level,
                },
            }),
            NonceOutcome::Replayed => Err(AgentAuthError::NonceReused),
        }
    }

    /// The agent named `agent_id` with its secret opened, from the cache or else from
    /// storage; `None` when the text is not a valid handle or no agent has it (misses
    /// are not cached, so a new agent can sign at once).
    async fn opened_credentials(
        &self,
        agent_id: &str,
    ) -> Result<Option<Arc<OpenedCredentials>>, AgentAuthError> {
        if let Some(cached) = self.cache.get(agent_id, Instant::now()) {
            return Ok(Some(cached));
        }
        let read = self.cache.generation();
        let Ok(handle) = AgentHandle::new(agent_id) else {
            return Ok(None);
        };
        let Some(AgentCredentials {
            agent,
            encrypted_secret,
        }) = self.agents.find_credentials(&handle).await?
        else {
            return Ok(None);
        };
        let secret = self
            .cipher
            .open(&encrypted_secret, agent.id.as_uuid().as_bytes())
            .map_err(|err| {
                AgentAuthError::Internal(format!(
                    "cannot open the secret of agent {}: {err}",
                    agent.id
                ))
            })?;
        let opened = Arc::new(OpenedCredentials { agent, secret });
        self.cache
            .put(agent_id, Arc::clone(&opened), Instant::now(), read);
        Ok(Some(opened))
    }
}

/// A suspension, revocation, removal or change of role, mode or level made on this
/// instance is refused or applied at the agent's very next request.
impl AgentChanges for AgentAuthenticator {
    fn changed(&self, agent: AgentId) {
        self.cache.forget(agent);
    }
}

#[cfg(test)]
mod tests;

/// When a nonce may be forgotten: after its retention period, and never before the
/// request's timestamp has left the acceptance window, or the same signed request could
/// be replayed in the gap (the window is inclusive and counts whole seconds).
fn nonce_expiry(now: OffsetDateTime, sent_at: u64) -> Result<OffsetDateTime, AgentAuthError> {
    let out_of_range = || AgentAuthError::Internal("nonce expiry out of range".to_owned());
    let retained = now
        .checked_add(Duration::seconds(NONCE_RETENTION_SECS))
        .ok_or_else(out_of_range)?;
    let window_closes = i64::try_from(sent_at)
        .ok()
        .and_then(|sent| sent.checked_add(TIMESTAMP_TOLERANCE_SECS + 1))
        .and_then(|secs| OffsetDateTime::from_unix_timestamp(secs).ok())
        .ok_or_else(out_of_range)?;
    Ok(retained.max(window_closes))
}

#[cfg(test)]
mod expiry_tests {
    use time::macros::datetime;

    use super::*;

    #[test]
    fn a_nonce_outlives_the_window_of_its_timestamp() {
        // Accepted at the very start of the window (sent 300.9 s in the future of "now"
        // counts as fresh because the window compares whole seconds)...
        let now = datetime!(2026-11-22 00:00:00.000 UTC);
        let sent_at = u64::try_from(now.unix_timestamp()).unwrap() + 300;
        let expiry = nonce_expiry(now, sent_at).unwrap();
        // ...it stays remembered until the timestamp can no longer be accepted.
        assert_eq!(expiry, datetime!(2026-11-22 00:10:01 UTC));
        // Usually the retention period is the later bound.
        let past = u64::try_from(now.unix_timestamp()).unwrap() - 300;
        assert_eq!(
            nonce_expiry(now, past).unwrap(),
            now + Duration::seconds(600)
        );
    }
}
