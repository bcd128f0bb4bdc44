//! Routes as the kernel's routing tables hold them (`RTM_NEWROUTE`), decoded from the
//! bytes and written back as the `ip route add` line that makes them: the one decoder
//! that kernel-route mirroring (a dump, then `RTNLGRP_IPV4_ROUTE`/`RTNLGRP_IPV6_ROUTE`
//! events) and zebra's FPM stream (the same messages, framed over TCP) share. A line
//! is what sr6's configuration already reads (`sr6_config::parse_line`), so a route
//! from the kernel means to sr6 exactly what the same line in its file does.
//!
//! Decoded: the `rtmsg` header (family, prefix length, table, protocol, type), and the
//! attributes `RTA_DST`, `RTA_GATEWAY`, `RTA_VIA`, `RTA_OIF`, `RTA_PRIORITY`,
//! `RTA_TABLE`, `RTA_MULTIPATH` (each hop's gateway, device and weight), `RTA_NH_ID`,
//! and the lightweight tunnels sr6 implements (`RTA_ENCAP_TYPE` + `RTA_ENCAP`): seg6
//! (`SEG6_IPTUNNEL_SRH`: the mode and the SRH, HMAC key included) and seg6local
//! (`include/uapi/linux/seg6_local.h`: the action and its parameters, flavours with
//! their C-SID lengths, counters). Any other attribute is skipped unparsed; a message
//! whose parts cannot be read is an `Err` saying what, never a panic (the property
//! test below feeds random and mutated bytes).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use netlink_packet_core::{NlaBuffer, NlasIterator};

/// Length of `struct rtmsg`.
const RTMSG_LEN: usize = 12;
/// Length of `struct rtnexthop`.
const RTNH_LEN: usize = 8;

/// `RTA_*` of `<linux/rtnetlink.h>`.
mod rta {
    pub const DST: u16 = 1;
    pub const OIF: u16 = 4;
    pub const GATEWAY: u16 = 5;
    pub const PRIORITY: u16 = 6;
    pub const MULTIPATH: u16 = 9;
    pub const TABLE: u16 = 15;
    pub const VIA: u16 = 18;
    pub const ENCAP_TYPE: u16 = 21;
    pub const ENCAP: u16 = 22;
    pub const NH_ID: u16 = 30;
}

/// `LWTUNNEL_ENCAP_*` of `<linux/lwtunnel.h>`.
const LWTUNNEL_ENCAP_SEG6: u16 = 5;
const LWTUNNEL_ENCAP_SEG6_LOCAL: u16 = 7;
/// `SEG6_IPTUNNEL_SRH` of `<linux/seg6_iptunnel.h>`.
const SEG6_IPTUNNEL_SRH: u16 = 1;
/// The HMAC TLV's type (`SR6_TLV_HMAC`, RFC 8754 §2.1.2).
const SR6_TLV_HMAC: u8 = 5;

/// `SEG6_LOCAL_*` of `<linux/seg6_local.h>`.
mod local {
    pub const ACTION: u16 = 1;
    pub const SRH: u16 = 2;
    pub const TABLE: u16 = 3;
    pub const NH4: u16 = 4;
    pub const NH6: u16 = 5;
    pub const IIF: u16 = 6;
    pub const OIF: u16 = 7;
    pub const BPF: u16 = 8;
    pub const VRFTABLE: u16 = 9;
    pub const COUNTERS: u16 = 10;
    pub const FLAVORS: u16 = 11;
    /// Inside `FLAVORS`.
    pub const FLV_OPERATION: u16 = 1;
    pub const FLV_LCBLOCK_BITS: u16 = 2;
    pub const FLV_LCNODE_FN_BITS: u16 = 3;
    /// Inside `BPF`.
    pub const BPF_PROG_NAME: u16 = 2;
}

/// The kernel's main table (`RT_TABLE_MAIN`), which `ip route` does not name.
pub const RT_TABLE_MAIN: u32 = 254;

/// Route types (`RTN_*`) sr6 has a meaning for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKind {
    Unicast,
    /// A local address (`RTN_LOCAL`, the kernel's local table).
    Local,
    Blackhole,
    Unreachable,
    Prohibit,
    /// Another type (broadcast, multicast, throw, ...): its number.
    Other(u8),
}

impl RouteKind {
    fn of(t: u8) -> RouteKind {
        match t {
            1 => RouteKind::Unicast,
            2 => RouteKind::Local,
            6 => RouteKind::Blackhole,
            7 => RouteKind::Unreachable,
            8 => RouteKind::Prohibit,
            t => RouteKind::Other(t),
        }
    }
}

/// One next hop of a route: its gateway (`RTA_GATEWAY`, or `RTA_VIA` for an IPv4
/// route through an IPv6 gateway), device and weight (1-256).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelNextHop {
    pub gateway: Option<IpAddr>,
    pub oif: Option<u32>,
    pub weight: u16,
}

/// A seg6 (SRv6 head-end) encapsulation: `encap seg6 mode MODE segs ... [hmac KEY]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seg6Encap {
    /// The mode as `ip` writes it: `inline`, `encap`, `l2encap`, `encap.red`,
    /// `l2encap.red`.
    pub mode: &'static str,
    /// The segments in the order of the path (the SRH's Segment List reversed).
    pub segments: Vec<Ipv6Addr>,
    /// The HMAC key id of an HMAC TLV, if the SRH has one.
    pub hmac: Option<u32>,
}

/// A seg6local (SRv6 endpoint) behaviour: `encap seg6local action ACTION ...`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Seg6Local {
    /// The action's number (`SEG6_LOCAL_ACTION_*`).
    pub action: u32,
    pub table: Option<u32>,
    pub vrftable: Option<u32>,
    pub nh4: Option<Ipv4Addr>,
    pub nh6: Option<Ipv6Addr>,
    pub iif: Option<u32>,
    pub oif: Option<u32>,
    /// End.B6 / End.B6.Encaps: the policy's segments in path order.
    pub srh: Option<Vec<Ipv6Addr>>,
    /// End.BPF: the program's name (the kernel keeps no object file).
    pub bpf_name: Option<String>,
    pub counters: bool,
    /// `SEG6_LOCAL_FLV_OP_*` bits, and the NEXT-C-SID lengths.
    pub flavors: u32,
    pub lblen: Option<u8>,
    pub nflen: Option<u8>,
}

/// The lightweight tunnel of a route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Encap {
    Seg6(Seg6Encap),
    Seg6Local(Seg6Local),
    /// Another type (`LWTUNNEL_ENCAP_*`): MPLS, BPF, IOAM6, ...
    Other(u16),
}

/// A route of the kernel's routing tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelRoute {
    pub dst: IpAddr,
    pub prefix_len: u8,
    /// The table's id (`RTA_TABLE`, else the header's).
    pub table: u32,
    /// Who installed it (`RTPROT_*`: 2 kernel, 3 boot, 4 static, 11 zebra, 186 bgp,
    /// 187 isis, 188 ospf, ...).
    pub protocol: u8,
    pub kind: RouteKind,
    pub metric: Option<u32>,
    /// The next hops: one for an ordinary route, several for a multipath one, none for
    /// a route without gateway or device (a blackhole, say).
    pub nexthops: Vec<KernelNextHop>,
    /// A nexthop object (`nhid`), for routes that use one.
    pub nh_id: Option<u32>,
    pub encap: Option<Encap>,
}

/// The `RTM_NEWROUTE` (or `RTM_DELROUTE`) payload `payload` as a [`KernelRoute`];
/// `Err` says what could not be read (a short header, an address of the wrong length, a
/// malformed encapsulation). Families other than IPv4 and IPv6: `Err`.
pub fn decode(payload: &[u8]) -> Result<KernelRoute, String> {
    let h: &[u8; RTMSG_LEN] = payload
        .first_chunk()
        .ok_or_else(|| format!("a route message of {} bytes is shorter than its header", payload.len()))?;
    let [family, dst_len, _src_len, _tos, table, protocol, _scope, ty, ..] = *h;
    let v6 = match i32::from(family) {
        libc::AF_INET6 => true,
        libc::AF_INET => false,
        f => return Err(format!("a route of address family {f}, neither IPv4 nor IPv6")),
    };
    if dst_len > if v6 { 128 } else { 32 } {
        return Err(format!("a prefix length of {dst_len}"));
    }
    let mut r = KernelRoute {
        dst: if v6 { IpAddr::V6(Ipv6Addr::UNSPECIFIED) } else { IpAddr::V4(Ipv4Addr::UNSPECIFIED) },
        prefix_len: dst_len,
        table: u32::from(table),
        protocol,
        kind: RouteKind::of(ty),
        metric: None,
        nexthops: Vec::new(),
        nh_id: None,
        encap: None,
    };
    let mut hop = KernelNextHop { gateway: None, oif: None, weight: 1 };
    let mut encap_type = None;
    let mut encap = None;
    for nla in attrs(&payload[RTMSG_LEN..]) {
        let v = nla.value();
        match nla.kind() {
            rta::DST => r.dst = addr(v, v6, "RTA_DST")?,
            rta::GATEWAY => hop.gateway = Some(addr(v, v6, "RTA_GATEWAY")?),
            rta::VIA => hop.gateway = Some(via(v)?),
            rta::OIF => hop.oif = Some(u32_of(v, "RTA_OIF")?),
            rta::PRIORITY => r.metric = Some(u32_of(v, "RTA_PRIORITY")?),
            rta::TABLE => r.table = u32_of(v, "RTA_TABLE")?,
            rta::NH_ID => r.nh_id = Some(u32_of(v, "RTA_NH_ID")?),
            rta::MULTIPATH => r.nexthops = multipath(v, v6)?,
            rta::ENCAP_TYPE => encap_type = Some(u16_of(v, "RTA_ENCAP_TYPE")?),
            rta::ENCAP => encap = Some(v.to_vec()),
            _ => {}
        }
    }
    if r.nexthops.is_empty() && (hop.gateway.is_some() || hop.oif.is_some()) {
        r.nexthops.push(hop);
    }
    r.encap = match (encap_type, encap) {
        (Some(LWTUNNEL_ENCAP_SEG6), Some(e)) => Some(Encap::Seg6(seg6(&e)?)),
        (Some(LWTUNNEL_ENCAP_SEG6_LOCAL), Some(e)) => Some(Encap::Seg6Local(seg6local(&e)?)),
        (Some(t), _) => Some(Encap::Other(t)),
        (None, _) => None,
    };
    Ok(r)
}

/// The attributes of `bytes`, those that can be framed (the walk stops at the first
/// malformed one).
pub(super) fn attrs(bytes: &[u8]) -> impl Iterator<Item = NlaBuffer<&[u8]>> {
    NlasIterator::new(bytes).map_while(Result::ok)
}

/// A 32-bit attribute value (`what` names it in the error).
pub(super) fn u32_of(v: &[u8], what: &str) -> Result<u32, String> {
    v.first_chunk().map(|b| u32::from_ne_bytes(*b)).ok_or_else(|| format!("{what} of {} bytes", v.len()))
}

fn u16_of(v: &[u8], what: &str) -> Result<u16, String> {
    v.first_chunk().map(|b| u16::from_ne_bytes(*b)).ok_or_else(|| format!("{what} of {} bytes", v.len()))
}

fn addr(v: &[u8], v6: bool, what: &str) -> Result<IpAddr, String> {
    match (v6, v.len()) {
        (true, 16) => Ok(IpAddr::V6(ipv6(v))),
        (false, 4) => Ok(IpAddr::V4(Ipv4Addr::new(v[0], v[1], v[2], v[3]))),
        (_, n) => Err(format!("{what} of {n} bytes in an IPv{} route", if v6 { 6 } else { 4 })),
    }
}

/// An IPv6 address from exactly 16 bytes (the callers check the length).
fn ipv6(v: &[u8]) -> Ipv6Addr {
    let mut a = [0; 16];
    a.copy_from_slice(&v[..16]);
    Ipv6Addr::from(a)
}

/// `RTA_VIA` (`struct rtvia`: a family, then the address).
fn via(v: &[u8]) -> Result<IpAddr, String> {
    let (f, a) = v.split_first_chunk::<2>().ok_or("a short RTA_VIA")?;
    match i32::from(u16::from_ne_bytes(*f)) {
        libc::AF_INET6 => addr(a, true, "RTA_VIA"),
        libc::AF_INET => addr(a, false, "RTA_VIA"),
        f => Err(format!("RTA_VIA of address family {f}")),
    }
}

/// `RTA_MULTIPATH`: `struct rtnexthop`s, each with its own attributes.
fn multipath(mut v: &[u8], v6: bool) -> Result<Vec<KernelNextHop>, String> {
    let mut hops = Vec::new();
    while v.len() >= RTNH_LEN {
        let len = usize::from(u16::from_ne_bytes([v[0], v[1]]));
        if len < RTNH_LEN || len > v.len() {
            return Err(format!("a multipath next hop of {len} bytes"));
        }
        let ifindex = u32::from_ne_bytes([v[4], v[5], v[6], v[7]]);
        let mut hop =
            KernelNextHop { gateway: None, oif: (ifindex != 0).then_some(ifindex), weight: u16::from(v[3]) + 1 };
        for nla in attrs(&v[RTNH_LEN..len]) {
            match nla.kind() {
                rta::GATEWAY => hop.gateway = Some(addr(nla.value(), v6, "RTA_GATEWAY")?),
                rta::VIA => hop.gateway = Some(via(nla.value())?),
                _ => {}
            }
        }
        hops.push(hop);
        v = v.get((len + 3) & !3..).unwrap_or(&[]);
    }
    Ok(hops)
}

/// `SEG6_IPTUNNEL_SRH`: the mode (a 32-bit int), then an SRH.
fn seg6(e: &[u8]) -> Result<Seg6Encap, String> {
    let v = attrs(e).find(|a| a.kind() == SEG6_IPTUNNEL_SRH).ok_or("a seg6 encapsulation without its SRH")?;
    let v = v.value();
    let (mode, srh) = v.split_first_chunk::<4>().ok_or("a seg6 encapsulation of a few bytes")?;
    let mode = match i32::from_ne_bytes(*mode) {
        0 => "inline",
        1 => "encap",
        2 => "l2encap",
        3 => "encap.red",
        4 => "l2encap.red",
        m => return Err(format!("seg6 mode {m}")),
    };
    let (mut segments, hmac) = srh_segments(srh)?;
    // Inline, the Segment List's first entry is the slot the packet's own destination
    // takes (`seg6_do_srh_inline`), left unspecified: not one of the route's segments.
    if mode == "inline" && segments.last() == Some(&Ipv6Addr::UNSPECIFIED) {
        segments.pop();
    }
    Ok(Seg6Encap { mode, segments, hmac })
}

/// An SRH's segments in path order (its Segment List reversed) and the key id of its
/// HMAC TLV, if any.
fn srh_segments(srh: &[u8]) -> Result<(Vec<Ipv6Addr>, Option<u32>), String> {
    let h: &[u8; 8] = srh.first_chunk().ok_or("an SRH shorter than 8 bytes")?;
    let total = 8 + 8 * usize::from(h[1]);
    let n = usize::from(h[4]) + 1;
    if total > srh.len() || 8 + 16 * n > total {
        return Err(format!("an SRH of {} bytes claiming {total}, with {n} segments", srh.len()));
    }
    let mut segs: Vec<Ipv6Addr> = srh[8..8 + 16 * n].chunks_exact(16).map(ipv6).collect();
    segs.reverse();
    // The TLVs: Pad1 (type 0, one byte), the rest type-length-value.
    let mut hmac = None;
    let mut t = &srh[8 + 16 * n..total];
    while let Some(&ty) = t.first() {
        if ty == 0 {
            t = &t[1..];
            continue;
        }
        let len = usize::from(*t.get(1).ok_or("a truncated SRH TLV")?);
        let body = t.get(2..2 + len).ok_or("a truncated SRH TLV")?;
        if ty == SR6_TLV_HMAC {
            // Reserved (2 bytes), then the HMAC key id (32 bits, network order).
            hmac = body.get(2..6).map(|k| u32::from_be_bytes([k[0], k[1], k[2], k[3]]));
        }
        t = &t[2 + len..];
    }
    Ok((segs, hmac))
}

fn seg6local(e: &[u8]) -> Result<Seg6Local, String> {
    let mut l = Seg6Local::default();
    let mut action = None;
    for nla in attrs(e) {
        let v = nla.value();
        match nla.kind() {
            local::ACTION => action = Some(u32_of(v, "SEG6_LOCAL_ACTION")?),
            local::SRH => l.srh = Some(srh_segments(v)?.0),
            local::TABLE => l.table = Some(u32_of(v, "SEG6_LOCAL_TABLE")?),
            local::VRFTABLE => l.vrftable = Some(u32_of(v, "SEG6_LOCAL_VRFTABLE")?),
            local::NH4 => match v {
                [a, b, c, d] => l.nh4 = Some(Ipv4Addr::new(*a, *b, *c, *d)),
                _ => return Err(format!("SEG6_LOCAL_NH4 of {} bytes", v.len())),
            },
            local::NH6 if v.len() == 16 => l.nh6 = Some(ipv6(v)),
            local::NH6 => return Err(format!("SEG6_LOCAL_NH6 of {} bytes", v.len())),
            local::IIF => l.iif = Some(u32_of(v, "SEG6_LOCAL_IIF")?),
            local::OIF => l.oif = Some(u32_of(v, "SEG6_LOCAL_OIF")?),
            local::BPF => {
                let name = attrs(v).find(|a| a.kind() == local::BPF_PROG_NAME);
                l.bpf_name = name.map(|n| {
                    let s = n.value().split(|b| *b == 0).next().unwrap_or(&[]);
                    String::from_utf8_lossy(s).into_owned()
                });
            }
            local::COUNTERS => l.counters = true,
            local::FLAVORS => {
                for f in attrs(v) {
                    let fv = f.value();
                    match f.kind() {
                        local::FLV_OPERATION => l.flavors = u32_of(fv, "SEG6_LOCAL_FLV_OPERATION")?,
                        local::FLV_LCBLOCK_BITS => l.lblen = fv.first().copied(),
                        local::FLV_LCNODE_FN_BITS => l.nflen = fv.first().copied(),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    l.action = action.ok_or("a seg6local encapsulation without its action")?;
    Ok(l)
}

/// The names `ip` gives seg6local actions, by number (`SEG6_LOCAL_ACTION_*`).
pub fn action_name(action: u32) -> Option<&'static str> {
    const NAMES: [&str; 16] = [
        "End",
        "End.X",
        "End.T",
        "End.DX2",
        "End.DX6",
        "End.DX4",
        "End.DT6",
        "End.DT4",
        "End.B6",
        "End.B6.Encaps",
        "End.BM",
        "End.S",
        "End.AS",
        "End.AM",
        "End.BPF",
        "End.DT46",
    ];
    NAMES.get(usize::try_from(action).ok()?.checked_sub(1)?).copied()
}

/// `SEG6_LOCAL_FLV_OP_*` bits, in the order `ip` lists them.
const FLAVOR_NAMES: [(u32, &str); 4] = [(1 << 1, "psp"), (1 << 2, "usp"), (1 << 3, "usd"), (1 << 4, "next-csid")];

impl KernelRoute {
    /// Whether this is an IPv6 route.
    pub fn is_v6(&self) -> bool {
        self.dst.is_ipv6()
    }

    /// The `ip route add` line that makes this route, as sr6's configuration reads it,
    /// with device names from `name` (ifindex -> name). `Err` for what such a line
    /// cannot say: a route type sr6 has no meaning for, an encapsulation other than
    /// seg6/seg6local, End.BPF (the kernel keeps the program, not its object file), a
    /// device `name` does not know.
    pub fn to_line(&self, name: &dyn Fn(u32) -> Option<String>) -> Result<String, String> {
        let dev = |i: u32| name(i).ok_or_else(|| format!("no device of ifindex {i}"));
        let mut s = String::from(if self.is_v6() { "ip -6 route add " } else { "ip route add " });
        match self.kind {
            RouteKind::Unicast => {}
            RouteKind::Blackhole => s.push_str("blackhole "),
            RouteKind::Unreachable => s.push_str("unreachable "),
            RouteKind::Local => {
                return Err("a route of type local: sr6's own addresses are those of its `addr add` lines".into())
            }
            RouteKind::Prohibit => return Err("a route of type prohibit, which sr6 does not have".into()),
            RouteKind::Other(t) => return Err(format!("a route of type {t}, which sr6 does not forward by")),
        }
        s.push_str(&format!("{}/{}", self.dst, self.prefix_len));
        match &self.encap {
            None => {}
            Some(Encap::Seg6(e)) => {
                s.push_str(&format!(" encap seg6 mode {} segs {}", e.mode, list(&e.segments)));
                if let Some(k) = e.hmac {
                    s.push_str(&format!(" hmac {k}"));
                }
            }
            Some(Encap::Seg6Local(l)) => s.push_str(&seg6local_words(l, &dev)?),
            Some(Encap::Other(t)) => return Err(format!("a lightweight tunnel of type {t}, which sr6 does not have")),
        }
        // (A blackhole, unreachable or prohibit route has no next hop to say; the
        // kernel gives IPv6 ones the loopback device.)
        let unicast = self.kind == RouteKind::Unicast;
        if let Some(id) = self.nh_id {
            s.push_str(&format!(" nhid {id}"));
        } else if let ([hop], true) = (&self.nexthops[..], unicast) {
            if let Some(g) = hop.gateway {
                s.push_str(&format!(" via {g}"));
            }
            if let Some(i) = hop.oif {
                s.push_str(&format!(" dev {}", dev(i)?));
            }
        }
        // Who installed it, as `ip route` names it (not for `ip route add`'s own, boot).
        if !matches!(self.protocol, 0 | 3) {
            s.push_str(&format!(" proto {}", proto_name(self.protocol)));
        }
        if self.table != RT_TABLE_MAIN {
            s.push_str(&format!(" table {}", self.table));
        }
        if let Some(m) = self.metric {
            s.push_str(&format!(" metric {m}"));
        }
        if self.nexthops.len() > 1 && self.nh_id.is_none() && unicast {
            for hop in &self.nexthops {
                s.push_str(" nexthop");
                if let Some(g) = hop.gateway {
                    s.push_str(&format!(" via {g}"));
                }
                if let Some(i) = hop.oif {
                    s.push_str(&format!(" dev {}", dev(i)?));
                }
                s.push_str(&format!(" weight {}", hop.weight));
            }
        }
        Ok(s)
    }
}

/// `RTPROT_*` as iproute2 names it (`/usr/share/iproute2/rt_protos`), else the number.
pub fn proto_name(p: u8) -> String {
    let name = match p {
        1 => "redirect",
        2 => "kernel",
        3 => "boot",
        4 => "static",
        8 => "gated",
        9 => "ra",
        10 => "mrt",
        11 => "zebra",
        12 => "bird",
        13 => "dnrouted",
        14 => "xorp",
        15 => "ntk",
        16 => "dhcp",
        17 => "mrouted",
        18 => "keepalived",
        42 => "babel",
        99 => "openr",
        186 => "bgp",
        187 => "isis",
        188 => "ospf",
        189 => "rip",
        192 => "eigrp",
        _ => return p.to_string(),
    };
    name.to_string()
}

/// Segments as `ip` lists them: comma-separated.
fn list(segs: &[Ipv6Addr]) -> String {
    segs.iter().map(Ipv6Addr::to_string).collect::<Vec<_>>().join(",")
}

/// ` encap seg6local action ...` with the parameters in `ip`'s order.
fn seg6local_words(l: &Seg6Local, dev: &dyn Fn(u32) -> Result<String, String>) -> Result<String, String> {
    let name = action_name(l.action).ok_or_else(|| format!("seg6local action {}", l.action))?;
    if l.action == 15 {
        let prog = l.bpf_name.as_deref().unwrap_or("?");
        return Err(format!(
            "End.BPF: the kernel names its program ({prog}), not the object file sr6 would load it from"
        ));
    }
    let mut s = format!(" encap seg6local action {name}");
    if let Some(segs) = &l.srh {
        s.push_str(&format!(" srh segs {}", list(segs)));
    }
    if let Some(t) = l.table {
        s.push_str(&format!(" table {t}"));
    }
    if let Some(t) = l.vrftable {
        s.push_str(&format!(" vrftable {t}"));
    }
    if let Some(a) = l.nh4 {
        s.push_str(&format!(" nh4 {a}"));
    }
    if let Some(a) = l.nh6 {
        s.push_str(&format!(" nh6 {a}"));
    }
    if let Some(i) = l.iif {
        s.push_str(&format!(" iif {}", dev(i)?));
    }
    if let Some(i) = l.oif {
        s.push_str(&format!(" oif {}", dev(i)?));
    }
    if l.counters {
        s.push_str(" count");
    }
    if l.flavors != 0 {
        let names: Vec<&str> = FLAVOR_NAMES.iter().filter(|(b, _)| l.flavors & b != 0).map(|(_, n)| *n).collect();
        if names.is_empty() || FLAVOR_NAMES.iter().fold(l.flavors, |f, (b, _)| f & !b) != 0 {
            return Err(format!("seg6local flavours {:#x}", l.flavors));
        }
        s.push_str(&format!(" flavors {}", names.join(",")));
        if let Some(b) = l.lblen {
            s.push_str(&format!(" lblen {b}"));
        }
        if let Some(b) = l.nflen {
            s.push_str(&format!(" nflen {b}"));
        }
    }
    Ok(s)
}

/// An attribute as the kernel writes it: length, type, value, padding (for the tests
/// here and in `nexthop.rs`).
#[cfg(test)]
pub(super) fn nla(ty: u16, v: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&((4 + v.len()) as u16).to_ne_bytes());
    b.extend_from_slice(&ty.to_ne_bytes());
    b.extend_from_slice(v);
    while b.len() % 4 != 0 {
        b.push(0);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn header(family: u8, len: u8, ty: u8) -> Vec<u8> {
        vec![family, len, 0, 0, 254, 4, 0, ty, 0, 0, 0, 0]
    }

    fn a6(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    fn names(i: u32) -> Option<String> {
        Some(format!("eth{i}"))
    }

    #[test]
    fn a_gateway_route_and_a_seg6_policy() {
        let mut m = header(libc::AF_INET6 as u8, 48, 1);
        m.extend(nla(rta::DST, &a6("fc00:1::").octets()));
        m.extend(nla(rta::GATEWAY, &a6("fe80::1").octets()));
        m.extend(nla(rta::OIF, &2u32.to_ne_bytes()));
        m.extend(nla(rta::PRIORITY, &1024u32.to_ne_bytes()));
        let r = decode(&m).unwrap();
        assert_eq!(
            r.to_line(&names).unwrap(),
            "ip -6 route add fc00:1::/48 via fe80::1 dev eth2 proto static metric 1024"
        );
        // encap seg6 mode encap segs fc00:2::1,fc00:3::1 with an HMAC TLV of key 7.
        let mut srh = vec![0, 0, 4, 1, 1, 0, 0, 0];
        srh[1] = ((16 * 2 + 40) / 8) as u8;
        srh.extend(a6("fc00:3::1").octets());
        srh.extend(a6("fc00:2::1").octets());
        srh.extend([SR6_TLV_HMAC, 38, 0, 0, 0, 0, 0, 7]);
        srh.extend([0; 32]);
        let mut enc = 1i32.to_ne_bytes().to_vec();
        enc.extend(srh);
        let mut m = header(libc::AF_INET6 as u8, 64, 1);
        m.extend(nla(rta::DST, &a6("fc00:42::").octets()));
        m.extend(nla(rta::OIF, &1u32.to_ne_bytes()));
        m.extend(nla(rta::ENCAP_TYPE, &LWTUNNEL_ENCAP_SEG6.to_ne_bytes()));
        m.extend(nla(rta::ENCAP, &nla(SEG6_IPTUNNEL_SRH, &enc)));
        let r = decode(&m).unwrap();
        assert_eq!(
            r.to_line(&names).unwrap(),
            "ip -6 route add fc00:42::/64 encap seg6 mode encap segs fc00:2::1,fc00:3::1 hmac 7 dev eth1 proto static"
        );
    }

    #[test]
    fn seg6local_with_flavours_and_errors() {
        let mut flv = nla(local::FLV_OPERATION, &((1u32 << 1) | (1 << 4)).to_ne_bytes());
        flv.extend(nla(local::FLV_LCBLOCK_BITS, &[32]));
        flv.extend(nla(local::FLV_LCNODE_FN_BITS, &[16]));
        let mut e = nla(local::ACTION, &2u32.to_ne_bytes());
        e.extend(nla(local::NH6, &a6("fc00:23::3").octets()));
        e.extend(nla(local::FLAVORS, &flv));
        let mut m = header(libc::AF_INET6 as u8, 48, 1);
        m.extend(nla(rta::DST, &a6("fc00:0:c3::").octets()));
        m.extend(nla(rta::OIF, &3u32.to_ne_bytes()));
        m.extend(nla(rta::ENCAP_TYPE, &LWTUNNEL_ENCAP_SEG6_LOCAL.to_ne_bytes()));
        m.extend(nla(rta::ENCAP, &e));
        let r = decode(&m).unwrap();
        assert_eq!(
            r.to_line(&names).unwrap(),
            "ip -6 route add fc00:0:c3::/48 encap seg6local action End.X nh6 fc00:23::3 flavors psp,next-csid \
             lblen 32 nflen 16 dev eth3 proto static"
        );
        // End.BPF: the kernel keeps the program, not where it came from.
        let mut bpf = nla(local::ACTION, &15u32.to_ne_bytes());
        bpf.extend(nla(local::BPF, &nla(local::BPF_PROG_NAME, b"end.o:[lwt_end]\0")));
        let mut m3 = header(libc::AF_INET6 as u8, 128, 1);
        m3.extend(nla(rta::ENCAP_TYPE, &LWTUNNEL_ENCAP_SEG6_LOCAL.to_ne_bytes()));
        m3.extend(nla(rta::ENCAP, &bpf));
        let e = decode(&m3).unwrap().to_line(&names).unwrap_err();
        assert!(e.contains("End.BPF") && e.contains("end.o:[lwt_end]") && e.contains("object file"), "{e}");
        // Without the action: an error, not a guess.
        let mut m2 = header(libc::AF_INET6 as u8, 48, 1);
        m2.extend(nla(rta::ENCAP_TYPE, &LWTUNNEL_ENCAP_SEG6_LOCAL.to_ne_bytes()));
        m2.extend(nla(rta::ENCAP, &nla(local::NH6, &a6("::1").octets())));
        assert!(decode(&m2).unwrap_err().contains("without its action"));
        assert!(decode(&[10, 200, 0, 0, 254, 4, 0, 1, 0, 0, 0, 0]).unwrap_err().contains("prefix length"));
        assert!(decode(&[7; 12]).unwrap_err().contains("family"));
        assert!(decode(&[10, 0]).unwrap_err().contains("shorter than its header"));
    }

    #[test]
    fn multipath_ipv4_with_weights() {
        let mut mp = Vec::new();
        for (gw, dev, w) in [([10, 0, 12, 2], 1u32, 1u8), ([10, 0, 13, 2], 2, 3)] {
            let attr = nla(rta::GATEWAY, &gw);
            mp.extend(((RTNH_LEN + attr.len()) as u16).to_ne_bytes());
            mp.extend([0, w - 1]);
            mp.extend(dev.to_ne_bytes());
            mp.extend(attr);
        }
        let mut m = header(libc::AF_INET as u8, 24, 1);
        m.extend(nla(rta::DST, &[20, 1, 2, 0]));
        m.extend(nla(rta::TABLE, &100u32.to_ne_bytes()));
        m.extend(nla(rta::MULTIPATH, &mp));
        let r = decode(&m).unwrap();
        assert_eq!(
            r.to_line(&names).unwrap(),
            "ip route add 20.1.2.0/24 proto static table 100 nexthop via 10.0.12.2 dev eth1 weight 1 \
             nexthop via 10.0.13.2 dev eth2 weight 3"
        );
    }

    proptest! {
        /// Random bytes and mutated valid messages never panic the decoder or the
        /// writer.
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300),
                        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8)) {
            let _ = decode(&bytes).map(|r| r.to_line(&names));
            let mut m = header(libc::AF_INET6 as u8, 48, 1);
            m.extend(nla(rta::DST, &a6("fc00:1::").octets()));
            let mut e = nla(local::ACTION, &10u32.to_ne_bytes());
            let mut srh = vec![0, 4, 4, 1, 1, 0, 0, 0];
            srh.extend(a6("fc00:3::1").octets());
            srh.extend(a6("fc00:2::1").octets());
            e.extend(nla(local::SRH, &srh));
            m.extend(nla(rta::ENCAP_TYPE, &LWTUNNEL_ENCAP_SEG6_LOCAL.to_ne_bytes()));
            m.extend(nla(rta::ENCAP, &e));
            m.extend(bytes);
            for (at, x) in flips {
                let n = m.len();
                m[at % n] ^= x;
            }
            let _ = decode(&m).map(|r| r.to_line(&names));
        }
    }
}
