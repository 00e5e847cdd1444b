//! `GET /events` answers how many events match its filter (`meta.total`). Counting them
//! all on every page costs as much as the history is long (8-9 ms of CPU per page on
//! SQLite at 20,000 events). The log is append-only, so a count stays true for the part
//! of the log that can no longer change: this cache keeps, per organization and filter,
//! how many matching events lie below a settled position, and each page only counts the
//! events above it (see [`crate::queries::events::count_above`]).
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
//! one slower for the others; instead they queue at a gate ([`EventCounts::first_count`])
//! and, once the first has settled its count, each counts only what came after.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use muster_domain::model::OrgId;
use muster_domain::ports::EventFilter;

/// Most (organization, filter) pairs remembered. A filter with dates or ids is one more
/// pair; past this many, the cache is emptied and counts are taken afresh.
const MOST_FILTERS: usize = 4096;

/// How many of an organization's events matching a filter lie below `bound` (a rowid
/// on SQLite, a transaction id on PostgreSQL: see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Settled {
    /// Positions strictly below this one (PostgreSQL) or up to it (SQLite) are final.
    pub(crate) bound: i64,
    /// Matching events within the bound.
    pub(crate) count: u64,
}

/// How many gates first counts queue at: pairs whose hashes share a gate wait for each
/// other's first count, which only matters while both are being counted for the first
/// time.
const GATES: usize = 16;

/// The settled counts of one instance.
#[derive(Debug, Default)]
pub(crate) struct EventCounts {
    settled: Mutex<HashMap<(OrgId, EventFilter), Settled>>,
    gates: [tokio::sync::Mutex<()>; GATES],
}

impl EventCounts {
    /// What is settled for `org` and `filter`; `None` until it has been counted once.
    pub(crate) fn get(&self, org: OrgId, filter: &EventFilter) -> Option<Settled> {
        let settled = self
            .settled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        settled.get(&(org, filter.clone())).copied()
    }

    /// What is settled for `org` and `filter`, and, when nothing is yet, the gate its
    /// first count holds until it has settled: requests for the same pair wait there,
    /// then find it counted (the guard is `None` then) and count only what is newer.
    pub(crate) async fn first_count(
        &self,
        org: OrgId,
        filter: &EventFilter,
    ) -> (Settled, Option<tokio::sync::MutexGuard<'_, ()>>) {
        if let Some(known) = self.get(org, filter) {
            return (known, None);
        }
        let mut hasher = std::hash::DefaultHasher::new();
        (org, filter).hash(&mut hasher);
        let gate = usize::try_from(hasher.finish() % GATES as u64).unwrap_or(0);
        let guard = self.gates[gate].lock().await;
        match self.get(org, filter) {
            Some(known) => (known, None),
            None => (Settled::default(), Some(guard)),
        }
    }

    /// Remembers `now` unless a count with a later bound is already there (two pages
    /// counted at once each settle what they saw).
    pub(crate) fn settle(&self, org: OrgId, filter: &EventFilter, now: Settled) {
        let mut settled = self
            .settled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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

    #[tokio::test]
    async fn requests_for_a_pair_not_counted_yet_wait_for_the_first_count() {
        let counts = std::sync::Arc::new(EventCounts::default());
        let (org, filter) = (org(), EventFilter::default());
        let (known, first) = counts.first_count(org, &filter).await;
        assert_eq!(known, Settled::default());
        assert!(first.is_some(), "the first count holds the gate");
        let second = tokio::spawn({
            let counts = std::sync::Arc::clone(&counts);
            let filter = filter.clone();
            async move {
                let (known, guard) = counts.first_count(org, &filter).await;
                (known, guard.is_some())
            }
        });
        tokio::task::yield_now().await;
        assert!(!second.is_finished(), "the second waits at the gate");
        counts.settle(org, &filter, Settled { bound: 9, count: 5 });
        drop(first);
        let (known, gated) = second.await.unwrap();
        assert_eq!(known, Settled { bound: 9, count: 5 });
        assert!(!gated, "a counted pair passes without the gate");
    }

    #[tokio::test]
    async fn a_first_count_that_failed_hands_the_gate_to_the_next() {
        let counts = EventCounts::default();
        let (org, filter) = (org(), EventFilter::default());
        let (_, first) = counts.first_count(org, &filter).await;
        drop(first);
        let (known, second) = counts.first_count(org, &filter).await;
        assert_eq!(known, Settled::default());
        assert!(
            second.is_some(),
            "nothing was settled: the next counts it all"
        );
    }

    #[tokio::test]
    async fn other_pairs_are_not_held_up_once_counted() {
        let counts = EventCounts::default();
        let (one, two) = (org(), org());
        let filter = EventFilter::default();
        counts.settle(two, &filter, Settled { bound: 2, count: 1 });
        let (_, held) = counts.first_count(one, &filter).await;
        assert!(held.is_some());
        // `two` may share `one`'s gate; counted already, it does not wait for it.
        let (known, gate) = counts.first_count(two, &filter).await;
        assert_eq!(
            (known, gate.is_none()),
            (Settled { bound: 2, count: 1 }, true)
        );
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
