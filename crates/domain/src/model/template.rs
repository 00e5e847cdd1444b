use serde::Serialize;
use time::OffsetDateTime;

use super::{Description, Metadata, OrgId, Tags, TaskId, TaskPriority, TemplateId, Title};
use crate::ValidationError;
use crate::validation::{max_chars, no_nul};

/// A template's name: trimmed, 1..=255 characters, unique in its organization regardless
/// of case (decision D-38).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct TemplateName(String);

impl TemplateName {
    /// Longest name accepted, in characters.
    pub const MAX_CHARS: usize = 255;

    /// Trims `value` and checks it.
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(ValidationError::new("name must not be empty"));
        }
        max_chars("name", trimmed, Self::MAX_CHARS)?;
        no_nul("name", trimmed)?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The form uniqueness is checked on: lower case.
    ///
    /// ```
    /// use muster_domain::model::TemplateName;
    /// assert_eq!(TemplateName::new(" Weekly Report ").unwrap().key(), "weekly report");
    /// ```
    pub fn key(&self) -> String {
        self.0.to_lowercase()
    }
}

/// A reusable task shape, saved from a task (decision D-38).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskTemplate {
    /// Identity.
    pub id: TemplateId,
    /// The owning organization.
    pub org_id: OrgId,
    /// Unique name.
    pub name: TemplateName,
    /// Title of the tasks made from it.
    pub title: Title,
    /// Their description.
    pub description: Option<Description>,
    /// Their priority.
    pub priority: TaskPriority,
    /// Their tags.
    pub tags: Tags,
    /// Whether they need approval.
    pub approval_required: bool,
    /// Their metadata.
    pub metadata: Metadata,
    /// The task it was saved from.
    pub created_from_task_id: Option<TaskId>,
    /// When it was saved.
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_name_is_trimmed_and_compared_in_lower_case() {
        let name = TemplateName::new("  Weekly Report ").unwrap();
        assert_eq!(name.as_str(), "Weekly Report");
        assert_eq!(name.key(), "weekly report");
        assert!(TemplateName::new("   ").is_err());
        assert!(TemplateName::new("a\0b").is_err());
        let longest = "n".repeat(TemplateName::MAX_CHARS);
        assert_eq!(TemplateName::new(&longest).unwrap().as_str(), longest);
        assert!(TemplateName::new(&format!("{longest}n")).is_err());
    }
}
