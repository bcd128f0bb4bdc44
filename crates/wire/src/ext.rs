//! The IPv6 extension-header chain (RFC 8200 §4): a generic view of the
//! headers that share the `Next Header | Hdr Ext Len` layout, a view of the
//! Fragment header (RFC 8200 §4.5), and [`walk_chain`], which finds the
//! Routing header and the upper-layer header of a packet in one pass.
//!
//! All offsets in [`ChainInfo`] and [`RoutingInfo`] count from the first byte
//! of the IPv6 header, so they can be used directly as the pointer of an
//! ICMPv6 Parameter Problem (RFC 4443 §3.4).

use crate::bytes::{need, put_u16, put_u32, put_u8, slice, u16_at, u32_at, u8_at};
use crate::ipv6::Ipv6Packet;
use crate::proto::{IPPROTO_AH, IPPROTO_DSTOPTS, IPPROTO_FRAGMENT, IPPROTO_HOPOPTS, IPPROTO_ROUTING};
use crate::{Error, Result};

mod field {
    //! Generic extension header (RFC 8200 §4.3, §4.4, §4.6):
    //! ```text
    //!  0                   1                   2                   3
    //!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |  Next Header  |  Hdr Ext Len  |                               |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
    //! .          type-specific data, (Hdr Ext Len + 1) * 8 in all     .
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! ```
    //! Routing header (RFC 8200 §4.4): byte 2 Routing Type, byte 3 Segments Left.
    //!
    //! Fragment header (RFC 8200 §4.5), always 8 bytes:
    //! ```text
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |  Next Header  |   Reserved    |      Fragment Offset    |Res|M|
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |                         Identification                        |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! ```
    //! Authentication Header (RFC 4302 §2): byte 1 Payload Len, header
    //! length (Payload Len + 2) * 4.
    pub const NEXT_HEADER: usize = 0;
    pub const HDR_EXT_LEN: usize = 1;
    pub const ROUTING_TYPE: usize = 2;
    pub const SEGMENTS_LEFT: usize = 3;
    pub const FRAG_OFFSET_M: usize = 2;
    pub const FRAG_IDENT: usize = 4;
}

/// Length of the Fragment header (RFC 8200 §4.5).
pub const FRAGMENT_HEADER_LEN: usize = 8;
/// Offset of Routing Type within a Routing header (RFC 8200 §4.4): added to
/// the header's offset, the pointer of the Parameter Problem about a Routing
/// Type that is not recognised while Segments Left is not 0.
pub const ROUTING_TYPE_OFFSET: usize = field::ROUTING_TYPE;

/// Zero-copy view of a generic extension header (Hop-by-Hop, Routing,
/// Destination Options): `Next Header`, `Hdr Ext Len`, length `(len + 1) * 8`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ExtHeader<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        ExtHeader { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let h = Self::new_unchecked(buffer);
        h.check_len()?;
        Ok(h)
    }

    /// Checks that the whole header, `header_len()` bytes, is in the buffer.
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        need(2, have)?;
        need(self.header_len(), have)
    }

    /// Next Header.
    pub fn next_header(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::NEXT_HEADER)
    }

    /// Hdr Ext Len, in 8-byte units not counting the first 8 bytes.
    pub fn hdr_ext_len(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::HDR_EXT_LEN)
    }

    /// Header length in bytes: `(hdr_ext_len + 1) * 8`.
    pub fn header_len(&self) -> usize {
        (usize::from(self.hdr_ext_len()) + 1) * 8
    }

    /// Routing Type (byte 2), meaningful for a Routing header.
    pub fn routing_type(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::ROUTING_TYPE)
    }

    /// Segments Left (byte 3), meaningful for a Routing header.
    pub fn segments_left(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::SEGMENTS_LEFT)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ExtHeader<T> {
    /// Sets Next Header.
    pub fn set_next_header(&mut self, nh: u8) {
        put_u8(self.buffer.as_mut(), field::NEXT_HEADER, nh);
    }

    /// Sets Hdr Ext Len.
    pub fn set_hdr_ext_len(&mut self, len: u8) {
        put_u8(self.buffer.as_mut(), field::HDR_EXT_LEN, len);
    }

    /// Sets Segments Left (byte 3) of a Routing header.
    pub fn set_segments_left(&mut self, sl: u8) {
        put_u8(self.buffer.as_mut(), field::SEGMENTS_LEFT, sl);
    }
}

/// Zero-copy view of the Fragment header (RFC 8200 §4.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FragmentHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> FragmentHeader<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        FragmentHeader { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let h = Self::new_unchecked(buffer);
        h.check_len()?;
        Ok(h)
    }

    /// Checks that the 8 bytes are in the buffer.
    pub fn check_len(&self) -> Result<()> {
        need(FRAGMENT_HEADER_LEN, self.buffer.as_ref().len())
    }

    /// Next Header.
    pub fn next_header(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::NEXT_HEADER)
    }

    /// Fragment Offset in bytes (the field counts 8-byte units).
    pub fn frag_offset(&self) -> usize {
        usize::from(u16_at(self.buffer.as_ref(), field::FRAG_OFFSET_M) >> 3) * 8
    }

    /// M flag: more fragments follow.
    pub fn more_frags(&self) -> bool {
        u16_at(self.buffer.as_ref(), field::FRAG_OFFSET_M) & 1 != 0
    }

    /// Identification.
    pub fn ident(&self) -> u32 {
        u32_at(self.buffer.as_ref(), field::FRAG_IDENT)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> FragmentHeader<T> {
    /// Sets Next Header and clears Reserved.
    pub fn set_next_header(&mut self, nh: u8) {
        let b = self.buffer.as_mut();
        put_u8(b, field::NEXT_HEADER, nh);
        put_u8(b, field::HDR_EXT_LEN, 0);
    }

    /// Sets Fragment Offset (in bytes, a multiple of 8) and the M flag.
    pub fn set_frag_offset(&mut self, offset: usize, more: bool) {
        let w = (((offset / 8) as u16) << 3) | u16::from(more);
        put_u16(self.buffer.as_mut(), field::FRAG_OFFSET_M, w);
    }

    /// Sets Identification.
    pub fn set_ident(&mut self, ident: u32) {
        put_u32(self.buffer.as_mut(), field::FRAG_IDENT, ident);
    }
}

/// Where the first Routing header of a packet is. Offsets count from the
/// start of the IPv6 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RoutingInfo {
    /// Offset of the Routing header.
    pub offset: usize,
    /// Offset of the Next Header byte that names it (6 when it follows the
    /// IPv6 header).
    pub nh_field: usize,
    /// Routing Type (4 = SRH, RFC 8754).
    pub routing_type: u8,
    /// Segments Left.
    pub segments_left: u8,
    /// Header length in bytes, `(Hdr Ext Len + 1) * 8`.
    pub len: usize,
}

/// The result of [`walk_chain`]. Offsets count from the start of the IPv6 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChainInfo {
    /// The first Routing header, if any.
    pub routing: Option<RoutingInfo>,
    /// Offset of the first Fragment header, if any.
    pub fragment: Option<usize>,
    /// Offset of the first byte after the extension headers.
    pub upper: usize,
    /// The protocol found there (may be [`IPPROTO_NONE`](crate::IPPROTO_NONE),
    /// ESP, or anything not walked).
    pub upper_proto: u8,
    /// Offset of the Next Header byte that names `upper_proto`.
    pub upper_nh_field: usize,
}

/// Walks the extension headers of the IPv6 packet that starts at
/// `ipv6_packet[0]` (RFC 8200 §4).
///
/// The packet must pass [`Ipv6Packet::check_len`]; the walk stays inside
/// 40 + Payload Length (trailing Ethernet padding is ignored). It steps over
/// Hop-by-Hop Options (0, only directly after the IPv6 header, RFC 8200
/// §4.1, else [`Error::HopByHopNotFirst`]), Destination Options (60), Routing
/// (43), Fragment (44, 8 bytes) and AH (51, `(Payload Len + 2) * 4` bytes,
/// RFC 4302 §2.2) and stops at the first other Next Header value, which is
/// reported as `upper_proto`. A non-first fragment (offset != 0) stops the
/// walk after its Fragment header: what follows is not a header. Only the
/// first Routing header is recorded. A header that does not fit is
/// [`Error::Truncated`] with `need` and `have` counted from the IPv6 header.
pub fn walk_chain(ipv6_packet: &[u8]) -> Result<ChainInfo> {
    let ip = Ipv6Packet::new_checked(ipv6_packet)?;
    let end = ip.total_len();
    let pkt = slice(ipv6_packet, 0, end);

    let mut info = ChainInfo {
        routing: None,
        fragment: None,
        upper: Ipv6Packet::<&[u8]>::HEADER_LEN,
        upper_proto: ip.next_header(),
        upper_nh_field: crate::ipv6::NEXT_HEADER_OFFSET,
    };
    let mut nh = ip.next_header();
    let mut nh_field = crate::ipv6::NEXT_HEADER_OFFSET;
    let mut off = Ipv6Packet::<&[u8]>::HEADER_LEN;

    loop {
        let rest = slice(pkt, off, end);
        let len = match nh {
            IPPROTO_HOPOPTS | IPPROTO_DSTOPTS | IPPROTO_ROUTING => {
                if nh == IPPROTO_HOPOPTS && off != Ipv6Packet::<&[u8]>::HEADER_LEN {
                    return Err(Error::HopByHopNotFirst { nh_field });
                }
                need(off + 2, end)?;
                let h = ExtHeader::new_unchecked(rest);
                let len = h.header_len();
                need(off + len, end)?;
                if nh == IPPROTO_ROUTING && info.routing.is_none() {
                    info.routing = Some(RoutingInfo {
                        offset: off,
                        nh_field,
                        routing_type: h.routing_type(),
                        segments_left: h.segments_left(),
                        len,
                    });
                }
                len
            }
            IPPROTO_FRAGMENT => {
                need(off + FRAGMENT_HEADER_LEN, end)?;
                let f = FragmentHeader::new_unchecked(rest);
                if info.fragment.is_none() {
                    info.fragment = Some(off);
                }
                if f.frag_offset() != 0 {
                    info.upper = off + FRAGMENT_HEADER_LEN;
                    info.upper_proto = f.next_header();
                    info.upper_nh_field = off;
                    return Ok(info);
                }
                FRAGMENT_HEADER_LEN
            }
            IPPROTO_AH => {
                need(off + 2, end)?;
                let len = (usize::from(u8_at(rest, field::HDR_EXT_LEN)) + 2) * 4;
                need(off + len, end)?;
                len
            }
            other => {
                info.upper = off;
                info.upper_proto = other;
                info.upper_nh_field = nh_field;
                return Ok(info);
            }
        };
        nh = u8_at(rest, field::NEXT_HEADER);
        nh_field = off;
        off += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::*;

    /// IPv6 header with the given next header and payload length, then `rest`.
    fn packet(nh: u8, rest: &[u8]) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x60;
        p[4..6].copy_from_slice(&(rest.len() as u16).to_be_bytes());
        p[6] = nh;
        p[7] = 64;
        p.extend_from_slice(rest);
        p
    }

    // HBH(8) -> DST(8) -> RH type 4, 24 bytes, SL 1 -> FRAG(first, M) -> AH(12) -> UDP(8)
    static CHAIN: [u8; 68] = [
        60, 0, 1, 4, 0, 0, 0, 0, // HBH: nh=DST, len 0, PadN(4)
        43, 0, 1, 4, 0, 0, 0, 0, // DST: nh=RH
        44, 2, 4, 1, 0, 0, 0, 0, // RH: nh=FRAG, len 2, type 4, SL 1
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // (segment)
        51, 0, 0, 1, 0, 0, 0, 42, // FRAG: nh=AH, offset 0, M=1
        17, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, // AH: nh=UDP, payload len 1 -> 12 bytes
        0x04, 0xd2, 0x16, 0x2e, 0, 8, 0, 0, // UDP header
    ];

    #[test]
    fn walks_full_chain() {
        let p = packet(IPPROTO_HOPOPTS, &CHAIN);
        let info = walk_chain(&p).unwrap();
        assert_eq!(
            info,
            ChainInfo {
                routing: Some(RoutingInfo { offset: 56, nh_field: 48, routing_type: 4, segments_left: 1, len: 24 }),
                fragment: Some(80),
                upper: 100,
                upper_proto: IPPROTO_UDP,
                upper_nh_field: 88,
            }
        );
        // Ethernet padding after Payload Length is ignored.
        let mut padded = p.clone();
        padded.extend_from_slice(&[0xAA; 30]);
        assert_eq!(walk_chain(&padded).unwrap(), info);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let p = packet(IPPROTO_HOPOPTS, &CHAIN);
        // Shorten the buffer: the IPv6 check fails.
        for n in 0..p.len() {
            assert!(walk_chain(&p[..n]).is_err(), "buffer {n}");
        }
        // Shorten Payload Length: a header fails, except when the cut falls
        // exactly after the AH (then UDP is upper with no bytes).
        for plen in 0..60usize {
            let mut q = p.clone();
            q[4..6].copy_from_slice(&(plen as u16).to_be_bytes());
            assert!(matches!(walk_chain(&q), Err(Error::Truncated { have, .. }) if have == 40 + plen), "plen {plen}");
        }
    }

    #[test]
    fn no_extension_headers() {
        let p = packet(IPPROTO_ICMPV6, &[128, 0, 0, 0, 0, 0, 0, 0]);
        let info = walk_chain(&p).unwrap();
        assert_eq!(info.routing, None);
        assert_eq!(info.fragment, None);
        assert_eq!((info.upper, info.upper_proto, info.upper_nh_field), (40, 58, 6));
        let p = packet(IPPROTO_NONE, &[]);
        assert_eq!(walk_chain(&p).unwrap().upper_proto, IPPROTO_NONE);
    }

    #[test]
    fn non_first_fragment_stops() {
        // FRAG(offset 8) -> would-be RH bytes that must not be parsed.
        let p = packet(IPPROTO_FRAGMENT, &[43, 0, 0, 8, 0, 0, 0, 7, 0xFF, 0xFF, 0xFF, 0xFF]);
        let info = walk_chain(&p).unwrap();
        assert_eq!(info.fragment, Some(40));
        assert_eq!((info.upper, info.upper_proto, info.upper_nh_field), (48, 43, 40));
        assert_eq!(info.routing, None);
        let f = FragmentHeader::new_checked(&p[40..]).unwrap();
        assert_eq!((f.frag_offset(), f.more_frags(), f.ident()), (8, false, 7));
    }

    #[test]
    fn hop_by_hop_must_be_first() {
        let p = packet(IPPROTO_DSTOPTS, &[0, 0, 1, 4, 0, 0, 0, 0, 59, 0, 1, 4, 0, 0, 0, 0]);
        assert_eq!(walk_chain(&p), Err(Error::HopByHopNotFirst { nh_field: 40 }));
    }

    #[test]
    fn only_first_routing_header_recorded() {
        let p = packet(IPPROTO_ROUTING, &[43, 0, 0, 3, 0, 0, 0, 0, 59, 0, 4, 1, 0, 0, 0, 0]);
        let info = walk_chain(&p).unwrap();
        let r = info.routing.unwrap();
        assert_eq!((r.offset, r.nh_field, r.routing_type, r.segments_left), (40, 6, 0, 3));
        assert_eq!((info.upper, info.upper_proto, info.upper_nh_field), (56, 59, 48));
    }

    #[test]
    fn routing_type_offset() {
        // scapy: bytes(IPv6ExtHdrRouting(type=0, segleft=2, addresses=["2001:db8::1"]))
        let mut rh: [u8; 24] = [
            0x3b, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        ];
        assert_eq!(ROUTING_TYPE_OFFSET, 2);
        rh[ROUTING_TYPE_OFFSET] = 253;
        let h = ExtHeader::new_checked(&rh[..]).unwrap();
        assert_eq!((h.routing_type(), h.segments_left(), h.header_len()), (253, 2, 24));
        let p = packet(IPPROTO_ROUTING, &rh);
        let r = walk_chain(&p).unwrap().routing.unwrap();
        assert_eq!(p[r.offset + ROUTING_TYPE_OFFSET], r.routing_type);
    }

    #[test]
    fn ext_header_view() {
        let mut b = [43u8, 2, 4, 1, 0, 0, 0, 0];
        assert_eq!(ExtHeader::new_checked(&b[..]).unwrap_err(), Error::Truncated { need: 24, have: 8 });
        b[1] = 0;
        let mut h = ExtHeader::new_checked(&mut b[..]).unwrap();
        assert_eq!((h.next_header(), h.header_len(), h.routing_type()), (43, 8, 4));
        h.set_segments_left(0);
        h.set_next_header(17);
        h.set_hdr_ext_len(0);
        assert_eq!((h.next_header(), h.hdr_ext_len(), h.segments_left()), (17, 0, 0));
        assert_eq!(b, [17, 0, 4, 0, 0, 0, 0, 0]);
        let mut f = [0u8; 8];
        let mut fh = FragmentHeader::new_checked(&mut f[..]).unwrap();
        fh.set_next_header(17);
        fh.set_frag_offset(1232, true);
        fh.set_ident(0xdeadbeef);
        assert_eq!(f, [17, 0, 0x04, 0xd1, 0xde, 0xad, 0xbe, 0xef]);
        for n in 0..8 {
            assert!(FragmentHeader::new_checked(&f[..n]).is_err());
        }
    }
}
