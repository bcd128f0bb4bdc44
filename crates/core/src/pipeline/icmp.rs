//! ICMP error messages built in place: the invoking packet becomes the quoted payload
//! (RFC 4443 §2.4(c): as much as fits in the minimum MTU of 1280 bytes; RFC 792 / Linux
//! for IPv4: as much as fits in 576 bytes), and an IPv6 + ICMPv6 (or IPv4 + ICMP) header
//! is pushed in front — a pointer move and two header writes.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::{Next, Worker};
use crate::behaviour::Icmp6Error;
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::tables::Tables;
use sr6_wire::checksum;
use sr6_wire::icmpv6::{DST_UNREACH, PARAM_PROBLEM, PKT_TOO_BIG, TIME_EXCEEDED};
use sr6_wire::{walk_chain, IPPROTO_ICMPV6};

/// The minimum IPv6 MTU (RFC 8200 §5), the size limit of an ICMPv6 error.
const MIN_MTU6: usize = 1280;
/// Linux's limit for ICMPv4 errors (576, RFC 1812 §4.3.2.3).
const MAX_ICMP4: usize = 576;
/// Hop limit / TTL of locally originated errors (Linux default).
const ERROR_TTL: u8 = 64;

/// Replaces the IPv6 packet in `p` by an ICMPv6 error about it, counting `reason` as
/// the drop of the original, and hands the error to the FIB (main table). When RFC 4443
/// §2.4(e) forbids the error or the rate limiter refuses it, the packet is dropped with
/// `reason` and the refusal counted apart.
pub fn error6(
    t: &Tables,
    w: &mut Worker,
    p: &mut PacketBuf,
    reason: DropReason,
    typ: u8,
    code: u8,
    param: u32,
) -> Next {
    let d = p.data();
    if d.len() < 40 {
        return Next::drop(reason);
    }
    let src: [u8; 16] = d[8..24].try_into().unwrap_or([0; 16]);
    let dst: [u8; 16] = d[24..40].try_into().unwrap_or([0; 16]);
    // RFC 4443 §2.4(e): not to multicast or unspecified sources, not for multicast
    // destinations (except Packet Too Big / Parameter Problem code 2), not for errors.
    let src_a = Ipv6Addr::from(src);
    if src_a.is_multicast() || src_a.is_unspecified() {
        return w.suppressed(reason);
    }
    if dst[0] == 0xff && !(typ == PKT_TOO_BIG || (typ == PARAM_PROBLEM && code == 2)) {
        return w.suppressed(reason);
    }
    if let Ok(c) = walk_chain(d) {
        if c.upper_proto == IPPROTO_ICMPV6 && c.fragment.is_none() {
            match d.get(c.upper) {
                Some(ty) if *ty < 128 => return w.suppressed(reason),
                _ => {}
            }
        }
    }
    if !w.icmp_limit.take(w.now_ns) {
        w.counters.icmp_ratelimited += 1;
        return Next::drop(reason);
    }
    w.counters.drop(reason);
    // The error leaves by the route back to the source; its source address is the
    // offending destination if that is ours, else an address of that device.
    let out_dev = super::forward::out_dev6(t, &src);
    let from = if t.is_local6(&dst) { dst } else { t.icmp6_source(out_dev.unwrap_or(p.in_dev)).octets() };
    let quote = d.len().min(MIN_MTU6 - 48);
    p.truncate(quote);
    if !p.push_front(48) {
        return Next::drop(DropReason::NoHeadroom);
    }
    let d = p.data_mut();
    let plen = (8 + quote) as u16;
    d[0..4].copy_from_slice(&[0x60, 0, 0, 0]);
    d[4..6].copy_from_slice(&plen.to_be_bytes());
    d[6] = IPPROTO_ICMPV6;
    d[7] = ERROR_TTL;
    d[8..24].copy_from_slice(&from);
    d[24..40].copy_from_slice(&src);
    d[40] = typ;
    d[41] = code;
    d[42..44].copy_from_slice(&[0, 0]);
    d[44..48].copy_from_slice(&param.to_be_bytes());
    let sum = checksum::pseudo_header_v6(&Ipv6Addr::from(from), &src_a, u32::from(plen), IPPROTO_ICMPV6)
        + checksum::sum(&d[40..]);
    let c = checksum::fold(sum);
    d[42..44].copy_from_slice(&c.to_be_bytes());
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
    error6(t, w, p, DropReason::HopLimit, TIME_EXCEEDED, 0, 0)
}

/// ICMPv6 Parameter Problem with `code` and `pointer` (RFC 4443 §3.4).
pub fn param_problem6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, code: u8, pointer: usize) -> Next {
    error6(t, w, p, DropReason::ParamProblem, PARAM_PROBLEM, code, pointer as u32)
}

/// ICMPv6 Destination Unreachable, code 0 (no route).
pub fn no_route6(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error6(t, w, p, DropReason::NoRoute, DST_UNREACH, 0, 0)
}

/// ICMPv4 types used here (RFC 792).
const ICMP4_DST_UNREACH: u8 = 3;
const ICMP4_TIME_EXCEEDED: u8 = 11;

/// Replaces the IPv4 packet in `p` by an ICMP error about it (RFC 792, RFC 1812
/// §4.3.2), as Linux builds it: TOS 0xc0, TTL 64, DF clear, id 0.
pub fn error4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, reason: DropReason, typ: u8, code: u8) -> Next {
    let d = p.data();
    if d.len() < 20 {
        return Next::drop(reason);
    }
    let ihl = usize::from(d[0] & 0x0f) * 4;
    let src = Ipv4Addr::new(d[12], d[13], d[14], d[15]);
    let frag_off = u16::from_be_bytes([d[6], d[7]]) & 0x1fff;
    // RFC 1812 §4.3.2.7: no errors about errors, non-first fragments, broadcast or
    // multicast, or unspecified sources.
    let is_error = d[9] == 1 && d.get(ihl).is_some_and(|ty| !matches!(*ty, 0 | 8 | 13 | 14 | 15 | 16 | 17 | 18));
    if is_error || frag_off != 0 || src.is_multicast() || src.is_broadcast() || src.is_unspecified() || d[16] >= 224 {
        return w.suppressed(reason);
    }
    if !w.icmp_limit.take(w.now_ns) {
        w.counters.icmp_ratelimited += 1;
        return Next::drop(reason);
    }
    w.counters.drop(reason);
    let out_dev = super::forward::out_dev4(t, &src.octets());
    let from = t.icmp4_source(out_dev.unwrap_or(p.in_dev));
    let quote = d.len().min(MAX_ICMP4 - 28);
    p.truncate(quote);
    if !p.push_front(28) {
        return Next::drop(DropReason::NoHeadroom);
    }
    let d = p.data_mut();
    let total = (28 + quote) as u16;
    d[0] = 0x45;
    d[1] = 0xc0;
    d[2..4].copy_from_slice(&total.to_be_bytes());
    d[4..8].copy_from_slice(&[0, 0, 0, 0]);
    d[8] = ERROR_TTL;
    d[9] = 1; // ICMP
    d[10..12].copy_from_slice(&[0, 0]);
    d[12..16].copy_from_slice(&from.octets());
    d[16..20].copy_from_slice(&src.octets());
    let c = checksum::fold(checksum::sum(&d[..20]));
    d[10..12].copy_from_slice(&c.to_be_bytes());
    d[20] = typ;
    d[21] = code;
    d[22..28].copy_from_slice(&[0; 6]);
    let c = checksum::fold(checksum::sum(&d[20..]));
    d[22..24].copy_from_slice(&c.to_be_bytes());
    w.counters.icmp_sent += 1;
    Next::Lookup4 { table: Tables::MAIN, forward: false }
}

pub fn time_exceeded4(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error4(t, w, p, DropReason::HopLimit, ICMP4_TIME_EXCEEDED, 0)
}

pub fn no_route4(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    error4(t, w, p, DropReason::NoRoute, ICMP4_DST_UNREACH, 0)
}

impl Worker {
    /// An ICMP error RFC 4443 §2.4(e) / RFC 1812 §4.3.2.7 forbids: drop silently.
    fn suppressed(&mut self, reason: DropReason) -> Next {
        self.counters.icmp_suppressed += 1;
        Next::drop(reason)
    }
}
