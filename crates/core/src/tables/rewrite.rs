//! Head-end rewrites as the fast path applies them ([`Rewrite`]): the bytes a policy
//! puts in front of a packet — the Ethernet header towards its first segment, the
//! IPv6 header, the SRH — prepared once when the tables are built, right-aligned in a
//! fixed-size block so that they are written with one block copy, and the function that
//! applies them, chosen for the policy's kind and header length. The fields that depend
//! on the packet are patched after the copy.

use std::net::Ipv6Addr;

use super::Policy;
use crate::packet::{copy_block, DevId, PacketBuf, BUF_LEN};
use crate::spec::Seg6Mode;
use sr6_wire::fixed::{Ipv6Fixed, SrhFixed, ETH_IPV6_LEN as S, ETH_LEN as E};
use sr6_wire::srh::FIXED_LEN as SRH_FIXED;
use sr6_wire::{EthernetFrame, Ipv6Packet, ETHERTYPE_IPV6, IPPROTO_ETHERNET, IPPROTO_IPV6, IPPROTO_ROUTING};

/// How a [`Rewrite`] applies its block.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RewriteKind {
    /// Not applied by the fast path (HMAC computed per packet, no route to the first
    /// segment, headers longer than the block).
    None,
    /// H.Encaps, H.Encaps.Red: the block's headers replace the Ethernet header.
    Encap,
    /// H.Insert, H.Insert.Red: the block's headers replace the Ethernet + IPv6 headers.
    Insert,
    /// H.Encaps.L2, H.Encaps.L2.Red: the block's headers go in front of the frame as
    /// received (RFC 8986 §5.3).
    EncapL2,
}

/// A head-end policy's rewrite, for the fast path (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Rewrite {
    pub kind: RewriteKind,
    /// The device towards the policy's first segment.
    pub out: DevId,
    /// How many bytes of the block's end are the headers (Ethernet + IPv6 + SRH).
    pub len: u8,
    /// The code that applies it, chosen by `kind` and `len` (the usual header lengths
    /// have code of their own with every offset a constant).
    pub apply: RewriteFn,
    pub block: [u8; Rewrite::BLOCK],
}

impl Rewrite {
    /// Up to 6 segments, or 3 with an HMAC TLV.
    pub const BLOCK: usize = 160;

    /// The rewrite of `pol`, whose first segment the main FIB sends out of device `out`
    /// with that Ethernet header (`None`: the general path decides).
    pub(crate) fn of(pol: &Policy, out: Option<(DevId, [u8; 12])>) -> Rewrite {
        let none = Rewrite {
            kind: RewriteKind::None,
            out: 0,
            len: 0,
            apply: rewrite_for(RewriteKind::None, 0),
            block: [0; Self::BLOCK],
        };
        let Some((dev, eth)) = out else { return none };
        let kind = match pol.mode {
            Seg6Mode::Encap | Seg6Mode::EncapRed if pol.hmac_key_id.is_none() || pol.hmac_ready => RewriteKind::Encap,
            Seg6Mode::L2Encap | Seg6Mode::L2EncapRed if pol.hmac_key_id.is_none() || pol.hmac_ready => {
                RewriteKind::EncapL2
            }
            // An SRH of at least one segment (the fast path patches Segment List[0]).
            Seg6Mode::Inline | Seg6Mode::InlineRed if pol.hmac_key_id.is_none() && pol.srh.len() >= 24 => {
                RewriteKind::Insert
            }
            _ => return none,
        };
        let len = S + pol.srh.len();
        if len > Self::BLOCK {
            return none;
        }
        // The headers, right-aligned in the block: Ethernet, IPv6, the policy's SRH.
        let mut block = [0u8; Self::BLOCK];
        let Some(h) = block.get_mut(Self::BLOCK - len..) else { return none };
        let (eh, rest) = h.split_at_mut(E);
        eh[..12].copy_from_slice(&eth);
        EthernetFrame::new_unchecked(eh).set_ethertype(ETHERTYPE_IPV6);
        let (ih, srh) = rest.split_at_mut(40);
        let encap = kind != RewriteKind::Insert;
        let payload = if kind == RewriteKind::EncapL2 { IPPROTO_ETHERNET } else { IPPROTO_IPV6 };
        let mut ip = Ipv6Packet::new_unchecked(ih);
        ip.set_version(6);
        ip.set_next_header(if pol.srh.is_empty() { payload } else { IPPROTO_ROUTING });
        if encap {
            ip.set_src_addr(&Ipv6Addr::from(pol.src));
        }
        ip.set_dst_addr(&Ipv6Addr::from(pol.first));
        srh.copy_from_slice(&pol.srh);
        if encap && !pol.srh.is_empty() {
            sr6_wire::SrhPacket::new_unchecked(srh).set_next_header(payload);
        }
        Rewrite { kind, out: dev, len: len as u8, apply: rewrite_for(kind, len), block }
    }
}

/// The rewrite of a head-end policy, chosen when the tables are built
/// ([`rewrite_for`]); called through the pointer, out of the batch loop (inlined, the
/// registers it needs would cost the other cases spills there). `None` leaves the frame
/// untouched.
pub(crate) type RewriteFn = fn(&Rewrite, &mut PacketBuf) -> Option<()>;

/// The rewrite of a policy of [`Rewrite`] kind `kind` with `len` bytes of headers:
/// the usual lengths (an SRH of 1 to 4 segments and no TLV) have code of their own,
/// with every offset a constant ([`encap`], [`insert`]); the others take
/// [`any_policy`].
fn rewrite_for(kind: RewriteKind, len: usize) -> RewriteFn {
    match (kind, len) {
        (RewriteKind::Encap, 78) => encap::<78, 80, 120, 0>,
        (RewriteKind::Encap, 94) => encap::<94, 96, 136, 0>,
        (RewriteKind::Encap, 110) => encap::<110, 112, 152, 0>,
        (RewriteKind::Encap, 126) => encap::<126, 128, 168, 0>,
        // Two segments and an HMAC TLV.
        (RewriteKind::Encap, 134) => encap::<134, 144, 184, 0>,
        (RewriteKind::Insert, 78) => insert::<78, 80>,
        (RewriteKind::Insert, 94) => insert::<94, 96>,
        (RewriteKind::Insert, 110) => insert::<110, 112>,
        (RewriteKind::Insert, 126) => insert::<126, 128>,
        (RewriteKind::EncapL2, 78) => encap::<78, 80, 134, E>,
        (RewriteKind::EncapL2, 94) => encap::<94, 96, 150, E>,
        (RewriteKind::EncapL2, 110) => encap::<110, 112, 166, E>,
        (RewriteKind::EncapL2, 126) => encap::<126, 128, 182, E>,
        _ => any_policy,
    }
}

/// A frame is at most [`BUF_LEN`] bytes long, so no head-end rewrite of the fast path
/// can overflow the IPv6 Payload Length: [`encap`] and [`insert`] need not check it.
const _: () = assert!(BUF_LEN + Rewrite::BLOCK <= u16::MAX as usize);

/// H.Encaps(.Red) (`L` = 0) and H.Encaps.L2(.Red) of an IPv6 packet (`L` = [`E`]) with
/// `N` bytes of headers (RFC 8986 §5.1, §5.3, with Linux's outer fields, as
/// `seg6_do_srh_encap` sets them): the headers go in front of the IPv6 packet, replacing
/// the Ethernet header, or, for L2, in front of the frame as received (`try6` checked
/// its Ethernet header: untagged, IPv6), which is the payload. Version, traffic class
/// and flow label are the inner IPv6 packet's, the hop limit one less. `K` is `N`
/// rounded up to 16 (the block written), `W` = `K` + `L` + 40: the view also holds what
/// is kept of the Ethernet header and the inner IPv6 header, read before it is covered.
fn encap<const N: usize, const K: usize, const W: usize, const L: usize>(
    fp: &Rewrite,
    p: &mut PacketBuf,
) -> Option<()> {
    const { assert!(K.is_multiple_of(16) && K >= N && K - N < 16 && W == K + L + 40 && (L == 0 || L == E)) };
    const { assert!(N >= S && K <= Rewrite::BLOCK) };
    let len = p.len();
    if len < S {
        return None;
    }
    // At most BUF_LEN + N - S (see the assertion above).
    let plen = (len - E + L + (N - S)) as u16;
    let block = fp.block.last_chunk::<K>()?;
    // The view ends after the inner IPv6 header; the frame will start N bytes before
    // what is kept of the received frame.
    let d = p.rewrite_front::<W>(S, N + L + 40)?;
    let inner = d.last_chunk::<40>()?;
    let (vtf, hl) = (inner.vtf(), inner.hop_limit());
    copy_block(d.first_chunk_mut::<K>()?, block);
    // The new Ethernet + IPv6 header starts K - N bytes into the view.
    let o = d.get_mut(K - N..)?.first_chunk_mut::<S>()?;
    o.set_vtf(vtf);
    o.set_payload_len(plen);
    o.set_hop_limit(hl.wrapping_sub(1));
    Some(())
}

/// H.Insert(.Red) with `N` bytes of headers (RFC 8986 §5.2): they replace the Ethernet
/// and IPv6 headers; the source, traffic class and flow label stay, the old destination
/// becomes Segment List[0] and the old Next Header the SRH's (never Hop-by-Hop: `try6`
/// leaves a packet with a Hop-by-Hop header to the general path, which inserts the SRH
/// after it). `K` as in [`encap`]: the view ends where the old IPv6 header does, so it
/// holds that header too.
fn insert<const N: usize, const K: usize>(fp: &Rewrite, p: &mut PacketBuf) -> Option<()> {
    const { assert!(K.is_multiple_of(16) && K >= N && K - N < 16 && N >= S + 24 && K <= Rewrite::BLOCK) };
    let len = p.len();
    if len < S {
        return None;
    }
    // The new Payload Length, the old one (checked by `try6`: the frame's length - S)
    // + the SRH's: at most BUF_LEN + N - 2 S (see the assertion above).
    let plen = (len - S + (N - S)) as u16;
    let block = fp.block.last_chunk::<K>()?;
    let d = p.rewrite_front::<K>(S, N)?;
    // The old headers (the view's last S bytes), read before the block covers them.
    let old = d.last_chunk::<S>()?;
    let (vtf, nh, hl) = (old.vtf(), old.next_header(), old.hop_limit());
    // (As integers: kept in registers across the block copy.)
    let (src, dst) = (u128::from_ne_bytes(old.src_bytes()), u128::from_ne_bytes(old.dst_bytes()));
    copy_block(d, block);
    // The new Ethernet + IPv6 header starts K - N bytes into the view, the SRH after it.
    let (o, srh) = d.get_mut(K - N..)?.split_first_chunk_mut::<S>()?;
    o.set_vtf(vtf);
    o.set_payload_len(plen);
    o.set_hop_limit(hl.wrapping_sub(1));
    o.set_src_bytes(&src.to_ne_bytes());
    insert_srh_fields(srh, nh, &dst.to_ne_bytes())
}

/// The fields of an inserted SRH (at the start of `srh`) that come from the packet:
/// Next Header `nh` (the old IPv6 header's) and Segment List[0] `dst` (the old
/// destination; RFC 8986 §5.2).
#[inline(always)]
fn insert_srh_fields(srh: &mut [u8], nh: u8, dst: &[u8; 16]) -> Option<()> {
    let (fixed, segs) = srh.split_first_chunk_mut::<SRH_FIXED>()?;
    fixed.set_next_header(nh);
    segs.first_chunk_mut::<16>()?.copy_from_slice(dst);
    Some(())
}

/// [`Rewrite`] for the other header lengths.
fn any_policy(fp: &Rewrite, p: &mut PacketBuf) -> Option<()> {
    let f = p.data();
    let h = f.first_chunk::<S>()?;
    let inner_len = f.len() - E;
    let n = usize::from(fp.len);
    // What the rewrite keeps of the packet's headers, read before they are overwritten.
    let (vtf, hl) = (h.vtf(), h.hop_limit());
    // (A policy the fast path does not apply has no headers: declined here.)
    let srh_len = n.checked_sub(S)?;
    if srh_len + inner_len > usize::from(u16::MAX) {
        return None;
    }
    if fp.kind == RewriteKind::Encap {
        if !p.put_front(&fp.block, n, E) {
            return None;
        }
        // The frame now starts with the n >= S bytes of headers.
        let o = p.data_mut().first_chunk_mut::<S>()?;
        o.set_vtf(vtf);
        o.set_payload_len((srh_len + inner_len) as u16);
        o.set_hop_limit(hl - 1);
    } else if fp.kind == RewriteKind::Insert {
        let nh = h.next_header();
        // (Never Hop-by-Hop: see `insert`.)
        let plen = h.payload_len() + srh_len as u16;
        let (src, dst) = (h.src_bytes(), h.dst_bytes());
        if !p.put_front(&fp.block, n, S) {
            return None;
        }
        // The frame now starts with the n >= S + 24 bytes of headers (an SRH with at
        // least one segment).
        let (o, srh) = p.data_mut().split_first_chunk_mut::<S>()?;
        o.set_vtf(vtf);
        o.set_payload_len(plen);
        o.set_hop_limit(hl - 1);
        o.set_src_bytes(&src);
        insert_srh_fields(srh, nh, &dst)?;
    } else {
        return None;
    }
    Some(())
}
