//! Counting test packets in XDP: the tester's cheapest receiver.
//!
//! An [`XdpCounter`] loads the counting program (`count_prog.rs`) and, once attached
//! in driver mode to the tester's receiving device, counts every test packet there —
//! per stream: received, duplicates, reordered, highest sequence number; frames that
//! are not test packets, stale and unknown-stream ones; a latency histogram — and
//! drops it. Nothing is copied to user space and no thread waits for frames: the cost
//! of a test packet is one run of a 160-instruction program in the device's NAPI poll,
//! against a copy into an AF_XDP ring, a wake-up and a user-space pass otherwise (the
//! receiver that shares one CPU with the generator is what limited the tester).
//!
//! User space only resets the counters before a trial ([`XdpCounter::reset`]) and reads
//! them after ([`XdpCounter::read`]), through the maps. The latency histogram has the
//! bucket layout of `traffic/latency.rs` ([`LAT_BUCKETS`] log-linear buckets).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use sr6_io::bpf::{self, Map, MapKind};
use sr6_io::live::ifindex;

use super::context;
use super::count_prog::{count_program, st, CountMaps, WORDS};
pub use super::count_prog::{CountHook, LAT_BUCKETS, MAX_COUNT_STREAMS, SEQ_BITS};

/// One stream's counts (see [`XdpCounter`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CountedStream {
    pub received: u64,
    pub duplicates: u64,
    /// New sequence numbers below the highest already seen.
    pub reordered: u64,
    /// The highest sequence number seen, if any.
    pub max_seq: Option<u32>,
}

/// What the program counted since the last reset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Frames the program ran on (queue 0).
    pub frames: u64,
    /// Frames without telemetry, passed to the kernel.
    pub other: u64,
    /// Telemetry stamped before the reset, in the future, or older than the maximum
    /// age (dropped).
    pub stale: u64,
    /// Telemetry of a stream id at or above the counter's streams (dropped).
    pub unknown_stream: u64,
    /// Frames on a receive queue other than 0: not counted (passed). Non-zero means the
    /// device spreads traffic over queues and the counter cannot be trusted.
    pub other_queue: u64,
    /// Per stream id, `0..streams`.
    pub streams: Vec<CountedStream>,
    /// Latency samples (ns): count, sum, min (`u64::MAX` with none), max, and the
    /// histogram's [`LAT_BUCKETS`] buckets.
    pub lat_n: u64,
    pub lat_sum: u64,
    pub lat_min: u64,
    pub lat_max: u64,
    pub lat_buckets: Vec<u64>,
}

/// The counting program and its maps; attached to a device by [`XdpCounter::attach`]
/// (detached when this is dropped).
#[derive(Debug)]
pub struct XdpCounter {
    hook: CountHook,
    prog: OwnedFd,
    stats: Map,
    seen: Map,
    streams: u16,
    /// Streams whose bitmap may hold bits (cleared at the next reset).
    dirty: Vec<bool>,
    link: Option<OwnedFd>,
    ifname: Option<String>,
}

impl XdpCounter {
    /// Loads the program for `hook`, for packets whose telemetry starts with `magic`,
    /// counting stream ids `0..streams` (at most [`MAX_COUNT_STREAMS`]). Nothing is
    /// attached yet; the counters are reset with a start of 0 and a maximum age of
    /// `u64::MAX`.
    pub fn new(hook: CountHook, magic: u16, streams: u16) -> io::Result<XdpCounter> {
        if streams == 0 || usize::from(streams) > MAX_COUNT_STREAMS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("1..={MAX_COUNT_STREAMS} streams, not {streams}"),
            ));
        }
        let stats = Map::create(MapKind::Array, 4, (8 * st::LEN) as u32, 1, "sr6_cnt_stats")?;
        let seen = Map::create(MapKind::Array, 4, 8 * WORDS, u32::from(streams), "sr6_cnt_seen")?;
        let maps = CountMaps { stats: stats.as_raw_fd(), seen: seen.as_raw_fd() };
        let insns = count_program(hook, magic, streams, maps);
        let prog = match hook {
            CountHook::Xdp => bpf::prog_load_xdp(&insns, "sr6_count")?,
            CountHook::TcxIngress => bpf::prog_load_tcx_ingress(&insns, "sr6_count")?,
        };
        let mut c = XdpCounter {
            hook,
            prog,
            stats,
            seen,
            streams,
            dirty: vec![false; usize::from(streams)],
            link: None,
            ifname: None,
        };
        c.reset(0, u64::MAX)?;
        Ok(c)
    }

    /// Attaches the program to `ifname` (in the caller's network namespace): XDP in
    /// driver mode, or tcx ingress. Fails if the device has no driver-mode XDP or
    /// already has an XDP program, or the kernel has no tcx (Linux < 6.6).
    pub fn attach(&mut self, ifname: &str) -> io::Result<()> {
        let ifindex = ifindex(ifname)?;
        let link = match self.hook {
            CountHook::Xdp => bpf::link_create_xdp(&self.prog, ifindex, bpf::XDP_FLAGS_DRV_MODE)
                .map_err(|e| context(e, &format!("attaching the counting XDP program to {ifname} (driver mode)")))?,
            CountHook::TcxIngress => bpf::link_create_tcx_ingress(&self.prog, ifindex)
                .map_err(|e| context(e, &format!("attaching the counting tcx program to {ifname}'s ingress")))?,
        };
        self.link = Some(link);
        self.ifname = Some(ifname.to_string());
        Ok(())
    }

    /// Where it runs.
    pub fn hook(&self) -> CountHook {
        self.hook
    }

    /// The device it is attached to.
    pub fn ifname(&self) -> Option<&str> {
        self.ifname.as_deref()
    }

    /// Stream ids counted: `0..streams()`.
    pub fn streams(&self) -> u16 {
        self.streams
    }

    /// Clears every counter (and the sequence bitmaps of the streams that received
    /// anything) and counts from now on only packets stamped at or after `start_ns`
    /// (`CLOCK_MONOTONIC`) and at most `max_age_ns` old when they arrive.
    pub fn reset(&mut self, start_ns: u64, max_age_ns: u64) -> io::Result<()> {
        let zero = vec![0u8; 8 * WORDS as usize];
        for (i, d) in self.dirty.iter_mut().enumerate() {
            if *d {
                self.seen.update(&(i as u32).to_ne_bytes(), &zero)?;
                *d = false;
            }
        }
        let mut block = vec![0u8; 8 * st::LEN];
        let mut put = |i: usize, v: u64| block[8 * i..8 * i + 8].copy_from_slice(&v.to_ne_bytes());
        put(st::START, start_ns);
        put(st::MAX_AGE, max_age_ns);
        put(st::LAT_MIN, u64::MAX);
        self.stats.update(&0u32.to_ne_bytes(), &block)
    }

    /// The counts since the last reset (a snapshot: the program keeps counting).
    pub fn read(&mut self) -> io::Result<Counts> {
        let mut block = vec![0u8; 8 * st::LEN];
        self.stats.lookup(&0u32.to_ne_bytes(), &mut block)?;
        let get = |i: usize| u64::from_ne_bytes(block[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]));
        let streams: Vec<CountedStream> = (0..usize::from(self.streams))
            .map(|s| {
                let at = st::STREAM_AT + 4 * s;
                let top1 = get(at + st::TOP1);
                CountedStream {
                    received: get(at + st::RECEIVED),
                    duplicates: get(at + st::DUPLICATES),
                    reordered: get(at + st::REORDERED),
                    max_seq: top1.checked_sub(1).map(|m| m as u32),
                }
            })
            .collect();
        for (d, s) in self.dirty.iter_mut().zip(&streams) {
            *d |= s.received > 0;
        }
        Ok(Counts {
            frames: get(st::FRAMES),
            other: get(st::OTHER),
            stale: get(st::STALE),
            unknown_stream: get(st::UNKNOWN),
            other_queue: get(st::OTHER_QUEUE),
            streams,
            lat_n: get(st::LAT_N),
            lat_sum: get(st::LAT_SUM),
            lat_min: get(st::LAT_MIN),
            lat_max: get(st::LAT_MAX),
            lat_buckets: (0..LAT_BUCKETS).map(|i| get(st::BUCKETS_AT + i)).collect(),
        })
    }

    /// Runs the program once on `frame` with `BPF_PROG_TEST_RUN` (counting it like a
    /// received one; nothing is sent) and returns its verdict: for a test packet 1
    /// (`XDP_DROP`) or 2 (`TCX_DROP`), else 2 (`XDP_PASS`) or 0 (`TCX_PASS`). For tests
    /// and diagnostics.
    pub fn run_on(&mut self, frame: &[u8]) -> io::Result<u32> {
        // Whatever it counts, the stream's bitmap may now hold bits.
        self.dirty.iter_mut().for_each(|d| *d = true);
        bpf::test_run(&self.prog, frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_stream_counts() {
        assert!(XdpCounter::new(CountHook::Xdp, 0x5336, 0).is_err());
        assert!(XdpCounter::new(CountHook::TcxIngress, 0x5336, MAX_COUNT_STREAMS as u16 + 1).is_err());
    }

    #[test]
    fn block_layout_fits_one_map_value() {
        assert_eq!(st::BUCKETS_AT + LAT_BUCKETS, st::LEN);
        assert_eq!(LAT_BUCKETS, 64 + 58 * 32); // e = 6 ..= 63
    }
}
