//! The edge: how this server is reached, and what a request may claim about that.
//!
//! A browser sends whatever `Host` its page's name resolved for: a page on a rebinding
//! name (`evil.example`, resolving to 127.0.0.1) reaches a local server under a foreign
//! `Host`. So where a request needs no credential (auth modes `none` and `local`), on
//! `/mcp` and on the dashboard, only names this server answers to are served (decision
//! D-105), and a page of another origin may not call the credential-less modes at all.
//! The public URL is configured, never taken from a request; forwarding headers count
//! only from the proxies the operator names.

mod names;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use actix_web::HttpRequest;
use actix_web::http::header::{FORWARDED, HOST, HeaderName};

pub(crate) use names::SiteUrl;
use names::{Authority, Network};

/// Names every server answers to, whatever its port.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Where the server is reached: its public URLs (the first is the canonical one), the
/// other names it answers to, and the proxies whose `X-Forwarded-*` headers are believed.
/// The default answers to loopback names only and believes no proxy.
#[derive(Debug, Clone, Default)]
pub struct Edge {
    public: Vec<SiteUrl>,
    hosts: Vec<String>,
    proxies: Vec<Network>,
}

/// A setting of the edge that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` {reason}")]
pub struct EdgeError {
    value: String,
    reason: &'static str,
}

fn entries<S: AsRef<str>>(values: &[S]) -> impl Iterator<Item = &str> {
    values
        .iter()
        .map(|v| v.as_ref().trim())
        .filter(|v| !v.is_empty())
}

impl Edge {
    /// An edge whose public URLs are `urls` (`http(s)://host[:port]`); the first is the
    /// canonical one, and each one's name is answered to.
    ///
    /// # Errors
    /// A URL with another scheme, a path, a user or a query.
    pub fn new<S: AsRef<str>>(urls: &[S]) -> Result<Self, EdgeError> {
        let public = entries(urls)
            .map(|url| {
                SiteUrl::parse_public(url).map_err(|reason| EdgeError {
                    value: url.to_owned(),
                    reason,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            public,
            ..Self::default()
        })
    }

    /// Also answers to `hosts` (names or addresses, without a port: any port).
    ///
    /// # Errors
    /// An entry that is not a plain name or address.
    pub fn allow_hosts<S: AsRef<str>>(mut self, hosts: &[S]) -> Result<Self, EdgeError> {
        for host in entries(hosts) {
            self.hosts
                .push(Authority::parse_host(host).ok_or_else(|| EdgeError {
                    value: host.to_owned(),
                    reason: "is not a host name or address (give it without a scheme or port)",
                })?);
        }
        Ok(self)
    }

    /// Believes the forwarding headers of requests from `proxies` (addresses or CIDR
    /// networks).
    ///
    /// # Errors
    /// An entry that is not an address or network.
    pub fn trust_proxies<S: AsRef<str>>(mut self, proxies: &[S]) -> Result<Self, EdgeError> {
        for proxy in entries(proxies) {
            self.proxies
                .push(Network::parse(proxy).ok_or_else(|| EdgeError {
                    value: proxy.to_owned(),
                    reason: "is not an IP address or CIDR network (such as 10.0.0.0/8)",
                })?);
        }
        Ok(self)
    }

    /// The canonical public URL, when one is configured.
    pub fn public_url(&self) -> Option<String> {
        self.public.first().map(SiteUrl::base)
    }

    /// Whether only loopback names reach the protected routes (no public URL, no other
    /// name): what a server bound elsewhere should be told at start.
    pub fn loopback_only(&self) -> bool {
        self.public.is_empty() && self.hosts.is_empty()
    }

    /// The base URL this server names itself by (the Agent Card, callbacks): the
    /// canonical public URL, else the address it listens on (loopback when it listens on
    /// every address). Never a request's header: a cached answer must not carry a name
    /// one client made up.
    pub fn base(&self, req: &HttpRequest) -> String {
        if let Some(url) = self.public_url() {
            return url;
        }
        let config = req.app_config();
        let local = config.local_addr();
        let ip = match local.ip() {
            IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let scheme = if config.secure() { "https" } else { "http" };
        format!("{scheme}://{}:{}", Authority::of_ip(ip), local.port())
    }

    /// Whether the browser reached this server over https (for cookies' `Secure`): the
    /// connection is TLS; or a trusted proxy says so in `X-Forwarded-Proto` (or
    /// `Forwarded: proto=`); or, when no trusted proxy says, the request's `Host` names
    /// an https public URL. A client's own forwarding headers count for nothing.
    pub fn https(&self, req: &HttpRequest) -> bool {
        if req.app_config().secure() {
            return true;
        }
        if let Some(proto) = self.forwarded_proto(req) {
            return proto.eq_ignore_ascii_case("https");
        }
        host_of(req).is_some_and(|host| {
            self.public
                .iter()
                .any(|site| site.https && site.names(&host))
        })
    }

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the
    /// nearest address in `X-Forwarded-For` that is not a trusted proxy (read from the
    /// right: entries left of it may be anyone's invention).
    pub fn client_ip(&self, req: &HttpRequest) -> Option<IpAddr> {
        let mut ip = req.peer_addr()?.ip().to_canonical();
        if !self.trusts(ip) {
            return Some(ip);
        }
        let hops = header_values(req, &HeaderName::from_static("x-forwarded-for"));
        for hop in hops.iter().rev() {
            let Some(hop) = parse_hop(hop) else { break };
            ip = hop;
            if !self.trusts(ip) {
                break;
            }
        }
        Some(ip)
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.proxies.iter().any(|net| net.contains(ip))
    }

    /// The scheme a trusted peer forwarded: the last (nearest proxy's) value.
    fn forwarded_proto(&self, req: &HttpRequest) -> Option<String> {
        let peer = req.peer_addr()?.ip();
        if !self.trusts(peer) {
            return None;
        }
        let proto = HeaderName::from_static("x-forwarded-proto");
        if let Some(last) = header_values(req, &proto).pop() {
            return Some(last);
        }
        let last = header_values(req, &FORWARDED).pop()?;
        last.split(';').find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            key.trim()
                .eq_ignore_ascii_case("proto")
                .then(|| value.trim().trim_matches('"').to_owned())
        })
    }

    /// Whether `host` is a name this server answers to: loopback, a public URL's name,
    /// an allowed host, or the address it listens on (an address cannot be rebound).
    pub(crate) fn allows_host(&self, host: &Authority, local: SocketAddr) -> bool {
        LOOPBACK.contains(&host.host.as_str())
            || self.hosts.contains(&host.host)
            || self
                .public
                .iter()
                .any(|site| site.authority.host == host.host)
            || (!local.ip().is_unspecified() && Authority::of_ip(local.ip()) == host.host)
    }

    /// Whether a page of `origin` may call: it is the origin the request was sent to
    /// (scheme aside, as behind a TLS-terminating proxy), or a public URL's.
    pub(crate) fn allows_origin(&self, origin: &SiteUrl, host: &Authority) -> bool {
        origin.names(host) || self.public.iter().any(|site| site.same_as(origin))
    }
}

/// The request's `Host` (or its URI's authority), when it is a plain `host[:port]`.
pub(crate) fn host_of(req: &HttpRequest) -> Option<Authority> {
    match req.headers().get(HOST) {
        Some(host) => Authority::parse(host.to_str().ok()?),
        None => Authority::parse(req.uri().authority()?.as_str()),
    }
}

/// A header's comma-separated values over all its lines, trimmed, empty ones left out.
fn header_values(req: &HttpRequest, name: &HeaderName) -> Vec<String> {
    req.headers()
        .get_all(name)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect()
}

fn parse_hop(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .or_else(|_| hop.parse::<SocketAddr>().map(|s| s.ip()))
        .ok()
        .map(|ip| ip.to_canonical())
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn edge() -> Edge {
        Edge::new(&["https://muster.example.com", "http://10.0.0.5:8080/"])
            .unwrap()
            .allow_hosts(&["Muster.Internal", "::1", ""])
            .unwrap()
            .trust_proxies(&["10.0.0.0/8"])
            .unwrap()
    }

    fn from(peer: &str) -> TestRequest {
        TestRequest::default().peer_addr(peer.parse().unwrap())
    }

    #[test]
    fn settings_that_do_not_parse_say_which() {
        let err = Edge::new(&["ftp://x"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`ftp://x` must start with http:// or https://"
        );
        assert!(Edge::default().allow_hosts(&["h:80"]).is_err());
        assert!(Edge::default().trust_proxies(&["10.0.0.0/40"]).is_err());
        assert_eq!(edge().public_url().unwrap(), "https://muster.example.com");
        assert!(Edge::default().loopback_only());
        assert!(!edge().loopback_only());
    }

    #[test]
    fn hosts_are_loopback_public_or_allowed_names() {
        let edge = edge();
        let local: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let allows = |host: &str| edge.allows_host(&Authority::parse(host).unwrap(), local);
        for host in [
            "localhost:1",
            "127.0.0.1",
            "[::1]:8080",
            "muster.example.com",
            "muster.internal:9000",
            "10.0.0.5:8080",
        ] {
            assert!(allows(host), "{host}");
        }
        for host in [
            "evil.example",
            "0.0.0.0:8080",
            "127.0.0.2",
            "muster.example.com.evil",
        ] {
            assert!(!allows(host), "{host}");
        }
        // The address a server listens on is its own.
        let bound: SocketAddr = "192.168.1.9:8080".parse().unwrap();
        assert!(Edge::default().allows_host(&Authority::parse("192.168.1.9").unwrap(), bound));
    }

    #[test]
    fn origins_are_the_requests_own_or_a_public_one() {
        let edge = edge();
        let host = Authority::parse("127.0.0.1:8080").unwrap();
        let allows =
            |origin: &str| edge.allows_origin(&SiteUrl::parse_origin(origin).unwrap(), &host);
        assert!(allows("http://127.0.0.1:8080"));
        assert!(allows("https://127.0.0.1:8080"));
        assert!(allows("https://muster.example.com"));
        assert!(!allows("http://127.0.0.1:3000"));
        assert!(!allows("http://localhost:8080"));
        assert!(!allows("http://muster.example.com"));
        let bare = Authority::parse("muster.example.com").unwrap();
        assert!(edge.allows_origin(
            &SiteUrl::parse_origin("https://muster.example.com").unwrap(),
            &bare
        ));
    }

    #[test]
    fn forwarding_headers_count_only_from_trusted_proxies() {
        let edge = edge();
        let stranger = from("203.0.113.7:5000")
            .insert_header(("x-forwarded-proto", "https"))
            .insert_header(("x-forwarded-for", "198.51.100.1"))
            .to_http_request();
        assert!(!edge.https(&stranger));
        assert_eq!(
            edge.client_ip(&stranger),
            Some("203.0.113.7".parse().unwrap())
        );
        let proxied = from("10.1.1.1:5000")
            .insert_header(("x-forwarded-proto", "http, https"))
            .insert_header(("x-forwarded-for", "1.2.3.4, 198.51.100.1, 10.2.2.2"))
            .to_http_request();
        assert!(edge.https(&proxied));
        assert_eq!(
            edge.client_ip(&proxied),
            Some("198.51.100.1".parse().unwrap())
        );
        let forwarded = from("10.1.1.1:5000")
            .insert_header((
                "forwarded",
                "for=1.2.3.4;proto=http, for=5.6.7.8;Proto=\"https\"",
            ))
            .to_http_request();
        assert!(edge.https(&forwarded));
        let said_http = from("10.1.1.1:5000")
            .insert_header(("x-forwarded-proto", "http"))
            .insert_header(("host", "muster.example.com"))
            .to_http_request();
        assert!(!edge.https(&said_http));
        // No proxy said: an https public URL's name makes it https.
        let named = from("203.0.113.7:5000")
            .insert_header(("host", "muster.example.com"))
            .to_http_request();
        assert!(edge.https(&named));
        let plain = from("203.0.113.7:5000")
            .insert_header(("host", "10.0.0.5:8080"))
            .to_http_request();
        assert!(!edge.https(&plain));
    }

    #[test]
    fn the_base_is_the_public_url_or_the_listening_address() {
        let req = TestRequest::default()
            .insert_header(("host", "evil.example"))
            .to_http_request();
        assert_eq!(edge().base(&req), "https://muster.example.com");
        // TestRequest's server listens on 127.0.0.1:8080.
        assert_eq!(Edge::default().base(&req), "http://127.0.0.1:8080");
    }
}
