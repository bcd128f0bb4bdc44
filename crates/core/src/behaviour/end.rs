//! End, End.X and End.T with Segments Left > 0 (RFC 8986 §4.1-§4.3), with the PSP
//! flavour (§4.16.1). The SRH has passed the checks of [`super::endpoint`].

use super::srh_ops;
use crate::packet::PacketBuf;
use crate::pipeline::{forward, Next, Worker};
use crate::tables::{Sid, SidOp, Tables};
use sr6_wire::RoutingInfo;

/// Advances to the next segment and forwards: End by the main table, End.T by its
/// table, End.X to its adjacency.
pub fn next_segment(t: &Tables, w: &mut Worker, p: &mut PacketBuf, sid: &Sid, r: &RoutingInfo) -> Next {
    let sl = srh_ops::advance(p, r);
    // PSP: the penultimate SID removes the SRH once Segments Left reaches 0.
    if sl == 0 && sid.flavors.psp && !srh_ops::remove(p, r) {
        return Next::drop(crate::drop::DropReason::Malformed);
    }
    match sid.op {
        SidOp::EndX { nh } => forward::forward6(t, w, p, nh, false),
        SidOp::EndT { table } => Next::Lookup6 { table, forward: false },
        _ => Next::Lookup6 { table: Tables::MAIN, forward: false },
    }
}
