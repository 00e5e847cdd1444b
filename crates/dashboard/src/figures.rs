//! How numbers read on the pages: costs in US dollars (kept in millionths), token
//! counts with thousands separators, and durations.

use time::Duration;

/// Millionths of a US dollar as dollars, exact: at least the cents, then as many
/// further digits as the amount has (`150000` → `$0.15`, `1234` → `$0.001234`,
/// `5000000` → `$5.00`).
pub(crate) fn usd(microusd: i64) -> String {
    let sign = if microusd < 0 { "-" } else { "" };
    let whole = microusd.unsigned_abs();
    let dollars = whole / 1_000_000;
    let fraction = format!("{:06}", whole % 1_000_000);
    let fraction = fraction.trim_end_matches('0');
    let fraction = if fraction.len() < 2 {
        format!("{fraction:0<2}")
    } else {
        fraction.to_owned()
    };
    format!("{sign}${}.{fraction}", grouped(dollars))
}

/// A cost that may be unknown (no report of it could be priced).
pub(crate) fn usd_or_unknown(microusd: Option<i64>) -> String {
    microusd.map_or_else(|| "unknown".to_owned(), usd)
}

/// A whole number with thousands separators: `1234567` → `1,234,567`.
pub(crate) fn count(n: i64) -> String {
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{}", grouped(n.unsigned_abs()))
}

fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A duration as people read it: `12 s`, `3 min 05 s`, `2 h 07 min`, `3 d 4 h`.
pub(crate) fn duration(span: Duration) -> String {
    let seconds = span.whole_seconds().max(0);
    let (days, hours) = (seconds / 86_400, seconds / 3_600 % 24);
    let (minutes, secs) = (seconds / 60 % 60, seconds % 60);
    if days > 0 {
        format!("{days} d {hours} h")
    } else if hours > 0 {
        format!("{hours} h {minutes:02} min")
    } else if minutes > 0 {
        format!("{minutes} min {secs:02} s")
    } else {
        format!("{secs} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_are_exact_with_at_least_the_cents() {
        assert_eq!(usd(0), "$0.00");
        assert_eq!(usd(150_000), "$0.15");
        assert_eq!(usd(130_000), "$0.13");
        assert_eq!(usd(1_234), "$0.001234");
        assert_eq!(usd(5_000_000), "$5.00");
        assert_eq!(usd(5_500_000), "$5.50");
        assert_eq!(usd(1_234_567_890_000), "$1,234,567.89");
        assert_eq!(usd(-250_000), "-$0.25");
        assert_eq!(usd(i64::MIN), "-$9,223,372,036,854.775808");
        assert_eq!(usd_or_unknown(None), "unknown");
        assert_eq!(usd_or_unknown(Some(10)), "$0.00001");
    }

    #[test]
    fn counts_group_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(-12_345), "-12,345");
    }

    #[test]
    fn durations_read_in_the_two_largest_units() {
        assert_eq!(duration(Duration::seconds(12)), "12 s");
        assert_eq!(duration(Duration::seconds(185)), "3 min 05 s");
        assert_eq!(
            duration(Duration::seconds(2 * 3_600 + 7 * 60 + 9)),
            "2 h 07 min"
        );
        assert_eq!(
            duration(Duration::seconds(3 * 86_400 + 4 * 3_600)),
            "3 d 4 h"
        );
        assert_eq!(duration(Duration::seconds(-5)), "0 s");
    }
}
