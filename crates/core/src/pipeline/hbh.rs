//! The Hop-by-Hop Options header of a received IPv6 packet (RFC 8200 §4.3), examined
//! before any route lookup, whether the packet is forwarded, for a SID or for the host —
//! as the Linux kernel does it (`ipv6_parse_hopopts` / `ip6_parse_tlv`, from `ipv6_rcv`),
//! the reference where the RFCs leave the how open.
//!
//! The options are walked in order (wire's [`OptIter`], RFC 8200 §4.2):
//! - Pad1 and PadN: at most 7 bytes of padding in a row, PadN data all zero (RFC 4942
//!   §2.1.9.5); more, or a non-zero byte, makes the header malformed.
//! - Every other option counts toward a limit of [`MAX_OPTIONS`] (Linux's
//!   `net.ipv6.max_hbh_opts_number`, default 8; `max_hbh_length` defaults to no limit).
//! - Router Alert (RFC 2711): a value of exactly 2 bytes; the packet is then forwarded
//!   as any other (sr6, as a kernel with no router-alert socket, has no one to give it to).
//! - IOAM (RFC 9486): at an offset that is a multiple of 4; otherwise ignored, as by a
//!   kernel with `ioam6_enabled` 0 (sr6 has no IOAM namespaces).
//! - Jumbo Payload (RFC 2675): a 4-byte value at an offset of 4n+2, then, as RFC 2675 §3
//!   and the kernel ask, Parameter Problem code 0 for a jumbo length under 65,536
//!   (pointer at the length) or a Payload Length that is not 0 (pointer at the option).
//!   sr6's buffers hold no jumbogram, so any other Jumbo option is dropped. (A Payload
//!   Length of 0 with no Jumbo option is answered by `forward::ipv6_input`: Parameter
//!   Problem code 0 at the Payload Length, RFC 2675 §3, where the kernel forwards.)
//! - CALIPSO (RFC 5570): dropped — no domain of interpretation is configured, so none
//!   validates (as in a kernel with NetLabel and no CALIPSO DOI).
//! - Any other type: by its two high-order bits ([`Action`]): 00 skip, 01 drop, 10 drop
//!   and Parameter Problem code 2 pointing at the option type (multicast destinations
//!   included), 11 the same unless the destination is multicast, then drop silently.
//!
//! Every malformed header — truncated, an option overrunning it — is dropped silently
//! (no ICMP error), as the kernel does.

use crate::drop::DropReason;
use sr6_wire::icmpv6::{PP_ERRONEOUS_HEADER, PP_UNRECOGNIZED_OPTION};
use sr6_wire::opt::{Action, OptIter, OPT_CALIPSO, OPT_IOAM, OPT_JUMBO, OPT_PAD1, OPT_PADN, OPT_ROUTER_ALERT};
use sr6_wire::{ExtHeader, Ipv6Packet};

/// Most non-padding options a Hop-by-Hop header may carry (Linux's
/// `net.ipv6.max_hbh_opts_number` default).
pub const MAX_OPTIONS: usize = 8;
/// Most padding bytes in a row (RFC 4942 §2.1.9.5: padding aligns to 8 bytes).
const MAX_PAD: usize = 7;
/// Largest IPv6 Payload Length: a Jumbo Payload length must exceed it (RFC 2675 §2).
const MAX_PAYLOAD: u32 = 65_535;

/// What the Hop-by-Hop Options header says about a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hbh {
    /// Go on with the packet.
    Accept,
    /// Drop it silently, counted under this reason.
    Drop(DropReason),
    /// Drop it, counted under `reason`, and answer ICMPv6 Parameter Problem `code`
    /// pointing at `pointer` (from the start of the IPv6 header).
    ParamProblem { code: u8, pointer: u32, reason: DropReason },
}

/// The Hop-by-Hop Options header of `packet`, an IPv6 packet (from its fixed header on,
/// as long as its Payload Length says, or the whole frame when that is 0) whose Next
/// Header is 0.
pub fn input(packet: &[u8]) -> Hbh {
    let ip = Ipv6Packet::new_unchecked(packet);
    let fixed = Ipv6Packet::<&[u8]>::HEADER_LEN;
    let Some(rest) = packet.get(fixed..) else { return Hbh::Drop(DropReason::HbhMalformed) };
    // Linux wants 8 bytes before it reads Hdr Ext Len, then the whole header.
    let Ok(h) = ExtHeader::new_checked(rest) else { return Hbh::Drop(DropReason::HbhMalformed) };
    if rest.len() < 8 {
        return Hbh::Drop(DropReason::HbhMalformed);
    }
    let Some(header) = rest.get(..h.header_len()) else { return Hbh::Drop(DropReason::HbhMalformed) };
    let (mut pad, mut options) = (0usize, 0usize);
    for o in OptIter::new(header) {
        let Ok(o) = o else { return Hbh::Drop(DropReason::HbhMalformed) };
        let at = (fixed + o.offset) as u32;
        match o.kind {
            OPT_PAD1 | OPT_PADN => {
                pad += o.total_len();
                if pad > MAX_PAD || o.data.iter().any(|&b| b != 0) {
                    return Hbh::Drop(DropReason::HbhMalformed);
                }
                continue;
            }
            _ => {
                options += 1;
                if options > MAX_OPTIONS {
                    return Hbh::Drop(DropReason::HbhTooManyOptions);
                }
                pad = 0;
            }
        }
        match o.kind {
            OPT_ROUTER_ALERT if o.data.len() != 2 => return Hbh::Drop(DropReason::HbhMalformed),
            OPT_IOAM if o.offset % 4 != 0 => return Hbh::Drop(DropReason::HbhMalformed),
            OPT_ROUTER_ALERT | OPT_IOAM => {}
            OPT_JUMBO => return jumbo(o.data, o.offset, at, ip.payload_len()),
            OPT_CALIPSO => return Hbh::Drop(DropReason::HbhCalipso),
            kind => match Action::of(kind) {
                Action::Skip => {}
                Action::Discard => return Hbh::Drop(DropReason::HbhUnknownOption),
                Action::DiscardIcmpUnicast if ip.dst_addr().is_multicast() => {
                    return Hbh::Drop(DropReason::HbhUnknownOption)
                }
                Action::DiscardIcmp | Action::DiscardIcmpUnicast => {
                    return Hbh::ParamProblem {
                        code: PP_UNRECOGNIZED_OPTION,
                        pointer: at,
                        reason: DropReason::HbhUnknownOption,
                    }
                }
            },
        }
    }
    Hbh::Accept
}

/// A Jumbo Payload option (RFC 2675 §2, §3) with `data` at `offset` in the header (`at`
/// in the packet), in a packet whose Payload Length is `payload_len`: never accepted.
fn jumbo(data: &[u8], offset: usize, at: u32, payload_len: u16) -> Hbh {
    let Ok(len) = <[u8; 4]>::try_from(data) else { return Hbh::Drop(DropReason::HbhMalformed) };
    if offset % 4 != 2 {
        return Hbh::Drop(DropReason::HbhMalformed);
    }
    let pp = |pointer| Hbh::ParamProblem { code: PP_ERRONEOUS_HEADER, pointer, reason: DropReason::HbhJumbo };
    if u32::from_be_bytes(len) <= MAX_PAYLOAD {
        return pp(at + 2);
    }
    if payload_len != 0 {
        return pp(at);
    }
    // A jumbogram longer than any buffer: truncated.
    Hbh::Drop(DropReason::HbhJumbo)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv6 packet to `dst` whose Hop-by-Hop header holds `opts` (padded with zeros to
    /// a multiple of 8), then 8 bytes of No Next Header payload.
    fn packet(dst: [u8; 16], opts: &[u8]) -> Vec<u8> {
        let hlen = (opts.len() + 2).div_ceil(8) * 8;
        let mut p = vec![0u8; 40];
        p[0] = 0x60;
        p[6] = 0;
        p[7] = 64;
        p[8] = 0x20;
        p[24..40].copy_from_slice(&dst);
        p.extend_from_slice(&[59, (hlen / 8 - 1) as u8]);
        p.extend_from_slice(opts);
        p.resize(40 + hlen + 8, 0);
        let plen = (p.len() - 40) as u16;
        p[4..6].copy_from_slice(&plen.to_be_bytes());
        p
    }

    const UNI: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const MULTI: [u8; 16] = [0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

    fn pp2(pointer: u32) -> Hbh {
        Hbh::ParamProblem { code: PP_UNRECOGNIZED_OPTION, pointer, reason: DropReason::HbhUnknownOption }
    }

    #[test]
    fn unknown_options_by_action_bits() {
        // PadN(2) then the option at offset 4 (packet offset 44).
        for (kind, uni, multi) in [
            (0x1e, Hbh::Accept, Hbh::Accept),
            (0x7e, Hbh::Drop(DropReason::HbhUnknownOption), Hbh::Drop(DropReason::HbhUnknownOption)),
            (0x9e, pp2(44), pp2(44)),
            (0xde, pp2(44), Hbh::Drop(DropReason::HbhUnknownOption)),
        ] {
            let opts = [1, 0, kind, 0];
            assert_eq!(input(&packet(UNI, &opts)), uni, "{kind:x}");
            assert_eq!(input(&packet(MULTI, &opts)), multi, "{kind:x}");
        }
        // A skipped option before one that asks for an error: the pointer is the second.
        assert_eq!(input(&packet(UNI, &[0x1e, 1, 9, 0x9e, 0])), pp2(45));
    }

    #[test]
    fn padding_rules() {
        let ok = |o: &[u8]| input(&packet(UNI, o));
        assert_eq!(ok(&[0; 6]), Hbh::Accept); // 6 x Pad1
        assert_eq!(ok(&[1, 4, 0, 0, 0, 0]), Hbh::Accept); // PadN(6)
                                                          // 8 bytes of padding in a row (a 16-byte header of Pad1s, PadN(8)).
        assert_eq!(ok(&[0; 14]), Hbh::Drop(DropReason::HbhMalformed));
        assert_eq!(ok(&[1, 6, 0, 0, 0, 0, 0, 0]), Hbh::Drop(DropReason::HbhMalformed));
        // Padding split by an option is counted afresh.
        assert_eq!(ok(&[1, 4, 0, 0, 0, 0, 0x1e, 0, 1, 4, 0, 0, 0, 0]), Hbh::Accept);
        // Non-zero PadN data.
        assert_eq!(ok(&[1, 4, 0, 0, 7, 0]), Hbh::Drop(DropReason::HbhMalformed));
    }

    #[test]
    fn known_options() {
        let ok = |o: &[u8]| input(&packet(UNI, o));
        assert_eq!(ok(&[5, 2, 0, 0, 1, 0]), Hbh::Accept); // Router Alert (MLD), PadN(2)
        assert_eq!(ok(&[5, 3, 0, 0, 0]), Hbh::Drop(DropReason::HbhMalformed));
        assert_eq!(ok(&[0, 0, 0x31, 2, 0, 0]), Hbh::Accept); // IOAM at 4: ignored
        assert_eq!(ok(&[0x31, 2, 0, 0, 1, 0]), Hbh::Drop(DropReason::HbhMalformed));
        assert_eq!(ok(&[7, 8, 0, 0, 0, 0, 0, 0, 0, 0]), Hbh::Drop(DropReason::HbhCalipso));
        let pp0 = |pointer| Hbh::ParamProblem { code: PP_ERRONEOUS_HEADER, pointer, reason: DropReason::HbhJumbo };
        assert_eq!(ok(&[0xc2, 4, 0, 0, 0x10, 0]), pp0(44)); // length 4096
        assert_eq!(ok(&[0xc2, 4, 0, 1, 0, 0]), pp0(42)); // length 65,536, Payload Length set
        assert_eq!(ok(&[0, 0xc2, 4, 0, 1, 0, 0]), Hbh::Drop(DropReason::HbhMalformed));
        assert_eq!(ok(&[0xc2, 2, 0, 1, 0, 0]), Hbh::Drop(DropReason::HbhMalformed));
        let mut p = packet(UNI, &[0xc2, 4, 0, 1, 0, 0]);
        p[4..6].copy_from_slice(&[0, 0]);
        assert_eq!(input(&p), Hbh::Drop(DropReason::HbhJumbo));
    }

    #[test]
    fn option_limit() {
        let many = |n: usize| [0x1eu8, 0].repeat(n);
        assert_eq!(input(&packet(UNI, &many(8))), Hbh::Accept);
        assert_eq!(input(&packet(UNI, &many(9))), Hbh::Drop(DropReason::HbhTooManyOptions));
        // Padding does not count.
        let mut o = many(8);
        o.extend_from_slice(&[1, 0, 0]);
        assert_eq!(input(&packet(UNI, &o)), Hbh::Accept);
    }

    #[test]
    fn malformed_headers() {
        // An option overrunning the header.
        assert_eq!(input(&packet(UNI, &[0, 0, 0, 0, 0x1e, 2])), Hbh::Drop(DropReason::HbhMalformed));
        // The header longer than the packet, or the packet shorter than 8 bytes of it.
        let mut p = packet(UNI, &[0; 6]);
        p[41] = 3;
        assert_eq!(input(&p), Hbh::Drop(DropReason::HbhMalformed));
        for n in 0..48 {
            assert_eq!(input(&p[..n]), Hbh::Drop(DropReason::HbhMalformed), "{n}");
        }
    }

    #[test]
    fn any_bytes_no_panic() {
        // Hdr Ext Len and the options of an 8-byte header over a small alphabet: a
        // pointer always inside the header; and each cut short.
        let alphabet = [0u8, 1, 2, 4, 5, 0x31, 0xc2, 0xde];
        let base = packet(UNI, &[0; 6]);
        let mut p = base.clone();
        for mut k in 0..alphabet.len().pow(7) {
            for b in &mut p[41..48] {
                *b = alphabet[k % alphabet.len()];
                k /= alphabet.len();
            }
            let v = input(&p);
            if let Hbh::ParamProblem { pointer, .. } = v {
                let end = 40 + (u32::from(p[41]) + 1) * 8;
                assert!((42..end).contains(&pointer), "{p:?}");
            }
            let _ = input(&p[..44]);
        }
    }
}
