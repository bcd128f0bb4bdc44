//! `sr6-perf`: the SRPerf evaluation of sr6 and the Linux kernel (the `sr6-perf` crate),
//! usually run as `sr6 perf ...` (the router binary runs this one, found next to it).
//! A binary of its own so that the router does not link the report's plotting stack.
//!
//! `run` loads the experiment (a YAML file, or the built-in default), applies the
//! command-line overrides, runs it with a progress display, and writes the report.

#![forbid(unsafe_code)]

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::{Parser, Subcommand};
use sr6_perf::experiment::Experiment;
use sr6_perf::model::Behavior;
use sr6_perf::report::{self, RunMeta};
use sr6_perf::run::{self, Progress, RunOptions};
use sr6_perf::search::SearchEvent;

#[derive(Parser)]
#[command(
    name = "sr6-perf",
    version,
    about = "The SRPerf evaluation framework: measure forwarders (sr6, the Linux kernel) on a \
             namespace testbed by NDR/PDR search, and write results, report and plots"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run an experiment (YAML, see examples/perf/experiment.yaml), or the built-in
    /// default (the SRPerf paper's table and the NEXT-C-SID rows for linux and sr6)
    /// without a file. Needs root.
    /// The sr6 forwarder is the `sr6` binary next to this one, or $SR6_BIN.
    Run {
        /// The experiment file (every key optional).
        #[arg(conflicts_with = "preset")]
        file: Option<PathBuf>,
        /// A built-in experiment instead of a file: `default` (the SRPerf paper's table,
        /// NEXT-C-SID, SR proxies, eBPF End), `mobile` (the GTP-U/SRv6 paper's six
        /// functions next to plain IPv4 forwarding, on its short 46-byte IPv4 packets;
        /// `--packet-bytes 1460` for its long ones), `bpf` (the End.BPF paper's
        /// functions in eBPF next to native End and End.T), `tiers` (what sr6's XDP
        /// tier forwards, IPv6 and End, by the kernel, sr6 and sr6 with its AF_XDP tier
        /// alone), `xdp` (every behaviour the XDP tier forwards, the HMAC rows too, by the
        /// kernel, sr6 and sr6 with its AF_XDP tier alone) or
        /// `hmac` (H.Encaps adding an HMAC TLV and End verifying one, SHA-256 and SHA-1,
        /// next to T.Encaps and End without).
        #[arg(long, value_parser = ["default", "mobile", "bpf", "tiers", "xdp", "hmac"])]
        preset: Option<String>,
        /// Forwarders, overriding the file (e.g. `linux,sr6`).
        #[arg(long, value_delimiter = ',')]
        forwarder: Vec<String>,
        /// Behaviours, overriding the file (e.g. `ipv6,End,T.Encaps`): ipv6, ipv4, T.Insert,
        /// T.Encaps, T.Encaps.L2, every endpoint behaviour of `sr6 behaviours`, and
        /// End-next-csid, End.X-next-csid, End.T-next-csid (NEXT-C-SID, pure uSID),
        /// End-replace-csid (REPLACE-C-SID, a container in the SRH),
        /// End.AD-return, End.AM-return (SR proxies, from the function), End.BPF-end,
        /// End.BPF-tag, End.BPF-tlv, End.BPF-end_t (End.BPF programs),
        /// H.Encaps-hmac-sha256, H.Encaps-hmac-sha1, End-hmac-sha256, End-hmac-sha1 (HMAC).
        #[arg(long, value_delimiter = ',')]
        behavior: Vec<String>,
        /// Seconds per trial, overriding the file.
        #[arg(long)]
        duration: Option<f64>,
        /// Searches per forwarder and behaviour, overriding the file.
        #[arg(long)]
        repetitions: Option<usize>,
        /// Size of the innermost IP packet in bytes, overriding the file
        /// (`packet_bytes`).
        #[arg(long)]
        packet_bytes: Option<usize>,
        /// Route changes a second sent to the forwarder while its trials run, as a
        /// routing daemon would (`route_churn_per_s`; 0: none).
        #[arg(long, value_name = "N")]
        route_churn: Option<u32>,
        /// Output directory (default out/perf/<UTC time>).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run { file, preset, forwarder, behavior, duration, repetitions, packet_bytes, route_churn, out } => {
            run(PerfOpts {
                file,
                route_churn,
                preset,
                packet_bytes,
                forwarders: forwarder,
                behaviors: behavior,
                duration,
                repetitions,
                out: out.unwrap_or_else(default_out),
            })
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sr6 perf: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Command-line overrides of the experiment.
struct PerfOpts {
    file: Option<PathBuf>,
    preset: Option<String>,
    packet_bytes: Option<usize>,
    forwarders: Vec<String>,
    behaviors: Vec<String>,
    duration: Option<f64>,
    repetitions: Option<usize>,
    route_churn: Option<u32>,
    out: PathBuf,
}

/// The `sr6` binary the sr6 driver runs: $SR6_BIN, else `sr6` next to this executable.
fn sr6_bin() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("SR6_BIN").filter(|p| !p.is_empty()) {
        // Absolute: the driver starts it from the SUT's namespace, in another directory.
        return std::path::absolute(&p).map_err(|e| format!("SR6_BIN {}: {e}", Path::new(&p).display()));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    Ok(exe.with_file_name("sr6"))
}

fn run(o: PerfOpts) -> Result<(), String> {
    let mut exp = match &o.file {
        Some(f) => {
            let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
            Experiment::from_yaml(&text, &f.display().to_string())?
        }
        None if o.preset.as_deref() == Some("mobile") => Experiment::mobile(),
        None if o.preset.as_deref() == Some("bpf") => Experiment::bpf(),
        None if o.preset.as_deref() == Some("tiers") => Experiment::tiers(),
        None if o.preset.as_deref() == Some("xdp") => Experiment::xdp(),
        None if o.preset.as_deref() == Some("hmac") => Experiment::hmac(),
        None => Experiment::default(),
    };
    if !o.forwarders.is_empty() {
        exp.forwarders = o.forwarders.clone();
    }
    if !o.behaviors.is_empty() {
        exp.behaviors = o.behaviors.clone();
    }
    if let Some(d) = o.duration {
        exp.trial_duration_s = d;
    }
    if let Some(r) = o.repetitions {
        exp.repetitions = r;
    }
    if let Some(n) = o.packet_bytes {
        exp.packet_bytes = n;
    }
    if let Some(n) = o.route_churn {
        exp.route_churn_per_s = n;
    }
    exp.validate()?;
    let sr6_bin = sr6_bin()?;
    if exp.forwarders.iter().any(|f| f.starts_with("sr6")) && !sr6_bin.is_file() {
        return Err(format!(
            "the sr6 forwarder's binary {} does not exist: build it (cargo build --release --workspace --bins) \
             or set SR6_BIN",
            sr6_bin.display()
        ));
    }
    if !is_root() {
        return Err("sr6 perf run builds network namespaces and attaches XDP programs: run it as root".into());
    }
    let opts = RunOptions { sr6_bin };
    let total = exp.forwarders.len() * exp.behaviors.len();
    let mut progress = Printer { tty: std::io::stderr().is_terminal(), stage: 0, total, last: String::new() };
    eprintln!(
        "sr6 perf: {} forwarder(s) x {} behaviour(s), {} repetition(s), {} s trials, PDR@{}%{} — results in {}",
        exp.forwarders.len(),
        exp.behaviors.len(),
        exp.repetitions,
        exp.trial_duration_s,
        exp.pdr_loss_thresholds[0] * 100.0,
        match exp.route_churn_per_s {
            0 => String::new(),
            n => format!(", {n} route changes/s"),
        },
        o.out.display()
    );
    // SIGINT/SIGTERM end the run between two trials, so that the forwarder is stopped
    // and the namespaces removed on the way out; a second one ends it at once.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone())
            .and_then(|_| signal_hook::flag::register(sig, stop.clone()))
            .map_err(|e| format!("installing the signal handlers: {e}"))?;
    }
    let mut factory = |tb: &sr6_perf::testbed::Testbed, b: Behavior, e: &Experiment| {
        let inner = sr6_perf::tester::open(tb, b, e)?;
        Ok(Box::new(Interruptible { inner, stop: stop.clone() }) as Box<dyn sr6_perf::run::Tester>)
    };
    let out = run::run(&exp, &opts, &mut factory, &mut progress)?;
    progress.end_line();
    let mut meta = RunMeta::new(std::env::args().collect::<Vec<_>>().join(" "));
    meta.sr6_version = Some(env!("CARGO_PKG_VERSION").to_string());
    meta.trial_duration_s = exp.trial_duration_s;
    meta.repetitions = exp.repetitions;
    meta.frame_bytes = exp.packet_bytes;
    meta.notes = out.warnings.iter().chain(&out.notes).cloned().collect();
    let files = report::write_all(&out.results, &meta, &o.out).map_err(|e| format!("{}: {e}", o.out.display()))?;
    print_table(&out.results);
    eprintln!("sr6 perf: wrote {}", files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    Ok(())
}

/// A tester that refuses further trials once a stop signal came (the orchestrator then
/// unwinds: the forwarder stopped, the testbed removed).
struct Interruptible {
    inner: Box<dyn sr6_perf::run::Tester>,
    stop: Arc<AtomicBool>,
}

impl sr6_perf::run::Tester for Interruptible {
    fn trial(
        &mut self,
        offered_pps: f64,
        duration: std::time::Duration,
        latency: bool,
    ) -> Result<(sr6_perf::model::Trial, Option<sr6_perf::model::Latency>), String> {
        if self.stop.load(Ordering::Relaxed) {
            return Err("interrupted (SIGINT/SIGTERM): the testbed is being removed".into());
        }
        self.inner.trial(offered_pps, duration, latency)
    }
    fn max_pps(&self) -> f64 {
        self.inner.max_pps()
    }
    fn frame_bytes(&self) -> usize {
        self.inner.frame_bytes()
    }
    fn generator(&self) -> String {
        self.inner.generator()
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false)
}

/// The summary table on stdout: one line per forwarder and behaviour. A PDR the tester
/// bounded in some repetition (not the SUT's loss) is marked `>=`: a lower bound.
fn print_table(results: &[sr6_perf::model::BehaviorResult]) {
    // Wide enough for the longest name (End.B6.Encaps.Red).
    let w = results.iter().map(|r| r.behavior.name().len()).max().unwrap_or(0).max(12);
    println!(
        "{:<8} {:<w$} {:>12} {:>8} {:>14} {:>8} {:>10} {:>16}",
        "fwd", "behaviour", "NDR kpps", "CV%", "PDR kpps", "CV%", "p50 us", "at max load"
    );
    let (mut marked, mut loaded) = (false, false);
    for r in results {
        let bound = r.tester_bound_repetitions() > 0;
        marked |= bound;
        loaded |= r.max_load.is_some();
        println!(
            "{:<8} {:<w$} {:>12.1} {:>8.2} {:>14} {:>8.2} {:>10} {:>16}",
            r.forwarder,
            r.behavior.name(),
            r.ndr.mean / 1e3,
            r.ndr.cv * 100.0,
            format!("{}{:.1}", if bound { ">= " } else { "" }, r.pdr.mean / 1e3),
            r.pdr.cv * 100.0,
            r.latency.map_or("-".to_string(), |l| format!("{:.1}", l.p50_us)),
            r.max_load.as_ref().map_or("-".to_string(), |m| format!(
                "{}{:.1} ({}/{})",
                if m.saturated == 0 { ">= " } else { "" },
                m.forwarded.mean / 1e3,
                m.saturated,
                m.trials.len()
            ))
        );
    }
    if marked {
        println!(">= : the tester, not the SUT, bounded the PDR search in some repetition (a lower bound)");
    }
    if loaded {
        println!(
            "at max load: kpps forwarded when offered the most the tester can send (k/n: trials that saturated the SUT)"
        );
    }
}

struct Printer {
    tty: bool,
    stage: usize,
    total: usize,
    last: String,
}

impl Printer {
    fn line(&mut self, s: String) {
        if self.tty {
            eprint!("\r\x1b[2K{s}");
        } else {
            eprintln!("{s}");
        }
        self.last = s;
    }
    fn end_line(&mut self) {
        if self.tty && !self.last.is_empty() {
            eprintln!();
        }
        self.last.clear();
    }
}

impl Progress for Printer {
    fn stage(&mut self, forwarder: &str, behavior: Behavior, repetition: usize, of: usize) {
        if repetition == 1 {
            self.stage += 1;
        }
        self.end_line();
        eprintln!("[{}/{}] {forwarder} {} — repetition {repetition}/{of}", self.stage, self.total, behavior.name());
    }

    fn event(&mut self, e: &SearchEvent) {
        match e {
            SearchEvent::Trying { phase, target, offered_pps } => {
                self.line(format!("    {phase:<11} {target:<7} trying {:>9.1} kpps ...", offered_pps / 1e3));
            }
            SearchEvent::Trial { phase, target, trial } => {
                let lost = trial.sent.saturating_sub(trial.received);
                // Where the lost frames went, when the testbed's links counted some.
                let wher = if lost > 0 && trial.sut_rx_dropped + trial.tester_rx_dropped > 0 {
                    format!(
                        " — lost {lost}: {} at the SUT's receiving link, {} at the tester's",
                        trial.sut_rx_dropped, trial.tester_rx_dropped
                    )
                } else {
                    String::new()
                };
                // Time the host took from the testbed's CPUs (a VM's neighbours).
                let (s, t) = (trial.sut_steal_s, trial.tester_steal_s);
                let stolen = if s + t > 0.0 {
                    format!(" — the host took {:.0} ms of the SUT's CPU, {:.0} ms of the tester's", s * 1e3, t * 1e3)
                } else {
                    String::new()
                };
                self.line(format!(
                    "    {phase:<11} {target:<7} offered {:>9.1} kpps -> delivered {:>9.1} kpps ({:.3}%){wher}{stolen}",
                    trial.offered_pps / 1e3,
                    trial.delivered_pps / 1e3,
                    trial.delivery_ratio * 100.0
                ))
            }
            SearchEvent::GeneratorLimited { offered_pps, achieved_pps } => {
                self.end_line();
                eprintln!(
                    "    note: the generator reached {:.1} of {:.1} kpps: above this, it is the limit, not the SUT",
                    achieved_pps / 1e3,
                    offered_pps / 1e3
                );
            }
            SearchEvent::MaxRateReached { target, max_pps } => {
                self.end_line();
                eprintln!("    note: {target} reached the highest rate offered ({:.1} kpps)", max_pps / 1e3);
            }
            SearchEvent::Finished { ndr, pdr, trials } => {
                self.end_line();
                eprintln!("    NDR {:.1} kpps, PDR {:.1} kpps ({trials} trials)", ndr.lo_pps / 1e3, pdr.lo_pps / 1e3);
                if pdr.limit == sr6_perf::model::Limit::TesterReceive {
                    eprintln!(
                        "    note: above the PDR, frames were lost only at the tester's receiving link: \
                         the tester, not the SUT, was the limit (a lower bound)"
                    );
                }
            }
        }
    }

    fn warn(&mut self, msg: &str) {
        self.end_line();
        eprintln!("sr6 perf: warning: {msg}");
    }
}

/// Where results go by default: `out/perf/<UTC date-time>`.
fn default_out() -> PathBuf {
    let stamp = report::utc_now_rfc3339().replace([':', '-'], "").chars().take(15).collect::<String>();
    Path::new("out").join("perf").join(stamp)
}
