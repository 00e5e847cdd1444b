//! One `muster serve` per SQLite file. SQLite itself would let a second process in, but
//! this service's SQLite design assumes it is alone: its writes queue for the one writer
//! connection of its own process (a second process would make them poll the file lock
//! instead), and its background jobs run in that process only. A second `serve` on the
//! same file is refused with a clear message; `migrate` and `bootstrap` may still run
//! beside a server. Several instances need PostgreSQL.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use muster_persistence::DatabaseUrl;

/// Held for as long as the server runs; the operating system lets go of the lock when
/// the process ends, however it ends (no stale lock after `kill -9`).
#[derive(Debug)]
pub struct ServeLock {
    _file: File,
}

/// The lock file beside the SQLite file `path`.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".serve-lock");
    path.with_file_name(name)
}

/// Takes the serve lock of the SQLite database at `url`; `None` for PostgreSQL.
pub fn lock(url: &DatabaseUrl) -> anyhow::Result<Option<ServeLock>> {
    let DatabaseUrl::Sqlite(path) = url else {
        return Ok(None);
    };
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create the database folder {}", folder.display()))?;
    }
    let lock_path = lock_path(path);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("cannot open the lock file {}", lock_path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(ServeLock { _file: file })),
        Err(TryLockError::WouldBlock) => bail!(
            "another `muster serve` is already running on {}: SQLite serves one instance \
             at a time (stop it first, or use PostgreSQL to run several)",
            path.display()
        ),
        Err(TryLockError::Error(err)) => {
            Err(err).with_context(|| format!("cannot lock {}", lock_path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_file_sits_beside_the_database() {
        assert_eq!(
            lock_path(Path::new("/var/lib/muster/muster.db")),
            PathBuf::from("/var/lib/muster/muster.db.serve-lock")
        );
    }

    #[test]
    fn a_second_lock_on_the_same_file_is_refused_until_the_first_goes() {
        let dir = std::env::temp_dir().join(format!("muster-lock-{}", uuid::Uuid::now_v7()));
        let url = DatabaseUrl::parse(&format!("sqlite://{}/db/m.db", dir.display())).unwrap();
        let first = lock(&url).unwrap();
        assert!(first.is_some());
        let second = lock(&url).unwrap_err().to_string();
        assert!(
            second.contains("another `muster serve` is already running"),
            "{second}"
        );
        drop(first);
        assert!(lock(&url).unwrap().is_some(), "free again");
        let _ = std::fs::remove_dir_all(dir);
    }
}
