//! One command: the `ip` prefix, then `link`, `addr`, `neigh`, `route`, `sr` or
//! `sysctl`. Parsing produces a [`Cmd`] without touching the spec; [`crate::apply`]
//! commits it.

use std::net::{IpAddr, Ipv6Addr};

use sr6_core::spec::{
    AddrSpec, DevSel, HmacAlg, HmacKeySpec, NeighSpec, NexthopSpec, Prefix, RouteSpec, SysctlSpec, MAX_MTU, MIN_MTU,
};

use crate::lex::Tok;
use crate::route::{self, Verb};
use crate::value::{self, matches, Fam};
use crate::PErr;

/// What the top level accepts, for errors.
pub(crate) const COMMANDS: &str = "a command: [ip [-4|-6]] link set | addr add | neigh add | \
route add|replace|append | rule add|del | nexthop add | sr tunsrc set | sr hmac set, sysctl -w KEY=VALUE, \
ip6tables -A|-I|-P|-N ..., or ids rules FILE";

/// A parsed command, not yet applied.
pub(crate) struct Cmd {
    pub item: Item,
    /// Devices named by the command, in order of mention.
    pub devs: Vec<String>,
    /// The words of `devs` that a route names to send through: such a mention does not
    /// declare a device (`link set`, `addr add`, `neigh add` and a device's sysctl do).
    pub route_devs: Vec<Tok>,
}

pub(crate) enum Item {
    /// Only names devices (`link set DEV up`, an ignored sysctl).
    Nothing,
    /// `link set DEV address MAC` and/or `mtu N`.
    Link {
        line: usize,
        dev: String,
        mac: Option<[u8; 6]>,
        mtu: Option<u16>,
    },
    Addr {
        spec: AddrSpec,
        replace: bool,
        at: Tok,
    },
    Neigh {
        spec: NeighSpec,
        replace: bool,
        at: Tok,
    },
    Route {
        spec: RouteSpec,
        verb: Verb,
        at: Tok,
    },
    /// `route del PREFIX [table N]`: removes the route of that prefix in that table.
    RouteDel {
        table: u32,
        prefix: Prefix,
        at: Tok,
    },
    /// `None` for `::` (back to the kernel default).
    Tunsrc {
        addr: Option<Ipv6Addr>,
        line: usize,
    },
    /// An empty secret deletes the key, as in the kernel.
    Hmac {
        key: HmacKeySpec,
        at: Tok,
    },
    Sysctls(Vec<SysctlSpec>),
    /// `nexthop add|replace id N ...`.
    Nexthop {
        spec: NexthopSpec,
        replace: bool,
        at: Tok,
    },
    /// `rule add ...`.
    Rule {
        rule: crate::rule::ParsedRule,
        at: Tok,
    },
    /// `rule del ...`: the first rule with the attributes given.
    RuleDel {
        rule: crate::rule::ParsedRule,
        at: Tok,
    },
    /// `ip6tables ...`.
    Firewall {
        cmd: crate::firewall::FwCmd,
    },
    /// `ids rules FILE ...`.
    Ids {
        spec: sr6_core::ids::IdsSpec,
    },
    /// `nft ...`.
    Nft {
        cmd: crate::nft::NftCmd,
    },
}

/// A cursor over the words of one command.
pub(crate) struct P<'a> {
    toks: &'a [Tok],
    i: usize,
    /// `-4` / `-6` given after `ip`.
    pub fam: Option<Fam>,
    pub devs: Vec<String>,
    /// The words naming a device in a route's `dev`/`oif` (which do not declare it).
    pub route_devs: Vec<Tok>,
    /// The directory relative paths on the line are relative to (End.BPF's `endpoint
    /// obj FILE`): the configuration file's; empty for the working directory.
    pub base: &'a std::path::Path,
}

impl<'a> P<'a> {
    pub fn new(toks: &'a [Tok]) -> P<'a> {
        P { toks, i: 0, fam: None, devs: Vec::new(), route_devs: Vec::new(), base: std::path::Path::new("") }
    }
    pub fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.i)
    }
    pub fn next(&mut self) -> Option<&'a Tok> {
        let t = self.toks.get(self.i);
        if t.is_some() {
            self.i += 1;
        }
        t
    }
    /// An error just past the last word of the command.
    pub fn eol(&self, message: impl Into<String>) -> PErr {
        let last = &self.toks[self.toks.len() - 1];
        PErr::at_pos(last.line, last.end_col(), message)
    }
    /// The next word, which must exist; `what` says what it should be.
    pub fn need(&mut self, what: &str) -> Result<&'a Tok, PErr> {
        self.next().ok_or_else(|| self.eol(format!("missing {what}")).exp(what.to_string()))
    }
    /// The value of keyword `kw`.
    pub fn value(&mut self, kw: &Tok, what: &str) -> Result<&'a Tok, PErr> {
        self.next().ok_or_else(|| self.eol(format!("`{}` needs a value", kw.text)).exp(what.to_string()))
    }
    /// No words may remain.
    pub fn done(&mut self, expected: &str) -> Result<(), PErr> {
        match self.next() {
            None => Ok(()),
            Some(t) => Err(PErr::at(t, format!("unexpected `{}`", t.text)).exp(expected.to_string())),
        }
    }
    pub fn note_dev(&mut self, dev: &str) {
        if !self.devs.iter().any(|d| d == dev) {
            self.devs.push(dev.to_string());
        }
    }
    /// A device a route sends through (`dev`, `oif`): it must be declared elsewhere.
    pub fn note_route_dev(&mut self, dev: &str, at: &Tok) {
        self.note_dev(dev);
        self.route_devs.push(at.clone());
    }
    /// An address given on a line with `-4`/`-6` must be of that family.
    pub fn check_fam(&self, t: &Tok, f: Fam) -> Result<(), PErr> {
        match self.fam {
            Some(want) if want != f => {
                Err(PErr::at(t, format!("`{}` is {} but `{}` was given", t.text, f.name(), want.flag()))
                    .exp(format!("an {} address", want.name())))
            }
            _ => Ok(()),
        }
    }
}

/// A keyword must not be given twice on one line.
pub(crate) fn once(seen: &mut Vec<String>, t: &Tok) -> Result<(), PErr> {
    if seen.contains(&t.text) {
        return Err(PErr::at(t, format!("duplicate `{}`", t.text)).exp(format!("`{}` at most once", t.text)));
    }
    seen.push(t.text.clone());
    Ok(())
}

pub(crate) fn parse_command<'a>(toks: &'a [Tok], base: &'a std::path::Path) -> Result<Cmd, PErr> {
    let mut p = P::new(toks);
    p.base = base;
    let mut w = p.need("a command")?;
    let line = w.line;
    if w.text == "sudo" {
        w = p.need(COMMANDS)?;
    }
    if w.text == "sysctl" {
        let item = parse_sysctl(&mut p, w)?;
        return Ok(Cmd { item, devs: p.devs, route_devs: p.route_devs });
    }
    if w.text == "ip6tables" {
        let item = crate::firewall::parse(&mut p, w, line)?;
        return Ok(Cmd { item, devs: p.devs, route_devs: p.route_devs });
    }
    if w.text == "ids" {
        let item = crate::ids::parse(&mut p, line)?;
        return Ok(Cmd { item, devs: p.devs, route_devs: p.route_devs });
    }
    if w.text == "nft" {
        let item = crate::nft::parse(&mut p, w, line)?;
        return Ok(Cmd { item, devs: p.devs, route_devs: p.route_devs });
    }
    if w.text == "iptables" {
        return Err(PErr::at(w, "sr6's firewall filters IPv6: its rules are ip6tables rules").exp("ip6tables"));
    }
    let with_ip = w.text == "ip";
    if with_ip {
        w = p.need("an ip object: link, addr, neigh, route, rule, nexthop or sr")?;
        while w.text.starts_with('-') {
            let f = match w.text.as_str() {
                "-6" => Fam::V6,
                "-4" => Fam::V4,
                "-f" | "-family" => {
                    let v = p.value(w, "inet or inet6")?;
                    match v.text.as_str() {
                        "inet6" => Fam::V6,
                        "inet" => Fam::V4,
                        _ => return Err(PErr::at(v, format!("unknown family `{}`", v.text)).exp("inet or inet6")),
                    }
                }
                _ => return Err(PErr::at(w, format!("unknown ip option `{}`", w.text)).exp("-4, -6 or -f inet|inet6")),
            };
            if p.fam.is_some_and(|g| g != f) {
                return Err(PErr::at(w, "both -4 and -6 given").exp("one address family"));
            }
            p.fam = Some(f);
            w = p.need("an ip object: link, addr, neigh, route, rule, nexthop or sr")?;
        }
    }
    let o = w.text.as_str();
    let item = if matches(o, "link") {
        parse_link(&mut p, w, line)?
    } else if matches(o, "address") {
        parse_addr(&mut p, w, line)?
    } else if matches(o, "neighbour") || matches(o, "neighbor") {
        parse_neigh(&mut p, w, line)?
    } else if matches(o, "route") {
        let v = p.value(w, "add, replace, append or del")?;
        if matches(&v.text, "delete") || v.text == "del" {
            return Ok(Cmd { item: route::parse_route_del(&mut p)?, devs: Vec::new(), route_devs: Vec::new() });
        }
        let verb = if matches(&v.text, "add") {
            Verb::Add
        } else if matches(&v.text, "replace") {
            Verb::Replace
        } else if matches(&v.text, "append") {
            Verb::Append
        } else if matches(&v.text, "flush") {
            return Err(PErr::at(v, "`route flush` is not supported by sr6: a configuration starts with no routes, and `route del PREFIX` removes one")
                .exp("add, replace, append or del"));
        } else {
            return Err(
                PErr::at(v, format!("unsupported route command `{}`", v.text)).exp("add, replace, append or del")
            );
        };
        route::parse_route(&mut p, verb, line)?
    } else if o == "sr" {
        parse_sr(&mut p, w, line)?
    } else if o.len() >= 3 && matches(o, "nexthop") {
        crate::nexthop::parse_nexthop(&mut p, w, line)?
    } else if matches(o, "rule") {
        crate::rule::parse_rule(&mut p, w, line)?
    } else if with_ip {
        return Err(
            PErr::at(w, format!("unknown ip object `{o}`")).exp("link, addr, neigh, route, rule, nexthop or sr")
        );
    } else {
        return Err(PErr::at(w, format!("unknown command `{o}`")).exp(COMMANDS));
    };
    Ok(Cmd { item, devs: p.devs, route_devs: p.route_devs })
}

/// `link set [dev] DEV [up|down] [address MAC] [mtu N]`.
fn parse_link(p: &mut P, obj: &Tok, line: usize) -> Result<Item, PErr> {
    const WORDS: &str = "up, down, address MAC or mtu N";
    let v = p.value(obj, "set")?;
    if !(matches(&v.text, "set") || matches(&v.text, "change")) {
        return Err(PErr::at(v, format!("unsupported link command `{}`", v.text)).exp("set"));
    }
    let mut d = p.value(v, "a device name")?;
    if d.text == "dev" {
        d = p.value(d, "a device name")?;
    }
    let dev = value::dev_of(d)?;
    p.note_dev(&dev);
    let mut mac = None;
    let mut mtu = None;
    let mut state: Option<&Tok> = None;
    let mut any = false;
    while let Some(w) = p.next() {
        any = true;
        match w.text.as_str() {
            "up" | "down" => {
                if let Some(s) = state {
                    if s.text != w.text {
                        return Err(PErr::at(w, "both `up` and `down` given").exp("one of up, down"));
                    }
                }
                state = Some(w);
            }
            "address" | "addr" => {
                if mac.is_some() {
                    return Err(PErr::at(w, "duplicate `address`").exp("`address` at most once"));
                }
                let m = p.value(w, "a MAC address")?;
                let a = value::mac_of(m)?;
                if a[0] & 1 != 0 || a == [0; 6] {
                    return Err(PErr::at(m, format!("`{}` is not a unicast MAC address", m.text))
                        .exp("a unicast, non-zero MAC address"));
                }
                mac = Some(a);
            }
            "mtu" => {
                if mtu.is_some() {
                    return Err(PErr::at(w, "duplicate `mtu`").exp("`mtu` at most once"));
                }
                mtu = Some(mtu_of(p.value(w, "an MTU")?)?);
            }
            _ => return Err(PErr::at(w, format!("unsupported link attribute `{}`", w.text)).exp(WORDS)),
        }
    }
    if !any {
        return Err(p.eol("`link set` needs something to set").exp(WORDS));
    }
    Ok(if mac.is_none() && mtu.is_none() { Item::Nothing } else { Item::Link { line, dev, mac, mtu } })
}

/// The value of `mtu`: the kernel's meaning (the largest IP packet, Ethernet header
/// excluded), in the range sr6 can carry. The kernel takes less than 1280 but then turns
/// IPv6 off on the device; sr6 routes IPv6 on every device, so it refuses it.
fn mtu_of(t: &Tok) -> Result<u16, PErr> {
    let range = || format!("an MTU from {MIN_MTU} to {MAX_MTU}");
    let v = value::u32_of(t, "MTU").map_err(|e| e.exp(range()))?;
    if v < u32::from(MIN_MTU) {
        return Err(PErr::at(
            t,
            format!("MTU {v} is below IPv6's minimum of {MIN_MTU} (RFC 8200 §5; the kernel would turn IPv6 off on the device)"),
        )
        .exp(range()));
    }
    if v > u32::from(MAX_MTU) {
        return Err(PErr::at(t, format!("MTU {v} is more than sr6's buffers carry ({MAX_MTU} + the Ethernet header)"))
            .exp(range()));
    }
    Ok(v as u16)
}

/// The verb after `addr` or `neigh` (`what`): false for `add`, true for `replace`.
fn add_or_replace(p: &mut P, obj: &Tok, what: &str) -> Result<bool, PErr> {
    let v = p.value(obj, "add or replace")?;
    if matches(&v.text, "add") {
        Ok(false)
    } else if matches(&v.text, "replace") {
        Ok(true)
    } else {
        Err(PErr::at(v, format!("unsupported {what} command `{}`", v.text)).exp("add or replace"))
    }
}

/// `addr add ADDR[/LEN] dev DEV [nodad] [brd +] [scope global]` (words in any order;
/// `local ADDR` too).
fn parse_addr(p: &mut P, obj: &Tok, line: usize) -> Result<Item, PErr> {
    const WORDS: &str = "ADDR/LEN, dev DEV, nodad, brd + or scope global";
    let replace = add_or_replace(p, obj, "addr")?;
    let mut addr: Option<(IpAddr, u8, &Tok)> = None;
    let mut dev = None;
    let mut brd: Option<&Tok> = None;
    let mut seen = Vec::new();
    while let Some(w) = p.next() {
        match w.text.as_str() {
            "dev" => {
                once(&mut seen, w)?;
                let d = value::dev_of(p.value(w, "a device name")?)?;
                p.note_dev(&d);
                dev = Some(d);
            }
            "nodad" => once(&mut seen, w)?,
            "brd" | "broadcast" => {
                once(&mut seen, w)?;
                brd = Some(p.value(w, "+ (the subnet's all-ones address)")?);
            }
            "scope" => {
                once(&mut seen, w)?;
                let v = p.value(w, "global")?;
                if !matches!(v.text.as_str(), "global" | "universe" | "0") {
                    return Err(PErr::at(v, format!("address scope `{}` is not supported by sr6: it treats every address as global (the kernel's default), and does not model which sources a scope allows", v.text))
                        .exp("global"));
                }
            }
            _ => {
                let t = if w.text == "local" { p.value(w, "ADDR/LEN")? } else { w };
                if addr.is_some() {
                    return Err(PErr::at(t, format!("unexpected `{}`", t.text)).exp(WORDS));
                }
                let (a, l) = value::addr_len_of(t).map_err(|e| if w.text == "local" { e } else { e.exp(WORDS) })?;
                p.check_fam(t, Fam::of(&a))?;
                addr = Some((a, l, t));
            }
        }
    }
    let Some((addr, prefix_len, at)) = addr else {
        return Err(p.eol("`addr add` needs an address").exp("ADDR/LEN"));
    };
    let Some(dev) = dev else {
        return Err(p.eol("`addr add` needs a device").exp("dev DEV"));
    };
    if let Some(b) = brd {
        // The kernel adds the subnet's all-ones broadcast route itself; `brd +` names
        // that same address. Any other broadcast address is not modelled.
        let IpAddr::V4(a) = addr else {
            return Err(PErr::at(b, "`brd` is for IPv4 addresses (IPv6 has no broadcast)").exp("no brd"));
        };
        let ones = u32::MAX.checked_shr(u32::from(prefix_len)).unwrap_or(0);
        let subnet = std::net::Ipv4Addr::from(u32::from(a) | ones);
        let ok = b.text == "+" || (prefix_len < 31 && b.text.parse::<std::net::Ipv4Addr>() == Ok(subnet));
        if !ok {
            return Err(PErr::at(b, format!("broadcast address `{}` is not supported by sr6: it knows only the subnet's all-ones address ({subnet}), which the kernel adds by itself", b.text))
                .exp(format!("brd + (or brd {subnet})")));
        }
    }
    Ok(Item::Addr { spec: AddrSpec { line, dev, addr, prefix_len }, replace, at: at.clone() })
}

/// `neigh add ADDR lladdr MAC dev DEV [nud permanent|noarp|reachable|stale]`.
fn parse_neigh(p: &mut P, obj: &Tok, line: usize) -> Result<Item, PErr> {
    const WORDS: &str = "ADDR, lladdr MAC, dev DEV or nud STATE";
    let replace = add_or_replace(p, obj, "neigh")?;
    let mut addr: Option<(IpAddr, &Tok)> = None;
    let mut mac = None;
    let mut dev = None;
    let mut seen = Vec::new();
    while let Some(w) = p.next() {
        match w.text.as_str() {
            "lladdr" => {
                once(&mut seen, w)?;
                mac = Some(value::mac_of(p.value(w, "a MAC address")?)?);
            }
            "dev" => {
                once(&mut seen, w)?;
                let d = value::dev_of(p.value(w, "a device name")?)?;
                p.note_dev(&d);
                dev = Some(d);
            }
            "nud" => {
                once(&mut seen, w)?;
                let s = p.value(w, "permanent, noarp, reachable or stale")?;
                if !matches!(s.text.as_str(), "permanent" | "noarp" | "reachable" | "stale") {
                    return Err(PErr::at(s, format!("unsupported neighbour state `{}`", s.text))
                        .exp("permanent, noarp, reachable or stale"));
                }
            }
            _ => {
                let t = if w.text == "to" { p.value(w, "an IP address")? } else { w };
                if addr.is_some() {
                    return Err(PErr::at(t, format!("unexpected `{}`", t.text)).exp(WORDS));
                }
                let a = value::ip_of(t).map_err(|e| if w.text == "to" { e } else { e.exp(WORDS) })?;
                p.check_fam(t, Fam::of(&a))?;
                addr = Some((a, t));
            }
        }
    }
    let Some((addr, at)) = addr else {
        return Err(p.eol("`neigh add` needs an address").exp("ADDR"));
    };
    let Some(mac) = mac else {
        return Err(p.eol("`neigh add` needs a link-layer address").exp("lladdr MAC"));
    };
    let Some(dev) = dev else {
        return Err(p.eol("`neigh add` needs a device").exp("dev DEV"));
    };
    Ok(Item::Neigh { spec: NeighSpec { line, dev, addr, mac }, replace, at: at.clone() })
}

/// `sr tunsrc set ADDR` and `sr hmac set KEYID ALG SECRET`.
fn parse_sr(p: &mut P, obj: &Tok, line: usize) -> Result<Item, PErr> {
    let w = p.value(obj, "tunsrc or hmac")?;
    if matches(&w.text, "tunsrc") {
        let s = p.value(w, "set")?;
        if !matches(&s.text, "set") {
            return Err(PErr::at(s, format!("unsupported `sr tunsrc` command `{}`", s.text)).exp("set"));
        }
        let a = value::v6_of(p.value(s, "an IPv6 address")?)?;
        p.done("end of line after the address")?;
        let addr = if a.is_unspecified() { None } else { Some(a) };
        Ok(Item::Tunsrc { addr, line })
    } else if matches(&w.text, "hmac") {
        const FULL: &str = "sr hmac set KEYID sha1|sha256 SECRET";
        let s = p.value(w, "set")?;
        if !matches(&s.text, "set") {
            return Err(PErr::at(s, format!("unsupported `sr hmac` command `{}`", s.text)).exp("set"));
        }
        let k = p.value(s, "an HMAC key id")?;
        let key_id = value::u32_of(k, "HMAC key id")?;
        if key_id == 0 {
            return Err(
                PErr::at(k, "HMAC key id 0 is not valid (the kernel refuses it)").exp("a key id from 1 to 4294967295")
            );
        }
        let missing = |p: &P| {
            p.eol("sr6 needs the algorithm and the secret on the line (the kernel's `ip sr hmac set` prompts for the secret)")
                .exp(FULL)
        };
        let a = p.next().ok_or_else(|| missing(p))?;
        let alg = match a.text.as_str() {
            "sha1" | "hmac(sha1)" => HmacAlg::Sha1,
            "sha256" | "hmac(sha256)" => HmacAlg::Sha256,
            _ => return Err(PErr::at(a, format!("unknown HMAC algorithm `{}`", a.text)).exp("sha1 or sha256")),
        };
        let sec = p.next().ok_or_else(|| missing(p))?;
        if sec.text.len() > value::MAX_SECRET {
            return Err(PErr::at(sec, format!("the secret is {} bytes long", sec.text.len()))
                .exp(format!("at most {} bytes", value::MAX_SECRET)));
        }
        p.done("end of line after the secret (quote a secret that has spaces)")?;
        let key = HmacKeySpec { line, key_id, alg, secret: sec.text.as_bytes().to_vec() };
        Ok(Item::Hmac { key, at: k.clone() })
    } else {
        Err(PErr::at(w, format!("unsupported sr object `{}`", w.text)).exp("tunsrc or hmac"))
    }
}

pub(crate) const SYSCTL_KEYS: &str = "net.ipv6.conf.{all,default,DEV}.{seg6_enabled,seg6_require_hmac,forwarding}, \
net.ipv4.ip_forward, net.ipv4.conf.{all,default,DEV}.forwarding, net.ipv{6,4}.fib_multipath_hash_policy, \
net.ipv6.ip6t_seg6, net.ipv6.ip6t_seg6_args; ignored: net.ipv6.conf.*.{accept_dad,accept_ra}, \
net.ipv4.conf.*.rp_filter";

/// `sysctl [-w] [-q] KEY=VALUE...`.
fn parse_sysctl(p: &mut P, cmd: &Tok) -> Result<Item, PErr> {
    let mut out = Vec::new();
    let mut any = false;
    while let Some(t) = p.next() {
        if let Some(flags) = t.text.strip_prefix('-') {
            if any || flags.is_empty() || !flags.chars().all(|c| c == 'w' || c == 'q') {
                return Err(PErr::at(t, format!("unsupported sysctl option `{}`", t.text)).exp("-w, -q or KEY=VALUE"));
            }
            continue;
        }
        any = true;
        let Some((key, val)) = t.text.split_once('=') else {
            return Err(PErr::at(t, format!("`{}` is not KEY=VALUE (sr6 does not read sysctls)", t.text))
                .exp("KEY=VALUE without spaces"));
        };
        let vcol = t.col + key.chars().count() + 1;
        if let Some(s) = sysctl_one(p, t, key, val, vcol)? {
            out.push(s);
        }
    }
    if !any {
        return Err(p.eol(format!("`{}` needs KEY=VALUE", cmd.text)).exp("KEY=VALUE"));
    }
    Ok(if out.is_empty() { Item::Nothing } else { Item::Sysctls(out) })
}

fn sysctl_one(p: &mut P, t: &Tok, key: &str, val: &str, vcol: usize) -> Result<Option<SysctlSpec>, PErr> {
    let line = t.line;
    let unknown = || {
        PErr::at(t, format!("unknown sysctl key `{key}`; sr6 understands: {SYSCTL_KEYS}")).exp("a key sr6 understands")
    };
    // `a.b.c` with `/` standing for a `.` inside a component, or `a/b/c`.
    let parts: Vec<String> = if key.starts_with("net/") {
        key.split('/').map(str::to_string).collect()
    } else {
        key.split('.').map(|s| s.replace('/', ".")).collect()
    };
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let int = |lo: i64, hi: i64| -> Result<i64, PErr> {
        let ok =
            !val.is_empty() && val.strip_prefix('-').unwrap_or(val).chars().all(|c| c.is_ascii_digit()) && val != "-";
        match val.parse::<i64>() {
            Ok(v) if ok && (lo..=hi).contains(&v) => Ok(v),
            _ => Err(PErr::at_pos(line, vcol, format!("invalid value `{val}` for {key}")).exp(if lo == -1 {
                "-1, 0 or 1".to_string()
            } else {
                format!("an integer from {lo} to {hi}")
            })),
        }
    };
    let mut sel = |d: &str| -> Result<DevSel, PErr> {
        Ok(match d {
            "all" => DevSel::All,
            "default" => DevSel::Default,
            _ => {
                let col = t.col + "net.ipv6.conf.".len();
                let dt = Tok { text: d.to_string(), line, col, width: d.chars().count() };
                let dev = value::dev_of(&dt)?;
                p.note_dev(&dev);
                DevSel::Dev(dev)
            }
        })
    };
    Ok(match parts.as_slice() {
        ["net", ipv @ ("ipv6" | "ipv4"), "fib_multipath_hash_policy"] => {
            if matches!(val, "2" | "3") {
                return Err(PErr::at_pos(line, vcol, format!("{key}={val} is not supported by sr6: it hashes L3 (0) or L4 (1) fields, not inner headers (2) or a custom field set (3)"))
                    .exp("0 or 1"));
            }
            Some(SysctlSpec::MultipathHash { line, v6: *ipv == "ipv6", policy: int(0, 1)? as u8 })
        }
        ["net", "ipv6", "ip6t_seg6_args"] => Some(SysctlSpec::Ip6tSeg6Args { line, bits: int(0, 128)? as u8 }),
        ["net", "ipv6", "ip6t_seg6"] => Some(SysctlSpec::Ip6tSeg6 { line, on: int(0, 1)? == 1 }),
        ["net", "ipv4", "ip_forward"] => {
            Some(SysctlSpec::Forwarding4 { line, dev: DevSel::All, value: int(0, 1)? == 1 })
        }
        ["net", "ipv6", "conf", d, leaf] => match *leaf {
            "seg6_enabled" => Some(SysctlSpec::Seg6Enabled { line, dev: sel(d)?, value: int(0, 1)? == 1 }),
            "seg6_require_hmac" => Some(SysctlSpec::RequireHmac { line, dev: sel(d)?, value: int(-1, 1)? as i8 }),
            "forwarding" => Some(SysctlSpec::Forwarding6 { line, dev: sel(d)?, value: int(0, 1)? == 1 }),
            "accept_dad" | "accept_ra" => {
                sel(d)?;
                int(0, 2)?;
                None
            }
            _ => return Err(unknown()),
        },
        ["net", "ipv4", "conf", d, leaf] => match *leaf {
            "forwarding" => Some(SysctlSpec::Forwarding4 { line, dev: sel(d)?, value: int(0, 1)? == 1 }),
            "rp_filter" => {
                sel(d)?;
                int(0, 2)?;
                None
            }
            _ => return Err(unknown()),
        },
        _ => return Err(unknown()),
    })
}
