//! `nft add table|chain|rule`: the grammar of crates/config/src/nft.rs, its mapping onto
//! the firewall's chains, and its errors (file:line:col, nothing applied). What the
//! rules decide is checked against the kernel in tests/kernel/test_k_nft.py.

use sr6_config::parse_str;
use sr6_core::firewall::spec::{FwTarget, NftOp};

const BASE: &str = "nft add table ip6 t\n\
                    nft add chain ip6 t fw '{ type filter hook forward priority 0 ; policy drop ; }'\n\
                    nft add chain ip6 t in { type filter hook input priority filter \\; }\n";

#[test]
fn rules_go_to_the_chain_of_their_hook() {
    let src = format!(
        "{BASE}nft add rule ip6 t fw ip6 saddr fc00:a::/64 srh tag 7 srh sid[2] != fc00::1 rt seg-left > 0 counter accept\n\
         nft add rule ip6 t in meta l4proto udp udp dport 53-54 reject with icmpv6 type admin-prohibited\n\
         nft insert rule ip6 t fw iifname eth* drop\n"
    );
    let s = parse_str(&src, "t.conf").unwrap_or_else(|e| panic!("{e}"));
    let fw = s.firewall.chain("FORWARD").unwrap();
    assert_eq!(fw.policy, Some(false));
    assert_eq!(fw.rules.len(), 2);
    assert_eq!(fw.rules[0].m.iif.as_ref().unwrap().v, "eth+");
    let r = &fw.rules[1];
    assert_eq!(r.target, FwTarget::Accept);
    assert_eq!(r.m.src.unwrap().to_string(), "fc00:a::/64");
    let e: Vec<(u16, u8, NftOp, u128)> = r.m.exthdr.iter().map(|e| (e.offset, e.len, e.op, e.value)).collect();
    let sid = u128::from("fc00::1".parse::<std::net::Ipv6Addr>().unwrap());
    assert_eq!(e, [(6, 2, NftOp::Eq, 7), (24, 16, NftOp::Ne, sid), (3, 1, NftOp::Gt, 0)]);
    assert_eq!(
        r.nft.as_deref(),
        Some("nft add rule ip6 t fw ip6 saddr fc00:a::/64 srh tag 7 srh sid[2] != fc00::1 rt seg-left > 0 counter accept")
    );
    let i = &s.firewall.chain("INPUT").unwrap().rules[0];
    assert_eq!(i.target, FwTarget::Reject(1));
    assert_eq!(i.m.proto.unwrap().v, 17);
    assert_eq!(i.m.ports.unwrap().dport.unwrap().v, (53, 54));
}

#[test]
fn errors_name_the_place() {
    let cases = [
        ("nft add table ip t", "ip", "ip6"),
        ("nft add chain ip6 nope c '{ type filter hook input priority 0 ; }'", "nope", "nft add table"),
        (
            "nft add table ip6 t\nnft add chain ip6 t c '{ type filter hook output priority 0 ; }'",
            "c",
            "input or forward",
        ),
        ("nft add table ip6 t\nnft add rule ip6 t c drop", "c", "nft add chain"),
        ("nft list ruleset", "list", "add table"),
        ("nft add table ip6 t\nnft add chain ip6 t c", "c", "hook input|forward"),
    ];
    for (src, at, expected) in cases {
        let e = parse_str(src, "t.conf").map(|_| ()).unwrap_err();
        let last = src.lines().last().unwrap();
        assert_eq!(e.line, src.lines().count(), "{src}: {e}");
        assert!(e.col >= 1 && last.get(e.col - 1..).is_some_and(|s| s.starts_with(at) || at == "c"), "{src}: {e}");
        assert!(e.expected.clone().unwrap_or_default().contains(expected), "{src}: {e}");
    }
    for (rule, expected) in [
        ("srh tag 70000 drop", "0 to 65535"),
        ("srh sid[0] fc00::1 drop", "sid[1]"),
        ("srh sid[1] > fc00::1 drop", "== or !="),
        ("srh bogus 1 drop", "flags, last-entry, tag or sid[N]"),
        ("ip6 hoplimit 1 drop", "saddr or daddr"),
        ("log drop", "srh flags"),
        ("srh tag 7", "srh flags"),
        ("drop counter", "the end of the line"),
    ] {
        let src = format!("{BASE}nft add rule ip6 t fw {rule}");
        let e = parse_str(&src, "t.conf").map(|_| ()).unwrap_err();
        assert_eq!(e.line, 4, "{rule}: {e}");
        assert!(e.expected.clone().unwrap_or_default().contains(expected), "{rule}: {e}");
    }
}
