//! When the runaway guard trips. Each agent has two windows: writes counted from the
//! first write after the last window ended, for one minute; credits spent counted from
//! the first spend after the last window ended, for one hour. A change that takes a
//! window past its threshold trips the breaker: the change is refused and the agent
//! suspended. A window starts at the first counted change, so a burst that stays under
//! the threshold never trips, however it falls on the clock; the price is that two
//! consecutive windows may hold up to twice the threshold within one minute (or hour).
//!
//! The databases count with one `UPDATE` per change, written to do exactly what
//! [`count`] does.

use time::{Duration, OffsetDateTime};

use crate::model::{Breakers, Tally, TallyAdd};

/// How long a write window lasts.
pub const ACTION_WINDOW: Duration = Duration::minutes(1);
/// How long a spend window lasts.
pub const SPEND_WINDOW: Duration = Duration::hours(1);

/// Which breaker tripped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breaker {
    /// Too many writes per minute.
    ActionRate,
    /// Too many credits spent per hour.
    SpendVelocity,
}

impl Breaker {
    /// Its wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ActionRate => "action_rate",
            Self::SpendVelocity => "spend_velocity",
        }
    }

    /// The window its threshold counts over: `minute` or `hour`.
    pub const fn per(self) -> &'static str {
        match self {
            Self::ActionRate => "minute",
            Self::SpendVelocity => "hour",
        }
    }

    /// What it counts, in words.
    const fn counts(self) -> &'static str {
        match self {
            Self::ActionRate => "writes",
            Self::SpendVelocity => "credits spent",
        }
    }
}

/// A tripped breaker with what it measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "runaway guard: {measured} {what} within {elapsed_secs} s goes past the limit of \
     {limit} per {per}; the agent is suspended until an HR caller unsuspends it",
    what = self.breaker.counts(),
    per = self.breaker.per()
)]
pub struct Trip {
    /// Which breaker.
    pub breaker: Breaker,
    /// The count it reached, the refused change included.
    pub measured: i64,
    /// Its threshold.
    pub limit: i64,
    /// Seconds from the window's start to the refused change.
    pub elapsed_secs: i64,
}

/// What a change adds at `at`: one write and `credits` spent.
pub fn addition(at: OffsetDateTime, credits: i64) -> TallyAdd {
    TallyAdd {
        actions: 1,
        credits,
        at,
        actions_expired_at: at - ACTION_WINDOW,
        credits_expired_at: at - SPEND_WINDOW,
    }
}

/// The windows after `add` is counted on `before` (the reference the databases' one
/// statement follows).
pub fn count(before: Tally, add: TallyAdd) -> Tally {
    let ended = |since: Option<OffsetDateTime>, expired_at| since.is_none_or(|s| s <= expired_at);
    let (actions, actions_since) = if ended(before.actions_since, add.actions_expired_at) {
        (add.actions, Some(add.at))
    } else {
        (
            before.actions.saturating_add(add.actions),
            before.actions_since,
        )
    };
    let (credits, credits_since) = if add.credits == 0 {
        (before.credits, before.credits_since)
    } else if ended(before.credits_since, add.credits_expired_at) {
        (add.credits, Some(add.at))
    } else {
        (
            before.credits.saturating_add(add.credits),
            before.credits_since,
        )
    };
    Tally {
        actions,
        actions_since,
        credits,
        credits_since,
    }
}

/// The breaker `tally` trips under `breakers` at `now`, if any: a count strictly above
/// its threshold. The write breaker is asked first. A spend window that has ended (no
/// credits spent by this change) trips nothing.
pub fn check(tally: &Tally, breakers: Breakers, now: OffsetDateTime) -> Option<Trip> {
    let over = |measured: i64, limit: i64| limit > 0 && measured > limit;
    let elapsed = |since: Option<OffsetDateTime>| since.map_or(0, |s| (now - s).whole_seconds());
    let actions = breakers.actions_per_minute.get();
    if over(tally.actions, actions) {
        return Some(Trip {
            breaker: Breaker::ActionRate,
            measured: tally.actions,
            limit: actions,
            elapsed_secs: elapsed(tally.actions_since),
        });
    }
    let credits = breakers.credits_per_hour.get();
    let live = tally
        .credits_since
        .is_some_and(|since| now - since < SPEND_WINDOW);
    if live && over(tally.credits, credits) {
        return Some(Trip {
            breaker: Breaker::SpendVelocity,
            measured: tally.credits,
            limit: credits,
            elapsed_secs: elapsed(tally.credits_since),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::model::Threshold;

    const T0: OffsetDateTime = datetime!(2026-11-30 12:00:00 UTC);

    fn empty() -> Tally {
        Tally {
            actions: 0,
            actions_since: None,
            credits: 0,
            credits_since: None,
        }
    }

    fn breakers(actions: i64, credits: i64) -> Breakers {
        Breakers {
            actions_per_minute: Threshold::from_stored(actions),
            credits_per_hour: Threshold::from_stored(credits),
        }
    }

    /// Counts `n` writes `step` apart from `T0`, each spending `credits`.
    fn run(n: i64, step: Duration, credits: i64) -> Tally {
        (0..n).fold(empty(), |tally, i| {
            count(
                tally,
                addition(T0 + step * i32::try_from(i).unwrap_or(0), credits),
            )
        })
    }

    #[test]
    fn the_first_write_opens_a_window() {
        let tally = count(empty(), addition(T0, 0));
        assert_eq!((tally.actions, tally.actions_since), (1, Some(T0)));
        assert_eq!((tally.credits, tally.credits_since), (0, None));
    }

    #[test]
    fn writes_within_a_minute_add_up_and_the_minute_after_starts_over() {
        let tally = run(60, Duration::milliseconds(999), 0);
        assert_eq!((tally.actions, tally.actions_since), (60, Some(T0)));
        let later = count(tally, addition(T0 + Duration::seconds(59), 0));
        assert_eq!(later.actions, 61);
        let next = count(later, addition(T0 + Duration::seconds(60), 0));
        assert_eq!(
            (next.actions, next.actions_since),
            (1, Some(T0 + Duration::seconds(60)))
        );
    }

    #[test]
    fn a_spend_window_opens_with_the_first_spend_only() {
        let tally = count(empty(), addition(T0, 0));
        let spent = count(tally, addition(T0 + Duration::minutes(5), 40));
        assert_eq!(
            (spent.credits, spent.credits_since),
            (40, Some(T0 + Duration::minutes(5)))
        );
        let more = count(spent, addition(T0 + Duration::minutes(64), 2));
        assert_eq!(more.credits, 42, "59 minutes after the window opened");
        let over = count(more, addition(T0 + Duration::minutes(65), 7));
        assert_eq!(
            (over.credits, over.credits_since),
            (7, Some(T0 + Duration::minutes(65)))
        );
    }

    #[test]
    fn a_breaker_trips_above_its_threshold_and_not_at_it() {
        let b = breakers(5, 0);
        let five = run(5, Duration::seconds(1), 0);
        assert_eq!(check(&five, b, T0 + Duration::seconds(4)), None);
        let six = count(five, addition(T0 + Duration::seconds(5), 0));
        assert_eq!(
            check(&six, b, T0 + Duration::seconds(5)),
            Some(Trip {
                breaker: Breaker::ActionRate,
                measured: 6,
                limit: 5,
                elapsed_secs: 5
            })
        );
    }

    #[test]
    fn an_off_breaker_never_trips() {
        let tally = run(10_000, Duration::milliseconds(1), 1_000);
        assert_eq!(check(&tally, breakers(0, 0), T0), None);
    }

    #[test]
    fn spend_trips_above_its_hourly_threshold() {
        let b = breakers(0, 100);
        let at_limit = run(4, Duration::minutes(10), 25);
        assert_eq!(at_limit.credits, 100);
        assert_eq!(check(&at_limit, b, T0 + Duration::minutes(30)), None);
        let over = count(at_limit, addition(T0 + Duration::minutes(40), 1));
        let trip = check(&over, b, T0 + Duration::minutes(40));
        assert_eq!(
            trip.map(|t| (t.breaker, t.measured, t.limit, t.elapsed_secs)),
            Some((Breaker::SpendVelocity, 101, 100, 2_400))
        );
    }

    #[test]
    fn an_ended_spend_window_trips_nothing() {
        let mut tally = empty();
        tally.credits = 500;
        tally.credits_since = Some(T0);
        assert!(check(&tally, breakers(0, 100), T0 + Duration::minutes(59)).is_some());
        assert_eq!(
            check(&tally, breakers(0, 100), T0 + Duration::minutes(60)),
            None
        );
    }

    #[test]
    fn the_message_names_the_measure_and_the_limit() {
        let trip = Trip {
            breaker: Breaker::SpendVelocity,
            measured: 1_500,
            limit: 1_000,
            elapsed_secs: 12,
        };
        assert_eq!(
            trip.to_string(),
            "runaway guard: 1500 credits spent within 12 s goes past the limit of 1000 per \
             hour; the agent is suspended until an HR caller unsuspends it"
        );
        assert_eq!(Breaker::ActionRate.as_str(), "action_rate");
        assert_eq!(Breaker::SpendVelocity.as_str(), "spend_velocity");
        assert_eq!(
            (Breaker::ActionRate.per(), Breaker::SpendVelocity.per()),
            ("minute", "hour")
        );
    }
}
