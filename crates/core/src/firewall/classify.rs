//! The rule classifier: which rules of a chain a packet needs to be compared with, found
//! in time that does not grow with the number of rules for the common rule shapes.
//!
//! At build each rule of a chain long enough ([`INDEX_MIN`] rules) is filed under one
//! **necessary condition** it has, a field of the packet that must equal a value for
//! the rule to match, chosen as its most selective one ([`choose`]):
//!
//! | rule option (not negated) | key read from the packet |
//! |---|---|
//! | `-s`, `-d ADDR/MASK` (mask not 0) | the source / destination under the mask (the original packet's in basic mode, as the rule reads it) |
//! | `--sport`, `--dport N` (one port) | the port, where the rule reads it |
//! | `-p PROTO` | the upper-layer protocol the walk found |
//! | `--srh-tag N`, nft `srh tag == N` | the 2 bytes of the first Routing header's Tag |
//! | `--srh-segs-left-eq N`, nft `rt seg-left == N` | its Segments Left byte |
//! | `--srh-last-entry-eq N`, nft `srh last-entry == N` | its Last Entry byte |
//! | `--srh-lsid`, `--srh-nsid`, `--srh-psid ADDR/LEN`, nft `srh sid[1] == ADDR` | Segment List\[0\], \[SL − 1\] (SL > 0), \[SL + 1\] (SL ≠ Last Entry) under the mask |
//!
//! Rules filed under one field and one mask form a *group*, a hash map from the
//! masked value to the rules' indices in chain order (tuple space search, one tuple
//! per group); a rule with no such condition (only negations, port ranges, `gt`/`lt`
//! comparisons, devices, nft `!=`/`<`/`>`, no match at all) goes to the chain's
//! *wildcard* list. Per packet, each group is probed once with the packet's key for it,
//! and the lists found and the wildcard list are merged in rule order
//! ([`Candidates`]): exactly the rules whose filed condition holds, plus the
//! wildcards. Only those are compared in full (`super::matches`), in chain order.
//!
//! **Why the verdict and the counters are the linear walk's**: a rule left out has a
//! filed condition that is false for the packet, so the full comparison would have
//! failed on it too; the walk over the candidates meets the matching rules in the same
//! order as the walk over all rules, and only a matching rule counts or acts (a jump
//! returns to the next candidate after it, as the linear walk returns to the next
//! rule). `super::Firewall::decide_linear`, the plain walk, is kept as the reference
//! and a property test compares the two on random rule sets and packets.
//!
//! **Cost**: one probe per group (at most [`MAX_GROUPS`]; a chain has one per field
//! and mask used, so a few) plus the candidates: the rules whose key the packet has,
//! and the wildcards. For rule sets of exact and prefix addresses, single ports,
//! protocols and SRH fields the cost does not grow with the number of rules except
//! where many rules share the packet's key (many rules on `-p udp` alone); wildcard
//! rules are compared one by one as before.

use super::fields::Fields;
use super::spec::{AddrMatch, FwMatch, NftOp};
use rustc_hash::FxHashMap;

/// A chain of fewer rules is walked rule by rule: the probes would cost more than the
/// comparisons they save.
pub(super) const INDEX_MIN: usize = 8;

/// The most groups a chain probes (each a list to merge, kept on the stack); the rules
/// of the smallest groups beyond it are wildcards.
pub(super) const MAX_GROUPS: usize = 15;

/// A packet field a rule can be filed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Field {
    Src,
    Dst,
    Sport,
    Dport,
    Proto,
    Tag,
    SegsLeft,
    LastEntry,
    Lsid,
    Nsid,
    Psid,
}

/// Rules filed under `field` with `mask`: masked value -> their indices, ascending.
#[derive(Debug, Clone)]
struct Group {
    field: Field,
    mask: u128,
    map: FxHashMap<u128, Vec<u32>>,
}

/// A chain's classifier ([`Index::build`]); with no group, every rule is a wildcard:
/// the linear walk.
#[derive(Debug, Clone, Default)]
pub(super) struct Index {
    groups: Vec<Group>,
    /// Rules filed nowhere, ascending (indices into the firewall's rules).
    wild: Vec<u32>,
}

/// The packet as the rules read it: the fields their addresses, protocol and ports
/// read (the original packet in basic mode) and the outer packet's, whose first
/// Routing header the SRH options read.
pub(super) struct View<'a> {
    pub orig: (&'a Fields, &'a [u8]),
    pub outer: (&'a Fields, &'a [u8]),
}

impl View<'_> {
    /// The packet's key for `field` under `mask`; `None` when a rule filed under it
    /// cannot match (the field is not there to read).
    #[inline]
    fn key(&self, field: Field, mask: u128) -> Option<u128> {
        let (of, od) = self.orig;
        let (f, d) = self.outer;
        let byte = |at: usize| d.get(f.routing? + at).map(|&b| u128::from(b));
        let sid = |i: usize| {
            let at = f.routing? + 8 + 16 * i;
            let b: [u8; 16] = d.get(at..at + 16)?.try_into().ok()?;
            Some(u128::from_be_bytes(b))
        };
        let port = |at: usize| {
            let u = of.upper.filter(|u| u.fragoff == 0)?;
            let b = od.get(u.offset + at..u.offset + at + 2)?;
            Some(u128::from(u16::from_be_bytes(b.try_into().ok()?)))
        };
        let v = match field {
            Field::Src => Some(of.src),
            Field::Dst => Some(of.dst),
            Field::Sport => port(0),
            Field::Dport => port(2),
            Field::Proto => of.upper.map(|u| u128::from(u.proto)),
            Field::Tag => Some(byte(6)? << 8 | byte(7)?),
            Field::SegsLeft => byte(3),
            Field::LastEntry => byte(4),
            Field::Lsid => sid(0),
            Field::Nsid => {
                let sl = usize::try_from(byte(3)?).ok()?;
                sid(sl.checked_sub(1)?)
            }
            Field::Psid => {
                let (sl, le) = (byte(3)?, byte(4)?);
                if sl == le {
                    return None;
                }
                sid(usize::try_from(sl).ok()? + 1)
            }
        };
        v.map(|v| v & mask)
    }
}

/// A rule's filing candidates: (field, mask, masked value, selectivity in bits).
fn conditions(m: &FwMatch) -> Vec<(Field, u128, u128, u32)> {
    let mut out = Vec::new();
    let addr = |field: Field, a: &Option<AddrMatch>, out: &mut Vec<_>| {
        if let Some(a) = a.filter(|a| !a.inv && u128::from(a.mask) != 0) {
            let mask = u128::from(a.mask);
            out.push((field, mask, u128::from(a.addr) & mask, mask.count_ones()));
        }
    };
    addr(Field::Src, &m.src, &mut out);
    addr(Field::Dst, &m.dst, &mut out);
    let all = u128::MAX;
    if let Some(p) = m.proto.filter(|p| !p.inv) {
        out.push((Field::Proto, all, u128::from(p.v), 3));
    }
    if let Some(pm) = &m.ports {
        for (field, sel) in [(Field::Sport, pm.sport), (Field::Dport, pm.dport)] {
            if let Some(s) = sel.filter(|s| !s.inv && s.v.0 == s.v.1) {
                out.push((field, all, u128::from(s.v.0), 16));
            }
        }
    }
    if let Some(s) = &m.srh {
        if let Some(t) = s.tag.filter(|t| !t.inv) {
            out.push((Field::Tag, all, u128::from(t.v), 16));
        }
        if let Some(n) = s.segs_left[0].filter(|n| !n.inv) {
            out.push((Field::SegsLeft, all, u128::from(n.v), 6));
        }
        if let Some(n) = s.last_entry[0].filter(|n| !n.inv) {
            out.push((Field::LastEntry, all, u128::from(n.v), 5));
        }
        addr(Field::Lsid, &s.lsid, &mut out);
        addr(Field::Nsid, &s.nsid, &mut out);
        addr(Field::Psid, &s.psid, &mut out);
    }
    for e in m.exthdr.iter().filter(|e| e.op == NftOp::Eq) {
        match (e.offset, e.len) {
            (6, 2) => out.push((Field::Tag, all, e.value, 16)),
            (3, 1) => out.push((Field::SegsLeft, all, e.value, 6)),
            (4, 1) => out.push((Field::LastEntry, all, e.value, 5)),
            (8, 16) => out.push((Field::Lsid, all, e.value, 128)),
            _ => {}
        }
    }
    out
}

/// The condition a rule is filed under: its most selective one (first given on a tie).
fn choose(m: &FwMatch) -> Option<(Field, u128, u128)> {
    let c = conditions(m);
    let best = c.iter().map(|c| c.3).max()?;
    c.into_iter().find(|c| c.3 == best).map(|(f, mask, v, _)| (f, mask, v))
}

impl Index {
    /// The classifier of the chain whose rules are `rules` (`(index, match)`, in
    /// chain order), indexing when there are at least `min` of them.
    pub(super) fn build<'a>(rules: impl Iterator<Item = (u32, &'a FwMatch)>, min: usize) -> Index {
        let rules: Vec<_> = rules.collect();
        let mut ix = Index::default();
        if rules.len() < min.max(1) {
            ix.wild = rules.iter().map(|r| r.0).collect();
            return ix;
        }
        for (i, m) in rules {
            let Some((field, mask, v)) = choose(m) else {
                ix.wild.push(i);
                continue;
            };
            let g = match ix.groups.iter().position(|g| g.field == field && g.mask == mask) {
                Some(g) => g,
                None => {
                    ix.groups.push(Group { field, mask, map: FxHashMap::default() });
                    ix.groups.len() - 1
                }
            };
            if let Some(g) = ix.groups.get_mut(g) {
                g.map.entry(v).or_default().push(i);
            }
        }
        // Beyond MAX_GROUPS, the smallest groups' rules are wildcards.
        if ix.groups.len() > MAX_GROUPS {
            ix.groups.sort_by_key(|g| std::cmp::Reverse(g.map.values().map(Vec::len).sum::<usize>()));
            for g in ix.groups.split_off(MAX_GROUPS) {
                ix.wild.extend(g.map.into_values().flatten());
            }
            ix.wild.sort_unstable();
        }
        ix
    }

    /// Whether the chain has an index; without one every rule is a wildcard, and the
    /// caller walks them all without merging.
    #[inline]
    pub(super) fn indexed(&self) -> bool {
        !self.groups.is_empty()
    }

    /// The candidates for the packet `v`: the rules whose filed condition holds and
    /// the wildcards, in chain order.
    #[inline]
    pub(super) fn candidates<'a>(&'a self, v: &View<'_>) -> Candidates<'a> {
        let mut c = Candidates { lists: [&[]; MAX_GROUPS + 1], n: 0 };
        let mut push = |l: &'a [u32]| {
            if let Some(s) = c.lists.get_mut(c.n) {
                *s = l;
                c.n += 1;
            }
        };
        if !self.wild.is_empty() {
            push(&self.wild);
        }
        for g in &self.groups {
            if let Some(l) = v.key(g.field, g.mask).and_then(|k| g.map.get(&k)) {
                push(l);
            }
        }
        c
    }
}

/// Sorted lists of rule indices, merged ([`Iterator`]: ascending; each rule is in one
/// list only).
pub(super) struct Candidates<'a> {
    lists: [&'a [u32]; MAX_GROUPS + 1],
    n: usize,
}

impl<'a> Iterator for Candidates<'a> {
    type Item = u32;
    #[inline]
    fn next(&mut self) -> Option<u32> {
        let lists = self.lists.get_mut(..self.n)?;
        if let [one] = lists {
            let s: &'a [u32] = one;
            let (&h, rest) = s.split_first()?;
            *one = rest;
            return Some(h);
        }
        let mut best: Option<(u32, usize)> = None;
        for (k, l) in lists.iter().enumerate() {
            if let Some(&h) = l.first() {
                if best.is_none_or(|(b, _)| h < b) {
                    best = Some((h, k));
                }
            }
        }
        let (h, k) = best?;
        if let Some(l) = lists.get_mut(k) {
            let s: &'a [u32] = l;
            *l = s.get(1..).unwrap_or_default();
        }
        Some(h)
    }
}
