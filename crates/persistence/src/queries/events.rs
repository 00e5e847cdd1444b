use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{EventId, OrgId};
use muster_domain::ports::EventFilter;

use crate::conn::{Conn, insert_all, on_conn};
use crate::rows::{EventRow, db_uuid};
use crate::schema::events;
use crate::types::{DbTime, DbUuid};

/// Appends `rows`, in order: every write path records its events here, in one
/// statement on PostgreSQL (see [`insert_all`]).
pub(crate) async fn append(conn: &mut Conn<'_>, rows: &[EventRow]) -> QueryResult<()> {
    insert_all!(conn, events::table, rows)
}

/// The event `id` of `org`.
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: EventId,
) -> QueryResult<Option<EventRow>> {
    on_conn!(conn, c => {
        events::table
            .filter(events::org_id.eq(db_uuid(org)))
            .filter(events::id.eq(db_uuid(id)))
            .select(EventRow::as_select())
            .first(c)
            .await
            .optional()
    })
}

/// Narrows a boxed `events` query to `org` and `filter` (for the page and its count).
macro_rules! filtered {
    ($query:expr, $org:expr, $filter:expr) => {{
        let filter: &EventFilter = $filter;
        let mut query = $query.filter(events::org_id.eq(db_uuid($org)));
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

/// One page of `org`'s events matching `filter`, newest first, and how many match.
pub(crate) async fn page(
    conn: &mut Conn<'_>,
    org: OrgId,
    filter: &EventFilter,
    offset: i64,
    limit: u32,
) -> QueryResult<(Vec<EventRow>, i64)> {
    on_conn!(conn, c, Db => {
        let total: i64 = filtered!(events::table.into_boxed::<Db>(), org, filter)
            .count()
            .get_result(c)
            .await?;
        let rows = filtered!(events::table.into_boxed::<Db>(), org, filter)
            .select(EventRow::as_select())
            .order((events::created_at.desc(), events::id.desc()))
            .offset(offset)
            .limit(i64::from(limit))
            .load(c)
            .await?;
        Ok((rows, total))
    })
}
