//! The generator: sends templates through a [`Port`] at a controlled rate for a
//! duration, stamping each packet with its telemetry.
//!
//! One thread (the caller's, pinned to a CPU if [`GenConfig::cpu`] says so) loops:
//! read `CLOCK_MONOTONIC`, ask the [`Pacer`] how many slots are due (at most
//! [`GenConfig::batch`]), stamp and queue that many packets — templates taken in turn
//! when there are several streams — and flush once. Waits for the next slot shorter
//! than [`GenConfig::sleep_above`] are busy-waited, longer ones slept, less a margin.
//! The busy wait calls `sched_yield` ([`GenConfig::yield_in_waits`], else it spins):
//! a receiver thread pinned to the same CPU then runs as soon as it has work instead
//! of at the end of the generator's time slice (milliseconds, enough to overflow its
//! ring), and the schedule does not suffer (a yield with nothing else to run returns
//! in about a microsecond, and the pacer catches up by the packet count, not by the
//! clock).
//!
//! **Per packet** (no allocation, no system call): write the sequence number and the
//! batch's timestamp into the template's telemetry block, recompute the innermost UDP
//! checksum — the only checksum that covers the block (IPv4 header checksums cover the
//! header only; the outer IPv6 header and the SRH have none) — incrementally: the
//! template's checksum gives the ones'-complement sum of everything that does not
//! change (its sequence number and timestamp are 0), and the six 16-bit words of the
//! sequence number and timestamp are added to it (RFC 1071, RFC 1624). Then
//! [`Port::tx_queue`] copies the frame into the transmit ring (AF_XDP: a UMEM frame;
//! AF_PACKET: a ring slot). A frame the ring refuses is counted (`ring_full`), never
//! retried and never fatal; a failed flush is counted (`tx_errors`, the first message
//! kept) and the run goes on. Sequence numbers count accepted frames only, from 0 at
//! each run, so that on the receiving side `last seq + 1 - unique` is the SUT's loss.
//!
//! The [`GenReport`] accounts for every slot of the run: `slots = sent + ring_full +
//! late` (unpaced runs: `sent + ring_full`); `tx_dropped = ring_full + late` is what
//! the generator could not send, never the SUT's loss.
//!
//! # Capacity
//!
//! User space is under 2% of the generator's CPU time; the rest is the kernel's
//! AF_XDP copy-mode transmit path (one socket buffer allocated and filled per frame,
//! `veth_xmit`) and — on veth — the *receiving* side's work, which runs in the
//! softirq of the sending thread unless the receiving veth polls in a NAPI thread of
//! its own (`echo 1 > /sys/class/net/DEV/threaded`, the thread pinned elsewhere) or
//! uses RPS. Measured on this project's 2-core VM, one unpaced thread, looped veth
//! pair, receiver counting on tg1 (the ignored test `veth_max_rate` in
//! `tests/traffic_netns.rs`): about 0.55-1.05 Mpps with tg1's XDP running on the
//! sender's CPU, 1.5-1.7 Mpps with tg1's NAPI thread on the other CPU (then bounded by
//! that thread, with 10% of the sender's CPU idle), 78- and 158-byte frames alike;
//! AF_PACKET about a third of that. The machine was shared with other builds: figures
//! vary by 2x from run to run. The faster path, which skips socket buffers altogether,
//! is the XDP live-frame generator ([`super::live_gen`], several million packets a
//! second); this one is its fallback.

use std::time::Duration;

use sr6_io::live::{pin_to_cpu, Port, PortStats};
use sr6_wire::checksum;

use super::rate::{Pacer, Step};
use super::telemetry::{mono_ns, Telemetry, SEQ_OFFSET, TELEMETRY_LEN};
use super::template::Template;
use super::{Source, TrafficError};

/// How the generator sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenConfig {
    /// Most packets queued per flush (one system call each).
    pub batch: u32,
    /// How far behind the schedule the generator may fall before it gives slots up
    /// (counted as late) instead of catching up in a burst.
    pub max_lag: Duration,
    /// Waits longer than this are slept (less half of it), shorter ones busy-waited.
    pub sleep_above: Duration,
    /// Yield the CPU (`sched_yield`) in short waits rather than spin.
    pub yield_in_waits: bool,
    /// How long to keep flushing after the last packet (every 100 µs).
    pub drain: Duration,
    /// Pin the thread calling [`Generator::run`] to this CPU.
    pub cpu: Option<usize>,
}

impl Default for GenConfig {
    /// Batches of 32, 1 ms of lag, sleep above 200 µs, yield below, 2 ms of drain, no
    /// pinning.
    fn default() -> GenConfig {
        GenConfig {
            batch: 32,
            max_lag: Duration::from_millis(1),
            sleep_above: Duration::from_micros(200),
            yield_in_waits: true,
            drain: Duration::from_millis(2),
            cpu: None,
        }
    }
}

/// What one run did. See the module docs for the accounting.
#[derive(Debug, Clone, PartialEq)]
pub struct GenReport {
    /// The rate asked for (`f64::INFINITY`: unpaced).
    pub offered_pps: f64,
    /// The duration asked for.
    pub duration_s: f64,
    /// Slots of the run (`round(offered × duration)`; unpaced: packets attempted).
    pub slots: u64,
    /// Frames the port accepted.
    pub sent: u64,
    /// Frames the port refused (transmit ring full).
    pub ring_full: u64,
    /// Slots given up because the generator fell behind the schedule.
    pub late: u64,
    /// Flushes (system calls) that failed.
    pub tx_errors: u64,
    /// The first error: a failed flush, or the CPU pinning refused.
    pub first_error: Option<String>,
    /// [`mono_ns`] at the first packet and after the last one's flush (the drain after
    /// it not included).
    pub start_ns: u64,
    pub end_ns: u64,
    /// Frames accepted per stream: `(stream id, sent)`.
    pub per_stream: Vec<(u16, u64)>,
    /// The port's counters over the run (differences).
    pub port: PortStats,
}

impl GenReport {
    /// Packets the generator could not send: `ring_full + late`.
    pub fn tx_dropped(&self) -> u64 {
        self.ring_full + self.late
    }

    /// Seconds from the first packet to the end of the last flush.
    pub fn elapsed_s(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// `sent / elapsed`: the rate actually reached.
    pub fn achieved_pps(&self) -> f64 {
        let e = self.elapsed_s();
        if e > 0.0 {
            self.sent as f64 / e
        } else {
            0.0
        }
    }
}

/// One template being sent.
#[derive(Debug)]
struct Stream {
    id: u16,
    frame: Vec<u8>,
    /// Offset of the sequence number (the timestamp follows).
    seq_at: usize,
    csum_at: usize,
    /// Ones'-complement sum of everything the UDP checksum covers but the sequence
    /// number and the timestamp.
    base: u32,
    seq: u32,
}

impl Stream {
    fn new(t: Template) -> Result<Stream, TrafficError> {
        let bad = |why: &str| TrafficError::Template(format!("stream {}: {why}", t.stream));
        let tel = Telemetry::from_frame(&t.frame).ok_or_else(|| bad("no telemetry block at the end of the frame"))?;
        if tel.stream != t.stream || tel.seq != 0 || tel.tx_ns != 0 {
            return Err(bad("the telemetry block must hold the stream id, sequence 0 and timestamp 0"));
        }
        let tel_at = t.frame.len() - TELEMETRY_LEN;
        if !matches!(t.udp_csum_at.checked_add(2), Some(e) if e <= tel_at) {
            return Err(bad("the UDP checksum offset is not before the telemetry block"));
        }
        let c = u16::from_be_bytes([t.frame[t.udp_csum_at], t.frame[t.udp_csum_at + 1]]);
        // The checksum complements the folded sum of the rest; ~0 and 0 are the same
        // ones'-complement zero.
        let base = u32::from(!c);
        Ok(Stream { id: t.stream, frame: t.frame, seq_at: tel_at + SEQ_OFFSET, csum_at: t.udp_csum_at, base, seq: 0 })
    }

    /// Writes the current sequence number and `ts` and the matching checksum.
    #[inline]
    fn stamp(&mut self, ts: u64) {
        let seq = self.seq;
        if let Some(b) = self.frame.get_mut(self.seq_at..self.seq_at + 12) {
            let (s, t) = b.split_at_mut(4);
            s.copy_from_slice(&seq.to_be_bytes());
            t.copy_from_slice(&ts.to_be_bytes());
        }
        let var = u64::from(seq >> 16)
            + u64::from(seq & 0xffff)
            + (ts >> 48)
            + ((ts >> 32) & 0xffff)
            + ((ts >> 16) & 0xffff)
            + (ts & 0xffff);
        // At most 7 × 0xFFFF: fits a u32 with room to spare.
        let c = match checksum::fold(self.base + var as u32) {
            0 => 0xffff,
            c => c,
        };
        if let Some(b) = self.frame.get_mut(self.csum_at..self.csum_at + 2) {
            b.copy_from_slice(&c.to_be_bytes());
        }
    }
}

/// Sends templates through one port. See the module docs.
pub struct Generator {
    port: Box<dyn Port>,
    streams: Vec<Stream>,
    cfg: GenConfig,
}

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generator")
            .field("ifname", &self.port.ifname())
            .field("streams", &self.streams())
            .field("cfg", &self.cfg)
            .finish()
    }
}

impl Generator {
    /// A generator sending `templates` in turn (one stream each; stream ids distinct)
    /// through `port`.
    pub fn new(port: Box<dyn Port>, templates: Vec<Template>, cfg: GenConfig) -> Result<Generator, TrafficError> {
        if templates.is_empty() {
            return Err(TrafficError::Template("no template to send".into()));
        }
        let mut streams: Vec<Stream> = Vec::with_capacity(templates.len());
        for t in templates {
            if streams.iter().any(|s| s.id == t.stream) {
                return Err(TrafficError::Template(format!("stream {} appears twice", t.stream)));
            }
            streams.push(Stream::new(t)?);
        }
        Ok(Generator { port, streams, cfg })
    }

    /// The stream ids, in sending order.
    pub fn streams(&self) -> Vec<u16> {
        self.streams.iter().map(|s| s.id).collect()
    }

    pub fn config(&self) -> &GenConfig {
        &self.cfg
    }

    pub fn port(&self) -> &dyn Port {
        self.port.as_ref()
    }

    /// Gives the port back.
    pub fn into_port(self) -> Box<dyn Port> {
        self.port
    }

    /// Sends at `offered_pps` (`f64::INFINITY`: as fast as possible) for `duration`,
    /// on the calling thread. Never fails: what went wrong is counted in the report.
    pub fn run(&mut self, offered_pps: f64, duration: Duration) -> GenReport {
        let mut first_error = None;
        if let Some(cpu) = self.cfg.cpu {
            if let Err(e) = pin_to_cpu(cpu) {
                first_error = Some(format!("cannot pin the generator to CPU {cpu}: {e}"));
            }
        }
        for s in &mut self.streams {
            s.seq = 0;
        }
        let before = self.port.stats();
        let duration_ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        let batch = self.cfg.batch.max(1);
        let max_lag_ns = u64::try_from(self.cfg.max_lag.as_nanos()).unwrap_or(u64::MAX);
        let sleep_above = u64::try_from(self.cfg.sleep_above.as_nanos()).unwrap_or(u64::MAX);
        let n_streams = self.streams.len();
        let (mut sent, mut ring_full, mut tx_errors) = (0u64, 0u64, 0u64);
        let mut next = 0usize;

        let t0 = mono_ns();
        let mut pacer = Pacer::new(t0, offered_pps, duration_ns, batch, max_lag_ns);
        loop {
            let now = mono_ns();
            match pacer.step(now) {
                Step::Done => break,
                Step::Wait(ns) => {
                    if ns > sleep_above {
                        std::thread::sleep(Duration::from_nanos(ns - sleep_above / 2));
                    } else if self.cfg.yield_in_waits {
                        std::thread::yield_now();
                    } else {
                        std::hint::spin_loop();
                    }
                }
                Step::Send(n) => {
                    for _ in 0..n {
                        let Some(s) = self.streams.get_mut(next) else { break };
                        next += 1;
                        if next == n_streams {
                            next = 0;
                        }
                        s.stamp(now);
                        if self.port.tx_queue(&s.frame) {
                            s.seq = s.seq.wrapping_add(1);
                            sent += 1;
                        } else {
                            ring_full += 1;
                        }
                    }
                    if let Err(e) = self.port.tx_flush() {
                        tx_errors += 1;
                        if first_error.is_none() {
                            first_error = Some(format!("flush on {}: {e}", self.port.ifname()));
                        }
                    }
                }
            }
        }
        let end_ns = mono_ns();
        // Frames the kernel left in the ring (a budget, a busy peer) go only with a later
        // flush: keep flushing for a while, so that they are not left for the next run.
        // (The `Port` trait cannot say how many are still queued.)
        let drain_until = end_ns.saturating_add(u64::try_from(self.cfg.drain.as_nanos()).unwrap_or(u64::MAX));
        loop {
            let _ = self.port.tx_flush();
            if mono_ns() >= drain_until {
                break;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        let after = self.port.stats();
        let late = pacer.late();
        GenReport {
            offered_pps,
            duration_s: duration.as_secs_f64(),
            slots: if pacer.unpaced() { sent + ring_full } else { pacer.slots() },
            sent,
            ring_full,
            late,
            tx_errors,
            first_error,
            start_ns: t0,
            end_ns,
            per_stream: self.streams.iter().map(|s| (s.id, u64::from(s.seq))).collect(),
            port: after.since(&before),
        }
    }
}

impl Source for Generator {
    fn run(&mut self, offered_pps: f64, duration: Duration) -> GenReport {
        Generator::run(self, offered_pps, duration)
    }
    fn streams(&self) -> Vec<u16> {
        Generator::streams(self)
    }
    fn describe(&self) -> String {
        format!("sockets on {}", self.port.ifname())
    }
}

#[cfg(test)]
mod tests {
    use super::super::template::{build, Addressing};
    use super::*;
    use crate::model::Behavior;
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// Verifies the innermost UDP checksum of a stamped frame from scratch.
    fn udp_ok(b: Behavior, stream: u16, a: &Addressing, frame: &[u8], csum_at: usize) -> bool {
        let udp = &frame[csum_at - 6..];
        let v4 = b.inner_ipv4(stream);
        let ph = if v4 {
            let (s, d): (Ipv4Addr, Ipv4Addr) = (a.src4, a.dst4);
            checksum::pseudo_header_v4(&s, &d, udp.len() as u16, 17)
        } else {
            let (s, d): (Ipv6Addr, Ipv6Addr) = (a.src6, a.dst6);
            checksum::pseudo_header_v6(&s, &d, udp.len() as u32, 17)
        };
        checksum::fold(ph + checksum::sum(udp)) == 0 && u16::from_be_bytes([frame[csum_at], frame[csum_at + 1]]) != 0
    }

    #[test]
    fn stamping_keeps_the_checksum_valid() {
        let a = Addressing::default();
        for &b in Behavior::all() {
            // Stream 5: odd, so End.DT46 carries IPv4.
            let t = build(b, &a, 5);
            let at = t.udp_csum_at;
            let mut s = Stream::new(t).unwrap();
            for (seq, ts) in [(0u32, 0u64), (1, 1), (0xffff_ffff, u64::MAX), (12345, 987_654_321_012), (7, 1 << 63)] {
                s.seq = seq;
                s.stamp(ts);
                assert!(udp_ok(b, 5, &a, &s.frame, at), "{} seq {seq} ts {ts}", b.name());
                let tel = Telemetry::from_frame(&s.frame).unwrap();
                assert_eq!((tel.stream, tel.seq, tel.tx_ns), (5, seq, ts));
            }
        }
    }

    #[test]
    fn bad_templates_are_refused() {
        let a = Addressing::default();
        let mut t = build(Behavior::Ipv6, &a, 1);
        t.stream = 2;
        assert!(Stream::new(t).is_err());
        let mut t = build(Behavior::Ipv6, &a, 1);
        t.udp_csum_at = t.frame.len() - 10;
        assert!(Stream::new(t).is_err());
        let mut t = build(Behavior::Ipv6, &a, 1);
        t.frame.push(0);
        assert!(Stream::new(t).is_err());
    }
}
