//! IPv6 and IPv4 input, FIB dispatch and plain forwarding (RFC 8200 §3, RFC 1812 §5.3),
//! and local delivery of IPv6 packets carrying an SRH (RFC 8754 §4.3.2). Received
//! packets are validated first ([`validate`]), then their Hop-by-Hop Options header
//! examined ([`hbh`]).

use super::hbh::{self, Hbh};
use super::{fragment, icmp, lwt_bpf, mtu, multipath, output, validate, Next, Worker};
use crate::behaviour::mobile::gtp_encap;
use crate::behaviour::{endpoint, headend, hmac_check, proxy};
use crate::drop::DropReason;
use crate::firewall::Hook;
use crate::packet::Verdict;
use crate::packet::{DevId, PacketBuf};
use crate::tables::rules::{self, Rules};
use crate::tables::{Fib, NextHop, Route, Tables};
use sr6_wire::ext::ROUTING_TYPE_OFFSET;
use sr6_wire::icmpv6::PP_ERRONEOUS_HEADER;
use sr6_wire::ipv6::PAYLOAD_LEN_OFFSET;
use sr6_wire::srh::{ROUTING_TYPE_SRH, SEGMENTS_LEFT_OFFSET};
use sr6_wire::{walk_chain, Icmpv6Repr, Ipv4Packet, Ipv6Packet, ETHERTYPE_IPV4, ETHERTYPE_IPV6, IPPROTO_HOPOPTS};

/// Validates a received IPv6 packet (the buffer starts at the IPv6 header), trims
/// Ethernet padding, examines its Hop-by-Hop Options header, and sends it to the main
/// FIB.
pub fn ipv6_input(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    let (total, src, dst, nh, plen) = match Ipv6Packet::new_checked(p.data()) {
        Ok(ip) => (ip.total_len(), ip.src_addr(), ip.dst_addr(), ip.next_header(), ip.payload_len()),
        Err(_) => return Next::drop(DropReason::Malformed),
    };
    // Payload Length 0 before a Hop-by-Hop header announces a jumbogram (RFC 2675 §3): its
    // options are examined over the whole frame, as the kernel does.
    let jumbogram = plen == 0 && nh == IPPROTO_HOPOPTS;
    if !jumbogram {
        p.truncate(total);
    }
    if let Some(reason) = validate::input6(src, dst) {
        return Next::drop(reason);
    }
    // RFC 8200 §4.3: examined by every node on the path, before routing (Linux's ipv6_rcv).
    if nh == IPPROTO_HOPOPTS {
        match hbh::input(p.data()) {
            // RFC 2675 §3: Payload Length 0 and no Jumbo Payload option (the kernel
            // forwards the frame as it is).
            Hbh::Accept if jumbogram => {
                let pp = Icmpv6Repr::param_problem(PP_ERRONEOUS_HEADER, PAYLOAD_LEN_OFFSET as u32);
                return icmp::error6(t, w, p, DropReason::HbhJumbo, pp);
            }
            Hbh::Accept => {}
            Hbh::Drop(reason) => return Next::drop(reason),
            Hbh::ParamProblem { code, pointer, reason } => {
                return icmp::error6(t, w, p, reason, Icmpv6Repr::param_problem(code, pointer))
            }
        }
    }
    if validate::scoped6(src) {
        // ip6_forward's check, after its hop-limit check: forwarded toward another link.
        let hl = Ipv6Packet::new_unchecked(p.data()).hop_limit();
        let forwards = t.devices.get(p.in_dev as usize).is_some_and(|d| d.forwarding6) && hl > 1;
        let nh = match t.fibs.first().and_then(|f| f.lookup6(&dst.octets())) {
            Some(Route::Forward(nh)) => Some(nh),
            Some(Route::Multipath(g)) => select(t, g, multipath::hash6(p.data(), t.multipath_hash6)),
            _ => None,
        };
        if let Some(nh) = nh {
            if let Some(reason) = nh_dev(t, Route::Forward(nh)).and_then(|o| validate::forward6(src, p.in_dev, o)) {
                if forwards {
                    return Next::drop(reason);
                }
            }
        }
    }
    // Multicast and link-local destinations are the host's (neighbour discovery, MLD).
    if dst.is_multicast() || dst.is_unicast_link_local() {
        return Next::Done(output::local(p, &w.rx_macs, ETHERTYPE_IPV6));
    }
    // The firewall's INPUT chain (packets for the router's own addresses and SIDs).
    if let Some(fw) = &t.firewall {
        if let Some(next) = fw.input6(t, w, p) {
            return next;
        }
    }
    // The IDS at INPUT, after the firewall's chain (docs/ids.md).
    if let Some(ids) = &t.ids {
        if let Some(next) = ids.input6(t, w, p) {
            return next;
        }
    }
    // From a service function behind an SR proxy (part 2 of the proxy), unless it is
    // for the router itself.
    if let Some(Some(pin)) = t.proxy_in.get(usize::from(p.in_dev)) {
        if !t.is_local6(&dst.octets()) {
            if let Some(next) = proxy::inbound6(t, w, p, pin) {
                return next;
            }
        }
    }
    route6(t, w, p, Tables::MAIN, true)
}

/// Validates a received IPv4 packet (header checksum included, RFC 1812 §5.2.2) and
/// sends it to the main FIB.
pub fn ipv4_input(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    let (total, src, dst) = match Ipv4Packet::new_checked(p.data()) {
        Ok(ip) if ip.verify_checksum() => (ip.total_len() as usize, u32::from(ip.src_addr()), u32::from(ip.dst_addr())),
        _ => return Next::drop(DropReason::Malformed),
    };
    p.truncate(total);
    if validate::host_dst4(dst) {
        return Next::Done(output::local(p, &w.rx_macs, ETHERTYPE_IPV4));
    }
    if let Some(reason) = validate::input4(t, src, dst) {
        return Next::drop(reason);
    }
    // The kernel's local table holds the directed broadcasts of the connected subnets.
    if t.is_bcast4(dst) {
        return Next::Done(output::local(p, &w.rx_macs, ETHERTYPE_IPV4));
    }
    // From a service function behind an SR proxy, unless it is for the router itself.
    if let Some(Some(pin)) = t.proxy_in.get(usize::from(p.in_dev)) {
        if !t.is_local4(dst) {
            if let Some(next) = proxy::inbound4(t, w, p, pin) {
                return next;
            }
        }
    }
    // Routed back out of the device it came from: the source checked in full. (The
    // route the rules choose, if there are any, as the kernel's fib_validate_source.)
    let out = if t.rules.v4.is_empty() {
        out_dev4(t, &dst.to_be_bytes())
    } else {
        match Rules::lookup4(t, p.data(), p.in_dev) {
            rules::Verdict::Route(r) => nh_dev(t, r),
            _ => None,
        }
    };
    if out == Some(p.in_dev) {
        if let Some(reason) = validate::same_dev4(t, src) {
            return Next::drop(reason);
        }
    }
    route4(t, w, p, Tables::MAIN, true)
}

#[inline]
fn dst6(p: &PacketBuf) -> [u8; 16] {
    Ipv6Packet::new_unchecked(p.data()).dst_addr().octets()
}

/// Looks the IPv6 destination up in FIB `table` and dispatches on the result.
pub fn route6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, table: u32, forward: bool) -> Next {
    route::<V6>(t, w, p, table, forward)
}

/// What a route found for an IPv6 packet does with it.
#[inline(always)]
pub(crate) fn dispatch6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, route: Option<Route>, forward: bool) -> Next {
    match route {
        Some(Route::Forward(nh)) => forward6(t, w, p, nh, forward),
        Some(Route::Multipath(g)) => match select(t, g, multipath::hash6(p.data(), t.multipath_hash6)) {
            Some(nh) => forward6(t, w, p, nh, forward),
            None => Next::drop(DropReason::NoRoute),
        },
        Some(Route::Local) => local6(t, w, p),
        Some(Route::Sid(i)) => local_sid(t, w, p, i),
        Some(Route::Policy(i)) => policy6(t, w, p, i, forward),
        Some(Route::GtpEncap(i)) => gtp_encap::input(t, w, p, i, true, forward),
        Some(Route::Lwt(i)) => lwt_bpf::route6(t, w, p, i, forward),
        Some(Route::Blackhole) => Next::drop(DropReason::Blackhole),
        Some(Route::Unreachable) | None => icmp::no_route6(t, w, p),
    }
}

/// A packet for local SID `i`: the steps every endpoint shares, then its behaviour's
/// (RFC 8986 §4), counted on the SID — as an error when it ends in a drop or an ICMP
/// error. Inlined into [`route6`] (as the compiler chose before `route_rules` was a
/// second caller).
#[inline(always)]
fn local_sid(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32) -> Next {
    let Some(sid) = t.sids.get(i as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    let len = p.len() as u64;
    let next = match endpoint::arrival(t, p, sid.action.flavors.next_csid) {
        Ok(a) => (sid.behaviour.input)(t, p, sid, &a),
        Err(n) => n,
    };
    sid_step(t, w, p, i as usize, len, next)
}

/// What SID `i`'s behaviour decided (`next`) carried out ([`Worker::step`]) and counted
/// on the SID, for a packet of `len` bytes as it arrived: as an error when it ends in a
/// drop or an ICMP error (behaviours send none themselves: only the step does).
#[inline(always)]
pub(crate) fn sid_step(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: usize, len: u64, next: Next) -> Next {
    let icmp_before = w.counters.icmp_sent;
    let next = w.step(t, p, next);
    if matches!(next, Next::Done(Verdict::Drop(_))) || w.counters.icmp_sent != icmp_before {
        w.counters.sids.error(i);
    } else {
        w.counters.sids.count(i, len);
    }
    next
}

/// An IPv4 packet for the local SID `i` of an IPv4 route (H.M.GTP4.D, RFC 9433 §6.7),
/// counted as [`local_sid`] counts.
#[cold]
#[inline(never)]
fn local_sid4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32) -> Next {
    let Some(sid) = t.sids.get(i as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    let len = p.len() as u64;
    let next = crate::behaviour::mobile::input4(t, p, sid);
    sid_step(t, w, p, i as usize, len, next)
}

/// Head-end policy `i` on an IPv6 packet (RFC 8986 §5), after the forwarding step of
/// RFC 8200 §3 when `forward`.
pub(crate) fn policy6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, forward: bool) -> Next {
    let Some(pol) = t.policies.get(i as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    if forward && !t.devices.get(p.in_dev as usize).is_some_and(|d| d.forwarding6) {
        return Next::drop(DropReason::ForwardingDisabled);
    }
    let hl = Ipv6Packet::new_unchecked(p.data()).hop_limit();
    if forward && hl <= 1 {
        return icmp::time_exceeded6(t, w, p);
    }
    count_policy(w, i);
    headend::apply6(t, p, pol, if forward { hl - 1 } else { hl }, &w.rx_macs)
}

/// Head-end policy `i` on an IPv4 packet: the outer hop limit is Linux's default, less
/// the forwarding decrement when `forward`.
pub(crate) fn policy4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, i: u32, forward: bool) -> Next {
    let Some(pol) = t.policies.get(i as usize) else {
        return Next::drop(DropReason::NoRoute);
    };
    if forward && !t.devices.get(p.in_dev as usize).is_some_and(|d| d.forwarding4) {
        return Next::drop(DropReason::ForwardingDisabled);
    }
    if !pol.encapsulates() {
        return Next::drop(DropReason::WrongNextHeader);
    }
    count_policy(w, i);
    let hl = headend::IPV4_OUTER_HOP_LIMIT - u8::from(forward);
    headend::apply4(t, p, pol, hl, &w.rx_macs)
}

#[inline]
fn count_policy(w: &mut Worker, i: u32) {
    if let Some(c) = w.counters.policies.get_mut(i as usize) {
        *c += 1;
    }
}

/// The next hop of multipath group `g` for a packet whose flow hash is `hash`.
fn select(t: &Tables, g: u32, hash: u32) -> Option<NextHop> {
    t.groups.get(g as usize)?.select(hash)
}

/// Forwards an IPv6 packet to `nh`: RFC 8200 §3 hop-limit processing when `forward`.
#[inline]
pub fn forward6(t: &Tables, w: &mut Worker, p: &mut PacketBuf, nh: NextHop, forward: bool) -> Next {
    if forward {
        if !t.devices.get(p.in_dev as usize).is_some_and(|d| d.forwarding6) {
            return Next::drop(DropReason::ForwardingDisabled);
        }
        let hl = Ipv6Packet::new_unchecked(p.data()).hop_limit();
        if hl <= 1 {
            return icmp::time_exceeded6(t, w, p);
        }
        // The MTU before the decrement, so that the error quotes the packet as
        // received, as Linux's ip6_forward does.
        if let Some(m) = mtu::exceeded(t, p, nh) {
            return mtu::too_big(t, w, p, m);
        }
        Ipv6Packet::new_unchecked(p.data_mut()).set_hop_limit(hl - 1);
        // The firewall's FORWARD chain, where Linux's ip6_forward runs it.
        if let Some(fw) = &t.firewall {
            if let Some(next) = fw.run(t, w, p, Hook::Forward, nh_dev(t, Route::Forward(nh))) {
                return next;
            }
        }
        if let Some(ids) = &t.ids {
            if let Some(next) = ids.inspect(w, p, Hook::Forward) {
                return next;
            }
        }
    } else if let Some(m) = mtu::exceeded(t, p, nh) {
        return mtu::too_big(t, w, p, m);
    }
    let dst = u128::from_be_bytes(dst6(p));
    Next::Done(output::emit(t, p, nh, dst, ETHERTYPE_IPV6))
}

/// A packet for one of the router's own addresses that is not a SID.
fn local6(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
    let chain = match walk_chain(p.data()) {
        Ok(c) => c,
        Err(_) => return Next::drop(DropReason::Malformed),
    };
    if let Some(r) = chain.routing {
        if r.routing_type == ROUTING_TYPE_SRH {
            // Linux: an SRH is only accepted where seg6_enabled (all and device) is set.
            if !t.devices.get(p.in_dev as usize).is_some_and(|d| d.seg6_enabled) {
                return Next::drop(DropReason::Seg6Disabled);
            }
            if !hmac_check::verify(t, p, &r) {
                return Next::drop(DropReason::HmacInvalid);
            }
            if r.segments_left > 0 {
                // RFC 8754 §4.3.2: a local address that is not a SID.
                return icmp::param_problem6(t, w, p, PP_ERRONEOUS_HEADER, r.offset + SEGMENTS_LEFT_OFFSET);
            }
        } else if r.segments_left > 0 {
            // RFC 8200 §4.4: unrecognised Routing Type with Segments Left != 0.
            return icmp::param_problem6(t, w, p, PP_ERRONEOUS_HEADER, r.offset + ROUTING_TYPE_OFFSET);
        }
    }
    Next::Done(output::local(p, &w.rx_macs, ETHERTYPE_IPV6))
}

/// Looks the IPv4 destination up in FIB `table` and dispatches on the result.
pub fn route4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, table: u32, forward: bool) -> Next {
    route::<V4>(t, w, p, table, forward)
}

/// What [`route`] needs of an address family.
trait Family {
    /// The length of the family's fixed header: a shorter packet is malformed.
    const HEADER_LEN: usize;
    /// The route FIB `fib` has for the destination of packet `d`, which is at least
    /// [`HEADER_LEN`](Self::HEADER_LEN) long.
    fn lookup(fib: &Fib, d: &[u8]) -> Option<Route>;
    /// The FIB index whose lookups walk the rules ([`Tables::rules_fib6`]).
    fn rules_fib(t: &Tables) -> u32;
    /// The rules' verdict for the packet.
    fn rules(t: &Tables, p: &PacketBuf) -> rules::Verdict;
    /// A rule's `prohibit`: the family's ICMP error.
    fn prohibited(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next;
    /// What a route found does with the packet.
    fn dispatch(t: &Tables, w: &mut Worker, p: &mut PacketBuf, route: Option<Route>, forward: bool) -> Next;
}

/// IPv6 for [`route`].
struct V6;
/// IPv4 for [`route`].
struct V4;

impl Family for V6 {
    const HEADER_LEN: usize = Ipv6Packet::<&[u8]>::HEADER_LEN;
    #[inline(always)]
    fn lookup(fib: &Fib, d: &[u8]) -> Option<Route> {
        fib.lookup6(&Ipv6Packet::new_unchecked(d).dst_addr().octets())
    }
    #[inline(always)]
    fn rules_fib(t: &Tables) -> u32 {
        t.rules_fib6
    }
    fn rules(t: &Tables, p: &PacketBuf) -> rules::Verdict {
        Rules::lookup6(t, p.data(), p.in_dev)
    }
    fn prohibited(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
        icmp::prohibited6(t, w, p)
    }
    #[inline(always)]
    fn dispatch(t: &Tables, w: &mut Worker, p: &mut PacketBuf, route: Option<Route>, forward: bool) -> Next {
        dispatch6(t, w, p, route, forward)
    }
}

impl Family for V4 {
    const HEADER_LEN: usize = Ipv4Packet::<&[u8]>::HEADER_LEN;
    #[inline(always)]
    fn lookup(fib: &Fib, d: &[u8]) -> Option<Route> {
        fib.lookup4(&Ipv4Packet::new_unchecked(d).dst_addr().octets())
    }
    #[inline(always)]
    fn rules_fib(t: &Tables) -> u32 {
        t.rules_fib4
    }
    fn rules(t: &Tables, p: &PacketBuf) -> rules::Verdict {
        Rules::lookup4(t, p.data(), p.in_dev)
    }
    fn prohibited(t: &Tables, w: &mut Worker, p: &mut PacketBuf) -> Next {
        icmp::prohibited4(t, w, p)
    }
    #[inline(always)]
    fn dispatch(t: &Tables, w: &mut Worker, p: &mut PacketBuf, route: Option<Route>, forward: bool) -> Next {
        dispatch4(t, w, p, route, forward)
    }
}

/// [`route6`] and [`route4`]: FIB `table`, or the rules where that FIB is the one that
/// walks them, or the main table named by End.T or End.DT* with rules configured.
#[inline(always)]
fn route<F: Family>(t: &Tables, w: &mut Worker, p: &mut PacketBuf, table: u32, forward: bool) -> Next {
    if p.len() < F::HEADER_LEN {
        return Next::drop(DropReason::Malformed);
    }
    let Some(fib) = t.fibs.get(table as usize) else {
        return if table == Tables::MAIN_BY_NAME {
            route_rules::<F>(t, w, p, forward, false)
        } else {
            Next::drop(DropReason::NoRoute)
        };
    };
    if table == F::rules_fib(t) {
        return route_rules::<F>(t, w, p, forward, true);
    }
    let found = F::lookup(fib, p.data());
    F::dispatch(t, w, p, found, forward)
}

/// [`route`]'s lookups when there are rules: the ordinary one (`rules`) walks them;
/// the main table named by End.T or End.DT* ([`Tables::MAIN_BY_NAME`]) is looked up
/// without them, as the kernel's seg6_lookup_any_nexthop does a table id. A rule's
/// `unreachable` is the kernel's -ENETUNREACH: as no route. Out of line, so that
/// without rules `route` is what it was.
#[cold]
#[inline(never)]
fn route_rules<F: Family>(t: &Tables, w: &mut Worker, p: &mut PacketBuf, forward: bool, rules: bool) -> Next {
    if !rules {
        let route = t.fibs.first().and_then(|f| F::lookup(f, p.data()));
        return F::dispatch(t, w, p, route, forward);
    }
    let route = match F::rules(t, p) {
        rules::Verdict::Route(r) => Some(r),
        rules::Verdict::Blackhole => Some(Route::Blackhole),
        rules::Verdict::Unreachable | rules::Verdict::NoRoute => None,
        rules::Verdict::Prohibit => return F::prohibited(t, w, p),
    };
    F::dispatch(t, w, p, route, forward)
}

/// What a route found for an IPv4 packet does with it.
#[inline(always)]
pub(crate) fn dispatch4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, route: Option<Route>, forward: bool) -> Next {
    match route {
        Some(Route::Forward(nh)) => forward4(t, w, p, nh, forward),
        Some(Route::Multipath(g)) => match select(t, g, multipath::hash4(p.data(), t.multipath_hash4)) {
            Some(nh) => forward4(t, w, p, nh, forward),
            None => Next::drop(DropReason::NoRoute),
        },
        Some(Route::Local) => Next::Done(output::local(p, &w.rx_macs, ETHERTYPE_IPV4)),
        Some(Route::Policy(i)) => policy4(t, w, p, i, forward),
        Some(Route::GtpEncap(i)) => gtp_encap::input(t, w, p, i, false, forward),
        Some(Route::Lwt(i)) => lwt_bpf::route4(t, w, p, i, forward),
        Some(Route::Blackhole) => Next::drop(DropReason::Blackhole),
        Some(Route::Sid(i)) => local_sid4(t, w, p, i),
        Some(Route::Unreachable) => icmp::unreachable4(t, w, p),
        None => icmp::no_route4(t, w, p),
    }
}

/// Forwards an IPv4 packet: TTL check and decrement with an incremental checksum
/// update (RFC 1812 §5.3.1, RFC 1624). Over the egress MTU, a packet with DF is
/// answered as received (as `ip_forward`), one without is fragmented after the
/// decrement ([`fragment`], as `ip_finish_output`).
pub fn forward4(t: &Tables, w: &mut Worker, p: &mut PacketBuf, nh: NextHop, forward: bool) -> Next {
    if forward {
        if !t.devices.get(p.in_dev as usize).is_some_and(|d| d.forwarding4) {
            return Next::drop(DropReason::ForwardingDisabled);
        }
        if Ipv4Packet::new_unchecked(p.data()).ttl() <= 1 {
            return icmp::time_exceeded4(t, w, p);
        }
        if let Some(m) = mtu::exceeded(t, p, nh) {
            if !fragment::allowed(p) {
                return mtu::too_big(t, w, p, m);
            }
            Ipv4Packet::new_unchecked(p.data_mut()).decrement_ttl();
            return fragment::send(t, w, p, nh, m);
        }
        Ipv4Packet::new_unchecked(p.data_mut()).decrement_ttl();
    } else if let Some(m) = mtu::exceeded(t, p, nh) {
        return if fragment::allowed(p) { fragment::send(t, w, p, nh, m) } else { mtu::too_big(t, w, p, m) };
    }
    let dst = u128::from(Ipv4Packet::new_unchecked(p.data()).dst_addr().to_ipv6_mapped());
    Next::Done(output::emit(t, p, nh, dst, ETHERTYPE_IPV4))
}

/// The device the main FIB sends packets for `a` out of.
pub fn out_dev4(t: &Tables, a: &[u8; 4]) -> Option<DevId> {
    nh_dev(t, t.fibs.first()?.lookup4(a)?)
}

/// The device and next hop (the gateway, or `a` itself on-link) by which the main FIB
/// reaches `a`.
pub fn route_back4(t: &Tables, a: std::net::Ipv4Addr) -> Option<(DevId, std::net::Ipv4Addr)> {
    match t.fibs.first()?.lookup4(&a.octets())? {
        Route::Forward(NextHop::OnLink(d)) => Some((d, a)),
        Route::Forward(NextHop::Adj(i)) => {
            let adj = t.adjacencies.get(i as usize)?;
            match adj.nh {
                std::net::IpAddr::V4(g) => Some((adj.dev, g)),
                std::net::IpAddr::V6(_) => Some((adj.dev, a)),
            }
        }
        _ => None,
    }
}

pub(crate) fn nh_dev(t: &Tables, r: Route) -> Option<DevId> {
    match r {
        // A multipath route: its first next hop's device (the packet is not at hand).
        Route::Multipath(g) => nh_dev(t, Route::Forward(*t.groups.get(g as usize)?.hops.first()?)),
        Route::Forward(NextHop::OnLink(d)) => Some(d),
        Route::Forward(NextHop::Adj(i)) => t.adjacencies.get(i as usize).map(|a| a.dev),
        _ => None,
    }
}
