//! End.M.GTP4.E (RFC 9433 §6.6): an SRv6 packet whose last SID carries an IPv4
//! destination and a GTP-U session becomes a GTP-U/UDP/IPv4 packet — toward a gNB or a
//! UPF that speaks GTP-U only. An sr6 extension of the seg6local grammar:
//! `action End.M.GTP4.E v4src-position N`.
//!
//! The SID (Fig. 9): the route's prefix (SRGW-IPv6-LOC-FUNC, so at most /56), the
//! IPv4 destination (32 bits), Args.Mob.Session (40 bits: QFI, R, U, TEID), zeros. The
//! IPv6 source (Fig. 10): a Source UPF Prefix of `v4src-position` bits, then the IPv4
//! source, then anything.
//!
//! Steps: at a SID with Segments Left > 0, ICMPv6 Parameter Problem pointing at it
//! (§6.6 S02-S03); an upper layer other than IPv4 or IPv6, Parameter Problem code 4
//! (RFC 8986 §4.1.1); else the outer IPv6 header and its extension headers go
//! (S04) and the T-PDU gets, in front of it:
//! - a GTP-U header (TS 29.281 §5.1): T-PDU, the TEID, and a PDU Session Container
//!   when the QFI or R is not 0 — DL PDU SESSION INFORMATION (TS 38.415 §5.5.2.1: QFI,
//!   RQI = R), End.M.GTP4.E being the SRGW's downlink toward the gNB (§5.3.1);
//! - UDP from and to port 2152 (TS 29.281 §4.4.2.3), its checksum computed (RFC 768);
//! - IPv4 (RFC 791): DSCP/ECN the outer traffic class, TTL the outer hop limit,
//!   identification 0 with DF set (an atomic datagram, RFC 6864 §4).
//!
//! The packet is then forwarded by the IPv4 main table as a forwarded packet (TTL
//! decremented, ICMP Time Exceeded to the IPv4 source when it runs out).
//!
//! At Segments Left 0, an SRH whose Tag names a signalling message
//! ([`super::signalling`]) is rebuilt as that message instead, whatever follows the
//! SRH.
//!
//! **The fast step** ([`fast`], kind [`FastKind::Gtp4E`], out of the batch loop): a
//! packet with no extension header (the paper's SRv6 packets: the SID in the
//! destination, no SRH) carrying IPv4 or IPv6, whose IPv4 destination is a plain route
//! out of a device that forwards IPv4, is translated in place by the general path's
//! own code ([`write_headers`]), its TTL decremented as `forward4` does; anything else,
//! untouched, goes to the general path (the differential test of
//! `crates/sr6/tests/fast_path.rs` compares both).

use std::net::Ipv4Addr;

use super::super::{decap, Arrival, Behaviour, Inner, Next, Param, Takes};
use super::signalling::Signal;
use super::{check_route, parse_gtp4_sid, MAX_SRC_PREFIX, V4_BITS};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{Prefix, SidAction};
use crate::tables::fast_route::{route4_to, Out};
use crate::tables::{BuildError, Device, FastKind, FastSid, Sid, SidBuilder, SidState, Tables};
use sr6_wire::checksum;
use sr6_wire::fixed::{Ipv6Fixed, ETH_IPV6_LEN as S, ETH_LEN as E};
use sr6_wire::gtpu::{GTPU_PORT, MSG_TPDU, PDU_TYPE_DL};
use sr6_wire::ipv4::FLAG_DF;
use sr6_wire::{GtpuRepr, Ipv4Packet, Ipv4Repr, Ipv6Packet, PduSession, UdpPacket, IPPROTO_UDP};

pub static END_M_GTP4_E: Behaviour = Behaviour {
    keyword: "End.M.GTP4.E",
    required: &[Param::V4SrcPosition],
    optional: &[],
    flavors: &[],
    rfc: "RFC 9433 §6.6",
    summary: "SRv6 to GTP-U/IPv4: IPv4 destination and session from the SID, source from the IPv6 source",
    in_kernel: false,
    takes: Takes::Inner(Inner::Ip),
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    check_route(a, &b.prefix()).map_err(|(m, _)| b.error(m))?;
    let pos = a.params.v4src_position.ok_or_else(|| b.error("End.M.GTP4.E requires `v4src-position N`"))?;
    if pos > MAX_SRC_PREFIX {
        return Err(b.error(format!("End.M.GTP4.E: v4src-position {pos} leaves no room for the 32-bit IPv4 source")));
    }
    Ok(SidState { table: Tables::MAIN, fast: FastSid::new(FastKind::Gtp4E, 0), ..SidState::default() })
}

/// The headers End.M.GTP4.E puts in front of the T-PDU: IPv4, UDP, GTP-U.
const IPV4_UDP: usize = 20 + 8;

fn input(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let (Prefix::V6(_, plen), Some(pos)) = (sid.prefix, sid.action.params.v4src_position) else {
        return Next::drop(DropReason::NoRoute);
    };
    let ip = Ipv6Packet::new_unchecked(p.data());
    let (src, dst) = (u128::from(ip.src_addr()), u128::from(ip.dst_addr()));
    let (tc, hl, total) = (ip.traffic_class(), ip.hop_limit(), ip.total_len());
    let upper = match a {
        Arrival::Last { chain, .. } => chain.upper,
        _ => 0,
    };
    // A message other than a T-PDU, named by the SRH's Tag (super::signalling).
    if let Arrival::Last { chain, srh: Some(r) } = a {
        match Signal::from_srh(p.data(), r, parse_gtp4_sid(dst, plen).1) {
            Ok(None) => {}
            Ok(Some(_)) if chain.fragment.is_some() => return Next::drop(DropReason::Fragment),
            Ok(Some(sig)) => {
                let (v4dst, _) = parse_gtp4_sid(dst, plen);
                let v4src = Ipv4Addr::from(super::get_bits(src, pos, V4_BITS) as u32);
                return match sig.emit4(p, v4src, v4dst, tc, hl) {
                    Ok(()) => Next::Lookup4 { table: sid.state.table, forward: true },
                    Err(r) => Next::drop(r),
                };
            }
            Err(r) => return Next::drop(r),
        }
    }
    // §6.6 S01-S04 (and RFC 8986 §4.1.1 for an upper layer it does not take).
    if let Err(n) = decap::last_segment(p, a, |up| up == decap::IPV4 || up == decap::IPV6) {
        return n;
    }
    let inner_len = total.saturating_sub(upper);
    p.truncate(inner_len);
    let (v4dst, args) = parse_gtp4_sid(dst, plen);
    let v4src = Ipv4Addr::from(super::get_bits(src, pos, V4_BITS) as u32);
    match write_headers(p, v4src, v4dst, args, tc, hl) {
        Ok(()) => Next::Lookup4 { table: sid.state.table, forward: true },
        Err(r) => Next::drop(r),
    }
}

/// The GTP-U header End.M.GTP4.E writes for session `args`: a PDU Session Container
/// when the QFI or R is not 0.
fn gtpu_of(args: super::ArgsMobSession) -> GtpuRepr {
    let session = (args.qfi != 0 || args.r).then_some(PduSession { pdu_type: PDU_TYPE_DL, qfi: args.qfi, rqi: args.r });
    GtpuRepr { msg_type: MSG_TPDU, teid: args.teid, session }
}

/// Puts the IPv4, UDP and GTP-U headers in front of the T-PDU that `p` holds (S04's
/// result), the UDP checksum computed, TTL `hl` (the forwarding step decrements it).
fn write_headers(
    p: &mut PacketBuf,
    v4src: Ipv4Addr,
    v4dst: Ipv4Addr,
    args: super::ArgsMobSession,
    tc: u8,
    hl: u8,
) -> Result<(), DropReason> {
    let inner_len = p.len();
    let gtp = gtpu_of(args);
    let hdr = IPV4_UDP + gtp.buffer_len();
    let udp_len = 8 + gtp.buffer_len() + inner_len;
    if hdr + inner_len > usize::from(u16::MAX) {
        return Err(DropReason::TooBig);
    }
    if !p.push_front(hdr) {
        return Err(DropReason::NoHeadroom);
    }
    let outer = Ipv4Repr {
        src_addr: v4src,
        dst_addr: v4dst,
        protocol: IPPROTO_UDP,
        payload_len: udp_len as u16,
        ttl: hl,
        dscp_ecn: tc,
        ident: 0,
        flags_frag: FLAG_DF,
    };
    let data = p.data_mut();
    outer.emit(&mut Ipv4Packet::new_unchecked(&mut *data));
    let Some(seg) = data.get_mut(20..) else { return Err(DropReason::Malformed) };
    let mut udp = UdpPacket::new_unchecked(&mut *seg);
    udp.set_src_port(GTPU_PORT);
    udp.set_dst_port(GTPU_PORT);
    udp.set_len(udp_len as u16);
    udp.set_checksum(0);
    if let Some(g) = seg.get_mut(8..) {
        gtp.emit(g, inner_len as u16);
    }
    // RFC 768: the checksum over the pseudo-header and the datagram; 0 is sent as
    // all ones.
    let sum = checksum::pseudo_header_v4(&v4src, &v4dst, udp_len as u16, IPPROTO_UDP) + checksum::sum(seg);
    let c = checksum::fold(sum);
    UdpPacket::new_unchecked(seg).set_checksum(if c == 0 { 0xffff } else { c });
    Ok(())
}

/// The fast step (see the module docs) on the Ethernet + IPv6 frame `p`, received on
/// `dev`, for SID `sid`: `try6` checked its IPv6 header (version, Payload Length the
/// frame's, hop limit over 1, source screened). `Some(device)` to transmit the
/// translated frame to; `None` leaves it untouched.
pub(crate) fn fast(t: &Tables, dev: &Device, p: &mut PacketBuf, sid: &Sid) -> Option<Out> {
    let (Prefix::V6(_, plen), Some(pos)) = (sid.prefix, sid.action.params.v4src_position) else { return None };
    let f = p.data();
    let h = f.first_chunk::<S>()?;
    // The T-PDU right after the IPv6 header (no SRH, no other extension header).
    if !matches!(h.next_header(), decap::IPV4 | decap::IPV6) || !dev.forwarding4 {
        return None;
    }
    let (src, dst, hl) = (u128::from_be_bytes(h.src_bytes()), h.dst(), h.hop_limit());
    let tc = (u32::from_be_bytes(h.vtf()) >> 20) as u8;
    let (v4dst, args) = parse_gtp4_sid(dst, plen);
    let v4src = Ipv4Addr::from(super::get_bits(src, pos, V4_BITS) as u32);
    // The route, and room: within the smallest MTU the fast path allows (so that no
    // device's MTU is passed), and in the headroom.
    let (out, eth) = route4_to(t, sid.state.table, u32::from(v4dst))?;
    let hdr = IPV4_UDP + gtpu_of(args).buffer_len();
    if f.len() - S + hdr + E > t.fast_max_len || p.headroom() + S < hdr + E {
        return None;
    }
    // From here nothing fails: the frame is the IPv4 packet's, as the general path makes
    // it, then forwarded (`forward4`: TTL - 1, checksum updated; Ethernet header).
    let _ = p.pull_front(S);
    write_headers(p, v4src, v4dst, args, tc, hl).ok()?;
    Ipv4Packet::new_unchecked(p.data_mut()).decrement_ttl();
    let _ = p.push_front(E);
    let d = p.data_mut();
    let (e, _) = d.split_first_chunk_mut::<E>()?;
    eth.write(e);
    e[12..].copy_from_slice(&sr6_wire::ETHERTYPE_IPV4.to_be_bytes());
    Some(out)
}
