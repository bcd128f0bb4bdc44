//! End.DX6 (RFC 8986 §4.4): decapsulate and cross-connect the inner IPv6 packet to a
//! next hop.

use super::{decap, Arrival, Behaviour, Inner, Next, Param, Takes};
use std::net::Ipv6Addr;

use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::{BuildError, FastKind, FastSid, Route, Sid, SidBuilder, SidState, Tables};
use sr6_wire::Ipv6Packet;

pub static END_DX6: Behaviour = Behaviour {
    keyword: "End.DX6",
    required: &[Param::Nh6],
    optional: &[Param::Oif],
    flavors: &[],
    rfc: "RFC 8986 §4.4",
    summary: "decapsulate and cross-connect the inner IPv6 packet to a next hop",
    in_kernel: true,
    takes: Takes::Inner(Inner::Ipv6),
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    // `nh6 ::`: the inner packet's own destination is looked up (below).
    if a.params.nh6 == Some(Ipv6Addr::UNSPECIFIED) {
        if a.params.oif.is_some() {
            return Err(b.error("End.DX6: `nh6 ::` looks the inner destination up; it takes no `oif`"));
        }
        return Ok(SidState { nh: None, table: Tables::MAIN, fast: FastSid::NO, ..SidState::default() });
    }
    let nh = b.next_hop6(a)?;
    Ok(SidState { nh: Some(nh), fast: FastSid::to(FastKind::Dx6, nh), ..SidState::default() })
}

fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let nh = sid.state.nh;
    if nh.is_none() && sid.action.params.nh6 != Some(Ipv6Addr::UNSPECIFIED) {
        return Next::drop(DropReason::NoRoute);
    }
    match decap::last_segment(p, a, |up| up == decap::IPV6) {
        Ok(_) => match nh {
            Some(nh) => decap::xconnect6(p, nh),
            None => any_next_hop(t, p),
        },
        Err(n) => n,
    }
}

/// `nh6 ::`: the inner packet goes where the main table sends its destination, as
/// Linux does (`input_action_end_dx6` looks up the inner destination when nh6 is
/// `::`, net/ipv6/seg6_local.c), but never to the host itself: that lookup is made
/// without local delivery, so a local destination is dropped.
fn any_next_hop(t: &Tables, p: &mut PacketBuf) -> Next {
    let Ok(ip) = Ipv6Packet::new_checked(p.data()) else { return Next::drop(DropReason::Malformed) };
    let dst = ip.dst_addr().octets();
    let n = ip.total_len();
    if matches!(t.fibs[Tables::MAIN as usize].lookup6(&dst), Some(Route::Local)) {
        return Next::drop(DropReason::NoRoute);
    }
    p.truncate(n);
    Next::Lookup6 { table: Tables::MAIN, forward: true }
}
