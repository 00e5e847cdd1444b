use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::{AgentId, Author, Description, OrgId, ProjectId, RewardPayer, TaskId, Title};
use crate::ValidationError;
use crate::validation::{json_without_nul, no_nul};

/// Where a task stands in its workflow. See [`TaskStatus::can_transition_to`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TaskStatus {
    /// Not yet planned.
    Backlog,
    /// Planned; the initial status of a created task.
    Todo,
    /// Being worked on.
    InProgress,
    /// Waiting for review.
    Review,
    /// Finished (terminal).
    Done,
    /// Cannot progress.
    Blocked,
    /// Abandoned (terminal).
    Cancelled,
}

impl TaskStatus {
    /// Every status, in the contract's order.
    pub const ALL: [Self; 7] = [
        Self::Backlog,
        Self::Todo,
        Self::InProgress,
        Self::Review,
        Self::Done,
        Self::Blocked,
        Self::Cancelled,
    ];

    /// The wire name (`in_progress`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Backlog => "backlog",
            Self::Todo => "todo",
            Self::InProgress => "in_progress",
            Self::Review => "review",
            Self::Done => "done",
            Self::Blocked => "blocked",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == value)
    }

    /// `done` and `cancelled`: no transition leaves them.
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Done | Self::Cancelled)
    }
}

/// How a cancelled task ended, when it was not simply abandoned: what an A2A client
/// reads as `failed` or `rejected`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TaskOutcome {
    /// The work was attempted and failed.
    Failed,
    /// The work was turned down.
    Rejected,
}

impl TaskOutcome {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Failed => "failed",
            Self::Rejected => "rejected",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        [Self::Failed, Self::Rejected]
            .into_iter()
            .find(|o| o.as_str() == value)
    }
}

/// What came of a task, in words (or Markdown): 1..=20,000 characters, no NUL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct TaskResult(String);

impl TaskResult {
    /// Longest result, in characters.
    pub const MAX_CHARS: usize = 20_000;

    /// Checks `value`.
    ///
    /// ```
    /// use muster_domain::model::TaskResult;
    /// assert_eq!(TaskResult::new("Shipped in v2".into()).unwrap().as_str(), "Shipped in v2");
    /// assert!(TaskResult::new("  ".into()).is_err());
    /// ```
    pub fn new(value: String) -> Result<Self, ValidationError> {
        if value.trim().is_empty() {
            return Err(ValidationError::new("result must not be empty"));
        }
        crate::validation::max_chars("result", &value, Self::MAX_CHARS)?;
        no_nul("result", &value)?;
        Ok(Self(value))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// How urgent a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TaskPriority {
    /// Drop everything.
    Urgent,
    /// Soon.
    High,
    /// The default.
    #[default]
    Normal,
    /// When there is time.
    Low,
}

impl TaskPriority {
    /// Every priority, most urgent first.
    pub const ALL: [Self; 4] = [Self::Urgent, Self::High, Self::Normal, Self::Low];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Urgent => "urgent",
            Self::High => "high",
            Self::Normal => "normal",
            Self::Low => "low",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == value)
    }
}

/// Free-form labels: at most 50, each 1..=100 characters, duplicates removed (first
/// occurrence kept, order preserved).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct Tags(Vec<String>);

impl Tags {
    /// Most tags on one task.
    pub const MAX_COUNT: usize = 50;
    /// Longest tag, in characters.
    pub const MAX_CHARS: usize = 100;

    /// Checks and de-duplicates `values`.
    ///
    /// ```
    /// use muster_domain::model::Tags;
    /// let tags = Tags::new(vec!["q4".into(), "ops".into(), "q4".into()]).unwrap();
    /// assert_eq!(tags.as_slice(), ["q4", "ops"]);
    /// ```
    pub fn new(values: Vec<String>) -> Result<Self, ValidationError> {
        let mut seen = HashSet::new();
        let mut tags = Vec::with_capacity(values.len());
        for tag in values {
            let chars = tag.chars().count();
            if chars == 0 || chars > Self::MAX_CHARS {
                return Err(ValidationError::new(format!(
                    "each tag must be 1 to {} characters",
                    Self::MAX_CHARS
                )));
            }
            no_nul("tag", &tag)?;
            if seen.insert(tag.clone()) {
                tags.push(tag);
            }
        }
        if tags.len() > Self::MAX_COUNT {
            return Err(ValidationError::new(format!(
                "tags must hold at most {} entries",
                Self::MAX_COUNT
            )));
        }
        Ok(Self(tags))
    }

    /// The tags in order.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }
}

/// Arbitrary JSON attached to a task: an object of at most 64 KiB serialized.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct Metadata(Map<String, Value>);

impl Metadata {
    /// Largest serialized size accepted, in bytes.
    pub const MAX_BYTES: usize = 64 * 1024;

    /// Checks that `value` is an object within the size limit.
    pub fn new(value: Value) -> Result<Self, ValidationError> {
        let Value::Object(map) = value else {
            return Err(ValidationError::new("metadata must be a JSON object"));
        };
        map.iter().try_for_each(|(key, item)| {
            no_nul("metadata", key)?;
            json_without_nul("metadata", item)
        })?;
        let size = serde_json::to_vec(&map).map_or(usize::MAX, |bytes| bytes.len());
        if size > Self::MAX_BYTES {
            return Err(ValidationError::new(format!(
                "metadata must be at most {} bytes when serialized",
                Self::MAX_BYTES
            )));
        }
        Ok(Self(map))
    }

    /// The JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    /// The JSON object as a value.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

/// A unit of work inside one organization.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Identity.
    pub id: TaskId,
    /// The owning organization.
    pub org_id: OrgId,
    /// Short summary.
    pub title: Title,
    /// Markdown body.
    pub description: Option<Description>,
    /// Workflow position.
    pub status: TaskStatus,
    /// Urgency.
    pub priority: TaskPriority,
    /// The agent doing the work.
    pub assignee_id: Option<AgentId>,
    /// The agent or user that created it; `None` for tasks created by an integration.
    pub creator: Option<Author>,
    /// The task this one is a sub-task of.
    pub parent_task_id: Option<TaskId>,
    /// The project it belongs to (issue 66); a sub-task starts in its parent's.
    pub project_id: Option<ProjectId>,
    /// Whether closing needs an explicit approval.
    pub approval_required: bool,
    /// Deadline.
    pub due_at: Option<OffsetDateTime>,
    /// Labels.
    pub tags: Tags,
    /// Arbitrary JSON object.
    pub metadata: Metadata,
    /// Who approved it (decision D-33): an agent's or a user's UUID.
    pub approved_by: Option<uuid::Uuid>,
    /// When it was approved.
    pub approved_at: Option<OffsetDateTime>,
    /// When it was created.
    pub created_at: OffsetDateTime,
    /// When it last changed.
    pub updated_at: OffsetDateTime,
    /// When it entered its current status (for the blocked-too-long sweep).
    pub status_changed_at: OffsetDateTime,
    /// When anything last happened to it: a change or a comment (for the stale sweep).
    pub last_activity_at: OffsetDateTime,
    /// Until when the agent that claimed it holds it (`POST /tasks/claim`); `None` when
    /// it was not claimed or left `in_progress` since.
    pub lease_expires_at: Option<OffsetDateTime>,
    /// What came of it, as given with a move.
    pub result: Option<TaskResult>,
    /// Why a cancelled task ended: failed or rejected; `None` when it was abandoned
    /// (and for every task not cancelled).
    pub outcome: Option<TaskOutcome>,
    /// Credits held in escrow for whoever finishes it (decision D-101): paid out when
    /// it is done, returned to its payer when it is cancelled.
    pub reward: i64,
    /// Whose credits the reward came from.
    pub reward_payer: RewardPayer,
    /// Bumped on every change; guards against lost updates.
    pub version: i64,
}

impl Task {
    /// Task `id` of `org_id`, titled `title`, as it stands when created `at`: in `todo`
    /// at version 1, normal priority, nobody's creation, every optional field empty, no
    /// reward (an empty escrow of the treasury's). Name the others with struct update
    /// syntax:
    ///
    /// ```
    /// use muster_domain::model::{OrgId, Task, TaskId, TaskStatus, Title};
    /// let (id, org) = (TaskId::from_uuid(uuid::Uuid::from_u128(1)), OrgId::from_uuid(uuid::Uuid::nil()));
    /// let at = time::OffsetDateTime::UNIX_EPOCH;
    /// let task = Task { status: TaskStatus::Review, ..Task::new(id, org, Title::new("Ship it")?, at) };
    /// assert!(!task.awaits_approval());
    /// # Ok::<(), muster_domain::ValidationError>(())
    /// ```
    pub fn new(id: TaskId, org_id: OrgId, title: Title, at: OffsetDateTime) -> Self {
        Self {
            id,
            org_id,
            title,
            description: None,
            status: TaskStatus::Todo,
            priority: TaskPriority::default(),
            assignee_id: None,
            creator: None,
            parent_task_id: None,
            project_id: None,
            approval_required: false,
            due_at: None,
            tags: Tags::default(),
            metadata: Metadata::default(),
            approved_by: None,
            approved_at: None,
            created_at: at,
            updated_at: at,
            status_changed_at: at,
            last_activity_at: at,
            lease_expires_at: None,
            result: None,
            outcome: None,
            reward: 0,
            reward_payer: RewardPayer::Treasury,
            version: 1,
        }
    }

    /// In review and waiting for the approval it requires (decision D-33): approving
    /// moves it to `done`.
    pub fn awaits_approval(&self) -> bool {
        self.status == TaskStatus::Review && self.approval_required
    }

    /// The credits its escrow holds now: its reward until it is done or cancelled.
    pub fn escrowed(&self) -> i64 {
        if self.status.is_terminal() {
            0
        } else {
            self.reward
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn metadata_is_the_object_it_was_given() {
        let object = json!({"source": "chat", "nested": {"n": 1}});
        let metadata = Metadata::new(object.clone()).unwrap();
        assert_eq!(metadata.to_value(), object);
        assert_eq!(Value::Object(metadata.as_map().clone()), object);
        assert_eq!(Metadata::default().to_value(), json!({}));
    }

    #[test]
    fn tags_limits() {
        assert!(Tags::new(vec![String::new()]).is_err());
        assert!(Tags::new(vec!["x".repeat(101)]).is_err());
        assert!(Tags::new((0..50).map(|i| i.to_string()).collect()).is_ok());
        assert!(Tags::new((0..51).map(|i| i.to_string()).collect()).is_err());
        // Duplicates do not count toward the limit.
        let mut many: Vec<String> = (0..50).map(|i| i.to_string()).collect();
        many.push("0".into());
        assert_eq!(Tags::new(many).unwrap().as_slice().len(), 50);
    }

    #[test]
    fn metadata_must_be_a_small_object() {
        assert!(Metadata::new(json!([1])).is_err());
        assert!(Metadata::new(json!({"a": "b"})).is_ok());
        let big = json!({ "k": "x".repeat(64 * 1024) });
        assert_eq!(
            Metadata::new(big).unwrap_err().message(),
            "metadata must be at most 65536 bytes when serialized"
        );
    }

    #[test]
    fn nul_characters_are_refused() {
        assert!(Tags::new(vec!["a\0".into()]).is_err());
        assert!(Metadata::new(json!({"k": ["ok", {"n": "\u{0}"}]})).is_err());
        assert!(Metadata::new(json!({"\u{0}": 1})).is_err());
    }

    #[test]
    fn status_names_round_trip() {
        for status in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(status.as_str()), Some(status));
            let json = serde_json::to_value(status).unwrap();
            assert_eq!(json, status.as_str());
        }
        for priority in TaskPriority::ALL {
            assert_eq!(TaskPriority::parse(priority.as_str()), Some(priority));
        }
    }

    #[test]
    fn outcome_names_round_trip_and_match_the_wire() {
        assert_eq!(TaskOutcome::Failed.as_str(), "failed");
        assert_eq!(TaskOutcome::Rejected.as_str(), "rejected");
        for outcome in [TaskOutcome::Failed, TaskOutcome::Rejected] {
            assert_eq!(TaskOutcome::parse(outcome.as_str()), Some(outcome));
            assert_eq!(serde_json::to_value(outcome).unwrap(), outcome.as_str());
        }
        assert_eq!(TaskOutcome::parse("abandoned"), None);
        assert_eq!(TaskOutcome::parse("Failed"), None);
    }

    fn task(status: TaskStatus, approval_required: bool, reward: i64) -> Task {
        let title = Title::new("Ship it").unwrap();
        let id = TaskId::from_uuid(uuid::Uuid::from_u128(1));
        let org = OrgId::from_uuid(uuid::Uuid::from_u128(2));
        Task {
            status,
            approval_required,
            reward,
            ..Task::new(id, org, title, OffsetDateTime::UNIX_EPOCH)
        }
    }

    #[test]
    fn only_a_task_in_review_that_requires_approval_awaits_it() {
        assert!(task(TaskStatus::Review, true, 0).awaits_approval());
        assert!(!task(TaskStatus::Review, false, 0).awaits_approval());
        for status in TaskStatus::ALL {
            if status != TaskStatus::Review {
                assert!(!task(status, true, 0).awaits_approval(), "{status:?}");
            }
        }
    }

    #[test]
    fn the_escrow_holds_the_reward_until_the_task_ends() {
        for status in TaskStatus::ALL {
            let held = task(status, false, 250).escrowed();
            let expected = if status.is_terminal() { 0 } else { 250 };
            assert_eq!(held, expected, "{status:?}");
        }
    }
}
