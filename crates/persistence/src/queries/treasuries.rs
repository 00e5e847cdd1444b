use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, TreasuryEntryId};
use muster_domain::ports::Lock;

use crate::conn::{Conn, first_locked, insert_all, on_conn};
use crate::reuse::Reuse;
use crate::rows::{TreasuryEntryRow, TreasuryRow, db_uuid};
use crate::schema::{treasuries, treasury_entries};

/// The treasury of `org`, held with `lock` on PostgreSQL (SQLite's write transactions
/// run one at a time); `None` when it has no row.
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    lock: Option<Lock>,
) -> QueryResult<Option<TreasuryRow>> {
    first_locked!(
        conn,
        lock,
        treasuries::table
            .filter(treasuries::org_id.eq(db_uuid(org)))
            .select(TreasuryRow::as_select())
    )
}

/// The treasury of `org`, locked for update until the end of the transaction; a
/// missing row is inserted at 0 first. Concurrent first lockers then queue on the row
/// (the second insert waits for the first's transaction and does nothing, and its
/// locked read, a new statement, sees the committed row) instead of each finding none.
pub(crate) async fn lock(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<TreasuryRow> {
    if let Some(row) = find(conn, org, Some(Lock::Update)).await? {
        return Ok(row);
    }
    let empty = TreasuryRow {
        org_id: db_uuid(org),
        balance: 0,
        updated_at: None,
    };
    let insert = diesel::insert_into(treasuries::table)
        .values(empty)
        .on_conflict_do_nothing()
        .reused();
    on_conn!(conn, c => insert.execute(c).await)?;
    find(conn, org, Some(Lock::Update))
        .await?
        .ok_or(diesel::result::Error::NotFound)
}

/// Stores `row` as the treasury of its organization, over the stored one if any.
pub(crate) async fn save(conn: &mut Conn<'_>, row: TreasuryRow) -> QueryResult<()> {
    let query = diesel::insert_into(treasuries::table)
        .values(row)
        .on_conflict(treasuries::org_id)
        .do_update()
        .set((
            treasuries::balance.eq(excluded(treasuries::balance)),
            treasuries::updated_at.eq(excluded(treasuries::updated_at)),
        ))
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Appends movements of treasuries, in order (see [`insert_all`]).
pub(crate) async fn insert_entries(
    conn: &mut Conn<'_>,
    rows: &[TreasuryEntryRow],
) -> QueryResult<()> {
    insert_all!(conn, treasury_entries::table, rows)
}

/// Up to `limit` movements of the treasury of `org`, newest first, older than `before`.
pub(crate) async fn history(
    conn: &mut Conn<'_>,
    org: OrgId,
    before: Option<TreasuryEntryId>,
    limit: u32,
) -> QueryResult<Vec<TreasuryEntryRow>> {
    on_conn!(conn, c, Db => {
        let mut query = treasury_entries::table
            .filter(treasury_entries::org_id.eq(db_uuid(org)))
            .select(TreasuryEntryRow::as_select())
            .into_boxed::<Db>();
        if let Some(cursor) = before {
            query = query.filter(treasury_entries::id.lt(db_uuid(cursor)));
        }
        query
            .order(treasury_entries::id.desc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}
