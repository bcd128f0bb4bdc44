//! The parser, the view and the engine, by hand and with proptest.

use super::engine::{self, Engine, Scratch};
use super::rule::{parse_rules, Action, Content, Net, Proto};
use super::view::{self, L4};
use proptest::prelude::*;
use std::net::IpAddr;

fn rule(s: &str) -> super::rule::Rule {
    parse_rules(s).unwrap_or_else(|e| panic!("{s}: {e}")).remove(0)
}

fn err(s: &str) -> String {
    parse_rules(s).expect_err(s).to_string()
}

#[test]
fn parses_header_and_options() {
    let r = rule(
        r#"drop tcp [10.0.0.0/8,!10.1.1.1] !1024: <> fc00::/16 [80,443,8000:8080] (msg:"a \"b\"\; c"; content:"GET"; nocase; offset:2; depth:10; content:!"|0d 0a|x"; distance:1; within:5; sid:7; rev:2; classtype:web;)"#,
    );
    assert_eq!((r.action, r.proto, r.bidir, r.sid, r.rev), (Action::Drop, Proto::Tcp, true, 7, 2));
    assert_eq!(r.src.pos, vec![Net::V4(0x0a00_0000, 8)]);
    assert_eq!(r.src.neg, vec![Net::V4(0x0a01_0101, 32)]);
    assert_eq!(r.sport.neg, vec![(1024, 65535)]);
    assert_eq!(r.dport.pos, vec![(80, 80), (443, 443), (8000, 8080)]);
    assert_eq!(r.msg, "a \"b\"; c");
    assert_eq!(
        r.contents,
        vec![
            Content { bytes: b"GET".to_vec(), nocase: true, offset: Some(2), depth: Some(10), ..Content::default() },
            Content { bytes: b"\r\nx".to_vec(), neg: true, distance: Some(1), within: Some(5), ..Content::default() },
        ]
    );
    // Host bits cleared, comments and blank lines skipped.
    let rs = parse_rules("# c\n\n  alert ip fc00::1:2/112 any -> any any (sid:1;) # trailing\n").unwrap();
    assert_eq!(rs[0].src.pos, vec![Net::V6(0xfc00 << 112 | 0x1_0000, 112)]);
    assert_eq!(rs[0].line, 3);
}

#[test]
fn errors_say_where_and_what() {
    assert_eq!(
        err("alrt ip any any -> any any (sid:1;)"),
        "1:1: unknown action `alrt`: expected an action: alert, drop or pass"
    );
    assert!(err("alert ip any any -> any any (sid:1; foo:2;)").starts_with("1:37: unknown option `foo`"));
    assert!(err("alert udp 10.0.0.0/33 any -> any any (sid:1;)").starts_with("1:11: `10.0.0.0/33`"));
    assert!(err("alert udp [1.2.3.4,!x] any -> any any (sid:1;)").starts_with("1:21: `x`"));
    assert!(err("alert udp any 70000 -> any any (sid:1;)").starts_with("1:15:"));
    assert!(err("alert udp any any => any any (sid:1;)").starts_with("1:19: unexpected `=>`"));
    assert!(err("alert ip any 80 -> any any (sid:1;)").contains("ports apply to tcp and udp"));
    assert!(err("alert ip any any -> any any (msg:\"x\";)").contains("no `sid`"));
    assert!(err("alert ip any any -> any any (nocase; sid:1;)").contains("modifies a content"));
    assert!(err("alert ip any any -> any any (content:\"abc\"; depth:2; sid:1;)").contains("shorter than the content"));
    assert!(err("alert ip any any -> any any (content:\"|4|\"; sid:1;)").contains("odd number of hex digits"));
    assert!(err("alert ip any any -> any any (content:\"a\"; offset:1; distance:2; sid:1;)").contains("absolute"));
    assert!(err("alert ip any any -> any any (content:\"a\"; sid:1;").contains("expected `)`"));
    assert!(err("alert ip $HOME_NET any -> any any (sid:1;)").contains("variables"));
    assert!(err("alert ip any any -> any any (sid:1;)\nalert ip any any -> any any (sid:1;)")
        .starts_with("2:1: sid 1 is already used by the rule on line 1"));
}

/// An IPv6 packet (`nh`, `rest`) from `src` to `dst`.
fn ipv6(src: &str, dst: &str, nh: u8, rest: &[u8]) -> Vec<u8> {
    let mut v = vec![0u8; 40];
    v[0] = 0x60;
    v[4..6].copy_from_slice(&(rest.len() as u16).to_be_bytes());
    v[6] = nh;
    v[7] = 64;
    v[8..24].copy_from_slice(&src.parse::<std::net::Ipv6Addr>().unwrap().octets());
    v[24..40].copy_from_slice(&dst.parse::<std::net::Ipv6Addr>().unwrap().octets());
    v.extend_from_slice(rest);
    v
}

fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&sport.to_be_bytes());
    v.extend_from_slice(&dport.to_be_bytes());
    v.extend_from_slice(&(8 + payload.len() as u16).to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(payload);
    v
}

fn srh(nh: u8, segs: &[&str]) -> Vec<u8> {
    let n = segs.len() as u8;
    let mut v = vec![nh, 2 * n, 4, n - 1, n - 1, 0, 0, 0];
    for s in segs {
        v.extend_from_slice(&s.parse::<std::net::Ipv6Addr>().unwrap().octets());
    }
    v
}

#[test]
fn views_the_inner_packet() {
    let inner = ipv6("fc00:a::1", "fc00:b::2", 17, &udp(1000, 53, b"hello"));
    let mut rest = srh(41, &["fc00:3::1", "fc00:2::1"]);
    rest.extend_from_slice(&inner);
    let d = ipv6("fc00:1::2", "fc00:2::1", 43, &rest);
    let v = view::of(&d).unwrap();
    assert_eq!(
        (v.src.to_string(), v.dst.to_string(), v.l4, v.ports),
        ("fc00:a::1".into(), "fc00:b::2".into(), L4::Udp, Some((1000, 53)))
    );
    assert_eq!((v.payload, v.sid.map(|s| s.to_string())), (&b"hello"[..], Some("fc00:2::1".into())));
    // Inserted SRH: the last segment is the destination.
    let mut rest = srh(17, &["fc00:9::9", "fc00:2::1"]);
    rest.extend_from_slice(&udp(1, 2, b"x"));
    let d = ipv6("fc00:1::2", "fc00:2::1", 43, &rest);
    let v = view::of(&d).unwrap();
    assert_eq!((v.dst.to_string(), v.ports, v.payload), ("fc00:9::9".into(), Some((1, 2)), &b"x"[..]));
    // IPv4 inside (no SRH: H.Encaps.Red with one segment).
    let mut v4 = vec![0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 1, 0, 1, 10, 2, 0, 2];
    v4.extend_from_slice(&udp(7, 9, b""));
    let d = ipv6("fc00:1::2", "fc00:2::1", 4, &v4);
    let v = view::of(&d).unwrap();
    assert_eq!((v.src, v.dst, v.ports), (IpAddr::from([10, 1, 0, 1]), IpAddr::from([10, 2, 0, 2]), Some((7, 9))));
    // An inner header cut short: malformed.
    let d = ipv6("fc00:1::2", "fc00:2::1", 41, &[0x60, 0, 0]);
    assert!(view::of(&d).is_err());
}

/// Which of `rules` match `d`, by sid, through the engine's candidates.
fn sids(rules: &str, d: &[u8]) -> Vec<u32> {
    let rs = parse_rules(rules).unwrap();
    let e = Engine::build(&rs).unwrap();
    let mut s = Scratch::new(rs.len());
    let v = view::of(d).unwrap();
    assert!(e.candidates(v.payload, &mut s));
    s.hits.iter().map(|&i| &rs[i as usize]).filter(|r| engine::matches(r, &v)).map(|r| r.sid).collect()
}

#[test]
fn contents_and_modifiers() {
    let d = ipv6("fc00:a::1", "fc00:b::2", 17, &udp(1000, 53, b"xxGET /admin HTTP"));
    let rules = r#"
alert udp any any -> any 53 (content:"GET"; sid:1;)
alert udp any any -> any 53 (content:"get"; sid:2;)
alert udp any any -> any 53 (content:"get"; nocase; sid:3;)
alert udp any any -> any 53 (content:"GET"; offset:3; sid:4;)
alert udp any any -> any 53 (content:"GET"; depth:4; sid:5;)
alert udp any any -> any 53 (content:"GET"; depth:5; sid:6;)
alert udp any any -> any 53 (content:"GET"; content:"admin"; distance:3; within:5; sid:7;)
alert udp any any -> any 53 (content:"GET"; content:"admin"; distance:0; within:7; sid:8;)
alert udp any any -> any 53 (content:"GET"; content:!"root"; sid:9;)
alert udp any any -> any 53 (content:"GET"; content:!"admin"; sid:10;)
alert udp any any -> any 54 (content:"GET"; sid:11;)
alert udp any 1000 <> any 1:100 (content:"|47 45|T"; sid:12;)
alert udp any 53 <> any 1000 (sid:13;)
alert udp any 53 -> any 1000 (sid:14;)
alert tcp any any -> any any (sid:15;)
alert ip fc00:a::/64 any -> ![fc00:b::2] any (sid:16;)
alert ip [fc00:a::/64,!fc00:a::1] any -> any any (sid:17;)
alert ip 10.0.0.0/8 any -> any any (sid:18;)
alert ip !10.0.0.0/8 any -> any any (sid:19;)
"#;
    assert_eq!(sids(rules, &d), vec![1, 3, 6, 8, 9, 12, 13, 19]);
}

#[test]
fn relative_contents_retry_earlier_matches() {
    // The first "a" is not followed by "b" within 1 byte; the second is.
    let d = ipv6("fc00:a::1", "fc00:b::2", 17, &udp(1, 2, b"a..ab"));
    let r = "alert udp any any -> any any (content:\"a\"; content:\"b\"; distance:0; within:1; sid:1;)";
    assert_eq!(sids(r, &d), vec![1]);
}

proptest! {
    #[test]
    fn parser_never_panics(b in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_rules(&String::from_utf8_lossy(&b));
    }

    #[test]
    fn parser_never_panics_on_rule_like_text(s in r#"(alert|drop|pass|x) (ip|udp|tcp) [\[\]!,0-9a-f.:/any ]{0,20} [0-9:!\[\],any]{0,8} (->|<>) any any \(([a-z]{0,8}(:[!"|0-9a-f; \\]{0,10})?;){0,4}\)?"#) {
        let _ = parse_rules(&s);
    }

    #[test]
    fn engine_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200)) {
        let rs = parse_rules(r#"alert ip any any -> any any (content:"a"; content:"b"; distance:-3; within:4; content:!"c"; sid:1;)
alert udp any any -> any any (sid:2;)"#).unwrap();
        let e = Engine::build(&rs).unwrap();
        let mut s = Scratch::new(rs.len());
        if let Ok(v) = view::of(&b) {
            prop_assert!(e.candidates(v.payload, &mut s));
            for &i in &s.hits {
                let _ = engine::matches(&rs[i as usize], &v);
            }
        }
    }
}
