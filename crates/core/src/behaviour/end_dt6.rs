//! End.DT6 (RFC 8986 §4.6): decapsulate and look the inner IPv6 packet up in a table.

use super::{decap, Arrival, Behaviour, Inner, Next, Param, Takes};
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::{BuildError, FastKind, FastSid, Sid, SidBuilder, SidState, Tables};

pub static END_DT6: Behaviour = Behaviour {
    keyword: "End.DT6",
    required: &[],
    optional: &[Param::Table, Param::VrfTable],
    flavors: &[],
    rfc: "RFC 8986 §4.6",
    summary: "decapsulate and look the inner IPv6 packet up in a table",
    in_kernel: true,
    takes: Takes::Inner(Inner::Ipv6),
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let table = b.table_of(a);
    Ok(SidState { table, fast: FastSid::new(FastKind::Dt6, table), ..SidState::default() })
}

fn input(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    match decap::last_segment(p, a, |up| up == decap::IPV6) {
        Ok(up) => decap::lookup(up, sid.state.table),
        Err(n) => n,
    }
}
