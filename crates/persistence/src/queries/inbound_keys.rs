use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{InboundKeyId, OrgId};
use muster_domain::ports::Lock;
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, on_conn};
use crate::reuse::Reuse;
use crate::rows::{InboundKeyRow, db_uuid};
use crate::schema::inbound_webhook_keys as keys;
use crate::types::DbTime;

/// Stores a new key.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &InboundKeyRow) -> QueryResult<()> {
    let query = diesel::insert_into(keys::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Stores every field of a key; `false` when it is gone.
pub(crate) async fn update(conn: &mut Conn<'_>, row: &InboundKeyRow) -> QueryResult<bool> {
    let target = keys::table
        .filter(keys::org_id.eq(row.org_id))
        .filter(keys::id.eq(row.id));
    let updated = on_conn!(conn, c => diesel::update(target).set(row).reused().execute(c).await)?;
    Ok(updated > 0)
}

/// Deletes a key; `false` when it is gone.
pub(crate) async fn delete(conn: &mut Conn<'_>, org: OrgId, id: InboundKeyId) -> QueryResult<bool> {
    let target = keys::table
        .filter(keys::org_id.eq(db_uuid(org)))
        .filter(keys::id.eq(db_uuid(id)));
    let deleted = on_conn!(conn, c => diesel::delete(target).execute(c).await)?;
    Ok(deleted > 0)
}

/// Notes the key's last use.
pub(crate) async fn touch(
    conn: &mut Conn<'_>,
    id: InboundKeyId,
    at: OffsetDateTime,
) -> QueryResult<()> {
    let target = keys::table.filter(keys::id.eq(db_uuid(id)));
    on_conn!(conn, c => {
        diesel::update(target)
            .set(keys::last_used_at.eq(Some(DbTime(at))))
            .reused()
            .execute(c)
            .await
    })?;
    Ok(())
}

/// The key `id` of `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: InboundKeyId,
    lock: Option<Lock>,
) -> QueryResult<Option<InboundKeyRow>> {
    first_locked!(
        conn,
        lock,
        keys::table
            .filter(keys::org_id.eq(db_uuid(org)))
            .filter(keys::id.eq(db_uuid(id)))
            .select(InboundKeyRow::as_select())
    )
}

/// The record whose key is `key`, in any organization.
pub(crate) async fn find_by_key(
    conn: &mut Conn<'_>,
    key: &str,
) -> QueryResult<Option<InboundKeyRow>> {
    on_conn!(conn, c => {
        keys::table
            .filter(keys::key.eq(key))
            .select(InboundKeyRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
}

/// The keys of `org`, newest first.
pub(crate) async fn list(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<Vec<InboundKeyRow>> {
    on_conn!(conn, c => {
        keys::table
            .filter(keys::org_id.eq(db_uuid(org)))
            .select(InboundKeyRow::as_select())
            .order((keys::created_at.desc(), keys::id.desc()))
            .load(c)
            .await
    })
}
