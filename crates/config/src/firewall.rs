//! `ip6tables [-t filter] -A|-I|-P|-N ...`: the firewall's rules, as an operator types
//! them for Linux (ip6tables 1.8, with `-m srh` and SERA's `-j SEG6`), so existing
//! rules paste in. Parsing gives an [`FwCmd`]; [`apply`] works it into a copy of the
//! firewall, which the caller commits only if nothing failed. The grammar is in
//! docs/config.md ("Firewall").

use std::net::Ipv6Addr;

use sr6_core::firewall::spec::{
    AddrMatch, FirewallSpec, FwMatch, FwRule, FwTarget, Neg, PortMatch, Seg6Action, SrhMatch, BUILTIN, REJECT_DEFAULT,
    REJECT_WITH,
};

use crate::cmd::{Item, P};
use crate::lex::Tok;
use crate::PErr;

const COMMANDS: &str = "-A CHAIN, -I CHAIN [N], -R CHAIN N, -D CHAIN N|RULE, -F [CHAIN], -P CHAIN ACCEPT|DROP, \
-N CHAIN, -X CHAIN or -E OLD NEW";
const OPTIONS: &str = "[!] -s ADDR[/LEN], [!] -d ADDR[/LEN], [!] -i DEV, [!] -o DEV, [!] -p PROTO, \
-m tcp|udp|srh, [!] --sport N[:M], [!] --dport N[:M], -m srh options, -j TARGET";
const SRH_OPTIONS: &str = "--srh-next-hdr N, --srh-hdr-len-{eq,gt,lt} N, --srh-segs-left-{eq,gt,lt} N, \
--srh-last-entry-{eq,gt,lt} N, --srh-tag N, --srh-psid|--srh-nsid|--srh-lsid ADDR[/LEN], \
--inner-src|--inner-dst ADDR[/LEN]";
const TARGETS: &str = "ACCEPT, DROP, REJECT, SEG6, RETURN or a chain made with -N";
/// Targets of ip6tables that sr6 does not have.
const NOT_TARGETS: &[&str] = &[
    "LOG",
    "NFLOG",
    "NFQUEUE",
    "QUEUE",
    "MARK",
    "CONNMARK",
    "TRACE",
    "CT",
    "HL",
    "TCPMSS",
    "TEE",
    "DNAT",
    "SNAT",
    "MASQUERADE",
    "REDIRECT",
    "AUDIT",
    "CHECKSUM",
    "CLASSIFY",
    "DSCP",
    "TOS",
    "SECMARK",
    "CONNSECMARK",
    "IDLETIMER",
    "LED",
    "RATEEST",
    "SYNPROXY",
    "TPROXY",
    "NETMAP",
    "NOTRACK",
];
const SEG6_ACTIONS: &str = "go-next, skip-next, go-last or eval-args";

/// A parsed ip6tables command.
#[derive(Debug, Clone)]
pub(crate) enum FwCmd {
    /// `-A CHAIN RULE`, or `-I CHAIN [N] RULE` with the 1-based position.
    Add {
        chain: Tok,
        at: Option<usize>,
        rule: Box<FwRule>,
        target: Tok,
    },
    Policy {
        chain: Tok,
        accept: bool,
    },
    NewChain {
        chain: Tok,
    },
    /// `-D CHAIN N` (1-based) or `-D CHAIN RULE` (the first rule equal to it).
    Delete {
        chain: Tok,
        what: DeleteWhat,
    },
    /// `-F [CHAIN]`: every rule of the chain, or of every chain.
    Flush {
        chain: Option<Tok>,
    },
    /// `-X CHAIN`: an empty user chain no rule jumps to.
    DeleteChain {
        chain: Tok,
    },
    /// `-R CHAIN N RULE`: rule N (1-based; the token, for errors) becomes RULE.
    Replace {
        chain: Tok,
        at: (usize, Tok),
        rule: Box<FwRule>,
        target: Tok,
    },
    /// `-E OLD NEW`: a user chain renamed; the jumps to it follow.
    Rename {
        old: Tok,
        new: Tok,
    },
}

/// What `-D` deletes.
#[derive(Debug, Clone)]
pub(crate) enum DeleteWhat {
    /// The rule at this 1-based position (the token, for errors).
    At(usize, Tok),
    /// The first rule with these matches and target.
    Rule(Box<FwRule>),
}

/// `ip6tables ...` after the word `ip6tables`.
pub(crate) fn parse(p: &mut P, cmd: &Tok, line: usize) -> Result<Item, PErr> {
    let mut w = p.need(COMMANDS)?;
    // Options of the command itself.
    loop {
        match w.text.as_str() {
            "-t" | "--table" => {
                let t = p.value(w, "filter")?;
                if t.text != "filter" {
                    return Err(PErr::at(t, format!("sr6 has no `{}` table", t.text)).exp("filter"));
                }
            }
            "-w" | "--wait" | "-v" | "--verbose" | "-n" | "--numeric" => {
                let wait = w.text.starts_with("-w") || w.text == "--wait";
                if wait && p.peek().is_some_and(|t| t.text.chars().all(|c| c.is_ascii_digit())) {
                    p.next();
                }
            }
            _ => break,
        }
        w = p.need(COMMANDS)?;
    }
    let c = match w.text.as_str() {
        "-A" | "--append" | "-I" | "--insert" => {
            let chain = chain_name(p, w)?;
            let at = if matches!(w.text.as_str(), "-I" | "--insert") {
                match p.peek() {
                    Some(t) if t.text.chars().all(|c| c.is_ascii_digit()) => {
                        p.next();
                        match t.text.parse::<usize>() {
                            Ok(n) if n >= 1 => Some(n),
                            _ => return Err(PErr::at(t, format!("invalid rule number `{}`", t.text)).exp("1 or more")),
                        }
                    }
                    _ => Some(1),
                }
            } else {
                None
            };
            let (rule, target) = parse_rule(p, &chain, line)?;
            FwCmd::Add { chain, at, rule: Box::new(rule), target }
        }
        "-P" | "--policy" => {
            let chain = chain_name(p, w)?;
            let t = p.value(w, "ACCEPT or DROP")?;
            let accept = match t.text.as_str() {
                "ACCEPT" => true,
                "DROP" => false,
                _ => return Err(PErr::at(t, format!("invalid policy `{}`", t.text)).exp("ACCEPT or DROP")),
            };
            p.done("the end of the line")?;
            FwCmd::Policy { chain, accept }
        }
        "-N" | "--new-chain" => {
            let chain = chain_name(p, w)?;
            p.done("the end of the line")?;
            FwCmd::NewChain { chain }
        }
        "-D" | "--delete" => {
            let chain = chain_name(p, w)?;
            let what = match p.peek() {
                Some(t) if t.text.chars().all(|c| c.is_ascii_digit()) => {
                    let t = t.clone();
                    p.next();
                    p.done("the end of the line")?;
                    match t.text.parse::<usize>() {
                        Ok(n) if n >= 1 => DeleteWhat::At(n, t),
                        _ => return Err(PErr::at(&t, format!("invalid rule number `{}`", t.text)).exp("1 or more")),
                    }
                }
                _ => DeleteWhat::Rule(Box::new(parse_rule(p, &chain, line)?.0)),
            };
            FwCmd::Delete { chain, what }
        }
        "-F" | "--flush" => {
            let chain = if p.peek().is_some() { Some(chain_name(p, w)?) } else { None };
            p.done("the end of the line")?;
            FwCmd::Flush { chain }
        }
        "-X" | "--delete-chain" => {
            let chain = chain_name(p, w)?;
            p.done("the end of the line")?;
            FwCmd::DeleteChain { chain }
        }
        "-R" | "--replace" => {
            let chain = chain_name(p, w)?;
            let t = p.value(w, "a rule number")?.clone();
            let n = match t.text.parse::<usize>() {
                Ok(n) if n >= 1 && t.text.chars().all(|c| c.is_ascii_digit()) => n,
                _ => return Err(PErr::at(&t, format!("invalid rule number `{}`", t.text)).exp("1 or more")),
            };
            let (rule, target) = parse_rule(p, &chain, line)?;
            FwCmd::Replace { chain, at: (n, t), rule: Box::new(rule), target }
        }
        "-E" | "--rename-chain" => {
            let old = chain_name(p, w)?;
            let new = chain_name(p, w)?;
            p.done("the end of the line")?;
            FwCmd::Rename { old, new }
        }
        "-Z" | "--zero" | "-L" | "--list" | "-S" | "--list-rules" => {
            return Err(PErr::at(
                w,
                format!("`ip6tables {}` is a run-time command, not a configuration command", w.text),
            )
            .exp(format!("{COMMANDS} (`sr6 ctl ip6tables {}` runs it)", w.text)))
        }
        _ => return Err(PErr::at(w, format!("unknown ip6tables command `{}`", w.text)).exp(COMMANDS)),
    };
    let _ = cmd;
    Ok(Item::Firewall { cmd: c })
}

/// A chain name after `-A`, `-P`...: up to 28 characters, not an option or a target.
fn chain_name<'a>(p: &mut P<'a>, kw: &Tok) -> Result<Tok, PErr> {
    let t = p.value(kw, "a chain name")?;
    let s = t.text.as_str();
    if s.is_empty() || s.len() > 28 || s.starts_with('-') || s == "!" || s.chars().any(char::is_whitespace) {
        return Err(PErr::at(t, format!("invalid chain name `{s}`")).exp("a chain name of 1 to 28 characters"));
    }
    if matches!(s, "OUTPUT" | "PREROUTING" | "POSTROUTING") {
        return Err(PErr::at(
            t,
            format!("sr6 has no {s} chain: it filters what it receives (INPUT) and forwards (FORWARD)"),
        )
        .exp("INPUT, FORWARD or a chain made with -N"));
    }
    if matches!(s, "ACCEPT" | "DROP" | "REJECT" | "SEG6" | "RETURN" | "QUEUE") {
        return Err(PErr::at(t, format!("`{s}` is a target, not a chain")).exp("a chain name"));
    }
    Ok(t.clone())
}

fn u8_of(t: &Tok, what: &str) -> Result<u8, PErr> {
    t.text.parse::<u8>().map_err(|_| PErr::at(t, format!("invalid {what} `{}`", t.text)).exp("0 to 255"))
}

fn u16_of(t: &Tok, what: &str) -> Result<u16, PErr> {
    t.text.parse::<u16>().map_err(|_| PErr::at(t, format!("invalid {what} `{}`", t.text)).exp("0 to 65535"))
}

/// `ADDR[/LEN]` or `ADDR/MASK` (IPv6).
fn addr_of(t: &Tok, inv: bool) -> Result<AddrMatch, PErr> {
    let (a, m) = match t.text.split_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (t.text.as_str(), None),
    };
    let addr = a
        .parse::<Ipv6Addr>()
        .map_err(|_| PErr::at(t, format!("invalid IPv6 address `{a}`")).exp("ADDR[/LEN] with an IPv6 address"))?;
    let mask = match m {
        None => u128::MAX,
        Some(m) if m.contains(':') => u128::from(m.parse::<Ipv6Addr>().map_err(|_| {
            PErr::at(t, format!("invalid mask `{m}`")).exp("a prefix length from 0 to 128 or an IPv6 mask")
        })?),
        Some(m) => match m.parse::<u32>() {
            Ok(0) => 0,
            Ok(l) if l <= 128 && !m.starts_with('+') => u128::MAX << (128 - l),
            _ => {
                return Err(PErr::at(t, format!("invalid prefix length `{m}`"))
                    .exp("a prefix length from 0 to 128 or an IPv6 mask"))
            }
        },
    };
    Ok(AddrMatch::new(addr, Ipv6Addr::from(mask), inv))
}

/// `-p`'s protocol: a name ip6tables knows or a number.
fn proto_of(t: &Tok) -> Result<Option<u8>, PErr> {
    Ok(Some(match t.text.to_ascii_lowercase().as_str() {
        "all" | "0" => return Ok(None),
        "tcp" => 6,
        "udp" => 17,
        "icmpv6" | "ipv6-icmp" | "icmp6" => 58,
        "udplite" => 136,
        "sctp" => 132,
        "dccp" => 33,
        "esp" => 50,
        "ah" => 51,
        "gre" => 47,
        "ipv6" => 41,
        "ipip" | "ipencap" | "ipv4" => 4,
        "mh" | "ipv6-mh" => 135,
        "ethernet" => 143,
        s => s.parse::<u8>().map_err(|_| {
            PErr::at(t, format!("unknown protocol `{}`", t.text))
                .exp("tcp, udp, icmpv6, sctp, udplite, dccp, esp, ah, gre, ipv6, ipip, mh, all or a number")
        })?,
    }))
}

/// `N` or `N:M` (either side may be left out: `:M`, `N:`).
fn ports_of(t: &Tok) -> Result<(u16, u16), PErr> {
    let bad = || PErr::at(t, format!("invalid port range `{}`", t.text)).exp("N or N:M, ports 0 to 65535");
    let num = |s: &str, d: u16| if s.is_empty() { Ok(d) } else { s.parse::<u16>().map_err(|_| bad()) };
    let (a, b) = match t.text.split_once(':') {
        Some((a, b)) => (num(a, 0)?, num(b, u16::MAX)?),
        None => {
            let v = num(&t.text, 0).and_then(|v| if t.text.is_empty() { Err(bad()) } else { Ok(v) })?;
            (v, v)
        }
    };
    // ip6tables swaps a reversed range.
    Ok(if a > b { (b, a) } else { (a, b) })
}

/// Sets `slot` once: an option given twice is an error, as in ip6tables.
fn once<T>(slot: &mut Option<T>, v: T, t: &Tok) -> Result<(), PErr> {
    if slot.is_some() {
        return Err(PErr::at(t, format!("`{}` given twice", t.text)).exp(format!("`{}` at most once", t.text)));
    }
    *slot = Some(v);
    Ok(())
}

fn parse_rule(p: &mut P, chain: &Tok, line: usize) -> Result<(FwRule, Tok), PErr> {
    let mut m = FwMatch::default();
    let mut srh: Option<SrhMatch> = None;
    let mut l4: Option<(u8, Tok)> = None;
    let mut ports = PortMatch { proto: 0, sport: None, dport: None };
    let mut target: Option<(FwTarget, Tok)> = None;
    let mut reject_with: Option<(u8, Tok)> = None;
    let mut seg6_action: Option<(Seg6Action, Tok)> = None;
    let mut inv_at: Option<&Tok> = None;
    while let Some(w) = p.next() {
        let word = w.text.as_str();
        if word == "!" {
            if let Some(prev) = inv_at {
                return Err(PErr::at(prev, "`!` given twice").exp("one `!` before an option"));
            }
            inv_at = Some(w);
            continue;
        }
        let inv = inv_at.take().is_some();
        let no_inv = |what: &str| -> Result<(), PErr> {
            if inv {
                Err(PErr::at(w, format!("`{what}` cannot be negated")).exp("an option that takes `!`"))
            } else {
                Ok(())
            }
        };
        match word {
            "-s" | "--source" | "--src" => {
                let t = p.value(w, "ADDR[/LEN]")?;
                once(&mut m.src, addr_of(t, inv)?, w)?;
            }
            "-d" | "--destination" | "--dst" => {
                let t = p.value(w, "ADDR[/LEN]")?;
                once(&mut m.dst, addr_of(t, inv)?, w)?;
            }
            "-i" | "--in-interface" | "-o" | "--out-interface" => {
                let t = p.value(w, "a device name")?;
                let d = crate::value::dev_of(t)?;
                if word.starts_with("-o") || word == "--out-interface" {
                    if chain.text == "INPUT" {
                        return Err(PErr::at(
                            w,
                            "`-o` cannot be used in INPUT: a packet for the router leaves by no device",
                        )
                        .exp(OPTIONS));
                    }
                    once(&mut m.oif, Neg { v: d, inv }, w)?;
                } else {
                    once(&mut m.iif, Neg { v: d, inv }, w)?;
                }
            }
            "-p" | "--protocol" => {
                let t = p.value(w, "a protocol")?;
                if m.proto.is_some() {
                    return Err(PErr::at(w, "`-p` given twice").exp("`-p` at most once"));
                }
                match proto_of(t)? {
                    Some(v) => m.proto = Some(Neg { v, inv }),
                    // `-p all`: every protocol (`! -p all` would match none).
                    None if inv => {
                        return Err(PErr::at(t, "`! -p all` matches nothing").exp("a protocol other than all"))
                    }
                    None => {}
                }
            }
            "-m" | "--match" => {
                no_inv("-m")?;
                let t = p.value(w, "tcp, udp or srh")?;
                match t.text.as_str() {
                    "srh" => {
                        if srh.is_some() {
                            return Err(PErr::at(t, "`-m srh` given twice").exp("`-m srh` at most once"));
                        }
                        srh = Some(SrhMatch::default());
                    }
                    "tcp" | "udp" => {
                        let proto = if t.text == "tcp" { 6 } else { 17 };
                        if m.proto != Some(Neg { v: proto, inv: false }) {
                            return Err(PErr::at(t, format!("`-m {}` needs `-p {}` before it", t.text, t.text))
                                .exp(format!("-p {} -m {}", t.text, t.text)));
                        }
                        l4 = Some((proto, t.clone()));
                    }
                    other => return Err(PErr::at(t, format!("sr6 has no `{other}` match")).exp("tcp, udp or srh")),
                }
            }
            "--sport" | "--source-port" | "--dport" | "--destination-port" => {
                let proto = match m.proto {
                    Some(Neg { v: v @ (6 | 17), inv: false }) => v,
                    _ => {
                        return Err(PErr::at(w, format!("`{word}` needs `-p tcp` or `-p udp` before it"))
                            .exp("-p tcp|udp [-m tcp|udp] --sport|--dport N[:M]"))
                    }
                };
                if l4.is_none() {
                    l4 = Some((proto, w.clone()));
                }
                let t = p.value(w, "N or N:M")?;
                let r = Neg { v: ports_of(t)?, inv };
                if word == "--sport" || word == "--source-port" {
                    once(&mut ports.sport, r, w)?;
                } else {
                    once(&mut ports.dport, r, w)?;
                }
            }
            _ if word.starts_with("--srh-") || word == "--inner-src" || word == "--inner-dst" => {
                let Some(s) = srh.as_mut() else {
                    return Err(PErr::at(w, format!("`{word}` needs `-m srh` before it")).exp("-m srh --srh-..."));
                };
                srh_option(p, w, s, inv)?;
            }
            "-j" | "--jump" => {
                no_inv("-j")?;
                let t = p.value(w, TARGETS)?;
                let tg = match t.text.as_str() {
                    "ACCEPT" => FwTarget::Accept,
                    "DROP" => FwTarget::Drop,
                    "REJECT" => FwTarget::Reject(REJECT_DEFAULT),
                    "SEG6" => FwTarget::Seg6(Seg6Action::GoNext),
                    "RETURN" => FwTarget::Return,
                    "INPUT" | "FORWARD" => {
                        return Err(PErr::at(t, format!("cannot jump to the built-in chain {}", t.text))
                            .exp("a chain made with -N"))
                    }
                    s if NOT_TARGETS.contains(&s) => {
                        return Err(PErr::at(t, format!("sr6 has no `{s}` target")).exp(TARGETS));
                    }
                    s => FwTarget::Jump(s.to_string()),
                };
                if target.is_some() {
                    return Err(PErr::at(w, "`-j` given twice").exp("one target"));
                }
                target = Some((tg, t.clone()));
            }
            "-g" | "--goto" => {
                return Err(PErr::at(w, "sr6 has no `-g` (goto); use `-j CHAIN`").exp("-j CHAIN"));
            }
            "--reject-with" => {
                no_inv(word)?;
                let t = p.value(w, "a reject type")?;
                let Some(r) = REJECT_WITH.iter().find(|r| r.0 == t.text || r.1 == t.text) else {
                    let names: Vec<&str> = REJECT_WITH.iter().map(|r| r.0).collect();
                    return Err(PErr::at(t, format!("unsupported reject type `{}`", t.text)).exp(names.join(", ")));
                };
                once(&mut reject_with, (r.2, t.clone()), w)?;
            }
            "--seg6-action" => {
                no_inv(word)?;
                let t = p.value(w, SEG6_ACTIONS)?;
                let name = t.text.strip_prefix("seg6-").unwrap_or(&t.text);
                let Some((a, _)) = Seg6Action::ALL.iter().find(|(_, n)| *n == name) else {
                    return Err(PErr::at(t, format!("unknown SEG6 action `{}`", t.text)).exp(SEG6_ACTIONS));
                };
                once(&mut seg6_action, (*a, t.clone()), w)?;
            }
            _ => return Err(PErr::at(w, format!("unknown option `{word}`")).exp(OPTIONS)),
        }
    }
    if let Some(t) = inv_at {
        return Err(PErr::at(t, "`!` at the end of the line").exp("an option after `!`"));
    }
    let Some((mut target, ttok)) = target else {
        return Err(p.eol("a rule needs a target").exp(format!("-j {TARGETS}")));
    };
    match (&mut target, reject_with) {
        (FwTarget::Reject(code), Some((c, _))) => *code = c,
        (_, Some((_, t))) => return Err(PErr::at(&t, "`--reject-with` is an option of REJECT").exp("-j REJECT")),
        _ => {}
    }
    match (&mut target, seg6_action) {
        (FwTarget::Seg6(a), Some((x, _))) => *a = x,
        (FwTarget::Seg6(_), None) => {
            return Err(PErr::at(&ttok, "SEG6 needs an action").exp(format!("--seg6-action {SEG6_ACTIONS}")))
        }
        (_, Some((_, t))) => return Err(PErr::at(&t, "`--seg6-action` is an option of SEG6").exp("-j SEG6")),
        _ => {}
    }
    if let Some((proto, _)) = l4 {
        ports.proto = proto;
        m.ports = Some(ports);
    }
    m.srh = srh;
    Ok((FwRule { line, m, target, nft: None }, ttok))
}

/// One `--srh-...` option into `s`.
fn srh_option(p: &mut P, w: &Tok, s: &mut SrhMatch, inv: bool) -> Result<(), PErr> {
    let word = w.text.as_str();
    if let Some(which) = word.strip_prefix("--inner-") {
        // SERA's advanced mode (thesis Listing 4.4): the original packet's addresses.
        let t = p.value(w, "ADDR[/LEN]")?;
        let a = addr_of(t, inv)?;
        let slot = if which == "src" { &mut s.inner_src } else { &mut s.inner_dst };
        return once(slot, a, w);
    }
    let rest = word.strip_prefix("--srh-").unwrap_or_default();
    let cmp_of = |rest: &str, field: &str| -> Option<usize> {
        ["eq", "gt", "lt"].iter().position(|c| rest.strip_prefix(field).and_then(|r| r.strip_prefix('-')) == Some(c))
    };
    let fields: [(&str, &str, usize); 3] =
        [("hdr-len", "Hdr Ext Len", 0), ("segs-left", "Segments Left", 1), ("last-entry", "Last Entry", 2)];
    for (field, what, k) in fields {
        if let Some(c) = cmp_of(rest, field) {
            let t = p.value(w, "0 to 255")?;
            let v = u8_of(t, what)?;
            let arr = match k {
                0 => &mut s.hdr_len,
                1 => &mut s.segs_left,
                _ => &mut s.last_entry,
            };
            if let Some(slot) = arr.get_mut(c) {
                return once(slot, Neg { v, inv }, w);
            }
        }
    }
    match rest {
        "next-hdr" => {
            let t = p.value(w, "0 to 255")?;
            once(&mut s.next_hdr, Neg { v: u8_of(t, "Next Header")?, inv }, w)
        }
        "tag" => {
            let t = p.value(w, "0 to 65535")?;
            once(&mut s.tag, Neg { v: u16_of(t, "tag")?, inv }, w)
        }
        "psid" | "nsid" | "lsid" => {
            let t = p.value(w, "ADDR[/LEN]")?;
            let a = addr_of(t, inv)?;
            let slot = match rest {
                "psid" => &mut s.psid,
                "nsid" => &mut s.nsid,
                _ => &mut s.lsid,
            };
            once(slot, a, w)
        }
        _ => Err(PErr::at(w, format!("unknown srh option `{word}`")).exp(SRH_OPTIONS)),
    }
}

/// Applies `cmd` to `fw` (a copy the caller commits).
pub(crate) fn apply(fw: &mut FirewallSpec, cmd: FwCmd) -> Result<(), PErr> {
    match cmd {
        FwCmd::NewChain { chain } => {
            if fw.chain(&chain.text).is_some() {
                return Err(PErr::at(&chain, format!("chain {} already exists", chain.text)).exp("a new chain name"));
            }
            fw.chains.push(sr6_core::firewall::spec::ChainSpec {
                name: chain.text.clone(),
                line: chain.line,
                policy: None,
                rules: Vec::new(),
            });
        }
        FwCmd::Policy { chain, accept } => {
            if !BUILTIN.contains(&chain.text.as_str()) {
                return Err(PErr::at(&chain, format!("only a built-in chain has a policy, not {}", chain.text))
                    .exp("INPUT or FORWARD"));
            }
            if let Some(c) = fw.chain_mut(&chain.text) {
                c.policy = Some(accept);
            }
        }
        FwCmd::Delete { chain, what } => {
            let Some(c) = fw.chain_mut(&chain.text) else {
                return Err(PErr::at(&chain, format!("chain {} does not exist", chain.text))
                    .exp("INPUT, FORWARD or a chain made with -N"));
            };
            let i = match what {
                DeleteWhat::At(n, _) if n <= c.rules.len() => n - 1,
                DeleteWhat::At(n, t) => {
                    return Err(PErr::at(&t, format!("chain {} has {} rules: no rule {n}", chain.text, c.rules.len()))
                        .exp(format!("a position from 1 to {}", c.rules.len())))
                }
                DeleteWhat::Rule(r) => match c.rules.iter().position(|x| x.m == r.m && x.target == r.target) {
                    Some(i) => i,
                    None => {
                        return Err(PErr::at(&chain, format!("chain {} has no such rule", chain.text))
                            .exp("a rule as it was added (`sr6 ctl show firewall` lists them)"))
                    }
                },
            };
            c.rules.remove(i);
        }
        FwCmd::Flush { chain } => match chain {
            Some(chain) => match fw.chain_mut(&chain.text) {
                Some(c) => c.rules.clear(),
                None => {
                    return Err(PErr::at(&chain, format!("chain {} does not exist", chain.text))
                        .exp("INPUT, FORWARD or a chain made with -N"))
                }
            },
            None => fw.chains.iter_mut().for_each(|c| c.rules.clear()),
        },
        FwCmd::DeleteChain { chain } => {
            if BUILTIN.contains(&chain.text.as_str()) {
                return Err(PErr::at(&chain, format!("the built-in chain {} cannot be deleted", chain.text))
                    .exp("a chain made with -N"));
            }
            let Some(i) = fw.chains.iter().position(|c| c.name == chain.text) else {
                return Err(
                    PErr::at(&chain, format!("chain {} does not exist", chain.text)).exp("a chain made with -N")
                );
            };
            if fw.chains.get(i).is_some_and(|c| !c.rules.is_empty()) {
                return Err(PErr::at(&chain, format!("chain {} is not empty", chain.text))
                    .exp(format!("ip6tables -F {} first", chain.text)));
            }
            let jumps = |r: &FwRule| matches!(&r.target, FwTarget::Jump(n) if *n == chain.text);
            if let Some(from) = fw.chains.iter().find(|c| c.rules.iter().any(jumps)) {
                return Err(PErr::at(&chain, format!("chain {} is jumped to from {}", chain.text, from.name))
                    .exp("a chain no rule jumps to"));
            }
            fw.chains.remove(i);
        }
        FwCmd::Replace { chain, at: (n, t), rule, target } => {
            check_jump(fw, &chain, &rule, &target)?;
            let Some(c) = fw.chain_mut(&chain.text) else {
                return Err(PErr::at(&chain, format!("chain {} does not exist", chain.text))
                    .exp("INPUT, FORWARD or a chain made with -N"));
            };
            let len = c.rules.len();
            match c.rules.get_mut(n.wrapping_sub(1)) {
                Some(r) => *r = *rule,
                None => {
                    return Err(PErr::at(&t, format!("chain {} has {len} rules: no rule {n}", chain.text))
                        .exp(format!("a position from 1 to {len}")))
                }
            }
        }
        FwCmd::Rename { old, new } => {
            if BUILTIN.contains(&old.text.as_str()) {
                return Err(PErr::at(&old, format!("the built-in chain {} cannot be renamed", old.text))
                    .exp("a chain made with -N"));
            }
            if fw.chain(&old.text).is_none() {
                return Err(PErr::at(&old, format!("chain {} does not exist", old.text)).exp("a chain made with -N"));
            }
            if fw.chain(&new.text).is_some() || BUILTIN.contains(&new.text.as_str()) {
                return Err(PErr::at(&new, format!("chain {} already exists", new.text)).exp("a new chain name"));
            }
            for c in fw.chains.iter_mut() {
                if c.name == old.text {
                    c.name = new.text.clone();
                }
                for r in c.rules.iter_mut() {
                    if let FwTarget::Jump(n) = &mut r.target {
                        if *n == old.text {
                            *n = new.text.clone();
                        }
                    }
                }
            }
        }
        FwCmd::Add { chain, at, rule, target } => {
            check_jump(fw, &chain, &rule, &target)?;
            let Some(c) = fw.chain_mut(&chain.text) else {
                return Err(PErr::at(&chain, format!("chain {} does not exist", chain.text))
                    .exp("INPUT, FORWARD or a chain made with -N"));
            };
            match at {
                None => c.rules.push(*rule),
                Some(n) if n <= c.rules.len() + 1 => c.rules.insert(n - 1, *rule),
                Some(n) => {
                    return Err(PErr::at(
                        &chain,
                        format!("chain {} has {} rules: no position {n}", chain.text, c.rules.len()),
                    )
                    .exp(format!("a position from 1 to {}", c.rules.len() + 1)))
                }
            }
        }
    }
    Ok(())
}

/// A rule of `chain` jumping to a user chain: the chain exists and is not `chain`.
fn check_jump(fw: &FirewallSpec, chain: &Tok, rule: &FwRule, target: &Tok) -> Result<(), PErr> {
    if let FwTarget::Jump(name) = &rule.target {
        if fw.chain(name).is_none() {
            return Err(
                PErr::at(target, format!("no target or chain `{name}`")).exp(format!("{TARGETS} (on an earlier line)"))
            );
        }
        if *name == chain.text {
            return Err(PErr::at(target, format!("chain {name} cannot jump to itself")).exp("another chain"));
        }
    }
    Ok(())
}
