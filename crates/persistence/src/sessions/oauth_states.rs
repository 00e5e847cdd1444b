//! Started OAuth sign-ins (`oauth_states`): the row and its queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{BearerSecret, OAuthState, TokenHash};
use muster_domain::ports::{Lock, RepositoryError};

use crate::conn::{Conn, first_locked, on_conn};
use crate::purge::delete_oldest;
use crate::reuse::Reuse;
use crate::schema::oauth_states;
use crate::types::{DbTime, token_hash};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_states, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct OAuthStateRow {
    pub state_hash: Vec<u8>,
    pub code_verifier: String,
    pub created_at: DbTime,
    pub expires_at: DbTime,
}

impl From<&OAuthState> for OAuthStateRow {
    fn from(state: &OAuthState) -> Self {
        Self {
            state_hash: state.state_hash.0.to_vec(),
            code_verifier: state.code_verifier.expose().to_owned(),
            created_at: DbTime(state.created_at),
            expires_at: DbTime(state.expires_at),
        }
    }
}

impl TryFrom<OAuthStateRow> for OAuthState {
    type Error = RepositoryError;

    fn try_from(row: OAuthStateRow) -> Result<Self, Self::Error> {
        Ok(Self {
            state_hash: token_hash("OAuth state hash", &row.state_hash)?,
            code_verifier: BearerSecret::new(row.code_verifier),
            created_at: row.created_at.0,
            expires_at: row.expires_at.0,
        })
    }
}

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
