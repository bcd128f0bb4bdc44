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
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sr6_io::bpf::{self, Map, MapKind};
use sr6_io::interrupt::Interrupter;
use sr6_io::live::ifindex;

use super::context;
use super::gen_prog::{ctl, gen_program, GenMaps, Layout, FP_SHIFT, REUSE};
use crate::traffic::mono_ns;

/// Program runs between two flushes to the device (the kernel's maximum). Each flush
/// that carries frames wakes the peer's NAPI poll if it sleeps — an inter-processor
/// interrupt, microseconds in a VM — so fewer flushes leave the generator more time:
/// at 7-8 million runs a second, one flush every ~35 µs.
const BATCH: u32 = 256;

/// How much faster than its rate a generator behind its schedule may send to catch up.
/// Not in one burst (above the SUT's capacity that would cost packets a smooth stream
/// would not lose), but fast enough to make up for the time the loop is held up on a
/// busy tester CPU: the flushes to the device and the receiver's work take 40-60% of
/// it at a million packets a second on this project's VM (`docs/perf.md`), and at
/// twice the rate the generator could not keep up while it had half the CPU.
pub const CATCH_UP: f64 = 4.0;

/// The least catch-up gap (ns) at which the program may send back to back on one clock
/// reading: about what one send costs here (~110 ns), so that the sends it makes without
/// reading the clock are no closer than the gap would have allowed. That is from
/// `CATCH_UP × rate` = 1e9 / 150, i.e. rates of 1.67 Mpps and up (and unpaced runs).
const REUSE_GAP_NS: f64 = 150.0;

/// `ctl.reuse_max` for a run at `rate_pps`: [`REUSE`] where the catch-up gap
/// is shorter than a send, else 0 (the clock read for every packet). Measured, sr6 as
/// the SUT at 800 kpps (End, 4 s): with back-to-back catch-up it lost 0.4-0.6% at
/// dut0's ring (bursts after the tester's stalls), with the gap 0.003-0.005%.
fn reuse_max(rate_pps: f64) -> u64 {
    let paced = rate_pps.is_finite() && rate_pps > 0.0;
    if !paced || 1e9 / (CATCH_UP * rate_pps) <= REUSE_GAP_NS {
        REUSE
    } else {
        0
    }
}

/// How long after its last slot is due a run's system call is interrupted (with a
/// signal: see [`LiveFrames::run`]).
pub const SLICE: Duration = Duration::from_millis(30);

/// Interrupts the calling thread's system call once the run's last slot is due: `span`
/// after the program's first run (which it records in the control block; a call can
/// take milliseconds to set up), plus `margin`; then every 5 ms until dropped (a signal
/// that arrives before the call starts is not lost: the next one comes). If the
/// program has not run within `span + 2 s` of arming, it signals anyway. Dropping it
/// stops the signals (`sr6_io::interrupt`).
fn alarm(ctl_map: &Map, streams: usize, span_ns: u64, margin_ns: u64) -> io::Result<Interrupter> {
    let ctl_map = ctl_map.try_clone()?;
    let armed = mono_ns();
    let wait = move |done: &AtomicBool| {
        let mut v = vec![0u8; ctl::len(streams)];
        let deadline = loop {
            if done.load(Ordering::Acquire) {
                return;
            }
            let start = match ctl_map.lookup(&0u32.to_ne_bytes(), &mut v) {
                Ok(()) => u64::from_ne_bytes(v[ctl::START..ctl::START + 8].try_into().unwrap_or([0; 8])) >> FP_SHIFT,
                Err(_) => 0,
            };
            if start != 0 {
                break start.saturating_add(span_ns).saturating_add(margin_ns);
            }
            if mono_ns() > armed.saturating_add(span_ns).saturating_add(2_000_000_000) {
                break 0;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        // Until the deadline, in slices: a call that ended early drops the alarm at once.
        while !done.load(Ordering::Acquire) {
            let left = deadline.saturating_sub(mono_ns());
            if left == 0 {
                break;
            }
            std::thread::sleep(Duration::from_nanos(left.min(10_000_000)));
        }
    };
    Interrupter::arm(wait, Duration::from_millis(5))
}

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
            return Err(bad(format!(
                "telemetry at {seq_at}+12 or checksum at {csum_at}+2 outside the {}-byte frame",
                f.len()
            )));
        }
        if (seq_at + csum_at) % 2 != 0 {
            return Err(bad(format!(
                "checksum at {csum_at} and telemetry at {seq_at} are not 16-bit aligned to each other"
            )));
        }
        if (csum_at + 2 > seq_at && csum_at < seq_at + 12) || f[seq_at..seq_at + 12].iter().any(|&b| b != 0) {
            return Err(bad(
                "the template's sequence number and timestamp must be zero and not overlap the checksum".into()
            ));
        }
        let stored = u16::from_ne_bytes([f[csum_at], f[csum_at + 1]]);
        Ok(Layout { seq_at: seq_at as u32, csum_at: csum_at as u32, base: !stored })
    }
}

/// What one [`LiveFrames::run`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveRun {
    /// Packets the run was to send: `round(rate × duration)` (unpaced: `sent`).
    pub slots: u64,
    /// Frames handed to the device.
    pub sent: u64,
    /// Slots given up because the generator fell more than the lag allowed behind its
    /// schedule (preempted for that long): `slots = sent + late`.
    pub late: u64,
    /// Frames handed to the device, per stream.
    pub per_stream: Vec<u64>,
    /// [`mono_ns`] at the first slot, and when the last call returned.
    pub start_ns: u64,
    pub end_ns: u64,
    /// When slots were first given up, ns after the first slot (0: never).
    pub first_late_ns: u64,
    /// The longest time between two runs of the program, and the sum of those
    /// times that were 20 µs or longer: how long the loop was held up (by softirqs
    /// run in its thread, interrupts, preemption).
    pub max_stall_ns: u64,
    /// When the last packet went, ns after the first slot.
    pub last_sent_ns: u64,
    pub stalled_ns: u64,
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
    ctl: Map,
    _templates: Map,
    /// The first template (the kernel's initial frame contents).
    input: Vec<u8>,
    streams: usize,
    ifname: String,
    /// The device the calls pretend the frames arrived on (`lo`).
    ingress: u32,
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
        let ifindex = ifindex(ifname)?;
        let n = templates.len();
        let ctl = Map::create(MapKind::Array, 4, ctl::len(n) as u32, 1, "sr6_gen_ctl")?;
        let value_len = len.div_ceil(8) * 8;
        let tmap = Map::create(MapKind::Array, 4, value_len as u32, n as u32, "sr6_gen_tmpl")?;
        for (i, t) in templates.iter().enumerate() {
            let mut v = t.frame.clone();
            v.resize(value_len, 0);
            tmap.update(&(i as u32).to_ne_bytes(), &v)?;
        }
        let maps = GenMaps { ctl: ctl.as_raw_fd(), templates: tmap.as_raw_fd() };
        let ingress = sr6_io::live::ifindex("lo")?;
        let prog = bpf::prog_load_xdp(&gen_program(ifindex, len as u32, &layouts, maps), "sr6_gen")?;
        let link = bpf::link_create_xdp(&prog, ifindex, bpf::XDP_FLAGS_DRV_MODE)
            .map_err(|e| context(e, &format!("attaching the generator's XDP program to {ifname} (driver mode)")))?;
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
        self.ctl.lookup(&0u32.to_ne_bytes(), &mut v)?;
        Ok(v)
    }

    /// Sends at `rate_pps` for `duration` (`f64::INFINITY`: as fast as it can), on the
    /// calling thread (which must be in the network namespace of [`LiveFrames::new`]:
    /// checked), the streams in turn, each stream's sequence numbers from 0.
    /// Packets are never closer than the interval over [`CATCH_UP`]: a generator
    /// behind its schedule (preempted, or between two calls) catches up at that rate,
    /// not in a burst. When it falls more than `max_lag` behind, the schedule is pushed back
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
        // The schedule starts with the program's first run (ctl.next = 0): whatever the
        // first call costs to set up is not counted as lateness.
        let call_ns = mono_ns();
        let mut c = vec![0u8; ctl::len(self.streams)];
        let put = |c: &mut Vec<u8>, off: usize, v: u64| c[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        put(&mut c, ctl::INTERVAL, if paced { fp(1e9 / rate_pps) } else { 0 });
        put(&mut c, ctl::TARGET, slots);
        put(&mut c, ctl::LAG, fp(max_lag.as_nanos() as f64));
        // Behind the schedule, catch up a little faster than the rate, never in a burst.
        put(&mut c, ctl::GAP, if paced { fp(1e9 / (CATCH_UP * rate_pps)) } else { 0 });
        put(&mut c, ctl::REUSE_MAX, reuse_max(rate_pps));
        self.ctl.update(&0u32.to_ne_bytes(), &c)?;

        let end_ns = call_ns.saturating_add(duration_ns);
        let get = |c: &[u8], off: usize| u64::from_ne_bytes(c[off..off + 8].try_into().unwrap_or([0; 8]));
        let mut calls = 0u32;
        let mut last;
        loop {
            // One call for the rest of the run, ended by a signal once the last slot is
            // sent or given up (the program sends nothing after it): the kernel's
            // teardown between two calls waits for an RCU grace period, which takes
            // milliseconds when the SUT's CPU runs a busy real-time thread.
            // The span of the run from its first slot (the schedule started with the
            // program's first run, in this call or an earlier one).
            let span = if paced {
                (slots as f64 * 1e9 / rate_pps) as u64 + u64::try_from(max_lag.as_nanos()).unwrap_or(0)
            } else {
                duration_ns
            };
            let alarm = alarm(&self.ctl, self.streams, span, SLICE.as_nanos() as u64)?;
            let r = bpf::test_run_live(&self.prog, &self.input, self.ingress, 1 << 30, BATCH);
            drop(alarm);
            match r {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(context(e, &format!("sending live frames out of {}", self.ifname))),
            }
            last = mono_ns();
            calls += 1;
            c = self.read_ctl()?;
            let done = get(&c, ctl::SENT) + get(&c, ctl::LATE) >= slots;
            // Unpaced runs end with the time; paced ones with their slots (and, should
            // something go wrong, a second after their time).
            if done || (!paced && last >= end_ns) || last >= end_ns.saturating_add(1_000_000_000 + duration_ns / 10) {
                break;
            }
        }
        let sent = get(&c, ctl::SENT);
        let start_ns = match get(&c, ctl::START) >> FP_SHIFT {
            0 => call_ns,
            t => t,
        };
        let per_stream = (0..self.streams)
            .map(|i| {
                let at = ctl::SEQ + 4 * i;
                u64::from(u32::from_ne_bytes(c[at..at + 4].try_into().unwrap_or([0; 4])))
            })
            .collect();
        Ok(LiveRun {
            slots: if paced { slots } else { sent },
            sent,
            late: get(&c, ctl::LATE),
            first_late_ns: match get(&c, ctl::FIRST_LATE) >> FP_SHIFT {
                0 => 0,
                t => t.saturating_sub(start_ns),
            },
            per_stream,
            max_stall_ns: get(&c, ctl::MAX_STALL) >> FP_SHIFT,
            last_sent_ns: (get(&c, ctl::LAST) >> FP_SHIFT).saturating_sub(start_ns),
            stalled_ns: get(&c, ctl::STALLED) >> FP_SHIFT,
            start_ns,
            end_ns: last,
            calls,
            iterations: get(&c, ctl::ITERS),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_readings_are_reused_only_where_the_catch_up_gap_is_shorter_than_a_send() {
        // The rates SUTs are measured at: every packet reads the clock, so catching up
        // keeps the gap (interval / CATCH_UP).
        for pps in [10e3, 800e3, 1.2e6, 1.6e6] {
            assert_eq!(reuse_max(pps), 0, "{pps}");
        }
        // 1e9 / (4 x 1.67e6) = 150 ns: from here on a send costs about the gap anyway.
        for pps in [1.67e6, 2.56e6, 3e6] {
            assert_eq!(reuse_max(pps), REUSE, "{pps}");
        }
        // Unpaced (the ceiling probe): as fast as it goes.
        assert_eq!(reuse_max(f64::INFINITY), REUSE);
        assert_eq!(reuse_max(0.0), REUSE);
    }
}
