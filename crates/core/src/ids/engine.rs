//! The matching engine: one Aho-Corasick automaton over every rule's *anchor* (its
//! longest positive content), built once per rule set, finds in one pass over a
//! payload the rules that can match; only those candidates — and the rules without a
//! positive content, which any packet can match — are then checked in full (header,
//! every content with its modifiers). A packet's cost grows with its payload and with
//! the rules whose anchor it contains, not with the number of rules.
//!
//! The automaton is ASCII case-insensitive (a `nocase` anchor is found as it is, and
//! the full check compares case where the content asks for it).
//!
//! Content semantics are Snort 2's: `offset`/`depth` bound the search from the
//! payload's start (`depth` counted from `offset`); `distance`/`within` from the end
//! of the previous content's match (the window `[end + distance, end + distance +
//! within)`), retried at each match of the previous content (at most
//! [`SEARCH_BUDGET`] searches a rule); `content:!"x"` needs `x` absent from its window.

use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::FxHashMap;

use super::rule::{Content, Proto, Rule, Set};
use super::view::{View, L4};
use std::net::IpAddr;

/// The most content searches one rule's check makes (backtracking over relative
/// contents); past it the rule does not match.
pub const SEARCH_BUDGET: u32 = 4096;

/// The compiled rule set's automaton and candidate lists.
#[derive(Debug, Clone)]
pub struct Engine {
    ac: Option<AhoCorasick>,
    /// By pattern id: the rules anchored on it, in rule order.
    by_pattern: Vec<Vec<u32>>,
    /// The rules with no positive content: candidates for every packet.
    always: Vec<u32>,
    rules: usize,
}

/// A worker's per-packet working memory, sized once for a rule set (nothing is
/// allocated per packet): a mark per rule (the packet's number when it became a
/// candidate) and the candidates.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    seen: Vec<u32>,
    epoch: u32,
    pub hits: Vec<u32>,
}

impl Scratch {
    pub fn new(rules: usize) -> Scratch {
        Scratch { seen: vec![0; rules], epoch: 0, hits: Vec::with_capacity(rules) }
    }
}

impl Engine {
    pub fn build(rules: &[Rule]) -> Result<Engine, String> {
        let mut ids: FxHashMap<Vec<u8>, usize> = FxHashMap::default();
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        let mut by_pattern: Vec<Vec<u32>> = Vec::new();
        let mut always = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            let anchor = r.contents.iter().filter(|c| !c.neg).max_by_key(|c| c.bytes.len());
            match anchor {
                None => always.push(i as u32),
                Some(c) => {
                    let key = c.bytes.to_ascii_lowercase();
                    let id = *ids.entry(key.clone()).or_insert_with(|| {
                        patterns.push(key);
                        by_pattern.push(Vec::new());
                        patterns.len() - 1
                    });
                    if let Some(v) = by_pattern.get_mut(id) {
                        v.push(i as u32);
                    }
                }
            }
        }
        let ac = if patterns.is_empty() {
            None
        } else {
            let ac = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .map_err(|e| format!("cannot build the content automaton: {e}"))?;
            Some(ac)
        };
        Ok(Engine { ac, by_pattern, always, rules: rules.len() })
    }

    /// How many distinct anchors the automaton holds.
    pub fn patterns(&self) -> usize {
        self.by_pattern.len()
    }

    /// Fills `s.hits` with the candidate rules for `payload`, in rule order. False when
    /// `s` was not sized for this rule set (nothing is inspected then).
    pub fn candidates(&self, payload: &[u8], s: &mut Scratch) -> bool {
        if s.seen.len() != self.rules || s.hits.capacity() < self.rules {
            return false;
        }
        s.hits.clear();
        s.epoch = s.epoch.wrapping_add(1);
        if s.epoch == 0 {
            s.seen.fill(0);
            s.epoch = 1;
        }
        s.hits.extend_from_slice(&self.always);
        for &r in &self.always {
            if let Some(m) = s.seen.get_mut(r as usize) {
                *m = s.epoch;
            }
        }
        if let Some(ac) = &self.ac {
            for m in ac.find_overlapping_iter(payload) {
                for &r in self.by_pattern.get(m.pattern().as_usize()).map_or(&[][..], |v| v) {
                    if let Some(mark) = s.seen.get_mut(r as usize) {
                        if *mark != s.epoch {
                            *mark = s.epoch;
                            s.hits.push(r);
                        }
                    }
                }
            }
        }
        s.hits.sort_unstable();
        true
    }
}

/// Whether rule `r` matches the packet `v` in full.
pub fn matches(r: &Rule, v: &View) -> bool {
    header(r, v) && {
        let mut budget = SEARCH_BUDGET;
        contents(&r.contents, v.payload, 0, &mut budget)
    }
}

fn header(r: &Rule, v: &View) -> bool {
    let proto = match r.proto {
        Proto::Ip => true,
        Proto::Tcp => v.l4 == L4::Tcp,
        Proto::Udp => v.l4 == L4::Udp,
        Proto::Icmp => v.l4 == L4::Icmp,
    };
    if !proto {
        return false;
    }
    let addr = |s: &Set<_>, a: IpAddr| s.matches(|n: &super::rule::Net| n.contains(a));
    let port = |s: &Set<(u16, u16)>, p: Option<u16>| {
        s.is_any() || p.is_some_and(|p| s.matches(|(lo, hi)| (*lo..=*hi).contains(&p)))
    };
    let (sp, dp) = v.ports.map_or((None, None), |(a, b)| (Some(a), Some(b)));
    let dir = |s: IpAddr, sp: Option<u16>, d: IpAddr, dp: Option<u16>| {
        addr(&r.src, s) && addr(&r.dst, d) && port(&r.sport, sp) && port(&r.dport, dp)
    };
    dir(v.src, sp, v.dst, dp) || (r.bidir && dir(v.dst, dp, v.src, sp))
}

/// Contents `cs` in order, the previous match ending at `prev`.
fn contents(cs: &[Content], p: &[u8], prev: usize, budget: &mut u32) -> bool {
    let Some((c, rest)) = cs.split_first() else { return true };
    let w = window(c, p.len(), prev);
    if c.neg {
        let found = match w {
            Some((s, e)) => search(c, p, s, e, budget).is_some(),
            None => false,
        };
        return !found && *budget > 0 && contents(rest, p, prev, budget);
    }
    let Some((s, e)) = w else { return false };
    // Only a relative content after this one depends on where this one matched.
    let retry = rest.iter().any(Content::relative);
    let mut from = s;
    while let Some(at) = search(c, p, from, e, budget) {
        let end = at + c.bytes.len();
        if contents(rest, p, end, budget) {
            return true;
        }
        if !retry {
            return false;
        }
        from = at + 1;
    }
    false
}

/// The bytes of `p` a content is searched in.
fn window(c: &Content, len: usize, prev: usize) -> Option<(usize, usize)> {
    let (s, e) = if c.relative() {
        let s = (prev as i64 + i64::from(c.distance.unwrap_or(0))).max(0) as usize;
        (s, c.within.map_or(len, |w| s.saturating_add(w as usize)))
    } else {
        let s = c.offset.unwrap_or(0) as usize;
        (s, c.depth.map_or(len, |d| s.saturating_add(d as usize)))
    };
    let e = e.min(len);
    (s <= e).then_some((s, e))
}

/// The first match of `c` in `p[s..e]`, as an offset in `p`.
fn search(c: &Content, p: &[u8], s: usize, e: usize, budget: &mut u32) -> Option<usize> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let hay = p.get(s..e)?;
    let n = c.bytes.len();
    if n == 0 || n > hay.len() {
        return None;
    }
    hay.windows(n)
        .position(|w| if c.nocase { w.eq_ignore_ascii_case(&c.bytes) } else { w == c.bytes.as_slice() })
        .map(|i| s + i)
}
