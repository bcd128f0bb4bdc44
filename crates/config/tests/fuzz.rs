//! Random input never panics the parser, and a failed `parse_line` changes nothing.

use proptest::prelude::*;
use sr6_config::{parse_line, parse_str};

const WORDS: &[&str] = &[
    "ip",
    "-6",
    "-4",
    "sudo",
    "route",
    "r",
    "add",
    "replace",
    "append",
    "addr",
    "neigh",
    "link",
    "set",
    "dev",
    "eth0",
    "via",
    "inet6",
    "inet",
    "table",
    "main",
    "local",
    "0",
    "1",
    "4294967296",
    "010",
    "0x1f",
    "default",
    "blackhole",
    "unreachable",
    "encap",
    "seg6",
    "seg6local",
    "mode",
    "encap.red",
    "inline",
    "inline.red",
    "l2encap",
    "segs",
    "hmac",
    "action",
    "End",
    "End.X",
    "End.T",
    "End.DX2",
    "End.DX4",
    "End.DX6",
    "End.DT4",
    "End.DT6",
    "End.DT46",
    "End.B6",
    "End.B6.Encaps",
    "End.B6.Encaps.Red",
    "nh6",
    "nh4",
    "oif",
    "vrftable",
    "srh",
    "flavors",
    "psp,usd",
    "usp",
    "count",
    "fc00::1",
    "fc00::/16",
    "fc00::1/64",
    "::/0",
    "10.0.0.0/8",
    "10.0.0.1",
    "fc00::1,fc00::2",
    ",",
    "lladdr",
    "02:00:00:00:00:01",
    "nud",
    "permanent",
    "sr",
    "tunsrc",
    "sha256",
    "secret",
    "\"",
    "'",
    "\\",
    "#",
    "sysctl",
    "-w",
    "net.ipv6.conf.all.seg6_enabled=1",
    "net.ipv6.conf.eth0.seg6_require_hmac=-1",
    "net.ipv4.ip_forward=",
    "=",
    "metric",
    "up",
    "address",
];

fn words() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..14).prop_map(|v| v.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn printable_lines_never_panic(s in "[ -~]{0,120}") {
        let _ = parse_str(&s, "p");
    }

    #[test]
    fn any_text_never_panics(s in "\\PC{0,80}(\n\\PC{0,80}){0,3}") {
        let _ = parse_str(&s, "p");
    }

    #[test]
    fn keyword_soup_never_panics(lines in prop::collection::vec(words(), 1..4)) {
        let src = lines.join("\n");
        let _ = parse_str(&src, "p");
    }

    #[test]
    fn errors_point_into_the_input(s in words()) {
        if let Err(e) = parse_str(&s, "p") {
            prop_assert_eq!(e.line, 1);
            prop_assert!(e.col >= 1 && e.col <= s.chars().count() + 1, "{} for {:?}", e, s);
            prop_assert!(!e.message.is_empty());
        }
    }

    #[test]
    fn failed_parse_line_changes_nothing(s in words()) {
        let mut spec = parse_str("ip -6 route add fc00::/16 dev eth0\nsr hmac set 1 sha1 k", "base").unwrap();
        let before = spec.clone();
        if parse_line(&s, "ctl", 1, &mut spec).is_err() {
            prop_assert_eq!(spec, before);
        }
    }
}
