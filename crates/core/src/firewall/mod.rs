//! The SR-aware firewall: ip6tables rules (`ip6tables -A INPUT ... -j DROP`) with the
//! `srh` match of Linux's `ip6t_srh` and the SEG6 target of SERA (the thesis's
//! SEgment Routing Aware firewall, §4.3: `-j SEG6 --seg6-action go-next|skip-next|
//! go-last|eval-args`).
//!
//! Two built-in chains: INPUT, for received packets whose destination is the router's
//! own (an address or a local SID), before the SID's behaviour runs; FORWARD, for
//! transit packets, after the forwarding checks (hop limit, MTU) and the hop-limit
//! decrement, as Linux's `ip6_forward` runs its FORWARD hook. User chains (`-N`) are
//! entered with `-j CHAIN` and left at their end or on `-j RETURN`; a built-in chain
//! ends with its policy (ACCEPT unless `-P CHAIN DROP`).
//!
//! The rules are compiled at table build ([`Firewall::build`]) into one flat list,
//! each chain a range of it, devices resolved to ids, and each chain of 8 rules or more
//! indexed by a classifier ([`classify`]): per packet, a few hash probes find the rules
//! that can match, and only those are compared, in chain order, with the verdict and
//! counters of the walk over every rule. A packet's fields are found once
//! ([`fields`]); each rule is then a few compares. Only the general path runs it: when
//! a firewall exists the table build turns the fast path off (as `ip rule` does), so
//! without one nothing at all is added to any packet's path but one test on the
//! general path's input and forwarding. A rule's match reads the packet as it arrives;
//! with `sysctl net.ipv6.ip6t_seg6=1`, SERA's basic mode (thesis §4.3.1), its
//! addresses, protocol and ports read the *original* packet of SRv6 traffic
//! ([`fields::Fields::original`]: the inner IPv6 packet of an encapsulation, or, for an
//! SRH inserted in the packet, its source and the last segment as destination), so
//! that a legacy rule set judges SRv6 traffic as it judged the traffic before it was
//! steered; `-m srh` still reads the outer SRH.
//!
//! Matching follows the kernel's rules as Debian's `ip6tables` (nft backend) installs
//! them: addresses, devices, protocol and ports as nftables expressions (a protocol or
//! port the walk cannot reach matches neither way), `-m srh` as `ip6t_srh`.

mod classify;
#[cfg(test)]
mod equivalence;
pub(crate) mod fields;
mod seg6;
pub mod spec;
mod srh_match;

use crate::drop::DropReason;
use crate::packet::{DevId, PacketBuf};
use crate::pipeline::{icmp, Next, Worker};
use crate::tables::rules::Rules;
use crate::tables::{Device, Tables};
use fields::Fields;
pub use seg6::EVAL_ARGS;
pub use spec::{FirewallSpec, FwMatch, FwRule, FwTarget, Seg6Action, BUILTIN};
use sr6_wire::Icmpv6Repr;

/// A built-in chain: where a packet meets the firewall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    Input = 0,
    Forward = 1,
}

/// How deep `-j CHAIN` may nest (the kernel allows more, but a user chain is checked
/// at build never to reach itself, so depth is bounded by the number of chains).
const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Accept,
    Drop,
    Reject(u8),
    Seg6(Seg6Action),
    Jump(u32),
    Return,
}

/// A device selector resolved: the ids of the devices whose name matches.
#[derive(Debug, Clone)]
struct Devs {
    ids: Vec<DevId>,
    inv: bool,
}

impl Devs {
    fn of(sel: &spec::Neg<String>, devices: &[Device]) -> Devs {
        let ids = devices
            .iter()
            .enumerate()
            .filter(|(_, d)| match sel.v.strip_suffix('+') {
                Some(prefix) => d.name.starts_with(prefix),
                None => d.name == sel.v,
            })
            .map(|(i, _)| i as DevId)
            .collect();
        Devs { ids, inv: sel.inv }
    }
    fn ok(&self, dev: Option<DevId>) -> bool {
        dev.is_some_and(|d| self.ids.contains(&d)) != self.inv
    }
}

#[derive(Debug, Clone)]
struct Rule {
    m: FwMatch,
    iif: Option<Devs>,
    oif: Option<Devs>,
    target: Target,
}

/// A chain: its rules are `rules[start..end]`.
#[derive(Debug, Clone)]
pub struct Chain {
    pub name: String,
    start: usize,
    end: usize,
    /// A built-in chain's policy: true ACCEPT, false DROP.
    policy: Option<bool>,
    /// Which of its rules a packet is compared with ([`classify`]).
    index: classify::Index,
}

/// How a chain ended: with a verdict, or at its end or a RETURN (back to the caller,
/// or a built-in chain's policy).
enum Flow {
    Verdict(Target),
    Continue,
}

/// What a chain's rules read of one packet, and the counters they count in.
struct Cx<'a, 'b> {
    v: classify::View<'a>,
    iif: Option<DevId>,
    oif: Option<DevId>,
    len: u64,
    counters: &'b mut [u64],
}

/// The compiled firewall ([`Tables::firewall`]).
#[derive(Debug, Clone)]
pub struct Firewall {
    rules: Vec<Rule>,
    chains: Vec<Chain>,
    /// `net.ipv6.ip6t_seg6_args`: how many rightmost bits of the active SID eval-args
    /// reads.
    pub arg_bits: u8,
    /// `net.ipv6.ip6t_seg6`: SERA's basic mode, the rules' addresses, protocol and
    /// ports read from the original packet of SRv6 traffic ([`fields::Fields::original`]).
    pub inner: bool,
    /// The configuration, for `show firewall`.
    pub spec: FirewallSpec,
}

/// A rule or a policy as `show firewall` lists it, with its counters' index.
#[derive(Debug, Clone)]
pub struct Listed<'a> {
    pub chain: &'a str,
    /// `None` for the chain's policy line.
    pub rule: Option<&'a FwRule>,
    pub policy: Option<bool>,
    pub counter: usize,
}

impl Firewall {
    /// Compiles `spec` for `devices`; `None` when it has no rule and every policy
    /// accepts. Errors: a jump to a chain that does not exist or to a built-in one, and
    /// user chains that reach themselves (the kernel's ELOOP).
    pub fn build(spec: &FirewallSpec, devices: &[Device], arg_bits: u8) -> Result<Option<Firewall>, (usize, String)> {
        Self::build_indexed(spec, devices, arg_bits, classify::INDEX_MIN)
    }

    /// [`build`](Self::build), indexing the chains of at least `index_min` rules.
    fn build_indexed(
        spec: &FirewallSpec,
        devices: &[Device],
        arg_bits: u8,
        index_min: usize,
    ) -> Result<Option<Firewall>, (usize, String)> {
        if spec.is_empty() {
            return Ok(None);
        }
        let mut rules = Vec::new();
        let mut chains = Vec::new();
        for c in &spec.chains {
            let start = rules.len();
            for r in &c.rules {
                let target = match &r.target {
                    FwTarget::Accept => Target::Accept,
                    FwTarget::Drop => Target::Drop,
                    FwTarget::Reject(code) => Target::Reject(*code),
                    FwTarget::Seg6(a) => Target::Seg6(*a),
                    FwTarget::Return => Target::Return,
                    FwTarget::Jump(name) => match spec.chains.iter().position(|x| &x.name == name) {
                        Some(i) if i >= BUILTIN.len() => Target::Jump(i as u32),
                        Some(_) => return Err((r.line, format!("cannot jump to the built-in chain {name}"))),
                        None => return Err((r.line, format!("chain {name} does not exist"))),
                    },
                };
                let iif = r.m.iif.as_ref().map(|s| Devs::of(s, devices));
                let oif = r.m.oif.as_ref().map(|s| Devs::of(s, devices));
                rules.push(Rule { m: r.m.clone(), iif, oif, target });
            }
            let own = rules.iter().enumerate().skip(start).map(|(i, r): (usize, &Rule)| (i as u32, &r.m));
            let index = classify::Index::build(own, index_min);
            chains.push(Chain { name: c.name.clone(), start, end: rules.len(), policy: c.policy, index });
        }
        let fw = Firewall { rules, chains, arg_bits, inner: false, spec: spec.clone() };
        for (i, c) in spec.chains.iter().enumerate().skip(BUILTIN.len()) {
            if fw.reaches(i, i, 0) {
                return Err((c.line, format!("chain {} jumps back to itself (a loop)", c.name)));
            }
        }
        Ok(Some(fw))
    }

    /// Whether chain `from` leads to chain `to` through jumps.
    fn reaches(&self, from: usize, to: usize, depth: usize) -> bool {
        let Some(c) = self.chains.get(from) else { return false };
        depth <= self.chains.len()
            && self.rules.get(c.start..c.end).unwrap_or_default().iter().any(|r| match r.target {
                Target::Jump(j) => j as usize == to || self.reaches(j as usize, to, depth + 1),
                _ => false,
            })
    }

    /// How many counters (packets, bytes) the firewall keeps: one per rule, then one
    /// per built-in chain's policy.
    pub fn counter_count(&self) -> usize {
        self.rules.len() + BUILTIN.len()
    }

    /// Every rule and policy in `ip6tables -S` order (policies first, then each chain's
    /// rules), with the index of its counters.
    pub fn list(&self) -> Vec<Listed<'_>> {
        let mut out = Vec::new();
        for (i, c) in self.spec.chains.iter().enumerate() {
            if i < BUILTIN.len() {
                out.push(Listed { chain: &c.name, rule: None, policy: c.policy, counter: self.rules.len() + i });
            }
        }
        for (c, k) in self.spec.chains.iter().zip(&self.chains) {
            for (j, r) in c.rules.iter().enumerate() {
                out.push(Listed { chain: &c.name, rule: Some(r), policy: None, counter: k.start + j });
            }
        }
        out
    }

    /// The INPUT chain for a received packet whose route (the main table, through the
    /// rules if there are any) is one of the router's own addresses or a local SID.
    /// Out of line and cold, as [`run`](Self::run): without a firewall the general path
    /// keeps its code and registers, and pays one test per hook.
    #[cold]
    #[inline(never)]
    pub(crate) fn input6(&self, t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Option<Next> {
        if !Rules::for_host6(t, p.data(), p.in_dev) {
            return None;
        }
        self.run(t, w, p, Hook::Input, None)
    }

    /// Runs chain `hook` on the IPv6 packet in `p` (from its IPv6 header) received on
    /// `p.in_dev`, leaving by `oif` (FORWARD). `None`: accepted, the caller goes on;
    /// otherwise what happens to the packet instead.
    #[cold]
    #[inline(never)]
    pub(crate) fn run(
        &self,
        t: &Tables,
        w: &mut Worker,
        p: &mut PacketBuf,
        hook: Hook,
        oif: Option<DevId>,
    ) -> Option<Next> {
        let d = p.data();
        let Some(f) = Fields::of(d) else { return Some(Next::drop(DropReason::Malformed)) };
        let verdict = self.decide(&f, d, Some(p.in_dev), oif, hook, &mut w.counters.firewall);
        match verdict {
            Target::Accept | Target::Jump(_) | Target::Return => None,
            Target::Drop => Some(Next::drop(DropReason::Firewall)),
            Target::Reject(code) => Some(reject(t, w, p, &f, code)),
            Target::Seg6(a) => seg6::apply(t, w, p, &f, a, self.arg_bits),
        }
    }
}

impl Firewall {
    /// The verdict of chain `hook` on the IPv6 packet `d` whose fields are `f`, counting
    /// in `counters` (two per rule, then two per policy): the candidates of each chain
    /// ([`classify`]) compared in chain order.
    fn decide(
        &self,
        f: &Fields,
        d: &[u8],
        iif: Option<DevId>,
        oif: Option<DevId>,
        hook: Hook,
        counters: &mut [u64],
    ) -> Target {
        // What addresses, protocol and ports are read from: the packet, or in basic
        // mode the original packet of SRv6 traffic (`-m srh` reads the outer SRH).
        let orig = if self.inner { f.original(d) } else { None };
        let (of, od) = orig.unwrap_or((*f, d));
        let len = d.len() as u64;
        let mut cx = Cx { v: classify::View { orig: (&of, od), outer: (f, d) }, iif, oif, len, counters };
        match self.chain(hook as usize, 0, &mut cx) {
            Flow::Verdict(t) => t,
            Flow::Continue => {
                count(cx.counters, self.rules.len() + hook as usize, len);
                match self.chains.get(hook as usize) {
                    Some(c) if c.policy == Some(false) => Target::Drop,
                    _ => Target::Accept,
                }
            }
        }
    }

    /// Chain `c`, entered `depth` jumps deep: its candidates in order, the first that
    /// matches with a verdict ends the walk; a jump runs the user chain and, if that
    /// ends or returns, goes on with the next candidate.
    fn chain(&self, c: usize, depth: usize, cx: &mut Cx<'_, '_>) -> Flow {
        let Some(chain) = self.chains.get(c) else { return Flow::Continue };
        if chain.index.indexed() {
            for i in chain.index.candidates(&cx.v) {
                if let Some(end) = self.rule(i as usize, depth, cx) {
                    return end;
                }
            }
        } else {
            // No index (a short chain, or only wildcards): every rule is a candidate.
            for i in chain.start..chain.end {
                if let Some(end) = self.rule(i, depth, cx) {
                    return end;
                }
            }
        }
        Flow::Continue
    }

    /// Rule `i` on the packet, in a chain entered `depth` jumps deep: `Some` when the
    /// chain ends with it (a verdict, or RETURN), `None` to go on with the next.
    #[inline(always)]
    fn rule(&self, i: usize, depth: usize, cx: &mut Cx<'_, '_>) -> Option<Flow> {
        let r = self.rules.get(i)?;
        if !matches(r, cx.v.orig, cx.v.outer, cx.iif, cx.oif) {
            return None;
        }
        count(cx.counters, i, cx.len);
        match r.target {
            Target::Jump(j) => {
                if depth < MAX_DEPTH {
                    if let Flow::Verdict(t) = self.chain(j as usize, depth + 1, cx) {
                        return Some(Flow::Verdict(t));
                    }
                }
                None
            }
            Target::Return => Some(Flow::Continue),
            ref t => Some(Flow::Verdict(t.clone())),
        }
    }

    /// The reference: [`decide`](Self::decide) as a walk over every rule of each chain
    /// (ip6tables' `ip6t_do_table`), which the classifier must equal.
    #[cfg(test)]
    fn decide_linear(
        &self,
        f: &Fields,
        d: &[u8],
        iif: Option<DevId>,
        oif: Option<DevId>,
        hook: Hook,
        counters: &mut [u64],
    ) -> Target {
        let walk = |counters: &mut [u64]| -> Option<Target> {
            // What addresses, protocol and ports are read from: the packet, or in basic
            // mode the original packet of SRv6 traffic (`-m srh` reads the outer SRH).
            let orig = if self.inner { f.original(d) } else { None };
            let (of, od) = orig.unwrap_or((*f, d));
            let len = d.len() as u64;
            let mut stack = [(0usize, 0usize); MAX_DEPTH];
            let mut depth = 0;
            let (mut chain, mut i) = (hook as usize, self.chains.get(hook as usize)?.start);
            let verdict = loop {
                let c = self.chains.get(chain)?;
                if i >= c.end {
                    // The end of a chain: back to the caller, or the built-in's policy.
                    if depth > 0 {
                        depth -= 1;
                        (chain, i) = *stack.get(depth)?;
                        continue;
                    }
                    count(counters, self.rules.len() + hook as usize, len);
                    break if c.policy == Some(false) { Target::Drop } else { Target::Accept };
                }
                let r = self.rules.get(i)?;
                i += 1;
                if !matches(r, (&of, od), (f, d), iif, oif) {
                    continue;
                }
                count(counters, i - 1, len);
                match r.target {
                    Target::Jump(j) => {
                        if depth < MAX_DEPTH {
                            if let Some(s) = stack.get_mut(depth) {
                                *s = (chain, i);
                            }
                            depth += 1;
                            chain = j as usize;
                            i = self.chains.get(chain)?.start;
                        }
                    }
                    Target::Return => {
                        if depth > 0 {
                            depth -= 1;
                            (chain, i) = *stack.get(depth)?;
                        } else {
                            i = c.end;
                        }
                    }
                    ref v => break v.clone(),
                }
            };
            Some(verdict)
        };
        walk(counters).unwrap_or(Target::Accept)
    }
}

#[inline]
fn count(counters: &mut [u64], i: usize, len: u64) {
    if let Some([pk, by]) = counters.get_mut(2 * i..2 * i + 2) {
        *pk += 1;
        *by += len;
    }
}

/// Whether rule `r` matches: addresses, protocol and ports read from `(f, d)` (the
/// packet, or its original packet in basic mode: fields and the bytes they index), the
/// SRH from the outer packet `outer`.
fn matches(
    r: &Rule,
    (f, d): (&Fields, &[u8]),
    outer: (&Fields, &[u8]),
    iif: Option<DevId>,
    oif: Option<DevId>,
) -> bool {
    let m = &r.m;
    let addr_ok = |a: &Option<spec::AddrMatch>, v: u128| a.as_ref().is_none_or(|a| a.contains(v) != a.inv);
    let dev_ok = |s: &Option<Devs>, d: Option<DevId>| s.as_ref().is_none_or(|s| s.ok(d));
    if !(addr_ok(&m.src, f.src) && addr_ok(&m.dst, f.dst) && dev_ok(&r.iif, iif) && dev_ok(&r.oif, oif)) {
        return false;
    }
    if let Some(p) = m.proto {
        match f.upper {
            Some(u) if (u.proto == p.v) != p.inv => {}
            _ => return false,
        }
    }
    if let Some(pm) = &m.ports {
        // nftables' `tcp dport`: the two bytes in the transport header of a packet whose
        // protocol was found, not behind a non-first fragment.
        let Some(u) = f.upper.filter(|u| u.fragoff == 0) else { return false };
        let port = |at: usize| {
            let b = d.get(u.offset + at..u.offset + at + 2)?;
            Some(u16::from_be_bytes(b.try_into().ok()?))
        };
        for (sel, at) in [(pm.sport, 0), (pm.dport, 2)] {
            if let Some(s) = sel {
                match port(at) {
                    Some(v) if (s.v.0..=s.v.1).contains(&v) != s.inv => {}
                    _ => return false,
                }
            }
        }
    }
    m.srh.as_ref().is_none_or(|s| srh_match::matches(s, outer.1, outer.0.routing) && inner_ok(s, outer.0, outer.1))
        && m.exthdr.iter().all(|e| exthdr_ok(e, outer.0, outer.1))
}

/// An nftables `srh`/`rt` expression (Linux's `nft_exthdr_ipv6_eval`): the first
/// Routing header, whatever its type, found as `ipv6_find_hdr` finds it; `len` bytes
/// at `offset` in it, big-endian, compared. No Routing header, or bytes past the
/// packet's end: the rule does not match, whatever the operator (`NFT_BREAK`).
fn exthdr_ok(e: &spec::ExthdrMatch, f: &Fields, d: &[u8]) -> bool {
    let Some(at) = f.routing else { return false };
    let start = at + usize::from(e.offset);
    let Some(b) = d.get(start..start + usize::from(e.len)) else { return false };
    let v = b.iter().fold(0u128, |a, &x| a << 8 | u128::from(x));
    e.op.holds(v, e.value)
}

/// SERA's `--inner-src`/`--inner-dst`: the original packet's addresses (thesis §4.3.2),
/// whatever the basic mode; no original packet, no match, whatever the `!`.
fn inner_ok(s: &spec::SrhMatch, f: &Fields, d: &[u8]) -> bool {
    if s.inner_src.is_none() && s.inner_dst.is_none() {
        return true;
    }
    let Some((o, _)) = f.original(d) else { return false };
    let ok = |a: &Option<spec::AddrMatch>, v: u128| a.as_ref().is_none_or(|a| a.contains(v) != a.inv);
    ok(&s.inner_src, o.src) && ok(&s.inner_dst, o.dst)
}

/// REJECT: ICMPv6 Destination Unreachable with `code` (ip6t_REJECT's `nf_send_unreach6`
/// through `icmpv6_send`), unless the transport checksum of a TCP, UDP or ICMPv6
/// packet is wrong or it is a non-first fragment (`reject6_csum_ok`): then a silent
/// drop.
fn reject(t: &Tables, w: &mut Worker, p: &mut PacketBuf, f: &Fields, code: u8) -> Next {
    if !seg6::reject_csum_ok(p.data(), f) {
        return Next::drop(DropReason::Firewall);
    }
    icmp::error6(t, w, p, DropReason::Firewall, Icmpv6Repr::dst_unreachable(code))
}
