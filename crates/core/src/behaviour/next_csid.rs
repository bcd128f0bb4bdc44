//! The NEXT-C-SID flavour of End, End.X and End.T (RFC 9800 §4.1): the destination
//! address is a C-SID container — Locator-Block (`lblen` bits), the active C-SID
//! (`nflen` bits), then the argument, which holds the C-SIDs still to come. While the
//! argument is not zero the SID shifts it left by one C-SID over the active one and
//! forwards ([`advance`]); once it is zero the SID is an ordinary End (with the SRH),
//! which [`super::endpoint::arrival`] arranges by handing the behaviour
//! [`Arrival::NextCsid`](super::Arrival) only in the first case.

use super::Next;
use crate::packet::PacketBuf;
use crate::spec::CsidLengths;
use crate::tables::fast_route::{is_gateway, resolve, route_in, route_to};
use crate::tables::{Device, FastKind, FastSid, Fib, Hop, Out, Tables};
use sr6_wire::fixed::{EthAddrs, FrameFixed, Ipv6Fixed, ETH_IPV6_LEN};
use sr6_wire::Ipv6Packet;

/// Whether the destination `dst` carries a non-zero argument after the block and the
/// active C-SID (RFC 9800 §4.1.1 S01, "DA.Argument != 0").
#[inline]
pub fn has_argument(dst: u128, c: CsidLengths) -> bool {
    let used = u32::from(c.lblen) + u32::from(c.nflen);
    // (`used` is at most 128: `CsidLengths::new`.)
    dst.checked_shl(used).is_some_and(|arg| arg != 0)
}

/// The destination once its argument has moved into the active C-SID's place (RFC
/// 9800 §4.1.1 S05-S06): the block kept, the bits after the block shifted left by
/// `nflen`, zeros shifted in at the end.
#[inline]
pub fn shifted(dst: u128, c: CsidLengths) -> u128 {
    let lb = u32::from(c.lblen);
    // The block's mask (lblen is 8..=120, so neither shift overflows).
    let block = !(u128::MAX >> lb);
    (dst & block) | ((dst << c.nflen) & !block)
}

/// A C-SID container read with lengths `c` (RFC 9800 §4.1): its Locator-Block (the
/// address with every bit after the block cleared) and its C-SIDs, each `nflen` bits,
/// up to the first zero C-SID (the end of the container), then what is left after the
/// last whole C-SID if it is not zero (an argument that is not a C-SID). For display.
pub fn split(a: u128, c: CsidLengths) -> (u128, Vec<u128>, Option<u128>) {
    let lb = u32::from(c.lblen);
    let nf = u32::from(c.nflen);
    let block = a & !(u128::MAX >> lb);
    let mut csids = Vec::new();
    let mut at = lb;
    while at + nf <= 128 {
        let v = (a << at) >> (128 - nf);
        if v == 0 {
            break;
        }
        csids.push(v);
        at += nf;
    }
    let rest = a.checked_shl(at).filter(|r| *r != 0).map(|r| r >> at);
    (block, csids, rest)
}

/// RFC 9800 §4.1.1 S02-S07 for a packet whose destination argument is not zero: the hop
/// limit must survive (else Time Exceeded, quoting the packet as received), then the
/// next C-SID becomes active and the hop limit is decremented. The caller does S08, its
/// behaviour's lookup (End: the main table; End.T: its table; End.X: its next hop).
pub fn advance(p: &mut PacketBuf, c: CsidLengths) -> Result<(), Next> {
    let d = p.data_mut();
    let Some(h) = d.get_mut(..Ipv6Packet::<&[u8]>::HEADER_LEN) else {
        return Err(Next::drop(crate::drop::DropReason::Malformed));
    };
    let mut ip = Ipv6Packet::new_unchecked(h);
    let hl = ip.hop_limit();
    if hl <= 1 {
        return Err(Next::time_exceeded());
    }
    let dst = u128::from_be_bytes(ip.dst_addr().octets());
    ip.set_dst_addr(&shifted(dst, c).to_be_bytes().into());
    ip.set_hop_limit(hl - 1);
    Ok(())
}

/// The fast step of End and End.T (kind EndCsid) and End.X (EndXCsid) with NEXT-C-SID
/// and no PSP, on a frame received on `dev`, with or without an SRH: [`advance`] and the
/// behaviour's lookup, all lookups before the frame is touched. An argument of zero (the
/// ordinary behaviour), a hop limit that does not survive, a Hop-by-Hop header, an SRH
/// on a device that requires an HMAC (the fast path leaves all those to the general
/// path) or anything unusual: `None`, the frame untouched, for the general path.
#[inline(never)]
pub(crate) fn fast(t: &Tables, dev: &Device, f: &mut [u8], i: usize, s: FastSid) -> Option<Out> {
    let (h, rest) = f.split_first_chunk_mut::<ETH_IPV6_LEN>()?;
    if !h.is_version6()
        || !h.payload_len_is(rest.len())
        || h.hop_limit() <= 1
        || h.next_header() == sr6_wire::IPPROTO_HOPOPTS
        || !dev.forwarding6
        || (dev.require_hmac > 0 && h.next_header() == sr6_wire::IPPROTO_ROUTING)
    {
        return None;
    }
    let c = t.sids.get(i)?.action.flavors.next_csid?;
    let dst = h.dst();
    if !has_argument(dst, c) {
        return None;
    }
    let new = shifted(dst, c);
    let (out, eth) = if s.is(FastKind::EndXCsid) { resolve(t, s.next_hop(), new)? } else { route_to(t, s.arg, new)? };
    h.decrement_hop_limit();
    h.set_dst_bytes(&new.to_be_bytes());
    h.set_addrs(eth);
    Some(out)
}

/// The mask of a Locator-Block of `lblen` <= 64 bits in the address's first 64 bits
/// (for [`shifted_under`]).
pub(crate) fn block_mask_hi(lblen: u8) -> u64 {
    u64::MAX.checked_shr(u32::from(lblen)).map_or(u64::MAX, |v| !v)
}

/// [`has_argument`] and [`shifted`] for a block of at most 64 bits given as its mask
/// `mask` in the address's first 64 bits and a C-SID of `nf` bits, 8 <= nf < 64 (the
/// lengths [`Hop::csid`] takes), on the address's halves: the bits after the block,
/// shifted, are the argument, so S01 tests them. `None` for an argument of zero.
#[inline(always)]
pub(crate) fn shifted_under(dst: u128, mask: u64, nf: u32) -> Option<u128> {
    // (The shift told to be under 64 compiles to a double shift and a shift.)
    let sh = dst << (nf & 63);
    let arg_hi = (sh >> 64) as u64 & !mask;
    let arg_lo = sh as u64;
    if arg_hi | arg_lo == 0 {
        return None;
    }
    Some(u128::from(((dst >> 64) as u64 & mask) | arg_hi) << 64 | u128::from(arg_lo))
}

/// The fast step of a pure uSID packet (no SRH) whose route lookup in `main` found the
/// [`Hop`] of a NEXT-C-SID End, End.T or End.X SID ([`Hop::csid`]) with code `code`
/// (the hop's own, except that a lookup that did not end in a hash hit passes
/// [`Fib::CSID`] for [`Fib::CSID_MAIN`]); `root` is the LPM's root entry of the hash hit
/// ([`Lpm::hash_hit_root`](crate::lpm::Lpm::hash_hit_root)) for [`Fib::CSID_MAIN`].
/// `pipeline::fast::try6` has checked the frame as for transit (version, length, hop
/// limit above 1, no Hop-by-Hop header, a source to forward from) and hands over `h`,
/// the Ethernet + IPv6 header, with its destination `dst`. RFC 9800 §4.1.1 S01 and
/// S05-S08 with the lengths and the SID's argument read from the hop — no other table
/// is read before the next lookup —, the header rewritten once the packet is routed.
/// Returns the output device and the SID's index (to count it), or `None` with the
/// frame untouched: an argument of zero (the ordinary behaviour, upper-layer
/// processing) or a destination that is no plain route.
#[inline(always)]
pub(crate) fn fast_hop(
    t: &Tables,
    main: &Fib,
    h: &mut [u8; ETH_IPV6_LEN],
    hop: &Hop,
    code: u32,
    root: u32,
    dst: u128,
) -> Option<(Out, usize)> {
    let (i, mask, nf) = hop.csid_parts();
    let new = shifted_under(dst, mask, nf)?;
    // End in `main` (the lookup's own FIB, in hand), under the same root entry when
    // the block covers it; End.X to its next hop; End.T in its table.
    let (out, eth) = if code == Fib::CSID_MAIN {
        match main.lpm6.hash_hit_under(root, new) {
            Some(g) if is_gateway(g) => (g.dev.into(), EthAddrs::of(&g.eth)),
            _ => route_in(t, main, new)?,
        }
    } else if code == Fib::CSID_X {
        resolve(t, FastSid::new(FastKind::EndXCsid, hop.csid_arg()).next_hop(), new)?
    } else {
        route_to(t, hop.csid_arg(), new)?
    };
    // S07, and the addresses of the next hop.
    h.decrement_hop_limit();
    h.set_dst_bytes(&new.to_be_bytes());
    h.set_addrs(eth);
    Some((out, i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv6Addr;

    fn a(s: &str) -> u128 {
        u128::from(s.parse::<Ipv6Addr>().unwrap())
    }

    #[test]
    fn f3216_shifts_one_usid() {
        let c = CsidLengths::default();
        // RFC 9800's uSID example: block fc00:0, C-SIDs 0100, 0200, 0300.
        let d = a("fc00:0:100:200:300::");
        assert!(has_argument(d, c));
        assert_eq!(shifted(d, c), a("fc00:0:200:300::"));
        assert_eq!(shifted(a("fc00:0:200:300::"), c), a("fc00:0:300::"));
        assert!(!has_argument(a("fc00:0:300::"), c));
        // The last bit of the argument counts.
        assert!(has_argument(a("fc00:0:300::1"), c));
        assert_eq!(shifted(a("fc00:0:300::1"), c), a("fc00:0::1:0"));
    }

    #[test]
    fn every_legal_length_matches_a_byte_model() {
        // Against a byte-wise model of S05-S06 (Linux's memmove + memset).
        let d = a("2001:db8:1122:3344:5566:7788:99aa:bbcc");
        for lb in (8..=120u8).step_by(8) {
            for nf in (8..=(128 - lb)).step_by(8) {
                let c = CsidLengths::new(lb, nf).unwrap();
                let mut b = d.to_be_bytes();
                let (lo, fo) = (usize::from(lb / 8), usize::from(nf / 8));
                b.copy_within(lo + fo.., lo);
                b[16 - fo..].fill(0);
                assert_eq!(shifted(d, c), u128::from_be_bytes(b), "lblen {lb} nflen {nf}");
                let arg_zero = d.to_be_bytes()[lo + fo..].iter().all(|x| *x == 0);
                assert_eq!(has_argument(d, c), !arg_zero, "lblen {lb} nflen {nf}");
            }
        }
    }

    #[test]
    fn halves_agree_with_the_whole_address() {
        // `shifted_under` (the fast path's) against `has_argument` and `shifted` for
        // every length pair it takes, on addresses with arguments of every size.
        let mut x: u128 = 0x2001_0db8_1122_3344_5566_7788_99aa_bbcc;
        for lb in (8..=64u8).step_by(8) {
            for nf in (8..64u8).step_by(8) {
                let c = CsidLengths::new(lb, nf).unwrap();
                let mask = block_mask_hi(lb);
                for cut in 0..=128u32 {
                    // An argument ending `cut` bits from the end (all zero at 128).
                    x = x.rotate_left(37) ^ 0x9e37_79b9_7f4a_7c15;
                    let d = x.checked_shr(cut).map_or(0, |v| v << cut) | (x & !(u128::MAX >> (lb + nf)));
                    let want = has_argument(d, c).then(|| shifted(d, c));
                    assert_eq!(shifted_under(d, mask, u32::from(nf)), want, "{lb}/{nf} {d:x}");
                }
            }
        }
    }

    #[test]
    fn containers_split_into_block_and_csids() {
        let c = CsidLengths::default();
        assert_eq!(split(a("fc00:0:f00:b00:c00::"), c), (a("fc00::"), vec![0xf00, 0xb00, 0xc00], None));
        // The list ends at the first zero C-SID; bits after it are shown apart.
        assert_eq!(split(a("fc00:0:f00::1"), c), (a("fc00::"), vec![0xf00], Some(1)));
        assert_eq!(split(a("fc00:0:f00:b00:c00:d00:e00:f00"), c).1.len(), 6);
        // 112/8: one C-SID, the last byte.
        let c = CsidLengths::new(112, 8).unwrap();
        assert_eq!(split(a("fc62::ee02"), c), (a("fc62::"), vec![0xee, 0x02], None));
        // 120/8 with nothing after the block.
        assert_eq!(split(a("fc62::"), CsidLengths::new(120, 8).unwrap()), (a("fc62::"), vec![], None));
    }

    #[test]
    fn kernel_length_rules() {
        assert!(CsidLengths::new(32, 16).is_ok());
        assert!(CsidLengths::new(120, 8).is_ok());
        assert!(CsidLengths::new(64, 64).is_ok());
        assert!(CsidLengths::new(0, 16).is_err());
        assert!(CsidLengths::new(12, 16).is_err());
        assert!(CsidLengths::new(32, 0).is_err());
        assert!(CsidLengths::new(64, 72).is_err());
    }
}
