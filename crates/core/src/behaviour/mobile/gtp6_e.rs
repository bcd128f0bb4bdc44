//! End.M.GTP6.E (RFC 9433 §6.5): an SRv6 packet whose SID carries a GTP-U session
//! becomes a GTP-U/UDP/IPv6 packet toward the last segment — a gNB (or a UPF) that
//! speaks GTP-U only. An sr6 extension of the seg6local grammar:
//! `action End.M.GTP6.E src A`.
//!
//! The SID S: the route's prefix (at most /88), Args.Mob.Session (40 bits: QFI, R, U,
//! TEID), anything. S is the penultimate segment: the packet arrives with Segments
//! Left 1, and Segment List[0] is the GTP-U destination.
//!
//! Steps: Segments Left other than 1, ICMPv6 Parameter Problem pointing at it (SRH
//! processing S02-S03); no SRH, or an upper layer other than IPv4 or IPv6, Parameter
//! Problem code 4 (SR Upper-layer Header Error, RFC 8986 §4.1.1) pointing at the upper
//! layer; a fragment, dropped (`fragment`). Else S and SRH[0] are kept (S01), the
//! IPv6 header and all its extension headers go (S02) and the T-PDU gets, in front of
//! it (S03-S06):
//! - a GTP-U header (TS 29.281 §5.1): T-PDU, the TEID, and a PDU Session Container
//!   when the QFI or R is not 0 — DL PDU SESSION INFORMATION (TS 38.415 §5.5.2.1: QFI,
//!   RQI = R), End.M.GTP6.E being the SRGW's downlink toward the gNB (§5.3.1.2);
//! - UDP from and to port 2152 (TS 29.281 §4.4.2.3), its checksum computed (RFC 8200
//!   §8.1);
//! - IPv6 from `src` A (S04) to SRH[0] (S05), with the traffic class, flow label and
//!   hop limit of the packet's IPv6 header.
//!
//! The packet is then forwarded by the IPv6 main table as a forwarded packet (hop
//! limit decremented, S07).
//!
//! At Segments Left 1, an SRH whose Tag names a signalling message
//! ([`super::signalling`]) is rebuilt as that message instead, whatever follows the
//! SRH.

use std::net::Ipv6Addr;

use super::super::next::PP_SR_UPPER_LAYER;
use super::super::{decap, Arrival, Behaviour, Next, Param, Takes};
use super::signalling::Signal;
use super::{check_route, parse_gtp6_sid};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{Prefix, SidAction};
use crate::tables::{BuildError, Sid, SidBuilder, SidState, Tables};
use sr6_wire::gtpu::{GTPU_PORT, MSG_TPDU, PDU_TYPE_DL};
use sr6_wire::{
    checksum, walk_chain, GtpuRepr, Ipv6Packet, Ipv6Repr, PduSession, RoutingInfo, SrhPacket, UdpPacket, IPPROTO_UDP,
};

pub static END_M_GTP6_E: Behaviour = Behaviour {
    keyword: "End.M.GTP6.E",
    required: &[Param::Src],
    optional: &[],
    flavors: &[],
    rfc: "RFC 9433 §6.5",
    summary: "SRv6 to GTP-U/IPv6: session from the SID, destination the last segment, source src",
    in_kernel: false,
    takes: Takes::Segment,
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    check_route(a, &b.prefix()).map_err(|(m, _)| b.error(m))?;
    if a.params.src.is_none() {
        return Err(b.error("End.M.GTP6.E requires `src ADDR`"));
    }
    Ok(SidState { table: Tables::MAIN, ..SidState::default() })
}

/// The headers End.M.GTP6.E puts in front of the T-PDU: IPv6, UDP, GTP-U.
const IPV6_UDP: usize = 40 + 8;

fn input(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let (Prefix::V6(_, plen), Some(src)) = (sid.prefix, sid.action.params.src) else {
        return Next::drop(DropReason::NoRoute);
    };
    let r = match a {
        Arrival::Segments(r) if r.segments_left == 1 => r,
        // SRH processing S02-S03.
        Arrival::Segments(r) | Arrival::Last { srh: Some(r), .. } => {
            return Next::param_problem(0, r.offset + sr6_wire::srh::SEGMENTS_LEFT_OFFSET)
        }
        Arrival::Last { chain, srh: None } => return Next::param_problem(PP_SR_UPPER_LAYER, chain.upper),
        Arrival::NextCsid(_) => return Next::drop(DropReason::Malformed),
    };
    let Ok(chain) = walk_chain(p.data()) else { return Next::drop(DropReason::Malformed) };
    if chain.fragment.is_some() {
        return Next::drop(DropReason::Fragment);
    }
    // A message other than a T-PDU, named by the SRH's Tag (super::signalling).
    match Signal::from_srh(
        p.data(),
        r,
        parse_gtp6_sid(u128::from(Ipv6Packet::new_unchecked(p.data()).dst_addr()), plen),
    ) {
        Ok(None) => {}
        Ok(Some(sig)) => return signal(p, sid, src, r, &sig),
        Err(r) => return Next::drop(r),
    }
    if chain.upper_proto != decap::IPV4 && chain.upper_proto != decap::IPV6 {
        return Next::param_problem(PP_SR_UPPER_LAYER, chain.upper);
    }
    let ip = Ipv6Packet::new_unchecked(p.data());
    let (s, tc, fl, hl, total) = (ip.dst_addr(), ip.traffic_class(), ip.flow_label(), ip.hop_limit(), ip.total_len());
    // S01: S and SRH[0].
    let Some(dst) = p.data().get(r.offset..).and_then(|b| SrhPacket::new_checked(b).ok()?.segment(0)) else {
        return Next::drop(DropReason::Malformed);
    };
    let args = parse_gtp6_sid(u128::from(s), plen);
    // S02.
    if let Err(n) = decap::strip(p, &chain) {
        return n;
    }
    let inner_len = total.saturating_sub(chain.upper);
    p.truncate(inner_len);
    // S03-S06.
    let session = (args.qfi != 0 || args.r).then_some(PduSession { pdu_type: PDU_TYPE_DL, qfi: args.qfi, rqi: args.r });
    let gtp = GtpuRepr { msg_type: MSG_TPDU, teid: args.teid, session };
    let udp_len = 8 + gtp.buffer_len() + inner_len;
    if udp_len > usize::from(u16::MAX) {
        return Next::drop(DropReason::TooBig);
    }
    if !p.push_front(IPV6_UDP + gtp.buffer_len()) {
        return Next::drop(DropReason::NoHeadroom);
    }
    emit(p.data_mut(), src, dst, tc, fl, hl, udp_len as u16, &gtp, inner_len as u16);
    // S07.
    Next::Lookup6 { table: sid.state.table, forward: true }
}

/// The signalling message `sig` rebuilt toward SRH[0] (S01-S06 as for a T-PDU).
fn signal(p: &mut PacketBuf, sid: &Sid, src: Ipv6Addr, r: &RoutingInfo, sig: &Signal) -> Next {
    let ip = Ipv6Packet::new_unchecked(p.data());
    let (tc, fl, hl) = (ip.traffic_class(), ip.flow_label(), ip.hop_limit());
    let Some(dst) = p.data().get(r.offset..).and_then(|b| SrhPacket::new_checked(b).ok()?.segment(0)) else {
        return Next::drop(DropReason::Malformed);
    };
    match sig.emit6(p, src, dst, tc, fl, hl) {
        Ok(()) => Next::Lookup6 { table: sid.state.table, forward: true },
        Err(r) => Next::drop(r),
    }
}

/// Writes IPv6, UDP (its checksum over the pseudo-header, 0 sent as all ones) and
/// GTP-U at the start of `data`.
#[allow(clippy::too_many_arguments)]
fn emit(
    data: &mut [u8],
    src: Ipv6Addr,
    dst: Ipv6Addr,
    tc: u8,
    fl: u32,
    hl: u8,
    udp_len: u16,
    gtp: &GtpuRepr,
    inner: u16,
) {
    let outer = Ipv6Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: IPPROTO_UDP,
        payload_len: udp_len,
        hop_limit: hl,
        traffic_class: tc,
        flow_label: fl,
    };
    outer.emit(&mut Ipv6Packet::new_unchecked(&mut *data));
    let Some(seg) = data.get_mut(40..) else { return };
    let mut udp = UdpPacket::new_unchecked(&mut *seg);
    udp.set_src_port(GTPU_PORT);
    udp.set_dst_port(GTPU_PORT);
    udp.set_len(udp_len);
    udp.set_checksum(0);
    if let Some(g) = seg.get_mut(8..) {
        gtp.emit(g, inner);
    }
    let sum = checksum::pseudo_header_v6(&src, &dst, u32::from(udp_len), IPPROTO_UDP)
        + checksum::sum(seg.get(..usize::from(udp_len)).unwrap_or_default());
    let c = checksum::fold(sum);
    UdpPacket::new_unchecked(seg).set_checksum(if c == 0 { 0xffff } else { c });
}
