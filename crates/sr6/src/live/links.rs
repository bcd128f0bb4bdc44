//! The link follower of `sr6 run`: follows the kernel's devices over netlink
//! (`RTM_NEWLINK`/`RTM_DELLINK`) and keeps sr6's ports and tables in step with the
//! devices its configuration names, which it knows by name:
//!
//! * a device that disappears (deleted, or renamed away) is **absent**: each worker's
//!   port is replaced by an [`AbsentPort`] (what is routed to it is dropped and counted
//!   as `tx_absent`), the XDP attachment is dropped, the neighbours learnt on it are
//!   forgotten;
//! * a device of that name that appears (created again, renamed back: a new ifindex, or
//!   the old one) is **re-attached**: XDP program and AF_XDP sockets, or AF_PACKET
//!   sockets, opened as at start and handed to the workers; its MAC and MTU go into the
//!   tables (a new generation). Counters carry on;
//! * a new MAC or MTU of a present device rebuilds the tables with it (and, for an
//!   MTU under AF_PACKET, whose transmit ring is sized for it, reopens the ports);
//!   up/down is recorded (the ports themselves survive a link flap).
//!
//! Each event is logged. A re-attachment that fails (the device not ready yet) is tried
//! again every [`RETRY`]. Runs on its own thread, polling the monitor every
//! [`TICK`]: the workers are never blocked by it.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sr6_io::af_xdp::XdpAttachment;
use sr6_io::live::Port;
use sr6_io::netlink::{self, LinkEvent, LinkInfo, LinkMonitor};

use super::absent::AbsentPort;
use super::backend::{self, Kind};
use super::control::Control;
use super::link_state::{DevState, DevStatus};
use super::state::lock;

/// How long the follower waits for events before looking at retries and `stop`.
const TICK: Duration = Duration::from_millis(50);
/// A failed re-attachment is tried again after this long.
const RETRY: Duration = Duration::from_millis(250);

/// What the follower needs to reopen a device as `sr6 run` opened it.
pub struct Follower {
    pub control: Arc<Mutex<Control>>,
    pub kind: Kind,
    pub workers: u32,
    pub ring_frames: u32,
    /// By device: the XDP attachment (AF_XDP), dropped when the device goes away.
    pub attachments: Vec<Option<XdpAttachment>>,
}

/// What changed for one configured device between two looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Nothing,
    /// Was present, no device of that name now.
    Gone,
    /// Absent (or a new ifindex): open it on this link.
    Attach(LinkInfo),
    /// The same device, changed (state, MAC, MTU).
    Changed(LinkInfo),
}

/// Compares what sr6 has for a device with the kernel's device of that name, if any.
pub fn change(have: &DevStatus, now: Option<&LinkInfo>) -> Change {
    match (have.state, now) {
        (DevState::Absent, None) => Change::Nothing,
        (_, None) => Change::Gone,
        (DevState::Absent, Some(l)) => Change::Attach(l.clone()),
        (_, Some(l)) if l.ifindex != have.ifindex => Change::Attach(l.clone()),
        (s, Some(l)) => {
            let state = if l.up { DevState::Up } else { DevState::Down };
            if s != state || l.mac != have.mac || l.mtu != have.mtu {
                Change::Changed(l.clone())
            } else {
                Change::Nothing
            }
        }
    }
}

/// Runs until `stop`: see the module docs.
pub fn run(mut f: Follower) {
    let shared = lock(&f.control).shared.clone();
    let mut mon = match LinkMonitor::open() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("sr6: warning: cannot follow the kernel's devices ({e}); a device deleted and re-created is not re-attached");
            return;
        }
    };
    // Monitor first, then the dump: no change falls between.
    let mut known: HashMap<u32, LinkInfo> = dump();
    let mut next_try: Vec<Option<Instant>> = vec![None; shared.links.status().len()];
    while !shared.stop.load(Ordering::Relaxed) {
        let events = mon.recv(TICK).unwrap_or_else(|e| {
            eprintln!("sr6: warning: link events: {e}");
            std::thread::sleep(TICK);
            vec![LinkEvent::Overrun]
        });
        for ev in events {
            match ev {
                LinkEvent::New(l) => {
                    known.insert(l.ifindex, l);
                }
                LinkEvent::Del(l) => {
                    known.remove(&l.ifindex);
                }
                LinkEvent::Overrun => known = dump(),
            }
        }
        let now = Instant::now();
        for (dev, have) in shared.links.status().into_iter().enumerate() {
            let link = known.values().find(|l| l.name == have.name);
            match change(&have, link) {
                Change::Nothing => {}
                Change::Gone => f.gone(dev, &have),
                Change::Attach(l) => {
                    if next_try.get(dev).copied().flatten().is_some_and(|t| now < t) {
                        continue;
                    }
                    let ok = f.attach(dev, &have, &l);
                    if let Some(t) = next_try.get_mut(dev) {
                        *t = if ok { None } else { Some(now + RETRY) };
                    }
                }
                Change::Changed(l) => f.changed(dev, &have, &l),
            }
        }
    }
}

/// The kernel's devices by index (empty, with a warning, if the dump fails: the next
/// overrun or event corrects it).
fn dump() -> HashMap<u32, LinkInfo> {
    match netlink::links() {
        Ok(v) => v.into_iter().map(|l| (l.ifindex, l)).collect(),
        Err(e) => {
            eprintln!("sr6: warning: listing devices: {e}");
            HashMap::new()
        }
    }
}

fn fmt_mac(m: &[u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

impl Follower {
    /// Device `dev` has no device of its name any more: stand-in ports, no XDP
    /// attachment, its learnt neighbours forgotten.
    fn gone(&mut self, dev: usize, have: &DevStatus) {
        let control = self.control.clone();
        let c = &mut *lock(&control);
        let ports: Vec<Box<dyn Port>> =
            (0..self.workers).map(|_| Box::new(AbsentPort::new(&have.name)) as Box<dyn Port>).collect();
        c.shared.links.post(dev, ports);
        c.shared.links.update(dev, |d| d.state = DevState::Absent);
        if let Some(a) = self.attachments.get_mut(dev) {
            *a = None;
        }
        if let Some(f) = lock(&c.shared.fast).as_mut() {
            f.detached(&c.shared.gen.load().tables, dev);
        }
        let forgot = c.forget_device(&have.name);
        if forgot {
            if let Err(e) = c.republish() {
                eprintln!("sr6: warning: rebuilding the tables without {}'s neighbours: {e}", have.name);
            }
        }
        eprintln!(
            "sr6: {} (ifindex {}) is gone: its port is closed, what is routed to it is dropped (tx_absent)",
            have.name, have.ifindex
        );
    }

    /// A device named as `dev` is there (ifindex `l.ifindex`): opens its ports and hands
    /// them to the workers. `false` if it could not (tried again later).
    fn attach(&mut self, dev: usize, have: &DevStatus, l: &LinkInfo) -> bool {
        let control = self.control.clone();
        let c = &mut *lock(&control);
        if have.state != DevState::Absent {
            // A new device under the name without a deletion seen in between.
            let ports: Vec<Box<dyn Port>> =
                (0..self.workers).map(|_| Box::new(AbsentPort::new(&have.name)) as Box<dyn Port>).collect();
            c.shared.links.post(dev, ports);
            c.shared.links.update(dev, |d| d.state = DevState::Absent);
            if let Some(a) = self.attachments.get_mut(dev) {
                *a = None;
            }
            c.forget_device(&have.name);
        }
        // The tables with the device's MAC and MTU first: the XDP program's host
        // addresses come from them, and the workers must send with the new MAC.
        c.dev_macs.insert(l.name.clone(), l.mac);
        c.dev_mtus.insert(l.name.clone(), l.mtu.min(u32::from(sr6_core::spec::MAX_MTU)) as u16);
        if let Err(e) = c.republish() {
            eprintln!("sr6: warning: {}: rebuilding the tables with its MAC and MTU: {e}", l.name);
        }
        match self.open(c, dev) {
            Ok(()) => {
                c.shared.links.update(dev, |d| {
                    d.state = if l.up { DevState::Up } else { DevState::Down };
                    d.ifindex = l.ifindex;
                    d.mac = l.mac;
                    d.mtu = l.mtu;
                    d.reattached += 1;
                });
                eprintln!(
                    "sr6: {} is back (ifindex {}, {}, address {}, mtu {}): port re-attached",
                    l.name,
                    l.ifindex,
                    if l.up { "up" } else { "down" },
                    fmt_mac(&l.mac),
                    l.mtu
                );
                true
            }
            Err(e) => {
                eprintln!("sr6: warning: {} (ifindex {}) is back but cannot be attached yet: {e}", l.name, l.ifindex);
                false
            }
        }
    }

    /// Opens device `dev`'s ports on the current tables and hands them to the workers
    /// (their old ports, closed, carry their counts over), replacing its XDP attachment.
    fn open(&mut self, c: &Control, dev: usize) -> Result<(), String> {
        let g = c.shared.gen.load_full();
        let (a, ports) =
            backend::open_device(self.kind, &g.tables, dev, self.workers, self.ring_frames, &c.shared.fast)?;
        c.shared.links.post(dev, ports);
        if let Some(slot) = self.attachments.get_mut(dev) {
            *slot = a;
        }
        Ok(())
    }

    /// The same device changed: state, MAC or MTU.
    fn changed(&mut self, dev: usize, have: &DevStatus, l: &LinkInfo) {
        let control = self.control.clone();
        let c = &mut *lock(&control);
        let state = if l.up { DevState::Up } else { DevState::Down };
        if state != have.state {
            eprintln!("sr6: {} (ifindex {}) is {}", l.name, l.ifindex, state.as_str());
        }
        let mut rebuild = false;
        if l.mac != have.mac {
            eprintln!("sr6: {} has a new address {} (was {})", l.name, fmt_mac(&l.mac), fmt_mac(&have.mac));
            c.dev_macs.insert(l.name.clone(), l.mac);
            rebuild = true;
        }
        if l.mtu != have.mtu {
            eprintln!("sr6: {} has a new MTU {} (was {})", l.name, l.mtu, have.mtu);
            c.dev_mtus.insert(l.name.clone(), l.mtu.min(u32::from(sr6_core::spec::MAX_MTU)) as u16);
            rebuild = true;
        }
        if rebuild {
            if let Err(e) = c.republish() {
                eprintln!("sr6: warning: {}: rebuilding the tables after its change: {e}", l.name);
            }
        }
        // An AF_PACKET port sizes its transmit slots and checks frames for the MTU it
        // was opened with: a new one needs new ports (AF_XDP's frames do not depend on it).
        if l.mtu != have.mtu && self.kind == Kind::AfPacket {
            match self.open(c, dev) {
                Ok(()) => eprintln!("sr6: {}: ports reopened for MTU {}", l.name, l.mtu),
                Err(e) => eprintln!("sr6: warning: {}: cannot reopen its ports for MTU {}: {e}", l.name, l.mtu),
            }
        }
        c.shared.links.update(dev, |d| {
            d.state = state;
            d.mac = l.mac;
            d.mtu = l.mtu;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(ifindex: u32, up: bool, mac: u8, mtu: u32) -> LinkInfo {
        LinkInfo {
            ifindex,
            name: "eth1".into(),
            mac: [2, 0, 0, 0, 0, mac],
            up,
            carrier: up,
            mtu,
            link_type: netlink::ARPHRD_ETHER,
        }
    }

    fn have(state: DevState, ifindex: u32) -> DevStatus {
        DevStatus { name: "eth1".into(), state, ifindex, mac: [2, 0, 0, 0, 0, 1], mtu: 1500, reattached: 0 }
    }

    #[test]
    fn what_a_link_event_means_for_a_device() {
        let up = have(DevState::Up, 4);
        assert_eq!(change(&up, Some(&link(4, true, 1, 1500))), Change::Nothing);
        assert_eq!(change(&up, None), Change::Gone);
        assert_eq!(change(&have(DevState::Absent, 4), None), Change::Nothing);
        // Re-created: a new index; renamed back: the old one, but absent meanwhile.
        assert_eq!(change(&up, Some(&link(9, true, 1, 1500))), Change::Attach(link(9, true, 1, 1500)));
        let back = link(4, false, 1, 1500);
        assert_eq!(change(&have(DevState::Absent, 4), Some(&back)), Change::Attach(back));
        for l in [link(4, false, 1, 1500), link(4, true, 7, 1500), link(4, true, 1, 1400)] {
            assert_eq!(change(&up, Some(&l)), Change::Changed(l.clone()));
        }
        assert_eq!(change(&have(DevState::Down, 4), Some(&link(4, false, 1, 1500))), Change::Nothing);
    }
}
