//! UDP (RFC 768) and its checksum over the IPv4 (RFC 768) or IPv6
//! (RFC 8200 §8.1) pseudo-header.
//!
//! With an SRH, the IPv6 pseudo-header destination is the *final*
//! destination, Segment List\[0\] (RFC 8200 §8.1, RFC 8754 §2): pass
//! [`final_destination`](crate::srh::final_destination) as `dst`, not the
//! current IPv6 Destination Address. Over IPv6 a zero checksum is invalid
//! (RFC 8200 §8.1) and a computed zero is sent as 0xFFFF (RFC 768).

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::bytes::{need, put_u16, slice, slice_mut, u16_at};
use crate::checksum;
use crate::proto::IPPROTO_UDP;
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

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
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

    /// The datagram, Length bytes of it.
    pub fn datagram(&self) -> &[u8] {
        slice(self.buffer.as_ref(), 0, usize::from(self.len()))
    }

    /// Data: bytes 8 to Length.
    pub fn payload(&self) -> &[u8] {
        slice(self.buffer.as_ref(), Self::HEADER_LEN, usize::from(self.len()))
    }

    /// Ones'-complement sum of the datagram with the IPv6 pseudo-header;
    /// `fold` of it is 0 when the checksum field is right.
    fn sum_v6(&self, src: &Ipv6Addr, dst: &Ipv6Addr) -> u32 {
        let d = self.datagram();
        checksum::pseudo_header_v6(src, dst, d.len() as u32, IPPROTO_UDP) + checksum::sum(d)
    }

    fn sum_v4(&self, src: &Ipv4Addr, dst: &Ipv4Addr) -> u32 {
        let d = self.datagram();
        checksum::pseudo_header_v4(src, dst, d.len() as u16, IPPROTO_UDP) + checksum::sum(d)
    }

    /// True when the checksum verifies with the IPv6 pseudo-header
    /// (`dst` = final destination). A zero checksum is invalid over IPv6
    /// (RFC 8200 §8.1).
    pub fn verify_checksum_v6(&self, src: &Ipv6Addr, dst: &Ipv6Addr) -> bool {
        self.datagram().len() >= Self::HEADER_LEN && self.checksum() != 0 && checksum::fold(self.sum_v6(src, dst)) == 0
    }

    /// True when the checksum verifies with the IPv4 pseudo-header; a zero
    /// checksum means "none" and verifies (RFC 768).
    pub fn verify_checksum_v4(&self, src: &Ipv4Addr, dst: &Ipv4Addr) -> bool {
        self.datagram().len() >= Self::HEADER_LEN
            && (self.checksum() == 0 || checksum::fold(self.sum_v4(src, dst)) == 0)
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

    /// Mutable data, bytes 8 to Length.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.len());
        slice_mut(self.buffer.as_mut(), Self::HEADER_LEN, end)
    }

    /// Computes the checksum over the IPv6 pseudo-header (`dst` = final
    /// destination) and the Length bytes of the datagram.
    pub fn fill_checksum_v6(&mut self, src: &Ipv6Addr, dst: &Ipv6Addr) {
        self.set_checksum(0);
        let c = checksum::fold(self.sum_v6(src, dst));
        self.set_checksum(if c == 0 { 0xFFFF } else { c });
    }

    /// Computes the checksum over the IPv4 pseudo-header and the datagram.
    pub fn fill_checksum_v4(&mut self, src: &Ipv4Addr, dst: &Ipv4Addr) {
        self.set_checksum(0);
        let c = checksum::fold(self.sum_v4(src, dst));
        self.set_checksum(if c == 0 { 0xFFFF } else { c });
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for UdpPacket<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// High-level representation of a UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UdpRepr {
    /// Source Port.
    pub src_port: u16,
    /// Destination Port.
    pub dst_port: u16,
    /// Data length in bytes (Length - 8).
    pub payload_len: u16,
}

impl UdpRepr {
    /// Parses the header (runs `check_len`; the checksum needs the IP
    /// addresses, so verify it with `verify_checksum_v6`/`_v4`).
    pub fn parse<T: AsRef<[u8]>>(packet: &UdpPacket<T>) -> Result<Self> {
        packet.check_len()?;
        Ok(UdpRepr { src_port: packet.src_port(), dst_port: packet.dst_port(), payload_len: packet.len() - 8 })
    }

    /// Datagram length: 8 + payload_len.
    pub const fn buffer_len(&self) -> usize {
        8 + self.payload_len as usize
    }

    /// Writes the header with a zero checksum; write the data, then call
    /// `fill_checksum_v6`/`_v4`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut UdpPacket<T>) {
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_len(self.payload_len.saturating_add(8));
        packet.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::walk_chain;
    use crate::ipv6::Ipv6Packet;
    use crate::srh::{final_destination, SrhPacket};
    use proptest::prelude::*;

    static BYTES: [u8; 12] = [0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0c, 0x00, 0x00, 1, 2, 3, 4];
    static REPR: UdpRepr = UdpRepr { src_port: 1234, dst_port: 5678, payload_len: 4 };

    /// scapy 2.6:
    /// ```text
    /// bytes(IPv6(src="2001:db8::1", dst="fc00:2::1", hlim=64)
    ///       / IPv6ExtHdrSegmentRouting(addresses=["fc00:3::1", "fc00:2::1"], segleft=1)
    ///       / UDP(sport=1234, dport=5678) / b"hello srv6")
    /// ```
    /// scapy's `in6_pseudoheader` uses `addresses[0]` (the final destination)
    /// when an SRH with Segments Left != 0 is present.
    static SRV6_UDP: [u8; 98] = [
        0x60, 0x00, 0x00, 0x00, 0x00, 0x3a, 0x2b, 0x40, // IPv6: plen 58, nh 43
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // src 2001:db8::1
        0xfc, 0x00, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // dst fc00:2::1
        0x11, 0x04, 0x04, 0x01, 0x01, 0x00, 0x00, 0x00, // SRH: nh 17, len 4, SL 1, LE 1
        0xfc, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // [0] fc00:3::1
        0xfc, 0x00, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // [1] fc00:2::1
        0x04, 0xd2, 0x16, 0x2e, 0x00, 0x12, 0x8d, 0x70, // UDP 1234 -> 5678, len 18
        b'h', b'e', b'l', b'l', b'o', b' ', b's', b'r', b'v', b'6',
    ];

    /// RFC 1071 §1 written out plainly over the bytes given.
    fn rfc1071(data: &[u8]) -> u16 {
        let mut s: u32 = 0;
        for pair in data.chunks(2) {
            let word = (u32::from(pair[0]) << 8) | u32::from(*pair.get(1).unwrap_or(&0));
            s += word;
        }
        while s > 0xFFFF {
            s = (s & 0xFFFF) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn parse() {
        let p = UdpPacket::new_checked(&BYTES[..]).unwrap();
        assert_eq!((p.src_port(), p.dst_port(), p.len(), p.checksum()), (1234, 5678, 12, 0));
        assert_eq!(p.payload(), &[1, 2, 3, 4]);
        assert_eq!(UdpRepr::parse(&p).unwrap(), REPR);
    }

    #[test]
    fn emit() {
        let mut buf = [0xFFu8; 12];
        REPR.emit(&mut UdpPacket::new_unchecked(&mut buf[..]));
        buf[8..].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(buf, BYTES);
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

    #[test]
    fn srv6_known_answer() {
        let ip = Ipv6Packet::new_checked(&SRV6_UDP[..]).unwrap();
        let chain = walk_chain(&SRV6_UDP).unwrap();
        let rh = chain.routing.unwrap();
        assert_eq!((rh.offset, rh.len, chain.upper, chain.upper_proto), (40, 40, 80, 17));
        let srh = SrhPacket::new_checked(&SRV6_UDP[rh.offset..rh.offset + rh.len]).unwrap();
        let final_dst = final_destination(&srh);
        assert_eq!(final_dst, "fc00:3::1".parse::<Ipv6Addr>().unwrap());
        assert_ne!(final_dst, ip.dst_addr());

        // Independent computation: the pseudo-header of RFC 8200 §8.1 laid out
        // byte by byte, then the datagram with a zero checksum, summed by the
        // plain RFC 1071 loop above.
        let udp_bytes = &SRV6_UDP[chain.upper..];
        let mut plain = Vec::new();
        plain.extend_from_slice(&ip.src_addr().octets());
        plain.extend_from_slice(&final_dst.octets());
        plain.extend_from_slice(&(udp_bytes.len() as u32).to_be_bytes());
        plain.extend_from_slice(&[0, 0, 0, 17]);
        plain.extend_from_slice(&udp_bytes[..6]);
        plain.extend_from_slice(&[0, 0]);
        plain.extend_from_slice(&udp_bytes[8..]);
        assert_eq!(rfc1071(&plain), 0x8d70);

        let udp = UdpPacket::new_checked(udp_bytes).unwrap();
        assert_eq!(udp.checksum(), 0x8d70);
        assert!(udp.verify_checksum_v6(&ip.src_addr(), &final_dst));
        // The current destination (Segments Left = 1) is the wrong one.
        assert!(!udp.verify_checksum_v6(&ip.src_addr(), &ip.dst_addr()));

        let mut copy = SRV6_UDP;
        let mut udp = UdpPacket::new_checked(&mut copy[80..]).unwrap();
        udp.set_checksum(0x1234);
        udp.fill_checksum_v6(&ip.src_addr(), &final_dst);
        assert_eq!(copy, SRV6_UDP);
    }

    #[test]
    fn v4_checksum() {
        // scapy: bytes(IP(src="192.0.2.1", dst="198.51.100.2")/UDP(sport=1234, dport=5678)/b"\x01\x02\x03\x04")[20:]
        let src = Ipv4Addr::new(192, 0, 2, 1);
        let dst = Ipv4Addr::new(198, 51, 100, 2);
        let mut b = BYTES;
        let mut p = UdpPacket::new_checked(&mut b[..]).unwrap();
        assert!(p.verify_checksum_v4(&src, &dst)); // zero = no checksum
        p.fill_checksum_v4(&src, &dst);
        assert!(p.verify_checksum_v4(&src, &dst));
        let mut plain = Vec::new();
        plain.extend_from_slice(&src.octets());
        plain.extend_from_slice(&dst.octets());
        plain.extend_from_slice(&[0, 17, 0, 12]);
        plain.extend_from_slice(&BYTES);
        assert_eq!(p.checksum(), rfc1071(&plain));
        assert_eq!(p.checksum(), V4_CSUM);
        let v6 = Ipv6Addr::LOCALHOST;
        let mut b = BYTES;
        let p = UdpPacket::new_checked(&mut b[..]).unwrap();
        assert!(!p.verify_checksum_v6(&v6, &v6)); // zero is invalid over IPv6
    }

    const V4_CSUM: u16 = 0xf498;

    proptest! {
        #[test]
        fn round_trip(src_port in any::<u16>(), dst_port in any::<u16>(),
                      payload in proptest::collection::vec(any::<u8>(), 0..300),
                      src in any::<[u8; 16]>(), dst in any::<[u8; 16]>()) {
            let repr = UdpRepr { src_port, dst_port, payload_len: payload.len() as u16 };
            let mut buf = vec![0xFFu8; repr.buffer_len()];
            let mut p = UdpPacket::new_unchecked(&mut buf[..]);
            repr.emit(&mut p);
            p.payload_mut().copy_from_slice(&payload);
            let (s, d) = (Ipv6Addr::from(src), Ipv6Addr::from(dst));
            p.fill_checksum_v6(&s, &d);
            let p = UdpPacket::new_checked(&buf[..]).unwrap();
            prop_assert!(p.verify_checksum_v6(&s, &d));
            prop_assert_eq!(UdpRepr::parse(&p).unwrap(), repr);
            prop_assert_eq!(p.payload(), &payload[..]);
        }
    }
}
