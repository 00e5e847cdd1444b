//! The audit log in memory: events keep the place they were appended at, which is
//! also their stream position (`tx` 0, like SQLite: units of work never overlap, so
//! the order of appends is the order of commits).

use async_trait::async_trait;
use muster_domain::model::{Event, EventId, EventPosition, OrgId, StreamStart};
use muster_domain::ports::{EventFilter, EventLog, EventPage, RepositoryError};

use crate::MemoryStore;
use crate::state::State;

/// Whether `event` of some organization is one `filter` asks for.
fn wanted(state: &State, filter: &EventFilter, event: &Event) -> bool {
    filter
        .event_type
        .as_ref()
        .is_none_or(|t| event.event_type == *t)
        && filter.actor_id.is_none_or(|a| event.actor_id == Some(a))
        && filter
            .entity_type
            .as_ref()
            .is_none_or(|t| event.entity_type == *t)
        && filter.entity_id.is_none_or(|e| event.entity_id == e)
        && filter.severity.is_none_or(|s| event.severity == s)
        && filter.start_date.is_none_or(|d| event.created_at >= d)
        && filter.end_date.is_none_or(|d| event.created_at <= d)
        && filter.project_id.is_none_or(|p| {
            event.entity_id == p.as_uuid()
                || state
                    .tasks
                    .get(&event.entity_id)
                    .is_some_and(|t| t.project_id == Some(p))
        })
}

#[async_trait]
impl EventLog for MemoryStore {
    async fn get(&self, org: OrgId, id: EventId) -> Result<Option<Event>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .event_places
            .get(&id.as_uuid())
            .and_then(|place| state.events.get(place))
            .filter(|e| e.org_id == org)
            .cloned())
    }

    async fn list(
        &self,
        org: OrgId,
        filter: &EventFilter,
        offset: u64,
        limit: u32,
    ) -> Result<EventPage, RepositoryError> {
        let state = self.snapshot();
        let mut matching: Vec<&Event> = state
            .events
            .values()
            .filter(|e| e.org_id == org && wanted(&state, filter, e))
            .collect();
        matching.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        let total = u64::try_from(matching.len()).unwrap_or(u64::MAX);
        let events = matching
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .cloned()
            .collect();
        Ok(EventPage { events, total })
    }

    async fn head(&self) -> Result<EventPosition, RepositoryError> {
        let state = self.snapshot();
        Ok(EventPosition::new(0, state.last_event_place))
    }

    async fn start(&self, _org: OrgId) -> Result<StreamStart, RepositoryError> {
        Ok(StreamStart {
            after: self.head().await?,
            recorded: Vec::new(),
        })
    }

    async fn position(
        &self,
        org: OrgId,
        id: EventId,
    ) -> Result<Option<EventPosition>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .event_places
            .get(&id.as_uuid())
            .filter(|place| state.events.get(place).is_some_and(|e| e.org_id == org))
            .map(|place| EventPosition::new(0, *place)))
    }

    async fn after(
        &self,
        org: OrgId,
        filter: &EventFilter,
        after: EventPosition,
        limit: u32,
    ) -> Result<Vec<(EventPosition, Event)>, RepositoryError> {
        let state = self.snapshot();
        let from = if after.tx > 0 { i64::MAX } else { after.seq };
        Ok(state
            .events
            .range(from.saturating_add(1)..)
            .filter(|(_, e)| e.org_id == org && wanted(&state, filter, e))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .map(|(place, e)| (EventPosition::new(0, *place), e.clone()))
            .collect())
    }
}
