use serde::Serialize;
use time::OffsetDateTime;

use super::{Author, CommentId, OrgId, TaskId};
use crate::ValidationError;
use crate::validation::no_nul;

/// The text of a comment: 1..=20,000 characters (decision D-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct CommentBody(String);

impl CommentBody {
    /// Longest comment accepted, in characters.
    pub const MAX_CHARS: usize = 20_000;

    /// Checks `value`.
    ///
    /// ```
    /// use muster_domain::model::CommentBody;
    /// assert!(CommentBody::new("Looks good".into()).is_ok());
    /// assert!(CommentBody::new(String::new()).is_err());
    /// ```
    pub fn new(value: String) -> Result<Self, ValidationError> {
        let chars = value.chars().count();
        if chars == 0 || chars > Self::MAX_CHARS {
            return Err(ValidationError::new(format!(
                "body must be 1 to {} characters",
                Self::MAX_CHARS
            )));
        }
        if value.trim().is_empty() {
            return Err(ValidationError::new("body must not be blank"));
        }
        no_nul("body", &value)?;
        Ok(Self(value))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A comment on a task, possibly answering another comment of the same task
/// (decision D-40).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// Identity.
    pub id: CommentId,
    /// The owning organization.
    pub org_id: OrgId,
    /// The task it is about.
    pub task_id: TaskId,
    /// Who wrote it; `None` for the service or an integration.
    pub author: Option<Author>,
    /// The comment it answers.
    pub parent_comment_id: Option<CommentId>,
    /// The text.
    pub body: CommentBody,
    /// When it was written.
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_limits() {
        assert!(CommentBody::new("x".repeat(20_000)).is_ok());
        assert_eq!(
            CommentBody::new("x".repeat(20_001)).unwrap_err().message(),
            "body must be 1 to 20000 characters"
        );
        assert!(CommentBody::new("  \n ".into()).is_err());
        assert!(CommentBody::new("a\0".into()).is_err());
        assert_eq!(
            CommentBody::new("é".repeat(20_000))
                .unwrap()
                .as_str()
                .chars()
                .count(),
            20_000
        );
    }
}
