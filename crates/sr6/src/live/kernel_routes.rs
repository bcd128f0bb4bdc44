//! Kernel-route mirroring (`sr6 run --mirror-kernel-routes`): what a routing daemon
//! (FRR's zebra) or an operator's `ip route` installs in the kernel of sr6's network
//! namespace is forwarded by sr6 too, and what they withdraw stops being.
//!
//! A thread subscribes to the kernel's route events ([`RouteMonitor`]), then dumps every
//! table ([`netlink::routes`]), and keeps the routes sr6 can take as the `ip route add`
//! lines that make them ([`KernelRoute::to_line`]). Each batch of events (all those
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

use sr6_io::netlink::{self, KernelRoute, RouteEvent, RouteMonitor};

use super::control::Control;
use super::state::lock;

/// How long the thread waits for events before looking at `stop`.
const TICK: Duration = Duration::from_millis(50);
/// `RTPROT_KERNEL`: routes the kernel made itself.
const RTPROT_KERNEL: u8 = 2;

/// A route's identity in the kernel: family, table, prefix, metric.
type Key = (bool, u32, String, Option<u32>);

fn key(r: &KernelRoute) -> Key {
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
    let mut refused = BTreeSet::new();
    publish(&control, &known, &mut refused, verbose);
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
                RouteEvent::Undecodable(e) => eprintln!("sr6: warning: a kernel route sr6 cannot read: {e}"),
                RouteEvent::Overrun => known = dump(),
            }
        }
        publish(&control, &known, &mut refused, verbose);
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

/// The lines of the routes sr6 takes from `known`, the lowest metric of a prefix first;
/// a route it cannot take is logged once (`refused` remembers it).
pub fn lines(
    known: &BTreeMap<Key, KernelRoute>,
    name: &dyn Fn(u32) -> Option<String>,
    refused: &mut BTreeSet<String>,
) -> Vec<String> {
    let mut routes: Vec<&KernelRoute> = known.values().filter(|r| r.protocol != RTPROT_KERNEL).collect();
    routes.sort_by_key(|r| (r.is_v6(), r.table, r.dst, r.prefix_len, r.metric.unwrap_or(0)));
    let mut out = Vec::new();
    for r in routes {
        match r.to_line(name) {
            Ok(l) => out.push(l),
            // Local and broadcast routes are the kernel's own; the rest is worth a word.
            Err(e) if e.contains("of type") => {}
            Err(e) => {
                let what = format!("{}/{} (table {}): {e}", r.dst, r.prefix_len, r.table);
                if refused.insert(what.clone()) {
                    eprintln!("sr6: kernel route not mirrored: {what}");
                }
            }
        }
    }
    out
}

/// Hands the current lines to the control side and publishes new tables if they
/// changed.
fn publish(
    control: &Mutex<Control>,
    known: &BTreeMap<Key, KernelRoute>,
    refused: &mut BTreeSet<String>,
    verbose: bool,
) {
    let links = netlink::links().unwrap_or_default();
    let name = |i: u32| links.iter().find(|l| l.ifindex == i).map(|l| l.name.clone());
    let lines = lines(known, &name, refused);
    let mut c = lock(control);
    if c.kernel_routes == lines {
        return;
    }
    let old = std::mem::replace(&mut c.kernel_routes, lines);
    match c.build(&c.spec) {
        Ok((t, warnings)) => {
            let id = c.shared.publish(t);
            for w in warnings {
                eprintln!("sr6: warning: {w}");
            }
            if verbose {
                eprintln!("sr6: {} kernel route(s) mirrored (tables generation {id})", c.kernel_routes.len());
            }
        }
        Err(e) => {
            eprintln!("sr6: warning: the kernel's routes are not mirrored: {e}");
            c.kernel_routes = old;
        }
    }
}
