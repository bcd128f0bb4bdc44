//! The Segment Routing Header (RFC 8754 §2): a Routing header of type 4
//! carrying a list of 128-bit segments and optional TLVs (see [`crate::tlv`]).
//!
//! Segment List\[0\] is the *last* segment of the path (the final
//! destination); Segment List\[Last Entry\] is the first. Segments Left indexes
//! the segment that is the next destination once the header is processed.
//! [`SrhPacket::check_len`] checks only that the header fits in the buffer;
//! [`SrhPacket::check_segments`] checks that it is an SRH whose segment list
//! fits, and `new_checked` runs both. [`SrhPacket::check_segments_left`]
//! (Segments Left <= Last Entry + 1, RFC 8754 §4.3.1.1 S02) is left to the
//! behaviour that processes the header.

use std::net::Ipv6Addr;

use crate::bytes::{array, copy_in, need, put, put_u16, put_u8, slice, slice_mut, u16_at, u8_at};
use crate::tlv::{emit_padding, TlvIter};
use crate::{Error, Result};

/// Routing Type of the SRH (RFC 8754 §2).
pub const ROUTING_TYPE_SRH: u8 = 4;

/// Legacy `H` (HMAC present) bit of draft SRH versions; Linux
/// `SR6_FLAG1_HMAC = 1 << 3`, still set by the kernel when it adds an HMAC
/// TLV. Unassigned in RFC 8754 §2.
pub const FLAG_H: u8 = 0x08;

/// Length of the fixed part before Segment List\[0\].
pub const FIXED_LEN: usize = field::SEGMENTS;
/// Length of one segment.
pub const SEGMENT_LEN: usize = 16;

mod field {
    //! RFC 8754 §2:
    //! ```text
    //!  0                   1                   2                   3
    //!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! | Next Header   |  Hdr Ext Len  | Routing Type  | Segments Left |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |  Last Entry   |     Flags     |              Tag              |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |                                                               |
    //! |            Segment List[0] (128-bit IPv6 address)             |
    //! |                                                               |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! //                             ...                             //
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |            Segment List[n] (128-bit IPv6 address)             |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! //         Optional Type Length Value objects (variable)       //
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! ```
    pub const NEXT_HEADER: usize = 0;
    pub const HDR_EXT_LEN: usize = 1;
    pub const ROUTING_TYPE: usize = 2;
    pub const SEGMENTS_LEFT: usize = 3;
    pub const LAST_ENTRY: usize = 4;
    pub const FLAGS: usize = 5;
    pub const TAG: usize = 6;
    pub const SEGMENTS: usize = 8;
}

/// Offset of Segments Left within the SRH (the pointer of a Parameter
/// Problem about it, added to the SRH's own offset).
pub const SEGMENTS_LEFT_OFFSET: usize = field::SEGMENTS_LEFT;
/// Offset of Last Entry within the SRH.
pub const LAST_ENTRY_OFFSET: usize = field::LAST_ENTRY;

/// Zero-copy view of a Segment Routing Header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrhPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SrhPacket<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        SrhPacket { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len) and
    /// [`check_segments`](Self::check_segments).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        p.check_segments()?;
        Ok(p)
    }

    /// Checks that the 8-byte fixed part and the whole header,
    /// `(Hdr Ext Len + 1) * 8` bytes, are in the buffer.
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        need(FIXED_LEN, have)?;
        need(self.header_len(), have)
    }

    /// Checks Routing Type 4 and that the segment list,
    /// `16 * (Last Entry + 1)` bytes after the fixed part, fits in the header.
    pub fn check_segments(&self) -> Result<()> {
        if self.routing_type() != ROUTING_TYPE_SRH {
            return Err(Error::BadRoutingType(self.routing_type()));
        }
        if self.tlv_offset() > self.header_len() {
            return Err(Error::BadLastEntry { last_entry: self.last_entry(), hdr_ext_len: self.hdr_ext_len() });
        }
        Ok(())
    }

    /// Checks Segments Left <= Last Entry + 1 (RFC 8754 §4.3.1.1, S02). A
    /// violation is answered with a Parameter Problem, code 0, pointing at
    /// Segments Left.
    pub fn check_segments_left(&self) -> Result<()> {
        let (sl, last_entry) = (self.segments_left(), self.last_entry());
        if usize::from(sl) > usize::from(last_entry) + 1 {
            Err(Error::SegmentsLeftTooBig { sl, last_entry })
        } else {
            Ok(())
        }
    }

    /// Next Header.
    pub fn next_header(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::NEXT_HEADER)
    }

    /// Hdr Ext Len, in 8-byte units not counting the first 8 bytes.
    pub fn hdr_ext_len(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::HDR_EXT_LEN)
    }

    /// Header length in bytes: `(Hdr Ext Len + 1) * 8`.
    pub fn header_len(&self) -> usize {
        (usize::from(self.hdr_ext_len()) + 1) * 8
    }

    /// Routing Type (4).
    pub fn routing_type(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::ROUTING_TYPE)
    }

    /// Segments Left.
    pub fn segments_left(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::SEGMENTS_LEFT)
    }

    /// Last Entry: index of the last element of the segment list.
    pub fn last_entry(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::LAST_ENTRY)
    }

    /// Number of segments, Last Entry + 1.
    pub fn segment_count(&self) -> usize {
        usize::from(self.last_entry()) + 1
    }

    /// Flags (RFC 8754 §2 assigns none; RFC 9259 the O bit, 0x20; Linux sets
    /// [`FLAG_H`] with an HMAC TLV).
    pub fn flags(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::FLAGS)
    }

    /// Tag.
    pub fn tag(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::TAG)
    }

    /// Offset of Segment List\[i\] from the start of the SRH: `8 + 16 * i`.
    pub fn segment_offset(&self, i: u8) -> usize {
        FIXED_LEN + SEGMENT_LEN * usize::from(i)
    }

    /// Segment List\[i\], or `None` if `i > last_entry()` or the segment is
    /// not inside the header.
    pub fn segment(&self, i: u8) -> Option<Ipv6Addr> {
        let at = self.segment_offset(i);
        if i > self.last_entry() || at + SEGMENT_LEN > self.header_len().min(self.buffer.as_ref().len()) {
            return None;
        }
        Some(Ipv6Addr::from(array::<16>(self.buffer.as_ref(), at)))
    }

    /// The raw segment list, `16 * (Last Entry + 1)` bytes in header order
    /// (empty if it does not fit in the header).
    pub fn segment_list(&self) -> &[u8] {
        let end = self.tlv_offset();
        if end > self.header_len() {
            return &[];
        }
        slice(self.buffer.as_ref(), FIXED_LEN, end)
    }

    /// Segment List\[0\], \[1\], ... in header order (final destination first).
    pub fn segments(&self) -> impl Iterator<Item = Ipv6Addr> + '_ {
        self.segment_list().chunks_exact(SEGMENT_LEN).map(|c| Ipv6Addr::from(array::<16>(c, 0)))
    }

    /// Offset of the TLV area from the start of the SRH: `8 + 16 * (Last Entry + 1)`.
    pub fn tlv_offset(&self) -> usize {
        FIXED_LEN + SEGMENT_LEN * self.segment_count()
    }

    /// The TLV area, from `tlv_offset()` to `header_len()` (empty if none or
    /// if the segment list overruns the header).
    pub fn tlv_area(&self) -> &[u8] {
        slice(self.buffer.as_ref(), self.tlv_offset(), self.header_len())
    }

    /// Iterator over the TLVs (RFC 8754 §2.1).
    pub fn tlvs(&self) -> TlvIter<'_> {
        TlvIter::new(self.tlv_area())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SrhPacket<T> {
    /// Sets Next Header.
    pub fn set_next_header(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::NEXT_HEADER, v);
    }

    /// Sets Hdr Ext Len.
    pub fn set_hdr_ext_len(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::HDR_EXT_LEN, v);
    }

    /// Sets Routing Type.
    pub fn set_routing_type(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::ROUTING_TYPE, v);
    }

    /// Sets Segments Left.
    pub fn set_segments_left(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::SEGMENTS_LEFT, v);
    }

    /// Sets Last Entry.
    pub fn set_last_entry(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::LAST_ENTRY, v);
    }

    /// Sets Flags.
    pub fn set_flags(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::FLAGS, v);
    }

    /// Sets Tag.
    pub fn set_tag(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::TAG, v);
    }

    /// Writes Segment List\[i\] at `segment_offset(i)`; the write is dropped if
    /// it does not fit in the buffer (Last Entry is not consulted, so the list
    /// can be written before the header).
    pub fn set_segment(&mut self, i: u8, addr: &Ipv6Addr) {
        let at = self.segment_offset(i);
        put(self.buffer.as_mut(), at, addr.octets());
    }

    /// The TLV area, mutable (to write an HMAC).
    pub fn tlv_area_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.tlv_offset(), self.header_len());
        slice_mut(self.buffer.as_mut(), start, end)
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for SrhPacket<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// High-level representation of an SRH, borrowing its segment list and TLVs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SrhRepr<'a> {
    /// Next Header.
    pub next_header: u8,
    /// Segments Left.
    pub segments_left: u8,
    /// Last Entry; must be `segments.len() / 16 - 1`.
    pub last_entry: u8,
    /// Flags.
    pub flags: u8,
    /// Tag.
    pub tag: u16,
    /// The raw segment list, 16 bytes per SID, Segment List\[0\] first.
    pub segments: &'a [u8],
    /// The raw TLV bytes. `emit` pads them to a multiple of 8 with Pad1/PadN;
    /// `parse` returns the whole area, padding included.
    pub tlvs: &'a [u8],
}

impl<'a> SrhRepr<'a> {
    /// Parses an SRH (runs `check_len` and `check_segments`, and checks that
    /// the TLV area walks cleanly).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &SrhPacket<&'a T>) -> Result<Self> {
        packet.check_len()?;
        packet.check_segments()?;
        let buf: &'a [u8] = T::as_ref(packet.buffer);
        let segments = slice(buf, FIXED_LEN, packet.tlv_offset());
        let tlvs = slice(buf, packet.tlv_offset(), packet.header_len());
        if let Some(Err(e)) = TlvIter::new(tlvs).find(|t| t.is_err()) {
            return Err(e);
        }
        Ok(SrhRepr {
            next_header: packet.next_header(),
            segments_left: packet.segments_left(),
            last_entry: packet.last_entry(),
            flags: packet.flags(),
            tag: packet.tag(),
            segments,
            tlvs,
        })
    }

    /// Header length this repr emits: `8 + segments.len()` plus the TLVs
    /// rounded up to a multiple of 8. At most 2048 (Hdr Ext Len 255).
    pub fn buffer_len(&self) -> usize {
        FIXED_LEN + self.segments.len() + self.tlvs.len().div_ceil(8) * 8
    }

    /// Writes the SRH into the first `buffer_len()` bytes of `packet`: Routing
    /// Type 4, Hdr Ext Len from `buffer_len()`, the segments, the TLVs and
    /// Pad1/PadN padding to the next multiple of 8.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut SrhPacket<T>) {
        let len = self.buffer_len();
        let hdr_ext_len = (len / 8).saturating_sub(1).min(255) as u8;
        packet.set_next_header(self.next_header);
        packet.set_hdr_ext_len(hdr_ext_len);
        packet.set_routing_type(ROUTING_TYPE_SRH);
        packet.set_segments_left(self.segments_left);
        packet.set_last_entry(self.last_entry);
        packet.set_flags(self.flags);
        packet.set_tag(self.tag);
        let b = packet.buffer.as_mut();
        copy_in(b, FIXED_LEN, self.segments);
        let tlv_at = FIXED_LEN + self.segments.len();
        copy_in(b, tlv_at, self.tlvs);
        let pad_at = tlv_at + self.tlvs.len();
        emit_padding(slice_mut(b, pad_at, len), len - pad_at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tlv::{find_hmac, HmacTlv, HmacTlvRepr, Tlv, TLV_PAD1, TLV_PADN};
    use crate::Error;
    use proptest::prelude::*;

    // scapy: bytes(IPv6ExtHdrSegmentRouting(nh=41, segleft=1, tag=0x1234,
    //              addresses=["fc00:3::1", "fc00:2::1", "fc00:1::1"]))
    static BYTES: [u8; 56] = [
        0x29, 0x06, 0x04, 0x01, 0x02, 0x00, 0x12, 0x34, // nh 41, len 6, type 4, SL 1, LE 2, tag
        0xfc, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // [0] fc00:3::1
        0xfc, 0x00, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // [1] fc00:2::1
        0xfc, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // [2] fc00:1::1
    ];
    static REPR: SrhRepr<'static> = SrhRepr {
        next_header: 41,
        segments_left: 1,
        last_entry: 2,
        flags: 0,
        tag: 0x1234,
        segments: {
            let (_, rest) = BYTES.split_at(8);
            rest
        },
        tlvs: &[],
    };

    // Two segments and an HMAC TLV (RFC 8754 §2.1.2; laid out as Linux
    // `struct sr6_tlv_hmac`), H flag set as the kernel does. Written by hand:
    // scapy 2.6's HMAC TLV layer has a 2-byte Length field, so it is no oracle.
    static HMAC_BYTES: [u8; 80] = [
        0x11, 0x09, 0x04, 0x00, 0x01, 0x08, 0x00, 0x00, // nh 17, len 9, SL 0, LE 1, H
        0xfc, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // [0]
        0xfc, 0x00, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // [1]
        0x05, 38, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, // HMAC TLV, key id 7
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
        31, 32, // HMAC
    ];

    fn a(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    #[test]
    fn parse() {
        let p = SrhPacket::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.header_len(), 56);
        assert_eq!(p.routing_type(), 4);
        assert_eq!(p.segments_left(), 1);
        assert_eq!(p.last_entry(), 2);
        assert_eq!(p.segment_count(), 3);
        assert_eq!(p.tag(), 0x1234);
        assert_eq!(p.segment(0), Some(a("fc00:3::1")));
        assert_eq!(p.segment(2), Some(a("fc00:1::1")));
        assert_eq!(p.segment(3), None);
        assert_eq!(p.segment(255), None);
        assert_eq!(p.segment_offset(1), 24);
        assert_eq!(p.tlv_offset(), 56);
        assert_eq!(p.tlvs().count(), 0);
        assert_eq!(p.segments().collect::<Vec<_>>(), vec![a("fc00:3::1"), a("fc00:2::1"), a("fc00:1::1")]);
        assert!(p.check_segments_left().is_ok());
        assert_eq!(SrhRepr::parse(&p).unwrap(), REPR);
    }

    #[test]
    fn emit() {
        let mut buf = [0xFFu8; 56];
        assert_eq!(REPR.buffer_len(), 56);
        REPR.emit(&mut SrhPacket::new_unchecked(&mut buf[..]));
        assert_eq!(buf, BYTES);
    }

    #[test]
    fn hmac_srh() {
        let p = SrhPacket::new_checked(&HMAC_BYTES[..]).unwrap();
        assert_eq!(p.flags(), FLAG_H);
        assert_eq!(p.tlv_offset(), 40);
        let (off, h) = find_hmac(p.tlv_area()).unwrap().unwrap();
        assert_eq!(off, 0);
        assert_eq!((h.d_flag(), h.key_id(), h.hmac().len()), (false, 7, 32));
        let repr = SrhRepr::parse(&p).unwrap();
        assert_eq!(repr.segments, &HMAC_BYTES[8..40]);
        assert_eq!(repr.tlvs.len(), 40);

        // Build the same header from parts: repr with a zero HMAC TLV, then fill it.
        let mut tlv = [0u8; 40];
        HmacTlvRepr { d_flag: false, key_id: 7, hmac_len: 32 }.emit(&mut HmacTlv::new_unchecked(&mut tlv[..]));
        let segs = &HMAC_BYTES[8..40];
        let built = SrhRepr {
            next_header: 17,
            segments_left: 0,
            last_entry: 1,
            flags: FLAG_H,
            tag: 0,
            segments: segs,
            tlvs: &tlv,
        };
        let mut buf = [0xFFu8; 80];
        let mut q = SrhPacket::new_unchecked(&mut buf[..]);
        built.emit(&mut q);
        let area = q.tlv_area_mut();
        let mut h = HmacTlv::new_checked(&mut area[..]).unwrap();
        h.hmac_mut().copy_from_slice(&HMAC_BYTES[48..80]);
        assert_eq!(buf, HMAC_BYTES);
    }

    #[test]
    fn truncated_prefixes() {
        for n in 0..BYTES.len() {
            assert!(SrhPacket::new_checked(&BYTES[..n]).is_err(), "len {n}");
        }
        for n in 0..HMAC_BYTES.len() {
            assert!(SrhPacket::new_checked(&HMAC_BYTES[..n]).is_err(), "len {n}");
        }
    }

    #[test]
    fn bad_headers() {
        let mut b = BYTES;
        b[2] = 0;
        assert_eq!(SrhPacket::new_checked(&b[..]).unwrap_err(), Error::BadRoutingType(0));
        let mut b = BYTES;
        b[4] = 3; // 4 segments need 72 bytes
        assert_eq!(SrhPacket::new_checked(&b[..]).unwrap_err(), Error::BadLastEntry { last_entry: 3, hdr_ext_len: 6 });
        let p = SrhPacket::new_unchecked(&b[..]);
        assert!(p.check_len().is_ok());
        assert_eq!(p.segment(3), None);
        assert_eq!(p.segment_list(), &[] as &[u8]);
        assert_eq!(p.tlv_area(), &[] as &[u8]);
        let mut b = BYTES;
        b[3] = 4;
        let p = SrhPacket::new_checked(&b[..]).unwrap();
        assert_eq!(p.check_segments_left(), Err(Error::SegmentsLeftTooBig { sl: 4, last_entry: 2 }));
        b[3] = 3;
        assert!(SrhPacket::new_checked(&b[..]).unwrap().check_segments_left().is_ok());
        // hdr ext len 0: no room for a segment; reading one must not panic.
        let b = [59u8, 0, 4, 0, 0, 0, 0, 0];
        let p = SrhPacket::new_unchecked(&b[..]);
        assert!(p.check_len().is_ok());
        assert_eq!(p.check_segments(), Err(Error::BadLastEntry { last_entry: 0, hdr_ext_len: 0 }));
        assert_eq!(p.segment(0), None);
        // A malformed TLV area fails SrhRepr::parse but not the view.
        let mut b = [0u8; 32];
        b[..4].copy_from_slice(&[59, 3, 4, 0]);
        b[24] = 9;
        b[25] = 7;
        let p = SrhPacket::new_checked(&b[..]).unwrap();
        assert_eq!(SrhRepr::parse(&p).unwrap_err(), Error::BadTlv { offset: 0 });
    }

    #[test]
    fn setters() {
        let mut b = BYTES;
        let mut p = SrhPacket::new_checked(&mut b[..]).unwrap();
        p.set_segments_left(0);
        p.set_flags(0x20); // O (RFC 9259)
        p.set_tag(7);
        p.set_segment(1, &a("2001:db8::5"));
        p.set_segment(200, &a("2001:db8::5")); // out of buffer: dropped
        p.set_next_header(59);
        assert_eq!(p.segment(1), Some(a("2001:db8::5")));
        assert_eq!((p.segments_left(), p.flags(), p.tag(), p.next_header()), (0, 0x20, 7, 59));
        p.set_last_entry(0);
        p.set_hdr_ext_len(2);
        p.set_routing_type(4);
        assert_eq!(p.segment(1), None);
        assert_eq!(p.tlv_area().len(), 0);
        assert_eq!(p.header_len(), 24);
    }

    /// Serialises TLVs (kind 0 = Pad1) and pads them to a multiple of 8.
    fn tlv_bytes(tlvs: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (k, v) in tlvs {
            out.push(*k);
            if *k != TLV_PAD1 {
                out.push(v.len() as u8);
                out.extend_from_slice(v);
            }
        }
        let pad = (8 - out.len() % 8) % 8;
        let mut p = vec![0u8; pad];
        emit_padding(&mut p, pad);
        out.extend_from_slice(&p);
        out
    }

    fn arb_tlvs() -> impl Strategy<Value = Vec<(u8, Vec<u8>)>> {
        proptest::collection::vec((any::<u8>(), proptest::collection::vec(any::<u8>(), 0..24)), 0..5)
    }

    proptest! {
        #[test]
        fn round_trip(next_header in any::<u8>(), segments_left in any::<u8>(), flags in any::<u8>(),
                      tag in any::<u16>(),
                      segs in proptest::collection::vec(any::<[u8; 16]>(), 1..16),
                      tlvs in arb_tlvs()) {
            let segments: Vec<u8> = segs.concat();
            let tlv_area = tlv_bytes(&tlvs);
            let repr = SrhRepr { next_header, segments_left, last_entry: (segs.len() - 1) as u8,
                                 flags, tag, segments: &segments, tlvs: &tlv_area };
            let mut buf = vec![0xFFu8; repr.buffer_len()];
            repr.emit(&mut SrhPacket::new_unchecked(&mut buf[..]));
            let p = SrhPacket::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(SrhRepr::parse(&p).unwrap(), repr);
            for (i, s) in segs.iter().enumerate() {
                prop_assert_eq!(p.segment(i as u8), Some(Ipv6Addr::from(*s)));
            }
            // The TLVs read back in order, followed only by padding.
            let got: Vec<Tlv> = p.tlvs().collect::<Result<_>>().unwrap();
            for (t, (k, v)) in got.iter().zip(tlvs.iter()) {
                prop_assert_eq!(t.kind, *k);
                if *k != TLV_PAD1 { prop_assert_eq!(t.value, &v[..]); }
            }
            prop_assert!(got[tlvs.len()..].iter().all(|t| t.kind == TLV_PAD1 || t.kind == TLV_PADN));
        }

        #[test]
        fn unpadded_tlvs_are_padded(n in 0usize..20) {
            let mut tlvs = vec![9u8, n as u8];
            tlvs.resize(2 + n, 0xAB);
            let segs = [0x11u8; 16];
            let repr = SrhRepr { next_header: 59, segments_left: 0, last_entry: 0, flags: 0, tag: 0,
                                 segments: &segs, tlvs: &tlvs };
            prop_assert_eq!(repr.buffer_len() % 8, 0);
            let mut buf = vec![0xFFu8; repr.buffer_len()];
            repr.emit(&mut SrhPacket::new_unchecked(&mut buf[..]));
            let p = SrhPacket::new_checked(&buf[..]).unwrap();
            let got: Vec<Tlv> = p.tlvs().collect::<Result<_>>().unwrap();
            prop_assert_eq!(got[0].value.len(), n);
            prop_assert!(got[1..].iter().all(Tlv::is_padding));
        }
    }
}
