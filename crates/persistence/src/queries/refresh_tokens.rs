use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{LoginFamilyId, RefreshTokenId, TokenHash, UserId};
use muster_domain::ports::Lock;
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, on_conn};
use crate::reuse::Reuse;
use crate::rows::{RefreshTokenRow, db_uuid};
use crate::schema::refresh_tokens;
use crate::types::DbTime;

/// Stores a new refresh token.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &RefreshTokenRow) -> QueryResult<()> {
    let query = diesel::insert_into(refresh_tokens::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// The token whose hash is `hash` (in any organization), locked as asked (PostgreSQL).
pub(crate) async fn find_by_hash(
    conn: &mut Conn<'_>,
    hash: &TokenHash,
    lock: Option<Lock>,
) -> QueryResult<Option<RefreshTokenRow>> {
    let bytes = hash.0;
    first_locked!(
        conn,
        lock,
        refresh_tokens::table
            .filter(refresh_tokens::token_hash.eq(bytes.as_slice()))
            .select(RefreshTokenRow::as_select())
    )
}

/// Stamps the token `id` as replaced by a successor at `at`.
pub(crate) async fn mark_replaced(
    conn: &mut Conn<'_>,
    id: RefreshTokenId,
    at: OffsetDateTime,
) -> QueryResult<()> {
    let query = diesel::update(refresh_tokens::table.filter(refresh_tokens::id.eq(db_uuid(id))))
        .set(refresh_tokens::replaced_at.eq(DbTime(at)))
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Revokes the not yet revoked tokens of the login `family` at `at`; how many.
pub(crate) async fn revoke_family(
    conn: &mut Conn<'_>,
    family: LoginFamilyId,
    at: OffsetDateTime,
) -> QueryResult<usize> {
    let query = diesel::update(
        refresh_tokens::table
            .filter(refresh_tokens::family_id.eq(db_uuid(family)))
            .filter(refresh_tokens::revoked_at.is_null()),
    )
    .set(refresh_tokens::revoked_at.eq(DbTime(at)))
    .reused();
    on_conn!(conn, c => query.execute(c).await)
}

/// Revokes the not yet revoked tokens of `user` at `at`; how many.
pub(crate) async fn revoke_of_user(
    conn: &mut Conn<'_>,
    user: UserId,
    at: OffsetDateTime,
) -> QueryResult<usize> {
    let query = diesel::update(
        refresh_tokens::table
            .filter(refresh_tokens::user_id.eq(db_uuid(user)))
            .filter(refresh_tokens::revoked_at.is_null()),
    )
    .set(refresh_tokens::revoked_at.eq(DbTime(at)))
    .reused();
    on_conn!(conn, c => query.execute(c).await)
}
