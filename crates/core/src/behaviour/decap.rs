//! Decapsulation, shared by End.DX2/DX4/DX6, End.DT4/DT6/DT46 and the USD flavour:
//! RFC 8986 §4.4 S01-S05 (the packet must be at its last segment and carry an inner
//! packet of the behaviour's type; the outer IPv6 header and its extension headers go),
//! and handing the inner packet on; and the same on the fast path, for the kinds
//! whose SRH has no TLVs and directly follows the IPv6 header (`fast6`, `fast4`).

use super::next::{FastNext, PP_SR_UPPER_LAYER};
use super::{Arrival, Next};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::tables::fast_route::{adjacency, mapped, on_link, resolve, route4_to, route_to};
use crate::tables::{FastKind, FastSid, NextHop};
use sr6_wire::fixed::{Ipv4Fixed, Ipv6Fixed, ETH_LEN};
use sr6_wire::{ChainInfo, Ipv4Packet, Ipv6Packet, ETHERTYPE_IPV4, ETHERTYPE_IPV6};

/// IPv6 in IPv6 (RFC 2473).
pub const IPV6: u8 = sr6_wire::IPPROTO_IPV6;
/// IPv4 in IPv6 (RFC 2473).
pub const IPV4: u8 = sr6_wire::IPPROTO_IPV4;

/// RFC 8986 §4.4 S01-S05 and the same steps of §4.5-§4.9: a packet that still has
/// segments left is answered with a Parameter Problem pointing at Segments Left; a
/// fragment is dropped (no reassembly); an inner packet whose type `accept` refuses is
/// answered with a Parameter Problem code 4 (SR Upper-layer Header Error); otherwise
/// the outer headers are removed and the inner packet's type returned.
pub fn last_segment(p: &mut PacketBuf, a: &Arrival, accept: impl Fn(u8) -> bool) -> Result<u8, Next> {
    match a {
        Arrival::Segments(r) => Err(Next::param_problem(0, r.offset + sr6_wire::srh::SEGMENTS_LEFT_OFFSET)),
        // No decapsulating behaviour has the NEXT-C-SID flavour.
        Arrival::NextCsid(_) => Err(Next::drop(DropReason::Malformed)),
        Arrival::Last { chain, .. } => {
            if chain.fragment.is_some() {
                return Err(Next::drop(DropReason::Fragment));
            }
            let up = chain.upper_proto;
            if !accept(up) {
                return Err(Next::param_problem(PP_SR_UPPER_LAYER, chain.upper));
            }
            strip(p, chain)?;
            Ok(up)
        }
    }
}

/// Removes the outer IPv6 header and all its extension headers.
pub fn strip(p: &mut PacketBuf, chain: &ChainInfo) -> Result<(), Next> {
    if p.pull_front(chain.upper) {
        Ok(())
    } else {
        Err(Next::drop(DropReason::Malformed))
    }
}

/// The exposed IPv6 packet to next hop `nh` (RFC 8986 §4.4 S03: End.DX6, and USD on
/// End.X), trimmed to its own length.
pub fn xconnect6(p: &mut PacketBuf, nh: NextHop) -> Next {
    match Ipv6Packet::new_checked(p.data()) {
        Ok(ip) => {
            let n = ip.total_len();
            p.truncate(n);
            Next::Xconnect6 { nh, forward: true }
        }
        Err(_) => Next::drop(DropReason::Malformed),
    }
}

/// The exposed IPv4 packet to next hop `nh` (RFC 8986 §4.5 S03: End.DX4, and USD on
/// End.X), trimmed to its own length, its header checksum verified (RFC 1812 §5.2.2).
pub fn xconnect4(p: &mut PacketBuf, nh: NextHop) -> Next {
    match Ipv4Packet::new_checked(p.data()) {
        Ok(ip) if ip.verify_checksum() => {
            let n = ip.total_len() as usize;
            p.truncate(n);
            Next::Xconnect4 { nh, forward: true }
        }
        _ => Next::drop(DropReason::Malformed),
    }
}

/// The exposed packet of type `up` (IPv6 or IPv4) looked up in FIB `table` (End.DT*,
/// and USD on End and End.T).
pub fn lookup(up: u8, table: u32) -> Next {
    if up == IPV6 {
        Next::Lookup6 { table, forward: true }
    } else {
        Next::Lookup4 { table, forward: true }
    }
}

/// The fast step of End.DX6 and End.DT6 (RFC 8986 §4.4, §4.6; `s` of kind Dx6 or Dt6),
/// and of End.DT46 with an inner IPv6 packet, on an SRH of `srh_len` bytes (Segments
/// Left 0, Next Header 41: checked by the caller) followed, from byte 8 of `tail`, by
/// an IPv6 packet: to the SID's next hop (Dx6) or to what FIB `s.arg` says of the
/// inner destination (Dt6), the inner hop limit decremented, the new Ethernet header
/// written in front of the inner packet.
#[inline(always)]
pub(crate) fn fast6(t: &crate::tables::Tables, tail: &mut [u8], srh_len: usize, s: FastSid) -> Option<FastNext> {
    let inner = tail.get_mut(srh_len - 8..)?;
    let ilen = inner.len();
    let (ih, _) = inner.split_first_chunk_mut::<40>()?;
    if !ih.is_version6() || !ih.payload_len_is(ilen - 40) || ih.hop_limit() <= 1 {
        return None;
    }
    // The inner destination is read only where it is needed (End.DX6 to an adjacency
    // does not look at it).
    let (out, eth) = if s.is(FastKind::Dt6) {
        route_to(t, s.arg, ih.dst())?
    } else {
        match s.next_hop() {
            NextHop::Adj(a) => adjacency(t, a)?,
            NextHop::OnLink(d) => on_link(t, d, ih.dst())?,
        }
    };
    // The new Ethernet header goes in the 14 bytes just before the inner packet, the end
    // of the SRH (at least 24 bytes long).
    let (before, inner) = tail.split_at_mut(srh_len - 8);
    let eh = before.last_chunk_mut::<ETH_LEN>()?;
    if let Some(ih) = inner.first_chunk_mut::<40>() {
        ih.decrement_hop_limit();
    }
    eth.write_header(eh, ETHERTYPE_IPV6);
    Some(FastNext::Pull(out, 40 + srh_len))
}

/// The fast step of End.DX4 (RFC 8986 §4.5; to its next hop), End.DT4 and End.DT46
/// (§4.7, §4.8; to what FIB `s.arg` says) on an SRH of `srh_len` bytes followed, from
/// byte 8 of `tail`, by an IPv4 packet without options, on a device that forwards IPv4
/// (`forwarding4`): TTL decremented, the new Ethernet header written in front of the
/// inner packet. Multicast, broadcast and class E destinations of a lookup are left to
/// the general path, as for IPv4 forwarding.
#[inline(always)]
pub(crate) fn fast4(
    t: &crate::tables::Tables,
    tail: &mut [u8],
    srh_len: usize,
    s: FastSid,
    forwarding4: bool,
) -> Option<FastNext> {
    if !forwarding4 {
        return None;
    }
    let (before, inner) = tail.split_at_mut_checked(srh_len - 8)?;
    let ilen = inner.len();
    let ip = inner.first_chunk_mut::<20>()?;
    let dst = ip.forwardable_dst(ilen)?;
    let (out, eth) = if s.is(FastKind::Dx4) {
        resolve(t, s.next_hop(), mapped(dst))?
    } else {
        if dst >= 0xe000_0000 {
            return None;
        }
        route4_to(t, s.arg, dst)?
    };
    let eh = before.last_chunk_mut::<ETH_LEN>()?;
    ip.decrement_ttl();
    eth.write_header(eh, ETHERTYPE_IPV4);
    Some(FastNext::Pull(out, 40 + srh_len))
}
