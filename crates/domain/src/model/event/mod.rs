use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

mod audit;
mod payloads;
mod position;

pub use audit::{AuditEvent, event_types};
pub use payloads::*;
pub use position::{EventPosition, StreamStart};

use super::{EventId, OrgId};

/// How serious an audit event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

impl Event {
    /// The stored record of `what`, about the entity `entity_id`, done by `actor_id` (the
    /// UUID of an agent or user; `None` for the service itself) at `at`. Every write path
    /// builds its events here, so type, entity kind, severity and payload always agree.
    pub fn record(
        id: EventId,
        org_id: OrgId,
        actor_id: Option<Uuid>,
        entity_id: Uuid,
        at: OffsetDateTime,
        what: &AuditEvent,
    ) -> Self {
        Self {
            id,
            org_id,
            event_type: what.event_type().to_owned(),
            actor_id,
            entity_type: what.entity_type().to_owned(),
            entity_id,
            severity: what.severity(),
            payload: what.payload(),
            created_at: at,
        }
    }
}

#[cfg(test)]
mod severity_tests {
    use super::EventSeverity;

    #[test]
    fn severities_round_trip_their_wire_names_exactly() {
        for (severity, wire) in [
            (EventSeverity::Info, "info"),
            (EventSeverity::Warning, "warning"),
            (EventSeverity::Error, "error"),
        ] {
            assert_eq!(severity.as_str(), wire);
            assert_eq!(EventSeverity::parse(wire), Some(severity));
        }
        for other in ["", "Info", "warn", "fatal"] {
            assert_eq!(EventSeverity::parse(other), None, "{other:?}");
        }
    }
}
