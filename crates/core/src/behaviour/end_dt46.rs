//! End.DT46 (RFC 8986 §4.8): decapsulate and look the inner IPv4 or IPv6 packet up in a
//! table.

use super::next::FastNext;
use super::{decap, Arrival, Behaviour, Inner, Next, Param, Takes};
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::{BuildError, FastKind, FastSid, Sid, SidBuilder, SidState, Tables};

pub static END_DT46: Behaviour = Behaviour {
    keyword: "End.DT46",
    required: &[Param::VrfTable],
    optional: &[],
    flavors: &[],
    rfc: "RFC 8986 §4.8",
    summary: "decapsulate and look the inner IPv4 or IPv6 packet up in a table",
    in_kernel: true,
    takes: Takes::Inner(Inner::Ip),
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let table = b.table_of(a);
    Ok(SidState { table, fast: FastSid::new(FastKind::Dt46, table), ..SidState::default() })
}

fn input(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    match decap::last_segment(p, a, |up| up == decap::IPV6 || up == decap::IPV4) {
        Ok(up) => decap::lookup(up, sid.state.table),
        Err(n) => n,
    }
}

/// The fast step of End.DT46 (kind Dt46) with an inner IPv6 packet: End.DT6's
/// ([`decap::fast6`]) with FIB `table`. Out of line, so that its registers do not cost
/// the IPv4 cases spills. (With an inner IPv4 packet it is End.DT4's, [`decap::fast4`].)
#[inline(never)]
pub(crate) fn fast_ipv6(t: &Tables, tail: &mut [u8], srh_len: usize, table: u32) -> Option<FastNext> {
    decap::fast6(t, tail, srh_len, FastSid::new(FastKind::Dt6, table))
}
