//! A project's progress (issue 66, decision D-107): what its task counts mean, and its
//! burn-up.
//!
//! * **Done %** is done tasks over the tasks that still count: every task of the project
//!   but the cancelled ones, rounded down to a whole percent; 0 for a project with none.
//!   A project whose every counted task is done is 100 %.
//! * **Open** tasks are those neither done nor cancelled.
//! * The **burn-up** gives, for each UTC day of a window, the tasks created by the end of
//!   that day (the scope) and the tasks done by then; cancelled tasks count in the scope
//!   until the chart's tasks are read again, as they were created.

use time::{Date, Duration, OffsetDateTime};

use crate::model::{BurnUpDay, ProjectTally, TaskStatus};
use crate::ports::TaskSpan;

/// What a progress report says of a project's tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectProgress {
    /// Every task of the project.
    pub total: u64,
    /// The tasks neither done nor cancelled.
    pub open: u64,
    /// The tasks done.
    pub done: u64,
    /// Done over the tasks not cancelled, in whole percent, rounded down.
    pub done_pct: u8,
}

impl ProjectProgress {
    /// The progress the counts of `tally` make.
    ///
    /// ```
    /// use muster_domain::model::{ProjectTally, TaskStatus};
    /// use muster_domain::rules::progress::ProjectProgress;
    /// let mut tally = ProjectTally::default();
    /// tally.add(TaskStatus::Done, 2);
    /// tally.add(TaskStatus::Todo, 1);
    /// tally.add(TaskStatus::Cancelled, 5);
    /// let progress = ProjectProgress::of(&tally);
    /// assert_eq!((progress.total, progress.open, progress.done_pct), (8, 1, 66));
    /// ```
    pub fn of(tally: &ProjectTally) -> Self {
        let total: u64 = tally.by_status.iter().sum();
        let done = tally.count(TaskStatus::Done);
        let cancelled = tally.count(TaskStatus::Cancelled);
        let counted = total.saturating_sub(cancelled);
        // done <= counted, so the quotient is at most 100; none counted is 0.
        let done_pct = done
            .saturating_mul(100)
            .checked_div(counted)
            .map_or(0, |pct| u8::try_from(pct).unwrap_or(100));
        Self {
            total,
            open: counted.saturating_sub(done),
            done,
            done_pct,
        }
    }
}

/// Most days a burn-up covers.
pub const MAX_BURN_UP_DAYS: u32 = 366;

/// The burn-up of the tasks `spans` over the `days` UTC days that end with the day of
/// `now` (at least one, at most [`MAX_BURN_UP_DAYS`]): for each day, the tasks created
/// and done by its end. Tasks created before the window count from its first day.
pub fn burn_up(spans: &[TaskSpan], now: OffsetDateTime, days: u32) -> Vec<BurnUpDay> {
    let days = days.clamp(1, MAX_BURN_UP_DAYS);
    let last = now.to_offset(time::UtcOffset::UTC).date();
    let first = last - Duration::days(i64::from(days) - 1);
    let day_of = |at: OffsetDateTime| at.to_offset(time::UtcOffset::UTC).date();
    // Index 0 holds what happened on or before the first day.
    let slot = |day: Date| -> Option<usize> {
        if day > last {
            None
        } else if day <= first {
            Some(0)
        } else {
            usize::try_from((day - first).whole_days()).ok()
        }
    };
    let len = usize::try_from(days).unwrap_or(1);
    let mut created = vec![0_u64; len];
    let mut done = vec![0_u64; len];
    for span in spans {
        if let Some(i) = slot(day_of(span.created_at))
            && let Some(n) = created.get_mut(i)
        {
            *n += 1;
        }
        if let Some(at) = span.done_at
            && let Some(i) = slot(day_of(at))
            && let Some(n) = done.get_mut(i)
        {
            *n += 1;
        }
    }
    let (mut scope, mut finished) = (0, 0);
    (0..len)
        .map(|i| {
            scope += created.get(i).copied().unwrap_or(0);
            finished += done.get(i).copied().unwrap_or(0);
            BurnUpDay {
                day: first + Duration::days(i64::try_from(i).unwrap_or(0)),
                created: scope,
                done: finished,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    fn tally(counts: &[(TaskStatus, u64)]) -> ProjectTally {
        let mut tally = ProjectTally::default();
        for (status, n) in counts {
            tally.add(*status, *n);
        }
        tally
    }

    #[test]
    fn done_percent_leaves_cancelled_tasks_out_and_rounds_down() {
        let p = ProjectProgress::of(&tally(&[
            (TaskStatus::Done, 1),
            (TaskStatus::Todo, 2),
            (TaskStatus::Cancelled, 4),
        ]));
        assert_eq!((p.total, p.open, p.done, p.done_pct), (7, 2, 1, 33));
        let all_done =
            ProjectProgress::of(&tally(&[(TaskStatus::Done, 3), (TaskStatus::Cancelled, 1)]));
        assert_eq!((all_done.open, all_done.done_pct), (0, 100));
    }

    #[test]
    fn a_project_without_counted_tasks_is_at_zero() {
        assert_eq!(ProjectProgress::of(&ProjectTally::default()).done_pct, 0);
        let cancelled = ProjectProgress::of(&tally(&[(TaskStatus::Cancelled, 2)]));
        assert_eq!(
            (cancelled.total, cancelled.open, cancelled.done_pct),
            (2, 0, 0)
        );
    }

    #[test]
    fn every_open_status_counts_as_open() {
        let p = ProjectProgress::of(&tally(&[
            (TaskStatus::Backlog, 1),
            (TaskStatus::Todo, 1),
            (TaskStatus::InProgress, 1),
            (TaskStatus::Review, 1),
            (TaskStatus::Blocked, 1),
            (TaskStatus::Done, 5),
        ]));
        assert_eq!((p.open, p.done_pct), (5, 50));
    }

    fn span(created: OffsetDateTime, done: Option<OffsetDateTime>) -> TaskSpan {
        TaskSpan {
            created_at: created,
            done_at: done,
        }
    }

    #[test]
    fn a_burn_up_accumulates_by_utc_day() {
        let now = datetime!(2026-12-07 15:00 UTC);
        let spans = [
            // Before the window: counted from its first day.
            span(
                datetime!(2026-11-01 09:00 UTC),
                Some(datetime!(2026-12-05 10:00 UTC)),
            ),
            span(datetime!(2026-12-05 23:59:59 UTC), None),
            // 00:30 on the 6th in UTC, though the 5th where it was written.
            span(
                datetime!(2026-12-05 20:30 -4),
                Some(datetime!(2026-12-07 08:00 UTC)),
            ),
            // After `now`'s day: not drawn.
            span(datetime!(2026-12-08 00:00 UTC), None),
        ];
        let days = burn_up(&spans, now, 3);
        let got: Vec<(String, u64, u64)> = days
            .iter()
            .map(|d| (d.day.to_string(), d.created, d.done))
            .collect();
        assert_eq!(
            got,
            [
                ("2026-12-05".to_owned(), 2, 1),
                ("2026-12-06".to_owned(), 3, 1),
                ("2026-12-07".to_owned(), 3, 2),
            ]
        );
    }

    #[test]
    fn a_burn_up_has_between_one_and_a_year_of_days() {
        let now = datetime!(2026-12-07 15:00 UTC);
        assert_eq!(burn_up(&[], now, 0).len(), 1);
        assert_eq!(burn_up(&[], now, 10_000).len(), 366);
        assert!(burn_up(&[], now, 30).iter().all(|d| d.created == 0));
    }
}
