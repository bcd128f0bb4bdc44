//! Decapsulation, shared by End.DX2/DX4/DX6, End.DT4/DT6/DT46 and the USD flavour:
//! RFC 8986 §4.4 S01-S05 (the packet must be at its last segment and carry an inner
//! packet of the behaviour's type; the outer IPv6 header and its extension headers go),
//! and handing the inner packet on.

use super::next::PP_SR_UPPER_LAYER;
use super::{Arrival, Next};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::tables::NextHop;
use sr6_wire::{ChainInfo, Ipv4Packet, Ipv6Packet};

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
