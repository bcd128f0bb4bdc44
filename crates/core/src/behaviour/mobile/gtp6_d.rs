//! End.M.GTP6.D (RFC 9433 §6.3): a GTP-U/UDP/IPv6 T-PDU to a local SID — the UPF
//! address as the SRGW sees it — becomes an SRv6 packet whose last SID carries the
//! GTP-U session. An sr6 extension of the seg6local grammar:
//! `action End.M.GTP6.D sr-prefix P/LEN src A [segs S1,...,Sn]`.
//!
//! The SR policy is S1, ..., Sn, B: B the last SID, `sr-prefix` (at most /88) then
//! Args.Mob.Session (QFI and R = RQI from the PDU Session Container if there is one,
//! U = 0, the TEID: §6.1) then zeros (S08, "Write in the SRH[0] the Args.Mob.Session").
//! The packet gets a new IPv6 header from `src` A (S05) to S1 (S06; B without `segs`)
//! and its own SRH carrying the whole list (S04: H.Encaps, RFC 8986 §5.1, so B is in
//! it even when it is the only segment).
//!
//! Steps: at a SID with Segments Left > 0, ICMPv6 Parameter Problem pointing at it
//! (§6.3, SRH processing S02-S03); then, the upper layer being UDP to port 2152 (S01),
//! the IPv6 header and its extension headers, UDP and GTP-U go (S03) and the T-PDU
//! (IPv4 or IPv6, by its version) is encapsulated; the traffic class, flow label and
//! hop limit of the GTP-U packet's IPv6 header are the new header's, and the packet is
//! forwarded by the IPv6 main table as a forwarded packet (hop limit decremented, S09).
//! What is not a GTP-U T-PDU is dropped and counted (S10-S11): not UDP to port 2152
//! (`not_gtpu`); a GTP-U header that is truncated, not version 1 / PT 1, whose Length
//! disagrees with the UDP length, or a UDP checksum that is 0 (RFC 8200 §8.1) or does
//! not verify (`gtpu_malformed`); a T-PDU that is neither IPv4 nor IPv6
//! (`wrong_next_header`); a fragment (`fragment`: no reassembly). Echo
//! Request/Response, Error Indication and End Marker are carried in the SRH, tagged
//! ([`super::signalling`]); other messages are dropped (`gtpu_signalling`).
//!
//! [`translate`] does the steps for both modes: End.M.GTP6.Di ([`super::gtp6_di`])
//! differs only in its last SID.

use std::net::Ipv6Addr;

use super::super::{headend, Arrival, Behaviour, Next, Param, Takes};
use super::signalling::Signal;
use super::{check_route, gtp6_sid, ArgsMobSession, MAX_SID6_PREFIX};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::{Seg6Mode, SidAction};
use crate::tables::{BuildError, Policy, Sid, SidBuilder, SidState, Tables};
use sr6_wire::gtpu::{GTPU_PORT, MSG_TPDU};
use sr6_wire::{checksum, GtpuPacket, Ipv6Packet, SrhPacket, UdpPacket, IPPROTO_UDP};
use sr6_wire::{IPPROTO_IPV4, IPPROTO_IPV6};

pub static END_M_GTP6_D: Behaviour = Behaviour {
    keyword: "End.M.GTP6.D",
    required: &[Param::SrPrefix, Param::Src],
    optional: &[Param::Segs],
    flavors: &[],
    rfc: "RFC 9433 §6.3",
    summary: "GTP-U/IPv6 to SRv6: the session into the last SID (sr-prefix), source src",
    in_kernel: false,
    takes: Takes::Gtpu6,
    build,
    input,
};

/// Checks `sr-prefix`'s room (prefix + 40 bits <= 128) and registers the policy the
/// packets get: H.Encaps of `segs` then a placeholder for B, written per packet.
fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    check_route(a, &b.prefix()).map_err(|(m, _)| b.error(m))?;
    let (Some((sr, sr_len)), Some(src)) = (a.params.sr_prefix, a.params.src) else {
        return Err(b.error("End.M.GTP6.D requires `sr-prefix P/LEN` and `src ADDR`"));
    };
    if sr_len > MAX_SID6_PREFIX {
        return Err(b.error(format!(
            "End.M.GTP6.D: sr-prefix {sr}/{sr_len} leaves {} bits; Args.Mob.Session needs 40",
            128 - sr_len
        )));
    }
    let mut list = a.params.segs.clone().unwrap_or_default();
    list.push(sr);
    let policy = b.proxy_policy(Seg6Mode::Encap, &list, src);
    Ok(SidState { policy, table: Tables::MAIN, ..SidState::default() })
}

fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let prm = &sid.action.params;
    let Some((sr, sr_len)) = prm.sr_prefix else { return Next::drop(DropReason::NoRoute) };
    translate(t, p, sid, a, |_, args| Ipv6Addr::from(gtp6_sid(u128::from(sr), sr_len, args)))
}

/// What the GTP-U T-PDU in an IPv6 packet says, its headers checked.
struct TPdu {
    /// IPv6 + extension headers + UDP + GTP-U headers.
    hdr_len: usize,
    inner_len: usize,
    inner_proto: u8,
    dst: Ipv6Addr,
    tc: u8,
    fl: u32,
    hl: u8,
    args: ArgsMobSession,
}

/// §6.3 S01-S02 (and §6.4's): the packet at its last segment, UDP to port 2152, a
/// GTP-U T-PDU whose session is read.
fn parse(data: &[u8], a: &Arrival) -> Result<TPdu, Next> {
    let chain = match a {
        // SRH processing S02-S03: Parameter Problem pointing at Segments Left.
        Arrival::Segments(r) => return Err(Next::param_problem(0, r.offset + sr6_wire::srh::SEGMENTS_LEFT_OFFSET)),
        Arrival::NextCsid(_) => return Err(Next::drop(DropReason::Malformed)),
        Arrival::Last { chain, .. } => chain,
    };
    let bad = |r| Next::drop(r);
    if chain.fragment.is_some() {
        return Err(bad(DropReason::Fragment));
    }
    if chain.upper_proto != IPPROTO_UDP {
        return Err(bad(DropReason::NotGtpu));
    }
    let ip = Ipv6Packet::new_checked(data).map_err(|_| bad(DropReason::Malformed))?;
    let l4 = data.get(chain.upper..ip.total_len()).ok_or(bad(DropReason::Malformed))?;
    let udp = UdpPacket::new_checked(l4).map_err(|_| bad(DropReason::GtpuMalformed))?;
    if udp.dst_port() != GTPU_PORT {
        return Err(bad(DropReason::NotGtpu));
    }
    let seg = l4.get(..usize::from(udp.len())).ok_or(bad(DropReason::GtpuMalformed))?;
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    // RFC 8200 §8.1: over IPv6 the UDP checksum is mandatory; 0 is discarded.
    let sum = checksum::pseudo_header_v6(&src, &dst, u32::from(udp.len()), IPPROTO_UDP) + checksum::sum(seg);
    if udp.checksum() == 0 || checksum::fold(sum) != 0 {
        return Err(bad(DropReason::GtpuMalformed));
    }
    let gbuf = seg.get(8..).unwrap_or_default();
    let gtp = GtpuPacket::new_checked(gbuf).map_err(|_| bad(DropReason::GtpuMalformed))?;
    if gtp.msg_type() != MSG_TPDU {
        return Err(bad(DropReason::GtpuSignalling));
    }
    let (gtp_len, session) = gtp.layout();
    let inner = gbuf.get(gtp_len..).unwrap_or_default();
    let inner_proto = match inner.first().map(|b| b >> 4) {
        Some(4) => IPPROTO_IPV4,
        Some(6) => IPPROTO_IPV6,
        _ => return Err(bad(DropReason::WrongNextHeader)),
    };
    let s = session.unwrap_or_default();
    Ok(TPdu {
        hdr_len: chain.upper + 8 + gtp_len,
        inner_len: inner.len(),
        inner_proto,
        dst,
        tc: ip.traffic_class(),
        fl: ip.flow_label(),
        hl: ip.hop_limit(),
        args: ArgsMobSession { qfi: s.qfi, r: s.rqi, u: false, teid: gtp.teid() },
    })
}

/// §6.3 S01-S12 (§6.4 the same): the GTP-U packet in `p` becomes the T-PDU in a new
/// IPv6 header and SRH (the SID's policy, from its `src`), whose last SID is
/// `last(original destination, session)`.
pub(super) fn translate(
    t: &Tables,
    p: &mut PacketBuf,
    sid: &Sid,
    a: &Arrival,
    last: impl Fn(Ipv6Addr, ArgsMobSession) -> Ipv6Addr,
) -> Next {
    let Some(pol) = t.policies.get(sid.state.policy as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    let tp = match parse(p.data(), a) {
        Ok(tp) => tp,
        Err(n) if n == Next::drop(DropReason::GtpuSignalling) => return signal(p, sid, pol, a, last),
        Err(n) => return n,
    };
    // S02-S03: the session kept, the IPv6 (and its extension headers), UDP and GTP-U
    // headers go (and anything after the T-PDU).
    if !p.pull_front(tp.hdr_len) {
        return Next::drop(DropReason::Malformed);
    }
    p.truncate(tp.inner_len);
    let b = last(tp.dst, tp.args);
    // S04-S07.
    if let Err(r) = headend::push_encap(t, p, pol, tp.inner_proto, tp.tc, tp.fl, tp.hl) {
        return Next::drop(r);
    }
    let mut ip = Ipv6Packet::new_unchecked(p.data_mut());
    // The only segment: the destination too.
    if pol.srh.len() <= 8 + 16 {
        ip.set_dst_addr(&b);
    }
    // S08: SRH[0].
    SrhPacket::new_unchecked(ip.payload_mut()).set_segment(0, &b);
    // S09.
    Next::Lookup6 { table: sid.state.table, forward: true }
}

/// A GTP-U message other than a T-PDU, whose headers [`parse`] checked: carried in an
/// SRH as [`super::signalling`] describes, the last SID made as for a T-PDU (S08), the
/// new header's fields as for a T-PDU.
fn signal(
    p: &mut PacketBuf,
    sid: &Sid,
    pol: &Policy,
    a: &Arrival,
    last: impl Fn(Ipv6Addr, ArgsMobSession) -> Ipv6Addr,
) -> Next {
    let Arrival::Last { chain, .. } = a else { return Next::drop(DropReason::Malformed) };
    let data = p.data();
    let Ok(ip) = Ipv6Packet::new_checked(data) else { return Next::drop(DropReason::Malformed) };
    let at = chain.upper + 8;
    let udp = data.get(chain.upper..ip.total_len()).and_then(|l4| UdpPacket::new_checked(l4).ok());
    let end = udp.map_or(0, |u| chain.upper + usize::from(u.len()));
    let Some(gtp) = data.get(at..end).and_then(|g| GtpuPacket::new_checked(g).ok()) else {
        return Next::drop(DropReason::GtpuMalformed);
    };
    let sig = match Signal::from_gtpu(&gtp, at) {
        Ok(s) => s,
        Err(r) => return Next::drop(r),
    };
    let (tc, fl, hl) = (ip.traffic_class(), ip.flow_label(), ip.hop_limit());
    let b = last(ip.dst_addr(), sig.args);
    if let Err(r) = sig.encap(p, pol, b, Ipv6Addr::from(pol.src), tc, fl, hl) {
        return Next::drop(r);
    }
    Next::Lookup6 { table: sid.state.table, forward: true }
}
