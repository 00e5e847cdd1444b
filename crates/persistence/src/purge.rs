//! Purges of expired rows, in batches.
//!
//! Under steady load a minute's worth of expired nonces is hundreds of thousands of
//! rows (one per signed request); started sign-ins are one per unauthenticated
//! `GET /auth/google`. Deleted by one statement, that took SQLite's one writing
//! connection for seconds (300,000 nonces: 2.8 s), and every write and every signed
//! request's nonce waited behind it. Here each statement deletes at most about
//! [`PURGE_BATCH`] rows, oldest first, and the connection goes back to the pool between
//! statements, for [`PURGE_PAUSE`], so the writes queued meanwhile take their turn and
//! the checkpointer catches up.

/// How many rows one purge statement deletes, give or take the rows sharing the last
/// one's instant (a statement deletes everything up to that instant, so that none is
/// left behind): 5-15 ms of SQLite's writer.
pub const PURGE_BATCH: u32 = 1_000;

/// How long a purge waits between statements: long enough for SQLite's checkpointer
/// to copy the pages a batch rewrote before the next batch rewrites more, so the
/// write-ahead log stays short. Without it (the purge only yielding to other tasks),
/// the slowest signed read during a purge of 300,000 nonces was 95-107 ms; with it,
/// 43-73 ms (16 ms without a purge). A purge of 300,000 rows takes about 3 s longer.
pub(crate) const PURGE_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// Runs `$batch` (a delete of at most about [`PURGE_BATCH`] expired rows on `$conn`,
/// answering how many it deleted) on a writing connection of the [`crate::Database`]
/// `$db`, taken anew each time, until a run deletes fewer than a batch; how many rows
/// in all, or the first error as a `RepositoryError`. (A macro: a closure here would
/// make the returned future's `Send` unprovable for every lifetime of the connection.)
macro_rules! purge_in_batches {
    ($db:expr, $conn:ident => $batch:expr) => {{
        let mut purged = 0_u64;
        loop {
            let deleted = {
                let mut pooled = $db.pooled_for_write().await?;
                let $conn = &mut pooled.conn();
                $batch.await.map_err($crate::error::from_diesel)?
            };
            purged = purged.saturating_add(u64::try_from(deleted).unwrap_or(u64::MAX));
            if deleted < $crate::purge::PURGE_BATCH as usize {
                break Ok::<u64, muster_domain::ports::RepositoryError>(purged);
            }
            tokio::time::sleep($crate::purge::PURGE_PAUSE).await;
        }
    }};
}

/// The query for the instant of the last row of a purge's batch: the
/// [`PURGE_BATCH`]-th oldest `$column` (a timestamp) of `$table` before `$before` (a
/// `DbTime`), a step along the column's index.
macro_rules! last_of_batch {
    ($table:expr, $column:expr, $before:expr) => {{
        use diesel::{ExpressionMethods as _, QueryDsl};
        QueryDsl::filter($table, $column.lt($before))
            .select($column)
            .order($column.asc())
            .offset(i64::from($crate::purge::PURGE_BATCH) - 1)
            .limit(1)
    }};
}

/// One batch of a purge: deletes the [`PURGE_BATCH`] oldest rows of `$table` whose
/// `$column` (a timestamp) is before `$before`, and any others at the same instant as
/// the last of them; how many (a `QueryResult<usize>`). Two statements: the instant of
/// the batch's last row ([`last_of_batch!`]), then the delete up to it.
macro_rules! delete_oldest {
    ($conn:expr, $table:expr, $column:expr, $before:expr) => {{
        use diesel::{ExpressionMethods as _, OptionalExtension as _, QueryDsl};
        use diesel_async::RunQueryDsl as _;
        let conn: &mut $crate::conn::Conn<'_> = $conn;
        let before = $crate::types::DbTime($before);
        let last = $crate::purge::last_of_batch!($table, $column, before);
        let last: Option<$crate::types::DbTime> =
            $crate::conn::on_conn!(&mut *conn, c => last.get_result(c).await.optional())?;
        match last {
            Some(last) => {
                let query = diesel::delete(QueryDsl::filter($table, $column.le(last)));
                $crate::conn::on_conn!(conn, c => query.execute(c).await)
            }
            None => {
                let query = diesel::delete(QueryDsl::filter($table, $column.lt(before)));
                $crate::conn::on_conn!(conn, c => query.execute(c).await)
            }
        }
    }};
}

pub(crate) use {delete_oldest, last_of_batch, purge_in_batches};

#[cfg(test)]
mod tests {
    use time::OffsetDateTime;

    use crate::plan::{reads_in_order, sqlite_plan};
    use crate::schema::{idempotency_keys, login_throttles, nonces, oauth_states};
    use crate::types::DbTime;

    /// SQLite plans without bound values (stable plans): a batch's last instant must
    /// still be found by stepping along the purged column's index, not by sorting the
    /// whole table.
    #[test]
    fn a_batch_is_found_along_the_index_on_sqlite() {
        let before = DbTime(OffsetDateTime::UNIX_EPOCH);
        let purged = [
            (
                sqlite_plan(&last_of_batch!(nonces::table, nonces::expires_at, before)),
                "INDEX nonces_expiry",
            ),
            (
                sqlite_plan(&last_of_batch!(
                    idempotency_keys::table,
                    idempotency_keys::created_at,
                    before
                )),
                "INDEX idempotency_keys_age",
            ),
            (
                sqlite_plan(&last_of_batch!(
                    oauth_states::table,
                    oauth_states::expires_at,
                    before
                )),
                "INDEX oauth_states_expiry",
            ),
            (
                sqlite_plan(&last_of_batch!(
                    login_throttles::table,
                    login_throttles::last_failure_at,
                    before
                )),
                "INDEX login_throttles_last_failure",
            ),
        ];
        for ((sql, plan), index) in purged {
            assert!(reads_in_order(&plan, index), "{sql}: {plan:?}");
        }
    }
}
