//! One trial: the receiver starts counting, the generator sends at the offered rate
//! for the duration, the receiver keeps draining for a settle time (packets still in
//! flight in the SUT count), then stops; the counts become a [`Trial`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::gen::GenReport;
use super::recv::RecvReport;
use super::{Sink, Source, TrafficError};
use crate::model::Trial;

/// How long the receiver keeps counting after the generator stopped.
pub const DEFAULT_SETTLE: Duration = Duration::from_millis(100);

/// Everything one trial measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialReport {
    pub trial: Trial,
    pub gen: GenReport,
    pub recv: RecvReport,
}

/// A trial's loss accounting, for logs (derived from a [`TrialReport`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Losses {
    /// Sent but not received (the SUT's loss, plus `receiver_dropped`).
    pub lost: u64,
    /// Dropped by the receiver's own ring: the tester's loss, not the SUT's.
    pub receiver_dropped: u64,
    pub duplicates: u64,
    pub reordered: u64,
}

impl TrialReport {
    pub fn losses(&self) -> Losses {
        Losses {
            lost: self.trial.sent.saturating_sub(self.trial.received),
            receiver_dropped: self.recv.port_rx_ring_full,
            duplicates: self.recv.duplicates(),
            reordered: self.recv.reordered(),
        }
    }
}

/// Runs one trial at `offered_pps` for `duration` with [`DEFAULT_SETTLE`]; see
/// [`run_trial_report`].
pub fn run_trial(
    gen: &mut dyn Source,
    recv: &dyn Sink,
    offered_pps: f64,
    duration: Duration,
) -> Result<Trial, TrafficError> {
    run_trial_report(gen, recv, offered_pps, duration, DEFAULT_SETTLE).map(|r| r.trial)
}

/// Runs one trial and returns everything measured. The generator runs on the calling
/// thread. `Trial::received` counts distinct sequence numbers of the generator's
/// streams (duplicates do not hide losses); `tx_dropped` is the generator's
/// `ring_full + late`. With `offered_pps = ∞` (unpaced) the trial records the rate
/// reached as its offered rate. Errors only when the receiver's thread is gone.
pub fn run_trial_report(
    gen: &mut dyn Source,
    recv: &dyn Sink,
    offered_pps: f64,
    duration: Duration,
    settle: Duration,
) -> Result<TrialReport, TrafficError> {
    recv.start()?;
    let g = gen.run(offered_pps, duration);
    std::thread::sleep(settle);
    let r = recv.stop()?;
    let streams: Vec<u16> = g.per_stream.iter().map(|&(s, _)| s).collect();
    let received = r.unique(&streams);
    let duration_s = duration.as_secs_f64();
    let trial = Trial {
        offered_pps: if offered_pps.is_finite() { offered_pps } else { g.achieved_pps() },
        sent: g.sent,
        tx_dropped: g.tx_dropped(),
        received,
        duration_s,
        delivered_pps: if duration_s > 0.0 { received as f64 / duration_s } else { 0.0 },
        delivery_ratio: if g.sent == 0 { 1.0 } else { received as f64 / g.sent as f64 },
        sut_rx_dropped: 0,
        tester_rx_dropped: 0,
        sut_cpu_s: 0.0,
        sut_steal_s: 0.0,
        tester_steal_s: 0.0,
    };
    Ok(TrialReport { trial, gen: g, recv: r })
}

#[cfg(test)]
mod tests {
    use super::super::gen::{GenConfig, Generator};
    use super::super::recv::{Receiver, RecvConfig};
    use super::super::template::{build, Addressing};
    use super::*;
    use crate::model::Behavior;
    use sr6_io::socketpair::SocketPairPort;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// Generator port -> relay thread (the "SUT": passes frames on, or duplicates and
    /// swaps some) -> receiver port; no device, no privilege.
    fn setup(mangle: bool) -> (Generator, Receiver, Relay) {
        let (gport, gwire) = SocketPairPort::pair("tg0", 0).unwrap();
        let (rport, rwire) = SocketPairPort::pair("tg1", 1).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        gwire.from_port.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let relay = std::thread::spawn(move || {
            let mut buf = vec![0u8; 4096];
            let mut n = 0u64;
            let mut held: Option<Vec<u8>> = None;
            while !stop2.load(Ordering::Relaxed) {
                let Ok(len) = gwire.from_port.recv(&mut buf) else { continue };
                n += 1;
                let f = &buf[..len];
                if mangle && n == 10 {
                    // Duplicate the 10th frame.
                    let _ = rwire.to_port.send(f);
                } else if mangle && n == 20 {
                    // Hold the 20th frame back until after the 22nd, the next of its
                    // stream (two streams alternate): reordered.
                    held = Some(f.to_vec());
                    continue;
                }
                let _ = rwire.to_port.send(f);
                if n == 22 {
                    if let Some(h) = held.take() {
                        let _ = rwire.to_port.send(&h);
                    }
                }
            }
        });
        let a = Addressing::default();
        // Mixed traffic: two streams, IPv6 and IPv4.
        let b = Behavior::parse("End.DT46").unwrap();
        let templates = vec![build(b, &a, 0), build(b, &a, 1)];
        let gen = Generator::new(Box::new(gport), templates, GenConfig::default()).unwrap();
        let recv = Receiver::spawn(Box::new(rport), RecvConfig::default()).unwrap();
        (gen, recv, Relay { stop, handle: Some(relay) })
    }

    /// Stops and joins the relay thread when dropped.
    struct Relay {
        stop: Arc<AtomicBool>,
        handle: Option<std::thread::JoinHandle<()>>,
    }

    impl Drop for Relay {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
            if let Some(h) = self.handle.take() {
                let _ = h.join();
            }
        }
    }

    #[test]
    fn trials_over_socket_pairs_count_exactly() {
        let (mut gen, recv, relay) = setup(false);
        for _ in 0..2 {
            let r = run_trial_report(&mut gen, &recv, 20_000.0, Duration::from_millis(50), Duration::from_millis(50))
                .unwrap();
            let t = r.trial;
            assert!(t.sent > 0);
            assert_eq!(t.sent + t.tx_dropped, 1000, "every slot accounted for: {:?}", r.gen);
            assert_eq!(t.received, t.sent, "{:?}", r.recv);
            assert_eq!(t.delivery_ratio, 1.0);
            assert_eq!(r.recv.stale, 0, "the earlier trial's packets were drained before");
            assert_eq!(r.recv.streams.len(), 2);
            for (id, sent) in &r.gen.per_stream {
                let s = r.recv.stream(*id).unwrap();
                assert_eq!((s.received, s.duplicates, s.reordered), (*sent, 0, 0));
                assert_eq!(u64::from(s.max_seq) + 1, *sent);
            }
            let l = r.recv.latency;
            assert_eq!(l.samples, t.received);
            assert!(l.min_ns > 0 && l.min_ns <= l.p50_ns && l.p50_ns <= l.p99_ns && l.p99_ns <= l.max_ns, "{l:?}");
            assert!(t.delivered_pps > 0.0);
        }
        drop(relay);
    }

    #[test]
    fn duplicates_and_reordering_are_seen() {
        let (mut gen, recv, relay) = setup(true);
        let r =
            run_trial_report(&mut gen, &recv, 10_000.0, Duration::from_millis(10), Duration::from_millis(50)).unwrap();
        // 100 slots; on a loaded machine the generator may drop some on send (counted),
        // so the checks are against what was sent.
        let t = r.trial;
        assert_eq!(t.sent + t.tx_dropped, 100, "every slot accounted for: {:?}", r.gen);
        assert!(t.sent >= 22, "too few frames sent for the relay's duplicate and reordering: {:?}", r.gen);
        assert_eq!(r.recv.duplicates(), 1);
        assert_eq!(r.recv.reordered(), 1);
        assert_eq!(t.received, t.sent, "duplicates do not count twice");
        assert_eq!(r.losses().duplicates, 1);
        drop(relay);
    }
}
