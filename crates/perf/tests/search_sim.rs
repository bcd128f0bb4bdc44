//! The NDR/PDR search against a simulated forwarder.
//!
//! The simulated SUT has a capacity of `C` packets/s, drawn anew for every trial with
//! seeded noise (uniform or Gaussian) as a factor `f` on its nominal value; a trial at
//! `r` pps for `D` seconds sends `round(min(r, G) * D)` packets (`G` the generator's
//! ceiling) and gets back `min(sent, floor(f * C * D))`. Variants: a soft knee, where the
//! loss ratio grows linearly from 0 at `K` to `top` at `C` before the hard limit; and a
//! generator ceiling below `C`. The true values are then known in closed form:
//! hard limit: NDR = `f * C`, PDR = `f * C / (1 - threshold)`; soft knee (threshold <
//! top): NDR = `f * K`, PDR = `f * (K + (C - K) * threshold / top)`.
//!
//! No test depends on time: the simulator is deterministic for a seed.

use proptest::prelude::*;
use sr6_perf::model::Trial;
use sr6_perf::search::{
    find_ndr_pdr, loss_ratio, phase, sut_loss_ratio, target, Limit, SearchConfig, SearchEvent, TrialRunner,
};
use sr6_perf::stats::summarize;

/// SplitMix64: small, seeded, good enough for noise.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    fn gauss(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[derive(Debug, Clone, Copy)]
enum Noise {
    None,
    /// Factor uniform in [1 - a, 1 + a].
    Uniform(f64),
    /// Factor normal with mean 1 and this standard deviation.
    Gauss(f64),
}

struct SimSut {
    capacity: f64,
    /// Soft knee: (K, loss ratio reached at C).
    knee: Option<(f64, f64)>,
    generator_ceiling: f64,
    /// The most the tester's receiving link takes, packets/s: what the SUT forwards
    /// above it is dropped there and counted in `tester_rx_dropped`.
    receive_ceiling: f64,
    noise: Noise,
    rng: Rng,
    duration_s: f64,
    /// The capacity factor drawn for each trial.
    factors: Vec<f64>,
}

impl SimSut {
    fn new(capacity: f64, noise: Noise, seed: u64) -> Self {
        SimSut {
            capacity,
            knee: None,
            generator_ceiling: f64::INFINITY,
            receive_ceiling: f64::INFINITY,
            noise,
            rng: Rng(seed),
            duration_s: 1.0,
            factors: Vec::new(),
        }
    }
}

impl TrialRunner for SimSut {
    fn run(&mut self, offered_pps: f64) -> Result<Trial, String> {
        let f = match self.noise {
            Noise::None => 1.0,
            Noise::Uniform(a) => 1.0 + a * (2.0 * self.rng.unit() - 1.0),
            Noise::Gauss(s) => (1.0 + s * self.rng.gauss()).max(0.0),
        };
        self.factors.push(f);
        let d = self.duration_s;
        let wanted = (offered_pps * d).round() as u64;
        let sent = (offered_pps.min(self.generator_ceiling) * d).round() as u64;
        let c = f * self.capacity;
        let mut received = sent.min((c * d).floor() as u64);
        if let Some((k, top)) = self.knee {
            let k = f * k;
            let rate = sent as f64 / d;
            if rate > k {
                let loss = (top * (rate - k) / (c - k)).min(1.0);
                let lost = (loss * sent as f64).ceil() as u64;
                received = received.min(sent - lost.min(sent));
            }
        }
        let forwarded = received;
        let received = forwarded.min((self.receive_ceiling * d).floor() as u64);
        Ok(Trial {
            offered_pps,
            sent,
            tx_dropped: wanted.saturating_sub(sent),
            received,
            duration_s: d,
            delivered_pps: received as f64 / d,
            delivery_ratio: if sent == 0 { 1.0 } else { received as f64 / sent as f64 },
            sut_rx_dropped: sent - forwarded,
            tester_rx_dropped: forwarded - received,
            sut_cpu_s: 0.0,
            sut_steal_s: 0.0,
            tester_steal_s: 0.0,
        })
    }
}

fn cfg(start: f64, precision: f64) -> SearchConfig {
    SearchConfig {
        start_pps: start,
        max_pps: 1e9,
        pdr_loss_threshold: 0.005,
        precision,
        precision_pps: 0.0,
        max_trials: 200,
        generator_tolerance: 0.02,
    }
}

/// Runs a search, collecting its events.
fn search(sut: &mut SimSut, c: &SearchConfig) -> (Result<sr6_perf::model::SearchResult, String>, Vec<SearchEvent>) {
    let mut events = Vec::new();
    let r = find_ndr_pdr(sut, c, &mut |e| events.push(e.clone()));
    (r, events)
}

/// `got` is a lower bound of `truth` to within the configured precision (`rel`, plus a
/// slack of `abs` pps for integer packet counts): `truth / (1 + rel) - abs <= got <=
/// truth + abs`.
fn within(got: f64, truth: f64, rel: f64, abs: f64) -> bool {
    got <= truth + abs && got >= truth / (1.0 + rel) - abs
}

/// The events are well formed: a Trying before each Trial at the same rate, as many
/// Trials as trials returned, in order, and Finished last.
fn check_events(events: &[SearchEvent], trials: &[Trial]) {
    let mut n = 0;
    let mut trying: Option<f64> = None;
    for e in events {
        match e {
            SearchEvent::Trying { offered_pps, .. } => trying = Some(*offered_pps),
            SearchEvent::Trial { trial, .. } => {
                assert_eq!(trying.take(), Some(trial.offered_pps));
                assert_eq!(&trials[n], trial);
                n += 1;
            }
            _ => {}
        }
    }
    assert_eq!(n, trials.len());
    assert!(matches!(events.last(), Some(SearchEvent::Finished { .. })));
}

fn finished(events: &[SearchEvent]) -> (sr6_perf::search::Bracket, sr6_perf::search::Bracket) {
    match events.last() {
        Some(SearchEvent::Finished { ndr, pdr, .. }) => (*ndr, *pdr),
        e => panic!("last event {e:?}"),
    }
}

fn trial_phases(events: &[SearchEvent]) -> Vec<(&'static str, &'static str, f64)> {
    events
        .iter()
        .filter_map(|e| match e {
            SearchEvent::Trial { phase, target, trial } => Some((*phase, *target, trial.offered_pps)),
            _ => None,
        })
        .collect()
}

#[test]
fn hard_limit_noiseless() {
    let c = 1_000_000.0;
    let conf = cfg(10_000.0, 0.01);
    let mut sut = SimSut::new(c, Noise::None, 1);
    let (r, ev) = search(&mut sut, &conf);
    let r = r.unwrap();
    check_events(&ev, &r.trials);
    assert!(within(r.ndr_pps, c, 0.01, 1.0), "NDR {}", r.ndr_pps);
    assert!(within(r.pdr_pps, c / 0.995, 0.01, 1.0), "PDR {}", r.pdr_pps);
    let (ndr, pdr) = finished(&ev);
    assert_eq!((ndr.limit, pdr.limit), (Limit::Sut, Limit::Sut));
    assert_eq!((r.ndr_limit, r.pdr_limit), (Limit::Sut, Limit::Sut));
    assert!(!r.pdr_tester_bound());
    assert!(ndr.hi_pps - ndr.lo_pps <= 0.01 * ndr.lo_pps);
    assert!(pdr.hi_pps - pdr.lo_pps <= 0.01 * pdr.lo_pps);
    assert!(ndr.lo_pps <= c && ndr.hi_pps > c);
    // Every trial at or below NDR was lossless, every one above PDR lossy beyond 0.5%.
    for t in &r.trials {
        if t.offered_pps <= r.ndr_pps {
            assert_eq!(loss_ratio(t), 0.0);
        }
    }
}

#[test]
fn exponential_phase_then_binary() {
    let c = 1_000_000.0;
    let start = 10_000.0;
    let mut sut = SimSut::new(c, Noise::None, 1);
    let (r, ev) = search(&mut sut, &cfg(start, 0.01));
    r.unwrap();
    let ph = trial_phases(&ev);
    // 10k, 20k, ..., 640k lossless, 1.28M lossy beyond the threshold: 8 doublings.
    let exp: Vec<f64> = ph.iter().filter(|p| p.0 == phase::EXPONENTIAL).map(|p| p.2).collect();
    let want: Vec<f64> = (0..8).map(|i| start * f64::from(1u32 << i)).collect();
    assert_eq!(exp, want);
    assert!(ph[..8].iter().all(|p| p.0 == phase::EXPONENTIAL && p.1 == target::BOTH));
    // Then only binary steps, each at the middle of a bracket; never downward.
    assert!(ph[8..].iter().all(|p| p.0 == phase::BINARY));
    assert!(!ph.is_empty() && ph.len() > 8);
    // The first binary step is the middle of [640k, 1.28M].
    assert_eq!(ph[8].2, 960_000.0);
}

#[test]
fn trial_count_is_logarithmic() {
    let conf = cfg(1_000.0, 0.01);
    let count = |c: f64, conf: &SearchConfig| {
        let mut sut = SimSut::new(c, Noise::None, 7);
        search(&mut sut, conf).0.unwrap().trials.len()
    };
    for c in [3_000.0, 77_777.0, 1_000_000.0, 12_345_678.0] {
        let n = count(c, &conf);
        // Exponential: the doublings up to the PDR, plus the first failing one; binary:
        // at most log2(1 / precision) + 1 halvings per target, the two targets apart.
        let exp = ((c / 0.995) / 1_000.0).log2().ceil() + 1.0;
        let bound = exp + 2.0 * ((1.0f64 / 0.01).log2().ceil() + 1.0);
        assert!((n as f64) <= bound, "C {c}: {n} trials > {bound}");
    }
    // 1024 times the capacity: about 10 more doublings, the same binary phase.
    let (a, b) = (count(50_000.0, &conf), count(50_000.0 * 1024.0, &conf));
    assert!((8..=12).contains(&(b as i64 - a as i64)), "{a} -> {b}");
    // Ten times the precision: about log2(10) = 3.3 more halvings per target.
    let fine = cfg(1_000.0, 0.001);
    let (a, b) = (count(1e6, &conf), count(1e6, &fine));
    assert!((4..=10).contains(&(b as i64 - a as i64)), "{a} -> {b}");
}

#[test]
fn lossy_start_searches_down() {
    let c = 100_000.0;
    let start = 330_000.0;
    let mut sut = SimSut::new(c, Noise::None, 3);
    let (r, ev) = search(&mut sut, &cfg(start, 0.01));
    let r = r.unwrap();
    check_events(&ev, &r.trials);
    let ph = trial_phases(&ev);
    assert_eq!(ph[0], (phase::EXPONENTIAL, target::BOTH, start));
    assert_eq!(ph[1], (phase::DOWNWARD, target::BOTH, start / 2.0));
    assert_eq!(ph[2], (phase::DOWNWARD, target::BOTH, start / 4.0));
    assert!(ph[3..].iter().all(|p| p.0 == phase::BINARY));
    assert!(within(r.ndr_pps, c, 0.01, 1.0), "NDR {}", r.ndr_pps);
    assert!(within(r.pdr_pps, c / 0.995, 0.01, 1.0), "PDR {}", r.pdr_pps);
}

#[test]
fn soft_knee() {
    // Loss from 0 at K = 800k growing to 2% at C = 1M: NDR = K, PDR@0.5% = K + (C-K)/4.
    let (k, c) = (800_000.0, 1_000_000.0);
    for seed in 0..20 {
        let mut sut = SimSut::new(c, Noise::None, seed);
        sut.knee = Some((k, 0.02));
        let (r, ev) = search(&mut sut, &cfg(10_000.0, 0.005));
        let r = r.unwrap();
        check_events(&ev, &r.trials);
        assert!(within(r.ndr_pps, k, 0.005, 1.0), "NDR {}", r.ndr_pps);
        assert!(within(r.pdr_pps, 850_000.0, 0.005, 50.0), "PDR {}", r.pdr_pps);
    }
    // Starting inside the knee (some loss, below the PDR threshold): the NDR goes down
    // while the PDR goes up.
    let mut sut = SimSut::new(c, Noise::None, 0);
    sut.knee = Some((k, 0.02));
    let (r, ev) = search(&mut sut, &cfg(820_000.0, 0.005));
    let r = r.unwrap();
    let ph = trial_phases(&ev);
    assert_eq!(ph[1], (phase::EXPONENTIAL, target::PDR, 1_640_000.0));
    assert!(ph.iter().any(|p| p.0 == phase::DOWNWARD && p.1 == target::NDR && p.2 == 410_000.0));
    assert!(within(r.ndr_pps, k, 0.005, 1.0), "NDR {}", r.ndr_pps);
    assert!(within(r.pdr_pps, 850_000.0, 0.005, 50.0), "PDR {}", r.pdr_pps);
}

#[test]
fn generator_ceiling_below_capacity() {
    // The generator tops out at 300 kpps, the SUT would do 1 Mpps.
    let g = 300_000.0;
    let mut sut = SimSut::new(1_000_000.0, Noise::None, 5);
    sut.generator_ceiling = g;
    let conf = cfg(10_000.0, 0.01);
    let (r, ev) = search(&mut sut, &conf);
    let r = r.unwrap();
    check_events(&ev, &r.trials);
    // 320k is the first doubling the generator misses.
    assert!(ev.iter().any(|e| matches!(e,
        SearchEvent::GeneratorLimited { offered_pps, achieved_pps }
            if *offered_pps == 320_000.0 && *achieved_pps == g)));
    let (ndr, pdr) = finished(&ev);
    assert_eq!((ndr.limit, pdr.limit), (Limit::Generator, Limit::Generator));
    // The result says so (the report marks such a PDR as a lower bound).
    assert_eq!((r.ndr_limit, r.pdr_limit), (Limit::Generator, Limit::Generator));
    assert!(r.pdr_tester_bound());
    // Converged on the generator's ceiling, overstated by at most its tolerance.
    for got in [r.ndr_pps, r.pdr_pps] {
        assert!(got >= g / 1.01 && got <= g / (1.0 - conf.generator_tolerance), "{got}");
    }
    assert!(ndr.hi_pps > g / (1.0 - conf.generator_tolerance));
    // The generator's shortfall (tx_dropped) was never taken for loss.
    assert!(r.trials.iter().any(|t| t.tx_dropped > 0));
    assert!(r.trials.iter().all(|t| loss_ratio(t) == 0.0));
}

#[test]
fn a_tester_that_cannot_receive_more_bounds_the_result() {
    // The SUT would forward 1 Mpps, the tester takes back only 600 kpps.
    let mut sut = SimSut::new(1_000_000.0, Noise::None, 6);
    sut.receive_ceiling = 600_000.0;
    let (r, ev) = search(&mut sut, &cfg(10_000.0, 0.01));
    let r = r.unwrap();
    check_events(&ev, &r.trials);
    let (ndr, pdr) = finished(&ev);
    assert_eq!((ndr.limit, pdr.limit), (Limit::TesterReceive, Limit::TesterReceive));
    assert_eq!((r.ndr_limit, r.pdr_limit), (Limit::TesterReceive, Limit::TesterReceive));
    assert!(r.pdr_tester_bound(), "reported as a lower bound");
    assert!(r.pdr_pps >= 590_000.0 && r.pdr_pps <= 610_000.0, "{}", r.pdr_pps);
    assert!(r.trials.iter().any(|t| t.tester_rx_dropped > 0 && sut_loss_ratio(t) == 0.0));

    // Where the SUT loses frames itself first, it is the SUT's limit, as before.
    let mut sut = SimSut::new(500_000.0, Noise::None, 6);
    sut.receive_ceiling = 600_000.0;
    let (r, _) = search(&mut sut, &cfg(10_000.0, 0.01));
    let r = r.unwrap();
    assert_eq!((r.ndr_limit, r.pdr_limit), (Limit::Sut, Limit::Sut));
    assert!(!r.pdr_tester_bound());
    // A SUT a little above the tester: the bracket closes at a rate the SUT forwarded
    // whole (640k, the first doubling past 600k), so the tester's limit again.
    let mut sut = SimSut::new(700_000.0, Noise::None, 6);
    sut.receive_ceiling = 600_000.0;
    let (r, _) = search(&mut sut, &cfg(10_000.0, 0.01));
    assert_eq!(r.unwrap().pdr_limit, Limit::TesterReceive);
}

#[test]
fn generator_ceiling_at_the_start() {
    // The generator cannot even do the start rate: the search goes down below it.
    let mut sut = SimSut::new(1_000_000.0, Noise::None, 5);
    sut.generator_ceiling = 50_000.0;
    let (r, ev) = search(&mut sut, &cfg(200_000.0, 0.01));
    let r = r.unwrap();
    let ph = trial_phases(&ev);
    assert_eq!(ph[1], (phase::DOWNWARD, target::BOTH, 100_000.0));
    assert!(r.ndr_pps >= 50_000.0 / 1.01 && r.ndr_pps <= 50_000.0 / 0.98, "{}", r.ndr_pps);
    assert_eq!(finished(&ev).0.limit, Limit::Generator);
}

#[test]
fn max_rate_lossless() {
    // max_pps below the SUT's capacity: NDR = PDR = max_pps, said in an event.
    let mut sut = SimSut::new(1_000_000.0, Noise::None, 5);
    let conf = SearchConfig { max_pps: 600_000.0, ..cfg(10_000.0, 0.01) };
    let (r, ev) = search(&mut sut, &conf);
    let r = r.unwrap();
    assert_eq!((r.ndr_pps, r.pdr_pps), (600_000.0, 600_000.0));
    assert!(ev.iter().any(|e| matches!(e,
        SearchEvent::MaxRateReached { target: t, max_pps } if *t == target::BOTH && *max_pps == 600_000.0)));
    let (ndr, pdr) = finished(&ev);
    assert_eq!((ndr.limit, pdr.limit), (Limit::MaxRate, Limit::MaxRate));
    assert_eq!((r.ndr_limit, r.pdr_limit), (Limit::MaxRate, Limit::MaxRate));
    assert!(r.pdr_tester_bound());
    // 10k .. 320k doubling, then max_pps itself: 7 trials.
    let rates: Vec<f64> = r.trials.iter().map(|t| t.offered_pps).collect();
    assert_eq!(rates.last(), Some(&600_000.0));
    assert_eq!(rates.len(), 7);
    // PDR at max_pps but NDR below it.
    let mut sut = SimSut::new(1_000_000.0, Noise::None, 5);
    let conf = SearchConfig { max_pps: 1_003_000.0, ..cfg(10_000.0, 0.01) };
    let (r, ev) = search(&mut sut, &conf);
    let r = r.unwrap();
    assert_eq!(r.pdr_pps, 1_003_000.0);
    assert!(within(r.ndr_pps, 1_000_000.0, 0.01, 1.0));
    assert!(ev.iter().any(|e| matches!(e,
        SearchEvent::MaxRateReached { target: t, .. } if *t == target::PDR)));
}

#[test]
fn start_above_max_and_max_is_start() {
    let mut sut = SimSut::new(1_000_000.0, Noise::None, 5);
    let conf = SearchConfig { start_pps: 2e6, max_pps: 5e5, ..cfg(1.0, 0.01) };
    let (r, _) = search(&mut sut, &conf);
    let r = r.unwrap();
    assert_eq!(r.trials.len(), 1);
    assert_eq!(r.ndr_pps, 5e5);
}

#[test]
fn nothing_satisfies_down_to_the_floor() {
    // A SUT that loses everything: halving down to the 1 pps floor, then NDR = PDR = 0.
    let mut sut = SimSut::new(0.0, Noise::None, 5);
    let (r, ev) = search(&mut sut, &cfg(10_000.0, 0.01));
    let r = r.unwrap();
    assert_eq!((r.ndr_pps, r.pdr_pps), (0.0, 0.0));
    let (ndr, _) = finished(&ev);
    assert_eq!(ndr.limit, Limit::NotFound);
    assert!(r.trials.len() <= 16, "{}", r.trials.len());
    // With an absolute floor of 1 kpps it gives up sooner.
    let mut sut = SimSut::new(0.0, Noise::None, 5);
    let conf = SearchConfig { precision_pps: 1_000.0, ..cfg(10_000.0, 0.01) };
    let (r, _) = search(&mut sut, &conf);
    assert_eq!(r.unwrap().trials.len(), 5); // 10k, 5k, 2.5k, 1.25k, 625
}

#[test]
fn duplicates_and_tx_dropped_are_not_loss() {
    let mut runner = |rate: f64| -> Result<Trial, String> {
        let sent = rate.round() as u64;
        // Up to 1 Mpps everything comes back, with duplicates; above, 1% is lost. The
        // generator always reports a few ring-full drops.
        let received = if rate <= 1e6 { sent + 10 } else { sent - sent / 100 };
        Ok(Trial {
            offered_pps: rate,
            sent,
            tx_dropped: 17,
            received,
            duration_s: 1.0,
            delivered_pps: received as f64,
            delivery_ratio: received as f64 / sent as f64,
            sut_rx_dropped: 0,
            tester_rx_dropped: 0,
            sut_cpu_s: 0.0,
            sut_steal_s: 0.0,
            tester_steal_s: 0.0,
        })
    };
    let r = find_ndr_pdr(&mut runner, &cfg(10_000.0, 0.01), &mut |_| {}).unwrap();
    assert!(within(r.ndr_pps, 1e6, 0.01, 1.0), "{}", r.ndr_pps);
    assert!(within(r.pdr_pps, 1e6, 0.01, 1.0), "{}", r.pdr_pps);
}

#[test]
fn errors_abort_the_search() {
    // A runner error, with its message.
    let mut n = 0;
    let mut runner = |rate: f64| -> Result<Trial, String> {
        n += 1;
        if n == 3 {
            return Err("generator crashed".into());
        }
        SimSut::new(1e6, Noise::None, 0).run(rate)
    };
    let e = find_ndr_pdr(&mut runner, &cfg(10_000.0, 0.01), &mut |_| {}).unwrap_err();
    assert!(e.contains("generator crashed") && e.contains("40000"), "{e}");
    // A bad duration.
    let mut runner = |rate: f64| -> Result<Trial, String> {
        let mut t = SimSut::new(1e6, Noise::None, 0).run(rate)?;
        t.duration_s = f64::NAN;
        Ok(t)
    };
    let e = find_ndr_pdr(&mut runner, &cfg(10_000.0, 0.01), &mut |_| {}).unwrap_err();
    assert!(e.contains("duration"), "{e}");
    // A bad configuration runs no trial.
    let mut sut = SimSut::new(1e6, Noise::None, 0);
    for conf in [
        SearchConfig { start_pps: f64::NAN, ..cfg(1.0, 0.01) },
        SearchConfig { max_pps: 0.0, ..cfg(1.0, 0.01) },
        SearchConfig { pdr_loss_threshold: f64::NAN, ..cfg(1.0, 0.01) },
        SearchConfig { precision: f64::NAN, ..cfg(1.0, 0.01) },
    ] {
        assert!(search(&mut sut, &conf).0.is_err());
    }
    assert!(sut.factors.is_empty());
    // The trial budget.
    let conf = SearchConfig { max_trials: 5, ..cfg(10_000.0, 0.01) };
    let e = search(&mut sut, &conf).0.unwrap_err();
    assert!(e.contains("did not converge in 5 trials"), "{e}");
    assert_eq!(sut.factors.len(), 5);
}

#[test]
fn zero_precision_and_zero_threshold() {
    // precision 0: the 1 pps floor ends it; threshold 0: PDR = NDR.
    let mut sut = SimSut::new(123_457.0, Noise::None, 0);
    let conf = SearchConfig { precision: 0.0, pdr_loss_threshold: 0.0, ..cfg(10_000.0, 0.0) };
    let (r, ev) = search(&mut sut, &conf);
    let r = r.unwrap();
    let (ndr, pdr) = finished(&ev);
    assert!(ndr.hi_pps - ndr.lo_pps <= 1.0);
    assert!((r.ndr_pps - 123_457.0).abs() <= 1.0, "{}", r.ndr_pps);
    assert_eq!(r.pdr_pps, r.ndr_pps);
    assert_eq!(pdr, ndr);
    assert!(r.trials.len() <= 30, "{}", r.trials.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// Hard limit with uniform noise of +-a on the capacity: every lossless trial is at
    /// most C(1+a), every lossy one above C(1-a); so the NDR lands in
    /// [C(1-a)/(1+p), C(1+a)] and the PDR likewise around C/(1-threshold).
    #[test]
    fn lands_within_precision(
        seed in any::<u64>(),
        capacity in 20_000.0f64..20_000_000.0,
        a in prop_oneof![Just(0.0f64), 0.0f64..0.03],
        precision in 0.001f64..0.05,
        start in 1_000.0f64..15_000.0,
        threshold in prop_oneof![Just(0.005f64), 0.0f64..0.05],
    ) {
        let mut sut = SimSut::new(capacity, Noise::Uniform(a), seed);
        let conf = SearchConfig { pdr_loss_threshold: threshold, ..cfg(start, precision) };
        let (r, ev) = search(&mut sut, &conf);
        let r = r.unwrap();
        check_events(&ev, &r.trials);
        let (lo, hi) = (capacity * (1.0 - a), capacity * (1.0 + a));
        prop_assert!(r.ndr_pps <= hi + 1.0 && r.ndr_pps >= (lo - 1.0) / (1.0 + precision) - 1.0,
            "NDR {} not in [{lo}, {hi}]", r.ndr_pps);
        let (plo, phi) = (lo / (1.0 - threshold), hi / (1.0 - threshold));
        prop_assert!(r.pdr_pps <= phi + 1.0 && r.pdr_pps >= (plo - 1.0) / (1.0 + precision) - 1.0,
            "PDR {} not in [{plo}, {phi}]", r.pdr_pps);
        prop_assert!(r.ndr_pps <= r.pdr_pps);
        // Logarithmic trial count.
        let bound = (phi / start).log2().ceil() + 1.0
            + 2.0 * ((1.0 / precision).log2().ceil() + 1.0);
        prop_assert!((r.trials.len() as f64) <= bound, "{} trials > {bound}", r.trials.len());
        let (ndr, pdr) = finished(&ev);
        prop_assert_eq!((ndr.limit, pdr.limit), (Limit::Sut, Limit::Sut));
        // The stopping rule held.
        prop_assert!(ndr.hi_pps - ndr.lo_pps <= (precision * ndr.lo_pps).max(1.0));
        prop_assert!(pdr.hi_pps - pdr.lo_pps <= (precision * pdr.lo_pps).max(1.0));
    }

    /// Noiseless, the bounds are tight: the true value is inside the final bracket.
    #[test]
    fn noiseless_truth_inside_bracket(
        capacity in 5_000.0f64..50_000_000.0,
        precision in 0.0005f64..0.05,
        start in 1_000.0f64..100_000.0,
    ) {
        let mut sut = SimSut::new(capacity, Noise::None, 0);
        let (r, ev) = search(&mut sut, &cfg(start, precision));
        let r = r.unwrap();
        let (ndr, pdr) = finished(&ev);
        prop_assert!(ndr.lo_pps <= capacity + 0.5 && ndr.hi_pps > capacity - 1.0, "{ndr:?}");
        let p = capacity / 0.995;
        prop_assert!(pdr.lo_pps <= p + 1.0 && pdr.hi_pps > p - 1.0, "{pdr:?}");
        prop_assert!(within(r.ndr_pps, capacity, precision, 1.0));
        prop_assert!(within(r.pdr_pps, p, precision, 1.0));
    }
}

#[test]
fn repetitions_cv_follows_the_noise() {
    let c = 1_000_000.0;
    let conf = cfg(10_000.0, 0.001);
    let reps = |noise: Noise| {
        let mut ndr = Vec::new();
        let mut pdr = Vec::new();
        let mut factors = Vec::new();
        for seed in 0..30 {
            let mut sut = SimSut::new(c, noise, 1000 + seed);
            let r = search(&mut sut, &conf).0.unwrap();
            ndr.push(r.ndr_pps);
            pdr.push(r.pdr_pps);
            factors.extend(sut.factors);
        }
        (summarize(&ndr), summarize(&pdr), summarize(&factors))
    };
    // No noise: every repetition finds the same rates.
    let (ndr, pdr, _) = reps(Noise::None);
    assert_eq!((ndr.n, ndr.std, ndr.cv, ndr.ci95), (30, 0.0, 0.0, 0.0));
    assert_eq!(pdr.cv, 0.0);
    // 1% Gaussian noise on the capacity per trial. The drawn factors have CV 1%
    // (hundreds of draws: within 10%).
    let sigma = 0.01;
    let (ndr, pdr, f) = reps(Noise::Gauss(sigma));
    assert!(f.n > 500 && (f.cv - sigma).abs() < 0.1 * sigma, "{f:?}");
    assert!((f.mean - 1.0).abs() < 3.0 * f.ci95 / 1.96 + 1e-3, "{f:?}");
    // The NDR of a repetition is decided by the last few trials near the capacity, each
    // with its own draw: its spread is of the order of the noise, far above the 0.1%
    // precision, and not larger than the noise plus the precision.
    for s in [ndr, pdr] {
        assert_eq!(s.n, 30);
        assert!(s.cv > 0.3 * sigma && s.cv < sigma + 0.001, "{s:?}");
        assert!(s.ci95 > 0.0 && s.ci95 < 3.0 * s.std);
    }
    assert!((ndr.mean - c).abs() < 3.0 * sigma * c, "{ndr:?}");
    assert!((pdr.mean - c / 0.995).abs() < 3.0 * sigma * c, "{pdr:?}");
    // Table I's CI95 is t * std / sqrt(n): with n = 30, t(0.975, 29).
    assert!((ndr.ci95 - 2.045229642132703 * ndr.std / 30f64.sqrt()).abs() < 1e-9 * ndr.std);
}

proptest! {
    /// A runner returning arbitrary counters (a flaky generator, garbage) never makes the
    /// search panic or loop: it ends within its trial budget, with rates it offered.
    #[test]
    fn arbitrary_trials_never_panic(
        seed in any::<u64>(),
        start in 1.0f64..1e6,
        max in 1.0f64..1e8,
    ) {
        let mut rng = Rng(seed);
        let mut runner = |rate: f64| -> Result<Trial, String> {
            let sent = match rng.next_u64() % 4 {
                0 => 0,
                1 => (rate * rng.unit()) as u64,
                _ => rate as u64,
            };
            let received = match rng.next_u64() % 3 {
                0 => sent,
                1 => rng.next_u64() % (sent + 2),
                _ => u64::MAX,
            };
            Ok(Trial {
                offered_pps: rate,
                sent,
                tx_dropped: rng.next_u64(),
                received,
                duration_s: 1.0,
                delivered_pps: f64::NAN,
                delivery_ratio: f64::NAN,
                sut_rx_dropped: 0,
                tester_rx_dropped: 0,
                sut_cpu_s: 0.0,
                sut_steal_s: 0.0,
                tester_steal_s: 0.0,
            })
        };
        let conf = SearchConfig { start_pps: start, max_pps: max, ..SearchConfig::default() };
        let mut seen = 0usize;
        match find_ndr_pdr(&mut runner, &conf, &mut |_| seen += 1) {
            Ok(r) => {
                prop_assert!(r.trials.len() <= conf.max_trials);
                prop_assert!(r.ndr_pps >= 0.0 && r.ndr_pps <= r.pdr_pps && r.pdr_pps <= max);
                prop_assert!(r.trials.iter().all(|t| t.offered_pps > 0.0 && t.offered_pps <= max));
            }
            Err(e) => prop_assert!(e.contains("did not converge"), "{e}"),
        }
        prop_assert!(seen > 0);
    }
}
