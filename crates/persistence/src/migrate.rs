//! Embedded migrations for both engines, run at start-up and by `muster migrate`.

use diesel::Connection;
use diesel::connection::SimpleConnection;
use diesel::migration::MigrationVersion;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::db::SqliteConn;
use crate::url::DatabaseUrl;

const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");
const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// An arbitrary, fixed key: instances starting together take turns migrating.
const MIGRATION_LOCK_KEY: i64 = 0x6d75_7374_6572; // "muster"

/// Migrating failed.
#[derive(Debug, thiserror::Error)]
#[error("database migration failed: {0}")]
pub struct MigrateError(String);

/// Applies every pending migration; returns the versions applied (empty when up to date).
/// On PostgreSQL an advisory lock serializes concurrent callers.
pub async fn run_migrations(url: &DatabaseUrl) -> Result<Vec<String>, MigrateError> {
    let url = url.clone();
    // The harness is synchronous; run it on a blocking thread (this also works on a
    // current-thread runtime, where the harness's own block_in_place would panic).
    tokio::task::spawn_blocking(move || match url {
        DatabaseUrl::Postgres(raw) => migrate_postgres(&raw),
        DatabaseUrl::Sqlite(path) => migrate_sqlite(&path.to_string_lossy()),
    })
    .await
    .map_err(|e| MigrateError(e.to_string()))?
}

fn migrate_postgres(url: &str) -> Result<Vec<String>, MigrateError> {
    let mut conn = <AsyncConnectionWrapper<AsyncPgConnection> as Connection>::establish(url)
        .map_err(|e| MigrateError(e.to_string()))?;
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
