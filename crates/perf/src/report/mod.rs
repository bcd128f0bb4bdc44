//! The report of a run: what `sr6 perf` leaves in its output directory.
//!
//! [`write_all`] takes the measured [`BehaviorResult`]s and the run's [`RunMeta`] and
//! writes, in one directory:
//!
//! | file | what |
//! | --- | --- |
//! | `results.json` | the `BehaviorResult` list, serde, pretty: exactly the model, so other tools read it back |
//! | `meta.json` | the [`RunMeta`] (command line, date, machine, sr6 version, trial settings, notes) |
//! | `results.csv` | one row per (forwarder, behaviour): NDR/PDR mean, std, CV %, CI95, latency |
//! | `trials.csv` | one row per trial of every repetition |
//! | `report.md` | the paper's Table I per forwarder, the sr6/linux ratio per behaviour, each SR proxy row's share of plain IPv6, latency, run metadata, the plots |
//! | `pdr-boxplot.{png,svg}`, `ndr-boxplot.{png,svg}` | Fig. 3 of the SRPerf paper: the rate of each behaviour over the repetitions, one box per forwarder |
//! | `sweep-<behaviour>.{png,svg}` | Fig. 2: delivered rate and delivery ratio versus offered rate, from the trials, one panel per forwarder |
//!
//! Column lists are in [`files`]; the plots in [`plot`], the font they need in [`font`].
//!
//! Nothing here panics on odd data (no repetition, a single one, zeros, NaN, infinities):
//! the tables print `n/a`, the plots skip non-finite points and fall back to unit axes. A
//! plot that cannot be drawn (no font on the machine, say) does not fail the report: it
//! is listed as a warning in `report.md`, and the data files are written regardless.
//! JSON has no NaN: serde_json writes a non-finite number as `null`, which the model's
//! `f64` fields cannot read back, so only finite results round-trip.

pub mod files;
pub mod font;
pub mod markdown;
pub mod plot;
pub mod raster;

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{Behavior, BehaviorResult};

/// The machine a run was made on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// CPU model name (`/proc/cpuinfo`), or `unknown`.
    pub cpu_model: String,
    /// Online logical CPUs.
    pub cores: usize,
    /// Kernel release (`uname -r`).
    pub kernel: String,
}

impl Machine {
    /// Reads this machine's CPU model, logical CPU count and kernel release from
    /// `/proc`; what cannot be read is `unknown` (or 0 cores).
    pub fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |key: &str| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let cpu_model = field("model name")
            .or_else(|| field("Model"))
            .or_else(|| field("Hardware"))
            .or_else(|| field("cpu"))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "unknown".into());
        let listed = cpuinfo.lines().filter(|l| l.split(':').next().map(str::trim) == Some("processor")).count();
        let cores =
            if listed > 0 { listed } else { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0) };
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "unknown".into());
        Machine { cpu_model, cores, kernel }
    }
}

/// What the report says about the run besides the results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// The command that made the run, as typed.
    pub command_line: String,
    /// When the run started, RFC 3339 (UTC); see [`utc_now_rfc3339`].
    pub date: String,
    pub machine: Machine,
    /// sr6's version (`CARGO_PKG_VERSION` of the binary), when known.
    pub sr6_version: Option<String>,
    /// sr6's git commit, when known.
    pub sr6_commit: Option<String>,
    /// Seconds each trial sent for.
    pub trial_duration_s: f64,
    /// NDR/PDR searches per (forwarder, behaviour).
    pub repetitions: usize,
    /// Frame size of the plain IPv6 baseline (bytes, without FCS); SRv6 behaviours add
    /// their encapsulation, see each result's `frame_bytes`.
    pub frame_bytes: usize,
    /// Anything the reader should know: warnings (CPU placement, shared cores, a
    /// generator that could not reach the offered rate, ...) and remarks.
    pub notes: Vec<String>,
}

impl RunMeta {
    /// A `RunMeta` for a run starting now on this machine; the caller fills the rest.
    pub fn new(command_line: impl Into<String>) -> RunMeta {
        RunMeta {
            command_line: command_line.into(),
            date: utc_now_rfc3339(),
            machine: Machine::detect(),
            ..RunMeta::default()
        }
    }
}

/// The current time as RFC 3339 UTC, seconds precision (`2018-09-28T14:03:00Z`).
pub fn utc_now_rfc3339() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    rfc3339_from_unix(secs)
}

/// Formats seconds since the Unix epoch as RFC 3339 UTC (civil-from-days, H. Hinnant).
pub fn rfc3339_from_unix(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// Writes every report file into `dir` (created if missing) and returns their paths,
/// data files first, `report.md` last. Fails only when a data file or `report.md`
/// cannot be written; plots that cannot be drawn become warnings in `report.md`.
pub fn write_all(results: &[BehaviorResult], meta: &RunMeta, dir: &Path) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = files::write_data_files(results, meta, dir)?;
    let plots = plot::write_plots(results, dir);
    written.extend(plots.files.iter().cloned());
    written.push(markdown::write_report(results, meta, &plots, dir)?);
    Ok(written)
}

/// The forwarders present, in order of first appearance.
pub(crate) fn forwarders(results: &[BehaviorResult]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in results {
        if !out.contains(&r.forwarder.as_str()) {
            out.push(&r.forwarder);
        }
    }
    out
}

/// The behaviours present, in the order of [`Behavior::all`] (the head-end scenarios,
/// then the behaviour table's).
pub(crate) fn behaviors(results: &[BehaviorResult]) -> Vec<Behavior> {
    Behavior::all().iter().copied().filter(|b| results.iter().any(|r| r.behavior == *b)).collect()
}

/// The (first) result of one forwarder for one behaviour.
pub(crate) fn find<'a>(results: &'a [BehaviorResult], forwarder: &str, b: Behavior) -> Option<&'a BehaviorResult> {
    results.iter().find(|r| r.forwarder == forwarder && r.behavior == b)
}

/// A name made safe for a file name: ASCII letters, digits, `.`, `-`, `_` kept, the
/// rest replaced by `_`.
pub(crate) fn file_safe(name: &str) -> String {
    let s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' }).collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        "_".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_from_unix(1_538_143_380), "2018-09-28T14:03:00Z");
    }

    #[test]
    fn file_names() {
        assert_eq!(file_safe("T.Encaps.L2"), "T.Encaps.L2");
        assert_eq!(file_safe("a/b c"), "a_b_c");
        assert_eq!(file_safe(".."), "_");
        assert_eq!(file_safe(""), "_");
    }
}
