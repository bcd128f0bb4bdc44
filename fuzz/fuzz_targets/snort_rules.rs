//! The IDS's Snort-rule parser and matcher on arbitrary text: the input (lossily
//! decoded as UTF-8) is parsed as a rules file; a rule set that parses is compiled into
//! the matching engine and run on fixed packets — among them one whose payload is the
//! input itself, so rules' contents are found and `offset`, `depth`, `distance`,
//! `within`, `nocase` and negation are exercised with arbitrary values. A rejected file
//! must name a line and column inside the input; nothing may panic.
#![no_main]

use std::net::{IpAddr, Ipv6Addr};

use libfuzzer_sys::fuzz_target;
use sr6_core::ids::engine::{self, Engine, Scratch};
use sr6_core::ids::rule::parse_rules;
use sr6_core::ids::view::{View, L4};

/// Payloads every parsed rule set is run on (besides the input itself).
const PAYLOADS: &[&[u8]] = &[
    b"",
    b"GET /index.html HTTP/1.1\r\nHost: example.com\r\nUser-Agent: curl/8.0\r\n\r\n",
    b"\x00\x01\x02\x03\xff\xfe attack attack ATTACK |41 42| evil\x90\x90\x90\x90",
    b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let rules = match parse_rules(&src) {
        Ok(r) => r,
        Err(e) => {
            let lines = src.split('\n').count();
            assert!(e.line >= 1 && e.line <= lines + 1, "error line {} of {lines}: {e}", e.line);
            assert!(e.col >= 1, "error column 0: {e}");
            assert!(!e.message.is_empty());
            return;
        }
    };
    let Ok(engine) = Engine::build(&rules) else { return };
    let mut scratch = Scratch::new(rules.len());
    let a = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1));
    let b = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2));
    let views = [
        (Some(6), L4::Tcp, Some((1234, 80))),
        (Some(17), L4::Udp, Some((53, 5353))),
        (Some(58), L4::Icmp, None),
        (Some(47), L4::Other, None),
        (None, L4::Other, None),
    ];
    for payload in PAYLOADS.iter().copied().chain([data]) {
        for (i, &(proto, l4, ports)) in views.iter().enumerate() {
            let (src, dst) = if i % 2 == 0 { (a, b) } else { (b, a) };
            let v = View {
                src,
                dst,
                proto,
                l4,
                ports,
                payload,
                outer: (Ipv6Addr::LOCALHOST, Ipv6Addr::UNSPECIFIED),
                sid: (i == 1).then_some(Ipv6Addr::LOCALHOST),
            };
            assert!(engine.candidates(payload, &mut scratch), "scratch sized for the rule set");
            assert!(scratch.hits.iter().all(|&h| (h as usize) < rules.len()));
            // The candidates are a superset: a rule the automaton did not pick cannot match.
            for (n, r) in rules.iter().enumerate() {
                if engine::matches(r, &v) {
                    assert!(scratch.hits.contains(&(n as u32)), "rule {n} matches but is not a candidate");
                }
            }
        }
    }
});
