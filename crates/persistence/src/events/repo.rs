//! The domain's `EventLog` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{Event, EventId, EventPosition, OrgId, StreamStart};
use muster_domain::ports::{EventFilter, EventLog, EventPage, RepositoryError};

use crate::Database;
use crate::error::{corrupt, from_diesel};
use crate::event_counts::Settled;

use super::queries as events;

#[async_trait]
impl EventLog for Database {
    #[tracing::instrument(level = "debug", name = "db.events.get", skip_all, fields(otel.kind = "client"))]
    async fn get(&self, org: OrgId, id: EventId) -> Result<Option<Event>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = events::find(&mut pooled.conn(), org, id)
            .await
            .map_err(from_diesel)?;
        row.map(Event::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.events.list", skip_all, fields(otel.kind = "client"))]
    async fn list(
        &self,
        org: OrgId,
        filter: &EventFilter,
        offset: u64,
        limit: u32,
    ) -> Result<EventPage, RepositoryError> {
        let offset = i64::try_from(offset)
            .map_err(|_| RepositoryError::internal("event page offset out of range"))?;
        // Which events a project's filter matches changes when a task moves to another
        // project: such a count is never settled, it is taken in full every time.
        let cached = filter.project_id.is_none();
        // Taken before a connection: the requests waiting for a first count hold none.
        let (known, first_count) = if cached {
            self.event_counts().first_count(org, filter).await
        } else {
            (Settled::default(), None)
        };
        let mut pooled = self.pooled().await?;
        // The page first, then the count: a page is never longer than its total says.
        let rows = events::page(&mut pooled.conn(), org, filter, offset, limit)
            .await
            .map_err(from_diesel)?;
        let above = events::count_above(&mut pooled.conn(), org, filter, known.bound)
            .await
            .map_err(from_diesel)?;
        let count = |n: i64| u64::try_from(n).map_err(|e| corrupt("event count", e));
        if cached {
            self.event_counts().settle(
                org,
                filter,
                Settled {
                    bound: above.bound,
                    count: known.count + count(above.settled)?,
                },
            );
        }
        // Settled: the requests waiting for this pair can go on.
        drop(first_count);
        let events = rows
            .into_iter()
            .map(Event::try_from)
            .collect::<Result<_, _>>()?;
        Ok(EventPage {
            events,
            total: known.count + count(above.matching)?,
        })
    }

    #[tracing::instrument(level = "debug", name = "db.events.head", skip_all, fields(otel.kind = "client"))]
    async fn head(&self) -> Result<EventPosition, RepositoryError> {
        let mut pooled = self.pooled().await?;
        events::head(&mut pooled.conn()).await.map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.events.start", skip_all, fields(otel.kind = "client"))]
    async fn start(&self, org: OrgId) -> Result<StreamStart, RepositoryError> {
        let mut pooled = self.pooled().await?;
        events::start(&mut pooled.conn(), org)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.events.position", skip_all, fields(otel.kind = "client"))]
    async fn position(
        &self,
        org: OrgId,
        id: EventId,
    ) -> Result<Option<EventPosition>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        events::position(&mut pooled.conn(), org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.events.after", skip_all, fields(otel.kind = "client"))]
    async fn after(
        &self,
        org: OrgId,
        filter: &EventFilter,
        after: EventPosition,
        limit: u32,
    ) -> Result<Vec<(EventPosition, Event)>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = events::after(&mut pooled.conn(), org, filter, after, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter()
            .map(|(tx, seq, row)| Ok((EventPosition::new(tx, seq), Event::try_from(row)?)))
            .collect()
    }
}
