//! The server key (decision D-12): from `MUSTER_SECRET_KEY`, or, with SQLite only, from a
//! `secret.key` file beside the database, generated on first start.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use muster_auth::keys::ServerKey;
use muster_persistence::DatabaseUrl;

/// Loads the server key for `url`. `configured` is `MUSTER_SECRET_KEY`. `has_data` says
/// whether the database already holds secrets sealed with some key: then a missing key
/// file is an error, never a reason to make a new key that cannot open them.
pub fn load_server_key(
    configured: Option<&str>,
    url: &DatabaseUrl,
    has_data: bool,
) -> anyhow::Result<ServerKey> {
    if let Some(text) = configured {
        return ServerKey::parse(text).map_err(|e| anyhow::anyhow!("{e}"));
    }
    match url {
        DatabaseUrl::Postgres(_) => bail!(
            "MUSTER_SECRET_KEY is required with PostgreSQL (every instance must share it); \
             generate one with `openssl rand -hex 32`"
        ),
        DatabaseUrl::Sqlite(db_file) => key_file_beside(db_file, has_data),
    }
}

fn key_file_beside(db_file: &Path, has_data: bool) -> anyhow::Result<ServerKey> {
    let folder = db_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(folder)
        .with_context(|| format!("cannot create the folder {}", folder.display()))?;
    let path: PathBuf = folder.join("secret.key");
    if path.exists() {
        let text = fs::read_to_string(&path)
            .with_context(|| format!("cannot read the server key {}", path.display()))?;
        return ServerKey::parse(&text).map_err(|e| {
            anyhow::anyhow!("the server key file {} is invalid: {e}", path.display())
        });
    }
    if has_data {
        bail!(
            "the server key file {} is missing, but the database already holds secrets \
             sealed with a key: restore the file or set MUSTER_SECRET_KEY",
            path.display()
        );
    }
    let key = ServerKey::generate().map_err(|e| anyhow::anyhow!("{e}"))?;
    write_private(&path, &key.to_hex())
        .with_context(|| format!("cannot write the server key {}", path.display()))?;
    tracing::info!(path = %path.display(), "generated a new server key");
    Ok(key)
}

/// Creates `path` readable by the owner only (0600), failing if it already exists.
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(contents.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_key_is_generated_once_and_private() {
        let folder = std::env::temp_dir().join(format!("muster-key-{}", uuid::Uuid::now_v7()));
        let url = DatabaseUrl::Sqlite(folder.join("m.db"));
        let first = load_server_key(None, &url, false).unwrap();
        let second = load_server_key(None, &url, true).unwrap();
        assert_eq!(first.to_hex(), second.to_hex());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(folder.join("secret.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn a_lost_key_file_is_not_silently_replaced() {
        let folder = std::env::temp_dir().join(format!("muster-key-{}", uuid::Uuid::now_v7()));
        let url = DatabaseUrl::Sqlite(folder.join("m.db"));
        let err = load_server_key(None, &url, true).unwrap_err();
        assert!(err.to_string().contains("is missing"), "{err}");
        assert!(!folder.join("secret.key").exists());
        let _ = fs::remove_dir_all(folder);
    }

    #[test]
    fn postgres_requires_a_configured_key() {
        let url = DatabaseUrl::Postgres("postgres://x@y/z".into());
        let err = load_server_key(None, &url, false).unwrap_err();
        assert!(err.to_string().contains("MUSTER_SECRET_KEY is required"));
        let key = "00".repeat(32);
        assert!(load_server_key(Some(&key), &url, true).is_ok());
        assert!(load_server_key(Some("short"), &url, false).is_err());
    }
}
