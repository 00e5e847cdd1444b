//! Failed sign-in streaks (`login_throttles`): the row and its queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use muster_domain::model::{LoginThrottle, ThrottleKey};
use muster_domain::ports::{Lock, RepositoryError};
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, on_conn};
use crate::error::corrupt;
use crate::purge::delete_oldest;
use crate::reuse::Reuse;
use crate::schema::login_throttles;
use crate::types::DbTime;

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = login_throttles, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct LoginThrottleRow {
    pub key_hash: Vec<u8>,
    pub failures: i32,
    pub last_failure_at: DbTime,
}

impl LoginThrottleRow {
    /// The row of the streak `throttle` under `key`. An empty streak (no last failure)
    /// is stamped with the epoch: the first to be purged.
    pub(crate) fn new(key: &ThrottleKey, throttle: &LoginThrottle) -> Self {
        Self {
            key_hash: key.0.to_vec(),
            // More never happen: an address is refused long before.
            failures: i32::try_from(throttle.failures).unwrap_or(i32::MAX),
            last_failure_at: DbTime(
                throttle
                    .last_failure_at
                    .unwrap_or(OffsetDateTime::UNIX_EPOCH),
            ),
        }
    }
}

impl TryFrom<LoginThrottleRow> for LoginThrottle {
    type Error = RepositoryError;

    fn try_from(row: LoginThrottleRow) -> Result<Self, Self::Error> {
        Ok(Self {
            failures: u32::try_from(row.failures).map_err(|e| corrupt("login failures", e))?,
            last_failure_at: Some(row.last_failure_at.0),
        })
    }
}

/// The streak under `key`, held until the end of the transaction (PostgreSQL: locked
/// for update; SQLite's write transactions run one at a time). A missing streak is
/// inserted empty, stamped `now`, first: concurrent first attempts then queue on the
/// row (the second insert waits for the first's transaction and does nothing) instead
/// of each finding none.
pub(crate) async fn lock(
    conn: &mut Conn<'_>,
    key: &ThrottleKey,
    now: time::OffsetDateTime,
) -> QueryResult<LoginThrottleRow> {
    let empty = LoginThrottleRow::new(
        key,
        &LoginThrottle {
            failures: 0,
            last_failure_at: Some(now),
        },
    );
    let insert = diesel::insert_into(login_throttles::table)
        .values(empty)
        .on_conflict_do_nothing()
        .reused();
    on_conn!(conn, c => insert.execute(c).await)?;
    // Owns its bytes: the SQLite lookup moves it into its call.
    let bytes = key.0;
    let found = first_locked!(
        conn,
        Some(Lock::Update),
        login_throttles::table
            .filter(login_throttles::key_hash.eq(bytes.to_vec()))
            .select(LoginThrottleRow::as_select())
    )?;
    found.ok_or(diesel::result::Error::NotFound)
}

/// Stores `row` as the streak of its key, over the stored one if any.
pub(crate) async fn save(conn: &mut Conn<'_>, row: LoginThrottleRow) -> QueryResult<()> {
    let query = diesel::insert_into(login_throttles::table)
        .values(row)
        .on_conflict(login_throttles::key_hash)
        .do_update()
        .set((
            login_throttles::failures.eq(excluded(login_throttles::failures)),
            login_throttles::last_failure_at.eq(excluded(login_throttles::last_failure_at)),
        ))
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Deletes the streak under `key`, if any.
pub(crate) async fn clear(conn: &mut Conn<'_>, key: &ThrottleKey) -> QueryResult<()> {
    let query =
        diesel::delete(login_throttles::table.filter(login_throttles::key_hash.eq(key.0.to_vec())))
            .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// One batch of forgetting streaks whose last failure was before `before`: the oldest
/// [`crate::purge::PURGE_BATCH`] or so; how many.
pub(crate) async fn purge(conn: &mut Conn<'_>, before: time::OffsetDateTime) -> QueryResult<usize> {
    delete_oldest!(
        conn,
        login_throttles::table,
        login_throttles::last_failure_at,
        before
    )
}
