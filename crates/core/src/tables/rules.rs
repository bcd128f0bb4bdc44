//! Policy routing: the rules (`ip rule`) the ordinary route lookup walks, as the
//! kernel's fib rules (`net/core/fib_rules.c`, `fib6_rules.c`, `fib4_rules.c`).
//!
//! A family with no configured rule has none here, and its lookups go straight to the
//! main table, as before. Otherwise its list is the configured rules and the kernel's
//! implicit ones (0 `lookup local`, 32766 `lookup main`, 32767 `lookup default`) by
//! priority. The first rule whose selectors match the packet (all of them; `not`
//! inverts the whole) acts: `lookup T` yields the route table T has for the destination
//! or, if it has none (or does not exist), lets the next rule try; `blackhole`,
//! `unreachable`, `prohibit` end the walk. After the last rule, no route.
//!
//! The selectors see the packet as the kernel's early flow dissection does
//! (`fib6_rules_early_flow_dissect`, `FLOW_DISSECTOR_F_STOP_AT_ENCAP`): the protocol is
//! the one after the IPv6 extension headers (Hop-by-Hop, Routing, Destination Options
//! skipped; a fragment's protocol is its Fragment header's Next Header, without ports);
//! an encapsulated IPv6 or IPv4 packet ends the walk (protocol 41 or 4, no ports); the
//! ports are read for TCP, UDP, UDP-Lite, DCCP and SCTP (and the SPI halves of ESP and
//! AH, as `proto_ports_offset`), else 0.

use crate::packet::DevId;
use crate::spec::{
    Prefix, RouterSpec, RuleAction, RuleSpec, DEFAULT_RULE_PREF, LOCAL_TABLE, MAIN_RULE_PREF, MAIN_TABLE,
};
use sr6_wire::{IPPROTO_HOPOPTS, IPPROTO_IPV4, IPPROTO_IPV6, IPPROTO_ROUTING};

use super::{BuildError, Route, Tables};

const DEFAULT_TABLE: u32 = 253;
const IPPROTO_FRAGMENT: u8 = 44;
const IPPROTO_DSTOPTS: u8 = 60;
/// How many extension headers the walk follows (the kernel's flow dissector stops at
/// 15 headers, `MAX_FLOW_DISSECT_HDRS`).
const MAX_HEADERS: usize = 15;

/// What a rule does once it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The kernel's local table: the router's own addresses (kept in the main FIB as
    /// [`Route::Local`]), then the FIB of table `local`, if routes name it.
    Local(Option<u32>),
    /// Look in the FIB of this dense index; `None`: a table with no route (the kernel
    /// creates it empty), so nothing is found.
    Fib(Option<u32>),
    Blackhole,
    Unreachable,
    Prohibit,
}

/// One rule, resolved: prefixes as (address, mask) over the address as an integer
/// (IPv4 in the low 32 bits), the device as its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub pref: u32,
    pub not: bool,
    pub src: (u128, u128),
    pub dst: (u128, u128),
    pub iif: Option<DevId>,
    /// 0: any.
    pub proto: u8,
    pub sport: Option<(u16, u16)>,
    pub dport: Option<(u16, u16)>,
    pub action: Action,
    pub line: usize,
}

/// What the fields of a packet the rules select on hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    pub src: u128,
    pub dst: u128,
    pub iif: DevId,
    pub proto: u8,
    pub sport: u16,
    pub dport: u16,
}

impl Rule {
    /// Do the selectors match `f` (inverted by `not`, as `fib_rule_match`)?
    pub fn matches(&self, f: &Flow) -> bool {
        let port = |r: Option<(u16, u16)>, p: u16| r.is_none_or(|(lo, hi)| (lo..=hi).contains(&p));
        let m = self.iif.is_none_or(|d| d == f.iif)
            && (f.src ^ self.src.0) & self.src.1 == 0
            && (f.dst ^ self.dst.0) & self.dst.1 == 0
            && (self.proto == 0 || self.proto == f.proto)
            && port(self.sport, f.sport)
            && port(self.dport, f.dport);
        m != self.not
    }
}

/// The rule lists of both families: empty for a family without configured rules.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub v6: Vec<Rule>,
    pub v4: Vec<Rule>,
}

/// The outcome of walking the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Route(Route),
    Blackhole,
    Unreachable,
    Prohibit,
    /// No rule found a route.
    NoRoute,
}

impl Rules {
    /// Resolves the spec's rules against the tables' devices and table ids.
    pub(crate) fn build(spec: &RouterSpec, t: &Tables) -> Result<Rules, BuildError> {
        let fib = |id: u32| t.table_ids.iter().position(|x| *x == id).map(|i| i as u32);
        let list = |v6: bool| -> Result<Vec<Rule>, BuildError> {
            let mine: Vec<&RuleSpec> = spec.rules.iter().filter(|r| r.v6 == v6).collect();
            if mine.is_empty() {
                return Ok(Vec::new());
            }
            let implicit = |pref, action| Rule {
                pref,
                not: false,
                src: (0, 0),
                dst: (0, 0),
                iif: None,
                proto: 0,
                sport: None,
                dport: None,
                action,
                line: 0,
            };
            let mut out = vec![
                implicit(0, Action::Local(fib(LOCAL_TABLE))),
                implicit(MAIN_RULE_PREF, Action::Fib(fib(MAIN_TABLE))),
                implicit(DEFAULT_RULE_PREF, Action::Fib(fib(DEFAULT_TABLE))),
            ];
            for r in mine {
                let iif = match &r.iif {
                    Some(d) => match t.device_id(d) {
                        Some(i) => Some(i),
                        None => return Err(BuildError { line: r.line, message: format!("unknown device `{d}`") }),
                    },
                    None => None,
                };
                let action = match r.action {
                    RuleAction::Lookup(LOCAL_TABLE) => Action::Local(fib(LOCAL_TABLE)),
                    RuleAction::Lookup(id) => Action::Fib(fib(id)),
                    RuleAction::Blackhole => Action::Blackhole,
                    RuleAction::Unreachable => Action::Unreachable,
                    RuleAction::Prohibit => Action::Prohibit,
                };
                let rule = Rule {
                    pref: r.pref,
                    not: r.not,
                    src: mask_of(r.from),
                    dst: mask_of(r.to),
                    iif,
                    proto: r.ipproto,
                    sport: r.sport,
                    dport: r.dport,
                    action,
                    line: r.line,
                };
                // After the rules of its priority, as the kernel inserts (the spec is in
                // that order already; the implicit ones come first among equals).
                let pos = out.iter().rposition(|o| o.pref <= r.pref).map_or(0, |i| i + 1);
                out.insert(pos, rule);
            }
            Ok(out)
        };
        Ok(Rules { v6: list(true)?, v4: list(false)? })
    }

    /// Walks `rules` for `f`: `lookup(fib, dst)` looks a destination up in one FIB, and
    /// `local` tells whether it is one of the router's own addresses.
    fn walk(rules: &[Rule], f: &Flow, local: impl Fn() -> bool, lookup: impl Fn(u32) -> Option<Route>) -> Verdict {
        for r in rules {
            if !r.matches(f) {
                continue;
            }
            let found = match r.action {
                Action::Local(t) => {
                    if local() {
                        return Verdict::Route(Route::Local);
                    }
                    t.and_then(&lookup)
                }
                Action::Fib(t) => t.and_then(&lookup),
                Action::Blackhole => return Verdict::Blackhole,
                Action::Unreachable => return Verdict::Unreachable,
                Action::Prohibit => return Verdict::Prohibit,
            };
            if let Some(route) = found {
                return Verdict::Route(route);
            }
        }
        Verdict::NoRoute
    }

    /// Whether the IPv6 packet `d` (from its IPv6 header) received on `iif` is for the
    /// router itself: the route of its destination (the main table, through the rules
    /// if there are any) is one of the router's addresses or a local SID. What the INPUT
    /// hooks of the firewall and the IDS ask before they run.
    #[inline(never)]
    pub(crate) fn for_host6(t: &Tables, d: &[u8], iif: DevId) -> bool {
        let Ok(h) = sr6_wire::Ipv6Packet::new_checked(d) else { return false };
        let route = if t.rules.v6.is_empty() {
            t.fibs.first().and_then(|f| f.lookup6(&h.dst_addr().octets()))
        } else {
            match Rules::lookup6(t, d, iif) {
                Verdict::Route(r) => Some(r),
                _ => None,
            }
        };
        matches!(route, Some(Route::Local | Route::Sid(_)))
    }

    /// The IPv6 rules' verdict for packet `d` (from its IPv6 header) received on `iif`.
    pub fn lookup6(t: &Tables, d: &[u8], iif: DevId) -> Verdict {
        let f = flow6(d, iif);
        let main = t.fibs.first();
        let local = || main.and_then(|m| m.exact6.get(f.dst)) == Some(Route::Local);
        let lookup = |i: u32| t.fibs.get(i as usize).and_then(|fib| fib.lookup6_key(f.dst));
        Self::walk(&t.rules.v6, &f, local, lookup)
    }

    /// The IPv4 rules' verdict for packet `d` (from its IPv4 header) received on `iif`.
    pub fn lookup4(t: &Tables, d: &[u8], iif: DevId) -> Verdict {
        let f = flow4(d, iif);
        let a = (f.dst as u32).to_be_bytes();
        let local = || t.is_local4(f.dst as u32);
        let lookup = |i: u32| t.fibs.get(i as usize).and_then(|fib| fib.lookup4(&a));
        Self::walk(&t.rules.v4, &f, local, lookup)
    }
}

/// A prefix as (address, mask) over the address as an integer; none: (0, 0).
fn mask_of(p: Option<Prefix>) -> (u128, u128) {
    match p {
        None => (0, 0),
        Some(Prefix::V6(a, l)) => {
            let m = u128::MAX.checked_shl(128 - u32::from(l)).unwrap_or(0);
            (u128::from(a) & m, m)
        }
        Some(Prefix::V4(a, l)) => {
            let m = u32::MAX.checked_shl(32 - u32::from(l)).unwrap_or(0);
            (u128::from(u32::from(a) & m), u128::from(m))
        }
    }
}

fn byte(d: &[u8], i: usize) -> Option<u8> {
    d.get(i).copied()
}

/// The ports at `off` of an upper-layer header of protocol `proto`, where the kernel's
/// `proto_ports_offset` finds them; 0 and 0 for other protocols or a short packet.
fn ports(d: &[u8], proto: u8, off: usize) -> (u16, u16) {
    let at = match proto {
        6 | 17 | 33 | 50 | 132 | 136 => off,
        51 => off + 4,
        _ => return (0, 0),
    };
    match d.get(at..at + 4) {
        Some(&[a, b, c, e]) => (u16::from_be_bytes([a, b]), u16::from_be_bytes([c, e])),
        _ => (0, 0),
    }
}

/// The flow of an IPv6 packet (see the module's documentation).
pub fn flow6(d: &[u8], iif: DevId) -> Flow {
    let addr = |o: usize| d.get(o..o + 16).and_then(|s| <[u8; 16]>::try_from(s).ok()).map_or(0, u128::from_be_bytes);
    let mut f = Flow { src: addr(8), dst: addr(24), iif, proto: 0, sport: 0, dport: 0 };
    let Some(mut nh) = byte(d, 6) else { return f };
    let mut off = 40;
    for _ in 0..MAX_HEADERS {
        match nh {
            IPPROTO_HOPOPTS | IPPROTO_ROUTING | IPPROTO_DSTOPTS => {
                let (Some(next), Some(len)) = (byte(d, off), byte(d, off + 1)) else { break };
                nh = next;
                off += (usize::from(len) + 1) * 8;
            }
            IPPROTO_FRAGMENT => {
                // A fragment: its protocol, without ports (first fragment included).
                f.proto = byte(d, off).unwrap_or(nh);
                return f;
            }
            _ => break,
        }
    }
    f.proto = nh;
    if nh != IPPROTO_IPV6 && nh != IPPROTO_IPV4 {
        (f.sport, f.dport) = ports(d, nh, off);
    }
    f
}

/// The flow of an IPv4 packet (see the module's documentation).
pub fn flow4(d: &[u8], iif: DevId) -> Flow {
    let addr = |o: usize| d.get(o..o + 4).and_then(|s| <[u8; 4]>::try_from(s).ok()).map_or(0, u32::from_be_bytes);
    let mut f = Flow { src: u128::from(addr(12)), dst: u128::from(addr(16)), iif, proto: 0, sport: 0, dport: 0 };
    let (Some(vihl), Some(proto), Some(fo0), Some(fo1)) = (byte(d, 0), byte(d, 9), byte(d, 6), byte(d, 7)) else {
        return f;
    };
    f.proto = proto;
    // More Fragments or an offset: a fragment, without ports.
    let fragment = u16::from_be_bytes([fo0, fo1]) & 0x3fff != 0;
    if !fragment && proto != IPPROTO_IPV6 && proto != IPPROTO_IPV4 {
        (f.sport, f.dport) = ports(d, proto, usize::from(vihl & 0x0f) * 4);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(src: (u128, u128), proto: u8, dport: Option<(u16, u16)>, not: bool) -> Rule {
        Rule {
            pref: 1,
            not,
            src,
            dst: (0, 0),
            iif: Some(2),
            proto,
            sport: None,
            dport,
            action: Action::Blackhole,
            line: 1,
        }
    }

    fn udp6(ext: &[u8], dport: u16) -> Vec<u8> {
        let mut d = vec![0x60, 0, 0, 0, 0, 0, if ext.is_empty() { 17 } else { ext[0] }, 64];
        d.extend_from_slice(&[0xfc, 0, 0, 0xa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
        d.extend_from_slice(&[0xfc, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5]);
        d.extend_from_slice(&ext[ext.len().min(1)..]);
        d.extend_from_slice(&1234u16.to_be_bytes());
        d.extend_from_slice(&dport.to_be_bytes());
        d.extend_from_slice(&[0, 8, 0, 0]);
        d
    }

    #[test]
    fn selectors_and_not() {
        let f = flow6(&udp6(&[], 5000), 2);
        assert_eq!((f.proto, f.sport, f.dport), (17, 1234, 5000));
        let src = mask_of(Some(Prefix::V6("fc00:a::".parse().unwrap(), 64)));
        assert!(rule(src, 17, Some((5000, 5999)), false).matches(&f));
        assert!(!rule(src, 17, Some((5000, 5999)), true).matches(&f));
        assert!(!rule(src, 6, None, false).matches(&f));
        assert!(rule(src, 6, None, true).matches(&f), "`not` inverts the whole match");
        assert!(!rule(src, 17, Some((6000, 6001)), false).matches(&f));
        let other = mask_of(Some(Prefix::V6("fc00:b::".parse().unwrap(), 64)));
        assert!(!rule(other, 0, None, false).matches(&f));
        assert!(!rule(src, 0, None, false).matches(&Flow { iif: 3, ..f }), "another device");
        assert!(rule(src, 0, None, true).matches(&Flow { iif: 3, ..f }));
    }

    #[test]
    fn extension_headers_fragments_and_encapsulation() {
        // A Destination Options header (8 bytes) then UDP.
        let d = udp6(&[60, 17, 0, 1, 4, 0, 0, 0, 0], 53);
        assert_eq!(flow6(&d, 0).proto, 17);
        assert_eq!(flow6(&d, 0).dport, 53);
        // A fragment: its protocol, no ports.
        let d = udp6(&[44, 17, 0, 0, 1, 0, 0, 0, 7], 53);
        let f = flow6(&d, 0);
        assert_eq!((f.proto, f.sport, f.dport), (17, 0, 0));
        // An SRH (8 bytes + one segment) then IPv6: stops at the encapsulation.
        let mut srh = vec![43, 41, 2, 4, 0, 0, 0, 0, 0];
        srh.extend_from_slice(&[0; 16]);
        let f = flow6(&udp6(&srh, 53), 0);
        assert_eq!((f.proto, f.dport), (41, 0));
        // Truncated: the header that did not fit, no ports.
        assert_eq!(flow6(&udp6(&[], 53)[..41], 0).proto, 17);
        assert_eq!(flow6(&[0x60], 0).proto, 0);
        // IPv4: ports unless a fragment.
        let mut v4 = vec![0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 1, 0, 5, 10, 2, 0, 9];
        v4.extend_from_slice(&[0x13, 0x88, 0x17, 0x70, 0, 8, 0, 0]);
        let f = flow4(&v4, 1);
        assert_eq!((f.src, f.proto, f.sport, f.dport), (0x0a01_0005, 17, 5000, 6000));
        v4[6] = 0x20;
        assert_eq!(flow4(&v4, 1).dport, 0);
    }

    #[test]
    fn walk_falls_through_tables_without_a_route() {
        let f = flow6(&udp6(&[], 5000), 2);
        let r = |pref, action| Rule { pref, action, ..rule((0, 0), 0, None, false) };
        let rules = [r(0, Action::Local(None)), r(5, Action::Fib(Some(1))), r(6, Action::Fib(Some(0)))];
        let lookup = |i: u32| (i == 0).then_some(Route::Blackhole);
        assert_eq!(Rules::walk(&rules, &f, || false, lookup), Verdict::Route(Route::Blackhole));
        assert_eq!(Rules::walk(&rules, &f, || true, lookup), Verdict::Route(Route::Local));
        assert_eq!(Rules::walk(&rules[..2], &f, || false, lookup), Verdict::NoRoute);
        let rules = [r(5, Action::Fib(None)), r(6, Action::Prohibit)];
        assert_eq!(Rules::walk(&rules, &f, || false, lookup), Verdict::Prohibit);
    }
}
