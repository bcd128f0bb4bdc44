//! The virtio-net header (`struct virtio_net_hdr`, linux/virtio_net.h) that the kernel
//! puts in front of every frame of a packet socket with `PACKET_VNET_HDR` set, and what
//! the port does with it: completing the checksum a local sender left partial.
//!
//! A sender with transmit checksum offload (a veth or tap peer, the host's own stack)
//! hands the device a UDP or TCP packet whose checksum field holds only the
//! pseudo-header sum (`CHECKSUM_PARTIAL`); the rest is "hardware's" job, and the bytes a
//! packet socket taps are not finished. With the header, the kernel says so: flag
//! `VIRTIO_NET_HDR_F_NEEDS_CSUM`, the checksum covers the frame from `csum_start` to its
//! end and goes at `csum_start + csum_offset` (both counted from the Ethernet header,
//! without an 802.1Q tag the kernel took into metadata). Completing it is what the
//! kernel's own `skb_checksum_help` does: the RFC 1071 sum of those bytes — the field
//! included, since it already holds the pseudo-header sum — folded and complemented.
//!
//! Only the Internet checksums of UDP (`csum_offset` 6) and TCP (16) are completed. The
//! flag also marks SCTP's CRC32c (offset 8), which this is not: such a frame goes on as
//! it came. A header that points outside the frame (which the kernel never writes) drops
//! the frame, counted in `rx_bad_vnet`.
//!
//! A frame with `gso_type` other than `VIRTIO_NET_HDR_GSO_NONE` is a segmentation
//! offload super-frame: several TCP segments (or UDP datagrams) in one, up to 64 KiB,
//! that the device was to cut. sr6 does not segment; the frame is dropped and counted in
//! `rx_gso` (a packet socket cannot ask for unsegmented frames: turn segmentation
//! offload off on the sender, `ethtool -K PEER tso off`).

use sr6_wire::checksum;

/// Bytes of `struct virtio_net_hdr`.
pub(super) const VNET_HDR_LEN: usize = 10;
/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`.
const F_NEEDS_CSUM: u8 = 1;
/// `csum_offset` of the UDP checksum (RFC 768).
const UDP_CSUM_OFFSET: u16 = 6;
/// `csum_offset` of the TCP checksum (RFC 9293 §3.1).
const TCP_CSUM_OFFSET: u16 = 16;
const ETH_HLEN: usize = 14;

/// The fields of a `struct virtio_net_hdr` the port reads (`hdr_len` and `gso_size` are
/// not needed). Multi-byte fields are in host order: the kernel writes the legacy
/// (pre-1.0) virtio layout, whose byte order is the host's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub csum_start: u16,
    pub csum_offset: u16,
}

/// Why a frame with a virtio-net header is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VnetDrop {
    /// A segmentation offload super-frame (`gso_type` not NONE).
    Gso,
    /// The checksum start or field lies outside the frame.
    Bad,
}

/// Whether the raw header `h` asks for anything (see [`VnetHdr::needs_work`]): its first
/// two bytes only, so the common case costs one test.
#[inline(always)]
pub(super) fn needs_work(h: &[u8; VNET_HDR_LEN]) -> bool {
    (h[0] & F_NEEDS_CSUM) | h[1] != 0
}

impl VnetHdr {
    /// A header that cannot be right (it asks for a checksum outside any frame).
    #[cfg(test)]
    pub(super) const BAD: VnetHdr = VnetHdr { flags: F_NEEDS_CSUM, gso_type: 0, csum_start: u16::MAX, csum_offset: 0 };

    /// The 10 bytes the kernel writes for this header.
    #[cfg(test)]
    pub(super) fn to_bytes(self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[6..8].copy_from_slice(&self.csum_start.to_ne_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_ne_bytes());
        b
    }

    /// Decodes the 10 bytes: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
    pub(super) fn parse(b: [u8; VNET_HDR_LEN]) -> VnetHdr {
        VnetHdr {
            flags: b[0],
            gso_type: b[1],
            csum_start: u16::from_ne_bytes([b[6], b[7]]),
            csum_offset: u16::from_ne_bytes([b[8], b[9]]),
        }
    }

    /// Whether the frame needs anything done: a checksum to complete or a super-frame
    /// to drop. `DATA_VALID` (the checksum was verified) needs nothing.
    #[cfg(test)]
    pub(super) fn needs_work(&self) -> bool {
        (self.flags & F_NEEDS_CSUM) | self.gso_type != 0
    }
}

/// Does what `h` asks for `frame` (the frame as the kernel delivered it, without a
/// stripped VLAN tag put back): `Ok(true)` when a checksum was completed, `Ok(false)`
/// when there was nothing to do or it is not an Internet checksum (SCTP's CRC32c).
pub(super) fn complete(frame: &mut [u8], h: VnetHdr) -> Result<bool, VnetDrop> {
    if h.gso_type != 0 {
        return Err(VnetDrop::Gso);
    }
    if h.flags & F_NEEDS_CSUM == 0 {
        return Ok(false);
    }
    let start = usize::from(h.csum_start);
    let field = start + usize::from(h.csum_offset);
    if start < ETH_HLEN || field + 2 > frame.len() {
        return Err(VnetDrop::Bad);
    }
    if h.csum_offset != UDP_CSUM_OFFSET && h.csum_offset != TCP_CSUM_OFFSET {
        return Ok(false);
    }
    // RFC 1071 §1 over the upper-layer header and data; the field holds the
    // pseudo-header sum (RFC 8200 §8.1, RFC 768, RFC 9293 §3.1), so it is summed too.
    let mut csum = checksum::fold(checksum::sum(&frame[start..]));
    if csum == 0 && h.csum_offset == UDP_CSUM_OFFSET {
        // RFC 768: a computed UDP checksum of zero is sent as all ones (zero means
        // "none", which IPv6 forbids, RFC 8200 §8.1).
        csum = 0xFFFF;
    }
    frame[field..field + 2].copy_from_slice(&csum.to_be_bytes());
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    // Frames built by scapy (independent of sr6), each with its correct checksum:
    //   Ether(dst="02:00:00:00:00:0b", src="02:00:00:00:00:0a")
    //   / IPv6(src="fc00:a::2", dst="fc00:b::2") / UDP(sport=40000, dport=9999) / b"sr6-vnet-check!"
    // and the same over IPv4 (10.0.1.2 -> 10.0.2.2, TCP sport 40000, dport 80, flags PA,
    // seq 1, ack 2, payload b"abc").
    const UDP6: &str = "02000000000b02000000000a86dd6000000000171140fc00000a000000000000000000000002\
        fc00000b0000000000000000000000029c40270f0017a49f7372362d766e65742d636865636b21";
    const UDP6_CSUM: [u8; 2] = [0xa4, 0x9f];
    const TCP4: &str = "02000000000b02000000000a08004500002b00010000400663c90a0001020a000202\
        9c40005000000001000000025018200017d00000616263";
    const TCP4_CSUM: [u8; 2] = [0x17, 0xd0];

    /// `frame` with its checksum at `field` replaced by the pseudo-header sum the
    /// sending stack leaves there (`~csum_fold(pseudo)`), as CHECKSUM_PARTIAL has it.
    fn partial(frame: &[u8], field: usize, pseudo: u32) -> Vec<u8> {
        let mut f = frame.to_vec();
        f[field..field + 2].copy_from_slice(&(!checksum::fold(pseudo)).to_be_bytes());
        f
    }

    #[test]
    fn a_partial_udp6_checksum_is_completed_as_scapy_computes_it() {
        let good = hex(UDP6);
        let (start, field) = (14 + 40, 14 + 40 + 6);
        assert_eq!(good[field..field + 2], UDP6_CSUM);
        let src = std::net::Ipv6Addr::new(0xfc00, 0xa, 0, 0, 0, 0, 0, 2);
        let dst = std::net::Ipv6Addr::new(0xfc00, 0xb, 0, 0, 0, 0, 0, 2);
        let mut f = partial(&good, field, checksum::pseudo_header_v6(&src, &dst, 23, 17));
        assert_ne!(f, good);
        let h = VnetHdr { flags: F_NEEDS_CSUM, gso_type: 0, csum_start: start as u16, csum_offset: 6 };
        assert!(h.needs_work());
        assert_eq!(complete(&mut f, h), Ok(true));
        assert_eq!(f, good);
    }

    #[test]
    fn a_partial_tcp4_checksum_is_completed_as_scapy_computes_it() {
        let good = hex(TCP4);
        let (start, field) = (14 + 20, 14 + 20 + 16);
        assert_eq!(good[field..field + 2], TCP4_CSUM);
        let src = std::net::Ipv4Addr::new(10, 0, 1, 2);
        let dst = std::net::Ipv4Addr::new(10, 0, 2, 2);
        let mut f = partial(&good, field, checksum::pseudo_header_v4(&src, &dst, 23, 6));
        let h = VnetHdr { flags: F_NEEDS_CSUM, gso_type: 0, csum_start: start as u16, csum_offset: 16 };
        assert_eq!(complete(&mut f, h), Ok(true));
        assert_eq!(f, good);
    }

    #[test]
    fn the_header_is_read_in_host_order() {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = 1;
        b[1] = 4;
        b[6..8].copy_from_slice(&54u16.to_ne_bytes());
        b[8..10].copy_from_slice(&16u16.to_ne_bytes());
        assert_eq!(VnetHdr::parse(b), VnetHdr { flags: 1, gso_type: 4, csum_start: 54, csum_offset: 16 });
        assert_eq!(VnetHdr::parse(b).to_bytes(), b);
        assert!(needs_work(&b));
        assert!(!needs_work(&[2, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
        // DATA_VALID alone asks for nothing.
        assert!(!VnetHdr { flags: 2, ..VnetHdr::default() }.needs_work());
        assert!(!VnetHdr::default().needs_work());
    }

    #[test]
    fn super_frames_and_headers_outside_the_frame_are_refused_never_written() {
        let good = hex(UDP6);
        let n = good.len();
        let mut f = good.clone();
        let gso = VnetHdr { flags: F_NEEDS_CSUM, gso_type: 4, csum_start: 54, csum_offset: 6 };
        assert_eq!(complete(&mut f, gso), Err(VnetDrop::Gso));
        for (start, offset) in [(n as u16 - 1, 0), (n as u16 - 2, 1), (54, u16::MAX), (u16::MAX, u16::MAX), (0, 6)] {
            let h = VnetHdr { flags: F_NEEDS_CSUM, gso_type: 0, csum_start: start, csum_offset: offset };
            assert_eq!(complete(&mut f, h), Err(VnetDrop::Bad), "{start} {offset}");
        }
        assert_eq!(complete(&mut f, VnetHdr::BAD), Err(VnetDrop::Bad));
        assert_eq!(f, good, "nothing written");
        // The last two bytes are a valid field.
        let h = VnetHdr { flags: F_NEEDS_CSUM, gso_type: 0, csum_start: n as u16 - 8, csum_offset: 6 };
        assert_eq!(complete(&mut f, h), Ok(true));
    }

    #[test]
    fn sctp_crc32c_is_left_alone() {
        let good = hex(UDP6);
        let mut f = good.clone();
        let h = VnetHdr { flags: F_NEEDS_CSUM, gso_type: 0, csum_start: 54, csum_offset: 8 };
        assert_eq!(complete(&mut f, h), Ok(false));
        assert_eq!(f, good);
    }

    #[test]
    fn a_zero_udp_checksum_is_sent_as_all_ones() {
        // A UDP header whose sum (field included) is 0xFFFF: the folded complement is 0.
        let mut f = vec![0u8; 14];
        f.extend_from_slice(&[0xff, 0xf7, 0, 0, 0, 8, 0, 0]);
        let h = VnetHdr { flags: F_NEEDS_CSUM, gso_type: 0, csum_start: 14, csum_offset: 6 };
        assert_eq!(complete(&mut f, h), Ok(true));
        assert_eq!(f[20..22], [0xff, 0xff]);
        // The same sum in a TCP field stays 0 (what the kernel writes).
        let mut f = vec![0u8; 14];
        f.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let h = VnetHdr { flags: F_NEEDS_CSUM, gso_type: 0, csum_start: 14, csum_offset: 16 };
        assert_eq!(complete(&mut f, h), Ok(true));
        assert_eq!(f[30..32], [0, 0]);
    }
}
