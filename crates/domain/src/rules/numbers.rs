//! Reading JSON numbers: JSON has one number type, so `7.0` is the integer 7 wherever
//! an integer is expected, in our bodies and in third-party payloads alike.

use serde_json::Value;

/// A JSON number without a fractional part, as an `i64`: `7` or `7.0` (JSON has one
/// number type, and a code host's serializer may write either).
///
/// ```
/// use muster_domain::rules::numbers::whole_number;
/// use serde_json::json;
/// assert_eq!(whole_number(&json!(7)), Some(7));
/// assert_eq!(whole_number(&json!(7.0)), Some(7));
/// assert_eq!(whole_number(&json!(7.5)), None);
/// assert_eq!(whole_number(&json!(1e300)), None);
/// assert_eq!(whole_number(&json!("7")), None);
/// ```
pub fn whole_number(value: &Value) -> Option<i64> {
    if let Some(n) = value.as_i64() {
        return Some(n);
    }
    let f = value.as_f64()?;
    // In range, a whole float converts to exactly the integer it is.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let in_range = f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64;
    #[allow(clippy::cast_possible_truncation)]
    in_range.then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::whole_number;

    #[test]
    fn whole_numbers_in_range_only() {
        assert_eq!(whole_number(&json!(7)), Some(7));
        assert_eq!(whole_number(&json!(-7.0)), Some(-7));
        assert_eq!(whole_number(&json!(i64::MAX)), Some(i64::MAX));
        assert_eq!(whole_number(&json!(i64::MIN)), Some(i64::MIN));
        assert_eq!(
            whole_number(&json!(-9_223_372_036_854_775_808.0)),
            Some(i64::MIN)
        );
        // 2^63 is one past i64::MAX, as an unsigned integer or as a float: out of range,
        // not clamped to i64::MAX.
        assert_eq!(whole_number(&json!(9_223_372_036_854_775_808_u64)), None);
        assert_eq!(whole_number(&json!(9_223_372_036_854_775_808.0)), None);
        assert_eq!(whole_number(&json!(0.5)), None);
        assert_eq!(whole_number(&json!(null)), None);
        assert_eq!(whole_number(&json!("7")), None);
    }
}
