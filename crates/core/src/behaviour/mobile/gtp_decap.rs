//! GTP-U decapsulation at a local UPF address (3GPP TS 29.281) — the paper's baseline
//! "GTP-U decap." function: `ip route add A/32 encap gtp decap [table N] dev DEV` (and
//! `ip -6 route add A/128 ...`), sr6's own grammar. A row of the behaviour table,
//! `GTP-U.Decap`, which `encap gtp decap` writes (the seg6local grammar does not take
//! it): on an IPv4 route the IPv4 FIB hands its packets to [`input4`], as H.M.GTP4.D's;
//! on an IPv6 route it is a local SID like any other, at its last segment.
//!
//! What arrives at A:
//! - a T-PDU (message type 255) in UDP to port 2152: the outer IPv4 or IPv6 header
//!   (and its extension headers), UDP and GTP-U with its optional fields and extension
//!   headers (skipped by their length fields, TS 29.281 §5.2.1) go; the inner packet,
//!   IPv4 or IPv6 by its version, is forwarded by table N (the main table without
//!   `table`): its TTL or hop limit decremented, as Linux's `gtp` device hands it to
//!   the stack to forward;
//! - an Echo Request (type 1): answered with an Echo Response (TS 29.281 §7.2.2): the
//!   request's sequence number, TEID 0, a Recovery IE of value 0 (§8.2), from A and
//!   port 2152 to the request's source address and port, TTL / hop limit 64 (IPv4: ID
//!   0, DF), UDP checksum computed; routed by the main table;
//! - anything else is dropped and counted: not UDP to port 2152 (`not_gtpu`); a GTP-U
//!   header that is truncated, not version 1 / PT 1, whose Length disagrees with the UDP
//!   length or whose extension headers overrun it, or a UDP checksum that does not
//!   verify — or is 0 over IPv6, RFC 8200 §8.1 — (`gtpu_malformed`); another message
//!   (End Marker, Error Indication, Echo Response...: `gtpu_signalling`, sr6 having no
//!   GTP-U control plane to hand it to); a T-PDU that is neither IPv4 nor IPv6
//!   (`wrong_next_header`); a fragment (`fragment`: no reassembly). Over IPv6, a
//!   packet with Segments Left > 0 is answered with Parameter Problem (RFC 8754
//!   §4.3.1.1: A is a SID that takes no segment, as End.M.GTP6.D).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::super::{Arrival, Behaviour, Next, Param, Takes};
use super::gtp_encap::{write_udp, OUTER_HOP_LIMIT};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{SidAction, SidParams};
use crate::tables::{BuildError, Sid, SidBuilder, SidState, Tables};
use sr6_wire::gtpu::{emit_echo_response, ECHO_RESPONSE_LEN, GTPU_PORT, MSG_ECHO_REQUEST, MSG_TPDU};
use sr6_wire::ipv4::{FLAG_DF, FLAG_MF, FRAG_OFFSET_MASK};
use sr6_wire::{checksum, GtpuPacket, Ipv4Packet, Ipv4Repr, Ipv6Packet, Ipv6Repr, UdpPacket, IPPROTO_UDP};

pub static GTP_U_DECAP: Behaviour = Behaviour {
    keyword: "GTP-U.Decap",
    required: &[],
    optional: &[Param::Table],
    flavors: &[],
    rfc: "3GPP TS 29.281 §5, §7.2",
    summary: "GTP-U decapsulation at a UPF address (`encap gtp decap`, IPv4 or IPv6 routes); Echo Requests answered",
    in_kernel: false,
    // GTP-U to the route's address; on an IPv6 route, at its last segment.
    takes: Takes::Gtpu6,
    build,
    input,
};

/// The action `encap gtp decap [table N]` stands for.
pub fn action(table: Option<u32>) -> SidAction {
    SidAction {
        behaviour: &GTP_U_DECAP,
        params: SidParams { table, ..SidParams::default() },
        flavors: Default::default(),
        count: false,
    }
}

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    Ok(SidState { table: b.table_of(a), ..SidState::default() })
}

/// What the GTP-U message in a UDP datagram is.
enum Msg {
    /// A T-PDU: the length of the UDP + GTP-U headers, the inner packet's.
    TPdu { hdr_len: usize, inner_len: usize },
    /// An Echo Request: its source port and sequence number.
    Echo { sport: u16, seq: u16 },
}

/// The UDP datagram `seg` (exactly: the IP payload) whose pseudo-header sums to
/// `pseudo`; a checksum of 0 (none computed) accepted when `zero_ok` (IPv4, RFC 768).
fn gtp_message(l4: &[u8], pseudo: impl Fn(u16) -> u32, zero_ok: bool) -> Result<Msg, DropReason> {
    let udp = UdpPacket::new_checked(l4).map_err(|_| DropReason::GtpuMalformed)?;
    if udp.dst_port() != GTPU_PORT {
        return Err(DropReason::NotGtpu);
    }
    let seg = l4.get(..usize::from(udp.len())).ok_or(DropReason::GtpuMalformed)?;
    let bad_sum = checksum::fold(pseudo(udp.len()) + checksum::sum(seg)) != 0;
    if (udp.checksum() == 0 && !zero_ok) || (udp.checksum() != 0 && bad_sum) {
        return Err(DropReason::GtpuMalformed);
    }
    let gtp = GtpuPacket::new_checked(seg.get(UdpPacket::<&[u8]>::HEADER_LEN..).unwrap_or_default())
        .map_err(|_| DropReason::GtpuMalformed)?;
    match gtp.msg_type() {
        MSG_TPDU => {
            let inner = gtp.payload();
            if !matches!(inner.first().map(|b| b >> 4), Some(4 | 6)) {
                return Err(DropReason::WrongNextHeader);
            }
            Ok(Msg::TPdu { hdr_len: UdpPacket::<&[u8]>::HEADER_LEN + gtp.header_len(), inner_len: inner.len() })
        }
        MSG_ECHO_REQUEST => Ok(Msg::Echo { sport: udp.src_port(), seq: gtp.seq().unwrap_or(0) }),
        _ => Err(DropReason::GtpuSignalling),
    }
}

/// An IPv6 packet for the SID: at its last segment, the upper layer UDP.
fn input(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let chain = match a {
        Arrival::Segments(r) => return Next::param_problem(0, r.offset + sr6_wire::srh::SEGMENTS_LEFT_OFFSET),
        Arrival::NextCsid(_) => return Next::drop(DropReason::Malformed),
        Arrival::Last { chain, .. } => chain,
    };
    if chain.fragment.is_some() {
        return Next::drop(DropReason::Fragment);
    }
    if chain.upper_proto != IPPROTO_UDP {
        return Next::drop(DropReason::NotGtpu);
    }
    let d = p.data();
    let Ok(ip) = Ipv6Packet::new_checked(d) else { return Next::drop(DropReason::Malformed) };
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    let Some(l4) = d.get(chain.upper..ip.total_len()) else { return Next::drop(DropReason::Malformed) };
    // RFC 8200 §8.1: over IPv6 the UDP checksum is mandatory.
    let pseudo = |len: u16| checksum::pseudo_header_v6(&src, &dst, u32::from(len), IPPROTO_UDP);
    match gtp_message(l4, pseudo, false) {
        Ok(Msg::TPdu { hdr_len, inner_len }) => decap(p, chain.upper + hdr_len, inner_len, sid),
        Ok(Msg::Echo { sport, seq }) => echo_response(p, IpAddr::V6(dst), IpAddr::V6(src), sport, seq),
        Err(r) => Next::drop(r),
    }
}

/// An IPv4 packet for the route (the IPv4 FIB's `Route::Sid`).
pub fn input4(p: &mut PacketBuf, sid: &Sid) -> Next {
    let d = p.data();
    let Ok(ip) = Ipv4Packet::new_checked(d) else { return Next::drop(DropReason::Malformed) };
    if ip.flags_frag() & (FLAG_MF | FRAG_OFFSET_MASK) != 0 {
        return Next::drop(DropReason::Fragment);
    }
    if ip.protocol() != IPPROTO_UDP {
        return Next::drop(DropReason::NotGtpu);
    }
    let (src, dst, ihl) = (ip.src_addr(), ip.dst_addr(), ip.header_len());
    let Some(l4) = d.get(ihl..usize::from(ip.total_len())) else { return Next::drop(DropReason::Malformed) };
    let pseudo = |len: u16| checksum::pseudo_header_v4(&src, &dst, len, IPPROTO_UDP);
    match gtp_message(l4, pseudo, true) {
        Ok(Msg::TPdu { hdr_len, inner_len }) => decap(p, ihl + hdr_len, inner_len, sid),
        Ok(Msg::Echo { sport, seq }) => echo_response(p, IpAddr::V4(dst), IpAddr::V4(src), sport, seq),
        Err(r) => Next::drop(r),
    }
}

/// The outer headers (`hdr_len` bytes) go, and any padding after the inner packet; it
/// is forwarded by the SID's table.
fn decap(p: &mut PacketBuf, hdr_len: usize, inner_len: usize, sid: &Sid) -> Next {
    if !p.pull_front(hdr_len) {
        return Next::drop(DropReason::Malformed);
    }
    p.truncate(inner_len);
    match p.data().first().map(|b| b >> 4) {
        Some(4) => Next::Lookup4 { table: sid.state.table, forward: true },
        Some(6) => Next::Lookup6 { table: sid.state.table, forward: true },
        _ => Next::drop(DropReason::WrongNextHeader),
    }
}

/// Replaces the packet in `p` with the Echo Response from `src` to `dst` (port
/// `dport`) for sequence number `seq`, routed by the main table.
fn echo_response(p: &mut PacketBuf, src: IpAddr, dst: IpAddr, dport: u16, seq: u16) -> Next {
    let udp_len = UdpPacket::<&[u8]>::HEADER_LEN + ECHO_RESPONSE_LEN;
    let ip_len = if src.is_ipv4() { Ipv4Packet::<&[u8]>::HEADER_LEN } else { Ipv6Packet::<&[u8]>::HEADER_LEN };
    // The request goes; the response is written in the room before where it ended.
    let len = p.len();
    if !p.pull_front(len) || !p.push_front(ip_len + udp_len) {
        return Next::drop(DropReason::NoHeadroom);
    }
    p.inner_at = 0;
    let d = p.data_mut();
    let pseudo = match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(t)) => {
            echo_ip4(d, s, t, udp_len as u16);
            checksum::pseudo_header_v4(&s, &t, udp_len as u16, IPPROTO_UDP)
        }
        (IpAddr::V6(s), IpAddr::V6(t)) => {
            echo_ip6(d, s, t, udp_len as u16);
            checksum::pseudo_header_v6(&s, &t, udp_len as u32, IPPROTO_UDP)
        }
        _ => return Next::drop(DropReason::Malformed),
    };
    let Some(seg) = d.get_mut(ip_len..) else { return Next::drop(DropReason::Malformed) };
    if let Some(g) = seg.get_mut(UdpPacket::<&[u8]>::HEADER_LEN..) {
        emit_echo_response(g, seq);
    }
    write_udp(seg, GTPU_PORT, dport, pseudo);
    if src.is_ipv4() {
        Next::Lookup4 { table: Tables::MAIN, forward: false }
    } else {
        Next::Lookup6 { table: Tables::MAIN, forward: false }
    }
}

fn echo_ip4(d: &mut [u8], src: Ipv4Addr, dst: Ipv4Addr, payload_len: u16) {
    let r = Ipv4Repr {
        src_addr: src,
        dst_addr: dst,
        protocol: IPPROTO_UDP,
        payload_len,
        ttl: OUTER_HOP_LIMIT,
        dscp_ecn: 0,
        ident: 0,
        flags_frag: FLAG_DF,
    };
    r.emit(&mut Ipv4Packet::new_unchecked(d));
}

fn echo_ip6(d: &mut [u8], src: Ipv6Addr, dst: Ipv6Addr, payload_len: u16) {
    let r = Ipv6Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: IPPROTO_UDP,
        payload_len,
        hop_limit: OUTER_HOP_LIMIT,
        traffic_class: 0,
        flow_label: 0,
    };
    r.emit(&mut Ipv6Packet::new_unchecked(d));
}
