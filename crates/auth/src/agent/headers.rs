//! Syntax checks of the signing headers, before any lookup.

use super::AgentAuthError;

/// Most digits accepted in `X-Timestamp`; any 19-digit number fits in a `u64`.
const MAX_TIMESTAMP_DIGITS: usize = 19;

/// Longest nonce, in characters.
const MAX_NONCE_CHARS: usize = 128;

/// The value of header `name`; an empty value counts as missing.
pub(super) fn required<'a>(
    value: Option<&'a str>,
    name: &'static str,
) -> Result<&'a str, AgentAuthError> {
    value
        .filter(|value| !value.is_empty())
        .ok_or(AgentAuthError::MissingHeader(name))
}

/// Parses `X-Timestamp`: 1..=19 ASCII digits, no sign, no spaces. Leading zeros are
/// allowed (the header is signed as sent).
pub(super) fn parse_timestamp(value: &str) -> Result<u64, AgentAuthError> {
    if value.is_empty()
        || value.len() > MAX_TIMESTAMP_DIGITS
        || !value.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(AgentAuthError::InvalidTimestamp);
    }
    value.parse().map_err(|_| AgentAuthError::InvalidTimestamp)
}

/// Whether `timestamp` is within `tolerance` seconds of `now`, bounds included.
pub(super) fn is_fresh(timestamp: u64, now: i64, tolerance: u64) -> bool {
    i64::try_from(timestamp).is_ok_and(|timestamp| timestamp.abs_diff(now) <= tolerance)
}

/// Checks `X-Nonce`: 1..=128 printable ASCII characters, 0x20..=0x7E (D-10).
pub(super) fn check_nonce(value: &str) -> Result<(), AgentAuthError> {
    if value.is_empty()
        || value.len() > MAX_NONCE_CHARS
        || !value.bytes().all(|b| b == b' ' || b.is_ascii_graphic())
    {
        return Err(AgentAuthError::InvalidNonce);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_syntax() {
        assert_eq!(parse_timestamp("1795000000").unwrap(), 1_795_000_000);
        assert_eq!(parse_timestamp("0").unwrap(), 0);
        assert_eq!(parse_timestamp("0001795000000").unwrap(), 1_795_000_000);
        assert_eq!(
            parse_timestamp(&"9".repeat(19)).unwrap(),
            9_999_999_999_999_999_999
        );
        for bad in [
            "",
            "-1",
            "+1",
            " 1",
            "1 ",
            "1.5",
            "1e9",
            "0x10",
            "１２",
            &"1".repeat(20),
        ] {
            assert!(
                matches!(parse_timestamp(bad), Err(AgentAuthError::InvalidTimestamp)),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn freshness_bounds_are_inclusive() {
        let now = 1_795_000_000;
        assert!(is_fresh(1_795_000_000, now, 300));
        assert!(is_fresh(1_794_999_700, now, 300));
        assert!(is_fresh(1_795_000_300, now, 300));
        assert!(!is_fresh(1_794_999_699, now, 300));
        assert!(!is_fresh(1_795_000_301, now, 300));
        assert!(!is_fresh(0, now, 300));
        assert!(!is_fresh(u64::MAX, now, 300));
        assert!(!is_fresh(9_999_999_999_999_999_999, now, 300));
    }

    #[test]
    fn nonce_syntax() {
        assert!(check_nonce("0f8e9d2c-4b6a-4e1f-9a3d-7c5b2e1f0a9d").is_ok());
        assert!(check_nonce("!").is_ok() && check_nonce("~").is_ok());
        assert!(check_nonce(&"n".repeat(128)).is_ok());
        // Space is printable ASCII (D-10).
        assert!(check_nonce("a b").is_ok() && check_nonce(" ").is_ok());
        for bad in ["", "tab\t", "nul\0", "é", "del\x7f", &"n".repeat(129)] {
            assert!(
                matches!(check_nonce(bad), Err(AgentAuthError::InvalidNonce)),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn empty_header_counts_as_missing() {
        assert!(required(Some("x"), "X-Nonce").is_ok());
        for value in [None, Some("")] {
            let err = required(value, "X-Nonce").unwrap_err();
            assert_eq!(err.to_string(), "missing X-Nonce header");
        }
    }
}
