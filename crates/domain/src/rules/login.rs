//! Login throttling (decision D-14, hardened by issue 61). Failures are counted per
//! account *and* client address, in streaks: the [`MAX_FAILURES`]th failure of a streak
//! locks that address out of that account for [`FIRST_LOCK`], and each further failure
//! (one per lock, once it has run out) doubles the lock, up to [`LONGEST_LOCK`]. A
//! success ends the streak, and so does a quiet [`FORGOTTEN_AFTER`]. A stranger's
//! failures therefore slow the stranger, never the owner signing in from elsewhere, and
//! no lock lasts longer than [`LONGEST_LOCK`] after the last failure (OWASP ASVS V2.2.1:
//! soft lockouts with ever longer delays; one address gets about 12 attempts in the
//! first hour of a streak and fewer after that).

use time::{Duration, OffsetDateTime};

use crate::model::LoginThrottle;

/// The failure of a streak that locks first.
pub const MAX_FAILURES: u32 = 10;

/// How long the first lock of a streak lasts.
pub const FIRST_LOCK: Duration = Duration::minutes(15);

/// The longest lock: each failure after the first lock doubles it up to this.
pub const LONGEST_LOCK: Duration = Duration::hours(4);

/// A streak whose last failure is this old is over (and may be purged).
pub const FORGOTTEN_AFTER: Duration = Duration::hours(24);

/// How long the `failures`th failure of a streak locks: nothing before [`MAX_FAILURES`],
/// then [`FIRST_LOCK`] doubling with each failure, at most [`LONGEST_LOCK`].
///
/// ```
/// use muster_domain::rules::login::lock_for;
/// use time::Duration;
/// assert_eq!(lock_for(9), None);
/// assert_eq!(lock_for(10), Some(Duration::minutes(15)));
/// assert_eq!(lock_for(13), Some(Duration::minutes(120)));
/// assert_eq!(lock_for(14), Some(Duration::minutes(240)));
/// assert_eq!(lock_for(u32::MAX), Some(Duration::minutes(240)));
/// ```
pub fn lock_for(failures: u32) -> Option<Duration> {
    let doublings = failures.checked_sub(MAX_FAILURES)?;
    // 2^4 first locks reach the longest lock already: no need to shift further.
    let factor = 1_i32 << doublings.min(4);
    Some((FIRST_LOCK * factor).min(LONGEST_LOCK))
}

impl LoginThrottle {
    /// The streak as it stands at `now`: empty once its last failure is
    /// [`FORGOTTEN_AFTER`] old.
    #[must_use]
    pub fn at(self, now: OffsetDateTime) -> Self {
        match self.last_failure_at {
            Some(last) if now - last < FORGOTTEN_AFTER && self.failures > 0 => self,
            _ => Self::default(),
        }
    }

    /// Until when the streak's last failure locks it, if it does.
    pub fn locked_until(&self) -> Option<OffsetDateTime> {
        Some(self.last_failure_at? + lock_for(self.failures)?)
    }

    /// Whole seconds (at least 1) until the next attempt is admitted, or `None` when the
    /// streak is not locked at `now`.
    ///
    /// ```
    /// use muster_domain::model::LoginThrottle;
    /// use time::macros::datetime;
    /// let now = datetime!(2026-11-23 12:00:00 UTC);
    /// let locked = LoginThrottle { failures: 10, last_failure_at: Some(now - time::Duration::seconds(870)) };
    /// assert_eq!(locked.retry_after(now), Some(30));
    /// assert_eq!(LoginThrottle::default().retry_after(now), None);
    /// ```
    pub fn retry_after(&self, now: OffsetDateTime) -> Option<u64> {
        let until = self.at(now).locked_until().filter(|until| *until > now)?;
        let millis = (until - now).whole_milliseconds();
        let secs = u64::try_from((millis + 999) / 1000).unwrap_or(u64::MAX);
        Some(secs.max(1))
    }

    /// The streak after one more failure at `now` (of an attempt that was admitted: the
    /// caller checks [`retry_after`](Self::retry_after) first).
    #[must_use]
    pub fn after_failure(self, now: OffsetDateTime) -> Self {
        Self {
            failures: self.at(now).failures.saturating_add(1),
            last_failure_at: Some(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-11-23 12:00:00 UTC);

    fn streak(failures: u32, last: OffsetDateTime) -> LoginThrottle {
        LoginThrottle {
            failures,
            last_failure_at: Some(last),
        }
    }

    #[test]
    fn the_tenth_failure_locks_for_fifteen_minutes() {
        let mut throttle = LoginThrottle::default();
        for n in 1..MAX_FAILURES {
            throttle = throttle.after_failure(NOW);
            assert_eq!(throttle, streak(n, NOW));
            assert_eq!(throttle.retry_after(NOW), None);
        }
        throttle = throttle.after_failure(NOW);
        assert_eq!(throttle.retry_after(NOW), Some(900));
        assert_eq!(
            throttle.retry_after(NOW + Duration::minutes(15) - Duration::milliseconds(1)),
            Some(1)
        );
        assert_eq!(throttle.retry_after(NOW + Duration::minutes(15)), None);
    }

    #[test]
    fn each_later_failure_doubles_the_lock_up_to_four_hours() {
        let mut throttle = streak(MAX_FAILURES, NOW);
        for minutes in [30, 60, 120, 240, 240, 240] {
            let at = throttle.locked_until().unwrap();
            assert_eq!(
                throttle.retry_after(at),
                None,
                "admitted when the lock ends"
            );
            throttle = throttle.after_failure(at);
            assert_eq!(throttle.last_failure_at, Some(at));
            assert_eq!(throttle.retry_after(at), Some(minutes * 60), "{throttle:?}");
        }
        assert_eq!(throttle.failures, MAX_FAILURES + 6);
    }

    #[test]
    fn a_quiet_day_forgets_the_streak() {
        let locked = streak(MAX_FAILURES + 3, NOW);
        let almost = NOW + FORGOTTEN_AFTER - Duration::seconds(1);
        assert_eq!(locked.at(almost), locked);
        assert_eq!(
            locked.after_failure(almost).failures,
            MAX_FAILURES + 4,
            "still the same streak"
        );
        let later = NOW + FORGOTTEN_AFTER;
        assert_eq!(locked.at(later), LoginThrottle::default());
        assert_eq!(locked.after_failure(later), streak(1, later));
        // A lock never outlives the streak, and an empty streak locks nothing.
        assert_eq!(streak(u32::MAX, NOW).retry_after(later), None);
        assert_eq!(streak(0, NOW).at(NOW), LoginThrottle::default());
    }

    #[test]
    fn the_lock_ends_at_its_instant_and_is_never_shorter_than_a_second() {
        let locked = streak(MAX_FAILURES, NOW);
        assert_eq!(locked.locked_until(), Some(NOW + FIRST_LOCK));
        assert_eq!(locked.retry_after(NOW + FIRST_LOCK), None);
        assert_eq!(
            locked.retry_after(NOW + FIRST_LOCK - Duration::milliseconds(1)),
            Some(1)
        );
        assert_eq!(
            locked.retry_after(NOW + Duration::milliseconds(1)),
            Some(900),
            "rounded up"
        );
        assert_eq!(streak(MAX_FAILURES - 1, NOW).locked_until(), None);
        assert_eq!(LoginThrottle::default().locked_until(), None);
    }

    #[test]
    fn failures_saturate() {
        assert_eq!(streak(u32::MAX, NOW).after_failure(NOW).failures, u32::MAX);
    }
}
