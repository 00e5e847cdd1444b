//! Login throttling (decision D-14): after [`MAX_FAILURES`] consecutive failed logins an
//! account is locked for [`LOCK_DURATION`], whatever password is then offered.

use time::{Duration, OffsetDateTime};

use crate::model::LoginThrottle;

/// Consecutive failures that lock an account.
pub const MAX_FAILURES: u32 = 10;

/// How long a locked account refuses logins.
pub const LOCK_DURATION: Duration = Duration::minutes(15);

impl LoginThrottle {
    /// Whole seconds (at least 1) until the account may log in again, or `None` when it
    /// is not locked at `now`.
    ///
    /// ```
    /// use muster_domain::model::LoginThrottle;
    /// use time::macros::datetime;
    /// let now = datetime!(2026-11-23 12:00:00 UTC);
    /// let locked = LoginThrottle { failures: 0, locked_until: Some(now + time::Duration::seconds(90)) };
    /// assert_eq!(locked.retry_after(now), Some(90));
    /// assert_eq!(LoginThrottle::default().retry_after(now), None);
    /// ```
    pub fn retry_after(&self, now: OffsetDateTime) -> Option<u64> {
        let until = self.locked_until.filter(|until| *until > now)?;
        let millis = (until - now).whole_milliseconds();
        let secs = u64::try_from((millis + 999) / 1000).unwrap_or(u64::MAX);
        Some(secs.max(1))
    }

    /// The throttle after one more failure at `now`: the tenth consecutive failure locks
    /// the account and starts the count over. A lock that has run out is forgotten.
    #[must_use]
    pub fn after_failure(self, now: OffsetDateTime) -> Self {
        let failures = if self.retry_after(now).is_none() && self.locked_until.is_some() {
            1
        } else {
            self.failures.saturating_add(1)
        };
        if failures >= MAX_FAILURES {
            Self {
                failures: 0,
                locked_until: Some(now + LOCK_DURATION),
            }
        } else {
            Self {
                failures,
                locked_until: self.locked_until.filter(|until| *until > now),
            }
        }
    }

    /// The throttle after a successful login: nothing counted, nothing locked.
    #[must_use]
    pub fn after_success(self) -> Self {
        Self::default()
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-11-23 12:00:00 UTC);

    #[test]
    fn the_tenth_failure_locks_for_fifteen_minutes() {
        let mut throttle = LoginThrottle::default();
        for n in 1..MAX_FAILURES {
            throttle = throttle.after_failure(NOW);
            assert_eq!(throttle.failures, n);
            assert_eq!(throttle.retry_after(NOW), None);
        }
        throttle = throttle.after_failure(NOW);
        assert_eq!(throttle.retry_after(NOW), Some(15 * 60));
        assert_eq!(
            throttle.retry_after(NOW + Duration::minutes(15) - Duration::milliseconds(1)),
            Some(1)
        );
        assert_eq!(throttle.retry_after(NOW + Duration::minutes(15)), None);
    }

    #[test]
    fn an_expired_lock_starts_a_new_count() {
        let locked = LoginThrottle {
            failures: 0,
            locked_until: Some(NOW),
        };
        // The lock ends at its instant: a failure then, or later, starts a new count.
        for later in [NOW, NOW + Duration::seconds(1)] {
            assert_eq!(
                locked.after_failure(later),
                LoginThrottle {
                    failures: 1,
                    locked_until: None
                },
                "{later}"
            );
        }
    }

    #[test]
    fn success_clears_everything() {
        let throttle = LoginThrottle {
            failures: 7,
            locked_until: None,
        };
        assert_eq!(throttle.after_success(), LoginThrottle::default());
    }
}
