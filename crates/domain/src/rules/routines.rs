//! When a routine fires (issue 66, decision D-108): which due times get a task, given
//! how late they are and the routine's catch-up policy.
//!
//! A due time up to [`MISSED_AFTER_SECONDS`] old is on time: it always gets its task
//! (several of them, when the job that fires routines ran late). An older one was
//! missed (nothing ran): `skip` gives it none, `one` gives all of them together one task
//! (for the latest), `all` one each. At most [`MAX_FIRINGS`] tasks come of one firing,
//! the latest due times kept.

use time::{Duration, OffsetDateTime};

use crate::model::CatchUp;
use crate::rules::schedule::Schedule;

/// How old a due time may be and still be on time, in seconds.
pub const MISSED_AFTER_SECONDS: i64 = 60;

/// Most tasks one firing of a routine creates.
pub const MAX_FIRINGS: usize = 100;

/// What firing a routine at some instant does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Firing {
    /// The due times that get a task, oldest first.
    pub due: Vec<OffsetDateTime>,
    /// How many due times were missed and got no task of their own.
    pub skipped: usize,
    /// When it fires next.
    pub next: Option<OffsetDateTime>,
}

/// The firing of a routine on `schedule` whose next due time was `next_run_at`, at
/// `now`.
pub fn fire(
    schedule: &Schedule,
    next_run_at: OffsetDateTime,
    now: OffsetDateTime,
    catch_up: CatchUp,
) -> Firing {
    let next = schedule.next_after(now);
    if next_run_at > now {
        return Firing {
            due: Vec::new(),
            skipped: 0,
            next: Some(next_run_at),
        };
    }
    // Latest first; one more than the most kept, to know whether more were missed.
    let mut latest = schedule.due_between(next_run_at, now, MAX_FIRINGS + 1);
    let more = latest.len() > MAX_FIRINGS;
    latest.truncate(MAX_FIRINGS);
    let cut = now - Duration::seconds(MISSED_AFTER_SECONDS);
    let (on_time, missed): (Vec<_>, Vec<_>) = latest.into_iter().partition(|at| *at >= cut);
    let missed_count = missed.len() + usize::from(more);
    let mut due: Vec<OffsetDateTime> = match catch_up {
        CatchUp::Skip => on_time,
        CatchUp::One => missed.first().copied().into_iter().chain(on_time).collect(),
        CatchUp::All => missed.into_iter().chain(on_time).collect(),
    };
    due.sort_unstable();
    due.dedup();
    let skipped = missed_count.saturating_sub(due.iter().filter(|at| **at < cut).count());
    Firing { due, skipped, next }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    fn hourly() -> Schedule {
        Schedule::new("0 * * * *", "UTC").unwrap()
    }

    #[test]
    fn an_on_time_due_time_fires_once_and_the_next_is_set() {
        let f = fire(
            &hourly(),
            datetime!(2026-12-07 10:00 UTC),
            datetime!(2026-12-07 10:00:01 UTC),
            CatchUp::Skip,
        );
        assert_eq!(f.due, [datetime!(2026-12-07 10:00 UTC)]);
        assert_eq!(f.next, Some(datetime!(2026-12-07 11:00 UTC)));
        assert_eq!(f.skipped, 0);
    }

    #[test]
    fn nothing_fires_before_its_time() {
        let f = fire(
            &hourly(),
            datetime!(2026-12-07 11:00 UTC),
            datetime!(2026-12-07 10:59:59 UTC),
            CatchUp::All,
        );
        assert!(f.due.is_empty());
        assert_eq!(f.next, Some(datetime!(2026-12-07 11:00 UTC)));
    }

    #[test]
    fn after_downtime_each_policy_does_what_it_says() {
        // Down from before 07:00 to 10:00:30: 07:00, 08:00 and 09:00 were missed, 10:00
        // is on time.
        let (next_run_at, now) = (
            datetime!(2026-12-07 07:00 UTC),
            datetime!(2026-12-07 10:00:30 UTC),
        );
        let skip = fire(&hourly(), next_run_at, now, CatchUp::Skip);
        assert_eq!(skip.due, [datetime!(2026-12-07 10:00 UTC)]);
        assert_eq!(skip.skipped, 3);
        let one = fire(&hourly(), next_run_at, now, CatchUp::One);
        assert_eq!(
            one.due,
            [
                datetime!(2026-12-07 09:00 UTC),
                datetime!(2026-12-07 10:00 UTC)
            ]
        );
        assert_eq!(one.skipped, 2);
        let all = fire(&hourly(), next_run_at, now, CatchUp::All);
        assert_eq!(all.due.len(), 4);
        assert_eq!(all.skipped, 0);
        for f in [skip, one, all] {
            assert_eq!(f.next, Some(datetime!(2026-12-07 11:00 UTC)));
        }
    }

    #[test]
    fn missed_times_alone_give_one_task_with_one_and_none_with_skip() {
        let (next_run_at, now) = (
            datetime!(2026-12-07 07:00 UTC),
            datetime!(2026-12-07 09:30 UTC),
        );
        assert!(
            fire(&hourly(), next_run_at, now, CatchUp::Skip)
                .due
                .is_empty()
        );
        assert_eq!(
            fire(&hourly(), next_run_at, now, CatchUp::One).due,
            [datetime!(2026-12-07 09:00 UTC)]
        );
    }

    #[test]
    fn all_is_bounded_to_the_latest_hundred() {
        let every_minute = Schedule::new("* * * * *", "UTC").unwrap();
        let f = fire(
            &every_minute,
            datetime!(2026-12-01 00:00 UTC),
            datetime!(2026-12-07 12:00 UTC),
            CatchUp::All,
        );
        assert_eq!(f.due.len(), MAX_FIRINGS);
        assert_eq!(f.due.last(), Some(&datetime!(2026-12-07 12:00 UTC)));
        assert_eq!(f.due.first(), Some(&datetime!(2026-12-07 10:21 UTC)));
        assert!(f.skipped >= 1, "the older ones are counted as skipped");
    }

    #[test]
    fn late_ticks_still_give_every_on_time_second_its_task() {
        let every_two = Schedule::new("*/2 * * * * *", "UTC").unwrap();
        let f = fire(
            &every_two,
            datetime!(2026-12-07 10:00:00 UTC),
            datetime!(2026-12-07 10:00:05 UTC),
            CatchUp::Skip,
        );
        assert_eq!(
            f.due,
            [
                datetime!(2026-12-07 10:00:00 UTC),
                datetime!(2026-12-07 10:00:02 UTC),
                datetime!(2026-12-07 10:00:04 UTC),
            ]
        );
        assert_eq!(f.next, Some(datetime!(2026-12-07 10:00:06 UTC)));
    }
}
