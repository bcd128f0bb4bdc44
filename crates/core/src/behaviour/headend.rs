//! Head-end behaviours (RFC 8986 §5): H.Encaps, H.Encaps.Red, H.Encaps.L2(.Red) for IPv6
//! and IPv4 payloads, H.Insert and H.Insert.Red for IPv6. The rewrite (outer header
//! fields, SRH bytes, and the HMAC when its text is fixed) was computed when the policy
//! was built; here it is a pointer move and a copy.

use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::pipeline::{icmp, Next, Worker};
use crate::spec::Seg6Mode;
use crate::tables::{Policy, Tables};
use sr6_wire::{ETHERTYPE_IPV4, ETHERTYPE_IPV6, IPPROTO_ETHERNET};

const IPV6: u8 = 41;
const IPV4: u8 = 4;
const ROUTING: u8 = 43;
/// Outer hop limit for an IPv4 payload: Linux's default route hop limit (64) less the
/// forwarding decrement.
const IPV4_OUTER_HOP_LIMIT: u8 = 64;

/// Applies policy `i` to the IPv6 packet in `p`. `forward`: the packet is in transit
/// (RFC 8200 §3 hop-limit processing applies).
pub fn apply6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, forward: bool) -> Next {
    let Some(pol) = t.policies.get(i as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    if forward && !t.devices.get(p.in_dev as usize).is_some_and(|d| d.forwarding6) {
        return Next::drop(DropReason::ForwardingDisabled);
    }
    let d = p.data();
    let hl = d[7];
    if forward && hl <= 1 {
        return icmp::time_exceeded6(t, w, p);
    }
    let hl = if forward { hl - 1 } else { hl };
    count(w, i);
    match pol.mode {
        Seg6Mode::Inline | Seg6Mode::InlineRed => {
            if !insert_srh(t, p, pol) {
                return Next::drop(DropReason::NoHeadroom);
            }
            p.data_mut()[7] = hl;
            Next::Lookup6 { table: Tables::MAIN, forward: false }
        }
        Seg6Mode::Encap | Seg6Mode::EncapRed | Seg6Mode::L2Encap | Seg6Mode::L2EncapRed => {
            // Linux seg6_do_srh_encap: traffic class, flow label and hop limit come from
            // the inner header.
            let tc = (d[0] & 0x0f) << 4 | d[1] >> 4;
            let fl = u32::from_be_bytes([0, d[1] & 0x0f, d[2], d[3]]);
            encap_any(t, w, p, pol, IPV6, ETHERTYPE_IPV6, tc, fl, hl)
        }
    }
}

/// Applies policy `i` to the IPv4 packet in `p` (encapsulating modes only: the table
/// builder rejects insertion on IPv4 routes).
pub fn apply4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, forward: bool) -> Next {
    let Some(pol) = t.policies.get(i as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    if forward && !t.devices.get(p.in_dev as usize).is_some_and(|d| d.forwarding4) {
        return Next::drop(DropReason::ForwardingDisabled);
    }
    if !pol.encapsulates() {
        return Next::drop(DropReason::WrongNextHeader);
    }
    count(w, i);
    let hl = if forward { IPV4_OUTER_HOP_LIMIT - 1 } else { IPV4_OUTER_HOP_LIMIT };
    encap_any(t, w, p, pol, IPV4, ETHERTYPE_IPV4, 0, 0, hl)
}

#[inline]
fn count(w: &mut Worker, i: u32) {
    if let Some(c) = w.counters.policies.get_mut(i as usize) {
        *c += 1;
    }
}

#[allow(clippy::too_many_arguments)]
fn encap_any(
    t: &Tables,
    w: &mut Worker,
    p: &mut PacketBuf,
    pol: &Policy,
    proto: u8,
    ethertype: u16,
    tc: u8,
    fl: u32,
    hl: u8,
) -> Next {
    let proto = if matches!(pol.mode, Seg6Mode::L2Encap | Seg6Mode::L2EncapRed) {
        // The payload is the Ethernet frame as received (RFC 8986 §5.3), FCS excluded.
        if !p.push_front(14) {
            return Next::drop(DropReason::NoHeadroom);
        }
        let d = p.data_mut();
        d[..12].copy_from_slice(&w.rx_macs);
        d[12..14].copy_from_slice(&ethertype.to_be_bytes());
        IPPROTO_ETHERNET
    } else {
        proto
    };
    match push_encap(t, p, pol, proto, tc, fl, hl) {
        Ok(()) => Next::Lookup6 { table: Tables::MAIN, forward: false },
        Err(r) => Next::drop(r),
    }
}

/// Pushes the policy's outer IPv6 header and SRH in front of the payload in `p`
/// (RFC 8986 §5.1 S02-S05).
pub fn push_encap(
    t: &Tables,
    p: &mut PacketBuf,
    pol: &Policy,
    proto: u8,
    tc: u8,
    fl: u32,
    hl: u8,
) -> Result<(), DropReason> {
    let srh_len = pol.srh.len();
    let plen = srh_len + p.len();
    if plen > usize::from(u16::MAX) {
        return Err(DropReason::TooBig);
    }
    if !p.push_front(40 + srh_len) {
        return Err(DropReason::NoHeadroom);
    }
    let d = p.data_mut();
    let vtf = 6u32 << 28 | u32::from(tc) << 20 | (fl & 0xfffff);
    d[0..4].copy_from_slice(&vtf.to_be_bytes());
    d[4..6].copy_from_slice(&(plen as u16).to_be_bytes());
    d[6] = if srh_len > 0 { ROUTING } else { proto };
    d[7] = hl;
    d[8..24].copy_from_slice(&pol.src);
    d[24..40].copy_from_slice(&pol.first);
    if srh_len > 0 {
        d[40..40 + srh_len].copy_from_slice(&pol.srh);
        d[40] = proto;
        if !pol.hmac_ready {
            sign(t, d, pol);
        }
    }
    Ok(())
}

/// Inserts the policy's SRH right after the IPv6 header (H.Insert; Linux
/// `seg6_do_srh_inline`): Segment List[0] = the original destination, destination =
/// first segment, payload length grown, the HMAC computed over the packet's source.
/// Only the 40-byte IPv6 header moves.
pub fn insert_srh(t: &Tables, p: &mut PacketBuf, pol: &Policy) -> bool {
    let srh_len = pol.srh.len();
    if srh_len == 0 || p.len() < 40 || p.len() - 40 + srh_len > usize::from(u16::MAX) {
        return false;
    }
    if !p.open_gap(40, srh_len) {
        return false;
    }
    let d = p.data_mut();
    d[40..40 + srh_len].copy_from_slice(&pol.srh);
    d[40] = d[6];
    d.copy_within(24..40, 48);
    d[6] = ROUTING;
    let plen = u16::from_be_bytes([d[4], d[5]]) + srh_len as u16;
    d[4..6].copy_from_slice(&plen.to_be_bytes());
    d[24..40].copy_from_slice(&pol.first);
    if pol.hmac_key_id.is_some() {
        sign(t, d, pol);
    }
    true
}

/// Computes the HMAC of the SRH at offset 40 of the IPv6 packet `d` into its TLV.
fn sign(t: &Tables, d: &mut [u8], pol: &Policy) {
    let (Some(key_id), Some(off)) = (pol.hmac_key_id, pol.hmac_tlv_offset()) else {
        return;
    };
    let Some(key) = t.hmac.keys.get(&key_id) else {
        return;
    };
    let mut src = [0u8; 16];
    src.copy_from_slice(&d[8..24]);
    let le = d[44];
    let segs_end = 48 + 16 * (usize::from(le) + 1);
    let mac = key.compute(&src, le, d[45], key_id, &d[48..segs_end]);
    let at = 40 + off + 8;
    d[at..at + mac.len()].copy_from_slice(&mac);
}
