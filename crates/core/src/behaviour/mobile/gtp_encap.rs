//! GTP-U encapsulation (3GPP TS 29.281), a head-end route kind — the paper's baseline
//! "GTP-U encap." function: `ip route add PREFIX encap gtp teid T dst A src B [qfi Q]
//! [via NH] dev DEV` (and `ip -6 route add ...`), sr6's own grammar (Linux's `gtp`
//! device is configured through libgtpnl, not iproute2). Like `encap seg6`, a route
//! kind, not a SID: the FIB's [`Route::GtpEncap`](crate::tables::Route) indexes
//! [`Tables::gtp_encaps`].
//!
//! An IPv4 or IPv6 packet routed here is first forwarded (RFC 1812 §5.3.1, RFC 8200
//! §3: TTL or hop limit checked and decremented, ICMP Time Exceeded when it runs out —
//! as a packet routed into Linux's `gtp` device is), then gets in front of it:
//! - a GTP-U header (TS 29.281 §5.1): version 1, PT 1, T-PDU (message type 255), the
//!   TEID; with `qfi`, the E flag and one PDU Session Container (TS 38.415 §5.5.2.1) of
//!   PDU type 0 (DL PDU SESSION INFORMATION, as End.M.GTP4.E writes it) carrying the
//!   QFI;
//! - UDP from and to port 2152 (TS 29.281 §4.4.2.3), its checksum computed (RFC 768;
//!   mandatory over IPv6, RFC 8200 §8.1);
//! - IPv4 (RFC 791: identification 0 with DF set, an atomic datagram, RFC 6864 §4, as
//!   End.M.GTP4.E) or IPv6 (flow label 0), by the family of `dst` and `src`: TTL / hop
//!   limit 64, DSCP/ECN / traffic class copied from the inner packet.
//!
//! The packet is then routed by the main table toward `dst` (as `encap seg6` routes
//! toward its first segment; the route's `via` is accepted and not used). One over the
//! egress MTU is answered about the packet it carries ([`carried`],
//! `pipeline::mtu`), as the other encapsulations are.

use std::net::IpAddr;

use super::super::Next;
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::pipeline::{icmp, Worker};
use crate::spec::{GtpTunnel, Line};
use crate::tables::Tables;
use sr6_wire::gtpu::{GTPU_PORT, MSG_TPDU, PDU_TYPE_DL};
use sr6_wire::ipv4::FLAG_DF;
use sr6_wire::{checksum, GtpuPacket, GtpuRepr, Ipv4Packet, Ipv4Repr, Ipv6Packet, Ipv6Repr, PduSession, UdpPacket};
use sr6_wire::{IPPROTO_IPV4, IPPROTO_IPV6, IPPROTO_UDP};

/// The outer TTL / hop limit: Linux's default (`ip4_dst_hoplimit`), as its `gtp`
/// device sends.
pub const OUTER_HOP_LIMIT: u8 = 64;

/// One `encap gtp teid T dst A src B [qfi Q]` route, as the data plane uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GtpEncap {
    pub teid: u32,
    /// The peer (the far tunnel end) and this end's address: both IPv4 or both IPv6.
    pub dst: IpAddr,
    pub src: IpAddr,
    pub qfi: Option<u8>,
    pub line: Line,
}

impl GtpEncap {
    /// The tunnel of `t` (its `Encap` form), checked: `dst` and `src` of one family,
    /// the QFI 6 bits (the parser checks these too; the builder does not trust it).
    pub fn build(t: &GtpTunnel, line: Line) -> Result<GtpEncap, String> {
        let GtpTunnel::Encap { teid, dst, src, qfi } = *t else {
            return Err("not a GTP-U encapsulation".into());
        };
        if dst.is_ipv4() != src.is_ipv4() {
            return Err(format!("encap gtp: dst {dst} and src {src} are of different address families"));
        }
        if qfi.is_some_and(|q| q > 63) {
            return Err("encap gtp: qfi is 6 bits (0 to 63, TS 38.415 §5.5.3.3)".into());
        }
        Ok(GtpEncap { teid, dst, src, qfi, line })
    }

    fn header(&self) -> GtpuRepr {
        let session = self.qfi.map(|qfi| PduSession { pdu_type: PDU_TYPE_DL, qfi, rqi: false });
        GtpuRepr { msg_type: MSG_TPDU, teid: self.teid, session }
    }
}

/// The IPv6 (`v6`) or IPv4 packet in `p` for GTP-U tunnel `i`: the forwarding step
/// when `forward`, then the encapsulation; the outer packet goes to the main table.
pub fn input(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, v6: bool, forward: bool) -> Next {
    let Some(tun) = t.gtp_encaps.get(i as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    let fwd_on = t.devices.get(usize::from(p.in_dev)).is_some_and(|d| if v6 { d.forwarding6 } else { d.forwarding4 });
    if forward && !fwd_on {
        return Next::drop(DropReason::ForwardingDisabled);
    }
    let tos = if v6 {
        let mut ip = Ipv6Packet::new_unchecked(p.data_mut());
        let hl = ip.hop_limit();
        if forward {
            if hl <= 1 {
                return icmp::time_exceeded6(t, w, p);
            }
            ip.set_hop_limit(hl - 1);
        }
        ip.traffic_class()
    } else {
        if forward {
            if Ipv4Packet::new_unchecked(p.data()).ttl() <= 1 {
                return icmp::time_exceeded4(t, w, p);
            }
            Ipv4Packet::new_unchecked(p.data_mut()).decrement_ttl();
        }
        Ipv4Packet::new_unchecked(p.data()).dscp_ecn()
    };
    match encapsulate(p, tun, tos) {
        Ok(()) if tun.dst.is_ipv4() => Next::Lookup4 { table: Tables::MAIN, forward: false },
        Ok(()) => Next::Lookup6 { table: Tables::MAIN, forward: false },
        Err(r) => Next::drop(r),
    }
}

/// Pushes IP + UDP + GTP-U in front of the packet in `p`.
fn encapsulate(p: &mut PacketBuf, tun: &GtpEncap, tos: u8) -> Result<(), DropReason> {
    let gtp = tun.header();
    let inner_len = p.len();
    let ip_len = if tun.dst.is_ipv4() { Ipv4Packet::<&[u8]>::HEADER_LEN } else { Ipv6Packet::<&[u8]>::HEADER_LEN };
    let udp_len = UdpPacket::<&[u8]>::HEADER_LEN + gtp.buffer_len() + inner_len;
    // IPv4's Total Length counts its header; IPv6's Payload Length does not.
    let limit = if tun.dst.is_ipv4() { usize::from(u16::MAX) - ip_len } else { usize::from(u16::MAX) };
    if udp_len > limit {
        return Err(DropReason::TooBig);
    }
    // Where the carried packet starts, for an ICMP error about it (`pipeline::mtu`).
    let inner_at = p.headroom() as u16;
    if !p.push_front(ip_len + UdpPacket::<&[u8]>::HEADER_LEN + gtp.buffer_len()) {
        return Err(DropReason::NoHeadroom);
    }
    p.inner_at = inner_at;
    let d = p.data_mut();
    let pseudo = match (tun.src, tun.dst) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => {
            let outer = Ipv4Repr {
                src_addr: src,
                dst_addr: dst,
                protocol: IPPROTO_UDP,
                payload_len: udp_len as u16,
                ttl: OUTER_HOP_LIMIT,
                dscp_ecn: tos,
                ident: 0,
                flags_frag: FLAG_DF,
            };
            outer.emit(&mut Ipv4Packet::new_unchecked(&mut *d));
            checksum::pseudo_header_v4(&src, &dst, udp_len as u16, IPPROTO_UDP)
        }
        (IpAddr::V6(src), IpAddr::V6(dst)) => {
            let outer = Ipv6Repr {
                src_addr: src,
                dst_addr: dst,
                next_header: IPPROTO_UDP,
                payload_len: udp_len as u16,
                hop_limit: OUTER_HOP_LIMIT,
                traffic_class: tos,
                flow_label: 0,
            };
            outer.emit(&mut Ipv6Packet::new_unchecked(&mut *d));
            checksum::pseudo_header_v6(&src, &dst, udp_len as u32, IPPROTO_UDP)
        }
        _ => return Err(DropReason::NoRoute),
    };
    let seg = d.get_mut(ip_len..).ok_or(DropReason::Malformed)?;
    if let Some(g) = seg.get_mut(UdpPacket::<&[u8]>::HEADER_LEN..) {
        gtp.emit(g, inner_len as u16);
    }
    write_udp(seg, GTPU_PORT, GTPU_PORT, pseudo);
    Ok(())
}

/// Writes the UDP header at the start of `seg` (the whole datagram, its payload in
/// place), its checksum over `pseudo` (the pseudo-header's sum) and the datagram (RFC
/// 768: a computed 0 is sent as all ones).
pub(super) fn write_udp(seg: &mut [u8], sport: u16, dport: u16, pseudo: u32) {
    let len = seg.len() as u16;
    let mut udp = UdpPacket::new_unchecked(&mut *seg);
    udp.set_src_port(sport);
    udp.set_dst_port(dport);
    udp.set_len(len);
    udp.set_checksum(0);
    let c = checksum::fold(pseudo + checksum::sum(seg));
    UdpPacket::new_unchecked(seg).set_checksum(if c == 0 { 0xffff } else { c });
}

/// For `pipeline::mtu`: the protocol of the packet this router carries after `overhead`
/// bytes of outer headers in `d`, if those are the IPv4 or IPv6, UDP (to port 2152) and
/// GTP-U T-PDU headers a GTP-U encapsulation wrote; `None` otherwise.
pub fn carried(d: &[u8], overhead: usize) -> Option<u8> {
    let ip_len = match d.first()? >> 4 {
        4 => Ipv4Packet::new_checked(d).ok().filter(|ip| ip.protocol() == IPPROTO_UDP)?.header_len(),
        6 => Some(Ipv6Packet::new_checked(d).ok()?).filter(|ip| ip.next_header() == IPPROTO_UDP).map(|_| 40)?,
        _ => return None,
    };
    let udp = UdpPacket::new_checked(d.get(ip_len..)?).ok().filter(|u| u.dst_port() == GTPU_PORT)?;
    let seg = d.get(ip_len..ip_len + usize::from(udp.len()))?;
    let gtp = GtpuPacket::new_checked(seg.get(UdpPacket::<&[u8]>::HEADER_LEN..)?).ok()?;
    if gtp.msg_type() != MSG_TPDU || ip_len + UdpPacket::<&[u8]>::HEADER_LEN + gtp.header_len() != overhead {
        return None;
    }
    match gtp.payload().first()? >> 4 {
        4 => Some(IPPROTO_IPV4),
        6 => Some(IPPROTO_IPV6),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tunnel(dst: &str, src: &str, qfi: Option<u8>) -> Result<GtpEncap, String> {
        let t = GtpTunnel::Encap { teid: 0x0102_0304, dst: dst.parse().unwrap(), src: src.parse().unwrap(), qfi };
        GtpEncap::build(&t, 3)
    }

    #[test]
    fn build_checks_families_and_qfi() {
        assert!(tunnel("10.0.0.1", "fc00::1", None).unwrap_err().contains("different address families"));
        assert!(tunnel("fc00::2", "10.0.0.1", None).is_err());
        assert!(tunnel("10.0.0.1", "10.0.0.2", Some(64)).unwrap_err().contains("6 bits"));
        assert_eq!(tunnel("fc00::2", "fc00::1", Some(63)).unwrap().qfi, Some(63));
        assert!(GtpEncap::build(&GtpTunnel::Decap { table: None }, 1).is_err());
    }

    /// The headers written field by field (TS 29.281 §5.1, RFC 791, RFC 768), and what
    /// `pipeline::mtu` reads back of them.
    #[test]
    fn encapsulates_and_finds_the_carried_packet() {
        // A 28-byte IPv4 packet (version 4 in its first nibble).
        let inner: Vec<u8> = [0x45u8, 0, 0, 28].into_iter().chain(std::iter::repeat_n(0xab, 24)).collect();
        for (qfi, gtp_len) in [(None, 8), (Some(9), 16)] {
            let tun = tunnel("192.0.2.7", "192.0.2.1", qfi).unwrap();
            let mut p = PacketBuf::new();
            assert!(p.load(&inner, 0));
            encapsulate(&mut p, &tun, 0x2c).unwrap();
            let d = p.data();
            let over = 20 + 8 + gtp_len;
            assert_eq!(d.len(), over + inner.len());
            assert_eq!(&d[over..], &inner[..]);
            // IPv4: tos, total length, ID 0, DF, TTL 64, UDP, a valid header checksum.
            assert_eq!(&d[..10], &[0x45, 0x2c, 0, (over + 28) as u8, 0, 0, 0x40, 0, 64, 17]);
            assert_eq!(checksum::fold(checksum::sum(&d[..20])), 0);
            // UDP 2152 -> 2152, its length, a checksum that verifies.
            assert_eq!(&d[20..26], &[0x08, 0x68, 0x08, 0x68, 0, (over - 20 + 28) as u8]);
            let pseudo = checksum::pseudo_header_v4(&tun.src_v4(), &tun.dst_v4(), (d.len() - 20) as u16, 17);
            assert_eq!(checksum::fold(pseudo + checksum::sum(&d[20..])), 0);
            // GTP-U: flags (E with a container), T-PDU, length, TEID.
            let flags = if qfi.is_some() { 0x34 } else { 0x30 };
            assert_eq!(&d[28..36], &[flags, 0xff, 0, (gtp_len - 8 + 28) as u8, 1, 2, 3, 4]);
            if qfi.is_some() {
                assert_eq!(&d[36..44], &[0, 0, 0, 0x85, 1, 0x00, 9, 0]);
            }
            assert_eq!(carried(d, over), Some(IPPROTO_IPV4));
            assert_eq!(carried(d, over - 1), None);
            assert_eq!(carried(&d[..over - 1], over), None);
        }
    }

    impl GtpEncap {
        fn src_v4(&self) -> std::net::Ipv4Addr {
            match self.src {
                IpAddr::V4(a) => a,
                IpAddr::V6(_) => unreachable!(),
            }
        }
        fn dst_v4(&self) -> std::net::Ipv4Addr {
            match self.dst {
                IpAddr::V4(a) => a,
                IpAddr::V6(_) => unreachable!(),
            }
        }
    }
}
