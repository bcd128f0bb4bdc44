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
    EthernetFrame, HmacTlv, Ipv6Packet, Ipv6Repr, SrhPacket, ETHERTYPE_IPV4, ETHERTYPE_IPV6, IPPROTO_ETHERNET,
    IPPROTO_IPV4, IPPROTO_IPV6, IPPROTO_ROUTING,
};

/// Outer hop limit for an IPv4 payload: Linux's default route hop limit.
pub const IPV4_OUTER_HOP_LIMIT: u8 = 64;

/// Applies `pol` to the IPv6 packet in `p`, whose hop limit is to be `hl` (decremented
/// by the caller when the packet is in transit). `rx_macs`: the addresses the frame
/// arrived with, for H.Encaps.L2.
pub fn apply6(t: &Tables, p: &mut PacketBuf, pol: &Policy, hl: u8, rx_macs: &[u8; 12]) -> Next {
    match pol.mode {
        Seg6Mode::Inline | Seg6Mode::InlineRed => {
            if !insert_srh(t, p, pol) {
                return Next::drop(DropReason::NoHeadroom);
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
            sign(t, p.data_mut(), pol);
        }
    }
    Ok(())
}

/// Inserts the policy's SRH right after the IPv6 header (H.Insert; Linux
/// `seg6_do_srh_inline`): Segment List[0] = the original destination, destination =
/// first segment, payload length grown, the HMAC computed over the packet's source.
/// Only the 40-byte IPv6 header moves.
pub fn insert_srh(t: &Tables, p: &mut PacketBuf, pol: &Policy) -> bool {
    const H: usize = Ipv6Packet::<&[u8]>::HEADER_LEN;
    let srh_len = pol.srh.len();
    if srh_len == 0 || p.len() < H || p.len() - H + srh_len > usize::from(u16::MAX) {
        return false;
    }
    if !p.open_gap(H, srh_len) {
        return false;
    }
    let mut ip = Ipv6Packet::new_unchecked(p.data_mut());
    let (nh, dst, plen) = (ip.next_header(), ip.dst_addr(), ip.payload_len());
    ip.set_next_header(IPPROTO_ROUTING);
    ip.set_payload_len(plen + srh_len as u16);
    ip.set_dst_addr(&pol.first.into());
    let srh = ip.payload_mut();
    if let Some(s) = srh.get_mut(..srh_len) {
        s.copy_from_slice(&pol.srh);
    }
    let mut srh = SrhPacket::new_unchecked(srh);
    srh.set_next_header(nh);
    srh.set_segment(0, &dst);
    if pol.hmac_key_id.is_some() {
        sign(t, p.data_mut(), pol);
    }
    true
}

/// Computes the HMAC of the SRH that follows the IPv6 header of packet `d` into its
/// HMAC TLV, the only TLV of a policy's SRH (RFC 8754 §2.1.2.1).
fn sign(t: &Tables, d: &mut [u8], pol: &Policy) {
    let Some(key) = pol.hmac_key_id.and_then(|id| t.hmac.keys.get(&id).map(|k| (id, k))) else {
        return;
    };
    let mut ip = Ipv6Packet::new_unchecked(d);
    let src = ip.src_addr().octets();
    let mut srh = SrhPacket::new_unchecked(ip.payload_mut());
    let mac = key.1.compute(&src, srh.last_entry(), srh.flags(), key.0, srh.segment_list());
    let mut tlv = HmacTlv::new_unchecked(srh.tlv_area_mut());
    if let Some(f) = tlv.hmac_mut().get_mut(..mac.len()) {
        f.copy_from_slice(&mac);
    }
}
