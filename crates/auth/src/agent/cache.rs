//! A short-lived cache of agents' opened credentials, so that a signed request does not
//! read the agent row and decrypt its secret every time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use muster_domain::model::Agent;

/// How long a cached agent is trusted before it is read again. A suspension, a
/// revocation or a new secret is seen by every instance within this time.
pub const CREDENTIAL_TTL: Duration = Duration::from_secs(1);

/// Entries kept at most; beyond that the cache starts over (a flood of distinct agents
/// must not grow memory without bound).
const MAX_ENTRIES: usize = 10_000;

/// An agent as read from storage, with its secret opened.
pub(super) struct OpenedCredentials {
    pub agent: Agent,
    pub secret: Vec<u8>,
}

/// Opened credentials by `agentId`, each kept for at most the time-to-live.
pub(super) struct CredentialCache {
    ttl: Duration,
    entries: Mutex<HashMap<String, (Instant, Arc<OpenedCredentials>)>>,
}

impl CredentialCache {
    pub(super) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::default(),
        }
    }

    /// The credentials of `handle`, if cached less than the time-to-live ago.
    pub(super) fn get(&self, handle: &str) -> Option<Arc<OpenedCredentials>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (fetched, credentials) = entries.get(handle)?;
        (fetched.elapsed() < self.ttl).then(|| Arc::clone(credentials))
    }

    /// Remembers what was just read for `handle`.
    pub(super) fn put(&self, handle: &str, credentials: Arc<OpenedCredentials>) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(handle) {
            let ttl = self.ttl;
            entries.retain(|_, (fetched, _)| fetched.elapsed() < ttl);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(handle.to_owned(), (Instant::now(), credentials));
    }
}
