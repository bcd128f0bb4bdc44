//! The part common to every endpoint behaviour (RFC 8986 §4, RFC 8754 §4.3.1): SID
//! counters, the HMAC policy, the SRH checks in RFC order, and the dispatch to the
//! behaviour's own step — with Segments Left > 0 ([`end`], [`binding`]) or at the
//! upper layer ([`upper`]).

use super::{binding, end, hmac_check, srh_ops, upper};
use crate::drop::DropReason;
use crate::packet::{PacketBuf, Verdict};
use crate::pipeline::{icmp, Next, Worker};
use crate::tables::{Sid, SidOp, Tables};
use sr6_wire::{walk_chain, RoutingInfo};

/// Processes a packet whose destination matched local SID `i`, counting it on the SID.
pub fn process(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32) -> Next {
    let Some(sid) = t.sids.get(i as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    let len = p.len() as u64;
    let icmp_before = w.counters.icmp_sent;
    let next = step(t, w, p, sid);
    if matches!(next, Next::Done(Verdict::Drop(_))) || w.counters.icmp_sent != icmp_before {
        w.counters.sids.error(i as usize);
    } else {
        w.counters.sids.count(i as usize, len);
    }
    next
}

/// The SRH when it directly follows the IPv6 header (the common case), read without
/// walking the chain. `None` sends the packet to the general walk.
#[inline]
fn srh_after_ipv6(d: &[u8]) -> Option<RoutingInfo> {
    let h: &[u8; 48] = d.get(..48)?.try_into().ok()?;
    if h[6] != sr6_wire::IPPROTO_ROUTING || h[42] != sr6_wire::srh::ROUTING_TYPE_SRH {
        return None;
    }
    let len = (usize::from(h[41]) + 1) * 8;
    if 40 + len > d.len() {
        return None;
    }
    Some(RoutingInfo { offset: 40, nh_field: 6, routing_type: h[42], segments_left: h[43], len })
}

fn step(t: &Tables, w: &mut Worker, p: &mut PacketBuf, sid: &Sid) -> Next {
    // Fast path: with Segments Left > 0 only the SRH matters (RFC 8986 §4.1 S01-S15),
    // so the rest of the chain need not be walked.
    if let Some(r) = srh_after_ipv6(p.data()) {
        if r.segments_left > 0 {
            if !hmac_check::verify(t, p, &r) {
                return Next::drop(DropReason::HmacInvalid);
            }
            return with_segments_left(t, w, p, sid, &r);
        }
    }
    let chain = match walk_chain(p.data()) {
        Ok(c) => c,
        Err(_) => return Next::drop(DropReason::Malformed),
    };
    let srh = match chain.routing {
        Some(r) if r.routing_type == sr6_wire::srh::ROUTING_TYPE_SRH => Some(r),
        // RFC 8200 §4.4: an unrecognised Routing Type with Segments Left != 0.
        Some(r) if r.segments_left > 0 => return icmp::param_problem6(t, w, p, 0, r.offset + 2),
        _ => None,
    };
    if let Some(r) = &srh {
        if !hmac_check::verify(t, p, r) {
            return Next::drop(DropReason::HmacInvalid);
        }
        if r.segments_left > 0 {
            return with_segments_left(t, w, p, sid, r);
        }
    }
    upper::process(t, w, p, sid, &chain, srh.as_ref())
}

/// RFC 8986 §4.1 S05-S11 for the behaviours that consume a segment; decapsulating
/// behaviours require Segments Left 0 (§4.4 S02-S03).
fn with_segments_left(t: &Tables, w: &mut Worker, p: &mut PacketBuf, sid: &Sid, r: &RoutingInfo) -> Next {
    let decap = matches!(
        sid.op,
        SidOp::EndDx2 { .. }
            | SidOp::EndDx4 { .. }
            | SidOp::EndDx6 { .. }
            | SidOp::EndDt4 { .. }
            | SidOp::EndDt6 { .. }
            | SidOp::EndDt46 { .. }
    );
    if decap {
        return icmp::param_problem6(t, w, p, 0, r.offset + 3);
    }
    if p.data()[7] <= 1 {
        return icmp::time_exceeded6(t, w, p);
    }
    if !srh_ops::srh_consistent(p, r) {
        return icmp::param_problem6(t, w, p, 0, r.offset + 3);
    }
    match sid.op {
        SidOp::EndB6 { policy } => binding::insert(t, w, p, policy),
        SidOp::EndB6Encaps { policy } => binding::encaps(t, w, p, r, policy),
        _ => end::next_segment(t, w, p, sid, r),
    }
}
