//! Operations on the SRH shared by several behaviours: the RFC 8754 §4.3.1.1 checks,
//! advancing to the next segment, and removing the SRH (PSP/USP, RFC 8986 §4.16).

use crate::packet::PacketBuf;
use sr6_wire::RoutingInfo;

/// RFC 8754 §4.3.1.1 / RFC 8986 §4.1 S08-S09: Last Entry must fit the header and
/// Segments Left must not exceed Last Entry + 1. True when the SRH is consistent.
#[inline]
pub fn srh_consistent(p: &PacketBuf, r: &RoutingInfo) -> bool {
    let d = p.data();
    let (Some(&hdr_ext_len), Some(&le)) = (d.get(r.offset + 1), d.get(r.offset + 4)) else {
        return false;
    };
    let max_le = i32::from(hdr_ext_len / 2) - 1;
    i32::from(le) <= max_le && u16::from(r.segments_left) <= u16::from(le) + 1
}

/// RFC 8986 §4.1 S12-S14: hop limit - 1, Segments Left - 1, destination = Segment
/// List[Segments Left]. The caller has checked the SRH. Returns the new Segments Left.
#[inline]
pub fn advance(p: &mut PacketBuf, r: &RoutingInfo) -> u8 {
    let d = p.data_mut();
    d[7] = d[7].wrapping_sub(1);
    let sl = r.segments_left - 1;
    d[r.offset + 3] = sl;
    let s = r.offset + 8 + 16 * sl as usize;
    d.copy_within(s..s + 16, 24);
    sl
}

/// Removes the SRH described by `r` (RFC 8986 §4.16.1 S14.2-S14.4): the preceding
/// Next Header takes the SRH's, the payload length shrinks, and the headers before the
/// SRH move forward over it.
#[inline]
pub fn remove(p: &mut PacketBuf, r: &RoutingInfo) -> bool {
    let d = p.data_mut();
    let nh = d[r.offset];
    d[r.nh_field] = nh;
    let plen = u16::from_be_bytes([d[4], d[5]]).wrapping_sub(r.len as u16);
    d[4..6].copy_from_slice(&plen.to_be_bytes());
    p.close_gap(r.offset, r.len)
}
