//! A short-lived cache of agents' opened credentials, so that a signed request does not
//! read the agent row and decrypt its secret every time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use muster_domain::model::{Agent, AgentId};

/// How long a cached agent is trusted before it is read again. A suspension, a
/// revocation or a change of role, mode or level is seen at once by the instance that
/// made it (it forgets the agent: [`CredentialCache::forget`]) and by every other
/// instance within this time.
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
    entries: Mutex<Entries>,
}

/// The cached credentials, and how many times an agent was forgotten: a read that began
/// before a change must not cache what it read (see [`CredentialCache::put`]).
#[derive(Default)]
struct Entries {
    by_handle: HashMap<String, (Instant, Arc<OpenedCredentials>)>,
    forgotten: u64,
}

/// Where the cache stood when a read of an agent began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Generation(u64);

impl CredentialCache {
    pub(super) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::default(),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Taken before reading an agent from storage, handed back to [`put`](Self::put).
    pub(super) fn generation(&self) -> Generation {
        Generation(self.entries().forgotten)
    }

    /// Drops what is cached of `agent`, under whatever handle: it changed, or is gone.
    pub(super) fn forget(&self, agent: AgentId) {
        let mut entries = self.entries();
        entries.forgotten = entries.forgotten.wrapping_add(1);
        entries
            .by_handle
            .retain(|_, (_, credentials)| credentials.agent.id != agent);
    }

    /// The credentials of `handle`, if cached less than the time-to-live before `now`.
    pub(super) fn get(&self, handle: &str, now: Instant) -> Option<Arc<OpenedCredentials>> {
        let entries = self.entries();
        let (fetched, credentials) = entries.by_handle.get(handle)?;
        fresh(*fetched, now, self.ttl).then(|| Arc::clone(credentials))
    }

    /// Remembers what was read for `handle` at `now`, by a read that began at `read`:
    /// unless an agent was forgotten since, as what was read may predate the change.
    pub(super) fn put(
        &self,
        handle: &str,
        credentials: Arc<OpenedCredentials>,
        now: Instant,
        read: Generation,
    ) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries();
        if entries.forgotten != read.0 {
            return;
        }
        let by_handle = &mut entries.by_handle;
        if by_handle.len() >= MAX_ENTRIES && !by_handle.contains_key(handle) {
            let ttl = self.ttl;
            by_handle.retain(|_, (fetched, _)| fresh(*fetched, now, ttl));
            if by_handle.len() >= MAX_ENTRIES {
                by_handle.clear();
            }
        }
        by_handle.insert(handle.to_owned(), (now, credentials));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries().by_handle.len()
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
        cache.put("a", credentials(1), t0, cache.generation());
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
        cache.put("a", credentials(2), t0 + TTL, cache.generation());
        let hit = cache
            .get("a", t0 + TTL + Duration::from_millis(500))
            .expect("fresh");
        assert_eq!(hit.secret, vec![2]);
    }

    #[test]
    fn a_forgotten_agent_is_read_again_under_every_handle_and_only_it() {
        let cache = CredentialCache::new(TTL);
        let t0 = Instant::now();
        let mut other = crate::agent::tests::agent(AgentStatus::Active);
        other.id = AgentId::from_uuid(uuid::Uuid::from_u128(7));
        let other = Arc::new(OpenedCredentials {
            agent: other,
            secret: vec![9],
        });
        cache.put("a", credentials(1), t0, cache.generation());
        cache.put("old-handle-of-a", credentials(1), t0, cache.generation());
        cache.put("b", Arc::clone(&other), t0, cache.generation());
        cache.forget(credentials(1).agent.id);
        assert!(cache.get("a", t0).is_none());
        assert!(cache.get("old-handle-of-a", t0).is_none());
        assert!(cache.get("b", t0).is_some(), "another agent stays cached");
    }

    #[test]
    fn a_read_that_began_before_a_change_is_not_cached() {
        let cache = CredentialCache::new(TTL);
        let t0 = Instant::now();
        let before = cache.generation();
        // The agent is suspended while its row is being read...
        cache.forget(credentials(1).agent.id);
        // ...so what that read found (still active) must not be served later.
        cache.put("a", credentials(1), t0, before);
        assert!(cache.get("a", t0).is_none());
        // A read that began after the change is cached as usual.
        cache.put("a", credentials(2), t0, cache.generation());
        assert_eq!(cache.get("a", t0).map(|c| c.secret.clone()), Some(vec![2]));
    }

    #[test]
    fn a_zero_time_to_live_caches_nothing() {
        let cache = CredentialCache::new(Duration::ZERO);
        let t0 = Instant::now();
        cache.put("a", credentials(1), t0, cache.generation());
        assert_eq!(cache.len(), 0);
        assert!(cache.get("a", t0).is_none());
    }

    #[test]
    fn a_full_cache_drops_stale_entries_first_then_starts_over() {
        let cache = CredentialCache::new(TTL);
        let t0 = Instant::now();
        let one = credentials(1);
        for i in 0..MAX_ENTRIES - 1 {
            cache.put(
                &format!("old-{i}"),
                Arc::clone(&one),
                t0,
                cache.generation(),
            );
        }
        cache.put(
            "recent",
            Arc::clone(&one),
            t0 + Duration::from_millis(600),
            cache.generation(),
        );
        assert_eq!(cache.len(), MAX_ENTRIES);
        // Refreshing a cached agent at the limit evicts nothing.
        cache.put(
            "recent",
            Arc::clone(&one),
            t0 + Duration::from_millis(700),
            cache.generation(),
        );
        assert_eq!(cache.len(), MAX_ENTRIES);
        // A new agent when full and the old ones stale: only the stale ones go.
        let later = t0 + TTL + Duration::from_millis(100);
        cache.put("new", Arc::clone(&one), later, cache.generation());
        assert_eq!(cache.len(), 2, "the stale entries were dropped");
        assert!(cache.get("recent", later).is_some(), "a fresh entry stays");
        assert!(cache.get("new", later).is_some());
        // Full of fresh entries: the cache starts over with the newcomer alone.
        for i in 0..MAX_ENTRIES - 2 {
            cache.put(
                &format!("fresh-{i}"),
                Arc::clone(&one),
                later,
                cache.generation(),
            );
        }
        assert_eq!(cache.len(), MAX_ENTRIES);
        cache.put("newest", Arc::clone(&one), later, cache.generation());
        assert_eq!(cache.len(), 1);
        assert!(cache.get("newest", later).is_some());
    }
}
