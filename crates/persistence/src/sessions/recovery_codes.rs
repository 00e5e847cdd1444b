//! Second-factor recovery codes (`recovery_codes`): the row and its queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{TokenHash, UserId};
use time::OffsetDateTime;

use crate::conn::{Conn, on_conn};
use crate::schema::recovery_codes;
use crate::types::{DbTime, DbUuid, db_uuid};

/// One recovery code of a user, stored as its hash; it has no domain type of its own
/// (the port speaks of hashes).
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = recovery_codes, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct RecoveryCodeRow {
    pub user_id: DbUuid,
    pub code_hash: Vec<u8>,
    pub used_at: Option<DbTime>,
}

impl RecoveryCodeRow {
    /// An unused code of `user`.
    pub(crate) fn unused(user: UserId, hash: &TokenHash) -> Self {
        Self {
            user_id: DbUuid(user.as_uuid()),
            code_hash: hash.0.to_vec(),
            used_at: None,
        }
    }
}

/// Deletes every recovery code of `user`, then stores `hashes` as its unused codes.
/// PostgreSQL takes them in one multi-row INSERT; SQLite row by row (see
/// [`events::append`](crate::events::queries::append)).
pub(crate) async fn replace(
    conn: &mut Conn<'_>,
    user: UserId,
    hashes: &[TokenHash],
) -> QueryResult<()> {
    let delete =
        diesel::delete(recovery_codes::table.filter(recovery_codes::user_id.eq(db_uuid(user))));
    on_conn!(conn, c => delete.execute(c).await)?;
    if hashes.is_empty() {
        return Ok(());
    }
    let rows: Vec<RecoveryCodeRow> = hashes
        .iter()
        .map(|hash| RecoveryCodeRow::unused(user, hash))
        .collect();
    match conn {
        Conn::Pg(c) => {
            diesel::insert_into(recovery_codes::table)
                .values(&rows)
                .execute(*c)
                .await?;
        }
        Conn::Sqlite(c) => {
            for row in &rows {
                diesel::insert_into(recovery_codes::table)
                    .values(row)
                    .execute(*c)
                    .await?;
            }
        }
    }
    Ok(())
}

/// Stamps the unused code `hash` of `user` as used at `at`; whether there was one.
/// One conditional statement, so a code is used at most once.
pub(crate) async fn use_once(
    conn: &mut Conn<'_>,
    user: UserId,
    hash: &TokenHash,
    at: OffsetDateTime,
) -> QueryResult<bool> {
    let query = diesel::update(
        recovery_codes::table
            .filter(recovery_codes::user_id.eq(db_uuid(user)))
            .filter(recovery_codes::code_hash.eq(hash.0.as_slice()))
            .filter(recovery_codes::used_at.is_null()),
    )
    .set(recovery_codes::used_at.eq(DbTime(at)));
    let rows = on_conn!(conn, c => query.execute(c).await)?;
    Ok(rows == 1)
}
