//! The XDP tier of `sr6 run` (`--fast-path xdp`, the default with AF_XDP): on each
//! device, in place of the AF_XDP tier's program, sr6-xdp's (crates/xdp/c/fast.c),
//! which forwards the hot cases (docs/xdp.md: transit, End, End.X, End.T, PSP, the
//! decapsulating SIDs, head-end policies, SRHs with an HMAC the general path verified)
//! in the kernel's receive path and hands everything else to the AF_XDP sockets as
//! before. This module keeps
//! its maps equal to the published tables ([`FastTier::sync`], called by
//! [`super::state::Shared::publish`]), knows which devices run it and which it may send
//! to, and merges its per-CPU counters into sr6's ([`FastTier::add_to`]).
//!
//! A device can be sent to from XDP when its driver takes redirected frames: a
//! physical device with sr6's program attached does; a veth only when its peer runs
//! NAPI (an XDP program on the peer, or GRO on: `sr6_io::veth`). Routes out of any
//! other device stay with the general path, and `show status` says why.

use std::collections::BTreeMap;
use std::io;

use sr6_core::counters::SidCounter;
use sr6_core::spec::Prefix;
use sr6_core::tables::Tables;
use sr6_io::af_xdp::Program;
use sr6_xdp::{Mirror, TierCounts};

use super::state::{PrefixKey, Retired, SidKey};

/// Packets and bytes by SID.
type SidCounts = BTreeMap<SidKey, (u64, u64)>;

/// `--fast-path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FastPathChoice {
    /// The XDP tier on every device where it loads (AF_XDP backend only).
    Xdp,
    /// The AF_XDP tier alone.
    Off,
}

/// The XDP tier's state (see the module docs).
pub struct FastTier {
    mirror: Mirror,
    /// By device: its ifindex while the tier's program is attached to it.
    ifindex: Vec<Option<u32>>,
    /// By device: the XDP mode it runs in ("native", "generic").
    mode: Vec<Option<String>>,
    /// By device: whether the tier may send out of it, and if not why.
    target: Vec<Result<(), String>>,
    /// The last sync's error, if it failed (the tier then hands every frame to sr6).
    error: Option<String>,
    /// By SID index: the SID counted there, and the count there when it became its.
    sid_owner: Vec<Option<(SidKey, (u64, u64))>>,
    /// What SIDs counted at indices they have left.
    sid_done: BTreeMap<SidKey, (u64, u64)>,
    /// The counts at the last `clear-counters` (by SID key; by device).
    cleared_sids: BTreeMap<SidKey, (u64, u64)>,
    cleared_rx: Vec<(u64, u64)>,
    cleared_tx: Vec<(u64, u64)>,
}

impl FastTier {
    /// The shared maps, for `devices` devices (none attached yet).
    pub fn new(devices: usize) -> io::Result<FastTier> {
        Ok(FastTier {
            mirror: Mirror::new()?,
            ifindex: vec![None; devices],
            mode: vec![None; devices],
            target: vec![Err("not attached".into()); devices],
            error: None,
            sid_owner: Vec::new(),
            sid_done: BTreeMap::new(),
            cleared_sids: BTreeMap::new(),
            cleared_rx: Vec::new(),
            cleared_tx: Vec::new(),
        })
    }

    /// A handle for a worker to hand the HMAC texts it verifies to the tier.
    pub fn hmac_export(&self) -> io::Result<sr6_xdp::HmacExport> {
        self.mirror.hmac_export()
    }

    /// A program to attach to one device.
    pub fn program(&self) -> io::Result<Program> {
        self.mirror.program()
    }

    /// The program is attached to device `dev` (`name`, `ifindex`) in `mode`: frames
    /// received there are the tier's, and it sends there if the device takes
    /// redirected frames.
    pub fn attached(&mut self, t: &Tables, dev: usize, name: &str, ifindex: u32, mode: &str) {
        if dev >= self.ifindex.len() {
            return;
        }
        self.ifindex[dev] = Some(ifindex);
        self.mode[dev] = Some(mode.to_string());
        self.target[dev] = match sr6_io::veth::peer(name) {
            Ok(None) => Ok(()),
            Ok(Some(p)) if p.takes_xdp_redirects() => Ok(()),
            Ok(Some(p)) => Err(format!(
                "its veth peer {}{} runs no NAPI (no XDP program, GRO off), so frames redirected to it \
                 would be lost; the general path sends there (to let the tier: {}ethtool -K {} gro on)",
                p.name,
                p.netns.as_ref().map_or(String::new(), |n| format!(" (namespace {n})")),
                p.netns.as_ref().map_or(String::new(), |n| format!("ip netns exec {n} ")),
                p.name
            )),
            Err(e) => Err(format!("{e}; the general path sends there")),
        };
        self.sync(t);
    }

    /// Device `dev` is gone: nothing is received or sent there by the tier.
    pub fn detached(&mut self, t: &Tables, dev: usize) {
        if dev >= self.ifindex.len() {
            return;
        }
        self.ifindex[dev] = None;
        self.mode[dev] = None;
        self.target[dev] = Err("not attached".into());
        self.sync(t);
    }

    /// Makes the maps hold what `t` says (a generation switch if anything changed).
    /// On an error the tier hands every frame to the general path until a sync
    /// succeeds, and `show status` says why.
    pub fn sync(&mut self, t: &Tables) {
        self.follow_sids(t);
        let target: Vec<bool> = self.target.iter().map(|r| r.is_ok()).collect();
        let r = self.mirror.sync(t, &self.ifindex, &target);
        self.synced(r);
    }

    /// [`sync`](Self::sync) to tables that differ from the last ones synced by the
    /// routes of `routes` alone (kernel table id, prefix): only those prefixes are
    /// compared with the maps ([`Mirror::sync_prefixes`]), not every prefix of the FIB.
    pub fn sync_routes(&mut self, t: &Tables, routes: &[(u32, Prefix)]) {
        let prefixes: Option<Vec<(usize, Prefix)>> =
            routes.iter().map(|&(id, p)| t.fib_of_table(id).map(|f| (f, p))).collect();
        // (After an error the maps are in no state known: all of them again.)
        let (Some(prefixes), None) = (prefixes, &self.error) else { return self.sync(t) };
        self.follow_sids(t);
        let target: Vec<bool> = self.target.iter().map(|r| r.is_ok()).collect();
        let r = self.mirror.sync_prefixes(t, &self.ifindex, &target, &prefixes);
        self.synced(r);
    }

    /// After a sync: on an error the tier hands every frame to the general path until
    /// a sync succeeds, and `show status` says why.
    fn synced(&mut self, r: io::Result<sr6_xdp::SyncStats>) {
        match r {
            Ok(_) => self.error = None,
            Err(e) => {
                let msg = format!("updating the XDP tier's maps: {e}; every frame goes to the AF_XDP tier");
                if self.error.as_deref() != Some(&msg) {
                    eprintln!("sr6: warning: {msg}");
                }
                self.mirror.disable();
                self.error = Some(msg);
            }
        }
    }

    /// Credits the counts of SID indices whose SID changed to the SID that left.
    fn follow_sids(&mut self, t: &Tables) {
        let n = t.sids.len().max(self.sid_owner.len());
        let Ok(c) = self.mirror.counts(n, 0) else { return };
        self.sid_owner.resize(n, None);
        for (i, slot) in self.sid_owner.iter_mut().enumerate() {
            let now = c.sids.get(i).copied().unwrap_or_default();
            let key = t.sids.get(i).map(|s| (PrefixKey::from(&s.prefix), s.behaviour.keyword));
            if slot.as_ref().map(|(k, _)| *k) == key {
                continue;
            }
            if let Some((old, base)) = slot.take() {
                let e = self.sid_done.entry(old).or_default();
                e.0 += now.0.saturating_sub(base.0);
                e.1 += now.1.saturating_sub(base.1);
            }
            *slot = key.map(|k| (k, now));
        }
    }

    /// The tier's counts by SID key and by device, since the start.
    fn counts_raw(&self, t: &Tables) -> Option<(SidCounts, TierCounts)> {
        let c = self.mirror.counts(self.sid_owner.len(), t.devices.len()).ok()?;
        let mut sids = self.sid_done.clone();
        for (i, slot) in self.sid_owner.iter().enumerate() {
            let (Some((k, base)), Some(now)) = (slot, c.sids.get(i)) else { continue };
            let e = sids.entry(*k).or_default();
            e.0 += now.0.saturating_sub(base.0);
            e.1 += now.1.saturating_sub(base.1);
        }
        Some((sids, c))
    }

    /// [`counts_raw`](Self::counts_raw) since the last clear.
    fn counts(&self, t: &Tables) -> Option<(SidCounts, TierCounts)> {
        let (mut sids, c) = self.counts_raw(t)?;
        for (k, v) in sids.iter_mut() {
            if let Some(z) = self.cleared_sids.get(k) {
                v.0 = v.0.saturating_sub(z.0);
                v.1 = v.1.saturating_sub(z.1);
            }
        }
        let minus = |v: &[(u64, u64)], z: &[(u64, u64)]| -> Vec<(u64, u64)> {
            v.iter()
                .enumerate()
                .map(|(i, a)| {
                    let b = z.get(i).copied().unwrap_or_default();
                    (a.0.saturating_sub(b.0), a.1.saturating_sub(b.1))
                })
                .collect()
        };
        let tc =
            TierCounts { sids: Vec::new(), rx: minus(&c.rx, &self.cleared_rx), tx: minus(&c.tx, &self.cleared_tx) };
        Some((sids, tc))
    }

    /// `clear-counters`: what the tier counted so far is no longer shown.
    pub fn clear(&mut self, t: &Tables) {
        if let Some((sids, c)) = self.counts_raw(t) {
            self.cleared_sids = sids;
            self.cleared_rx = c.rx;
            self.cleared_tx = c.tx;
        }
    }

    /// Adds the tier's counts to sr6's: packets received and sent by device, SIDs.
    pub fn add_to(&self, t: &Tables, r: &mut Retired) {
        let Some((sids, c)) = self.counts(t) else { return };
        for (d, (rx, tx)) in t.devices.iter().zip(c.rx.iter().zip(&c.tx)) {
            r.rx += rx.0;
            *r.tx.entry(d.name.clone()).or_default() += tx.0;
        }
        for (k, (p, b)) in sids {
            let e: &mut SidCounter = r.sids.entry(k).or_default();
            e.packets += p;
            e.frame_bytes += b;
        }
    }

    /// By device: packets received and sent by the tier (since the last clear).
    pub fn device_counts(&self, t: &Tables) -> Vec<(u64, u64)> {
        match self.counts(t) {
            Some((_, c)) => c.rx.iter().zip(&c.tx).map(|(a, b)| (a.0, b.0)).collect(),
            None => Vec::new(),
        }
    }

    /// By device, what the tier does there, for `show status`.
    pub fn status(&self, t: &Tables) -> Vec<(String, String)> {
        t.devices
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let s = match (self.ifindex.get(i).copied().flatten(), self.mode.get(i).cloned().flatten()) {
                    _ if self.error.is_some() => format!("af_xdp: {}", self.error.clone().unwrap_or_default()),
                    (Some(_), Some(mode)) => {
                        let rx = if t.offload_device(i as u16) {
                            "receives into the XDP tier".to_string()
                        } else {
                            "receives into the AF_XDP tier (the device's settings: IPv6 forwarding off, an SR \
                             proxy's iif, a firewall or IDS)"
                                .to_string()
                        };
                        let tx = match self.target.get(i) {
                            Some(Ok(())) => "sends from the XDP tier".to_string(),
                            Some(Err(why)) => format!("sends from the AF_XDP tier only: {why}"),
                            None => String::new(),
                        };
                        format!("xdp ({mode}): {rx}; {tx}")
                    }
                    _ => "af_xdp: the XDP tier's program is not attached".to_string(),
                };
                (d.name.clone(), s)
            })
            .collect()
    }
}
