use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::TokenHash;
use muster_domain::ports::Lock;

use crate::conn::{Conn, first_locked, on_conn};
use crate::purge::delete_oldest;
use crate::reuse::Reuse;
use crate::rows::OAuthStateRow;
use crate::schema::oauth_states;

/// Stores a started sign-in.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &OAuthStateRow) -> QueryResult<()> {
    let query = diesel::insert_into(oauth_states::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// One batch of forgetting started sign-ins that expired before `now`: the oldest
/// [`crate::purge::PURGE_BATCH`] or so; how many.
pub(crate) async fn purge_expired(
    conn: &mut Conn<'_>,
    now: time::OffsetDateTime,
) -> QueryResult<usize> {
    delete_oldest!(conn, oauth_states::table, oauth_states::expires_at, now)
}

/// Deletes the started sign-in whose state hashes to `hash`; what was deleted. Read
/// (locked on PostgreSQL) before the delete, and answered only when this delete removed
/// it, so concurrent takers get it once between them.
pub(crate) async fn take(
    conn: &mut Conn<'_>,
    hash: &TokenHash,
) -> QueryResult<Option<OAuthStateRow>> {
    // Owns its bytes: the SQLite lookup moves it into its call.
    let bytes = hash.0;
    let by_hash = move || oauth_states::table.filter(oauth_states::state_hash.eq(bytes.to_vec()));
    let found = first_locked!(
        conn,
        Some(Lock::Update),
        by_hash().select(OAuthStateRow::as_select())
    )?;
    let Some(row) = found else {
        return Ok(None);
    };
    let query = diesel::delete(by_hash());
    let deleted = on_conn!(conn, c => query.execute(c).await)?;
    Ok((deleted == 1).then_some(row))
}
