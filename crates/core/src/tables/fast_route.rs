//! Where the fast path sends a destination: the lookups of [`Tables`] in the shape the
//! fast steps need — the output device and the Ethernet addresses towards it, found
//! *before* the frame is touched, so that a step declines with the frame unchanged when
//! there is no plain route. Addresses are big-endian `u128`s: one load each, kept in
//! registers, instead of 16 bytes taken apart for the lookups. Any route other than a
//! plain one to a known neighbour (a local address, a SID, a policy, an unresolved
//! neighbour) is `None`: the general path's.

use super::{Fib, Hop, NextHop, Route, Tables};
use crate::lpm;
use crate::packet::DevId;
use sr6_wire::fixed::EthAddrs;

/// A device as the fast path hands it on ([`DevId`] widened where it was read): the
/// output device's index is both the verdict and the index of its transmit counter,
/// and widening it once, at the load, saves doing it again after the paths meet.
pub type Out = usize;

/// Resolves a next hop to its device and Ethernet addresses (`dst` for on-link):
/// [`Tables::resolve`] in the fast path's shape (the on-link neighbour probe out of
/// line, where it keeps the loop's registers free).
#[inline(always)]
pub(crate) fn resolve(t: &Tables, nh: NextHop, dst: u128) -> Option<(Out, EthAddrs)> {
    match nh {
        NextHop::Adj(i) => adjacency(t, i),
        NextHop::OnLink(d) => on_link(t, d, dst),
    }
}

/// Adjacency `i`'s device and Ethernet addresses, if its neighbour is known.
#[inline(always)]
pub(crate) fn adjacency(t: &Tables, i: u32) -> Option<(Out, EthAddrs)> {
    let a = t.adjacencies.get(i as usize)?;
    Some((a.dev.into(), EthAddrs::of(a.eth.as_ref()?)))
}

/// The neighbour `dst` on device `d` (a hash-map probe): out of line.
#[cold]
#[inline(never)]
pub(crate) fn on_link(t: &Tables, d: DevId, dst: u128) -> Option<(Out, EthAddrs)> {
    Some((d.into(), EthAddrs::of(&t.neighbour_eth(d, dst)?)))
}

/// Whether hop `h` is a gateway route's: its device and Ethernet header are in the hop
/// itself.
#[inline(always)]
pub(crate) fn is_gateway(h: &Hop) -> bool {
    h.code == Fib::GATEWAY
}

/// The adjacency FIB `table` sends `dst` to, if that is a plain route.
#[inline(always)]
pub(crate) fn route_to(t: &Tables, table: u32, dst: u128) -> Option<(Out, EthAddrs)> {
    route_in(t, t.fibs.get(table as usize)?, dst)
}

/// [`route_to`] in `fib`.
#[inline(always)]
pub(crate) fn route_in(t: &Tables, fib: &Fib, dst: u128) -> Option<(Out, EthAddrs)> {
    // The usual case, a gateway route found in one hash probe, first. Both ways end on
    // the hop, read once after they meet.
    let hop = match fib.lpm6.hash_hit(dst) {
        Some(h) if is_gateway(h) => h,
        _ => match trie_gateway(fib, dst) {
            Ok(h) => h,
            Err(e) => return route_to_any(t, fib, dst, e),
        },
    };
    Some((hop.dev.into(), EthAddrs::of(&hop.eth)))
}

/// The hop of a gateway route to `dst` in `fib` by the whole lookup, for when the hash
/// probe did not settle it; otherwise the entry the lookup ended on, for
/// [`route_to_any`].
#[inline(always)]
fn trie_gateway(fib: &Fib, dst: u128) -> Result<&Hop, u32> {
    let (e, hop) = fib.lpm6.lookup_aux(dst);
    if lpm::entry_marked(e) || !is_gateway(hop) {
        return Err(e);
    }
    Ok(hop)
}

/// [`route_to`] writing the Ethernet addresses to `eth` itself. Each way to the
/// route writes them and returns: had they met on the hop found, the compiler would
/// read it through the address of whichever it was, worked out apart on each way.
#[inline(always)]
pub(crate) fn route_into(t: &Tables, fib: &Fib, dst: u128, eth: &mut [u8; 12]) -> Option<Out> {
    if let Some(hop) = fib.lpm6.hash_hit(dst) {
        if is_gateway(hop) {
            *eth = hop.eth;
            return Some(hop.dev.into());
        }
    }
    let (out, addrs) = match trie_gateway(fib, dst) {
        Ok(hop) => (hop.dev.into(), EthAddrs::of(&hop.eth)),
        Err(e) => route_to_any(t, fib, dst, e)?,
    };
    addrs.write(eth);
    Some(out)
}

/// [`route_to`] for every other case.
#[inline(never)]
pub(crate) fn route_to_any(t: &Tables, fib: &Fib, dst: u128, e: u32) -> Option<(Out, EthAddrs)> {
    match fib.route_of_entry(dst, e)? {
        Route::Forward(nh) => resolve(t, nh, dst),
        _ => None,
    }
}

/// The adjacency FIB `table` sends IPv4 destination `dst` to, if that is a plain route
/// (not a /32 of the exact table).
#[inline(always)]
pub(crate) fn route4_to(t: &Tables, table: u32, dst: u32) -> Option<(Out, EthAddrs)> {
    route4_or_sid(t, table, dst).ok()
}

/// [`route4_to`], telling a local SID's route (H.M.GTP4.D's) from the rest of what it
/// declines: `Err(Some(i))` for SID `i`, `Err(None)` for anything else.
#[inline(always)]
pub(crate) fn route4_or_sid(t: &Tables, table: u32, dst: u32) -> Result<(Out, EthAddrs), Option<u32>> {
    let fib = t.fibs.get(table as usize).ok_or(None)?;
    let (e, hop) = fib.lpm4.lookup_aux(u128::from(dst) << 96);
    if lpm::entry_marked(e) {
        if let Some(r) = fib.exact4.get(u128::from(dst)) {
            return Err(sid_of(r));
        }
    }
    if is_gateway(hop) {
        return Ok((hop.dev.into(), EthAddrs::of(&hop.eth)));
    }
    match *fib.lpm4.value(e).ok_or(None)? {
        Route::Forward(nh) => resolve(t, nh, mapped(dst)).ok_or(None),
        r => Err(sid_of(r)),
    }
}

/// The SID a route is to, if it is to one.
#[inline(always)]
fn sid_of(r: Route) -> Option<u32> {
    match r {
        Route::Sid(i) => Some(i),
        _ => None,
    }
}

/// The IPv4-mapped IPv6 form of an IPv4 address: the neighbour key of an on-link IPv4
/// next hop ([`super::neigh_key`]).
#[inline(always)]
pub(crate) fn mapped(a: u32) -> u128 {
    0xffff << 32 | u128::from(a)
}
