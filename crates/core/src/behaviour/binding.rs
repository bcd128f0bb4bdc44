//! Binding SIDs: End.B6 (Linux semantics: insert the policy's SRH) and
//! End.B6.Encaps / End.B6.Encaps.Red (RFC 8986 §4.13-§4.14).

use super::{headend, srh_ops};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::pipeline::{Next, Worker};
use crate::tables::Tables;
use sr6_wire::RoutingInfo;

/// End.B6 as Linux `input_action_end_b6`: the received SRH is left as it is; the
/// policy's SRH is inserted in front of it with Segment List[0] = the current
/// destination; the destination becomes the policy's first segment; hop limit - 1.
pub fn insert(t: &Tables, _w: &mut Worker, p: &mut PacketBuf, policy: u32) -> Next {
    let Some(pol) = t.policies.get(policy as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    if !headend::insert_srh(t, p, pol) {
        return Next::drop(DropReason::NoHeadroom);
    }
    let d = p.data_mut();
    d[7] -= 1;
    Next::Lookup6 { table: Tables::MAIN, forward: false }
}

/// RFC 8986 §4.13 S11-S18: consume a segment of the received SRH, then encapsulate with
/// the policy; the outer hop limit is the inner's after its decrement.
pub fn encaps(t: &Tables, _w: &mut Worker, p: &mut PacketBuf, r: &RoutingInfo, policy: u32) -> Next {
    let Some(pol) = t.policies.get(policy as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    srh_ops::advance(p, r);
    let d = p.data();
    let tc = (d[0] & 0x0f) << 4 | d[1] >> 4;
    let fl = u32::from_be_bytes([0, d[1] & 0x0f, d[2], d[3]]);
    let hl = d[7];
    match headend::push_encap(t, p, pol, 41, tc, fl, hl) {
        Ok(()) => Next::Lookup6 { table: Tables::MAIN, forward: false },
        Err(r) => Next::drop(r),
    }
}
