//! SR proxies (draft-ietf-spring-sr-service-programming §6): a SID standing in front of
//! an SR-unaware service function (a firewall, an IDS, a NAT). The proxy hands the
//! function a packet it understands and restores the SR information on what the
//! function sends back, so that the chain goes on.
//!
//! - [`static_proxy`]: End.AS (§6.1) — decapsulate; re-encapsulate returning packets
//!   with a configured source and segment list.
//! - [`dynamic`]: End.AD (§6.2) — as End.AS, but the headers are learned from the
//!   traffic into a [`cache`] of the return interface; and SREXT's End.EAD4/End.EAD6
//!   (thesis §3.6.1), which also take the chain's last segment.
//! - [`masquerade`]: End.AM (§6.4) — the function gets the packet with the SRH intact
//!   and the destination set to the last segment; returning packets get their
//!   destination back from the SRH.
//!
//! Each has two parts. Part 1 is the SID's behaviour: its row's `input`, for packets
//! whose active segment is the SID. Part 2 is for packets the function sends back on
//! the proxy's `iif`: an inbound policy of that device ([`ProxyIn`], in
//! [`Tables::proxy_in`]), which the general path consults for IP packets received on it
//! before their route lookup ([`inbound6`], [`inbound4`], called from
//! `pipeline::forward`). The fast path declines every frame of such a device (its
//! forwarding bit is clear in the fast path's device table), so other devices pay
//! nothing.
//!
//! A proxy's shared state ([`ProxyState`]: the cache and the counters `sr6 ctl show
//! proxies` prints) is behind an `Arc`, shared by every worker and carried over to new
//! tables that keep the same proxy ([`Tables::adopt_proxies`]).

pub mod cache;
pub mod dynamic;
pub mod masquerade;
pub mod static_proxy;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{Flavor, Inner, Next};
use crate::drop::DropReason;
use crate::packet::{DevId, PacketBuf, Verdict};
use crate::pipeline::Worker;
use crate::tables::{BuildError, Sid, Tables};
use cache::Cache;
use sr6_wire::{walk_chain, ChainInfo, EthernetFrame, IPPROTO_ETHERNET, IPPROTO_IPV4, IPPROTO_IPV6};

/// The flavours End.AD, End.EAD4/End.EAD6 and End.AM take: PSP (RFC 8986 §4.16.1),
/// which acts on the End step those proxies make on an SRH that goes on along the chain
/// (End.AD's cached headers, End.AM's de-masquerading): when that step leaves Segments
/// Left at 0, the SRH is popped. USP and USD act at the last segment, where the draft
/// drops a proxy's packet (§6.1.1, §6.2.1, §6.4.1 "ELSE Drop"; End.EAD* is the variant
/// for the last segment); End.AS makes no End step on a kept SRH (it decapsulates, and
/// its returning packets get a configured new one). They take no flavour.
pub(super) const PROXY_FLAVORS: &[Flavor] = &[Flavor::Psp];

/// Which proxy a SID is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// End.AS.
    Static,
    /// End.AD.
    Dynamic,
    /// End.EAD4 / End.EAD6: End.AD that also takes the last segment.
    Extended,
    /// End.AM.
    Masquerade,
}

impl Kind {
    /// The kind of a behaviour row, if it is a proxy's.
    pub fn of(b: &super::Behaviour) -> Option<Kind> {
        if *b == static_proxy::END_AS {
            Some(Kind::Static)
        } else if *b == dynamic::END_AD {
            Some(Kind::Dynamic)
        } else if *b == dynamic::END_EAD4 || *b == dynamic::END_EAD6 {
            Some(Kind::Extended)
        } else if *b == masquerade::END_AM {
            Some(Kind::Masquerade)
        } else {
            None
        }
    }

    /// Whether the proxy learns headers into a cache.
    pub fn caches(self) -> bool {
        matches!(self, Kind::Dynamic | Kind::Extended)
    }
}

/// One proxy of the tables.
#[derive(Debug, Clone)]
pub struct Proxy {
    /// Its SID (index into [`Tables::sids`]).
    pub sid: u32,
    pub kind: Kind,
    /// What the function receives: IPv6 (`nh6`), IPv4 (`nh4`) or Ethernet (End.AS
    /// without a next hop).
    pub inner: Inner,
    /// The device the function's packets come back on.
    pub iif: DevId,
    /// Cache and counters, shared by all workers.
    pub state: Arc<ProxyState>,
}

impl Proxy {
    /// The Next Header value of the inner packet (RFC 8200 §4: 41, 4, or 143 for
    /// Ethernet, RFC 8986 §10.1).
    pub fn inner_proto(&self) -> u8 {
        match self.inner {
            Inner::Ipv4 => IPPROTO_IPV4,
            Inner::Ethernet => IPPROTO_ETHERNET,
            Inner::Ipv6 | Inner::Ip => IPPROTO_IPV6,
        }
    }
}

/// A proxy's state, shared by every worker.
#[derive(Debug, Default)]
pub struct ProxyState {
    /// End.AD / End.EAD*: the cache of the proxy's `iif`.
    pub cache: Cache,
    pub counters: ProxyCounters,
}

/// A proxy's counters (relaxed atomics: totals for `show proxies`, no ordering).
#[derive(Debug)]
pub struct ProxyCounters {
    /// Part 1: packets handed to the function.
    pub to_function: AtomicU64,
    /// Part 2: packets from the function sent on along the chain (or, End.EAD* at the
    /// end of the chain, as plain IP).
    pub from_function: AtomicU64,
    /// Part 2 of End.AD/End.EAD*: the cache held headers, or the end of the chain.
    pub hits: AtomicU64,
    /// Part 2 of End.AD/End.EAD*: the cache was empty.
    pub misses: AtomicU64,
    /// Cache writes (an entry that already held the same bytes is not written).
    pub updates: AtomicU64,
    /// Packets the proxy dropped, by reason.
    pub drops: [AtomicU64; DropReason::COUNT],
}

impl Default for ProxyCounters {
    fn default() -> Self {
        let z = || AtomicU64::new(0);
        ProxyCounters {
            to_function: z(),
            from_function: z(),
            hits: z(),
            misses: z(),
            updates: z(),
            drops: std::array::from_fn(|_| z()),
        }
    }
}

/// One relaxed increment.
#[inline]
fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl ProxyCounters {
    /// Counts a drop for `r` and returns it.
    fn drop(&self, r: DropReason) -> Next {
        if let Some(c) = self.drops.get(r as usize) {
            bump(c);
        }
        Next::drop(r)
    }

    /// The drops so far, by reason (those above zero).
    pub fn drops(&self) -> Vec<(DropReason, u64)> {
        DropReason::ALL
            .iter()
            .zip(&self.drops)
            .map(|(r, c)| (*r, c.load(Ordering::Relaxed)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Reads one counter.
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }

    /// Sets every counter to zero (`sr6 ctl clear-counters`); the cache stays.
    pub fn clear(&self) {
        let ProxyCounters { to_function, from_function, hits, misses, updates, drops } = self;
        for c in [to_function, from_function, hits, misses, updates].into_iter().chain(drops.iter()) {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// The proxies whose `iif` a device is: one End.AS, End.AD or End.EAD*, or any number
/// of End.AM (indices into [`Tables::proxies`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyIn {
    pub proxies: Vec<u32>,
}

/// The proxy of SID `sid` (part 1).
#[inline]
fn of<'t>(t: &'t Tables, sid: &Sid) -> Option<&'t Proxy> {
    t.proxies.get(sid.state.proxy as usize)
}

/// The End step of End.AS and End.AD (§6.1.1, §6.2.1 S01-S03; RFC 8754 §4.3.1.1):
/// the checks End makes (a hop limit over 1, else Time Exceeded; Segments Left within
/// the list), then Segments Left - 1 and the destination Segment List[Segments Left].
/// The hop limit is left as received: the outer header is not forwarded here (the
/// draft's pseudocode does not decrement it); an End.AD whose headers go back on a
/// returning packet is forwarded then, which decrements it once.
fn end_step(p: &mut PacketBuf, r: &sr6_wire::RoutingInfo) -> Result<(), Next> {
    crate::behaviour::segment::check(p, r)?;
    let hl = sr6_wire::Ipv6Packet::new_unchecked(p.data()).hop_limit();
    crate::behaviour::segment::advance(p, r);
    sr6_wire::Ipv6Packet::new_unchecked(p.data_mut()).set_hop_limit(hl);
    Ok(())
}

/// The draft's "ELSE Drop" (§6.1.1, §6.2.1, §6.4.1) for a packet at Segments Left 0 or
/// without an SRH: dropped without the ICMP error End would answer with, counted under
/// the same reason (`param_problem`); an ICMPv6 upper layer still reaches the host, as
/// at End (RFC 8986 §4.1.1).
fn last_segment(
    p: &mut PacketBuf,
    sid: &Sid,
    px: &Proxy,
    chain: &ChainInfo,
    srh: Option<&sr6_wire::RoutingInfo>,
) -> Next {
    use super::end::{upper_layer, Deliver};
    match upper_layer(p, sid, chain, srh, Deliver::Lookup(Tables::MAIN)) {
        Next::Icmp6(super::Icmp6Error::ParamProblem { .. }) => px.state.counters.drop(DropReason::ParamProblem),
        Next::Icmp6(super::Icmp6Error::TimeExceeded) => px.state.counters.drop(DropReason::HopLimit),
        n => n,
    }
}

/// The header chain of the IPv6 packet in `p` (after the End step): its upper layer
/// must be the proxy's inner type (4, 41 or 143), and not a fragment.
fn inner_chain(p: &PacketBuf, px: &Proxy) -> Result<ChainInfo, Next> {
    let chain = walk_chain(p.data()).map_err(|_| px.state.counters.drop(DropReason::Malformed))?;
    if chain.fragment.is_some() {
        return Err(px.state.counters.drop(DropReason::Fragment));
    }
    if chain.upper_proto != px.inner_proto() {
        return Err(px.state.counters.drop(DropReason::WrongNextHeader));
    }
    Ok(chain)
}

/// Removes the outer IPv6 header and its extension headers (`chain`) and sends the
/// inner packet to the function: to the SID's next hop as End.DX6 / End.DX4 do
/// (RFC 8986 §4.4, §4.5: the inner hop limit / TTL decremented), or an Ethernet frame
/// unchanged out of `oif` as End.DX2 does (§4.9).
fn to_function(t: &Tables, p: &mut PacketBuf, sid: &Sid, px: &Proxy, chain: &ChainInfo) -> Next {
    const ETH: usize = EthernetFrame::<&[u8]>::HEADER_LEN;
    if let Err(n) = super::decap::strip(p, chain) {
        return n;
    }
    let next = match (px.inner, sid.state.nh) {
        (Inner::Ethernet, _) if p.len() > ETH + t.mtu(sid.state.oif) => Next::drop(DropReason::MtuExceeded),
        (Inner::Ethernet, _) if p.len() >= ETH => Next::Done(Verdict::Tx(sid.state.oif)),
        (Inner::Ethernet, _) => Next::drop(DropReason::Malformed),
        (Inner::Ipv4, Some(nh)) => super::decap::xconnect4(p, nh),
        (_, Some(nh)) => super::decap::xconnect6(p, nh),
        (_, None) => Next::drop(DropReason::NoRoute),
    };
    if !matches!(next, Next::Done(Verdict::Drop(_))) {
        bump(&px.state.counters.to_function);
    }
    next
}

/// Part 2 for an IPv6 packet received on a proxy's `iif` (before its route lookup):
/// `None` lets it be processed as any other.
pub(crate) fn inbound6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, pin: &ProxyIn) -> Option<Next> {
    let first = t.proxies.get(*pin.proxies.first()? as usize)?;
    match first.kind {
        Kind::Static => Some(static_proxy::inbound(t, w, p, first, true)),
        Kind::Dynamic | Kind::Extended => dynamic::inbound(p, first, true),
        Kind::Masquerade => masquerade::inbound(t, p, pin),
    }
}

/// Part 2 for an IPv4 packet received on a proxy's `iif`.
pub(crate) fn inbound4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, pin: &ProxyIn) -> Option<Next> {
    let first = t.proxies.get(*pin.proxies.first()? as usize)?;
    match first.kind {
        Kind::Static => Some(static_proxy::inbound(t, w, p, first, false)),
        Kind::Dynamic | Kind::Extended => dynamic::inbound(p, first, false),
        // End.AM's functions return IPv6 with an SRH; anything else is the router's.
        Kind::Masquerade => None,
    }
}

/// Part 2 found the packet is not the proxy's inner type: dropped, counted.
fn wrong_type(px: &Proxy) -> Next {
    px.state.counters.drop(DropReason::WrongNextHeader)
}

/// Whether the proxy's function sends packets of this family back (Ethernet: both).
fn takes_family(px: &Proxy, v6: bool) -> bool {
    match px.inner {
        Inner::Ipv6 => v6,
        Inner::Ipv4 => !v6,
        Inner::Ethernet | Inner::Ip => true,
    }
}

/// The proxies of the tables' SIDs, and each device's inbound policy; checks the
/// `iif` rules (the thesis's "univocally mappable" interfaces, §3.5): a device is the
/// `iif` of one End.AS/End.AD/End.EAD* proxy, or of End.AM proxies only. Made again
/// after SIDs change in place (`tables/sid_update.rs`): a proxy's shared state then
/// starts anew, and a running router's publication gives it back the state of the
/// proxy the old tables had ([`Tables::adopt_proxies`]).
pub(crate) fn build(t: &mut Tables) -> Result<(), BuildError> {
    let (proxies, proxy_in) = plan(t, t.sids.iter().enumerate().map(|(i, s)| (i as u32, s)))?;
    for (i, px) in proxies.iter().enumerate() {
        if let Some(s) = t.sids.get_mut(px.sid as usize) {
            s.state.proxy = i as u32;
        }
        t.fast_devs.decline(px.iif);
    }
    t.proxy_in = if proxies.is_empty() { Vec::new() } else { proxy_in };
    t.proxies = proxies;
    Ok(())
}

/// The proxies of `sids` (each with its index), on the devices of `t`, and each
/// device's inbound policy, or the error that breaks the `iif` rules: [`build`]'s
/// work, and the check that a batch of SID changes can be made in place.
pub(crate) fn plan<'s>(
    t: &Tables,
    sids: impl Iterator<Item = (u32, &'s Sid)>,
) -> Result<(Vec<Proxy>, Vec<Option<ProxyIn>>), BuildError> {
    let mut proxies: Vec<Proxy> = Vec::new();
    // The SID of each proxy, for the error that names another.
    let mut of_proxy: Vec<&Sid> = Vec::new();
    let mut proxy_in: Vec<Option<ProxyIn>> = vec![None; t.devices.len()];
    for (i, s) in sids {
        let Some(kind) = Kind::of(s.behaviour) else { continue };
        let (line, kw) = (s.line, s.behaviour.keyword);
        let err = |message: String| BuildError { line, message };
        let name = s.action.params.iif.as_deref().ok_or_else(|| err(format!("{kw} requires `iif DEV`")))?;
        let iif = t.device_id(name).ok_or_else(|| err(format!("unknown device `{name}` (the iif of {kw})")))?;
        let inner = match (s.action.params.nh6, s.action.params.nh4) {
            (Some(_), None) => Inner::Ipv6,
            (None, Some(_)) => Inner::Ipv4,
            (None, None) => Inner::Ethernet,
            (Some(_), Some(_)) => return Err(err(format!("{kw} takes `nh6 ADDR` or `nh4 ADDR`, not both"))),
        };
        let index = proxies.len() as u32;
        let slot = proxy_in.get_mut(usize::from(iif)).ok_or_else(|| err(format!("unknown device `{name}`")))?;
        if let Some(pin) = slot {
            let other =
                pin.proxies.first().and_then(|j| Some((proxies.get(*j as usize)?, *of_proxy.get(*j as usize)?)));
            if let Some((_, os)) = other.filter(|(o, _)| kind != Kind::Masquerade || o.kind != Kind::Masquerade) {
                return Err(err(format!(
                    "iif {name} is already the iif of {} {} (line {}): a device returns \
                     packets to one End.AS, End.AD or End.EAD proxy, or to End.AM proxies only (the \
                     thesis's univocal mapping, §3.5)",
                    os.behaviour.keyword,
                    prefix_text(&os.prefix),
                    os.line
                )));
            }
            pin.proxies.push(index);
        } else {
            *slot = Some(ProxyIn { proxies: vec![index] });
        }
        proxies.push(Proxy { sid: i, kind, inner, iif, state: Arc::default() });
        of_proxy.push(s);
    }
    Ok((proxies, proxy_in))
}

/// A SID's prefix as written (`fc00::1/128`).
pub fn prefix_text(p: &crate::spec::Prefix) -> String {
    match p {
        crate::spec::Prefix::V6(a, l) => format!("{a}/{l}"),
        crate::spec::Prefix::V4(a, l) => format!("{a}/{l}"),
    }
}
