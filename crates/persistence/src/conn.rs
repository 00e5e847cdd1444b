//! A connection to either engine, so that query functions are written once and compose
//! inside one transaction.

use deadpool::managed::Object;
use diesel::SqliteConnection;
use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::AsyncDieselConnectionManager;
use diesel_async::sync_connection_wrapper::{SpawnBlocking, SyncConnectionWrapper};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;

/// A borrowed connection (or transaction) on one of the two engines. Query functions (in
/// each aggregate's folder) take `&mut Conn` and work the same inside a unit of work or on
/// a plain pooled connection.
pub(crate) enum Conn<'c> {
    Pg(&'c mut AsyncPgConnection),
    Sqlite(&'c mut SqliteConn),
}

/// A connection checked out of the pool; returned to it on drop.
// It lives on the stack of one query or transaction: boxing the larger variant would cost
// an allocation per request for no gain.
#[allow(clippy::large_enum_variant)]
pub(crate) enum PooledConn {
    Pg(Object<AsyncDieselConnectionManager<AsyncPgConnection>>),
    Sqlite(Object<AsyncDieselConnectionManager<SqliteConn>>),
}

impl PooledConn {
    /// Borrows the connection for queries.
    pub(crate) fn conn(&mut self) -> Conn<'_> {
        match self {
            Self::Pg(object) => Conn::Pg(object),
            Self::Sqlite(object) => Conn::Sqlite(object),
        }
    }
}

/// The SQLite connection type: a synchronous connection whose calls run on the calling
/// thread (see [`Inline`]).
pub(crate) type SqliteConn = SyncConnectionWrapper<SqliteConnection, Inline>;

/// Runs each SQLite call where it is awaited instead of on tokio's blocking pool.
///
/// An SQLite statement of this service takes microseconds: a primary-key read is about
/// 10 µs of CPU, while handing it to a blocking thread and waking the request's worker
/// afterwards costs several times that in futex waits and scheduling (half of the
/// server's profile under load was in the kernel). Nothing here waits on a lock either:
/// in WAL mode readers never wait for the writer, and writers queue for the one writing
/// connection in the pool's async queue before they touch the file; `busy_timeout` only
/// matters when another process writes the same file.
pub(crate) struct Inline;

impl SpawnBlocking for Inline {
    fn spawn_blocking<'a, R>(
        &mut self,
        task: impl FnOnce() -> R + Send + 'static,
    ) -> BoxFuture<'a, Result<R, Box<dyn std::error::Error + Send + Sync + 'static>>>
    where
        R: Send + 'static,
    {
        std::future::ready(Ok(task())).boxed()
    }

    fn get_runtime() -> Self {
        Self
    }
}

/// Runs `$body` with `$c` bound to the engine's connection, compiling it once per engine
/// (so each query is type-checked for both). With `$backend`, that name is the engine's
/// backend type inside the body, for `into_boxed::<$backend>()`. Branch by hand instead
/// where the SQL differs (row locks, say).
macro_rules! on_conn {
    ($conn:expr, $c:ident => $body:expr) => {
        on_conn!($conn, $c, _Backend => $body)
    };
    ($conn:expr, $c:ident, $backend:ident => $body:expr) => {
        match $conn {
            $crate::conn::Conn::Pg(inner) => {
                #[allow(dead_code)]
                type $backend = diesel::pg::Pg;
                let $c: &mut diesel_async::AsyncPgConnection = inner;
                $body
            }
            $crate::conn::Conn::Sqlite(inner) => {
                #[allow(dead_code)]
                type $backend = diesel::sqlite::Sqlite;
                let $c: &mut $crate::conn::SqliteConn = inner;
                $body
            }
        }
    };
}

/// Loads the one row of `$query` (a lookup by a unique key; an expression, built once
/// per arm) on `$conn`, holding it with `$lock` (an `Option<Lock>`) on PostgreSQL:
/// `FOR SHARE` or `FOR NO KEY UPDATE`. SQLite has no row locks; its write transactions
/// run one at a time. On SQLite the row is read on the synchronous connection itself
/// (see [`load_rows!`]), so what `$query` uses must be owned.
///
/// Lookups by key read the row without `LIMIT` (`get_result`, not `first`): SQLite,
/// unless built with stable plans (as `.cargo/config.toml` builds it), re-plans a
/// statement whose `LIMIT` is a bound parameter on every run (it marks the parameter as
/// one the plan depends on), which cost a full re-parse of the query per request, a
/// quarter of a signed read's CPU.
///
/// `Lock::Update` is `FOR NO KEY UPDATE`, not `FOR UPDATE`: no use case changes a key,
/// and `FOR UPDATE` also blocks the `FOR KEY SHARE` lock that PostgreSQL's foreign-key
/// check takes on the referenced row. A batch of nonces (or ledger rows) naming agents A
/// and B then waited on a transfer holding A while the transfer waited on the batch's
/// lock on B: a deadlock, answered as a 500. Lockers that change the row still queue.
macro_rules! first_locked {
    ($conn:expr, $lock:expr, $query:expr) => {
        match $conn {
            $crate::conn::Conn::Pg(c) => match $lock {
                None | Some(muster_domain::ports::Lock::Nothing) => {
                    $query.get_result(*c).await.optional()
                }
                Some(muster_domain::ports::Lock::Share) => {
                    $query.for_share().get_result(*c).await.optional()
                }
                Some(muster_domain::ports::Lock::Update) => {
                    $query.for_no_key_update().get_result(*c).await.optional()
                }
            },
            $crate::conn::Conn::Sqlite(c) => {
                c.spawn_blocking(move |sync| {
                    diesel::RunQueryDsl::get_result($query, sync).optional()
                })
                .await
            }
        }
    };
}

/// Loads the rows of the query `$query` builds on `$conn`, with `$backend` naming the
/// engine's backend type inside it (for `into_boxed::<$backend>()`). On SQLite the
/// query is built and run on the synchronous connection itself, as
/// [`first_locked!`]'s lookups are: diesel-async's `load` copies every value of every
/// row into an owned one first, a `sqlite3_value_dup` per column (an allocation, a copy
/// and a memory barrier). What `$query` uses moves into that call: clone borrowed
/// arguments first.
macro_rules! load_rows {
    ($conn:expr, $backend:ident => $query:expr) => {
        match $conn {
            $crate::conn::Conn::Pg(c) => {
                #[allow(dead_code)]
                type $backend = diesel::pg::Pg;
                diesel_async::RunQueryDsl::load($query, *c).await
            }
            $crate::conn::Conn::Sqlite(c) => {
                c.spawn_blocking(move |sync| {
                    #[allow(dead_code)]
                    type $backend = diesel::sqlite::Sqlite;
                    diesel::RunQueryDsl::load($query, sync)
                })
                .await
            }
        }
    };
}

/// Inserts the rows of the slice `$rows` into `$table`, in order, evaluating to
/// `QueryResult<()>`: one multi-row INSERT on PostgreSQL (one round trip), kept
/// prepared for up to [`KEPT_ROWS`] rows (see [`crate::reuse`]). Diesel builds
/// multi-row INSERTs for SQLite only on its synchronous connection, so there the rows go
/// one by one, inside the caller's transaction on one cached statement, with no round
/// trip to pay.
macro_rules! insert_all {
    ($conn:expr, $table:expr, $rows:expr) => {{
        let rows = $rows;
        match $conn {
            _ if rows.is_empty() => Ok(()),
            $crate::conn::Conn::Pg(c) => {
                use $crate::reuse::Reuse;
                diesel::insert_into($table)
                    .values(rows)
                    .reused_if(rows.len() <= $crate::conn::KEPT_ROWS)
                    .execute(*c)
                    .await
                    .map(|_| ())
            }
            $crate::conn::Conn::Sqlite(c) => {
                let mut done = Ok(());
                for row in rows {
                    done = diesel::insert_into($table)
                        .values(row)
                        .execute(*c)
                        .await
                        .map(|_| ());
                    if done.is_err() {
                        break;
                    }
                }
                done
            }
        }
    }};
}

/// The most rows of a multi-row INSERT kept prepared on PostgreSQL: a unit of work
/// appends a few events (and queues a few deliveries) at a time; a larger batch is
/// rare, and keeping one statement per row count would fill every connection's cache.
pub(crate) const KEPT_ROWS: usize = 4;

pub(crate) use {first_locked, insert_all, load_rows, on_conn};
