//! A fresh database per engine run, always removed afterwards (on `Drop`, so also when
//! the run fails or is interrupted).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use muster_persistence::{Database, DatabaseUrl, PoolOptions};

/// Where the PostgreSQL tests' server is, unless `MUSTER_TEST_DATABASE_URL` says.
const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A database engine Muster supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Embedded, one file.
    Sqlite,
    /// Server.
    Postgres,
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Sqlite => "SQLite",
            Self::Postgres => "PostgreSQL",
        })
    }
}

/// A scratch folder (server log, SQLite file) and, for PostgreSQL, a scratch database.
#[derive(Debug)]
pub struct BenchDatabase {
    /// `MUSTER_DATABASE_URL` for the server.
    pub url: String,
    /// Scratch folder, removed on drop.
    work_dir: PathBuf,
    postgres: Option<PostgresScratch>,
}

/// The database to drop: its name, and the URL of a database to connect to for that.
#[derive(Debug)]
struct PostgresScratch {
    admin_url: String,
    name: String,
}

impl BenchDatabase {
    /// Creates an empty database for `engine`.
    pub fn create(engine: Engine) -> anyhow::Result<Self> {
        let id = uuid::Uuid::now_v7().simple().to_string();
        let work_dir = std::env::temp_dir().join(format!("muster-bench-{id}"));
        std::fs::create_dir_all(&work_dir)
            .with_context(|| format!("cannot create {}", work_dir.display()))?;
        // From here on, `Drop` cleans up whatever was made.
        let mut db = Self {
            url: String::new(),
            work_dir,
            postgres: None,
        };
        match engine {
            Engine::Sqlite => {
                db.url = format!("sqlite://{}", db.work_dir.join("muster.db").display());
            }
            Engine::Postgres => {
                let admin_url = std::env::var("MUSTER_TEST_DATABASE_URL")
                    .unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_owned());
                let name = format!("muster_bench_{id}");
                db.url = with_database(&admin_url, &name)?;
                psql(&admin_url, &format!("CREATE DATABASE {name}"))?;
                db.postgres = Some(PostgresScratch { admin_url, name });
            }
        }
        Ok(db)
    }

    /// The scratch folder.
    pub fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    /// How many tasks the database holds, in every organization.
    pub async fn task_count(&self) -> anyhow::Result<u64> {
        let url = DatabaseUrl::parse(&self.url).context("bench database URL")?;
        let db = Database::connect(&url, PoolOptions::default())
            .await
            .context("opening the bench database")?;
        let census = db.census().await.context("counting tasks")?;
        let total: i64 = census.tasks.iter().map(|row| row.count).sum();
        Ok(u64::try_from(total).unwrap_or(0))
    }
}

impl Drop for BenchDatabase {
    fn drop(&mut self) {
        if let Some(pg) = self.postgres.take() {
            // FORCE ends sessions a killed server may have left behind.
            let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", pg.name);
            if let Err(err) = psql(&pg.admin_url, &sql) {
                eprintln!(
                    "xtask: could not drop the bench database {}: {err:#}",
                    pg.name
                );
            }
        }
        if let Err(err) = std::fs::remove_dir_all(&self.work_dir) {
            eprintln!("xtask: could not remove {}: {err}", self.work_dir.display());
        }
    }
}

/// Runs one SQL statement with `psql`.
fn psql(url: &str, sql: &str) -> anyhow::Result<()> {
    let output = Command::new("psql")
        .args([url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .context("cannot run psql (is the PostgreSQL client installed?)")?;
    if !output.status.success() {
        bail!(
            "`psql -c {sql:?}` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// `url` with its database name replaced by `name`, keeping any `?query`.
fn with_database(url: &str, name: &str) -> anyhow::Result<String> {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_start = base.find("://").context("not a URL")? + 3;
    let path_start = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{name}", &base[..path_start]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_the_database_name() {
        let swap = |url| with_database(url, "b").unwrap();
        assert_eq!(
            swap("postgres://postgres@127.0.0.1:5432/test"),
            "postgres://postgres@127.0.0.1:5432/b"
        );
        assert_eq!(
            swap("postgres://u:p@h/test?sslmode=disable"),
            "postgres://u:p@h/b?sslmode=disable"
        );
        assert_eq!(swap("postgresql://h"), "postgresql://h/b");
    }
}
