//! Routines (issue 66, decision D-108): work that recurs on a cron schedule, creating a
//! task for each due time.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{
    AgentId, Author, Description, Metadata, OrgId, ProjectId, RoutineId, Tags, TaskId,
    TaskPriority, TemplateId, Title,
};
use crate::ValidationError;
use crate::rules::schedule::Schedule;
use crate::validation::{displayable, max_chars, no_nul};

/// A routine's name: trimmed, 1..=255 characters, shown as it reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RoutineName(String);

impl RoutineName {
    /// Longest name accepted, in characters.
    pub const MAX_CHARS: usize = Title::MAX_CHARS;

    /// Trims `value` and checks it.
    ///
    /// ```
    /// use muster_domain::model::RoutineName;
    /// assert_eq!(RoutineName::new(" Morning triage ").unwrap().as_str(), "Morning triage");
    /// assert!(RoutineName::new("").is_err());
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

    /// The name as stored, read back without the checks of new ones.
    pub fn stored(value: String) -> Self {
        Self(value)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a routine does with the due times it missed while nothing ran (the service was
/// down): times missed by more than [`MISSED_AFTER_SECONDS`](crate::rules::routines::MISSED_AFTER_SECONDS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum CatchUp {
    /// Nothing for the missed times: the routine goes on with its next one.
    Skip,
    /// One task for all the missed times (for the latest of them).
    #[default]
    One,
    /// A task for each missed time, the latest 100 at most.
    All,
}

impl CatchUp {
    /// Every policy.
    pub const ALL: [Self; 3] = [Self::Skip, Self::One, Self::All];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::One => "one",
            Self::All => "all",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == value)
    }
}

/// The task a routine creates each time it fires: the fields of a new task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutineTask {
    /// Its title.
    pub title: Title,
    /// Its description.
    pub description: Option<Description>,
    /// Its priority.
    pub priority: TaskPriority,
    /// Its tags.
    pub tags: Tags,
    /// The agent to assign it to.
    pub assignee_id: Option<AgentId>,
    /// Its reward (`None`: the organization's default), paid by the treasury.
    pub reward: Option<i64>,
    /// Whether closing it needs approval.
    pub approval_required: bool,
    /// Its metadata.
    pub metadata: Metadata,
    /// The project it joins.
    pub project_id: Option<ProjectId>,
}

impl RoutineTask {
    /// A task titled `title`, every other field at its default.
    pub fn new(title: Title) -> Self {
        Self {
            title,
            description: None,
            priority: TaskPriority::default(),
            tags: Tags::default(),
            assignee_id: None,
            reward: None,
            approval_required: false,
            metadata: Metadata::default(),
            project_id: None,
        }
    }
}

/// What a routine creates: a task of its own shape, or one from a template.
#[derive(Debug, Clone, PartialEq)]
pub enum RoutineWork {
    /// A task with these fields.
    Task(Box<RoutineTask>),
    /// A task made from this template of the organization.
    Template(TemplateId),
}

/// Work that recurs on a schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Routine {
    /// Identity.
    pub id: RoutineId,
    /// The owning organization.
    pub org_id: OrgId,
    /// Its name.
    pub name: RoutineName,
    /// When it fires.
    pub schedule: Schedule,
    /// What it creates.
    pub work: RoutineWork,
    /// Whether it fires.
    pub enabled: bool,
    /// What it does with times missed while nothing ran.
    pub catch_up: CatchUp,
    /// Whose permissions its tasks are created with: its creator, then whoever last
    /// changed it.
    pub owner: Author,
    /// When it fires next (`None` while disabled, or when its schedule has no time left).
    pub next_run_at: Option<OffsetDateTime>,
    /// The due time it last fired for.
    pub last_run_at: Option<OffsetDateTime>,
    /// The task it last created.
    pub last_task_id: Option<TaskId>,
    /// Why its last firing created no task.
    pub last_error: Option<String>,
    /// Why the service switched it off (its owner may no longer create tasks).
    pub paused_reason: Option<String>,
    /// When it was created.
    pub created_at: OffsetDateTime,
    /// When it last changed.
    pub updated_at: OffsetDateTime,
    /// Bumped on every change; guards against lost updates.
    pub version: i64,
}

/// One due time a routine fired for: stored once per (routine, due time), which is what
/// keeps several instances from firing it twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutineFiring {
    /// The routine.
    pub routine_id: RoutineId,
    /// Its organization.
    pub org_id: OrgId,
    /// The due time.
    pub due_at: OffsetDateTime,
    /// The task it created.
    pub task_id: TaskId,
    /// When it fired.
    pub fired_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_policies_are_checked() {
        assert!(RoutineName::new(&"r".repeat(255)).is_ok());
        assert!(RoutineName::new(&"r".repeat(256)).is_err());
        assert!(RoutineName::new("a\u{202e}b").is_err());
        for policy in CatchUp::ALL {
            assert_eq!(CatchUp::parse(policy.as_str()), Some(policy));
        }
        assert_eq!(CatchUp::default(), CatchUp::One);
        assert_eq!(CatchUp::parse("every"), None);
    }
}
