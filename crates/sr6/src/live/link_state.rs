//! What sr6 knows of its devices' lives, shared between the link follower
//! ([`super::links`]), the workers, the neighbour thread and `sr6 ctl`: each device's
//! state (up, down, absent), its current kernel index and how often its port was
//! re-attached; and the mailbox through which the follower hands a worker a new port
//! for a device (a re-attached one, or [`super::absent::AbsentPort`] while the device
//! is gone).
//!
//! A worker looks at the mailbox's epoch — one atomic load — once per round of
//! batches, and takes its ports only when the epoch moved.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use sr6_io::live::Port;

use super::neigh::DevMap;
use super::state::lock;

/// A device's state as `show status` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DevState {
    /// Administratively up.
    Up,
    /// Present but administratively down.
    Down,
    /// No device of that name (deleted, or renamed away): its port is closed.
    Absent,
}

impl DevState {
    pub fn as_str(self) -> &'static str {
        match self {
            DevState::Up => "up",
            DevState::Down => "down",
            DevState::Absent => "absent",
        }
    }
}

/// One configured device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevStatus {
    pub name: String,
    pub state: DevState,
    /// The kernel's index of the device; that of its last incarnation while absent.
    pub ifindex: u32,
    pub mac: [u8; 6],
    pub mtu: u32,
    /// Times its port was opened again on a new incarnation of the device.
    pub reattached: u64,
}

/// A new port for device `.0` (sr6's index).
pub type PortMail = (usize, Box<dyn Port>);

/// See the module docs.
pub struct Links {
    devs: Mutex<Vec<DevStatus>>,
    epoch: AtomicU64,
    mail: Vec<Mutex<Vec<PortMail>>>,
}

impl Links {
    /// Devices `names` (sr6's order), assumed up until told otherwise, for `workers`.
    pub fn new(names: impl IntoIterator<Item = String>, workers: usize) -> Links {
        let devs = names
            .into_iter()
            .map(|name| DevStatus { name, state: DevState::Up, ifindex: 0, mac: [0; 6], mtu: 0, reattached: 0 })
            .collect();
        Links {
            devs: Mutex::new(devs),
            epoch: AtomicU64::new(0),
            mail: (0..workers).map(|_| Mutex::default()).collect(),
        }
    }

    /// Every device's status, in sr6's order.
    pub fn status(&self) -> Vec<DevStatus> {
        lock(&self.devs).clone()
    }

    /// Changes device `dev`'s status with `f`.
    pub fn update(&self, dev: usize, f: impl FnOnce(&mut DevStatus)) {
        if let Some(d) = lock(&self.devs).get_mut(dev) {
            f(d);
        }
    }

    /// Kernel index -> (sr6 index, name) of the devices present now.
    pub fn dev_map(&self) -> DevMap {
        lock(&self.devs)
            .iter()
            .enumerate()
            .filter(|(_, d)| d.state != DevState::Absent && d.ifindex != 0)
            .map(|(i, d)| (d.ifindex, (i as u16, d.name.clone())))
            .collect()
    }

    /// Hands each worker its port of device `dev` (`ports[w]` to worker `w`); they take
    /// them at their next round.
    pub fn post(&self, dev: usize, ports: Vec<Box<dyn Port>>) {
        for (m, p) in self.mail.iter().zip(ports) {
            lock(m).push((dev, p));
        }
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// Bumped by every [`post`](Self::post).
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Worker `worker`'s new ports, oldest first.
    pub fn take(&self, worker: usize) -> Vec<PortMail> {
        self.mail.get(worker).map(|m| std::mem::take(&mut *lock(m))).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::absent::AbsentPort;

    #[test]
    fn posted_ports_reach_each_worker_once() {
        let l = Links::new(["a".to_string(), "b".to_string()], 2);
        l.update(1, |d| {
            d.ifindex = 7;
            d.state = DevState::Down;
        });
        assert_eq!(l.dev_map().get(&7).map(|x| x.0), Some(1));
        let e = l.epoch();
        l.post(1, vec![Box::new(AbsentPort::new("b")), Box::new(AbsentPort::new("b"))]);
        assert_ne!(l.epoch(), e);
        assert_eq!(l.take(0).iter().map(|m| m.0).collect::<Vec<_>>(), [1]);
        assert!(l.take(0).is_empty());
        assert_eq!(l.take(1).len(), 1);
        assert!(l.take(5).is_empty());
        l.update(1, |d| d.state = DevState::Absent);
        assert!(l.dev_map().is_empty());
    }
}
