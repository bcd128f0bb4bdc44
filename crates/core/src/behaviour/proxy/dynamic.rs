//! End.AD, the dynamic proxy (draft-ietf-spring-sr-service-programming §6.2), and
//! SREXT's End.EAD4 / End.EAD6 (thesis §3.6.1, Table 3.1), which let the function be
//! the chain's last segment.
//!
//! Part 1 (§6.2.1): an End step (RFC 8754 §4.3.1: Segments Left - 1, the destination
//! the next segment; the hop limit checked but left as received, as the draft's
//! pseudocode has it); the updated outer IPv6 header and all its extension headers stored in the cache of `iif` if it is empty or holds other
//! bytes; then those headers removed and the inner packet sent to the function (as
//! End.DX6/End.DX4). End.EAD* also takes a packet at Segments Left 0 (or without an
//! SRH): no End step, the inner packet to the function, and the cache set to "end of
//! chain". With the PSP flavour, the End step that leaves Segments Left at 0 pops the
//! SRH (RFC 8986 §4.16.1) before the headers are cached.
//!
//! Part 2 (§6.2.2): a packet of the inner type received on `iif` gets the cached
//! headers back (Payload Length set; every other byte as cached, the last Next Header
//! included) and is forwarded by the main table's lookup of the cached destination,
//! with the IPv6 forwarding step (RFC 8200 §3: hop limit checked and decremented). An
//! empty cache drops it (`proxy_cache_empty`); an end-of-chain cache lets it go on as
//! plain IP.

use super::cache::{Entry, Stored, MAX_LEN};
use super::{
    bump, end_step, inner_chain, last_segment, of, takes_family, to_function, wrong_type, Proxy, PROXY_FLAVORS,
};
use crate::behaviour::{Arrival, Behaviour, Next, Param, Takes};
use crate::drop::DropReason;
use crate::packet::PacketBuf;
use crate::spec::SidAction;
use crate::tables::{BuildError, Sid, SidBuilder, SidState, Tables};
use sr6_wire::Ipv6Packet;

pub static END_AD: Behaviour = Behaviour {
    keyword: "End.AD",
    required: &[Param::Oif, Param::Iif],
    optional: &[Param::Nh6, Param::Nh4],
    flavors: PROXY_FLAVORS,
    rfc: "draft-ietf-spring-sr-service-programming §6.2",
    summary: "dynamic SR proxy: decapsulate to a service function, caching the headers its packets get back",
    in_kernel: false,
    takes: Takes::Segment,
    build,
    input: input_ad,
};

pub static END_EAD6: Behaviour = Behaviour {
    keyword: "End.EAD6",
    required: &[Param::Nh6, Param::Oif, Param::Iif],
    optional: &[],
    flavors: PROXY_FLAVORS,
    rfc: "SREXT (thesis §3.6.1); draft-ietf-spring-sr-service-programming §6.2",
    summary: "End.AD for an IPv6 function that may also be the chain's last segment",
    in_kernel: false,
    takes: Takes::Segment,
    build,
    input: input_ead,
};

pub static END_EAD4: Behaviour = Behaviour {
    keyword: "End.EAD4",
    required: &[Param::Nh4, Param::Oif, Param::Iif],
    optional: &[],
    flavors: PROXY_FLAVORS,
    rfc: "SREXT (thesis §3.6.1); draft-ietf-spring-sr-service-programming §6.2",
    summary: "End.AD for an IPv4 function that may also be the chain's last segment",
    in_kernel: false,
    takes: Takes::Segment,
    build,
    input: input_ead,
};

fn build(b: &mut SidBuilder, a: &SidAction) -> Result<SidState, BuildError> {
    let oif = b.oif(a)?;
    let kw = a.behaviour.keyword;
    let nh = match (a.params.nh6, a.params.nh4) {
        (Some(_), None) => b.next_hop6(a)?,
        (None, Some(_)) => b.next_hop4(a)?,
        _ => return Err(b.error(format!("{kw} requires `nh6 ADDR` or `nh4 ADDR` (one of them)"))),
    };
    Ok(SidState { nh: Some(nh), oif, ..SidState::default() })
}

/// End.AD's part 1 (§6.2.1).
fn input_ad(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(px) = of(t, sid) else { return Next::drop(DropReason::NoRoute) };
    match a {
        Arrival::Segments(r) => segment(t, p, sid, px, r),
        // S01's "ELSE Drop" at Segments Left 0: what End does at the last segment.
        Arrival::Last { chain, srh } => last_segment(p, sid, px, chain, srh.as_ref()),
        Arrival::NextCsid(_) => Next::drop(DropReason::Malformed),
    }
}

/// End.EAD4/End.EAD6's part 1: End.AD's, and at the last segment the inner packet to
/// the function with the cache "end of chain".
fn input_ead(t: &Tables, p: &mut PacketBuf, sid: &Sid, a: &Arrival) -> Next {
    let Some(px) = of(t, sid) else { return Next::drop(DropReason::NoRoute) };
    match a {
        Arrival::Segments(r) => segment(t, p, sid, px, r),
        Arrival::Last { .. } => {
            let chain = match inner_chain(p, px) {
                Ok(c) => c,
                Err(n) => return n,
            };
            if px.state.cache.store_end_of_chain() == Stored::Updated {
                bump(&px.state.counters.updates);
            }
            to_function(t, p, sid, px, &chain)
        }
        Arrival::NextCsid(_) => Next::drop(DropReason::Malformed),
    }
}

/// The End step, the headers cached, the inner packet to the function.
fn segment(t: &Tables, p: &mut PacketBuf, sid: &Sid, px: &Proxy, r: &sr6_wire::RoutingInfo) -> Next {
    if let Err(n) = end_step(p, r) {
        return n;
    }
    // PSP (RFC 8986 §4.16.1): at the penultimate segment the SRH is popped, so the
    // headers cached, and given back to returning packets, are without it.
    if r.segments_left == 1 && sid.action.flavors.psp && !crate::behaviour::segment::remove(p, r) {
        return px.state.counters.drop(DropReason::Malformed);
    }
    let chain = match inner_chain(p, px) {
        Ok(c) => c,
        Err(n) => return n,
    };
    let Some(headers) = p.data().get(..chain.upper) else { return Next::drop(DropReason::Malformed) };
    match px.state.cache.store(headers) {
        Stored::Updated => bump(&px.state.counters.updates),
        Stored::TooLong => return px.state.counters.drop(DropReason::ProxyHeadersTooLong),
        Stored::Same | Stored::Skipped => {}
    }
    to_function(t, p, sid, px, &chain)
}

/// Part 2 (§6.2.2) for an IPv6 (`v6`) or IPv4 packet received on the proxy's `iif`:
/// `None` (end of chain) lets it be forwarded as plain IP.
pub(super) fn inbound(p: &mut PacketBuf, px: &Proxy, v6: bool) -> Option<Next> {
    if !takes_family(px, v6) {
        return Some(wrong_type(px));
    }
    let c = &px.state.counters;
    let mut h = [0u8; MAX_LEN];
    let n = match px.state.cache.read(&mut h) {
        None => return Some(c.drop(DropReason::ProxyCacheBusy)),
        Some(Entry::Empty) => {
            bump(&c.misses);
            return Some(c.drop(DropReason::ProxyCacheEmpty));
        }
        Some(Entry::EndOfChain) => {
            bump(&c.hits);
            bump(&c.from_function);
            return None;
        }
        Some(Entry::Headers(n)) => n,
    };
    bump(&c.hits);
    let Some(headers) = h.get(..n).filter(|x| x.len() >= Ipv6Packet::<&[u8]>::HEADER_LEN) else {
        return Some(c.drop(DropReason::Malformed));
    };
    let plen = p.len() + n - Ipv6Packet::<&[u8]>::HEADER_LEN;
    if plen > usize::from(u16::MAX) {
        return Some(c.drop(DropReason::TooBig));
    }
    // Where the carried packet starts, for an ICMP error about it (`pipeline::mtu`).
    let inner_at = p.headroom() as u16;
    if !p.push_front(n) {
        return Some(c.drop(DropReason::NoHeadroom));
    }
    p.inner_at = inner_at;
    let Some(d) = p.data_mut().get_mut(..n) else { return Some(Next::drop(DropReason::Malformed)) };
    d.copy_from_slice(headers);
    Ipv6Packet::new_unchecked(d).set_payload_len(plen as u16);
    bump(&c.from_function);
    Some(Next::Lookup6 { table: Tables::MAIN, forward: true })
}
