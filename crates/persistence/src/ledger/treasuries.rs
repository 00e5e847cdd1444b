//! Each organization's treasury (`treasuries`) and its movements (`treasury_entries`):
//! the rows and their queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, TaskId, Treasury, TreasuryEntry, TreasuryEntryId, TreasuryKind};
use muster_domain::ports::{Lock, RepositoryError};

use crate::conn::{Conn, first_locked, insert_all, on_conn};
use crate::error::corrupt;
use crate::reuse::Reuse;
use crate::schema::{treasuries, treasury_entries};
use crate::types::{DbTime, DbUuid, db_uuid};

/// An organization's treasury (decision D-101); `updated_at` NULL while it never moved.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = treasuries, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct TreasuryRow {
    pub org_id: DbUuid,
    pub balance: i64,
    pub updated_at: Option<DbTime>,
}

impl From<&Treasury> for TreasuryRow {
    fn from(t: &Treasury) -> Self {
        Self {
            org_id: DbUuid(t.org_id.as_uuid()),
            balance: t.balance,
            updated_at: t.updated_at.map(DbTime),
        }
    }
}

impl From<TreasuryRow> for Treasury {
    fn from(row: TreasuryRow) -> Self {
        Self {
            org_id: OrgId::from_uuid(row.org_id.0),
            balance: row.balance,
            updated_at: row.updated_at.map(|t| t.0),
        }
    }
}

/// One movement of a treasury.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = treasury_entries, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct TreasuryEntryRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub kind: String,
    pub amount: i64,
    pub balance_after: i64,
    pub reason: Option<String>,
    pub task_id: Option<DbUuid>,
    pub actor_id: Option<DbUuid>,
    pub created_at: DbTime,
}

impl From<&TreasuryEntry> for TreasuryEntryRow {
    fn from(e: &TreasuryEntry) -> Self {
        Self {
            id: DbUuid(e.id.as_uuid()),
            org_id: DbUuid(e.org_id.as_uuid()),
            kind: e.kind.as_str().to_owned(),
            amount: e.amount,
            balance_after: e.balance_after,
            reason: e.reason.clone(),
            task_id: e.task_id.map(|id| DbUuid(id.as_uuid())),
            actor_id: e.actor_id.map(DbUuid),
            created_at: DbTime(e.created_at),
        }
    }
}

impl TryFrom<TreasuryEntryRow> for TreasuryEntry {
    type Error = RepositoryError;

    fn try_from(row: TreasuryEntryRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: TreasuryEntryId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            kind: TreasuryKind::parse(&row.kind)
                .ok_or_else(|| corrupt("treasury entry kind", &row.kind))?,
            amount: row.amount,
            balance_after: row.balance_after,
            reason: row.reason,
            task_id: row.task_id.map(|id| TaskId::from_uuid(id.0)),
            actor_id: row.actor_id.map(|id| id.0),
            created_at: row.created_at.0,
        })
    }
}

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
