use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

const STRICT: TargetPolicy = TargetPolicy {
    allow_private: false,
    allow_http: false,
};

/// Every IPv4 range of D-81: its first and last address, and the neighbours outside it
/// (public ones unless they fall in another blocked range).
const V4_RANGES: [(&str, &str, BlockedRange); 11] = [
    ("0.0.0.0", "0.255.255.255", BlockedRange::ThisNetwork),
    ("10.0.0.0", "10.255.255.255", BlockedRange::Private10),
    (
        "100.64.0.0",
        "100.127.255.255",
        BlockedRange::SharedAddressSpace,
    ),
    ("127.0.0.0", "127.255.255.255", BlockedRange::Loopback),
    ("169.254.0.0", "169.254.255.255", BlockedRange::LinkLocal),
    ("172.16.0.0", "172.31.255.255", BlockedRange::Private172),
    (
        "192.0.0.0",
        "192.0.0.255",
        BlockedRange::ProtocolAssignments,
    ),
    ("192.168.0.0", "192.168.255.255", BlockedRange::Private192),
    ("198.18.0.0", "198.19.255.255", BlockedRange::Benchmarking),
    ("224.0.0.0", "239.255.255.255", BlockedRange::Multicast),
    ("240.0.0.0", "255.255.255.255", BlockedRange::Reserved),
];

fn step(address: &str, delta: i64) -> Option<Ipv4Addr> {
    let value = i64::from(u32::from(address.parse::<Ipv4Addr>().unwrap())) + delta;
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

#[test]
fn every_ipv4_range_is_blocked_to_its_edges_and_no_further() {
    for (first, last, range) in V4_RANGES {
        assert_eq!(blocked_range(ip(first)), Some(range), "{first}");
        assert_eq!(blocked_range(ip(last)), Some(range), "{last}");
        for outside in [step(first, -1), step(last, 1)].into_iter().flatten() {
            let judged = blocked_range(IpAddr::V4(outside));
            let in_other = V4_RANGES.iter().any(|(f, l, r)| {
                *r != range && step(f, 0) <= Some(outside) && Some(outside) <= step(l, 0)
            });
            if in_other {
                assert!(judged.is_some(), "{outside} is in another range");
            } else {
                assert_eq!(judged, None, "{outside} is just outside {range:?}");
            }
        }
    }
}

#[test]
fn known_public_addresses_pass() {
    for public in [
        "8.8.8.8",
        "1.1.1.1",
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.0.1.0",
        "192.167.255.255",
        "192.169.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "2606:4700:4700::1111",
        "2001:4860:4860::8888",
        "2a00:1450:4001:81c::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::8.8.8.8",
        "2002:0808:0808::1",
        "fbff:ffff::1",
        "fe00::1",
        "fec0::1",
        "feff::1",
    ] {
        assert_eq!(blocked_range(ip(public)), None, "{public}");
    }
}

#[test]
fn every_ipv6_range_is_blocked_to_its_edges() {
    let cases = [
        ("::", BlockedRange::Unspecified6),
        ("::1", BlockedRange::Loopback6),
        ("::2", BlockedRange::Ipv4Compatible),
        ("::8.8.8.8", BlockedRange::Ipv4Compatible),
        ("::ffff:ffff", BlockedRange::Ipv4Compatible),
        ("64:ff9b:1::", BlockedRange::LocalNat64),
        (
            "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
            BlockedRange::LocalNat64,
        ),
        ("fc00::", BlockedRange::UniqueLocal6),
        (
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            BlockedRange::UniqueLocal6,
        ),
        ("fe80::", BlockedRange::LinkLocal6),
        (
            "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            BlockedRange::LinkLocal6,
        ),
        ("ff00::", BlockedRange::Multicast6),
        ("ff02::1", BlockedRange::Multicast6),
        (
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            BlockedRange::Multicast6,
        ),
    ];
    for (address, range) in cases {
        assert_eq!(blocked_range(ip(address)), Some(range), "{address}");
    }
    assert_eq!(blocked_range(ip("::1:0:0:0")), None, "outside ::/96");
    assert_eq!(
        blocked_range(ip("64:ff9b:2::1")),
        None,
        "outside 64:ff9b:1::/48"
    );
}

#[test]
fn ipv4_inside_ipv6_is_judged_as_ipv4() {
    for (first, last, range) in V4_RANGES {
        for v4 in [first, last] {
            let v4: Ipv4Addr = v4.parse().unwrap();
            let [a, b, c, d] = v4.octets();
            let hi = u16::from_be_bytes([a, b]);
            let lo = u16::from_be_bytes([c, d]);
            let forms = [
                IpAddr::V6(v4.to_ipv6_mapped()),
                IpAddr::V6(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, hi, lo)),
                IpAddr::V6(Ipv6Addr::new(0x2002, hi, lo, 0, 0, 0, 0, 1)),
            ];
            for form in forms {
                assert_eq!(blocked_range(form), Some(range), "{form} carries {v4}");
            }
        }
    }
}

#[test]
fn urls_are_checked_before_any_lookup() {
    let ok = |url: &str| parse_target(url, STRICT);
    assert!(ok("https://example.com/hook").is_ok());
    assert!(ok("https://example.com:8443/x?y=1").is_ok());
    assert!(ok("https://8.8.8.8/").is_ok());
    assert!(ok("https://[2606:4700:4700::1111]/").is_ok());
    for (url, refusal) in [
        ("http://example.com/", TargetRefusal::NotHttps),
        ("ftp://example.com/", TargetRefusal::NotHttps),
        ("file:///etc/passwd", TargetRefusal::NotHttps),
        ("not a url", TargetRefusal::Invalid),
        ("/relative", TargetRefusal::Invalid),
        ("https://user:pw@example.com/", TargetRefusal::Invalid),
        ("https://user@example.com/", TargetRefusal::Invalid),
        ("https://127.0.0.1/", TargetRefusal::Private),
        ("https://127.1/", TargetRefusal::Private),
        ("https://2130706433/", TargetRefusal::Private),
        ("https://0x7f.0.0.1/", TargetRefusal::Private),
        ("https://0177.0.0.1/", TargetRefusal::Private),
        ("https://0/", TargetRefusal::Private),
        ("https://10.0.0.1:443/", TargetRefusal::Private),
        (
            "https://169.254.169.254/latest/meta-data",
            TargetRefusal::Private,
        ),
        ("https://[::1]/", TargetRefusal::Private),
        ("https://[::ffff:10.0.0.1]/", TargetRefusal::Private),
        ("https://[64:ff9b::192.168.1.1]/", TargetRefusal::Private),
        ("https://[fd00::1]/", TargetRefusal::Private),
    ] {
        assert_eq!(ok(url), Err(refusal), "{url}");
    }
    let relaxed = TargetPolicy {
        allow_private: true,
        allow_http: true,
    };
    assert!(parse_target("http://127.0.0.1:9/", relaxed).is_ok());
    assert!(
        parse_target("https://localhost/", STRICT).is_ok(),
        "names are judged by lookup"
    );
    assert_eq!(
        parse_target(
            "http://127.0.0.1/",
            TargetPolicy {
                allow_private: true,
                allow_http: false
            }
        ),
        Err(TargetRefusal::NotHttps)
    );
    assert_eq!(
        parse_target(
            "http://10.0.0.1/",
            TargetPolicy {
                allow_private: false,
                allow_http: true
            }
        ),
        Err(TargetRefusal::Private)
    );
}

#[test]
fn an_answer_with_one_blocked_address_is_refused_whole() {
    let public = SocketAddr::new(ip("8.8.8.8"), 443);
    let private = SocketAddr::new(ip("10.0.0.1"), 443);
    assert_eq!(check_addresses(&[public], STRICT), Ok(()));
    assert_eq!(
        check_addresses(&[public, private], STRICT),
        Err(TargetRefusal::Private)
    );
    assert_eq!(
        check_addresses(&[], STRICT),
        Err(TargetRefusal::Unresolvable)
    );
    let relaxed = TargetPolicy {
        allow_private: true,
        allow_http: false,
    };
    assert_eq!(check_addresses(&[public, private], relaxed), Ok(()));
}

#[tokio::test]
async fn names_are_judged_by_what_they_resolve_to() {
    let guard = ResolvingTargetGuard::new(STRICT);
    assert_eq!(
        guard.check("https://localhost:1/").await,
        Err(TargetRefusal::Private)
    );
    let target = parse_target("https://localhost:8443/", STRICT).unwrap();
    assert_eq!(
        resolve_public(&target, STRICT).await,
        Err(TargetRefusal::Private)
    );
    let relaxed = TargetPolicy {
        allow_private: true,
        allow_http: true,
    };
    let addresses = resolve_public(&target, relaxed).await.unwrap();
    assert!(
        addresses
            .iter()
            .all(|a| a.ip().is_loopback() && a.port() == 8443)
    );
    assert_eq!(
        ResolvingTargetGuard::new(relaxed)
            .check("http://localhost:1/")
            .await,
        Ok(())
    );
    let literal = parse_target("https://8.8.8.8/", STRICT).unwrap();
    assert_eq!(
        resolve_public(&literal, STRICT).await.unwrap(),
        [SocketAddr::new(ip("8.8.8.8"), 443)],
        "a literal needs no lookup"
    );
    assert_eq!(
        guard.check("https://no-such-host.invalid/").await,
        Err(TargetRefusal::Unresolvable)
    );
}
