use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::RepositoryError;
use crate::model::{Event, EventId, EventPosition, EventSeverity, OrgId, StreamStart};

/// Filters of `GET /events`; `None` means "any". Dates are inclusive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct EventFilter {
    /// Exact dotted type.
    pub event_type: Option<String>,
    /// Who did it.
    pub actor_id: Option<Uuid>,
    /// Kind of entity.
    pub entity_type: Option<String>,
    /// Which entity.
    pub entity_id: Option<Uuid>,
    /// Only events about this project or one of its tasks (issue 66).
    pub project_id: Option<crate::model::ProjectId>,
    /// Severity.
    pub severity: Option<EventSeverity>,
    /// Not before.
    pub start_date: Option<OffsetDateTime>,
    /// Not after.
    pub end_date: Option<OffsetDateTime>,
}

/// One page of events plus the total count matching the filter.
#[derive(Debug, Clone, PartialEq)]
pub struct EventPage {
    /// The events, newest first.
    pub events: Vec<Event>,
    /// How many match in all.
    pub total: u64,
}

/// The append-only audit log. Events are appended by the change ports, in the same
/// transaction as the change; this port only reads.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait EventLog: Send + Sync {
    /// The event with `id` in `org`, if any.
    async fn get(&self, org: OrgId, id: EventId) -> Result<Option<Event>, RepositoryError>;

    /// Events of `org` matching `filter`, newest first, skipping `offset`, at most `limit`.
    async fn list(
        &self,
        org: OrgId,
        filter: &EventFilter,
        offset: u64,
        limit: u32,
    ) -> Result<EventPage, RepositoryError>;

    /// A value that changes whenever events may have become readable by
    /// [`EventLog::after`]: a watcher polls it to know when to read.
    async fn head(&self) -> Result<EventPosition, RepositoryError>;

    /// Where a reader of `org` that starts now begins: every event recorded after this
    /// call comes after `after`, and the events after it that are already recorded are
    /// listed to be passed over.
    async fn start(&self, org: OrgId) -> Result<StreamStart, RepositoryError>;

    /// The position of the event `id` of `org`, if there is one.
    async fn position(
        &self,
        org: OrgId,
        id: EventId,
    ) -> Result<Option<EventPosition>, RepositoryError>;

    /// Up to `limit` events of `org` matching `filter` that come after `after`, oldest
    /// first, each with its position. Events whose write may not be final yet are left
    /// for a later call, so that nothing is skipped.
    async fn after(
        &self,
        org: OrgId,
        filter: &EventFilter,
        after: EventPosition,
        limit: u32,
    ) -> Result<Vec<(EventPosition, Event)>, RepositoryError>;
}
