//! End, End.X and End.T (RFC 8986 §4.1-§4.3) with the flavours PSP, USP and USD
//! (§4.16): consume a segment and forward by the main table (End), to a next hop (End.X)
//! or by another table (End.T); at the last segment, the upper-layer rules of §4.1.1.

use super::{decap, segment, Arrival, Behaviour, Flavor, Next, Param, Takes, PSP_USP_USD};
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::{BuildError, FastKind, FastSid, NextHop, Sid, SidBuilder, SidState, Tables};
use sr6_wire::{ChainInfo, RoutingInfo, IPPROTO_ICMPV6};

pub static END: Behaviour = Behaviour {
    keyword: "End",
    required: &[],
    optional: &[],
    flavors: PSP_USP_USD,
    rfc: "RFC 8986 §4.1",
    summary: "endpoint: next segment, forward by the main table",
    in_kernel: true,
    takes: Takes::Segment,
    build: build_end,
    input: input_end,
};

pub static END_X: Behaviour = Behaviour {
    keyword: "End.X",
    required: &[Param::Nh6],
    optional: &[Param::Oif],
    flavors: PSP_USP_USD,
    rfc: "RFC 8986 §4.2",
    summary: "endpoint with L3 cross-connect to an IPv6 next hop",
    in_kernel: true,
    takes: Takes::Segment,
    build: build_end_x,
    input: input_end_x,
};

pub static END_T: Behaviour = Behaviour {
    keyword: "End.T",
    required: &[Param::Table],
    optional: &[],
    flavors: PSP_USP_USD,
    rfc: "RFC 8986 §4.3",
    summary: "endpoint with lookup in a specific IPv6 table",
    in_kernel: true,
    takes: Takes::Segment,
    build: build_end_t,
    input: input_end_t,
};

fn build_end(_: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    Ok(SidState { table: Tables::MAIN, fast: fast_end(a, Tables::MAIN), ..SidState::default() })
}

fn build_end_x(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let nh = b.next_hop6(a)?;
    let kind = if a.flavors.psp { FastKind::EndXPsp } else { FastKind::EndX };
    Ok(SidState { nh: Some(nh), fast: FastSid::to(kind, nh), ..SidState::default() })
}

fn build_end_t(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let table = b.table_of(a);
    Ok(SidState { table, fast: fast_end(a, table), ..SidState::default() })
}

/// End, and End.T of `table`, on the fast path: End.T of the main table is End.
fn fast_end(a: &SidAction, table: u32) -> FastSid {
    if a.flavors.psp {
        FastSid::new(FastKind::EndPsp, table)
    } else if table == Tables::MAIN {
        FastSid::new(FastKind::End, table)
    } else {
        FastSid::new(FastKind::EndT, table)
    }
}

/// RFC 8986 §4.1: the next segment, then the main table.
fn input_end(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    lookup(p, sid, a, Tables::MAIN)
}

/// RFC 8986 §4.3: the next segment, then the SID's table.
fn input_end_t(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    lookup(p, sid, a, sid.state.table)
}

fn lookup(p: &mut PacketBuf, sid: &Sid, a: &Arrival, table: u32) -> Next {
    match a {
        Arrival::Segments(r) => match segment::consume(p, r, sid.action.flavors.psp) {
            Ok(()) => Next::Lookup6 { table, forward: false },
            Err(n) => n,
        },
        Arrival::Last { chain, srh } => upper_layer(p, sid, chain, srh.as_ref(), Deliver::Lookup(table)),
    }
}

/// RFC 8986 §4.2: the next segment, then the SID's next hop.
fn input_end_x(_: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(nh) = sid.state.nh else { return Next::drop(crate::drop::DropReason::NoRoute) };
    match a {
        Arrival::Segments(r) => match segment::consume(p, r, sid.action.flavors.psp) {
            Ok(()) => Next::Xconnect6 { nh, forward: false },
            Err(n) => n,
        },
        Arrival::Last { chain, srh } => upper_layer(p, sid, chain, srh.as_ref(), Deliver::Xconnect(nh)),
    }
}

/// Where the USD flavour sends the decapsulated packet.
#[derive(Clone, Copy)]
pub(super) enum Deliver {
    /// Looked up in this FIB (End, End.T).
    Lookup(u32),
    /// To this next hop (End.X).
    Xconnect(NextHop),
}

/// RFC 8986 §4.1.1 at the last segment, with the USP (§4.16.2) and USD (§4.16.3)
/// flavours: USP removes the SRH first; USD decapsulates an inner IPv6 or IPv4 packet
/// and delivers it as `deliver` says; an ICMPv6 upper layer is delivered to the host;
/// anything else is answered with a Parameter Problem code 4.
pub(super) fn upper_layer(
    p: &mut PacketBuf,
    sid: &Sid,
    chain: &ChainInfo,
    srh: Option<&RoutingInfo>,
    deliver: Deliver,
) -> Next {
    let flavors = sid.action.flavors;
    let mut chain = *chain;
    if let (Some(r), true) = (srh, flavors.has(Flavor::Usp)) {
        if !segment::remove(p, r) {
            return Next::drop(crate::drop::DropReason::Malformed);
        }
        chain = match sr6_wire::walk_chain(p.data()) {
            Ok(c) => c,
            Err(_) => return Next::drop(crate::drop::DropReason::Malformed),
        };
    }
    let up = chain.upper_proto;
    if flavors.has(Flavor::Usd) && (up == decap::IPV6 || up == decap::IPV4) && chain.fragment.is_none() {
        if let Err(n) = decap::strip(p, &chain) {
            return n;
        }
        return match (deliver, up) {
            (Deliver::Xconnect(nh), decap::IPV6) => decap::xconnect6(p, nh),
            (Deliver::Xconnect(nh), _) => decap::xconnect4(p, nh),
            (Deliver::Lookup(table), up) => decap::lookup(up, table),
        };
    }
    if up == IPPROTO_ICMPV6 {
        return Next::Local6;
    }
    Next::param_problem(super::next::PP_SR_UPPER_LAYER, chain.upper)
}
