use std::sync::Arc;

use super::{Entity, NotFound, ServiceError};
use crate::ValidationError;
use crate::model::{Actor, Event, EventId};
use crate::ports::{EventFilter, EventLog, EventPage};
use crate::validation::{max_chars, no_nul};

/// A page request for `GET /events`: `page` from 1, `limit` 1..=200.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventQuery {
    /// 1-based page number.
    pub page: u32,
    /// Page size.
    pub limit: u32,
}

impl EventQuery {
    /// Default page size.
    pub const DEFAULT_LIMIT: u32 = 50;
    /// Largest page size (decision D-7).
    pub const MAX_LIMIT: u32 = 200;
}

/// Reading the audit log.
#[derive(Clone)]
pub struct EventService {
    events: Arc<dyn EventLog>,
}

impl std::fmt::Debug for EventService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventService").finish_non_exhaustive()
    }
}

impl EventService {
    /// Wires the service to its port.
    pub fn new(events: Arc<dyn EventLog>) -> Self {
        Self { events }
    }

    /// The event, if it is in the actor's organization.
    pub async fn get(&self, actor: &Actor, id: EventId) -> Result<Event, ServiceError> {
        self.events
            .get(actor.org_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::Event, id).into())
    }

    /// A page of the actor's organization's events, newest first.
    pub async fn list(
        &self,
        actor: &Actor,
        filter: &EventFilter,
        query: EventQuery,
    ) -> Result<EventPage, ServiceError> {
        if query.page == 0 {
            return Err(ValidationError::new("page must be at least 1").into());
        }
        if query.limit == 0 || query.limit > EventQuery::MAX_LIMIT {
            return Err(ValidationError::new(format!(
                "limit must be between 1 and {}",
                EventQuery::MAX_LIMIT
            ))
            .into());
        }
        for (field, value) in [
            ("type", &filter.event_type),
            ("entityType", &filter.entity_type),
        ] {
            if let Some(value) = value {
                // Type names are short dotted words: refuse what no event can match and
                // what PostgreSQL cannot even compare (U+0000).
                max_chars(field, value, 100)?;
                no_nul(field, value)?;
            }
        }
        let offset = u64::from(query.page - 1) * u64::from(query.limit);
        Ok(self
            .events
            .list(actor.org_id, filter, offset, query.limit)
            .await?)
    }
}
