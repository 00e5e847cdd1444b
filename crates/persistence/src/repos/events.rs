use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use muster_domain::model::{Event, EventId, OrgId};
use muster_domain::ports::{EventFilter, EventLog, EventPage, RepositoryError};

use crate::Database;
use crate::error::from_diesel;
use crate::macros::with_conn;
use crate::rows::{EventRow, db_uuid};
use crate::schema::events;
use crate::types::{DbTime, DbUuid};

/// Narrows a boxed `events` query to `org` and `filter` (used for the page and its count).
macro_rules! filtered {
    ($query:expr, $org:expr, $filter:expr) => {{
        let filter: &EventFilter = $filter;
        let mut query = $query.filter(events::org_id.eq(db_uuid($org.as_uuid())));
        if let Some(event_type) = &filter.event_type {
            query = query.filter(events::event_type.eq(event_type.clone()));
        }
        if let Some(actor) = filter.actor_id {
            query = query.filter(events::actor_id.eq(DbUuid(actor)));
        }
        if let Some(entity_type) = &filter.entity_type {
            query = query.filter(events::entity_type.eq(entity_type.clone()));
        }
        if let Some(entity) = filter.entity_id {
            query = query.filter(events::entity_id.eq(DbUuid(entity)));
        }
        if let Some(severity) = filter.severity {
            query = query.filter(events::severity.eq(severity.as_str()));
        }
        if let Some(start) = filter.start_date {
            query = query.filter(events::created_at.ge(DbTime(start)));
        }
        if let Some(end) = filter.end_date {
            query = query.filter(events::created_at.le(DbTime(end)));
        }
        query
    }};
}

#[async_trait]
impl EventLog for Database {
    async fn get(&self, org: OrgId, id: EventId) -> Result<Option<Event>, RepositoryError> {
        let row: Option<EventRow> = with_conn!(self, conn, _Db => {
            events::table
                .filter(events::org_id.eq(db_uuid(org.as_uuid())))
                .filter(events::id.eq(db_uuid(id.as_uuid())))
                .select(EventRow::as_select())
                .first(conn)
                .await
                .optional()
                .map_err(from_diesel)?
        });
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
            .map_err(|_| RepositoryError::Internal("event page offset out of range".into()))?;
        let (rows, total): (Vec<EventRow>, i64) = with_conn!(self, conn, Db => {
            let total: i64 = filtered!(events::table.into_boxed::<Db>(), org, filter)
                .count()
                .get_result(conn)
                .await
                .map_err(from_diesel)?;
            let rows = filtered!(events::table.into_boxed::<Db>(), org, filter)
                .select(EventRow::as_select())
                .order((events::created_at.desc(), events::id.desc()))
                .offset(offset)
                .limit(i64::from(limit))
                .load(conn)
                .await
                .map_err(from_diesel)?;
            (rows, total)
        });
        let events = rows
            .into_iter()
            .map(Event::try_from)
            .collect::<Result<_, _>>()?;
        Ok(EventPage {
            events,
            total: u64::try_from(total).unwrap_or_default(),
        })
    }
}
