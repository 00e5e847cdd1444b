//! Embedded migrations for both engines, run at start-up and by `muster migrate`.

use diesel::Connection;
use diesel::connection::SimpleConnection;
use diesel::migration::MigrationVersion;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::conn::SqliteConn;
use crate::pg_tls::PgConnector;
use crate::url::DatabaseUrl;

const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");
pub(crate) const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// An arbitrary, fixed key: instances starting together take turns migrating.
const MIGRATION_LOCK_KEY: i64 = 0x6d75_7374_6572; // "muster"

/// Migrating failed.
#[derive(Debug, thiserror::Error)]
#[error("database migration failed: {0}")]
pub struct MigrateError(String);

/// Applies every pending migration; returns the versions applied (empty when up to date).
/// On PostgreSQL an advisory lock serializes concurrent callers.
pub async fn run_migrations(url: &DatabaseUrl) -> Result<Vec<String>, MigrateError> {
    // PostgreSQL connects here, over TLS when the URL says so; the connection's I/O is
    // driven by a task of this runtime.
    let pg = match url {
        DatabaseUrl::Postgres(raw) => {
            let connector = PgConnector::new(raw).map_err(MigrateError)?;
            Some(
                connector
                    .connect()
                    .await
                    .map_err(|e| MigrateError(e.to_string()))?,
            )
        }
        DatabaseUrl::Sqlite(_) => None,
    };
    let url = url.clone();
    // The harness is synchronous; run it on a blocking thread (this also works on a
    // current-thread runtime, where the harness's own block_in_place would panic).
    tokio::task::spawn_blocking(move || match (url, pg) {
        (DatabaseUrl::Postgres(_), Some(conn)) => migrate_postgres(conn),
        (DatabaseUrl::Sqlite(path), _) => migrate_sqlite(&path.to_string_lossy()),
        (DatabaseUrl::Postgres(_), None) => Err(MigrateError("no connection".to_owned())),
    })
    .await
    .map_err(|e| MigrateError(e.to_string()))?
}

fn migrate_postgres(conn: AsyncPgConnection) -> Result<Vec<String>, MigrateError> {
    let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::from(conn);
    conn.batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})"))
        .map_err(|e| MigrateError(e.to_string()))?;
    let result = apply(&mut conn, POSTGRES);
    let unlocked = conn.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})"));
    let applied = result?;
    unlocked.map_err(|e| MigrateError(e.to_string()))?;
    Ok(applied)
}

fn migrate_sqlite(path: &str) -> Result<Vec<String>, MigrateError> {
    let mut conn = <AsyncConnectionWrapper<SqliteConn> as Connection>::establish(path)
        .map_err(|e| MigrateError(e.to_string()))?;
    conn.batch_execute("PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;")
        .map_err(|e| MigrateError(e.to_string()))?;
    apply(&mut conn, SQLITE)
}

fn apply<H, DB>(
    harness: &mut H,
    migrations: EmbeddedMigrations,
) -> Result<Vec<String>, MigrateError>
where
    DB: diesel::backend::Backend,
    H: MigrationHarness<DB>,
{
    let applied: Vec<MigrationVersion<'_>> = harness
        .run_pending_migrations(migrations)
        .map_err(|e| MigrateError(e.to_string()))?;
    Ok(applied.iter().map(ToString::to_string).collect())
}
