//! The GTP-U header (3GPP TS 29.281 §5.1) and the PDU Session Container extension
//! header that carries the QoS Flow Identifier (3GPP TS 38.415 §5.5.2; TS 29.281
//! §5.2.2.7), for the translation between GTP-U and SRv6 of RFC 9433.
//!
//! A GTP-U packet is carried in UDP to port [`GTPU_PORT`]; its header is 8 bytes,
//! then 4 more (Sequence Number, N-PDU Number, Next Extension Header Type) when any of
//! the E, S or PN flags is set, then the extension headers the E flag announces, each
//! `4 * length` bytes long and ending with the type of the next one (0: none). The
//! Length field counts everything after the first 8 bytes.

use crate::bytes::{need, put, put_u16, put_u32, put_u8, u16_at, u32_at, u8_at};
use crate::{Error, Result};

mod field {
    //! TS 29.281 §5.1, Figure 5.1-1:
    //! ```text
    //!   Bits  8  7  6  5  4  3  2  1
    //!  1    | Version | PT| * | E | S | PN |
    //!  2    | Message Type                |
    //!  3-4  | Length                      |
    //!  5-8  | Tunnel Endpoint Identifier  |
    //!  9-10 | Sequence Number       (opt) |
    //!  11   | N-PDU Number          (opt) |
    //!  12   | Next Extension Header Type (opt) |
    //! ```
    pub const FLAGS: usize = 0;
    pub const MSG_TYPE: usize = 1;
    pub const LENGTH: usize = 2;
    pub const TEID: usize = 4;
    pub const SEQ: usize = 8;
    pub const NPDU: usize = 10;
    pub const NEXT_EXT: usize = 11;
}

/// The UDP port of GTP-U (TS 29.281 §4.4.2.3).
pub const GTPU_PORT: u16 = 2152;
/// Message type of a T-PDU, a user packet (TS 29.281 §6.1).
pub const MSG_TPDU: u8 = 255;
/// Echo Request (TS 29.281 §7.2.1).
pub const MSG_ECHO_REQUEST: u8 = 1;
/// Echo Response (TS 29.281 §7.2.2).
pub const MSG_ECHO_RESPONSE: u8 = 2;
/// Error Indication (TS 29.281 §7.3.1).
pub const MSG_ERROR_INDICATION: u8 = 26;
/// End Marker (TS 29.281 §7.3.2).
pub const MSG_END_MARKER: u8 = 254;
/// Extension header type of the PDU Session Container (TS 29.281 §5.2.1).
pub const EXT_PDU_SESSION: u8 = 0x85;
/// Type of the Recovery information element (TS 29.281 §8.2), a TV of 2 bytes: type
/// and Restart Counter, which a GTP-U sender sets to 0.
pub const IE_RECOVERY: u8 = 14;

/// Flag bits of the first octet.
const FLAG_E: u8 = 0x04;
const FLAG_S: u8 = 0x02;
const FLAG_PN: u8 = 0x01;
/// Version 1, Protocol Type 1 (GTP, not GTP').
const VERSION_PT: u8 = 0x30;

/// The PDU Session Container's content that RFC 9433 maps to Args.Mob.Session: the
/// PDU Type (0: DL PDU SESSION INFORMATION, 1: UL), the QFI and, in a downlink
/// container, the RQI (TS 38.415 §5.5.2.1, §5.5.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PduSession {
    /// PDU Type: 0 downlink, 1 uplink.
    pub pdu_type: u8,
    /// QoS Flow Identifier (6 bits).
    pub qfi: u8,
    /// Reflective QoS Indication (downlink only; false in an uplink container).
    pub rqi: bool,
}

/// PDU Type of a DL PDU SESSION INFORMATION container.
pub const PDU_TYPE_DL: u8 = 0;
/// PDU Type of an UL PDU SESSION INFORMATION container.
pub const PDU_TYPE_UL: u8 = 1;

/// Zero-copy view of a GTP-U header and what follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GtpuPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> GtpuPacket<T> {
    /// The mandatory part of the header.
    pub const HEADER_LEN: usize = 8;
    /// With the optional fields (any of E, S, PN set).
    pub const LONG_HEADER_LEN: usize = 12;

    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        GtpuPacket { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks what a receiver must before it reads the header: version 1 and
    /// Protocol Type 1 ([`Error::BadVersion`] with the first octet's top 4 bits
    /// otherwise), the header there, 8 + Length bytes exactly the buffer (the buffer
    /// is the UDP payload: [`Error::Truncated`] when Length says more,
    /// [`Error::BadTotalLen`] when it says less), and every extension
    /// header non-empty and inside the packet, the chain ending before the payload.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        need(Self::HEADER_LEN, b.len())?;
        if self.flags() & 0xf0 != VERSION_PT {
            return Err(Error::BadVersion(self.flags() >> 4));
        }
        // Longer than the datagram: truncated; shorter: a Length that disagrees with
        // the UDP Length, which the receiver cannot trust either.
        let total = Self::HEADER_LEN + usize::from(self.length());
        need(total, b.len())?;
        if total < b.len() {
            return Err(Error::BadTotalLen { len: total, min: b.len() });
        }
        self.walk().map(|_| ())
    }

    /// The header length (optional fields and extension headers included), and where
    /// the PDU Session Container's content starts if there is one.
    fn walk(&self) -> Result<(usize, Option<usize>)> {
        let b = self.buffer.as_ref();
        if self.flags() & (FLAG_E | FLAG_S | FLAG_PN) == 0 {
            return Ok((Self::HEADER_LEN, None));
        }
        need(Self::LONG_HEADER_LEN, b.len())?;
        let mut at = Self::LONG_HEADER_LEN;
        if self.flags() & FLAG_E == 0 {
            return Ok((at, None));
        }
        let mut next = u8_at(b, field::NEXT_EXT);
        let mut session = None;
        // At most (65535 / 4) headers fit; the walk advances at least 4 bytes a step.
        while next != 0 {
            let units = usize::from(u8_at(b, at));
            if units == 0 {
                return Err(Error::BadHeaderLen { len: 0, min: 4 });
            }
            let len = units * 4;
            need(at + len, b.len())?;
            if next == EXT_PDU_SESSION && session.is_none() {
                session = Some(at + 1);
            }
            next = u8_at(b, at + len - 1);
            at += len;
        }
        Ok((at, session))
    }

    /// The first octet: version, PT and the E, S, PN flags.
    pub fn flags(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::FLAGS)
    }

    /// Version (1 for GTPv1).
    pub fn version(&self) -> u8 {
        self.flags() >> 5
    }

    /// Message Type.
    pub fn msg_type(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::MSG_TYPE)
    }

    /// Length: the bytes after the mandatory 8.
    pub fn length(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::LENGTH)
    }

    /// Tunnel Endpoint Identifier.
    pub fn teid(&self) -> u32 {
        u32_at(self.buffer.as_ref(), field::TEID)
    }

    /// Sequence Number, if the S flag is set.
    pub fn seq(&self) -> Option<u16> {
        (self.flags() & FLAG_S != 0).then(|| u16_at(self.buffer.as_ref(), field::SEQ))
    }

    /// N-PDU Number, if the PN flag is set.
    pub fn npdu(&self) -> Option<u8> {
        (self.flags() & FLAG_PN != 0).then(|| u8_at(self.buffer.as_ref(), field::NPDU))
    }

    /// The header's length, extension headers included (0 if they are malformed).
    pub fn header_len(&self) -> usize {
        self.walk().map_or(0, |(l, _)| l)
    }

    /// The first PDU Session Container's PDU Type, QFI and RQI, if there is one.
    pub fn pdu_session(&self) -> Option<PduSession> {
        self.layout().1
    }

    /// The header's length (as [`header_len`](Self::header_len)) and the first PDU
    /// Session Container (as [`pdu_session`](Self::pdu_session)), from one walk of the
    /// extension headers: what a translation needs of a T-PDU's header.
    pub fn layout(&self) -> (usize, Option<PduSession>) {
        let Ok((len, at)) = self.walk() else { return (0, None) };
        let session = at.map(|at| {
            let b = self.buffer.as_ref();
            let pdu_type = u8_at(b, at) >> 4;
            let o2 = u8_at(b, at + 1);
            PduSession { pdu_type, qfi: o2 & 0x3f, rqi: pdu_type == PDU_TYPE_DL && o2 & 0x40 != 0 }
        });
        (len, session)
    }

    /// What follows the header and its extension headers (the T-PDU).
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        b.get(self.header_len().min(b.len())..).unwrap_or_default()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> GtpuPacket<T> {
    /// Sets the first octet.
    pub fn set_flags(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::FLAGS, v);
    }

    /// Sets Message Type.
    pub fn set_msg_type(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::MSG_TYPE, v);
    }

    /// Sets Length.
    pub fn set_length(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::LENGTH, v);
    }

    /// Sets the TEID.
    pub fn set_teid(&mut self, v: u32) {
        put_u32(self.buffer.as_mut(), field::TEID, v);
    }
}

/// A GTP-U header to emit: message type, TEID and, if any, one PDU Session Container
/// (4 bytes: length 1, PDU Type, PPP 0 / RQI / QFI, next type 0). Sequence and N-PDU
/// numbers, when the container is there, are 0 with their flags clear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GtpuRepr {
    /// Message Type.
    pub msg_type: u8,
    /// TEID.
    pub teid: u32,
    /// The PDU Session Container, if any.
    pub session: Option<PduSession>,
}

impl GtpuRepr {
    /// Parses the header of a checked packet (its first PDU Session Container).
    pub fn parse<T: AsRef<[u8]>>(packet: &GtpuPacket<T>) -> Result<Self> {
        packet.check_len()?;
        Ok(GtpuRepr { msg_type: packet.msg_type(), teid: packet.teid(), session: packet.pdu_session() })
    }

    /// Bytes [`emit`](Self::emit) writes: 8, or 16 with a container.
    pub const fn buffer_len(&self) -> usize {
        if self.session.is_some() {
            16
        } else {
            8
        }
    }

    /// Bytes [`emit_seq`](Self::emit_seq) writes: 12, or 16 with a container.
    pub const fn seq_buffer_len(&self) -> usize {
        if self.session.is_some() {
            16
        } else {
            12
        }
    }

    /// Writes the header with the S flag and Sequence Number `seq` (N-PDU Number 0,
    /// PN clear; TS 29.281 §5.1: Echo and Error Indication messages carry one) at the
    /// start of `b` (at least [`seq_buffer_len`](Self::seq_buffer_len) bytes), for a
    /// payload of `payload_len` bytes after it.
    pub fn emit_seq(&self, b: &mut [u8], seq: u16, payload_len: u16) {
        let e = if self.session.is_some() {
            self.emit(b, payload_len);
            FLAG_E
        } else {
            let mut p = GtpuPacket::new_unchecked(&mut *b);
            p.set_msg_type(self.msg_type);
            p.set_length(payload_len.saturating_add(4));
            p.set_teid(self.teid);
            put(b, field::SEQ, [0, 0, 0, 0]);
            0
        };
        GtpuPacket::new_unchecked(&mut *b).set_flags(VERSION_PT | e | FLAG_S);
        put_u16(b, field::SEQ, seq);
    }

    /// Writes the header at the start of `b` (at least [`buffer_len`](Self::buffer_len)
    /// bytes), for a payload of `payload_len` bytes after it.
    pub fn emit(&self, b: &mut [u8], payload_len: u16) {
        let ext = self.buffer_len() - 8;
        let mut p = GtpuPacket::new_unchecked(&mut *b);
        p.set_flags(VERSION_PT | if ext > 0 { FLAG_E } else { 0 });
        p.set_msg_type(self.msg_type);
        p.set_length(payload_len.saturating_add(ext as u16));
        p.set_teid(self.teid);
        if let Some(s) = self.session {
            let o2 = u8::from(s.rqi && s.pdu_type == PDU_TYPE_DL) << 6 | (s.qfi & 0x3f);
            put(b, field::SEQ, [0, 0, 0, EXT_PDU_SESSION, 1, s.pdu_type << 4, o2, 0]);
        }
    }
}

/// The length of [`emit_echo_response`]'s message: the header with its optional fields
/// and a Recovery IE.
pub const ECHO_RESPONSE_LEN: usize = 14;

/// Writes at the start of `b` (at least [`ECHO_RESPONSE_LEN`] bytes) the Echo Response
/// (TS 29.281 §7.2.2) to an Echo Request whose sequence number was `seq`: version 1,
/// PT 1, S set (§5.1: Echo messages carry a sequence number, the response the request's),
/// TEID 0 (§5.1), N-PDU Number 0, no extension header, then the Recovery IE (value 0).
pub fn emit_echo_response(b: &mut [u8], seq: u16) {
    let mut p = GtpuPacket::new_unchecked(&mut *b);
    p.set_flags(VERSION_PT | FLAG_S);
    p.set_msg_type(MSG_ECHO_RESPONSE);
    p.set_length((ECHO_RESPONSE_LEN - GtpuPacket::<&[u8]>::HEADER_LEN) as u16);
    p.set_teid(0);
    put_u16(b, field::SEQ, seq);
    put(b, field::NPDU, [0, 0, IE_RECOVERY, 0]);
}

#[cfg(test)]
mod tests {
    use super::*;

    // scapy 2.6 (scapy.contrib.gtp):
    // bytes(GTP_U_Header(teid=0x11223344, gtp_type=255) / b"ab") and
    // bytes(GTP_U_Header(teid=0x11223344, E=1, next_ex=0x85)
    //       / GTPPDUSessionContainer(type=0, RQI=1, QFI=9) / b"ab")
    static PLAIN: [u8; 10] = [0x30, 0xff, 0x00, 0x02, 0x11, 0x22, 0x33, 0x44, b'a', b'b'];
    static WITH_PSC: [u8; 18] = [
        0x34, 0xff, 0x00, 0x0a, 0x11, 0x22, 0x33, 0x44, // flags E, T-PDU, length 10, TEID
        0x00, 0x00, 0x00, 0x85, // seq 0, N-PDU 0, next: PDU Session Container
        0x01, 0x00, 0x49, 0x00, // length 1, DL, RQI + QFI 9, no next
        b'a', b'b',
    ];

    #[test]
    fn parse_plain() {
        let p = GtpuPacket::new_checked(&PLAIN[..]).unwrap();
        assert_eq!((p.version(), p.msg_type(), p.length(), p.teid()), (1, MSG_TPDU, 2, 0x1122_3344));
        assert_eq!((p.seq(), p.npdu(), p.pdu_session(), p.header_len()), (None, None, None, 8));
        assert_eq!(p.payload(), b"ab");
    }

    #[test]
    fn parse_pdu_session_container() {
        let p = GtpuPacket::new_checked(&WITH_PSC[..]).unwrap();
        assert_eq!(p.header_len(), 16);
        assert_eq!(p.seq(), None);
        assert_eq!(p.pdu_session(), Some(PduSession { pdu_type: PDU_TYPE_DL, qfi: 9, rqi: true }));
        assert_eq!(p.payload(), b"ab");
        assert_eq!(p.layout(), (16, Some(PduSession { pdu_type: PDU_TYPE_DL, qfi: 9, rqi: true })));
        // An uplink container has no RQI: the bit is another field's.
        let mut ul = WITH_PSC;
        ul[13] = 0x10;
        let p = GtpuPacket::new_checked(&ul[..]).unwrap();
        assert_eq!(p.pdu_session(), Some(PduSession { pdu_type: PDU_TYPE_UL, qfi: 9, rqi: false }));
    }

    #[test]
    fn sequence_number_and_other_extensions() {
        // S set: the optional fields are there, no extension header.
        let b = [0x32, 0xff, 0, 6, 0, 0, 0, 1, 0x12, 0x34, 0, 0, b'x', b'y'];
        let p = GtpuPacket::new_checked(&b[..]).unwrap();
        assert_eq!((p.seq(), p.header_len(), p.payload()), (Some(0x1234), 12, &b"xy"[..]));
        // An unknown extension (type 0x40, 4 bytes) before the container: skipped.
        let b = [0x34, 0xff, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0x40, 1, 0, 0, 0x85, 1, 0x10, 5, 0];
        let p = GtpuPacket::new_checked(&b[..]).unwrap();
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.pdu_session().map(|s| (s.pdu_type, s.qfi)), Some((1, 5)));
    }

    #[test]
    fn rejects_what_a_receiver_must() {
        assert_eq!(GtpuPacket::new_checked(&PLAIN[..7]).unwrap_err(), Error::Truncated { need: 8, have: 7 });
        let mut v0 = PLAIN;
        v0[0] = 0x10; // version 0
        assert_eq!(GtpuPacket::new_checked(&v0[..]).unwrap_err(), Error::BadVersion(1));
        let mut gtp_prime = PLAIN;
        gtp_prime[0] = 0x20; // PT 0
        assert_eq!(GtpuPacket::new_checked(&gtp_prime[..]).unwrap_err(), Error::BadVersion(2));
        // Length says 2 bytes follow the header: one more or one less is rejected.
        assert!(GtpuPacket::new_checked(&PLAIN[..9]).is_err());
        let mut long = PLAIN.to_vec();
        long.push(0);
        assert!(GtpuPacket::new_checked(&long[..]).is_err());
        // An extension header of length 0, or overrunning the packet.
        let mut zero = WITH_PSC;
        zero[12] = 0;
        assert_eq!(GtpuPacket::new_checked(&zero[..]).unwrap_err(), Error::BadHeaderLen { len: 0, min: 4 });
        let mut over = WITH_PSC;
        over[12] = 5;
        assert!(matches!(GtpuPacket::new_checked(&over[..]), Err(Error::Truncated { .. })));
        // E set but no room for the optional fields.
        let b = [0x34, 0xff, 0, 2, 0, 0, 0, 1, 0, 0];
        assert!(matches!(GtpuPacket::new_checked(&b[..]), Err(Error::Truncated { need: 12, .. })));
        // Accessors on garbage never panic.
        let g = GtpuPacket::new_unchecked(&[0xffu8; 3][..]);
        let _ = (g.teid(), g.seq(), g.npdu(), g.pdu_session(), g.payload(), g.header_len());
    }

    #[test]
    fn emit_seq_sets_s() {
        // scapy: bytes(GTP_U_Header(gtp_type=1, S=1, seq=0x1234, teid=0)) and
        // bytes(GTP_U_Header(gtp_type=1, S=1, seq=7, E=1, next_ex=0x85)
        //       / GTPPDUSessionContainer(type=0, QFI=9))
        let r = GtpuRepr { msg_type: MSG_ECHO_REQUEST, teid: 0, session: None };
        let mut b = [0xffu8; 12];
        r.emit_seq(&mut b, 0x1234, 0);
        assert_eq!(b, [0x32, 1, 0, 4, 0, 0, 0, 0, 0x12, 0x34, 0, 0]);
        let r = GtpuRepr { session: Some(PduSession { pdu_type: 0, qfi: 9, rqi: false }), ..r };
        let mut b = [0xffu8; 16];
        r.emit_seq(&mut b, 7, 0);
        assert_eq!(b, [0x36, 1, 0, 8, 0, 0, 0, 0, 0, 7, 0, 0x85, 1, 0, 9, 0]);
        let p = GtpuPacket::new_checked(&b[..]).unwrap();
        assert_eq!((p.seq(), p.header_len()), (Some(7), 16));
    }

    #[test]
    fn echo_response() {
        // scapy 2.6: bytes(GTP_U_Header(gtp_type=2, S=1, seq=0x1234, teid=0)
        //   / GTPEchoResponse(IE_list=[IE_Recovery(restart_counter=0)]))
        let want = [0x32, 0x02, 0x00, 0x06, 0, 0, 0, 0, 0x12, 0x34, 0x00, 0x00, 0x0e, 0x00];
        let mut b = [0xffu8; ECHO_RESPONSE_LEN];
        emit_echo_response(&mut b, 0x1234);
        assert_eq!(b, want);
        let p = GtpuPacket::new_checked(&b[..]).unwrap();
        assert_eq!(
            (p.msg_type(), p.seq(), p.header_len(), p.payload()),
            (MSG_ECHO_RESPONSE, Some(0x1234), 12, &[14, 0][..])
        );
        // Too short a buffer: nothing panics.
        emit_echo_response(&mut [0u8; 5], 1);
    }

    #[test]
    fn emit_round_trips() {
        for (session, want) in
            [(None, &PLAIN[..8]), (Some(PduSession { pdu_type: 0, qfi: 9, rqi: true }), &WITH_PSC[..16])]
        {
            let r = GtpuRepr { msg_type: MSG_TPDU, teid: 0x1122_3344, session };
            let mut b = vec![0u8; r.buffer_len() + 2];
            b[r.buffer_len()..].copy_from_slice(b"ab");
            r.emit(&mut b, 2);
            assert_eq!(&b[..r.buffer_len()], want);
            assert_eq!(GtpuRepr::parse(&GtpuPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }
}
