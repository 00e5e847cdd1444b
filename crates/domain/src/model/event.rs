use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{EventId, OrgId};

/// How serious an audit event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventSeverity {
    /// Normal operation.
    Info,
    /// Needs attention.
    Warning,
    /// Something failed.
    Error,
}

impl EventSeverity {
    /// Every severity.
    pub const ALL: [Self; 3] = [Self::Info, Self::Warning, Self::Error];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == value)
    }
}

/// The dotted event type names this crate emits (decision D-70 lists them all).
pub mod event_types {
    /// A task was created.
    pub const TASK_CREATED: &str = "task.created";
    /// A task moved from one status to another.
    pub const TASK_TRANSITIONED: &str = "task.transitioned";
    /// A task reached `done` (written together with `task.transitioned`).
    pub const TASK_DONE: &str = "task.done";
    /// A task was cancelled (written together with `task.transitioned`).
    pub const TASK_CANCELLED: &str = "task.cancelled";
    /// An agent was registered.
    pub const AGENT_REGISTERED: &str = "agent.registered";
    /// A user was created.
    pub const USER_CREATED: &str = "user.created";
}

/// An immutable audit record of something that happened in an organization.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Identity.
    pub id: EventId,
    /// The organization it happened in.
    pub org_id: OrgId,
    /// Dotted type, such as `task.created`.
    pub event_type: String,
    /// Who did it (agent or user UUID); `None` for the system itself.
    pub actor_id: Option<Uuid>,
    /// Kind of the entity it concerns (`task`, `agent`, `user`).
    pub entity_type: String,
    /// The entity it concerns.
    pub entity_id: Uuid,
    /// How serious it is.
    pub severity: EventSeverity,
    /// Details (a JSON object).
    pub payload: Value,
    /// When it happened.
    pub created_at: OffsetDateTime,
}
