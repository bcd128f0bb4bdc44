//! One forwarding worker: its ports (one per device, its own queues), a batch of
//! buffers, the pipeline, and its neighbour-wait queue.
//!
//! The loop: for each port, receive a batch, run the pipeline over it, queue each frame
//! on the port of its output device; then flush every port's transmit ring. Tables are
//! read through one atomic pointer load per round; a new generation is picked up
//! between batches, so a swap never loses or splits a batch. When no port had anything
//! for a while, the worker sleeps in `poll(2)` on the ports' descriptors (at most
//! [`IDLE_POLL_MS`], so it notices stop requests; new tables wake it at once). With
//! `--overload-priority`, each round ends with the overload guard's look at the
//! receive rings (`overload.rs`).

use std::collections::{HashMap, VecDeque};
use std::os::fd::RawFd;
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

use sr6_core::counters::Counters;
use sr6_core::firewall::{Firewall, Listed};
use sr6_core::packet::{DevId, PacketBuf, Verdict};
use sr6_core::pipeline::Worker;
use sr6_core::tables::Tables;
use sr6_io::live::{now_ns, pin_to_cpu, poll_readable, Port, PortStats};

use super::overload::{Level, OverloadGuard};
use super::pending::Pending;
use super::state::{lock, Generation, Shared};

/// Longest sleep in poll(2) when idle.
pub const IDLE_POLL_MS: i32 = 20;
/// Empty rounds before sleeping (a short busy-wait keeps latency low under load).
const SPIN_ROUNDS: u32 = 64;
/// Packets the neighbour-wait queue holds per worker.
pub const PENDING_CAPACITY: usize = 256;

/// A request to resolve a neighbour: (device index, neighbour key).
pub type ResolveRequest = (DevId, u128);

/// What a worker needs besides its ports.
pub struct WorkerCtx {
    pub id: usize,
    pub shared: Arc<Shared>,
    pub batch: usize,
    /// Resolution requests to the control side (bounded; a full channel drops the
    /// request, which is repeated on the next retry).
    pub resolve: SyncSender<ResolveRequest>,
    /// Pin the thread to this CPU.
    pub cpu: Option<usize>,
    /// The overload guard (off unless `--overload-priority`).
    pub overload: OverloadGuard,
    /// The IDS's alerts to the writer thread (bounded; a full queue counts the alert
    /// lost).
    pub alerts: SyncSender<super::ids::AlertMsg>,
}

/// Runs until [`Shared::stopping`]. `ports[d]` is the port of device `d`.
pub fn run(ctx: WorkerCtx, mut ports: Vec<Box<dyn Port>>) {
    if let Some(cpu) = ctx.cpu {
        if let Err(e) = pin_to_cpu(cpu) {
            eprintln!("sr6: warning: worker {}: cannot pin to CPU {cpu}: {e}", ctx.id);
        }
    }
    sr6_core::behaviour::end_bpf::set_cpu(u32::try_from(ctx.id).unwrap_or(u32::MAX));
    let shared = ctx.shared.clone();
    let mut gen: Arc<Generation> = shared.gen.load_full();
    let mut w = Worker::new(&gen.tables);
    {
        // The generation this worker counts for: the one published last, which need not
        // be the one the slot was made with (readers sum only the current one's).
        let mut slot = lock(&shared.workers[ctx.id]);
        slot.gen = gen.clone();
        slot.counters = w.counters.clone();
    }
    let mut bufs: Vec<PacketBuf> = (0..ctx.batch.max(1)).map(|_| PacketBuf::new()).collect();
    let mut pending = Pending::new(PENDING_CAPACITY);
    let fds: Vec<RawFd> = ports.iter().map(|p| p.fd()).collect();
    let mut baseline: Vec<PortStats> = ports.iter().map(|p| p.stats()).collect();
    // The counts of ports this worker replaced (a device deleted and re-created), by
    // device: what it publishes is these plus the current port's since its baseline.
    let mut carried: Vec<PortStats> = vec![PortStats::default(); ports.len()];
    let mut port_epoch = shared.links.epoch();
    let mut clear_seen = shared.clear_epoch();
    let mut fw_zero_seen = shared.fw_zero_epoch();
    let mut idle: u32 = 0;
    let mut last_retry = now_ns();
    let mut tx_no_port: u64 = 0;
    // Per port: whether its last flush failed (reported once per episode).
    let mut tx_failing: Vec<bool> = vec![false; ports.len()];
    let mut last_publish = 0u64;
    let mut unpublished = false;
    // The XDP tier takes SRHs whose HMAC this worker verified: they are handed to it
    // after each batch (`sr6_core::hmac::drain_verified`).
    let hmac_export = lock(&shared.fast).as_ref().and_then(|f| f.hmac_export().ok());
    sr6_core::hmac::export_verified(hmac_export.is_some());
    let mut guard = ctx.overload;
    guard.start();
    let mut guard_base = guard.stats(0);
    let mut pfds: Vec<libc::pollfd> =
        fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    // After the ports' (indexed by device): new tables wake the worker.
    let wake = shared.wake.get(ctx.id).and_then(Option::as_ref);
    if let Some(w) = wake {
        pfds.push(libc::pollfd { fd: w.fd(), events: libc::POLLIN, revents: 0 });
    }

    // What a `clear-counters` (clear epoch `epoch`, seen at time `now`) resets: the
    // worker's counters, the neighbour queue's, and the port and overload baselines.
    // An `ip6tables -Z` (epoch `epoch`): the firewall counters it names, if it was
    // for this worker's generation.
    macro_rules! zero_firewall {
        ($epoch:expr) => {{
            fw_zero_seen = $epoch;
            let z = lock(&shared.fw_zero);
            if z.gen == gen.id {
                z.apply(&mut w.counters.firewall);
            }
        }};
    }

    macro_rules! forget_counts {
        ($epoch:expr, $now:expr) => {{
            clear_seen = $epoch;
            w.counters.clear();
            pending.stats = Default::default();
            tx_no_port = 0;
            baseline = ports.iter().map(|p| p.stats()).collect();
            carried.iter_mut().for_each(|c| *c = PortStats::default());
            guard_base = guard.stats($now);
        }};
    }

    while !shared.stopping() {
        // A new generation: fold the old counters under stable keys, reshape, and
        // retry the packets waiting for a neighbour against the new tables.
        let cur = shared.gen.load();
        if cur.id != gen.id {
            let next = arc_swap::Guard::into_inner(cur);
            {
                // Under the lock `clear_counters` bumps the epoch with: counters from
                // before a clear are not carried over.
                let mut r = lock(&shared.retired);
                if shared.clear_epoch() == clear_seen {
                    r.absorb(&gen.tables, &w.counters);
                }
            }
            // Reshaped in place: a generation a batch of route changes must not cost
            // the worker its counters' memory (freed and faulted in again).
            let (firewall, ids) = (std::mem::take(&mut w.counters.firewall), w.counters.ids);
            w.renew(&next.tables);
            carry_unchanged(&gen.tables, &next.tables, &firewall, ids, &mut w.counters);
            gen = next;
            {
                let mut slot = lock(&shared.workers[ctx.id]);
                slot.gen = gen.clone();
                slot.counters.clone_from(&w.counters);
            }
            if !pending.is_empty() {
                pending.retry(&gen.tables, now_ns(), |d, f| send(&mut ports, d, f, &mut tx_no_port));
            }
        }

        // A device's new port (re-attached, or a stand-in while the device is absent):
        // one atomic load per round; the old port's counts are carried.
        let epoch = shared.links.epoch();
        if epoch != port_epoch {
            port_epoch = epoch;
            for (d, p) in shared.links.take(ctx.id) {
                let (Some(slot), Some(b), Some(c), Some(pfd)) =
                    (ports.get_mut(d), baseline.get_mut(d), carried.get_mut(d), pfds.get_mut(d))
                else {
                    continue;
                };
                let old = std::mem::replace(slot, p);
                if let Some(f) = tx_failing.get_mut(d) {
                    *f = false;
                }
                c.add(&old.stats().since(b));
                *b = slot.stats();
                pfd.fd = slot.fd();
            }
            unpublished = true;
        }

        // A `clear-counters`: forget what was counted before it now, before this round's
        // frames are counted. (Noticed only at the next publication, it would take the
        // first batch after an idle spell with it.) A clear during the round is seen
        // when the round publishes, below.
        let epoch = shared.clear_epoch();
        if epoch != clear_seen {
            forget_counts!(epoch, now_ns());
            unpublished = true;
        }
        let epoch = shared.fw_zero_epoch();
        if epoch != fw_zero_seen {
            zero_firewall!(epoch);
            unpublished = true;
        }

        let mut busy = false;
        for i in 0..ports.len() {
            let n = match ports[i].rx_burst(&mut bufs) {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("sr6: worker {}: receive on {}: {e}", ctx.id, ports[i].ifname());
                    0
                }
            };
            if n == 0 {
                continue;
            }
            busy = true;
            // `ports[i]` is device i's port.
            w.process_batch(&gen.tables, i as DevId, &mut bufs[..n]);
            if let Some(x) = &hmac_export {
                // (A failed update leaves the text to the general path, as before.)
                sr6_core::hmac::drain_verified(|v| {
                    let _ = x.insert(v);
                });
            }
            if !w.ids.alerts.is_empty() {
                let mut lost = 0;
                for a in w.ids.alerts.drain() {
                    lost += u64::from(ctx.alerts.try_send((gen.clone(), a)).is_err());
                }
                w.counters.ids.alerts_lost += lost;
            }
            // Each frame the batch leaves, a fragmented packet's fragments in its place.
            for o in w.extra.outputs(&bufs[..n]) {
                match o.verdict {
                    Verdict::Tx(d) => send(&mut ports, d, o.data, &mut tx_no_port),
                    Verdict::Resolve(d) => {
                        if pending.push(d, o.nh_key, o.data, w.now_ns) {
                            let _ = ctx.resolve.try_send((d, o.nh_key));
                        }
                    }
                    // Local: the kernel has its own copy (AF_PACKET) or the XDP program
                    // passed host traffic to it (AF_XDP); counted by the pipeline.
                    Verdict::Local | Verdict::Drop(_) | Verdict::Pending | Verdict::Fragmented => {}
                }
            }
        }
        for (p, failing) in ports.iter_mut().zip(tx_failing.iter_mut()) {
            match p.tx_flush() {
                Ok(()) => *failing = false,
                Err(e) if !*failing => {
                    *failing = true;
                    eprintln!("sr6: worker {}: {}", ctx.id, tx_error_message(p.ifname(), &e));
                }
                Err(_) => {}
            }
        }
        if guard.enabled() {
            let level = ports.iter_mut().filter_map(|p| p.rx_backlog()).map(|(w, c)| Level::of(w, c)).max();
            guard.update(level.unwrap_or(Level::Low), now_ns());
        }

        // Waiting packets: expire them, and ask again for their neighbours.
        if !pending.is_empty() {
            let now = now_ns();
            if now.saturating_sub(last_retry) > 500_000_000 {
                last_retry = now;
                pending.retry(&gen.tables, now, |d, f| send(&mut ports, d, f, &mut tx_no_port));
                for r in pending.awaited() {
                    let _ = ctx.resolve.try_send(r);
                }
            }
        }

        // Publish counters (own lock: uncontended but for a reader), at most every
        // millisecond under load: copying them per batch would cost more than the
        // batch with a large SID table. When the ports fall idle, once more at once
        // (a reader then sees every packet), but not on every idle round: the port
        // statistics are a system call each.
        unpublished |= busy;
        let now = now_ns();
        if (!busy && unpublished) || now.saturating_sub(last_publish) > 1_000_000 {
            last_publish = now;
            unpublished = false;
            let mut slot = lock(&shared.workers[ctx.id]);
            // Checked under the slot lock, which `clear_counters` takes after bumping
            // the epoch: either we see the bump, or it clears what we publish now.
            let epoch = shared.clear_epoch();
            if epoch != clear_seen {
                forget_counts!(epoch, now);
            }
            let epoch = shared.fw_zero_epoch();
            if epoch != fw_zero_seen {
                zero_firewall!(epoch);
            }
            slot.counters.clone_from(&w.counters);
            for (i, p) in ports.iter().enumerate() {
                if let Some(s) = slot.ports.get_mut(i) {
                    *s = minus(p.stats(), baseline[i]);
                    s.add(&carried[i]);
                }
            }
            slot.pending = pending.stats;
            slot.tx_no_port = tx_no_port;
            slot.overload = guard.stats(now).since(guard_base);
        }

        if busy {
            idle = 0;
        } else {
            idle += 1;
            if idle > SPIN_ROUNDS {
                guard.asleep(true);
                poll_readable(&mut pfds, IDLE_POLL_MS);
                if let Some(w) = wake {
                    w.clear();
                }
                guard.asleep(false);
            } else {
                // Nothing received: let whatever else is runnable on this CPU go first.
                // When the kernel's receive work for our devices (generic XDP after
                // RPS, ksoftirqd) shares the CPU, it is what fills our rings; spinning
                // through its time slice would only delay the packets.
                std::thread::yield_now();
            }
        }
    }
    for p in ports.iter_mut() {
        let _ = p.tx_flush();
    }
    guard.release(now_ns());
}

/// Keeps the firewall's and the IDS's counters across a new generation: tables are
/// rebuilt for changes that do not touch them (a neighbour learnt, a route added), and
/// their counts must not restart then. A firewall whose rules changed keeps, as
/// ip6tables does, the counts of each rule it still has (the same chain, matches and
/// target, the k-th of equal rules matched to the k-th) and of each built-in chain's
/// policy; a new rule starts at zero. (The SIDs' and devices' counters are folded into
/// [`super::state::Retired`] under stable keys instead.)
fn carry_unchanged(old: &Tables, new: &Tables, firewall: &[u64], ids: sr6_core::ids::IdsCounters, to: &mut Counters) {
    if let (Some(a), Some(b)) = (&old.firewall, &new.firewall) {
        if a.spec == b.spec && firewall.len() == to.firewall.len() {
            to.firewall.copy_from_slice(firewall);
        } else {
            carry_rules(a, b, firewall, &mut to.firewall);
        }
    }
    if let (Some(a), Some(b)) = (&old.ids, &new.ids) {
        if a.spec == b.spec {
            to.ids = ids;
        }
    }
}

/// [`carry_unchanged`] for a firewall whose rules changed: each rule's and policy's
/// counters to the same rule or policy of the new rule set.
fn carry_rules(a: &Firewall, b: &Firewall, from: &[u64], to: &mut [u64]) {
    // A rule by chain and text (its nft source for an nft rule); a policy by chain.
    let key = |l: &Listed| match l.rule {
        Some(r) => (l.chain.to_string(), Some(r.nft.clone().unwrap_or_else(|| format!("{}{}", r.m, r.target)))),
        None => (l.chain.to_string(), None),
    };
    let mut old: HashMap<_, VecDeque<usize>> = HashMap::new();
    for l in a.list() {
        old.entry(key(&l)).or_default().push_back(l.counter);
    }
    for l in b.list() {
        let Some(i) = old.get_mut(&key(&l)).and_then(VecDeque::pop_front) else { continue };
        if let (Some(src), Some(dst)) = (from.get(2 * i..2 * i + 2), to.get_mut(2 * l.counter..2 * l.counter + 2)) {
            dst.copy_from_slice(src);
        }
    }
}

#[inline]
fn send(ports: &mut [Box<dyn Port>], dev: DevId, frame: &[u8], no_port: &mut u64) {
    match ports.get_mut(dev as usize) {
        // A full ring is counted by the port.
        Some(p) => {
            let _ = p.tx_queue(frame);
        }
        None => *no_port += 1,
    }
}

/// What a failed flush on `ifname` means, for the log. A device that went down or is
/// being deleted (the link monitor then closes or re-attaches its port) fails the
/// flush with one of three errors; the frames are dropped and counted by the port.
fn tx_error_message(ifname: &str, e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENETDOWN | libc::ENXIO | libc::ENODEV) => {
            format!("transmit on {ifname}: the device is down or going away ({e}); its queued frames are dropped")
        }
        _ => format!("transmit on {ifname}: {e}"),
    }
}

fn minus(a: PortStats, b: PortStats) -> PortStats {
    a.since(&b)
}

#[cfg(test)]
mod tests {
    use super::tx_error_message;

    #[test]
    fn a_vanishing_device_is_named_as_such() {
        let gone = std::io::Error::from_raw_os_error(libc::ENXIO);
        let m = tx_error_message("r-b", &gone);
        assert!(m.starts_with("transmit on r-b: the device is down or going away"), "{m}");
        let other = std::io::Error::from_raw_os_error(libc::EMSGSIZE);
        let m = tx_error_message("r-b", &other);
        assert!(!m.contains("going away") && m.starts_with("transmit on r-b: "), "{m}");
    }
}
