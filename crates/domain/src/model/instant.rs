//! The one precision and text form of every Muster timestamp (decision D-6): UTC with
//! milliseconds, written `2026-11-22T01:02:03.456Z`.

use time::macros::format_description;
use time::{OffsetDateTime, UtcOffset};

/// `at` in UTC with the digits below the millisecond dropped.
///
/// ```
/// use muster_domain::model::instant::to_millis;
/// use time::macros::datetime;
/// assert_eq!(to_millis(datetime!(2026-11-22 03:02:03.456789 +02:00)),
///            datetime!(2026-11-22 01:02:03.456 UTC));
/// ```
pub fn to_millis(at: OffsetDateTime) -> OffsetDateTime {
    // An instant whose UTC date would leave the supported range keeps its offset
    // rather than panicking; the edges refuse such values anyway.
    let utc = at.checked_to_offset(UtcOffset::UTC).unwrap_or(at);
    // Setting the millisecond clears the finer digits; it cannot fail for a valid value.
    utc.replace_millisecond(utc.millisecond()).unwrap_or(utc)
}

/// `at` as fixed-width RFC 3339 text in UTC with milliseconds; text order is time order.
/// Fails only for years outside 0..=9999, which the edges refuse.
///
/// ```
/// use muster_domain::model::instant::format_millis;
/// use time::macros::datetime;
/// assert_eq!(format_millis(datetime!(2026-01-02 03:04:05 UTC)).unwrap(), "2026-01-02T03:04:05.000Z");
/// ```
pub fn format_millis(at: OffsetDateTime) -> Result<String, time::error::Format> {
    let format =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    at.checked_to_offset(UtcOffset::UTC)
        .unwrap_or(at)
        .format(&format)
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    #[test]
    fn text_is_fixed_width_utc_with_milliseconds() {
        let at = datetime!(2026-11-22 01:02:03.456789 +02:00);
        assert_eq!(format_millis(at).unwrap(), "2026-11-21T23:02:03.456Z");
        let whole = datetime!(2026-01-02 03:04:05 UTC);
        assert_eq!(format_millis(whole).unwrap(), "2026-01-02T03:04:05.000Z");
    }

    #[test]
    fn an_out_of_range_conversion_does_not_panic() {
        let edge = datetime!(9999-12-31 23:59:59 -23:59);
        assert_eq!(to_millis(edge), edge);
    }
}
