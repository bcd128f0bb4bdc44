//! Consuming a segment, shared by the behaviours that do (End, End.X, End.T, End.B6*):
//! the checks of RFC 8986 §4.1 S03-S09 / RFC 8754 §4.3.1.1, advancing to the next
//! segment (S10-S14), and removing the SRH (PSP and USP, §4.16.1-§4.16.2).

use super::Next;
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use sr6_wire::fixed::{Ipv6Fixed, SrhFixed, ETH_IPV6_LEN};
use sr6_wire::{Ipv6Packet, RoutingInfo, SrhPacket};

/// RFC 8986 §4.1 S03-S09 for a packet with Segments Left > 0 in the SRH `r`: the hop
/// limit must survive forwarding (else ICMPv6 Time Exceeded), Last Entry must fit the
/// header and Segments Left must not exceed Last Entry + 1 (else a Parameter Problem
/// pointing at Segments Left).
pub fn check(p: &PacketBuf, r: &RoutingInfo) -> Result<(), Next> {
    if Ipv6Packet::new_unchecked(p.data()).hop_limit() <= 1 {
        return Err(Next::time_exceeded());
    }
    if !consistent(p, r) {
        return Err(Next::param_problem(0, r.offset + sr6_wire::srh::SEGMENTS_LEFT_OFFSET));
    }
    Ok(())
}

/// RFC 8754 §4.3.1.1 / RFC 8986 §4.1 S08-S09: Last Entry fits the header and Segments
/// Left is at most Last Entry + 1.
fn consistent(p: &PacketBuf, r: &RoutingInfo) -> bool {
    let Some(b) = p.data().get(r.offset..) else { return false };
    let srh = SrhPacket::new_unchecked(b);
    if srh.check_len().is_err() {
        return false;
    }
    usize::from(srh.last_entry()) < usize::from(srh.hdr_ext_len() / 2) && srh.check_segments_left().is_ok()
}

/// [`check`], then RFC 8986 §4.1 S12-S14: hop limit - 1, Segments Left - 1, the
/// destination the next segment; with `psp`, the SRH removed once Segments Left is 0
/// (§4.16.1).
pub fn consume(p: &mut PacketBuf, r: &RoutingInfo, psp: bool) -> Result<(), Next> {
    check(p, r)?;
    let sl = advance(p, r);
    if sl == 0 && psp && !remove(p, r) {
        return Err(Next::drop(DropReason::Malformed));
    }
    Ok(())
}

/// RFC 8986 §4.1 S12-S14 once [`check`] passed: hop limit - 1, Segments Left - 1,
/// destination = Segment List[Segments Left]. Returns the new Segments Left.
pub fn advance(p: &mut PacketBuf, r: &RoutingInfo) -> u8 {
    let d = p.data_mut();
    let mut ip = Ipv6Packet::new_unchecked(&mut *d);
    let hl = ip.hop_limit();
    ip.set_hop_limit(hl.wrapping_sub(1));
    let sl = r.segments_left - 1;
    if let Some(b) = d.get_mut(r.offset..) {
        let mut srh = SrhPacket::new_unchecked(b);
        srh.set_segments_left(sl);
        if let Some(next) = srh.segment(sl) {
            Ipv6Packet::new_unchecked(d).set_dst_addr(&next);
        }
    }
    sl
}

/// Removes the SRH described by `r` (RFC 8986 §4.16.1 S14.2-S14.4): the preceding Next
/// Header takes the SRH's, the Payload Length shrinks, and the headers before the SRH
/// move forward over it. `false` (packet unusable) if the SRH overruns the packet.
pub fn remove(p: &mut PacketBuf, r: &RoutingInfo) -> bool {
    let d = p.data_mut();
    let Some(&nh) = d.get(r.offset) else { return false };
    if let Some(b) = d.get_mut(r.nh_field) {
        *b = nh;
    }
    let mut ip = Ipv6Packet::new_unchecked(&mut *d);
    let plen = ip.payload_len().wrapping_sub(r.len as u16);
    ip.set_payload_len(plen);
    p.close_gap(r.offset, r.len)
}

/// The fast path's S13 (RFC 8986 §4.1): the next segment of an SRH without TLVs
/// ([`SrhFixed::plain_segments_len`]; `srh` its first 8 bytes, `tail` what follows)
/// with 1 <= Segments Left <= Last Entry + 1, where it lies in `tail`.
#[inline(always)]
pub(crate) fn fast_next(srh: &[u8; 8], tail: &[u8]) -> Option<[u8; 16]> {
    let segs_len = srh.plain_segments_len(tail.len())?;
    // Segment Segments Left - 1, which ends at `end`, lies within the Segment List.
    let sl = srh.segments_left();
    let end = 16 * usize::from(sl);
    if sl == 0 || end > segs_len {
        return None;
    }
    tail.get(end - 16..end)?.try_into().ok()
}

/// Segment List[`i`] of an SRH whose list starts `tail`, on the fast path.
#[inline(always)]
pub(crate) fn fast_segment(tail: &[u8], i: usize) -> Option<[u8; 16]> {
    tail.get(16 * i..16 * i + 16)?.try_into().ok()
}

/// The fast path's S12-S14 (RFC 8986 §4.1) once the next segment `seg`
/// ([`fast_next`]) is known to be routed: hop limit and Segments Left minus one, the
/// destination `seg`. `h` is the Ethernet + IPv6 header.
#[inline(always)]
pub(crate) fn fast_advance(h: &mut [u8; ETH_IPV6_LEN], srh: &mut [u8; 8], seg: &[u8; 16]) {
    h.decrement_hop_limit();
    srh.decrement_segments_left();
    h.set_dst_bytes(seg);
}
