//! Source and destination validation of received packets, as the Linux kernel does it
//! (the reference where the RFCs leave the how open): what a router drops — silently,
//! counted — before any route lookup or ICMP error.
//!
//! IPv6 (`ipv6_rcv`, `ip6_forward`): a loopback source or destination, a multicast
//! source (RFC 4291 §2.5.3, §2.7), a multicast destination of scope 0 (reserved) or 1
//! (interface-local; RFC 4291 §2.7 and its erratum 3480); once routed toward another
//! link, a link-local or unspecified source (RFC 4291 §2.5.6; the kernel's Destination
//! Unreachable "beyond scope" about it goes to a link-local address, which sr6 cannot
//! reach: it is not sent). Checked on received transit packets; the kernel also checks
//! the inner packet an End.DX6/End.DT6 forwards, sr6 does not (it would cost the fast
//! path a compare per decapsulated packet).
//!
//! IPv4 (`ip_route_input_slow`, `fib_validate_source`; RFC 1812 §5.3.7): a source in
//! 224.0.0.0/4, 255.255.255.255, 0.0.0.0, 127.0.0.0/8 or one of the router's own
//! addresses; a destination 0.0.0.0 or in 127.0.0.0/8; and, for a packet routed back
//! out of the device it came from, a source that is a directed broadcast address of one
//! of its subnets. As in Linux, 0.0.0.0/8 other than 0.0.0.0 and 240.0.0.0/4 other than
//! 255.255.255.255 are unicast.

use std::net::Ipv6Addr;

use crate::drop::DropReason;
use crate::packet::DevId;
use crate::tables::Tables;

/// The checks of the kernel's `ipv6_rcv` on a received IPv6 packet.
#[inline]
pub fn input6(src: Ipv6Addr, dst: Ipv6Addr) -> Option<DropReason> {
    if src.is_loopback() || src.is_multicast() {
        return Some(DropReason::MartianSource);
    }
    if dst.is_loopback() || (dst.is_multicast() && dst.octets()[1] & 0x0f <= 1) {
        return Some(DropReason::MartianDestination);
    }
    None
}

/// A link-local or unspecified source: one [`forward6`] checks.
#[inline]
pub fn scoped6(src: Ipv6Addr) -> bool {
    src.is_unspecified() || crate::tables::is_link_local(&src)
}

/// `ip6_forward`'s check of a packet forwarded from `in_dev` out of `out_dev`: a
/// link-local or unspecified source must not leave its link (RFC 4291 §2.5.6).
#[inline]
pub fn forward6(src: Ipv6Addr, in_dev: DevId, out_dev: DevId) -> Option<DropReason> {
    (scoped6(src) && in_dev != out_dev).then_some(DropReason::ScopeSource)
}

/// IPv4 destinations delivered to the host before any check: multicast and the
/// limited broadcast (the kernel's multicast input and `brd_input`).
#[inline]
pub fn host_dst4(dst: u32) -> bool {
    dst >> 28 == 0xe || dst == u32::MAX
}

/// The martian checks of the kernel's `ip_route_input_slow` on a received IPv4 packet
/// whose destination is not [`host_dst4`]; own addresses as a source included
/// (`fib_validate_source`, without reverse-path filtering).
#[inline]
pub fn input4(t: &Tables, src: u32, dst: u32) -> Option<DropReason> {
    if src >> 28 == 0xe || src == u32::MAX || src == 0 || src >> 24 == 127 || t.is_local4(src) {
        return Some(DropReason::MartianSource);
    }
    if dst == 0 || dst >> 24 == 127 {
        return Some(DropReason::MartianDestination);
    }
    None
}

/// `fib_validate_source`'s full check, which the kernel makes (rp_filter off) when a
/// packet would leave by the device it arrived on: the route back to the source must not
/// be a broadcast one (a local one was refused by [`input4`]; a blackhole or unreachable
/// one is no route, which passes).
pub fn same_dev4(t: &Tables, src: u32) -> Option<DropReason> {
    t.is_bcast4(src).then_some(DropReason::MartianSource)
}

/// The fast path's screen of an IPv6 source by its first byte `b0`: true for ::/8
/// (loopback and unspecified among them) and fe00::/7 (link-local, multicast), which it
/// leaves to the general path and [`input6`] / [`forward6`]. One compare: the
/// subtraction wraps 0 to the top.
#[inline(always)]
pub(crate) fn screen_src6(b0: u8) -> bool {
    b0.wrapping_sub(1) >= 0xfd
}

/// The fast path's screen of an IPv4 address: true for 0.0.0.0/8, 127.0.0.0/8 and
/// 224.0.0.0/3, left to the general path and [`input4`].
#[inline(always)]
pub(crate) fn screen4(a: u32) -> bool {
    a.wrapping_sub(0x0100_0000) >= 0xdf00_0000 || a >> 24 == 127
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a6(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    #[test]
    fn ipv6_classes() {
        for s in ["::1", "ff02::1", "ff0e::5"] {
            assert_eq!(input6(a6(s), a6("2001:db8::1")), Some(DropReason::MartianSource), "{s}");
        }
        for d in ["::1", "ff00::1", "ff01::1", "ff11::1"] {
            assert_eq!(input6(a6("2001:db8::1"), a6(d)), Some(DropReason::MartianDestination), "{d}");
        }
        for (s, d) in [("::", "::"), ("fe80::1", "ff02::1"), ("::ffff:1.2.3.4", "::ffff:1.2.3.4"), ("fec0::1", "::2")] {
            assert_eq!(input6(a6(s), a6(d)), None, "{s} -> {d}");
        }
        assert_eq!(forward6(a6("fe80::1"), 0, 1), Some(DropReason::ScopeSource));
        assert_eq!(forward6(a6("::"), 0, 1), Some(DropReason::ScopeSource));
        assert_eq!(forward6(a6("fe80::1"), 1, 1), None);
        assert_eq!(forward6(a6("fec0::1"), 0, 1), None);
    }

    #[test]
    fn screens_cover_what_they_leave_to_the_general_path() {
        for b0 in [0u8, 0xfe, 0xff] {
            assert!(screen_src6(b0), "{b0:x}");
        }
        for b0 in [1u8, 0x20, 0xfc, 0xfd] {
            assert!(!screen_src6(b0), "{b0:x}");
        }
        for a in [0u32, 0x00ff_ffff, 0x7f00_0001, 0x7fff_ffff, 0xe000_0000, 0xf000_0001, u32::MAX] {
            assert!(screen4(a), "{a:x}");
        }
        for a in [0x0100_0000u32, 0x7eff_ffff, 0x8000_0000, 0xdfff_ffff] {
            assert!(!screen4(a), "{a:x}");
        }
        assert!(host_dst4(0xe000_0001) && host_dst4(u32::MAX) && !host_dst4(0xf000_0001));
    }
}
