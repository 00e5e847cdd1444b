//! Projects (issue 66): tasks grouped under a name and a goal, with visible progress.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{Author, Description, OrgId, ProjectId, TaskId, TaskStatus, Title};
use crate::ValidationError;
use crate::validation::{displayable, max_chars, no_nul};

/// A project's name: trimmed, 1..=255 characters, shown as it reads (the rules of a
/// task's [`Title`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ProjectName(String);

impl ProjectName {
    /// Longest name accepted, in characters.
    pub const MAX_CHARS: usize = Title::MAX_CHARS;

    /// Trims `value` and checks it.
    ///
    /// ```
    /// use muster_domain::model::ProjectName;
    /// assert_eq!(ProjectName::new(" Launch v2 ").unwrap().as_str(), "Launch v2");
    /// assert!(ProjectName::new("  ").is_err());
    /// ```
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(ValidationError::new("name must not be empty"));
        }
        max_chars("name", trimmed, Self::MAX_CHARS)?;
        no_nul("name", trimmed)?;
        displayable("name", trimmed)?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The name as stored; stored names are read back without the checks of new ones.
    pub fn stored(value: String) -> Self {
        Self(value)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a project is for, in a sentence or a paragraph: 1..=2,000 characters, no NUL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ProjectGoal(String);

impl ProjectGoal {
    /// Longest goal accepted, in characters.
    pub const MAX_CHARS: usize = 2_000;

    /// Checks `value` (kept as given, not trimmed).
    ///
    /// ```
    /// use muster_domain::model::ProjectGoal;
    /// assert!(ProjectGoal::new("Ship the beta to ten customers".into()).is_ok());
    /// assert!(ProjectGoal::new(" ".into()).is_err());
    /// assert!(ProjectGoal::new("g".repeat(2_001)).is_err());
    /// ```
    pub fn new(value: String) -> Result<Self, ValidationError> {
        if value.trim().is_empty() {
            return Err(ValidationError::new("goal must not be empty"));
        }
        max_chars("goal", &value, Self::MAX_CHARS)?;
        no_nul("goal", &value)?;
        Ok(Self(value))
    }

    /// The goal as stored.
    pub fn stored(value: String) -> Self {
        Self(value)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether a project takes new work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ProjectStatus {
    /// Open: tasks may be added to it and it may be edited.
    Active,
    /// Put away: its tasks stay in it, but no task joins it and it is not edited.
    Archived,
}

impl ProjectStatus {
    /// Both statuses.
    pub const ALL: [Self; 2] = [Self::Active, Self::Archived];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Archived => "archived",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == value)
    }
}

/// Tasks grouped under a name and a goal in one organization.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// Identity.
    pub id: ProjectId,
    /// The owning organization.
    pub org_id: OrgId,
    /// Its name (not unique: two teams may both have a "Q3 launch").
    pub name: ProjectName,
    /// What it is for.
    pub goal: Option<ProjectGoal>,
    /// Markdown body.
    pub description: Option<Description>,
    /// When it should be done.
    pub due_at: Option<OffsetDateTime>,
    /// Active or archived.
    pub status: ProjectStatus,
    /// Who created it; `None` when the service did.
    pub creator: Option<Author>,
    /// When it was created.
    pub created_at: OffsetDateTime,
    /// When it last changed.
    pub updated_at: OffsetDateTime,
    /// When it was archived.
    pub archived_at: Option<OffsetDateTime>,
    /// Bumped on every change; guards against lost updates.
    pub version: i64,
}

/// How many of a project's tasks are in each status, and what is in the way, as the
/// store counts them; [`ProjectProgress`](crate::rules::progress::ProjectProgress) is
/// what the rules make of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectTally {
    /// Tasks per status, in [`TaskStatus::ALL`]'s order.
    pub by_status: [u64; 7],
    /// Open tasks past their due date at the instant asked about: how many.
    pub overdue: u64,
    /// The first of them (oldest due date first), at most [`ProjectTally::LISTED`].
    pub overdue_tasks: Vec<TaskBrief>,
    /// The tasks in status `blocked`, longest blocked first, at most
    /// [`ProjectTally::LISTED`].
    pub blocked_tasks: Vec<TaskBrief>,
    /// Credits the usage of its tasks' runs cost.
    pub spent_credits: i64,
    /// What that usage cost in US dollars, in millionths, where it was known.
    pub cost_microusd: i64,
}

impl ProjectTally {
    /// How many overdue or blocked tasks a progress report names.
    pub const LISTED: usize = 10;

    /// How many tasks are in `status`.
    pub fn count(&self, status: TaskStatus) -> u64 {
        TaskStatus::ALL
            .iter()
            .position(|s| *s == status)
            .and_then(|i| self.by_status.get(i).copied())
            .unwrap_or(0)
    }

    /// Adds `n` tasks in `status`.
    pub fn add(&mut self, status: TaskStatus, n: u64) {
        if let Some(i) = TaskStatus::ALL.iter().position(|s| *s == status)
            && let Some(slot) = self.by_status.get_mut(i)
        {
            *slot += n;
        }
    }
}

/// A task named in a progress report: enough to show and link it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskBrief {
    /// The task.
    pub id: TaskId,
    /// Its title.
    pub title: String,
    /// Its status.
    pub status: TaskStatus,
    /// Its deadline.
    pub due_at: Option<OffsetDateTime>,
    /// When it entered its status.
    pub status_changed_at: OffsetDateTime,
}

/// One day of a project's burn-up: tasks created and done up to the end of that day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BurnUpDay {
    /// The UTC day.
    pub day: time::Date,
    /// Tasks created by the end of it (the project's scope then).
    pub created: u64,
    /// Tasks done by the end of it.
    pub done: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_goals_are_checked() {
        assert_eq!(ProjectName::new(" Q3 ").unwrap().as_str(), "Q3");
        assert!(ProjectName::new(&"n".repeat(255)).is_ok());
        assert!(ProjectName::new(&"n".repeat(256)).is_err());
        assert!(ProjectName::new("a\0b").is_err());
        assert!(ProjectName::new("Invoice \u{202E}fdp").is_err());
        assert!(ProjectGoal::new("g".repeat(2_000)).is_ok());
        assert!(ProjectGoal::new("a\0".into()).is_err());
    }

    #[test]
    fn status_names_round_trip() {
        for status in ProjectStatus::ALL {
            assert_eq!(ProjectStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(ProjectStatus::parse("closed"), None);
    }

    #[test]
    fn a_tally_counts_by_status() {
        let mut tally = ProjectTally::default();
        tally.add(TaskStatus::Done, 3);
        tally.add(TaskStatus::Blocked, 1);
        tally.add(TaskStatus::Done, 1);
        assert_eq!(tally.count(TaskStatus::Done), 4);
        assert_eq!(tally.count(TaskStatus::Blocked), 1);
        assert_eq!(tally.count(TaskStatus::Todo), 0);
    }
}
