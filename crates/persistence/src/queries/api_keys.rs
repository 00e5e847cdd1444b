use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{ApiKeyId, OrgId, TokenHash, UserId};
use muster_domain::ports::Lock;
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, on_conn};
use crate::reuse::Reuse;
use crate::rows::{ApiKeyRow, UserRow, db_uuid};
use crate::schema::{api_keys, users};
use crate::types::DbTime;

/// Stores a new API key.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &ApiKeyRow) -> QueryResult<()> {
    let query = diesel::insert_into(api_keys::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// The key whose hash is `hash` (in any organization) with its owner, in one query.
pub(crate) async fn find_by_hash_with_owner(
    conn: &mut Conn<'_>,
    hash: &TokenHash,
) -> QueryResult<Option<(ApiKeyRow, UserRow)>> {
    on_conn!(conn, c => {
        api_keys::table
            .inner_join(users::table)
            .filter(api_keys::key_hash.eq(hash.0.as_slice()))
            .select((ApiKeyRow::as_select(), UserRow::as_select()))
            .get_result(c)
            .await
            .optional()
    })
}

/// The keys of `user` of `org`, newest first (ids are time-ordered).
pub(crate) async fn list_of(
    conn: &mut Conn<'_>,
    org: OrgId,
    user: UserId,
) -> QueryResult<Vec<ApiKeyRow>> {
    on_conn!(conn, c => {
        api_keys::table
            .filter(api_keys::org_id.eq(db_uuid(org)))
            .filter(api_keys::user_id.eq(db_uuid(user)))
            .select(ApiKeyRow::as_select())
            .order(api_keys::id.desc())
            .load(c)
            .await
    })
}

/// The key `id` if `user` of `org` owns it, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    user: UserId,
    id: ApiKeyId,
    lock: Option<Lock>,
) -> QueryResult<Option<ApiKeyRow>> {
    first_locked!(
        conn,
        lock,
        api_keys::table
            .filter(api_keys::org_id.eq(db_uuid(org)))
            .filter(api_keys::user_id.eq(db_uuid(user)))
            .filter(api_keys::id.eq(db_uuid(id)))
            .select(ApiKeyRow::as_select())
    )
}

/// Deletes the key `id` if `user` of `org` owns it; the deleted key. Read (locked on
/// PostgreSQL) before the delete, and answered only when this delete removed it.
pub(crate) async fn delete(
    conn: &mut Conn<'_>,
    org: OrgId,
    user: UserId,
    id: ApiKeyId,
) -> QueryResult<Option<ApiKeyRow>> {
    let Some(row) = find(conn, org, user, id, Some(Lock::Update)).await? else {
        return Ok(None);
    };
    let query = diesel::delete(api_keys::table.filter(api_keys::id.eq(row.id)));
    let deleted = on_conn!(conn, c => query.execute(c).await)?;
    Ok((deleted == 1).then_some(row))
}

/// Stamps key `id` as used at `at` unless a use at or after `unless_since` is recorded:
/// one conditional statement.
pub(crate) async fn touch(
    conn: &mut Conn<'_>,
    id: ApiKeyId,
    at: OffsetDateTime,
    unless_since: OffsetDateTime,
) -> QueryResult<()> {
    let query = diesel::update(
        api_keys::table.filter(api_keys::id.eq(db_uuid(id))).filter(
            api_keys::last_used_at
                .is_null()
                .or(api_keys::last_used_at.lt(DbTime(unless_since))),
        ),
    )
    .set(api_keys::last_used_at.eq(DbTime(at)))
    .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}
