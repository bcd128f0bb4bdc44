//! End.BPF over a plain packet: the per-packet SRH state of the seg6 helpers
//! (`struct seg6_bpf_srh_state`), the helpers `bpf_lwt_seg6_store_bytes`,
//! `bpf_lwt_seg6_adjust_srh` and `bpf_lwt_seg6_action` with the kernel's checks
//! (net/core/filter.c), the SRH revalidation `seg6_bpf_has_valid_srh`, and the run of
//! `input_action_end_bpf` (net/ipv6/seg6_local.c): the SRH is validated and consumed
//! (Segments Left decremented, the next segment copied to the destination, RFC 8754
//! §4.3.1.1) before the program runs; `BPF_OK` routes on the new destination,
//! `BPF_REDIRECT` keeps the route an action helper chose, `BPF_DROP` and any other value
//! drop; an SRH the program changed must still be valid.
//!
//! Routes are recorded, not looked up: [`Route`] says what the kernel's
//! `seg6_lookup_nexthop` was asked, for the packet side to carry out. Not done here: the
//! HMAC check of the received SRH and an HMAC for SRHs the program pushes (the packet side
//! owns the keys).

use crate::bytes::PacketBytes;
use crate::maps::Map;
use crate::skb::{errno, NextHopLookup, Skb, SkbMeta, PRANDOM_SEED};
use crate::vm::{self, Fault, Program, RunOpts, Scratch};

const IPV6_HDR: usize = 40;
const NEXTHDR_HOP: u8 = 0;
const NEXTHDR_IPV6: u8 = 41;
const NEXTHDR_ROUTING: u8 = 43;
const NEXTHDR_FRAGMENT: u8 = 44;
const NEXTHDR_AUTH: u8 = 51;
const NEXTHDR_DEST: u8 = 60;
const SRH_TYPE: u8 = 4;
/// Largest packet the helpers grow a packet to (an IPv6 packet without jumbograms).
const MAX_PACKET: usize = 65535 + IPV6_HDR;

/// `SEG6_LOCAL_ACTION_*` (include/uapi/linux/seg6_local.h) the action helper takes.
pub mod action {
    pub const END_X: u32 = 2;
    pub const END_T: u32 = 3;
    pub const END_DT6: u32 = 7;
    pub const END_B6: u32 = 9;
    pub const END_B6_ENCAP: u32 = 10;
}

/// `enum bpf_ret_code` values of LWT programs.
pub mod ret {
    pub const BPF_OK: u32 = 0;
    pub const BPF_DROP: u32 = 2;
    pub const BPF_REDIRECT: u32 = 7;
}

/// What `seg6_lookup_nexthop` was asked: the destination, an explicit next hop (End.X)
/// and the table (0: the main table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub daddr: [u8; 16],
    pub nexthop: Option<[u8; 16]>,
    pub table: u32,
}

/// Why End.BPF dropped a packet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Drop {
    #[error("no valid SRH with Segments Left > 0")]
    NoSrh,
    #[error("program aborted: {0}")]
    Fault(Fault),
    #[error("program returned BPF_DROP")]
    ProgramDrop,
    #[error("program returned {0}, not BPF_OK, BPF_DROP or BPF_REDIRECT")]
    IllegalReturn(u32),
    #[error("SRH left invalid by the program")]
    InvalidSrh,
    #[error("BPF_REDIRECT without a route chosen by bpf_lwt_seg6_action")]
    RedirectWithoutRoute,
}

/// The outcome of End.BPF on one packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Forward(Route),
    Drop(Drop),
}

#[derive(Clone, Copy, Debug, Default)]
struct SrhState {
    /// Offset of the SRH in the packet; `None` when the packet has none any more.
    srh: Option<usize>,
    /// The SRH's length past its first 8 bytes, as the helpers track it.
    hdrlen: u16,
    valid: bool,
}

/// A packet (starting at its IPv6 header) with the End.BPF helper state. Its bytes are
/// a `Vec<u8>` by default, or any [`PacketBytes`] (sr6's pipeline runs programs on its
/// packet buffers in place).
#[derive(Clone, Debug)]
pub struct Seg6Packet<B = Vec<u8>> {
    pub buf: B,
    pub meta: SkbMeta,
    /// The route an action helper chose.
    pub route: Option<Route>,
    /// Source of the outer header End.B6.Encaps pushes (the kernel: the output device's
    /// address, `set_tun_src`).
    pub encap_src: [u8; 16],
    /// What `bpf_ktime_get_ns` returns.
    pub now_ns: u64,
    /// The worker running the program (`bpf_get_smp_processor_id`, the CPU of events).
    pub cpu: u32,
    /// Formats passed to `bpf_trace_printk`.
    pub traces: Vec<Vec<u8>>,
    /// The state of `bpf_get_prandom_u32` (xorshift32): a caller that makes one packet
    /// view per run keeps it between runs.
    pub prandom: u32,
    state: SrhState,
}

impl<B: PacketBytes> Seg6Packet<B> {
    pub fn new(buf: B) -> Seg6Packet<B> {
        Seg6Packet {
            buf,
            meta: SkbMeta { protocol: SkbMeta::PROTO_IPV6, ..SkbMeta::default() },
            route: None,
            encap_src: [0; 16],
            now_ns: 0,
            cpu: 0,
            traces: Vec::new(),
            prandom: PRANDOM_SEED,
            state: SrhState::default(),
        }
    }

    fn daddr(&self) -> [u8; 16] {
        let mut a = [0; 16];
        if let Some(d) = self.buf.get(24..40) {
            a.copy_from_slice(d);
        }
        a
    }

    fn set_payload_len(&mut self) {
        set_payload_len(&mut self.buf);
    }

    /// `bpf_update_srh_state`: the first routing header, trusted as it is.
    fn update_srh_state(&mut self) {
        self.state = match find_hdr(&self.buf, NEXTHDR_ROUTING, false) {
            Some(off) => SrhState {
                srh: Some(off),
                hdrlen: u16::from(self.buf.get(off + 1).copied().unwrap_or(0)) << 3,
                valid: true,
            },
            None => SrhState::default(),
        };
    }

    /// `seg6_bpf_has_valid_srh`: writes the tracked length back into Hdr Ext Len and
    /// validates the SRH if the program touched its TLVs or its size.
    pub fn has_valid_srh(&mut self) -> bool {
        let Some(off) = self.state.srh else { return false };
        if !self.state.valid {
            if self.state.hdrlen & 7 != 0 {
                return false;
            }
            let Some(h) = self.buf.get_mut(off + 1) else { return false };
            *h = (self.state.hdrlen >> 3) as u8;
            let len = (usize::from(*h) + 1) << 3;
            if !validate_srh(self.buf.get(off..).unwrap_or_default(), len, true) {
                return false;
            }
            self.state.valid = true;
        }
        true
    }

    fn lookup(&mut self, nexthop: Option<[u8; 16]>, table: u32) -> i64 {
        self.route = Some(Route { daddr: self.daddr(), nexthop, table });
        0
    }

    /// `bpf_push_seg6_encap` for End.B6 / End.B6.Encaps, then the route of the new
    /// destination.
    fn push_encap(&mut self, encap: bool, srh: &[u8]) -> i64 {
        let err = push_seg6(&mut self.buf, self.meta.protocol, &self.encap_src, encap, srh);
        if err != 0 {
            return err;
        }
        self.lookup(None, 0)
    }
}

/// `bpf_push_seg6_encap`'s header work (net/core/filter.c) on an IPv6 packet in `buf`:
/// the SRH validated (`seg6_validate_srh`, not reduced), then inserted after the IPv6
/// header (`seg6_do_srh_inline`: the old destination becomes segment 0, the destination
/// the SRH's first segment) or pushed with a new outer IPv6 header (`seg6_do_srh_encap`:
/// traffic class, flow label and hop limit of the inner header, source `encap_src`,
/// Next Header 41), RFC 8986 §4.13-4.14 and §5.1 as Linux does them; Payload Length
/// set. 0, or a negated errno with `buf` unchanged. Shared by End.BPF's action helper
/// and the LWT hooks' `bpf_lwt_push_encap` ([`crate::lwt`]).
pub(crate) fn push_seg6(
    buf: &mut impl PacketBytes,
    protocol: u32,
    encap_src: &[u8; 16],
    encap: bool,
    srh: &[u8],
) -> i64 {
    if srh.len() < 8 || !validate_srh(srh, srh.len(), false) {
        return -errno::EINVAL;
    }
    if !encap && protocol != SkbMeta::PROTO_IPV6 {
        return -errno::EBADMSG;
    }
    if buf.len() < IPV6_HDR || buf.len() + srh.len() + IPV6_HDR > MAX_PACKET {
        return -errno::EINVAL;
    }
    // The first segment (Last Entry's), which becomes the destination.
    let fs = usize::from(srh[4]);
    let Some(first) = srh.get(8 + fs * 16..8 + fs * 16 + 16).and_then(|a| <[u8; 16]>::try_from(a).ok()) else {
        return -errno::EINVAL;
    };
    // Spliced in place, then patched: nothing allocated once the vector has grown.
    if encap {
        let mut hdr = [0u8; IPV6_HDR];
        // Version, traffic class and flow label of the inner header (sysctl
        // seg6_flowlabel 0: the flow label copied), its hop limit.
        hdr[..4].copy_from_slice(&buf[..4]);
        hdr[0] = 0x60 | (buf[0] & 0x0f);
        hdr[6] = NEXTHDR_ROUTING;
        hdr[7] = buf[7];
        hdr[8..24].copy_from_slice(encap_src);
        hdr[24..40].copy_from_slice(&first);
        if !buf.open_gap(0, IPV6_HDR + srh.len()) {
            return -errno::ENOMEM;
        }
        buf[..IPV6_HDR].copy_from_slice(&hdr);
        buf[IPV6_HDR..IPV6_HDR + srh.len()].copy_from_slice(srh);
        buf[IPV6_HDR] = NEXTHDR_IPV6;
    } else {
        let (nh, mut old_da) = (buf[6], [0u8; 16]);
        old_da.copy_from_slice(&buf[24..40]);
        if !buf.open_gap(IPV6_HDR, srh.len()) {
            return -errno::ENOMEM;
        }
        buf[IPV6_HDR..IPV6_HDR + srh.len()].copy_from_slice(srh);
        buf[IPV6_HDR] = nh;
        buf[IPV6_HDR + 8..IPV6_HDR + 24].copy_from_slice(&old_da);
        buf[6] = NEXTHDR_ROUTING;
        // With one segment, segment 0 is the first: the old destination stays.
        let da = if fs == 0 { old_da } else { first };
        buf[24..40].copy_from_slice(&da);
    }
    set_payload_len(buf);
    0
}

/// Payload Length from the buffer's length.
pub(crate) fn set_payload_len(buf: &mut [u8]) {
    let pl = (buf.len().saturating_sub(IPV6_HDR) as u16).to_be_bytes();
    if let Some(p) = buf.get_mut(4..6) {
        p.copy_from_slice(&pl);
    }
}

/// `ipv6_find_hdr`: the offset of the first header of type `target` in the extension
/// header chain; with `skip_rh` (IP6_FH_F_SKIP_RH) a routing header with Segments Left 0
/// is passed over.
pub fn find_hdr(buf: &[u8], target: u8, skip_rh: bool) -> Option<usize> {
    let mut next = *buf.get(6)?;
    let mut off = IPV6_HDR;
    if buf.len() < IPV6_HDR {
        return None;
    }
    loop {
        let hdr = buf.get(off..off + 8)?;
        if next == target && !(target == NEXTHDR_ROUTING && skip_rh && hdr[3] == 0) {
            return Some(off);
        }
        let len = match next {
            NEXTHDR_HOP | NEXTHDR_ROUTING | NEXTHDR_DEST => (usize::from(hdr[1]) + 1) << 3,
            NEXTHDR_AUTH => (usize::from(hdr[1]) + 2) << 2,
            NEXTHDR_FRAGMENT => {
                if u16::from_be_bytes([hdr[2], hdr[3]]) & !7 != 0 {
                    return None;
                }
                8
            }
            _ => return None,
        };
        next = hdr[0];
        off += len;
    }
}

/// `seg6_validate_srh` (net/ipv6/seg6.c): type 4, Hdr Ext Len matching `len`, Last Entry
/// and Segments Left in range (`reduced`: Segments Left may be Last Entry + 1), and TLVs
/// (type, length) filling the rest exactly.
pub fn validate_srh(srh: &[u8], len: usize, reduced: bool) -> bool {
    let Some(s) = srh.get(..len) else { return false };
    if s.len() < 8 || s[2] != SRH_TYPE || ((usize::from(s[1]) + 1) << 3) != len {
        return false;
    }
    let (sl, fs) = (usize::from(s[3]), usize::from(s[4]));
    if !reduced && sl > fs {
        return false;
    }
    let max_last_entry = (i32::from(s[1]) / 2) - 1;
    if fs as i32 > max_last_entry || sl > fs + 1 {
        return false;
    }
    let mut off = 8 + ((fs + 1) << 4);
    if off > len {
        return false;
    }
    while off < len {
        if len - off < 2 {
            return false;
        }
        off += 2 + usize::from(s[off + 1]);
        if off > len {
            return false;
        }
    }
    true
}

impl<B: PacketBytes> Skb for Seg6Packet<B> {
    fn data(&self) -> &[u8] {
        &self.buf
    }

    fn meta(&self) -> &SkbMeta {
        &self.meta
    }

    fn meta_mut(&mut self) -> &mut SkbMeta {
        &mut self.meta
    }

    fn ktime_get_ns(&mut self) -> u64 {
        self.now_ns
    }

    fn cpu(&self) -> u32 {
        self.cpu
    }

    fn prandom_u32(&mut self) -> u32 {
        crate::skb::xorshift32(&mut self.prandom)
    }

    fn trace_printk(&mut self, fmt: &[u8]) {
        crate::skb::keep_trace(&mut self.traces, fmt);
    }

    /// Writable: Flags and Tag (bytes 5..8 of the SRH), or the TLV area, which then needs
    /// revalidating. The kernel computes the TLV area's start as SRH + (Last Entry + 1) *
    /// 16, 8 bytes before the end of the segment list, so the last 8 bytes of the last
    /// segment are writable too (and the SRH revalidated); sr6 does the same.
    fn lwt_seg6_store_bytes(&mut self, offset: u32, from: &[u8]) -> i64 {
        let Some(srh) = self.state.srh else { return -errno::EINVAL };
        let fs = usize::from(self.buf.get(srh + 4).copied().unwrap_or(0));
        let tlvs = srh + ((fs + 1) << 4);
        let end = srh + 8 + usize::from(self.state.hdrlen);
        let (ptr, len) = (offset as usize, from.len());
        if ptr >= tlvs && ptr + len <= end {
            self.state.valid = false;
        } else if ptr < srh + 5 || ptr + len > srh + 8 {
            return -errno::EFAULT;
        }
        if ptr + len > self.buf.len() {
            return -errno::EFAULT;
        }
        match find_hdr(&self.buf, NEXTHDR_ROUTING, false) {
            Some(off) => self.state.srh = Some(off),
            None => return -errno::EINVAL,
        }
        self.buf[ptr..ptr + len].copy_from_slice(from);
        0
    }

    /// Inserts `delta` zero bytes (or removes `-delta` bytes) at `offset`, which must lie
    /// in the TLV area; the SRH is revalidated after the program.
    fn lwt_seg6_adjust_srh(&mut self, offset: u32, delta: i32) -> i64 {
        let Some(srh) = self.state.srh else { return -errno::EINVAL };
        let fs = usize::from(self.buf.get(srh + 4).copied().unwrap_or(0));
        let tlvs = srh + 8 + ((fs + 1) << 4);
        let end = srh + 8 + usize::from(self.state.hdrlen);
        let ptr = offset as usize;
        if ptr < tlvs || ptr > end {
            return -errno::EFAULT;
        }
        let n = delta.unsigned_abs() as usize;
        if delta < 0 && ptr + n > end {
            return -errno::EFAULT;
        }
        if delta > 0 {
            if self.buf.len() + n > MAX_PACKET || !self.buf.open_gap(ptr, n) {
                return -errno::ENOMEM;
            }
        } else if !self.buf.close_gap(ptr, n) {
            return -errno::ENOMEM;
        }
        self.set_payload_len();
        match find_hdr(&self.buf, NEXTHDR_ROUTING, false) {
            Some(off) => self.state.srh = Some(off),
            None => return -errno::EINVAL,
        }
        self.state.hdrlen = i32::from(self.state.hdrlen).wrapping_add(delta) as u16;
        self.state.valid = false;
        0
    }

    fn lwt_seg6_action(&mut self, act: u32, param: &[u8]) -> i64 {
        match act {
            action::END_X | action::END_T | action::END_DT6 => {
                if !self.has_valid_srh() {
                    return -errno::EBADMSG;
                }
                let want = if act == action::END_X { 16 } else { 4 };
                if param.len() != want {
                    return -errno::EINVAL;
                }
                if act == action::END_X {
                    let nh: [u8; 16] = param.try_into().unwrap_or([0; 16]);
                    return self.lookup(Some(nh), 0);
                }
                let table = u32::from_le_bytes(param.try_into().unwrap_or([0; 4]));
                if act == action::END_DT6 {
                    let Some(off) = find_hdr(&self.buf, NEXTHDR_IPV6, false) else { return -errno::EBADMSG };
                    if off + IPV6_HDR > self.buf.len() {
                        return -errno::EBADMSG;
                    }
                    if !self.buf.close_gap(0, off) {
                        return -errno::EBADMSG;
                    }
                    self.update_srh_state();
                }
                self.lookup(None, table)
            }
            action::END_B6 | action::END_B6_ENCAP => {
                if self.state.srh.is_some() && !self.has_valid_srh() {
                    return -errno::EBADMSG;
                }
                let err = self.push_encap(act == action::END_B6_ENCAP, param);
                if err == 0 {
                    self.update_srh_state();
                }
                err
            }
            _ => -errno::EINVAL,
        }
    }
}

/// End.BPF on one packet (`input_action_end_bpf`): validate and consume the SRH, run the
/// program, check its return code and the SRH, choose the route.
pub fn end_bpf(prog: &Program, maps: &mut [Map], pkt: &mut Seg6Packet, opts: RunOpts) -> Verdict {
    end_bpf_with(&mut Scratch::default(), prog, maps, pkt, opts)
}

/// [`end_bpf`] with a reused [`Scratch`] (no allocation for the run itself).
pub fn end_bpf_with<B: PacketBytes>(
    scratch: &mut Scratch,
    prog: &Program,
    maps: &mut [Map],
    pkt: &mut Seg6Packet<B>,
    opts: RunOpts,
) -> Verdict {
    end_bpf_ext(scratch, prog, maps, pkt, opts, None)
}

/// [`end_bpf_with`], with the router's routes for sr6's extension helper
/// `sr6_ecmp_nexthops` (without them, it returns `-ENOTSUPP`).
pub fn end_bpf_ext<B: PacketBytes>(
    scratch: &mut Scratch,
    prog: &Program,
    maps: &mut [Map],
    pkt: &mut Seg6Packet<B>,
    opts: RunOpts,
    fib: Option<&dyn NextHopLookup>,
) -> Verdict {
    match find_valid_srh(&pkt.buf) {
        Ok(off) => end_bpf_at(scratch, prog, maps, pkt, opts, fib, off),
        Err(d) => Verdict::Drop(d),
    }
}

/// Where End.BPF finds the SRH it consumes (`get_and_validate_srh`): the first routing
/// header with Segments Left over 0 (`ipv6_find_hdr` with `IP6_FH_F_SKIP_RH`), valid by
/// `seg6_validate_srh`; [`Drop::NoSrh`] without one.
pub fn find_valid_srh(buf: &[u8]) -> Result<usize, Drop> {
    let Some(off) = find_hdr(buf, NEXTHDR_ROUTING, true) else { return Err(Drop::NoSrh) };
    let Some(&h) = buf.get(off + 1) else { return Err(Drop::NoSrh) };
    let len = (usize::from(h) + 1) << 3;
    if !validate_srh(buf.get(off..).unwrap_or_default(), len, true) {
        return Err(Drop::NoSrh);
    }
    Ok(off)
}

/// [`end_bpf_ext`] for a caller that has found the SRH itself, at offset `off`: the first
/// routing header with Segments Left over 0 (`ipv6_find_hdr` with `IP6_FH_F_SKIP_RH`),
/// valid by `seg6_validate_srh` (a fast path that takes only an SRH right after the IPv6
/// header, without TLVs, with Segments Left in range). The same outcome as
/// [`end_bpf_ext`] for such a packet; for any other, a drop (`NoSrh`) if `off` holds no
/// SRH with Segments Left over 0.
pub fn end_bpf_at<B: PacketBytes>(
    scratch: &mut Scratch,
    prog: &Program,
    maps: &mut [Map],
    pkt: &mut Seg6Packet<B>,
    opts: RunOpts,
    fib: Option<&dyn NextHopLookup>,
    off: usize,
) -> Verdict {
    match end_bpf_run_at(scratch, prog, maps, pkt, opts, fib, off) {
        Ok(()) => {
            Verdict::Forward(pkt.route.take().unwrap_or_else(|| Route { daddr: pkt.daddr(), nexthop: None, table: 0 }))
        }
        Err(d) => Verdict::Drop(d),
    }
}

/// [`end_bpf_at`] without building its [`Verdict`], for a caller that routes the packet
/// itself: `Ok` leaves the route in [`Seg6Packet::route`] — `None` for the main table's
/// route to the packet's destination as it is now (`BPF_OK`), else the route an action
/// helper chose (`BPF_REDIRECT`) — and `Err` says why the packet is dropped.
#[inline]
pub fn end_bpf_run_at<B: PacketBytes>(
    scratch: &mut Scratch,
    prog: &Program,
    maps: &mut [Map],
    pkt: &mut Seg6Packet<B>,
    opts: RunOpts,
    fib: Option<&dyn NextHopLookup>,
    off: usize,
) -> Result<(), Drop> {
    let c = consume(&mut pkt.buf, off)?;
    end_bpf_consumed(scratch, prog, maps, pkt, opts, fib, c)
}

/// The segment End.BPF consumed before its program runs ([`consume`]).
#[derive(Clone, Copy, Debug)]
pub struct Consumed(SrhState);

/// The first half of [`end_bpf_run_at`], for a caller that runs the program itself first
/// ([`crate::vm::run_lean`]): `advance_nextseg` on the SRH at `off` of the packet `b`
/// (the first routing header with Segments Left over 0, valid: as [`end_bpf_at`] says) —
/// Segments Left - 1, the destination becomes that segment (RFC 8754 §4.3.1.1). What
/// [`end_bpf_consumed`] needs, or [`Drop::NoSrh`] (nothing changed) if `off` holds no SRH
/// with Segments Left over 0 and its segment.
#[inline(always)]
pub fn consume(b: &mut [u8], off: usize) -> Result<Consumed, Drop> {
    let Some(&[_, h, SRH_TYPE, sl]) = b.get(off..off + 4) else { return Err(Drop::NoSrh) };
    let Some(sl) = sl.checked_sub(1) else { return Err(Drop::NoSrh) };
    let seg = off + 8 + usize::from(sl) * 16;
    let Some(next) = b.get(seg..seg + 16).and_then(|a| <[u8; 16]>::try_from(a).ok()) else {
        return Err(Drop::NoSrh);
    };
    let Some(da) = b.get_mut(24..40) else { return Err(Drop::NoSrh) };
    da.copy_from_slice(&next);
    b[off + 3] = sl;
    Ok(Consumed(SrhState { srh: Some(off), hdrlen: u16::from(h) << 3, valid: true }))
}

/// The second half of [`end_bpf_run_at`]: the program's run on `pkt`, whose segment
/// `c` says was consumed ([`consume`], on the same bytes), and what its return code
/// means.
#[inline]
pub fn end_bpf_consumed<B: PacketBytes>(
    scratch: &mut Scratch,
    prog: &Program,
    maps: &mut [Map],
    pkt: &mut Seg6Packet<B>,
    opts: RunOpts,
    fib: Option<&dyn NextHopLookup>,
    c: Consumed,
) -> Result<(), Drop> {
    pkt.state = c.0;
    pkt.route = None;
    let run = match fib {
        Some(fib) => vm::run_with(scratch, prog, maps, &mut WithFib { pkt: &mut *pkt, fib }, opts),
        None => vm::run_with(scratch, prog, maps, pkt, opts),
    };
    match run {
        Ok(r0) => finish(pkt, r0 as u32),
        Err(f) => Err(Drop::Fault(f)),
    }
}

/// What `input_action_end_bpf` makes of the return code `r0` of a program that never
/// called a helper (a lean run, [`crate::vm::run_lean`]): the packet and its SRH are as
/// [`consume`] left them, so `BPF_OK` routes the destination by the main table and
/// `BPF_REDIRECT` has no route to take.
pub fn lean_verdict(r0: u64) -> Result<(), Drop> {
    match r0 as u32 {
        ret::BPF_OK => Ok(()),
        ret::BPF_REDIRECT => Err(Drop::RedirectWithoutRoute),
        ret::BPF_DROP => Err(Drop::ProgramDrop),
        other => Err(Drop::IllegalReturn(other)),
    }
}

/// What `input_action_end_bpf` does with the program's return code `r0`: `BPF_OK`
/// forgets a route a helper chose, `BPF_REDIRECT` needs one, anything else drops; the
/// SRH, if the packet still has one, must be valid.
fn finish<B: PacketBytes>(pkt: &mut Seg6Packet<B>, r0: u32) -> Result<(), Drop> {
    match r0 {
        ret::BPF_OK => pkt.route = None,
        ret::BPF_REDIRECT => {}
        ret::BPF_DROP => return Err(Drop::ProgramDrop),
        other => return Err(Drop::IllegalReturn(other)),
    }
    if pkt.state.srh.is_some() && !pkt.has_valid_srh() {
        return Err(Drop::InvalidSrh);
    }
    if r0 == ret::BPF_REDIRECT && pkt.route.is_none() {
        return Err(Drop::RedirectWithoutRoute);
    }
    Ok(())
}

/// A [`Seg6Packet`] with the router's routes: every helper is the packet's, but
/// `sr6_ecmp_nexthops`, which asks `fib`.
struct WithFib<'a, B> {
    pkt: &'a mut Seg6Packet<B>,
    fib: &'a dyn NextHopLookup,
}

impl<B: PacketBytes> Skb for WithFib<'_, B> {
    fn data(&self) -> &[u8] {
        self.pkt.data()
    }
    fn data_mut(&mut self) -> Option<&mut [u8]> {
        self.pkt.data_mut()
    }
    fn meta(&self) -> &SkbMeta {
        self.pkt.meta()
    }
    fn meta_mut(&mut self) -> &mut SkbMeta {
        self.pkt.meta_mut()
    }
    fn ktime_get_ns(&mut self) -> u64 {
        self.pkt.ktime_get_ns()
    }
    fn cpu(&self) -> u32 {
        self.pkt.cpu()
    }
    fn prandom_u32(&mut self) -> u32 {
        self.pkt.prandom_u32()
    }
    fn trace_printk(&mut self, fmt: &[u8]) {
        self.pkt.trace_printk(fmt)
    }
    fn lwt_seg6_store_bytes(&mut self, offset: u32, from: &[u8]) -> i64 {
        self.pkt.lwt_seg6_store_bytes(offset, from)
    }
    fn lwt_seg6_adjust_srh(&mut self, offset: u32, delta: i32) -> i64 {
        self.pkt.lwt_seg6_adjust_srh(offset, delta)
    }
    fn lwt_seg6_action(&mut self, action: u32, param: &[u8]) -> i64 {
        self.pkt.lwt_seg6_action(action, param)
    }
    fn lwt_push_encap(&mut self, encap_type: u32, hdr: &[u8]) -> i64 {
        self.pkt.lwt_push_encap(encap_type, hdr)
    }
    fn ecmp_nexthops(&mut self, dst: &[u8; 16], table: u32, out: &mut [[u8; 16]]) -> i64 {
        self.fib.ecmp_nexthops(dst, table, out)
    }
}
