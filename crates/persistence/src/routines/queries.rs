//! The queries of `routines` and `routine_firings`.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, RoutineId};
use muster_domain::ports::Lock;
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, load_rows, on_conn};
use crate::reuse::Reuse;
use crate::schema::{routine_firings, routines};
use crate::types::{DbTime, DbUuid, db_uuid};

use super::rows::{FiringRow, RoutineRow};

/// The routine `id` of `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: RoutineId,
    lock: Option<Lock>,
) -> QueryResult<Option<RoutineRow>> {
    first_locked!(
        conn,
        lock,
        routines::table
            .filter(routines::org_id.eq(db_uuid(org)))
            .filter(routines::id.eq(db_uuid(id)))
            .select(RoutineRow::as_select())
    )
}

/// Stores a new routine.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &RoutineRow) -> QueryResult<()> {
    let query = diesel::insert_into(routines::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Replaces the routine if its stored version is still `expected`; whether it was.
pub(crate) async fn update(
    conn: &mut Conn<'_>,
    row: &RoutineRow,
    expected: i64,
) -> QueryResult<bool> {
    let query = diesel::update(
        routines::table
            .filter(routines::org_id.eq(row.org_id))
            .filter(routines::id.eq(row.id))
            .filter(routines::version.eq(expected)),
    )
    .set(row)
    .reused();
    let changed = on_conn!(conn, c => query.execute(c).await)?;
    Ok(changed == 1)
}

/// Deletes the routine (its firings go with it); whether it was there.
pub(crate) async fn delete(conn: &mut Conn<'_>, org: OrgId, id: RoutineId) -> QueryResult<bool> {
    let query = diesel::delete(
        routines::table
            .filter(routines::org_id.eq(db_uuid(org)))
            .filter(routines::id.eq(db_uuid(id))),
    );
    let deleted = on_conn!(conn, c => query.execute(c).await)?;
    Ok(deleted == 1)
}

/// Up to `limit` routines of `org`, newest first, older than `before`.
pub(crate) async fn list(
    conn: &mut Conn<'_>,
    org: OrgId,
    before: Option<RoutineId>,
    limit: u32,
) -> QueryResult<Vec<RoutineRow>> {
    load_rows!(conn, Db => {
        let mut query = routines::table
            .filter(routines::org_id.eq(db_uuid(org)))
            .select(RoutineRow::as_select())
            .into_boxed::<Db>();
        if let Some(cursor) = before {
            query = query.filter(routines::id.lt(db_uuid(cursor)));
        }
        query.order(routines::id.desc()).limit(i64::from(limit))
    })
}

/// Up to `limit` enabled routines of every organization due at `now`, the longest due
/// first (`routines_due`).
pub(crate) async fn due(
    conn: &mut Conn<'_>,
    now: OffsetDateTime,
    limit: u32,
) -> QueryResult<Vec<(DbUuid, DbUuid)>> {
    load_rows!(conn, Db => {
        routines::table
            .filter(routines::enabled.eq(true))
            .filter(routines::next_run_at.le(DbTime(now)))
            .select((routines::org_id, routines::id))
            .order((routines::next_run_at.asc(), routines::id.asc()))
            .limit(i64::from(limit))
            .into_boxed::<Db>()
    })
}

/// Records a firing; a second one of the same routine and due time breaks the primary
/// key (`UniqueKey::RoutineFiring`).
pub(crate) async fn insert_firing(conn: &mut Conn<'_>, row: &FiringRow) -> QueryResult<()> {
    let query = diesel::insert_into(routine_firings::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}
