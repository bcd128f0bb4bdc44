//! `nh6` of End.X and End.DX6 not on a connected network: resolved through the main
//! table's route to it, as Linux does (`seg6_lookup_nexthop`); `nh6 ::` on End.DX6.

use sr6_config::parse_str;
use sr6_core::tables::{NextHop, Tables};

const BASE: &str = "\
ip -6 addr add fc00:13::1/64 dev eth2
ip -6 addr add fc00:1::1/64 dev eth0
ip -6 neigh add fc00:13::2 lladdr 02:aa:00:00:00:03 dev eth2
ip -6 route add fc00:3::/48 via fc00:13::2 dev eth2
ip -6 route add fc00:4::/48 via fc00:13::2
ip -6 route add fc00:5::/48 dev eth2
ip -6 route add fc00:6::/48 nexthop via fc00:13::2 dev eth2 nexthop via fc00:1::2 dev eth0
ip -6 route add blackhole fc00:7::/48
";

fn build(sid_line: &str) -> Result<Tables, String> {
    let src = format!("{BASE}{sid_line}\n");
    let spec = parse_str(&src, "t.conf").map_err(|e| format!("parse: {e}"))?;
    Tables::build(&spec).map(|(t, _)| t).map_err(|e| e.to_string())
}

/// The next hop the only SID got: its adjacency's device and address.
fn next_hop(t: &Tables) -> (String, String) {
    match t.sids[0].state.nh {
        Some(NextHop::Adj(a)) => {
            let adj = &t.adjacencies[a as usize];
            (t.devices[adj.dev as usize].name.clone(), adj.nh.to_string())
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn end_x_nh6_behind_gateway_uses_the_gateway() {
    for nh in ["fc00:3::5", "fc00:4::5"] {
        let t =
            build(&format!("ip -6 route add fc00:f::1/128 encap seg6local action End.X nh6 {nh} dev eth0")).unwrap();
        assert_eq!(next_hop(&t), ("eth2".into(), "fc00:13::2".into()), "{nh}");
    }
}

#[test]
fn end_dx6_nh6_behind_gateway_uses_the_gateway() {
    let t = build("ip -6 route add fc00:f::1/128 encap seg6local action End.DX6 nh6 fc00:3::5 dev eth0").unwrap();
    assert_eq!(next_hop(&t), ("eth2".into(), "fc00:13::2".into()));
}

#[test]
fn nh6_on_a_dev_route_is_on_link() {
    let t = build("ip -6 route add fc00:f::1/128 encap seg6local action End.X nh6 fc00:5::5 dev eth0").unwrap();
    assert_eq!(next_hop(&t), ("eth2".into(), "fc00:5::5".into()));
}

#[test]
fn end_dx6_nh6_any_has_no_fixed_next_hop() {
    let t = build("ip -6 route add fc00:f::1/128 encap seg6local action End.DX6 nh6 :: dev eth0").unwrap();
    assert!(t.sids[0].state.nh.is_none());
}

#[test]
fn unsupported_or_missing_routes_are_refused_at_the_sid_line() {
    let cases = [
        (
            "End.X nh6 fc00:9::5",
            "End.X: nh6 fc00:9::5 has no route in the main table; add a route to it or give `oif DEV`",
        ),
        ("End.X nh6 fc00:6::5", "not a route via one gateway"),
        ("End.DX6 nh6 fc00:7::5", "not a route via one gateway"),
        ("End.DX6 nh6 :: oif eth2", "`nh6 ::` looks the inner destination up; it takes no `oif`"),
    ];
    for (action, msg) in cases {
        let e = build(&format!("ip -6 route add fc00:f::1/128 encap seg6local action {action} dev eth0")).unwrap_err();
        assert!(e.contains(msg), "{action}: {e}");
        assert!(e.starts_with("line 9: "), "{action}: not at the SID's line: {e}");
        assert!(!e.contains("add `dev DEV`"), "{action}: {e}");
    }
}
