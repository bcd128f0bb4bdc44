//! One trial: the receiver starts counting, the generator sends at the offered rate
//! for the duration, the receiver keeps draining for a settle time (packets still in
//! flight in the SUT count), then stops; the counts become a [`Trial`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::gen::{GenReport, Generator};
use super::recv::{RecvReport, Receiver};
use super::TrafficError;
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
    gen: &mut Generator,
    recv: &Receiver,
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
    gen: &mut Generator,
    recv: &Receiver,
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
    };
    Ok(TrialReport { trial, gen: g, recv: r })
}
