//! The SSRF guard of outbound webhooks (decision D-81): which addresses a hook may not
//! reach, the URL check at registration, and the resolution every connection is made
//! through, so that the address connected to is the address checked.
//!
//! [`blocked_range`] is pure and decides for one address; [`parse_target`] checks a URL
//! (scheme, credentials, an IP-literal host); [`resolve_public`] resolves a host name and
//! refuses it when ANY of its addresses is blocked (a name with one public and one
//! private address would otherwise be a coin toss away from the private one).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use async_trait::async_trait;
use muster_domain::ports::{TargetGuard, TargetRefusal};
use url::{Host, Url};

/// How long the lookup at registration may take before the name counts as unresolvable.
pub const RESOLVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// What an operator allows beyond the defaults (both off by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TargetPolicy {
    /// Private, loopback and other internal addresses may be called
    /// (`MUSTER_WEBHOOK_ALLOW_PRIVATE`).
    pub allow_private: bool,
    /// Plain `http://` URLs may be called (`MUSTER_WEBHOOK_ALLOW_HTTP`).
    pub allow_http: bool,
}

/// A blocked address range, named for logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockedRange {
    /// `0.0.0.0/8`: "this network".
    ThisNetwork,
    /// `10.0.0.0/8`: private.
    Private10,
    /// `100.64.0.0/10`: carrier-grade NAT.
    SharedAddressSpace,
    /// `127.0.0.0/8`: loopback.
    Loopback,
    /// `169.254.0.0/16`: link-local (cloud metadata services live here).
    LinkLocal,
    /// `172.16.0.0/12`: private.
    Private172,
    /// `192.0.0.0/24`: IETF protocol assignments.
    ProtocolAssignments,
    /// `192.168.0.0/16`: private.
    Private192,
    /// `198.18.0.0/15`: benchmarking.
    Benchmarking,
    /// `224.0.0.0/4`: multicast.
    Multicast,
    /// `240.0.0.0/4`: reserved, broadcast included.
    Reserved,
    /// `::`: unspecified.
    Unspecified6,
    /// `::1`: loopback.
    Loopback6,
    /// `::/96` other than `::` and `::1`: the deprecated IPv4-compatible form, never
    /// routed on the internet, and a way to spell an IPv4 address past a filter.
    Ipv4Compatible,
    /// `64:ff9b:1::/48`: local-use NAT64 (RFC 8215), translated inside the network.
    LocalNat64,
    /// `fc00::/7`: unique local.
    UniqueLocal6,
    /// `fe80::/10`: link-local.
    LinkLocal6,
    /// `ff00::/8`: multicast.
    Multicast6,
}

/// The blocked range `ip` falls in, or `None` when it is public. IPv4 addresses inside
/// IPv6 are judged as the IPv4 address they carry: IPv4-mapped (`::ffff:a.b.c.d`),
/// NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::/48`).
///
/// ```
/// use std::net::IpAddr;
/// use muster_outbound::ssrf::{BlockedRange, blocked_range};
/// let ip = |s: &str| s.parse::<IpAddr>().unwrap();
/// assert_eq!(blocked_range(ip("10.1.2.3")), Some(BlockedRange::Private10));
/// assert_eq!(blocked_range(ip("::ffff:127.0.0.1")), Some(BlockedRange::Loopback));
/// assert_eq!(blocked_range(ip("8.8.8.8")), None);
/// ```
pub fn blocked_range(ip: IpAddr) -> Option<BlockedRange> {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4),
        IpAddr::V6(v6) => blocked_v6(v6),
    }
}

fn blocked_v4(ip: Ipv4Addr) -> Option<BlockedRange> {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (0, _, _) => Some(BlockedRange::ThisNetwork),
        (10, _, _) => Some(BlockedRange::Private10),
        (100, 64..=127, _) => Some(BlockedRange::SharedAddressSpace),
        (127, _, _) => Some(BlockedRange::Loopback),
        (169, 254, _) => Some(BlockedRange::LinkLocal),
        (172, 16..=31, _) => Some(BlockedRange::Private172),
        (192, 0, 0) => Some(BlockedRange::ProtocolAssignments),
        (192, 168, _) => Some(BlockedRange::Private192),
        (198, 18..=19, _) => Some(BlockedRange::Benchmarking),
        (224..=239, _, _) => Some(BlockedRange::Multicast),
        (240..=255, _, _) => Some(BlockedRange::Reserved),
        _ => None,
    }
}

fn blocked_v6(ip: Ipv6Addr) -> Option<BlockedRange> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return blocked_v4(v4);
    }
    let embedded = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    match ip.segments() {
        [0, 0, 0, 0, 0, 0, 0, 0] => Some(BlockedRange::Unspecified6),
        [0, 0, 0, 0, 0, 0, 0, 1] => Some(BlockedRange::Loopback6),
        [0, 0, 0, 0, 0, 0, _, _] => Some(BlockedRange::Ipv4Compatible),
        // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address.
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] | [0x2002, high, low, ..] => {
            blocked_v4(embedded(high, low))
        }
        [0x64, 0xff9b, 1, ..] => Some(BlockedRange::LocalNat64),
        [first, ..] if first & 0xfe00 == 0xfc00 => Some(BlockedRange::UniqueLocal6),
        [first, ..] if first & 0xffc0 == 0xfe80 => Some(BlockedRange::LinkLocal6),
        [first, ..] if first & 0xff00 == 0xff00 => Some(BlockedRange::Multicast6),
        _ => None,
    }
}

/// A checked hook URL: its host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    host: Host<String>,
    port: u16,
}

/// Checks `url` as a hook target before any lookup: an absolute `https` URL (or `http`
/// when allowed) with a host and no user name or password; a literal IP address (in any
/// spelling the URL standard reads as one, such as `http://2130706433/`) must be public
/// unless private targets are allowed. Host names are judged by what they resolve to
/// ([`resolve_public`]), `localhost` included.
pub fn parse_target(url: &str, policy: TargetPolicy) -> Result<Target, TargetRefusal> {
    let parsed = Url::parse(url).map_err(|_| TargetRefusal::Invalid)?;
    match parsed.scheme() {
        "https" => {}
        "http" if policy.allow_http => {}
        _ => return Err(TargetRefusal::NotHttps),
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(TargetRefusal::Invalid);
    }
    let host = parsed.host().ok_or(TargetRefusal::Invalid)?.to_owned();
    let port = parsed
        .port_or_known_default()
        .ok_or(TargetRefusal::Invalid)?;
    if !policy.allow_private {
        let refused = match &host {
            Host::Ipv4(v4) => blocked_v4(*v4).is_some(),
            Host::Ipv6(v6) => blocked_v6(*v6).is_some(),
            Host::Domain(_) => false,
        };
        if refused {
            return Err(TargetRefusal::Private);
        }
    }
    Ok(Target { host, port })
}

/// Refuses `addresses` when any of them is blocked (and private targets are not allowed).
pub fn check_addresses(
    addresses: &[SocketAddr],
    policy: TargetPolicy,
) -> Result<(), TargetRefusal> {
    if addresses.is_empty() {
        return Err(TargetRefusal::Unresolvable);
    }
    if !policy.allow_private && addresses.iter().any(|a| blocked_range(a.ip()).is_some()) {
        return Err(TargetRefusal::Private);
    }
    Ok(())
}

/// The addresses `target` resolves to now, all of them checked.
pub async fn resolve_public(
    target: &Target,
    policy: TargetPolicy,
) -> Result<Vec<SocketAddr>, TargetRefusal> {
    let addresses: Vec<SocketAddr> = match &target.host {
        Host::Ipv4(v4) => vec![SocketAddr::new(IpAddr::V4(*v4), target.port)],
        Host::Ipv6(v6) => vec![SocketAddr::new(IpAddr::V6(*v6), target.port)],
        Host::Domain(name) => tokio::time::timeout(
            RESOLVE_TIMEOUT,
            tokio::net::lookup_host((name.as_str(), target.port)),
        )
        .await
        .map_err(|_| TargetRefusal::Unresolvable)?
        .map_err(|_| TargetRefusal::Unresolvable)?
        .collect(),
    };
    check_addresses(&addresses, policy)?;
    Ok(addresses)
}

/// The domain's `TargetGuard` port: [`parse_target`] then [`resolve_public`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ResolvingTargetGuard {
    policy: TargetPolicy,
}

impl ResolvingTargetGuard {
    /// A guard applying `policy`.
    pub fn new(policy: TargetPolicy) -> Self {
        Self { policy }
    }
}

#[async_trait]
impl TargetGuard for ResolvingTargetGuard {
    async fn check(&self, url: &str) -> Result<(), TargetRefusal> {
        let target = parse_target(url, self.policy)?;
        resolve_public(&target, self.policy).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests;
