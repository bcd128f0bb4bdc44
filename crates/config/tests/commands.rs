//! Every accepted command form.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use sr6_config::{parse_line, parse_str};
use sr6_core::spec::*;

fn ok(src: &str) -> RouterSpec {
    match parse_str(src, "t.conf") {
        Ok(s) => s,
        Err(e) => panic!("{src:?}: {e}"),
    }
}

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

fn v4(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn route(src: &str) -> RouteSpec {
    let s = ok(src);
    assert_eq!(s.routes.len(), 1, "{src}");
    s.routes[0].clone()
}

fn sid(src: &str) -> SidAction {
    match route(src).kind {
        RouteKind::Seg6Local { action, .. } => *action,
        k => panic!("{src}: {k:?}"),
    }
}

#[test]
fn empty_and_comments() {
    assert_eq!(ok(""), RouterSpec::default());
    assert_eq!(ok("\n   \n# comment\n\t# indented comment\n"), RouterSpec::default());
}

#[test]
fn link_set() {
    let s = ok("ip link set eth0 address 02:00:00:00:00:01");
    assert_eq!(s.links, vec![LinkSpec { line: 1, dev: "eth0".into(), mac: [2, 0, 0, 0, 0, 1] }]);
    assert_eq!(s.devices, vec!["eth0"]);
    let s = ok("link set dev eth1 up\nip link set eth2 down\nip l s dev eth3 address 02:00:00:00:00:03 up");
    assert_eq!(s.devices, vec!["eth1", "eth2", "eth3"]);
    assert_eq!(s.links.len(), 1);
    assert_eq!(s.links[0].dev, "eth3");
    // set twice: the last one wins
    let s = ok("link set eth0 address 02:00:00:00:00:01\nlink set eth0 address 02:00:00:00:00:02");
    assert_eq!(s.links, vec![LinkSpec { line: 2, dev: "eth0".into(), mac: [2, 0, 0, 0, 0, 2] }]);
}

#[test]
fn link_set_mtu() {
    let s = ok("ip link set dev eth0 mtu 1400");
    assert_eq!(s.mtus, vec![MtuSpec { line: 1, dev: "eth0".into(), mtu: 1400 }]);
    assert_eq!((s.devices, s.links), (vec!["eth0".to_string()], vec![]));
    // With an address on the same line, the range's ends, and the last line winning.
    let s = ok("link set eth1 address 02:00:00:00:00:01 mtu 1280 up\n\
                link set eth2 mtu 9202\nlink set eth1 mtu 1500\nip link change eth1 mtu 0x5dc");
    assert_eq!(s.links.len(), 1);
    assert_eq!(
        s.mtus,
        vec![MtuSpec { line: 4, dev: "eth1".into(), mtu: 1500 }, MtuSpec { line: 2, dev: "eth2".into(), mtu: 9202 }]
    );
}

#[test]
fn addr_add() {
    let s =
        ok("ip -6 addr add fc00:1::1/64 dev eth0\nip address add 10.0.0.1/24 dev eth1\na a dev eth2 fc00:2::1 nodad");
    assert_eq!(s.addrs[0], AddrSpec { line: 1, dev: "eth0".into(), addr: IpAddr::V6(v6("fc00:1::1")), prefix_len: 64 });
    assert_eq!(s.addrs[1].addr, IpAddr::V4(v4("10.0.0.1")));
    assert_eq!(s.addrs[1].prefix_len, 24);
    assert_eq!(s.addrs[2].prefix_len, 128);
    assert_eq!(s.devices, vec!["eth0", "eth1", "eth2"]);
    let s = ok("addr add fc00::1/64 dev eth0\naddr replace fc00::1/48 dev eth0");
    assert_eq!(s.addrs.len(), 1);
    assert_eq!(s.addrs[0].prefix_len, 48);
    let s = ok("ip addr add local fc00::1/64 dev eth0");
    assert_eq!(s.addrs[0].addr, IpAddr::V6(v6("fc00::1")));
}

#[test]
fn neigh_add() {
    let s = ok("ip -6 neigh add fc00:1::2 lladdr 02:00:00:00:01:02 dev eth0\n\
                neighbor add 10.0.0.2 lladdr 02:00:00:00:01:03 dev eth1 nud permanent\n\
                ip neighbour add to fc00::9 dev eth2 lladdr 02:00:00:00:01:04 nud noarp\n\
                neigh replace fc00:1::2 lladdr 02:00:00:00:01:05 dev eth0 nud reachable");
    assert_eq!(s.neighs.len(), 3);
    assert_eq!(
        s.neighs[0],
        NeighSpec { line: 4, dev: "eth0".into(), addr: IpAddr::V6(v6("fc00:1::2")), mac: [2, 0, 0, 0, 1, 5] }
    );
    assert_eq!(s.neighs[1].addr, IpAddr::V4(v4("10.0.0.2")));
    assert_eq!(s.devices, vec!["eth0", "eth1", "eth2"]);
}

#[test]
fn forward_routes() {
    let r = route("ip -6 route add fc00:2::/64 via fc00:1::2 dev eth0");
    assert_eq!(r.prefix, Prefix::V6(v6("fc00:2::"), 64));
    assert_eq!(r.table, MAIN_TABLE);
    assert_eq!(r.kind, RouteKind::Forward { via: Some(IpAddr::V6(v6("fc00:1::2"))), dev: Some("eth0".into()) });
    let r = route("route add fc00::5 dev eth1");
    assert_eq!(r.prefix, Prefix::V6(v6("fc00::5"), 128));
    assert_eq!(r.kind, RouteKind::Forward { via: None, dev: Some("eth1".into()) });
    let r = route("ip r a 10.1.0.0/16 via inet 10.0.0.1 table 100 metric 10 proto static onlink mtu 1400");
    assert_eq!(r.prefix, Prefix::V4(v4("10.1.0.0"), 16));
    assert_eq!(r.table, 100);
    let r = route("ip route replace 10.1.0.0/16 via 10.0.0.1 table local");
    assert_eq!(r.table, LOCAL_TABLE);
    let r = route("ip route append to 10.1.0.0/16 dev eth0 scope link table main");
    assert_eq!(r.table, MAIN_TABLE);
    let r = route("ip -6 route add fc00::/16 via inet6 fc00::1 table 0x10 metric 1024 mtu lock 1500");
    assert_eq!(r.table, 16);
    let r = route("ip -6 route add fc00::/16 dev eth0 oif eth1".replace(" oif eth1", "").as_str());
    assert_eq!(r.kind, RouteKind::Forward { via: None, dev: Some("eth0".into()) });
    let r = route("ip route add fc00::/16 oif eth0");
    assert_eq!(r.kind, RouteKind::Forward { via: None, dev: Some("eth0".into()) });
}

#[test]
fn default_routes() {
    assert_eq!(route("ip -6 route add default via fe80::1 dev eth0").prefix, Prefix::V6(Ipv6Addr::UNSPECIFIED, 0));
    assert_eq!(route("ip -4 route add default dev eth0").prefix, Prefix::V4(Ipv4Addr::UNSPECIFIED, 0));
    assert_eq!(route("ip route add default via 10.0.0.1").prefix, Prefix::V4(Ipv4Addr::UNSPECIFIED, 0));
    assert_eq!(route("ip route add default via fc00::1").prefix, Prefix::V6(Ipv6Addr::UNSPECIFIED, 0));
    assert_eq!(route("ip -f inet6 route add default dev eth0").prefix, Prefix::V6(Ipv6Addr::UNSPECIFIED, 0));
    assert_eq!(route("ip -6 route add ::/0 dev eth0").prefix, Prefix::V6(Ipv6Addr::UNSPECIFIED, 0));
}

#[test]
fn blackhole_unreachable() {
    let r = route("ip -6 route add blackhole fc00:dead::/32");
    assert_eq!(r.kind, RouteKind::Blackhole);
    let r = route("ip route add unreachable 10.9.0.0/16 table 7 metric 5");
    assert_eq!(r.kind, RouteKind::Unreachable);
    assert_eq!(r.table, 7);
    assert_eq!(route("ip -6 route add blackhole default").prefix, Prefix::V6(Ipv6Addr::UNSPECIFIED, 0));
    assert!(matches!(route("ip route add unicast fc00::/16 dev eth0").kind, RouteKind::Forward { .. }));
}

#[test]
fn seg6_encap_all_modes() {
    for m in Seg6Mode::ALL {
        let r = route(&format!(
            "ip -6 route add fc00:9::/64 encap seg6 mode {} segs fc00:a::1,fc00:b::1 dev eth0",
            m.keyword()
        ));
        match r.kind {
            RouteKind::Seg6 { encap, via, dev } => {
                assert_eq!(encap.mode, m);
                assert_eq!(encap.segs, vec![v6("fc00:a::1"), v6("fc00:b::1")]);
                assert_eq!(encap.hmac, None);
                assert_eq!(via, None);
                assert_eq!(dev.as_deref(), Some("eth0"));
            }
            k => panic!("{k:?}"),
        }
    }
    let r = route("route add fc00:9::/64 encap seg6 mode encap segs fc00::1 hmac 42 via fc00:1::2");
    assert_eq!(
        r.kind,
        RouteKind::Seg6 {
            encap: Seg6Encap { mode: Seg6Mode::Encap, segs: vec![v6("fc00::1")], hmac: Some(42), csid: None },
            via: Some(IpAddr::V6(v6("fc00:1::2"))),
            dev: None
        }
    );
    // hmac before segs, dev before encap, IPv4 prefix with encap/encap.red/l2encap
    route("route add fc00:9::/64 dev eth0 encap seg6 mode inline hmac 1 segs fc00::1");
    for m in ["encap", "encap.red", "l2encap", "l2encap.red"] {
        let r = route(&format!("ip route add 10.0.0.0/8 encap seg6 mode {m} segs fc00::1 dev eth0"));
        assert_eq!(r.prefix, Prefix::V4(v4("10.0.0.0"), 8));
    }
    let sixteen = vec!["fc00::1"; 16].join(",");
    route(&format!("route add fc00::/16 encap seg6 mode encap segs {sixteen}"));
}

#[test]
fn seg6local_every_behaviour() {
    let a = sid("ip -6 route add fc00::1/128 encap seg6local action End dev eth0");
    assert_eq!(a.behaviour.keyword, "End");
    assert_eq!(a.params, SidParams::default());
    assert!(a.flavors.is_empty());
    assert!(!a.count);

    let a = sid("route add fc00::2/128 encap seg6local action End.X nh6 fc00:1::2 oif eth1 dev eth0");
    assert_eq!(a.behaviour.keyword, "End.X");
    assert_eq!(a.params.nh6, Some(v6("fc00:1::2")));
    assert_eq!(a.params.oif.as_deref(), Some("eth1"));

    let a = sid("route add fc00::3/128 encap seg6local action End.T table 100 dev eth0");
    assert_eq!(a.params.table, Some(100));
    let a = sid("route add fc00::3/128 encap seg6local action End.T table main");
    assert_eq!(a.params.table, Some(MAIN_TABLE));

    let a = sid("route add fc00::4/128 encap seg6local action End.DX2 oif eth3 dev eth0");
    assert_eq!((a.behaviour.keyword, a.params.oif.as_deref()), ("End.DX2", Some("eth3")));

    let a = sid("route add fc00::5/128 encap seg6local action End.DX6 nh6 fc00:3::1 dev eth2");
    assert_eq!((a.behaviour.keyword, a.params.nh6), ("End.DX6", Some(v6("fc00:3::1"))));

    let a = sid("route add fc00::6/128 encap seg6local action End.DX4 nh4 10.0.0.1 dev eth2");
    assert_eq!((a.behaviour.keyword, a.params.nh4), ("End.DX4", Some(v4("10.0.0.1"))));

    let a = sid("route add fc00::7/128 encap seg6local action End.DT6 table 10 dev eth0");
    assert_eq!((a.behaviour.keyword, a.params.table), ("End.DT6", Some(10)));
    let a = sid("route add fc00::7/128 encap seg6local action End.DT6 vrftable 10 dev vrf0");
    assert_eq!(a.params.vrftable, Some(10));

    let a = sid("route add fc00::8/128 encap seg6local action End.DT4 vrftable 20 dev vrf1");
    assert_eq!((a.behaviour.keyword, a.params.vrftable), ("End.DT4", Some(20)));
    let a = sid("route add fc00::9/128 encap seg6local action End.DT46 vrftable 30");
    assert_eq!((a.behaviour.keyword, a.params.vrftable), ("End.DT46", Some(30)));

    let a = sid("route add fc00::a/128 encap seg6local action End.B6 srh segs fc00:b::1,fc00:b::2 dev eth0");
    assert_eq!(a.behaviour.keyword, "End.B6");
    assert_eq!(a.params.srh, Some(SrhParam { segs: vec![v6("fc00:b::1"), v6("fc00:b::2")], hmac: None, csid: None }));
    let a = sid("route add fc00::b/128 encap seg6local action End.B6.Encaps srh segs fc00:b::1 hmac 7 dev eth0");
    assert_eq!(a.params.srh, Some(SrhParam { segs: vec![v6("fc00:b::1")], hmac: Some(7), csid: None }));
    let a = sid("route add fc00::c/128 encap seg6local action End.B6.Encaps.Red srh hmac 8 segs fc00:b::1");
    assert_eq!(a.params.srh, Some(SrhParam { segs: vec![v6("fc00:b::1")], hmac: Some(8), csid: None }));

    let a = sid("ip -6 route add fc00::d/128 encap seg6local action End.MAP map fc00:2::99 dev eth0");
    assert_eq!((a.behaviour.keyword, a.params.map), ("End.MAP", Some(v6("fc00:2::99"))));
    assert_eq!(a.params, SidParams { map: Some(v6("fc00:2::99")), ..SidParams::default() });
    // `show` writes it back as it was given, and that parses to the same action.
    assert_eq!(a.to_string(), "End.MAP map fc00:2::99");
    let again = format!("route add fc00::d/128 encap seg6local action {a} count dev eth0");
    assert_eq!(sid(&again).params, a.params);
}

#[test]
fn seg6local_flavors_count_and_contexts() {
    let a = sid("route add fc00::1/128 encap seg6local action End flavors psp,usd count dev eth0");
    assert_eq!(a.flavors, Flavors { psp: true, usp: false, usd: true, next_csid: None, replace_csid: None });
    assert!(a.count);
    let a = sid("route add fc00::1/128 encap seg6local action End.X count flavors usp nh6 fc00::2");
    assert_eq!(a.flavors, Flavors { psp: false, usp: true, usd: false, next_csid: None, replace_csid: None });
    let a = sid("route add fc00::1/128 encap seg6local action End.T table 9 flavors usd,psp,usp");
    assert_eq!(a.flavors, Flavors { psp: true, usp: true, usd: true, next_csid: None, replace_csid: None });
    // NEXT-C-SID (RFC 9800 §4.1), Linux's defaults and syntax; `show` writes the
    // lengths back as Linux does.
    let a = sid("route add fc00:0:f00::/48 encap seg6local action End flavors next-csid dev eth0");
    assert_eq!(a.flavors.next_csid, Some(CsidLengths { lblen: 32, nflen: 16 }));
    assert_eq!(a.to_string(), "End flavors next-csid lblen 32 nflen 16");
    let a = sid("route add fc00::/32 encap seg6local action End.X nh6 fc00::2 flavors next-csid nflen 32 lblen 16");
    assert_eq!(a.flavors.next_csid, Some(CsidLengths { lblen: 16, nflen: 32 }));
    let a = sid("route add fc00::/32 encap seg6local action End flavors psp,next-csid lblen 24 nflen 8");
    assert!(a.flavors.psp);
    assert_eq!(a.to_string(), "End flavors psp,next-csid lblen 24 nflen 8");
    assert_eq!(sid(&format!("route add fc00::/32 encap seg6local action {a}")).flavors, a.flavors);
    // REPLACE-C-SID (RFC 9800 §4.2; sr6's extension, same words): defaults 48 and 32.
    let a = sid("route add 2001:db8:b2:20:1::/80 encap seg6local action End flavors replace-csid dev eth0");
    assert_eq!((a.flavors.replace_csid, a.flavors.next_csid), (Some(CsidLengths { lblen: 48, nflen: 32 }), None));
    assert_eq!(a.to_string(), "End flavors replace-csid lblen 48 nflen 32");
    let a =
        sid("route add fc00::/80 encap seg6local action End.T table 5 flavors psp,usd,replace-csid nflen 16 lblen 64");
    assert_eq!(a.flavors.replace_csid, Some(CsidLengths { lblen: 64, nflen: 16 }));
    assert_eq!(a.to_string(), "End.T table 5 flavors psp,usd,replace-csid lblen 64 nflen 16");
    assert_eq!(sid(&format!("route add fc00::/80 encap seg6local action {a}")).flavors, a.flavors);
    let a = sid("route add fc00::/80 encap seg6local action End.X nh6 fc00::2 flavors usp,replace-csid lblen 88");
    assert_eq!(a.flavors.replace_csid, Some(CsidLengths { lblen: 88, nflen: 32 }));
    // The pair is checked once both are known: 120 + 8 fits, whatever the default.
    let a = sid("route add fc00::/128 encap seg6local action End flavors next-csid lblen 120 nflen 8");
    assert_eq!(a.flavors.next_csid, Some(CsidLengths { lblen: 120, nflen: 8 }));
    // after `dev`, `table` is the route's table again (iproute2 semantics)
    let r = route("route add fc00::1/128 encap seg6local action End.T table 100 dev eth0 table 200");
    assert_eq!(r.table, 200);
    match r.kind {
        RouteKind::Seg6Local { action, dev } => {
            assert_eq!(action.params.table, Some(100));
            assert_eq!(dev.as_deref(), Some("eth0"));
        }
        k => panic!("{k:?}"),
    }
    // route table before encap
    let r = route("route add fc00::1/128 table 5 encap seg6local action End");
    assert_eq!(r.table, 5);
    assert!(matches!(r.kind, RouteKind::Seg6Local { dev: None, .. }));
}

#[test]
fn devices_in_order_of_first_mention() {
    let s = ok("ip -6 route add fc00::2/128 encap seg6local action End.X nh6 fc00::9 oif eth5 dev eth4\n\
                ip -6 addr add fc00::1/64 dev eth4\n\
                sysctl -w net.ipv6.conf.eth6.seg6_enabled=1\n\
                link set eth7 up\n\
                ip -6 route add fc00:1::/64 dev eth5");
    assert_eq!(s.devices, vec!["eth5", "eth4", "eth6", "eth7"]);
}

#[test]
fn sr_tunsrc_and_hmac() {
    let s = ok("ip sr tunsrc set fc00::1");
    assert_eq!(s.tunsrc, Some((v6("fc00::1"), 1)));
    let s = ok("ip sr tunsrc set fc00::1\nip sr tunsrc set ::");
    assert_eq!(s.tunsrc, None);
    let s = ok("ip sr hmac set 1 sha256 s3cret\nsr hmac set 2 sha1 \"with space\"\nsr hmac set 3 hmac(sha1) 'x#y'");
    assert_eq!(s.hmac_keys[0], HmacKeySpec { line: 1, key_id: 1, alg: HmacAlg::Sha256, secret: b"s3cret".to_vec() });
    assert_eq!(s.hmac_keys[1].alg, HmacAlg::Sha1);
    assert_eq!(s.hmac_keys[1].secret, b"with space");
    assert_eq!(s.hmac_keys[2].secret, b"x#y");
    // set again replaces; empty secret deletes
    let s = ok("sr hmac set 1 sha1 a\nsr hmac set 1 sha256 b\nsr hmac set 2 sha1 c\nsr hmac set 2 sha1 \"\"");
    assert_eq!(s.hmac_keys, vec![HmacKeySpec { line: 2, key_id: 1, alg: HmacAlg::Sha256, secret: b"b".to_vec() }]);
    let max = "k".repeat(64);
    ok(&format!("sr hmac set 9 sha256 {max}"));
}

#[test]
fn sysctls() {
    let s = ok("sysctl -w net.ipv6.conf.all.seg6_enabled=1\n\
                sysctl net.ipv6.conf.eth0.seg6_enabled=0\n\
                sudo sysctl -q -w net.ipv6.conf.default.seg6_require_hmac=-1\n\
                sysctl -wq net.ipv6.conf.all.forwarding=1 net.ipv4.ip_forward=1\n\
                sysctl -w net.ipv4.conf.eth1.forwarding=0\n\
                sysctl -w net.ipv6.conf.eth0/100.seg6_enabled=1\n\
                sysctl -w net/ipv6/conf/eth0.200/seg6_require_hmac=1\n\
                sysctl -w net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.eth2.accept_ra=2 net.ipv4.conf.all.rp_filter=0");
    use DevSel::*;
    assert_eq!(
        s.sysctls,
        vec![
            SysctlSpec::Seg6Enabled { line: 1, dev: All, value: true },
            SysctlSpec::Seg6Enabled { line: 2, dev: Dev("eth0".into()), value: false },
            SysctlSpec::RequireHmac { line: 3, dev: Default, value: -1 },
            SysctlSpec::Forwarding6 { line: 4, dev: All, value: true },
            SysctlSpec::Forwarding4 { line: 4, dev: All, value: true },
            SysctlSpec::Forwarding4 { line: 5, dev: Dev("eth1".into()), value: false },
            SysctlSpec::Seg6Enabled { line: 6, dev: Dev("eth0.100".into()), value: true },
            SysctlSpec::RequireHmac { line: 7, dev: Dev("eth0.200".into()), value: 1 },
        ]
    );
    assert_eq!(s.devices, vec!["eth0", "eth1", "eth0.100", "eth0.200", "eth2"]);
}

#[test]
fn prefixes_ip_and_sudo() {
    let a = ok("ip -6 route add fc00::/16 dev eth0");
    assert_eq!(a, ok("route add fc00::/16 dev eth0"));
    assert_eq!(a, ok("sudo ip -6 route add fc00::/16 dev eth0"));
    assert_eq!(a, ok("ip -6 -6 r add fc00::/16 dev eth0"));
    assert_eq!(a, ok("sudo route add fc00::/16 dev eth0 # trailing comment"));
    assert_eq!(a, ok("ip -6 ro add \\\n   fc00::/16 \\\n   dev eth0\n"));
    assert_eq!(a, ok("ip -6 route add fc00::/16 dev eth0\r\n"));
}

#[test]
fn continuation_lines_keep_first_line_number() {
    let s = ok("\n\nip -6 route add fc00::/16 \\\n  encap seg6 mode encap \\\n  segs fc00::1 dev eth0\nroute add fc01::/16 dev eth0");
    assert_eq!(s.routes[0].line, 3);
    assert_eq!(s.routes[1].line, 6);
}

#[test]
fn parse_line_applies_to_existing_spec() {
    let mut s = ok("ip -6 addr add fc00::1/64 dev eth0");
    parse_line("ip -6 route add fc00:5::/64 via fc00::2", "ctl", 7, &mut s).unwrap();
    assert_eq!(s.routes[0].line, 7);
    parse_line("   # nothing", "ctl", 8, &mut s).unwrap();
    parse_line("", "ctl", 9, &mut s).unwrap();
    parse_line("route replace fc00:5::/64 dev eth1", "ctl", 10, &mut s).unwrap();
    assert_eq!(s.routes.len(), 1);
    assert_eq!(s.routes[0].kind, RouteKind::Forward { via: None, dev: Some("eth1".into()) });
    assert_eq!(s.devices, vec!["eth0", "eth1"]);
}

#[test]
fn route_del_removes_one_route() {
    let src = "ip -6 route add fc00:1::/64 via fc00::2 dev eth0\n\
               ip -6 route add fc00:2::/64 via fc00::2 dev eth0\n\
               ip -6 route add fc00:1::/64 via fc00::3 dev eth0 table 10\n\
               ip route add 10.0.0.0/8 via 192.0.2.1 dev eth0\n";
    let mut s = ok(src);
    parse_line("ip -6 route del fc00:1::/64", "ctl", 1, &mut s).unwrap();
    assert_eq!(s.routes.len(), 3);
    assert!(s.routes.iter().all(|r| !(r.table == MAIN_TABLE && r.prefix == Prefix::V6(v6("fc00:1::"), 64))));
    // The same prefix in another table is untouched; kernel selectors are accepted.
    parse_line("route del fc00:1::/64 table 10 dev eth0 via fc00::3 proto static metric 1", "ctl", 2, &mut s).unwrap();
    assert_eq!(s.routes.len(), 2);
    parse_line("ip route delete 10.0.0.0/8", "ctl", 3, &mut s).unwrap();
    assert_eq!(s.routes.len(), 1);
    // The index stays right after a removal within one file.
    let s2 =
        ok(&format!("{src}route del fc00:1::/64\nroute add fc00:1::/64 via fc00::9 dev eth0\nroute del fc00:2::/64\n"));
    assert_eq!(s2.routes.len(), 3);
    assert!(s2.routes.iter().any(|r| r.prefix == Prefix::V6(v6("fc00:1::"), 64)
        && r.kind == RouteKind::Forward { via: Some(IpAddr::V6(v6("fc00::9"))), dev: Some("eth0".into()) }));
}

#[test]
fn route_del_errors_leave_the_spec_unchanged() {
    let mut s = ok("ip -6 route add fc00:1::/64 via fc00::2 dev eth0\n");
    let before = s.clone();
    let e = parse_line("ip -6 route del fc00:9::/64", "ctl", 4, &mut s).unwrap_err();
    assert_eq!(e.to_string(), "ctl:4:17: no route fc00:9::/64 in table 254 to delete (expected a prefix that has a route (`show routes` lists them))");
    let e = parse_line("route del fc00:1::/64 bogus", "ctl", 5, &mut s).unwrap_err();
    assert!(e.to_string().starts_with("ctl:5:23: unknown option `bogus` for route del"), "{e}");
    let e = parse_line("route del default", "ctl", 6, &mut s).unwrap_err();
    assert!(e.message.contains("address family"), "{e}");
    assert_eq!(s, before);
    let _ = v4("10.0.0.1");
}

#[test]
fn seg6_csid_lists() {
    let next = |lblen, nflen| Some(CsidPolicy { scheme: CsidScheme::Next, lengths: CsidLengths { lblen, nflen } });
    let repl = |lblen, nflen| Some(CsidPolicy { scheme: CsidScheme::Replace, lengths: CsidLengths { lblen, nflen } });
    let line = "ip -6 route add fc00:9::/64 encap seg6 mode encap csid next segs fc00:0:1::,fc00:0:2:: dev eth0";
    let RouteKind::Seg6 { encap, .. } = route(line).kind else { panic!() };
    assert_eq!(encap.csid, next(32, 16));
    assert_eq!(encap.segs, vec![v6("fc00:0:1::"), v6("fc00:0:2::")]);
    // Written back with the lengths, which parses to the same thing.
    assert_eq!(encap.to_string(), "encap csid next lblen 32 nflen 16 segs fc00:0:1::,fc00:0:2::");
    let again = route(&format!("route add fc00:9::/64 encap seg6 mode {encap} dev eth0"));
    assert_eq!(again.kind, RouteKind::Seg6 { encap: encap.clone(), via: None, dev: Some("eth0".into()) });

    let r =
        route("route add fc00:9::/64 encap seg6 mode inline segs 2001:db8:0:1::,2001:db8:0:2:: csid replace hmac 3");
    let RouteKind::Seg6 { encap, .. } = r.kind else { panic!() };
    assert_eq!((encap.csid, encap.hmac), (repl(48, 32), Some(3)));
    let r = route("route add fc00:9::/64 encap seg6 mode encap.red csid replace nflen 16 lblen 48 segs 2001:db8:1:1::,2001:db8:1:2::");
    let RouteKind::Seg6 { encap, .. } = r.kind else { panic!() };
    assert_eq!(encap.csid, repl(48, 16));
    let r = route("route add fc00:9::/64 encap seg6 mode l2encap csid next lblen 48 nflen 32 segs 2001:db8:b1:1:2::");
    let RouteKind::Seg6 { encap, .. } = r.kind else { panic!() };
    assert_eq!(encap.csid, next(48, 32));

    let a = sid("route add fc00::a/128 encap seg6local action End.B6.Encaps srh csid next lblen 16 segs fc00:1::,fc00:2:: dev eth0");
    let srh = a.params.srh.clone().unwrap();
    assert_eq!((srh.csid, srh.segs.len()), (next(16, 16), 2));
    assert_eq!(a.to_string(), "End.B6.Encaps srh csid next lblen 16 nflen 16 segs fc00:1::,fc00:2::");
    let again = sid(&format!("route add fc00::a/128 encap seg6local action {a} dev eth0"));
    assert_eq!(again.params, a.params);
}

/// `parse_lines`: each line one command, with the spec's index kept across them (a
/// batch, the merge of mirrored routes); line numbers are the lines' places; with
/// `keep_going` a refused line is left out and reported, without it the first error
/// ends the run.
#[test]
fn parse_lines_applies_each_line() {
    let lines = [
        "ip -6 addr add fc00::1/64 dev eth0",
        "",
        "# a comment",
        "route add fc00:1::/64 via fc00::2 dev eth0",
        "route add fc00:1::/64 via fc00::3 dev eth0",
        "route add fc00:2::/64 via fc00::2 dev eth0",
        "route del fc00:1::/64",
        "route add fc00:1::/64 via fc00::4 dev eth0",
    ];
    let mut spec = RouterSpec::default();
    let (n, errors) = sr6_config::parse_lines(lines, "k", &mut spec, true);
    assert_eq!(n, 5);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].to_string().starts_with("k:5:"), "{}", errors[0]);
    assert!(errors[0].to_string().contains("already exists"), "{}", errors[0]);
    let routes: Vec<(String, usize)> = spec.routes.iter().map(|r| (format!("{:?}", r.kind), r.line)).collect();
    assert_eq!(routes.len(), 2);
    assert_eq!(routes[0].1, 6, "fc00:2::/64 from line 6");
    assert!(routes[1].0.contains("fc00::4") && routes[1].1 == 8, "{routes:?}");
    let mut strict = RouterSpec::default();
    let (n, errors) = sr6_config::parse_lines(lines, "k", &mut strict, false);
    assert_eq!((n, errors.len()), (2, 1), "stops at line 5");
    assert_eq!(strict.routes.len(), 1);
}
