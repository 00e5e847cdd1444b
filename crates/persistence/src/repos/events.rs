use async_trait::async_trait;
use muster_domain::model::{Event, EventId, OrgId};
use muster_domain::ports::{EventFilter, EventLog, EventPage, RepositoryError};

use crate::Database;
use crate::error::{corrupt, from_diesel};
use crate::queries::events;

#[async_trait]
impl EventLog for Database {
    async fn get(&self, org: OrgId, id: EventId) -> Result<Option<Event>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = events::find(&mut pooled.conn(), org, id)
            .await
            .map_err(from_diesel)?;
        row.map(Event::try_from).transpose()
    }

    async fn list(
        &self,
        org: OrgId,
        filter: &EventFilter,
        offset: u64,
        limit: u32,
    ) -> Result<EventPage, RepositoryError> {
        let offset = i64::try_from(offset)
            .map_err(|_| RepositoryError::internal("event page offset out of range"))?;
        let mut pooled = self.pooled().await?;
        let (rows, total) = events::page(&mut pooled.conn(), org, filter, offset, limit)
            .await
            .map_err(from_diesel)?;
        let events = rows
            .into_iter()
            .map(Event::try_from)
            .collect::<Result<_, _>>()?;
        Ok(EventPage {
            events,
            total: u64::try_from(total).map_err(|e| corrupt("event count", e))?,
        })
    }
}
