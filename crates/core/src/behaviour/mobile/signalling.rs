//! GTP-U signalling across SRv6: the messages that are not T-PDUs — Echo Request (1),
//! Echo Response (2), Error Indication (26), End Marker (254; TS 29.281 §7) — carried
//! the way draft-murakami-dmm-user-plane-message-encoding and VPP's srv6-mobile plugin
//! (`src/plugins/srv6-mobile`, `mobile.h` and `node.c`) carry them, so that a message
//! H.M.GTP4.D or End.M.GTP6.D/.Di receives is rebuilt by End.M.GTP4.E or End.M.GTP6.E.
//!
//! The facts relied on, read from VPP's source (whose srv6-mobile authors wrote the
//! draft; its numbers — the Tag bits, TLV type `0x0a` — are VPP's):
//! - **The SRH Tag says which message it is**, one bit each: End Marker `0x0001`,
//!   Error Indication `0x0002`, Echo Request `0x0004`, Echo Response `0x0008`; a Tag
//!   with none of them is a T-PDU. When a receiver finds several, the first of Echo
//!   Response, Echo Request, Error Indication, End Marker wins (VPP's order). The
//!   other bits of the Tag are not read. A transit End (the kernel's too) leaves the
//!   Tag alone (RFC 8754 §4.3.1 changes Segments Left and the destination only), so the message crosses an
//!   SRv6 core.
//! - **Args.Mob.Session (RFC 9433 §6.1) carries the message's session.** QFI and R as
//!   for a T-PDU (from a PDU Session Container, if the message has one). For Echo
//!   Request, Echo Response and Error Indication — whose TEID is 0 (TS 29.281 §5.1,
//!   §7.3.1) and which carry a Sequence Number — the 32 bits of the TEID hold the
//!   Sequence Number in their first 16 bits, zeros after (0 when the S flag is clear);
//!   an End Marker keeps its TEID, the session it ends.
//! - **An SRH is always there.** Where a T-PDU would get none (H.M.GTP4.D without
//!   `segs`: §6.7 S05), a signalling message gets an SRH of one segment, B, with
//!   Segments Left 0, so the Tag has a place.
//! - **Error Indication's information elements** (TEID Data I, GTP-U Peer Address, ...)
//!   ride in an SRH TLV: type `0x0a` (VPP's "user plane container", a tentative
//!   number), whose value is a sub-TLV of type `0x01` — its length then the IEs, as
//!   they were after the GTP-U header — zero-padded so the TLV is a multiple of 8
//!   bytes. At most [`MAX_IES`] bytes fit; a longer Error Indication is dropped.
//! - **Nothing else is carried**: the SRH's Next Header is 59 (No Next Header, RFC
//!   8200 §4.7), and the IEs of the other messages (the Recovery IE of an Echo
//!   Response, Private Extensions) are not carried. (VPP writes Next Header 143 and
//!   leaves the rest of the message after the SRH; sr6's decoder ignores whatever
//!   follows a tagged SRH, so it reads both.)
//! - **The rebuilt message**: GTP-U version 1 of the type the Tag names; Echo and
//!   Error Indication with the S flag and the Sequence Number from the SID and TEID 0,
//!   End Marker with the TEID from the SID and no S flag; a PDU Session Container
//!   (downlink, as for T-PDUs) when the QFI or R is not 0; an Echo Response ends with
//!   the Recovery IE, Restart Counter 0 (TS 29.281 §7.2.2, §8.2), an Error Indication
//!   with the IEs from the TLV. UDP from and to port 2152, IP as for a T-PDU.
//!
//! Messages of any other type are not encoded: dropped as `gtpu_signalling`.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::Range;

use super::ArgsMobSession;
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::tables::Policy;
use sr6_wire::gtpu::{
    GTPU_PORT, IE_RECOVERY, MSG_ECHO_REQUEST, MSG_ECHO_RESPONSE, MSG_END_MARKER, MSG_ERROR_INDICATION, PDU_TYPE_DL,
};
use sr6_wire::ipv4::FLAG_DF;
use sr6_wire::{checksum, GtpuPacket, GtpuRepr, Ipv4Packet, Ipv4Repr, Ipv6Packet, Ipv6Repr, PduSession, RoutingInfo};
use sr6_wire::{SrhPacket, UdpPacket, IPPROTO_NONE, IPPROTO_ROUTING, IPPROTO_UDP};

/// SRH Tag bit of an End Marker.
pub const TAG_END_MARKER: u16 = 0x0001;
/// SRH Tag bit of an Error Indication.
pub const TAG_ERROR_INDICATION: u16 = 0x0002;
/// SRH Tag bit of an Echo Request.
pub const TAG_ECHO_REQUEST: u16 = 0x0004;
/// SRH Tag bit of an Echo Response.
pub const TAG_ECHO_RESPONSE: u16 = 0x0008;
/// SRH TLV type of the user plane container that carries Error Indication's IEs.
pub const TLV_USER_PLANE: u8 = 0x0a;
/// Its sub-TLV type: GTP-U information elements.
pub const SUB_TLV_IE: u8 = 0x01;
/// The most IE bytes the container takes: its TLV (2 + 2 + IEs, padded to 8) has a
/// value of at most 255 bytes.
pub const MAX_IES: usize = 251;

/// The Tag bit of GTP-U message type `t`, if it is one that crosses SRv6.
pub fn tag(t: u8) -> Option<u16> {
    match t {
        MSG_END_MARKER => Some(TAG_END_MARKER),
        MSG_ERROR_INDICATION => Some(TAG_ERROR_INDICATION),
        MSG_ECHO_REQUEST => Some(TAG_ECHO_REQUEST),
        MSG_ECHO_RESPONSE => Some(TAG_ECHO_RESPONSE),
        _ => None,
    }
}

/// The message type an SRH Tag names (VPP's order when several bits are set), `None`
/// for a T-PDU.
pub fn msg_type(tag: u16) -> Option<u8> {
    [
        (TAG_ECHO_RESPONSE, MSG_ECHO_RESPONSE),
        (TAG_ECHO_REQUEST, MSG_ECHO_REQUEST),
        (TAG_ERROR_INDICATION, MSG_ERROR_INDICATION),
        (TAG_END_MARKER, MSG_END_MARKER),
    ]
    .into_iter()
    .find(|(b, _)| tag & b != 0)
    .map(|(_, t)| t)
}

/// Whether messages of type `t` carry a Sequence Number in place of the TEID.
fn has_seq(t: u8) -> bool {
    matches!(t, MSG_ECHO_REQUEST | MSG_ECHO_RESPONSE | MSG_ERROR_INDICATION)
}

/// A signalling message as SRv6 carries it: its type, the Args.Mob.Session of its SID
/// and where its IEs are in the packet it was read from (empty but for Error
/// Indication).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    pub msg_type: u8,
    pub args: ArgsMobSession,
    pub ies: Range<usize>,
}

impl Signal {
    /// From a checked GTP-U message that is not a T-PDU, `at` bytes into its packet:
    /// `gtpu_signalling` if it cannot be encoded (its type, or too many IEs).
    pub fn from_gtpu(gtp: &GtpuPacket<&[u8]>, at: usize) -> Result<Signal, DropReason> {
        let t = gtp.msg_type();
        tag(t).ok_or(DropReason::GtpuSignalling)?;
        let s = gtp.pdu_session().unwrap_or_default();
        let teid = if has_seq(t) { u32::from(gtp.seq().unwrap_or(0)) << 16 } else { gtp.teid() };
        let mut ies = 0..0;
        if t == MSG_ERROR_INDICATION {
            let n = gtp.payload().len();
            if n > MAX_IES {
                return Err(DropReason::GtpuSignalling);
            }
            let start = at + gtp.header_len();
            ies = start..start + n;
        }
        Ok(Signal { msg_type: t, args: ArgsMobSession { qfi: s.qfi, r: s.rqi, u: false, teid }, ies })
    }

    /// What the SRv6 packet `data`, whose SRH is `r`, carries: `None` when its Tag names
    /// no message (a T-PDU); the message, its session `args` (from the SID), else.
    /// Error Indication's IEs come from the user plane container TLV (none if there is
    /// none); a container whose sub-TLV overruns it is `malformed`.
    pub fn from_srh(data: &[u8], r: &RoutingInfo, args: ArgsMobSession) -> Result<Option<Signal>, DropReason> {
        let Some(srh) = data.get(r.offset..).and_then(|b| SrhPacket::new_checked(b).ok()) else {
            return Ok(None);
        };
        let Some(t) = msg_type(srh.tag()) else { return Ok(None) };
        let mut ies = 0..0;
        if t == MSG_ERROR_INDICATION {
            let area = r.offset + srh.tlv_offset();
            for tlv in srh.tlvs() {
                let tlv = tlv.map_err(|_| DropReason::Malformed)?;
                if tlv.kind == TLV_USER_PLANE && tlv.value.first() == Some(&SUB_TLV_IE) {
                    let n = usize::from(*tlv.value.get(1).ok_or(DropReason::Malformed)?);
                    if n + 2 > tlv.value.len() {
                        return Err(DropReason::Malformed);
                    }
                    let start = area + tlv.offset + 4;
                    ies = start..start + n;
                    break;
                }
            }
        }
        Ok(Some(Signal { msg_type: t, args, ies }))
    }

    /// The IEs copied out of `data`, and how many.
    fn copy_ies(&self, data: &[u8]) -> ([u8; MAX_IES], usize) {
        let mut buf = [0u8; MAX_IES];
        let src = data.get(self.ies.clone()).unwrap_or_default();
        let n = src.len().min(MAX_IES);
        if let (Some(d), Some(s)) = (buf.get_mut(..n), src.get(..n)) {
            d.copy_from_slice(s);
        }
        (buf, n)
    }

    /// Replaces the packet in `p` (the GTP-U message whose Signal this is) with an IPv6
    /// header and an SRH — the policy's segments, B as Segment List\[0\], or B alone
    /// with Segments Left 0 when the policy has no SRH — tagged with the message, its
    /// IEs in a user plane container, and nothing after it: from `src`, to the first
    /// segment (B when Segments Left is 0), with traffic class `tc`, flow label `fl`
    /// and hop limit `hl`.
    #[allow(clippy::too_many_arguments)]
    pub fn encap(
        &self,
        p: &mut PacketBuf,
        pol: &Policy,
        b: Ipv6Addr,
        src: Ipv6Addr,
        tc: u8,
        fl: u32,
        hl: u8,
    ) -> Result<(), DropReason> {
        let (ies, n) = self.copy_ies(p.data());
        let one = b.octets();
        let (list, sl) = match SrhPacket::new_checked(&pol.srh[..]) {
            Ok(s) if !pol.srh.is_empty() => (pol.srh.get(8..s.tlv_offset()).unwrap_or_default(), s.segments_left()),
            _ => (&one[..], 0),
        };
        let tlv_len = if n > 0 { (4 + n + 7) & !7 } else { 0 };
        let srh_len = 8 + list.len() + tlv_len;
        if list.is_empty() || srh_len > 8 * 256 {
            return Err(DropReason::TooBig);
        }
        if !p.pull_front(p.len()) || !p.push_front(40 + srh_len) {
            return Err(DropReason::NoHeadroom);
        }
        let dst = if sl == 0 { b } else { Ipv6Addr::from(pol.first) };
        let data = p.data_mut();
        let outer = Ipv6Repr {
            src_addr: src,
            dst_addr: dst,
            next_header: IPPROTO_ROUTING,
            payload_len: srh_len as u16,
            hop_limit: hl,
            traffic_class: tc,
            flow_label: fl,
        };
        outer.emit(&mut Ipv6Packet::new_unchecked(&mut *data));
        let Some(h) = data.get_mut(40..40 + srh_len) else { return Err(DropReason::Malformed) };
        h.fill(0);
        let last_entry = (list.len() / 16).saturating_sub(1) as u8;
        let tag = tag(self.msg_type).unwrap_or(0).to_be_bytes();
        if let Some(f) = h.get_mut(..8) {
            f.copy_from_slice(&[IPPROTO_NONE, (srh_len / 8 - 1) as u8, 4, sl, last_entry, 0, tag[0], tag[1]]);
        }
        if let Some(l) = h.get_mut(8..8 + list.len()) {
            l.copy_from_slice(list);
        }
        if n > 0 {
            let at = 8 + list.len();
            if let Some(t) = h.get_mut(at..at + 4) {
                t.copy_from_slice(&[TLV_USER_PLANE, (tlv_len - 2) as u8, SUB_TLV_IE, n as u8]);
            }
            if let (Some(d), Some(s)) = (h.get_mut(at + 4..at + 4 + n), ies.get(..n)) {
                d.copy_from_slice(s);
            }
        }
        SrhPacket::new_unchecked(h).set_segment(0, &b);
        Ok(())
    }

    /// The GTP-U header End.M.GTP4.E / End.M.GTP6.E rebuild, and the Sequence Number
    /// if it has one.
    fn header(&self) -> (GtpuRepr, Option<u16>) {
        let a = self.args;
        let session = (a.qfi != 0 || a.r).then_some(PduSession { pdu_type: PDU_TYPE_DL, qfi: a.qfi, rqi: a.r });
        if has_seq(self.msg_type) {
            (GtpuRepr { msg_type: self.msg_type, teid: 0, session }, Some((a.teid >> 16) as u16))
        } else {
            (GtpuRepr { msg_type: self.msg_type, teid: a.teid, session }, None)
        }
    }

    /// Writes the GTP-U message (header and IEs `ies`) at the start of `b`, which is
    /// exactly its length.
    fn emit_gtpu(&self, b: &mut [u8], ies: &[u8]) {
        let (h, seq) = self.header();
        let hl = match seq {
            Some(s) => {
                h.emit_seq(b, s, ies.len() as u16);
                h.seq_buffer_len()
            }
            None => {
                h.emit(b, ies.len() as u16);
                h.buffer_len()
            }
        };
        if let Some(d) = b.get_mut(hl..hl + ies.len()) {
            d.copy_from_slice(ies);
        }
    }

    /// The IEs the rebuilt message ends with, from `data` (the SRv6 packet), in `buf`.
    fn body(&self, data: &[u8]) -> ([u8; MAX_IES], usize) {
        match self.msg_type {
            MSG_ECHO_RESPONSE => {
                let mut b = [0u8; MAX_IES];
                if let Some(r) = b.first_mut() {
                    *r = IE_RECOVERY;
                }
                (b, 2)
            }
            MSG_ERROR_INDICATION => self.copy_ies(data),
            _ => ([0u8; MAX_IES], 0),
        }
    }

    /// The GTP-U message's length with its IEs.
    fn gtpu_len(&self, ies: usize) -> usize {
        let (h, seq) = self.header();
        ies + if seq.is_some() { h.seq_buffer_len() } else { h.buffer_len() }
    }

    /// Replaces the SRv6 packet in `p` with the message in GTP-U/UDP/IPv4 from `src` to
    /// `dst` (DSCP/ECN `tc`, TTL `ttl`, DF set, identification 0: as End.M.GTP4.E does
    /// for T-PDUs).
    pub fn emit4(&self, p: &mut PacketBuf, src: Ipv4Addr, dst: Ipv4Addr, tc: u8, ttl: u8) -> Result<(), DropReason> {
        let (ies, n) = self.body(p.data());
        let glen = self.gtpu_len(n);
        let udp_len = 8 + glen;
        if !p.pull_front(p.len()) || !p.push_front(20 + udp_len) {
            return Err(DropReason::NoHeadroom);
        }
        let data = p.data_mut();
        let outer = Ipv4Repr {
            src_addr: src,
            dst_addr: dst,
            protocol: IPPROTO_UDP,
            payload_len: udp_len as u16,
            ttl,
            dscp_ecn: tc,
            ident: 0,
            flags_frag: FLAG_DF,
        };
        outer.emit(&mut Ipv4Packet::new_unchecked(&mut *data));
        let Some(seg) = data.get_mut(20..) else { return Err(DropReason::Malformed) };
        self.udp(seg, ies.get(..n).unwrap_or_default());
        let sum = checksum::pseudo_header_v4(&src, &dst, udp_len as u16, IPPROTO_UDP) + checksum::sum(seg);
        set_udp_checksum(seg, sum);
        Ok(())
    }

    /// Replaces the SRv6 packet in `p` with the message in GTP-U/UDP/IPv6 from `src` to
    /// `dst` (traffic class `tc`, flow label `fl`, hop limit `hl`: as End.M.GTP6.E does
    /// for T-PDUs).
    #[allow(clippy::too_many_arguments)]
    pub fn emit6(
        &self,
        p: &mut PacketBuf,
        src: Ipv6Addr,
        dst: Ipv6Addr,
        tc: u8,
        fl: u32,
        hl: u8,
    ) -> Result<(), DropReason> {
        let (ies, n) = self.body(p.data());
        let udp_len = 8 + self.gtpu_len(n);
        if !p.pull_front(p.len()) || !p.push_front(40 + udp_len) {
            return Err(DropReason::NoHeadroom);
        }
        let data = p.data_mut();
        let outer = Ipv6Repr {
            src_addr: src,
            dst_addr: dst,
            next_header: IPPROTO_UDP,
            payload_len: udp_len as u16,
            hop_limit: hl,
            traffic_class: tc,
            flow_label: fl,
        };
        outer.emit(&mut Ipv6Packet::new_unchecked(&mut *data));
        let Some(seg) = data.get_mut(40..) else { return Err(DropReason::Malformed) };
        self.udp(seg, ies.get(..n).unwrap_or_default());
        let sum = checksum::pseudo_header_v6(&src, &dst, udp_len as u32, IPPROTO_UDP) + checksum::sum(seg);
        set_udp_checksum(seg, sum);
        Ok(())
    }

    /// UDP (2152 to 2152, checksum 0 for now) and the GTP-U message in `seg`.
    fn udp(&self, seg: &mut [u8], ies: &[u8]) {
        let len = seg.len() as u16;
        let mut udp = UdpPacket::new_unchecked(&mut *seg);
        udp.set_src_port(GTPU_PORT);
        udp.set_dst_port(GTPU_PORT);
        udp.set_len(len);
        udp.set_checksum(0);
        if let Some(g) = seg.get_mut(8..) {
            self.emit_gtpu(g, ies);
        }
    }
}

/// RFC 768: the folded sum, 0 sent as all ones.
fn set_udp_checksum(seg: &mut [u8], sum: u32) {
    let c = checksum::fold(sum);
    UdpPacket::new_unchecked(seg).set_checksum(if c == 0 { 0xffff } else { c });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_messages() {
        for t in [MSG_ECHO_REQUEST, MSG_ECHO_RESPONSE, MSG_ERROR_INDICATION, MSG_END_MARKER] {
            assert_eq!(msg_type(tag(t).unwrap()), Some(t));
        }
        assert_eq!(tag(255), None);
        assert_eq!(tag(31), None);
        assert_eq!(msg_type(0), None);
        assert_eq!(msg_type(0xfff0), None, "other bits are not read");
        // VPP's order: Echo Response first, End Marker last.
        assert_eq!(msg_type(0x000f), Some(MSG_ECHO_RESPONSE));
        assert_eq!(msg_type(0x0007), Some(MSG_ECHO_REQUEST));
        assert_eq!(msg_type(0x0003), Some(MSG_ERROR_INDICATION));
    }
}
