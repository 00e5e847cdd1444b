//! What the login throttle counts: failure streaks of one account (or one typed e-mail
//! that names no account) from one client address (decision D-14, hardened by issue 61).
//! The rules are in [`crate::rules::login`].

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use time::OffsetDateTime;

/// One streak of failed password or code checks: how many since the last success, and
/// when the last one was. The lock, if any, follows from both
/// ([`LoginThrottle::retry_after`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoginThrottle {
    /// Failures since the last success (or since the streak was forgotten).
    pub failures: u32,
    /// When the last of them was counted; `None` for an empty streak.
    pub last_failure_at: Option<OffsetDateTime>,
}

/// The stored name of a streak: a hash of the organization, the account (or the typed
/// e-mail) and the client address, so the store holds neither e-mails nor addresses.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThrottleKey(pub [u8; 32]);

impl fmt::Debug for ThrottleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ThrottleKey(..)")
    }
}

/// Where a password or code came from, as the throttle tells clients apart: the peer's
/// IP address, an IPv6 one by its /64 network (which one client usually holds whole, so
/// hopping through it gains nothing), or unknown.
///
/// ```
/// use muster_domain::model::ClientAddress;
/// use std::net::IpAddr;
/// let ip = |s: &str| Some(s.parse::<IpAddr>().unwrap());
/// assert_eq!(ClientAddress::new(ip("2001:db8:1:2:aa::1")), ClientAddress::new(ip("2001:db8:1:2::ff")));
/// assert_ne!(ClientAddress::new(ip("2001:db8:1:2::1")), ClientAddress::new(ip("2001:db8:1:3::1")));
/// assert_eq!(ClientAddress::new(ip("::ffff:10.0.0.1")), ClientAddress::new(ip("10.0.0.1")));
/// assert_eq!(ClientAddress::new(ip("10.0.0.1")).to_string(), "10.0.0.1");
/// assert_eq!(ClientAddress::new(None).to_string(), "unknown");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddress(Option<IpAddr>);

impl ClientAddress {
    /// The address a connection came from; `None` when the transport has none.
    pub fn new(peer: Option<IpAddr>) -> Self {
        Self(peer.map(|ip| match ip {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(Ipv6Addr::from(v6.to_bits() & !u128::from(u64::MAX))),
            },
            v4 @ IpAddr::V4(_) => v4,
        }))
    }

    /// No address known (a test, or a transport without one): all such attempts share
    /// one streak per account.
    pub const UNKNOWN: Self = Self(None);
}

impl fmt::Display for ClientAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(ip) => write!(f, "{ip}"),
            None => f.write_str("unknown"),
        }
    }
}
