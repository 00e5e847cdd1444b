//! Cron schedules (issue 66, decision D-108): five fields (minute, hour, day of month,
//! month, day of week) or six with seconds first, evaluated in an IANA time zone.
//! Parsing and evaluation are `croner`'s; the time zones are `chrono-tz`'s. Daylight
//! saving is handled as croner documents (the Open Cron Pattern Specification): a
//! fixed time that falls into a spring-forward gap fires at the first instant after the
//! gap; a fixed time in a fall-back repeat fires once, at its first occurrence; an
//! interval pattern (`*/15 * * * *`) skips the gap and fires in both passes of a repeat.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds, Year};
use croner::{Cron, Direction};
use time::OffsetDateTime;

use crate::ValidationError;

/// A checked cron expression in a time zone.
#[derive(Clone)]
pub struct Schedule {
    expression: String,
    timezone: String,
    cron: Cron,
    tz: Tz,
}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schedule")
            .field("expression", &self.expression)
            .field("timezone", &self.timezone)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Schedule {
    fn eq(&self, other: &Self) -> bool {
        self.expression == other.expression && self.timezone == other.timezone
    }
}

impl Eq for Schedule {}

impl Schedule {
    /// Longest expression accepted, in characters.
    pub const MAX_CHARS: usize = 200;
    /// The time zone of a schedule that names none.
    pub const UTC: &'static str = "UTC";
    /// Longest time zone name accepted, in characters.
    pub const MAX_TIMEZONE_CHARS: usize = 64;

    /// Checks `expression` (five or six fields) and `timezone` (an IANA name).
    ///
    /// ```
    /// use muster_domain::rules::schedule::Schedule;
    /// assert!(Schedule::new("0 9 * * MON-FRI", "Europe/Berlin").is_ok());
    /// assert!(Schedule::new("*/2 * * * * *", "UTC").is_ok());
    /// assert!(Schedule::new("0 9 * *", "UTC").is_err());
    /// assert!(Schedule::new("0 9 * * *", "Mars/Olympus").is_err());
    /// ```
    pub fn new(expression: &str, timezone: &str) -> Result<Self, ValidationError> {
        // Lengths count the whitespace around, as the document's limits do.
        crate::validation::max_chars("schedule", expression, Self::MAX_CHARS)?;
        crate::validation::max_chars("timezone", timezone, Self::MAX_TIMEZONE_CHARS)?;
        let expression = expression.trim();
        crate::validation::no_nul("schedule", expression)?;
        let fields = expression.split_whitespace().count();
        if !(5..=6).contains(&fields) {
            return Err(ValidationError::new(
                "schedule must be a cron expression of five fields (minute hour day-of-month \
                 month day-of-week) or six (seconds first)",
            ));
        }
        let cron = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build()
            .parse(expression)
            .map_err(|err| {
                ValidationError::new(format!("schedule is not a valid cron expression: {err}"))
            })?;
        let timezone = timezone.trim();
        let tz = Tz::from_str(timezone).map_err(|_| {
            ValidationError::new("timezone must be an IANA time zone name, such as Europe/Berlin")
        })?;
        Ok(Self {
            expression: expression.to_owned(),
            timezone: tz.name().to_owned(),
            cron,
            tz,
        })
    }

    /// A stored schedule, read back: checked again (a stored one always passes).
    pub fn stored(expression: &str, timezone: &str) -> Result<Self, ValidationError> {
        Self::new(expression, timezone)
    }

    /// The expression, as given (trimmed).
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The time zone's IANA name.
    pub fn timezone(&self) -> &str {
        &self.timezone
    }

    fn zoned(&self, at: OffsetDateTime) -> Option<DateTime<Tz>> {
        DateTime::<Utc>::from_timestamp(at.unix_timestamp(), at.nanosecond())
            .map(|t| t.with_timezone(&self.tz))
    }

    fn instant(at: &DateTime<Tz>) -> Option<OffsetDateTime> {
        let nanos = at.timestamp_nanos_opt()?;
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(nanos)).ok()
    }

    /// The first due time strictly after `after`; `None` when there is none left (or
    /// within the years the evaluator covers).
    pub fn next_after(&self, after: OffsetDateTime) -> Option<OffsetDateTime> {
        let zoned = self.zoned(after)?;
        let next = self.cron.find_next_occurrence(&zoned, false).ok()?;
        Self::instant(&next)
    }

    /// Up to `limit` due times at or before `until` and at or after `from`, latest first.
    pub fn due_between(
        &self,
        from: OffsetDateTime,
        until: OffsetDateTime,
        limit: usize,
    ) -> Vec<OffsetDateTime> {
        let Some(zoned) = self.zoned(until) else {
            return Vec::new();
        };
        self.cron
            .iter_from(zoned, Direction::Backward)
            .map_while(|at| Self::instant(&at).filter(|at| *at >= from))
            .take(limit)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    fn at(schedule: &Schedule, after: OffsetDateTime) -> OffsetDateTime {
        schedule.next_after(after).unwrap()
    }

    #[test]
    fn five_or_six_fields_and_a_known_zone() {
        for bad in [
            "",
            "* * * *",
            "* * * * * * *",
            "61 * * * *",
            "* * * 13 *",
            "@daily",
        ] {
            assert!(Schedule::new(bad, "UTC").is_err(), "{bad:?}");
        }
        let err = Schedule::new("0 9 * * *", "Europe/Nowhere").unwrap_err();
        assert!(err.message().contains("IANA"), "{}", err.message());
        let long = format!("0 9 * * {}", "1,".repeat(100));
        assert!(Schedule::new(&long, "UTC").is_err());
        let s = Schedule::new("  0 9 * * MON-FRI ", " Europe/Berlin ").unwrap();
        assert_eq!(
            (s.expression(), s.timezone()),
            ("0 9 * * MON-FRI", "Europe/Berlin")
        );
    }

    #[test]
    fn a_five_field_schedule_fires_on_the_minute_in_its_zone() {
        let s = Schedule::new("0 9 * * *", "America/New_York").unwrap();
        // 09:00 in New York in December is 14:00 UTC.
        assert_eq!(
            at(&s, datetime!(2026-12-07 12:00 UTC)),
            datetime!(2026-12-07 14:00 UTC)
        );
        assert_eq!(
            at(&s, datetime!(2026-12-07 14:00 UTC)),
            datetime!(2026-12-08 14:00 UTC),
            "strictly after"
        );
        let seconds = Schedule::new("*/2 * * * * *", "UTC").unwrap();
        assert_eq!(
            at(&seconds, datetime!(2026-12-07 12:00:01.5 UTC)),
            datetime!(2026-12-07 12:00:02 UTC)
        );
    }

    #[test]
    fn a_fixed_time_in_a_spring_forward_gap_fires_right_after_the_gap() {
        // Berlin, 2027-03-28: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist.
        let s = Schedule::new("30 2 * * *", "Europe/Berlin").unwrap();
        assert_eq!(
            at(&s, datetime!(2027-03-27 23:00 UTC)),
            // 03:00 CEST is 01:00 UTC.
            datetime!(2027-03-28 01:00 UTC)
        );
        // The next day it is 02:30 CEST again.
        assert_eq!(
            at(&s, datetime!(2027-03-28 01:00 UTC)),
            datetime!(2027-03-29 00:30 UTC)
        );
    }

    #[test]
    fn a_fixed_time_in_a_fall_back_repeat_fires_once() {
        // Berlin, 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
        let s = Schedule::new("30 2 * * *", "Europe/Berlin").unwrap();
        let first = at(&s, datetime!(2026-10-24 22:00 UTC));
        assert_eq!(first, datetime!(2026-10-25 00:30 UTC), "02:30 CEST");
        assert_eq!(
            at(&s, first),
            datetime!(2026-10-26 01:30 UTC),
            "not again at 02:30 CET"
        );
    }

    #[test]
    fn an_interval_fires_in_both_passes_of_a_repeat() {
        // Every 30 minutes through the repeated hour: 02:00 and 02:30 twice each.
        let s = Schedule::new("*/30 2 * * *", "Europe/Berlin").unwrap();
        let mut times = Vec::new();
        let mut after = datetime!(2026-10-24 23:59 UTC);
        for _ in 0..4 {
            after = at(&s, after);
            times.push(after);
        }
        assert_eq!(
            times,
            [
                datetime!(2026-10-25 00:00 UTC),
                datetime!(2026-10-25 00:30 UTC),
                datetime!(2026-10-25 01:00 UTC),
                datetime!(2026-10-25 01:30 UTC),
            ]
        );
    }

    #[test]
    fn due_times_are_listed_latest_first_within_bounds() {
        let s = Schedule::new("0 * * * *", "UTC").unwrap();
        let due = s.due_between(
            datetime!(2026-12-07 09:00 UTC),
            datetime!(2026-12-07 12:30 UTC),
            10,
        );
        assert_eq!(
            due,
            [
                datetime!(2026-12-07 12:00 UTC),
                datetime!(2026-12-07 11:00 UTC),
                datetime!(2026-12-07 10:00 UTC),
                datetime!(2026-12-07 09:00 UTC),
            ]
        );
        assert_eq!(
            s.due_between(
                datetime!(2026-12-01 00:00 UTC),
                datetime!(2026-12-07 12:00 UTC),
                2
            )
            .len(),
            2
        );
        let never = Schedule::new("0 0 30 2 *", "UTC").unwrap();
        assert_eq!(never.next_after(datetime!(2026-12-07 12:00 UTC)), None);
    }
}
