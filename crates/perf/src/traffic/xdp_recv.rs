//! The XDP receiver: test packets counted by an XDP program on the receiving device
//! ([`crate::bpf::XdpCounter`]) where they arrive, and dropped there.
//!
//! It counts what the thread [`Receiver`](super::Receiver) counts — per stream received,
//! duplicates (a bitmap of 2^24 sequence numbers per stream, not a sliding window),
//! reordered arrivals; frames without telemetry (passed to the kernel: neighbour
//! discovery must still work), stale and unknown-stream telemetry; the latency histogram
//! in the same log-linear buckets — but with no copy to user space, no thread and no
//! wake-up. On a tester whose one CPU both generates and receives, that is what sets the
//! rate it can offer and count at once (measured in `docs/perf.md`).
//!
//! The one difference in what is measured: the receive timestamp is taken in the
//! device's NAPI poll, before any socket, so latencies exclude the tester's own
//! receive path (tens of microseconds less than the thread receiver reports at load).
//!
//! The program needs driver-mode XDP on the device and counts receive queue 0 only;
//! frames on another queue are reported as receive errors (the count would be wrong).

use std::sync::Mutex;
use std::time::Duration;

use crate::bpf::{CountHook, Counts, XdpCounter};

use super::latency::Histogram;
use super::recv::{RecvReport, StreamCounts};
use super::telemetry::{mono_ns, MAGIC};
use super::{Sink, TrafficError};

/// Telemetry older than this on arrival is stale (as the thread receiver's default).
pub const MAX_AGE: Duration = Duration::from_secs(10);

/// The counting program attached to a device; dropping it detaches the program.
#[derive(Debug)]
pub struct XdpReceiver {
    counter: Mutex<XdpCounter>,
    ifname: String,
    start_ns: Mutex<u64>,
}

impl XdpReceiver {
    /// Loads the program for `streams` streams (ids `0..streams`) and attaches it to
    /// `ifname` at `hook`, in the caller's network namespace.
    pub fn attach(ifname: &str, streams: u16, hook: CountHook) -> Result<XdpReceiver, TrafficError> {
        let mut c = XdpCounter::new(hook, MAGIC, streams)?;
        c.attach(ifname)?;
        Ok(XdpReceiver { counter: Mutex::new(c), ifname: ifname.to_string(), start_ns: Mutex::new(0) })
    }

    /// The device.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }
}

/// The thread receiver's report, from the program's counts.
fn report(n: &Counts, start_ns: u64, stop_ns: u64) -> RecvReport {
    let streams = n
        .streams
        .iter()
        .enumerate()
        .filter(|(_, s)| s.received > 0)
        .map(|(i, s)| StreamCounts {
            stream: i as u16,
            received: s.received,
            duplicates: s.duplicates,
            reordered: s.reordered,
            max_seq: s.max_seq.unwrap_or(0),
        })
        .collect();
    let hist = Histogram::from_counts(&n.lat_buckets, n.lat_n, u128::from(n.lat_sum), n.lat_min, n.lat_max);
    let mut first_error = None;
    if hist.is_none() {
        // Read while the program was still counting: the sum and the buckets disagree
        // by a packet or two. Rare (the trial's settle time has passed); said, not hidden.
        first_error = Some("latency counters read mid-update".to_string());
    }
    if n.other_queue > 0 {
        first_error = Some(format!(
            "{} frames arrived on a receive queue other than 0: the XDP counter did not count them",
            n.other_queue
        ));
    }
    RecvReport {
        streams,
        other: n.other,
        stale: n.stale,
        unknown_stream: n.unknown_stream,
        latency: hist.as_ref().map(Histogram::stats).unwrap_or_default(),
        rx_errors: n.other_queue + u64::from(hist.is_none()),
        first_error,
        port_rx: n.frames,
        port_rx_ring_full: 0,
        start_ns,
        stop_ns,
    }
}

impl Sink for XdpReceiver {
    fn start(&self) -> Result<u64, TrafficError> {
        let now = mono_ns();
        let mut c = self.counter.lock().unwrap_or_else(|e| e.into_inner());
        c.reset(now, MAX_AGE.as_nanos() as u64)?;
        *self.start_ns.lock().unwrap_or_else(|e| e.into_inner()) = now;
        Ok(now)
    }

    fn stop(&self) -> Result<RecvReport, TrafficError> {
        let mut c = self.counter.lock().unwrap_or_else(|e| e.into_inner());
        let n = c.read()?;
        let start = *self.start_ns.lock().unwrap_or_else(|e| e.into_inner());
        Ok(report(&n, start, mono_ns()))
    }

    fn describe(&self) -> String {
        let c = self.counter.lock().unwrap_or_else(|e| e.into_inner());
        match c.hook() {
            CountHook::Xdp => format!("xdp_count (native XDP) on {}", self.ifname),
            CountHook::TcxIngress => format!("tc_count (tcx ingress) on {}", self.ifname),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::{CountedStream, LAT_BUCKETS};

    fn counts() -> Counts {
        let mut b = vec![0u64; LAT_BUCKETS];
        b[100] = 2;
        Counts {
            frames: 9,
            other: 1,
            stale: 2,
            unknown_stream: 1,
            other_queue: 0,
            streams: vec![
                CountedStream { received: 3, duplicates: 1, reordered: 1, max_seq: Some(2) },
                CountedStream::default(),
            ],
            lat_n: 2,
            lat_sum: 2 * 5_000,
            lat_min: 4_900,
            lat_max: 5_100,
            lat_buckets: b,
        }
    }

    #[test]
    fn the_program_buckets_latency_as_the_histogram_does() {
        // Same layout on both sides (the bucket function itself is checked against an
        // independent one in tests/xdp_counter.rs).
        assert_eq!(LAT_BUCKETS, crate::traffic::latency::BUCKET_COUNT);
    }

    #[test]
    fn report_keeps_every_count() {
        let r = report(&counts(), 10, 20);
        assert_eq!(r.streams, vec![StreamCounts { stream: 0, received: 3, duplicates: 1, reordered: 1, max_seq: 2 }]);
        assert_eq!((r.other, r.stale, r.unknown_stream, r.port_rx, r.rx_errors), (1, 2, 1, 9, 0));
        assert_eq!((r.latency.samples, r.latency.avg_ns, r.latency.min_ns, r.latency.max_ns), (2, 5_000, 4_900, 5_100));
        assert_eq!((r.start_ns, r.stop_ns), (10, 20));
        assert!(r.first_error.is_none());
    }

    #[test]
    fn report_says_what_it_could_not_count() {
        let mut n = counts();
        n.other_queue = 4;
        let r = report(&n, 0, 0);
        assert_eq!(r.rx_errors, 4);
        assert!(r.first_error.unwrap().contains("receive queue"));
        let mut n = counts();
        n.lat_n = 3; // the buckets hold 2
        let r = report(&n, 0, 0);
        assert_eq!((r.rx_errors, r.latency.samples), (1, 0));
    }
}
