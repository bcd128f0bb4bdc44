//! End.AS, the static proxy (draft-ietf-spring-sr-service-programming §6.1).
//!
//! Part 1 (§6.1.1): an End step (RFC 8754 §4.3.1; the outer hop limit is not
//! decremented, the outer header is not forwarded), then the outer IPv6 header and its
//! extension headers removed and the inner packet sent to the function: to `nh6`/`nh4`
//! out of `oif` (as End.DX6/End.DX4), or, without a next hop, the inner Ethernet frame
//! unchanged out of `oif` (as End.DX2).
//!
//! Part 2 (§6.1.2): a packet of the inner type received on `iif` gets the configured
//! outer header and SRH — source `src` (CACHE.SA), segments `segs` (CACHE.LIST), as
//! H.Encaps (H.Encaps.L2 for Ethernet) builds them for a route `encap seg6 mode encap
//! segs ...` (the same policy machinery, so the same bytes: hop limit, traffic class,
//! flow label) — and is forwarded by the main table's lookup of the first segment.

use super::{end_step, inner_chain, last_segment, of, takes_family, to_function, wrong_type, Proxy};
use crate::behaviour::{Arrival, Behaviour, Next, Param, Takes};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::pipeline::Worker;
use crate::spec::{Seg6Mode, SidAction};
use crate::tables::{BuildError, Sid, SidBuilder, SidState, Tables};

pub static END_AS: Behaviour = Behaviour {
    keyword: "End.AS",
    required: &[Param::Oif, Param::Iif, Param::Src, Param::Segs],
    optional: &[Param::Nh6, Param::Nh4],
    flavors: &[],
    rfc: "draft-ietf-spring-sr-service-programming §6.1",
    summary: "static SR proxy: decapsulate to a service function; re-encapsulate its packets with src and segs",
    in_kernel: false,
    takes: Takes::Segment,
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let p = &a.params;
    let (Some(src), Some(segs)) = (p.src, p.segs.as_deref()) else {
        return Err(b.error("End.AS requires `src ADDR` and `segs S1,...,Sn`"));
    };
    if segs.is_empty() {
        return Err(b.error("End.AS: `segs` needs at least one segment"));
    }
    let oif = b.oif(a)?;
    let (nh, mode) = match (p.nh6, p.nh4) {
        (Some(_), Some(_)) => return Err(b.error("End.AS takes `nh6 ADDR` or `nh4 ADDR`, not both")),
        (Some(_), None) => (Some(b.next_hop6(a)?), Seg6Mode::Encap),
        (None, Some(_)) => (Some(b.next_hop4(a)?), Seg6Mode::Encap),
        (None, None) => (None, Seg6Mode::L2Encap),
    };
    let policy = b.proxy_policy(mode, segs, src);
    Ok(SidState { nh, oif, policy, ..SidState::default() })
}

/// Part 1 (§6.1.1): S01-S04 are the End step (an SRH with Segments Left > 0, else what
/// End does at the last segment), then the inner packet to the function.
fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(px) = of(t, sid) else { return Next::drop(DropReason::NoRoute) };
    match a {
        Arrival::Segments(r) => {
            if let Err(n) = end_step(p, r) {
                return n;
            }
            match inner_chain(p, px) {
                Ok(chain) => to_function(t, p, sid, px, &chain),
                Err(n) => n,
            }
        }
        // The draft's "ELSE Drop": the End behaviour's own answer at the last segment.
        Arrival::Last { chain, srh } => last_segment(p, sid, px, chain, srh.as_ref()),
        Arrival::NextCsid(_) => Next::drop(DropReason::Malformed),
    }
}

/// Part 2 (§6.1.2) for an IPv6 (`v6`) or IPv4 packet received on the proxy's `iif`.
pub(super) fn inbound(t: &Tables, w: &mut Worker, p: &mut PacketBuf, px: &Proxy, v6: bool) -> Next {
    if !takes_family(px, v6) {
        return wrong_type(px);
    }
    let Some(sid) = t.sids.get(px.sid as usize) else { return Next::drop(DropReason::NoRoute) };
    let i = sid.state.policy;
    let next = if v6 {
        crate::pipeline::forward::policy6(t, w, p, i, true)
    } else {
        crate::pipeline::forward::policy4(t, w, p, i, true)
    };
    if !matches!(next, Next::Done(crate::packet::Verdict::Drop(_))) {
        super::bump(&px.state.counters.from_function);
    }
    next
}
