//! What the workers and the control side share: the current tables (one atomic pointer,
//! swapped whole), each worker's counters, and the counters of retired table
//! generations.
//!
//! Counters are per worker (DESIGN.md: "counters per worker, summed on read"). A worker
//! locks only its own slot, once per round of batches, so the lock is uncontended but
//! for the rare reader. SID indices change when tables are rebuilt (a `route add`), so
//! when a worker moves to a new generation it folds its counters, keyed by SID prefix
//! and behaviour, into [`Retired`]; readers add the two.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;
use sr6_core::counters::{Counters, SidCounter};
use sr6_core::drop::DropReason;
use sr6_core::spec::Prefix;
use sr6_core::tables::Tables;
use sr6_io::live::PortStats;

use super::overload::OverloadStats;

/// One immutable set of tables and its generation number.
#[derive(Debug)]
pub struct Generation {
    pub id: u64,
    pub tables: Tables,
}

/// Counters of the neighbour-resolution queue of one worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PendingStats {
    /// Packets queued while their next hop was resolved.
    pub queued: u64,
    /// Queued packets sent once the neighbour was known.
    pub sent: u64,
    /// Packets refused because the queue was full.
    pub overflow: u64,
    /// Queued packets dropped because resolution did not finish in time.
    pub timeout: u64,
}

/// One worker's published state.
#[derive(Debug)]
pub struct WorkerSlot {
    /// The generation `counters` is shaped for.
    pub gen: Arc<Generation>,
    pub counters: Counters,
    /// By device index of `gen`'s tables (the list of devices never changes while
    /// running; a device's port may be replaced, its counts carried over).
    pub ports: Vec<PortStats>,
    pub pending: PendingStats,
    /// Frames whose output device has no port (cannot happen: a device that vanished
    /// keeps a stand-in port, which counts them in `PortStats::tx_absent`).
    pub tx_no_port: u64,
    pub overload: OverloadStats,
}

/// Counters of table generations no longer in use, by stable keys.
#[derive(Debug, Clone)]
pub struct Retired {
    pub rx: u64,
    pub local: u64,
    pub unresolved: u64,
    pub icmp_sent: u64,
    pub icmp_ratelimited: u64,
    pub icmp_suppressed: u64,
    pub fragmented: u64,
    pub fragments: u64,
    pub tx: BTreeMap<String, u64>,
    pub drops: [u64; DropReason::COUNT],
    pub sids: BTreeMap<SidKey, SidCounter>,
}

/// A SID's identity across table rebuilds: its prefix and behaviour keyword.
pub type SidKey = (PrefixKey, &'static str);

/// [`Prefix`] with an order (for the maps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PrefixKey(pub u8, pub u128, pub u8);

impl From<&Prefix> for PrefixKey {
    fn from(p: &Prefix) -> Self {
        match *p {
            Prefix::V6(a, l) => PrefixKey(6, u128::from(a), l),
            Prefix::V4(a, l) => PrefixKey(4, u128::from(u32::from(a)), l),
        }
    }
}

impl Default for Retired {
    // By hand: `[u64; N]` has no `Default` past 32 elements.
    fn default() -> Self {
        Retired {
            rx: 0,
            local: 0,
            unresolved: 0,
            icmp_sent: 0,
            icmp_ratelimited: 0,
            icmp_suppressed: 0,
            fragmented: 0,
            fragments: 0,
            tx: BTreeMap::new(),
            drops: [0; DropReason::COUNT],
            sids: BTreeMap::new(),
        }
    }
}

impl Retired {
    /// Adds the counters `c` of a worker that used `t`.
    pub fn absorb(&mut self, t: &Tables, c: &Counters) {
        self.rx += c.rx;
        self.local += c.local;
        self.unresolved += c.unresolved;
        self.icmp_sent += c.icmp_sent;
        self.icmp_ratelimited += c.icmp_ratelimited;
        self.icmp_suppressed += c.icmp_suppressed;
        self.fragmented += c.fragmented;
        self.fragments += c.fragments;
        for (d, n) in t.devices.iter().zip(&c.tx) {
            *self.tx.entry(d.name.clone()).or_default() += n;
        }
        for (a, b) in self.drops.iter_mut().zip(&c.drops) {
            *a += b;
        }
        for (s, k) in t.sids.iter().zip(c.sids.iter()) {
            let e = self.sids.entry((PrefixKey::from(&s.prefix), s.behaviour.keyword)).or_default();
            e.packets += k.packets;
            e.frame_bytes += k.frame_bytes;
            e.errors += k.errors;
        }
    }

    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// The firewall counters the last `ip6tables -Z` zeroed: indices into the counters of
/// generation `gen`'s firewall (a generation that kept the same rules carries its
/// counts, see `worker::carry_unchanged`, and is zeroed the same).
#[derive(Debug, Clone, Default)]
pub struct FwZero {
    pub gen: u64,
    pub counters: Vec<usize>,
}

impl FwZero {
    /// Zeroes the packets and bytes of each counter named in `fw` (pairs, as
    /// `Counters::firewall`).
    pub fn apply(&self, fw: &mut [u64]) {
        for &i in &self.counters {
            if let Some(pair) = fw.get_mut(2 * i..2 * i + 2) {
                pair.fill(0);
            }
        }
    }
}

/// Everything shared between the workers and the control side.
pub struct Shared {
    pub gen: ArcSwap<Generation>,
    next_gen: AtomicU64,
    pub workers: Vec<Mutex<WorkerSlot>>,
    pub retired: Mutex<Retired>,
    pub stop: Arc<AtomicBool>,
    /// Bumped by [`Shared::clear_counters`]; each worker zeroes its own counters when
    /// it sees a new value.
    clear_epoch: AtomicU64,
    /// `ip6tables -Z`: bumped by [`Shared::zero_firewall`]; each worker zeroes the
    /// counters [`Shared::fw_zero`] names when it sees a new value.
    fw_zero_epoch: AtomicU64,
    pub fw_zero: Mutex<FwZero>,
    /// The IDS's most recent alerts ([`super::ids`]).
    pub ids_recent: Arc<super::ids::Recent>,
    /// The devices' states and the workers' port mailbox ([`super::link_state`]).
    pub links: super::link_state::Links,
    /// The XDP tier, when it runs ([`super::fast_tier`]): kept equal to each
    /// generation published, its counters merged into [`Shared::totals`].
    pub fast: Mutex<Option<super::fast_tier::FastTier>>,
    /// Per worker, woken at each publication: an idle worker asleep in poll(2) takes
    /// the new generation at once and lets go of the one it replaced, which the next
    /// route change then reuses ([`super::in_place`]) without waiting for the sleep
    /// to end. `None` if no eventfd could be had (the sleep then ends on its own).
    pub wake: Vec<Option<sr6_io::live::Wake>>,
}

/// Locks a mutex even if a thread panicked while holding it: counters stay readable.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Shared state for `workers` workers starting on `tables`.
    pub fn new(tables: Tables, workers: usize, stop: Arc<AtomicBool>) -> Shared {
        let g = Arc::new(Generation { id: 0, tables });
        let links = super::link_state::Links::new(g.tables.devices.iter().map(|d| d.name.clone()), workers);
        let slots = (0..workers)
            .map(|_| {
                Mutex::new(WorkerSlot {
                    counters: sr6_core::pipeline::Worker::new(&g.tables).counters,
                    ports: vec![PortStats::default(); g.tables.devices.len()],
                    gen: g.clone(),
                    pending: PendingStats::default(),
                    tx_no_port: 0,
                    overload: OverloadStats::default(),
                })
            })
            .collect();
        Shared {
            gen: ArcSwap::new(g),
            next_gen: AtomicU64::new(1),
            workers: slots,
            retired: Mutex::new(Retired::default()),
            stop,
            clear_epoch: AtomicU64::new(0),
            fw_zero_epoch: AtomicU64::new(0),
            fw_zero: Mutex::default(),
            ids_recent: Arc::default(),
            links,
            fast: Mutex::new(None),
            wake: (0..workers).map(|_| sr6_io::live::Wake::new().ok()).collect(),
        }
    }

    /// Wakes the workers asleep in poll(2) ([`Shared::wake`]).
    fn wake_workers(&self) {
        for w in self.wake.iter().flatten() {
            w.wake();
        }
    }

    /// Makes `tables` current; workers pick them up at their next batch. Returns the
    /// new generation number.
    /// The SR proxies that the new tables keep take over their caches and counters, and
    /// the End.Limit SIDs their token buckets.
    pub fn publish(&self, mut tables: Tables) -> u64 {
        tables.adopt_proxies(&self.gen.load().tables);
        tables.adopt_limiters(&self.gen.load().tables);
        let id = self.next_gen.fetch_add(1, Ordering::Relaxed);
        self.gen.store(Arc::new(Generation { id, tables }));
        self.sync_fast(None);
        self.wake_workers();
        id
    }

    /// Brings the XDP tier's maps to the current generation; `routes`: it differs from
    /// the last one by the routes of these prefixes alone (kernel table id, prefix).
    fn sync_fast(&self, routes: Option<&[(u32, Prefix)]>) {
        if let Some(f) = lock(&self.fast).as_mut() {
            let g = self.gen.load();
            match routes {
                Some(r) => f.sync_routes(&g.tables, r),
                None => f.sync(&g.tables),
            }
        }
    }

    /// [`publish`](Self::publish), returning also the generation replaced (still read by
    /// the workers until each picks up the new one). `routes`, if known: the prefixes
    /// whose routes alone the new tables change (the XDP tier then compares only those).
    pub fn publish_swap(&self, mut tables: Tables, routes: Option<&[(u32, Prefix)]>) -> (u64, Arc<Generation>) {
        tables.adopt_proxies(&self.gen.load().tables);
        tables.adopt_limiters(&self.gen.load().tables);
        let id = self.next_gen.fetch_add(1, Ordering::Relaxed);
        let old = self.gen.swap(Arc::new(Generation { id, tables }));
        self.sync_fast(routes);
        self.wake_workers();
        (id, old)
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// All counters so far, keyed so they can be shown against the current tables.
    pub fn totals(&self) -> Retired {
        let mut r = lock(&self.retired).clone();
        for w in &self.workers {
            let s = lock(w);
            r.absorb(&s.gen.tables, &s.counters);
        }
        if let Some(f) = lock(&self.fast).as_ref() {
            f.add_to(&self.gen.load().tables, &mut r);
        }
        r
    }

    /// Port and neighbour-queue counters summed over the workers, by device index.
    pub fn port_totals(&self) -> (Vec<PortStats>, PendingStats, u64) {
        let mut ports: Vec<PortStats> = Vec::new();
        let mut pend = PendingStats::default();
        let mut no_port = 0;
        for w in &self.workers {
            let s = lock(w);
            if ports.len() < s.ports.len() {
                ports.resize(s.ports.len(), PortStats::default());
            }
            for (a, b) in ports.iter_mut().zip(&s.ports) {
                a.add(b);
            }
            pend.queued += s.pending.queued;
            pend.sent += s.pending.sent;
            pend.overflow += s.pending.overflow;
            pend.timeout += s.pending.timeout;
            no_port += s.tx_no_port;
        }
        if let Some(f) = lock(&self.fast).as_ref() {
            let counts = f.device_counts(&self.gen.load().tables);
            if ports.len() < counts.len() {
                ports.resize(counts.len(), PortStats::default());
            }
            for (p, (rx, tx)) in ports.iter_mut().zip(counts) {
                p.rx += rx;
                p.tx += tx;
            }
        }
        (ports, pend, no_port)
    }

    /// Zeroes every counter. Each worker zeroes its own at its next round (within
    /// [`super::worker::IDLE_POLL_MS`] when idle); the published copies are zeroed now.
    pub fn clear_counters(&self) {
        {
            let mut r = lock(&self.retired);
            *r = Retired::default();
            self.clear_epoch.fetch_add(1, Ordering::SeqCst);
        }
        for w in &self.workers {
            let mut s = lock(w);
            s.counters.clear();
            s.ports.iter_mut().for_each(|p| *p = PortStats::default());
            s.pending = PendingStats::default();
            s.tx_no_port = 0;
            s.overload = OverloadStats::default();
        }
        for p in &self.gen.load().tables.proxies {
            p.state.counters.clear();
        }
        if let Some(f) = lock(&self.fast).as_mut() {
            f.clear(&self.gen.load().tables);
        }
    }

    /// The overload guards' counts, summed over the workers.
    pub fn overload_totals(&self) -> OverloadStats {
        let mut t = OverloadStats::default();
        for w in &self.workers {
            let s = lock(w);
            t.raised += s.overload.raised;
            t.raised_ns += s.overload.raised_ns;
        }
        t
    }

    /// `ip6tables -Z`: zeroes the firewall counters `counters` (rules' and policies'
    /// counter indices, [`sr6_core::firewall::Firewall::list`]) of generation `gen`.
    /// As [`clear_counters`](Self::clear_counters): the published copies now, each
    /// worker its own at its next round.
    pub fn zero_firewall(&self, gen: u64, counters: Vec<usize>) {
        {
            let mut z = lock(&self.fw_zero);
            z.gen = gen;
            z.counters = counters;
            self.fw_zero_epoch.fetch_add(1, Ordering::SeqCst);
        }
        let z = lock(&self.fw_zero).clone();
        for w in &self.workers {
            let mut s = lock(w);
            if s.gen.id == z.gen {
                z.apply(&mut s.counters.firewall);
            }
        }
    }

    pub fn fw_zero_epoch(&self) -> u64 {
        self.fw_zero_epoch.load(Ordering::SeqCst)
    }

    pub fn clear_epoch(&self) -> u64 {
        self.clear_epoch.load(Ordering::SeqCst)
    }
}
