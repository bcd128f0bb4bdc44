//! `encap gtp`: plain GTP-U tunnels (docs/config.md "`encap gtp`"), hand-written
//! expectations per line and per error (line, column, expected); the packets are
//! checked against scapy in tests/oracle/test_gtp_tunnel.py.

use std::net::IpAddr;

use sr6_core::spec::{GtpTunnel, RouteKind};

const BASE: &str = "ip addr add 10.0.1.1/24 dev eth0\nip addr add 10.0.12.1/24 dev eth1\n";

fn kind(line: &str) -> RouteKind {
    let s = sr6_config::parse_config(&format!("{BASE}{line}\n"), "r.conf").unwrap_or_else(|e| panic!("{e}"));
    s.routes.last().unwrap().kind.clone()
}

fn err(line: &str) -> (usize, String) {
    let e = sr6_config::parse_config(&format!("{line}\n"), "r.conf").unwrap_err();
    (e.col, e.to_string())
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn encap_and_decap_lines() {
    let k = kind("ip route add 198.18.0.0/16 encap gtp qfi 9 src 10.0.12.1 dst 10.2.0.77 teid 0xffffffff dev eth1");
    let tunnel = GtpTunnel::Encap { teid: u32::MAX, dst: ip("10.2.0.77"), src: ip("10.0.12.1"), qfi: Some(9) };
    assert_eq!(k, RouteKind::Gtp { tunnel, via: None, dev: Some("eth1".into()) });
    // `table` right after `decap` is the decap's; after `dev`, the route's.
    let s = sr6_config::parse_config(
        &format!("{BASE}ip route add 192.0.2.1/32 encap gtp decap table 100 dev eth0 table 7\n"),
        "r.conf",
    )
    .unwrap();
    let r = &s.routes[0];
    assert_eq!(
        (r.table, &r.kind),
        (7, &RouteKind::Gtp { tunnel: GtpTunnel::Decap { table: Some(100) }, via: None, dev: Some("eth0".into()) })
    );
}

#[test]
fn errors_point_at_the_word() {
    let cases: &[(&str, &str, &str)] = &[
        ("ip route add 10.9.0.0/16 encap gtp teid 1 dst 10.2.0.77 src fc00::1 dev eth1", "fc00::1", "is IPv6 but dst"),
        ("ip route add 10.9.0.0/16 encap gtp dst 10.2.0.77 src 10.0.12.1 dev eth1", "gtp", "needs teid T"),
        ("ip route add 10.9.0.0/16 encap gtp teid 1 src 10.0.12.1 dev eth1", "gtp", "needs dst A"),
        ("ip route add 10.9.0.0/16 encap gtp teid 1 dst 10.2.0.77 dev eth1", "gtp", "needs src B"),
        (
            "ip route add 10.9.0.0/16 encap gtp teid 4294967296 dst 10.2.0.77 src 10.0.12.1 dev eth1",
            "4294967296",
            "out of range",
        ),
        ("ip route add 10.9.0.0/16 encap gtp teid 1 dst 10.2.0.77 src 10.0.12.1 qfi 64 dev eth1", "64", "6 bits"),
        ("ip route add 10.9.0.0/16 encap gtp teid 1 dst 10.2.0.77 src 10.0.12.1 decap dev eth1", "decap", "goes alone"),
        ("ip route add 192.0.2.1/32 encap gtp decap qfi 1 dev eth0", "qfi", "not `decap`"),
        ("ip route add 192.0.2.1/32 encap gtp decap via 10.0.1.2 dev eth0", "via", "takes no `via`"),
        ("ip route add 192.0.2.1/32 encap gtpx decap dev eth0", "gtpx", "seg6, seg6local, gtp or bpf"),
        ("ip -6 route add fc00::1/128 encap seg6local action GTP-U.Decap dev eth0", "GTP-U.Decap", "encap gtp decap"),
    ];
    for (line, word, why) in cases {
        let (col, e) = err(line);
        let at = line.find(&format!(" {word}")).map_or(0, |i| i + 2);
        assert_eq!(col, at, "{line}: {e}");
        assert!(e.contains(why), "{line}: {e}");
    }
}

/// The examples of docs/config.md's `encap gtp` section, verbatim: they parse and
/// build; and the error it quotes.
#[test]
fn documented_examples() {
    let doc = include_str!("../../../docs/config.md");
    let sec = &doc[doc.find("### `encap gtp`: GTP-U tunnels").unwrap()..];
    let block = &sec[sec.find("```\n").unwrap() + 4..];
    let block = &block[block.find("```\n").unwrap() + 4..];
    let block = &block[block.find("```\n").unwrap() + 4..];
    let block = &block[..block.find("```").unwrap()];
    assert!(block.starts_with("ip route add 198.18.0.0/16 encap gtp"), "{block}");
    let s = sr6_config::parse_config(&format!("{BASE}ip -6 addr add fc00:12::1/64 dev eth1\n{block}"), "r.conf")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.routes.len(), 5);
    let (t, _) = sr6_core::tables::Tables::build(&s).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.gtp_encaps.len(), 3);
    assert_eq!(t.sids.iter().filter(|s| s.behaviour.keyword == "GTP-U.Decap").count(), 2);
    let quoted = "ip route add 198.18.0.0/16 encap gtp teid 7 dst 10.2.0.77 src fc00:12::1 dev eth1";
    let (_, e) = err(quoted);
    let flat = sec.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&e), "{e}");
}
