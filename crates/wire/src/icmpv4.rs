//! ICMP for IPv4 (RFC 792): the 8-byte header of the error messages sr6 sends
//! (Destination Unreachable, Time Exceeded; RFC 1812 §4.3.2) and its checksum
//! (RFC 1071, over the ICMP message only: there is no pseudo-header).
//!
//! An [`Icmpv4Packet`] covers exactly one message: slice the buffer to the IPv4
//! payload first.

use crate::bytes::{need, put_u16, put_u32, put_u8, u8_at};
use crate::checksum;
use crate::Result;

/// Destination Unreachable (RFC 792).
pub const DST_UNREACH: u8 = 3;
/// Time Exceeded (RFC 792).
pub const TIME_EXCEEDED: u8 = 11;

/// Destination Unreachable code 0: net unreachable (RFC 792; no route, RFC 1812
/// §5.2.7.1).
pub const DU_NET_UNREACH: u8 = 0;
/// Destination Unreachable code 4: fragmentation needed and DF set (RFC 792, RFC 1191 §4).
pub const DU_FRAG_NEEDED: u8 = 4;
/// Destination Unreachable code 1: host unreachable (RFC 792; what Linux answers for an
/// `unreachable` route, RFC 1812 §5.2.7.1).
pub const DU_HOST_UNREACH: u8 = 1;

mod field {
    //! RFC 792 (Destination Unreachable, Time Exceeded, Parameter Problem, ...):
    //! ```text
    //!  0                   1                   2                   3
    //!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |     Type      |     Code      |          Checksum             |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |       unused / Pointer / Gateway / Identifier + Sequence      |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! |      Internet Header + 64 bits of Original Data Datagram      |
    //! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    //! ```
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: usize = 2;
    pub const PARAM: usize = 4;
}

/// Zero-copy view of one ICMP (IPv4) message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icmpv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Icmpv4Packet<T> {
    /// Type, Code, Checksum and the 4-byte parameter.
    pub const HEADER_LEN: usize = 8;

    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        Icmpv4Packet { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the 8-byte header is there (every message of RFC 792 has
    /// at least 8 bytes).
    pub fn check_len(&self) -> Result<()> {
        need(Self::HEADER_LEN, self.buffer.as_ref().len())
    }

    /// Type.
    pub fn msg_type(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::TYPE)
    }

    /// True unless Type is one of the queries and replies of RFC 792 and
    /// RFC 950 (Echo Reply 0, Echo 8, Timestamp 13 and its reply 14,
    /// Information Request 15 and its reply 16, Address Mask Request 17 and
    /// its reply 18): an error, or a type not known here, which is treated as
    /// one. No ICMP error is sent about an ICMP error (RFC 1812 §4.3.2.7).
    pub fn is_error(&self) -> bool {
        !matches!(self.msg_type(), 0 | 8 | 13..=18)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Icmpv4Packet<T> {
    /// Sets Type.
    pub fn set_msg_type(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::TYPE, v);
    }

    /// Sets Code.
    pub fn set_code(&mut self, v: u8) {
        put_u8(self.buffer.as_mut(), field::CODE, v);
    }

    /// Sets Checksum.
    pub fn set_checksum(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    /// Sets the 4-byte parameter.
    pub fn set_param(&mut self, v: u32) {
        put_u32(self.buffer.as_mut(), field::PARAM, v);
    }

    /// Computes the checksum over the whole buffer (RFC 792: the ICMP message
    /// starting with the Type).
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::fold(checksum::sum(self.buffer.as_ref()));
        self.set_checksum(c);
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Icmpv4Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// High-level representation of an ICMP (IPv4) error header: type, code and
/// the 4-byte parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Icmpv4Repr {
    /// Type.
    pub msg_type: u8,
    /// Code.
    pub code: u8,
    /// Pointer, next-hop MTU or zero.
    pub param: u32,
}

impl Icmpv4Repr {
    /// Time Exceeded, code 0: time to live exceeded in transit (RFC 792).
    pub const fn ttl_exceeded() -> Self {
        Icmpv4Repr { msg_type: TIME_EXCEEDED, code: 0, param: 0 }
    }

    /// Destination Unreachable with `code` (RFC 792; e.g. [`DU_NET_UNREACH`]).
    pub const fn dst_unreachable(code: u8) -> Self {
        Icmpv4Repr { msg_type: DST_UNREACH, code, param: 0 }
    }

    /// Destination Unreachable, code 4 (fragmentation needed and DF set), with the
    /// next-hop MTU in the low 16 bits of the second word (RFC 1191 §4).
    pub const fn frag_needed(mtu: u16) -> Self {
        Icmpv4Repr { msg_type: DST_UNREACH, code: DU_FRAG_NEEDED, param: mtu as u32 }
    }

    /// Header length this repr emits: 8.
    pub const fn buffer_len(&self) -> usize {
        8
    }

    /// Writes the header into the first 8 bytes of `packet`, whose body (the
    /// quoted invoking datagram) is already in place after them, then the
    /// checksum over the whole buffer: an error built in place, with no copy
    /// of the quote.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Icmpv4Packet<T>) {
        packet.set_msg_type(self.msg_type);
        packet.set_code(self.code);
        packet.set_param(self.param);
        packet.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    // scapy: bytes(IP(src="192.0.2.1", dst="198.51.100.7", tos=0xc0, ttl=64, id=0)
    //              / ICMP(type=11, code=0)
    //              / bytes(IP(src="198.51.100.7", dst="192.0.2.9", ttl=1, id=0x1234, proto=17)
    //                      / UDP(sport=1000, dport=2000))[:28])[20:]
    static TIME_EXCEEDED_BYTES: [u8; 36] = [
        0x0b, 0x00, 0xe1, 0x5d, 0x00, 0x00, 0x00, 0x00, // type 11, code 0, checksum, unused
        0x45, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x00, 0x00, 0x01, 0x11, 0xbb, 0x59, 0xc6, 0x33, 0x64, 0x07, 0xc0, 0x00,
        0x02, 0x09, // the invoking IPv4 header
        0x03, 0xe8, 0x07, 0xd0, 0x00, 0x08, 0x07, 0xe2, // and its first 8 bytes of data
    ];

    #[test]
    fn parse() {
        let p = Icmpv4Packet::new_checked(&TIME_EXCEEDED_BYTES[..]).unwrap();
        assert_eq!(p.msg_type(), TIME_EXCEEDED);
        assert!(p.is_error());
        // scapy: bytes(ICMP(type=8, id=0x1234, seq=7)): a query, no error.
        let b = [0x08, 0x00, 0xe5, 0xc4, 0x12, 0x34, 0x00, 0x07];
        let p = Icmpv4Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.msg_type(), 8);
        assert!(!p.is_error());
        for t in [0u8, 8, 13, 14, 15, 16, 17, 18] {
            assert!(!Icmpv4Packet::new_unchecked(&[t][..]).is_error(), "type {t}");
        }
        for t in [3u8, 4, 5, 11, 12, 19, 255] {
            assert!(Icmpv4Packet::new_unchecked(&[t][..]).is_error(), "type {t}");
        }
    }

    #[test]
    fn emit() {
        let mut buf = TIME_EXCEEDED_BYTES;
        buf[..8].fill(0xFF);
        let repr = Icmpv4Repr::ttl_exceeded();
        assert_eq!(repr, Icmpv4Repr { msg_type: TIME_EXCEEDED, code: 0, param: 0 });
        assert_eq!(repr.buffer_len(), 8);
        assert_eq!(Icmpv4Repr::dst_unreachable(DU_NET_UNREACH), Icmpv4Repr { msg_type: 3, code: 0, param: 0 });
        repr.emit(&mut Icmpv4Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, TIME_EXCEEDED_BYTES);
        // scapy: bytes(ICMP(type=3, code=4, nexthopmtu=1400) / b"\x01\x02\x03\x04")
        let mut c = [0u8; 12];
        c[8..].copy_from_slice(&[1, 2, 3, 4]);
        let repr = Icmpv4Repr { param: 1400, ..Icmpv4Repr::dst_unreachable(4) };
        repr.emit(&mut Icmpv4Packet::new_unchecked(&mut c[..]));
        assert_eq!(c, [0x03, 0x04, 0xf3, 0x7d, 0x00, 0x00, 0x05, 0x78, 1, 2, 3, 4]);
    }

    #[test]
    fn truncated_prefixes() {
        for n in 0..Icmpv4Packet::<&[u8]>::HEADER_LEN {
            let p = Icmpv4Packet::new_unchecked(&TIME_EXCEEDED_BYTES[..n]);
            assert_eq!(p.check_len(), Err(Error::Truncated { need: 8, have: n }));
        }
        // Writes past a short buffer are dropped.
        let mut b = [0u8; 3];
        Icmpv4Repr::ttl_exceeded().emit(&mut Icmpv4Packet::new_unchecked(&mut b[..]));
        assert_eq!(b[..2], [TIME_EXCEEDED, 0]);
    }
}
