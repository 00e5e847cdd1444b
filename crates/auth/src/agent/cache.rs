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

    /// The credentials of `handle`, if cached less than the time-to-live before `now`.
    pub(super) fn get(&self, handle: &str, now: Instant) -> Option<Arc<OpenedCredentials>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (fetched, credentials) = entries.get(handle)?;
        fresh(*fetched, now, self.ttl).then(|| Arc::clone(credentials))
    }

    /// Remembers what was read for `handle` at `now`.
    pub(super) fn put(&self, handle: &str, credentials: Arc<OpenedCredentials>, now: Instant) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(handle) {
            let ttl = self.ttl;
            entries.retain(|_, (fetched, _)| fresh(*fetched, now, ttl));
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(handle.to_owned(), (now, credentials));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Whether an entry fetched at `fetched` is still trusted at `now`.
fn fresh(fetched: Instant, now: Instant, ttl: Duration) -> bool {
    now.saturating_duration_since(fetched) < ttl
}

#[cfg(test)]
mod tests {
    use muster_domain::model::AgentStatus;

    use super::*;

    fn credentials(secret: u8) -> Arc<OpenedCredentials> {
        Arc::new(OpenedCredentials {
            agent: crate::agent::tests::agent(AgentStatus::Active),
            secret: vec![secret],
        })
    }

    const TTL: Duration = Duration::from_secs(1);

    #[test]
    fn an_entry_is_trusted_for_less_than_its_time_to_live() {
        let cache = CredentialCache::new(TTL);
        let t0 = Instant::now();
        assert!(cache.get("a", t0).is_none(), "nothing cached yet");
        cache.put("a", credentials(1), t0);
        let hit = cache
            .get("a", t0 + Duration::from_millis(999))
            .expect("fresh");
        assert_eq!(hit.secret, vec![1]);
        assert!(
            cache.get("a", t0 + TTL).is_none(),
            "stale at the time-to-live"
        );
        assert!(cache.get("b", t0).is_none(), "another agent is not served");
        // A later put replaces the entry and restarts its time.
        cache.put("a", credentials(2), t0 + TTL);
        let hit = cache
            .get("a", t0 + TTL + Duration::from_millis(500))
            .expect("fresh");
        assert_eq!(hit.secret, vec![2]);
    }

    #[test]
    fn a_zero_time_to_live_caches_nothing() {
        let cache = CredentialCache::new(Duration::ZERO);
        let t0 = Instant::now();
        cache.put("a", credentials(1), t0);
        assert_eq!(cache.len(), 0);
        assert!(cache.get("a", t0).is_none());
    }

    #[test]
    fn a_full_cache_drops_stale_entries_first_then_starts_over() {
        let cache = CredentialCache::new(TTL);
        let t0 = Instant::now();
        let one = credentials(1);
        for i in 0..MAX_ENTRIES - 1 {
            cache.put(&format!("old-{i}"), Arc::clone(&one), t0);
        }
        cache.put("recent", Arc::clone(&one), t0 + Duration::from_millis(600));
        assert_eq!(cache.len(), MAX_ENTRIES);
        // Refreshing a cached agent at the limit evicts nothing.
        cache.put("recent", Arc::clone(&one), t0 + Duration::from_millis(700));
        assert_eq!(cache.len(), MAX_ENTRIES);
        // A new agent when full and the old ones stale: only the stale ones go.
        let later = t0 + TTL + Duration::from_millis(100);
        cache.put("new", Arc::clone(&one), later);
        assert_eq!(cache.len(), 2, "the stale entries were dropped");
        assert!(cache.get("recent", later).is_some(), "a fresh entry stays");
        assert!(cache.get("new", later).is_some());
        // Full of fresh entries: the cache starts over with the newcomer alone.
        for i in 0..MAX_ENTRIES - 2 {
            cache.put(&format!("fresh-{i}"), Arc::clone(&one), later);
        }
        assert_eq!(cache.len(), MAX_ENTRIES);
        cache.put("newest", Arc::clone(&one), later);
        assert_eq!(cache.len(), 1);
        assert!(cache.get("newest", later).is_some());
    }
}
