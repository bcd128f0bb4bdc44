//! Kernel-route mirroring (`sr6 run --mirror-kernel-routes`): what a routing daemon
//! (FRR's zebra) or an operator's `ip route` installs in the kernel of sr6's network
//! namespace is forwarded by sr6 too, and what they withdraw stops being.
//!
//! A thread subscribes to the kernel's route and nexthop events ([`RouteMonitor`]), then
//! dumps every table ([`netlink::routes`]) and the nexthop objects routes may name
//! ([`netlink::nexthops`]; FRR's zebra installs its routes through them), and keeps
//! what sr6 can take as the `ip nexthop add` and `ip route add` lines that make it
//! ([`KernelNexthop::to_line`], [`KernelRoute::to_line`]). Each batch of events (all those
//! queued, read at once) becomes one new generation of the tables: the lines go to
//! [`Control::kernel_routes`], which every build merges under the configuration's
//! ([`super::control::merge_kernel_routes`]). Left out: the kernel's own routes
//! (`proto kernel`: connected prefixes and link-local ones, which sr6 derives from its
//! own addresses), local and broadcast routes, routes through devices sr6 does not
//! serve, and what the line cannot say (End.BPF, other tunnels), each logged once.
//!
//! Every event rebuilds the tables from the whole configuration, as `sr6 ctl` does:
//! fine for the routes of a lab or an IGP, not yet for a full BGP table (the
//! incremental tables of the FIB-scale work are for that).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sr6_io::netlink::{self, KernelNexthop, KernelRoute, RouteEvent, RouteMonitor};

use super::control::Control;
use super::state::lock;

/// How long the thread waits for events before looking at `stop`.
const TICK: Duration = Duration::from_millis(50);
/// `RTPROT_KERNEL`: routes the kernel made itself.
const RTPROT_KERNEL: u8 = 2;

/// A route's identity in the kernel: family, table, prefix, metric.
pub(crate) type Key = (bool, u32, String, Option<u32>);

pub(crate) fn key(r: &KernelRoute) -> Key {
    (r.is_v6(), r.table, format!("{}/{}", r.dst, r.prefix_len), r.metric)
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
    let mut refused = BTreeSet::new();
    publish(&control, &nexthops, &known, &mut refused, verbose);
    while !shared.stop.load(Ordering::Relaxed) {
        let events = mon.recv(TICK).unwrap_or_else(|e| {
            eprintln!("sr6: warning: route events: {e}");
            std::thread::sleep(TICK);
            vec![RouteEvent::Overrun]
        });
        if events.is_empty() {
            continue;
        }
        for ev in events {
            match ev {
                RouteEvent::New(r) => {
                    known.insert(key(&r), r);
                }
                RouteEvent::Del(r) => {
                    known.remove(&key(&r));
                }
                RouteEvent::NewNexthop(n) => {
                    nexthops.insert(n.id, n);
                }
                RouteEvent::DelNexthop(n) => {
                    // The kernel removed the routes through it with it, silently.
                    nexthops.remove(&n.id);
                    known.retain(|_, r| r.nh_id != Some(n.id));
                }
                RouteEvent::Undecodable(e) => eprintln!("sr6: warning: a kernel route sr6 cannot read: {e}"),
                RouteEvent::Overrun => {
                    known = dump();
                    nexthops = dump_nexthops();
                }
            }
        }
        publish(&control, &nexthops, &known, &mut refused, verbose);
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

/// The lines of the nexthop objects (single ones before groups, which name them) and
/// of the routes sr6 takes from `known`, the lowest metric of a prefix first; what it
/// cannot take is logged once (`refused` remembers it).
pub fn lines(
    nexthops: &BTreeMap<u32, KernelNexthop>,
    known: &BTreeMap<Key, KernelRoute>,
    name: &dyn Fn(u32) -> Option<String>,
    refused: &mut BTreeSet<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut refuse = |what: String| {
        if refused.insert(what.clone()) {
            eprintln!("sr6: kernel route not mirrored: {what}");
        }
    };
    let group = |n: &&KernelNexthop| matches!(n.kind, netlink::nexthop::NexthopKind::Group { .. });
    let (groups, singles): (Vec<&KernelNexthop>, Vec<&KernelNexthop>) = nexthops.values().partition(group);
    for n in singles.into_iter().chain(groups) {
        match n.to_line(name) {
            Ok(l) => out.push(l),
            Err(e) => refuse(e),
        }
    }
    let mut routes: Vec<&KernelRoute> = known.values().filter(|r| r.protocol != RTPROT_KERNEL).collect();
    routes.sort_by_key(|r| (r.is_v6(), r.table, r.dst, r.prefix_len, r.metric.unwrap_or(0)));
    for r in routes {
        match r.to_line(name) {
            Ok(l) => out.push(l),
            // Local and broadcast routes are the kernel's own; the rest is worth a word.
            Err(e) if e.contains("of type") => {}
            Err(e) => refuse(format!("{}/{} (table {}): {e}", r.dst, r.prefix_len, r.table)),
        }
    }
    out
}

/// Hands the current lines to the control side and publishes new tables if they
/// changed.
fn publish(
    control: &Mutex<Control>,
    nexthops: &BTreeMap<u32, KernelNexthop>,
    known: &BTreeMap<Key, KernelRoute>,
    refused: &mut BTreeSet<String>,
    verbose: bool,
) {
    let links = netlink::links().unwrap_or_default();
    let name = |i: u32| links.iter().find(|l| l.ifindex == i).map(|l| l.name.clone());
    let lines = lines(nexthops, known, &name, refused);
    let mut c = lock(control);
    match c.replace_outside_routes(|c| &mut c.kernel_routes, lines) {
        Some(Ok(id)) if verbose => {
            eprintln!("sr6: {} kernel route(s) mirrored (tables generation {id})", c.kernel_routes.len())
        }
        Some(Err(e)) => eprintln!("sr6: warning: the kernel's routes are not mirrored: {e}"),
        _ => {}
    }
}
