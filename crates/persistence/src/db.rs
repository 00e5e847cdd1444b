//! The connection pool for either engine.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use deadpool::Runtime;
use diesel_async::pooled_connection::deadpool::Pool as DeadPool;
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures_util::FutureExt;
use muster_domain::ports::RepositoryError;
use tracing::Instrument;

use crate::checkpointer::{Checkpointer, WRITER_CHECKPOINT_PAGES};
use crate::conn::{PooledConn, SqliteConn, on_conn};
use crate::error::{from_diesel, from_pool, with_sources};
use crate::event_counts::EventCounts;
use crate::group_commit::GroupCommit;
use crate::pg_tls::PgConnector;
use crate::url::DatabaseUrl;

/// A pool for one engine.
#[derive(Clone)]
pub(crate) enum Pool {
    Postgres(DeadPool<AsyncPgConnection>),
    /// SQLite runs one write transaction at a time, so writes get a pool of their own
    /// with ONE connection: units of work queue for it through the group committer
    /// (`group_commit.rs`), the nonce batches and the few other writes through the
    /// pool's fair wait queue, instead of polling the file lock in `busy_timeout`
    /// sleeps, which grow to 100 ms each and made the tail latency; and readers never
    /// hold up a writer.
    Sqlite {
        readers: DeadPool<SqliteConn>,
        writer: DeadPool<SqliteConn>,
    },
}

/// Which engine a [`Database`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// PostgreSQL: production and scale-out.
    Postgres,
    /// An embedded SQLite file: the zero-set-up default.
    Sqlite,
}

impl Engine {
    /// The engine's OpenTelemetry `db.system.name`.
    pub fn system_name(self) -> &'static str {
        match self {
            Self::Postgres => "postgresql",
            Self::Sqlite => "sqlite",
        }
    }
}

/// Pool sizing and timeouts.
#[derive(Debug, Clone, Copy)]
pub struct PoolOptions {
    /// Most connections open at once.
    pub max_size: usize,
    /// How long a request waits for a free connection, or for a new one to open; past
    /// it the request fails (503) instead of queueing on.
    pub timeout: Duration,
    /// Longest a single statement may run on PostgreSQL before the server cancels it;
    /// `None` leaves the server's setting. SQLite has no such limit.
    pub statement_timeout: Option<Duration>,
}

impl Default for PoolOptions {
    fn default() -> Self {
        Self {
            max_size: 16,
            timeout: Duration::from_secs(3),
            statement_timeout: Some(Duration::from_secs(30)),
        }
    }
}

/// How busy a pool is, for `/ready` and the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    /// Most connections it may open.
    pub max_size: usize,
    /// Connections open now.
    pub size: usize,
    /// Open connections not in use.
    pub available: usize,
    /// Requests waiting for a connection.
    pub waiting: usize,
    /// Requests that gave up waiting for a connection (the acquire timeout), since start.
    pub timeouts: u64,
}

/// Opening the database failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The SQLite file's folder could not be created.
    #[error("cannot create the database folder {path}: {source}")]
    Folder {
        /// The folder.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The pool could not be built.
    #[error("cannot set up the connection pool for {url}: {reason}")]
    Pool {
        /// The URL without password.
        url: String,
        /// Why.
        reason: String,
    },
    /// The first connection failed.
    #[error("cannot connect to the database {url}: {reason}")]
    Unreachable {
        /// The URL without password.
        url: String,
        /// Why.
        reason: String,
    },
}

/// A pooled handle to the configured database; cheap to clone. Every repository port of
/// the domain is implemented on it.
#[derive(Clone)]
pub struct Database {
    pool: Pool,
    url: DatabaseUrl,
    /// Requests that gave up waiting for a connection, since start (all clones).
    timeouts: Arc<AtomicU64>,
    /// What `GET /events` need not count again (all clones).
    event_counts: Arc<EventCounts>,
    /// SQLite: the queue of units of work to the writer, and the writer thread (all
    /// clones).
    group_commit: Option<Arc<GroupCommit>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("url", &self.url.redacted())
            .finish_non_exhaustive()
    }
}

/// SQLite settings on every pooled connection. `synchronous=NORMAL` in WAL mode may lose
/// the last transactions on power loss (never on a process crash) and never corrupts the
/// file; it roughly doubles write throughput. `busy_timeout` lets writers queue instead
/// of failing at once. `temp_store = MEMORY` keeps the savepoint journals of a group
/// commit (the pages a unit changed, kept to roll its savepoint back) in memory: in temp
/// files they were two thirds of the writer's `pwrite` calls.
/// `busy_timeout` comes first: switching a new file to WAL takes a lock that a
/// connection opened at the same moment may hold for an instant.
const SQLITE_PRAGMAS: &str = "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; \
     PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;";

/// Most SQLite reading connections. SQLite works in the server's own threads: more
/// concurrent readers than this only add page caches (2 MiB each) and thread hand-offs.
const SQLITE_MAX_READERS: usize = 4;

/// A connection manager for the SQLite file at `path`, with `pragmas` set on every
/// connection it opens.
fn sqlite_manager(
    path: &std::path::Path,
    pragmas: Arc<str>,
) -> AsyncDieselConnectionManager<SqliteConn> {
    let mut config = ManagerConfig::<SqliteConn>::default();
    config.recycling_method = RecyclingMethod::Fast;
    config.custom_setup = Box::new(move |file| {
        let pragmas = Arc::clone(&pragmas);
        async move {
            let mut conn = SqliteConn::establish(file).await?;
            conn.batch_execute(&pragmas)
                .await
                .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
            Ok(conn)
        }
        .boxed()
    });
    AsyncDieselConnectionManager::<SqliteConn>::new_with_config(path.to_string_lossy(), config)
}

/// A connection manager for the PostgreSQL server at `url` (over TLS as its `sslmode`
/// says), with the statement timeout set on every connection it opens.
fn postgres_manager(
    url: &str,
    statement_timeout: Option<Duration>,
) -> Result<AsyncDieselConnectionManager<AsyncPgConnection>, String> {
    let connector = PgConnector::new(url)?;
    let mut config = ManagerConfig::<AsyncPgConnection>::default();
    config.recycling_method = RecyclingMethod::Fast;
    config.custom_setup = Box::new(move |_url| {
        let connector = connector.clone();
        async move {
            let mut conn = connector.connect().await?;
            if let Some(limit) = statement_timeout {
                conn.batch_execute(&format!("SET statement_timeout = {}", limit.as_millis()))
                    .await
                    .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
            }
            Ok(conn)
        }
        .boxed()
    });
    Ok(AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, config))
}

/// The same sizing and timeouts for either engine's pool. Both managers recycle
/// connections the `Fast` way: a connection with an open transaction (or, on
/// PostgreSQL, a closed socket) is discarded, but no `SELECT 1` is sent on every
/// checkout, which had doubled the queries of every request. A connection that died
/// quietly fails its next query with 503 and is then dropped.
fn build_pool<M: deadpool::managed::Manager>(
    manager: M,
    options: PoolOptions,
) -> Result<deadpool::managed::Pool<M>, String> {
    deadpool::managed::Pool::builder(manager)
        .max_size(options.max_size)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(options.timeout))
        .create_timeout(Some(options.timeout))
        .build()
        .map_err(|e| e.to_string())
}

impl Database {
    /// Builds the pool and opens one connection to prove the database answers. For
    /// SQLite, the file and its folder are created when missing.
    pub async fn connect(url: &DatabaseUrl, options: PoolOptions) -> Result<Self, ConnectError> {
        let shown = url.redacted();
        let pool_err = |reason| ConnectError::Pool {
            url: shown.clone(),
            reason,
        };
        let pool = match url {
            DatabaseUrl::Postgres(raw) => {
                let manager = postgres_manager(raw, options.statement_timeout).map_err(pool_err)?;
                let pool = build_pool(manager, options).map_err(pool_err)?;
                Pool::Postgres(pool)
            }
            DatabaseUrl::Sqlite(path) => {
                if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(folder).map_err(|source| ConnectError::Folder {
                        path: folder.display().to_string(),
                        source,
                    })?;
                }
                let readers = PoolOptions {
                    max_size: options.max_size.min(SQLITE_MAX_READERS),
                    ..options
                };
                let writer = PoolOptions {
                    max_size: 1,
                    ..options
                };
                // The writer leaves most checkpoints to the checkpointer thread.
                let writer_pragmas = format!(
                    "{SQLITE_PRAGMAS} PRAGMA wal_autocheckpoint = {WRITER_CHECKPOINT_PAGES};"
                );
                Pool::Sqlite {
                    readers: build_pool(sqlite_manager(path, SQLITE_PRAGMAS.into()), readers)
                        .map_err(pool_err)?,
                    writer: build_pool(sqlite_manager(path, writer_pragmas.into()), writer)
                        .map_err(pool_err)?,
                }
            }
        };
        let timeouts = Arc::new(AtomicU64::new(0));
        let group_commit = match (&pool, url) {
            (Pool::Sqlite { writer, .. }, DatabaseUrl::Sqlite(path)) => {
                let checkpointer = Checkpointer::start(path)
                    .map_err(|e| pool_err(format!("cannot start the checkpointer thread: {e}")))?;
                Some(Arc::new(
                    GroupCommit::start(
                        writer.clone(),
                        checkpointer,
                        Arc::clone(&timeouts),
                        options.timeout,
                    )
                    .map_err(|e| pool_err(format!("cannot start the writer thread: {e}")))?,
                ))
            }
            _ => None,
        };
        let db = Self {
            pool,
            url: url.clone(),
            timeouts,
            event_counts: Arc::default(),
            group_commit,
        };
        db.ping().await.map_err(|e| ConnectError::Unreachable {
            url: shown,
            reason: with_sources(&e),
        })?;
        Ok(db)
    }

    /// SQLite's group committer; `None` on PostgreSQL.
    pub(crate) fn group_commit(&self) -> Option<&GroupCommit> {
        self.group_commit.as_deref()
    }

    /// Runs a task that writes: on SQLite on the writer thread, beside the group
    /// committer (see [`crate::writer_thread`]), on PostgreSQL on the current runtime.
    pub(crate) fn spawn_writing<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        match &self.group_commit {
            Some(group) => group.thread().spawn(task),
            None => drop(tokio::spawn(task)),
        }
    }

    /// The settled event counts of this instance.
    pub(crate) fn event_counts(&self) -> &EventCounts {
        &self.event_counts
    }

    /// Which engine this is.
    pub fn engine(&self) -> Engine {
        match self.pool {
            Pool::Postgres(_) => Engine::Postgres,
            Pool::Sqlite { .. } => Engine::Sqlite,
        }
    }

    /// The URL this database was opened with.
    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// How busy the pool is (on SQLite, the readers' pool, which every request uses).
    pub fn pool_status(&self) -> PoolStatus {
        let status = match &self.pool {
            Pool::Postgres(pool) => pool.status(),
            Pool::Sqlite { readers, .. } => readers.status(),
        };
        PoolStatus {
            max_size: status.max_size,
            size: status.size,
            available: status.available,
            waiting: status.waiting,
            timeouts: AtomicU64::load(&self.timeouts, Ordering::Relaxed),
        }
    }

    /// Runs `SELECT 1`: does the database answer?
    pub async fn ping(&self) -> Result<(), RepositoryError> {
        let mut pooled = self.pooled().await?;
        on_conn!(pooled.conn(), c => diesel::sql_query("SELECT 1").execute(c).await)
            .map_err(from_diesel)?;
        Ok(())
    }

    /// A connection from the pool (the wait is a span in traces).
    #[tracing::instrument(level = "debug", name = "db.pool.acquire", skip_all)]
    pub(crate) async fn pooled(&self) -> Result<PooledConn, RepositoryError> {
        Ok(match &self.pool {
            Pool::Postgres(pool) => PooledConn::Pg(pool.get().await.map_err(|e| self.failed(e))?),
            Pool::Sqlite { readers, .. } => {
                PooledConn::Sqlite(readers.get().await.map_err(|e| self.failed(e))?)
            }
        })
    }

    /// Maps a pool error, counting the waits that ran out.
    fn failed<E: std::error::Error + Send + Sync + 'static>(
        &self,
        err: deadpool::managed::PoolError<E>,
    ) -> RepositoryError {
        if matches!(err, deadpool::managed::PoolError::Timeout(_)) {
            self.timeouts.fetch_add(1, Ordering::Relaxed);
        }
        from_pool(err)
    }

    /// A connection to write with: on SQLite the one writer connection (waiting for
    /// it is waiting for this process's turn to write), on PostgreSQL any.
    pub(crate) async fn pooled_for_write(&self) -> Result<PooledWrite<'_>, RepositoryError> {
        let pooled = match &self.pool {
            Pool::Sqlite { writer, .. } => PooledConn::Sqlite(
                writer
                    .get()
                    .instrument(tracing::debug_span!("db.pool.acquire", db.pool = "writer"))
                    .await
                    .map_err(|e| self.failed(e))?,
            ),
            Pool::Postgres(_) => self.pooled().await?,
        };
        Ok(PooledWrite::new(pooled, self.group_commit()))
    }
}

/// The connection to write with, checked out ([`crate::Database::pooled_for_write`]).
/// On SQLite, giving it back tells the checkpointer thread that the log may hold new
/// pages, whoever wrote with it (the group committer, which takes the connection
/// itself, tells it after each commit).
pub(crate) struct PooledWrite<'db> {
    pooled: PooledConn,
    wakes: Option<&'db GroupCommit>,
}

impl<'db> PooledWrite<'db> {
    pub(crate) fn new(pooled: PooledConn, wakes: Option<&'db GroupCommit>) -> Self {
        Self { pooled, wakes }
    }
}

impl std::ops::Deref for PooledWrite<'_> {
    type Target = PooledConn;

    fn deref(&self) -> &PooledConn {
        &self.pooled
    }
}

impl std::ops::DerefMut for PooledWrite<'_> {
    fn deref_mut(&mut self) -> &mut PooledConn {
        &mut self.pooled
    }
}

impl Drop for PooledWrite<'_> {
    fn drop(&mut self) {
        if let Some(group) = self.wakes {
            group.committed();
        }
    }
}

/// Runs a write to completion on its own task, so that a caller that goes away (a client
/// disconnecting mid-request) can never leave a transaction half-driven.
pub(crate) async fn detached<T, F>(write: F) -> Result<T, RepositoryError>
where
    T: Send + 'static,
    F: Future<Output = Result<T, RepositoryError>> + Send + 'static,
{
    tokio::spawn(write)
        .await
        .map_err(RepositoryError::internal)?
}
