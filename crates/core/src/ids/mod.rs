//! The SR-aware IDS/IPS (SR-Snort, thesis §4.4; docs/ids.md): Snort rules
//! ([`rule`]) run on the inner packet of SRv6 traffic and on plain packets
//! ([`view`]), matched by one multi-pattern automaton ([`engine`]); alerts recorded
//! per worker ([`alert`]).
//!
//! Where: at INPUT (packets to the router's own addresses and SIDs, after the
//! firewall's INPUT chain, before the SID's behaviour) and, when configured, at FORWARD
//! (transit, after the firewall's FORWARD chain). Only the general path runs it: with
//! an IDS the table build turns the fast path off, as the firewall does.
//!
//! Order (Snort's default `pass`, `drop`, `alert`): every rule that can match is
//! checked; if a `pass` rule matches, the packet is neither alerted on nor dropped;
//! otherwise each matching `drop` and `alert` rule raises an alert, and in IPS mode a
//! matching `drop` rule drops the packet (`ids_drop`). In IDS mode a `drop` rule only
//! alerts.

pub mod alert;
pub mod engine;
pub mod rule;
pub mod view;

use crate::drop::DropReason;
use crate::firewall::Hook;
use crate::packet::PacketBuf;
use crate::pipeline::{Next, Worker};
use crate::spec::Line;
use crate::tables::rules::Rules;
use crate::tables::Tables;
use alert::{Alert, Alerts};
use engine::{Engine, Scratch};
use rule::{Action, Rule};

/// IDS (alert, forward) or IPS (`drop` rules drop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Ids,
    Ips,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ids => "ids",
            Mode::Ips => "ips",
        }
    }
}

/// `ids rules FILE [mode ids|ips] [on input|forward|input,forward] [alerts FILE]`.
#[derive(Debug, Clone, PartialEq)]
pub struct IdsSpec {
    pub line: Line,
    /// The rules file as resolved (relative to the configuration file's directory).
    pub file: std::path::PathBuf,
    pub rules: Vec<Rule>,
    pub mode: Mode,
    pub input: bool,
    pub forward: bool,
    /// Where alerts are written as JSON lines, if anywhere.
    pub alerts: Option<std::path::PathBuf>,
}

/// The IDS counters of one worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdsCounters {
    /// Packets inspected (at either point).
    pub inspected: u64,
    /// Alerts raised (each matching `alert`/`drop` rule of a packet).
    pub alerts: u64,
    /// Packets dropped by `drop` rules in IPS mode.
    pub dropped: u64,
    /// Packets a `pass` rule let through uninspected by the others.
    pub passed: u64,
    /// Packets whose inner header does not fit (not inspected, left to the rest of
    /// the pipeline).
    pub malformed: u64,
    /// Alerts not recorded: the worker's alert buffer, or the writer's queue, was full.
    pub alerts_lost: u64,
}

impl IdsCounters {
    pub fn merge(&mut self, o: &IdsCounters) {
        self.inspected += o.inspected;
        self.alerts += o.alerts;
        self.dropped += o.dropped;
        self.passed += o.passed;
        self.malformed += o.malformed;
        self.alerts_lost += o.alerts_lost;
    }
}

/// A worker's IDS state: its scratch memory and the alerts not yet taken.
#[derive(Debug, Clone, Default)]
pub struct WorkerIds {
    pub scratch: Scratch,
    pub alerts: Alerts,
}

impl WorkerIds {
    pub fn new(ids: Option<&Ids>) -> WorkerIds {
        WorkerIds { scratch: Scratch::new(ids.map_or(0, |i| i.spec.rules.len())), alerts: Alerts::new(ids.is_some()) }
    }
}

/// The compiled IDS ([`crate::tables::Tables::ids`]).
#[derive(Debug, Clone)]
pub struct Ids {
    pub spec: IdsSpec,
    pub engine: Engine,
}

impl Ids {
    pub fn build(spec: &IdsSpec) -> Result<Ids, String> {
        Ok(Ids { spec: spec.clone(), engine: Engine::build(&spec.rules)? })
    }

    /// INPUT: inspects a received packet whose route (the main table, through the
    /// rules if there are any) is one of the router's own addresses or a local SID.
    #[cold]
    #[inline(never)]
    pub(crate) fn input6(&self, t: &Tables, w: &mut Worker, p: &PacketBuf) -> Option<Next> {
        if !self.spec.input {
            return None;
        }
        if !Rules::for_host6(t, p.data(), p.in_dev) {
            return None;
        }
        self.inspect(w, p, Hook::Input)
    }

    /// Inspects the IPv6 packet in `p` at `hook`: `None` lets it go on, otherwise it is
    /// dropped (IPS mode). Out of line and cold, as the firewall: without an IDS the
    /// general path pays one test per point.
    #[cold]
    #[inline(never)]
    pub(crate) fn inspect(&self, w: &mut Worker, p: &PacketBuf, hook: Hook) -> Option<Next> {
        let on = match hook {
            Hook::Input => self.spec.input,
            Hook::Forward => self.spec.forward,
        };
        if !on {
            return None;
        }
        let Worker { counters, ids, .. } = w;
        let c = &mut counters.ids;
        c.inspected += 1;
        let Ok(v) = view::of(p.data()) else {
            c.malformed += 1;
            return None;
        };
        if !self.engine.candidates(v.payload, &mut ids.scratch) {
            return None;
        }
        let rules = &self.spec.rules;
        let hits = &ids.scratch.hits;
        let matching = |i: &u32| rules.get(*i as usize).filter(|r| engine::matches(r, &v));
        if hits.iter().filter_map(matching).any(|r| r.action == Action::Pass) {
            c.passed += 1;
            return None;
        }
        let mut drop = false;
        for (i, r) in hits.iter().filter_map(|i| matching(i).map(|r| (*i, r))) {
            let dropped = r.action == Action::Drop && self.spec.mode == Mode::Ips;
            drop |= dropped;
            c.alerts += 1;
            let a = Alert {
                time_ns: p.ts_ns,
                rule: i,
                sid: r.sid,
                rev: r.rev,
                action: if dropped { Action::Drop } else { Action::Alert },
                hook,
                proto: v.proto,
                src: v.src,
                dst: v.dst,
                ports: v.ports,
                outer: v.outer,
                active_sid: v.sid,
            };
            if !ids.alerts.push(a) {
                c.alerts_lost += 1;
            }
        }
        if drop {
            c.dropped += 1;
            return Some(Next::drop(DropReason::IdsDrop));
        }
        None
    }
}

#[cfg(test)]
mod tests;
