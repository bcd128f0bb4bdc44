//! A realistic configuration file parses into the expected spec.

use std::net::{IpAddr, Ipv6Addr};

use sr6_config::{parse_file, parse_str};
use sr6_core::spec::*;

const SRC: &str = include_str!("data/router.conf");

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

fn spec() -> RouterSpec {
    parse_str(SRC, "router.conf").unwrap_or_else(|e| panic!("{e}"))
}

fn line_of(needle: &str) -> usize {
    SRC.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle}")) + 1
}

fn route(s: &RouterSpec, p: &str) -> RouteSpec {
    let (a, l) = p.split_once('/').unwrap();
    let prefix = match a.parse::<IpAddr>().unwrap() {
        IpAddr::V6(a) => Prefix::V6(a, l.parse().unwrap()),
        IpAddr::V4(a) => Prefix::V4(a, l.parse().unwrap()),
    };
    s.routes.iter().find(|r| r.prefix == prefix).unwrap_or_else(|| panic!("no route {p}")).clone()
}

fn sid(s: &RouterSpec, p: &str) -> (SidAction, Option<String>) {
    match route(s, p).kind {
        RouteKind::Seg6Local { action, dev } => (*action, dev.map(|d| d.to_string())),
        k => panic!("{p}: {k:?}"),
    }
}

fn head(s: &RouterSpec, p: &str) -> Seg6Encap {
    match route(s, p).kind {
        RouteKind::Seg6 { encap, .. } => encap,
        k => panic!("{p}: {k:?}"),
    }
}

#[test]
fn the_file_from_disk_equals_the_string() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/router.conf");
    assert_eq!(parse_file(&path).unwrap(), spec());
}

#[test]
fn globals() {
    let s = spec();
    assert_eq!(s.devices, vec!["eth0", "eth1", "eth2", "eth3"]);
    assert_eq!(s.links.len(), 2);
    assert_eq!(s.links[0], LinkSpec { line: line_of("eth0 address"), dev: "eth0".into(), mac: [2, 0, 0, 0, 0, 1] });
    assert_eq!(s.addrs.len(), 4);
    assert_eq!(s.addrs[3].addr, IpAddr::V4("10.0.3.1".parse().unwrap()));
    assert_eq!(s.neighs.len(), 4);
    assert_eq!(s.neighs[2].dev, "eth2");
    assert_eq!(s.tunsrc, Some((v6("fc00:1::1"), line_of("tunsrc"))));
    assert_eq!(s.hmac_keys.len(), 2);
    assert_eq!(s.hmac_keys[0].secret, b"a shared secret");
    assert_eq!(s.hmac_keys[0].alg, HmacAlg::Sha256);
    assert_eq!(s.hmac_keys[1].alg, HmacAlg::Sha1);
    assert_eq!(s.sysctls.len(), 7);
    assert_eq!(
        s.sysctls[0],
        SysctlSpec::Forwarding6 { line: line_of("all.forwarding"), dev: DevSel::All, value: true }
    );
    assert_eq!(
        s.sysctls[6],
        SysctlSpec::RequireHmac { line: line_of("eth1.seg6_require_hmac"), dev: DevSel::Dev("eth1".into()), value: 1 }
    );
}

#[test]
fn plain_routes() {
    let s = spec();
    assert_eq!(s.routes.len(), 5 + 14 + 7);
    assert_eq!(
        route(&s, "::/0").kind,
        RouteKind::Forward { via: Some(IpAddr::V6(v6("fc00:1::2"))), dev: Some("eth0".into()) }
    );
    assert_eq!(route(&s, "fc00:dead::/32").kind, RouteKind::Blackhole);
    let r = route(&s, "fc00:beef::/32");
    assert_eq!((r.kind, r.table), (RouteKind::Unreachable, 100));
    assert!(matches!(route(&s, "10.20.0.0/16").kind, RouteKind::Forward { via: Some(IpAddr::V4(_)), .. }));
}

#[test]
fn local_sids() {
    let s = spec();
    let (a, dev) = sid(&s, "fc00:ff::1/128");
    assert_eq!((a.behaviour.keyword, dev.as_deref()), ("End", Some("eth0")));
    let (a, _) = sid(&s, "fc00:ff::2/128");
    assert_eq!(a.flavors, Flavors { psp: true, usp: true, usd: true, next_csid: None, replace_csid: None });
    assert!(a.count);
    let (a, _) = sid(&s, "fc00:ff::11/128");
    assert_eq!((a.behaviour.keyword, a.params.oif.as_deref()), ("End.X", Some("eth1")));
    assert!(a.flavors.psp);
    assert_eq!(sid(&s, "fc00:ff::20/128").0.params.table, Some(100));
    assert_eq!(sid(&s, "fc00:ff::30/128").0.params.oif.as_deref(), Some("eth3"));
    assert_eq!(sid(&s, "fc00:ff::40/128").0.params.nh6, Some(v6("fc00:3::2")));
    assert_eq!(sid(&s, "fc00:ff::41/128").0.params.nh4, Some("10.0.3.2".parse().unwrap()));
    assert_eq!(sid(&s, "fc00:ff::50/128").0.behaviour.keyword, "End.DT6");
    assert_eq!(sid(&s, "fc00:ff::51/128").0.params.vrftable, Some(200));
    assert_eq!(sid(&s, "fc00:ff::52/128").0.behaviour.keyword, "End.DT46");
    let b6 = sid(&s, "fc00:ff::60/128").0;
    assert_eq!(b6.behaviour.keyword, "End.B6");
    assert_eq!(b6.params.srh.unwrap().segs, vec![v6("fc00:a::1"), v6("fc00:b::1")]);
    let r = route(&s, "fc00:ff::61/128");
    assert_eq!(r.line, line_of("action End.B6.Encaps \\"));
    let b6e = sid(&s, "fc00:ff::61/128").0;
    assert_eq!(b6e.params.srh.as_ref().unwrap().hmac, Some(1));
    assert_eq!(b6e.params.srh.unwrap().segs.len(), 3);
    assert_eq!(sid(&s, "fc00:ff::62/128").0.behaviour.keyword, "End.B6.Encaps.Red");
}

#[test]
fn head_ends() {
    let s = spec();
    let modes: Vec<Seg6Mode> =
        ["fc00:100::/48", "fc00:101::/48", "fc00:102::/48", "fc00:103::/48", "fc00:104::/48", "fc00:105::/48"]
            .iter()
            .map(|p| head(&s, p).mode)
            .collect();
    assert_eq!(modes, Seg6Mode::ALL.to_vec());
    assert_eq!(head(&s, "fc00:102::/48").hmac, Some(2));
    assert_eq!(head(&s, "fc00:105::/48").segs.len(), 2);
    assert_eq!(head(&s, "10.100.0.0/16").mode, Seg6Mode::Encap);
}
