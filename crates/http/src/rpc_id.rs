//! JSON-RPC request ids as both endpoints (MCP, A2A) read them: a string, or an integer
//! within 64 bits, however the integer is written (`7` or `7.0`, which JSON Schema's
//! `integer` also allows).

use serde_json::{Number, Value};

/// The smallest integer `f64` outside the 64-bit range, 2^63.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// `id` as read: an integer (written as one), a string, or `None` when it is neither.
pub(crate) fn read(id: &Value) -> Option<Value> {
    match id {
        Value::String(_) => Some(id.clone()),
        Value::Number(n) if n.is_i64() => Some(id.clone()),
        Value::Number(n) => {
            let f = n.as_f64()?;
            let integral = f.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&f);
            // In range and without a fraction, the conversion is exact.
            #[allow(clippy::cast_possible_truncation)]
            integral.then(|| Value::Number(Number::from(f as i64)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::read;

    #[test]
    fn integers_however_written_and_strings() {
        assert_eq!(read(&json!(7)), Some(json!(7)));
        assert_eq!(read(&json!(517_846.0)), Some(json!(517_846)));
        assert_eq!(read(&json!(-3.0)), Some(json!(-3)));
        assert_eq!(read(&json!(i64::MIN)), Some(json!(i64::MIN)));
        assert_eq!(read(&json!("a")), Some(json!("a")));
        assert_eq!(read(&json!(1.5)), None);
        assert_eq!(read(&json!(9_223_372_036_854_775_808_u64)), None);
        assert_eq!(read(&json!(9.3e18)), None);
        assert_eq!(read(&json!(null)), None);
        assert_eq!(read(&json!({})), None);
    }
}
