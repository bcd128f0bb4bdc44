//! H.M.GTP4.D (RFC 9433 §6.7): a GTP-U/UDP/IPv4 T-PDU to a UPF address becomes an
//! SRv6 packet whose last SID carries the IPv4 destination and the GTP-U session, and
//! whose source carries the IPv4 source. A row of the behaviour table written on the
//! IPv4 route of the UPF's address (an sr6 extension):
//! `ip route add A.B.C.D/32 encap seg6local action H.M.GTP4.D sr-prefix P/LEN
//! src-prefix Q/LEN [segs S1,...,Sn] dev DEV`.
//!
//! The last SID B (Fig. 11): `sr-prefix` (at most /56), the IPv4 destination,
//! Args.Mob.Session (QFI and R = RQI from the PDU Session Container if there is one,
//! U = 0, the TEID), zeros. The source (Fig. 10): `src-prefix` (at most /96), the IPv4
//! source, zeros. Without `segs` the packet goes to B with no SRH (§6.7 S05-S06);
//! with `segs` it carries an SRH S1, ..., Sn, B (H.Encaps, RFC 8986 §5.1) and goes to
//! S1 — VPP's T.M.GTP4.D with an SR policy.
//!
//! §6.7 S01-S09: the IPv4, UDP and GTP-U headers go, the T-PDU (IPv4 or IPv6, by its
//! version: IPv6 Next Header 4 or 41) is encapsulated; traffic class = the IPv4
//! DSCP/ECN, flow label 0, hop limit = the TTL, then forwarded by the IPv6 main table
//! as a forwarded packet (hop limit decremented). What is not a GTP-U T-PDU is dropped
//! and counted: not UDP to port 2152 (`not_gtpu`); a GTP-U header that is truncated,
//! not version 1 / PT 1, whose Length disagrees with the UDP length, or a UDP checksum
//! that does not verify (`gtpu_malformed`); a T-PDU that is neither IPv4 nor IPv6
//! (`wrong_next_header`); a fragment (`fragment`: no reassembly). Echo
//! Request/Response, Error Indication and End Marker are carried in a tagged SRH
//! ([`super::signalling`]: B alone, Segments Left 0, without `segs`); other messages
//! are dropped (`gtpu_signalling`).
//!
//! **The fast step** ([`fast`], kind [`FastKind::Gtp4D`], tried out of the batch loop
//! for IPv4 frames the plain IPv4 step declined): a T-PDU whose headers [`parse`]
//! accepts, with no Ethernet padding and a TTL over 1, whose policy the fast path can
//! apply (no HMAC; [`RewriteKind::Encap`]) and whose destination — B without `segs`,
//! else S1 — is a plain route, is rewritten in place with the policy's prepared
//! headers and the per-packet fields patched: what the general path makes, checked by
//! the differential test (`crates/sr6/tests/fast_path.rs`). Anything else, untouched,
//! goes to the general path.

use std::net::Ipv6Addr;

use super::super::{headend, Arrival, Behaviour, Next, Param, Takes};
use super::signalling::Signal;
use super::{check_route, gtp4_sid, set_bits, ArgsMobSession, MAX_SID_PREFIX, MAX_SRC_PREFIX, V4_BITS};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{Seg6Mode, SidAction};
use crate::tables::fast_route::{route_to, Out};
use crate::tables::{BuildError, Device, FastKind, FastSid, Policy, RewriteKind, Sid, SidBuilder, SidState, Tables};
use sr6_wire::fixed::{FrameFixed, Ipv6Fixed, ETH_IPV6_LEN as S, ETH_LEN as E};
use sr6_wire::gtpu::{GTPU_PORT, MSG_TPDU};
use sr6_wire::ipv4::{FLAG_MF, FRAG_OFFSET_MASK};
use sr6_wire::{checksum, GtpuPacket, Ipv4Packet, Ipv6Packet, SrhPacket, UdpPacket, IPPROTO_UDP};
use sr6_wire::{IPPROTO_IPV4, IPPROTO_IPV6};

pub static H_M_GTP4_D: Behaviour = Behaviour {
    keyword: "H.M.GTP4.D",
    required: &[Param::SrPrefix, Param::SrcPrefix],
    optional: &[Param::Segs],
    flavors: &[],
    rfc: "RFC 9433 §6.7",
    summary: "GTP-U/IPv4 to SRv6 (on an IPv4 route): IPv4 destination and session into the last SID",
    in_kernel: false,
    takes: Takes::Gtpu4,
    build,
    input,
};

/// Checks the prefixes' room (prefix + 32 + 40 bits <= 128 for the SID, prefix + 32
/// for the source) and registers the policy the packets get: H.Encaps of `segs` and a
/// placeholder for B, or, without `segs`, B alone with no SRH (H.Encaps.Red of one
/// segment); B and the source are written per packet.
fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    check_route(a, &b.prefix()).map_err(|(m, _)| b.error(m))?;
    let (Some((sr, sr_len)), Some((src, src_len))) = (a.params.sr_prefix, a.params.src_prefix) else {
        return Err(b.error("H.M.GTP4.D requires `sr-prefix P/LEN` and `src-prefix P/LEN`"));
    };
    if sr_len > MAX_SID_PREFIX {
        return Err(b.error(format!(
            "H.M.GTP4.D: sr-prefix {sr}/{sr_len} leaves {} bits; the IPv4 destination and Args.Mob.Session need 72",
            128 - sr_len
        )));
    }
    if src_len > MAX_SRC_PREFIX {
        return Err(b.error(format!("H.M.GTP4.D: src-prefix {src}/{src_len} leaves no room for the IPv4 source")));
    }
    let policy = match &a.params.segs {
        Some(segs) => {
            let mut list = segs.clone();
            list.push(sr);
            b.proxy_policy(Seg6Mode::Encap, &list, src)
        }
        None => b.proxy_policy(Seg6Mode::EncapRed, &[sr], src),
    };
    let fast = FastSid::new(FastKind::Gtp4D, 0);
    Ok(SidState { policy, table: Tables::MAIN, fast, ..SidState::default() })
}

/// Never called: the builder puts H.M.GTP4.D in IPv4 FIBs only, whose packets go to
/// [`input4`].
fn input(_: &Tables, _: &mut PacketBuf, _: &Sid, _: &Arrival) -> Next {
    Next::drop(DropReason::NoRoute)
}

/// What the GTP-U T-PDU in an IPv4 packet says, its headers checked.
struct TPdu {
    /// IPv4 + UDP + GTP-U headers.
    hdr_len: usize,
    inner_len: usize,
    inner_proto: u8,
    v4src: u32,
    v4dst: u32,
    tos: u8,
    ttl: u8,
    args: ArgsMobSession,
}

fn parse(data: &[u8]) -> Result<TPdu, DropReason> {
    let ip = Ipv4Packet::new_checked(data).map_err(|_| DropReason::Malformed)?;
    if !ip.verify_checksum() {
        return Err(DropReason::Malformed);
    }
    parse_checked(data, ip.header_len(), usize::from(ip.total_len()))
}

/// [`parse`] past the IPv4 header's own checks (version, lengths, checksum), which
/// the caller made: `ihl` and `total` are its header length and Total Length.
#[inline(always)]
fn parse_checked(data: &[u8], ihl: usize, total: usize) -> Result<TPdu, DropReason> {
    let ip = Ipv4Packet::new_unchecked(data);
    if ip.flags_frag() & (FLAG_MF | FRAG_OFFSET_MASK) != 0 {
        return Err(DropReason::Fragment);
    }
    if ip.protocol() != IPPROTO_UDP {
        return Err(DropReason::NotGtpu);
    }
    let l4 = data.get(ihl..total).ok_or(DropReason::Malformed)?;
    let udp = UdpPacket::new_checked(l4).map_err(|_| DropReason::GtpuMalformed)?;
    if udp.dst_port() != GTPU_PORT {
        return Err(DropReason::NotGtpu);
    }
    let seg = l4.get(..usize::from(udp.len())).ok_or(DropReason::GtpuMalformed)?;
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    // RFC 768: a checksum of 0 means none was computed.
    if udp.checksum() != 0
        && checksum::fold(checksum::pseudo_header_v4(&src, &dst, udp.len(), IPPROTO_UDP) + checksum::sum(seg)) != 0
    {
        return Err(DropReason::GtpuMalformed);
    }
    let gbuf = seg.get(8..).unwrap_or_default();
    let gtp = GtpuPacket::new_checked(gbuf).map_err(|_| DropReason::GtpuMalformed)?;
    if gtp.msg_type() != MSG_TPDU {
        return Err(DropReason::GtpuSignalling);
    }
    let (gtp_len, session) = gtp.layout();
    let inner = gbuf.get(gtp_len..).unwrap_or_default();
    let inner_proto = match inner.first().map(|b| b >> 4) {
        Some(4) => IPPROTO_IPV4,
        Some(6) => IPPROTO_IPV6,
        _ => return Err(DropReason::WrongNextHeader),
    };
    let s = session.unwrap_or_default();
    Ok(TPdu {
        hdr_len: ihl + 8 + gtp_len,
        inner_len: inner.len(),
        inner_proto,
        v4src: u32::from(src),
        v4dst: u32::from(dst),
        tos: ip.dscp_ecn(),
        ttl: ip.ttl(),
        args: ArgsMobSession { qfi: s.qfi, r: s.rqi, u: false, teid: gtp.teid() },
    })
}

/// §6.7 S01-S09 on the IPv4 packet in `p`.
pub fn input4(t: &Tables, p: &mut PacketBuf, sid: &Sid) -> Next {
    let prm = &sid.action.params;
    let (Some((sr, sr_len)), Some((src, src_len)), Some(pol)) =
        (prm.sr_prefix, prm.src_prefix, t.policies.get(sid.state.policy as usize))
    else {
        return Next::drop(DropReason::NoRoute);
    };
    let tp = match parse(p.data()) {
        Ok(tp) => tp,
        Err(DropReason::GtpuSignalling) => return signal(p, sid, pol, (sr, sr_len), (src, src_len)),
        Err(r) => return Next::drop(r),
    };
    // S02: the IPv4, UDP and GTP-U headers go (and any Ethernet padding after the
    // T-PDU).
    if !p.pull_front(tp.hdr_len) {
        return Next::drop(DropReason::Malformed);
    }
    p.truncate(tp.inner_len);
    // S03-S04: B and B'.
    let b = Ipv6Addr::from(gtp4_sid(u128::from(sr), sr_len, tp.v4dst.into(), tp.args));
    let src6 = Ipv6Addr::from(set_bits(u128::from(src), src_len, V4_BITS, u128::from(tp.v4src)));
    // S05-S06.
    if let Err(r) = headend::push_encap(t, p, pol, tp.inner_proto, tp.tos, 0, tp.ttl) {
        return Next::drop(r);
    }
    let mut ip = Ipv6Packet::new_unchecked(p.data_mut());
    ip.set_src_addr(&src6);
    if pol.srh.is_empty() {
        ip.set_dst_addr(&b);
    } else {
        SrhPacket::new_unchecked(ip.payload_mut()).set_segment(0, &b);
    }
    // S07.
    Next::Lookup6 { table: sid.state.table, forward: true }
}

/// The fast step (see the module docs) on an Ethernet + IPv4 frame received on `dev`
/// for SID `sid`, whose IPv4 header the caller checked as the plain IPv4 step does (no
/// options, Total Length the frame's, TTL over 1, checksum; addresses screened).
/// `Some(device)` to transmit the rewritten frame to; `None` leaves it untouched.
pub(crate) fn fast(t: &Tables, dev: &Device, p: &mut PacketBuf, sid: &Sid) -> Option<Out> {
    let prm = &sid.action.params;
    let ((sr, sr_len), (src, src_len)) = (prm.sr_prefix?, prm.src_prefix?);
    let i = sid.state.policy as usize;
    let (pol, fp) = (t.policies.get(i)?, t.rewrites.get(i)?);
    // B changes per packet: no HMAC, prepared or not, can cover it here.
    if fp.kind != RewriteKind::Encap || pol.hmac_key_id.is_some() || !dev.forwarding6 {
        return None;
    }
    let f = p.data();
    let tp = parse_checked(f.get(E..)?, 20, f.len() - E).ok()?;
    // No Ethernet padding (nor past the UDP datagram); a TTL that the forwarding step
    // leaves above 0 (§6.7 S05: the hop limit is the TTL, then decremented as a
    // forwarded packet's).
    if E + tp.hdr_len + tp.inner_len != f.len() || tp.ttl <= 1 {
        return None;
    }
    // S03-S04: B and B'.
    let b = gtp4_sid(u128::from(sr), sr_len, tp.v4dst.into(), tp.args);
    let src6 = set_bits(u128::from(src), src_len, V4_BITS, u128::from(tp.v4src));
    // S07's route, found before the frame is touched: B's without `segs` (the policy's
    // Ethernet header is towards its placeholder), else S1's, in the block.
    let to_b = if pol.srh.is_empty() { Some(route_to(t, sid.state.table, b)?) } else { None };
    let n = usize::from(fp.len);
    let srh_len = n.checked_sub(S)?;
    let plen = u16::try_from(srh_len + tp.inner_len).ok()?;
    // S02, S05-S06: the IPv4, UDP and GTP-U headers replaced by the policy's.
    if !p.put_front(&fp.block, n, E + tp.hdr_len) {
        return None;
    }
    // (The frame now starts with the n >= S bytes of headers.)
    let (o, srh) = p.data_mut().split_first_chunk_mut::<S>()?;
    o.set_vtf((6u32 << 28 | u32::from(tp.tos) << 20).to_be_bytes());
    o.set_payload_len(plen);
    o.set_hop_limit(tp.ttl - 1);
    o.set_src_bytes(&src6.to_be_bytes());
    match to_b {
        Some((_, eth)) => {
            o.set_next_header(tp.inner_proto);
            o.set_dst_bytes(&b.to_be_bytes());
            o.set_addrs(eth);
        }
        None => {
            // The SRH's Next Header, and B as Segment List[0].
            if let Some(nh) = srh.first_mut() {
                *nh = tp.inner_proto;
            }
            if let Some(seg) = srh.get_mut(8..24) {
                seg.copy_from_slice(&b.to_be_bytes());
            }
        }
    }
    Some(to_b.map_or(usize::from(fp.out), |(out, _)| out))
}

/// A GTP-U message other than a T-PDU, whose headers [`parse`] checked: carried in an
/// SRH as [`super::signalling`] describes, B and the source made as for a T-PDU (S03-S04).
fn signal(p: &mut PacketBuf, sid: &Sid, pol: &Policy, sr: (Ipv6Addr, u8), src: (Ipv6Addr, u8)) -> Next {
    let data = p.data();
    let Ok(ip) = Ipv4Packet::new_checked(data) else { return Next::drop(DropReason::Malformed) };
    let at = ip.header_len() + 8;
    let udp = data.get(at - 8..usize::from(ip.total_len())).and_then(|l4| UdpPacket::new_checked(l4).ok());
    let end = udp.map_or(0, |u| at - 8 + usize::from(u.len()));
    let Some(gtp) = data.get(at..end).and_then(|g| GtpuPacket::new_checked(g).ok()) else {
        return Next::drop(DropReason::GtpuMalformed);
    };
    let sig = match Signal::from_gtpu(&gtp, at) {
        Ok(s) => s,
        Err(r) => return Next::drop(r),
    };
    let (v4src, v4dst, tos, ttl) = (ip.src_addr(), ip.dst_addr(), ip.dscp_ecn(), ip.ttl());
    let b = Ipv6Addr::from(gtp4_sid(u128::from(sr.0), sr.1, v4dst, sig.args));
    let src6 = Ipv6Addr::from(set_bits(u128::from(src.0), src.1, V4_BITS, u128::from(u32::from(v4src))));
    if let Err(r) = sig.encap(p, pol, b, src6, tos, 0, ttl) {
        return Next::drop(r);
    }
    Next::Lookup6 { table: sid.state.table, forward: true }
}
