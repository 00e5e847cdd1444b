//! Throw-away databases for tests, on either engine (feature `test-support`).
//!
//! SQLite: a fresh file in a temporary folder. PostgreSQL: a uniquely named database on
//! the server at `MUSTER_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`). Both are migrated, and removed when the
//! [`TestDatabase`] is dropped, even when the test panics. When PostgreSQL cannot be
//! reached, [`TestDatabase::new`] answers `None` so local runs can skip those tests, but
//! when `CI` is set it fails the test instead: CI must never pass by skipping.

pub mod cluster;

pub use crate::purge::PURGE_BATCH;

use std::path::PathBuf;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};

use crate::{Database, DatabaseUrl, Engine, PoolOptions, run_migrations};

/// Where the PostgreSQL test server is, unless `MUSTER_TEST_DATABASE_URL` says otherwise.
pub const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A migrated, empty database that disappears on drop.
#[derive(Debug)]
pub struct TestDatabase {
    /// The open database.
    pub db: Database,
    /// Its URL (for code that opens its own connections).
    pub url: DatabaseUrl,
    cleanup: Cleanup,
}

#[derive(Debug)]
enum Cleanup {
    /// Someone else removes it (a throw-away server's database goes with the server).
    Nothing,
    Folder(PathBuf),
    PostgresDatabase {
        admin_url: String,
        name: String,
    },
}

impl TestDatabase {
    /// A fresh database on `engine`; `None` only for an unreachable PostgreSQL outside CI.
    ///
    /// # Panics
    /// When the database cannot be created, or PostgreSQL is unreachable while `CI` is set.
    #[allow(clippy::panic, clippy::missing_panics_doc)] // test support: a panic fails the test
    pub async fn new(engine: Engine) -> Option<Self> {
        match engine {
            Engine::Sqlite => Some(Self::sqlite().await),
            Engine::Postgres => Self::postgres().await,
        }
    }

    /// The database at `url`, migrated and opened with `options`, left in place on drop
    /// (for a [`cluster::Cluster`]'s, which goes with the server).
    ///
    /// # Panics
    /// When it cannot be migrated or opened.
    #[allow(clippy::panic)] // test support: a panic fails the test
    pub async fn adopt(url: DatabaseUrl, options: PoolOptions) -> Self {
        migrate(&url).await;
        let db = Database::connect(&url, options)
            .await
            .unwrap_or_else(|e| panic!("cannot open {url:?}: {e}"));
        Self {
            db,
            url,
            cleanup: Cleanup::Nothing,
        }
    }

    /// Runs raw SQL statements on this database, for arranging states that no port can
    /// create yet (an agent in another status, say).
    ///
    /// # Panics
    /// When the SQL fails.
    #[allow(clippy::panic)] // test support: a panic fails the test
    pub async fn execute(&self, sql: &str) {
        let result = match &self.url {
            DatabaseUrl::Postgres(url) => match AsyncPgConnection::establish(url).await {
                Ok(mut conn) => conn.batch_execute(sql).await,
                Err(err) => panic!("cannot connect to the test database: {err}"),
            },
            DatabaseUrl::Sqlite(path) => match raw_sqlite(path).await {
                Ok(mut conn) => conn.batch_execute(sql).await,
                Err(err) => panic!("cannot open the test database: {err}"),
            },
        };
        if let Err(err) = result {
            panic!("test SQL failed: {err}\n{sql}");
        }
    }

    /// The bytes of the one column `value` of the first row `sql` selects (a sealed
    /// secret, say), for tests that must read what no port exposes.
    ///
    /// # Panics
    /// When the query fails or selects no row.
    #[allow(clippy::panic)] // test support: a panic fails the test
    pub async fn blob(&self, sql: &str) -> Vec<u8> {
        #[derive(diesel::QueryableByName)]
        struct Blob {
            #[diesel(sql_type = diesel::sql_types::Binary)]
            value: Vec<u8>,
        }
        let query = diesel::sql_query(sql);
        let rows: Result<Vec<Blob>, _> = match &self.url {
            DatabaseUrl::Postgres(url) => match AsyncPgConnection::establish(url).await {
                Ok(mut conn) => diesel_async::RunQueryDsl::load(query, &mut conn).await,
                Err(err) => panic!("cannot connect to the test database: {err}"),
            },
            DatabaseUrl::Sqlite(path) => match raw_sqlite(path).await {
                Ok(mut conn) => diesel_async::RunQueryDsl::load(query, &mut conn).await,
                Err(err) => panic!("cannot open the test database: {err}"),
            },
        };
        match rows {
            Ok(rows) => match rows.into_iter().next() {
                Some(row) => row.value,
                None => panic!("test SQL selected nothing: {sql}"),
            },
            Err(err) => panic!("test SQL failed: {err}\n{sql}"),
        }
    }

    async fn sqlite() -> Self {
        let folder = std::env::temp_dir().join(format!("muster-test-{}", uuid::Uuid::now_v7()));
        let url = DatabaseUrl::Sqlite(folder.join("muster.db"));
        let cleanup = Cleanup::Folder(folder);
        let db = open(&url).await;
        Self { db, url, cleanup }
    }

    #[allow(clippy::panic)] // test support: a panic fails the test
    async fn postgres() -> Option<Self> {
        let admin_url = std::env::var("MUSTER_TEST_DATABASE_URL")
            .unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_owned());
        let mut admin = match AsyncPgConnection::establish(&admin_url).await {
            Ok(conn) => conn,
            Err(err) if std::env::var_os("CI").is_none() => {
                eprintln!(
                    "skipping: PostgreSQL at {admin_url} is unreachable ({err}); set CI=1 to fail instead"
                );
                return None;
            }
            Err(err) => panic!("PostgreSQL at {admin_url} is unreachable and CI is set: {err}"),
        };
        let name = format!("muster_test_{}", uuid::Uuid::now_v7().simple());
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("cannot create test database {name}: {e}"));
        let url = DatabaseUrl::Postgres(with_database(&admin_url, &name));
        let cleanup = Cleanup::PostgresDatabase { admin_url, name };
        // Build the guard first so the database is dropped even if migrating panics.
        let placeholder = Self {
            db: open_unmigrated(&url).await,
            url: url.clone(),
            cleanup,
        };
        migrate(&url).await;
        Some(placeholder)
    }
}

#[allow(clippy::panic)] // test support: a panic fails the test
async fn open(url: &DatabaseUrl) -> Database {
    let db = open_unmigrated(url).await;
    migrate(url).await;
    db
}

#[allow(clippy::panic)] // test support: a panic fails the test
async fn open_unmigrated(url: &DatabaseUrl) -> Database {
    let options = PoolOptions {
        max_size: 4,
        ..PoolOptions::default()
    };
    Database::connect(url, options)
        .await
        .unwrap_or_else(|e| panic!("cannot open test database: {e}"))
}

#[allow(clippy::panic)] // test support: a panic fails the test
async fn migrate(url: &DatabaseUrl) {
    run_migrations(url)
        .await
        .unwrap_or_else(|e| panic!("cannot migrate test database: {e}"));
}

/// `postgres://host/db?x` with `db` replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let server = match base[after_scheme..].find('/') {
        Some(slash) => &base[..after_scheme + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{server}/{name}?{query}"),
        None => format!("{server}/{name}"),
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        match &self.cleanup {
            Cleanup::Nothing => {}
            Cleanup::Folder(folder) => {
                let _ = std::fs::remove_dir_all(folder);
            }
            Cleanup::PostgresDatabase { admin_url, name } => {
                let (admin_url, name) = (admin_url.clone(), name.clone());
                // Drop may run inside a runtime; use a thread with its own runtime.
                let dropper = std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build();
                    if let Ok(runtime) = runtime {
                        runtime.block_on(async move {
                            if let Ok(mut admin) = AsyncPgConnection::establish(&admin_url).await {
                                let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                                if let Err(err) = admin.batch_execute(&sql).await {
                                    eprintln!("could not drop test database {name}: {err}");
                                }
                            }
                        });
                    }
                });
                let _ = dropper.join();
            }
        }
    }
}

/// A connection taken from a [`Database`]'s pool and held until dropped: how a test
/// exhausts a small pool (as a slow query holding every connection would).
pub struct HeldConnection(#[allow(dead_code)] crate::conn::PooledConn);

impl std::fmt::Debug for HeldConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HeldConnection")
    }
}

impl Database {
    /// The one text column `v` of the first row `sql` selects, read through this
    /// database's own pool (and so over its TLS settings).
    ///
    /// # Panics
    /// When the query fails.
    #[allow(clippy::panic)] // test support: a panic fails the test
    pub async fn text_of(&self, sql: &str) -> String {
        use diesel_async::RunQueryDsl;

        use crate::conn::on_conn;

        #[derive(diesel::QueryableByName)]
        struct Row {
            #[diesel(sql_type = diesel::sql_types::Text)]
            v: String,
        }
        let mut pooled = self
            .pooled()
            .await
            .unwrap_or_else(|e| panic!("cannot take a connection: {e}"));
        let row: Row = on_conn!(pooled.conn(), c => {
            diesel::sql_query(sql).get_result(c).await
        })
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
        row.v
    }

    /// Runs `sql` on the connection this database writes with (on SQLite its one writer
    /// connection, so that connection settings such as `max_page_count` apply to every
    /// later write).
    ///
    /// # Panics
    /// When it fails.
    #[allow(clippy::panic)] // test support: a panic fails the test
    pub async fn on_writer(&self, sql: &str) {
        use diesel_async::SimpleAsyncConnection;

        use crate::conn::on_conn;

        let mut pooled = self
            .pooled_for_write()
            .await
            .unwrap_or_else(|e| panic!("cannot take the writer: {e}"));
        on_conn!(pooled.conn(), c => c.batch_execute(sql).await)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Takes one connection out of the pool (on SQLite, the readers' pool) until the
    /// answer is dropped.
    ///
    /// # Panics
    /// When no connection can be had.
    #[allow(clippy::panic)] // test support: a panic fails the test
    pub async fn hold_connection(&self) -> HeldConnection {
        HeldConnection(
            self.pooled()
                .await
                .unwrap_or_else(|e| panic!("cannot take a connection: {e}")),
        )
    }
}

/// A connection of its own to the SQLite file, waiting (as the server's do) rather than
/// failing when the server's writer holds the write lock at that moment.
async fn raw_sqlite(
    path: &std::path::Path,
) -> Result<crate::conn::SqliteConn, diesel::ConnectionError> {
    let mut conn = crate::conn::SqliteConn::establish(&path.to_string_lossy()).await?;
    conn.batch_execute("PRAGMA busy_timeout = 5000")
        .await
        .map_err(|e| diesel::ConnectionError::BadConnection(e.to_string()))?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn database_name_is_replaced() {
        assert_eq!(
            with_database("postgres://p@h:5432/test", "x"),
            "postgres://p@h:5432/x"
        );
        assert_eq!(
            with_database("postgres://p@h/test?sslmode=disable", "x"),
            "postgres://p@h/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://p@h", "x"), "postgres://p@h/x");
    }
}
