//! Ethernet II frames with an optional IEEE 802.1Q VLAN tag (RFC 894 for IP
//! over Ethernet, IEEE 802.1Q §9.3 for the tag).
//!
//! Only one tag is understood: a frame whose outer EtherType is 0x8100 has a
//! 4-byte tag and its payload EtherType at offset 16. The FCS is not part of
//! the buffer.

use crate::bytes::{array, need, put, put_u16, slice, u16_at};
use crate::Result;

/// Internet Protocol version 4 (RFC 894).
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// Address Resolution Protocol (RFC 826).
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// IEEE 802.1Q VLAN tag (C-tag).
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// Internet Protocol version 6 (RFC 2464).
pub const ETHERTYPE_IPV6: u16 = 0x86DD;

/// A MAC address, six bytes in transmission order.
pub type MacAddr = [u8; 6];

mod field {
    //! Untagged (RFC 894):
    //! ```text
    //!  0                   6                  12        14
    //! +-------------------+-------------------+---------+---------
    //! | Destination (6)   | Source (6)        | Type(2) | Payload
    //! +-------------------+-------------------+---------+---------
    //! ```
    //! 802.1Q tagged (Type = 0x8100):
    //! ```text
    //!  0         6         12        14       16        18
    //! +---------+---------+---------+--------+---------+---------
    //! | Dst (6) | Src (6) | 0x8100  | TCI(2) | Type(2) | Payload
    //! +---------+---------+---------+--------+---------+---------
    //!   TCI = PCP (3 bits) | DEI (1 bit) | VID (12 bits)
    //! ```
    pub const DST: usize = 0;
    pub const SRC: usize = 6;
    pub const ETHERTYPE: usize = 12;
    pub const TCI: usize = 14;
    pub const INNER_ETHERTYPE: usize = 16;
}

/// Zero-copy view of an Ethernet frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Untagged header length.
    pub const HEADER_LEN: usize = 14;
    /// Header length with one 802.1Q tag.
    pub const VLAN_HEADER_LEN: usize = 18;

    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// Wraps a buffer and runs [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// Checks that the header, 14 bytes or 18 when tagged, is in the buffer.
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        need(Self::HEADER_LEN, have)?;
        need(self.header_len(), have)
    }

    /// Destination MAC address.
    pub fn dst_addr(&self) -> MacAddr {
        array(self.buffer.as_ref(), field::DST)
    }

    /// Source MAC address.
    pub fn src_addr(&self) -> MacAddr {
        array(self.buffer.as_ref(), field::SRC)
    }

    /// Destination and source MAC addresses as one 12-byte block (the
    /// counterpart of [`set_addrs`](Self::set_addrs)).
    pub fn addrs(&self) -> [u8; 12] {
        array(self.buffer.as_ref(), field::DST)
    }

    /// Outer EtherType, as on the wire (0x8100 for a tagged frame).
    pub fn ethertype(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::ETHERTYPE)
    }

    /// The 802.1Q Tag Control Information (PCP, DEI, VID) when the outer
    /// EtherType is 0x8100 and the tag is inside the buffer.
    pub fn vlan(&self) -> Option<u16> {
        let b = self.buffer.as_ref();
        if self.ethertype() == ETHERTYPE_VLAN && b.len() >= Self::VLAN_HEADER_LEN {
            Some(u16_at(b, field::TCI))
        } else {
            None
        }
    }

    /// 18 when the outer EtherType is 0x8100, else 14.
    pub fn header_len(&self) -> usize {
        if self.ethertype() == ETHERTYPE_VLAN {
            Self::VLAN_HEADER_LEN
        } else {
            Self::HEADER_LEN
        }
    }

    /// EtherType of the payload: the inner one of a tagged frame.
    pub fn payload_ethertype(&self) -> u16 {
        u16_at(self.buffer.as_ref(), self.header_len() - 2)
    }

    /// Bytes after the (tagged) header.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        slice(b, self.header_len(), b.len())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Sets the destination MAC address.
    pub fn set_dst_addr(&mut self, addr: MacAddr) {
        put(self.buffer.as_mut(), field::DST, addr);
    }

    /// Sets the source MAC address.
    pub fn set_src_addr(&mut self, addr: MacAddr) {
        put(self.buffer.as_mut(), field::SRC, addr);
    }

    /// Sets the destination and source MAC addresses from one 12-byte block, as a
    /// resolved neighbour (or a received frame's header) holds them.
    pub fn set_addrs(&mut self, macs: &[u8; 12]) {
        put(self.buffer.as_mut(), field::DST, *macs);
    }

    /// Sets the outer EtherType (0x8100 makes the frame tagged).
    pub fn set_ethertype(&mut self, ethertype: u16) {
        put_u16(self.buffer.as_mut(), field::ETHERTYPE, ethertype);
    }

    /// Sets the 802.1Q TCI (bytes 14..16). Meaningful only on a tagged frame.
    pub fn set_vlan_tci(&mut self, tci: u16) {
        put_u16(self.buffer.as_mut(), field::TCI, tci);
    }

    /// Sets the payload EtherType: offset 16 on a tagged frame, else 12.
    pub fn set_payload_ethertype(&mut self, ethertype: u16) {
        let at = if self.ethertype() == ETHERTYPE_VLAN { field::INNER_ETHERTYPE } else { field::ETHERTYPE };
        put_u16(self.buffer.as_mut(), at, ethertype);
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for EthernetFrame<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // scapy: bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") / IPv6())[:14]
    static BYTES: [u8; 14] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // dst
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // src
        0x86, 0xDD, // IPv6
    ];

    // scapy: bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
    //              / Dot1Q(prio=3, vlan=100) / IP())[:18]
    static VLAN_BYTES: [u8; 18] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // dst
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // src
        0x81, 0x00, // 802.1Q
        0x60, 0x64, // PCP 3, VID 100
        0x08, 0x00, // IPv4
    ];

    #[test]
    fn parse_untagged() {
        let f = EthernetFrame::new_checked(&BYTES[..]).unwrap();
        assert_eq!(f.ethertype(), ETHERTYPE_IPV6);
        assert_eq!(f.vlan(), None);
        assert_eq!(f.header_len(), 14);
        assert_eq!(f.payload(), &[] as &[u8]);
        assert_eq!(f.addrs(), [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
        assert_eq!(
            (f.dst_addr(), f.src_addr(), f.payload_ethertype()),
            ([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], 0x86dd)
        );
    }

    #[test]
    fn parse_tagged() {
        let mut bytes = [0u8; 20];
        bytes[..18].copy_from_slice(&VLAN_BYTES);
        bytes[18] = 0x45;
        let f = EthernetFrame::new_checked(&bytes[..]).unwrap();
        assert_eq!(f.ethertype(), ETHERTYPE_VLAN);
        assert_eq!(f.vlan(), Some(0x6064));
        assert_eq!(f.header_len(), 18);
        assert_eq!(f.payload_ethertype(), ETHERTYPE_IPV4);
        assert_eq!(f.payload(), &[0x45, 0]);
    }

    #[test]
    fn emit() {
        let mut buf = [0xFFu8; 14];
        let mut f = EthernetFrame::new_unchecked(&mut buf[..]);
        f.set_dst_addr([2, 0, 0, 0, 0, 2]);
        f.set_src_addr([2, 0, 0, 0, 0, 1]);
        f.set_ethertype(ETHERTYPE_IPV6);
        assert_eq!(buf, BYTES);
        let mut buf = [0xFFu8; 18];
        let mut f = EthernetFrame::new_unchecked(&mut buf[..]);
        f.set_addrs(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
        f.set_ethertype(ETHERTYPE_VLAN);
        f.set_vlan_tci(0x6064);
        f.set_payload_ethertype(ETHERTYPE_IPV4);
        assert_eq!(buf, VLAN_BYTES);
    }

    #[test]
    fn truncated_prefixes() {
        for n in 0..BYTES.len() {
            assert!(EthernetFrame::new_checked(&BYTES[..n]).is_err(), "len {n}");
        }
        for n in 0..VLAN_BYTES.len() {
            assert!(EthernetFrame::new_checked(&VLAN_BYTES[..n]).is_err(), "len {n}");
        }
        assert_eq!(
            EthernetFrame::new_checked(&VLAN_BYTES[..16]).unwrap_err(),
            crate::Error::Truncated { need: 18, have: 16 }
        );
    }

    #[test]
    fn setters() {
        let mut buf = VLAN_BYTES;
        let mut f = EthernetFrame::new_checked(&mut buf[..]).unwrap();
        f.set_payload_ethertype(ETHERTYPE_IPV6);
        f.set_vlan_tci(7);
        f.set_src_addr([1; 6]);
        f.set_dst_addr([3; 6]);
        assert_eq!(f.payload_ethertype(), ETHERTYPE_IPV6);
        assert_eq!(f.vlan(), Some(7));
        assert_eq!((f.dst_addr(), f.src_addr()), ([3; 6], [1; 6]));
        // Both addresses from one block, as a neighbour's Ethernet header holds them.
        let mut buf = [0xFFu8; 14];
        let mut f = EthernetFrame::new_unchecked(&mut buf[..]);
        f.set_addrs(&EthernetFrame::new_unchecked(&BYTES[..]).addrs());
        f.set_ethertype(ETHERTYPE_IPV6);
        assert_eq!(buf, BYTES);
        // On a 12-byte block alone, with no EtherType.
        let mut block = [0u8; 12];
        let mut f = EthernetFrame::new_unchecked(&mut block[..]);
        f.set_dst_addr([2, 0, 0, 0, 0, 2]);
        f.set_src_addr([2, 0, 0, 0, 0, 1]);
        f.set_ethertype(ETHERTYPE_IPV6); // dropped: outside the block
        assert_eq!(block, BYTES[..12]);
        assert_eq!(EthernetFrame::new_unchecked(&block[..]).addrs(), block);
    }

    proptest! {
        #[test]
        fn round_trip(dst in any::<[u8; 6]>(), src in any::<[u8; 6]>(),
                      vlan in proptest::option::of(any::<u16>()), ethertype in any::<u16>()) {
            // An untagged frame whose EtherType is 0x8100 reads back as tagged.
            prop_assume!(vlan.is_some() || ethertype != ETHERTYPE_VLAN);
            let mut buf = vec![0xFFu8; if vlan.is_some() { 18 } else { 14 }];
            let mut f = EthernetFrame::new_unchecked(&mut buf[..]);
            f.set_dst_addr(dst);
            f.set_src_addr(src);
            match vlan {
                Some(tci) => {
                    f.set_ethertype(ETHERTYPE_VLAN);
                    f.set_vlan_tci(tci);
                }
                None => f.set_ethertype(ethertype),
            }
            f.set_payload_ethertype(ethertype);
            let f = EthernetFrame::new_checked(&buf[..]).unwrap();
            prop_assert_eq!((f.dst_addr(), f.src_addr(), f.vlan(), f.payload_ethertype()), (dst, src, vlan, ethertype));
            prop_assert_eq!(f.header_len(), buf.len());
        }
    }
}
