//! Kernel-route mirroring (`sr6 run --mirror-kernel-routes`): what a routing daemon
//! (FRR's zebra) or an operator's `ip route` installs in the kernel of sr6's network
//! namespace is forwarded by sr6 too, and what they withdraw stops being.
//!
//! A thread subscribes to the kernel's route, nexthop and address events
//! ([`RouteMonitor`]), then dumps every table ([`netlink::routes`]), the nexthop objects
//! routes may name ([`netlink::nexthops`]; FRR's zebra installs its routes through them)
//! and the devices' addresses ([`netlink::addresses`]: a global address on a device sr6
//! serves is sr6's too, its prefix connected, unless the configuration has it), and keeps
//! what sr6 can take as the `ip addr add`, `ip nexthop add` and `ip route add` lines
//! that make it ([`KernelAddr::to_line`], [`KernelNexthop::to_line`],
//! [`KernelRoute::to_line`]), the routes' by prefix ([`KernelLines`]).
//! Each batch of events (all those queued, read at once) becomes one new generation of
//! the tables. A batch of route events hands the control side the lines of the
//! prefixes it touched, which it merges and publishes as route changes in place
//! ([`Control::change_outside_routes`], [`super::outside`]): the cost of a batch is its
//! own routes', however many the kernel holds. A batch that changes nexthop objects
//! or addresses, or follows a lost event, hands it every line ([`Control::kernel_routes`]), which it
//! merges under the configuration's again ([`super::control::merge_kernel_routes`]).
//! Left out: the kernel's own routes
//! (`proto kernel`: connected prefixes and link-local ones, which sr6 derives from its
//! own addresses), local and broadcast routes, routes through devices sr6 does not
//! serve, and what the line cannot say (End.BPF, other tunnels), each logged once.
//! What the kernel deletes without a message is deleted here too: with a nexthop
//! object, the routes through it and its place in groups ([`forget_nexthop`]); with a
//! device that goes down, the nexthop objects through it ([`flush_dev`]).
//!
//! Either way what changed is published as `sr6 ctl` publishes: plain route changes in
//! place ([`super::in_place`]), anything else by a build (docs/frr.md, "Limits").

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sr6_io::netlink::nexthop::NexthopKind;
use sr6_io::netlink::{self, KernelAddr, KernelNexthop, KernelRoute, RouteEvent, RouteMonitor};

use super::control::Control;
use super::outside::{KernelLines, PrefixKey};
use super::state::lock;

/// How long the thread waits for events before looking at `stop`.
const TICK: Duration = Duration::from_millis(50);
/// How long a burst of route events is gathered before the tables are published (the
/// events that arrive within 2 ms of each other, for at most this long).
const COALESCE: Duration = Duration::from_millis(100);
/// `RTPROT_KERNEL`: routes the kernel made itself.
const RTPROT_KERNEL: u8 = 2;

/// A route's identity in the kernel: table, destination, prefix length (the family is
/// the destination's), metric.
pub(crate) type Key = (u32, IpAddr, u8, Option<u32>);

pub(crate) fn key(r: &KernelRoute) -> Key {
    (r.table, r.dst, r.prefix_len, r.metric)
}

/// The devices' addresses, by device index and address.
pub(crate) type Addrs = BTreeMap<(u32, IpAddr), KernelAddr>;

/// The prefix a route is for.
pub(crate) fn prefix_of(r: &KernelRoute) -> PrefixKey {
    (r.table, r.dst, r.prefix_len)
}

/// Follows the kernel's routes until `stop` (see the module docs).
pub fn run(control: Arc<Mutex<Control>>, verbose: bool) {
    let shared = lock(&control).shared.clone();
    let mut mon = match RouteMonitor::open() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("sr6: warning: cannot follow the kernel's routes ({e}); none is mirrored");
            return;
        }
    };
    // Monitor first, then the dump: no change falls between.
    let mut known = dump();
    let mut nexthops = dump_nexthops();
    let mut addrs = dump_addrs();
    let mut refused = BTreeSet::new();
    publish(&control, &addrs, &nexthops, &known, &mut refused, verbose);
    while !shared.stop.load(Ordering::Relaxed) {
        let mut events = mon.recv(TICK).unwrap_or_else(|e| {
            eprintln!("sr6: warning: route events: {e}");
            std::thread::sleep(TICK);
            vec![RouteEvent::Overrun]
        });
        if events.is_empty() {
            continue;
        }
        // A burst (a routing daemon installing a table): take what follows closely too,
        // for up to COALESCE, and publish once.
        let until = std::time::Instant::now() + COALESCE;
        while std::time::Instant::now() < until {
            match mon.recv(Duration::from_millis(2)) {
                Ok(more) if !more.is_empty() => events.extend(more),
                _ => break,
            }
        }
        // The prefixes whose routes changed; `None` once something else did (nexthop
        // objects, a device, a lost event): then every line is made again.
        let mut touched: Option<BTreeSet<PrefixKey>> = Some(BTreeSet::new());
        for ev in events {
            match ev {
                RouteEvent::New(r) => {
                    if let Some(t) = touched.as_mut() {
                        t.insert(prefix_of(&r));
                    }
                    known.insert(key(&r), r);
                }
                RouteEvent::Del(r) => {
                    if let Some(t) = touched.as_mut() {
                        t.insert(prefix_of(&r));
                    }
                    known.remove(&key(&r));
                }
                RouteEvent::NewNexthop(n) => {
                    nexthops.insert(n.id, n);
                    touched = None;
                }
                RouteEvent::DelNexthop(n) => {
                    forget_nexthop(&mut nexthops, &mut known, n.id);
                    touched = None;
                }
                RouteEvent::LinkDown(ifindex) => {
                    flush_dev(&mut nexthops, &mut known, ifindex);
                    touched = None;
                }
                RouteEvent::NewAddr(a) => {
                    addrs.insert((a.ifindex, a.addr), a);
                    touched = None;
                }
                RouteEvent::DelAddr(a) => {
                    addrs.remove(&(a.ifindex, a.addr));
                    touched = None;
                }
                RouteEvent::Undecodable(e) => eprintln!("sr6: warning: a kernel route sr6 cannot read: {e}"),
                RouteEvent::Overrun => {
                    known = dump();
                    nexthops = dump_nexthops();
                    addrs = dump_addrs();
                    touched = None;
                }
            }
        }
        match touched {
            Some(t) => publish_prefixes(&control, &known, &t, &mut refused, verbose),
            None => publish(&control, &addrs, &nexthops, &known, &mut refused, verbose),
        }
    }
}

/// Nexthop object `id` deleted, with what the kernel deletes with it, silently
/// (net/ipv4/nexthop.c, `remove_nexthop`): the routes through it, and its place in every
/// group it was a member of; a group left without members goes too, with its routes.
/// (So a link going down, whose nexthops the kernel flushes, shrinks a multipath group
/// at once, before zebra replaces the routes.)
pub(crate) fn forget_nexthop(
    nexthops: &mut BTreeMap<u32, KernelNexthop>,
    known: &mut BTreeMap<Key, KernelRoute>,
    id: u32,
) {
    let mut gone = vec![id];
    while let Some(id) = gone.pop() {
        nexthops.remove(&id);
        known.retain(|_, r| r.nh_id != Some(id));
        for n in nexthops.values_mut() {
            if let NexthopKind::Group { members, .. } = &mut n.kind {
                let before = members.len();
                members.retain(|(m, _)| *m != id);
                if members.is_empty() && before > 0 {
                    gone.push(n.id);
                }
            }
        }
    }
}

/// Device `ifindex` went down or lost its carrier: the kernel deleted the nexthop
/// objects through it ([`RouteEvent::LinkDown`], `nexthop_flush_dev`), and so does the
/// mirror, at once: a multipath group through it shrinks before the routing daemon has
/// even heard of the failure.
pub(crate) fn flush_dev(
    nexthops: &mut BTreeMap<u32, KernelNexthop>,
    known: &mut BTreeMap<Key, KernelRoute>,
    ifindex: u32,
) {
    let through = |n: &KernelNexthop| matches!(n.kind, NexthopKind::Single { oif: Some(i), .. } if i == ifindex);
    let ids: Vec<u32> = nexthops.values().filter(|n| through(n)).map(|n| n.id).collect();
    for id in ids {
        forget_nexthop(nexthops, known, id);
    }
}

/// The kernel's routes by key (empty, with a warning, if the dump fails: the next
/// overrun corrects it).
fn dump() -> BTreeMap<Key, KernelRoute> {
    match netlink::routes() {
        Ok(v) => v
            .into_iter()
            .filter_map(|r| r.map_err(|e| eprintln!("sr6: warning: a kernel route sr6 cannot read: {e}")).ok())
            .map(|r| (key(&r), r))
            .collect(),
        Err(e) => {
            eprintln!("sr6: warning: listing the kernel's routes: {e}");
            BTreeMap::new()
        }
    }
}

/// The devices' addresses by device and address (empty, with a warning, if the dump
/// fails).
fn dump_addrs() -> Addrs {
    match netlink::addresses() {
        Ok(v) => v
            .into_iter()
            .filter_map(|a| a.map_err(|e| eprintln!("sr6: warning: a kernel address sr6 cannot read: {e}")).ok())
            .map(|a| ((a.ifindex, a.addr), a))
            .collect(),
        Err(e) => {
            eprintln!("sr6: warning: listing the kernel's addresses: {e}");
            BTreeMap::new()
        }
    }
}

/// The kernel's nexthop objects by id (empty, with a warning, if the dump fails).
fn dump_nexthops() -> BTreeMap<u32, KernelNexthop> {
    match netlink::nexthops() {
        Ok(v) => v
            .into_iter()
            .filter_map(|n| n.map_err(|e| eprintln!("sr6: warning: a kernel nexthop sr6 cannot read: {e}")).ok())
            .map(|n| (n.id, n))
            .collect(),
        Err(e) => {
            eprintln!("sr6: warning: listing the kernel's nexthop objects: {e}");
            BTreeMap::new()
        }
    }
}

/// Logs `what` (a route or nexthop sr6 does not take) once: `refused` remembers it.
fn refuse(refused: &mut BTreeSet<String>, what: String) {
    if refused.insert(what.clone()) {
        eprintln!("sr6: kernel route not mirrored: {what}");
    }
}

/// The lines of the nexthop objects sr6 takes, single ones before the groups that name
/// them.
fn nexthop_lines(
    nexthops: &BTreeMap<u32, KernelNexthop>,
    name: &dyn Fn(u32) -> Option<String>,
    refused: &mut BTreeSet<String>,
) -> Vec<String> {
    let group = |n: &&KernelNexthop| matches!(n.kind, netlink::nexthop::NexthopKind::Group { .. });
    let (groups, singles): (Vec<&KernelNexthop>, Vec<&KernelNexthop>) = nexthops.values().partition(group);
    let mut out = Vec::new();
    for n in singles.into_iter().chain(groups) {
        match n.to_line(name) {
            Ok(l) => out.push(l),
            Err(e) => refuse(refused, e),
        }
    }
    out
}

/// The lines of the routes sr6 takes from `routes` (those of one prefix, or all), the
/// lowest metric of a prefix first.
fn route_lines<'a>(
    routes: impl Iterator<Item = &'a KernelRoute>,
    name: &dyn Fn(u32) -> Option<String>,
    refused: &mut BTreeSet<String>,
) -> Vec<String> {
    let mut routes: Vec<&KernelRoute> = routes.filter(|r| r.protocol != RTPROT_KERNEL).collect();
    routes.sort_by_key(|r| (r.table, r.dst, r.prefix_len, r.metric.unwrap_or(0)));
    let mut out = Vec::new();
    for r in routes {
        match r.to_line(name) {
            Ok(l) => out.push(l),
            // Local and broadcast routes are the kernel's own; the rest is worth a word.
            Err(e) if e.contains("of type") => {}
            Err(e) => refuse(refused, format!("{}/{} (table {}): {e}", r.dst, r.prefix_len, r.table)),
        }
    }
    out
}

/// The `ip addr add` lines of the global addresses (link-local and host ones are the
/// devices' own: sr6 has them without being told).
fn addr_lines(addrs: &Addrs, name: &dyn Fn(u32) -> Option<String>) -> Vec<String> {
    addrs.values().filter_map(|a| a.to_line(name).ok()).collect()
}

/// The addresses' lines, the nexthop objects' (single ones before the groups that name
/// them) and the routes' sr6 takes from `known`, by prefix, the lowest metric of a
/// prefix first; what it cannot take is logged once (`refused` remembers it).
pub(crate) fn kernel_lines(
    addrs: &Addrs,
    nexthops: &BTreeMap<u32, KernelNexthop>,
    known: &BTreeMap<Key, KernelRoute>,
    name: &dyn Fn(u32) -> Option<String>,
    refused: &mut BTreeSet<String>,
) -> KernelLines {
    let mut routes: BTreeMap<PrefixKey, Vec<&KernelRoute>> = BTreeMap::new();
    for r in known.values() {
        routes.entry(prefix_of(r)).or_default().push(r);
    }
    KernelLines {
        addrs: addr_lines(addrs, name),
        nexthops: nexthop_lines(nexthops, name, refused),
        routes: routes
            .into_iter()
            .map(|(p, rs)| (p, route_lines(rs.into_iter(), name, refused)))
            .filter(|(_, l)| !l.is_empty())
            .collect(),
    }
}

/// The lines of prefix `p`'s routes in `known`.
pub(crate) fn prefix_lines(
    known: &BTreeMap<Key, KernelRoute>,
    p: PrefixKey,
    name: &dyn Fn(u32) -> Option<String>,
    refused: &mut BTreeSet<String>,
) -> Vec<String> {
    let (table, dst, len) = p;
    route_lines(known.range((table, dst, len, None)..=(table, dst, len, Some(u32::MAX))).map(|(_, r)| r), name, refused)
}

/// The name of a device by kernel index, from one listing of the links.
pub(crate) fn names() -> impl Fn(u32) -> Option<String> {
    let links = netlink::links().unwrap_or_default();
    move |i: u32| links.iter().find(|l| l.ifindex == i).map(|l| l.name.clone())
}

/// Hands every line to the control side and publishes new tables if they changed.
fn publish(
    control: &Mutex<Control>,
    addrs: &Addrs,
    nexthops: &BTreeMap<u32, KernelNexthop>,
    known: &BTreeMap<Key, KernelRoute>,
    refused: &mut BTreeSet<String>,
    verbose: bool,
) {
    let lines = kernel_lines(addrs, nexthops, known, &names(), refused);
    let mut c = lock(control);
    let res = c.replace_outside_routes(|c| &mut c.kernel_routes, lines);
    report(&c, res, verbose);
}

/// Hands the lines of the prefixes `touched` to the control side, which publishes them
/// in place where it can ([`Control::change_outside_routes`]).
fn publish_prefixes(
    control: &Mutex<Control>,
    known: &BTreeMap<Key, KernelRoute>,
    touched: &BTreeSet<PrefixKey>,
    refused: &mut BTreeSet<String>,
    verbose: bool,
) {
    let name = names();
    let updates: Vec<_> = touched.iter().map(|&p| (p, prefix_lines(known, p, &name, refused))).collect();
    let mut c = lock(control);
    let res = c.change_outside_routes(|c| &mut c.kernel_routes, updates);
    report(&c, res, verbose);
}

fn report(c: &Control, res: Option<Result<u64, String>>, verbose: bool) {
    match res {
        Some(Ok(id)) if verbose => {
            eprintln!("sr6: {} kernel route(s) mirrored (tables generation {id})", c.kernel_routes.len())
        }
        Some(Err(e)) => eprintln!("sr6: warning: the kernel's routes are not mirrored: {e}"),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nexthop(id: u32, kind: NexthopKind) -> KernelNexthop {
        KernelNexthop { id, v6: Some(true), protocol: 11, kind, encap: None, fdb: false }
    }

    fn route(dst: &str, nh_id: u32) -> KernelRoute {
        KernelRoute {
            dst: dst.parse().unwrap(),
            prefix_len: 48,
            table: 254,
            protocol: 11,
            kind: netlink::RouteKind::Unicast,
            metric: Some(20),
            nexthops: Vec::new(),
            nh_id: Some(nh_id),
            encap: None,
        }
    }

    /// As the kernel: a deleted member leaves its groups (the routes through them stay),
    /// and a group it leaves empty goes, with its routes.
    #[test]
    fn a_deleted_nexthop_leaves_its_groups() {
        let single = || NexthopKind::Single { gateway: Some("fe80::1".parse().unwrap()), oif: Some(2) };
        let group = |m: &[u32]| NexthopKind::Group { members: m.iter().map(|i| (*i, 1)).collect(), resilient: false };
        let mut nhs: BTreeMap<u32, KernelNexthop> =
            [nexthop(1, single()), nexthop(2, single()), nexthop(10, group(&[1, 2])), nexthop(11, group(&[2]))]
                .into_iter()
                .map(|n| (n.id, n))
                .collect();
        let mut known: BTreeMap<Key, KernelRoute> =
            [route("fc00:1::", 10), route("fc00:2::", 11), route("fc00:3::", 2)]
                .into_iter()
                .map(|r| (key(&r), r))
                .collect();
        forget_nexthop(&mut nhs, &mut known, 2);
        assert_eq!(nhs.keys().copied().collect::<Vec<_>>(), [1, 10], "11, left empty, went too");
        assert_eq!(nhs[&10].kind, group(&[1]));
        let dsts: Vec<String> = known.values().map(|r| r.dst.to_string()).collect();
        assert_eq!(dsts, ["fc00:1::"], "the routes through 2 and 11 went; the group's route stays");
    }

    /// A device down: the nexthops through it go, as by their deletion.
    #[test]
    fn a_device_down_flushes_its_nexthops() {
        let via = |oif: u32| NexthopKind::Single { gateway: Some("fe80::1".parse().unwrap()), oif: Some(oif) };
        let group = NexthopKind::Group { members: vec![(1, 1), (2, 1)], resilient: false };
        let mut nhs: BTreeMap<u32, KernelNexthop> =
            [nexthop(1, via(3)), nexthop(2, via(4)), nexthop(10, group), nexthop(12, NexthopKind::Blackhole)]
                .into_iter()
                .map(|n| (n.id, n))
                .collect();
        let mut known: BTreeMap<Key, KernelRoute> =
            [route("fc00:1::", 10), route("fc00:2::", 1)].into_iter().map(|r| (key(&r), r)).collect();
        flush_dev(&mut nhs, &mut known, 3);
        assert_eq!(nhs.keys().copied().collect::<Vec<_>>(), [2, 10, 12]);
        assert_eq!(nhs[&10].kind, NexthopKind::Group { members: vec![(2, 1)], resilient: false });
        assert_eq!(known.len(), 1, "the route through nexthop 1 went, the group's stayed");
    }
}
