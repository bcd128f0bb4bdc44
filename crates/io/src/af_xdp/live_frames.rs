//! Transmitting test traffic with XDP live frames: `BPF_PROG_TEST_RUN` with
//! `BPF_F_TEST_XDP_LIVE_FRAMES` (Linux 5.18+, see the kernel's
//! `Documentation/bpf/bpf_prog_run.rst`).
//!
//! The kernel runs an XDP program many times in the calling thread, each time on a
//! frame from a page pool, and transmits every frame the program answers `XDP_TX` for
//! out of the chosen device with the driver's XDP transmit (`ndo_xdp_xmit`). No socket
//! buffer is built and nothing is copied from user space per packet: it is the cheapest
//! way Linux has to put frames on a device from software. The program (`gen_prog.rs`)
//! paces the packets itself against `bpf_ktime_get_ns` (a run that finds the next
//! packet not due yet drops its frame, which costs tens of nanoseconds), copies the
//! stream's template into the frame, writes its sequence number and a `CLOCK_MONOTONIC`
//! timestamp and fixes up the checksum that covers them. [`LiveFrames::run`] makes
//! calls of about [`SLICE`] each until the run's slots are done.
//!
//! **Why the program is also attached to the device.** A call with `repeat > 1` adds
//! the program to the kernel's XDP dispatcher for its duration and removes it after;
//! each change rewrites the dispatcher and waits for an RCU grace period, about 25 ms
//! per call here. A program already attached in driver mode somewhere is in the
//! dispatcher, and then a call only takes a reference. So [`LiveFrames::new`] attaches
//! the program to the device it sends out of (driver mode; veth has it). The calls run
//! it as if the frames arrived on `lo`, and it redirects them to that device; a frame
//! that really arrives there (ingress = the device) is passed to the kernel untouched.
//!
//! What the device does with a frame it cannot take (a full ring on a veth peer) is the
//! device's business: it is dropped and counted there (`ethtool -S`:
//! `tx_queue_0_xdp_xmit_errors` on a veth), not reported to the caller. On veth the
//! peer must accept XDP frames: it needs an XDP program in driver mode or NAPI enabled
//! (`ethtool -K PEER gro on`), or every frame is dropped.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use super::bpf;
use super::gen_prog::{ctl, gen_program, GenMaps, Layout, FP_SHIFT};

/// Program runs between two flushes to the device (the kernel's maximum). Each flush
/// that carries frames wakes the peer's NAPI poll if it sleeps — an inter-processor
/// interrupt, microseconds in a VM — so fewer flushes leave the generator more time:
/// at 7-8 million runs a second, one flush every ~35 µs.
const BATCH: u32 = 256;

/// About how long each system call of a run lasts. Between calls the device gets
/// nothing for some tens of microseconds (the page pool is torn down and set up).
pub const SLICE: Duration = Duration::from_millis(100);

/// The largest template: what fits in one page with the kernel's headroom and
/// `skb_shared_info` (the kernel refuses larger frames in live mode).
pub const MAX_LIVE_FRAME: usize = 3000;
/// The most streams one [`LiveFrames`] sends.
pub const MAX_LIVE_STREAMS: usize = 16;

/// One stream's template: the frame holds a big-endian u32 sequence number at
/// `seq_at` followed by a big-endian u64 timestamp, both zero, and at `csum_at` the
/// 16-bit ones'-complement checksum covering them (a UDP checksum), an even number of
/// bytes away from `seq_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTemplate {
    pub frame: Vec<u8>,
    pub seq_at: usize,
    pub csum_at: usize,
}

impl LiveTemplate {
    fn layout(&self) -> io::Result<Layout> {
        let bad = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        let (f, seq_at, csum_at) = (&self.frame, self.seq_at, self.csum_at);
        if f.len() < 14 || f.len() > MAX_LIVE_FRAME {
            return Err(bad(format!("a live frame is 14..={MAX_LIVE_FRAME} bytes, not {}", f.len())));
        }
        if seq_at + 12 > f.len() || csum_at + 2 > f.len() {
            return Err(bad(format!("telemetry at {seq_at}+12 or checksum at {csum_at}+2 outside the {}-byte frame", f.len())));
        }
        if (seq_at + csum_at) % 2 != 0 {
            return Err(bad(format!("checksum at {csum_at} and telemetry at {seq_at} are not 16-bit aligned to each other")));
        }
        if (csum_at + 2 > seq_at && csum_at < seq_at + 12) || f[seq_at..seq_at + 12].iter().any(|&b| b != 0) {
            return Err(bad("the template's sequence number and timestamp must be zero and not overlap the checksum".into()));
        }
        let stored = u16::from_ne_bytes([f[csum_at], f[csum_at + 1]]);
        Ok(Layout { seq_at: seq_at as u32, csum_at: csum_at as u32, base: !stored })
    }
}

/// Nanoseconds of `CLOCK_MONOTONIC`, the clock of `bpf_ktime_get_ns`.
pub fn mono_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(t.tv_nsec as u64)
}

/// What one [`LiveFrames::run`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveRun {
    /// Packets the run was to send: `round(rate × duration)` (unpaced: `sent`).
    pub slots: u64,
    /// Frames handed to the device.
    pub sent: u64,
    /// How long the schedule was pushed back because the generator fell behind by
    /// more than the lag allowed (mostly the gaps between calls): the run lasted
    /// `duration + stalled_ns`, at the rate asked for while it sent.
    pub stalled_ns: u64,
    /// Frames handed to the device, per stream.
    pub per_stream: Vec<u64>,
    /// [`mono_ns`] at the first slot, and when the last call returned.
    pub start_ns: u64,
    pub end_ns: u64,
    /// System calls made, and runs of the program (sent or not).
    pub calls: u32,
    pub iterations: u64,
}

/// The pacing program attached to one device, its templates and its control block.
#[derive(Debug)]
pub struct LiveFrames {
    // Held, never read: closing it detaches the program. Declared (and so dropped) first.
    _link: OwnedFd,
    prog: OwnedFd,
    ctl: OwnedFd,
    _templates: OwnedFd,
    /// The first template (the kernel's initial frame contents).
    input: Vec<u8>,
    streams: usize,
    ifname: String,
    /// The device the calls pretend the frames arrived on (`lo`).
    ingress: u32,
    /// Program runs per second, as last measured (sizes the calls).
    iters_per_s: f64,
    /// The network namespace (inode of `/proc/thread-self/ns/net`) it was made in.
    netns: u64,
}

/// The calling thread's network namespace, as an inode number.
fn netns_id() -> io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    Ok(std::fs::metadata("/proc/thread-self/ns/net")?.ino())
}

impl LiveFrames {
    /// Loads the pacing program for `templates` (stream `i` is `templates[i]`, all of
    /// one length; they are sent in turn) and attaches it in driver mode to `ifname`,
    /// which frames will be sent out of (in the caller's network namespace). Fails if
    /// the device has no driver-mode XDP or already has a program.
    pub fn new(ifname: &str, templates: &[LiveTemplate]) -> io::Result<LiveFrames> {
        let bad = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        if templates.is_empty() || templates.len() > MAX_LIVE_STREAMS {
            return Err(bad(format!("1..={MAX_LIVE_STREAMS} templates, not {}", templates.len())));
        }
        let len = templates[0].frame.len();
        if templates.iter().any(|t| t.frame.len() != len) {
            return Err(bad("live-frame templates must all have one length".into()));
        }
        let layouts = templates.iter().map(LiveTemplate::layout).collect::<io::Result<Vec<_>>>()?;
        let ifindex = super::ifindex(ifname)?;
        let n = templates.len();
        let ctl = bpf::map_create(bpf::BPF_MAP_TYPE_ARRAY, 4, ctl::len(n) as u32, 1, "sr6_gen_ctl")?;
        let value_len = len.div_ceil(8) * 8;
        let tmap = bpf::map_create(bpf::BPF_MAP_TYPE_ARRAY, 4, value_len as u32, n as u32, "sr6_gen_tmpl")?;
        for (i, t) in templates.iter().enumerate() {
            let mut v = t.frame.clone();
            v.resize(value_len, 0);
            bpf::map_update(&tmap, &(i as u32).to_ne_bytes(), &v)?;
        }
        let maps = GenMaps { ctl: ctl.as_raw_fd(), templates: tmap.as_raw_fd() };
        let ingress = super::ifindex("lo")?;
        let prog = bpf::prog_load_xdp(&gen_program(ifindex, len as u32, &layouts, maps), "sr6_gen")?;
        let link = bpf::link_create_xdp(&prog, ifindex, bpf::XDP_FLAGS_DRV_MODE)
            .map_err(|e| bpf::context(e, &format!("attaching the generator's XDP program to {ifname} (driver mode)")))?;
        let input = templates[0].frame.clone();
        let netns = netns_id()?;
        Ok(LiveFrames {
            _link: link,
            prog,
            ctl,
            _templates: tmap,
            input,
            streams: n,
            ifname: ifname.to_string(),
            ingress,
            iters_per_s: 5e6,
            netns,
        })
    }

    /// The device frames go out of.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    /// How many streams.
    pub fn streams(&self) -> usize {
        self.streams
    }

    fn read_ctl(&self) -> io::Result<Vec<u8>> {
        let mut v = vec![0u8; ctl::len(self.streams)];
        bpf::map_lookup(&self.ctl, &0u32.to_ne_bytes(), &mut v)?;
        Ok(v)
    }

    /// Sends at `rate_pps` for `duration` (`f64::INFINITY`: as fast as it can), on the
    /// calling thread (which must be in the network namespace of [`LiveFrames::new`]:
    /// checked), the streams in turn, each stream's sequence numbers from 0.
    /// Packets are never closer than half the interval: a generator behind its
    /// schedule (preempted, or between two calls) catches up at twice the rate, not in
    /// a burst. When it falls more than `max_lag` behind, the schedule is pushed back
    /// instead, and the run lasts that much longer (`stalled_ns`). Errors if a system
    /// call fails (then nothing more is sent).
    pub fn run(&mut self, rate_pps: f64, duration: Duration, max_lag: Duration) -> io::Result<LiveRun> {
        // The kernel resolves the devices by index in the caller's namespace: from
        // another one, the frames would go out of whatever device has that index there.
        if netns_id()? != self.netns {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("live frames for {} must be sent from the network namespace they were set up in", self.ifname),
            ));
        }
        let paced = rate_pps.is_finite() && rate_pps > 0.0;
        let duration_ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX / 4);
        let slots = if paced { (rate_pps * duration.as_secs_f64()).round() as u64 } else { u64::MAX };
        let fp = |ns: f64| (ns * f64::from(1u32 << FP_SHIFT)).round() as u64;
        // The first slot a little after the first call starts (its setup takes some
        // tens of microseconds), so that it is not late.
        let start_ns = mono_ns() + 200_000;
        let mut c = vec![0u8; ctl::len(self.streams)];
        let put = |c: &mut Vec<u8>, off: usize, v: u64| c[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        put(&mut c, ctl::NEXT, start_ns << FP_SHIFT);
        put(&mut c, ctl::INTERVAL, if paced { fp(1e9 / rate_pps) } else { 0 });
        put(&mut c, ctl::TARGET, slots);
        put(&mut c, ctl::LAG, fp(max_lag.as_nanos() as f64));
        // Behind the schedule, catch up at twice the rate, never in a burst.
        put(&mut c, ctl::GAP, if paced { fp(0.5e9 / rate_pps) } else { 0 });
        bpf::map_update(&self.ctl, &0u32.to_ne_bytes(), &c)?;

        let end_ns = start_ns.saturating_add(duration_ns);
        let get = |c: &[u8], off: usize| u64::from_ne_bytes(c[off..off + 8].try_into().unwrap_or([0; 8]));
        let mut calls = 0u32;
        let mut iters = 0u64;
        let mut last;
        loop {
            // What is left: the time (unpaced), or the packets' worth of time (paced:
            // the schedule may have been pushed back).
            let left = if paced {
                (slots.saturating_sub(get(&c, ctl::SENT)) as f64 * 1e9 / rate_pps) as u64
            } else {
                end_ns.saturating_sub(mono_ns())
            };
            let remaining = left.clamp(100_000, SLICE.as_nanos() as u64);
            let repeat = (self.iters_per_s * remaining as f64 / 1e9).clamp(1024.0, f64::from(1u32 << 30)) as u32;
            let before = mono_ns();
            bpf::test_run_live(&self.prog, &self.input, self.ingress, repeat, BATCH)
                .map_err(|e| bpf::context(e, &format!("sending live frames out of {}", self.ifname)))?;
            last = mono_ns();
            calls += 1;
            c = self.read_ctl()?;
            let it = get(&c, ctl::ITERS);
            let took = last.saturating_sub(before).max(1);
            self.iters_per_s = ((it - iters) as f64 * 1e9 / took as f64).max(1e5);
            iters = it;
            let done = get(&c, ctl::SENT) >= slots;
            // Unpaced runs end with the time; paced ones with their slots (and, should
            // the clock stall, a second after their time).
            if done || (!paced && last >= end_ns) || last >= end_ns.saturating_add(1_000_000_000 + duration_ns / 10) {
                break;
            }
        }
        let sent = get(&c, ctl::SENT);
        let per_stream = (0..self.streams)
            .map(|i| {
                let at = ctl::SEQ + 4 * i;
                u64::from(u32::from_ne_bytes(c[at..at + 4].try_into().unwrap_or([0; 4])))
            })
            .collect();
        Ok(LiveRun {
            slots: if paced { slots } else { sent },
            sent,
            stalled_ns: if paced { get(&c, ctl::STALL) >> FP_SHIFT } else { 0 },
            per_stream,
            start_ns,
            end_ns: last,
            calls,
            iterations: iters,
        })
    }
}
