use std::fmt;

mod visible;

pub(crate) use visible::{displayable, is_invisible, nfkc, without_hidden};

/// A value that breaks one of the domain's limits. The message names the field and the
/// rule in the user's words ("title must be at most 255 characters").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ValidationError {
    message: String,
}

impl ValidationError {
    /// A validation failure with a complete, human sentence.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The sentence describing the failure.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Checks that `value` has at most `max` characters (Unicode scalar values).
pub(crate) fn max_chars(field: &str, value: &str, max: usize) -> Result<(), ValidationError> {
    if value.chars().count() > max {
        return Err(ValidationError::new(format!(
            "{field} must be at most {max} characters"
        )));
    }
    Ok(())
}

/// Refuses U+0000: PostgreSQL cannot store it in text or JSON, so accepting it would let
/// the two engines disagree (and one of them fail with a 500).
pub(crate) fn no_nul(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.contains('\0') {
        return Err(ValidationError::new(format!(
            "{field} must not contain the NUL character"
        )));
    }
    Ok(())
}

/// [`no_nul`] over every key and string of a JSON value.
pub(crate) fn json_without_nul(
    field: &str,
    value: &serde_json::Value,
) -> Result<(), ValidationError> {
    match value {
        serde_json::Value::String(s) => no_nul(field, s),
        serde_json::Value::Array(items) => {
            items.iter().try_for_each(|v| json_without_nul(field, v))
        }
        serde_json::Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            no_nul(field, k)?;
            json_without_nul(field, v)
        }),
        _ => Ok(()),
    }
}
