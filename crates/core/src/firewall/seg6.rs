//! The SEG6 target (thesis §4.3.2, SERA's `ip6t_SEG6`): SRv6 actions on the packet's
//! SRH, after which the packet is routed toward its new destination as a forwarded
//! packet (hop limit checked and decremented, FORWARD applied), as SERA's
//! `dst_input` after `seg6_advance_nextseg`.
//!
//! - go-next: as End (RFC 8986 §4.1) — Segments Left - 1, the destination Segment
//!   List[Segments Left]; dropped when Segments Left is 0.
//! - skip-next: the next segment skipped — Segments Left - 2; dropped when below 2.
//! - go-last: straight to the last segment — Segments Left 0, the destination Segment
//!   List[0]; dropped when Segments Left is already 0.
//! - eval-args: the action is the argument of the active SID — its rightmost
//!   `net.ipv6.ip6t_seg6_args` bits (the thesis's LOC:FUNCT:ARGS) — 0 ACCEPT, 1 DROP,
//!   2 go-next, 3 skip-next, 4 go-last; any other value is answered with ICMPv6
//!   Parameter Problem, code 0, pointing at the active SID (Segment List[Segments
//!   Left]) so that the sender learns the action is not supported.
//!
//! A packet without a valid SRH (the first Routing header, Routing Type 4, the segment
//! list inside Hdr Ext Len, Segments Left <= Last Entry) is dropped.

use super::fields::Fields;
use super::Seg6Action;
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::pipeline::{icmp, Next, Worker};
use crate::tables::Tables;
use sr6_wire::checksum;
use sr6_wire::icmpv6::PP_ERRONEOUS_HEADER;
use sr6_wire::{Ipv6Packet, SrhPacket, IPPROTO_AH, IPPROTO_UDP};

/// eval-args' argument values, in order: ACCEPT, DROP, go-next, skip-next, go-last.
pub const EVAL_ARGS: [&str; 5] = ["ACCEPT", "DROP", "go-next", "skip-next", "go-last"];

/// Carries out `action` on the packet in `p` (fields `f`); `arg_bits` for eval-args.
/// `None`: accepted (eval-args 0).
pub(crate) fn apply(
    t: &Tables,
    w: &mut Worker,
    p: &mut PacketBuf,
    f: &Fields,
    action: Seg6Action,
    arg_bits: u8,
) -> Option<Next> {
    let Some(off) = f.routing else { return Some(Next::drop(DropReason::Firewall)) };
    let sl = match p.data().get(off..).map(SrhPacket::new_checked) {
        Some(Ok(s)) if s.segments_left() <= s.last_entry() => s.segments_left(),
        _ => return Some(Next::drop(DropReason::Firewall)),
    };
    let target = match action {
        Seg6Action::GoNext => sl.checked_sub(1),
        Seg6Action::SkipNext => sl.checked_sub(2),
        Seg6Action::GoLast => (sl > 0).then_some(0),
        Seg6Action::EvalArgs => {
            let mask = if arg_bits >= 128 { u128::MAX } else { (1u128 << arg_bits) - 1 };
            match f.dst & mask {
                0 => return None,
                1 => return Some(Next::drop(DropReason::Firewall)),
                2 => sl.checked_sub(1),
                3 => sl.checked_sub(2),
                4 => (sl > 0).then_some(0),
                _ => {
                    let pointer = off + 8 + 16 * usize::from(sl);
                    return Some(icmp::param_problem6(t, w, p, PP_ERRONEOUS_HEADER, pointer));
                }
            }
        }
    };
    let Some(new_sl) = target else { return Some(Next::drop(DropReason::Firewall)) };
    let d = p.data_mut();
    let next = {
        let Some(b) = d.get_mut(off..) else { return Some(Next::drop(DropReason::Firewall)) };
        let mut srh = SrhPacket::new_unchecked(b);
        srh.set_segments_left(new_sl);
        srh.segment(new_sl)
    };
    let Some(next) = next else { return Some(Next::drop(DropReason::Firewall)) };
    Ipv6Packet::new_unchecked(d).set_dst_addr(&next);
    Some(Next::Lookup6 { table: Tables::MAIN, forward: true })
}

/// Linux's `reject6_csum_ok`: no REJECT answer for a non-first fragment, a packet
/// without anything after its headers, or one whose transport checksum (over the
/// pseudo-header of its current addresses) is wrong; GRE, AH, ESP, SCTP, UDP-Lite,
/// DCCP and UDP with checksum 0 are not verified (`nf_reject_verify_csum`).
pub(crate) fn reject_csum_ok(d: &[u8], f: &Fields) -> bool {
    let Some(u) = f.upper else { return false };
    if u.fragoff != 0 || u.offset >= d.len() {
        return false;
    }
    let payload = d.get(u.offset..).unwrap_or_default();
    match u.proto {
        47 | IPPROTO_AH | 50 | 132 | 136 | 33 => return true,
        IPPROTO_UDP if payload.get(6..8) == Some(&[0, 0]) => return true,
        _ => {}
    }
    let ip = Ipv6Packet::new_unchecked(d);
    let ph = checksum::pseudo_header_v6(&ip.src_addr(), &ip.dst_addr(), payload.len() as u32, u.proto);
    checksum::fold(ph + checksum::sum(payload)) == 0
}
