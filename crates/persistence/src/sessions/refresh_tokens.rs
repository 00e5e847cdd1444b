//! Refresh tokens (`refresh_tokens`): the row and its queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{LoginFamilyId, OrgId, RefreshToken, RefreshTokenId, TokenHash, UserId};
use muster_domain::ports::{Lock, RepositoryError};
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, on_conn};
use crate::reuse::Reuse;
use crate::schema::refresh_tokens;
use crate::types::{DbTime, DbUuid, db_uuid, token_hash};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = refresh_tokens, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct RefreshTokenRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub user_id: DbUuid,
    pub family_id: DbUuid,
    pub token_hash: Vec<u8>,
    pub created_at: DbTime,
    pub expires_at: DbTime,
    pub replaced_at: Option<DbTime>,
    pub revoked_at: Option<DbTime>,
}

impl From<&RefreshToken> for RefreshTokenRow {
    fn from(token: &RefreshToken) -> Self {
        Self {
            id: DbUuid(token.id.as_uuid()),
            org_id: DbUuid(token.org_id.as_uuid()),
            user_id: DbUuid(token.user_id.as_uuid()),
            family_id: DbUuid(token.family_id.as_uuid()),
            token_hash: token.token_hash.0.to_vec(),
            created_at: DbTime(token.created_at),
            expires_at: DbTime(token.expires_at),
            replaced_at: token.replaced_at.map(DbTime),
            revoked_at: token.revoked_at.map(DbTime),
        }
    }
}

impl TryFrom<RefreshTokenRow> for RefreshToken {
    type Error = RepositoryError;

    fn try_from(row: RefreshTokenRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: RefreshTokenId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            user_id: UserId::from_uuid(row.user_id.0),
            family_id: LoginFamilyId::from_uuid(row.family_id.0),
            token_hash: token_hash("refresh token hash", &row.token_hash)?,
            created_at: row.created_at.0,
            expires_at: row.expires_at.0,
            replaced_at: row.replaced_at.map(|t| t.0),
            revoked_at: row.revoked_at.map(|t| t.0),
        })
    }
}

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
