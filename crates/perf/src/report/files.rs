//! The data files: `results.json`, `meta.json`, `results.csv` and `trials.csv`.
//!
//! `results.json` is the [`BehaviorResult`] list exactly as the model serializes it
//! (pretty-printed), so it reads back with `serde_json::from_str::<Vec<BehaviorResult>>`.
//! `meta.json` is the [`RunMeta`].
//!
//! The CSV files are RFC 4180 (comma separated, a header line, fields quoted only when
//! they hold a comma, quote or line break, `\n` line ends). Rates are in packets/s, as in
//! the model; percentages are in percent; a missing value (no latency) is an empty field;
//! a non-finite number is written as Rust prints it (`NaN`, `inf`, `-inf`).
//!
//! `results.csv`, one row per (forwarder, behaviour), columns [`RESULTS_COLUMNS`]:
//! `forwarder, behavior, frame_bytes, pdr_loss_threshold` (a fraction), `repetitions`
//! (searches in the result), then for `ndr` and `pdr` each: `_n, _mean_pps, _std_pps,
//! _cv_pct` (std/mean, %), `_ci95_pps` (half-width of the 95% confidence interval),
//! `_ci95_pct` (that half-width, % of the mean, as the paper's Table I); then the
//! latency: `lat_rate_pps, lat_samples, lat_min_us, lat_avg_us, lat_p50_us, lat_p99_us,
//! lat_max_us, lat_p25_us, lat_p75_us, lat_std_us`; then the forwarding rate at maximum offered load
//! ([`crate::model::MaxLoad`], empty where not measured): `maxload_n` (trials),
//! `maxload_offered_pps` and `maxload_forwarded_pps` (means), `maxload_forwarded_cv_pct`,
//! `maxload_saturated` (trials that found the SUT saturated).
//!
//! `trials.csv`, one row per trial of the searches (the max-load trials are in
//! `results.json`), columns [`TRIALS_COLUMNS`]: `forwarder, behavior,
//! repetition` (1-based), `trial` (1-based, in the order run), `offered_pps, sent,
//! tx_dropped, received, duration_s, delivered_pps, delivery_ratio` (a fraction),
//! `sut_rx_dropped, tester_rx_dropped` (where the lost frames were dropped, as the
//! testbed's links counted them: [`crate::model::Trial`]), `sut_cpu_s` (seconds the
//! SUT's CPU was busy around the trial), `sut_steal_s, tester_steal_s` (seconds the
//! hypervisor took from the SUT's and the tester's CPU in it).

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use super::RunMeta;
use crate::model::{BehaviorResult, Summary};

/// The header of `results.csv`.
pub const RESULTS_COLUMNS: [&str; 32] = [
    "forwarder",
    "behavior",
    "frame_bytes",
    "pdr_loss_threshold",
    "repetitions",
    "ndr_n",
    "ndr_mean_pps",
    "ndr_std_pps",
    "ndr_cv_pct",
    "ndr_ci95_pps",
    "ndr_ci95_pct",
    "pdr_n",
    "pdr_mean_pps",
    "pdr_std_pps",
    "pdr_cv_pct",
    "pdr_ci95_pps",
    "pdr_ci95_pct",
    "lat_rate_pps",
    "lat_samples",
    "lat_min_us",
    "lat_avg_us",
    "lat_p50_us",
    "lat_p99_us",
    "lat_max_us",
    "lat_p25_us",
    "lat_p75_us",
    "lat_std_us",
    "maxload_n",
    "maxload_offered_pps",
    "maxload_forwarded_pps",
    "maxload_forwarded_cv_pct",
    "maxload_saturated",
];

/// The header of `trials.csv`.
pub const TRIALS_COLUMNS: [&str; 16] = [
    "forwarder",
    "behavior",
    "repetition",
    "trial",
    "offered_pps",
    "sent",
    "tx_dropped",
    "received",
    "duration_s",
    "delivered_pps",
    "delivery_ratio",
    "sut_rx_dropped",
    "tester_rx_dropped",
    "sut_cpu_s",
    "sut_steal_s",
    "tester_steal_s",
];

/// Writes `results.json`, `meta.json`, `results.csv` and `trials.csv` into `dir`.
pub fn write_data_files(results: &[BehaviorResult], meta: &RunMeta, dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let json = serde_json::to_string_pretty(results).map_err(io::Error::other)?;
    out.push(write(dir, "results.json", &(json + "\n"))?);
    let json = serde_json::to_string_pretty(meta).map_err(io::Error::other)?;
    out.push(write(dir, "meta.json", &(json + "\n"))?);
    out.push(write(dir, "results.csv", &results_csv(results))?);
    out.push(write(dir, "trials.csv", &trials_csv(results))?);
    Ok(out)
}

fn write(dir: &Path, name: &str, text: &str) -> io::Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, text)?;
    Ok(path)
}

/// The text of `results.csv`.
pub fn results_csv(results: &[BehaviorResult]) -> String {
    let mut s = line(RESULTS_COLUMNS.iter().map(|c| c.to_string()));
    for r in results {
        let mut row = vec![
            r.forwarder.clone(),
            r.behavior.name().to_string(),
            r.frame_bytes.to_string(),
            r.pdr_loss_threshold.to_string(),
            r.repetitions.len().to_string(),
        ];
        summary_fields(&r.ndr, &mut row);
        summary_fields(&r.pdr, &mut row);
        match &r.latency {
            Some(l) => row.extend([
                l.rate_pps.to_string(),
                l.samples.to_string(),
                l.min_us.to_string(),
                l.avg_us.to_string(),
                l.p50_us.to_string(),
                l.p99_us.to_string(),
                l.max_us.to_string(),
                l.p25_us.to_string(),
                l.p75_us.to_string(),
                l.std_us.to_string(),
            ]),
            None => row.extend(vec![String::new(); 10]),
        }
        match &r.max_load {
            Some(m) => row.extend([
                m.trials.len().to_string(),
                m.offered.mean.to_string(),
                m.forwarded.mean.to_string(),
                (m.forwarded.cv * 100.0).to_string(),
                m.saturated.to_string(),
            ]),
            None => row.extend(vec![String::new(); 5]),
        }
        s.push_str(&line(row));
    }
    s
}

fn summary_fields(x: &Summary, row: &mut Vec<String>) {
    row.extend([
        x.n.to_string(),
        x.mean.to_string(),
        x.std.to_string(),
        (x.cv * 100.0).to_string(),
        x.ci95.to_string(),
        ci95_pct(x).to_string(),
    ]);
}

/// The CI95 half-width as a percentage of the mean (NaN when the mean is 0 or not
/// finite).
pub fn ci95_pct(x: &Summary) -> f64 {
    if x.mean == 0.0 || !x.mean.is_finite() {
        f64::NAN
    } else {
        x.ci95 / x.mean * 100.0
    }
}

/// The text of `trials.csv`.
pub fn trials_csv(results: &[BehaviorResult]) -> String {
    let mut s = line(TRIALS_COLUMNS.iter().map(|c| c.to_string()));
    for r in results {
        for (i, rep) in r.repetitions.iter().enumerate() {
            for (j, t) in rep.trials.iter().enumerate() {
                s.push_str(&line([
                    r.forwarder.clone(),
                    r.behavior.name().to_string(),
                    (i + 1).to_string(),
                    (j + 1).to_string(),
                    t.offered_pps.to_string(),
                    t.sent.to_string(),
                    t.tx_dropped.to_string(),
                    t.received.to_string(),
                    t.duration_s.to_string(),
                    t.delivered_pps.to_string(),
                    t.delivery_ratio.to_string(),
                    t.sut_rx_dropped.to_string(),
                    t.tester_rx_dropped.to_string(),
                    t.sut_cpu_s.to_string(),
                    t.sut_steal_s.to_string(),
                    t.tester_steal_s.to_string(),
                ]));
            }
        }
    }
    s
}

/// One CSV record, quoted where needed, with its line end.
fn line(fields: impl IntoIterator<Item = String>) -> String {
    let mut s = String::new();
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        if f.contains([',', '"', '\n', '\r']) {
            let _ = write!(s, "\"{}\"", f.replace('"', "\"\""));
        } else {
            s.push_str(&f);
        }
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(line(["a".into(), "b,c".into(), "d\"e".into()]), "a,\"b,c\",\"d\"\"e\"\n");
        assert_eq!(line([String::new(), String::new()]), ",\n");
    }
}
