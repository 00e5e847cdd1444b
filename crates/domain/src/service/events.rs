use std::sync::Arc;

use super::{Entity, NotFound, ServiceError};
use crate::ValidationError;
use crate::model::{Actor, Event, EventId, EventPosition, StreamStart};
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
        check_filter(filter)?;
        let offset = u64::from(query.page - 1) * u64::from(query.limit);
        Ok(self
            .events
            .list(actor.org_id, filter, offset, query.limit)
            .await?)
    }
}

impl EventService {
    /// Where a live reader of the actor's organization starts: after the event
    /// `last_seen` (the stream's `Last-Event-ID`) when given, otherwise at the end of the
    /// log, so that it sees what is recorded from now on. Also checks `filter`.
    pub async fn stream_from(
        &self,
        actor: &Actor,
        filter: &EventFilter,
        last_seen: Option<EventId>,
    ) -> Result<StreamStart, ServiceError> {
        check_filter(filter)?;
        match last_seen {
            None => Ok(self.events.start(actor.org_id).await?),
            Some(id) => match self.events.position(actor.org_id, id).await? {
                Some(after) => Ok(StreamStart {
                    after,
                    recorded: Vec::new(),
                }),
                // As for any id: another organization's event is not found.
                None => Err(NotFound::new(Entity::Event, id).into()),
            },
        }
    }

    /// Up to `limit` of the organization's events matching `filter` after `after`,
    /// oldest first, each with its position (the next call's `after`).
    pub async fn after(
        &self,
        actor: &Actor,
        filter: &EventFilter,
        after: EventPosition,
        limit: u32,
    ) -> Result<Vec<(EventPosition, Event)>, ServiceError> {
        Ok(self
            .events
            .after(
                actor.org_id,
                filter,
                after,
                limit.clamp(1, EventQuery::MAX_LIMIT),
            )
            .await?)
    }

    /// A value that changes whenever new events may have become readable by
    /// [`EventService::after`]: what a process-wide watcher polls.
    pub async fn head(&self) -> Result<EventPosition, ServiceError> {
        Ok(self.events.head().await?)
    }
}

/// Type names are short dotted words: refuse what no event can match and what
/// PostgreSQL cannot even compare (U+0000).
fn check_filter(filter: &EventFilter) -> Result<(), ValidationError> {
    for (field, value) in [
        ("type", &filter.event_type),
        ("entityType", &filter.entity_type),
    ] {
        if let Some(value) = value {
            max_chars(field, value, 100)?;
            no_nul(field, value)?;
        }
    }
    Ok(())
}
