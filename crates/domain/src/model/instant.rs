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
    let utc = at.checked_to_offset(UtcOffset::UTC).unwrap_or(at);
    match u32::try_from(utc.year()) {
        // Written digit by digit: `time`'s general formatter, which reads the format
        // description anew on every call, was 4 % of a task list's CPU.
        Ok(year) if year <= 9999 && utc.offset() == UtcOffset::UTC => {
            let mut text = String::with_capacity(24);
            push_digits(&mut text, year, 4);
            text.push('-');
            push_digits(&mut text, u32::from(u8::from(utc.month())), 2);
            text.push('-');
            push_digits(&mut text, u32::from(utc.day()), 2);
            text.push('T');
            push_digits(&mut text, u32::from(utc.hour()), 2);
            text.push(':');
            push_digits(&mut text, u32::from(utc.minute()), 2);
            text.push(':');
            push_digits(&mut text, u32::from(utc.second()), 2);
            text.push('.');
            push_digits(&mut text, u32::from(utc.millisecond()), 3);
            text.push('Z');
            Ok(text)
        }
        _ => utc.format(format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        )),
    }
}

/// Appends the last `width` decimal digits of `value`, zero-padded.
fn push_digits(text: &mut String, value: u32, width: u32) {
    for place in (0..width).rev() {
        let digit = value / 10u32.pow(place) % 10;
        text.push(char::from_digit(digit, 10).unwrap_or('0'));
    }
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

    /// The hand-written digits agree with `time`'s formatter, for instants across the
    /// years it writes, and years before 0 are still left to it.
    #[test]
    fn text_agrees_with_the_general_formatter() {
        let general = format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        );
        let step = time::Duration::milliseconds(86_399_999_937);
        let mut next = Some(datetime!(0000-01-01 00:00:00 UTC));
        while let Some(at) = next {
            assert_eq!(format_millis(at).unwrap(), at.format(&general).unwrap());
            next = at.checked_add(step);
        }
        let edge = datetime!(9999-12-31 23:59:59.999 UTC);
        assert_eq!(format_millis(edge).unwrap(), "9999-12-31T23:59:59.999Z");
        let before_zero = datetime!(-0001-12-31 23:59:59 UTC);
        assert_eq!(
            format_millis(before_zero).unwrap(),
            before_zero.format(&general).unwrap()
        );
    }

    #[test]
    fn an_out_of_range_conversion_does_not_panic() {
        let edge = datetime!(9999-12-31 23:59:59 -23:59);
        assert_eq!(to_millis(edge), edge);
    }
}
