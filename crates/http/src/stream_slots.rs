//! The places open streams take (`GET /events/stream`, the dashboard's live board, A2A
//! streams): a bound for the whole process and a smaller one for each organization, so
//! that one tenant holding many streams never takes the last places another one needs.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use muster_domain::model::OrgId;

/// Why a stream was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyStreams {
    /// The bound that was reached.
    pub max: usize,
    /// Whose bound: the organization's share, or the whole instance's.
    pub scope: StreamScope,
}

/// Which bound refused a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamScope {
    /// The instance holds as many streams as it may.
    Instance,
    /// The caller's organization holds its share.
    Organization,
}

impl fmt::Display for TooManyStreams {
    /// "Too many open event streams (256)", or "… for this organization (64)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scope {
            StreamScope::Instance => write!(f, "Too many open event streams ({})", self.max),
            StreamScope::Organization => write!(
                f,
                "Too many open event streams for this organization ({})",
                self.max
            ),
        }
    }
}

/// Streams held now: in all, and by organization (organizations holding none are left
/// out, so the map stays as small as the set of tenants streaming).
#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_org: HashMap<OrgId, usize>,
}

impl Held {
    /// The counting rule: a stream is admitted while the instance is under `max` and its
    /// organization under `per_org`. The instance's bound is looked at first, so that a
    /// full instance says so whoever asks.
    fn admit(&mut self, org: OrgId, max: usize, per_org: usize) -> Result<(), TooManyStreams> {
        if self.total >= max {
            return Err(TooManyStreams {
                max,
                scope: StreamScope::Instance,
            });
        }
        let mine = self.by_org.entry(org).or_insert(0);
        if *mine >= per_org {
            return Err(TooManyStreams {
                max: per_org,
                scope: StreamScope::Organization,
            });
        }
        *mine += 1;
        self.total += 1;
        Ok(())
    }

    fn release(&mut self, org: OrgId) {
        if let Some(mine) = self.by_org.get_mut(&org) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                self.by_org.remove(&org);
            }
            self.total = self.total.saturating_sub(1);
        }
    }
}

/// The bounds and the streams held against them.
#[derive(Debug)]
pub(crate) struct Slots {
    max: usize,
    per_org: usize,
    held: Mutex<Held>,
}

impl Slots {
    /// `max` streams in all, at most `per_org` of them (never more than `max`) for one
    /// organization.
    pub(crate) fn new(max: usize, per_org: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            per_org: per_org.min(max),
            held: Mutex::new(Held::default()),
        })
    }

    /// A place for one more stream of `org`, if both bounds allow.
    pub(crate) fn reserve(self: &Arc<Self>, org: OrgId) -> Result<StreamSlot, TooManyStreams> {
        self.held().admit(org, self.max, self.per_org)?;
        Ok(StreamSlot {
            slots: Arc::clone(self),
            org,
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        // The counts are whole after every step (no step can panic midway): a poisoned
        // lock still holds true numbers.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One open stream's place; dropping it (the client went away, or the stream was never
/// opened) gives the place back.
#[derive(Debug)]
pub struct StreamSlot {
    slots: Arc<Slots>,
    org: OrgId,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.slots.held().release(self.org);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn org(n: u128) -> OrgId {
        OrgId::from_uuid(uuid::Uuid::from_u128(n))
    }

    #[test]
    fn one_organization_takes_at_most_its_share_and_leaves_the_rest() {
        let slots = Slots::new(5, 2);
        let (a, b) = (org(1), org(2));
        let mine = [slots.reserve(a).unwrap(), slots.reserve(a).unwrap()];
        assert_eq!(
            slots.reserve(a).unwrap_err(),
            TooManyStreams {
                max: 2,
                scope: StreamScope::Organization
            }
        );
        // The instance still has three places; the other organization gets its share.
        let theirs = [slots.reserve(b).unwrap(), slots.reserve(b).unwrap()];
        assert_eq!(
            slots.reserve(b).unwrap_err().scope,
            StreamScope::Organization
        );
        assert_eq!(slots.held().total, 4);
        drop(mine);
        assert!(
            !slots.held().by_org.contains_key(&a),
            "no entry for none held"
        );
        assert_eq!(slots.held().total, 2);
        let again = slots.reserve(a).unwrap();
        drop((theirs, again));
        assert_eq!(slots.held().total, 0);
        assert!(slots.held().by_org.is_empty());
    }

    #[test]
    fn a_full_instance_refuses_everyone_whatever_their_share() {
        let slots = Slots::new(3, 2);
        let _held = [
            slots.reserve(org(1)).unwrap(),
            slots.reserve(org(1)).unwrap(),
            slots.reserve(org(2)).unwrap(),
        ];
        let full = TooManyStreams {
            max: 3,
            scope: StreamScope::Instance,
        };
        assert_eq!(slots.reserve(org(2)).unwrap_err(), full);
        assert_eq!(slots.reserve(org(3)).unwrap_err(), full);
        assert_eq!(full.to_string(), "Too many open event streams (3)");
    }

    #[test]
    fn a_share_above_the_instance_bound_is_the_instance_bound() {
        let slots = Slots::new(2, 10);
        let _held = [
            slots.reserve(org(1)).unwrap(),
            slots.reserve(org(1)).unwrap(),
        ];
        assert_eq!(
            slots.reserve(org(1)).unwrap_err().scope,
            StreamScope::Instance
        );
        // With both bounds equal, the instance's message is the one shown.
        let equal = Slots::new(1, 1);
        let _one = equal.reserve(org(1)).unwrap();
        assert_eq!(
            equal.reserve(org(1)).unwrap_err().to_string(),
            "Too many open event streams (1)"
        );
    }

    #[test]
    fn the_organizations_message_names_its_share() {
        let refused = TooManyStreams {
            max: 64,
            scope: StreamScope::Organization,
        };
        assert_eq!(
            refused.to_string(),
            "Too many open event streams for this organization (64)"
        );
    }
}
