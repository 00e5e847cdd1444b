//! The queries of the audit log (`events`), with a plan test of its page.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{EventId, EventPosition, OrgId, StreamStart};
use muster_domain::ports::EventFilter;

use crate::conn::{Conn, insert_all, load_rows, on_conn};
use crate::reuse::Reuse as _;
use crate::schema::events;
use crate::types::{DbTime, DbUuid, PortableUuid, db_uuid};

use super::rows::EventRow;

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
            .get_result(c)
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
        if let Some(project) = filter.project_id {
            // About the project itself, or about one of its tasks (`tasks_org_project`).
            let project = db_uuid(project);
            let its_tasks = crate::schema::tasks::table
                .filter(crate::schema::tasks::org_id.eq(db_uuid($org)))
                .filter(crate::schema::tasks::project_id.eq(project))
                .select(crate::schema::tasks::id);
            query = query.filter(
                events::entity_id
                    .eq(project)
                    .or(events::entity_id.eq_any(its_tasks)),
            );
        }
        query
    }};
}

/// The query of [`page`] for the backend `$db` (also built by the plan test below).
macro_rules! page_query {
    ($db:ty, $org:expr, $filter:expr, $offset:expr, $limit:expr) => {
        filtered!(events::table.into_boxed::<$db>(), $org, $filter)
            .select(EventRow::as_select())
            .order((events::created_at.desc(), events::id.desc()))
            .offset($offset)
            .limit(i64::from($limit))
    };
}

/// One page of `org`'s events matching `filter`, newest first.
pub(crate) async fn page(
    conn: &mut Conn<'_>,
    org: OrgId,
    filter: &EventFilter,
    offset: i64,
    limit: u32,
) -> QueryResult<Vec<EventRow>> {
    let filter = filter.clone();
    load_rows!(conn, Db => page_query!(Db, org, &filter, offset, limit))
}

/// What [`count_above`] found.
pub(crate) struct CountAbove {
    /// Matching events above the bound it was given.
    pub(crate) matching: i64,
    /// The new bound: every matching event at or below it (SQLite) or below it
    /// (PostgreSQL) is final.
    pub(crate) bound: i64,
    /// How many of `matching` lie within the new bound.
    pub(crate) settled: i64,
}

/// Counts `org`'s events matching `filter` above `bound`, in one statement (one
/// snapshot), and moves the bound up to what is now final (see
/// [`crate::event_counts`]). SQLite: rowids above `bound`, the new bound being the
/// highest one counted. PostgreSQL: transaction ids from `bound` up, the new bound
/// being the snapshot's `xmin`.
pub(crate) async fn count_above(
    conn: &mut Conn<'_>,
    org: OrgId,
    filter: &EventFilter,
    bound: i64,
) -> QueryResult<CountAbove> {
    use diesel::dsl::{count_star, sql};
    use diesel::pg::Pg;
    use diesel::sql_types::{BigInt, Bool, Nullable};
    use diesel::sqlite::Sqlite;
    // Kept prepared (the text is the program's, one per filter's shape).
    match conn {
        Conn::Pg(c) => {
            let (matching, settled, horizon): (i64, i64, i64) =
                filtered!(events::table.into_boxed::<Pg>(), org, filter)
                    .filter(sql::<Bool>("events.tx_id >= ").bind::<BigInt, _>(bound))
                    .select((
                        count_star(),
                        sql::<BigInt>(PG_SETTLED),
                        sql::<BigInt>(PG_HORIZON),
                    ))
                    .reused()
                    .get_result(*c)
                    .await?;
            Ok(CountAbove {
                matching,
                bound: horizon.max(bound),
                settled,
            })
        }
        Conn::Sqlite(c) => {
            let (matching, highest): (i64, Option<i64>) =
                filtered!(events::table.into_boxed::<Sqlite>(), org, filter)
                    .filter(sql::<Bool>("events.rowid > ").bind::<BigInt, _>(bound))
                    .select((count_star(), sql::<Nullable<BigInt>>("max(events.rowid)")))
                    .reused()
                    .get_result(*c)
                    .await?;
            Ok(CountAbove {
                matching,
                bound: highest.unwrap_or(bound),
                settled: matching,
            })
        }
    }
}

/// The stream order's `(tx, seq)` of each engine, as SQL. PostgreSQL: the writing
/// transaction's id and the log sequence (see the `event_stream` migration); SQLite,
/// whose writers never overlap: 0 and the rowid.
const PG_POSITION: &str = "events.tx_id, events.seq";
/// The oldest transaction still running on PostgreSQL: events of older transactions are
/// final, so a stream may hand them out.
macro_rules! pg_horizon {
    () => {
        "pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
    };
}
const PG_HORIZON: &str = pg_horizon!();
/// An event below [`PG_HORIZON`].
const PG_BEFORE_HORIZON: &str = concat!("events.tx_id < ", pg_horizon!());
/// How many of the matching events lie below [`PG_HORIZON`].
const PG_SETTLED: &str = concat!("count(*) FILTER (WHERE events.tx_id < ", pg_horizon!(), ")");

/// See [`muster_domain::ports::EventLog::head`].
pub(crate) async fn head(conn: &mut Conn<'_>) -> QueryResult<EventPosition> {
    use diesel::dsl::sql;
    use diesel::sql_types::BigInt;
    match conn {
        Conn::Pg(c) => {
            let horizon: i64 = diesel::select(sql::<BigInt>(PG_HORIZON))
                .reused()
                .get_result(*c)
                .await?;
            Ok(EventPosition::new(horizon, 0))
        }
        Conn::Sqlite(c) => {
            let last: i64 = diesel::select(sql::<BigInt>(
                "COALESCE((SELECT max(rowid) FROM events), 0)",
            ))
            .reused()
            .get_result(*c)
            .await?;
            Ok(EventPosition::new(0, last))
        }
    }
}

#[derive(QueryableByName)]
struct StartRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    horizon: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    tx_id: Option<i64>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    seq: Option<i64>,
}

/// See [`muster_domain::ports::EventLog::start`]. On PostgreSQL, in one statement (one
/// snapshot): the horizon, and `org`'s events already committed above it.
pub(crate) async fn start(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<StreamStart> {
    const PG_START: &str = "SELECT h.horizon, e.tx_id, e.seq \
        FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon) AS h \
        LEFT JOIN events AS e ON e.org_id = $1 AND e.tx_id >= h.horizon \
        ORDER BY e.tx_id, e.seq";
    match conn {
        Conn::Pg(c) => {
            let rows: Vec<StartRow> = diesel::sql_query(PG_START)
                .bind::<PortableUuid, _>(db_uuid(org))
                .reused()
                .load(*c)
                .await?;
            let horizon = <[StartRow]>::first(&rows).map_or(0, |row| row.horizon);
            let recorded = rows
                .iter()
                .filter_map(|row| Some(EventPosition::new(row.tx_id?, row.seq?)))
                .collect();
            Ok(StreamStart {
                after: EventPosition::new(horizon, 0),
                recorded,
            })
        }
        Conn::Sqlite(_) => Ok(StreamStart {
            after: head(conn).await?,
            recorded: Vec::new(),
        }),
    }
}

/// The stream position of event `id` of `org`.
pub(crate) async fn position(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: EventId,
) -> QueryResult<Option<EventPosition>> {
    use diesel::dsl::sql;
    use diesel::sql_types::BigInt;
    let found: Option<(i64, i64)> = match conn {
        Conn::Pg(c) => events::table
            .filter(events::org_id.eq(db_uuid(org)))
            .filter(events::id.eq(db_uuid(id)))
            .select((sql::<BigInt>("events.tx_id"), sql::<BigInt>("events.seq")))
            .reused()
            .get_result(*c)
            .await
            .optional()?,
        Conn::Sqlite(c) => events::table
            .filter(events::org_id.eq(db_uuid(org)))
            .filter(events::id.eq(db_uuid(id)))
            .select((sql::<BigInt>("0"), sql::<BigInt>("events.rowid")))
            .reused()
            .get_result(*c)
            .await
            .optional()?,
    };
    Ok(found.map(|(tx, seq)| EventPosition::new(tx, seq)))
}

/// Up to `limit` events of `org` matching `filter` after `after` in stream order, each
/// with its position; on PostgreSQL only those whose transaction is older than every
/// running one (the rest follow once they are).
pub(crate) async fn after(
    conn: &mut Conn<'_>,
    org: OrgId,
    filter: &EventFilter,
    after: EventPosition,
    limit: u32,
) -> QueryResult<Vec<(i64, i64, EventRow)>> {
    use diesel::dsl::sql;
    use diesel::pg::Pg;
    use diesel::sql_types::{BigInt, Bool};
    use diesel::sqlite::Sqlite;
    match conn {
        Conn::Pg(c) => {
            filtered!(events::table.into_boxed::<Pg>(), org, filter)
                .filter(
                    sql::<Bool>("(events.tx_id, events.seq) > (")
                        .bind::<BigInt, _>(after.tx)
                        .sql(", ")
                        .bind::<BigInt, _>(after.seq)
                        .sql(")"),
                )
                .filter(sql::<Bool>(PG_BEFORE_HORIZON))
                .select((
                    sql::<BigInt>("events.tx_id"),
                    sql::<BigInt>("events.seq"),
                    EventRow::as_select(),
                ))
                .order(sql::<BigInt>(PG_POSITION))
                .limit(i64::from(limit))
                .reused()
                .load(*c)
                .await
        }
        Conn::Sqlite(c) => {
            filtered!(events::table.into_boxed::<Sqlite>(), org, filter)
                .filter(sql::<Bool>("events.rowid > ").bind::<BigInt, _>(after.seq))
                .select((
                    sql::<BigInt>("0"),
                    sql::<BigInt>("events.rowid"),
                    EventRow::as_select(),
                ))
                .order(sql::<BigInt>("events.rowid"))
                .limit(i64::from(limit))
                .reused()
                .load(*c)
                .await
        }
    }
}

#[cfg(test)]
mod tests {
    use diesel::sqlite::Sqlite;

    use super::*;
    use crate::plan::{reads_in_order, sqlite_plan};

    /// A page of events, as [`page`] writes it, is read from `events_org_newest` newest
    /// first, without sorting, although the planner does not know the bound `LIMIT`.
    #[test]
    fn a_page_of_events_reads_its_index_in_order_on_sqlite() {
        let org = OrgId::from_uuid(uuid::Uuid::nil());
        let filter = EventFilter::default();
        let (sql, plan) = sqlite_plan(&page_query!(Sqlite, org, &filter, 0_i64, 50_u32));
        assert!(
            reads_in_order(&plan, "INDEX events_org_newest"),
            "{sql}: {plan:?}"
        );
    }
}
