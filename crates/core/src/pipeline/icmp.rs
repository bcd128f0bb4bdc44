//! ICMP error messages built in place: the invoking packet becomes the quoted payload
//! (RFC 4443 §2.4(c): as much as fits in the minimum MTU of 1280 bytes; RFC 792 / Linux
//! for IPv4: as much as fits in 576 bytes), and an IPv6 + ICMPv6 (or IPv4 + ICMP) header
//! is pushed in front — a pointer move and two header writes (wire's `Ipv6Repr` and
//! `Icmpv6Repr::emit`, or `Ipv4Repr` and `Icmpv4Repr::emit`).

use super::{Next, Worker};
use crate::behaviour::Icmp6Error;
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::tables::Tables;
use sr6_wire::icmpv4::{DU_HOST_UNREACH, DU_NET_UNREACH};
use sr6_wire::icmpv6::{DU_NO_ROUTE, MAX_INVOKING_LEN, PARAM_PROBLEM, PKT_TOO_BIG, PP_UNRECOGNIZED_OPTION};
use sr6_wire::{
    walk_chain, Icmpv4Packet, Icmpv4Repr, Icmpv6Packet, Icmpv6Repr, Ipv4Packet, Ipv4Repr, Ipv6Packet, Ipv6Repr,
    IPPROTO_ICMP, IPPROTO_ICMPV6,
};

/// Linux's limit for ICMPv4 errors (576, RFC 1812 §4.3.2.3).
const MAX_ICMP4: usize = 576;
/// Hop limit / TTL of locally originated errors (Linux default).
const ERROR_TTL: u8 = 64;
/// TOS of ICMPv4 errors: DSCP CS6 (network control), as Linux sends them.
const ERROR_TOS4: u8 = 0xc0;

/// Replaces the IPv6 packet in `p` by the ICMPv6 error `icmp` about it, counting
/// `reason` as the drop of the original, and hands the error to the FIB (main table).
/// When RFC 4443 §2.4(e) forbids the error or the rate limiter refuses it, the packet
/// is dropped with `reason` and the refusal counted apart.
pub fn error6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, reason: DropReason, icmp: Icmpv6Repr) -> Next {
    let d = p.data();
    if d.len() < Ipv6Packet::<&[u8]>::HEADER_LEN {
        return Next::drop(reason);
    }
    let ip = Ipv6Packet::new_unchecked(d);
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    // RFC 4443 §2.4(e): not to multicast or unspecified sources, not for multicast
    // destinations (except Packet Too Big / Parameter Problem code 2), not for errors.
    if src.is_multicast() || src.is_unspecified() {
        return w.suppressed(reason);
    }
    // A link-local source is reachable only on the link it came from, where sr6 has no
    // link-local address to answer from (the kernel's error about it is not seen on the
    // wire either).
    if crate::tables::is_link_local(&src) {
        return w.suppressed(reason);
    }
    let multicast_ok =
        icmp.msg_type == PKT_TOO_BIG || (icmp.msg_type == PARAM_PROBLEM && icmp.code == PP_UNRECOGNIZED_OPTION);
    if dst.is_multicast() && !multicast_ok {
        return w.suppressed(reason);
    }
    if let Ok(c) = walk_chain(d) {
        if c.upper_proto == IPPROTO_ICMPV6 && c.fragment.is_none() {
            let msg = d.get(c.upper..).unwrap_or_default();
            if !msg.is_empty() && Icmpv6Packet::new_unchecked(msg).is_error() {
                return w.suppressed(reason);
            }
        }
    }
    if !w.icmp_limit.take(w.now_ns) {
        w.counters.icmp_ratelimited += 1;
        return Next::drop(reason);
    }
    w.counters.drop(reason);
    // Its source address is the offending destination if that is ours, else chosen as
    // Linux's icmp6_send does: RFC 6724 source selection toward the offending source,
    // the device the packet arrived on preferred (rule 5).
    let from = if t.is_local6(&dst.octets()) { dst } else { t.icmp6_source(p.in_dev, &src) };
    // RFC 4443 §2.4(c): as much of the invoking packet as fits in the minimum MTU.
    let quote = d.len().min(MAX_INVOKING_LEN);
    let repr = Ipv6Repr {
        src_addr: from,
        dst_addr: src,
        next_header: IPPROTO_ICMPV6,
        payload_len: (icmp.buffer_len() + quote) as u16,
        hop_limit: ERROR_TTL,
        traffic_class: 0,
        flow_label: 0,
    };
    p.truncate(quote);
    if !p.push_front(repr.buffer_len() + icmp.buffer_len()) {
        return Next::drop(DropReason::NoHeadroom);
    }
    let mut ip = Ipv6Packet::new_unchecked(p.data_mut());
    repr.emit(&mut ip);
    icmp.emit(&from, &src, &mut Icmpv6Packet::new_unchecked(ip.payload_mut()));
    w.counters.icmp_sent += 1;
    Next::Lookup6 { table: Tables::MAIN, forward: false }
}

/// The ICMPv6 error a behaviour asked for.
pub fn answer6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, e: Icmp6Error) -> Next {
    match e {
        Icmp6Error::TimeExceeded => time_exceeded6(t, w, p),
        Icmp6Error::ParamProblem { code, pointer } => param_problem6(t, w, p, code, pointer as usize),
    }
}

/// ICMPv6 Time Exceeded, code 0 (hop limit exceeded in transit).
pub fn time_exceeded6(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error6(t, w, p, DropReason::HopLimit, Icmpv6Repr::hop_limit_exceeded())
}

/// ICMPv6 Parameter Problem with `code` and `pointer` (RFC 4443 §3.4).
pub fn param_problem6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, code: u8, pointer: usize) -> Next {
    error6(t, w, p, DropReason::ParamProblem, Icmpv6Repr::param_problem(code, pointer as u32))
}

/// ICMPv6 Destination Unreachable, code 0 (no route).
pub fn no_route6(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error6(t, w, p, DropReason::NoRoute, Icmpv6Repr::dst_unreachable(DU_NO_ROUTE))
}

/// Replaces the IPv4 packet in `p` by the ICMP error `icmp` about it (RFC 792, RFC 1812
/// §4.3.2), as Linux builds it: TOS 0xc0, TTL 64, DF clear, id 0.
pub fn error4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, reason: DropReason, icmp: Icmpv4Repr) -> Next {
    let d = p.data();
    if d.len() < Ipv4Packet::<&[u8]>::HEADER_LEN {
        return Next::drop(reason);
    }
    let ip = Ipv4Packet::new_unchecked(d);
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    // RFC 1812 §4.3.2.7: no errors about errors, non-first fragments, broadcast or
    // multicast, or unspecified sources.
    let about_error = ip.protocol() == IPPROTO_ICMP && {
        let msg = d.get(ip.header_len()..).unwrap_or_default();
        !msg.is_empty() && Icmpv4Packet::new_unchecked(msg).is_error()
    };
    if about_error
        || ip.frag_offset() != 0
        || src.is_multicast()
        || src.is_broadcast()
        || src.is_unspecified()
        || super::validate::host_dst4(u32::from(dst))
    {
        return w.suppressed(reason);
    }
    if !w.icmp_limit.take(w.now_ns) {
        w.counters.icmp_ratelimited += 1;
        return Next::drop(reason);
    }
    w.counters.drop(reason);
    let (out_dev, nh) = super::forward::route_back4(t, src).unwrap_or((p.in_dev, src));
    let from = t.icmp4_source(out_dev, nh);
    let mut repr = Ipv4Repr {
        src_addr: from,
        dst_addr: src,
        protocol: IPPROTO_ICMP,
        payload_len: 0,
        ttl: ERROR_TTL,
        dscp_ecn: ERROR_TOS4,
        ident: 0,
        flags_frag: 0,
    };
    let head = repr.buffer_len() + icmp.buffer_len();
    let quote = d.len().min(MAX_ICMP4 - head);
    repr.payload_len = (icmp.buffer_len() + quote) as u16;
    p.truncate(quote);
    if !p.push_front(head) {
        return Next::drop(DropReason::NoHeadroom);
    }
    let mut ip = Ipv4Packet::new_unchecked(p.data_mut());
    repr.emit(&mut ip);
    icmp.emit(&mut Icmpv4Packet::new_unchecked(ip.payload_mut()));
    w.counters.icmp_sent += 1;
    Next::Lookup4 { table: Tables::MAIN, forward: false }
}

/// ICMP Time Exceeded, code 0 (TTL exceeded in transit).
pub fn time_exceeded4(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error4(t, w, p, DropReason::HopLimit, Icmpv4Repr::ttl_exceeded())
}

/// ICMP Destination Unreachable, code 0 (net unreachable): no route.
pub fn no_route4(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error4(t, w, p, DropReason::NoRoute, Icmpv4Repr::dst_unreachable(DU_NET_UNREACH))
}

/// ICMP Destination Unreachable, code 1 (host unreachable): an `unreachable` route, as
/// Linux answers it (its error -EHOSTUNREACH; IPv6 answers code 0 for both).
pub fn unreachable4(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error4(t, w, p, DropReason::NoRoute, Icmpv4Repr::dst_unreachable(DU_HOST_UNREACH))
}

/// ICMPv6 Destination Unreachable code 1 (administratively prohibited): a policy
/// rule's `prohibit`, as Linux's `ip6_pkt_prohibit` (RFC 4443 §3.1).
pub fn prohibited6(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error6(t, w, p, DropReason::Prohibited, Icmpv6Repr::dst_unreachable(1))
}

/// ICMP Destination Unreachable code 13 (communication administratively prohibited,
/// RFC 1812 §5.2.7.1): a policy rule's `prohibit`, as Linux's `ip_error` answers
/// -EACCES.
pub fn prohibited4(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error4(t, w, p, DropReason::Prohibited, Icmpv4Repr::dst_unreachable(13))
}

impl Worker {
    /// An ICMP error RFC 4443 §2.4(e) / RFC 1812 §4.3.2.7 forbids: drop silently.
    fn suppressed(&mut self, reason: DropReason) -> Next {
        self.counters.icmp_suppressed += 1;
        Next::drop(reason)
    }
}
