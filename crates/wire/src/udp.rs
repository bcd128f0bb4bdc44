//! The UDP header (RFC 768).
//!
//! Its checksum covers an IPv4 (RFC 768) or IPv6 (RFC 8200 §8.1)
//! pseudo-header — with an SRH, whose destination is the *final* one,
//! Segment List\[0\] — see [`crate::checksum`]; sr6 forwards UDP without
//! touching it.

use crate::bytes::{need, put_u16, u16_at};
use crate::{Error, Result};

mod field {
    //! RFC 768:
    //! ```text
    //!  0      7 8     15 16    23 24    31
    //! +--------+--------+--------+--------+
    //! |     Source      |   Destination   |
    //! |      Port       |      Port       |
    //! +--------+--------+--------+--------+
    //! |     Length      |    Checksum     |
    //! +--------+--------+--------+--------+
    //! |          data octets ...
    //! +---------------- ...
    //! ```
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const LENGTH: usize = 4;
    pub const CHECKSUM: usize = 6;
}

/// Zero-copy view of a UDP datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Header length.
    pub const HEADER_LEN: usize = 8;

    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the header is there, that Length >= 8 and that Length bytes
    /// fit in the buffer (a longer buffer is accepted).
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        need(Self::HEADER_LEN, have)?;
        let len = usize::from(self.len());
        if len < Self::HEADER_LEN {
            return Err(Error::BadTotalLen { len, min: Self::HEADER_LEN });
        }
        need(len, have)
    }

    /// Source Port.
    pub fn src_port(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::SRC_PORT)
    }

    /// Destination Port.
    pub fn dst_port(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::DST_PORT)
    }

    /// Length: header plus data, in bytes.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::LENGTH)
    }

    /// Checksum.
    pub fn checksum(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::CHECKSUM)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    /// Sets Source Port.
    pub fn set_src_port(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::SRC_PORT, v);
    }

    /// Sets Destination Port.
    pub fn set_dst_port(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::DST_PORT, v);
    }

    /// Sets Length.
    pub fn set_len(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::LENGTH, v);
    }

    /// Sets Checksum.
    pub fn set_checksum(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::CHECKSUM, v);
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for UdpPacket<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // scapy 2.6: bytes(IPv6(src="2001:db8::1", dst="fc00:2::1", hlim=64)
    //     / IPv6ExtHdrSegmentRouting(addresses=["fc00:3::1", "fc00:2::1"], segleft=1)
    //     / UDP(sport=1234, dport=5678) / b"hello srv6")[80:]
    static BYTES: [u8; 18] = [
        0x04, 0xd2, 0x16, 0x2e, 0x00, 0x12, 0x8d, 0x70, // UDP 1234 -> 5678, len 18, checksum
        b'h', b'e', b'l', b'l', b'o', b' ', b's', b'r', b'v', b'6',
    ];

    #[test]
    fn parse() {
        let p = UdpPacket::new_checked(&BYTES[..]).unwrap();
        assert_eq!((p.src_port(), p.dst_port(), p.len(), p.checksum()), (1234, 5678, 18, 0x8d70));
        // Ethernet padding after Length is fine.
        let mut padded = [0u8; 26];
        padded[..18].copy_from_slice(&BYTES);
        assert!(UdpPacket::new_checked(&padded[..]).is_ok());
    }

    #[test]
    fn setters() {
        let mut buf = BYTES;
        buf[..8].fill(0xFF);
        let mut p = UdpPacket::new_unchecked(&mut buf[..]);
        p.set_src_port(1234);
        p.set_dst_port(5678);
        p.set_len(18);
        p.set_checksum(0x8d70);
        assert_eq!(buf, BYTES);
        // Writes past a short buffer are dropped.
        let mut short = [0u8; 5];
        let mut p = UdpPacket::new_unchecked(&mut short[..]);
        p.set_len(18);
        p.set_checksum(1);
        assert_eq!(short, [0; 5]);
    }

    #[test]
    fn truncated_prefixes() {
        for n in 0..BYTES.len() {
            assert!(UdpPacket::new_checked(&BYTES[..n]).is_err(), "len {n}");
        }
        let mut b = BYTES;
        b[5] = 7;
        assert_eq!(UdpPacket::new_checked(&b[..]).unwrap_err(), Error::BadTotalLen { len: 7, min: 8 });
    }
}
