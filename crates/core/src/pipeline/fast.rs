//! The fast path: the common IPv6 cases handled in one pass over fixed offsets, with
//! every lookup done *before* the packet is touched, so that anything unusual returns
//! `None` with the frame unchanged and takes the general path ([`super::forward`] and
//! [`crate::behaviour`]), which stays the reference: a differential test
//! (`crates/sr6/tests/fast_path.rs`) checks both give the same bytes, verdicts and
//! counters.
//!
//! Handled here: transit forwarding (RFC 8200 §3); End, End.X, End.T without PSP
//! on an SRH that directly follows the IPv6 header, has no TLVs and needs no HMAC (RFC
//! 8986 §4.1-§4.3); End.DX6 and End.DT6 on such an SRH with Segments Left 0 and an inner
//! IPv6 packet (§4.4, §4.6); H.Encaps / H.Encaps.Red and H.Encaps.L2 / H.Encaps.L2.Red
//! of IPv6 packets without per-packet HMAC, H.Insert / H.Insert.Red without HMAC (§5.1-
//! §5.3). Tried only when [`try6`] declined, out of
//! the batch loop ([`try_cold`]): IPv4 forwarding (RFC 1812 §5.2.2, §5.3.1), End.DX4,
//! End.DT4, End.DT46 and End.DX2 (RFC 8986 §4.5, §4.7-§4.9), End.B6.Encaps(.Red) without
//! flavours (§4.14), End.B6 (Linux's insertion) and End, End.T, End.X with PSP
//! (§4.16.1), the SID handed over by `try6`. Everything else — errors, ICMP,
//! local delivery, on-the-wire oddities — goes to the general path.

use crate::counters::Counters;
use crate::lpm;
use crate::packet::{DevId, Front, PacketBuf, BUF_LEN};
use crate::tables::{Device, FastKind, FastSid, Fib, Hop, NextHop, Rewrite, RewriteKind, Route, Tables};
use crate::words::WordMap;
use sr6_wire::checksum;

/// A device as the fast path hands it on ([`DevId`] widened where it was read): the
/// output device's index is both the verdict and the index of its transmit counter,
/// and widening it once, at the load, saves doing it again after the paths meet.
pub type Out = usize;

/// Ethernet header length.
const E: usize = 14;
/// Where the SRH starts when it directly follows the IPv6 header.
const S: usize = E + 40;
// [`try6`] compares the IPv6 Payload Length with the frame's length in 16 bits.
const _: () = assert!(BUF_LEN - S <= u16::MAX as usize);

/// Resolves a next hop to its device and Ethernet addresses (`dst` for on-link):
/// [`Tables::resolve`] in the shape the fast path needs (the addresses as [`Macs`], the
/// on-link neighbour probe out of line, where it keeps the loop's registers free).
/// Addresses are big-endian `u128`s throughout the fast path: one load each, kept in
/// registers, instead of 16 bytes taken apart for the lookups.
#[inline(always)]
fn resolve(t: &Tables, nh: NextHop, dst: u128) -> Option<(Out, Macs)> {
    match nh {
        NextHop::Adj(i) => adjacency(t, i),
        NextHop::OnLink(d) => on_link(t, d, dst),
    }
}

/// Adjacency `i`'s device and Ethernet addresses, if its neighbour is known.
#[inline(always)]
fn adjacency(t: &Tables, i: u32) -> Option<(Out, Macs)> {
    let a = t.adjacencies.get(i as usize)?;
    Some((a.dev.into(), Macs::of(a.eth.as_ref()?)))
}

/// The neighbour `dst` on device `d` (a hash-map probe): out of line.
#[cold]
#[inline(never)]
fn on_link(t: &Tables, d: DevId, dst: u128) -> Option<(Out, Macs)> {
    Some((d.into(), Macs::of(&t.neighbour_eth(d, dst)?)))
}

/// The destination and source MAC addresses of an Ethernet header (its first 12
/// bytes) as two integers in memory order, so that they travel in registers from the
/// lookup that found them to the frame.
#[derive(Clone, Copy)]
struct Macs(u64, u32);

impl Macs {
    #[inline(always)]
    fn of(e: &[u8; 12]) -> Macs {
        let [a, b, c, d, e, f, g, h, i, j, k, l] = *e;
        Macs(u64::from_ne_bytes([a, b, c, d, e, f, g, h]), u32::from_ne_bytes([i, j, k, l]))
    }

    /// Writes them to `to`, 12 bytes.
    #[inline(always)]
    fn write(self, to: &mut [u8]) {
        to[..8].copy_from_slice(&self.0.to_ne_bytes());
        to[8..12].copy_from_slice(&self.1.to_ne_bytes());
    }
}

/// The adjacency of a gateway route, from the hop found next to the entry its lookup
/// ended on (unmarked: no /128 can match instead).
#[inline(always)]
fn gateway(h: &Hop) -> Option<(Out, Macs)> {
    if h.code != Fib::GATEWAY {
        return None;
    }
    Some((h.dev.into(), Macs::of(&h.eth)))
}

/// The adjacency FIB `table` sends `dst` to, if that is a plain route.
#[inline(always)]
fn route_to(t: &Tables, table: u32, dst: u128) -> Option<(Out, Macs)> {
    let fib = t.fibs.get(table as usize)?;
    // The usual case, a gateway route found in one hash probe, first. Both ways end on
    // the hop, read once after they meet.
    let hop = match fib.lpm6.hash_hit(dst) {
        Some(h) if is_gateway(h) => h,
        _ => match trie_gateway(fib, dst) {
            Ok(h) => h,
            Err(e) => return route_to_any(t, fib, dst, e),
        },
    };
    Some((hop.dev.into(), Macs::of(&hop.eth)))
}

/// The hop of a gateway route to `dst` in `fib` by the whole lookup, for when the hash
/// probe did not settle it; otherwise the entry the lookup ended on, for
/// [`route_to_any`].
#[inline(always)]
fn trie_gateway(fib: &Fib, dst: u128) -> Result<&Hop, u32> {
    let (e, hop) = fib.lpm6.lookup_aux(dst);
    if lpm::entry_marked(e) || !is_gateway(hop) {
        return Err(e);
    }
    Ok(hop)
}

/// [`route_to`] writing the Ethernet addresses to `eth` itself. Each way to the
/// route writes them and returns: had they met on the hop found, the compiler would
/// read it through the address of whichever it was, worked out apart on each way.
#[inline(always)]
fn route_into(t: &Tables, fib: &Fib, dst: u128, eth: &mut [u8; 12]) -> Option<Out> {
    if let Some(hop) = fib.lpm6.hash_hit(dst) {
        if is_gateway(hop) {
            *eth = hop.eth;
            return Some(hop.dev.into());
        }
    }
    let (out, macs) = match trie_gateway(fib, dst) {
        Ok(hop) => (hop.dev.into(), Macs::of(&hop.eth)),
        Err(e) => route_to_any(t, fib, dst, e)?,
    };
    macs.write(eth);
    Some(out)
}

/// Whether hop `h` is a gateway route's ([`gateway`]).
#[inline(always)]
fn is_gateway(h: &Hop) -> bool {
    h.code == Fib::GATEWAY
}

/// [`route_to`] for every other case.
#[inline(never)]
fn route_to_any(t: &Tables, fib: &Fib, dst: u128, e: u32) -> Option<(Out, Macs)> {
    match fib.route_of_entry(dst, e)? {
        Route::Forward(nh) => resolve(t, nh, dst),
        _ => None,
    }
}

/// What the fast path decided about a frame.
pub enum Fast {
    /// Transmit the rewritten frame out of this device (the fast path never drops or
    /// delivers locally).
    Tx(Out),
    /// Not handled in the batch loop, frame untouched; it is for the SID whose word
    /// ([`FastSid::pack`]: index, kind, argument) this is, of kind
    /// [`None`](FastKind::None) when it is no SID or one the fast path does not handle:
    /// [`try_cold`] is given it. One word, so that the decision stays in registers.
    Cold(u64),
    /// Not handled, frame untouched: the general path's.
    General,
}

impl From<Option<Out>> for Fast {
    #[inline(always)]
    fn from(o: Option<Out>) -> Fast {
        match o {
            Some(out) => Fast::Tx(out),
            None => Fast::General,
        }
    }
}

/// What the fast path knows of a batch before its first packet: the main FIB (and that
/// the device the batch came from forwards IPv6).
#[derive(Clone, Copy)]
pub struct Ingress<'t> {
    pub main: &'t Fib,
}

/// Tries the fast path on an Ethernet frame received on the batch's device (see
/// [`Fast`]). The caller has checked that the batch's device forwards IPv6 and whether
/// it requires an HMAC (`REQUIRE_HMAC`); the frame's `in_dev` is not read (see
/// [`Worker::process_batch`](super::Worker::process_batch)).
#[inline(always)]
pub fn try6<const REQUIRE_HMAC: bool>(t: &Tables, c: &mut Counters, from: Ingress, p: &mut PacketBuf) -> Fast {
    let (f, front) = p.data_and_front();
    let len = f.len();
    // Fixed-size views: every constant-offset access below is check-free. The first
    // covers an SRH's first 8 bytes too, so the frames taken here are at least 62 bytes
    // long: a shorter IPv6 frame (a payload under 8 bytes) is padded to 60 on the wire,
    // and Ethernet padding is the general path's anyway.
    let Some((hs, rest)) = f.split_first_chunk_mut::<{ S + 8 }>() else { return Fast::General };
    let Some((h, srh)) = hs.split_first_chunk_mut::<S>() else { return Fast::General };
    let Some(srh) = srh.first_chunk_mut::<8>() else { return Fast::General };
    // EtherType IPv6 and IP version 6 in one compare.
    let Ok(head) = h[12..16].try_into() else { return Fast::General };
    if u32::from_be_bytes(head) & 0xffff_f000 != 0x86dd_6000 {
        return Fast::General;
    }
    // No Ethernet padding, nothing truncated.
    if !length_is([h[E + 4], h[E + 5]], rest.len() + 8) {
        return Fast::General;
    }
    let hl = h[E + 7];
    let Ok(dst) = h[E + 24..E + 40].try_into() else { return Fast::General };
    let dst = u128::from_be_bytes(dst);
    if hl <= 1 {
        return Fast::General;
    }
    // A packet carrying an SRH is most likely for one of our SIDs (/128s): probe those
    // first; anything else (transit, head-end) walks the trie first. Same result.
    let main = from.main;
    // Only SIDs with an SRH are for the fast path: the block yields the index of a SID
    // of a kind the loop handles and what the fast path knows of it; every other case
    // returns from inside it.
    let (i, s) = 'sid: {
        let route = if h[E + 6] == sr6_wire::IPPROTO_ROUTING {
            // One probe, of keys and words only: a /128 SID's kind, argument and index
            // are all in its word.
            let w = main.words6.get(dst);
            let (i, s) = FastSid::unpack(w);
            if s.in_loop() {
                break 'sid (i, s);
            }
            let r = if w != WordMap::MISS {
                if !s.is(FastKind::None) || w != FastSid::NOT_SID {
                    // A SID of a kind `try_cold` handles, or of none: it gets the SID
                    // (and need not probe for None, which goes straight to the general
                    // path).
                    return Fast::Cold(w);
                }
                // A /128 route or local address.
                let Some(r) = main.exact6.get(dst) else { return Fast::General };
                r
            } else {
                match main.lpm6.value(main.lpm6.lookup_entry(dst)) {
                    // (Truncated only past `counters::FIXED`, where the kind is None and
                    // the index unused.)
                    Some(Route::Sid(i)) => {
                        let Some(s) = t.fast_sids.get(*i as usize) else { return Fast::General };
                        if s.in_loop() {
                            break 'sid (usize::from(*i as u16), *s);
                        }
                        return Fast::Cold(s.pack(*i));
                    }
                    Some(r) => *r,
                    None => return Fast::General,
                }
            };
            if host_dst(dst) {
                return Fast::General;
            }
            r
        } else {
            if host_dst(dst) {
                return Fast::General;
            }
            // One hash probe for the usual prefix; the whole lookup otherwise.
            let (code, hop, e) = match main.lpm6.hash_hit(dst) {
                Some(hop) => (hop.code, hop, None),
                None => {
                    let (e, hop) = main.lpm6.lookup_aux(dst);
                    (if lpm::entry_marked(e) { 0 } else { hop.code }, hop, Some(e))
                }
            };
            if code == Fib::GATEWAY {
                decrement_hop_limit(&mut h[E..]);
                h[..12].copy_from_slice(&hop.eth);
                return Fast::Tx(hop.dev.into());
            }
            if code & !Fib::HOP_INDEX == Fib::POLICY {
                return policy(t, c, p, code & Fib::HOP_INDEX).into();
            }
            let Some(r) = main.route_of_entry(dst, e.unwrap_or_else(|| main.lpm6.lookup_entry(dst))) else {
                return Fast::General;
            };
            r
        };
        return match route {
            Route::Forward(nh) => {
                let Some((out, eth)) = resolve(t, nh, dst) else { return Fast::General };
                decrement_hop_limit(&mut h[E..]);
                eth.write(&mut h[..12]);
                Fast::Tx(out)
            }
            Route::Policy(i) => policy(t, c, p, i).into(),
            _ => Fast::General,
        };
    };
    let Some(out) = sid(t, main, h, srh, rest, front, s, REQUIRE_HMAC) else { return Fast::General };
    // A SID of a fast kind has an index the fixed array holds: no bounds check.
    c.sids.count_frame(i as u16, len as u64);
    Fast::Tx(out)
}

/// Hop Limit - 1 (RFC 8200 §3) in the IPv6 header at the start of `ip6`, once a Hop
/// Limit over 1 was checked: see [`decrement_last`].
#[inline(always)]
fn decrement_hop_limit(ip6: &mut [u8]) {
    if let Some(f) = ip6.get_mut(4..8).and_then(|f| <&mut [u8; 4]>::try_from(f).ok()) {
        decrement_last(f);
    }
}

/// Segments Left - 1 (RFC 8986 §4.1 S12), once it was checked to be at least 1: see
/// [`decrement_last`].
#[inline(always)]
fn decrement_segments_left(srh: &mut [u8; 8]) {
    if let Some(f) = srh.first_chunk_mut::<4>() {
        decrement_last(f);
    }
}

/// Decrements the last byte of `f`, a field checked to be at least 1 (so nothing
/// borrows from the other three), as a subtraction from the 32-bit word in its memory
/// order. As a word, the compiler makes it one read-modify-write of the frame instead
/// of keeping the byte read for the check alive (in a register, or spilled) until the
/// rewrite.
#[inline(always)]
fn decrement_last(f: &mut [u8; 4]) {
    *f = u32::from_ne_bytes(*f).wrapping_sub(u32::from_ne_bytes([0, 0, 0, 1])).to_ne_bytes();
}

/// Whether a 16-bit length field (IPv6 Payload Length, IPv4 Total Length), as it is in
/// the packet, holds `len`: compared in the field's byte order, with no conversion.
/// Every length here is that of part of a frame, under [`BUF_LEN`] and so under 64 KiB.
#[inline(always)]
fn length_is(field: [u8; 2], len: usize) -> bool {
    debug_assert!(len <= usize::from(u16::MAX));
    u16::from_ne_bytes(field) == (len as u16).to_be()
}

/// Multicast (ff00::/8) and link-local (fe80::/10) destinations, which the general path
/// delivers to the host. Tested only for destinations that are not SIDs: a SID that
/// could match one has no fast kind (the table build sees to it). Both ranges lie at or above
/// fe80::, as only fec0::/10 (forwarded normally) besides: one compare for the usual
/// destinations.
#[inline(always)]
fn host_dst(dst: u128) -> bool {
    let top = (dst >> 112) as u16;
    top >= 0xfe80 && not_fec0(top)
}

/// For a destination at or above fe80::, true unless it is in fec0::/10. Out of line
/// and cold, so that the usual destination costs a single compare.
#[cold]
#[inline(never)]
fn not_fec0(top: u16) -> bool {
    !(0xfec0..0xff00).contains(&top)
}

/// What [`sid`] did: forwarded in place, or decapsulated (the frame must then start
/// `pull` bytes further).
enum Decap {
    No(Out),
    Yes(Out, usize),
}

/// A local SID on the fast path. `h` is the Ethernet + IPv6 header, `srh` the next 8
/// bytes (an SRH's first 8 if there is one), `tail` what follows. Returns `None` (packet
/// untouched) for anything the fast path does not cover.
#[inline]
#[allow(clippy::too_many_arguments)]
fn sid(
    t: &Tables,
    main: &Fib,
    h: &mut [u8; S],
    srh: &mut [u8; 8],
    tail: &mut [u8],
    front: Front,
    s: FastSid,
    require_hmac: bool,
) -> Option<Out> {
    if require_hmac {
        return None;
    }
    // End, End.T and End.X: the next segment is looked up where it lies in the Segment
    // List, and the packet rewritten only once it is routed. The compiler tests these
    // kinds in the reverse of this order: End, the commonest SID, first.
    if s.is(FastKind::EndX) {
        let seg = next_segment(srh, tail)?;
        let (out, eth) = resolve(t, s.next_hop(), u128::from_be_bytes(seg))?;
        eth.write(&mut h[..12]);
        advance(h, srh, &seg);
        return Some(out);
    }
    if s.is(FastKind::EndT) {
        return end(t, t.fibs.get(s.arg as usize)?, h, srh, tail);
    }
    if s.is(FastKind::End) {
        return end(t, main, h, srh, tail);
    }
    let segs_len = plain_srh(srh, tail)?;
    if srh[3] != 0 || srh[0] != 41 {
        return None;
    }
    match decap6(t, tail, segs_len + 8, s)? {
        Decap::No(out) => Some(out),
        Decap::Yes(out, pull) => {
            // RFC 8986 §4.4 S03-S05: the outer header and SRH go; the Ethernet
            // header was written just in front of the inner packet.
            let _ = front.pull(pull);
            Some(out)
        }
    }
}

/// End (RFC 8986 §4.1) and End.T (§4.3): the next segment looked up in `fib` (the main
/// FIB for End, which the fast path has at hand; End.T's table), the packet rewritten
/// once it is routed.
#[inline(always)]
fn end(t: &Tables, fib: &Fib, h: &mut [u8; S], srh: &mut [u8; 8], tail: &[u8]) -> Option<Out> {
    let seg = next_segment(srh, tail)?;
    let (eth, _) = h.split_first_chunk_mut::<12>()?;
    let out = route_into(t, fib, u128::from_be_bytes(seg), eth)?;
    advance(h, srh, &seg);
    Some(out)
}

/// The length of the Segment List of `srh`, the first 8 bytes of an SRH followed by
/// `tail`, if it is an SRH with no TLV area (so Last Entry fills the header exactly:
/// Hdr Ext Len is 2 (Last Entry + 1), and no HMAC is present) that fits the packet.
#[inline(always)]
fn plain_srh(srh: &[u8; 8], tail: &[u8]) -> Option<usize> {
    let le1 = u32::from(srh[4]) + 1;
    let segs_len = 8 * usize::from(srh[1]);
    if srh[2] != sr6_wire::srh::ROUTING_TYPE_SRH || u32::from(srh[1]) != 2 * le1 || segs_len > tail.len() {
        return None;
    }
    Some(segs_len)
}

/// The next segment of an SRH without TLVs ([`plain_srh`]) with 1 <= Segments Left
/// <= Last Entry + 1: Segment List[Segments Left - 1] (RFC 8986 §4.1 S13), where it
/// lies in `tail`.
#[inline(always)]
fn next_segment(srh: &[u8; 8], tail: &[u8]) -> Option<[u8; 16]> {
    let segs_len = plain_srh(srh, tail)?;
    // Segment Segments Left - 1, which ends at `end`, lies within the Segment List.
    let sl = srh[3];
    let end = 16 * usize::from(sl);
    if sl == 0 || end > segs_len {
        return None;
    }
    tail.get(end - 16..end)?.try_into().ok()
}

/// RFC 8986 §4.1 S12-S14 once the next segment `seg` ([`next_segment`]) is known to be
/// routed: hop limit and Segments Left minus one, the destination `seg`.
#[inline(always)]
fn advance(h: &mut [u8; S], srh: &mut [u8; 8], seg: &[u8; 16]) {
    decrement_hop_limit(&mut h[E..]);
    decrement_segments_left(srh);
    h[E + 24..E + 40].copy_from_slice(seg);
}

/// End.DX6 / End.DT6 (RFC 8986 §4.4, §4.6; `s` of kind Dx6 or Dt6) on an SRH of
/// `srh_len` bytes (Segments Left 0, Next Header 41: checked by the caller) followed,
/// from byte 8 of `tail`, by an IPv6 packet: the new Ethernet header goes in front of
/// the inner packet.
#[inline(always)]
fn decap6(t: &Tables, tail: &mut [u8], srh_len: usize, s: FastSid) -> Option<Decap> {
    let inner = tail.get_mut(srh_len - 8..)?;
    let ilen = inner.len();
    let (ih, _) = inner.split_first_chunk_mut::<40>()?;
    let ihl = ih[7];
    if ih[0] >> 4 != 6 || !length_is([ih[4], ih[5]], ilen - 40) || ihl <= 1 {
        return None;
    }
    // The inner destination, read only where it is needed (End.DX6 to an adjacency
    // does not look at it).
    let ida = |ih: &[u8; 40]| ih.last_chunk::<16>().map(|d| u128::from_be_bytes(*d));
    let (out, eth) = if s.is(FastKind::Dt6) {
        route_to(t, s.arg, ida(ih)?)?
    } else {
        match s.next_hop() {
            NextHop::Adj(a) => adjacency(t, a)?,
            NextHop::OnLink(d) => on_link(t, d, ida(ih)?)?,
        }
    };
    // The new Ethernet header goes in the 14 bytes just before the inner packet, the end
    // of the SRH (at least 24 bytes long).
    let (before, inner) = tail.split_at_mut(srh_len - 8);
    let n = before.len();
    if n < E {
        return None;
    }
    decrement_hop_limit(inner);
    eth.write(&mut before[n - E..n - 2]);
    before[n - 2..].copy_from_slice(&[0x86, 0xdd]);
    Some(Decap::Yes(out, 40 + srh_len))
}

/// The IPv4-mapped IPv6 form of an IPv4 address: the neighbour key of an on-link IPv4
/// next hop ([`crate::tables::neigh_key`]).
#[inline(always)]
fn mapped(a: u32) -> u128 {
    0xffff << 32 | u128::from(a)
}

/// Checks an IPv4 header without options (RFC 1812 §5.2.2: version, IHL, Total Length
/// = `len`, header checksum) and a TTL that survives forwarding; returns its destination.
#[inline(always)]
fn ipv4_ok(ip: &[u8; 20], len: usize) -> Option<u32> {
    if ip[0] != 0x45 || !length_is([ip[2], ip[3]], len) || ip[8] <= 1 {
        return None;
    }
    if checksum::fold(checksum::sum(ip)) != 0 {
        return None;
    }
    Some(u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]))
}

/// RFC 1812 §5.3.1: TTL decremented, checksum updated incrementally (RFC 1624), as
/// `Ipv4Packet::decrement_ttl` does.
#[inline(always)]
fn ipv4_decrement_ttl(ip: &mut [u8; 20]) {
    let old = u16::from_be_bytes([ip[8], ip[9]]);
    let c = checksum::update16(u16::from_be_bytes([ip[10], ip[11]]), old, old - 0x100);
    ip[8] -= 1;
    ip[10..12].copy_from_slice(&c.to_be_bytes());
}

/// The fast cases that are tried only after [`try6`] declined, out of the batch loop
/// (so that the IPv6 cases there keep their registers): IPv4 forwarding, and the SIDs
/// of the kinds not handled in the loop, given as [`try6`] found them ([`Fast::Cold`]:
/// SID `i`, what the fast path knows of it `s`; kind None for any other frame).
/// `Some(device)` to transmit to; `None` leaves the frame untouched.
#[inline(never)]
pub fn try_cold(t: &Tables, c: &mut Counters, p: &mut PacketBuf, w: u64) -> Option<Out> {
    let (i, s) = FastSid::unpack(w);
    let dev = t.devices.get(p.in_dev as usize)?;
    let f = p.data_mut();
    let ethertype = u16::from_be_bytes(*f.get(12..14)?.first_chunk::<2>()?);
    if ethertype == 0x0800 {
        // (No SID was left for an IPv4 frame: `try6` leaves one only for IPv6.)
        return ipv4(t, dev, f);
    }
    // An IPv6 frame is worth a look only if `try6` found it is for such a SID.
    if s.is(FastKind::None) {
        return None;
    }
    if ethertype != 0x86dd {
        return None;
    }
    let len = f.len();
    let out = if s.is(FastKind::B6Encaps) {
        b6_encaps(t, dev, p, s.arg)?
    } else if s.is(FastKind::B6Insert) {
        b6_insert(t, dev, p, s.arg)?
    } else {
        let psp = s.is(FastKind::EndPsp) || s.is(FastKind::EndXPsp);
        let v = if psp { end_psp(t, dev, f, s)? } else { end_decap(t, dev, f, s)? };
        match v {
            Decap::No(out) => out,
            Decap::Yes(out, pull) => {
                let _ = p.pull_front(pull);
                out
            }
        }
    };
    c.sids.count_frame(i as u16, len as u64);
    Some(out)
}

/// The Ethernet + IPv6 headers and the SRH of a frame `try6` found is for a SID of the
/// main FIB with the SRH right after the IPv6 header (checked again here: `try_cold`
/// sees the frame on its own): an SRH without TLVs (so no HMAC) that fits, on a device
/// that requires no HMAC. Returns the two headers, the SRH's first 8 bytes and what
/// follows them.
#[inline(always)]
fn srh_frame<'a>(dev: &Device, f: &'a mut [u8]) -> Option<(&'a mut [u8; S], &'a mut [u8; 8], &'a mut [u8])> {
    let (h, rest) = f.split_first_chunk_mut::<S>()?;
    if h[E] >> 4 != 6
        || !length_is([h[E + 4], h[E + 5]], rest.len())
        || h[E + 6] != sr6_wire::IPPROTO_ROUTING
        || h[E + 7] <= 1
        || dev.require_hmac > 0
        || !dev.forwarding6
    {
        return None;
    }
    let (srh, tail) = rest.split_first_chunk_mut::<8>()?;
    let le1 = u32::from(srh[4]) + 1;
    let segs_len = 16 * le1 as usize;
    if srh[2] != sr6_wire::srh::ROUTING_TYPE_SRH || u32::from(srh[1]) != 2 * le1 || segs_len > tail.len() {
        return None;
    }
    Some((h, srh, tail))
}

/// The fast form of a binding SID's policy, if the fast path applies it with a rewrite
/// of `kind`.
#[inline(always)]
fn binding(t: &Tables, policy: u32, kind: RewriteKind) -> Option<&Rewrite> {
    t.rewrites.get(policy as usize).filter(|fp| fp.kind == kind)
}

/// Segments Left - 1 of an SRH whose Segments Left is between 1 and Last Entry + 1
/// (RFC 8754 §4.3.1.1, RFC 8986 §4.1 S02-S08 for the consuming behaviours); `None`
/// otherwise.
#[inline(always)]
fn segment_index(srh: &[u8; 8]) -> Option<usize> {
    let slm1 = usize::from(srh[3]).wrapping_sub(1);
    (slm1 <= usize::from(srh[4])).then_some(slm1)
}

/// End.B6.Encaps(.Red) (RFC 8986 §4.14) with policy `policy`, as the general path does
/// it (End.B6.Encaps in `behaviour::binding`): S10-S12 on the received packet (hop limit and
/// Segments Left minus one, the destination from the Segment List), then S13-S16, the
/// policy's headers in front, the outer hop limit the inner's after its decrement,
/// towards the device and neighbour the policy's first segment is routed to (S17,
/// precomputed). The frame is untouched when this returns `None`.
#[inline(always)]
fn b6_encaps(t: &Tables, dev: &Device, p: &mut PacketBuf, policy: u32) -> Option<Out> {
    let fp = binding(t, policy, RewriteKind::Encap)?;
    let (h, srh, tail) = srh_frame(dev, p.data_mut())?;
    let sl = srh[3];
    let slm1 = segment_index(srh)?;
    let nda: [u8; 16] = tail.get(16 * slm1..16 * slm1 + 16)?.try_into().ok()?;
    let sid: [u8; 16] = h[E + 24..E + 40].try_into().ok()?;
    srh[3] = sl - 1;
    h[E + 24..E + 40].copy_from_slice(&nda);
    // The rewrite sets the outer hop limit to the packet's minus one: what the inner
    // one is about to become.
    if (fp.apply)(fp, p).is_none() {
        // Put the packet back as it was (the rewrite itself changed nothing).
        if let Some(h) = p.data_mut().first_chunk_mut::<{ S + 4 }>() {
            h[S + 3] = sl;
            h[E + 24..E + 40].copy_from_slice(&sid);
        }
        return None;
    }
    // The inner hop limit, now behind the policy's headers (`fp.len` bytes, Ethernet
    // included, in place of the Ethernet header).
    if let Some(hl) = p.data_mut().get_mut(usize::from(fp.len) + 7) {
        *hl -= 1;
    }
    Some(fp.out.into())
}

/// IPv4 forwarding on the fast path (RFC 1812 §5.2.2, §5.3.1): an IPv4 header without
/// options, a destination below 224.0.0.0 that the main FIB sends to a gateway or an
/// on-link neighbour (no /32 of the exact table).
#[inline(always)]
fn ipv4(t: &Tables, dev: &Device, f: &mut [u8]) -> Option<Out> {
    let len = f.len();
    let (eth, ip) = f.split_first_chunk_mut::<E>()?;
    let ip = ip.first_chunk_mut::<20>()?;
    // No Ethernet padding; multicast, broadcast and class E are the host's.
    let dst = ipv4_ok(ip, len - E)?;
    if !dev.forwarding4 || dst >= 0xe000_0000 {
        return None;
    }
    let (out, mac) = route4_to(t, Tables::MAIN, dst)?;
    ipv4_decrement_ttl(ip);
    mac.write(&mut eth[..12]);
    Some(out)
}

/// The adjacency FIB `table` sends IPv4 destination `dst` to, if that is a plain route
/// (not a /32 of the exact table).
#[inline(always)]
fn route4_to(t: &Tables, table: u32, dst: u32) -> Option<(Out, Macs)> {
    let fib = t.fibs.get(table as usize)?;
    let (e, code) = fib.lpm4.lookup_aux(u128::from(dst) << 96);
    if lpm::entry_marked(e) && fib.exact4.get(u128::from(dst)).is_some() {
        return None;
    }
    match gateway(code) {
        Some(r) => Some(r),
        None => match *fib.lpm4.value(e)? {
            Route::Forward(nh) => resolve(t, nh, mapped(dst)),
            _ => None,
        },
    }
}

/// End.B6 with policy `policy`, with Linux's semantics as the general path has them
/// (End.B6 in `behaviour::binding`, kernel `input_action_end_b6`): the received SRH is left
/// as it is (after the checks of RFC 8754 §4.3.1: Segments Left between 1 and Last
/// Entry + 1); the policy's SRH goes in front of it, Segment List[0] the current
/// destination, the destination the policy's first segment, hop limit minus one — what
/// H.Insert's rewrite does — towards the first segment's precomputed adjacency. The
/// frame is untouched when this returns `None`.
#[inline(never)]
fn b6_insert(t: &Tables, dev: &Device, p: &mut PacketBuf, policy: u32) -> Option<Out> {
    let fp = binding(t, policy, RewriteKind::Insert)?;
    let (_, srh, _) = srh_frame(dev, p.data_mut())?;
    segment_index(srh)?;
    (fp.apply)(fp, p)?;
    Some(fp.out.into())
}

/// End, End.T or End.X with the PSP flavour (RFC 8986 §4.1-§4.3 S12-S15, §4.16.1) on an
/// IPv6 frame for SID `s` of the main FIB ([`srh_frame`]), as the general path does it
/// (`behaviour::end` with `segment::consume`): hop limit and Segments Left minus one, the
/// destination from the Segment List; when Segments Left reaches 0, the SRH removed
/// (S14.1-S14.4: its Next Header to the IPv6 header, the Payload Length shortened, the
/// Ethernet + IPv6 headers moved up over it). All lookups before the frame is touched.
#[inline(never)]
fn end_psp(t: &Tables, dev: &Device, f: &mut [u8], s: FastSid) -> Option<Decap> {
    let len = f.len();
    let (h, srh, tail) = srh_frame(dev, f)?;
    let sl = srh[3];
    let slm1 = segment_index(srh)?;
    let srh_len = 16 * (usize::from(srh[4]) + 1) + 8;
    let nda = u128::from_be_bytes(tail.get(16 * slm1..16 * slm1 + 16)?.try_into().ok()?);
    let (out, eth) = if s.is(FastKind::EndPsp) { route_to(t, s.arg, nda)? } else { resolve(t, s.next_hop(), nda)? };
    h[E + 7] -= 1;
    h[E + 24..E + 40].copy_from_slice(&nda.to_be_bytes());
    eth.write(&mut h[..12]);
    if sl > 1 {
        srh[3] = sl - 1;
        return Some(Decap::No(out));
    }
    // PSP: the new Payload Length is the frame's length less the headers (no Ethernet
    // padding: `srh_frame` checked).
    h[E + 6] = srh[0];
    h[E + 4..E + 6].copy_from_slice(&((len - S - srh_len) as u16).to_be_bytes());
    let moved = *h;
    f.get_mut(srh_len..srh_len + S)?.copy_from_slice(&moved);
    Some(Decap::Yes(out, srh_len))
}

/// An IPv6 frame for a decapsulating SID `s` of `try_cold`'s kinds (End.DX4, End.DT4,
/// End.DT46, End.DX2) of the main FIB ([`srh_frame`]) with Segments Left 0: what
/// [`decap4`] or, for End.DT46 with an inner IPv6 packet, [`decap6`] did; for End.DX2
/// (RFC 8986 §4.9) the inner Ethernet frame leaves unchanged out of the SID's device.
#[inline(always)]
fn end_decap(t: &Tables, dev: &Device, f: &mut [u8], s: FastSid) -> Option<Decap> {
    if !(s.is(FastKind::Dx4) || s.is(FastKind::Dt4) || s.is(FastKind::Dt46) || s.is(FastKind::Dx2)) {
        return None;
    }
    let (_, srh, tail) = srh_frame(dev, f)?;
    let srh_len = 16 * (usize::from(srh[4]) + 1) + 8;
    if srh[3] != 0 {
        return None;
    }
    match srh[0] {
        4 => decap4(t, tail, srh_len, s, dev.forwarding4),
        41 if s.is(FastKind::Dt46) => dt46_ipv6(t, tail, srh_len, s.arg),
        sr6_wire::IPPROTO_ETHERNET if s.is(FastKind::Dx2) && tail.len() >= srh_len - 8 + E => {
            Some(Decap::Yes(usize::from(s.arg as DevId), E + 40 + srh_len))
        }
        _ => None,
    }
}

/// End.DT46 with an inner IPv6 packet: End.DT6's [`decap6`] with FIB `table`. Out of
/// line, so that its registers do not cost the IPv4 cases of [`end_decap`] spills.
#[inline(never)]
fn dt46_ipv6(t: &Tables, tail: &mut [u8], srh_len: usize, table: u32) -> Option<Decap> {
    decap6(t, tail, srh_len, FastSid::new(FastKind::Dt6, table))
}

/// End.DX4 (RFC 8986 §4.5; to its next hop) or End.DT4 / End.DT46 (§4.7, §4.8; to what
/// FIB `s.arg` says) on an SRH of `srh_len` bytes followed, from byte 8 of `tail`, by an
/// IPv4 packet without options: the new Ethernet header goes in front of the inner
/// packet. Multicast, broadcast and class E destinations of a lookup are left to the
/// general path, as for IPv4 forwarding.
#[inline(always)]
fn decap4(t: &Tables, tail: &mut [u8], srh_len: usize, s: FastSid, forwarding4: bool) -> Option<Decap> {
    if !forwarding4 {
        return None;
    }
    let (before, inner) = tail.split_at_mut_checked(srh_len - 8)?;
    let ilen = inner.len();
    let ip = inner.first_chunk_mut::<20>()?;
    let dst = ipv4_ok(ip, ilen)?;
    let (out, mac) = if s.is(FastKind::Dx4) {
        resolve(t, s.next_hop(), mapped(dst))?
    } else {
        if dst >= 0xe000_0000 {
            return None;
        }
        route4_to(t, s.arg, dst)?
    };
    let n = before.len();
    if n < E {
        return None;
    }
    ipv4_decrement_ttl(ip);
    mac.write(&mut before[n - E..n - 2]);
    before[n - 2..].copy_from_slice(&[0x08, 0x00]);
    Some(Decap::Yes(out, 40 + srh_len))
}

/// A head-end policy on the fast path (the Ethernet + IPv6 headers were checked by
/// [`try6`]): its rewrite, then its counter.
#[inline(always)]
fn policy(t: &Tables, c: &mut Counters, p: &mut PacketBuf, i: u32) -> Option<Out> {
    let fp = t.rewrites.get(i as usize)?;
    (fp.apply)(fp, p)?;
    if let Some(n) = c.policies.get_mut(i as usize) {
        *n += 1;
    }
    Some(fp.out.into())
}
