//! Macros that run one query body on whichever engine is configured.

/// Runs `$body` with `$conn: &mut <engine connection>` on whichever engine `$db` uses;
/// `$backend` names the backend type inside the body (for `into_boxed::<$backend>()`).
/// The body is compiled once per engine, so each query is type-checked for both.
macro_rules! with_conn {
    ($db:expr, $conn:ident, $backend:ident => $body:expr) => {
        match $db.pool() {
            $crate::db::Pool::Postgres(pool) => {
                #[allow(dead_code)]
                type $backend = diesel::pg::Pg;
                let mut guard = pool.get().await.map_err($crate::error::from_pool)?;
                let $conn: &mut diesel_async::AsyncPgConnection = &mut guard;
                $body
            }
            $crate::db::Pool::Sqlite(pool) => {
                #[allow(dead_code)]
                type $backend = diesel::sqlite::Sqlite;
                let mut guard = pool.get().await.map_err($crate::error::from_pool)?;
                let $conn: &mut $crate::db::SqliteConn = &mut guard;
                $body
            }
        }
    };
}

/// Like [`with_conn!`], inside one transaction: `$body` must evaluate to
/// `Result<T, diesel::result::Error>`; an `Err` rolls back. On SQLite the transaction
/// starts with `BEGIN IMMEDIATE`, taking the write lock up front so a read-then-write
/// never fails on lock upgrade.
macro_rules! transaction {
    ($db:expr, $conn:ident => $body:expr) => {
        match $db.pool() {
            $crate::db::Pool::Postgres(pool) => {
                let mut guard = pool.get().await.map_err($crate::error::from_pool)?;
                let conn: &mut diesel_async::AsyncPgConnection = &mut guard;
                diesel_async::AsyncConnection::transaction(conn, async |$conn| $body)
                    .await
                    .map_err($crate::error::from_diesel)
            }
            $crate::db::Pool::Sqlite(pool) => {
                let mut guard = pool.get().await.map_err($crate::error::from_pool)?;
                let conn: &mut $crate::db::SqliteConn = &mut guard;
                conn.immediate_transaction(async |$conn| $body)
                    .await
                    .map_err($crate::error::from_diesel)
            }
        }
    };
}

pub(crate) use {transaction, with_conn};
