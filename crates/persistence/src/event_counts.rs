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

use std::collections::HashMap;
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

/// The settled counts of one instance.
#[derive(Debug, Default)]
pub(crate) struct EventCounts {
    settled: Mutex<HashMap<(OrgId, EventFilter), Settled>>,
}

impl EventCounts {
    /// What is settled for `org` and `filter`; nothing (bound 0, count 0) at first.
    pub(crate) fn get(&self, org: OrgId, filter: &EventFilter) -> Settled {
        let settled = self
            .settled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        settled
            .get(&(org, filter.clone()))
            .copied()
            .unwrap_or_default()
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
        assert_eq!(
            counts.get(org(), &EventFilter::default()),
            Settled::default()
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
            Settled {
                bound: 10,
                count: 4
            }
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
            Settled {
                bound: 12,
                count: 5
            }
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
        assert_eq!(counts.get(two, &EventFilter::default()), Settled::default());
        assert_eq!(counts.get(one, &typed), Settled::default());
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
            Settled { bound: 1, count: 1 }
        );
    }
}
