//! Events: `bpf_perf_event_output` for skb programs (the kernel's `bpf_skb_event_output`,
//! net/core/filter.c, with `bpf_event_output` and `__bpf_perf_event_output`,
//! kernel/trace/bpf_trace.c) into a `BPF_MAP_TYPE_PERF_EVENT_ARRAY` map
//! (kernel/bpf/arraymap.c).
//!
//! In the kernel each slot of the array holds a perf event opened by a reader (`bpftool
//! map event_pipe` opens slot `i` on CPU `i`), and each perf event has its own ring on
//! its CPU. sr6 keeps one bounded ring per map ([`EventRing`]), always there: an event
//! is the bytes the program gave, then as many bytes of the packet as the upper 32 bits
//! of `flags` ask for, tagged with the CPU (the worker's index), the slot and the
//! packet's time. A full ring drops the event, counts it lost and returns `-ENOSPC`, as
//! the kernel's perf ring does (`perf_output_begin`). A reader drains the ring
//! ([`EventRing::drain`]): `sr6 ctl bpf events`, or `sr6 pcap` after each batch.

use std::collections::VecDeque;

/// `BPF_F_INDEX_MASK`: the slot, in the lower 32 bits of `flags`.
pub const F_INDEX_MASK: u64 = 0xffff_ffff;
/// `BPF_F_CURRENT_CPU`: the slot of the CPU (here: the worker) the program runs on.
pub const F_CURRENT_CPU: u64 = F_INDEX_MASK;
/// `BPF_F_CTXLEN_MASK`: bytes of the packet to append, in bits 32..52 of `flags`.
pub const F_CTXLEN_MASK: u64 = 0xfffff << 32;

// Errno values (negated) of the helper, as the kernel's.
pub const EFAULT: i64 = 14;
pub const E2BIG: i64 = 7;
pub const EINVAL: i64 = 22;
pub const ENOSPC: i64 = 28;
pub const EOPNOTSUPP: i64 = 95;

/// Bytes of ring one map's events share: four times what `bpftool map event_pipe` maps
/// per CPU (16 pages of 4 KiB).
pub const RING_BYTES: usize = 256 << 10;

/// One event as a reader gets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The CPU the program ran on: the worker's index (0 under `sr6 pcap`).
    pub cpu: u32,
    /// The map slot it went to (`flags & BPF_F_INDEX_MASK`, or the CPU).
    pub index: u32,
    /// The packet's time (`bpf_ktime_get_ns`'s clock).
    pub ts_ns: u64,
    /// The program's bytes, then the packet's.
    pub data: Vec<u8>,
}

/// What a drain returns: the events in the order they were emitted, and how many were
/// lost since the previous drain (with the CPU and slot of the last one lost).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Drained {
    pub events: Vec<Event>,
    pub lost: u64,
    pub lost_cpu: u32,
    pub lost_index: u32,
}

/// The bounded ring of one perf event array (see the module docs).
#[derive(Clone, Debug)]
pub struct EventRing {
    events: VecDeque<Event>,
    used: usize,
    capacity: usize,
    lost: u64,
    lost_total: u64,
    lost_at: (u32, u32),
}

impl Default for EventRing {
    fn default() -> Self {
        EventRing::with_capacity(RING_BYTES)
    }
}

/// The bytes an event takes in a perf ring: `perf_event_header` (8), the raw size (4)
/// and the data padded so that size and data end on 8 bytes (`perf_prepare_sample`).
pub fn record_bytes(len: usize) -> usize {
    8usize.saturating_add(len.saturating_add(4).saturating_add(7) & !7)
}

impl EventRing {
    /// A ring of `capacity` bytes of records ([`record_bytes`] each).
    pub fn with_capacity(capacity: usize) -> EventRing {
        EventRing { events: VecDeque::new(), used: 0, capacity, lost: 0, lost_total: 0, lost_at: (0, 0) }
    }

    /// Whether an event of `len` bytes fits; if not, it is counted lost (the kernel's
    /// `perf_output_begin` counts `rb->lost` and fails with `-ENOSPC`).
    pub fn reserve(&mut self, len: usize, cpu: u32, index: u32) -> Result<(), i64> {
        if self.used.saturating_add(record_bytes(len)) > self.capacity {
            self.lost += 1;
            self.lost_total += 1;
            self.lost_at = (cpu, index);
            return Err(-ENOSPC);
        }
        Ok(())
    }

    /// Appends an event; `-ENOSPC` (counted lost) if it does not fit.
    pub fn push(&mut self, ev: Event) -> i64 {
        if let Err(e) = self.reserve(ev.data.len(), ev.cpu, ev.index) {
            return e;
        }
        self.used += record_bytes(ev.data.len());
        self.events.push_back(ev);
        0
    }

    /// Takes every event and the count lost since the last drain.
    pub fn drain(&mut self) -> Drained {
        self.drain_max(usize::MAX)
    }

    /// Takes the `max` oldest events (the rest wait for the next drain) and the count
    /// lost since the last drain.
    pub fn drain_max(&mut self, max: usize) -> Drained {
        let n = max.min(self.events.len());
        let events: Vec<Event> = self.events.drain(..n).collect();
        self.used = self.used.saturating_sub(events.iter().map(|e| record_bytes(e.data.len())).sum());
        let d = Drained { events, lost: self.lost, lost_cpu: self.lost_at.0, lost_index: self.lost_at.1 };
        self.lost = 0;
        d
    }

    /// The events waiting, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = &Event> {
        self.events.iter()
    }

    /// Events lost since the ring was made.
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }
}

/// The slot an event goes to and the packet bytes it takes, or the helper's error:
/// `bpf_skb_event_output`'s checks of `flags` (`-EINVAL` for bits outside the index and
/// length masks, `-EFAULT` for more packet bytes than the packet has), then
/// `__bpf_perf_event_output`'s (`BPF_F_CURRENT_CPU` becomes the CPU; a slot past
/// `max_entries`: `-E2BIG`; a slot whose reader is on another CPU: `-EOPNOTSUPP` — sr6's
/// reader has slot `i` on CPU `i`, as `bpftool map event_pipe` opens them).
pub fn check_flags(flags: u64, max_entries: u32, cpu: u32, pkt_len: usize) -> Result<(u32, usize), i64> {
    if flags & !(F_CTXLEN_MASK | F_INDEX_MASK) != 0 {
        return Err(-EINVAL);
    }
    let ctx_len = ((flags & F_CTXLEN_MASK) >> 32) as usize;
    if ctx_len > pkt_len {
        return Err(-EFAULT);
    }
    let index = match flags & F_INDEX_MASK {
        F_CURRENT_CPU => cpu,
        i => i as u32,
    };
    if index >= max_entries {
        return Err(-E2BIG);
    }
    if index != cpu {
        return Err(-EOPNOTSUPP);
    }
    Ok((index, ctx_len))
}

/// The number of slots a perf event array declared without `max_entries` gets: one per
/// CPU, as libbpf sets it (`libbpf_num_possible_cpus`).
pub fn default_slots() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(n: usize) -> Event {
        Event { cpu: 0, index: 0, ts_ns: 0, data: vec![7; n] }
    }

    #[test]
    fn records_take_what_the_kernels_take() {
        assert_eq!(record_bytes(0), 16);
        assert_eq!(record_bytes(4), 16);
        assert_eq!(record_bytes(5), 24);
        assert_eq!(record_bytes(12), 24);
        assert_eq!(record_bytes(usize::MAX), usize::MAX, "saturates");
    }

    #[test]
    fn a_full_ring_drops_and_counts() {
        let mut r = EventRing::with_capacity(48);
        assert_eq!(r.push(ev(12)), 0);
        assert_eq!(r.push(ev(12)), 0);
        assert_eq!(r.push(ev(1)), -ENOSPC);
        assert_eq!(r.push(Event { cpu: 1, index: 1, ..ev(1) }), -ENOSPC);
        assert_eq!(r.lost_total(), 2);
        let d = r.drain();
        assert_eq!((d.events.len(), d.lost, d.lost_cpu, d.lost_index), (2, 2, 1, 1));
        // Drained: room again, the lost count starts over (the total does not).
        assert_eq!(r.push(ev(12)), 0);
        assert_eq!(r.drain().lost, 0);
        assert_eq!(r.lost_total(), 2);
        // Larger than the whole ring: lost at once.
        assert_eq!(r.push(ev(1000)), -ENOSPC);
        assert_eq!(r.reserve(usize::MAX, 0, 0), Err(-ENOSPC));
        assert_eq!(r.pending().count(), 0);
    }

    #[test]
    fn a_partial_drain_frees_what_it_took() {
        let mut r = EventRing::with_capacity(48);
        assert_eq!(r.push(ev(12)), 0);
        assert_eq!(r.push(Event { ts_ns: 1, ..ev(12) }), 0);
        assert_eq!(r.drain_max(1).events[0].ts_ns, 0);
        assert_eq!(r.push(Event { ts_ns: 2, ..ev(12) }), 0, "room for one again");
        assert_eq!(r.push(ev(12)), -ENOSPC);
        let d = r.drain_max(5);
        assert_eq!(d.events.iter().map(|e| e.ts_ns).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(d.lost, 1);
    }

    #[test]
    fn flags_as_the_kernel_reads_them() {
        // BPF_F_CURRENT_CPU: the worker's slot.
        assert_eq!(check_flags(F_CURRENT_CPU, 4, 2, 100), Ok((2, 0)));
        // Packet bytes in the upper 32 bits, at most the packet's length.
        assert_eq!(check_flags(F_CURRENT_CPU | (64 << 32), 4, 0, 100), Ok((0, 64)));
        assert_eq!(check_flags(F_CURRENT_CPU | (100 << 32), 4, 0, 100), Ok((0, 100)));
        assert_eq!(check_flags(F_CURRENT_CPU | (101 << 32), 4, 0, 100), Err(-EFAULT));
        assert_eq!(check_flags(F_CURRENT_CPU | F_CTXLEN_MASK, 4, 0, 100), Err(-EFAULT));
        // Bits above the length mask.
        assert_eq!(check_flags(1 << 52, 4, 0, 100), Err(-EINVAL));
        assert_eq!(check_flags(u64::MAX, 4, 0, 100), Err(-EINVAL));
        // An explicit slot: its reader must be on this CPU; past max_entries: -E2BIG.
        assert_eq!(check_flags(1, 4, 1, 100), Ok((1, 0)));
        assert_eq!(check_flags(1, 4, 0, 100), Err(-EOPNOTSUPP));
        assert_eq!(check_flags(4, 4, 0, 100), Err(-E2BIG));
        assert_eq!(check_flags(F_CURRENT_CPU, 2, 2, 100), Err(-E2BIG));
        assert!(default_slots() >= 1);
    }
}
