//! End.AM, the masquerading proxy (draft-ietf-spring-sr-service-programming §6.4).
//!
//! Part 1 (§6.4.1, masquerading): an SRH with Segments Left > 0 (else what End does at
//! the last segment), checked as RFC 8754 §4.3.1.1 says; the destination becomes the
//! last segment, Segment List[0], Segments Left unchanged, and the packet, its SRH
//! intact, goes to `nh6` out of `oif` with the forwarding step (hop limit checked and
//! decremented, RFC 8200 §3): a function that ignores routing headers sees a packet for
//! the final destination.
//!
//! Part 2 (§6.4.1, de-masquerading): an IPv6 packet with an SRH and Segments Left > 0
//! received on `iif` gets Segments Left - 1 and the destination Segment List[Segments
//! Left] — an End step (RFC 8986 §4.1 S08-S14: hop limit checked and decremented; with
//! the PSP flavour the SRH popped when Segments Left reaches 0, §4.16.1) — and is
//! forwarded by the main table's lookup of its new destination. Anything else
//! received on `iif` is processed as on any device. Several End.AM proxies may share an
//! `iif`; the packet is counted on the one whose SID the SRH's active entry is (the one
//! it came through), else on the first.
//!
//! The draft's variants of §6.4 (destination NAT, caching) are not implemented.

use super::{bump, last_segment, of, Kind, Proxy, ProxyIn, PROXY_FLAVORS};
use crate::behaviour::{endpoint, segment, Arrival, Behaviour, Next, Param, Takes};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::{BuildError, Route, Sid, SidBuilder, SidState, Tables};
use sr6_wire::{Ipv6Packet, SrhPacket};

pub static END_AM: Behaviour = Behaviour {
    keyword: "End.AM",
    required: &[Param::Nh6, Param::Oif, Param::Iif],
    optional: &[],
    flavors: PROXY_FLAVORS,
    rfc: "draft-ietf-spring-sr-service-programming §6.4",
    summary: "masquerading SR proxy: to a service function with the SRH intact and the last segment as destination",
    in_kernel: false,
    takes: Takes::Segment,
    build,
    input,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let oif = b.oif(a)?;
    let nh = b.next_hop6(a)?;
    Ok(SidState { nh: Some(nh), oif, ..SidState::default() })
}

/// Part 1: masquerading.
fn input(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(px) = of(t, sid) else { return Next::drop(DropReason::NoRoute) };
    let Some(nh) = sid.state.nh else { return Next::drop(DropReason::NoRoute) };
    match a {
        Arrival::Segments(r) => {
            if let Err(n) = segment::check(p, r) {
                return n;
            }
            let d = p.data_mut();
            let Some(last) = d.get(r.offset..).and_then(|b| SrhPacket::new_unchecked(b).segment(0)) else {
                return Next::drop(DropReason::Malformed);
            };
            Ipv6Packet::new_unchecked(d).set_dst_addr(&last);
            bump(&px.state.counters.to_function);
            Next::Xconnect6 { nh, forward: true }
        }
        Arrival::Last { chain, srh } => last_segment(p, sid, px, chain, srh.as_ref()),
        Arrival::NextCsid(_) => Next::drop(DropReason::Malformed),
    }
}

/// Part 2: de-masquerading an IPv6 packet received on the `iif` of the End.AM proxies
/// `pin`; `None` for a packet without an SRH whose Segments Left is above 0.
pub(super) fn inbound(t: &Tables, p: &mut PacketBuf, pin: &ProxyIn) -> Option<Next> {
    let r = match endpoint::arrival(t, p, None) {
        Ok(Arrival::Segments(r)) => r,
        // An SRH the ingress device's HMAC policy refuses (RFC 8754 §2.1.2.1).
        Err(n @ Next::Done(crate::packet::Verdict::Drop(DropReason::HmacInvalid))) => return Some(n),
        _ => return None,
    };
    let px = which(t, p, &r, pin)?;
    // The End step with the attributed proxy's PSP flavour (RFC 8986 §4.16.1): the SRH
    // is popped when the restored destination is the last segment.
    let psp = t.sids.get(px.sid as usize).is_some_and(|s| s.action.flavors.psp);
    if let Err(n) = segment::consume(p, &r, psp) {
        return Some(n);
    }
    bump(&px.state.counters.from_function);
    Some(Next::Lookup6 { table: Tables::MAIN, forward: false })
}

/// The proxy of `pin` whose SID the SRH's active entry is (found by the main table's
/// lookup, as the packet found it on its way to the function), else the first: one
/// lookup, however many End.AM proxies share the `iif`.
fn which<'t>(t: &'t Tables, p: &PacketBuf, r: &sr6_wire::RoutingInfo, pin: &ProxyIn) -> Option<&'t Proxy> {
    let first = || pin.proxies.first().and_then(|i| t.proxies.get(*i as usize));
    let active = p.data().get(r.offset..).and_then(|b| SrhPacket::new_unchecked(b).segment(r.segments_left));
    let Some(Route::Sid(i)) = active.and_then(|a| t.fibs.get(Tables::MAIN as usize)?.lookup6(&a.octets())) else {
        return first();
    };
    let px = t.sids.get(i as usize).and_then(|s| t.proxies.get(s.state.proxy as usize));
    // One of `pin`'s: an End.AM whose iif is the device the packet came in on.
    match px {
        Some(px) if px.kind == Kind::Masquerade && px.iif == p.in_dev => Some(px),
        _ => first(),
    }
}
