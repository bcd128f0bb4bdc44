//! End, End.X and End.T (RFC 8986 §4.1-§4.3) with the flavours PSP, USP and USD
//! (§4.16): consume a segment and forward by the main table (End), to a next hop (End.X)
//! or by another table (End.T); at the last segment, the upper-layer rules of §4.1.1.
//! Their C-SID flavours live in [`next_csid`] and [`replace_csid`].

use super::next::FastNext;
use super::{
    decap, endpoint, next_csid, replace_csid, segment, Arrival, Behaviour, Flavor, Next, Param, Takes, END_FLAVORS,
};
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::fast_route::{resolve, route_into, route_to};
use crate::tables::{BuildError, Device, FastKind, FastSid, Fib, NextHop, Out, Sid, SidBuilder, SidState, Tables};
use sr6_wire::fixed::{FrameFixed, Ipv6Fixed, SrhFixed, ETH_IPV6_LEN};
use sr6_wire::{ChainInfo, RoutingInfo, IPPROTO_ICMPV6};

pub static END: Behaviour = Behaviour {
    keyword: "End",
    required: &[],
    optional: &[],
    flavors: END_FLAVORS,
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
    flavors: END_FLAVORS,
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
    flavors: END_FLAVORS,
    rfc: "RFC 8986 §4.3",
    summary: "endpoint with lookup in a specific IPv6 table",
    in_kernel: true,
    takes: Takes::Segment,
    build: build_end_t,
    input: input_end_t,
};

fn build_end(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    one_csid_flavour(b, a)?;
    Ok(SidState { table: Tables::MAIN, fast: fast_kind(a, Tables::MAIN), ..SidState::default() })
}

fn build_end_x(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    one_csid_flavour(b, a)?;
    let nh = b.next_hop6(a)?;
    let fast = match (a.flavors.next_csid, a.flavors.psp) {
        // REPLACE-C-SID is the general path's.
        _ if a.flavors.replace_csid.is_some() => FastSid::NO,
        (None, false) => FastSid::to(FastKind::EndX, nh),
        (None, true) => FastSid::to(FastKind::EndXPsp, nh),
        // NEXT-C-SID with PSP is the general path's.
        (Some(_), false) => FastSid::to(FastKind::EndXCsid, nh),
        (Some(_), true) => FastSid::NO,
    };
    Ok(SidState { nh: Some(nh), fast, ..SidState::default() })
}

fn build_end_t(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    one_csid_flavour(b, a)?;
    let table = b.table_of(a);
    Ok(SidState { table, fast: fast_kind(a, table), ..SidState::default() })
}

/// NEXT-C-SID and REPLACE-C-SID give the argument two meanings (RFC 9800 §4.1, §4.2):
/// one SID has at most one of them. (The parser refuses the pair too; this covers a
/// specification built otherwise.)
fn one_csid_flavour(b: &SidBuilder, a: &SidAction) -> Result<(), BuildError> {
    if a.flavors.next_csid.is_some() && a.flavors.replace_csid.is_some() {
        return Err(b.error("next-csid and replace-csid cannot both be flavours of one SID"));
    }
    Ok(())
}

/// The fast step of End, and End.T of `table`: End.T of the main table is End.
fn fast_kind(a: &SidAction, table: u32) -> FastSid {
    if a.flavors.replace_csid.is_some() {
        // REPLACE-C-SID is the general path's.
        FastSid::NO
    } else if a.flavors.next_csid.is_some() {
        // NEXT-C-SID with PSP is the general path's.
        if a.flavors.psp {
            FastSid::NO
        } else {
            FastSid::new(FastKind::EndCsid, table)
        }
    } else if a.flavors.psp {
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
    if let Some(c) = sid.action.flavors.replace_csid {
        // RFC 9800 §4.2.1 (End), §4.2.3 (End.T).
        return replace_csid::input(p, sid, a, c, Deliver::Lookup(table));
    }
    match a {
        // RFC 9800 §4.1.1 S02-S08.
        Arrival::NextCsid(c) => match next_csid::advance(p, *c) {
            Ok(()) => Next::Lookup6 { table, forward: false },
            Err(n) => n,
        },
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
    if let Some(c) = sid.action.flavors.replace_csid {
        // RFC 9800 §4.2.2.
        return replace_csid::input(p, sid, a, c, Deliver::Xconnect(nh));
    }
    match a {
        Arrival::NextCsid(c) => match next_csid::advance(p, *c) {
            Ok(()) => Next::Xconnect6 { nh, forward: false },
            Err(n) => n,
        },
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

/// The fast step of End (RFC 8986 §4.1) and End.T (§4.3) without PSP (kinds End and
/// EndT): the next segment looked up in `fib` (the main FIB for End, which the fast
/// path has at hand; End.T's table), the packet rewritten once it is routed. `h` is the
/// Ethernet + IPv6 header, `srh` the SRH's first 8 bytes, `tail` what follows them.
#[inline(always)]
pub(crate) fn fast(t: &Tables, fib: &Fib, h: &mut [u8; ETH_IPV6_LEN], srh: &mut [u8; 8], tail: &[u8]) -> Option<Out> {
    let seg = segment::fast_next(srh, tail)?;
    let (eth, _) = h.split_first_chunk_mut::<12>()?;
    let out = route_into(t, fib, u128::from_be_bytes(seg), eth)?;
    segment::fast_advance(h, srh, &seg);
    Some(out)
}

/// The fast step of End.X (RFC 8986 §4.2) without PSP (kind EndX), to next hop `nh`:
/// as [`fast`].
#[inline(always)]
pub(crate) fn fast_x(
    t: &Tables,
    nh: NextHop,
    h: &mut [u8; ETH_IPV6_LEN],
    srh: &mut [u8; 8],
    tail: &[u8],
) -> Option<Out> {
    let seg = segment::fast_next(srh, tail)?;
    let (out, eth) = resolve(t, nh, u128::from_be_bytes(seg))?;
    h.set_addrs(eth);
    segment::fast_advance(h, srh, &seg);
    Some(out)
}

/// The fast step of End, End.T and End.X with PSP (kinds EndPsp, EndXPsp; RFC 8986
/// §4.1-§4.3 S12-S15, §4.16.1) on a frame received on `dev`
/// ([`endpoint::fast_srh_frame`]), as the general path does it ([`segment::consume`]):
/// hop limit and Segments Left minus one, the destination from the Segment List; when
/// Segments Left reaches 0, the SRH removed (S14.1-S14.4: its Next Header to the IPv6
/// header, the Payload Length shortened, the Ethernet + IPv6 headers moved up over it).
/// All lookups before the frame is touched.
#[inline(never)]
pub(crate) fn fast_psp(t: &Tables, dev: &Device, f: &mut [u8], s: FastSid) -> Option<FastNext> {
    let len = f.len();
    let (h, srh, tail) = endpoint::fast_srh_frame(dev, f)?;
    let sl = srh.segments_left();
    let slm1 = srh.next_index()?;
    let srh_len = srh.len_without_tlvs();
    let nda = u128::from_be_bytes(segment::fast_segment(tail, slm1)?);
    let (out, eth) = if s.is(FastKind::EndPsp) { route_to(t, s.arg, nda)? } else { resolve(t, s.next_hop(), nda)? };
    h.set_hop_limit(h.hop_limit() - 1);
    h.set_dst_bytes(&nda.to_be_bytes());
    h.set_addrs(eth);
    if sl > 1 {
        srh.set_segments_left(sl - 1);
        return Some(FastNext::Tx(out));
    }
    // PSP: the new Payload Length is the frame's length less the headers (no Ethernet
    // padding: `fast_srh_frame` checked).
    h.set_next_header(srh.next_header());
    h.set_payload_len((len - ETH_IPV6_LEN - srh_len) as u16);
    let moved = *h;
    f.get_mut(srh_len..srh_len + ETH_IPV6_LEN)?.copy_from_slice(&moved);
    Some(FastNext::Pull(out, srh_len))
}
