//! Neighbours at run time, from the kernel: the sr6 devices are also the kernel's, and
//! the kernel already runs neighbour discovery (RFC 4861) and ARP on them — the XDP
//! program (or the AF_PACKET filter) leaves NDP and ARP to it. sr6 reads the kernel's
//! neighbour table over netlink at start, follows its changes, and when a worker needs
//! a neighbour nobody has resolved yet, asks the kernel to resolve it (`NTF_USE`, what
//! `ip neigh replace ADDR dev DEV use` does). Each change publishes new tables (in
//! place, [`super::in_place`], when neighbours are all that changed); packets waiting in
//! the workers' queues leave as soon as they see them.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sr6_io::netlink::{self, NeighEvent, NeighMonitor, Neighbour};

use super::control::Control;
use super::state::lock;
use super::worker::ResolveRequest;

/// A resolution request for the same neighbour is sent at most this often.
const REREQUEST: Duration = Duration::from_millis(1000);

/// The devices sr6 serves: kernel ifindex -> (sr6 device index, name).
pub type DevMap = HashMap<u32, (u16, String)>;

/// The neighbour key of the tables back to an address (IPv4-mapped -> IPv4).
pub fn key_addr(k: u128) -> IpAddr {
    let a = Ipv6Addr::from(k);
    match a.to_ipv4_mapped() {
        Some(v4) => IpAddr::V4(v4),
        None => IpAddr::V6(a),
    }
}

/// Loads the kernel's current neighbours of our devices into `c` (no publish).
pub fn load_all(c: &mut Control, devs: &DevMap) -> std::io::Result<usize> {
    let mut n = 0;
    for nb in netlink::neighbours()? {
        if apply(c, devs, &nb, true) {
            n += 1;
        }
    }
    Ok(n)
}

fn apply(c: &mut Control, devs: &DevMap, nb: &Neighbour, present: bool) -> bool {
    let Some((_, name)) = devs.get(&nb.ifindex) else { return false };
    let mac = if present && nb.usable() { nb.mac } else { None };
    c.learn(name, nb.addr, mac)
}

/// Follows the kernel's neighbour table and serves the workers' resolution requests
/// until `stop` is set. Runs on its own thread.
/// The devices are looked up in [`super::link_state::Links`] each round: a device
/// re-created under its name has a new ifindex.
pub fn run(control: Arc<Mutex<Control>>, requests: Receiver<ResolveRequest>, verbose: bool) {
    let mut mon = match NeighMonitor::open() {
        Ok(m) => Some(m),
        Err(e) => {
            eprintln!("sr6: warning: cannot follow the kernel's neighbour table ({e}); only static and start-up neighbours are used");
            None
        }
    };
    let mut asked: HashMap<(u32, u128), Instant> = HashMap::new();
    let shared = lock(&control).shared.clone();
    let stop = shared.stop.clone();
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let events = match mon.as_mut() {
            Some(m) => m.recv(Duration::from_millis(50)).unwrap_or_else(|e| {
                eprintln!("sr6: warning: neighbour events: {e}");
                std::thread::sleep(Duration::from_millis(50));
                Vec::new()
            }),
            None => {
                std::thread::sleep(Duration::from_millis(50));
                Vec::new()
            }
        };
        let devs = shared.links.dev_map();
        let by_dev: HashMap<u16, u32> = devs.iter().map(|(ifx, (d, _))| (*d, *ifx)).collect();
        let mut changed = false;
        if !events.is_empty() {
            let mut c = lock(&control);
            for ev in &events {
                match ev {
                    NeighEvent::New(nb) => changed |= apply(&mut c, &devs, nb, true),
                    NeighEvent::Del(nb) => changed |= apply(&mut c, &devs, nb, false),
                    NeighEvent::Overrun => match load_all(&mut c, &devs) {
                        Ok(_) => changed = true,
                        Err(e) => eprintln!("sr6: warning: re-reading the neighbour table: {e}"),
                    },
                }
            }
            if changed {
                if let Err(e) = c.republish() {
                    eprintln!("sr6: warning: rebuilding the tables after a neighbour change: {e}");
                } else if verbose {
                    eprintln!("sr6: neighbours changed; tables published");
                }
            }
        }
        // Resolution requests from the workers, each neighbour at most once a second
        // per device incarnation (by ifindex); none for an absent device, and such a
        // request is not remembered: the first one after it is back goes out at once.
        let now = Instant::now();
        while let Ok((dev, key)) = requests.try_recv() {
            let Some(ifx) = by_dev.get(&dev) else { continue };
            let last = asked.get(&(*ifx, key));
            if last.is_some_and(|t| now.duration_since(*t) < REREQUEST) {
                continue;
            }
            asked.insert((*ifx, key), now);
            let addr = key_addr(key);
            if verbose {
                eprintln!("sr6: resolving {addr} on {}", devs.get(ifx).map_or("?", |d| d.1.as_str()));
            }
            if let Err(e) = netlink::request_resolution(*ifx, addr) {
                // A device deleted before the link follower saw it go: the kernel knows
                // no such ifindex any more. Not a failure: the device is going away (it
                // is marked absent at the follower's next look).
                let errno = e.get_ref().and_then(|x| x.downcast_ref::<netlink::KernelError>()).map(|k| k.errno);
                if matches!(errno, Some(libc::ENODEV | libc::ENXIO)) {
                    if verbose {
                        eprintln!("sr6: ifindex {ifx} went away before {addr} could be resolved on it");
                    }
                } else {
                    eprintln!("sr6: warning: cannot ask the kernel to resolve {addr}: {e}");
                }
            }
        }
        asked.retain(|_, t| now.duration_since(*t) < REREQUEST * 10);
    }
}
