//! The REPLACE-C-SID flavour of End, End.X and End.T (RFC 9800 §4.2), written
//! `flavors replace-csid [lblen L] [nflen N]` — an sr6 extension of the kernel's grammar:
//! no kernel (and no VPP) has the flavour.
//!
//! The SRH carries C-SID containers: 128-bit Segment List entries, each holding
//! `K = 128 / nflen` C-SIDs of `nflen` bits (LNFL: Locator-Node + Function). The
//! destination address is the Locator-Block (`lblen` bits, LBL), the active C-SID, then
//! the argument, whose least significant `ceil(log2(K))` bits are `DA.Arg.Index`: the
//! index of the next C-SID in the current container, Segment List\[Segments Left\]. Slot
//! `i` of a container is its bits `[i*LNFL..(i+1)*LNFL-1]` (bit 0 the most significant),
//! so a container is read from its last slot (`K-1`, the least significant bits) to its
//! first (0), and a zero slot ends it (the C-SID value 0 is reserved: RFC 9800 §5, "C-SID
//! Allocation").
//!
//! [`input`] is RFC 9800 §4.2.1's modified SRH processing of RFC 8986 §4.1 (the complete
//! rendering of its appendix "End with REPLACE-C-SID", steps S01-S30, cited on the code
//! below); End.X (§4.2.2) and End.T (§4.2.3) replace S18 and S29 by their own lookups,
//! which the caller's [`Deliver`] names. In short:
//! - S02-S04, the end of the list: Segments Left 0 and either an index of 0 or an empty
//!   slot below it. The upper layer then (RFC 8986 §4.1.1, unchanged, with USP and USD
//!   as RFC 8986 §4.16.2-§4.16.3 define them: [`super::end::upper_layer`]); so is a
//!   packet without an SRH, whatever its argument.
//! - S05-S07: hop limit <= 1 -> Time Exceeded, quoting the packet as received.
//! - S09-S19, index not zero: Last Entry must fit Hdr Ext Len and Segments Left must not
//!   exceed Last Entry (else Parameter Problem code 0 at Segments Left); the index goes
//!   down by one; if that slot is empty the C-SID sequence ends here: Segments Left - 1,
//!   hop limit - 1, the destination the whole next entry (an uncompressed SID), forwarded.
//! - S20-S26, index zero: the container is used up: as RFC 8986's checks (Segments Left
//!   <= Last Entry + 1), Segments Left - 1, the index restarts at `K-1` in the next one.
//! - S27-S29: hop limit - 1, the slot's C-SID written over the active one (the block and
//!   the rest of the argument unchanged; the index already is the new one), forwarded.
//!
//! PSP (RFC 9800 §4.2, "Combination with PSP, USP, and USD flavors"): RFC 8986
//! §4.16.1.2's SRH removal after S17 when Segments Left is 0, and after S28 when the new
//! destination is the last C-SID of the list (S28.1: Segments Left 0 and an index of 0
//! or an empty slot below it).
//!
//! With the lengths sr6 accepts (`nflen` 16 or 32: K = 8 or 4, a 3- or 2-bit index),
//! every index value names a slot, so an index cannot be out of range; what the
//! pseudocode checks (S10, S21) is the SRH.

use super::end::{upper_layer, Deliver};
use super::{Arrival, Next};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::CsidLengths;
use crate::tables::Sid;
use sr6_wire::{Ipv6Packet, RoutingInfo, SrhPacket};

/// sr6's default lengths: a 48-bit Locator-Block and 32-bit C-SIDs, RFC 9800's own
/// REPLACE-C-SID example (its SID structure figure of §4.2, and node 20's SIDs in §6,
/// "C-SID and Locator-Block Length"), where 32-bit C-SIDs are the length it recommends
/// for the flavour and 48 bits the shortest of the blocks it recommends for it.
pub const DEFAULT_LENGTHS: CsidLengths = CsidLengths { lblen: 48, nflen: 32 };

/// The lengths sr6 accepts for REPLACE-C-SID: C-SIDs of 16 or 32 bits (the two RFC 9800
/// supports for the flavour, §6 "C-SID Length"), a Locator-Block a non-zero multiple of
/// 8, and room after them for the index: LBL + LNFL + ceil(log2(128/LNFL)) <= 128,
/// which for a whole number of bytes means LBL + LNFL <= 120. The error says which rule failed.
pub fn lengths(lblen: u8, nflen: u8) -> Result<CsidLengths, &'static str> {
    if nflen != 16 && nflen != 32 {
        return Err("nflen must be 16 or 32 with replace-csid");
    }
    if lblen == 0 || !lblen.is_multiple_of(8) {
        return Err("lblen must be a non-zero multiple of 8");
    }
    let c = CsidLengths { lblen, nflen };
    if u32::from(lblen) + u32::from(nflen) + index_bits(c) > 128 {
        return Err("lblen + nflen must leave room for the index (lblen + nflen <= 120)");
    }
    Ok(c)
}

/// K, the number of C-SIDs in a container: 128 / LNFL.
#[inline]
fn per_container(c: CsidLengths) -> u32 {
    128 / u32::from(c.nflen.max(1))
}

/// The length of `DA.Arg.Index`: ceil(log2(128/LNFL)) bits (RFC 9800 §4.2).
#[inline]
pub fn index_bits(c: CsidLengths) -> u32 {
    u32::BITS - (per_container(c) - 1).leading_zeros()
}

/// `DA.Arg.Index`: the least significant [`index_bits`] of the destination.
#[inline]
pub fn index(dst: u128, c: CsidLengths) -> u32 {
    (dst & index_mask(c)) as u32
}

#[inline]
fn index_mask(c: CsidLengths) -> u128 {
    (1u128 << index_bits(c)) - 1
}

/// `Segment List[..][i]` of container `entry`: its bits `[i*LNFL..(i+1)*LNFL-1]` (RFC
/// 9800 §4.2.1, notes). 0 for a slot past the container.
#[inline]
pub fn slot(entry: u128, i: u32, c: CsidLengths) -> u128 {
    let nf = u32::from(c.nflen);
    entry.checked_shl(i * nf).and_then(|v| v.checked_shr(128 - nf)).unwrap_or(0)
}

/// The destination with C-SID `csid` in bits `[LBL..LBL+LNFL-1]` (S28) and index `i`
/// (S13/S25: the index is the destination's own bits); the block and the rest of the
/// argument kept.
#[inline]
pub fn with_csid(dst: u128, csid: u128, i: u32, c: CsidLengths) -> u128 {
    let at = 128 - u32::from(c.lblen) - u32::from(c.nflen);
    let field = (u128::MAX >> (128 - u32::from(c.nflen))) << at;
    let d = (dst & !field) | ((csid << at) & field);
    (d & !index_mask(c)) | (u128::from(i) & index_mask(c))
}

/// S02: whether a destination with index `i` at Segments Left 0 is the end of the list —
/// an index of 0, or an empty slot `i-1` in Segment List\[0\] (`seg0`; `None` if it is not
/// in the header, for which the condition cannot hold and S10 answers instead).
#[inline]
fn ends_list(i: u32, seg0: Option<u128>, c: CsidLengths) -> bool {
    i == 0 || seg0.is_some_and(|s| slot(s, i - 1, c) == 0)
}

/// A packet for a SID with REPLACE-C-SID lengths `c`, as it arrived (`a`): the end of the
/// list or no SRH -> the upper layer (S02-S04; RFC 8986 §4.1.1 with USP and USD), else
/// S05-S29, then where `deliver` sends it (End: the main table, S18/S29; End.T: its
/// table; End.X: its next hop).
pub(super) fn input(p: &mut PacketBuf, sid: &Sid, a: &Arrival, c: CsidLengths, deliver: Deliver) -> Next {
    let r = match a {
        Arrival::Segments(r) => *r,
        Arrival::Last { chain, srh: Some(r) } => {
            // S02: Segments Left is 0 here.
            let i = dst(p).map_or(0, |d| index(d, c));
            if ends_list(i, segment(p, r, 0), c) {
                return upper_layer(p, sid, chain, Some(r), deliver);
            }
            *r
        }
        Arrival::Last { chain, srh: None } => return upper_layer(p, sid, chain, None, deliver),
        // The table build refuses NEXT-C-SID with REPLACE-C-SID; no such arrival.
        Arrival::NextCsid(_) => return Next::drop(DropReason::Malformed),
    };
    match step(p, &r, c, sid.action.flavors.psp) {
        Ok(()) => match deliver {
            Deliver::Lookup(table) => Next::Lookup6 { table, forward: false },
            Deliver::Xconnect(nh) => Next::Xconnect6 { nh, forward: false },
        },
        Err(n) => n,
    }
}

/// The destination address of the IPv6 packet in `p`.
fn dst(p: &PacketBuf) -> Option<u128> {
    let h = p.data().get(..Ipv6Packet::<&[u8]>::HEADER_LEN)?;
    Some(u128::from_be_bytes(Ipv6Packet::new_unchecked(h).dst_addr().octets()))
}

/// Segment List\[`i`\] of the SRH `r`, if it is in the header.
fn segment(p: &PacketBuf, r: &RoutingInfo, i: u8) -> Option<u128> {
    let srh = SrhPacket::new_unchecked(p.data().get(r.offset..)?);
    srh.segment(i).map(|s| u128::from_be_bytes(s.octets()))
}

/// RFC 9800 §4.2.1 S05-S28 (with PSP's S17.1 and S28.1 when `psp`) for a packet with the
/// SRH `r` that is not at the end of its list (S02). On success the destination is the
/// next SID or C-SID, the hop limit one less; the caller does S18/S29.
pub fn step(p: &mut PacketBuf, r: &RoutingInfo, c: CsidLengths, psp: bool) -> Result<(), Next> {
    let malformed = || Next::drop(DropReason::Malformed);
    let pp_sl = || Next::param_problem(0, r.offset + sr6_wire::srh::SEGMENTS_LEFT_OFFSET);
    let (hl, da) = {
        let h = p.data().get(..Ipv6Packet::<&[u8]>::HEADER_LEN).ok_or_else(malformed)?;
        let ip = Ipv6Packet::new_unchecked(h);
        (ip.hop_limit(), u128::from_be_bytes(ip.dst_addr().octets()))
    };
    // S05-S07.
    if hl <= 1 {
        return Err(Next::time_exceeded());
    }
    let (sl, le, hdr_ext_len) = {
        let srh = SrhPacket::new_unchecked(p.data().get(r.offset..).ok_or_else(malformed)?);
        if srh.check_len().is_err() {
            return Err(malformed());
        }
        (srh.segments_left(), srh.last_entry(), srh.hdr_ext_len())
    };
    // S08: max_LE = (Hdr Ext Len / 2) - 1, kept signed (-1 for a header of no segment).
    let max_le = i32::from(hdr_ext_len / 2) - 1;
    let le_too_big = i32::from(le) > max_le;
    let mut i = index(da, c);
    let sl = if i != 0 {
        // S10-S12.
        if le_too_big || sl > le {
            return Err(pp_sl());
        }
        // S13.
        i -= 1;
        let entry = segment(p, r, sl).ok_or_else(malformed)?;
        // S14: the C-SID sequence ends in this container.
        if slot(entry, i, c) == 0 {
            // S15 (Segments Left is above 0 here: at 0, S02 ended the list).
            let sl = sl.checked_sub(1).ok_or_else(pp_sl)?;
            let next = segment(p, r, sl).ok_or_else(malformed)?;
            set_srh(p, r, sl);
            // S16-S17.
            set_ip(p, hl - 1, next);
            // PSP after S17 (RFC 8986 §4.16.1.2 S14.1-S14.4).
            if psp && sl == 0 && !super::segment::remove(p, r) {
                return Err(malformed());
            }
            // S18: the caller's lookup.
            return Ok(());
        }
        sl
    } else {
        // S21-S23.
        if le_too_big || usize::from(sl) > usize::from(le) + 1 {
            return Err(pp_sl());
        }
        // S24 (Segments Left is above 0 here: at 0 with index 0, S02 ended the list).
        let sl = sl.checked_sub(1).ok_or_else(pp_sl)?;
        set_srh(p, r, sl);
        // S25.
        i = per_container(c) - 1;
        sl
    };
    let entry = segment(p, r, sl).ok_or_else(malformed)?;
    // S27-S28 (the new index written with the C-SID).
    set_ip(p, hl - 1, with_csid(da, slot(entry, i, c), i, c));
    // PSP after S28, its first line S28.1: the new destination is the list's last C-SID.
    if psp && sl == 0 && ends_list(i, Some(entry), c) && !super::segment::remove(p, r) {
        return Err(malformed());
    }
    // S29: the caller's lookup.
    Ok(())
}

/// Segments Left := `sl` in the SRH `r`.
fn set_srh(p: &mut PacketBuf, r: &RoutingInfo, sl: u8) {
    if let Some(b) = p.data_mut().get_mut(r.offset..) {
        SrhPacket::new_unchecked(b).set_segments_left(sl);
    }
}

/// The IPv6 header's hop limit and destination.
fn set_ip(p: &mut PacketBuf, hl: u8, dst: u128) {
    if let Some(h) = p.data_mut().get_mut(..Ipv6Packet::<&[u8]>::HEADER_LEN) {
        let mut ip = Ipv6Packet::new_unchecked(h);
        ip.set_hop_limit(hl);
        ip.set_dst_addr(&dst.to_be_bytes().into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::next::Icmp6Error;
    use std::net::Ipv6Addr;

    fn a(s: &str) -> u128 {
        u128::from(s.parse::<Ipv6Addr>().unwrap())
    }

    const C16: CsidLengths = CsidLengths { lblen: 48, nflen: 16 };
    const C32: CsidLengths = DEFAULT_LENGTHS;

    #[test]
    fn length_rules() {
        assert_eq!(lengths(48, 32), Ok(C32));
        assert_eq!(lengths(64, 16), Ok(CsidLengths { lblen: 64, nflen: 16 }));
        assert!(lengths(88, 32).is_ok() && lengths(104, 16).is_ok());
        assert!(lengths(96, 32).is_err(), "no room for the index");
        assert!(lengths(112, 16).is_err(), "no room for the index");
        assert!(lengths(48, 8).is_err() && lengths(48, 24).is_err() && lengths(48, 64).is_err());
        assert!(lengths(0, 32).is_err() && lengths(44, 32).is_err());
        assert_eq!((index_bits(C16), index_bits(C32)), (3, 2));
        assert_eq!((per_container(C16), per_container(C32)), (8, 4));
    }

    #[test]
    fn slots_are_numbered_from_the_most_significant_bits() {
        let e = a("1:2:3:4:5:6:7:8");
        for i in 0..8 {
            assert_eq!(slot(e, i, C16), u128::from(i) + 1);
        }
        let e = a("1:2:3:4:5:6:7:8");
        assert_eq!(slot(e, 0, C32), 0x1_0002);
        assert_eq!(slot(e, 3, C32), 0x7_0008);
    }

    #[test]
    fn writes_the_csid_and_the_index_only() {
        // Block 2001:db8:b2 (48), C-SID 20:1 (32), argument 48 bits ending in the index.
        let d = a("2001:db8:b2:20:1:ffff:ffff:fffd");
        assert_eq!(index(d, C32), 1);
        assert_eq!(with_csid(d, 0x30_0007, 0, C32), a("2001:db8:b2:30:7:ffff:ffff:fffc"));
        assert_eq!(with_csid(a("2001:db8:b2:20::"), 0xabcd, 7, C16), a("2001:db8:b2:abcd::7"));
    }

    /// An IPv6 packet from fc00:a::1 to `dst`, hop limit `hl`, with an SRH of `segs`
    /// (header order) and Segments Left `sl`, then 8 bytes of payload (next header 59).
    fn pkt(dst: u128, hl: u8, segs: &[u128], sl: u8) -> PacketBuf {
        let n = segs.len() as u8;
        let mut b = vec![0x60, 0, 0, 0, 0, 0, 43, hl];
        b[4..6].copy_from_slice(&(8 + 16 * u16::from(n) + 8).to_be_bytes());
        b.extend_from_slice(&a("fc00:a::1").to_be_bytes());
        b.extend_from_slice(&dst.to_be_bytes());
        b.extend_from_slice(&[59, 2 * n, 4, sl, n - 1, 0, 0, 0]);
        for s in segs {
            b.extend_from_slice(&s.to_be_bytes());
        }
        b.extend_from_slice(&[0xa5; 8]);
        let mut p = PacketBuf::new();
        assert!(p.load(&b, 0));
        p
    }

    fn srh_of(p: &PacketBuf) -> RoutingInfo {
        RoutingInfo {
            offset: 40,
            nh_field: 6,
            routing_type: 4,
            segments_left: p.data()[43],
            len: p.data()[41] as usize * 8 + 8,
        }
    }

    fn run(p: &mut PacketBuf, c: CsidLengths, psp: bool) -> Result<(u128, u8, u8), Next> {
        let r = srh_of(p);
        step(p, &r, c, psp)?;
        let d = p.data();
        Ok((u128::from_be_bytes(d[24..40].try_into().unwrap()), d[7], if d[6] == 43 { d[43] } else { 255 }))
    }

    /// S1 (uncompressed) then containers of 32-bit C-SIDs: RFC 9800's 'SR Source Node'
    /// encoding, the C-SIDs walked slot 3, 2, 1, 0 of each container.
    #[test]
    fn walks_32_bit_containers() {
        let blk = a("2001:db8:b2::");
        let c1 = a("0:4:0:3:0:2:0:1"); // C-SIDs 0:1, 0:2, 0:3, 0:4 (slot 3 first)
        let c2 = a("::0:6:0:5"); // 0:5, 0:6, then an empty slot
        let s1 = a("2001:db8:b2:10:1::");
        let segs = [c2, c1, s1];
        // At S1 (index 0): next container, slot 3.
        let mut p = pkt(s1, 64, &segs, 2);
        assert_eq!(run(&mut p, C32, false), Ok((blk | (1u128 << 48) | 3, 63, 1)));
        // Index 3 -> 2 in the same container.
        let mut p = pkt(blk | (1u128 << 48) | 3, 63, &segs, 1);
        assert_eq!(run(&mut p, C32, false), Ok((blk | (2u128 << 48) | 2, 62, 1)));
        // Index 0 in container 1 -> container 2's slot 3 (Segments Left 0).
        let mut p = pkt(blk | (4u128 << 48), 60, &segs, 1);
        assert_eq!(run(&mut p, C32, false), Ok((blk | (5u128 << 48) | 3, 59, 0)));
        // Segments Left 0, index 3 -> 2: slot 2 holds 0:6 (slot 1, below it, is empty:
        // the list's last C-SID, so PSP removes the SRH).
        let mut p = pkt(blk | (5u128 << 48) | 3, 59, &segs, 0);
        assert_eq!(run(&mut p, C32, false), Ok((blk | (6u128 << 48) | 2, 58, 0)));
        let mut p = pkt(blk | (5u128 << 48) | 3, 59, &segs, 0);
        assert_eq!(run(&mut p, C32, true), Ok((blk | (6u128 << 48) | 2, 58, 255)));
        assert_eq!(p.len(), 48);
    }

    #[test]
    fn an_empty_slot_ends_the_sequence_with_a_whole_sid() {
        let blk = a("fc00:0:0::");
        let c1 = a("::7:8"); // 16-bit C-SIDs 8 (slot 7) and 7 (slot 6), then empty
        let last = a("fc00:99::1");
        let segs = [last, c1, a("fc00::1:0:0:0:0")];
        // At C-SID 7 (slot 6 of Segment List[1]): slot 5 is empty, so Segments Left 1 ->
        // 0 and the destination is the whole Segment List[0].
        let mut p = pkt(with_csid(blk, 7, 6, C16), 9, &segs, 1);
        assert_eq!(run(&mut p, C16, false), Ok((last, 8, 0)));
        let mut p = pkt(with_csid(blk, 7, 6, C16), 9, &segs, 1);
        assert_eq!(run(&mut p, C16, true), Ok((last, 8, 255)));
    }

    #[test]
    fn srh_errors_and_hop_limit() {
        let pp = Err(Next::Icmp6(Icmp6Error::ParamProblem { code: 0, pointer: 43 }));
        let segs = [a("::1:2"), a("fc00::1")];
        let d = with_csid(a("fc00::"), 9, 2, C16);
        // S10: Segments Left > Last Entry with an index.
        assert_eq!(run(&mut pkt(d, 64, &segs, 2), C16, false), pp);
        // S21: Segments Left > Last Entry + 1 with index 0.
        assert_eq!(run(&mut pkt(a("fc00::"), 64, &segs, 3), C16, false), pp);
        assert!(run(&mut pkt(a("fc00::"), 64, &segs, 2), C16, false).is_ok());
        // S05 comes first.
        assert_eq!(run(&mut pkt(d, 1, &segs, 2), C16, false), Err(Next::time_exceeded()));
        assert_eq!(run(&mut pkt(d, 0, &segs, 1), C16, false), Err(Next::time_exceeded()));
        // Last Entry beyond Hdr Ext Len.
        let mut p = pkt(d, 64, &segs, 1);
        p.data_mut()[44] = 2;
        assert_eq!(run(&mut p, C16, false), pp);
    }

    #[test]
    fn end_of_list() {
        let seg0 = Some(a("::5:6"));
        assert!(ends_list(0, seg0, C16));
        assert!(!ends_list(7, None, C16), "no Segment List[0]: S10 answers");
        assert!(ends_list(6, seg0, C16), "slot 5 is empty");
        assert!(!ends_list(7, seg0, C16), "slot 6 holds 5");
    }
}
