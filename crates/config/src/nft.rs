//! `nft add table|chain|rule ...`: the firewall's rules written for nftables, the subset
//! an SRv6 rule set needs — the `srh` and `rt` extension-header expressions (Linux's
//! `nft_exthdr`; the SR-nftables of the thesis, §4.4), addresses, protocol, ports and
//! devices — mapped onto the chains ip6tables rules use: a base chain with `hook input`
//! is INPUT, `hook forward` FORWARD. The grammar is in docs/config.md ("nft").
//!
//! The words after `nft` are re-split at `{`, `}` and `;` (a quoted chain body is one
//! word for the lexer), so `'{ type filter hook forward priority 0 ; }'` and the same
//! body as separate words both parse; errors point at the word the token came from.

use std::net::Ipv6Addr;

use sr6_core::firewall::spec::{
    AddrMatch, ExthdrMatch, FirewallSpec, FwMatch, FwRule, FwTarget, Neg, NftChain, NftOp, PortMatch, BUILTIN,
};

use crate::cmd::{Item, P};
use crate::lex::Tok;
use crate::PErr;

const COMMANDS: &str = "add table ip6 T, add chain ip6 T C { type filter hook input|forward priority N ; \
[policy accept|drop ;] }, add|insert rule ip6 T C EXPR... VERDICT";
const EXPRS: &str = "ip6 saddr|daddr, meta l4proto, tcp|udp sport|dport, iifname, oifname, \
srh flags|last-entry|tag|sid[N], rt seg-left|type|nexthdr, counter, or a verdict: accept, drop, reject";
const REJECT_TYPES: [(&str, u8); 6] = [
    ("no-route", 0),
    ("admin-prohibited", 1),
    ("addr-unreachable", 3),
    ("port-unreachable", 4),
    ("policy-fail", 5),
    ("reject-route", 6),
];

/// A parsed `nft` command.
#[derive(Debug, Clone)]
pub(crate) enum NftCmd {
    Table { table: Tok },
    Chain { table: Tok, chain: Tok, hook: Option<(Tok, &'static str)>, policy: Option<bool> },
    Rule { table: Tok, chain: Tok, insert: bool, rule: Box<FwRule> },
}

/// The words after `nft`, split at `{`, `}` and `;`.
fn split(p: &mut P) -> Vec<Tok> {
    let mut out = Vec::new();
    while let Some(t) = p.next() {
        let mut cur = String::new();
        let flush = |cur: &mut String, out: &mut Vec<Tok>| {
            if !cur.is_empty() {
                out.push(Tok { text: std::mem::take(cur), ..t.clone() });
            }
        };
        for c in t.text.chars() {
            if c.is_whitespace() {
                flush(&mut cur, &mut out);
            } else if matches!(c, '{' | '}' | ';') {
                flush(&mut cur, &mut out);
                out.push(Tok { text: c.to_string(), ..t.clone() });
            } else {
                cur.push(c);
            }
        }
        flush(&mut cur, &mut out);
    }
    out
}

struct W<'a> {
    toks: &'a [Tok],
    i: usize,
    end: &'a Tok,
}

impl<'a> W<'a> {
    fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.i)
    }
    fn next(&mut self, what: &str) -> Result<&'a Tok, PErr> {
        let t = self.toks.get(self.i).ok_or_else(|| {
            PErr::at_pos(self.end.line, self.end.col + self.end.width, "the line ends too early").exp(what.to_string())
        })?;
        self.i += 1;
        Ok(t)
    }
    fn word(&mut self, want: &str, what: &str) -> Result<&'a Tok, PErr> {
        let t = self.next(what)?;
        if t.text != want {
            return Err(PErr::at(t, format!("`{}` where `{want}` belongs", t.text)).exp(what.to_string()));
        }
        Ok(t)
    }
}

/// `nft ...` after the word `nft`.
pub(crate) fn parse(p: &mut P, cmd: &Tok, line: usize) -> Result<Item, PErr> {
    let toks = split(p);
    let mut w = W { toks: &toks, i: 0, end: toks.last().unwrap_or(cmd) };
    let verb = w.next(COMMANDS)?;
    let object = w.next(COMMANDS)?;
    let (insert, obj) = match (verb.text.as_str(), object.text.as_str()) {
        ("add", o @ ("table" | "chain" | "rule")) => (false, o),
        ("insert", "rule") => (true, "rule"),
        ("add" | "insert", _) => {
            return Err(PErr::at(object, format!("sr6 has no nft `{}`", object.text)).exp("table, chain or rule"))
        }
        _ => return Err(PErr::at(verb, format!("`nft {}` is not a configuration command", verb.text)).exp(COMMANDS)),
    };
    let fam = w.next("ip6")?;
    if !matches!(fam.text.as_str(), "ip6" | "inet") {
        return Err(PErr::at(fam, format!("sr6's firewall filters IPv6, not the `{}` family", fam.text)).exp("ip6"));
    }
    let table = w.next("a table name")?.clone();
    let c = match obj {
        "table" => NftCmd::Table { table },
        "chain" => {
            let chain = w.next("a chain name")?.clone();
            let (mut hook, mut policy) = (None, None);
            if w.peek().is_some() {
                w.word("{", "{ type filter hook input|forward priority N ; }")?;
                w.word("type", "type filter")?;
                w.word("filter", "filter")?;
                loop {
                    let t = w.next("hook, priority, policy, `;` or `}`")?;
                    match t.text.as_str() {
                        ";" => {}
                        "}" => break,
                        "hook" => {
                            let h = w.next("input or forward")?;
                            let b = match h.text.as_str() {
                                "input" => BUILTIN[0],
                                "forward" => BUILTIN[1],
                                _ => {
                                    return Err(
                                        PErr::at(h, format!("sr6 has no `{}` hook", h.text)).exp("input or forward")
                                    )
                                }
                            };
                            hook = Some((h.clone(), b));
                        }
                        "priority" => {
                            let v = w.next("a priority")?;
                            if v.text.parse::<i32>().is_err() && v.text != "filter" {
                                return Err(PErr::at(v, format!("invalid priority `{}`", v.text)).exp("a number"));
                            }
                        }
                        "policy" => {
                            let v = w.next("accept or drop")?;
                            policy = Some(match v.text.as_str() {
                                "accept" => true,
                                "drop" => false,
                                _ => {
                                    return Err(
                                        PErr::at(v, format!("invalid policy `{}`", v.text)).exp("accept or drop")
                                    )
                                }
                            });
                        }
                        _ => {
                            return Err(PErr::at(t, format!("unknown chain option `{}`", t.text))
                                .exp("hook, priority, policy, `;` or `}`"))
                        }
                    }
                }
                if hook.is_none() {
                    return Err(PErr::at(&chain, "a base chain needs its hook").exp("hook input or hook forward"));
                }
            }
            if let Some(t) = w.peek() {
                return Err(PErr::at(t, format!("`{}` after the chain", t.text)).exp("the end of the line"));
            }
            NftCmd::Chain { table, chain, hook, policy }
        }
        _ => {
            let chain = w.next("a chain name")?.clone();
            let (m, target, text) = rule(&mut w)?;
            let text = format!("nft add rule {} {} {} {text}", fam.text, table.text, chain.text);
            NftCmd::Rule { table, chain, insert, rule: Box::new(FwRule { line, m, target, nft: Some(text) }) }
        }
    };
    Ok(Item::Nft { cmd: c })
}

/// An optional comparison operator (default `==`).
fn op(w: &mut W) -> NftOp {
    let o = match w.peek().map(|t| t.text.as_str()) {
        Some("==" | "eq") => NftOp::Eq,
        Some("!=" | "ne") => NftOp::Ne,
        Some("<" | "lt") => NftOp::Lt,
        Some(">" | "gt") => NftOp::Gt,
        Some("<=" | "le") => NftOp::Le,
        Some(">=" | "ge") => NftOp::Ge,
        _ => return NftOp::Eq,
    };
    w.i += 1;
    o
}

fn eq_ne(o: NftOp, t: &Tok) -> Result<bool, PErr> {
    match o {
        NftOp::Eq => Ok(false),
        NftOp::Ne => Ok(true),
        _ => Err(PErr::at(t, "only `==` and `!=` compare this").exp("== or !=")),
    }
}

fn num(t: &Tok, max: u128) -> Result<u128, PErr> {
    let s = t.text.as_str();
    let v = match s.strip_prefix("0x") {
        Some(h) => u128::from_str_radix(h, 16),
        None => s.parse::<u128>(),
    };
    v.ok().filter(|v| *v <= max).ok_or_else(|| PErr::at(t, format!("invalid value `{s}`")).exp(format!("0 to {max}")))
}

fn addr(t: &Tok, inv: bool) -> Result<AddrMatch, PErr> {
    let (a, len) = t.text.split_once('/').map_or((t.text.as_str(), Some("128")), |(a, l)| (a, Some(l)));
    let a: Ipv6Addr = a.parse().map_err(|_| PErr::at(t, format!("invalid IPv6 address `{a}`")).exp("ADDR[/LEN]"))?;
    let len = len
        .and_then(|l| l.parse::<u32>().ok())
        .filter(|l| *l <= 128)
        .ok_or_else(|| PErr::at(t, format!("invalid prefix `{}`", t.text)).exp("ADDR[/LEN], LEN 0 to 128"))?;
    let mask = if len == 0 { 0 } else { u128::MAX << (128 - len) };
    Ok(AddrMatch::new(a, Ipv6Addr::from(mask), inv))
}

fn once<T>(slot: &mut Option<T>, v: T, t: &Tok) -> Result<(), PErr> {
    if slot.is_some() {
        return Err(PErr::at(t, format!("`{}` twice in one rule", t.text)).exp("each match at most once"));
    }
    *slot = Some(v);
    Ok(())
}

/// The expressions and verdict of a rule: its match, target and text as nft lists it.
fn rule(w: &mut W) -> Result<(FwMatch, FwTarget, String), PErr> {
    let mut m = FwMatch::default();
    let mut text: Vec<String> = Vec::new();
    let mut ports: Option<PortMatch> = None;
    loop {
        let start = w.i;
        let t = w.next(EXPRS)?;
        let target = match t.text.as_str() {
            "accept" => Some(FwTarget::Accept),
            "drop" => Some(FwTarget::Drop),
            "reject" => {
                let mut code = 4;
                if w.peek().is_some_and(|t| t.text == "with") {
                    w.i += 1;
                    w.word("icmpv6", "icmpv6 type NAME")?;
                    w.word("type", "type NAME")?;
                    let n = w.next("a reject type")?;
                    let names: Vec<&str> = REJECT_TYPES.iter().map(|r| r.0).collect();
                    code = REJECT_TYPES.iter().find(|r| r.0 == n.text).map(|r| r.1).ok_or_else(|| {
                        PErr::at(n, format!("unknown reject type `{}`", n.text)).exp(names.join(", "))
                    })?;
                }
                Some(FwTarget::Reject(code))
            }
            "counter" => None,
            "ip6" => {
                let f = w.next("saddr or daddr")?;
                if !matches!(f.text.as_str(), "saddr" | "daddr") {
                    return Err(PErr::at(f, format!("sr6 has no `ip6 {}`", f.text)).exp("saddr or daddr"));
                }
                let o = op(w);
                let inv = eq_ne(o, f)?;
                let a = addr(w.next("ADDR[/LEN]")?, inv)?;
                let slot = if f.text == "saddr" { &mut m.src } else { &mut m.dst };
                once(slot, a, f)?;
                None
            }
            "meta" => {
                let f = w.word("l4proto", "l4proto")?;
                let o = op(w);
                let inv = eq_ne(o, f)?;
                let v = w.next("tcp, udp, icmpv6 or a number")?;
                let p = match v.text.as_str() {
                    "tcp" => 6,
                    "udp" => 17,
                    "icmpv6" | "ipv6-icmp" => 58,
                    _ => num(v, 255)? as u8,
                };
                once(&mut m.proto, Neg { v: p, inv }, f)?;
                None
            }
            proto @ ("tcp" | "udp") => {
                let n = if proto == "tcp" { 6 } else { 17 };
                let f = w.next("sport or dport")?;
                let o = op(w);
                let inv = eq_ne(o, f)?;
                let v = w.next("a port or a range N-M")?;
                let (a, b) = v.text.split_once('-').unwrap_or((v.text.as_str(), v.text.as_str()));
                let port = |s: &str| {
                    s.parse::<u16>().map_err(|_| PErr::at(v, format!("invalid port `{s}`")).exp("0 to 65535"))
                };
                let (a, b) = (port(a)?, port(b)?);
                let pm = ports.get_or_insert(PortMatch { proto: n, sport: None, dport: None });
                if pm.proto != n {
                    return Err(PErr::at(t, "tcp and udp ports in one rule").exp("one protocol"));
                }
                match f.text.as_str() {
                    "sport" => once(&mut pm.sport, Neg { v: (a, b), inv }, f)?,
                    "dport" => once(&mut pm.dport, Neg { v: (a, b), inv }, f)?,
                    _ => return Err(PErr::at(f, format!("sr6 has no `{proto} {}`", f.text)).exp("sport or dport")),
                }
                None
            }
            dir @ ("iifname" | "oifname") => {
                let o = op(w);
                let inv = eq_ne(o, t)?;
                let v = w.next("a device name")?;
                let name = v.text.strip_suffix('*').map_or(v.text.clone(), |p| format!("{p}+"));
                let slot = if dir == "iifname" { &mut m.iif } else { &mut m.oif };
                once(slot, Neg { v: name, inv }, t)?;
                None
            }
            hdr @ ("srh" | "rt") => {
                let f = w.next("a field")?;
                let (offset, len) = match (hdr, f.text.as_str()) {
                    ("rt", "nexthdr") => (0, 1),
                    ("rt", "hdrlength") => (1, 1),
                    ("rt", "type") => (2, 1),
                    ("rt", "seg-left") => (3, 1),
                    ("srh", "last-entry") => (4, 1),
                    ("srh", "flags") => (5, 1),
                    ("srh", "tag") => (6, 2),
                    ("srh", s) if s.starts_with("sid[") && s.ends_with(']') => {
                        // nft counts SIDs from 1: sid[1] is Segment List[0], at offset 8.
                        let k = s[4..s.len() - 1].parse::<u16>().ok().filter(|k| (1..=128).contains(k));
                        let k = k.ok_or_else(|| PErr::at(f, format!("invalid `{s}`")).exp("sid[1] to sid[128]"))?;
                        (8 + 16 * (k - 1), 16)
                    }
                    _ => {
                        let exp = if hdr == "srh" {
                            "flags, last-entry, tag or sid[N]"
                        } else {
                            "nexthdr, hdrlength, type or seg-left"
                        };
                        return Err(PErr::at(f, format!("sr6 has no `{hdr} {}`", f.text)).exp(exp));
                    }
                };
                let o = op(w);
                let v = w.next("a value")?;
                let value = if len == 16 {
                    eq_ne(o, f)?;
                    let a: Ipv6Addr = v.text.parse().map_err(|_| {
                        PErr::at(v, format!("invalid IPv6 address `{}`", v.text)).exp("an IPv6 address")
                    })?;
                    u128::from(a)
                } else {
                    num(v, (1u128 << (8 * u32::from(len))) - 1)?
                };
                m.exthdr.push(ExthdrMatch { offset, len, op: o, value });
                None
            }
            _ => return Err(PErr::at(t, format!("sr6 has no nft expression `{}`", t.text)).exp(EXPRS)),
        };
        text.extend(w.toks.get(start..w.i).unwrap_or_default().iter().map(|t| t.text.clone()));
        if let Some(target) = target {
            if let Some(t) = w.peek() {
                return Err(PErr::at(t, format!("`{}` after the verdict", t.text)).exp("the end of the line"));
            }
            if let Some(pm) = ports {
                if m.proto.is_none() {
                    m.proto = Some(Neg { v: pm.proto, inv: false });
                }
                m.ports = Some(pm);
            }
            return Ok((m, target, text.join(" ")));
        }
    }
}

/// Applies `cmd` to `fw` (a copy the caller commits).
pub(crate) fn apply(fw: &mut FirewallSpec, cmd: NftCmd) -> Result<(), PErr> {
    let known = |fw: &FirewallSpec, t: &Tok| fw.nft_tables.contains(&t.text);
    match cmd {
        NftCmd::Table { table } => {
            if !known(fw, &table) {
                fw.nft_tables.push(table.text);
            }
        }
        NftCmd::Chain { table, chain, hook, policy } => {
            if !known(fw, &table) {
                return Err(PErr::at(&table, format!("table {} does not exist", table.text))
                    .exp("nft add table ip6 NAME on an earlier line"));
            }
            let Some((htok, builtin)) = hook else {
                return Err(
                    PErr::at(&chain, "sr6 maps nft base chains only").exp("{ type filter hook input|forward ... }")
                );
            };
            if fw.nft_chains.iter().any(|c| c.builtin == builtin && (c.table != table.text || c.name != chain.text)) {
                return Err(PErr::at(&htok, format!("another nft chain already has hook {}", htok.text))
                    .exp("one base chain per hook"));
            }
            if !fw.nft_chains.iter().any(|c| c.table == table.text && c.name == chain.text) {
                fw.nft_chains.push(NftChain { table: table.text.clone(), name: chain.text.clone(), builtin });
            }
            if let (Some(p), Some(c)) = (policy, fw.chain_mut(builtin)) {
                c.policy = Some(p);
            }
        }
        NftCmd::Rule { table, chain, insert, rule } => {
            let Some(c) = fw.nft_chains.iter().find(|c| c.table == table.text && c.name == chain.text) else {
                return Err(PErr::at(&chain, format!("chain {} of table {} does not exist", chain.text, table.text))
                    .exp("nft add chain ip6 T C { type filter hook ... } on an earlier line"));
            };
            let builtin = c.builtin;
            if let Some(c) = fw.chain_mut(builtin) {
                if insert {
                    c.rules.insert(0, *rule);
                } else {
                    c.rules.push(*rule);
                }
            }
        }
    }
    Ok(())
}
