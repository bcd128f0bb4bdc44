//! The orchestrator (SRPerf Fig. 1): for each forwarder and behaviour, a fresh testbed,
//! the forwarder configured and started by its driver, the tester opened, then
//! `repetitions` NDR/PDR searches, each followed by a trial at the highest rate the
//! search may offer (the forwarding rate at maximum offered load, [`MaxLoad`]), and a
//! latency trial at a fraction of the NDR; the summaries over repetitions go into a
//! [`BehaviorResult`]. With `route_churn_per_s`, route changes reach the forwarder
//! throughout ([`crate::churn`]).

use std::path::PathBuf;
use std::time::Duration;

use crate::driver::{self, Forwarder};
use crate::experiment::Experiment;
use crate::model::{Behavior, BehaviorResult, Latency, MaxLoad, SearchResult, Trial};
use crate::search::{self, SearchConfig, SearchEvent};
use crate::stats;
use crate::testbed::{sweep_stale, Testbed};

/// The tester of one testbed: sends one behaviour's traffic at a rate and counts what
/// comes back.
pub trait Tester {
    /// One trial at `offered_pps` for `duration`; with `latency`, also the one-way
    /// latency of the packets received.
    fn trial(
        &mut self,
        offered_pps: f64,
        duration: Duration,
        latency: bool,
    ) -> Result<(Trial, Option<Latency>), String>;
    /// The highest rate the generator itself can offer (packets/s).
    fn max_pps(&self) -> f64;
    /// Bytes of the frame sent to the SUT.
    fn frame_bytes(&self) -> usize;
    /// How it sends, for the notes ("XDP live frames out of tg0", ...).
    fn generator(&self) -> String {
        String::new()
    }
}

/// Opens the tester on a testbed for a behaviour.
pub type TesterFactory<'a> = dyn FnMut(&Testbed, Behavior, &Experiment) -> Result<Box<dyn Tester>, String> + 'a;

/// Where progress goes.
pub trait Progress {
    /// A new (forwarder, behaviour, repetition) starts.
    fn stage(&mut self, forwarder: &str, behavior: Behavior, repetition: usize, of: usize);
    /// A search event (a trial about to run, a trial done, ...).
    fn event(&mut self, e: &SearchEvent);
    /// Something the user must know (a placement warning, a skipped behaviour).
    fn warn(&mut self, msg: &str);
}

/// Options that are not part of the experiment.
pub struct RunOptions {
    /// The `sr6` binary for the sr6 driver.
    pub sr6_bin: PathBuf,
}

/// What a run produced, and what it had to say about it.
pub struct RunOutput {
    pub results: Vec<BehaviorResult>,
    pub warnings: Vec<String>,
    /// Facts worth keeping with the results (the generator's ceiling per testbed).
    pub notes: Vec<String>,
}

/// Runs the whole experiment.
pub fn run(
    exp: &Experiment,
    opts: &RunOptions,
    open_tester: &mut TesterFactory<'_>,
    progress: &mut dyn Progress,
) -> Result<RunOutput, String> {
    exp.validate()?;
    let behaviors = exp.behaviors()?;
    let stale = sweep_stale();
    if !stale.is_empty() {
        progress.warn(&format!("removed namespaces of an earlier run: {}", stale.join(", ")));
    }
    let mut out = RunOutput { results: Vec::new(), warnings: Vec::new(), notes: Vec::new() };
    let warn = |progress: &mut dyn Progress, w: String, out: &mut RunOutput| {
        progress.warn(&w);
        if !out.warnings.contains(&w) {
            out.warnings.push(w);
        }
    };
    for fname in &exp.forwarders {
        let mut fwd = driver::by_name(fname, &opts.sr6_bin, exp)?;
        for &b in &behaviors {
            if let Some(why) = crate::plan::unsupported(fname, b) {
                warn(progress, format!("{fname} {}: skipped — {why}", b.name()), &mut out);
                continue;
            }
            let tb = Testbed::create("", exp.cpus)?;
            for w in tb.check_placement() {
                warn(progress, w, &mut out);
            }
            for w in fwd.start(&tb, b)? {
                warn(progress, format!("{fname}: {w}"), &mut out);
            }
            let churn = match exp.route_churn_per_s {
                0 => None,
                n => Some(crate::churn::Churn::start(fwd.as_ref(), &tb, n)?),
            };
            let r = measure(exp, fwd.as_ref(), &tb, b, open_tester, progress, &mut out.notes);
            if let Some(c) = churn {
                let note = c.stop().map(|n| format!("{fname} {}: {n}", b.name()));
                match note {
                    Ok(n) => out.notes.push(n),
                    Err(e) => warn(progress, format!("{fname} {}: {e}", b.name()), &mut out),
                }
            }
            let stopped = fwd.stop(&tb);
            drop(tb);
            let r = r?;
            stopped?;
            out.results.push(r);
        }
    }
    Ok(out)
}

/// Runs a trial with the testbed's link drop counters and its CPUs' times read around
/// it: the trial's `sut_rx_dropped`, `tester_rx_dropped`, `sut_cpu_s`, `sut_steal_s`
/// and `tester_steal_s` (left 0 if they cannot be read).
fn attributed(tb: &Testbed, run: impl FnOnce() -> Result<Trial, String>) -> Result<Trial, String> {
    let before = tb.link_drops().ok();
    let cpu_before = tb.cpu_times();
    let mut t = run()?;
    if let (Some(a), Some(b)) = (cpu_before, tb.cpu_times()) {
        t.sut_cpu_s = (b.sut_busy_s - a.sut_busy_s).max(0.0);
        t.sut_steal_s = (b.sut_steal_s - a.sut_steal_s).max(0.0);
        t.tester_steal_s = (b.tester_steal_s - a.tester_steal_s).max(0.0);
    }
    if let (Some(a), Ok(b)) = (before, tb.link_drops()) {
        let d = a.since(b);
        t.sut_rx_dropped = d.dut0_rx;
        t.tester_rx_dropped = d.tester_rx;
    }
    Ok(t)
}

/// How often [`repeat_trial`] runs a trial again.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Retries {
    /// While it lost packets (and the tester kept up).
    lossy: usize,
    /// While the tester fell short or lost frames itself.
    short: usize,
    /// How far short of its rate the tester may fall (a fraction) and still count.
    tolerance: f64,
}

/// Runs a trial, and again while it lost packets (up to `r.lossy` times) or while the
/// tester fell short (by more than `r.tolerance` of its rate: a stall of the tester's
/// CPU of several milliseconds, rare but not never; or its receiving link dropped
/// frames; up to `r.short` times). RFC 2544 §24 lets a trial be repeated; the best one
/// counts: one the tester kept up in first, then the best delivery. A trial the tester
/// fell short in does not count against the SUT at all, but the search takes its rate
/// as the tester's ceiling: one stall must not cap a whole search.
fn repeat_trial(mut run: impl FnMut() -> Result<Trial, String>, r: Retries) -> Result<Trial, String> {
    let short = |t: &Trial| search::generator_limited(t, t.offered_pps, r.tolerance) || t.tester_rx_dropped > 0;
    let mut best = run()?;
    let mut tries = 0;
    loop {
        let budget = if short(&best) { r.short } else { r.lossy };
        if tries >= budget || (best.received >= best.sent && !short(&best)) {
            break;
        }
        tries += 1;
        let t = run()?;
        if (short(&t), -t.delivery_ratio) < (short(&best), -best.delivery_ratio) {
            best = t;
        }
    }
    Ok(best)
}

/// The repetitions of one (forwarder, behaviour).
fn measure(
    exp: &Experiment,
    fwd: &dyn Forwarder,
    tb: &Testbed,
    b: Behavior,
    open_tester: &mut TesterFactory<'_>,
    progress: &mut dyn Progress,
    notes: &mut Vec<String>,
) -> Result<BehaviorResult, String> {
    let mut tester = open_tester(tb, b, exp)?;
    notes.push(format!(
        "{} {}: generator ceiling {:.1} kpps (unpaced probe through the SUT){}",
        fwd.name(),
        b.name(),
        tester.max_pps() / 1e3,
        match tester.generator() {
            g if g.is_empty() => String::new(),
            g => format!("; {g}"),
        }
    ));
    let duration = Duration::from_secs_f64(exp.trial_duration_s);
    let max = if exp.max_pps > 0.0 { exp.max_pps.min(tester.max_pps()) } else { tester.max_pps() };
    // Warm-up: caches, neighbour entries, the forwarder's first packets.
    let (warm, _) = tester.trial(exp.start_pps.min(max), Duration::from_millis(200), false)?;
    warmed_up(fwd, b, &warm)?;
    let mut reps: Vec<SearchResult> = Vec::new();
    let mut at_max: Vec<Trial> = Vec::new();
    for rep in 0..exp.repetitions {
        progress.stage(fwd.name(), b, rep + 1, exp.repetitions);
        let cfg = SearchConfig {
            start_pps: exp.start_pps.min(max),
            max_pps: max,
            pdr_loss_threshold: exp.pdr_loss_thresholds[0],
            precision: exp.precision,
            ..SearchConfig::default()
        };
        let retries = Retries {
            lossy: exp.retry_lossy_trials,
            short: exp.retry_short_trials,
            tolerance: cfg.generator_tolerance,
        };
        let mut runner = |rate: f64| -> Result<Trial, String> {
            repeat_trial(|| attributed(tb, || Ok(tester.trial(rate, duration, false)?.0)), retries)
        };
        let mut ev = |e: &SearchEvent| progress.event(e);
        let r = search::find_ndr_pdr(&mut runner, &cfg, &mut ev)
            .map_err(|e| format!("{} {}: {e}", fwd.name(), b.name()))?;
        reps.push(r);
        if exp.max_load_trial {
            // Once, not repeated: a trial the tester falls short in is what this measures.
            let (ph, tg) = (search::phase::MAX_LOAD, search::target::FRMOL);
            progress.event(&SearchEvent::Trying { phase: ph, target: tg, offered_pps: max });
            let t = attributed(tb, || Ok(tester.trial(max, duration, false)?.0))?;
            progress.event(&SearchEvent::Trial { phase: ph, target: tg, trial: t });
            at_max.push(t);
        }
    }
    let max_load = (!at_max.is_empty()).then(|| max_load(at_max, exp.pdr_loss_thresholds[0]));
    let ndr = stats::summarize(&reps.iter().map(|r| r.ndr_pps).collect::<Vec<_>>());
    let pdr = stats::summarize(&reps.iter().map(|r| r.pdr_pps).collect::<Vec<_>>());
    let latency = if exp.latency_pps > 0.0 {
        tester.trial(exp.latency_pps, duration, true)?.1
    } else if exp.latency_fraction > 0.0 && ndr.mean > 0.0 {
        let rate = (ndr.mean * exp.latency_fraction).max(1.0);
        tester.trial(rate, duration, true)?.1
    } else {
        None
    };
    Ok(BehaviorResult {
        forwarder: fwd.name().to_string(),
        behavior: b,
        frame_bytes: tester.frame_bytes(),
        ndr_pps: ndr.mean,
        pdr_pps: pdr.mean,
        pdr_loss_threshold: exp.pdr_loss_thresholds[0],
        ndr,
        pdr,
        repetitions: reps,
        latency,
        max_load,
    })
}

/// Checks that the state a behaviour needs before its trials is there (a dynamic SR
/// proxy's cache, which the tester's warm-up frame fills: [`Behavior::needs_warm_up`]):
/// the forwarder's own check ([`Forwarder::check_warm_up`]), and the warm-up trial must
/// have brought packets back.
fn warmed_up(fwd: &dyn Forwarder, b: Behavior, warm: &Trial) -> Result<(), String> {
    if !b.needs_warm_up() {
        return Ok(());
    }
    let what = format!("{} {}", fwd.name(), b.name());
    fwd.check_warm_up(b).map_err(|e| format!("{what}: {e}"))?;
    if warm.sent > 0 && warm.received == 0 {
        return Err(format!(
            "{what}: nothing came back in the warm-up trial ({} packets sent): the proxy's cache is \
             still empty — the tester's warm-up frame (tg1 -> dut1) did not fill it",
            warm.sent
        ));
    }
    Ok(())
}

/// The forwarding rate at maximum offered load from its trials (`threshold`: the PDR's
/// loss threshold, which tells a saturated SUT).
fn max_load(trials: Vec<Trial>, threshold: f64) -> MaxLoad {
    let offered = stats::summarize(&trials.iter().map(search::achieved_pps).collect::<Vec<_>>());
    let forwarded = stats::summarize(&trials.iter().map(|t| t.delivered_pps).collect::<Vec<_>>());
    let saturated = trials.iter().filter(|t| MaxLoad::sut_saturated(t, threshold)).count();
    MaxLoad { trials, offered, forwarded, saturated }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(sent: u64, tx_dropped: u64, received: u64) -> Trial {
        Trial {
            offered_pps: 1000.0,
            sent,
            tx_dropped,
            received,
            duration_s: 1.0,
            delivered_pps: received as f64,
            delivery_ratio: received as f64 / sent.max(1) as f64,
            sut_rx_dropped: 0,
            tester_rx_dropped: 0,
            sut_cpu_s: 0.0,
            sut_steal_s: 0.0,
            tester_steal_s: 0.0,
        }
    }

    fn replay(ts: &[Trial], retries: usize) -> (Trial, usize) {
        replay_with(ts, Retries { lossy: retries, short: retries, tolerance: 0.02 })
    }

    fn replay_with(ts: &[Trial], r: Retries) -> (Trial, usize) {
        let mut i = 0;
        let t = repeat_trial(
            || {
                i += 1;
                Ok(ts[i - 1])
            },
            r,
        )
        .unwrap();
        (t, i)
    }

    #[test]
    fn short_and_lossy_trials_have_budgets_of_their_own() {
        let short = trial(800, 200, 800);
        let lossy = trial(1000, 0, 990);
        let clean = trial(1000, 0, 1000);
        let r = Retries { lossy: 1, short: 3, tolerance: 0.02 };
        // Three stalls of the tester in a row, then a clean trial: it counts.
        let (t, n) = replay_with(&[short, short, short, clean], r);
        assert_eq!((t.sent, t.received, n), (1000, 1000, 4));
        // Never more than `short` repeats: the best of the four.
        let (t, n) = replay_with(&[short, short, short, trial(700, 300, 700)], r);
        assert_eq!((t.sent, n), (800, 4));
        // A lossy trial gets `lossy` repeats only.
        let (t, n) = replay_with(&[lossy, lossy, clean], r);
        assert_eq!((t.received, n), (990, 2));
        // Short, then lossy: the lossy trial counts, and takes no more repeats.
        let (t, n) = replay_with(&[short, lossy, clean], r);
        assert_eq!((t.received, n), (990, 2));
        // No repeats at all.
        let (_, n) = replay_with(&[short], Retries { lossy: 0, short: 0, tolerance: 0.02 });
        assert_eq!(n, 1);
    }

    #[test]
    fn max_load_summarizes_what_was_sent_and_forwarded() {
        // Two trials that overdrove the SUT (loss at its link), one it kept up in.
        let sat = |sent: u64, received: u64| Trial { sut_rx_dropped: sent - received, ..trial(sent, 0, received) };
        let m = max_load(vec![sat(1_500_000, 1_000_000), sat(1_400_000, 1_100_000), trial(900_000, 0, 900_000)], 0.005);
        assert_eq!(m.trials.len(), 3);
        assert_eq!(m.saturated, 2);
        assert_eq!(m.offered.n, 3);
        assert!((m.offered.mean - 1_266_666.666).abs() < 1.0, "{}", m.offered.mean);
        assert!((m.forwarded.mean - 1_000_000.0).abs() < 1e-6, "{}", m.forwarded.mean);
        assert!(m.forwarded.std > 0.0);
    }

    /// A forwarder whose own warm-up check says `check`.
    struct Checked(Result<(), String>);

    impl Forwarder for Checked {
        fn name(&self) -> &str {
            "fake"
        }
        fn start(&mut self, _: &Testbed, _: Behavior) -> Result<Vec<String>, String> {
            Ok(Vec::new())
        }
        fn stop(&mut self, _: &Testbed) -> Result<(), String> {
            Ok(())
        }
        fn check_warm_up(&self, _: Behavior) -> Result<(), String> {
            self.0.clone()
        }
    }

    #[test]
    fn an_empty_proxy_cache_fails_the_row_before_its_trials() {
        let b = |n: &str| Behavior::parse(n).unwrap();
        let (ok, nothing) = (trial(4000, 0, 4000), trial(4000, 0, 0));
        assert_eq!(warmed_up(&Checked(Ok(())), b("End.AD-return"), &ok), Ok(()));
        let e = warmed_up(&Checked(Ok(())), b("End.AD-return"), &nothing).unwrap_err();
        assert!(e.starts_with("fake End.AD-return: nothing came back") && e.contains("cache"), "{e}");
        let e = warmed_up(&Checked(Err("cache empty".into())), b("End.AD-return"), &ok).unwrap_err();
        assert_eq!(e, "fake End.AD-return: cache empty");
        // Rows without a warm-up are not checked: losing everything is a result there.
        for n in ["ipv6", "End.AD", "End.AM-return"] {
            assert_eq!(warmed_up(&Checked(Err("no".into())), b(n), &nothing), Ok(()), "{n}");
        }
    }

    #[test]
    fn a_clean_trial_is_not_repeated() {
        let (t, n) = replay(&[trial(1000, 0, 1000)], 2);
        assert_eq!((t.received, n), (1000, 1));
    }

    #[test]
    fn a_trial_the_tester_fell_short_in_is_repeated_and_the_full_one_counts() {
        // 5% of the slots given up, nothing lost: the tester, not the SUT.
        let (t, n) = replay(&[trial(950, 50, 950), trial(1000, 0, 996)], 1);
        assert_eq!((t.sent, t.received, n), (1000, 996, 2));
        // Short both times: the better delivery of the two.
        let (t, n) = replay(&[trial(950, 50, 940), trial(900, 100, 900)], 1);
        assert_eq!((t.sent, n), (900, 2));
        // 1% short is within the tolerance: only its loss makes it repeated.
        let (_, n) = replay(&[trial(990, 10, 990)], 1);
        assert_eq!(n, 1);
    }

    #[test]
    fn a_trial_whose_loss_was_the_testers_receive_is_repeated() {
        let tester_lost = Trial { tester_rx_dropped: 10, ..trial(1000, 0, 990) };
        let sut_lost = Trial { sut_rx_dropped: 12, ..trial(1000, 0, 988) };
        // The tester's loss weighs like a tester that fell short: the SUT's own loss,
        // though larger, is the trial that counts.
        let (t, n) = replay(&[tester_lost, sut_lost], 1);
        assert_eq!((t.received, t.sut_rx_dropped, n), (988, 12, 2));
    }

    #[test]
    fn a_lossy_trial_is_repeated_and_the_best_delivery_counts() {
        let (t, n) = replay(&[trial(1000, 0, 990), trial(1000, 0, 999), trial(1000, 0, 1000)], 5);
        assert_eq!((t.received, n), (1000, 3));
        let (t, n) = replay(&[trial(1000, 0, 990), trial(1000, 0, 980)], 1);
        assert_eq!((t.received, n), (990, 2));
    }
}
