use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Message, Part};

/// Where an A2A task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskState {
    /// Unset (not a state a task is in).
    #[serde(rename = "TASK_STATE_UNSPECIFIED")]
    Unspecified,
    /// Received, not started.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Being worked on.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Finished (terminal).
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Failed (terminal).
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Canceled (terminal).
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// Waits for the client.
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Refused by the agent (terminal).
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Waits for credentials.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
}

impl TaskState {
    /// Every state, in the proto's order.
    pub const ALL: [Self; 9] = [
        Self::Unspecified,
        Self::Submitted,
        Self::Working,
        Self::Completed,
        Self::Failed,
        Self::Canceled,
        Self::InputRequired,
        Self::Rejected,
        Self::AuthRequired,
    ];

    /// The wire name (`TASK_STATE_WORKING`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unspecified => "TASK_STATE_UNSPECIFIED",
            Self::Submitted => "TASK_STATE_SUBMITTED",
            Self::Working => "TASK_STATE_WORKING",
            Self::Completed => "TASK_STATE_COMPLETED",
            Self::Failed => "TASK_STATE_FAILED",
            Self::Canceled => "TASK_STATE_CANCELED",
            Self::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            Self::Rejected => "TASK_STATE_REJECTED",
            Self::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == value)
    }

    /// Completed, failed, canceled or rejected: nothing moves it any more.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// Input or credentials required: the task waits for the client.
    pub const fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }
}

/// A task's state, with an explaining message and when it was entered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// Why it is in that state, when there is something to say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When the task entered the state (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// What a task produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Its id within the task.
    pub artifact_id: String,
    /// A name for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The content.
    pub parts: Vec<Part>,
}

/// An A2A task: a Muster task seen through the protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The Muster task's id.
    pub id: String,
    /// The conversation: the parent task's id, or the task's own when it has none.
    pub context_id: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// What it produced (left out when not asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    /// The messages about it, oldest first (left out when not asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    /// Muster's view of the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A change of a task's state, as a stream sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// Its new status.
    pub status: TaskStatus,
}

/// The answer to `SendMessage`: the task the message created or went to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendMessageResponse {
    /// The task.
    pub task: Task,
}

/// One event of a stream: the task first, then each change of its status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// The task as it is.
    Task(Task),
    /// A change of its status.
    StatusUpdate(TaskStatusUpdateEvent),
}
