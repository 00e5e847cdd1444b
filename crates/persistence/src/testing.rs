//! Throw-away databases for tests, on either engine (feature `test-support`).
//!
//! SQLite: a fresh file in a temporary folder. PostgreSQL: a uniquely named database on
//! the server at `MUSTER_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`). Both are migrated, and removed when the
//! [`TestDatabase`] is dropped, even when the test panics. When PostgreSQL cannot be
//! reached, [`TestDatabase::new`] answers `None` so local runs can skip those tests, but
//! when `CI` is set it fails the test instead: CI must never pass by skipping.
//!
//! Migrating is most of what a fresh database costs (about a second on PostgreSQL, where
//! copying a migrated one takes a tenth of that), so each engine's migrations run once
//! per set of migration files, into a template, and every test database is a copy of
//! it: `CREATE DATABASE … TEMPLATE muster_template_<digest>` on PostgreSQL, a file copy
//! of `muster-template-<digest>.db` in the temporary folder on SQLite. `<digest>` is
//! the build's digest of every migration file (`build.rs`), so a changed or added
//! migration makes a new template; old ones can be dropped at any time.

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

    #[allow(clippy::panic)] // test support: a panic fails the test
    async fn sqlite() -> Self {
        let template = sqlite_template().await;
        let folder = std::env::temp_dir().join(format!("muster-test-{}", uuid::Uuid::now_v7()));
        let path = folder.join("muster.db");
        if let Err(err) = std::fs::create_dir_all(&folder)
            .and_then(|()| std::fs::copy(&template, &path).map(drop))
        {
            let _ = std::fs::remove_dir_all(&folder);
            panic!("cannot copy the template {}: {err}", template.display());
        }
        let url = DatabaseUrl::Sqlite(path);
        let cleanup = Cleanup::Folder(folder);
        let db = open_unmigrated(&url).await;
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
        let template = postgres_template(&mut admin, &admin_url).await;
        let name = format!("muster_test_{}", uuid::Uuid::now_v7().simple());
        // A throw-away database needs no durability: neither its creation nor its
        // test's commits wait for the write-ahead log to reach the disk (that wait was
        // most of what a test database cost: 0.26 s to create one, 0.15 s without it).
        // Nothing is lost unless the server itself crashes. Not `fsync = off`: that is
        // the server's setting, not a database's.
        for sql in [
            "SET synchronous_commit = off".to_owned(),
            format!("CREATE DATABASE {name} TEMPLATE {template}"),
            format!("ALTER DATABASE {name} SET synchronous_commit = off"),
        ] {
            admin
                .batch_execute(&sql)
                .await
                .unwrap_or_else(|e| panic!("cannot create test database {name}: {e}"));
        }
        let url = DatabaseUrl::Postgres(with_database(&admin_url, &name));
        let cleanup = Cleanup::PostgresDatabase { admin_url, name };
        // Build the guard first so the database is dropped even if opening panics.
        let placeholder = Self {
            db: open_unmigrated(&url).await,
            url: url.clone(),
            cleanup,
        };
        Some(placeholder)
    }
}

/// The digest of every migration file this build embeds (see `build.rs`).
const MIGRATIONS_DIGEST: &str = env!("MIGRATIONS_DIGEST_OF_THIS_BUILD");

/// An arbitrary, fixed key: test processes starting together take turns building the
/// PostgreSQL template (the migrations' own lock is per database).
const TEMPLATE_LOCK_KEY: i64 = 0x6d75_7374_6574; // "muster" + 1

/// The migrated PostgreSQL template for this build's migrations, built on first use.
/// Built under another name and renamed when complete, so a half-built template is never
/// copied, and closed to connections so that copies never find it in use.
#[allow(clippy::panic)] // test support: a panic fails the test
async fn postgres_template(admin: &mut AsyncPgConnection, admin_url: &str) -> String {
    let name = format!("muster_template_{MIGRATIONS_DIGEST}");
    if database_exists(admin, &name).await {
        return name;
    }
    let locked = admin
        .batch_execute(&format!("SELECT pg_advisory_lock({TEMPLATE_LOCK_KEY})"))
        .await;
    locked.unwrap_or_else(|e| panic!("cannot lock the template: {e}"));
    if !database_exists(admin, &name).await {
        let building = format!("muster_tb_{}", uuid::Uuid::now_v7().simple());
        admin
            .batch_execute(&format!("CREATE DATABASE {building}"))
            .await
            .unwrap_or_else(|e| panic!("cannot create the template {building}: {e}"));
        migrate(&DatabaseUrl::Postgres(with_database(admin_url, &building))).await;
        // The migration's connection may still be closing: stop it before the rename.
        let rename = format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{building}'; \
             ALTER DATABASE {building} RENAME TO {name}; \
             ALTER DATABASE {name} ALLOW_CONNECTIONS false"
        );
        let mut tries = 0;
        while let Err(err) = admin.batch_execute(&rename).await {
            tries += 1;
            assert!(tries < 50, "cannot rename the template {building}: {err}");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    let unlocked = admin
        .batch_execute(&format!("SELECT pg_advisory_unlock({TEMPLATE_LOCK_KEY})"))
        .await;
    unlocked.unwrap_or_else(|e| panic!("cannot unlock the template: {e}"));
    name
}

#[allow(clippy::panic)] // test support: a panic fails the test
async fn database_exists(admin: &mut AsyncPgConnection, name: &str) -> bool {
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let query = diesel::sql_query("SELECT count(*) AS n FROM pg_database WHERE datname = $1")
        .bind::<diesel::sql_types::Text, _>(name);
    let count: Count = diesel_async::RunQueryDsl::get_result(query, admin)
        .await
        .unwrap_or_else(|e| panic!("cannot look for the template: {e}"));
    count.n > 0
}

/// The migrated SQLite template for this build's migrations, built on first use: a
/// compact copy (`VACUUM INTO`) of a freshly migrated file, renamed into place whole.
/// Processes that build it at the same time each rename an identical file.
#[allow(clippy::panic)] // test support: a panic fails the test
async fn sqlite_template() -> PathBuf {
    let temp = std::env::temp_dir();
    let path = temp.join(format!("muster-template-{MIGRATIONS_DIGEST}.db"));
    if path.is_file() {
        return path;
    }
    let folder = temp.join(format!("muster-template-{}", uuid::Uuid::now_v7()));
    let building = folder.join("muster.db");
    let compact = folder.join("template.db");
    let built = async {
        let url = DatabaseUrl::Sqlite(building.clone());
        drop(open(&url).await);
        let mut conn = raw_sqlite(&building).await.map_err(|e| e.to_string())?;
        let into = compact.to_string_lossy().replace('\'', "''");
        conn.batch_execute(&format!("VACUUM INTO '{into}'"))
            .await
            .map_err(|e| e.to_string())?;
        drop(conn);
        std::fs::rename(&compact, &path).map_err(|e| e.to_string())
    }
    .await;
    let _ = std::fs::remove_dir_all(&folder);
    if let Err(err) = built {
        panic!("cannot build the SQLite template {}: {err}", path.display());
    }
    path
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
