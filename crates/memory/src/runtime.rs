//! The runtime ports without a runtime: the system clock, a clock a test moves by hand,
//! and time-ordered ids.

use std::sync::{Mutex, PoisonError};

use time::OffsetDateTime;
use uuid::Uuid;

use muster_domain::model::instant::to_millis;
use muster_domain::ports::{Clock, IdGenerator};

/// The system's clock, in UTC, truncated to milliseconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn current(&self) -> OffsetDateTime {
        to_millis(OffsetDateTime::now_utc())
    }
}

/// A clock that stands still until the test moves it.
///
/// ```
/// use muster_memory::ManualClock;
/// use muster_domain::ports::Clock;
/// use time::{Duration, macros::datetime};
///
/// let clock = ManualClock::new(datetime!(2026-01-01 9:00 UTC));
/// clock.advance(Duration::minutes(5));
/// assert_eq!(clock.now(), datetime!(2026-01-01 9:05 UTC));
/// ```
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<OffsetDateTime>,
}

impl ManualClock {
    /// A clock showing `now` (in UTC, truncated to milliseconds, as the port promises).
    pub fn new(now: OffsetDateTime) -> Self {
        Self {
            now: Mutex::new(to_millis(now)),
        }
    }

    /// Sets the time (truncated to milliseconds).
    pub fn set(&self, now: OffsetDateTime) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = to_millis(now);
    }

    /// Moves the time on by `by`.
    pub fn advance(&self, by: time::Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now = to_millis(*now + by);
    }
}

impl Clock for ManualClock {
    fn current(&self) -> OffsetDateTime {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// UUID v7 ids: time-ordered, so "newest first" follows creation.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeOrderedIds;

impl IdGenerator for TimeOrderedIds {
    fn generate(&self) -> Uuid {
        Uuid::now_v7()
    }
}
