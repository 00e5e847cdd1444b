use time::OffsetDateTime;

use super::OrgId;
use crate::ValidationError;
use crate::validation::{max_chars, no_nul};

/// An organization's display name: trimmed, 1..=255 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrgName(String);

impl OrgName {
    /// Trims and checks `value`.
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(ValidationError::new("organization name must not be empty"));
        }
        max_chars("organization name", trimmed, 255)?;
        no_nul("organization name", trimmed)?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A lower-case, dash-separated form for identifiers (`Acme Corp` -> `acme-corp`).
    ///
    /// ```
    /// use muster_domain::model::OrgName;
    /// assert_eq!(OrgName::new(" Acme  Corp! ").unwrap().slug(), "acme-corp");
    /// ```
    pub fn slug(&self) -> String {
        let mut slug = String::new();
        for c in self.0.chars() {
            if c.is_ascii_alphanumeric() {
                slug.push(c.to_ascii_lowercase());
            } else if !slug.is_empty() && !slug.ends_with('-') {
                slug.push('-');
            }
        }
        let slug = slug.trim_end_matches('-').to_owned();
        if slug.is_empty() {
            "org".to_owned()
        } else {
            slug
        }
    }
}

/// A tenant: every other record belongs to exactly one.
#[derive(Debug, Clone, PartialEq)]
pub struct Organization {
    /// Identity.
    pub id: OrgId,
    /// Display name.
    pub name: OrgName,
    /// Whether logins without an `orgId` land here (the first bootstrapped one).
    pub is_default: bool,
    /// When it was created.
    pub created_at: OffsetDateTime,
}
