//! The MTU check of the general path: a packet about to leave by a device whose MTU it
//! exceeds is not sent (RFC 8200 §5: no fragmentation in transit; RFC 791 §3.2). IPv6 gets an ICMPv6
//! Packet Too Big with the device's MTU (RFC 4443 §3.2), an IPv4 packet with DF set a
//! Destination Unreachable, Fragmentation Needed, with the next-hop MTU (RFC 1191 §4).
//! A forwarded IPv4 packet without DF is fragmented instead ([`super::fragment`], chosen
//! by `forward4` before it gets here).
//!
//! A packet this router just encapsulated (H.Encaps, End.B6.Encaps, `encap gtp`: [`PacketBuf::inner_at`])
//! is answered about the packet it carries, to that packet's source, with the MTU less
//! the headers the encapsulation adds (RFC 2473 §7.1; RFC 4459 §3.2). Linux's seg6
//! tunnel does not: it sends the error about the outer packet to its own tunnel source,
//! so nothing reaches the sender (docs/conformance.md). A carried IPv4 packet without DF
//! is dropped (`needs_fragmentation`), as Linux drops it: the outer IPv6 packet may not
//! be fragmented in transit and the carried one is no longer at hand to fragment. An
//! encapsulated Ethernet frame (H.Encaps.L2) is dropped (`mtu_exceeded`): there is no
//! packet to answer about.
//!
//! The fast path never reaches this: it takes only frames that fit every device after
//! its largest rewrite ([`Tables::fast_max_len`](crate::tables::Tables)).

use super::{icmp, Next, Worker};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::tables::{NextHop, Tables};
use sr6_wire::ipv4::FLAG_DF;
use sr6_wire::{walk_chain, Icmpv4Repr, Icmpv6Repr, Ipv4Packet, Ipv6Packet, IPPROTO_IPV4, IPPROTO_IPV6};

/// The MTU of the device `nh` leaves by, if the L3 packet in `p` exceeds it.
#[inline]
pub fn exceeded(t: &Tables, p: &PacketBuf, nh: NextHop) -> Option<usize> {
    let dev = match nh {
        NextHop::OnLink(d) => d,
        NextHop::Adj(i) => t.adjacencies.get(i as usize)?.dev,
    };
    let mtu = t.mtu(dev);
    (p.len() > mtu).then_some(mtu)
}

/// Answers (or drops) the packet in `p`, too big for an egress MTU of `mtu`.
pub fn too_big(t: &Tables, w: &mut Worker, p: &mut PacketBuf, mtu: usize) -> Next {
    let start = p.headroom();
    let inner = usize::from(p.inner_at);
    if inner > start {
        // Encapsulated here: the outer headers end where the carried packet starts.
        let overhead = inner - start;
        let carried = match walk_chain(p.data()) {
            Ok(c) if c.upper == overhead => c.upper_proto,
            // Or under IP + UDP + GTP-U (`encap gtp`).
            _ => crate::behaviour::mobile::gtp_encap::carried(p.data(), overhead).unwrap_or(0),
        };
        let inner_mtu = mtu.saturating_sub(overhead);
        return match carried {
            IPPROTO_IPV6 | IPPROTO_IPV4 if p.pull_front(overhead) => plain(t, w, p, inner_mtu),
            _ => Next::drop(DropReason::MtuExceeded),
        };
    }
    plain(t, w, p, mtu)
}

/// The error about the IPv6 or IPv4 packet in `p` (by its version), with `mtu`.
fn plain(t: &Tables, w: &mut Worker, p: &mut PacketBuf, mtu: usize) -> Next {
    let d = p.data();
    match d.first().map(|b| b >> 4) {
        Some(6) if d.len() >= Ipv6Packet::<&[u8]>::HEADER_LEN => {
            icmp::error6(t, w, p, DropReason::MtuExceeded, Icmpv6Repr::packet_too_big(mtu as u32))
        }
        Some(4) if d.len() >= Ipv4Packet::<&[u8]>::HEADER_LEN => {
            if Ipv4Packet::new_unchecked(d).flags_frag() & FLAG_DF == 0 {
                return Next::drop(DropReason::NeedsFragmentation);
            }
            let mtu = u16::try_from(mtu).unwrap_or(u16::MAX);
            icmp::error4(t, w, p, DropReason::MtuExceeded, Icmpv4Repr::frag_needed(mtu))
        }
        _ => Next::drop(DropReason::MtuExceeded),
    }
}
