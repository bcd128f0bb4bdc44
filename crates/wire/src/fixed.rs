//! Fixed-size header views for the fast path: the same fields as [`crate::ipv6`],
//! [`crate::srh`], [`crate::ipv4`] and [`crate::ethernet`], read and written on byte
//! *arrays* whose length is part of their type, so every access is at a constant offset
//! inside the array and compiles to one load or store with no bounds check and no
//! fallback. The caller gets the arrays once (`split_first_chunk_mut` on the frame, one
//! length check); from then on no field is named by a number outside this module.
//!
//! The views are traits implemented for the arrays:
//! - [`Ipv6Fixed`] for an IPv6 header on its own (`[u8; 40]`) and behind an Ethernet
//!   header (`[u8; 54]`, the first bytes of an IPv6 frame);
//! - [`FrameFixed`] for the Ethernet part of `[u8; 54]`;
//! - [`SrhFixed`] for the first 8 bytes of an SRH (RFC 8754 §2);
//! - [`Ipv4Fixed`] for an IPv4 header without options (RFC 791 §3.1).
//!
//! Where the fast path needs a field in a form other than its value, the accessor says
//! so in its name: a length *compared* in network byte order ([`Ipv6Fixed::payload_len_is`]),
//! an address as one big-endian `u128` ([`Ipv6Fixed::dst`]), a decrement done as one
//! read-modify-write of the 32-bit word that holds the field
//! ([`Ipv6Fixed::decrement_hop_limit`]).

use crate::checksum;
use crate::ethernet::ETHERTYPE_IPV6;
use crate::srh::ROUTING_TYPE_SRH;

/// Ethernet header length.
pub const ETH_LEN: usize = 14;
/// Ethernet + IPv6 header length: the array [`FrameFixed`] views.
pub const ETH_IPV6_LEN: usize = ETH_LEN + 40;

/// Whether a 16-bit length field, as it is in the packet, holds `len`: compared in the
/// field's byte order, with no conversion. `len` must be under 64 KiB (it is always the
/// length of part of a frame).
#[inline(always)]
fn length_is(field: [u8; 2], len: usize) -> bool {
    u16::from_ne_bytes(field) == (len as u16).to_be()
}

/// Decrements the last byte of `f`, a field checked to be at least 1 (so nothing
/// borrows from the other three), as a subtraction from the 32-bit word in its memory
/// order: one read-modify-write of the frame, instead of keeping the byte read for the
/// check alive until the rewrite.
#[inline(always)]
fn decrement_last(f: &mut [u8; 4]) {
    *f = u32::from_ne_bytes(*f).wrapping_sub(u32::from_ne_bytes([0, 0, 0, 1])).to_ne_bytes();
}

/// `N` bytes of `b` from `at` as an array. At every caller `b` is an array and `at + N`
/// a constant within it, so this folds to the load (a shorter `b` would give zeros).
#[inline(always)]
fn take<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    if let Some(s) = b.get(at..at + N) {
        a.copy_from_slice(s);
    }
    a
}

/// Writes `v` to `b` at `at`: [`take`]'s counterpart, folded the same way.
#[inline(always)]
fn put<const N: usize>(b: &mut [u8], at: usize, v: &[u8; N]) {
    if let Some(s) = b.get_mut(at..at + N) {
        s.copy_from_slice(v);
    }
}

/// The IPv6 header (RFC 8200 §3) in a fixed-size array.
pub trait Ipv6Fixed {
    /// Version 6.
    fn is_version6(&self) -> bool;
    /// Version, Traffic Class and Flow Label: the first 4 bytes as they are.
    fn vtf(&self) -> [u8; 4];
    /// Sets the first 4 bytes.
    fn set_vtf(&mut self, v: [u8; 4]);
    /// Whether Payload Length is `len` (compared in network byte order).
    fn payload_len_is(&self, len: usize) -> bool;
    /// Payload Length.
    fn payload_len(&self) -> u16;
    /// Sets Payload Length.
    fn set_payload_len(&mut self, len: u16);
    /// Next Header.
    fn next_header(&self) -> u8;
    /// Sets Next Header.
    fn set_next_header(&mut self, v: u8);
    /// Hop Limit.
    fn hop_limit(&self) -> u8;
    /// Sets Hop Limit.
    fn set_hop_limit(&mut self, v: u8);
    /// Hop Limit - 1 (RFC 8200 §3), once a Hop Limit of at least 1 was checked.
    fn decrement_hop_limit(&mut self);
    /// Source Address, as its 16 bytes.
    fn src_bytes(&self) -> [u8; 16];
    /// Sets Source Address.
    fn set_src_bytes(&mut self, a: &[u8; 16]);
    /// The first byte of Source Address (its range: ::/8, fe00::/7).
    fn src_first(&self) -> u8;
    /// Destination Address as a big-endian `u128` (one load, kept in a register).
    fn dst(&self) -> u128;
    /// Destination Address, as its 16 bytes.
    fn dst_bytes(&self) -> [u8; 16];
    /// Sets Destination Address.
    fn set_dst_bytes(&mut self, a: &[u8; 16]);
}

/// [`Ipv6Fixed`] for the array type `$t` with the header at byte `$o`.
macro_rules! ipv6_fixed {
    ($t:ty, $o:expr) => {
        impl Ipv6Fixed for $t {
            #[inline(always)]
            fn is_version6(&self) -> bool {
                self[$o] >> 4 == 6
            }
            #[inline(always)]
            fn vtf(&self) -> [u8; 4] {
                take(self, $o)
            }
            #[inline(always)]
            fn set_vtf(&mut self, v: [u8; 4]) {
                put(self, $o, &v);
            }
            #[inline(always)]
            fn payload_len_is(&self, len: usize) -> bool {
                length_is([self[$o + 4], self[$o + 5]], len)
            }
            #[inline(always)]
            fn payload_len(&self) -> u16 {
                u16::from_be_bytes([self[$o + 4], self[$o + 5]])
            }
            #[inline(always)]
            fn set_payload_len(&mut self, len: u16) {
                [self[$o + 4], self[$o + 5]] = len.to_be_bytes();
            }
            #[inline(always)]
            fn next_header(&self) -> u8 {
                self[$o + 6]
            }
            #[inline(always)]
            fn set_next_header(&mut self, v: u8) {
                self[$o + 6] = v;
            }
            #[inline(always)]
            fn hop_limit(&self) -> u8 {
                self[$o + 7]
            }
            #[inline(always)]
            fn set_hop_limit(&mut self, v: u8) {
                self[$o + 7] = v;
            }
            #[inline(always)]
            fn decrement_hop_limit(&mut self) {
                let mut w = take::<4>(self, $o + 4);
                decrement_last(&mut w);
                put(self, $o + 4, &w);
            }
            #[inline(always)]
            fn src_bytes(&self) -> [u8; 16] {
                take(self, $o + 8)
            }
            #[inline(always)]
            fn set_src_bytes(&mut self, a: &[u8; 16]) {
                put(self, $o + 8, a);
            }
            #[inline(always)]
            fn src_first(&self) -> u8 {
                self[$o + 8]
            }
            #[inline(always)]
            fn dst(&self) -> u128 {
                u128::from_be_bytes(take(self, $o + 24))
            }
            #[inline(always)]
            fn dst_bytes(&self) -> [u8; 16] {
                take(self, $o + 24)
            }
            #[inline(always)]
            fn set_dst_bytes(&mut self, a: &[u8; 16]) {
                put(self, $o + 24, a);
            }
        }
    };
}

ipv6_fixed!([u8; 40], 0);
ipv6_fixed!([u8; ETH_IPV6_LEN], ETH_LEN);

/// The Ethernet part of an Ethernet + IPv6 header (`[u8; 54]`).
pub trait FrameFixed {
    /// EtherType IPv6 and IP version 6: one compare of the 4 bytes that hold them.
    fn is_ipv6(&self) -> bool;
    /// Sets the destination and source MAC addresses.
    fn set_addrs(&mut self, a: EthAddrs);
    /// Sets the destination and source MAC addresses from their 12 bytes.
    fn set_addr_bytes(&mut self, a: &[u8; 12]);
}

impl FrameFixed for [u8; ETH_IPV6_LEN] {
    #[inline(always)]
    fn is_ipv6(&self) -> bool {
        let w = u32::from_be_bytes(take(self, 12));
        w & 0xffff_f000 == (u32::from(ETHERTYPE_IPV6) << 16 | 0x6000)
    }
    #[inline(always)]
    fn set_addrs(&mut self, a: EthAddrs) {
        a.write(self);
    }
    #[inline(always)]
    fn set_addr_bytes(&mut self, a: &[u8; 12]) {
        put(self, 0, a);
    }
}

/// The destination and source MAC addresses of an Ethernet header (its first 12
/// bytes) as two integers in memory order, so that they travel in registers from the
/// lookup that found them to the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthAddrs(u64, u32);

impl EthAddrs {
    /// The 12 bytes of an Ethernet header's addresses, destination first.
    #[inline(always)]
    pub fn of(e: &[u8; 12]) -> EthAddrs {
        let [a, b, c, d, e, f, g, h, i, j, k, l] = *e;
        EthAddrs(u64::from_ne_bytes([a, b, c, d, e, f, g, h]), u32::from_ne_bytes([i, j, k, l]))
    }

    /// Writes them to the first 12 bytes of `to` (nothing if it is shorter).
    #[inline(always)]
    pub fn write(self, to: &mut [u8]) {
        if let Some(to) = to.first_chunk_mut::<12>() {
            let (d, s) = to.split_at_mut(8);
            d.copy_from_slice(&self.0.to_ne_bytes());
            s.copy_from_slice(&self.1.to_ne_bytes());
        }
    }

    /// Writes them and `ethertype` as a whole Ethernet header to `to`.
    #[inline(always)]
    pub fn write_header(self, to: &mut [u8; ETH_LEN], ethertype: u16) {
        self.write(to);
        put(to, 12, &ethertype.to_be_bytes());
    }
}

/// The first 8 bytes of a Segment Routing Header (RFC 8754 §2).
pub trait SrhFixed {
    /// Next Header.
    fn next_header(&self) -> u8;
    /// Sets Next Header.
    fn set_next_header(&mut self, v: u8);
    /// Hdr Ext Len.
    fn hdr_ext_len(&self) -> u8;
    /// Segments Left.
    fn segments_left(&self) -> u8;
    /// Sets Segments Left.
    fn set_segments_left(&mut self, v: u8);
    /// Segments Left - 1, once it was checked to be at least 1 (one read-modify-write).
    fn decrement_segments_left(&mut self);
    /// Last Entry.
    fn last_entry(&self) -> u8;
    /// The SRH's length in bytes as Last Entry gives it, for an SRH without TLVs:
    /// 8 + 16 (Last Entry + 1).
    fn len_without_tlvs(&self) -> usize;
    /// The length of the Segment List if this is an SRH (Routing Type 4) with no TLV
    /// area — Hdr Ext Len is 2 (Last Entry + 1), so no HMAC either — and the list fits
    /// in the `rest` bytes that follow these 8.
    fn plain_segments_len(&self, rest: usize) -> Option<usize>;
    /// Segments Left - 1 if 1 <= Segments Left <= Last Entry + 1 (RFC 8754 §4.3.1.1):
    /// the index of the next segment.
    fn next_index(&self) -> Option<usize>;
}

impl SrhFixed for [u8; 8] {
    #[inline(always)]
    fn next_header(&self) -> u8 {
        self[0]
    }
    #[inline(always)]
    fn set_next_header(&mut self, v: u8) {
        self[0] = v;
    }
    #[inline(always)]
    fn hdr_ext_len(&self) -> u8 {
        self[1]
    }
    #[inline(always)]
    fn segments_left(&self) -> u8 {
        self[3]
    }
    #[inline(always)]
    fn set_segments_left(&mut self, v: u8) {
        self[3] = v;
    }
    #[inline(always)]
    fn decrement_segments_left(&mut self) {
        let mut w = take::<4>(self, 0);
        decrement_last(&mut w);
        put(self, 0, &w);
    }
    #[inline(always)]
    fn last_entry(&self) -> u8 {
        self[4]
    }
    #[inline(always)]
    fn len_without_tlvs(&self) -> usize {
        16 * (usize::from(self[4]) + 1) + 8
    }
    #[inline(always)]
    fn plain_segments_len(&self, rest: usize) -> Option<usize> {
        let le1 = u32::from(self[4]) + 1;
        let segs_len = 8 * usize::from(self[1]);
        if self[2] != ROUTING_TYPE_SRH || u32::from(self[1]) != 2 * le1 || segs_len > rest {
            return None;
        }
        Some(segs_len)
    }
    #[inline(always)]
    fn next_index(&self) -> Option<usize> {
        let slm1 = usize::from(self[3]).wrapping_sub(1);
        (slm1 <= usize::from(self[4])).then_some(slm1)
    }
}

/// An IPv4 header without options (RFC 791 §3.1).
pub trait Ipv4Fixed {
    /// The destination, if this is a header the fast path forwards: version 4, IHL 5
    /// (no options), Total Length `len`, a TTL that survives forwarding (over 1), a
    /// valid header checksum (RFC 1812 §5.2.2).
    fn forwardable_dst(&self, len: usize) -> Option<u32>;
    /// Source Address.
    fn src(&self) -> u32;
    /// TTL - 1 with the checksum updated incrementally (RFC 1812 §5.3.1, RFC 1624),
    /// once a TTL over 1 was checked.
    fn decrement_ttl(&mut self);
}

impl Ipv4Fixed for [u8; 20] {
    #[inline(always)]
    fn forwardable_dst(&self, len: usize) -> Option<u32> {
        if self[0] != 0x45 || !length_is([self[2], self[3]], len) || self[8] <= 1 {
            return None;
        }
        if checksum::fold(checksum::sum(self)) != 0 {
            return None;
        }
        Some(u32::from_be_bytes(take(self, 16)))
    }
    #[inline(always)]
    fn src(&self) -> u32 {
        u32::from_be_bytes(take(self, 12))
    }
    #[inline(always)]
    fn decrement_ttl(&mut self) {
        let old = u16::from_be_bytes([self[8], self[9]]);
        let c = checksum::update16(u16::from_be_bytes([self[10], self[11]]), old, old - 0x100);
        self[8] -= 1;
        [self[10], self[11]] = c.to_be_bytes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Ipv4Packet, Ipv6Packet, SrhPacket};

    /// The fixed views read and write what the checked views of the same bytes do.
    #[test]
    fn ipv6_agrees_with_the_view() {
        let mut f = [0u8; ETH_IPV6_LEN];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        {
            let mut v = Ipv6Packet::new_unchecked(&mut f[ETH_LEN..]);
            v.set_version(6);
            v.set_payload_len(300);
            v.set_next_header(43);
            v.set_hop_limit(64);
            v.set_dst_addr(&"fc00::1".parse().unwrap());
            v.set_src_addr(&"fc00::2".parse().unwrap());
        }
        assert!(f.is_ipv6() && f.is_version6());
        assert!(f.payload_len_is(300) && !f.payload_len_is(301));
        assert_eq!((f.payload_len(), f.next_header(), f.hop_limit()), (300, 43, 64));
        assert_eq!(f.dst(), u128::from("fc00::1".parse::<std::net::Ipv6Addr>().unwrap()));
        f.decrement_hop_limit();
        f.set_dst_bytes(&"fc00::3".parse::<std::net::Ipv6Addr>().unwrap().octets());
        f.set_payload_len(301);
        let v = Ipv6Packet::new_unchecked(&f[ETH_LEN..]);
        assert_eq!((v.hop_limit(), v.payload_len()), (63, 301));
        assert_eq!(v.dst_addr(), "fc00::3".parse::<std::net::Ipv6Addr>().unwrap());
        let mut ip = [0u8; 40];
        ip.copy_from_slice(&f[ETH_LEN..]);
        assert_eq!(ip.dst(), f.dst());
        assert_eq!(ip.src_bytes(), f.src_bytes());
        f[14] = 0x40;
        assert!(!f.is_ipv6());
    }

    #[test]
    fn eth_addrs_round_trip() {
        let a: [u8; 12] = core::array::from_fn(|i| i as u8 + 1);
        let mut h = [0u8; ETH_LEN];
        EthAddrs::of(&a).write_header(&mut h, 0x86dd);
        assert_eq!(&h[..12], &a);
        assert_eq!(&h[12..], &[0x86, 0xdd]);
    }

    #[test]
    fn srh_agrees_with_the_view() {
        let mut b = [0u8; 8 + 32];
        {
            let mut v = SrhPacket::new_unchecked(&mut b[..]);
            v.set_next_header(41);
            v.set_hdr_ext_len(4);
            v.set_routing_type(ROUTING_TYPE_SRH);
            v.set_segments_left(2);
            v.set_last_entry(1);
        }
        let mut s = [0u8; 8];
        s.copy_from_slice(&b[..8]);
        assert_eq!((s.next_header(), s.hdr_ext_len(), s.segments_left(), s.last_entry()), (41, 4, 2, 1));
        assert_eq!(s.len_without_tlvs(), 40);
        assert_eq!(s.plain_segments_len(32), Some(32));
        assert_eq!(s.plain_segments_len(31), None, "list past the packet");
        assert_eq!(s.next_index(), Some(1));
        s.decrement_segments_left();
        assert_eq!(s.segments_left(), 1);
        s.set_segments_left(0);
        assert_eq!(s.next_index(), None);
        s.set_segments_left(3);
        assert_eq!(s.next_index(), None, "past Last Entry + 1");
        s[1] = 6;
        assert_eq!(s.plain_segments_len(64), None, "a TLV area");
        s[1] = 4;
        s[2] = 0;
        assert_eq!(s.plain_segments_len(64), None, "not an SRH");
    }

    #[test]
    fn ipv4_agrees_with_the_view() {
        let mut b = [0u8; 20];
        {
            let mut v = Ipv4Packet::new_unchecked(&mut b[..]);
            v.set_version(4);
            v.set_header_len(20);
            v.set_total_len(120);
            v.set_ttl(9);
            v.set_protocol(17);
            v.set_dst_addr(&"192.0.2.7".parse().unwrap());
            v.fill_checksum();
        }
        assert_eq!(b.forwardable_dst(120), Some(0xc000_0207));
        assert_eq!(b.forwardable_dst(121), None);
        b.decrement_ttl();
        let v = Ipv4Packet::new_unchecked(&b[..]);
        assert_eq!(v.ttl(), 8);
        assert!(v.verify_checksum());
        let mut bad = b;
        bad[10] ^= 1;
        assert_eq!(bad.forwardable_dst(120), None, "checksum");
        let mut ttl1 = [0u8; 20];
        {
            let mut v = Ipv4Packet::new_unchecked(&mut ttl1[..]);
            v.set_version(4);
            v.set_header_len(20);
            v.set_total_len(20);
            v.set_ttl(1);
            v.fill_checksum();
        }
        assert_eq!(ttl1.forwardable_dst(20), None, "TTL 1");
    }
}
