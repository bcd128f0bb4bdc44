//! `rule add|del [not] [from PREFIX|all] [to PREFIX|all] [iif DEV] [ipproto PROTO]
//! [sport N[-M]] [dport N[-M]] [priority N] [lookup TABLE | blackhole | unreachable |
//! prohibit]`: policy routing rules, as iproute2's `ip rule` writes them.
//!
//! The family is `-6`/`-4`, else that of the first prefix, else IPv4 (iproute2's
//! default). A rule without a table or an action looks up `main` (iproute2). A rule
//! without a priority gets one when it is applied ([`crate::apply`]), as the kernel's
//! `fib_default_rule_pref` chooses it.

use sr6_core::spec::{Prefix, RuleAction, RuleSpec, DEFAULT_RULE_PREF, LOCAL_TABLE, MAIN_RULE_PREF, MAIN_TABLE};

use crate::cmd::{once, Item, P};
use crate::lex::Tok;
use crate::value::{self, matches, Fam, DEFAULT_TABLE};
use crate::PErr;

const SELECTORS: &str = "not, from PREFIX, to PREFIX, iif DEV, ipproto PROTO, sport N[-M], dport N[-M], \
priority N, lookup TABLE, blackhole, unreachable or prohibit";

/// Words of `ip rule` sr6 does not model, with why.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("oif", "it matches only locally generated traffic, and sr6 rules apply to the traffic it routes"),
    ("fwmark", "sr6 has no packet marks"),
    ("tos", "sr6 does not select by traffic class"),
    ("dsfield", "sr6 does not select by traffic class"),
    ("dscp", "sr6 does not select by traffic class"),
    ("flowlabel", "sr6 does not select by flow label"),
    ("uidrange", "it matches only locally generated traffic"),
    ("realms", "sr6 has no routing realms"),
    ("suppress_prefixlength", "sr6 does not model route suppression"),
    ("suppress_ifgroup", "sr6 does not model route suppression"),
    ("l3mdev", "sr6 has no VRF devices"),
    ("tun_id", "sr6 has no tunnel metadata"),
    ("protocol", "sr6 keeps no rule protocol"),
    ("nat", "the kernel removed rule NAT"),
    ("map-to", "the kernel removed rule NAT"),
    ("goto", "sr6 implements the actions lookup, blackhole, unreachable and prohibit"),
    ("nop", "sr6 implements the actions lookup, blackhole, unreachable and prohibit"),
];

/// A parsed `rule add` or `rule del`: the rule, and which of its attributes the line
/// gave (`rule del` compares only those, as the kernel's `rule_find`).
#[derive(Debug, Clone)]
pub(crate) struct ParsedRule {
    /// `pref` is 0 until applied when `pref_given` is false.
    pub spec: RuleSpec,
    pub pref_given: bool,
    /// A table or an action was named.
    pub action_given: bool,
}

/// `rule add ...` or `rule del ...` after the word `rule`.
pub(crate) fn parse_rule(p: &mut P, obj: &Tok, line: usize) -> Result<Item, PErr> {
    let v = p.value(obj, "add or del")?;
    let del = if matches(&v.text, "add") {
        false
    } else if matches(&v.text, "delete") || v.text == "del" {
        true
    } else if matches(&v.text, "flush") || matches(&v.text, "list") || matches(&v.text, "show") {
        return Err(PErr::at(v, format!("`rule {}` is not a configuration command", v.text))
            .exp("add or del (`sr6 ctl show rules` lists the rules)"));
    } else {
        return Err(PErr::at(v, format!("unsupported rule command `{}`", v.text)).exp("add or del"));
    };
    let mut r = RuleSpec {
        line,
        v6: false,
        pref: 0,
        not: false,
        from: None,
        to: None,
        iif: None,
        ipproto: 0,
        sport: None,
        dport: None,
        action: RuleAction::Lookup(MAIN_TABLE),
    };
    let mut fam = p.fam;
    let mut pref_given = false;
    let mut action: Option<&Tok> = None;
    let mut seen = Vec::new();
    while let Some(w) = p.next() {
        let word = w.text.as_str();
        match word {
            "not" => {
                once(&mut seen, w)?;
                r.not = true;
            }
            "from" | "to" => {
                once(&mut seen, w)?;
                let t = p.value(w, "a prefix: ADDR[/LEN] or all")?;
                let pfx = match t.text.as_str() {
                    "all" | "any" | "default" => None,
                    _ => {
                        let pf = value::prefix_of(t)?;
                        let f = Fam::of_prefix(&pf);
                        match fam {
                            Some(want) if want != f => {
                                return Err(PErr::at(
                                    t,
                                    format!("`{}` is {} but the rule is {}", t.text, f.name(), want.name()),
                                )
                                .exp(format!("an {} prefix", want.name())))
                            }
                            _ => fam = Some(f),
                        }
                        // `/0` selects everything, as `all` does.
                        Some(pf).filter(|x| prefix_len(x) > 0)
                    }
                };
                if word == "from" {
                    r.from = pfx;
                } else {
                    r.to = pfx;
                }
            }
            "iif" | "dev" => {
                once(&mut seen, &Tok { text: "iif".into(), ..w.clone() })?;
                let t = p.value(w, "a device name")?;
                let d = value::dev_of(t)?;
                p.note_route_dev(&d, t);
                r.iif = Some(d);
            }
            "ipproto" => {
                once(&mut seen, w)?;
                r.ipproto = proto_of(p.value(w, "a protocol: tcp, udp, icmp, ipv6-icmp or a number")?)?;
            }
            "sport" | "dport" => {
                once(&mut seen, w)?;
                let range = Some(port_range_of(p.value(w, "a port or a range N-M")?)?);
                if word == "sport" {
                    r.sport = range;
                } else {
                    r.dport = range;
                }
            }
            "lookup" => {
                set_action(&mut action, w)?;
                r.action = RuleAction::Lookup(value::table_of(p.value(w, "a table id")?)?);
            }
            "blackhole" | "unreachable" | "prohibit" => {
                set_action(&mut action, w)?;
                r.action = action_of(word);
            }
            "type" => {
                let t = p.value(w, "blackhole, unreachable or prohibit")?;
                if !matches!(t.text.as_str(), "blackhole" | "unreachable" | "prohibit") {
                    return Err(PErr::at(t, format!("unsupported rule type `{}`", t.text))
                        .exp("blackhole, unreachable or prohibit"));
                }
                set_action(&mut action, t)?;
                r.action = action_of(&t.text);
            }
            _ if matches(word, "table") => {
                set_action(&mut action, w)?;
                r.action = RuleAction::Lookup(value::table_of(p.value(w, "a table id")?)?);
            }
            _ if matches(word, "preference") || matches(word, "order") || matches(word, "priority") => {
                once(&mut seen, &Tok { text: "priority".into(), ..w.clone() })?;
                r.pref = value::u32_of(p.value(w, "a priority")?, "priority")?;
                pref_given = true;
            }
            _ => {
                if let Some((_, why)) = UNSUPPORTED.iter().find(|(k, _)| *k == word) {
                    return Err(
                        PErr::at(w, format!("rule option `{word}` is not supported by sr6: {why}")).exp(SELECTORS)
                    );
                }
                return Err(PErr::at(w, format!("unknown rule option `{word}`")).exp(SELECTORS));
            }
        }
    }
    r.v6 = fam == Some(Fam::V6);
    let rule = ParsedRule { spec: r, pref_given, action_given: action.is_some() };
    let at = v.clone();
    Ok(if del { Item::RuleDel { rule, at } } else { Item::Rule { rule, at } })
}

fn prefix_len(p: &Prefix) -> u8 {
    match p {
        Prefix::V6(_, l) | Prefix::V4(_, l) => *l,
    }
}

/// At most one of `lookup`/`table` and the action words.
fn set_action<'a>(slot: &mut Option<&'a Tok>, w: &'a Tok) -> Result<(), PErr> {
    if let Some(first) = slot {
        return Err(PErr::at(w, format!("the rule already has its action (`{}`)", first.text))
            .exp("one of lookup TABLE, blackhole, unreachable, prohibit"));
    }
    *slot = Some(w);
    Ok(())
}

fn action_of(word: &str) -> RuleAction {
    match word {
        "blackhole" => RuleAction::Blackhole,
        "unreachable" => RuleAction::Unreachable,
        _ => RuleAction::Prohibit,
    }
}

/// A protocol name (those of /etc/protocols iproute2 would find for the usual cases) or
/// a number from 0 to 255 (0: any protocol, as the kernel reads it).
pub(crate) fn proto_of(t: &Tok) -> Result<u8, PErr> {
    const NAMES: &[(&str, u8)] = &[
        ("icmp", 1),
        ("tcp", 6),
        ("udp", 17),
        ("dccp", 33),
        ("gre", 47),
        ("esp", 50),
        ("ah", 51),
        ("ipv6-icmp", 58),
        ("icmpv6", 58),
        ("sctp", 132),
        ("udplite", 136),
    ];
    if let Some((_, n)) = NAMES.iter().find(|(k, _)| t.text.eq_ignore_ascii_case(k)) {
        return Ok(*n);
    }
    let exp = "a protocol: tcp, udp, icmp, ipv6-icmp, sctp, dccp, udplite, gre, esp, ah or a number from 0 to 255";
    let v = value::u32_of(t, "protocol").map_err(|e| PErr { expected: Some(exp.into()), ..e })?;
    u8::try_from(v).map_err(|_| PErr::at(t, format!("protocol {v} is out of range")).exp(exp))
}

/// `N` or `N-M`: ports 1 to 65534 with N <= M, the ranges the kernel accepts
/// (`fib_rule_port_range_valid`).
pub(crate) fn port_range_of(t: &Tok) -> Result<(u16, u16), PErr> {
    const EXP: &str = "a port from 1 to 65534, or a range N-M of them with N <= M";
    let (a, b) = match t.text.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (t.text.as_str(), None),
    };
    let port = |s: &str, col: usize| -> Result<u16, PErr> {
        let ok = !s.is_empty() && s.len() <= 5 && s.chars().all(|c| c.is_ascii_digit());
        match s.parse::<u32>() {
            Ok(v) if ok && (1..=65534).contains(&v) => Ok(v as u16),
            _ => Err(PErr::at_pos(t.line, col, format!("invalid port `{s}`")).exp(EXP)),
        }
    };
    let lo = port(a, t.col)?;
    let hi = match b {
        Some(b) => port(b, t.col + a.chars().count() + 1)?,
        None => lo,
    };
    if lo > hi {
        return Err(PErr::at(t, format!("port range `{}` is empty", t.text)).exp(EXP));
    }
    Ok((lo, hi))
}

/// The kernel's implicit rules of a family, as (priority, table).
const IMPLICIT: [(u32, u32); 3] = [(0, LOCAL_TABLE), (MAIN_RULE_PREF, MAIN_TABLE), (DEFAULT_RULE_PREF, DEFAULT_TABLE)];

/// The priority the kernel gives a rule added without one (`fib_default_rule_pref`):
/// one less than that of the second rule of the family's list (the first after the
/// local rule), or 0 if that one is 0.
fn default_pref(rules: &[RuleSpec], v6: bool) -> u32 {
    let second = rules.iter().filter(|r| r.v6 == v6).map(|r| r.pref).chain([MAIN_RULE_PREF]).min();
    second.unwrap_or(MAIN_RULE_PREF).saturating_sub(1)
}

fn fam_name(v6: bool) -> &'static str {
    if v6 {
        "IPv6"
    } else {
        "IPv4"
    }
}

/// Applies `rule add`: the priority chosen if none was given, refused if the family has
/// the same rule already (the kernel's `EEXIST` for `ip rule add`), else inserted after
/// the rules of its priority.
pub(crate) fn add(rules: &mut Vec<RuleSpec>, rule: ParsedRule, at: &Tok) -> Result<(), PErr> {
    let mut r = rule.spec;
    if !rule.pref_given {
        r.pref = default_pref(rules, r.v6);
    }
    if let Some(old) = rules.iter().find(|o| RuleSpec { line: o.line, ..r.clone() } == **o) {
        return Err(PErr::at(at, format!("the {} rule already exists (line {})", fam_name(r.v6), old.line))
            .exp("a rule that differs in a selector, the action or the priority"));
    }
    let pos = rules.iter().rposition(|o| o.pref <= r.pref).map_or(0, |i| i + 1);
    rules.insert(pos, r);
    Ok(())
}

/// Applies `rule del`: removes the first rule of the family, in list order, that has
/// every attribute the line gave (the kernel's `rule_find`). The kernel's implicit rules
/// are kept: a line that would find one of them first is refused.
pub(crate) fn del(rules: &mut Vec<RuleSpec>, rule: ParsedRule, at: &Tok) -> Result<(), PErr> {
    let want = &rule.spec;
    let fits = |pref: u32, table: Option<u32>, r: Option<&RuleSpec>| -> bool {
        let action = match (r, table) {
            (Some(r), _) => r.action,
            (None, Some(t)) => RuleAction::Lookup(t),
            (None, None) => return false,
        };
        (!rule.action_given || action == want.action)
            && (!rule.pref_given || pref == want.pref)
            && want.from.is_none_or(|f| r.is_some_and(|r| r.from == Some(f)))
            && want.to.is_none_or(|f| r.is_some_and(|r| r.to == Some(f)))
            && want.iif.as_ref().is_none_or(|d| r.is_some_and(|r| r.iif.as_ref() == Some(d)))
            && (want.ipproto == 0 || r.is_some_and(|r| r.ipproto == want.ipproto))
            && want.sport.is_none_or(|p| r.is_some_and(|r| r.sport == Some(p)))
            && want.dport.is_none_or(|p| r.is_some_and(|r| r.dport == Some(p)))
    };
    // The family's list: the implicit rules among the configured ones, by priority.
    let mut list: Vec<(u32, Option<usize>, Option<u32>)> = IMPLICIT.iter().map(|(p, t)| (*p, None, Some(*t))).collect();
    for (i, r) in rules.iter().enumerate().filter(|(_, r)| r.v6 == want.v6) {
        let pos = list.iter().rposition(|(p, ..)| *p <= r.pref).map_or(0, |j| j + 1);
        list.insert(pos, (r.pref, Some(i), None));
    }
    let found = list.iter().find(|(pref, i, table)| fits(*pref, *table, i.and_then(|i| rules.get(i))));
    match found {
        Some((_, Some(i), _)) => {
            rules.remove(*i);
            Ok(())
        }
        Some((pref, None, _)) => Err(PErr::at(
            at,
            format!(
                "the first {} rule this line selects is the kernel's default rule {pref}, which sr6 keeps",
                fam_name(want.v6)
            ),
        )
        .exp("the selectors or the priority of a configured rule")),
        None => Err(PErr::at(at, format!("no {} rule has these attributes", fam_name(want.v6)))
            .exp("the selectors, action or priority of a configured rule (`sr6 ctl show rules` lists them)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(s: &str) -> Tok {
        Tok { text: s.into(), line: 1, col: 1, width: s.len() }
    }

    #[test]
    fn ports_and_protocols() {
        assert_eq!(port_range_of(&tok("5000-5999")).unwrap(), (5000, 5999));
        assert_eq!(port_range_of(&tok("53")).unwrap(), (53, 53));
        for bad in ["0", "65535", "10-5", "a", "1-", "-3", "70000", "1-65535"] {
            assert!(port_range_of(&tok(bad)).is_err(), "{bad}");
        }
        let e = port_range_of(&tok("100-0")).unwrap_err();
        assert_eq!(e.col, 5);
        assert_eq!(proto_of(&tok("udp")).unwrap(), 17);
        assert_eq!(proto_of(&tok("ipv6-icmp")).unwrap(), 58);
        assert_eq!(proto_of(&tok("0")).unwrap(), 0);
        assert_eq!(proto_of(&tok("255")).unwrap(), 255);
        assert!(proto_of(&tok("256")).is_err());
        assert!(proto_of(&tok("udpx")).is_err());
    }
}
