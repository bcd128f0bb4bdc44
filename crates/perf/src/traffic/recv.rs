//! The receiver: a thread that owns the tester's receiving [`Port`] (tg1) for as long
//! as the [`Receiver`] lives, and counts test packets between [`Receiver::start`] and
//! [`Receiver::stop`].
//!
//! The thread loops on [`Port::rx_burst`] (bursts of [`RecvConfig::burst`] into
//! [`PacketBuf`]s allocated once), reads `CLOCK_MONOTONIC` once per burst, and for each
//! frame reads the telemetry block at its end (`telemetry.rs`):
//!
//! * no magic: `other` (NDP, ARP, anything not ours; the XDP program leaves neighbour
//!   discovery to the kernel, so little of it gets here);
//! * magic, but a timestamp before the trial started or after now, or older than
//!   [`RecvConfig::max_age`]: `stale` (a packet of an earlier trial, or a frame that
//!   merely looks like ours);
//! * a stream id at or above [`RecvConfig::max_streams`]: `unknown_stream`;
//! * otherwise the stream's counters and the latency histogram (`now - tx timestamp`,
//!   one host, one clock).
//!
//! **Sequence numbers** are tracked per stream in a sliding bitmap of
//! [`RecvConfig::seq_window`] numbers below the highest seen: a number above it moves
//! the window; one inside it is a duplicate if its bit is set, else a reordered
//! arrival; one below the window is counted as reordered (too late to tell a
//! duplicate). `unique = received - duplicates`; in-order traffic costs one bit set per
//! packet. Numbers are taken as they come (no wrap-around: a run sends fewer than 2^32
//! packets per stream).
//!
//! **Waiting.** When a burst comes back empty during a trial the thread waits as
//! [`RecvConfig::idle`] says:
//!
//! * [`Idle::Nap`] (the default, 50 µs): sleeps a fixed time and looks again. Nobody
//!   waits on the socket, so the kernel's receive path (which, on veth, runs on the
//!   *sender's* CPU) never has to wake the receiver: measured here, waking a thread
//!   blocked in `poll(2)` cost the sending side about a fifth of its time
//!   (`sock_def_readable` -> IPI). A nap of 50 µs (+ the timer slack) is far shorter
//!   than the time a 2048-slot ring takes to fill at 2 Mpps (1 ms). The cost: a
//!   packet waits up to a nap before it is seen, so latencies are inflated by up to
//!   ~100 µs.
//! * [`Idle::Spin`]: never sleeps: the best latency figures, and a whole CPU. Use it
//!   for latency trials (at a fraction of the NDR), with the thread pinned.
//! * [`Idle::Poll`]: sleeps in `poll(2)` until a frame arrives (or the timeout):
//!   no CPU when idle, exact wake-ups, but the sender pays for every wake-up.
//!
//! Between trials the thread keeps draining the port, counting nothing, and sleeps in
//! `poll(2)` ([`RecvConfig::idle_poll`] at most).
//!
//! Nothing is allocated per packet: counters, bitmaps and the histogram are allocated
//! when the receiver is spawned and cleared at each start.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sr6_core::packet::PacketBuf;
use sr6_io::live::{pin_to_cpu, poll_readable, Port, PortStats};

use super::latency::{Histogram, LatencyStats};
use super::telemetry::{mono_ns, Telemetry};
use super::TrafficError;

/// How the receiver receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecvConfig {
    /// Frames per `rx_burst`.
    pub burst: usize,
    /// Streams counted: ids `0..max_streams`.
    pub max_streams: u16,
    /// Sequence numbers remembered per stream for duplicate detection (rounded up to
    /// a power of two, at least 64).
    pub seq_window: u32,
    /// Telemetry older than this is stale.
    pub max_age: Duration,
    /// How to wait for frames during a trial (module docs).
    pub idle: Idle,
    /// Poll timeout between trials (also how soon a command is seen then).
    pub idle_poll: Duration,
    /// Pin the receiving thread to this CPU.
    pub cpu: Option<usize>,
    /// How long [`Receiver::start`] and [`Receiver::stop`] wait for the thread.
    pub reply_timeout: Duration,
}

impl Default for RecvConfig {
    fn default() -> RecvConfig {
        RecvConfig {
            burst: 64,
            max_streams: 16,
            seq_window: 1 << 16,
            max_age: Duration::from_secs(10),
            idle: Idle::Nap(Duration::from_micros(50)),
            idle_poll: Duration::from_millis(1),
            cpu: None,
            reply_timeout: Duration::from_secs(5),
        }
    }
}

/// How the receiver waits when no frame is there (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Sleep this long, then look again.
    Nap(Duration),
    /// Look again at once.
    Spin,
    /// `poll(2)` the port's descriptor, at most this long.
    Poll(Duration),
}

/// One stream's counts over a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamCounts {
    pub stream: u16,
    /// Test packets of this stream received (duplicates included).
    pub received: u64,
    /// Of which copies of a sequence number already received.
    pub duplicates: u64,
    /// Arrivals with a sequence number below the highest already seen (not
    /// duplicates).
    pub reordered: u64,
    /// The highest sequence number seen.
    pub max_seq: u32,
}

impl StreamCounts {
    /// Distinct sequence numbers received.
    pub fn unique(&self) -> u64 {
        self.received - self.duplicates
    }
}

/// What the receiver counted over one trial. See the module docs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecvReport {
    /// Streams that received at least one packet, by id.
    pub streams: Vec<StreamCounts>,
    /// Frames without telemetry.
    pub other: u64,
    /// Telemetry with an implausible timestamp (an earlier trial's packets).
    pub stale: u64,
    /// Telemetry of a stream id at or above `max_streams`.
    pub unknown_stream: u64,
    pub latency: LatencyStats,
    /// `rx_burst` errors, and the first one.
    pub rx_errors: u64,
    pub first_error: Option<String>,
    /// The port's `rx` and `rx_ring_full` over the trial (the receiver's own losses:
    /// not the SUT's).
    pub port_rx: u64,
    pub port_rx_ring_full: u64,
    /// [`mono_ns`] at start and stop.
    pub start_ns: u64,
    pub stop_ns: u64,
}

impl RecvReport {
    /// The counts of `stream`, if it received anything.
    pub fn stream(&self, stream: u16) -> Option<&StreamCounts> {
        self.streams.iter().find(|s| s.stream == stream)
    }

    /// Distinct packets received over `streams`.
    pub fn unique(&self, streams: &[u16]) -> u64 {
        streams.iter().filter_map(|&s| self.stream(s)).map(StreamCounts::unique).sum()
    }

    /// Duplicates and reordered arrivals over all streams.
    pub fn duplicates(&self) -> u64 {
        self.streams.iter().map(|s| s.duplicates).sum()
    }

    pub fn reordered(&self) -> u64 {
        self.streams.iter().map(|s| s.reordered).sum()
    }
}

/// Per-stream sequence tracking (module docs).
struct Track {
    bits: Box<[u64]>,
    /// Window size - 1 (a power of two - 1).
    mask: u64,
    top: u64,
    counts: StreamCounts,
}

impl Track {
    fn new(stream: u16, window: u32) -> Track {
        let w = u64::from(window.max(64)).next_power_of_two();
        Track {
            bits: vec![0u64; (w / 64) as usize].into_boxed_slice(),
            mask: w - 1,
            top: 0,
            counts: StreamCounts { stream, ..Default::default() },
        }
    }

    fn clear(&mut self) {
        self.bits.fill(0);
        self.top = 0;
        self.counts = StreamCounts { stream: self.counts.stream, ..Default::default() };
    }

    #[inline]
    fn bit(&mut self, s: u64) -> (&mut u64, u64) {
        let i = s & self.mask;
        let words = self.bits.len();
        // `i >> 6` < words: the mask spans exactly the bitmap.
        let w = &mut self.bits[(i >> 6) as usize % words];
        (w, 1u64 << (i & 63))
    }

    #[inline]
    fn see(&mut self, seq: u32) {
        let s = u64::from(seq);
        let c = &mut self.counts;
        c.received += 1;
        if c.received == 1 {
            self.top = s;
            c.max_seq = seq;
            let (w, b) = self.bit(s);
            *w |= b;
            return;
        }
        if s > self.top {
            // Forget what falls out of the window: the numbers top+1 ..= s.
            if s - self.top > self.mask {
                self.bits.fill(0);
            } else {
                let mut x = self.top + 1;
                while x <= s {
                    if x & 63 == 0 && x + 63 <= s {
                        let (w, _) = self.bit(x);
                        *w = 0;
                        x += 64;
                    } else {
                        let (w, b) = self.bit(x);
                        *w &= !b;
                        x += 1;
                    }
                }
            }
            self.top = s;
            self.counts.max_seq = seq;
            let (w, b) = self.bit(s);
            *w |= b;
        } else if self.top - s > self.mask {
            self.counts.reordered += 1;
        } else {
            let (w, b) = self.bit(s);
            if *w & b != 0 {
                self.counts.duplicates += 1;
            } else {
                *w |= b;
                self.counts.reordered += 1;
            }
        }
    }
}

/// The receiving thread's state.
struct State {
    tracks: Vec<Track>,
    hist: Histogram,
    counting: bool,
    start_ns: u64,
    max_age_ns: u64,
    other: u64,
    stale: u64,
    unknown_stream: u64,
    rx_errors: u64,
    first_error: Option<String>,
    port_before: PortStats,
}

impl State {
    fn reset(&mut self, port: &dyn Port) {
        for t in &mut self.tracks {
            t.clear();
        }
        self.hist.clear();
        self.other = 0;
        self.stale = 0;
        self.unknown_stream = 0;
        self.rx_errors = 0;
        self.first_error = None;
        self.port_before = port.stats();
        self.start_ns = mono_ns();
    }

    #[inline]
    fn classify(&mut self, frame: &[u8], now: u64) {
        let Some(t) = Telemetry::from_frame(frame) else {
            self.other += 1;
            return;
        };
        if t.tx_ns < self.start_ns || t.tx_ns > now || now - t.tx_ns > self.max_age_ns {
            self.stale += 1;
            return;
        }
        match self.tracks.get_mut(usize::from(t.stream)) {
            Some(tr) => tr.see(t.seq),
            None => {
                self.unknown_stream += 1;
                return;
            }
        }
        self.hist.record(now - t.tx_ns);
    }

    fn report(&self, port: &dyn Port) -> RecvReport {
        let after = port.stats();
        RecvReport {
            streams: self.tracks.iter().filter(|t| t.counts.received > 0).map(|t| t.counts).collect(),
            other: self.other,
            stale: self.stale,
            unknown_stream: self.unknown_stream,
            latency: self.hist.stats(),
            rx_errors: self.rx_errors,
            first_error: self.first_error.clone(),
            port_rx: after.rx.saturating_sub(self.port_before.rx),
            port_rx_ring_full: after.rx_ring_full.saturating_sub(self.port_before.rx_ring_full),
            start_ns: self.start_ns,
            stop_ns: mono_ns(),
        }
    }
}

enum Cmd {
    Start(mpsc::SyncSender<u64>),
    Stop(mpsc::SyncSender<RecvReport>),
}

/// The receiving thread and its controls. See the module docs. Dropping it stops the
/// thread (and closes the port).
pub struct Receiver {
    cmd: Option<mpsc::Sender<Cmd>>,
    handle: Option<JoinHandle<Box<dyn Port>>>,
    ifname: String,
    reply_timeout: Duration,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").field("ifname", &self.ifname).finish()
    }
}

impl Receiver {
    /// Starts the receiving thread on `port`.
    pub fn spawn(port: Box<dyn Port>, cfg: RecvConfig) -> Result<Receiver, TrafficError> {
        let (tx, rx) = mpsc::channel();
        let ifname = port.ifname().to_string();
        let reply_timeout = cfg.reply_timeout;
        let handle = std::thread::Builder::new()
            .name(format!("sr6-perf-rx-{ifname}"))
            .spawn(move || receive_loop(port, &cfg, &rx))
            .map_err(TrafficError::Io)?;
        Ok(Receiver { cmd: Some(tx), handle: Some(handle), ifname, reply_timeout })
    }

    /// The port's device name.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    fn ask<T>(&self, make: impl FnOnce(mpsc::SyncSender<T>) -> Cmd) -> Result<T, TrafficError> {
        let gone = || TrafficError::ReceiverGone(self.ifname.clone());
        let (tx, rx) = mpsc::sync_channel(1);
        self.cmd.as_ref().ok_or_else(gone)?.send(make(tx)).map_err(|_| gone())?;
        rx.recv_timeout(self.reply_timeout).map_err(|_| gone())
    }

    /// Clears every counter and starts counting packets stamped from now on. Returns
    /// the start time ([`mono_ns`]).
    pub fn start(&self) -> Result<u64, TrafficError> {
        self.ask(Cmd::Start)
    }

    /// Takes what already waits in the port, stops counting, and returns the counts
    /// since [`Receiver::start`].
    pub fn stop(&self) -> Result<RecvReport, TrafficError> {
        self.ask(Cmd::Stop)
    }

    /// Stops the thread and gives the port back (`None` if the thread panicked).
    pub fn shutdown(mut self) -> Option<Box<dyn Port>> {
        self.cmd = None;
        self.handle.take().and_then(|h| h.join().ok())
    }
}

impl super::Sink for Receiver {
    fn start(&self) -> Result<u64, TrafficError> {
        Receiver::start(self)
    }
    fn stop(&self) -> Result<RecvReport, TrafficError> {
        Receiver::stop(self)
    }
    fn describe(&self) -> String {
        format!("thread on {}", self.ifname)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.cmd = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Receives one burst into `bufs` and classifies it when counting; returns how many.
fn burst(port: &mut dyn Port, bufs: &mut [PacketBuf], st: &mut State) -> usize {
    let n = match port.rx_burst(bufs) {
        Ok(n) => n,
        Err(e) => {
            st.rx_errors += 1;
            if st.first_error.is_none() {
                st.first_error = Some(format!("receive on {}: {e}", port.ifname()));
            }
            0
        }
    };
    if n > 0 && st.counting {
        let now = mono_ns();
        for b in bufs.iter().take(n) {
            st.classify(b.data(), now);
        }
    }
    n
}

/// Empties the port (bounded, in case frames arrive faster than they are taken).
fn drain(port: &mut dyn Port, bufs: &mut [PacketBuf], st: &mut State) {
    for _ in 0..4096 {
        if burst(port, bufs, st) == 0 {
            break;
        }
    }
}

fn receive_loop(mut port: Box<dyn Port>, cfg: &RecvConfig, cmds: &mpsc::Receiver<Cmd>) -> Box<dyn Port> {
    if let Some(cpu) = cfg.cpu {
        // Best effort: an unpinned receiver still counts right.
        let _ = pin_to_cpu(cpu);
    }
    let mut bufs: Vec<PacketBuf> = (0..cfg.burst.max(1)).map(|_| PacketBuf::new()).collect();
    let mut st = State {
        tracks: (0..cfg.max_streams).map(|s| Track::new(s, cfg.seq_window)).collect(),
        hist: Histogram::new(),
        counting: false,
        start_ns: 0,
        max_age_ns: u64::try_from(cfg.max_age.as_nanos()).unwrap_or(u64::MAX),
        other: 0,
        stale: 0,
        unknown_stream: 0,
        rx_errors: 0,
        first_error: None,
        port_before: PortStats::default(),
    };
    let idle_ms = i32::try_from(cfg.idle_poll.as_millis()).unwrap_or(i32::MAX).max(1);
    loop {
        match cmds.try_recv() {
            Ok(Cmd::Start(reply)) => {
                st.counting = false;
                drain(port.as_mut(), &mut bufs, &mut st);
                st.reset(port.as_ref());
                st.counting = true;
                let _ = reply.send(st.start_ns);
            }
            Ok(Cmd::Stop(reply)) => {
                drain(port.as_mut(), &mut bufs, &mut st);
                st.counting = false;
                let _ = reply.send(st.report(port.as_ref()));
            }
            Err(mpsc::TryRecvError::Disconnected) => return port,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        if burst(port.as_mut(), &mut bufs, &mut st) == 0 {
            match (st.counting, cfg.idle) {
                (true, Idle::Spin) => std::hint::spin_loop(),
                (true, Idle::Nap(d)) => std::thread::sleep(d),
                (true, Idle::Poll(d)) => {
                    let ms = i32::try_from(d.as_millis()).unwrap_or(i32::MAX).max(1);
                    poll_readable(&mut [pollfd(port.fd())], ms);
                }
                (false, _) => poll_readable(&mut [pollfd(port.fd())], idle_ms),
            }
        }
    }
}

/// A `pollfd` waiting for `POLLIN` on `fd`.
fn pollfd(fd: std::os::fd::RawFd) -> libc::pollfd {
    libc::pollfd { fd, events: libc::POLLIN, revents: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_tracking() {
        let mut t = Track::new(3, 64);
        for s in [0u32, 1, 2, 4, 3, 3, 5, 1] {
            t.see(s);
        }
        assert_eq!(t.counts.received, 8);
        assert_eq!(t.counts.duplicates, 2, "3 and 1 again");
        assert_eq!(t.counts.reordered, 1, "3 after 4");
        assert_eq!(t.counts.unique(), 6);
        assert_eq!(t.counts.max_seq, 5);
        // A jump beyond the window, then a number far below: reordered, not a dup.
        t.see(1000);
        t.see(900);
        t.see(999);
        t.see(999);
        assert_eq!(t.counts.duplicates, 3);
        assert_eq!(t.counts.reordered, 3);
        // A small advance forgets exactly the numbers that leave the window.
        t.see(1010);
        t.see(1000);
        assert_eq!(t.counts.duplicates, 4, "1000 is still in the window");
        t.see(1064);
        t.see(1000);
        assert_eq!(t.counts.reordered, 4, "1000 left the window: too late to tell");
        t.see(1001);
        assert_eq!(t.counts.reordered, 5, "1001 was never seen");
        t.clear();
        assert_eq!(t.counts, StreamCounts { stream: 3, ..Default::default() });
    }

    #[test]
    fn window_clearing_over_word_boundaries() {
        let mut t = Track::new(0, 256);
        for s in 0..256u32 {
            t.see(s);
        }
        // Advance by 200: 256..=455 forget 0..=199; 200..=255 are still known.
        t.see(455);
        t.see(250);
        t.see(300);
        assert_eq!(t.counts.duplicates, 1);
        assert_eq!(t.counts.reordered, 1);
        for s in 456..2000u32 {
            t.see(s);
        }
        assert_eq!(t.counts.unique(), 256 + 2 + (2000 - 456));
    }
}
