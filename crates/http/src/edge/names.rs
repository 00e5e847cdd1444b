//! The spellings the edge compares: a `Host` (`host[:port]`), an `Origin` or public URL
//! (`scheme://host[:port]`), and a proxy's address or network (`addr[/prefix]`). Hosts are
//! kept lowercase, IPv6 addresses in brackets, so that equal names compare equal.

use std::net::{IpAddr, Ipv6Addr};

/// A host name or address with an optional port, as a `Host` header names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authority {
    /// Lowercase; an IPv6 address in brackets.
    pub host: String,
    pub port: Option<u16>,
}

impl Authority {
    /// `host[:port]`, `[v6][:port]`; `None` for anything else (a path, a user, a bare
    /// IPv6 address, an empty name).
    pub fn parse(text: &str) -> Option<Self> {
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (inside, after) = rest.split_once(']')?;
            inside.parse::<Ipv6Addr>().ok()?;
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':')?),
            };
            (format!("[{}]", inside.to_ascii_lowercase()), port)
        } else {
            let (host, port) = match text.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text, None),
            };
            if !plain_name(host) {
                return None;
            }
            (host.to_ascii_lowercase(), port)
        };
        let port = match port {
            None => None,
            Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                Some(digits.parse().ok()?)
            }
            Some(_) => return None,
        };
        Some(Self { host, port })
    }

    /// A host name or address without a port (an allowed-host setting); a bare IPv6
    /// address is taken as it is meant.
    pub fn parse_host(text: &str) -> Option<String> {
        if let Ok(v6) = text.parse::<Ipv6Addr>() {
            return Some(format!("[{v6}]"));
        }
        Self::parse(text)
            .filter(|authority| authority.port.is_none())
            .map(|authority| authority.host)
    }

    /// The host as a URL or a `Host` header writes an address.
    pub fn of_ip(ip: IpAddr) -> String {
        match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        }
    }
}

/// Letters, digits, dots, hyphens and underscores (container names have them): a name
/// or an IPv4 address, nothing that could carry a path, a user or another URL.
fn plain_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
}

/// `http://host[:port]` or `https://host[:port]`: an `Origin`, or a public URL without
/// its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SiteUrl {
    pub https: bool,
    pub authority: Authority,
}

impl SiteUrl {
    /// An `Origin` header's value; `None` for `null`, another scheme or anything with a
    /// path.
    pub fn parse_origin(text: &str) -> Option<Self> {
        let (https, rest) = if let Some(rest) = strip_prefix_ignore_case(text, "https://") {
            (true, rest)
        } else {
            (false, strip_prefix_ignore_case(text, "http://")?)
        };
        Some(Self {
            https,
            authority: Authority::parse(rest)?,
        })
    }

    /// A configured public URL: an origin, optionally followed by `/`.
    pub fn parse_public(text: &str) -> Result<Self, &'static str> {
        let text = text.trim();
        let text = text.strip_suffix('/').unwrap_or(text);
        if strip_prefix_ignore_case(text, "https://").is_none()
            && strip_prefix_ignore_case(text, "http://").is_none()
        {
            return Err("must start with http:// or https://");
        }
        Self::parse_origin(text).ok_or(
            "must be scheme://host[:port] and nothing more (no path, user, query or \
             non-ASCII name: give an international name in its xn-- form)",
        )
    }

    /// The scheme's port.
    fn default_port(&self) -> u16 {
        if self.https { 443 } else { 80 }
    }

    /// The port, or the scheme's.
    pub fn port(&self) -> u16 {
        self.authority.port.unwrap_or(self.default_port())
    }

    /// `scheme://host[:port]`, the port left out when it is the scheme's.
    pub fn base(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        match self.authority.port {
            Some(port) if port != self.default_port() => {
                format!("{scheme}://{}:{port}", self.authority.host)
            }
            _ => format!("{scheme}://{}", self.authority.host),
        }
    }

    /// Whether a request for `host` reached this site: the same name, and the same port
    /// once each missing one is the scheme's. The scheme is not compared: behind a
    /// TLS-terminating proxy a page on https sends requests that arrive as http.
    pub fn names(&self, host: &Authority) -> bool {
        self.authority.host == host.host && self.port() == host.port.unwrap_or(self.default_port())
    }

    /// The same origin: scheme, name and port.
    pub fn same_as(&self, other: &Self) -> bool {
        self.https == other.https
            && self.authority.host == other.authority.host
            && self.port() == other.port()
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// A trusted proxy: one address, or a network in CIDR notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    /// `addr` or `addr/prefix`, IPv4 or IPv6.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let (addr, prefix) = match text.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (text, None),
        };
        let addr = addr
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok()?
            .to_canonical();
        let bits = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(prefix) => prefix.parse::<u8>().ok().filter(|p| *p <= bits)?,
        };
        Some(Self { addr, prefix })
    }

    /// Whether `ip` (IPv4-mapped IPv6 counts as IPv4) is in the network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let masked = |bits: u128, width: u32| -> u128 {
            let shift = width - u32::from(self.prefix);
            if shift >= 128 { 0 } else { bits >> shift }
        };
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                masked(u128::from(u32::from(net)), 32) == masked(u128::from(u32::from(ip)), 32)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                masked(u128::from(net), 128) == masked(u128::from(ip), 128)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_plain_names_or_bracketed_addresses_with_a_port() {
        let parsed = |t: &str| Authority::parse(t).map(|a| (a.host, a.port));
        assert_eq!(
            parsed("LocalHost:8080"),
            Some(("localhost".into(), Some(8080)))
        );
        assert_eq!(parsed("127.0.0.1"), Some(("127.0.0.1".into(), None)));
        assert_eq!(parsed("[::1]:99"), Some(("[::1]".into(), Some(99))));
        assert_eq!(parsed("my_app"), Some(("my_app".into(), None)));
        for odd in [
            "",
            "::1",
            "[::1",
            "[nothost]:1",
            "a:",
            "a:b",
            "a:99999",
            "a:1:2",
            "evil.example/phish",
            "user@evil.example",
            "evil.example?x=1",
            "exämple.com",
        ] {
            assert_eq!(Authority::parse(odd), None, "{odd}");
        }
        assert_eq!(Authority::parse_host("::1"), Some("[::1]".into()));
        assert_eq!(
            Authority::parse_host("Muster.Internal"),
            Some("muster.internal".into())
        );
        assert_eq!(Authority::parse_host("muster.internal:80"), None);
    }

    #[test]
    fn origins_and_public_urls_compare_by_scheme_name_and_port() {
        let public = SiteUrl::parse_public("HTTPS://Muster.Example.com/").unwrap();
        assert_eq!(public.base(), "https://muster.example.com");
        assert_eq!(
            SiteUrl::parse_public("http://h:8080").unwrap().base(),
            "http://h:8080"
        );
        assert_eq!(
            SiteUrl::parse_public("https://h:443").unwrap().base(),
            "https://h"
        );
        for bad in [
            "ftp://h",
            "h",
            "https://h/path",
            "https://u@h",
            "https://h?x",
            "",
        ] {
            assert!(SiteUrl::parse_public(bad).is_err(), "{bad}");
        }
        let origin = SiteUrl::parse_origin("https://muster.example.com").unwrap();
        assert!(origin.same_as(&public));
        assert!(
            !SiteUrl::parse_origin("http://muster.example.com")
                .unwrap()
                .same_as(&public)
        );
        assert!(SiteUrl::parse_origin("null").is_none());
        // A request for the site's name, on its port or none.
        assert!(public.names(&Authority::parse("muster.example.com").unwrap()));
        assert!(public.names(&Authority::parse("muster.example.com:443").unwrap()));
        assert!(!public.names(&Authority::parse("muster.example.com:8443").unwrap()));
        assert!(!public.names(&Authority::parse("other.example.com").unwrap()));
    }

    #[test]
    fn networks_hold_their_addresses() {
        let net = Network::parse("10.0.0.0/8").unwrap();
        assert!(net.contains("10.1.2.3".parse().unwrap()));
        assert!(net.contains("::ffff:10.1.2.3".parse().unwrap()));
        assert!(!net.contains("11.0.0.1".parse().unwrap()));
        assert!(!net.contains("::1".parse().unwrap()));
        let one = Network::parse("127.0.0.1").unwrap();
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        let v6 = Network::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("fe80::1".parse().unwrap()));
        let all = Network::parse("0.0.0.0/0").unwrap();
        assert!(all.contains("203.0.113.9".parse().unwrap()));
        for bad in ["", "10.0.0.0/33", "::/129", "example.com", "10.0.0.0/x"] {
            assert_eq!(Network::parse(bad), None, "{bad}");
        }
    }
}
