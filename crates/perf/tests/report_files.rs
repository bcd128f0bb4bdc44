//! The report's files, read back with independent readers: serde_json for
//! `results.json`, the `csv` crate for the CSV files, the `png` crate for the PNG plots,
//! `roxmltree` for the SVG plots; the Markdown checked against values computed here.
//! Degenerate inputs (no result, one repetition, zeros, NaN, infinities, 14 behaviours
//! by 3 forwarders) must give files, not panics.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sr6_perf::model::{Behavior, BehaviorResult, Latency, Limit, MaxLoad, SearchResult, Summary, Trial};
use sr6_perf::report::files::{RESULTS_COLUMNS, TRIALS_COLUMNS};
use sr6_perf::report::font::faces;
use sr6_perf::report::plot::{boxplot_size, sweep_size, sweep_stem};
use sr6_perf::report::{write_all, Machine, RunMeta};

const THRESHOLD: f64 = 0.005;
const DURATION: f64 = 2.0;

/// A small deterministic generator (xorshift) for the synthetic noise.
struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn trial(offered: f64, capacity: f64) -> Trial {
    let sent = (offered * DURATION).round() as u64;
    // Past the capacity the forwarder loses a little more than the excess (livelock).
    let delivered = if offered <= capacity { offered } else { (capacity - 0.1 * (offered - capacity)).max(0.0) };
    let received = ((delivered * DURATION).round() as u64).min(sent);
    Trial {
        offered_pps: offered,
        sent,
        tx_dropped: 0,
        received,
        duration_s: DURATION,
        delivered_pps: received as f64 / DURATION,
        delivery_ratio: if sent == 0 { 1.0 } else { received as f64 / sent as f64 },
        sut_rx_dropped: (sent - received) / 2,
        tester_rx_dropped: (sent - received) / 3,
        sut_cpu_s: 0.0,
        sut_steal_s: 0.0,
        tester_steal_s: 0.0,
    }
}

/// One NDR/PDR search against a forwarder of the given capacity: doubling from 100 kpps,
/// then halving the interval 8 times.
fn search(capacity: f64) -> SearchResult {
    let mut trials = Vec::new();
    let ok = |t: &Trial, thr: f64| t.delivery_ratio >= 1.0 - thr;
    let find = |thr: f64, trials: &mut Vec<Trial>| {
        let (mut lo, mut hi) = (0.0, 100_000.0);
        loop {
            let t = trial(hi, capacity);
            trials.push(t);
            if !ok(&t, thr) || hi > 1e9 {
                break;
            }
            lo = hi;
            hi *= 2.0;
        }
        for _ in 0..8 {
            let mid = (lo + hi) / 2.0;
            let t = trial(mid, capacity);
            trials.push(t);
            if ok(&t, thr) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let ndr = find(0.0, &mut trials);
    let pdr = find(THRESHOLD, &mut trials);
    SearchResult { ndr_pps: ndr, pdr_pps: pdr, trials, ndr_limit: Limit::Sut, pdr_limit: Limit::Sut }
}

fn summary(v: &[f64]) -> Summary {
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    let std = if n > 1 { (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() } else { 0.0 };
    let t = 2.262; // Student's t, 9 degrees of freedom (n = 10); close enough for a synthetic set
    Summary { n, mean, std, cv: std / mean, ci95: t * std / (n as f64).sqrt() }
}

/// Results of forwarders (name, capacity for plain IPv6 in pps, how strongly the
/// behaviours' costs show: 1 as given, 0.5 their square root) over behaviours (each with
/// its cost factor): the spread between repetitions is 2%, 8% for the slow behaviours
/// (like End.X and End.DX6 in the paper).
fn synth(fws: &[(&str, f64, f64)], behs: &[(Behavior, f64)], reps: usize, seed: u64) -> Vec<BehaviorResult> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    for &(fw, base, tilt) in fws {
        for &(b, factor) in behs {
            let spread = if factor < 0.3 { 0.08 } else { 0.02 };
            let capacity = base * factor.powf(tilt);
            let repetitions: Vec<SearchResult> =
                (0..reps).map(|_| search(capacity * (1.0 + spread * (rng.unit() - 0.5)))).collect();
            let ndr = summary(&repetitions.iter().map(|s| s.ndr_pps).collect::<Vec<_>>());
            let pdr = summary(&repetitions.iter().map(|s| s.pdr_pps).collect::<Vec<_>>());
            let latency = (b != beh("End")).then(|| Latency {
                rate_pps: ndr.mean * 0.5,
                samples: 10_000,
                min_us: 8.0 + rng.unit(),
                avg_us: 12.5,
                p50_us: 12.0,
                p99_us: 30.25,
                max_us: 95.0,
                p25_us: 10.5,
                p75_us: 14.0,
                std_us: 4.5,
            });
            // At maximum load: the slow behaviours overdriven (saturated), the others
            // not (what the tester could send); none for End.X.
            let max_load = (b != beh("End.X")).then(|| {
                let saturated = factor < 0.8;
                let offered = (capacity * if saturated { 1.5 } else { 0.9 }).floor();
                let forwarded = if saturated { (capacity * 0.97).floor() } else { offered };
                let t = Trial {
                    offered_pps: offered * 1.1,
                    sent: offered as u64,
                    tx_dropped: (offered * 0.1) as u64,
                    received: forwarded as u64,
                    duration_s: 1.0,
                    delivered_pps: forwarded,
                    delivery_ratio: forwarded / offered,
                    sut_rx_dropped: (offered - forwarded) as u64,
                    tester_rx_dropped: 0,
                    // The SUT's CPU busy as its load: all of it when overdriven.
                    sut_cpu_s: (forwarded / capacity).min(1.0),
                    sut_steal_s: 0.0,
                    tester_steal_s: 0.0,
                };
                let one = |x: f64| Summary { n: 1, mean: x, std: 0.0, cv: 0.0, ci95: 0.0 };
                MaxLoad {
                    trials: vec![t],
                    offered: one(offered),
                    forwarded: one(forwarded),
                    saturated: usize::from(saturated),
                }
            });
            out.push(BehaviorResult {
                forwarder: fw.to_string(),
                behavior: b,
                frame_bytes: if matches!(b, Behavior::Ipv6 | Behavior::Ipv4) { 64 } else { 144 },
                ndr_pps: ndr.mean,
                pdr_pps: pdr.mean,
                pdr_loss_threshold: THRESHOLD,
                ndr,
                pdr,
                repetitions,
                latency,
                max_load,
            });
        }
    }
    out
}

fn meta() -> RunMeta {
    RunMeta {
        command_line: "sr6 perf run --forwarders linux,sr6 --behaviours ipv6,T.Encaps,End,End.X,End.DT6 --out results"
            .into(),
        date: "2026-01-02T03:04:05Z".into(),
        machine: Machine { cpu_model: "Test CPU @ 2.40GHz".into(), cores: 2, kernel: "6.1.0-test".into() },
        sr6_version: Some("0.1.0".into()),
        sr6_commit: Some("84195df".into()),
        trial_duration_s: DURATION,
        repetitions: 10,
        frame_bytes: 64,
        notes: vec!["SUT and tester share 2 cores: rates are lower bounds".into()],
    }
}

/// A behaviour by name.
fn beh(name: &str) -> Behavior {
    Behavior::parse(name).unwrap()
}

fn behs() -> [(Behavior, f64); 5] {
    [(Behavior::Ipv6, 1.0), (Behavior::TEncaps, 0.82), (beh("End"), 0.78), (beh("End.X"), 0.13), (beh("End.DT6"), 0.84)]
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report_files").join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn name(p: &Path) -> String {
    p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string()
}

fn check_png(path: &Path, size: (u32, u32)) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}: PNG signature", path.display());
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND);
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), size, "{}: size", path.display());
    assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
    buf.truncate(info.buffer_size());
    buf
}

fn has_color(rgb: &[u8], c: [u8; 3]) -> bool {
    rgb.chunks_exact(3).any(|p| p == c)
}

/// Every text of an SVG document.
fn svg_texts(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_font_is_available() {
    if let Err(e) = faces() {
        panic!("{e}");
    }
}

#[test]
fn two_forwarders_every_file() {
    let results = synth(&[("linux", 1_119_250.0, 1.0), ("sr6", 2_600_000.0, 0.5)], &behs(), 10, 7);
    let meta = meta();
    let dir = out_dir("two");
    let written = write_all(&results, &meta, &dir).unwrap();

    // The files, all there.
    let mut expected: Vec<String> =
        ["results.json", "meta.json", "results.csv", "trials.csv", "report.md"].map(String::from).to_vec();
    for stem in ["pdr-boxplot".to_string(), "ndr-boxplot".to_string(), "latency-boxplot".to_string()]
        .into_iter()
        .chain(behs().iter().map(|(b, _)| sweep_stem(*b)))
    {
        expected.push(format!("{stem}.png"));
        expected.push(format!("{stem}.svg"));
    }
    let mut got: Vec<String> = written.iter().map(|p| name(p)).collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
    for p in &written {
        assert!(p.is_file(), "{}", p.display());
        assert_eq!(p.parent(), Some(dir.as_path()));
    }

    // JSON: exactly the model.
    let back: Vec<BehaviorResult> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert!(back == results, "results.json does not read back equal");
    let back: RunMeta = serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(back, meta);

    // results.csv
    let mut rd = csv::Reader::from_path(dir.join("results.csv")).unwrap();
    assert_eq!(rd.headers().unwrap().iter().collect::<Vec<_>>(), RESULTS_COLUMNS.to_vec());
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), results.len());
    for (row, r) in rows.iter().zip(&results) {
        assert_eq!(row.len(), RESULTS_COLUMNS.len());
        let col = |c: &str| row.get(RESULTS_COLUMNS.iter().position(|x| *x == c).unwrap()).unwrap();
        let num = |c: &str| col(c).parse::<f64>().unwrap();
        assert_eq!(col("forwarder"), r.forwarder);
        assert_eq!(col("behavior"), r.behavior.name());
        assert_eq!(num("frame_bytes"), r.frame_bytes as f64);
        assert_eq!(num("pdr_loss_threshold"), THRESHOLD);
        assert_eq!(num("repetitions"), 10.0);
        assert_eq!(num("ndr_mean_pps"), r.ndr.mean);
        assert_eq!(num("pdr_mean_pps"), r.pdr.mean);
        assert_eq!(num("pdr_std_pps"), r.pdr.std);
        assert!((num("pdr_cv_pct") - r.pdr.std / r.pdr.mean * 100.0).abs() < 1e-9);
        assert!((num("pdr_ci95_pct") - r.pdr.ci95 / r.pdr.mean * 100.0).abs() < 1e-9);
        assert_eq!(num("pdr_ci95_pps"), r.pdr.ci95);
        match &r.latency {
            Some(l) => {
                assert_eq!(num("lat_p99_us"), l.p99_us);
                assert_eq!(num("lat_samples"), l.samples as f64);
            }
            None => assert!(col("lat_rate_pps").is_empty() && col("lat_max_us").is_empty()),
        }
        match &r.max_load {
            Some(m) => {
                assert_eq!(num("maxload_n"), m.trials.len() as f64);
                assert_eq!(num("maxload_offered_pps"), m.offered.mean);
                assert_eq!(num("maxload_forwarded_pps"), m.forwarded.mean);
                assert_eq!(num("maxload_saturated"), m.saturated as f64);
            }
            None => assert!(col("maxload_n").is_empty() && col("maxload_saturated").is_empty()),
        }
    }

    // trials.csv: every trial, in order.
    let mut rd = csv::Reader::from_path(dir.join("trials.csv")).unwrap();
    assert_eq!(rd.headers().unwrap().iter().collect::<Vec<_>>(), TRIALS_COLUMNS.to_vec());
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    let all: Vec<(&BehaviorResult, usize, usize, &Trial)> = results
        .iter()
        .flat_map(|r| {
            r.repetitions
                .iter()
                .enumerate()
                .flat_map(move |(i, s)| s.trials.iter().enumerate().map(move |(j, t)| (r, i + 1, j + 1, t)))
        })
        .collect();
    assert_eq!(rows.len(), all.len());
    for (row, (r, rep, k, t)) in rows.iter().zip(all) {
        assert_eq!(row.len(), TRIALS_COLUMNS.len());
        assert_eq!(&row[0], r.forwarder);
        assert_eq!(&row[1], r.behavior.name());
        assert_eq!(row[2].parse::<usize>().unwrap(), rep);
        assert_eq!(row[3].parse::<usize>().unwrap(), k);
        assert_eq!(row[4].parse::<f64>().unwrap(), t.offered_pps);
        assert_eq!(row[5].parse::<u64>().unwrap(), t.sent);
        assert_eq!(row[6].parse::<u64>().unwrap(), t.tx_dropped);
        assert_eq!(row[7].parse::<u64>().unwrap(), t.received);
        assert_eq!(row[8].parse::<f64>().unwrap(), t.duration_s);
        assert_eq!(row[9].parse::<f64>().unwrap(), t.delivered_pps);
        assert_eq!(row[10].parse::<f64>().unwrap(), t.delivery_ratio);
        assert_eq!(row[11].parse::<u64>().unwrap(), t.sut_rx_dropped);
        assert_eq!(row[12].parse::<u64>().unwrap(), t.tester_rx_dropped);
    }

    // report.md: Table I per forwarder, the sr6/linux ratio per behaviour, latency, run.
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    let names: Vec<&str> = behs().iter().map(|(b, _)| b.name()).collect();
    assert!(lines.contains(&format!("| kpps | {} |", names.join(" | ")).as_str()), "{md}");
    assert!(md.contains("### linux") && md.contains("### sr6"));
    let kpps = |pps: f64| format!("{:.2}", pps / 1000.0);
    for fw in ["linux", "sr6"] {
        let mine: Vec<&BehaviorResult> = results.iter().filter(|r| r.forwarder == fw).collect();
        let pdr_row = format!(
            "| **PDR mean** | {} |",
            mine.iter().map(|r| format!("**{}**", kpps(r.pdr.mean))).collect::<Vec<_>>().join(" | ")
        );
        let cv_row = format!(
            "| PDR CV | {} |",
            mine.iter().map(|r| format!("{:.3}%", r.pdr.cv * 100.0)).collect::<Vec<_>>().join(" | ")
        );
        assert!(lines.contains(&pdr_row.as_str()), "{pdr_row}\n{md}");
        assert!(lines.contains(&cv_row.as_str()), "{cv_row}\n{md}");
    }
    // The ratio from the repetitions' raw PDRs, not from the summaries.
    let mean_pdr = |fw: &str, b: Behavior| {
        let r = results.iter().find(|r| r.forwarder == fw && r.behavior == b).unwrap();
        r.repetitions.iter().map(|s| s.pdr_pps).sum::<f64>() / r.repetitions.len() as f64
    };
    assert!(md.contains("## sr6 / linux"), "{md}");
    let mut logs = 0.0;
    for (b, _) in behs() {
        let (s, l) = (mean_pdr("sr6", b), mean_pdr("linux", b));
        logs += (s / l).ln();
        let want = format!("| {} | {} | {} | **{:.2}** |", b.name(), kpps(s), kpps(l), s / l);
        assert!(lines.iter().any(|x| x.starts_with(&want)), "{want}\n{md}");
    }
    let geo = (logs / behs().len() as f64).exp();
    assert!(md.contains(&format!("**sr6 / linux (PDR): {geo:.2}×**")), "{md}");
    assert!(md.contains("| linux | ipv6 |") && md.contains("| 30.25 |"), "latency table\n{md}");
    // At maximum load: End overdriven (saturated, its forwarded rate a measure), ipv6
    // not (a bound, marked), End.X not measured.
    assert!(md.contains("## Forwarding rate at maximum offered load"), "{md}");
    for (fw, b, sat) in [("sr6", beh("End"), true), ("linux", Behavior::Ipv6, false)] {
        let r = results.iter().find(|r| r.forwarder == fw && r.behavior == b).unwrap();
        let m = r.max_load.as_ref().unwrap();
        let want = if sat {
            format!(
                "| {fw} | {} | {} | {} | 0.000% | **1/1** |",
                b.name(),
                kpps(m.offered.mean),
                kpps(m.forwarded.mean)
            )
        } else {
            format!("| {fw} | {} | {} | ≥ {} | 0.000% | 0/1 |", b.name(), kpps(m.offered.mean), kpps(m.forwarded.mean))
        };
        assert!(lines.iter().any(|x| x.starts_with(&want)), "{want}\n{md}");
    }
    assert!(!lines.iter().any(|x| x.starts_with("| sr6 | End.X | ") && x.contains("/1")), "{md}");
    // The SUT's CPU per packet at maximum load, and the kernel's over sr6's.
    assert!(md.contains("### SUT CPU per packet: linux / sr6"), "{md}");
    let ns = |fw: &str, b: Behavior| {
        let t =
            &results.iter().find(|r| r.forwarder == fw && r.behavior == b).unwrap().max_load.as_ref().unwrap().trials
                [0];
        (t.sut_cpu_s * 1e9 / t.received as f64, t.sut_cpu_s / t.duration_s)
    };
    for b in [Behavior::Ipv6, beh("End")] {
        let ((k, _), (x, busy)) = (ns("linux", b), ns("sr6", b));
        let want = format!("| {} | {k:.0} | {x:.0} | **{:.2}** |", b.name(), k / x);
        assert!(lines.contains(&want.as_str()), "{want}\n{md}");
        let cols = format!("| {:.0}% | {x:.0} |", busy * 100.0);
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("| sr6 | {} |", b.name())) && l.ends_with(&cols)),
            "{cols}\n{md}"
        );
    }
    assert!(
        md.contains(&meta.command_line)
            && md.contains("Test CPU @ 2.40GHz")
            && md.contains("6.1.0-test")
            && md.contains("84195df")
    );
    assert!(md.contains("- SUT and tester share 2 cores"), "notes\n{md}");
    assert!(md.contains("![pdr-boxplot](pdr-boxplot.png)") && md.contains("[SVG](sweep-ipv6.svg)"), "{md}");
    assert!(!md.contains("plots not drawn") && !md.contains("panicked"), "{md}");

    // The PNGs: decodable, the expected size, the forwarders' colours drawn.
    let blue = [31, 119, 180];
    let orange = [255, 127, 14];
    assert_eq!(boxplot_size(5, 2), (740, 600));
    assert_eq!(sweep_size(2), (1520, 580));
    for stem in ["pdr-boxplot", "ndr-boxplot"] {
        let rgb = check_png(&dir.join(format!("{stem}.png")), (740, 600));
        assert!(has_color(&rgb, blue) && has_color(&rgb, orange), "{stem}: boxes of both forwarders");
    }
    for (b, _) in behs() {
        let rgb = check_png(&dir.join(format!("{}.png", sweep_stem(b))), (1520, 580));
        assert!(has_color(&rgb, blue) && has_color(&rgb, orange), "{}: both panels", b.name());
    }

    // The SVGs: XML, with the behaviours and forwarders named.
    let t = svg_texts(&dir.join("pdr-boxplot.svg"));
    for n in names.iter().chain(&["linux", "sr6", "PDR (kpps)"]) {
        assert!(t.contains(n), "pdr-boxplot.svg lacks {n}:\n{t}");
    }
    for (b, _) in behs() {
        let t = svg_texts(&dir.join(format!("{}.svg", sweep_stem(b))));
        for n in [b.name(), "linux", "sr6", "offered rate (kpps)", "delivery ratio (%)"] {
            assert!(t.contains(n), "sweep of {} lacks {n}:\n{t}", b.name());
        }
    }
    // The latency's distribution: the behaviours with latency (all but End), both
    // forwarders.
    let rgb = check_png(&dir.join("latency-boxplot.png"), boxplot_size(4, 2));
    assert!(has_color(&rgb, blue) && has_color(&rgb, orange), "latency: boxes of both forwarders");
    let t = svg_texts(&dir.join("latency-boxplot.svg"));
    for n in ["ipv6", "T.Encaps", "linux", "sr6", "latency (\u{b5}s)"] {
        assert!(t.contains(n), "latency-boxplot.svg lacks {n}:\n{t}");
    }
    assert!(!t.lines().any(|l| l.trim() == "End"), "End has no latency:\n{t}");
    assert!(t.lines().any(|l| l.trim() == "End.X"), "{t}");
    assert!(md.contains("![latency-boxplot](latency-boxplot.png)"), "{md}");
    // Normalised to plain IPv6 forwarding's average (12.5 everywhere: +0.000).
    assert!(md.contains("| normalised |") && md.contains("+0.000"), "{md}");
}

/// Writes the report and checks the files that must exist whatever the data.
fn write_ok(results: &[BehaviorResult], dir: &str) -> (PathBuf, String) {
    let dir = out_dir(dir);
    let written = write_all(results, &meta(), &dir).unwrap();
    for f in ["results.json", "results.csv", "trials.csv", "report.md", "meta.json"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    for p in &written {
        assert!(p.is_file());
        if p.extension().is_some_and(|e| e == "svg") {
            svg_texts(p);
        }
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(!md.contains("panicked"), "{md}");
    (dir, md)
}

#[test]
fn no_results() {
    let (dir, md) = write_ok(&[], "empty");
    assert!(md.contains("No results."));
    assert_eq!(std::fs::read_to_string(dir.join("results.json")).unwrap().trim(), "[]");
    assert_eq!(csv::Reader::from_path(dir.join("results.csv")).unwrap().records().count(), 0);
    check_png(&dir.join("pdr-boxplot.png"), boxplot_size(0, 0));
}

#[test]
fn a_pdr_the_tester_bounded_is_marked_as_a_lower_bound() {
    let mut results = synth(&[("linux", 1_000_000.0, 1.0), ("sr6", 1_500_000.0, 1.0)], &behs()[..2], 3, 5);
    // sr6's first behaviour: two of three searches stopped at the generator's ceiling.
    let sr6 = results.iter_mut().find(|r| r.forwarder == "sr6" && r.behavior == behs()[0].0).unwrap();
    sr6.repetitions[0].pdr_limit = Limit::MaxRate;
    sr6.repetitions[2].pdr_limit = Limit::Generator;
    let (dir, md) = write_ok(&results, "tester_bound");
    let lines: Vec<&str> = md.lines().collect();
    let b0 = behs()[0].0.name();
    let b1 = behs()[1].0.name();
    // Its PDR and ratio carry the mark; the other behaviour's do not.
    assert!(lines.iter().any(|l| l.starts_with(&format!("| {b0} | ≥ ")) && l.contains("| **≥ ")), "{md}");
    assert!(lines.iter().any(|l| l.starts_with(&format!("| {b1} | ")) && !l.contains('≥')), "{md}");
    assert!(md.contains("`≥`: in at least one repetition"), "{md}");
    // Table I counts the repetitions, for both forwarders' tables.
    assert!(lines.iter().any(|l| l.starts_with("| PDR tester-bound | 2/3 | 0/3 |")), "{md}");
    // The limits are in results.json and read back.
    let json = std::fs::read_to_string(dir.join("results.json")).unwrap();
    assert!(json.contains("\"pdr_limit\": \"max_rate\"") && json.contains("\"pdr_limit\": \"generator\""), "{json}");
    let back: Vec<BehaviorResult> = serde_json::from_str(&json).unwrap();
    assert!(back == results);
    // Results written before the limits were recorded read as bounded by the SUT.
    let old: SearchResult = serde_json::from_str(r#"{"ndr_pps": 1.0, "pdr_pps": 2.0, "trials": []}"#).unwrap();
    assert_eq!((old.ndr_limit, old.pdr_limit), (Limit::Sut, Limit::Sut));
    assert!(!old.pdr_tester_bound());
}

#[test]
fn single_repetition_single_forwarder() {
    let results = synth(&[("linux", 1_000_000.0, 1.0)], &behs()[..1], 1, 3);
    let (dir, md) = write_ok(&results, "single");
    assert!(!md.contains("## sr6 / linux") && !md.contains("(PDR):"));
    check_png(&dir.join("pdr-boxplot.png"), boxplot_size(1, 1));
    check_png(&dir.join("sweep-ipv6.png"), sweep_size(1));
    let back: Vec<BehaviorResult> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert!(back == results, "results.json does not read back equal");
}

#[test]
fn zeros_nan_and_infinities() {
    let mut results = synth(&[("linux", 1_000_000.0, 1.0), ("sr6", 2_000_000.0, 1.0)], &behs()[..3], 3, 5);
    // linux ipv6: everything zero.
    let z = &mut results[0];
    z.ndr_pps = 0.0;
    z.pdr_pps = 0.0;
    z.ndr = Summary { n: 3, mean: 0.0, std: 0.0, cv: f64::NAN, ci95: 0.0 };
    z.pdr = z.ndr;
    for s in &mut z.repetitions {
        s.ndr_pps = 0.0;
        s.pdr_pps = 0.0;
        for t in &mut s.trials {
            t.received = 0;
            t.delivered_pps = 0.0;
            t.delivery_ratio = 0.0;
        }
    }
    // linux T.Encaps: NaN everywhere; End: infinities and no repetition.
    let n = &mut results[1];
    n.pdr = Summary { n: 3, mean: f64::NAN, std: f64::NAN, cv: f64::NAN, ci95: f64::NAN };
    n.ndr = n.pdr;
    n.latency = Some(Latency {
        rate_pps: f64::NAN,
        samples: 0,
        min_us: f64::NAN,
        avg_us: f64::NAN,
        p50_us: f64::NAN,
        p99_us: f64::NAN,
        max_us: f64::NAN,
        p25_us: f64::NAN,
        p75_us: f64::NAN,
        std_us: f64::NAN,
    });
    for s in &mut n.repetitions {
        s.pdr_pps = f64::NAN;
        s.ndr_pps = f64::NAN;
        for t in &mut s.trials {
            t.offered_pps = f64::NAN;
            t.delivery_ratio = f64::NAN;
        }
    }
    let i = &mut results[2];
    i.repetitions.clear();
    i.pdr_pps = f64::INFINITY;
    i.pdr.mean = f64::INFINITY;
    i.latency = None;
    let (dir, md) = write_ok(&results, "degenerate");
    assert!(md.contains("n/a"));
    // sr6 / linux over a zero or a NaN is not a number.
    assert!(md.lines().any(|l| l.starts_with("| ipv6 |") && l.contains("**n/a**")), "{md}");
    for f in ["pdr-boxplot.png", "ndr-boxplot.png", "sweep-ipv6.png", "sweep-T.Encaps.png", "sweep-End.png"] {
        assert!(dir.join(f).is_file(), "{f}\n{md}");
    }
    check_png(&dir.join("pdr-boxplot.png"), boxplot_size(3, 2));
    // Only the JSON cannot carry a NaN (serde_json writes null): it must still be JSON.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(results.len()));
    assert_eq!(csv::Reader::from_path(dir.join("results.csv")).unwrap().records().count(), results.len());
}

#[test]
fn every_behaviour_three_forwarders() {
    let behs: Vec<(Behavior, f64)> =
        Behavior::all().iter().enumerate().map(|(i, b)| (*b, 1.0 - 0.05 * i as f64)).collect();
    let results =
        synth(&[("linux", 1_100_000.0, 1.0), ("sr6", 2_500_000.0, 0.5), ("vpp|test", 4_000_000.0, 0.2)], &behs, 4, 11);
    let (dir, md) = write_ok(&results, "all");
    check_png(&dir.join("pdr-boxplot.png"), boxplot_size(Behavior::all().len(), 3));
    check_png(&dir.join("sweep-End.DT46.png"), sweep_size(3));
    let t = svg_texts(&dir.join("pdr-boxplot.svg"));
    for b in Behavior::all() {
        assert!(t.contains(b.name()), "{}", b.name());
    }
    // A pipe in a forwarder's name does not break the tables.
    assert!(md.contains("## vpp\\|test / linux") && md.contains("## sr6 / linux"), "{md}");
    let mut by_fw: HashMap<&str, usize> = HashMap::new();
    for r in &results {
        *by_fw.entry(r.forwarder.as_str()).or_default() += 1;
    }
    assert_eq!(by_fw.len(), 3);
}

/// The SR proxy rows as shares of the same forwarder's ipv6 rate, against the goal.
#[test]
fn proxy_rows_as_a_share_of_plain_ipv6() {
    let behs = [
        (Behavior::Ipv6, 1.0),
        (beh("End"), 0.9),
        (beh("End.AD"), 0.9),
        (beh("End.AD-return"), 0.6),
        (beh("End.AM"), 0.95),
        (beh("End.AM-return"), 0.88),
    ];
    let mut results = synth(&[("sr6", 1_000_000.0, 1.0)], &behs, 3, 7);
    // linux has no proxies: its ipv6 row alone makes no section of its own.
    results.extend(synth(&[("linux", 800_000.0, 1.0)], &behs[..2], 3, 8));
    let (_, md) = write_ok(&results, "proxies");
    assert_eq!(md.matches("## SR proxies / plain IPv6").count(), 1, "{md}");
    assert!(md.contains("### sr6\n\n| behaviour | direction |"), "{md}");
    let section = md.split("## SR proxies / plain IPv6").nth(1).unwrap().split("\n## ").next().unwrap();
    assert!(!section.contains("### linux") && !section.contains("| End |"), "{section}");
    let get = |n: &str| results.iter().find(|r| r.forwarder == "sr6" && r.behavior == beh(n)).unwrap();
    let ipv6 = get("ipv6");
    for (n, dir) in [
        ("End.AD", "to the function"),
        ("End.AD-return", "from the function"),
        ("End.AM", "to the function"),
        ("End.AM-return", "from the function"),
    ] {
        let r = get(n);
        let q = r.pdr.mean / ipv6.pdr.mean;
        let goal = if q >= 0.85 { "yes" } else { "no" };
        let want = format!(
            "| {n} | {dir} | {:.2} | **{:.1}%** | {goal} | {:.2} | {:.1}% |",
            r.pdr.mean / 1e3,
            q * 100.0,
            r.ndr.mean / 1e3,
            r.ndr.mean / ipv6.ndr.mean * 100.0
        );
        assert!(section.contains(&want), "{want}\n{section}");
    }
    // The synthetic End.AD-return is at ~60%: below the goal; End.AM at ~95%: above.
    assert!(section.contains("| End.AD-return | from the function |") && section.contains("| no |"), "{section}");
    assert!(section.contains(&format!("ipv6: PDR {:.2} kpps", ipv6.pdr.mean / 1e3)), "{section}");
    // No proxy row, no section.
    let (_, md) = write_ok(&results[..2], "no_proxies");
    assert!(!md.contains("SR proxies"), "{md}");
}

/// The translations as shares of the SRv6 function beside them, against issue 29's goal.
#[test]
fn mobile_translations_as_a_share_of_srv6() {
    let behs = [
        (Behavior::Ipv4, 1.0),
        (beh("GTP-U.Encap"), 0.97),
        (beh("GTP-U.Decap"), 0.98),
        (beh("SRv6.Encap"), 0.96),
        (beh("SRv6.Decap"), 0.99),
        (beh("H.M.GTP4.D"), 0.80),
        (beh("End.M.GTP4.E"), 0.97),
    ];
    let mut results = synth(&[("sr6", 1_000_000.0, 1.0)], &behs, 3, 5);
    // The kernel has the SRv6 functions only: no pair, no section of its own.
    results.extend(synth(&[("linux", 500_000.0, 1.0)], &[behs[0], behs[3], behs[4]], 3, 6));
    let (_, md) = write_ok(&results, "mobile");
    assert_eq!(md.matches("## Mobile user plane: translation / SRv6").count(), 1, "{md}");
    let section = md.split("## Mobile user plane").nth(1).unwrap().split("\n## ").next().unwrap();
    assert!(section.contains("### sr6\n") && !section.contains("### linux"), "{section}");
    let get = |n: &str| results.iter().find(|r| r.forwarder == "sr6" && r.behavior == beh(n)).unwrap();
    for (t, sr, gtp) in [("H.M.GTP4.D", "SRv6.Encap", "GTP-U.Decap"), ("End.M.GTP4.E", "SRv6.Decap", "GTP-U.Encap")] {
        let (a, b, g) = (get(t), get(sr), get(gtp));
        let q = a.pdr.mean / b.pdr.mean;
        let goal = if q >= 0.9 { "yes" } else { "no" };
        let want = format!(
            "| {t} | {:.2} | {sr} | {:.2} | **{:.1}%** | {goal} | {gtp} | {:.2} |",
            a.pdr.mean / 1e3,
            b.pdr.mean / 1e3,
            q * 100.0,
            g.pdr.mean / 1e3
        );
        assert!(section.contains(&want), "{want}\n{section}");
    }
    // H.M.GTP4.D at ~83% of SRv6.Encap misses the goal, End.M.GTP4.E meets it.
    assert!(section.contains("| no |") && section.contains("| yes |"), "{section}");
    // Latency normalised to ipv4 (the innermost family of every mobile row).
    assert!(md.contains("| sr6 | H.M.GTP4.D |"), "{md}");
    // No translation, no section.
    let (_, md) = write_ok(&results[..4], "no_mobile");
    assert!(!md.contains("Mobile user plane"), "{md}");
}

/// The End.BPF rows as shares of what the paper compares them with, beside its figure.
#[test]
fn end_bpf_rows_as_a_share_of_native() {
    let behs = [
        (beh("End"), 1.0),
        (beh("End.T"), 0.98),
        (beh("End.BPF-end"), 0.9),
        (beh("End.BPF-tag"), 0.8),
        (beh("End.BPF-tlv"), 0.7),
        (beh("End.BPF-end_t"), 0.85),
    ];
    let mut results = synth(&[("sr6", 1_000_000.0, 1.0)], &behs, 3, 9);
    // A forwarder with End.BPF-end and End.T only: no pair, no section of its own.
    results.extend(synth(&[("linux", 700_000.0, 1.0)], &[behs[1], behs[2]], 3, 10));
    let (_, md) = write_ok(&results, "end_bpf");
    assert_eq!(md.matches("## End.BPF / native").count(), 1, "{md}");
    let section = md.split("## End.BPF / native").nth(1).unwrap().split("\n## ").next().unwrap();
    assert!(section.contains("### sr6\n") && !section.contains("### linux"), "{section}");
    let get = |n: &str| results.iter().find(|r| r.forwarder == "sr6" && r.behavior == beh(n)).unwrap();
    for (r, base, paper) in [
        ("End.BPF-end", "End", 97),
        ("End.BPF-tag", "End.BPF-end", 97),
        ("End.BPF-tlv", "End.BPF-end", 95),
        ("End.BPF-end_t", "End.T", 95),
    ] {
        let (a, b) = (get(r), get(base));
        let want = format!(
            "| {r} | {:.2} | {base} | {:.2} | **{:.1}%** | {paper}% | {:.1}% |",
            a.pdr.mean / 1e3,
            b.pdr.mean / 1e3,
            a.pdr.mean / b.pdr.mean * 100.0,
            a.ndr.mean / b.ndr.mean * 100.0
        );
        assert!(section.contains(&want), "{want}\n{section}");
    }
    let (_, md) = write_ok(&results[..2], "no_end_bpf");
    assert!(!md.contains("End.BPF / native"), "{md}");
}

/// The HMAC rows as shares of the same behaviour without an HMAC, beside the paper's
/// figure where it gives one; both forwarders.
#[test]
fn hmac_rows_as_a_share_of_without() {
    let behs = [
        (beh("T.Encaps"), 1.0),
        (beh("End"), 0.95),
        (beh("H.Encaps-hmac-sha256"), 0.6),
        (beh("H.Encaps-hmac-sha1"), 0.65),
        (beh("End-hmac-sha256"), 0.5),
        (beh("End-hmac-sha1"), 0.55),
    ];
    let mut results = synth(&[("sr6", 1_000_000.0, 1.0)], &behs, 3, 11);
    results.extend(synth(&[("linux", 800_000.0, 1.0)], &behs, 3, 12));
    let (_, md) = write_ok(&results, "hmac");
    assert_eq!(md.matches("## HMAC / without").count(), 1, "{md}");
    let section = md.split("## HMAC / without").nth(1).unwrap().split("\n## ").next().unwrap();
    assert!(section.contains("### sr6\n") && section.contains("### linux\n"), "{section}");
    for fw in ["sr6", "linux"] {
        let get = |n: &str| results.iter().find(|r| r.forwarder == fw && r.behavior == beh(n)).unwrap();
        for (r, base, paper) in [
            ("H.Encaps-hmac-sha256", "T.Encaps", "29%"),
            ("H.Encaps-hmac-sha1", "T.Encaps", "—"),
            ("End-hmac-sha256", "End", "—"),
            ("End-hmac-sha1", "End", "—"),
        ] {
            let (a, b) = (get(r), get(base));
            let want = format!(
                "| {r} | {:.2} | {base} | {:.2} | **{:.1}%** | {paper} | {:.1}% |",
                a.pdr.mean / 1e3,
                b.pdr.mean / 1e3,
                a.pdr.mean / b.pdr.mean * 100.0,
                a.ndr.mean / b.ndr.mean * 100.0
            );
            assert!(section.contains(&want), "{want}\n{section}");
        }
    }
    // Without the rows they stand beside, no section.
    let only: Vec<_> = results.iter().filter(|r| r.behavior.hmac().is_some()).cloned().collect();
    let (_, md) = write_ok(&only, "no_hmac");
    assert!(!md.contains("HMAC / without"), "{md}");
}
