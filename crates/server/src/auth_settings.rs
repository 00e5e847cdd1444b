//! How users authenticate: the auth mode (decision D-20), the default organization of
//! logins (D-14) and the identity provider of the sign-in redirect flow (D-16). Read
//! from the environment; secrets come only from there, never from arguments.

use anyhow::{Context, anyhow, bail};
use clap::ValueEnum;
use muster_auth::password::PasswordCost;
use muster_outbound::oauth::{
    GOOGLE_AUTHORIZE_URL, GOOGLE_TOKEN_URL, GOOGLE_USERINFO_URL, OAuthProviderConfig,
};
use uuid::Uuid;

/// What a request without credentials gets (decision D-20).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum AuthModeSetting {
    /// Every request without credentials acts as the synthetic owner. For local
    /// experiments only: the service is open.
    None,
    /// `POST /auth/login {password}` with the deployment's password signs in the owner.
    Local,
    /// Agent signatures, user logins and API keys.
    #[default]
    Full,
}

/// The deployment's single password of auth mode `local`.
#[derive(Clone)]
pub enum LocalPassword {
    /// `MUSTER_LOCAL_PASSWORD`, hashed at start.
    Plain(String),
    /// `MUSTER_LOCAL_PASSWORD_HASH`, an argon2 PHC string.
    Hash(String),
}

impl std::fmt::Debug for LocalPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LocalPassword(***)")
    }
}

/// The identity provider and where the browser lands afterwards.
#[derive(Debug, Clone)]
pub struct OAuthSetting {
    /// Provider URLs and client credentials.
    pub provider: OAuthProviderConfig,
    /// `{frontend}/auth/callback` receives the tokens.
    pub frontend_url: String,
    /// Sign-ins this instance starts a second at most (bursts of five seconds' worth);
    /// `None`, the default, for no limit (decision D-10a: no rate limit by default
    /// but the login throttle).
    pub starts_per_second: Option<u32>,
}

/// Everything about user authentication the server needs at start.
#[derive(Debug, Clone, Default)]
pub struct AuthSettings {
    /// The auth mode.
    pub mode: AuthModeSetting,
    /// Required in mode `local`.
    pub local_password: Option<LocalPassword>,
    /// Logins without `orgId` go here instead of the first bootstrapped organization.
    pub default_org: Option<Uuid>,
    /// The sign-in redirect flow; off when `None`.
    pub oauth: Option<OAuthSetting>,
    /// Threads hashing passwords; `None`: one per core but one.
    pub password_hashers: Option<usize>,
    /// What a new password hash costs (default: the service's, the floor).
    pub password_cost: PasswordCost,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl AuthSettings {
    /// Reads the settings: the mode from the command line (or `MUSTER_AUTH_MODE`), the
    /// rest from `MUSTER_*` variables. Fails with one clear sentence on a bad value.
    pub fn from_env(mode: AuthModeSetting) -> anyhow::Result<Self> {
        let local_password = match (
            env("MUSTER_LOCAL_PASSWORD"),
            env("MUSTER_LOCAL_PASSWORD_HASH"),
        ) {
            (Some(_), Some(_)) => {
                bail!("set MUSTER_LOCAL_PASSWORD or MUSTER_LOCAL_PASSWORD_HASH, not both")
            }
            (Some(plain), None) => Some(LocalPassword::Plain(plain)),
            (None, Some(hash)) if hash.starts_with("$argon2") => Some(LocalPassword::Hash(hash)),
            (None, Some(_)) => bail!("MUSTER_LOCAL_PASSWORD_HASH must be an argon2 PHC string"),
            (None, None) => None,
        };
        if mode == AuthModeSetting::Local && local_password.is_none() {
            bail!("auth mode local needs MUSTER_LOCAL_PASSWORD or MUSTER_LOCAL_PASSWORD_HASH");
        }
        let default_org = env("MUSTER_DEFAULT_ORG_ID")
            .map(|v| Uuid::parse_str(v.trim()))
            .transpose()
            .map_err(|_| anyhow!("MUSTER_DEFAULT_ORG_ID must be a UUID"))?;
        Ok(Self {
            mode,
            local_password,
            default_org,
            oauth: oauth_from_env()?,
            password_hashers: None,
            password_cost: password_cost_from_env()?,
        })
    }
}

/// The password hashing cost: `MUSTER_PASSWORD_HASH_MEMORY_KIB` (default 19456) and
/// `MUSTER_PASSWORD_HASH_PASSES` (default 2). Below the service's own cost, the floor,
/// only when `MUSTER_PASSWORD_HASH_BELOW_FLOOR=true` says so (test runs; never a
/// deployment whose password hashes could leak).
pub fn password_cost_from_env() -> anyhow::Result<PasswordCost> {
    password_cost_from(env)
}

fn password_cost_from(var: impl Fn(&str) -> Option<String>) -> anyhow::Result<PasswordCost> {
    let number = |name: &str, default: u32| -> anyhow::Result<u32> {
        var(name).map_or(Ok(default), |value| {
            value
                .trim()
                .parse()
                .map_err(|_| anyhow!("{name} must be a whole number, not {value:?}"))
        })
    };
    let memory = number(
        "MUSTER_PASSWORD_HASH_MEMORY_KIB",
        PasswordCost::DEFAULT.memory_kib(),
    )?;
    let passes = number(
        "MUSTER_PASSWORD_HASH_PASSES",
        PasswordCost::DEFAULT.passes(),
    )?;
    let cost = PasswordCost::new(memory, passes).map_err(|e| {
        anyhow!("MUSTER_PASSWORD_HASH_MEMORY_KIB / MUSTER_PASSWORD_HASH_PASSES: {e}")
    })?;
    let allowed = match var("MUSTER_PASSWORD_HASH_BELOW_FLOOR")
        .as_deref()
        .map(str::trim)
    {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            bail!("MUSTER_PASSWORD_HASH_BELOW_FLOOR must be true or false, not {other:?}")
        }
    };
    if cost.is_below_floor() && !allowed {
        bail!(
            "a password hash of {memory} KiB and {passes} passes is below the floor of {} KiB \
             and {} passes: set MUSTER_PASSWORD_HASH_BELOW_FLOOR=true to accept weaker \
             password hashes (test runs only)",
            PasswordCost::FLOOR.memory_kib(),
            PasswordCost::FLOOR.passes()
        );
    }
    Ok(cost)
}

/// The provider settings, when `MUSTER_OAUTH_CLIENT_ID` is set.
fn oauth_from_env() -> anyhow::Result<Option<OAuthSetting>> {
    let Some(client_id) = env("MUSTER_OAUTH_CLIENT_ID") else {
        return Ok(None);
    };
    let required = |name: &str| {
        env(name).with_context(|| format!("{name} is required when MUSTER_OAUTH_CLIENT_ID is set"))
    };
    let or_default = |name: &str, default: &str| env(name).unwrap_or_else(|| default.to_owned());
    Ok(Some(OAuthSetting {
        provider: OAuthProviderConfig {
            authorize_url: or_default("MUSTER_OAUTH_AUTHORIZE_URL", GOOGLE_AUTHORIZE_URL),
            token_url: or_default("MUSTER_OAUTH_TOKEN_URL", GOOGLE_TOKEN_URL),
            userinfo_url: or_default("MUSTER_OAUTH_USERINFO_URL", GOOGLE_USERINFO_URL),
            client_id,
            client_secret: required("MUSTER_OAUTH_CLIENT_SECRET")?,
            redirect_url: required("MUSTER_OAUTH_REDIRECT_URL")?,
            scopes: or_default("MUSTER_OAUTH_SCOPES", "openid email profile"),
        },
        frontend_url: required("MUSTER_FRONTEND_URL")?,
        starts_per_second: env("MUSTER_OAUTH_STARTS_PER_SECOND")
            .map(|value| {
                value
                    .trim()
                    .parse()
                    .ok()
                    .filter(|n| (1..=100_000).contains(n))
                    .with_context(|| {
                        format!(
                            "MUSTER_OAUTH_STARTS_PER_SECOND must be a whole number from 1 to 100000, not {value:?}"
                        )
                    })
            })
            .transpose()?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(vars: &[(&str, &str)]) -> anyhow::Result<PasswordCost> {
        password_cost_from(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn the_service_cost_unless_told() {
        assert_eq!(cost(&[]).unwrap(), PasswordCost::DEFAULT);
        let dearer = cost(&[
            ("MUSTER_PASSWORD_HASH_MEMORY_KIB", "65536"),
            ("MUSTER_PASSWORD_HASH_PASSES", " 3 "),
        ])
        .unwrap();
        assert_eq!((dearer.memory_kib(), dearer.passes()), (65_536, 3));
    }

    #[test]
    fn below_the_floor_only_when_said_so() {
        let cheap = [
            ("MUSTER_PASSWORD_HASH_MEMORY_KIB", "8"),
            ("MUSTER_PASSWORD_HASH_PASSES", "1"),
        ];
        let refused = cost(&cheap).unwrap_err().to_string();
        assert!(
            refused.contains("below the floor of 19456 KiB and 2 passes"),
            "{refused}"
        );
        assert!(
            refused.contains("MUSTER_PASSWORD_HASH_BELOW_FLOOR=true"),
            "{refused}"
        );
        let one_pass = cost(&[("MUSTER_PASSWORD_HASH_PASSES", "1")]);
        assert!(one_pass.is_err());
        let said = [
            cheap[0],
            cheap[1],
            ("MUSTER_PASSWORD_HASH_BELOW_FLOOR", "true"),
        ];
        assert_eq!(cost(&said).unwrap(), PasswordCost::MINIMUM);
        let not_said = [
            cheap[0],
            cheap[1],
            ("MUSTER_PASSWORD_HASH_BELOW_FLOOR", "false"),
        ];
        assert!(cost(&not_said).is_err());
    }

    #[test]
    fn bad_values_are_named() {
        let words = cost(&[("MUSTER_PASSWORD_HASH_MEMORY_KIB", "lots")]).unwrap_err();
        assert!(
            words
                .to_string()
                .contains("MUSTER_PASSWORD_HASH_MEMORY_KIB must be a whole number")
        );
        let negative = cost(&[("MUSTER_PASSWORD_HASH_PASSES", "-1")]).unwrap_err();
        assert!(
            negative
                .to_string()
                .contains("MUSTER_PASSWORD_HASH_PASSES must be a whole number")
        );
        let tiny = cost(&[
            ("MUSTER_PASSWORD_HASH_MEMORY_KIB", "4"),
            ("MUSTER_PASSWORD_HASH_BELOW_FLOOR", "true"),
        ])
        .unwrap_err();
        assert!(tiny.to_string().contains("memory must be from 8"), "{tiny}");
        let yes = cost(&[("MUSTER_PASSWORD_HASH_BELOW_FLOOR", "yes")]).unwrap_err();
        assert!(yes.to_string().contains("must be true or false"), "{yes}");
    }
}
