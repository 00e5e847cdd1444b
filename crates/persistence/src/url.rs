//! Which engine a database URL names.

use std::path::PathBuf;

/// A parsed `MUSTER_DATABASE_URL`. Its `Debug` hides any password.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// `postgres://...` or `postgresql://...`, passed to the driver as given.
    Postgres(String),
    /// `sqlite://PATH` or `sqlite:PATH`: a database file (created with its folder).
    Sqlite(PathBuf),
}

/// The URL names no engine Muster supports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported database URL {shown:?}: expected sqlite://PATH or postgres://USER@HOST/DB")]
pub struct UrlError {
    shown: String,
}

impl DatabaseUrl {
    /// Parses `url`.
    ///
    /// ```
    /// use muster_persistence::DatabaseUrl;
    /// assert!(matches!(DatabaseUrl::parse("sqlite://./data/m.db"), Ok(DatabaseUrl::Sqlite(_))));
    /// assert!(matches!(DatabaseUrl::parse("postgres://postgres@127.0.0.1/test"), Ok(DatabaseUrl::Postgres(_))));
    /// assert!(DatabaseUrl::parse("mysql://x").is_err());
    /// ```
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        let url = url.trim();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Self::Postgres(url.to_owned()));
        }
        let path = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"));
        match path {
            Some(path) if !path.is_empty() && !path.starts_with(':') => {
                Ok(Self::Sqlite(PathBuf::from(path)))
            }
            _ => Err(UrlError { shown: redact(url) }),
        }
    }

    /// The URL without any password, for logs.
    pub fn redacted(&self) -> String {
        match self {
            Self::Postgres(url) => redact(url),
            Self::Sqlite(path) => format!("sqlite://{}", path.display()),
        }
    }
}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Hides the password of `scheme://user:password@host` and of `?password=...`.
fn redact(url: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let base = match base.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((userinfo, host)) if userinfo.contains(':') => {
                let user = userinfo.split(':').next().unwrap_or_default();
                format!("{scheme}://{user}:***@{host}")
            }
            _ => base.to_owned(),
        },
        None => base.to_owned(),
    };
    match query {
        None => base,
        Some(query) => {
            let params: Vec<String> = query
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some((name, _)) if name.eq_ignore_ascii_case("password") => {
                        format!("{name}=***")
                    }
                    _ => param.to_owned(),
                })
                .collect();
            format!("{base}?{}", params.join("&"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        let url = DatabaseUrl::parse("postgres://me:s3cret@db/muster").unwrap();
        assert_eq!(url.redacted(), "postgres://me:***@db/muster");
        let err = DatabaseUrl::parse("mysql://me:s3cret@db/x").unwrap_err();
        assert!(!err.to_string().contains("s3cret"));
        let url =
            DatabaseUrl::parse("postgres://me@db/muster?sslmode=off&password=s3cret").unwrap();
        assert_eq!(
            url.redacted(),
            "postgres://me@db/muster?sslmode=off&password=***"
        );
        assert!(!format!("{url:?}").contains("s3cret"));
    }

    #[test]
    fn sqlite_forms() {
        assert_eq!(
            DatabaseUrl::parse("sqlite:muster.db").unwrap(),
            DatabaseUrl::Sqlite("muster.db".into())
        );
        assert!(DatabaseUrl::parse("sqlite://").is_err());
        assert!(DatabaseUrl::parse("sqlite::memory:").is_err());
    }
}
