//! How fast this instance lets sign-ins with the identity provider start.
//!
//! `GET /auth/google` needs no credentials and stores each sign-in it starts for ten
//! minutes, so whoever reaches it decides how much the database stores. A token bucket
//! bounds that: `per_second` starts a second, in bursts of up to five seconds' worth;
//! past it the route answers 429 and stores nothing. So one instance holds at most
//! about `per_second × 605` started sign-ins, however hard it is pushed. Only when the
//! operator sets a rate: by default no route but login is rate-limited (decision D-10a).

use std::sync::Mutex;
use std::time::Instant;

/// Seconds of starts a burst may take at once.
const BURST_SECONDS: f64 = 5.0;

/// The token bucket of sign-in starts.
#[derive(Debug)]
pub struct SignInStarts {
    per_second: f64,
    capacity: f64,
    /// Starts left, and when that was counted.
    bucket: Mutex<(f64, Instant)>,
}

impl SignInStarts {
    /// `per_second` starts a second (at least one), the bucket full at `now`.
    pub fn new(per_second: u32, now: Instant) -> Self {
        let per_second = f64::from(per_second.max(1));
        let capacity = per_second * BURST_SECONDS;
        Self {
            per_second,
            capacity,
            bucket: Mutex::new((capacity, now)),
        }
    }

    /// Takes one start at `now`; `false` when none is left (then nothing is taken).
    pub fn try_start(&self, now: Instant) -> bool {
        // A poisoned lock only means another thread panicked while counting: the
        // count itself is still a pair of numbers.
        let mut bucket = self
            .bucket
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (left, counted) = *bucket;
        let refilled = now.saturating_duration_since(counted).as_secs_f64() * self.per_second;
        let left = (left + refilled).min(self.capacity);
        if left >= 1.0 {
            *bucket = (left - 1.0, now);
            true
        } else {
            *bucket = (left, now);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_burst_of_five_seconds_then_the_rate() {
        let start = Instant::now();
        let starts = SignInStarts::new(2, start);
        let taken = (0..20).filter(|_| starts.try_start(start)).count();
        assert_eq!(taken, 10, "five seconds' worth at once");
        assert!(!starts.try_start(start + Duration::from_millis(400)));
        assert!(starts.try_start(start + Duration::from_millis(500)));
        assert!(!starts.try_start(start + Duration::from_millis(600)));
        // Refused attempts do not delay the next start.
        assert!(starts.try_start(start + Duration::from_secs(1)));
        // Idle time refills up to the burst, never past it.
        let later = start + Duration::from_secs(3_600);
        let taken = (0..20).filter(|_| starts.try_start(later)).count();
        assert_eq!(taken, 10);
    }

    #[test]
    fn a_rate_of_zero_is_one_a_second() {
        let start = Instant::now();
        let starts = SignInStarts::new(0, start);
        assert_eq!((0..10).filter(|_| starts.try_start(start)).count(), 5);
        assert!(starts.try_start(start + Duration::from_secs(1)));
    }

    #[test]
    fn a_clock_read_out_of_order_refills_nothing() {
        let earlier = Instant::now();
        let start = earlier + Duration::from_secs(10);
        let starts = SignInStarts::new(1, start);
        assert_eq!((0..10).filter(|_| starts.try_start(start)).count(), 5);
        assert!(!starts.try_start(earlier));
    }
}
