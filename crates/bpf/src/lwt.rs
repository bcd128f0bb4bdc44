//! The LWT BPF hooks over a plain packet: a route's `encap bpf in|out|xmit` programs
//! (net/core/lwt_bpf.c), the helper `bpf_lwt_push_encap` (net/core/filter.c) and what
//! each hook makes of the program's return code.
//!
//! - **`in`** (`BPF_PROG_TYPE_LWT_IN`, `bpf_input`): on a received packet whose route
//!   carries the hook, before forwarding. `bpf_lwt_push_encap` may push an SRH
//!   (`BPF_LWT_ENCAP_SEG6`: a new outer IPv6 header as `seg6_do_srh_encap`;
//!   `BPF_LWT_ENCAP_SEG6_INLINE`: inserted as `seg6_do_srh_inline`), after which the
//!   kernel routes the new destination at once (`seg6_lookup_nexthop`), or prepend an
//!   IP header the program wrote (`BPF_LWT_ENCAP_IP`, `bpf_lwt_push_ip_encap`).
//! - **`out`** (`LWT_OUT`, `bpf_output`): after the forwarding step, read-only, no
//!   encapsulation.
//! - **`xmit`** (`LWT_XMIT`, `bpf_xmit`): just before the packet leaves; the packet is
//!   writable and `BPF_LWT_ENCAP_IP` is the only encapsulation.
//!
//! Return codes, as `run_lwt_bpf`: `BPF_OK` and `BPF_LWT_REROUTE` go on,
//! `BPF_REDIRECT` is `BPF_OK` for `in` and `out` (the kernel warns once), `BPF_DROP`
//! and any other value drop. Then per hook: `in` reroutes on `BPF_LWT_REROUTE`
//! (`bpf_lwt_input_reroute`), else forwards on the new destination's route after an SRH
//! push, else on its own route; `out` always goes on; `xmit` reroutes on
//! `BPF_LWT_REROUTE` (`bpf_lwt_xmit_reroute`), drops a `BPF_OK` whose packet changed
//! protocol, and drops `BPF_REDIRECT` (sr6 provides no `bpf_redirect`, so there is
//! never a target: the kernel's `skb_do_redirect` frees the packet).
//!
//! Routes are not looked up here: [`Outcome`] says what the packet side must do.

use crate::bytes::PacketBytes;
use crate::helpers::ProgType;
use crate::maps::Map;
use crate::seg6::{push_seg6, ret};
use crate::skb::{errno, Skb, SkbMeta};
use crate::vm::{self, Fault, Program, RunOpts, Scratch};

/// `enum bpf_lwt_encap_mode` (include/uapi/linux/bpf.h).
pub mod encap {
    pub const SEG6: u32 = 0;
    pub const SEG6_INLINE: u32 = 1;
    pub const IP: u32 = 2;
}

/// `BPF_LWT_REROUTE` (`enum bpf_ret_code`).
pub const BPF_LWT_REROUTE: u32 = 128;
/// `LWT_BPF_MAX_HEADROOM`: the largest IP header `BPF_LWT_ENCAP_IP` pushes, and the
/// largest `headroom` a route takes.
pub const MAX_HEADROOM: usize = 256;
/// Largest packet the helper grows a packet to (an IPv6 packet without jumbograms).
const MAX_PACKET: usize = 65535 + 40;

/// What the packet side does after a hook's program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Go on along the packet's route (`orig_input`, `orig_output`,
    /// `LWTUNNEL_XMIT_CONTINUE`).
    Continue,
    /// `in` after an SRH push: forward on the route of the new destination (looked up by
    /// the helper, `seg6_lookup_nexthop`: a local destination is dropped), without
    /// running that route's `in` program.
    Lookup,
    /// `BPF_LWT_REROUTE`: route the packet again on its new header, as received (`in`)
    /// or as sent by the router (`xmit`).
    Reroute,
    Drop(Drop),
}

/// Why a hook dropped a packet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Drop {
    #[error("program aborted: {0}")]
    Fault(Fault),
    #[error("program returned BPF_DROP")]
    ProgramDrop,
    #[error("program returned {0}, not BPF_OK, BPF_DROP, BPF_REDIRECT or BPF_LWT_REROUTE")]
    IllegalReturn(u32),
    #[error("BPF_OK after the program changed the packet's protocol (BPF_LWT_REROUTE needed)")]
    ProtocolChanged,
    #[error("BPF_REDIRECT without a target (bpf_redirect is not provided)")]
    Redirect,
}

/// A packet (from its IP header) with what the LWT helpers need.
#[derive(Clone, Debug)]
pub struct LwtPacket<B = Vec<u8>> {
    pub buf: B,
    pub meta: SkbMeta,
    /// Source of the outer header `BPF_LWT_ENCAP_SEG6` pushes (the kernel's `set_tun_src`
    /// on the route's device).
    pub encap_src: [u8; 16],
    /// What `bpf_ktime_get_ns` returns.
    pub now_ns: u64,
    /// Formats passed to `bpf_trace_printk`.
    pub traces: Vec<Vec<u8>>,
    /// The state of `bpf_get_prandom_u32` (xorshift32): a caller that makes one packet
    /// view per run keeps it between runs.
    pub prandom: u32,
    hook: ProgType,
    seg6_pushed: bool,
}

impl SkbMeta {
    /// `protocol` for IPv4 (ETH_P_IP in network byte order).
    pub const PROTO_IPV4: u32 = u16::from_ne_bytes(0x0800u16.to_be_bytes()) as u32;
}

impl LwtPacket {
    /// `skb->protocol` of the packet in `buf`, by its version (IPv4 or IPv6).
    pub fn protocol_of(buf: &[u8]) -> u32 {
        match buf.first().map(|b| b >> 4) {
            Some(4) => SkbMeta::PROTO_IPV4,
            _ => SkbMeta::PROTO_IPV6,
        }
    }
}

impl<B: PacketBytes> LwtPacket<B> {
    pub fn new(buf: B) -> LwtPacket<B> {
        LwtPacket {
            buf,
            meta: SkbMeta::default(),
            encap_src: [0; 16],
            now_ns: 0,
            traces: Vec::new(),
            prandom: crate::skb::PRANDOM_SEED,
            hook: ProgType::LwtIn,
            seg6_pushed: false,
        }
    }

    /// `bpf_lwt_push_ip_encap`: the header the program wrote, prepended as it is (the
    /// program sets its lengths); an IPv4 header whose checksum is 0 gets one. Its
    /// length: at least 20 bytes, at most [`MAX_HEADROOM`], and at least IHL × 4 (IPv4)
    /// or 40 (IPv6).
    fn push_ip(&mut self, hdr: &[u8]) -> i64 {
        if hdr.len() < 20 || hdr.len() > MAX_HEADROOM {
            return -errno::EINVAL;
        }
        let ihl = usize::from(hdr[0] & 0x0f) * 4;
        let v4 = match hdr[0] >> 4 {
            4 if hdr.len() >= ihl => true,
            6 if hdr.len() >= 40 => false,
            _ => return -errno::EINVAL,
        };
        if self.buf.len() + hdr.len() > MAX_PACKET || !self.buf.open_gap(0, hdr.len()) {
            return -errno::ENOMEM;
        }
        self.buf[..hdr.len()].copy_from_slice(hdr);
        if v4 {
            self.meta.protocol = SkbMeta::PROTO_IPV4;
            if self.buf[10..12] == [0, 0] {
                let c = ipv4_checksum(&self.buf[..ihl]);
                self.buf[10..12].copy_from_slice(&c.to_be_bytes());
            }
        } else {
            self.meta.protocol = SkbMeta::PROTO_IPV6;
        }
        0
    }
}

/// The Internet checksum of an IPv4 header (RFC 1071), as `ip_fast_csum`.
fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c.get(1).copied().unwrap_or(0)]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl<B: PacketBytes> Skb for LwtPacket<B> {
    fn data(&self) -> &[u8] {
        &self.buf
    }

    /// Direct writes: the interpreter allows them for `lwt_xmit` programs only.
    fn data_mut(&mut self) -> Option<&mut [u8]> {
        Some(&mut self.buf)
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

    fn prandom_u32(&mut self) -> u32 {
        crate::skb::xorshift32(&mut self.prandom)
    }

    fn trace_printk(&mut self, fmt: &[u8]) {
        crate::skb::keep_trace(&mut self.traces, fmt);
    }

    /// `bpf_lwt_in_push_encap` / `bpf_lwt_xmit_push_encap`: SEG6 and SEG6_INLINE for
    /// `in` (`bpf_push_seg6_encap`, the SRH validated by `seg6_validate_srh`), IP for
    /// `in` and `xmit`; anything else `-EINVAL`. sr6 refuses SEG6 on an IPv4 packet
    /// (`-EINVAL`), which the kernel would encapsulate with Next Header 41 (IPv6).
    fn lwt_push_encap(&mut self, encap_type: u32, hdr: &[u8]) -> i64 {
        match (self.hook, encap_type) {
            (ProgType::LwtIn, encap::SEG6 | encap::SEG6_INLINE) => {
                if encap_type == encap::SEG6 && self.meta.protocol != SkbMeta::PROTO_IPV6 {
                    return -errno::EINVAL;
                }
                let err = push_seg6(&mut self.buf, self.meta.protocol, &self.encap_src, encap_type == encap::SEG6, hdr);
                if err == 0 {
                    self.seg6_pushed = true;
                }
                err
            }
            (ProgType::LwtIn | ProgType::LwtXmit, encap::IP) => self.push_ip(hdr),
            _ => -errno::EINVAL,
        }
    }
}

/// Runs the hook's program (its type says which hook) on `pkt` and reads its return
/// code as the kernel's `run_lwt_bpf` and `bpf_input` / `bpf_output` / `bpf_xmit` do.
pub fn run_lwt<B: PacketBytes>(
    scratch: &mut Scratch,
    prog: &Program,
    maps: &mut [Map],
    pkt: &mut LwtPacket<B>,
    opts: RunOpts,
) -> Outcome {
    pkt.hook = prog.prog_type;
    pkt.seg6_pushed = false;
    pkt.meta.protocol = LwtPacket::protocol_of(&pkt.buf);
    let proto = pkt.meta.protocol;
    let xmit = prog.prog_type == ProgType::LwtXmit;
    let r0 = match vm::run_with(scratch, prog, maps, pkt, opts) {
        Ok(r) => r as u32,
        Err(f) => return Outcome::Drop(Drop::Fault(f)),
    };
    let r0 = match r0 {
        ret::BPF_OK | BPF_LWT_REROUTE => r0,
        ret::BPF_REDIRECT if xmit => return Outcome::Drop(Drop::Redirect),
        ret::BPF_REDIRECT => ret::BPF_OK,
        ret::BPF_DROP => return Outcome::Drop(Drop::ProgramDrop),
        other => return Outcome::Drop(Drop::IllegalReturn(other)),
    };
    match prog.prog_type {
        ProgType::LwtIn | ProgType::LwtXmit if r0 == BPF_LWT_REROUTE => Outcome::Reroute,
        ProgType::LwtIn if pkt.seg6_pushed => Outcome::Lookup,
        // bpf_xmit: BPF_OK with another protocol is -EINVAL. For `in`, the kernel would
        // hand a packet of the other family to the route's own forwarding: sr6 drops it.
        ProgType::LwtIn | ProgType::LwtXmit if pkt.meta.protocol != proto => Outcome::Drop(Drop::ProtocolChanged),
        _ => Outcome::Continue,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip6(nh: u8, hlim: u8, dst: u8) -> Vec<u8> {
        let mut b = vec![0x60, 0x12, 0x34, 0x56, 0, 8, nh, hlim];
        b.extend([0xaa; 16]);
        let mut d = [0xbb; 16];
        d[15] = dst;
        b.extend(d);
        b.extend([1, 2, 3, 4, 5, 6, 7, 8]);
        b
    }

    /// An SRH of `segs` (segment i's last byte i + 1), SL = Last Entry.
    fn srh(segs: usize) -> Vec<u8> {
        let mut s = vec![0, (segs * 2) as u8, 4, (segs - 1) as u8, (segs - 1) as u8, 0, 0, 0];
        for i in 0..segs {
            let mut a = [0xcc; 16];
            a[15] = i as u8 + 1;
            s.extend(a);
        }
        s
    }

    fn pkt(hook: ProgType, buf: Vec<u8>) -> LwtPacket {
        let mut p = LwtPacket::new(buf);
        p.hook = hook;
        p.meta.protocol = LwtPacket::protocol_of(&p.buf);
        p.encap_src = [0xee; 16];
        p
    }

    #[test]
    fn seg6_encap_pushes_an_outer_header_and_the_srh() {
        let inner = ip6(17, 9, 1);
        let mut p = pkt(ProgType::LwtIn, inner.clone());
        assert_eq!(p.lwt_push_encap(encap::SEG6, &srh(2)), 0);
        assert!(p.seg6_pushed);
        let b = &p.buf;
        assert_eq!(b.len(), 40 + 40 + inner.len());
        assert_eq!(&b[..4], &inner[..4], "traffic class and flow label copied");
        assert_eq!(u16::from_be_bytes([b[4], b[5]]) as usize, 40 + inner.len());
        assert_eq!((b[6], b[7]), (43, 9), "SRH next, the inner hop limit");
        assert_eq!(&b[8..24], &[0xee; 16]);
        assert_eq!(b[39], 2, "destination: the first segment (Last Entry's)");
        assert_eq!(b[40], 41, "SRH Next Header: IPv6");
        assert_eq!(&b[80..], &inner[..]);
    }

    #[test]
    fn seg6_inline_inserts_the_srh() {
        let inner = ip6(17, 9, 7);
        let mut p = pkt(ProgType::LwtIn, inner.clone());
        assert_eq!(p.lwt_push_encap(encap::SEG6_INLINE, &srh(2)), 0);
        let b = &p.buf;
        assert_eq!(b.len(), inner.len() + 40);
        assert_eq!((b[6], b[39]), (43, 2));
        assert_eq!(b[40], 17, "the old Next Header");
        assert_eq!(b[48 + 15], 7, "segment 0: the old destination");
        assert_eq!(&b[80..], &inner[40..]);
        assert_eq!(u16::from_be_bytes([b[4], b[5]]), 48);
    }

    #[test]
    fn seg6_refusals() {
        let inner = ip6(17, 9, 1);
        let mut bad = srh(2);
        bad[1] = 3; // Hdr Ext Len not matching the length
        for (hook, t, h, want) in [
            (ProgType::LwtIn, encap::SEG6, bad.clone(), -errno::EINVAL),
            (ProgType::LwtIn, encap::SEG6_INLINE, bad, -errno::EINVAL),
            (ProgType::LwtIn, encap::SEG6, vec![0; 4], -errno::EINVAL),
            (ProgType::LwtXmit, encap::SEG6, srh(1), -errno::EINVAL),
            (ProgType::LwtIn, 9, srh(1), -errno::EINVAL),
        ] {
            let mut p = pkt(hook, inner.clone());
            assert_eq!(p.lwt_push_encap(t, &h), want);
            assert_eq!(p.buf, inner, "unchanged");
        }
        // SRH Segments Left above Last Entry: seg6_validate_srh (not reduced) refuses.
        let mut sl = srh(2);
        sl[3] = 2;
        assert_eq!(pkt(ProgType::LwtIn, inner.clone()).lwt_push_encap(encap::SEG6, &sl), -errno::EINVAL);
        // IPv4: no SRH inline (EBADMSG, the kernel's) nor encap (sr6's EINVAL).
        let v4 = ip4_hdr(17);
        assert_eq!(pkt(ProgType::LwtIn, v4.clone()).lwt_push_encap(encap::SEG6_INLINE, &srh(1)), -errno::EBADMSG);
        assert_eq!(pkt(ProgType::LwtIn, v4).lwt_push_encap(encap::SEG6, &srh(1)), -errno::EINVAL);
    }

    fn ip4_hdr(proto: u8) -> Vec<u8> {
        vec![0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8]
    }

    #[test]
    fn ip_encap_prepends_and_checksums_ipv4() {
        let inner = ip6(17, 9, 1);
        let mut p = pkt(ProgType::LwtXmit, inner.clone());
        let mut h = ip4_hdr(41);
        h.truncate(20);
        assert_eq!(p.lwt_push_encap(encap::IP, &h), 0);
        assert_eq!(p.meta.protocol, SkbMeta::PROTO_IPV4);
        assert_eq!(ipv4_checksum(&p.buf[..20]), 0, "a valid checksum");
        assert_eq!(&p.buf[20..], &inner[..]);
        // An IPv6 header is copied as it is; short or unknown headers refused.
        let mut p = pkt(ProgType::LwtIn, inner.clone());
        let outer = ip6(41, 64, 5)[..40].to_vec();
        assert_eq!(p.lwt_push_encap(encap::IP, &outer), 0);
        assert_eq!(&p.buf[..40], &outer[..]);
        assert_eq!(p.meta.protocol, SkbMeta::PROTO_IPV6);
        for h in [vec![0x60; 39], vec![0x46; 20], vec![0x50; 40], vec![0x60; 257], vec![0x45; 19]] {
            let mut p = pkt(ProgType::LwtXmit, inner.clone());
            assert_eq!(p.lwt_push_encap(encap::IP, &h), -errno::EINVAL, "{h:?}");
            assert_eq!(p.buf, inner);
        }
        // `out` has no push_encap at all (refused at load); at run time EINVAL.
        assert_eq!(pkt(ProgType::LwtOut, inner).lwt_push_encap(encap::IP, &outer), -errno::EINVAL);
    }
}
