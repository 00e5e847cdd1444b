use serde::Serialize;

use crate::ValidationError;
use crate::validation::{displayable, max_chars, no_nul};

/// A task title: trimmed, not empty, at most 255 characters, shown as it reads: it must
/// hold a visible character and no bidirectional control (U+202A to U+202E, U+2066 to
/// U+2069).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Title(String);

impl Title {
    /// Longest title accepted, in characters.
    pub const MAX_CHARS: usize = 255;

    /// Trims `value` and checks it.
    ///
    /// ```
    /// use muster_domain::model::Title;
    /// assert_eq!(Title::new("  Ship it ").unwrap().as_str(), "Ship it");
    /// assert!(Title::new("   ").is_err());
    /// assert!(Title::new("\u{200B}").is_err());
    /// assert!(Title::new("Invoice \u{202E}fdp.exe").is_err());
    /// ```
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let title = Self::checked(value, Self::MAX_CHARS)?;
        displayable("title", title.as_str())?;
        Ok(title)
    }

    /// Longest title of a task created through an inbound webhook key, in characters.
    pub const INBOUND_MAX_CHARS: usize = 500;

    /// [`new`](Self::new) for a task created through an inbound webhook key, whose title
    /// may be longer (at most 500 characters).
    ///
    /// ```
    /// use muster_domain::model::Title;
    /// assert!(Title::inbound(&"x".repeat(500)).is_ok());
    /// assert!(Title::inbound(&"x".repeat(501)).is_err());
    /// assert!(Title::new(&"x".repeat(256)).is_err());
    /// ```
    pub fn inbound(value: &str) -> Result<Self, ValidationError> {
        let title = Self::checked(value, Self::INBOUND_MAX_CHARS)?;
        displayable("title", title.as_str())?;
        Ok(title)
    }

    /// A title as stored: any title either way of creating a task allows, and the
    /// titles stored before a title had to be displayable (still read, never refused).
    pub fn stored(value: &str) -> Result<Self, ValidationError> {
        Self::checked(value, Self::INBOUND_MAX_CHARS)
    }

    /// Trims `value` and checks its length and that PostgreSQL can store it.
    fn checked(value: &str, max: usize) -> Result<Self, ValidationError> {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(ValidationError::new("title must not be empty"));
        }
        max_chars("title", trimmed, max)?;
        no_nul("title", trimmed)?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The title text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A task description (Markdown), at most 100,000 characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Description(String);

impl Description {
    /// Longest description accepted, in characters.
    pub const MAX_CHARS: usize = 100_000;

    /// Checks the length of `value`.
    pub fn new(value: String) -> Result<Self, ValidationError> {
        max_chars("description", &value, Self::MAX_CHARS)?;
        no_nul("description", &value)?;
        Ok(Self(value))
    }

    /// The description text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A free-text reason given with a change (a transition, an escalation), at most 2,000
/// characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Reason(String);

impl Reason {
    /// Longest reason accepted, in characters.
    pub const MAX_CHARS: usize = 2_000;

    /// Checks the length of `value`.
    pub fn new(value: String) -> Result<Self, ValidationError> {
        Self::named("reason", value)
    }

    /// [`new`](Self::new) for a field with another name (an escalation's `notes`), so
    /// that the message names it.
    ///
    /// ```
    /// use muster_domain::model::Reason;
    /// let err = Reason::named("notes", "x".repeat(2_001)).unwrap_err();
    /// assert_eq!(err.message(), "notes must be at most 2000 characters");
    /// ```
    pub fn named(field: &str, value: String) -> Result<Self, ValidationError> {
        max_chars(field, &value, Self::MAX_CHARS)?;
        no_nul(field, &value)?;
        Ok(Self(value))
    }

    /// The reason text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `prefix` then `given` ("released: tests failed"): a reason the service words
    /// around one a caller gave, which the prefix may take past [`Self::MAX_CHARS`].
    pub(crate) fn prefixed(prefix: &str, given: &Self) -> Self {
        Self(format!("{prefix}{}", given.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_is_kept_exactly_as_given() {
        let text = "  Line one\n\tline two  ".to_owned();
        assert_eq!(Description::new(text.clone()).unwrap().as_str(), text);
        let longest = "d".repeat(Description::MAX_CHARS);
        assert_eq!(Description::new(longest.clone()).unwrap().as_str(), longest);
        assert!(Description::new(format!("{longest}d")).is_err());
        assert!(Description::new("a\0b".to_owned()).is_err());
    }

    #[test]
    fn title_counts_characters_not_bytes() {
        assert!(Title::new(&"é".repeat(255)).is_ok());
        let err = Title::new(&"é".repeat(256)).unwrap_err();
        assert_eq!(err.message(), "title must be at most 255 characters");
    }

    #[test]
    fn title_is_trimmed_before_the_length_check() {
        let padded = format!("  {}  ", "a".repeat(255));
        assert_eq!(Title::new(&padded).unwrap().as_str().len(), 255);
    }

    #[test]
    fn nul_characters_are_refused() {
        assert!(Title::new("a\0b").is_err());
        assert!(Description::new("a\0b".into()).is_err());
        assert_eq!(
            Reason::new("\0".into()).unwrap_err().message(),
            "reason must not contain the NUL character"
        );
    }

    #[test]
    fn a_title_must_show_what_it_holds() {
        assert_eq!(
            Title::new("\u{200B}").unwrap_err().message(),
            "title must contain a visible character"
        );
        assert!(Title::inbound(" \u{200B}\u{FEFF} ").is_err());
        let reversed = Title::new("Pay invoice \u{202E}fdp.exe").unwrap_err();
        assert!(
            reversed
                .message()
                .starts_with("title must not contain bidirectional")
        );
        assert!(Title::inbound("a\u{2066}b\u{2069}").is_err());
        // Text that shows itself, in any script, is kept exactly.
        for fine in [
            "Fix the parser",
            "Réparer l'analyseur",
            "修复解析器",
            "🚀 Launch",
        ] {
            assert_eq!(Title::new(fine).unwrap().as_str(), fine);
        }
        // A title stored before the rule is still read.
        assert!(Title::stored("\u{200B}").is_ok());
        assert!(Title::stored("a\u{202E}b").is_ok());
    }

    #[test]
    fn description_and_reason_limits() {
        assert!(Description::new("d".repeat(100_000)).is_ok());
        assert!(Description::new("d".repeat(100_001)).is_err());
        assert!(Reason::new("r".repeat(2_000)).is_ok());
        assert_eq!(
            Reason::new("r".repeat(2_001)).unwrap_err().message(),
            "reason must be at most 2000 characters"
        );
    }
}
