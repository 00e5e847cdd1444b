//! `GET /events` answers how many events match its filter (`meta.total`). Counting them
//! all on every page costs as much as the history is long (8-9 ms of CPU per page on
//! SQLite at 20,000 events). The log is append-only, so a count stays true for the part
//! of the log that can no longer change: this cache keeps, per organization and filter,
//! how many matching events lie below a settled position, and each page only counts the
//! events above it (see [`crate::events::queries::count_above`]).
//!
//! Which part is settled: on SQLite, writes never overlap and rowids grow in commit
//! order, so every rowid up to the highest one seen is final. On PostgreSQL, an event
//! records its writing transaction's id; transactions older than the snapshot's `xmin`
//! have all ended, so events of those transactions are final.
//!
//! Each instance keeps its own cache; the counts come from the database, so instances
//! never disagree. The cache is bounded: when full it starts over.
//!
//! The first count of a pair reads its whole history. Requests arriving together for a
//! pair not counted yet (the first pages after a start) would each read it all, every
//! one slower for the others; instead they wait at the pair's gate
//! ([`EventCounts::first_count`]) while the first counts and, once it has settled, each
//! counts only what came after. Each pair has a gate of its own, so no other pair (nor
//! another organization) ever waits for it, and the wait is bounded by
//! [`GATE_WAIT`], after which a request counts in full as it would without a gate.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use muster_domain::model::OrgId;
use muster_domain::ports::EventFilter;

/// Most (organization, filter) pairs remembered. A filter with dates or ids is one more
/// pair; past this many, the cache is emptied and counts are taken afresh.
const MOST_FILTERS: usize = 4096;

/// The longest a request waits for another's first count of the same pair before
/// counting in full itself.
const GATE_WAIT: Duration = Duration::from_secs(5);

/// How many of an organization's events matching a filter lie below `bound` (a rowid
/// on SQLite, a transaction id on PostgreSQL: see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Settled {
    /// Positions strictly below this one (PostgreSQL) or up to it (SQLite) are final.
    pub(crate) bound: i64,
    /// Matching events within the bound.
    pub(crate) count: u64,
}

type Pair = (OrgId, EventFilter);

/// The gate of one pair while it is being counted for the first time.
type Gate = Arc<tokio::sync::Mutex<()>>;

/// The settled counts of one instance.
#[derive(Debug, Default)]
pub(crate) struct EventCounts {
    settled: Mutex<HashMap<Pair, Settled>>,
    /// Gates of the pairs being counted for the first time; an entry lives while some
    /// request holds or waits for it (see [`EventCounts::drop_unused_gates`]).
    gates: Mutex<HashMap<Pair, Gate>>,
}

/// The right to count a pair for the first time: other requests for the pair wait
/// until it is dropped (after [`EventCounts::settle`], or on failure, when the next
/// one counts instead).
#[derive(Debug)]
pub(crate) struct FirstCount<'a> {
    counts: &'a EventCounts,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl Drop for FirstCount<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        self.counts.drop_unused_gates();
    }
}

impl EventCounts {
    /// What is settled for `org` and `filter`; `None` until it has been counted once.
    pub(crate) fn get(&self, org: OrgId, filter: &EventFilter) -> Option<Settled> {
        let settled = self.settled.lock().unwrap_or_else(PoisonError::into_inner);
        settled.get(&(org, filter.clone())).copied()
    }

    /// What is settled for `org` and `filter` and, when nothing is yet, the right to
    /// count it first: requests for the same pair wait for it (at most [`GATE_WAIT`]),
    /// then find it counted and count only what is newer. `None` also when the wait
    /// ran out: that request counts in full, ungated.
    pub(crate) async fn first_count(
        &self,
        org: OrgId,
        filter: &EventFilter,
    ) -> (Settled, Option<FirstCount<'_>>) {
        self.first_count_within(org, filter, GATE_WAIT).await
    }

    /// [`EventCounts::first_count`], waiting at most `wait` for the gate.
    async fn first_count_within(
        &self,
        org: OrgId,
        filter: &EventFilter,
        wait: Duration,
    ) -> (Settled, Option<FirstCount<'_>>) {
        if let Some(known) = self.get(org, filter) {
            return (known, None);
        }
        self.drop_unused_gates();
        let gate = Arc::clone(
            self.gates
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry((org, filter.clone()))
                .or_default(),
        );
        let first = FirstCount {
            counts: self,
            guard: tokio::time::timeout(wait, gate.lock_owned()).await.ok(),
        };
        match self.get(org, filter) {
            Some(known) => (known, None),
            None => (Settled::default(), first.guard.is_some().then_some(first)),
        }
    }

    /// Drops the gates nobody holds or waits for (each of those holds the gate's `Arc`;
    /// only the map's is left then), under the map's lock so that no request takes one
    /// in between: after each first count, and before a new one (a request cancelled
    /// while it waited, its client gone, may have been a gate's last user).
    fn drop_unused_gates(&self) {
        let mut gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        gates.retain(|_, gate| Arc::strong_count(gate) > 1);
    }

    /// Remembers `now` unless a count with a later bound is already there (two pages
    /// counted at once each settle what they saw).
    pub(crate) fn settle(&self, org: OrgId, filter: &EventFilter, now: Settled) {
        let mut settled = self.settled.lock().unwrap_or_else(PoisonError::into_inner);
        if settled.len() >= MOST_FILTERS && !settled.contains_key(&(org, filter.clone())) {
            settled.clear();
        }
        let entry = settled.entry((org, filter.clone())).or_default();
        if now.bound >= entry.bound {
            *entry = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A distinct organization id per call.
    fn org() -> OrgId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        OrgId::from_uuid(uuid::Uuid::from_u128(u128::from(n)))
    }

    #[test]
    fn nothing_is_settled_at_first() {
        let counts = EventCounts::default();
        assert_eq!(counts.get(org(), &EventFilter::default()), None);
    }

    /// Fails instead of hanging when a gate is not released.
    async fn soon<F: std::future::Future>(future: F) -> F::Output {
        tokio::time::timeout(Duration::from_secs(5), future)
            .await
            .expect("did not finish: a gate was not released")
    }

    fn gates_left(counts: &EventCounts) -> usize {
        counts
            .gates
            .lock()
            .map(|gates| gates.len())
            .unwrap_or_default()
    }

    /// [`EventCounts::first_count`] on a task of its own: what it found, and whether
    /// it was to count first.
    fn spawn_first_count(
        counts: &Arc<EventCounts>,
        org: OrgId,
        filter: &EventFilter,
    ) -> tokio::task::JoinHandle<(Settled, bool)> {
        let (counts, filter) = (Arc::clone(counts), filter.clone());
        tokio::spawn(async move {
            let (known, first) = counts.first_count(org, &filter).await;
            (known, first.is_some())
        })
    }

    #[tokio::test]
    async fn requests_for_a_pair_not_counted_yet_wait_for_the_first_count() {
        let counts = Arc::new(EventCounts::default());
        let (org, filter) = (org(), EventFilter::default());
        let (known, first) = soon(counts.first_count(org, &filter)).await;
        assert_eq!(known, Settled::default());
        assert!(first.is_some(), "the first count holds the gate");
        let second = spawn_first_count(&counts, org, &filter);
        tokio::task::yield_now().await;
        assert!(!second.is_finished(), "the second waits at the gate");
        counts.settle(org, &filter, Settled { bound: 9, count: 5 });
        drop(first);
        let (known, gated) = soon(second).await.unwrap();
        assert_eq!(known, Settled { bound: 9, count: 5 });
        assert!(!gated, "a counted pair is not counted first again");
        assert_eq!(gates_left(&counts), 0, "the gate is forgotten");
    }

    #[tokio::test]
    async fn a_first_count_that_failed_hands_the_gate_to_the_next() {
        let counts = EventCounts::default();
        let (org, filter) = (org(), EventFilter::default());
        let (_, first) = soon(counts.first_count(org, &filter)).await;
        assert!(first.is_some());
        drop(first);
        let (known, second) = soon(counts.first_count(org, &filter)).await;
        assert_eq!(known, Settled::default());
        assert!(
            second.is_some(),
            "nothing was settled: the next counts it all"
        );
    }

    #[tokio::test]
    async fn other_pairs_never_wait_for_a_first_count() {
        let counts = EventCounts::default();
        let (one, two) = (org(), org());
        let filter = EventFilter::default();
        let typed = EventFilter {
            event_type: Some("task.created".to_owned()),
            ..EventFilter::default()
        };
        let (_, held) = soon(counts.first_count(one, &filter)).await;
        assert!(held.is_some());
        let (_, other_org) = soon(counts.first_count(two, &filter)).await;
        let (_, other_filter) = soon(counts.first_count(one, &typed)).await;
        assert!(
            other_org.is_some() && other_filter.is_some(),
            "each pair counts first on its own gate"
        );
        drop((held, other_org, other_filter));
        assert_eq!(gates_left(&counts), 0);
    }

    #[tokio::test]
    async fn a_gate_left_by_a_cancelled_waiter_goes_with_the_next_first_count() {
        let counts = Arc::new(EventCounts::default());
        let (org, filter) = (org(), EventFilter::default());
        let (_, first) = soon(counts.first_count(org, &filter)).await;
        let waiter = spawn_first_count(&counts, org, &filter);
        tokio::task::yield_now().await;
        // The first count ends while the waiter still holds the gate; then the waiter's
        // client goes away before it runs again.
        drop(first);
        waiter.abort();
        assert!(soon(waiter).await.is_err_and(|e| e.is_cancelled()));
        assert_eq!(gates_left(&counts), 1, "nobody forgot the gate");
        let (_, other) = soon(counts.first_count(self::org(), &filter)).await;
        assert_eq!(
            gates_left(&counts),
            1,
            "only the new first count's gate is left"
        );
        drop(other);
        assert_eq!(gates_left(&counts), 0);
    }

    #[tokio::test]
    async fn a_wait_that_runs_out_counts_without_the_gate() {
        let counts = EventCounts::default();
        let (org, filter) = (org(), EventFilter::default());
        let (_, held) = soon(counts.first_count(org, &filter)).await;
        assert!(held.is_some());
        let (known, gated) =
            soon(counts.first_count_within(org, &filter, Duration::from_millis(20))).await;
        assert_eq!((known, gated.is_none()), (Settled::default(), true));
        drop(held);
        assert_eq!(gates_left(&counts), 0);
    }

    #[test]
    fn a_later_bound_replaces_an_earlier_one_and_never_the_reverse() {
        let counts = EventCounts::default();
        let (org, filter) = (org(), EventFilter::default());
        counts.settle(
            org,
            &filter,
            Settled {
                bound: 10,
                count: 4,
            },
        );
        counts.settle(org, &filter, Settled { bound: 7, count: 3 });
        assert_eq!(
            counts.get(org, &filter),
            Some(Settled {
                bound: 10,
                count: 4
            })
        );
        counts.settle(
            org,
            &filter,
            Settled {
                bound: 12,
                count: 5,
            },
        );
        assert_eq!(
            counts.get(org, &filter),
            Some(Settled {
                bound: 12,
                count: 5
            })
        );
    }

    #[test]
    fn organizations_and_filters_are_kept_apart() {
        let counts = EventCounts::default();
        let (one, two) = (org(), org());
        let typed = EventFilter {
            event_type: Some("task.created".to_owned()),
            ..EventFilter::default()
        };
        counts.settle(one, &EventFilter::default(), Settled { bound: 3, count: 3 });
        assert_eq!(counts.get(two, &EventFilter::default()), None);
        assert_eq!(counts.get(one, &typed), None);
    }

    #[test]
    fn a_full_cache_starts_over_instead_of_growing() {
        let counts = EventCounts::default();
        let filters: Vec<EventFilter> = (0..=MOST_FILTERS)
            .map(|n| EventFilter {
                event_type: Some(format!("type.{n}")),
                ..EventFilter::default()
            })
            .collect();
        let org = org();
        for filter in &filters {
            counts.settle(org, filter, Settled { bound: 1, count: 1 });
        }
        let kept = counts.settled.lock().map(|m| m.len()).unwrap_or_default();
        assert_eq!(kept, 1, "the last pair after starting over");
        assert_eq!(
            counts.get(org, &filters[MOST_FILTERS]),
            Some(Settled { bound: 1, count: 1 })
        );
    }
}
