//! Which server, and who to be: the environment first, then a profile of the config
//! file.
//!
//! ```toml
//! # ~/.config/muster/config.toml (keep it private: chmod 600)
//! default = "local"
//!
//! [profiles.local]
//! server = "http://127.0.0.1:8080"
//! agent_id = "builder-1"
//! agent_secret = "…64 hex…"
//!
//! [profiles.prod]
//! server = "https://muster.example.com"
//! api_key = "msk_…"
//! ```
//!
//! A profile names one of: `agent_id` + `agent_secret`, `api_key`, or `email` +
//! `password` (with `org_id` and `totp_code` when needed). The environment variables
//! `MUSTER_AGENT_ID` + `MUSTER_AGENT_SECRET`, `MUSTER_API_KEY`, or `MUSTER_EMAIL` +
//! `MUSTER_PASSWORD` (+ `MUSTER_ORG_ID`, `MUSTER_TOTP_CODE`) take precedence over any
//! profile; `--server` / `MUSTER_SERVER` over the profile's server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use muster_client::types::auth::LoginBody;
use muster_client::{Client, Error};
use serde::Deserialize;
use uuid::Uuid;

use crate::args::Connection;

/// The server when nothing names one: what `muster serve` listens on.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:8080";

/// The config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The profile used when none is asked for.
    pub default: Option<String>,
    /// Profiles by name.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// One server and one identity on it.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub server: Option<String>,
    pub agent_id: Option<String>,
    pub agent_secret: Option<String>,
    pub api_key: Option<String>,
    pub email: Option<String>,
    pub password: Option<String>,
    pub org_id: Option<Uuid>,
    pub totp_code: Option<String>,
}

// Hand-written so that no secret reaches an error message or a log.
impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profile")
            .field("server", &self.server)
            .field("agent_id", &self.agent_id)
            .field("email", &self.email)
            .finish_non_exhaustive()
    }
}

/// A client for the server and identity `connection` (and the environment) name.
pub async fn connect(connection: &Connection) -> anyhow::Result<Client> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let profile = profile(connection)?;
    let from_env = Profile {
        server: None,
        agent_id: env("MUSTER_AGENT_ID"),
        agent_secret: env("MUSTER_AGENT_SECRET"),
        api_key: env("MUSTER_API_KEY"),
        email: env("MUSTER_EMAIL"),
        password: env("MUSTER_PASSWORD"),
        org_id: env("MUSTER_ORG_ID")
            .map(|v| Uuid::parse_str(&v).context("MUSTER_ORG_ID must be a UUID"))
            .transpose()?,
        totp_code: env("MUSTER_TOTP_CODE"),
    };
    let server = connection
        .server
        .clone()
        .or_else(|| profile.as_ref().and_then(|p| p.server.clone()))
        .unwrap_or_else(|| DEFAULT_SERVER.to_owned());
    let identity = if has_identity(&from_env) {
        from_env
    } else {
        profile.unwrap_or_default()
    };
    client(&server, identity).await
}

fn has_identity(p: &Profile) -> bool {
    p.agent_id.is_some() || p.api_key.is_some() || p.email.is_some()
}

async fn client(server: &str, identity: Profile) -> anyhow::Result<Client> {
    match identity {
        Profile {
            agent_id: Some(agent_id),
            agent_secret,
            ..
        } => {
            let Some(secret) = agent_secret else {
                bail!("agent {agent_id} has no secret: set MUSTER_AGENT_SECRET or agent_secret")
            };
            Ok(Client::agent(server, agent_id, secret)?)
        }
        Profile {
            api_key: Some(key), ..
        } => Ok(Client::api_key(server, key)?),
        Profile {
            email: Some(email),
            password,
            org_id,
            totp_code,
            ..
        } => {
            let Some(password) = password else {
                bail!("user {email} has no password: set MUSTER_PASSWORD or password")
            };
            let body = LoginBody {
                email: Some(email),
                password,
                totp_code,
                org_id,
            };
            match Client::login(server, &body).await {
                Err(Error::TwoFactorRequired) => {
                    bail!("this account has a second factor: set MUSTER_TOTP_CODE or totp_code")
                }
                other => Ok(other.context("could not sign in")?),
            }
        }
        Profile { .. } => bail!(
            "no credentials: set MUSTER_AGENT_ID and MUSTER_AGENT_SECRET, MUSTER_API_KEY, or \
             MUSTER_EMAIL and MUSTER_PASSWORD, or name a profile of the config file"
        ),
    }
}

/// The profile `connection` asks for, if a config file exists (it must, and must hold
/// the profile, when one is named).
fn profile(connection: &Connection) -> anyhow::Result<Option<Profile>> {
    let path = match &connection.config {
        Some(path) => Some(path.clone()),
        None => default_path(),
    };
    let named = connection.profile.clone();
    let Some(path) = path.filter(|p| connection.config.is_some() || p.exists()) else {
        if let Some(name) = named {
            bail!("profile {name}: no config file (set --config or MUSTER_CONFIG)");
        }
        return Ok(None);
    };
    let mut file = read(&path)?;
    let name = named
        .clone()
        .or_else(|| file.default.clone())
        .unwrap_or_else(|| "default".to_owned());
    match file.profiles.remove(&name) {
        Some(profile) => Ok(Some(profile)),
        None if named.is_some() || file.default.is_some() => {
            bail!("{} has no profile {name}", path.display())
        }
        None => Ok(None),
    }
}

fn read(path: &Path) -> anyhow::Result<ConfigFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    // One line naming the place, without quoting the file: its lines hold secrets.
    toml::from_str(&text).map_err(|err| {
        let line = err
            .span()
            .and_then(|span| text.get(..span.start))
            .map_or(1, |before| before.matches('\n').count() + 1);
        anyhow::anyhow!(
            "{} is not a valid config file: line {line}: {}",
            path.display(),
            err.message().trim()
        )
    })
}

fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("muster").join("config.toml"))
}
