use std::fmt;

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
