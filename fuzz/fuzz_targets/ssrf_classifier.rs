//! The outbound target checks on arbitrary URLs and addresses: they never panic; a
//! target accepted without `allowPrivate` is never a literal blocked address; an
//! IPv4-mapped IPv6 address is blocked exactly when its IPv4 address is.
#![no_main]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use muster_outbound::ssrf::{TargetPolicy, blocked_range, check_addresses, parse_target};

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    url: &'a str,
    allow_private: bool,
    allow_http: bool,
    v4: [u8; 4],
    v6: [u8; 16],
    port: u16,
}

fuzz_target!(|input: Input<'_>| {
    let policy = TargetPolicy {
        allow_private: input.allow_private,
        allow_http: input.allow_http,
    };
    if parse_target(input.url, policy).is_ok() {
        let parsed = url::Url::parse(input.url).expect("an accepted target is a URL");
        assert!(parsed.scheme() == "https" || (input.allow_http && parsed.scheme() == "http"));
        if !input.allow_private {
            let literal = match parsed.host() {
                Some(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
                Some(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
                Some(url::Host::Domain(_)) | None => None,
            };
            if let Some(ip) = literal {
                assert!(blocked_range(ip).is_none(), "{} accepted", input.url);
            }
        }
    }
    let v4 = Ipv4Addr::from(input.v4);
    let mapped = v4.to_ipv6_mapped();
    assert_eq!(
        blocked_range(IpAddr::V4(v4)).is_some(),
        blocked_range(IpAddr::V6(mapped)).is_some(),
        "{v4} and {mapped}"
    );
    let v6 = Ipv6Addr::from(input.v6);
    let addresses = [
        SocketAddr::new(IpAddr::V4(v4), input.port),
        SocketAddr::new(IpAddr::V6(v6), input.port),
    ];
    let blocked = addresses.iter().any(|a| blocked_range(a.ip()).is_some());
    let strict = TargetPolicy {
        allow_private: false,
        allow_http: false,
    };
    let open = TargetPolicy {
        allow_private: true,
        allow_http: false,
    };
    assert_eq!(check_addresses(&addresses, strict).is_err(), blocked);
    assert!(check_addresses(&addresses, open).is_ok());
});
