//! `route add|replace|append [to] [unicast|blackhole|unreachable] PREFIX OPTIONS...`,
//! including `encap seg6`, `encap seg6local`, `encap gtp` (its words: [`crate::gtp`]) and
//! `encap bpf` (LWT BPF programs, [`sr6_core::pipeline::lwt_bpf`]).
//!
//! As in iproute2, the words after `encap seg6` / `encap seg6local` belong to the encap
//! until the first word that is not one of its keywords; the line then goes back to
//! route options. So `table` right after `action End.T` is the action's table, and
//! `table` after `dev X` is the route's.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use sr6_core::behaviour::{by_keyword, end_bpf, mobile, replace_csid, Behaviour, Flavor, Param, TABLE};
use sr6_core::pipeline::lwt_bpf::{self, LwtBpf};
use sr6_core::spec::{
    CsidLengths, CsidPolicy, CsidScheme, Flavors, PathSpec, Prefix, RouteKind, RouteSpec, Seg6Encap, Seg6Mode,
    SidAction, SidParams, SrhParam, MAIN_TABLE,
};
use sr6_core::tables::csid_policy;

use crate::cmd::{once, Item, P};
use crate::lex::Tok;
use crate::value::{self, Fam};
use crate::PErr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Add,
    Replace,
    Append,
}

const OPTIONS: &str = "via NH, dev DEV, nexthop ..., nhid N, table TABLE, encap seg6 ..., encap seg6local ..., \
encap gtp ..., encap bpf ..., metric N, proto P, onlink, mtu N, pref P or scope link|global";

/// The paths of a multipath route, each with its `via` word (for family errors).
type Paths<'a> = Vec<(PathSpec, Option<&'a Tok>)>;

enum Encap<'a> {
    Seg6 { encap: Seg6Encap, mode_tok: &'a Tok },
    Local { action: Box<SidAction> },
    Gtp { tunnel: sr6_core::spec::GtpTunnel },
    Bpf { bpf: LwtBpf },
}

pub(crate) fn parse_route(p: &mut P, verb: Verb, line: usize) -> Result<Item, PErr> {
    let mut t = p.need("a prefix: ADDR[/LEN] or default")?;
    if t.text == "to" {
        t = p.value(t, "a prefix: ADDR[/LEN] or default")?;
    }
    #[derive(PartialEq)]
    enum Type {
        Unicast,
        Blackhole,
        Unreachable,
    }
    let mut rtype = Type::Unicast;
    match t.text.as_str() {
        "unicast" | "blackhole" | "unreachable" => {
            rtype = match t.text.as_str() {
                "blackhole" => Type::Blackhole,
                "unreachable" => Type::Unreachable,
                _ => Type::Unicast,
            };
            t = p.value(t, "a prefix: ADDR[/LEN] or default")?;
        }
        "local" => {
            return Err(PErr::at(t, "route type `local` is not supported by sr6: its local addresses are those of `addr add` (the kernel consults a local route before every other table, which sr6's single lookup would not)")
                .exp("unicast, blackhole or unreachable, or `addr add ADDR/128 dev DEV` for a local address"));
        }
        "broadcast" | "anycast" | "multicast" | "throw" | "prohibit" | "nat" | "xresolve" => {
            return Err(PErr::at(t, format!("route type `{}` is not supported by sr6 (not modelled)", t.text))
                .exp("unicast, blackhole or unreachable"));
        }
        _ => {}
    }
    let pfx_tok = t;
    let pfx = prefix_or_default(t)?;

    let mut via: Option<(IpAddr, &Tok)> = None;
    let mut dev: Option<(String, &Tok)> = None;
    let mut table = None;
    let mut encap: Option<(Encap, &Tok)> = None;
    let mut paths: Option<(Paths, &Tok)> = None;
    let mut nhid: Option<(u32, &Tok)> = None;
    let mut seen = Vec::new();
    // `via`, `dev` and `encap` keywords, for blackhole/unreachable errors.
    let mut forwarding_words: Vec<&Tok> = Vec::new();
    while let Some(w) = p.next() {
        if matches!(w.text.as_str(), "via" | "dev" | "oif" | "encap" | "nexthop" | "nhid") {
            forwarding_words.push(w);
        }
        match w.text.as_str() {
            "via" => {
                once(&mut seen, w)?;
                via = Some(parse_via(p, w)?);
            }
            "dev" | "oif" => {
                if dev.is_some() {
                    return Err(PErr::at(w, "duplicate `dev`").exp("`dev` at most once"));
                }
                let v = p.value(w, "a device name")?;
                let d = value::dev_of(v)?;
                p.note_route_dev(&d, v);
                dev = Some((d, v));
            }
            "table" => {
                once(&mut seen, w)?;
                table = Some(value::table_of(p.value(w, "a table id")?)?);
            }
            "metric" | "priority" | "preference" => {
                if seen.iter().any(|s| matches!(s.as_str(), "metric" | "priority" | "preference")) {
                    return Err(PErr::at(w, "duplicate `metric`").exp("`metric` at most once"));
                }
                seen.push(w.text.clone());
                value::u32_of(p.value(w, "a number")?, "metric")?;
            }
            "proto" | "protocol" => {
                once(&mut seen, w)?;
                p.value(w, "a routing protocol name or number")?;
            }
            "onlink" => once(&mut seen, w)?,
            "mtu" => {
                once(&mut seen, w)?;
                let mut v = p.value(w, "a number")?;
                if v.text == "lock" {
                    v = p.value(v, "a number")?;
                }
                value::u32_of(v, "mtu")?;
            }
            "scope" => {
                once(&mut seen, w)?;
                let v = p.value(w, "link or global")?;
                if !matches!(v.text.as_str(), "link" | "global" | "universe") {
                    return Err(
                        PErr::at(v, format!("route scope `{}` is not supported by sr6", v.text)).exp("link or global")
                    );
                }
            }
            "encap" => {
                if encap.is_some() {
                    return Err(PErr::at(w, "duplicate `encap`").exp("one `encap` per route"));
                }
                let e = parse_encap(p, w)?;
                encap = Some((e, w));
            }
            "nexthop" => {
                if let Some(x) = forwarding_words.iter().find(|t| t.text != "nexthop") {
                    return Err(PErr::at(
                        x,
                        format!(
                            "`{}` before `nexthop`: a multipath route's next hops are all in its `nexthop` clauses",
                            x.text
                        ),
                    )
                    .exp("nexthop via NH dev DEV [weight W] nexthop ..."));
                }
                paths = Some((parse_nexthops(p, w)?, w));
            }
            "nhid" => {
                once(&mut seen, w)?;
                nhid = Some((value::u32_of(p.value(w, "a nexthop id")?, "nexthop id")?, w));
            }
            "pref" => {
                once(&mut seen, w)?;
                let v = p.value(w, "low, medium or high")?;
                if !matches!(v.text.as_str(), "low" | "medium" | "high") {
                    return Err(
                        PErr::at(v, format!("unknown route preference `{}`", v.text)).exp("low, medium or high")
                    );
                }
            }
            "src" => {
                return Err(PErr::at(w, "`src` (a preferred source address) is not supported by sr6: it originates only ICMP errors, whose source it chooses as docs/behaviours.md says")
                    .exp(OPTIONS));
            }
            "expires" => {
                return Err(PErr::at(w, "`expires` is not supported by sr6: its routes do not age, and the route would outlive the given lifetime")
                    .exp(OPTIONS));
            }
            "mode" | "segs" | "hmac" => {
                return Err(PErr::at(w, format!("`{}` belongs to `encap seg6` and must follow it directly", w.text))
                    .exp(OPTIONS));
            }
            kw if Param::from_keyword(kw).is_some() || matches!(kw, "action" | "flavors" | "count") => {
                return Err(PErr::at(w, format!("`{kw}` belongs to `encap seg6local` and must follow it directly"))
                    .exp(OPTIONS));
            }
            _ => return Err(PErr::at(w, format!("unknown route option `{}`", w.text)).exp(OPTIONS)),
        }
    }

    // The family: the prefix's, or for `default` the flag's or the next hop's.
    let fam = match &pfx {
        Some(pf) => {
            let f = Fam::of_prefix(pf);
            p.check_fam(pfx_tok, f)?;
            f
        }
        None => match (p.fam, via.or_else(|| paths.as_ref().and_then(|ps| ps.0.iter().find_map(|x| x.0.via.zip(x.1)))))
        {
            (Some(f), _) => f,
            (None, Some((a, _))) => Fam::of(&a),
            (None, None) => {
                return Err(PErr::at(pfx_tok, "`default` needs an address family: give -6 or -4, or a `via`")
                    .exp("ip -6 route add default ..., or ::/0 or 0.0.0.0/0"))
            }
        },
    };
    let prefix = pfx.unwrap_or(match fam {
        Fam::V6 => Prefix::V6(Ipv6Addr::UNSPECIFIED, 0),
        Fam::V4 => Prefix::V4(Ipv4Addr::UNSPECIFIED, 0),
    });
    let path_vias = paths.iter().flat_map(|ps| ps.0.iter().filter_map(|x| x.0.via.zip(x.1)));
    for (a, v) in via.into_iter().chain(path_vias) {
        if Fam::of(&a) != fam {
            return Err(PErr::at(
                v,
                format!("next hop `{}` is {} but the route is {}", v.text, Fam::of(&a).name(), fam.name()),
            )
            .exp(format!("an {} next hop", fam.name())));
        }
    }

    let kind = match rtype {
        Type::Blackhole | Type::Unreachable => {
            let name = if rtype == Type::Blackhole { "blackhole" } else { "unreachable" };
            if let Some(x) = forwarding_words.first() {
                return Err(
                    PErr::at(x, format!("a {name} route takes no via, dev or encap")).exp("table, metric or proto")
                );
            }
            if name == "blackhole" {
                RouteKind::Blackhole
            } else {
                RouteKind::Unreachable
            }
        }
        Type::Unicast if paths.is_some() || nhid.is_some() => {
            let others: Vec<&&Tok> =
                forwarding_words.iter().filter(|t| !matches!(t.text.as_str(), "nexthop")).collect();
            if let (Some((_, n)), true) = (nhid, paths.is_some()) {
                return Err(PErr::at(n, "`nhid` and `nexthop` both given").exp("one of nhid N or nexthop ..."));
            }
            if let (Some(_), Some(x)) = (nhid, others.iter().find(|t| t.text != "nhid")) {
                return Err(PErr::at(
                    x,
                    format!("a route with `nhid` takes no `{}`: the nexthop object says where", x.text),
                )
                .exp("table, metric or proto"));
            }
            match paths {
                Some((ps, _)) => RouteKind::Multipath { paths: ps.into_iter().map(|x| x.0).collect() },
                None => RouteKind::Nhid { id: nhid.map_or(0, |n| n.0) },
            }
        }
        Type::Unicast => {
            let dev_name = dev.map(|d| sr6_core::spec::DevName::from(d.0));
            match encap {
                None => {
                    if via.is_none() && dev_name.is_none() {
                        return Err(p.eol("a route needs a next hop or a device").exp("via NH or dev DEV"));
                    }
                    RouteKind::Forward { via: via.map(|v| v.0), dev: dev_name }
                }
                Some((Encap::Seg6 { encap, mode_tok }, _)) => {
                    if fam == Fam::V4 && matches!(encap.mode, Seg6Mode::Inline | Seg6Mode::InlineRed) {
                        return Err(PErr::at(
                            mode_tok,
                            format!(
                                "mode {} inserts an SRH into an IPv6 packet; this is an IPv4 route",
                                encap.mode.keyword()
                            ),
                        )
                        .exp("encap, encap.red, l2encap or l2encap.red"));
                    }
                    RouteKind::Seg6 { encap, via: via.map(|v| v.0), dev: dev_name }
                }
                Some((Encap::Local { action }, _)) => {
                    // An IPv6 prefix (an IPv4 one for H.M.GTP4.D), with room for what
                    // an RFC 9433 SID carries.
                    if let Err((m, e)) = sr6_core::behaviour::mobile::check_route(&action, &prefix) {
                        return Err(PErr::at(pfx_tok, m).exp(e));
                    }
                    if let Some(v) = forwarding_words.iter().find(|t| t.text == "via") {
                        return Err(PErr::at(
                            v,
                            "a seg6local route takes no `via`; the action's nh6/nh4 is its next hop",
                        )
                        .exp("dev DEV or nothing"));
                    }
                    RouteKind::Seg6Local { action, dev: dev_name }
                }
                Some((Encap::Gtp { tunnel }, _)) => {
                    let decap = matches!(tunnel, sr6_core::spec::GtpTunnel::Decap { .. });
                    if let Some(v) = forwarding_words.iter().find(|t| t.text == "via").filter(|_| decap) {
                        return Err(PErr::at(v, "`encap gtp decap` takes no `via`: the inner packet is routed")
                            .exp("dev DEV or nothing"));
                    }
                    RouteKind::Gtp { tunnel, via: via.map(|v| v.0), dev: dev_name }
                }
                Some((Encap::Bpf { bpf }, _)) => {
                    if via.is_none() && dev_name.is_none() {
                        return Err(p.eol("a route needs a next hop or a device").exp("via NH or dev DEV"));
                    }
                    RouteKind::Bpf { bpf: Box::new(bpf), via: via.map(|v| v.0), dev: dev_name }
                }
            }
        }
    };
    let spec = RouteSpec { line, table: table.unwrap_or(MAIN_TABLE), prefix, kind };
    Ok(Item::Route { spec, verb, at: pfx_tok.clone() })
}

/// `via [inet6|inet] ADDR`, after the `via` word `w`; the address and its word.
fn parse_via<'a>(p: &mut P<'a>, w: &Tok) -> Result<(IpAddr, &'a Tok), PErr> {
    let mut v = p.value(w, "a next-hop address")?;
    let fam_kw = match v.text.as_str() {
        "inet6" => Some(Fam::V6),
        "inet" => Some(Fam::V4),
        _ => None,
    };
    if fam_kw.is_some() {
        v = p.value(v, "a next-hop address")?;
    }
    let a = value::ip_of(v)?;
    if let Some(f) = fam_kw {
        if f != Fam::of(&a) {
            return Err(PErr::at(v, format!("`{}` is not an {} address", v.text, f.name()))
                .exp(format!("an {} address", f.name())));
        }
    }
    Ok((a, v))
}

/// `nexthop [via NH] [dev DEV] [weight W] [onlink] nexthop ...` to the end of the line
/// (as in iproute2, route options come before the first `nexthop`), after the first
/// `nexthop` word `first`. Each path with its `via` word, for family errors.
fn parse_nexthops<'a>(p: &mut P<'a>, first: &Tok) -> Result<Paths<'a>, PErr> {
    const NH_WORDS: &str = "via NH, dev DEV, weight W, onlink, or the next `nexthop`";
    let mut out = Vec::new();
    let mut kw = first.clone();
    loop {
        let mut path = PathSpec { via: None, dev: None, weight: 1 };
        let mut via_tok = None;
        let mut seen = Vec::new();
        let mut more = false;
        while let Some(w) = p.next() {
            match w.text.as_str() {
                "nexthop" => {
                    kw = w.clone();
                    more = true;
                    break;
                }
                "via" => {
                    once(&mut seen, w)?;
                    let (a, v) = parse_via(p, w)?;
                    path.via = Some(a);
                    via_tok = Some(v);
                }
                "dev" | "oif" => {
                    once(&mut seen, w)?;
                    let v = p.value(w, "a device name")?;
                    let d = value::dev_of(v)?;
                    p.note_route_dev(&d, v);
                    path.dev = Some(d.into());
                }
                "weight" => {
                    once(&mut seen, w)?;
                    let v = p.value(w, "a weight from 1 to 256")?;
                    let n = value::u32_of(v, "weight")?;
                    if !(1..=256).contains(&n) {
                        return Err(PErr::at(v, format!("weight {n} is out of range")).exp("a weight from 1 to 256"));
                    }
                    path.weight = n as u16;
                }
                "onlink" => once(&mut seen, w)?,
                "encap" => {
                    return Err(PErr::at(
                        w,
                        "a per-path `encap` is not supported by sr6: a head-end policy has one next hop",
                    )
                    .exp(NH_WORDS))
                }
                _ => {
                    return Err(PErr::at(
                        w,
                        format!("unknown nexthop option `{}` (route options go before the first `nexthop`)", w.text),
                    )
                    .exp(NH_WORDS))
                }
            }
        }
        if path.via.is_none() && path.dev.is_none() {
            return Err(PErr::at(&kw, "a `nexthop` needs a gateway or a device")
                .exp("nexthop via NH [dev DEV], or nexthop dev DEV"));
        }
        out.push((path, via_tok));
        if !more {
            return Ok(out);
        }
    }
}

fn parse_encap<'a>(p: &mut P<'a>, kw: &Tok) -> Result<Encap<'a>, PErr> {
    let t = p.value(kw, "seg6, seg6local, gtp or bpf")?;
    match t.text.as_str() {
        "seg6" => parse_seg6(p, t),
        "seg6local" => parse_seg6local(p, t),
        "gtp" => Ok(Encap::Gtp { tunnel: crate::gtp::parse_gtp(p, t)? }),
        "bpf" => parse_bpf(p, t),
        _ => {
            Err(PErr::at(t, format!("encap type `{}` is not supported by sr6", t.text))
                .exp("seg6, seg6local, gtp or bpf"))
        }
    }
}

fn mode_list() -> String {
    Seg6Mode::ALL.iter().map(|m| m.keyword()).collect::<Vec<_>>().join(", ")
}

/// The `segs S1,...,Sn`, `hmac K` and `csid next|replace [lblen L] [nflen N]` words of
/// a segment list, in any order, each at most once: shared by `encap seg6` and a binding
/// SID's `srh`.
#[derive(Default)]
struct SegList {
    segs: Option<Vec<std::net::Ipv6Addr>>,
    hmac: Option<u32>,
    /// The scheme and its `csid` word, where errors about the list point.
    csid: Option<(CsidPolicy, Tok)>,
}

/// What `csid` takes.
const CSID_WORDS: &str = "csid next|replace [lblen L] [nflen N]";

impl SegList {
    /// Takes word `w` (with its value) if it is `segs`, `hmac` or `csid`; `false`
    /// otherwise.
    fn take(&mut self, p: &mut P, w: &Tok, seen: &mut Vec<String>) -> Result<bool, PErr> {
        match w.text.as_str() {
            "csid" => {
                p.next();
                once(seen, w)?;
                self.csid = Some((parse_csid(p, w)?, w.clone()));
            }
            "segs" => {
                p.next();
                once(seen, w)?;
                self.segs = Some(value::segs_of(p.value(w, "S1,S2,...,Sn")?)?);
            }
            "hmac" => {
                p.next();
                once(seen, w)?;
                self.hmac = Some(value::hmac_id_of(p.value(w, "an HMAC key id")?)?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The `csid` scheme, checked against the segments (RFC 9800 §7: a list of which
    /// nothing compresses is an error, at the `csid` word).
    fn csid_for(&self, segs: &[std::net::Ipv6Addr]) -> Result<Option<CsidPolicy>, PErr> {
        let Some((c, at)) = &self.csid else { return Ok(None) };
        csid_policy::compress(*c, segs, false).map_err(|e| {
            PErr::at(at, e.0).exp("SIDs sharing the block, each with a non-zero C-SID and zeros after it")
        })?;
        Ok(Some(*c))
    }
}

/// `next|replace [lblen L] [nflen N]` after the `csid` word `kw` (sr6 extension, RFC
/// 9800 §7): the scheme and the lengths, defaults for those not given.
fn parse_csid(p: &mut P, kw: &Tok) -> Result<CsidPolicy, PErr> {
    let v = p.value(kw, "next or replace")?;
    let scheme = match v.text.as_str() {
        "next" => CsidScheme::Next,
        "replace" => CsidScheme::Replace,
        _ => return Err(PErr::at(v, format!("unknown C-SID scheme `{}`", v.text)).exp(CSID_WORDS)),
    };
    let mut c = CsidPolicy { scheme, lengths: scheme.default_lengths() };
    let mut seen = Vec::new();
    let mut last = v;
    while let Some(w) = p.peek().filter(|w| matches!(w.text.as_str(), "lblen" | "nflen")) {
        p.next();
        once(&mut seen, w)?;
        let n = p.value(w, "a length in bits")?;
        let bits = value::u32_of(n, "a length in bits")?;
        let bad = || PErr::at(n, format!("{} must be a non-zero multiple of 8", w.text)).exp(CSID_WORDS);
        let bits = u8::try_from(bits).ok().filter(|b| *b != 0 && b.is_multiple_of(8)).ok_or_else(bad)?;
        if w.text == "lblen" {
            c.lengths.lblen = bits;
        } else {
            c.lengths.nflen = bits;
        }
        last = n;
    }
    csid_policy::check_lengths(c).map_err(|e| {
        PErr::at(last, e).exp(match scheme {
            CsidScheme::Next => csid_policy::NEXT_LENGTHS,
            CsidScheme::Replace => csid_policy::REPLACE_LENGTHS,
        })
    })?;
    Ok(c)
}

/// `mode M [csid ...] segs S1,...,Sn [hmac K]` (`segs` after `mode`, as iproute2
/// requires; `csid` is sr6's).
fn parse_seg6<'a>(p: &mut P<'a>, kw: &'a Tok) -> Result<Encap<'a>, PErr> {
    let mut mode: Option<(Seg6Mode, &Tok)> = None;
    let mut list = SegList::default();
    let mut seen = Vec::new();
    while let Some(w) = p.peek() {
        if w.text == "mode" {
            p.next();
            once(&mut seen, w)?;
            let v = p.value(w, &mode_list())?;
            let m = Seg6Mode::from_keyword(&v.text)
                .ok_or_else(|| PErr::at(v, format!("unknown seg6 mode `{}`", v.text)).exp(mode_list()))?;
            mode = Some((m, v));
            continue;
        }
        if matches!(w.text.as_str(), "segs" | "csid") && mode.is_none() {
            return Err(PErr::at(w, format!("`{}` given before `mode`", w.text)).exp("mode MODE segs S1,S2,..."));
        }
        if !list.take(p, w, &mut seen)? {
            break;
        }
    }
    let Some((mode, mode_tok)) = mode else {
        return Err(PErr::at(kw, "`encap seg6` needs a mode").exp(format!("mode {}", mode_list().replace(", ", "|"))));
    };
    let Some(segs) = list.segs.take() else {
        return Err(PErr::at(kw, "`encap seg6` needs a segment list").exp("segs S1,S2,...,Sn"));
    };
    let csid = list.csid_for(&segs)?;
    Ok(Encap::Seg6 { encap: Seg6Encap { mode, segs, hmac: list.hmac, csid }, mode_tok })
}

fn keyword_list() -> String {
    TABLE.iter().filter(|d| **d != &mobile::gtp_decap::GTP_U_DECAP).map(|d| d.keyword).collect::<Vec<_>>().join(", ")
}

/// What an action takes, for messages: `nh6 (required), oif`.
/// What may follow `action B` instead of a parameter B does not take: the `expected`
/// part of the error (the message names the word only, so the list is said once).
fn takes(d: &Behaviour) -> String {
    let mut v: Vec<String> = d.required.iter().map(|p| format!("{} (required)", p.keyword())).collect();
    v.extend(d.optional.iter().map(|p| p.keyword().to_string()));
    if v.is_empty() {
        format!("no parameter: {} takes none", d.keyword)
    } else {
        format!("a parameter of {}: {}", d.keyword, v.join(", "))
    }
}

/// `action B [PARAM VALUE]... [flavors F,...] [count]`, driven by the behaviour table.
fn parse_seg6local<'a>(p: &mut P<'a>, kw: &Tok) -> Result<Encap<'a>, PErr> {
    let a = p.value(kw, "action BEHAVIOUR")?;
    if a.text != "action" {
        return Err(PErr::at(a, format!("`encap seg6local` must start with `action`, not `{}`", a.text))
            .exp("action BEHAVIOUR"));
    }
    let b = p.value(a, &keyword_list())?;
    let d = by_keyword(&b.text).filter(|d| *d != &mobile::gtp_decap::GTP_U_DECAP).ok_or_else(|| {
        let m = if b.text == mobile::gtp_decap::GTP_U_DECAP.keyword {
            format!("{} is written `encap gtp decap [table N]`, not as a seg6local action", b.text)
        } else {
            format!("unknown seg6local action `{}`", b.text)
        };
        PErr::at(b, m).exp(format!("one of {}", keyword_list()))
    })?;
    let mut params = SidParams::default();
    let mut given: Vec<Param> = Vec::new();
    let mut flavors = Flavors::default();
    let mut count = false;
    let mut seen = Vec::new();
    // The last NEXT-C-SID length given, where an error about the pair points.
    let mut csid_tok = None;
    while let Some(w) = p.peek() {
        if let Some(param) = Param::from_keyword(&w.text) {
            p.next();
            if !d.accepts(param) {
                return Err(PErr::at(w, format!("{} does not take `{}`", d.keyword, param.keyword())).exp(takes(d)));
            }
            if given.contains(&param) {
                return Err(PErr::at(w, format!("duplicate `{}`", w.text)).exp(format!("`{}` at most once", w.text)));
            }
            given.push(param);
            let hint = param.value_hint();
            match param {
                Param::Nh6 => params.nh6 = Some(value::v6_of(p.value(w, hint)?)?),
                Param::Nh4 => params.nh4 = Some(value::v4_of(p.value(w, hint)?)?),
                Param::Oif => {
                    let t = p.value(w, hint)?;
                    let dev = value::dev_of(t)?;
                    p.note_route_dev(&dev, t);
                    params.oif = Some(dev);
                }
                Param::Table => params.table = Some(value::table_of(p.value(w, hint)?)?),
                Param::VrfTable => params.vrftable = Some(value::table_of(p.value(w, hint)?)?),
                Param::Srh => params.srh = Some(parse_srh(p, w)?),
                Param::Map => params.map = Some(value::v6_of(p.value(w, hint)?)?),
                Param::Iif => {
                    let t = p.value(w, hint)?;
                    let dev = value::dev_of(t)?;
                    p.note_route_dev(&dev, t);
                    params.iif = Some(dev);
                }
                Param::Src => params.src = Some(value::v6_of(p.value(w, hint)?)?),
                Param::Segs => params.segs = Some(value::segs_of(p.value(w, hint)?)?),
                Param::GroupBits => {
                    let t = p.value(w, hint)?;
                    let n = value::u32_of(t, "group-bits")?;
                    let max = sr6_core::behaviour::end_limit::MAX_GROUP_BITS;
                    params.group_bits = Some(u8::try_from(n).ok().filter(|n| *n <= max).ok_or_else(|| {
                        PErr::at(t, format!("group-bits {n} is too large")).exp(format!("group-bits: 0 to {max}"))
                    })?);
                }
                Param::Rate => params.rate = Some(value::u32_of(p.value(w, hint)?, "rate")?),
                Param::Burst => {
                    let t = p.value(w, hint)?;
                    let n = value::u32_of(t, "burst")?;
                    if n == 0 {
                        return Err(PErr::at(t, "burst 0 admits nothing").exp("burst: a number of bytes above 0"));
                    }
                    params.burst = Some(n);
                }
                Param::V4SrcPosition => {
                    let t = p.value(w, hint)?;
                    let n = value::u32_of(t, hint)?;
                    let n = u8::try_from(n).ok().filter(|n| *n <= 96).ok_or_else(|| {
                        PErr::at(t, format!("v4src-position {n} leaves no room for 32 bits")).exp(hint)
                    })?;
                    params.v4src_position = Some(n);
                }
                Param::SrPrefix | Param::SrcPrefix => {
                    let t = p.value(w, hint)?;
                    let (a, l) = v6_prefix(t, hint)?;
                    let (max, what) = if param == Param::SrPrefix {
                        mobile::max_sr_prefix(d)
                    } else {
                        (mobile::MAX_SRC_PREFIX, "the IPv4 source needs 32")
                    };
                    if l > max {
                        let m = format!("{}/{l} leaves {} bits; {what} (RFC 9433 §6.3, §6.6-6.7)", a, 128 - l);
                        return Err(PErr::at(t, m).exp(hint));
                    }
                    if param == Param::SrPrefix {
                        params.sr_prefix = Some((a, l));
                    } else {
                        params.src_prefix = Some((a, l));
                    }
                }
                Param::Endpoint => params.bpf = Some(parse_endpoint(p, w)?),
            }
            continue;
        }
        match w.text.as_str() {
            "flavors" => {
                p.next();
                once(&mut seen, w)?;
                flavors = parse_flavors(p.value(w, FLAVOR_LIST)?, d)?;
            }
            // `flavors next-csid lblen L nflen N` (RFC 9800 §4.1; Linux's syntax), and
            // the same after `replace-csid` (§4.2; sr6's extension).
            "lblen" | "nflen" => {
                p.next();
                once(&mut seen, w)?;
                let Some(c) = flavors.next_csid.as_mut().or(flavors.replace_csid.as_mut()) else {
                    return Err(PErr::at(
                        w,
                        format!("`{}` needs the next-csid or replace-csid flavour before it", w.text),
                    )
                    .exp("flavors next-csid|replace-csid lblen L nflen N"));
                };
                let v = p.value(w, "a length in bits")?;
                let n = value::u32_of(v, "a length in bits")?;
                let bad = || PErr::at(v, format!("{} must be a non-zero multiple of 8", w.text)).exp(CSID_LENGTHS);
                let n = u8::try_from(n).ok().filter(|n| *n != 0 && n.is_multiple_of(8)).ok_or_else(bad)?;
                if w.text == "lblen" {
                    c.lblen = n;
                } else {
                    c.nflen = n;
                }
                // Checked together once both are known (below).
                csid_tok = Some(v);
            }
            "count" => {
                p.next();
                once(&mut seen, w)?;
                count = true;
            }
            "action" => return Err(PErr::at(w, "duplicate `action`").exp("one action per route")),
            _ => break,
        }
    }
    if let (Some(c), Some(v)) = (flavors.next_csid, &csid_tok) {
        CsidLengths::new(c.lblen, c.nflen).map_err(|e| PErr::at(v, e).exp(CSID_LENGTHS))?;
    }
    if let (Some(c), Some(v)) = (flavors.replace_csid, &csid_tok) {
        replace_csid::lengths(c.lblen, c.nflen).map_err(|e| PErr::at(v, e).exp(REPLACE_CSID_LENGTHS))?;
    }
    let missing: Vec<String> = d
        .required
        .iter()
        .filter(|r| !given.contains(r))
        .map(|r| format!("{} {}", r.keyword(), r.placeholder()))
        .collect();
    if !missing.is_empty() {
        let m = missing.join(" and ");
        return Err(PErr::at(b, format!("{} requires {m}", d.keyword)).exp(m));
    }
    Ok(Encap::Local { action: Box::new(SidAction { behaviour: d, params, flavors, count }) })
}

/// An IPv6 prefix `P/LEN` (host bits zero), as `sr-prefix` and `src-prefix` take.
fn v6_prefix(t: &Tok, hint: &str) -> Result<(Ipv6Addr, u8), PErr> {
    match value::prefix_of(t)? {
        Prefix::V6(a, l) => Ok((a, l)),
        Prefix::V4(..) => Err(PErr::at(t, format!("`{}` is an IPv4 prefix", t.text)).exp(hint)),
    }
}

/// iproute2's `matches(word, keyword)`: `word` is a non-empty prefix of `keyword`.
fn abbreviates(word: &str, keyword: &str) -> bool {
    !word.is_empty() && keyword.starts_with(word)
}

/// `obj FILE [sec SECTION] [verbose]` as iproute2's `bpf_do_parse` reads it, after the
/// word `kw` (End.BPF's `endpoint`, an LWT hook's `in`/`out`/`xmit`): a mode word that
/// abbreviates `object-file`, or `obj`; a section keyword that abbreviates `section`; no
/// section: `prog`. Programs pinned in or held by the kernel (`pinned`, `fd`) have no
/// place in sr6.
struct ObjWords<'a> {
    mode: &'a Tok,
    file: &'a Tok,
    section: &'a str,
    sec_tok: Option<&'a Tok>,
}

fn parse_obj<'a>(p: &mut P<'a>, kw: &Tok, hint: &str) -> Result<ObjWords<'a>, PErr> {
    let mode = p.value(kw, hint)?;
    let m = mode.text.as_str();
    // In iproute2's order: `obj` and `o` are also abbreviations of `object-pinned`.
    if !abbreviates(m, "object-file") && m != "obj" {
        if abbreviates(m, "object-pinned") || abbreviates(m, "pinned") || abbreviates(m, "fd") {
            let msg =
                format!("`{m}`: sr6 runs programs from object files, not programs pinned in or held by the kernel");
            return Err(PErr::at(mode, msg).exp(hint));
        }
        return Err(PErr::at(mode, format!("unknown eBPF program mode `{m}`")).exp(hint));
    }
    let file = p.value(mode, "an eBPF object file (FILE.o)")?;
    let mut w = ObjWords { mode, file, section: end_bpf::DEFAULT_SECTION, sec_tok: None };
    if let Some(s) = p.peek().filter(|s| abbreviates(&s.text, "section")) {
        p.next();
        w.section = p.value(s, "the program's section name")?.text.as_str();
        w.sec_tok = Some(s);
    }
    if let Some(s) = p.peek().filter(|s| s.text == "program") {
        return Err(PErr::at(s, "`program NAME` is not supported by sr6").exp("sec SECTION: the program's section"));
    }
    if p.peek().is_some_and(|s| abbreviates(&s.text, "verbose")) {
        p.next();
    }
    Ok(w)
}

/// A load error as the line's: at the mode word for the object itself (file, ELF,
/// maps), at the section word for its program (`what`: End.BPF, encap bpf in, ...).
fn load_error(e: end_bpf::LoadError, what: &str, path: &std::path::Path, w: &ObjWords) -> PErr {
    use end_bpf::LoadError as L;
    let (at, exp) = match e {
        L::Io { .. } => (w.mode, "a readable eBPF object (a relative path is relative to the configuration file)"),
        L::NotElf(_) | L::NotBpf(_) | L::BigEndian => (w.mode, "an object compiled with clang -O2 -target bpf"),
        L::Map(..) => (w.mode, "maps sr6 supports (docs/bpf.md)"),
        L::NoSection(..) | L::NotProgram(_) | L::BadSize(..) => {
            (w.sec_tok.unwrap_or(w.mode), "sec SECTION: a program section of the object")
        }
        L::Reloc { .. } | L::Verify { .. } => (
            w.sec_tok.unwrap_or(w.mode),
            "a program sr6 can run (docs/bpf.md, \"Helpers\" and \"Where sr6-bpf differs\")",
        ),
    };
    PErr::at(at, format!("{what}: cannot load `{}`: {e}", path.display())).exp(exp)
}

/// `endpoint obj FILE [sec SECTION] [verbose]` ([`parse_obj`]), then the program loaded
/// as `lwt_seg6local`, as iproute2 loads it before the route is added: a load error is
/// the line's.
fn parse_endpoint(p: &mut P, kw: &Tok) -> Result<end_bpf::BpfEndpoint, PErr> {
    let w = parse_obj(p, kw, Param::Endpoint.value_hint())?;
    let path = p.base.join(&w.file.text);
    end_bpf::load(&w.file.text, &path, w.section).map_err(|e| load_error(e, "End.BPF", &path, &w))
}

/// What may follow `encap bpf`.
const BPF_WORDS: &str = "in PROG, out PROG, xmit PROG or headroom N (PROG: obj FILE [sec SECTION])";

/// `[in PROG] [out PROG] [xmit PROG] [headroom N]` after `encap bpf` (iproute2's
/// `parse_encap_bpf`; Linux's `bpf_build_state`): at least one program, each loaded as
/// its hook's type (`lwt_in`, `lwt_out`, `lwt_xmit`), `headroom` from 1 (iproute2) to
/// 256 (`LWT_BPF_MAX_HEADROOM`).
fn parse_bpf<'a>(p: &mut P<'a>, kw: &'a Tok) -> Result<Encap<'a>, PErr> {
    use lwt_bpf::ProgType;
    let mut bpf = LwtBpf::default();
    let mut seen = Vec::new();
    while let Some(w) = p.peek() {
        let hook = match w.text.as_str() {
            "in" => ProgType::LwtIn,
            "out" => ProgType::LwtOut,
            "xmit" => ProgType::LwtXmit,
            "headroom" => {
                p.next();
                once(&mut seen, w)?;
                let v = p.value(w, "a number of bytes from 1 to 256")?;
                let n = value::u32_of(v, "headroom")?;
                if n == 0 || n as usize > lwt_bpf::MAX_HEADROOM {
                    return Err(
                        PErr::at(v, format!("headroom {n} is out of range")).exp("a number of bytes from 1 to 256")
                    );
                }
                bpf.headroom = n;
                continue;
            }
            _ => break,
        };
        p.next();
        once(&mut seen, w)?;
        let words = parse_obj(p, w, "obj FILE [sec SECTION]")?;
        let path = p.base.join(&words.file.text);
        let what = format!("encap bpf {}", w.text);
        let prog = lwt_bpf::load(&words.file.text, &path, words.section, hook)
            .map_err(|e| load_error(e, &what, &path, &words))?;
        match hook {
            ProgType::LwtIn => bpf.input = Some(prog),
            ProgType::LwtOut => bpf.output = Some(prog),
            _ => bpf.xmit = Some(prog),
        }
    }
    if bpf.input.is_none() && bpf.output.is_none() && bpf.xmit.is_none() {
        return Err(PErr::at(kw, "`encap bpf` needs a program").exp(BPF_WORDS));
    }
    Ok(Encap::Bpf { bpf })
}

/// `srh [csid ...] segs S1,...,Sn [hmac K]` (in any order).
fn parse_srh(p: &mut P, kw: &Tok) -> Result<SrhParam, PErr> {
    let mut list = SegList::default();
    let mut seen = Vec::new();
    while let Some(w) = p.peek() {
        if !list.take(p, w, &mut seen)? {
            break;
        }
    }
    let Some(segs) = list.segs.take() else {
        return Err(PErr::at(kw, "`srh` needs a segment list").exp("srh segs S1,S2,...,Sn [hmac KEYID]"));
    };
    let csid = list.csid_for(&segs)?;
    Ok(SrhParam { segs, hmac: list.hmac, csid })
}

/// What `lblen` and `nflen` take.
const CSID_LENGTHS: &str = "lblen and nflen non-zero multiples of 8, lblen + nflen <= 128";

/// What `lblen` and `nflen` take after `replace-csid`.
const REPLACE_CSID_LENGTHS: &str = "nflen 16 or 32, lblen a non-zero multiple of 8, lblen + nflen <= 120";

/// What `flavors` takes.
const FLAVOR_LIST: &str = "psp, usp, usd, next-csid, replace-csid separated by commas";

fn parse_flavors(t: &Tok, d: &Behaviour) -> Result<Flavors, PErr> {
    let allowed = || {
        let v: Vec<&str> = d.flavors.iter().map(|f| f.keyword()).collect();
        if v.is_empty() {
            format!("{} allows no flavours", d.keyword)
        } else {
            format!("{} allows: {}", d.keyword, v.join(", "))
        }
    };
    let mut out = Flavors::default();
    let mut off = 0;
    for part in t.text.split(',') {
        let col = t.col + off;
        off += part.chars().count() + 1;
        let Some(f) = Flavor::ALL.into_iter().find(|f| f.keyword() == part) else {
            return Err(PErr::at_pos(t.line, col, format!("unknown flavour `{part}`")).exp(FLAVOR_LIST));
        };
        if !d.allows_flavor(f) {
            return Err(PErr::at_pos(
                t.line,
                col,
                format!("flavour `{part}` is not allowed on {} (RFC 8986 §4.16)", d.keyword),
            )
            .exp(allowed()));
        }
        if out.has(f) {
            return Err(
                PErr::at_pos(t.line, col, format!("duplicate flavour `{part}`")).exp("each flavour at most once")
            );
        }
        // RFC 9800 §4: the argument is either the C-SIDs to come (NEXT-C-SID) or an index
        // (REPLACE-C-SID), never both.
        let other = match f {
            Flavor::NextCsid => Some(Flavor::ReplaceCsid),
            Flavor::ReplaceCsid => Some(Flavor::NextCsid),
            _ => None,
        };
        if let Some(o) = other.filter(|o| out.has(*o)) {
            return Err(PErr::at_pos(
                t.line,
                col,
                format!("`{part}` cannot go with `{}` on one SID (RFC 9800 §4.1, §4.2)", o.keyword()),
            )
            .exp("one of next-csid, replace-csid"));
        }
        out.set(f);
    }
    Ok(out)
}

/// `route del PREFIX [table N] [dev DEV] [via NH] [proto P] [metric N]`, as `ip route
/// del`: the route of PREFIX in table N (main by default) is removed. sr6 keeps one
/// route per prefix and table, so `dev`, `via`, `proto` and `metric` select nothing
/// further; they are accepted (and checked for syntax) so a kernel command line works
/// unchanged.
pub(crate) fn parse_route_del(p: &mut P) -> Result<Item, PErr> {
    const DEL_OPTIONS: &str = "table N, dev DEV, via NH, proto P or metric N";
    let mut t = p.need("a prefix: ADDR[/LEN] or default")?;
    if t.text == "to" {
        t = p.value(t, "a prefix: ADDR[/LEN] or default")?;
    }
    let at = t.clone();
    let pfx = prefix_or_default(t)?;
    let mut table = None;
    let mut via_fam = None;
    let mut seen = Vec::new();
    while let Some(w) = p.next() {
        match w.text.as_str() {
            "table" => {
                once(&mut seen, w)?;
                table = Some(value::table_of(p.value(w, "a table id")?)?);
            }
            "dev" | "oif" => {
                once(&mut seen, w)?;
                value::dev_of(p.value(w, "a device name")?)?;
            }
            "via" => {
                once(&mut seen, w)?;
                via_fam = Some(Fam::of(&value::ip_of(p.value(w, "a next-hop address")?)?));
            }
            "proto" | "protocol" => {
                once(&mut seen, w)?;
                p.value(w, "a protocol")?;
            }
            "metric" | "priority" | "preference" => {
                once(&mut seen, w)?;
                value::u32_of(p.value(w, "a number")?, "metric")?;
            }
            _ => return Err(PErr::at(w, format!("unknown option `{}` for route del", w.text)).exp(DEL_OPTIONS)),
        }
    }
    let prefix = match pfx {
        Some(pf) => {
            p.check_fam(&at, Fam::of_prefix(&pf))?;
            pf
        }
        None => match p.fam.or(via_fam) {
            Some(Fam::V6) => Prefix::V6(Ipv6Addr::UNSPECIFIED, 0),
            Some(Fam::V4) => Prefix::V4(Ipv4Addr::UNSPECIFIED, 0),
            None => {
                return Err(PErr::at(&at, "`default` needs an address family: give -6 or -4")
                    .exp("ip -6 route del default, or ::/0 or 0.0.0.0/0"))
            }
        },
    };
    Ok(Item::RouteDel { table: table.unwrap_or(MAIN_TABLE), prefix, at })
}

/// A route's prefix word: `None` for `default` (its family comes from elsewhere).
fn prefix_or_default(t: &Tok) -> Result<Option<Prefix>, PErr> {
    if t.text == "default" {
        return Ok(None);
    }
    value::prefix_of(t).map(Some).map_err(|e| {
        if e.expected.is_none() {
            e.exp("a prefix: ADDR[/LEN] or default")
        } else {
            e
        }
    })
}
