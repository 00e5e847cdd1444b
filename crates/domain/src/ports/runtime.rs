//! The clock and the id generator, replayed in a re-run of a unit of work's work (see
//! [`replay`](super::replay)).

use time::OffsetDateTime;
use uuid::Uuid;

use super::replay;

/// The current time. Adapters return UTC truncated to milliseconds, the precision every
/// timestamp is stored and shown with (decision D-6).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait Clock: Send + Sync {
    /// What the clock shows (adapters implement this; callers ask [`now`](Self::now)).
    fn current(&self) -> OffsetDateTime;

    /// Now: [`current`](Self::current), except in a unit of work's work run again after
    /// its pre-hooks were asked, which sees the times its first run saw.
    fn now(&self) -> OffsetDateTime {
        replay::time(|| self.current())
    }
}

/// New identifiers (UUID v7, decision D-6).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait IdGenerator: Send + Sync {
    /// A fresh, time-ordered id (adapters implement this; callers ask
    /// [`new_id`](Self::new_id)).
    fn generate(&self) -> Uuid;

    /// A new id: [`generate`](Self::generate), except in a unit of work's work run again
    /// after its pre-hooks were asked, which draws the ids its first run drew.
    fn new_id(&self) -> Uuid {
        replay::id(|| self.generate())
    }
}
