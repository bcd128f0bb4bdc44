//! The fast path's dispatch: the common IPv6 cases handled in one pass over fixed-size
//! views (`sr6_wire::fixed`), with
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
//! (§4.16.1), End.M.GTP4.E (RFC 9433 §6.6), the SID handed over by `try6`; H.M.GTP4.D
//! (§6.7) for an IPv4 frame to its route; End.BPF ([`try_bpf`]). Everything else — errors, ICMP,
//! local delivery, on-the-wire oddities, a Hop-by-Hop Options header (examined by
//! [`super::hbh`]) — goes to the general path, and so does every
//! frame longer than [`Tables::fast_max_len`](crate::tables::Tables): what no rewrite
//! can take past the smallest MTU, so that the fast path never checks an MTU.
//!
//! Transit forwarding and the head-end policies are here; each SID's step lives in its
//! behaviour's module (`behaviour::end::fast`, `decap::fast6`, ...), chosen by the
//! SID's [`FastKind`].

use crate::behaviour::end_bpf::{self, FastBpf};
use crate::behaviour::next::FastNext;
use crate::behaviour::{binding, decap, end, end_dt46, end_dx2, next_csid, Next};
use crate::counters::Counters;
use crate::lpm;
use crate::packet::{DevId, Front, PacketBuf, BUF_LEN};
use crate::tables::fast_route::{resolve, route4_or_sid};
use crate::tables::{Device, FastKind, FastSid, Fib, Route, Tables};
use crate::words::WordMap;
use sr6_wire::fixed::{FrameFixed, Ipv4Fixed, Ipv6Fixed, SrhFixed, ETH_IPV6_LEN as S, ETH_LEN as E};
use sr6_wire::{
    ETHERTYPE_IPV4, ETHERTYPE_IPV6, IPPROTO_ETHERNET, IPPROTO_HOPOPTS, IPPROTO_IPV4, IPPROTO_IPV6, IPPROTO_ROUTING,
};

pub use crate::tables::Out;

// [`try6`] compares the IPv6 Payload Length with the frame's length in 16 bits.
const _: () = assert!(BUF_LEN - S <= u16::MAX as usize);

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

/// Tries the fast path on an Ethernet frame received on the batch's device (see
/// [`Fast`]). The caller has checked that the batch's device forwards IPv6 and whether
/// it requires an HMAC (`REQUIRE_HMAC`); the frame's `in_dev` is not read (see
/// [`Worker::process_batch`](super::Worker::process_batch)).
#[inline(always)]
pub fn try6<const REQUIRE_HMAC: bool>(t: &Tables, c: &mut Counters, p: &mut PacketBuf) -> Fast {
    let (f, front) = p.data_and_front();
    let len = f.len();
    // A frame that a rewrite could take past an MTU is the general path's, which checks
    // the MTU of the device it leaves by (`pipeline::mtu`).
    if len > t.fast_max_len {
        return Fast::General;
    }
    // Fixed-size views: every constant-offset access below is check-free. The first
    // covers an SRH's first 8 bytes too, so the frames taken here are at least 62 bytes
    // long: a shorter IPv6 frame (a payload under 8 bytes) is padded to 60 on the wire,
    // and Ethernet padding is the general path's anyway.
    let Some((hs, rest)) = f.split_first_chunk_mut::<{ S + 8 }>() else { return Fast::General };
    let Some((h, srh)) = hs.split_first_chunk_mut::<S>() else { return Fast::General };
    let Some(srh) = srh.first_chunk_mut::<8>() else { return Fast::General };
    if !h.is_ipv6() {
        return Fast::General;
    }
    // No Ethernet padding, nothing truncated.
    if !h.payload_len_is(rest.len() + 8) {
        return Fast::General;
    }
    let hl = h.hop_limit();
    let dst = h.dst();
    if hl <= 1 {
        return Fast::General;
    }
    // Loopback, unspecified, link-local and multicast sources (and the rest of ::/8 and
    // fe00::/7, rare) are the general path's to validate: one compare.
    if super::validate::screen_src6(h.src_first()) {
        return Fast::General;
    }
    // A packet carrying an SRH is most likely for one of our SIDs (/128s): probe those
    // first; anything else (transit, head-end) walks the trie first. Same result.
    // (Inside the tables, at a fixed offset: no register of its own.)
    let main = t.fibs.main();
    // Only SIDs with an SRH are for the fast path: the block yields the index of a SID
    // of a kind the loop handles and what the fast path knows of it; every other case
    // returns from inside it.
    let (i, s) = 'sid: {
        let route = if h.next_header() == IPPROTO_ROUTING {
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
            // A Hop-by-Hop Options header is the general path's to examine (`hbh`), for
            // transit and head-end alike: one compare.
            if h.next_header() == IPPROTO_HOPOPTS {
                return Fast::General;
            }
            // One hash probe for the usual prefix; the whole lookup otherwise.
            let (code, hop, e, root) = match main.lpm6.hash_hit_root(dst) {
                Some((root, hop)) => (hop.code, hop, None, root),
                None => {
                    let (e, hop) = main.lpm6.lookup_aux(dst);
                    // (A NEXT-C-SID hop found without a hash hit has no root entry to
                    // reuse: `next_csid::fast_hop`.)
                    let code = match hop.code {
                        _ if lpm::entry_marked(e) => 0,
                        Fib::CSID_MAIN => Fib::CSID,
                        c => c,
                    };
                    (code, hop, Some(e), 0)
                }
            };
            if code == Fib::GATEWAY {
                if host_dst(dst) {
                    return Fast::General;
                }
                h.decrement_hop_limit();
                h.set_addr_bytes(&hop.eth);
                return Fast::Tx(hop.dev.into());
            }
            // A pure uSID packet for a NEXT-C-SID End, End.T or End.X: the hop holds
            // all its step needs. As for every SID, no host destination test: the hop
            // is the SID's prefix's, which meets no host destination (`fast_sid_of`).
            if code >= Fib::CSID {
                let Some((out, i)) = next_csid::fast_hop(t, main, h, hop, code, root, dst) else {
                    return Fast::General;
                };
                c.sids.count_frame(i as u16, len as u64);
                return Fast::Tx(out);
            }
            if host_dst(dst) {
                return Fast::General;
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
                h.decrement_hop_limit();
                h.set_addrs(eth);
                Fast::Tx(out)
            }
            Route::Policy(i) => policy(t, c, p, i).into(),
            // A SID reached without an SRH (a NEXT-C-SID container, a decapsulating SID
            // at the end of a compressed list): `try_cold` decides.
            Route::Sid(i) => match t.fast_sids.get(i as usize) {
                Some(s) if !s.in_loop() => Fast::Cold(s.pack(i)),
                _ => Fast::General,
            },
            _ => Fast::General,
        };
    };
    let Some(out) = sid(t, main, h, srh, rest, front, s, REQUIRE_HMAC) else { return Fast::General };
    // A SID of a fast kind has an index the fixed array holds: no bounds check.
    c.sids.count_frame(i as u16, len as u64);
    Fast::Tx(out)
}

/// Multicast (ff00::/8) and link-local (fe80::/10) destinations, which the general path
/// delivers to the host, and ::/16, where the loopback address lies, which it drops
/// ([`super::validate::input6`]). Tested only for destinations that are not SIDs: a SID
/// that could match one has no fast kind (the table build sees to it). The first two
/// lie at or above fe80::, as only fec0::/10 (forwarded normally) besides, and the
/// subtraction of 1 wraps ::/16 to the top: one compare for the usual destinations.
#[inline(always)]
fn host_dst(dst: u128) -> bool {
    let top = (dst >> 112) as u16;
    top.wrapping_sub(1) >= 0xfe7f && not_fec0(top)
}

/// For a destination in ::/16 or at or above fe80::, true unless it is in fec0::/10.
/// Out of line and cold, so that the usual destination costs a single compare.
#[cold]
#[inline(never)]
fn not_fec0(top: u16) -> bool {
    !(0xfec0..0xff00).contains(&top)
}

/// A local SID on the fast path: the step of its kind, in the behaviour's module. `h`
/// is the Ethernet + IPv6 header, `srh` the next 8 bytes (an SRH's first 8 if there is
/// one), `tail` what follows. Returns `None` (packet untouched) for anything the fast
/// path does not cover.
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
    // List, and the packet rewritten only once it is routed. End and End.T are told
    // from the rest and from each other by single bit tests, not compares of the kind
    // (which the compiler would chain as a switch, End.T last).
    if s.is_end_or_t() {
        if s.is_end_main() {
            return end::fast(t, main, h, srh, tail);
        }
        // (End.T's table is never the main one: that is End's kind.)
        return end::fast(t, t.fibs.other(s.arg as usize)?, h, srh, tail);
    }
    if s.is(FastKind::EndX) {
        return end::fast_x(t, s.next_hop(), h, srh, tail);
    }
    // End.DX6 and End.DT6 at the last segment of an SRH without TLVs.
    let segs_len = srh.plain_segments_len(tail.len())?;
    if srh.segments_left() != 0 || srh.next_header() != IPPROTO_IPV6 {
        return None;
    }
    match decap::fast6(t, tail, segs_len + 8, s)? {
        FastNext::Tx(out) => Some(out),
        FastNext::Pull(out, pull) => {
            // RFC 8986 §4.4 S03-S05: the outer header and SRH go; the Ethernet
            // header was written just in front of the inner packet.
            let _ = front.pull(pull);
            Some(out)
        }
    }
}

/// The fast cases that are tried only after [`try6`] declined, out of the batch loop
/// (so that the IPv6 cases there keep their registers): IPv4 forwarding, and the SIDs
/// of the kinds not handled in the loop, given as [`try6`] found them ([`Fast::Cold`]:
/// SID `i`, what the fast path knows of it `s`; kind None for any other frame).
/// `Some(device)` to transmit to; `None` leaves the frame untouched.
#[inline(never)]
pub fn try_cold(t: &Tables, c: &mut Counters, p: &mut PacketBuf, w: u64) -> Option<Out> {
    let (i, s) = FastSid::unpack(w);
    // As in `try6`: a frame that could exceed an MTU is the general path's.
    if p.len() > t.fast_max_len {
        return None;
    }
    let in_dev = p.in_dev;
    let dev = t.devices.get(in_dev as usize)?;
    let f = p.data_mut();
    let ethertype = u16::from_be_bytes(*f.get(12..14)?.first_chunk::<2>()?);
    if ethertype == ETHERTYPE_IPV4 {
        // (No SID was left for an IPv4 frame: `try6` leaves one only for IPv6.)
        return match ipv4(t, dev, in_dev, f) {
            Ok(out) => Some(out),
            Err(Some((i, dst))) => sid4(t, c, p, dev, i, dst),
            Err(None) => None,
        };
    }
    // An IPv6 frame is worth a look only if `try6` found it is for such a SID (End.BPF's
    // is `try_bpf`'s).
    if s.is_none_or_bpf() {
        return None;
    }
    if ethertype != ETHERTYPE_IPV6 {
        return None;
    }
    let len = f.len();
    let out = if s.is(FastKind::EndCsid) || s.is(FastKind::EndXCsid) {
        next_csid::fast(t, dev, f, i, s)?
    } else if s.is(FastKind::B6Encaps) {
        binding::fast_encaps(t, dev, p, s.arg)?
    } else if s.is(FastKind::B6Insert) {
        binding::fast_insert(t, dev, p, s.arg)?
    } else if s.is(FastKind::Gtp4E) {
        crate::behaviour::mobile::gtp4_e::fast(t, dev, p, t.sids.get(i)?)?
    } else {
        let psp = s.is(FastKind::EndPsp) || s.is(FastKind::EndXPsp);
        let v = if psp { end::fast_psp(t, dev, f, s)? } else { last_segment(t, dev, f, s)? };
        match v {
            FastNext::Tx(out) => out,
            FastNext::Pull(out, pull) => {
                let _ = p.pull_front(pull);
                out
            }
        }
    };
    c.sids.count_frame(i as u16, len as u64);
    Some(out)
}

/// End.BPF's fast step for a frame [`try6`] found is for the End.BPF SID of word `w`
/// (kind Bpf), apart from [`try_cold`] because what it returns is larger: once the
/// program has run, the frame is the step's, and what follows may be the general
/// path's ([`Cold::After`]). `None`: the frame untouched, the general path's.
#[inline(always)]
pub fn try_bpf(
    t: &Tables,
    c: &mut Counters,
    scratch: &mut sr6_bpf::Scratch,
    p: &mut PacketBuf,
    w: u64,
) -> Option<Cold> {
    let (i, _) = FastSid::unpack(w);
    // As in `try6`: a frame that could exceed an MTU is the general path's.
    let len = p.len();
    if len > t.fast_max_len {
        return None;
    }
    let dev = t.devices.get(p.in_dev as usize)?;
    Some(match end_bpf::fast(t, dev, p, t.sids.get(i)?, scratch)? {
        FastBpf::Tx(out) => {
            c.sids.count_frame(i as u16, len as u64);
            Cold::Tx(out)
        }
        FastBpf::After(next) => Cold::After { sid: i, ipv6_len: (len - E) as u64, next },
    })
}

/// End.BPF's lean step ([`end_bpf::fast_lean`]) for a frame [`try6`] found is for the
/// End.BPF SID of word `w`, received on device `from`: tried first, before
/// [`try_bpf`], for a program that calls no helper. `try6` checked the frame as for
/// transit (length, MTU bound, hop limit, source) and that `from` forwards IPv6.
/// `Some(device)` to transmit to; `None` leaves the frame untouched.
#[inline(always)]
pub fn try_bpf_lean(
    t: &Tables,
    c: &mut Counters,
    scratch: &mut sr6_bpf::Scratch,
    from: DevId,
    p: &mut PacketBuf,
    w: u64,
) -> Option<Out> {
    let (i, _) = FastSid::unpack(w);
    if t.devices.get(usize::from(from))?.require_hmac != 0 {
        return None;
    }
    let len = p.len();
    let out = end_bpf::fast_lean(t, t.fibs.main(), p.data_mut(), t.sids.get(i)?, scratch)?;
    c.sids.count_frame(i as u16, len as u64);
    Some(out)
}

/// What [`try_bpf`] did with a frame it took.
pub enum Cold {
    /// Transmit the rewritten frame out of this device.
    Tx(Out),
    /// The step of SID `sid` ran and was not the whole story (End.BPF's, whose program
    /// cannot run twice): the general path carries on with `next` on the frame (still
    /// with its Ethernet header), counted on the SID as for a packet of `ipv6_len` bytes
    /// ([`super::forward::sid_step`]).
    After { sid: usize, ipv6_len: u64, next: Next },
}

/// An IPv6 frame for a decapsulating SID `s` of `try_cold`'s kinds (End.DX4, End.DT4,
/// End.DT46, End.DX2) of the main FIB ([`endpoint::fast_srh_frame`]) with Segments
/// Left 0: the step of its kind for the inner packet the SRH says follows.
///
/// [`endpoint::fast_srh_frame`]: crate::behaviour::endpoint::fast_srh_frame
#[inline(always)]
fn last_segment(t: &Tables, dev: &Device, f: &mut [u8], s: FastSid) -> Option<FastNext> {
    if !(s.is(FastKind::Dx4) || s.is(FastKind::Dt4) || s.is(FastKind::Dt46) || s.is(FastKind::Dx2)) {
        return None;
    }
    let (_, srh, tail) = crate::behaviour::endpoint::fast_srh_frame(dev, f)?;
    let srh_len = srh.len_without_tlvs();
    if srh.segments_left() != 0 {
        return None;
    }
    match srh.next_header() {
        IPPROTO_IPV4 => decap::fast4(t, tail, srh_len, s, dev.forwarding4),
        IPPROTO_IPV6 if s.is(FastKind::Dt46) => end_dt46::fast_ipv6(t, tail, srh_len, s.arg),
        IPPROTO_ETHERNET if s.is(FastKind::Dx2) => end_dx2::fast(tail, srh_len, s),
        _ => None,
    }
}

/// IPv4 forwarding on the fast path (RFC 1812 §5.2.2, §5.3.1): an IPv4 header without
/// options, a destination below 224.0.0.0 that the main FIB sends to a gateway or an
/// on-link neighbour (no /32 of the exact table) other than the device `in_dev` it
/// came from; source and destination outside the ranges [`validate`] checks, the
/// source none of the router's addresses. `Err(Some((i, dst)))` for a destination
/// `dst` whose route is the local SID `i` (H.M.GTP4.D, RFC 9433 §6.7: [`sid4`]'s),
/// `Err(None)` to decline.
///
/// [`validate`]: super::validate
#[inline(always)]
fn ipv4(t: &Tables, dev: &Device, in_dev: crate::packet::DevId, f: &mut [u8]) -> Result<Out, Option<(u32, u32)>> {
    use super::validate::screen4;
    let len = f.len();
    let (eth, ip) = f.split_first_chunk_mut::<E>().ok_or(None)?;
    let ip = ip.first_chunk_mut::<20>().ok_or(None)?;
    // No Ethernet padding; multicast, broadcast, class E, 0/8 and 127/8 are the
    // general path's.
    let dst = ip.forwardable_dst(len - E).ok_or(None)?;
    let src = ip.src();
    if screen4(dst) || screen4(src) || t.local4_filter & crate::tables::local4_bit(src) != 0 {
        return Err(None);
    }
    let (out, addrs) = route4_or_sid(t, Tables::MAIN, dst).map_err(|sid| sid.map(|i| (i, dst)))?;
    // Back out of its device: the kernel checks the source in full.
    if !dev.forwarding4 || out == usize::from(in_dev) {
        return Err(None);
    }
    ip.decrement_ttl();
    addrs.write(eth);
    Ok(out)
}

/// An IPv4 frame for the local SID `i` of an IPv4 route, its header checked by
/// [`ipv4`] (no options, Total Length the frame's, TTL over 1, checksum, addresses
/// screened): H.M.GTP4.D's step, unless `dst` is a directed broadcast (which the
/// general path delivers). Counted as the general path counts it.
#[cold]
#[inline(never)]
fn sid4(t: &Tables, c: &mut Counters, p: &mut PacketBuf, dev: &Device, i: u32, dst: u32) -> Option<Out> {
    if !t.fast_sids.get(i as usize)?.is(FastKind::Gtp4D) || t.is_bcast4(dst) {
        return None;
    }
    let len = p.len();
    let out = crate::behaviour::mobile::gtp4_d::fast(t, dev, p, t.sids.get(i as usize)?)?;
    // (A SID of a fast kind has an index the fixed counters hold.)
    c.sids.count_frame(i as u16, len as u64);
    Some(out)
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
