//! JSON-RPC request ids as both endpoints (MCP, A2A) read them: a string, or an integer
//! within 64 bits, however the integer is written (`7` or `7.0`, which JSON Schema's
//! `integer` also allows).

use serde_json::{Number, Value};
use utoipa::openapi::schema::{
    KnownFormat, ObjectBuilder, OneOfBuilder, Schema, SchemaFormat, Type,
};

/// The smallest integer `f64` outside the 64-bit range, 2^63.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// `id` as read: an integer (written as one), a string, or `None` when it is neither.
pub(crate) fn read(id: &Value) -> Option<Value> {
    match id {
        Value::String(_) => Some(id.clone()),
        Value::Number(n) if n.is_i64() => Some(id.clone()),
        Value::Number(n) => {
            let f = n.as_f64()?;
            // -2^63 itself is left out: an integer just below the 64-bit range rounds to
            // it as an `f64`, and i64::MIN written as an integer is read above.
            let integral = f.fract() == 0.0 && f > -TWO_POW_63 && f < TWO_POW_63;
            // In range and without a fraction, the conversion is exact.
            #[allow(clippy::cast_possible_truncation)]
            integral.then(|| Value::Number(Number::from(f as i64)))
        }
        _ => None,
    }
}

/// The id of a request, as the documents describe it: an integer (64-bit) or a string.
pub(crate) fn request_schema() -> Schema {
    schema(false, "The request's id: an integer or a string")
}

/// The id of an MCP message: as [`request_schema`], or null (or left out) on a
/// notification.
pub(crate) fn message_schema() -> Schema {
    schema(
        true,
        "The request's id, an integer or a string; null or left out on a notification",
    )
}

fn schema(nullable: bool, description: &str) -> Schema {
    let mut one_of = OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                .minimum(Some(i64::MIN))
                .maximum(Some(i64::MAX)),
        )
        .item(ObjectBuilder::new().schema_type(Type::String));
    if nullable {
        one_of = one_of.item(ObjectBuilder::new().schema_type(Type::Null));
    }
    Schema::OneOf(one_of.description(Some(description)).build())
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
        // Just below the 64-bit range (schemathesis sent it): an f64 rounds it to -2^63.
        let below: serde_json::Value = serde_json::from_str("-9223372036854775809").unwrap();
        assert_eq!(read(&below), None);
        assert_eq!(
            read(&json!(-9.223_372_036_854_775e18)),
            Some(json!(-9_223_372_036_854_774_784_i64))
        );
        assert_eq!(read(&json!(null)), None);
        assert_eq!(read(&json!({})), None);
    }
}
