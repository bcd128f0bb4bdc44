//! End.DX6 (RFC 8986 §4.4): decapsulate and cross-connect the inner IPv6 packet to a
//! next hop.

use super::{decap, Arrival, Behaviour, Inner, Next, Param, Takes};
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::{BuildError, FastKind, FastSid, Sid, SidBuilder, SidState, Tables};

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
    let nh = b.next_hop6(a)?;
    Ok(SidState { nh: Some(nh), fast: FastSid::to(FastKind::Dx6, nh), ..SidState::default() })
}

fn input(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(nh) = sid.state.nh else { return Next::drop(crate::drop::DropReason::NoRoute) };
    match decap::last_segment(p, a, |up| up == decap::IPV6) {
        Ok(_) => decap::xconnect6(p, nh),
        Err(n) => n,
    }
}
