//! `nexthop add|replace id N ...`: nexthop objects (Linux 5.3+), which routes name
//! with `nhid N`:
//!
//! - `id N [via [inet6|inet] NH] dev DEV [onlink]`: one next hop (the kernel requires
//!   the device);
//! - `id N blackhole`;
//! - `id N group M1[,W1]/M2[,W2]/... [type mpath]`: a multipath group of single
//!   next hops, weights 1 to 256 (default 1).

use sr6_core::spec::{NexthopKind, NexthopSpec};

use crate::cmd::{once, Item, P};
use crate::lex::Tok;
use crate::value::{self, matches, Fam};
use crate::PErr;

const WORDS: &str = "id N, via NH, dev DEV, onlink, blackhole or group N1[,W1]/N2[,W2]...";

pub(crate) fn parse_nexthop(p: &mut P, obj: &Tok, line: usize) -> Result<Item, PErr> {
    let v = p.value(obj, "add or replace")?;
    let replace = if matches(&v.text, "add") {
        false
    } else if matches(&v.text, "replace") {
        true
    } else {
        return Err(PErr::at(v, format!("unsupported nexthop command `{}`", v.text)).exp("add or replace"));
    };
    let mut id: Option<(u32, &Tok)> = None;
    let mut via = None;
    let mut dev = None;
    let mut blackhole = false;
    let mut group: Option<Vec<(u32, u16)>> = None;
    let mut seen = Vec::new();
    let mut kinds: Vec<&Tok> = Vec::new();
    while let Some(w) = p.next() {
        match w.text.as_str() {
            "id" => {
                once(&mut seen, w)?;
                let t = p.value(w, "a nexthop id")?;
                let n = value::u32_of(t, "nexthop id")?;
                if n == 0 {
                    return Err(PErr::at(t, "nexthop id 0 is reserved").exp("a nexthop id from 1"));
                }
                id = Some((n, t));
            }
            "via" => {
                once(&mut seen, w)?;
                kinds.push(w);
                let mut t = p.value(w, "a next-hop address")?;
                if matches!(t.text.as_str(), "inet" | "inet6") {
                    t = p.value(t, "a next-hop address")?;
                }
                let a = value::ip_of(t)?;
                p.check_fam(t, Fam::of(&a))?;
                via = Some(a);
            }
            "dev" => {
                once(&mut seen, w)?;
                kinds.push(w);
                let v = p.value(w, "a device name")?;
                let d = value::dev_of(v)?;
                p.note_route_dev(&d, v);
                dev = Some(d);
            }
            "onlink" => once(&mut seen, w)?,
            "blackhole" => {
                once(&mut seen, w)?;
                kinds.push(w);
                blackhole = true;
            }
            "group" => {
                once(&mut seen, w)?;
                kinds.push(w);
                group = Some(members_of(p.value(w, "N1[,W1]/N2[,W2]...")?)?);
            }
            "type" => {
                once(&mut seen, w)?;
                let t = p.value(w, "mpath")?;
                if t.text != "mpath" {
                    return Err(PErr::at(t, format!("nexthop group type `{}` is not supported by sr6 (resilient groups keep per-bucket state sr6 does not have)", t.text))
                        .exp("mpath"));
                }
            }
            "encap" | "fdb" | "proto" | "protocol" => {
                return Err(PErr::at(w, format!("nexthop `{}` is not supported by sr6", w.text)).exp(WORDS));
            }
            _ => return Err(PErr::at(w, format!("unknown nexthop option `{}`", w.text)).exp(WORDS)),
        }
    }
    let Some((id, at)) = id else {
        return Err(p.eol("a nexthop needs an id (sr6 does not allocate one)").exp("id N"));
    };
    let kind = if blackhole || group.is_some() {
        if let (Some(a), Some(b)) = (kinds.first(), kinds.get(1)) {
            return Err(PErr::at(b, format!("`{}` cannot go with `{}`", b.text, a.text))
                .exp("group ..., blackhole, or [via NH] dev DEV"));
        }
        match group {
            Some(members) => {
                if p.fam.is_some() {
                    // The kernel: "Invalid family for group" (a group takes its
                    // members' family).
                    return Err(PErr::at(at, "a nexthop group has no family of its own: drop -6/-4")
                        .exp("ip nexthop add id N group ..."));
                }
                NexthopKind::Group { members }
            }
            None => NexthopKind::Blackhole { v6: p.fam == Some(Fam::V6) },
        }
    } else {
        let Some(dev) = dev else {
            return Err(p.eol("a nexthop needs a device (as the kernel requires)").exp("dev DEV"));
        };
        let v6 = match (via, p.fam) {
            (Some(a), _) => Fam::of(&a) == Fam::V6,
            (None, Some(f)) => f == Fam::V6,
            (None, None) => {
                return Err(PErr::at(at, "a nexthop with only a device needs an address family")
                    .exp("ip -6 nexthop add ... or ip -4 nexthop add ..."))
            }
        };
        NexthopKind::Single { via, dev, v6 }
    };
    Ok(Item::Nexthop { spec: NexthopSpec { line, id, kind }, replace, at: at.clone() })
}

/// `N1[,W1]/N2[,W2]/...`: each id at most once, weights 1 to 256.
fn members_of(t: &Tok) -> Result<Vec<(u32, u16)>, PErr> {
    const EXP: &str = "N1[,W1]/N2[,W2]/... (ids, weights 1 to 256)";
    let mut out: Vec<(u32, u16)> = Vec::new();
    let mut off = 0;
    for part in t.text.split('/') {
        let col = t.col + off;
        off += part.chars().count() + 1;
        let sub = |s: &str| Tok { text: s.to_string(), line: t.line, col, width: s.chars().count().max(1) };
        let (n, w) = match part.split_once(',') {
            Some((n, w)) => (n, Some(w)),
            None => (part, None),
        };
        let id = value::u32_of(&sub(n), "nexthop id").map_err(|e| e.exp(EXP))?;
        let weight = match w {
            None => 1,
            Some(w) => match value::u32_of(&sub(w), "weight") {
                Ok(x) if (1..=256).contains(&x) => x as u16,
                _ => {
                    return Err(PErr::at_pos(t.line, col, format!("invalid weight `{w}` in group")).exp(EXP));
                }
            },
        };
        if out.iter().any(|m| m.0 == id) {
            return Err(PErr::at_pos(t.line, col, format!("nexthop {id} twice in one group")).exp(EXP));
        }
        out.push((id, weight));
    }
    Ok(out)
}
