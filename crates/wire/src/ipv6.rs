//! The IPv6 fixed header (RFC 8200 §3).
//!
//! The view covers the 40-byte header and its payload of Payload Length bytes;
//! a buffer longer than 40 + Payload Length is accepted (Ethernet padding) and
//! [`Ipv6Packet::payload`] stops at Payload Length. Jumbograms (RFC 2675,
//! Payload Length 0 with a Jumbo option) are not supported: they read as an
//! empty payload. Protocol numbers live in [`crate::proto`].

use std::net::Ipv6Addr;

use crate::bytes::{array, need, put, put_u16, put_u32, put_u8, slice, slice_mut, u16_at, u32_at, u8_at};
use crate::{Error, Result};

mod field {
    //! RFC 8200 §3:
    //! ```text
    //!  0                   1                   2                   3
    //!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |Version| Traffic Class |           Flow Label                  |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |         Payload Length        |  Next Header  |   Hop Limit   |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |                                                               |
    //! +                         Source Address                        +
    //! |                          (16 bytes)                           |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |                                                               |
    //! +                      Destination Address                      +
    //! |                          (16 bytes)                           |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! ```
    pub const VER_TC_FLOW: usize = 0;
    pub const LENGTH: usize = 4;
    pub const NEXT_HEADER: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC: usize = 8;
    pub const DST: usize = 24;
    pub const PAYLOAD: usize = 40;
}

/// Offset of the Next Header byte in the IPv6 header.
pub const NEXT_HEADER_OFFSET: usize = field::NEXT_HEADER;
/// Offset of the Hop Limit byte in the IPv6 header.
pub const HOP_LIMIT_OFFSET: usize = field::HOP_LIMIT;
/// Offset of the Payload Length field in the IPv6 header.
pub const PAYLOAD_LEN_OFFSET: usize = field::LENGTH;
/// Offset of the Source Address in the IPv6 header.
pub const SRC_ADDR_OFFSET: usize = field::SRC;
/// Offset of the Destination Address in the IPv6 header.
pub const DST_ADDR_OFFSET: usize = field::DST;

/// Zero-copy view of an IPv6 packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    /// Length of the fixed header.
    pub const HEADER_LEN: usize = 40;

    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv6Packet { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the 40-byte header is there, that the version is 6 and
    /// that 40 + Payload Length bytes fit in the buffer.
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        need(Self::HEADER_LEN, have)?;
        if self.version() != 6 {
            return Err(Error::BadVersion(self.version()));
        }
        need(self.total_len(), have)
    }

    /// Version (6).
    pub fn version(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::VER_TC_FLOW) >> 4
    }

    /// Traffic Class (DSCP and ECN).
    pub fn traffic_class(&self) -> u8 {
        ((u16_at(self.buffer.as_ref(), field::VER_TC_FLOW) >> 4) & 0xFF) as u8
    }

    /// Flow Label (20 bits).
    pub fn flow_label(&self) -> u32 {
        u32_at(self.buffer.as_ref(), field::VER_TC_FLOW) & 0x000F_FFFF
    }

    /// Payload Length: bytes after the fixed header, extension headers included.
    pub fn payload_len(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::LENGTH)
    }

    /// 40 + Payload Length.
    pub fn total_len(&self) -> usize {
        Self::HEADER_LEN + usize::from(self.payload_len())
    }

    /// Next Header.
    pub fn next_header(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::NEXT_HEADER)
    }

    /// Hop Limit.
    pub fn hop_limit(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::HOP_LIMIT)
    }

    /// Source Address.
    pub fn src_addr(&self) -> Ipv6Addr {
        Ipv6Addr::from(array::<16>(self.buffer.as_ref(), field::SRC))
    }

    /// Destination Address.
    pub fn dst_addr(&self) -> Ipv6Addr {
        Ipv6Addr::from(array::<16>(self.buffer.as_ref(), field::DST))
    }

    /// The Payload Length bytes after the fixed header (padding excluded).
    pub fn payload(&self) -> &[u8] {
        slice(self.buffer.as_ref(), field::PAYLOAD, self.total_len())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Packet<T> {
    /// Sets Version, keeping Traffic Class and Flow Label.
    pub fn set_version(&mut self, version: u8) {
        let b = self.buffer.as_mut();
        let v = (u8_at(b, field::VER_TC_FLOW) & 0x0F) | (version << 4);
        put_u8(b, field::VER_TC_FLOW, v);
    }

    /// Sets Traffic Class, keeping Version and Flow Label.
    pub fn set_traffic_class(&mut self, tc: u8) {
        let b = self.buffer.as_mut();
        let w = (u16_at(b, field::VER_TC_FLOW) & 0xF00F) | (u16::from(tc) << 4);
        put_u16(b, field::VER_TC_FLOW, w);
    }

    /// Sets Flow Label (low 20 bits of `label`), keeping Version and Traffic Class.
    pub fn set_flow_label(&mut self, label: u32) {
        let b = self.buffer.as_mut();
        let w = (u32_at(b, field::VER_TC_FLOW) & 0xFFF0_0000) | (label & 0x000F_FFFF);
        put_u32(b, field::VER_TC_FLOW, w);
    }

    /// Sets Payload Length.
    pub fn set_payload_len(&mut self, len: u16) {
        put_u16(self.buffer.as_mut(), field::LENGTH, len);
    }

    /// Sets Next Header.
    pub fn set_next_header(&mut self, nh: u8) {
        put_u8(self.buffer.as_mut(), field::NEXT_HEADER, nh);
    }

    /// Sets Hop Limit.
    pub fn set_hop_limit(&mut self, hl: u8) {
        put_u8(self.buffer.as_mut(), field::HOP_LIMIT, hl);
    }

    /// Sets the Source Address.
    pub fn set_src_addr(&mut self, a: &Ipv6Addr) {
        put(self.buffer.as_mut(), field::SRC, a.octets());
    }

    /// Sets the Destination Address.
    pub fn set_dst_addr(&mut self, a: &Ipv6Addr) {
        put(self.buffer.as_mut(), field::DST, a.octets());
    }

    /// Mutable Payload Length bytes after the fixed header.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = self.total_len();
        slice_mut(self.buffer.as_mut(), field::PAYLOAD, end)
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Ipv6Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// High-level representation of the IPv6 fixed header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Repr {
    /// Source Address.
    pub src_addr: Ipv6Addr,
    /// Destination Address.
    pub dst_addr: Ipv6Addr,
    /// Next Header.
    pub next_header: u8,
    /// Payload Length.
    pub payload_len: u16,
    /// Hop Limit.
    pub hop_limit: u8,
    /// Traffic Class.
    pub traffic_class: u8,
    /// Flow Label (20 bits).
    pub flow_label: u32,
}

impl Ipv6Repr {
    /// Parses the fixed header (runs `check_len`).
    pub fn parse<T: AsRef<[u8]>>(packet: &Ipv6Packet<T>) -> Result<Self> {
        packet.check_len()?;
        Ok(Ipv6Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            next_header: packet.next_header(),
            payload_len: packet.payload_len(),
            hop_limit: packet.hop_limit(),
            traffic_class: packet.traffic_class(),
            flow_label: packet.flow_label(),
        })
    }

    /// Header length this repr emits: 40.
    pub const fn buffer_len(&self) -> usize {
        40
    }

    /// Writes the 40-byte fixed header into `packet` (Flow Label is masked to 20 bits).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Ipv6Packet<T>) {
        let first = (6u32 << 28) | (u32::from(self.traffic_class) << 20) | (self.flow_label & 0xF_FFFF);
        put_u32(packet.buffer.as_mut(), field::VER_TC_FLOW, first);
        packet.set_payload_len(self.payload_len);
        packet.set_next_header(self.next_header);
        packet.set_hop_limit(self.hop_limit);
        packet.set_src_addr(&self.src_addr);
        packet.set_dst_addr(&self.dst_addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::IPPROTO_UDP;
    use proptest::prelude::*;

    // scapy: bytes(IPv6(src="2001:db8::1", dst="2001:db8::2", tc=0xb8,
    //                   fl=0x12345, hlim=64, nh=17, plen=4)) + b"\xde\xad\xbe\xef"
    static BYTES: [u8; 44] = [
        0x6b, 0x81, 0x23, 0x45, 0x00, 0x04, 0x11, 0x40, // ver/tc/fl, plen, nh, hlim
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // src
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, // dst
        0xde, 0xad, 0xbe, 0xef, // payload
    ];
    static REPR: Ipv6Repr = Ipv6Repr {
        src_addr: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1),
        dst_addr: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2),
        next_header: IPPROTO_UDP,
        payload_len: 4,
        hop_limit: 64,
        traffic_class: 0xb8,
        flow_label: 0x12345,
    };

    #[test]
    fn parse() {
        let p = Ipv6Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!(p.traffic_class(), 0xb8);
        assert_eq!(p.flow_label(), 0x12345);
        assert_eq!(p.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(Ipv6Repr::parse(&p).unwrap(), REPR);
    }

    #[test]
    fn emit() {
        let mut buf = [0xFFu8; 44];
        REPR.emit(&mut Ipv6Packet::new_unchecked(&mut buf[..]));
        buf[40..].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(buf, BYTES);
    }

    #[test]
    fn truncated_prefixes() {
        for n in 0..BYTES.len() {
            assert!(Ipv6Packet::new_checked(&BYTES[..n]).is_err(), "len {n}");
        }
        assert_eq!(Ipv6Packet::new_checked(&BYTES[..43]).unwrap_err(), Error::Truncated { need: 44, have: 43 });
        let mut b = BYTES;
        b[0] = 0x4b;
        assert_eq!(Ipv6Packet::new_checked(&b[..]).unwrap_err(), Error::BadVersion(4));
        let mut padded = [0u8; 60];
        padded[..44].copy_from_slice(&BYTES);
        assert_eq!(Ipv6Packet::new_checked(&padded[..]).unwrap().payload().len(), 4);
    }

    #[test]
    fn setters_keep_neighbours() {
        let mut b = BYTES;
        let mut p = Ipv6Packet::new_checked(&mut b[..]).unwrap();
        p.set_traffic_class(0x01);
        assert_eq!((p.version(), p.traffic_class(), p.flow_label()), (6, 0x01, 0x12345));
        p.set_flow_label(0xFFFF_FFFF);
        assert_eq!((p.version(), p.traffic_class(), p.flow_label()), (6, 0x01, 0xF_FFFF));
        p.set_version(6);
        assert_eq!((p.version(), p.traffic_class(), p.flow_label()), (6, 0x01, 0xF_FFFF));
        p.set_hop_limit(1);
        p.set_next_header(59);
        p.set_payload_len(0);
        assert_eq!(p.payload_mut().len(), 0);
        assert_eq!((p.hop_limit(), p.next_header()), (1, 59));
    }

    proptest! {
        #[test]
        fn round_trip(src in any::<[u8; 16]>(), dst in any::<[u8; 16]>(), next_header in any::<u8>(),
                      payload_len in 0u16..200, hop_limit in any::<u8>(), traffic_class in any::<u8>(),
                      flow_label in 0u32..0x10_0000) {
            let repr = Ipv6Repr { src_addr: src.into(), dst_addr: dst.into(), next_header,
                                  payload_len, hop_limit, traffic_class, flow_label };
            let mut buf = vec![0xFFu8; 40 + usize::from(payload_len)];
            repr.emit(&mut Ipv6Packet::new_unchecked(&mut buf[..]));
            let p = Ipv6Packet::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(Ipv6Repr::parse(&p).unwrap(), repr);
        }
    }
}
