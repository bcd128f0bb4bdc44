//! Alerts as the data plane records them: plain values, no text (the rule's message
//! is found by its index when the alert is written out), kept in each worker's
//! [`Alerts`] — a vector allocated once with a fixed capacity — until the caller takes
//! them after the batch (`sr6 pcap`, the live workers: docs/ids.md). An alert that
//! does not fit is counted (`alerts_lost`), never waited for.

use std::net::{IpAddr, Ipv6Addr};

use super::rule::Action;
use crate::firewall::Hook;

/// How many alerts one worker holds between two drains.
pub const CAPACITY: usize = 1024;

/// One alert: a rule matched a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alert {
    /// The packet's receive timestamp (ns: the pcap timestamp offline, the clock live).
    pub time_ns: u64,
    /// The rule's index in the rule set, its `sid` and `rev`.
    pub rule: u32,
    pub sid: u32,
    pub rev: u32,
    /// What was done: `Drop` (IPS mode, a `drop` rule) or `Alert`.
    pub action: Action,
    pub hook: Hook,
    /// The inspected (inner) packet: protocol, addresses, ports.
    pub proto: Option<u8>,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub ports: Option<(u16, u16)>,
    /// The packet as received: its IPv6 source and destination.
    pub outer: (Ipv6Addr, Ipv6Addr),
    /// SRv6 traffic: the active SID.
    pub active_sid: Option<Ipv6Addr>,
}

/// A worker's alerts since the last drain.
#[derive(Debug, Clone, Default)]
pub struct Alerts {
    list: Vec<Alert>,
}

impl Alerts {
    /// Room for [`CAPACITY`] alerts when `on` (an IDS is configured), none otherwise.
    pub fn new(on: bool) -> Alerts {
        Alerts { list: Vec::with_capacity(if on { CAPACITY } else { 0 }) }
    }
    /// Keeps `a` if there is room; false when full.
    pub fn push(&mut self, a: Alert) -> bool {
        if self.list.len() < self.list.capacity() {
            self.list.push(a);
            true
        } else {
            false
        }
    }
    /// Takes every alert held (the capacity stays).
    pub fn drain(&mut self) -> std::vec::Drain<'_, Alert> {
        self.list.drain(..)
    }
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    pub fn clear(&mut self) {
        self.list.clear();
    }
}
