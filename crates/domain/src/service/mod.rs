//! Use cases: one method each; each loads through ports, asks rules and policy, and
//! commits one change (state plus audit events) through one port call.

mod bootstrap;
mod error;
mod events;
mod tasks;

pub use bootstrap::{BootstrapRequest, BootstrapService};
pub use error::ServiceError;
pub use events::{EventQuery, EventService};
pub use tasks::{NewTask, TaskPage, TaskService};

use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{Event, EventId, EventSeverity, OrgId};
use crate::ports::IdGenerator;

/// What an audit event is about; filled into an [`Event`] by [`record`].
struct Happening<'a> {
    event_type: &'a str,
    entity_type: &'a str,
    entity_id: Uuid,
    severity: EventSeverity,
    payload: Value,
}

fn record(
    ids: &dyn IdGenerator,
    org_id: OrgId,
    actor_id: Option<Uuid>,
    at: OffsetDateTime,
    what: Happening<'_>,
) -> Event {
    Event {
        id: EventId::from_uuid(ids.new_id()),
        org_id,
        event_type: what.event_type.to_owned(),
        actor_id,
        entity_type: what.entity_type.to_owned(),
        entity_id: what.entity_id,
        severity: what.severity,
        payload: what.payload,
        created_at: at,
    }
}
