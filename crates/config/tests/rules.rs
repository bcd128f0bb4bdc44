//! `ip rule add|del`: the selectors, the actions, the kernel's priorities and list
//! order, `rule del`'s matching, and the errors.

use std::net::{Ipv4Addr, Ipv6Addr};

use sr6_config::{parse_line, parse_str, ConfigError};
use sr6_core::spec::{Prefix, RouterSpec, RuleAction, RuleSpec};

fn ok(src: &str) -> RouterSpec {
    parse_str(src, "t.conf").unwrap_or_else(|e| panic!("{src:?}: {e}"))
}

/// The error of the last line of `src` is at the column of the last `needle` in it.
fn err_at(src: &str, needle: &str) -> ConfigError {
    let e = match parse_str(src, "t.conf") {
        Ok(s) => panic!("{src:?} parsed: {:?}", s.rules),
        Err(e) => e,
    };
    let last = src.lines().last().unwrap();
    let line = src.lines().count();
    assert_eq!((e.line, e.col), (line, last.rfind(needle).unwrap() + 1), "{src:?}: {e}");
    e
}

fn v6(s: &str, l: u8) -> Option<Prefix> {
    Some(Prefix::V6(s.parse::<Ipv6Addr>().unwrap(), l))
}

fn v4(s: &str, l: u8) -> Option<Prefix> {
    Some(Prefix::V4(s.parse::<Ipv4Addr>().unwrap(), l))
}

fn prefs(s: &RouterSpec, v6: bool) -> Vec<u32> {
    s.rules.iter().filter(|r| r.v6 == v6).map(|r| r.pref).collect()
}

#[test]
fn every_selector() {
    let s = ok("ip -6 rule add not from fc00:a::/64 to fc00:2::/48 iif eth0 ipproto udp sport 1000-2000 \
                dport 5000 priority 100 lookup 100");
    assert_eq!(
        s.rules,
        vec![RuleSpec {
            line: 1,
            v6: true,
            pref: 100,
            not: true,
            from: v6("fc00:a::", 64),
            to: v6("fc00:2::", 48),
            iif: Some("eth0".into()),
            ipproto: 17,
            sport: Some((1000, 2000)),
            dport: Some((5000, 5000)),
            action: RuleAction::Lookup(100),
        }]
    );
    assert!(s.devices.contains(&"eth0".to_string()));
    // Synonyms: dev for iif, table for lookup, pref/order for priority, a number for
    // the protocol, table names.
    let s = ok("ip -6 rule add dev eth1 ipproto 6 pref 7 table main\nip -6 rule add order 8 lookup default");
    assert_eq!(s.rules[0].iif.as_deref(), Some("eth1"));
    assert_eq!((s.rules[0].ipproto, s.rules[0].pref, s.rules[0].action), (6, 7, RuleAction::Lookup(254)));
    assert_eq!(s.rules[1].action, RuleAction::Lookup(253));
}

#[test]
fn family_from_the_flag_or_the_prefixes() {
    let s = ok("ip rule add from 10.1.0.0/16 lookup 10\nip rule add from fc00::/16 lookup 10\n\
                rule add to 10.2.0.0/16 lookup 10\nip rule add lookup 10\nip -6 rule add lookup 10");
    let fams: Vec<bool> = s.rules.iter().map(|r| r.v6).collect();
    assert_eq!(fams.iter().filter(|v| **v).count(), 2);
    assert_eq!(s.rules.iter().find(|r| r.line == 1).unwrap().from, v4("10.1.0.0", 16));
    assert!(s.rules.iter().find(|r| r.line == 2).unwrap().v6);
    assert!(!s.rules.iter().find(|r| r.line == 4).unwrap().v6, "no flag, no prefix: IPv4, as iproute2");
    // `all` and /0 select everything.
    let s = ok("ip -6 rule add from all to ::/0 lookup 10");
    assert_eq!((s.rules[0].from, s.rules[0].to), (None, None));
}

#[test]
fn actions() {
    let s = ok("ip -6 rule add from fc00:a::/64 blackhole\nip -6 rule add to fc00:b::/64 unreachable\n\
                ip -6 rule add iif eth0 prohibit\nip rule add type prohibit\nip -6 rule add iif eth2");
    let a: Vec<RuleAction> = s.rules.iter().map(|r| r.action).collect();
    assert!(a.contains(&RuleAction::Blackhole) && a.contains(&RuleAction::Unreachable));
    assert_eq!(a.iter().filter(|x| **x == RuleAction::Prohibit).count(), 2);
    // Neither a table nor an action: main, as iproute2.
    assert_eq!(s.rules.iter().find(|r| r.line == 5).unwrap().action, RuleAction::Lookup(254));
}

/// Without a priority, one less than the first rule after the local rule (the kernel's
/// `fib_default_rule_pref`), per family; a new rule goes after those of its priority.
#[test]
fn default_priorities_and_order() {
    let s = ok("ip -6 rule add lookup 1\nip -6 rule add lookup 2\nip rule add lookup 3");
    assert_eq!(prefs(&s, true), vec![32764, 32765]);
    assert_eq!(prefs(&s, false), vec![32765]);
    let s = ok("ip -6 rule add pref 100 lookup 1\nip -6 rule add lookup 2\nip -6 rule add pref 40000 lookup 3\n\
                ip -6 rule add lookup 4");
    assert_eq!(prefs(&s, true), vec![98, 99, 100, 40000]);
    // Priority 0 after the local rule: the next default is 0 too.
    let s = ok("ip -6 rule add pref 0 lookup 1\nip -6 rule add lookup 2");
    assert_eq!(prefs(&s, true), vec![0, 0]);
    let tables: Vec<RuleAction> = s.rules.iter().map(|r| r.action).collect();
    assert_eq!(tables, vec![RuleAction::Lookup(1), RuleAction::Lookup(2)], "the newer one after");
    // Same priority: in the order added.
    let s = ok("ip -6 rule add pref 5 lookup 1\nip -6 rule add pref 5 lookup 2\nip -6 rule add pref 4 lookup 3");
    let tables: Vec<RuleAction> = s.rules.iter().map(|r| r.action).collect();
    assert_eq!(tables, vec![RuleAction::Lookup(3), RuleAction::Lookup(1), RuleAction::Lookup(2)]);
}

#[test]
fn del_finds_the_first_rule_with_the_given_attributes() {
    let mut s =
        ok("ip -6 rule add from fc00:a::/64 pref 10 lookup 1\nip -6 rule add from fc00:b::/64 pref 20 lookup 1\n\
                    ip rule add from 10.1.0.0/16 pref 10 lookup 1");
    parse_line("ip -6 rule del lookup 1", "ctl", 1, &mut s).unwrap();
    assert_eq!(s.rules.iter().filter(|r| r.v6).map(|r| r.from).collect::<Vec<_>>(), vec![v6("fc00:b::", 64)]);
    parse_line("ip rule del pref 10", "ctl", 2, &mut s).unwrap();
    assert_eq!(s.rules.len(), 1);
    let before = s.clone();
    let e = parse_line("ip -6 rule del from fc00:c::/64", "ctl", 3, &mut s).unwrap_err();
    assert!(e.message.contains("no IPv6 rule"), "{e}");
    // The kernel's rules are kept: `lookup main` alone finds rule 32766 first.
    let e = parse_line("ip -6 rule del lookup main", "ctl", 4, &mut s).unwrap_err();
    assert!(e.message.contains("32766"), "{e}");
    let e = parse_line("ip -6 rule del pref 0", "ctl", 5, &mut s).unwrap_err();
    assert!(e.message.contains("default rule 0"), "{e}");
    assert_eq!(s, before, "a refused line changes nothing");
    parse_line("ip -6 rule del from fc00:b::/64 pref 20 table 1", "ctl", 6, &mut s).unwrap();
    assert!(s.rules.is_empty());
}

#[test]
fn errors_say_where_and_what() {
    err_at("ip -6 rule add from 10.0.0.0/8 lookup 1", "10.0.0.0/8");
    err_at("ip rule add from fc00::/16 to 10.0.0.0/8 lookup 1", "10.0.0.0/8");
    err_at("ip -6 rule add from fc00::1/16 lookup 1", "fc00::1/16");
    err_at("ip -6 rule add lookup 0", "0");
    err_at("ip -6 rule add lookup foo", "foo");
    err_at("ip -6 rule add dport 0 lookup 1", "0");
    err_at("ip -6 rule add dport 65535 lookup 1", "65535");
    err_at("ip -6 rule add sport 10-9 lookup 1", "10-9");
    err_at("ip -6 rule add dport 5000-x lookup 1", "x");
    err_at("ip -6 rule add ipproto bogus lookup 1", "bogus");
    err_at("ip -6 rule add ipproto 300 lookup 1", "300");
    err_at("ip -6 rule add lookup 1 blackhole", "blackhole");
    err_at("ip -6 rule add from fc00::/16 from fc00::/16 lookup 1", "from");
    err_at("ip -6 rule add iif eth0 dev eth0 lookup 1", "dev");
    err_at("ip -6 rule add pref 1 priority 2 lookup 1", "priority");
    let e = sr6_config::parse_str("ip -6 rule add iif", "t").unwrap_err();
    assert_eq!(e.col, 19, "{e}");
    let e = err_at("ip -6 rule add goto 100", "goto");
    assert!(e.message.contains("not supported"), "{e}");
    let e = err_at("ip -6 rule add oif eth0 lookup 1", "oif");
    assert!(e.message.contains("locally generated"), "{e}");
    let e = err_at("ip -6 rule add frobnicate lookup 1", "frobnicate");
    assert!(e.expected.unwrap().contains("ipproto"));
    err_at("ip -6 rule add type nat", "nat");
    err_at("ip -6 rule list", "list");
    assert_eq!(sr6_config::parse_str("ip -6 rule", "t").unwrap_err().col, 11);
    let e = err_at("ip -6 rule add pref 5 lookup 1\nip -6 rule add pref 5 lookup 1", "add");
    assert!(e.message.contains("already exists (line 1)"), "{e}");
    // The priority given by default differs, so the same selectors twice are two rules.
    assert_eq!(ok("ip -6 rule add lookup 1\nip -6 rule add lookup 1").rules.len(), 2);
    let e = err_at("ip -6 rule add pref 99999999999 lookup 1", "99999999999");
    assert!(e.expected.unwrap().contains("priority"));
}

/// A rule naming a device no other line declares is refused in a whole file, as a route.
#[test]
fn iif_must_be_declared() {
    let e = sr6_config::parse_config("ip link set eth0 up\nip -6 rule add iif eth9 lookup 1", "t.conf").unwrap_err();
    assert_eq!((e.line, e.col), (2, 20), "{e}");
    sr6_config::parse_config("ip link set eth0 up\nip -6 rule add iif eth0 lookup 1", "t.conf").unwrap();
}

/// The steering example of docs/config.md, verbatim.
#[test]
fn documented_example() {
    let doc = include_str!("../../../docs/config.md");
    let block = &doc[doc.find("Steering a class of flows").unwrap()..];
    let block = &block[block.find("```\n").unwrap() + 4..];
    let block = &block[..block.find("```").unwrap()];
    let s = ok(&format!("ip link set eth0 up\nip link set eth1 up\n{block}"));
    assert_eq!(s.rules.len(), 2);
    assert!(s.rules.iter().all(|r| r.dport == Some((5000, 5999)) && r.action == RuleAction::Lookup(100)));
    assert_eq!(s.routes.len(), 2);
}
