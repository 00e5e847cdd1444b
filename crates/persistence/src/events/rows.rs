//! The `events` row and its conversions to and from the domain model.

use diesel::prelude::*;
use muster_domain::model::{Event, EventId, EventSeverity, OrgId};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::events;
use crate::types::{DbJson, DbTime, DbUuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = events, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct EventRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub event_type: String,
    pub actor_id: Option<DbUuid>,
    pub entity_type: String,
    pub entity_id: DbUuid,
    pub severity: String,
    pub payload: DbJson,
    pub created_at: DbTime,
}

impl From<&Event> for EventRow {
    fn from(event: &Event) -> Self {
        Self {
            id: DbUuid(event.id.as_uuid()),
            org_id: DbUuid(event.org_id.as_uuid()),
            event_type: event.event_type.clone(),
            actor_id: event.actor_id.map(DbUuid),
            entity_type: event.entity_type.clone(),
            entity_id: DbUuid(event.entity_id),
            severity: event.severity.as_str().to_owned(),
            payload: DbJson(event.payload.clone()),
            created_at: DbTime(event.created_at),
        }
    }
}

impl TryFrom<EventRow> for Event {
    type Error = RepositoryError;

    fn try_from(row: EventRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: EventId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            event_type: row.event_type,
            actor_id: row.actor_id.map(|id| id.0),
            entity_type: row.entity_type,
            entity_id: row.entity_id.0,
            severity: EventSeverity::parse(&row.severity)
                .ok_or_else(|| corrupt("event severity", &row.severity))?,
            payload: row.payload.0,
            created_at: row.created_at.0,
        })
    }
}
