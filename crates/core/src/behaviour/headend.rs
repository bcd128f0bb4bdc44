//! Head-end behaviours (RFC 8986 §5): H.Encaps, H.Encaps.Red, H.Encaps.L2(.Red) for IPv6
//! and IPv4 payloads, H.Insert and H.Insert.Red for IPv6; the binding SIDs apply their
//! policies through here too. The policy's SRH (and its HMAC when the text is fixed)
//! was computed when the tables were built; here it is a pointer move and a copy. The
//! forwarding checks before a route's policy applies are the pipeline's.

use super::Next;
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::Seg6Mode;
use crate::tables::{Policy, Tables};
use sr6_wire::{
    EthernetFrame, ExtHeader, HmacTlv, Ipv6Packet, Ipv6Repr, SrhPacket, ETHERTYPE_IPV4, ETHERTYPE_IPV6,
    IPPROTO_ETHERNET, IPPROTO_HOPOPTS, IPPROTO_IPV4, IPPROTO_IPV6, IPPROTO_ROUTING,
};

/// Outer hop limit for an IPv4 payload: Linux's default route hop limit.
pub const IPV4_OUTER_HOP_LIMIT: u8 = 64;

/// Applies `pol` to the IPv6 packet in `p`, whose hop limit is to be `hl` (decremented
/// by the caller when the packet is in transit). `rx_macs`: the addresses the frame
/// arrived with, for H.Encaps.L2.
pub fn apply6(t: &Tables, p: &mut PacketBuf, pol: &Policy, hl: u8, rx_macs: &[u8; 12]) -> Next {
    match pol.mode {
        Seg6Mode::Inline | Seg6Mode::InlineRed => {
            if let Err(r) = insert_srh(t, p, pol) {
                return Next::drop(r);
            }
            Ipv6Packet::new_unchecked(p.data_mut()).set_hop_limit(hl);
            Next::Lookup6 { table: Tables::MAIN, forward: false }
        }
        Seg6Mode::Encap | Seg6Mode::EncapRed | Seg6Mode::L2Encap | Seg6Mode::L2EncapRed => {
            // Linux seg6_do_srh_encap: traffic class and flow label come from the inner
            // header.
            let ip = Ipv6Packet::new_unchecked(p.data());
            let (tc, fl) = (ip.traffic_class(), ip.flow_label());
            encap(t, p, pol, IPPROTO_IPV6, ETHERTYPE_IPV6, tc, fl, hl, rx_macs)
        }
    }
}

/// Applies `pol` to the IPv4 packet in `p` with outer hop limit `hl` (encapsulating
/// modes only: the table builder rejects insertion on IPv4 routes).
pub fn apply4(t: &Tables, p: &mut PacketBuf, pol: &Policy, hl: u8, rx_macs: &[u8; 12]) -> Next {
    if !pol.encapsulates() {
        return Next::drop(DropReason::WrongNextHeader);
    }
    encap(t, p, pol, IPPROTO_IPV4, ETHERTYPE_IPV4, 0, 0, hl, rx_macs)
}

#[allow(clippy::too_many_arguments)]
fn encap(
    t: &Tables,
    p: &mut PacketBuf,
    pol: &Policy,
    proto: u8,
    ethertype: u16,
    tc: u8,
    fl: u32,
    hl: u8,
    rx_macs: &[u8; 12],
) -> Next {
    let proto = if matches!(pol.mode, Seg6Mode::L2Encap | Seg6Mode::L2EncapRed) {
        // The payload is the Ethernet frame as received (RFC 8986 §5.3), FCS excluded.
        if !p.push_front(EthernetFrame::<&[u8]>::HEADER_LEN) {
            return Next::drop(DropReason::NoHeadroom);
        }
        let mut eth = EthernetFrame::new_unchecked(p.data_mut());
        eth.set_addrs(rx_macs);
        eth.set_ethertype(ethertype);
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
/// (RFC 8986 §5.1 S02-S05), the payload's protocol `proto`.
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
    // Where the carried packet starts, for an ICMP error about it (`pipeline::mtu`).
    let inner_at = p.headroom() as u16;
    if !p.push_front(Ipv6Packet::<&[u8]>::HEADER_LEN + srh_len) {
        return Err(DropReason::NoHeadroom);
    }
    p.inner_at = inner_at;
    let outer = Ipv6Repr {
        src_addr: pol.src.into(),
        dst_addr: pol.first.into(),
        next_header: if srh_len > 0 { IPPROTO_ROUTING } else { proto },
        payload_len: plen as u16,
        hop_limit: hl,
        traffic_class: tc,
        flow_label: fl,
    };
    let mut ip = Ipv6Packet::new_unchecked(p.data_mut());
    outer.emit(&mut ip);
    if srh_len > 0 {
        let srh = ip.payload_mut();
        if let Some(s) = srh.get_mut(..srh_len) {
            s.copy_from_slice(&pol.srh);
        }
        SrhPacket::new_unchecked(&mut *srh).set_next_header(proto);
        if !pol.hmac_ready {
            sign(t, p.data_mut(), Ipv6Packet::<&[u8]>::HEADER_LEN, pol);
        }
    }
    Ok(())
}

/// Inserts the policy's SRH (H.Insert, RFC 8986 §5.2; Linux `seg6_do_srh_inline`):
/// Segment List[0] = the original destination, destination = first segment, payload
/// length grown, the HMAC computed over the packet's source. The SRH goes right after
/// the IPv6 header, or after a Hop-by-Hop Options header, which RFC 8200 §4.1 keeps
/// immediately after the IPv6 header (Linux puts the SRH in front of it:
/// docs/conformance.md); the header that named what follows (IPv6 or Hop-by-Hop) then
/// names the SRH, and the SRH what it named. Only the headers in front of the SRH move.
pub fn insert_srh(t: &Tables, p: &mut PacketBuf, pol: &Policy) -> Result<(), DropReason> {
    const H: usize = Ipv6Packet::<&[u8]>::HEADER_LEN;
    let srh_len = pol.srh.len();
    if srh_len == 0 {
        return Err(DropReason::NoHeadroom);
    }
    let d = p.data();
    if d.len() < H {
        return Err(DropReason::Malformed);
    }
    // Where the SRH goes: after the Hop-by-Hop header if there is one.
    let ip = Ipv6Packet::new_unchecked(d);
    let hbh = ip.next_header() == IPPROTO_HOPOPTS;
    let at =
        if hbh { H + ExtHeader::new_checked(ip.payload()).map_err(|_| DropReason::Malformed)?.header_len() } else { H };
    if d.len() - H + srh_len > usize::from(u16::MAX) {
        return Err(DropReason::TooBig);
    }
    if !p.open_gap(at, srh_len) {
        return Err(DropReason::NoHeadroom);
    }
    let d = p.data_mut();
    let mut ip = Ipv6Packet::new_unchecked(&mut *d);
    let (dst, plen) = (ip.dst_addr(), ip.payload_len());
    ip.set_payload_len(plen + srh_len as u16);
    ip.set_dst_addr(&pol.first.into());
    // The header that named what follows now names the SRH.
    let nh = if hbh {
        let mut h = ExtHeader::new_unchecked(ip.payload_mut());
        let nh = h.next_header();
        h.set_next_header(IPPROTO_ROUTING);
        nh
    } else {
        let nh = ip.next_header();
        ip.set_next_header(IPPROTO_ROUTING);
        nh
    };
    let Some(srh) = d.get_mut(at..at + srh_len) else { return Err(DropReason::Malformed) };
    srh.copy_from_slice(&pol.srh);
    let mut srh = SrhPacket::new_unchecked(srh);
    srh.set_next_header(nh);
    srh.set_segment(0, &dst);
    if pol.hmac_key_id.is_some() {
        sign(t, d, at, pol);
    }
    Ok(())
}

/// Computes the HMAC of the SRH at offset `at` of packet `d` (after the IPv6 header,
/// or a Hop-by-Hop header) into its HMAC TLV, the only TLV of a policy's SRH (RFC 8754
/// §2.1.2.1: the text is the source address, Last Entry, flags, key id and Segment
/// List, none of which depends on where the SRH lies).
fn sign(t: &Tables, d: &mut [u8], at: usize, pol: &Policy) {
    let Some(key) = pol.hmac_key_id.and_then(|id| t.hmac.keys.get(&id).map(|k| (id, k))) else {
        return;
    };
    let src = Ipv6Packet::new_unchecked(&*d).src_addr().octets();
    let Some(srh) = d.get_mut(at..) else { return };
    let mut srh = SrhPacket::new_unchecked(srh);
    let mac = key.1.compute(&src, srh.last_entry(), srh.flags(), key.0, srh.segment_list());
    let mut tlv = HmacTlv::new_unchecked(srh.tlv_area_mut());
    if let Some(f) = tlv.hmac_mut().get_mut(..mac.len()) {
        f.copy_from_slice(&mac);
    }
}
