//! `ip6tables -A|-I|-P|-N`: every option of a rule (the `-m srh` ones of Linux's
//! ip6t_srh, `!` where ip6tables puts it), the SEG6 and REJECT targets, chains and
//! their order, the write-back (`ip6tables -S` form), and the errors with their
//! column and what was expected.

use std::net::Ipv6Addr;

use sr6_config::{parse_line, parse_str, ConfigError};
use sr6_core::firewall::spec::{AddrMatch, FwRule, FwTarget, Neg, Seg6Action};
use sr6_core::spec::{RouterSpec, SysctlSpec};

fn ok(src: &str) -> RouterSpec {
    parse_str(src, "t.conf").unwrap_or_else(|e| panic!("{src:?}: {e}"))
}

/// The error of the last line of `src` is at the column of the last `needle` in it.
fn err_at(src: &str, needle: &str) -> ConfigError {
    let e = match parse_str(src, "t.conf") {
        Ok(s) => panic!("{src:?} parsed: {:?}", s.firewall),
        Err(e) => e,
    };
    let last = src.lines().last().unwrap();
    let line = src.lines().count();
    assert_eq!((e.line, e.col), (line, last.rfind(needle).unwrap() + 1), "{src:?}: {e}");
    e
}

fn rules(s: &RouterSpec, chain: &str) -> Vec<FwRule> {
    s.firewall.chain(chain).unwrap().rules.clone()
}

fn addr(a: &str, len: u32, inv: bool) -> AddrMatch {
    let m = if len == 0 { 0 } else { u128::MAX << (128 - len) };
    AddrMatch::new(a.parse::<Ipv6Addr>().unwrap(), Ipv6Addr::from(m), inv)
}

#[test]
fn every_option_and_negation() {
    let line = "ip6tables -A FORWARD ! -s fc00:a::/64 -d fc00:2::1 -i eth0 ! -o eth+ -p udp --sport 1:1000 \
                ! --dport 53 -m srh --srh-next-hdr 41 ! --srh-hdr-len-eq 6 --srh-hdr-len-gt 2 --srh-hdr-len-lt 9 \
                --srh-segs-left-eq 1 ! --srh-segs-left-gt 4 --srh-segs-left-lt 3 --srh-last-entry-eq 2 \
                --srh-last-entry-gt 0 ! --srh-last-entry-lt 1 ! --srh-tag 7 --srh-psid fc00:a::/64 \
                ! --srh-nsid fc00:3::1 --srh-lsid fc00:2::/ffff:ffff:: -j DROP";
    let s = ok(line);
    let r = &rules(&s, "FORWARD")[0];
    assert_eq!(r.line, 1);
    assert_eq!(r.target, FwTarget::Drop);
    assert_eq!(r.m.src, Some(addr("fc00:a::", 64, true)));
    assert_eq!(r.m.dst, Some(addr("fc00:2::1", 128, false)));
    assert_eq!(r.m.iif, Some(Neg { v: "eth0".into(), inv: false }));
    assert_eq!(r.m.oif, Some(Neg { v: "eth+".into(), inv: true }));
    assert_eq!(r.m.proto, Some(Neg { v: 17, inv: false }));
    let p = r.m.ports.unwrap();
    assert_eq!(
        (p.proto, p.sport, p.dport),
        (17, Some(Neg { v: (1, 1000), inv: false }), Some(Neg { v: (53, 53), inv: true }))
    );
    let h = r.m.srh.as_ref().unwrap();
    assert_eq!(h.next_hdr, Some(Neg { v: 41, inv: false }));
    assert_eq!(
        h.hdr_len,
        [Some(Neg { v: 6, inv: true }), Some(Neg { v: 2, inv: false }), Some(Neg { v: 9, inv: false })]
    );
    assert_eq!(
        h.segs_left,
        [Some(Neg { v: 1, inv: false }), Some(Neg { v: 4, inv: true }), Some(Neg { v: 3, inv: false })]
    );
    assert_eq!(
        h.last_entry,
        [Some(Neg { v: 2, inv: false }), Some(Neg { v: 0, inv: false }), Some(Neg { v: 1, inv: true })]
    );
    assert_eq!(h.tag, Some(Neg { v: 7, inv: true }));
    assert_eq!(h.psid, Some(addr("fc00:a::", 64, false)));
    assert_eq!(h.nsid, Some(addr("fc00:3::1", 128, true)));
    assert_eq!(h.lsid, Some(addr("fc00:2::", 32, false)));
    // Written back as ip6tables -S does, and that parses to the same rule.
    let back = format!("ip6tables -A FORWARD{} {}", r.m, r.target);
    assert_eq!(rules(&ok(&back), "FORWARD")[0].m, r.m);
    assert!(
        back.contains(
            " ! -s fc00:a::/64 -d fc00:2::1/128 -i eth0 ! -o eth+ -p udp -m udp --sport 1:1000 ! --dport 53 -m srh"
        ),
        "{back}"
    );
}

#[test]
fn targets_chains_and_order() {
    let s = ok("ip6tables -N SERA\n\
                ip6tables -t filter -A INPUT -j SERA\n\
                ip6tables -A SERA -m srh --srh-tag 1 -j SEG6 --seg6-action go-next\n\
                ip6tables -A SERA -m srh --srh-tag 2 -j SEG6 --seg6-action seg6-skip-next\n\
                ip6tables -I SERA -j SEG6 --seg6-action eval-args\n\
                ip6tables -I SERA 3 -j SEG6 --seg6-action go-last\n\
                ip6tables -A SERA -j RETURN\n\
                ip6tables -A FORWARD -p tcp -m tcp --dport 22 -j REJECT\n\
                ip6tables -A FORWARD -j REJECT --reject-with adm-prohibited\n\
                ip6tables -P FORWARD DROP\n\
                sysctl -w net.ipv6.ip6t_seg6_args=16\n\
                sysctl -w net.ipv6.ip6t_seg6=1");
    let t: Vec<FwTarget> = rules(&s, "SERA").into_iter().map(|r| r.target).collect();
    assert_eq!(
        t,
        [
            FwTarget::Seg6(Seg6Action::EvalArgs),
            FwTarget::Seg6(Seg6Action::GoNext),
            FwTarget::Seg6(Seg6Action::GoLast),
            FwTarget::Seg6(Seg6Action::SkipNext),
            FwTarget::Return
        ]
    );
    assert_eq!(rules(&s, "INPUT")[0].target, FwTarget::Jump("SERA".into()));
    let f: Vec<FwTarget> = rules(&s, "FORWARD").into_iter().map(|r| r.target).collect();
    assert_eq!(f, [FwTarget::Reject(4), FwTarget::Reject(1)]);
    assert_eq!(s.firewall.chain("FORWARD").unwrap().policy, Some(false));
    assert_eq!(s.firewall.chain("SERA").unwrap().line, 1);
    assert!(s.sysctls.contains(&SysctlSpec::Ip6tSeg6Args { line: 11, bits: 16 }));
    assert!(s.sysctls.contains(&SysctlSpec::Ip6tSeg6 { line: 12, on: true }));
    assert!(!s.firewall.is_empty());
    assert!(ok("ip6tables -P INPUT ACCEPT").firewall.is_empty());
}

#[test]
fn a_control_line_is_all_or_nothing() {
    let mut s = ok("ip6tables -N A");
    let before = s.clone();
    assert!(parse_line("ip6tables -A A -j B", "ctl", 1, &mut s).is_err());
    assert_eq!(s, before);
    parse_line("ip6tables -A A -m srh --srh-tag 3 -j DROP", "ctl", 2, &mut s).unwrap();
    assert_eq!(rules(&s, "A").len(), 1);
}

#[test]
fn errors() {
    let cases: &[(&str, &str, &str)] = &[
        ("iptables -A INPUT -j DROP", "iptables", "ip6tables"),
        ("ip6tables -A OUTPUT -j DROP", "OUTPUT", "INPUT, FORWARD or a chain made with -N"),
        ("ip6tables -A INPUT -m srh --srh-tag 70000 -j DROP", "70000", "0 to 65535"),
        ("ip6tables -A INPUT -m srh --srh-segs-left-ge 1 -j DROP", "--srh-segs-left-ge", "--srh-next-hdr N"),
        ("ip6tables -A INPUT --srh-tag 1 -j DROP", "--srh-tag", "-m srh --srh-..."),
        ("ip6tables -A INPUT --dport 22 -j DROP", "--dport", "-p tcp|udp"),
        ("ip6tables -A INPUT -p tcp -m udp -j DROP", "udp", "-p udp -m udp"),
        ("ip6tables -A INPUT -s fc00::/129 -j DROP", "fc00::/129", "a prefix length from 0 to 128"),
        ("ip6tables -A INPUT -s 10.0.0.1 -j DROP", "10.0.0.1", "IPv6 address"),
        ("ip6tables -A INPUT -o eth1 -j DROP", "-o", "[!] -s"),
        ("ip6tables -A INPUT -j SEG6", "SEG6", "--seg6-action go-next"),
        ("ip6tables -A INPUT -j SEG6 --seg6-action jump", "jump", "go-next, skip-next"),
        ("ip6tables -A INPUT -j DROP --seg6-action go-next", "go-next", "-j SEG6"),
        ("ip6tables -A INPUT -j REJECT --reject-with tcp-reset", "tcp-reset", "icmp6-no-route"),
        ("ip6tables -A INPUT -j LOG", "LOG", "ACCEPT, DROP, REJECT"),
        ("ip6tables -A INPUT -j NOCHAIN", "NOCHAIN", "a chain made with -N"),
        ("ip6tables -A INPUT ! -j DROP", "-j", "an option that takes `!`"),
        ("ip6tables -A INPUT -s fc00::1 -s fc00::2 -j DROP", "-s", "`-s` at most once"),
        ("ip6tables -P SERA DROP", "SERA", "INPUT or FORWARD"),
        ("ip6tables -P INPUT REJECT", "REJECT", "ACCEPT or DROP"),
        ("ip6tables -N INPUT", "INPUT", "a new chain name"),
        ("ip6tables -I INPUT 3 -j DROP", "INPUT", "a position from 1 to 1"),
        ("ip6tables -D INPUT 1", "1", "a position from 1 to 0"),
        ("ip6tables -D INPUT -s fc00::1 -j DROP", "INPUT", "a rule as it was added"),
        ("ip6tables -X INPUT", "INPUT", "a chain made with -N"),
        ("ip6tables -F NOPE", "NOPE", "INPUT, FORWARD or a chain made with -N"),
        ("ip6tables -Z INPUT", "-Z", "sr6 ctl ip6tables -Z"),
        ("ip6tables -L", "-L", "-A CHAIN"),
        ("ip6tables -R INPUT 1 -j DROP", "1", "a position from 1 to 0"),
        ("ip6tables -A INPUT -j DROP\nip6tables -R INPUT 2 -j ACCEPT", "2", "a position from 1 to 1"),
        ("ip6tables -R INPUT x -j DROP", "x", "1 or more"),
        ("ip6tables -R INPUT 0 -j DROP", "0", "1 or more"),
        ("ip6tables -R NOPE 1 -j DROP", "NOPE", "INPUT, FORWARD or a chain made with -N"),
        ("ip6tables -N A\nip6tables -A A -j DROP\nip6tables -R A 1 -j A", "A", "another chain"),
        ("ip6tables -E INPUT X", "INPUT", "a chain made with -N"),
        ("ip6tables -N A\nip6tables -E A FORWARD", "FORWARD", "a new chain name"),
        ("ip6tables -N A\nip6tables -N B\nip6tables -E A B", "B", "a new chain name"),
        ("ip6tables -E NOPE X", "NOPE", "a chain made with -N"),
        ("ip6tables -N A\nip6tables -E A DROP", "DROP", "a chain name"),
        ("ip6tables -N A\nip6tables -E A B C", "C", "the end of the line"),
        ("ip6tables -t nat -A INPUT -j DROP", "nat", "filter"),
        ("sysctl -w net.ipv6.ip6t_seg6_args=129", "129", "an integer from 0 to 128"),
        ("sysctl -w net.ipv6.ip6t_seg6=2", "2", "an integer from 0 to 1"),
        ("ip6tables -A INPUT --inner-src fc00::1 -j DROP", "--inner-src", "-m srh"),
        ("ip6tables -A INPUT -m srh --inner-dst fc00::1 --inner-dst fc00::2 -j DROP", "--inner-dst", "at most once"),
    ];
    for (line, at, expected) in cases {
        let e = err_at(line, at);
        let exp = e.expected.clone().unwrap_or_default();
        assert!(exp.contains(expected), "{line}: {e} (expected to contain {expected:?})");
    }
    // A missing target: just past the last word.
    let e = parse_str("ip6tables -A INPUT -m srh", "t.conf").unwrap_err();
    assert_eq!((e.line, e.col), (1, 26));
    assert!(e.expected.unwrap().starts_with("-j ACCEPT"));
    // A chain that reaches itself through another: refused when the tables are built.
    let s = ok("ip6tables -N A\nip6tables -N B\nip6tables -A A -j B\nip6tables -A B -j A");
    assert_eq!(rules(&s, "B")[0].target, FwTarget::Jump("A".into()));
}

/// `-R` replaces one rule in place; `-E` renames a user chain and the jumps follow it.
#[test]
fn replace_and_rename() {
    let s = ok("ip6tables -A INPUT -s fc00::1 -j DROP\n\
                ip6tables -A INPUT -s fc00::2 -j DROP\n\
                ip6tables -A INPUT -s fc00::3 -j DROP\n\
                ip6tables -R INPUT 2 -d fc00::9 -j ACCEPT");
    let r = rules(&s, "INPUT");
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].m.src, Some(addr("fc00::1", 128, false)));
    assert_eq!((r[1].m.src, r[1].m.dst, &r[1].target), (None, Some(addr("fc00::9", 128, false)), &FwTarget::Accept));
    assert_eq!(r[2].m.src, Some(addr("fc00::3", 128, false)));

    let s = ok("ip6tables -N OLD\n\
                ip6tables -A OLD -j DROP\n\
                ip6tables -A INPUT -j OLD\n\
                ip6tables -A FORWARD -s fc00::1 -j OLD\n\
                ip6tables -E OLD NEW\n\
                ip6tables -A NEW -j RETURN");
    assert!(s.firewall.chain("OLD").is_none());
    let new = s.firewall.chain("NEW").unwrap();
    assert_eq!((new.line, new.rules.len()), (1, 2));
    assert_eq!(rules(&s, "INPUT")[0].target, FwTarget::Jump("NEW".into()));
    assert_eq!(rules(&s, "FORWARD")[0].target, FwTarget::Jump("NEW".into()));
    // The old name is free again, and a control line that fails changes nothing.
    let mut s2 = s.clone();
    parse_line("ip6tables -N OLD", "ctl", 1, &mut s2).unwrap();
    let before = s2.clone();
    assert!(parse_line("ip6tables -E NEW OLD", "ctl", 2, &mut s2).is_err());
    assert!(parse_line("ip6tables -R INPUT 2 -j DROP", "ctl", 3, &mut s2).is_err());
    assert_eq!(s2, before);
}

/// The table build: a loop of user chains is refused; with any rule (or a DROP
/// policy) the fast path takes no frame, and the general path gives the same output.
#[test]
fn tables_loop_and_fast_path() {
    use sr6_core::packet::{PacketBuf, Verdict};
    use sr6_core::pipeline::Worker;
    use sr6_core::tables::Tables;

    let looped = ok("ip6tables -N A\nip6tables -N B\nip6tables -A A -j B\nip6tables -A B -j A");
    let e = Tables::build(&looped).unwrap_err();
    assert!(e.message.contains("loop"), "{}", e.message);

    let base = "ip link set eth0 address 02:00:00:00:00:01\n\
                ip link set eth1 address 02:00:00:00:00:02\n\
                ip -6 addr add fc00:1::1/64 dev eth0\n\
                ip -6 addr add fc00:12::1/64 dev eth1\n\
                ip -6 neigh add fc00:12::2 lladdr 02:aa:00:00:00:02 dev eth1\n\
                ip -6 route add fc00:2::/48 via fc00:12::2 dev eth1\n\
                sysctl -w net.ipv6.conf.all.forwarding=1\n";
    // Ethernet + IPv6 (no next header, 8 bytes after it) from fc00:a::1 to fc00:2::5, hop limit 64.
    let mut frame = vec![2, 0, 0, 0, 0, 1, 2, 0xaa, 0, 0, 0, 1, 0x86, 0xdd, 0x60, 0, 0, 0, 0, 8, 59, 64];
    frame.extend_from_slice(&"fc00:a::1".parse::<Ipv6Addr>().unwrap().octets());
    frame.extend_from_slice(&"fc00:2::5".parse::<Ipv6Addr>().unwrap().octets());
    frame.extend_from_slice(&[7; 8]);
    let run = |cfg: &str| {
        let (t, _) = Tables::build(&ok(cfg)).unwrap();
        let mut w = Worker::new(&t);
        let mut p = PacketBuf::new();
        assert!(p.load(&frame, 0));
        w.process(&t, &mut p);
        (p.verdict, p.data().to_vec(), w.fast_hits)
    };
    let plain = run(base);
    assert_eq!((plain.0, plain.2), (Verdict::Tx(1), 1));
    let with_rule = run(&format!("{base}ip6tables -A FORWARD -m srh -j DROP\n"));
    assert_eq!(with_rule, (plain.0, plain.1.clone(), 0));
    let dropped = run(&format!("{base}ip6tables -P FORWARD DROP\n"));
    assert_eq!((dropped.0, dropped.2), (Verdict::Drop(sr6_core::drop::DropReason::Firewall), 0));
}

/// The example of docs/config.md's firewall section, verbatim.
#[test]
fn documented_example() {
    let doc = include_str!("../../../docs/config.md");
    let block = &doc[doc.find("## `ip6tables`: the firewall").unwrap()..];
    let block = &block[block.find("```\n").unwrap() + 4..];
    let block = &block[block.find("```\n").unwrap() + 4..];
    let block = &block[block.find("```\n").unwrap() + 4..];
    let block = &block[..block.find("```").unwrap()];
    assert!(block.starts_with("ip6tables -N SERA"), "{block}");
    let s = ok(block);
    assert_eq!(rules(&s, "SERA")[0].target, FwTarget::Seg6(Seg6Action::SkipNext));
    assert_eq!(rules(&s, "FORWARD").len(), 1);
    let (t, _) = sr6_core::tables::Tables::build(&s).unwrap();
    assert!(t.firewall.is_some());
}

/// `-D`, `-F` and `-X` work on the rules added before them, line by line, as ip6tables
/// does on a running firewall.
#[test]
fn delete_flush_and_delete_chain() {
    let s = ok("ip6tables -A INPUT -s fc00::1 -j DROP\n\
                ip6tables -A INPUT -s fc00::2 -j DROP\n\
                ip6tables -A INPUT -s fc00::3 -j DROP\n\
                ip6tables -D INPUT 1\n\
                ip6tables -D INPUT -s fc00::3/128 -j DROP\n\
                ip6tables -N X\n\
                ip6tables -A X -p udp -j ACCEPT\n\
                ip6tables -A FORWARD -j X\n\
                ip6tables -A FORWARD -p tcp -j DROP");
    let srcs: Vec<String> = rules(&s, "INPUT").iter().map(|r| r.m.src.unwrap().to_string()).collect();
    assert_eq!(srcs, ["fc00::2/128"]);
    assert_eq!(rules(&s, "FORWARD").len(), 2);
    // A chain something jumps to stays; emptied and unreferenced, it goes.
    let e = err_at("ip6tables -N X\nip6tables -A FORWARD -j X\nip6tables -X X", "X");
    assert!(e.message.contains("jumped to from FORWARD"), "{e}");
    let e = err_at("ip6tables -N X\nip6tables -A X -j DROP\nip6tables -X X", "X");
    assert!(e.message.contains("not empty"), "{e}");
    let s = ok("ip6tables -N X\n\
                ip6tables -A X -j DROP\n\
                ip6tables -A FORWARD -j X\n\
                ip6tables -A INPUT -j DROP\n\
                ip6tables -F\n\
                ip6tables -X X");
    assert!(s.firewall.chain("X").is_none());
    assert!(rules(&s, "INPUT").is_empty() && rules(&s, "FORWARD").is_empty());
    let s = ok("ip6tables -A INPUT -j DROP\nip6tables -A FORWARD -j DROP\nip6tables -F INPUT");
    assert!(rules(&s, "INPUT").is_empty() && rules(&s, "FORWARD").len() == 1);
}
