//! Multipath routes, nexthop objects, `nhid`, the multipath hash sysctls, and the
//! related kernel lines sr6 refuses with a reason.

use std::net::IpAddr;

use sr6_config::{parse_str, ConfigError};
use sr6_core::spec::{NexthopKind, PathSpec, RouteKind, RouterSpec, SysctlSpec};

fn ok(src: &str) -> RouterSpec {
    parse_str(src, "t.conf").unwrap_or_else(|e| panic!("{src:?}: {e}"))
}

fn err(src: &str) -> ConfigError {
    match parse_str(src, "t.conf") {
        Ok(s) => panic!("{src:?} parsed: {s:?}"),
        Err(e) => e,
    }
}

/// The error of the last line of `src` is at the column of the last `needle` in it.
fn err_at(src: &str, needle: &str) -> ConfigError {
    let e = err(src);
    let last = src.lines().last().unwrap();
    let line = src.lines().count();
    assert_eq!((e.line, e.col), (line, last.rfind(needle).unwrap() + 1), "{src:?}: {e}");
    e
}

fn ip(s: &str) -> Option<IpAddr> {
    Some(s.parse().unwrap())
}

fn path(via: &str, dev: &str, weight: u16) -> PathSpec {
    PathSpec { via: ip(via), dev: Some(dev.into()), weight }
}

#[test]
fn multipath_routes() {
    let s = ok("ip -6 route add fc00:50::/48 metric 10 nexthop via fc00:12::2 dev eth1 weight 2 \
                nexthop via inet6 fc00:13::2 dev eth2");
    assert_eq!(
        s.routes[0].kind,
        RouteKind::Multipath { paths: vec![path("fc00:12::2", "eth1", 2), path("fc00:13::2", "eth2", 1)] }
    );
    assert_eq!(s.devices, ["eth1", "eth2"]);
    let s = ok("ip route add default nexthop via 10.0.12.2 nexthop dev eth2 onlink weight 256");
    let RouteKind::Multipath { paths } = &s.routes[0].kind else { panic!() };
    assert_eq!(paths[1], PathSpec { via: None, dev: Some("eth2".into()), weight: 256 });
    // IPv6 `append` adds a path, as the kernel's.
    let s = ok("route add fc00::/16 via fc00::1 dev eth0\nroute append fc00::/16 via fc00::2 dev eth1");
    assert_eq!(
        s.routes[0].kind,
        RouteKind::Multipath { paths: vec![path("fc00::1", "eth0", 1), path("fc00::2", "eth1", 1)] }
    );
    assert_eq!(s.routes.len(), 1);
    // Appending a path the route has is an error (the kernel's `File exists`).
    err_at("route add fc00::/16 via fc00::1 dev eth0\nroute append fc00::/16 via fc00::1 dev eth0 onlink", "fc00::/16");
    // `append` of a new prefix is an `add`.
    ok("route append fc00::/16 dev eth0");
}

#[test]
fn multipath_errors() {
    err_at("route add fc00::/16 nexthop via fc00::1 weight 0", "0");
    err_at("route add fc00::/16 nexthop via fc00::1 weight 257", "257");
    err_at("route add fc00::/16 nexthop via fc00::1 nexthop weight 2", "nexthop weight");
    err_at("route add fc00::/16 nexthop via fc00::1 dev eth0 metric 5", "metric");
    err_at("route add fc00::/16 nexthop via 10.0.0.1 dev eth0", "10.0.0.1");
    err_at("route add fc00::/16 nexthop dev eth0 encap seg6 mode encap segs fc00::9", "encap seg6");
    err_at("route add fc00::/16 encap seg6 mode encap segs fc00::9 nexthop dev eth0", "encap seg6");
    err_at("route add fc00::/16 nexthop dev eth0 via fc00::1 via fc00::2", "via fc00::2");
    let e = err_at("route add blackhole fc00::/16 nexthop dev eth0", "nexthop");
    assert!(e.message.contains("blackhole"), "{e}");
}

#[test]
fn nexthop_objects() {
    let s = ok("ip nexthop add id 1 via fc00:12::2 dev eth1\n\
                ip -6 nexthop add id 2 dev eth2\n\
                ip nexthop add id 3 blackhole\n\
                ip nexthop add id 10 group 1/2,3 type mpath\n\
                ip -6 route add fc00:50::/48 nhid 10\n\
                ip nexthop replace id 2 via fc00:13::2 dev eth2");
    assert_eq!(s.nexthops.len(), 4);
    assert_eq!(s.nexthops[3].kind, NexthopKind::Group { members: vec![(1, 1), (2, 3)] });
    assert_eq!(s.nexthops[1].kind, NexthopKind::Single { via: ip("fc00:13::2"), dev: "eth2".into(), v6: true });
    assert_eq!(s.nexthops[2].kind, NexthopKind::Blackhole { v6: false });
    assert_eq!(s.routes[0].kind, RouteKind::Nhid { id: 10 });
}

#[test]
fn nexthop_errors() {
    err_at("ip nexthop add id 1 dev eth0", "1 dev");
    err_at("ip nexthop add id 0 via fc00::1 dev eth0", "0 via");
    let e = err("ip nexthop add id 1 via fc00::1");
    assert!(e.message.contains("device"), "{e}");
    let e = err_at("ip nexthop add id 1 via fc00::1 dev eth0\nip nexthop add id 1 via fc00::2 dev eth0", "1 via");
    assert!(e.message.contains("line 1"), "{e}");
    err_at("ip nexthop add id 2 group 1/3", "2 group");
    err_at("ip -6 nexthop add id 1 dev eth0\nip -6 nexthop add id 2 group 1", "2 group");
    err_at("ip nexthop add id 2 group 1,0/3", "1,0");
    err_at("ip nexthop add id 2 group 1/x", "x");
    err_at("ip nexthop add id 2 group 1/1", "1");
    err_at("ip nexthop add id 2 group 1 type resilient", "resilient");
    err_at("ip nexthop add id 2 blackhole dev eth0", "dev");
    err_at("ip -6 nexthop add id 1 dev eth0\nip nexthop add id 2 group 1\nip nexthop add id 3 group 2", "3 group");
    let e = err_at("ip -6 route add fc00::/16 nhid 7", "fc00::/16");
    assert!(e.message.contains("does not exist"), "{e}");
    err_at("ip -6 nexthop add id 7 dev eth0\nip -6 route add fc00::/16 nhid 7 dev eth0", "dev");
    let e = err_at("ip nexthop add id 7 blackhole\nip -6 route add fc00::/16 nhid 7", "fc00::/16");
    assert!(e.message.contains("IPv4"), "{e}");
    err_at(
        "ip -4 nexthop add id 1 dev eth0\nip nexthop add id 7 group 1\nip -6 route add fc00::/16 nhid 7",
        "fc00::/16",
    );
    err_at("ip nexthop add id 1 via fc00::1 dev eth0\nip route add 10.0.0.0/8 nhid 1", "10.0.0.0/8");
}

#[test]
fn multipath_hash_policy() {
    let s = ok("sysctl -w net.ipv6.fib_multipath_hash_policy=1 net.ipv4.fib_multipath_hash_policy=0");
    assert_eq!(
        s.sysctls,
        [
            SysctlSpec::MultipathHash { line: 1, v6: true, policy: 1 },
            SysctlSpec::MultipathHash { line: 1, v6: false, policy: 0 }
        ]
    );
    let e = err_at("sysctl -w net.ipv6.fib_multipath_hash_policy=2", "2");
    assert!(e.message.contains("inner"), "{e}");
    err_at("sysctl -w net.ipv4.fib_multipath_hash_policy=9", "9");
}

/// Lines sr6 refuses say why.
#[test]
fn refused_with_a_reason() {
    let e = err_at("ip -6 rule add from fc00::/16 fwmark 1 lookup 100", "fwmark");
    assert!(e.message.contains("marks"), "{e}");
    let e = err_at("ip -6 route add fc00::/16 dev eth0 src fc00::1", "src");
    assert!(e.message.contains("source"), "{e}");
    let e = err_at("ip -6 route add fc00::/16 dev eth0 expires 60", "expires");
    assert!(e.message.contains("age"), "{e}");
    ok("ip -6 route add fc00::/16 dev eth0 pref high");
    err_at("ip -6 route add fc00::/16 dev eth0 pref urgent", "urgent");
    let e = err_at("ip -6 route add local fc00::/64 dev eth0", "local");
    assert!(e.message.contains("addr add"), "{e}");
    let e = err_at("ip -6 route flush table main", "flush");
    assert!(e.message.contains("route del"), "{e}");
    // brd: only the subnet's all-ones address, which the kernel adds by itself.
    let s = ok(
        "ip addr add 10.0.1.1/24 brd + dev eth0 scope global\nip addr add 10.0.2.1/24 dev eth0 broadcast 10.0.2.255",
    );
    assert_eq!(s.addrs.len(), 2);
    let e = err_at("ip addr add 10.0.1.1/24 brd 10.0.1.128 dev eth0", "10.0.1.128");
    assert!(e.expected.as_deref().unwrap_or("").contains("10.0.1.255"), "{e}");
    err_at("ip -6 addr add fc00::1/64 brd + dev eth0", "+");
    let e = err_at("ip addr add 10.0.1.1/24 dev eth0 scope link", "link");
    assert!(e.message.contains("global"), "{e}");
}
