//! End.DX4 (RFC 8986 §4.5): decapsulate and cross-connect the inner IPv4 packet to a
//! next hop.

use super::{decap, Arrival, Behaviour, Inner, Next, Param, Takes};
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::{BuildError, FastKind, FastSid, Sid, SidBuilder, SidState, Tables};

pub static END_DX4: Behaviour = Behaviour {
    keyword: "End.DX4",
    required: &[Param::Nh4],
    optional: &[Param::Oif],
    flavors: &[],
    rfc: "RFC 8986 §4.5",
    summary: "decapsulate and cross-connect the inner IPv4 packet to a next hop",
    in_kernel: true,
    takes: Takes::Inner(Inner::Ipv4),
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let nh = b.next_hop4(a)?;
    Ok(SidState { nh: Some(nh), fast: FastSid::to(FastKind::Dx4, nh), ..SidState::default() })
}

fn input(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(nh) = sid.state.nh else { return Next::drop(crate::drop::DropReason::NoRoute) };
    match decap::last_segment(p, a, |up| up == decap::IPV4) {
        Ok(_) => decap::xconnect4(p, nh),
        Err(n) => n,
    }
}
