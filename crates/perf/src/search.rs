//! The NDR/PDR search: the highest offered rate with no loss (No-Drop Rate) and the
//! highest with a loss ratio at most a threshold (Partial-Drop Rate), found by trials.
//!
//! # Sources
//!
//! * SRPerf (Abdelsalam et al., 2018), section III-B, "PDR finder algorithm": an
//!   *exponential* phase from a start rate known to be lossless, doubling while the
//!   delivery ratio stays at least `1 - β`, then a *logarithmic* (binary) search that
//!   halves the window `[a, b]` at its middle point until `b - a <= ε`; NDR is the PDR with
//!   a threshold of 0%.
//! * Abdelsalam's thesis (2020), section 5.3.2 (delivery ratio `P_OUT / P_IN`, PDR@0.5%,
//!   NDR = PDR@0%, after RFC 1242 and the FD.io CSIT terms) and section 5.3.3,
//!   Algorithm 1 (the binary search between `startingTxRate` and the line rate).
//!
//! # The algorithm as implemented
//!
//! A trial at an offered rate `r` yields a loss ratio `(sent - received) / sent`, counted
//! on the packets the generator *actually sent* (the thesis' `P_OUT / P_IN`), never on
//! `r * duration` (Algorithm 1, line 11, divides by the target rate, which would charge the
//! generator's shortfall to the SUT). `received >= sent` counts as lossless (duplicates or
//! stray packets are not loss) and the generator's `tx_dropped` is never the SUT's loss.
//!
//! Two targets are searched *jointly*: NDR (criterion `loss == 0`) and PDR (criterion
//! `loss <= pdr_loss_threshold`). Each keeps a bracket: `lo`, the highest rate measured to
//! satisfy its criterion, and `hi`, the lowest rate measured to fail it. **Every trial
//! updates every target whose open bracket `(lo, hi)` contains its rate**, whichever
//! target chose the rate: a lossless trial is evidence for both, a lossy one against both
//! when its loss exceeds the threshold. A trial outside a target's bracket (possible only
//! when the SUT is not monotone, i.e. noise) is ignored by that target, so `lo < hi` holds
//! throughout. The next rate is picked in this order:
//!
//! 1. **exponential** — while some target has seen no failure: the first trial is at
//!    `min(start_pps, max_pps)`, then twice the target's `lo`, capped at `max_pps`
//!    (SRPerf III-B). It continues until a trial fails the PDR criterion, so both
//!    brackets are then closed;
//! 2. **downward** — while some target has no `lo` (the start rate was already lossy,
//!    or the generator could not produce it): half its `hi`, i.e. a bisection of
//!    `(0, hi)`; gives up (`lo = 0`, [`Limit::NotFound`]) once `hi` is within the
//!    absolute floor of 0;
//! 3. **binary** — the middle point of the open bracket of the target that is furthest
//!    from converged (largest `(hi - lo) / allowed width`; NDR on ties).
//!
//! **Stopping rule**: a target has converged when `hi - lo <= max(precision * lo,
//! precision_pps, 1 pps)` — a relative width with an absolute floor (SRPerf's `ε` is
//! absolute; a relative one suits rates from kpps to Mpps). Since the true value lies in
//! `[lo, hi)` for a monotone SUT, the reported `lo` is below it by less than that width.
//! A target whose `lo` reaches `max_pps` has converged too: the generator's ceiling, not
//! the SUT, was the limit ([`SearchEvent::MaxRateReached`], [`Limit::MaxRate`]). The
//! search ends when both have converged and returns the two `lo`s (the PDR reported is
//! `max(pdr.lo, ndr.lo)`: a lossless rate satisfies the PDR criterion too). Each trial
//! doubles the `lo` of the target that chose it or halves its bracket, so the count is
//! logarithmic: at most about `log2(pdr / start) + 2 + 2 * (log2(1 / precision) + 1)` for a monotone
//! SUT (the two targets' binary phases share trials only while their brackets overlap);
//! `max_trials` is a safety net whose exhaustion is an error.
//!
//! **A generator that cannot keep up.** When a trial's `sent` falls short of
//! `offered_pps * duration_s` by more than `generator_tolerance`, it measured the
//! generator, not the SUT: [`SearchEvent::GeneratorLimited`] flags it, its loss is not
//! used, and its rate becomes an exclusive cap on every bracket (the search goes on below
//! it; a generator that fails below a rate it reached before leaves the brackets above
//! its cap with `hi < lo`, and they stop there). If the SUT is lossless up to there, the
//! result converges on the generator's ceiling with [`Limit::Generator`] in
//! [`SearchEvent::Finished`]: a lower bound of the SUT's capacity, not a measure of it.
//! The tolerance is also the most a reported rate can overstate what was actually
//! offered.
//!
//! **A tester that cannot take everything back.** A trial's loss counts every frame not
//! received, wherever it was lost; the links tell how many the tester's receiving link
//! dropped (`tester_rx_dropped`). When the trial that closes a bracket (its `hi`) failed
//! only through those — its loss without them ([`sut_loss_ratio`]) meets the criterion —
//! the bracket is the tester's, [`Limit::TesterReceive`]: `lo` is a lower bound of the
//! SUT's capacity, reported as such, though the search itself ran as for any failure.

pub use crate::model::Limit;
use crate::model::{SearchResult, Trial};

/// Runs one trial: offers traffic at `offered_pps` for the runner's trial duration and
/// counts what came back. An error aborts the search with the message.
pub trait TrialRunner {
    fn run(&mut self, offered_pps: f64) -> Result<Trial, String>;
}

impl<F: FnMut(f64) -> Result<Trial, String>> TrialRunner for F {
    fn run(&mut self, offered_pps: f64) -> Result<Trial, String> {
        self(offered_pps)
    }
}

/// Values of `phase` in [`SearchEvent`].
pub mod phase {
    /// Doubling from the start rate (SRPerf III-B, first phase).
    pub const EXPONENTIAL: &str = "exponential";
    /// Halving, when the start rate was already failing.
    pub const DOWNWARD: &str = "downward";
    /// Middle point of a bracket (SRPerf III-B, second phase; thesis Algorithm 1).
    pub const BINARY: &str = "binary";
    /// Not a phase of the search: the trial at the highest rate it may offer, run after
    /// it (the forwarding rate at maximum offered load, [`crate::model::MaxLoad`]).
    pub const MAX_LOAD: &str = "max-load";
}

/// Values of `target` in [`SearchEvent`]: which search chose the rate (a trial updates
/// both whenever its rate is inside their brackets).
pub mod target {
    pub const NDR: &str = "ndr";
    pub const PDR: &str = "pdr";
    /// Both targets wanted this same rate.
    pub const BOTH: &str = "ndr+pdr";
    /// Neither: the forwarding rate at maximum offered load ([`super::phase::MAX_LOAD`]).
    pub const FRMOL: &str = "frmol";
}

/// Parameters of one search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchConfig {
    /// First rate tried, packets/s: one expected to be lossless (if it is not, the search
    /// goes down by halving).
    pub start_pps: f64,
    /// The generator's ceiling, packets/s: never offered more.
    pub max_pps: f64,
    /// PDR loss threshold as a fraction (0.005 = PDR@0.5%, the thesis' choice).
    pub pdr_loss_threshold: f64,
    /// Relative width at which a bracket has converged: `hi - lo <= precision * lo`.
    pub precision: f64,
    /// Absolute floor of that width, packets/s (a width of 1 pps is always enough).
    pub precision_pps: f64,
    /// Most trials one search may run; reaching it is an error.
    pub max_trials: usize,
    /// Fraction by which `sent` may fall short of `offered_pps * duration_s` before the
    /// trial is judged generator-limited.
    pub generator_tolerance: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            start_pps: 10_000.0,
            // 10 GbE line rate with 64-byte frames.
            max_pps: 14_880_952.0,
            pdr_loss_threshold: 0.005,
            precision: 0.01,
            precision_pps: 0.0,
            max_trials: 64,
            generator_tolerance: 0.02,
        }
    }
}

/// The smallest bracket width ever required, packets/s.
const MIN_WIDTH_PPS: f64 = 1.0;

impl SearchConfig {
    /// Checks the parameters: finite, `0 < start_pps`, `0 < max_pps`,
    /// `0 <= pdr_loss_threshold < 1`, `precision >= 0`, `precision_pps >= 0`,
    /// `max_trials >= 1`, `0 <= generator_tolerance < 1`. A `start_pps` above `max_pps`
    /// is allowed: the first trial is at `max_pps`.
    pub fn validate(&self) -> Result<(), String> {
        let finite_pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("search config: {name} must be a positive finite rate, not {v}"))
            }
        };
        finite_pos("start_pps", self.start_pps)?;
        finite_pos("max_pps", self.max_pps)?;
        let fraction = |name: &str, v: f64| {
            if (0.0..1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("search config: {name} must be in [0, 1), not {v}"))
            }
        };
        fraction("pdr_loss_threshold", self.pdr_loss_threshold)?;
        fraction("generator_tolerance", self.generator_tolerance)?;
        if !(self.precision.is_finite() && self.precision >= 0.0) {
            return Err(format!("search config: precision must be >= 0, not {}", self.precision));
        }
        if !(self.precision_pps.is_finite() && self.precision_pps >= 0.0) {
            return Err(format!("search config: precision_pps must be >= 0, not {}", self.precision_pps));
        }
        if self.max_trials == 0 {
            return Err("search config: max_trials must be at least 1".into());
        }
        Ok(())
    }

    /// The bracket width at which a target whose lower bound is `lo` has converged:
    /// `max(precision * lo, precision_pps, 1 pps)`.
    pub fn allowed_width(&self, lo: f64) -> f64 {
        (self.precision * lo).max(self.precision_pps).max(MIN_WIDTH_PPS)
    }
}

/// A target's final interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bracket {
    /// Highest rate measured to satisfy the criterion (0 if none).
    pub lo_pps: f64,
    /// See [`Limit`].
    pub hi_pps: f64,
    pub limit: Limit,
}

/// Progress of a search, for display and logs.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchEvent {
    /// About to run a trial at `offered_pps` (a trial takes its whole duration).
    Trying { phase: &'static str, target: &'static str, offered_pps: f64 },
    /// A trial ran (see [`loss_ratio`] for its loss as the search judged it).
    Trial { phase: &'static str, target: &'static str, trial: Trial },
    /// The trial just reported sent far fewer packets than offered: it measured the
    /// generator, which could reach only `achieved_pps`. The search stays below
    /// `offered_pps` from now on.
    GeneratorLimited { offered_pps: f64, achieved_pps: f64 },
    /// `max_pps` satisfied the criterion of `target`: its result is `max_pps`, a limit
    /// of the generator, not of the SUT.
    MaxRateReached { target: &'static str, max_pps: f64 },
    /// The search converged.
    Finished { ndr: Bracket, pdr: Bracket, trials: usize },
}

/// The SUT's loss ratio in `t`, from the packet counters: `(sent - received) / sent`;
/// 0 when `received >= sent` or nothing was sent. `tx_dropped` plays no part.
pub fn loss_ratio(t: &Trial) -> f64 {
    if t.sent == 0 || t.received >= t.sent {
        0.0
    } else {
        (t.sent - t.received) as f64 / t.sent as f64
    }
}

/// [`loss_ratio`] without the frames the tester's receiving link dropped
/// (`tester_rx_dropped`): the loss the SUT caused, as far as the links tell.
pub fn sut_loss_ratio(t: &Trial) -> f64 {
    let lost = t.sent.saturating_sub(t.received).saturating_sub(t.tester_rx_dropped);
    if t.sent == 0 {
        0.0
    } else {
        lost as f64 / t.sent as f64
    }
}

/// The rate the generator actually achieved in `t`: `sent / duration_s` (0 for a
/// duration that is not a positive finite number).
pub fn achieved_pps(t: &Trial) -> f64 {
    if t.duration_s.is_finite() && t.duration_s > 0.0 {
        t.sent as f64 / t.duration_s
    } else {
        0.0
    }
}

/// Whether `t`, run at `offered_pps`, sent fewer than `(1 - tolerance) * offered_pps *
/// duration_s` packets: then it measured the generator, not the SUT.
pub fn generator_limited(t: &Trial, offered_pps: f64, tolerance: f64) -> bool {
    let expected = offered_pps * t.duration_s;
    expected.is_finite() && (t.sent as f64) < (1.0 - tolerance) * expected
}

#[derive(Debug, Clone, Copy)]
struct Target {
    name: &'static str,
    /// Loss ratio at most this satisfies the criterion (0 for the NDR).
    threshold: f64,
    /// Highest rate measured to satisfy the criterion.
    lo: Option<f64>,
    /// Lowest rate measured to fail it.
    hi: Option<f64>,
    /// Whether the trial at `hi` failed only through the tester's receive drops.
    hi_tester: bool,
}

/// What a target wants next.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    Done,
    Exponential(f64),
    Downward(f64),
    /// Rate and how far from converged (width / allowed width).
    Binary(f64, f64),
}

struct State<'c> {
    cfg: &'c SearchConfig,
    max_pps: f64,
    /// Lowest offered rate the generator could not produce (exclusive cap).
    gen_cap: Option<f64>,
    ndr: Target,
    pdr: Target,
}

impl State<'_> {
    /// The target's upper bound: the lower of its lowest failure and the generator cap.
    fn upper(&self, t: &Target) -> Option<f64> {
        match (t.hi, self.gen_cap) {
            (Some(h), Some(g)) => Some(h.min(g)),
            (h, g) => h.or(g),
        }
    }

    fn want(&self, t: &Target) -> Want {
        let lo = t.lo.unwrap_or(0.0);
        match self.upper(t) {
            None => match t.lo {
                None => Want::Exponential(self.cfg.start_pps.min(self.max_pps)),
                Some(l) if l >= self.max_pps => Want::Done,
                Some(l) => Want::Exponential((2.0 * l).min(self.max_pps)),
            },
            Some(u) => {
                let allowed = self.cfg.allowed_width(lo);
                if u - lo <= allowed {
                    Want::Done
                } else if t.lo.is_none() {
                    Want::Downward(u / 2.0)
                } else {
                    Want::Binary((lo + u) / 2.0, (u - lo) / allowed)
                }
            }
        }
    }

    /// The next rate, its phase and target, or `None` when both targets have converged.
    fn next(&self) -> Option<(f64, &'static str, &'static str)> {
        let (wp, wn) = (self.want(&self.pdr), self.want(&self.ndr));
        let pick = |p: Option<f64>, n: Option<f64>, ph: &'static str| match (p, n) {
            (Some(a), Some(b)) if a == b => Some((a, ph, target::BOTH)),
            (Some(a), _) => Some((a, ph, target::PDR)),
            (None, Some(b)) => Some((b, ph, target::NDR)),
            (None, None) => None,
        };
        let exp = |w: Want| match w {
            Want::Exponential(r) => Some(r),
            _ => None,
        };
        let down = |w: Want| match w {
            Want::Downward(r) => Some(r),
            _ => None,
        };
        if let Some(x) = pick(exp(wp), exp(wn), phase::EXPONENTIAL) {
            return Some(x);
        }
        if let Some(x) = pick(down(wp), down(wn), phase::DOWNWARD) {
            return Some(x);
        }
        match (wp, wn) {
            (Want::Binary(rp, sp), Want::Binary(rn, sn)) => {
                if rp == rn {
                    Some((rp, phase::BINARY, target::BOTH))
                } else if sp > sn {
                    Some((rp, phase::BINARY, target::PDR))
                } else {
                    Some((rn, phase::BINARY, target::NDR))
                }
            }
            (Want::Binary(r, _), _) => Some((r, phase::BINARY, target::PDR)),
            (_, Want::Binary(r, _)) => Some((r, phase::BINARY, target::NDR)),
            _ => None,
        }
    }

    /// Records a valid (not generator-limited) trial at `rate` with `loss`.
    /// `sut_loss`: the loss without the frames the tester's receiving link dropped.
    fn record(&mut self, rate: f64, loss: f64, sut_loss: f64) {
        let gen_cap = self.gen_cap;
        for t in [&mut self.ndr, &mut self.pdr] {
            let lo = t.lo.unwrap_or(0.0);
            let upper = match (t.hi, gen_cap) {
                (Some(h), Some(g)) => h.min(g),
                (h, g) => h.or(g).unwrap_or(f64::INFINITY),
            };
            if rate > lo && rate < upper {
                if loss <= t.threshold {
                    t.lo = Some(rate);
                } else {
                    t.hi = Some(rate);
                    t.hi_tester = sut_loss <= t.threshold;
                }
            }
        }
    }

    fn bracket(&self, t: &Target) -> Bracket {
        match (t.lo, self.upper(t)) {
            (None, u) => Bracket { lo_pps: 0.0, hi_pps: u.unwrap_or(0.0), limit: Limit::NotFound },
            (Some(l), None) => Bracket { lo_pps: l, hi_pps: self.max_pps, limit: Limit::MaxRate },
            (Some(l), Some(u)) => {
                let by_generator = match (t.hi, self.gen_cap) {
                    (Some(h), Some(g)) => g < h,
                    (None, Some(_)) => true,
                    _ => false,
                };
                let limit = if by_generator {
                    Limit::Generator
                } else if t.hi_tester {
                    Limit::TesterReceive
                } else {
                    Limit::Sut
                };
                Bracket { lo_pps: l, hi_pps: u, limit }
            }
        }
    }

    fn describe(&self) -> String {
        let b = |t: &Target| {
            let br = self.bracket(t);
            format!("{} in [{}, {}] pps", t.name, br.lo_pps, br.hi_pps)
        };
        format!("{}, {}", b(&self.ndr), b(&self.pdr))
    }
}

/// Searches the NDR and the PDR of the SUT behind `r` (see the module documentation for
/// the algorithm), reporting progress through `progress`. Returns the two lower bounds
/// and every trial in the order run. Errors: an invalid `cfg`, a runner error, a trial
/// whose `duration_s` is not a positive finite number, or `max_trials` reached before
/// convergence (the message gives the brackets reached).
pub fn find_ndr_pdr(
    r: &mut dyn TrialRunner,
    cfg: &SearchConfig,
    progress: &mut dyn FnMut(&SearchEvent),
) -> Result<SearchResult, String> {
    cfg.validate()?;
    let mut st = State {
        cfg,
        max_pps: cfg.max_pps,
        gen_cap: None,
        ndr: Target { name: "NDR", threshold: 0.0, lo: None, hi: None, hi_tester: false },
        pdr: Target { name: "PDR", threshold: cfg.pdr_loss_threshold, lo: None, hi: None, hi_tester: false },
    };
    let mut trials: Vec<Trial> = Vec::new();
    while let Some((rate, ph, tg)) = st.next() {
        if trials.len() >= cfg.max_trials {
            return Err(format!("search did not converge in {} trials: {}", cfg.max_trials, st.describe()));
        }
        progress(&SearchEvent::Trying { phase: ph, target: tg, offered_pps: rate });
        let trial = r.run(rate).map_err(|e| format!("trial at {rate:.0} pps: {e}"))?;
        if !(trial.duration_s.is_finite() && trial.duration_s > 0.0) {
            return Err(format!("trial at {rate:.0} pps: invalid duration {} s from the runner", trial.duration_s));
        }
        trials.push(trial);
        progress(&SearchEvent::Trial { phase: ph, target: tg, trial });
        if generator_limited(&trial, rate, cfg.generator_tolerance) {
            st.gen_cap = Some(st.gen_cap.map_or(rate, |g| g.min(rate)));
            progress(&SearchEvent::GeneratorLimited { offered_pps: rate, achieved_pps: achieved_pps(&trial) });
        } else {
            st.record(rate, loss_ratio(&trial), sut_loss_ratio(&trial));
        }
    }
    let (ndr, pdr) = (st.bracket(&st.ndr), st.bracket(&st.pdr));
    match (ndr.limit, pdr.limit) {
        (Limit::MaxRate, Limit::MaxRate) => {
            progress(&SearchEvent::MaxRateReached { target: target::BOTH, max_pps: st.max_pps })
        }
        (Limit::MaxRate, _) => progress(&SearchEvent::MaxRateReached { target: target::NDR, max_pps: st.max_pps }),
        (_, Limit::MaxRate) => progress(&SearchEvent::MaxRateReached { target: target::PDR, max_pps: st.max_pps }),
        _ => {}
    }
    progress(&SearchEvent::Finished { ndr, pdr, trials: trials.len() });
    // A PDR below the NDR is the NDR (a rate with no loss meets any threshold).
    let pdr = if ndr.lo_pps > pdr.lo_pps { ndr } else { pdr };
    Ok(SearchResult { ndr_pps: ndr.lo_pps, pdr_pps: pdr.lo_pps, trials, ndr_limit: ndr.limit, pdr_limit: pdr.limit })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(offered: f64, sent: u64, received: u64) -> Trial {
        Trial {
            offered_pps: offered,
            sent,
            tx_dropped: 0,
            received,
            duration_s: 1.0,
            delivered_pps: received as f64,
            delivery_ratio: if sent == 0 { 1.0 } else { received as f64 / sent as f64 },
            sut_rx_dropped: 0,
            tester_rx_dropped: 0,
            sut_cpu_s: 0.0,
            sut_steal_s: 0.0,
            tester_steal_s: 0.0,
        }
    }

    #[test]
    fn loss_from_counters() {
        assert_eq!(loss_ratio(&trial(100.0, 100, 100)), 0.0);
        assert_eq!(loss_ratio(&trial(100.0, 100, 101)), 0.0);
        assert_eq!(loss_ratio(&trial(100.0, 0, 0)), 0.0);
        assert_eq!(loss_ratio(&trial(100.0, 100, 99)), 0.01);
        let mut t = trial(100.0, 100, 100);
        t.tx_dropped = 1_000;
        assert_eq!(loss_ratio(&t), 0.0);
    }

    #[test]
    fn generator_shortfall() {
        assert!(!generator_limited(&trial(100.0, 100, 100), 100.0, 0.02));
        assert!(!generator_limited(&trial(100.0, 98, 98), 100.0, 0.02));
        assert!(generator_limited(&trial(100.0, 97, 97), 100.0, 0.02));
        assert!(generator_limited(&trial(100.0, 0, 0), 100.0, 0.02));
        let mut t = trial(100.0, 0, 0);
        t.duration_s = f64::NAN;
        assert!(!generator_limited(&t, 100.0, 0.02));
        assert_eq!(achieved_pps(&t), 0.0);
    }

    #[test]
    fn config_validation() {
        assert!(SearchConfig::default().validate().is_ok());
        let bad = [
            SearchConfig { start_pps: 0.0, ..Default::default() },
            SearchConfig { start_pps: f64::NAN, ..Default::default() },
            SearchConfig { max_pps: f64::INFINITY, ..Default::default() },
            SearchConfig { pdr_loss_threshold: 1.0, ..Default::default() },
            SearchConfig { pdr_loss_threshold: f64::NAN, ..Default::default() },
            SearchConfig { precision: -0.1, ..Default::default() },
            SearchConfig { precision_pps: f64::NAN, ..Default::default() },
            SearchConfig { max_trials: 0, ..Default::default() },
            SearchConfig { generator_tolerance: -0.5, ..Default::default() },
        ];
        for c in bad {
            assert!(c.validate().is_err(), "{c:?}");
        }
        let c = SearchConfig { precision: 0.0, ..Default::default() };
        assert_eq!(c.allowed_width(1e6), MIN_WIDTH_PPS);
    }
}
