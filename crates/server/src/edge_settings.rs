//! How the server is reached (decision D-105), from flags or `MUSTER_*` variables: its
//! public URLs, the other names it answers to, and the proxies whose forwarding headers
//! it believes.

use anyhow::Context;
use clap::Args;
use muster_http::Edge;

/// The edge settings of `muster serve`.
#[derive(Debug, Clone, Default, Args)]
pub struct EdgeSettings {
    /// The base URLs clients reach this server at (`https://muster.example.com`),
    /// comma-separated; the first is the one it names itself by (the Agent Card, A2A
    /// callbacks). Their names are answered to on every port. Unset: loopback names only,
    /// and the card names the listening address.
    #[arg(long = "public-url", env = "MUSTER_PUBLIC_URL", value_delimiter = ',')]
    pub public_urls: Vec<String>,
    /// Other host names or addresses (no port) the server answers to, comma-separated,
    /// besides loopback and the public URLs' names.
    #[arg(long, env = "MUSTER_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,
    /// Proxies (addresses or CIDR networks, comma-separated) whose `X-Forwarded-Proto`,
    /// `Forwarded` and `X-Forwarded-For` are believed. Unset: no one's.
    #[arg(long, env = "MUSTER_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<String>,
}

impl EdgeSettings {
    /// The edge the HTTP layer runs with.
    ///
    /// # Errors
    /// A setting that does not parse, named with its variable.
    pub fn edge(&self) -> anyhow::Result<Edge> {
        Edge::new(&self.public_urls)
            .context("MUSTER_PUBLIC_URL")?
            .allow_hosts(&self.allowed_hosts)
            .context("MUSTER_ALLOWED_HOSTS")?
            .trust_proxies(&self.trusted_proxies)
            .context("MUSTER_TRUSTED_PROXIES")
    }

    /// Warns when the server listens beyond loopback but answers to loopback names only:
    /// the dashboard, `/mcp` and, in auth modes `none` and `local`, every route refuse
    /// other names, and the Agent Card names the listening address.
    pub fn warn_if_unnamed(&self, edge: &Edge, bind: &str) {
        // An address that does not parse is refused when the server binds it, with an
        // error of its own: no warning on top of that.
        let beyond_loopback = bind
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|addr| !addr.ip().is_loopback());
        if edge.loopback_only() && beyond_loopback {
            tracing::warn!(
                bind,
                "no MUSTER_PUBLIC_URL or MUSTER_ALLOWED_HOSTS: the dashboard and /mcp answer \
                 only loopback names and the Agent Card names the listening address; set \
                 MUSTER_PUBLIC_URL to the address clients use"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_setting_is_named() {
        let settings = EdgeSettings {
            trusted_proxies: vec!["10.0.0.0/99".to_owned()],
            ..EdgeSettings::default()
        };
        let err = format!("{:#}", settings.edge().unwrap_err());
        assert!(
            err.starts_with("MUSTER_TRUSTED_PROXIES: `10.0.0.0/99`"),
            "{err}"
        );
        let good = EdgeSettings {
            public_urls: vec!["https://muster.example.com".to_owned()],
            allowed_hosts: vec!["muster.internal".to_owned()],
            trusted_proxies: vec!["10.0.0.0/8".to_owned()],
        };
        let edge = good.edge().unwrap();
        assert_eq!(edge.public_url().unwrap(), "https://muster.example.com");
    }
}
