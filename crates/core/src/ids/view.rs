//! The packet the IDS inspects (SR-Snort, thesis §4.4: unchanged rules run on the
//! *inner* packet of SRv6 traffic). From an IPv6 packet as received:
//! - an encapsulation (the upper layer after the extension headers, an SRH or none, is
//!   IPv6, 41, or IPv4, 4; RFC 8986 §5.1 H.Encaps, and H.Encaps.Red without an SRH):
//!   the inner packet, its addresses, protocol, ports and payload;
//! - an SRH inserted in the packet (any other upper layer, RFC 8754 §2): the packet
//!   itself with the last segment, Segment List\[0\], as destination, as SERA's basic
//!   mode reads it ([`Fields::original`]);
//! - any other packet: itself.
//!
//! The headers are walked as the firewall walks them (Linux's `ipv6_find_hdr`,
//! [`crate::firewall::fields`]); nothing here can panic on any input.

use std::net::{IpAddr, Ipv6Addr};

use crate::firewall::fields::{Fields, Found};
use sr6_wire::{Ipv4Packet, IPPROTO_IPV4, IPPROTO_IPV6};

/// The transport layer as decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L4 {
    Tcp,
    Udp,
    Icmp,
    /// Another protocol, a non-first fragment, or a TCP/UDP/ICMP header that does not
    /// fit (then only `ip` rules can match).
    Other,
}

/// What the rules read of one packet.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The upper-layer protocol number (`None`: the header walk failed).
    pub proto: Option<u8>,
    pub l4: L4,
    /// Source and destination ports of TCP and UDP.
    pub ports: Option<(u16, u16)>,
    /// What `content` searches: the TCP or UDP payload, the ICMP message after its
    /// 8-byte header, or for other protocols the bytes after the IP headers.
    pub payload: &'a [u8],
    /// The outer IPv6 addresses.
    pub outer: (Ipv6Addr, Ipv6Addr),
    /// SRv6 traffic (an SRH or an encapsulation): its active SID, the outer destination.
    pub sid: Option<Ipv6Addr>,
}

/// Why a packet could not be viewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// No IPv6 header, or an inner IP header that does not fit.
    Header,
}

/// The view of the IPv6 packet `d` (ending where the packet does).
pub fn of(d: &[u8]) -> Result<View<'_>, Malformed> {
    let f = Fields::of(d).ok_or(Malformed::Header)?;
    let outer = (Ipv6Addr::from(f.src), Ipv6Addr::from(f.dst));
    let srh = f.routing.is_some_and(|at| d.get(at + 2) == Some(&4));
    let sid = Some(outer.1);
    match f.upper {
        Some(u) if u.fragoff == 0 && u.proto == IPPROTO_IPV6 => {
            let inner = d.get(u.offset..).ok_or(Malformed::Header)?;
            let fi = Fields::of(inner).ok_or(Malformed::Header)?;
            let (src, dst) = (IpAddr::V6(fi.src.into()), IpAddr::V6(fi.dst.into()));
            Ok(transport(src, dst, fi.upper, inner, false, outer, sid))
        }
        Some(u) if u.fragoff == 0 && u.proto == IPPROTO_IPV4 => {
            let inner = d.get(u.offset..).ok_or(Malformed::Header)?;
            let ip = Ipv4Packet::new_checked(inner).map_err(|_| Malformed::Header)?;
            let (src, dst) = (IpAddr::V4(ip.src_addr()), IpAddr::V4(ip.dst_addr()));
            let hl = ip.header_len();
            let end = usize::from(ip.total_len());
            let upper = Found { proto: ip.protocol(), offset: hl, fragoff: (ip.frag_offset() != 0).into() };
            let bytes = inner.get(..end).ok_or(Malformed::Header)?;
            Ok(transport(src, dst, Some(upper), bytes, true, outer, sid))
        }
        _ => {
            let (o, od) = if srh { f.original(d).unwrap_or((f, d)) } else { (f, d) };
            let (src, dst) = (IpAddr::V6(o.src.into()), IpAddr::V6(o.dst.into()));
            Ok(transport(src, dst, o.upper, od, false, outer, srh.then_some(outer.1)))
        }
    }
}

/// The transport layer at `upper` of packet `d`.
fn transport<'a>(
    src: IpAddr,
    dst: IpAddr,
    upper: Option<Found>,
    d: &'a [u8],
    v4: bool,
    outer: (Ipv6Addr, Ipv6Addr),
    sid: Option<Ipv6Addr>,
) -> View<'a> {
    let mut v = View { src, dst, proto: upper.map(|u| u.proto), l4: L4::Other, ports: None, payload: &[], outer, sid };
    let Some(u) = upper else { return v };
    if u.fragoff != 0 {
        return v;
    }
    let t = d.get(u.offset..).unwrap_or(&[]);
    v.payload = t;
    let port = |at: usize| Some(u16::from_be_bytes(t.get(at..at + 2)?.try_into().ok()?));
    match u.proto {
        6 => {
            let doff = t.get(12).map_or(0, |b| usize::from(b >> 4) * 4);
            if let (Some(s), Some(p), true) = (port(0), port(2), doff >= 20) {
                if let Some(pl) = t.get(doff..) {
                    (v.l4, v.ports, v.payload) = (L4::Tcp, Some((s, p)), pl);
                }
            }
        }
        17 => {
            if let (Some(s), Some(p), Some(len)) = (port(0), port(2), port(4)) {
                let end = usize::from(len).min(t.len());
                if let Some(pl) = t.get(8..end) {
                    (v.l4, v.ports, v.payload) = (L4::Udp, Some((s, p)), pl);
                }
            }
        }
        1 | 58 if (u.proto == 1) == v4 => {
            if let Some(pl) = t.get(8..) {
                (v.l4, v.payload) = (L4::Icmp, pl);
            }
        }
        _ => {}
    }
    v
}

impl View<'_> {
    /// The addresses of a view whose family is IPv4 (for alerts).
    pub fn is_v4(&self) -> bool {
        matches!(self.src, IpAddr::V4(_))
    }
}
