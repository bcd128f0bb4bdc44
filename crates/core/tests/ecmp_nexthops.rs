//! sr6's extension helper `sr6_ecmp_nexthops` (docs/bpf.md, "sr6's extension helper"):
//! the gateways End.BPF programs get for a destination, from tables built from a
//! configuration. End to end, with examples/bpf/end_oamp.c: tests/live/test_bpf_examples.py.

use sr6_core::behaviour::end_bpf::ecmp_nexthops;
use sr6_core::tables::Tables;

#[test]
fn ecmp_nexthops_of_a_route() {
    let conf = "\
ip link set dev eth0 address 02:00:00:00:00:01
ip link set dev eth1 address 02:00:00:00:00:02
ip -6 addr add fc00:1::1/64 dev eth0
ip -6 addr add fc00:2::1/64 dev eth1
ip -6 route add fc00:d::/64 nexthop via fc00:1::2 dev eth0 nexthop via fc00:2::2 dev eth1 weight 3
ip -6 route add fc00:c::/64 via fc00:2::2 dev eth1
ip -6 route add fc00:b::/64 via fc00:1::3 dev eth0 table 100
";
    let spec = sr6_config::parse_str(conf, "t.conf").unwrap_or_else(|e| panic!("{e}"));
    let t = Tables::build(&spec).unwrap_or_else(|e| panic!("line {}: {}", e.line, e.message)).0;
    let a = |s: &str| s.parse::<std::net::Ipv6Addr>().unwrap().octets();
    let r = |d: &[u8; 16], table: u32, out: &mut [[u8; 16]]| ecmp_nexthops(&t, d, table, out);
    let mut out = [[0xee; 16]; 3];
    assert_eq!(r(&a("fc00:d::1"), 0, &mut out), 2);
    assert_eq!(out, [a("fc00:1::2"), a("fc00:2::2"), [0xee; 16]], "in the route's order, the rest untouched");
    assert_eq!(r(&a("fc00:d::1"), 0, &mut out[..1]), 2, "the count, even when fewer fit");
    assert_eq!(r(&a("fc00:c::9"), 0, &mut out), 1);
    assert_eq!(out[0], a("fc00:2::2"));
    assert_eq!(r(&a("fc00:1::77"), 0, &mut out), 0, "on-link: no gateway");
    assert_eq!(r(&a("fc00:1::1"), 0, &mut out), 0, "local: no gateway");
    assert_eq!(r(&a("2001:db8::1"), 0, &mut out), -2, "no route: -ENOENT");
    assert_eq!(r(&a("fc00:b::1"), 0, &mut out), -2, "not in the main table");
    assert_eq!(r(&a("fc00:b::1"), 100, &mut out), 1);
    assert_eq!(out[0], a("fc00:1::3"));
    assert_eq!(r(&a("fc00:b::1"), 4242, &mut out), -22, "no such table: -EINVAL");
}
