//! `report.md`: what a person reads after a run.
//!
//! Sections, in order:
//! 1. the headline — for each forwarder other than `linux`, when `linux` was measured too,
//!    the geometric mean over the behaviours of its PDR divided by the kernel's;
//! 2. **Throughput**: per forwarder, the SRPerf paper's Table I — one column per
//!    behaviour, rows mean / CV / CI95 (in kpps; CV and CI95 half-width as % of the
//!    mean, as the paper prints them), for the PDR and the NDR, plus frame size and n;
//! 3. **`<fw>` / linux**: per behaviour, both forwarders' PDR and NDR (kpps) and their
//!    ratio, two decimals (`{:.2}`); a PDR the tester bounded in some repetition (the
//!    search stopped at the generator's ceiling, not at the SUT's loss) is marked `≥`,
//!    and Table I counts those repetitions;
//! 4. **SR proxies / plain IPv6** (where a forwarder has an `ipv6` row and SR proxy
//!    rows): per forwarder and proxy row, its direction (to or from the service
//!    function), its PDR and NDR and each as a percentage of the same forwarder's
//!    `ipv6` rate in the run, against issue 27's goal of [`PROXY_GOAL`];
//! 5. **Mobile user plane** (where a forwarder has both rows of a pair): each RFC 9433
//!    translation's PDR as a share of the SRv6 function it stands beside in the same
//!    run — H.M.GTP4.D / SRv6.Encap, End.M.GTP4.E / SRv6.Decap — against issue 29's
//!    goal of [`MOBILE_GOAL`] (within 10%), and the GTP-U function's beside it;
//! 6. **End.BPF / native** (where a forwarder has both rows of a pair): each End.BPF
//!    program's PDR as a share of what the End.BPF paper compares it with
//!    ([`BPF_PAIRS`]: eBPF End and End.T against native End and End.T, Tag++ and Add
//!    TLV against eBPF End), beside the paper's kernel figure;
//! 7. **HMAC / without** (where a forwarder has both rows of a pair): each HMAC row's
//!    PDR as a share of the same behaviour without an HMAC ([`HMAC_PAIRS`]: H.Encaps
//!    against T.Encaps, End verifying against End), beside the Lebrun paper's figure;
//! 8. **Forwarding rate at maximum offered load** (where measured: forwarder, behaviour,
//!    what the tester sent, what came back, its CV, how many trials found the SUT
//!    saturated, the PDR beside it, and the SUT CPU's busy share and time per packet
//!    forwarded); then, for each forwarder other than `linux`, the kernel's CPU time
//!    per packet over its own: the SUT's work, measured whatever bounded the rate;
//! 9. **Latency** (forwarder, behaviour, rate, samples, min, quartiles, avg, p50, p99, max
//!    and standard deviation in µs; normalised to plain forwarding where measured);
//! 10. **Plots**: each PNG shown, with a link to its SVG;
//! 11. **Run**: the [`RunMeta`] (command, date, machine, sr6 version, settings);
//! 12. **Notes and warnings**: `RunMeta::notes`, then figures that could not be drawn;
//! 13. **Files**: what else is in the directory.
//!
//! A value that is not finite, or a ratio over a zero, prints as `n/a`; a behaviour a
//! forwarder was not measured on prints as `—`.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use super::plot::{sweep_stem, Plots};
use super::{behaviors, find, forwarders, RunMeta};
use crate::model::{Behavior, BehaviorResult, Summary};

/// The name of the baseline forwarder the ratios divide by.
pub const BASELINE: &str = "linux";

/// The share of a forwarder's plain IPv6 PDR each SR proxy direction should reach
/// (issue 27; SREXT reached 52% with End.AD and 62% with End.AM, thesis §3.6.1).
pub const PROXY_GOAL: f64 = 0.85;

/// Issue 29's goal: each translation's PDR within 10% of its SRv6 function's.
pub const MOBILE_GOAL: f64 = 0.90;

/// Writes `report.md` into `dir`.
pub fn write_report(results: &[BehaviorResult], meta: &RunMeta, plots: &Plots, dir: &Path) -> io::Result<PathBuf> {
    let path = dir.join("report.md");
    std::fs::write(&path, render(results, meta, plots))?;
    Ok(path)
}

/// The text of `report.md`.
pub fn render(results: &[BehaviorResult], meta: &RunMeta, plots: &Plots) -> String {
    let mut s = String::new();
    let fws = forwarders(results);
    let behs = behaviors(results);
    let _ = writeln!(s, "# sr6 perf report\n");
    if results.is_empty() {
        let _ = writeln!(s, "No results.\n");
    } else {
        let _ = writeln!(
            s,
            "Forwarders: {}. Behaviours: {}. Rates in kpps (thousands of packets per second).\n",
            fws.iter().map(|f| format!("**{}**", cell(f))).collect::<Vec<_>>().join(", "),
            behs.iter().map(|b| b.name()).collect::<Vec<_>>().join(", "),
        );
    }
    let others: Vec<&str> =
        if fws.contains(&BASELINE) { fws.iter().copied().filter(|f| *f != BASELINE).collect() } else { Vec::new() };
    for fw in &others {
        headline(&mut s, results, fw);
    }

    if !results.is_empty() {
        let _ = writeln!(s, "## Throughput\n");
        let _ = writeln!(
            s,
            "As the SRPerf paper's Table I: mean over the repetitions, coefficient of variation \
             (std / mean) and the half-width of the 95% confidence interval of the mean \
             (Student's t), both as % of the mean.\n"
        );
    }
    for fw in &fws {
        table_one(&mut s, results, fw);
    }

    for fw in &others {
        ratio_table(&mut s, results, fw);
    }

    proxies(&mut s, results);
    mobile(&mut s, results);
    end_bpf(&mut s, results);
    hmac(&mut s, results);
    max_load(&mut s, results);
    latency(&mut s, results);
    plot_links(&mut s, plots, &behs);
    run_section(&mut s, results, meta);

    if !meta.notes.is_empty() || !plots.warnings.is_empty() {
        let _ = writeln!(s, "## Notes and warnings\n");
        for n in meta.notes.iter().chain(&plots.warnings) {
            let _ = writeln!(s, "- {}", n.replace('\n', " "));
        }
        s.push('\n');
    }

    let _ = writeln!(s, "## Files\n");
    let _ = writeln!(
        s,
        "- [results.json](results.json): every result, the model as serialized (repetitions and trials included)"
    );
    let _ = writeln!(s, "- [meta.json](meta.json): this run's metadata");
    let _ = writeln!(s, "- [results.csv](results.csv): one row per forwarder and behaviour");
    let _ = writeln!(s, "- [trials.csv](trials.csv): one row per trial");
    s
}

/// `pps` as kpps with two decimals, or `n/a`.
pub fn kpps(pps: f64) -> String {
    if pps.is_finite() {
        format!("{:.2}", pps / 1000.0)
    } else {
        "n/a".into()
    }
}

/// A fraction as a percentage with three decimals (`0.053%`), or `n/a`.
pub fn pct(frac: f64) -> String {
    if frac.is_finite() {
        format!("{:.3}%", frac * 100.0)
    } else {
        "n/a".into()
    }
}

/// `a / b` when both are finite and `b > 0`.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (a.is_finite() && b.is_finite() && b > 0.0).then(|| a / b)
}

fn ratio_str(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".into(), |r| format!("{r:.2}"))
}

/// Text safe in a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn row(s: &mut String, cells: impl IntoIterator<Item = String>) {
    s.push('|');
    for c in cells {
        let _ = write!(s, " {c} |");
    }
    s.push('\n');
}

fn header(s: &mut String, cells: &[String], left: usize) {
    row(s, cells.iter().cloned());
    row(s, (0..cells.len()).map(|i| if i < left { "---".into() } else { "---:".into() }));
}

fn headline(s: &mut String, results: &[BehaviorResult], fw: &str) {
    let rs: Vec<(&str, f64)> = behaviors(results)
        .into_iter()
        .filter_map(|b| {
            let a = find(results, fw, b)?;
            let l = find(results, BASELINE, b)?;
            Some((b.name(), ratio(a.pdr.mean, l.pdr.mean).filter(|r| *r > 0.0)?))
        })
        .collect();
    if rs.is_empty() {
        let _ = writeln!(s, "**{} / {BASELINE}**: no behaviour with a PDR for both.\n", cell(fw));
        return;
    }
    let geo = (rs.iter().map(|(_, r)| r.ln()).sum::<f64>() / rs.len() as f64).exp();
    let min = rs.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or(rs[0]);
    let max = rs.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or(rs[0]);
    let _ = writeln!(
        s,
        "**{fw} / {BASELINE} (PDR): {geo:.2}×** — geometric mean over {} behaviour{}; from {:.2}× ({}) to {:.2}× ({}).\n",
        rs.len(),
        if rs.len() == 1 { "" } else { "s" },
        min.1,
        min.0,
        max.1,
        max.0,
        fw = cell(fw),
    );
}

fn table_one(s: &mut String, results: &[BehaviorResult], fw: &str) {
    let behs = behaviors(results);
    let _ = writeln!(s, "### {}\n", cell(fw));
    let mut head = vec!["kpps".to_string()];
    head.extend(behs.iter().map(|b| b.name().to_string()));
    header(s, &head, 1);
    let cols: Vec<Option<&BehaviorResult>> = behs.iter().map(|&b| find(results, fw, b)).collect();
    let line = |s: &mut String, label: &str, f: &dyn Fn(&BehaviorResult) -> String| {
        let mut cells = vec![label.to_string()];
        cells.extend(cols.iter().map(|r| r.map_or_else(|| "—".to_string(), f)));
        row(s, cells);
    };
    let ci = |x: &Summary| pct(super::files::ci95_pct(x) / 100.0);
    line(s, "frame (B)", &|r| r.frame_bytes.to_string());
    line(s, "n", &|r| r.pdr.n.to_string());
    line(s, "**PDR mean**", &|r| format!("**{}**", kpps(r.pdr.mean)));
    line(s, "PDR CV", &|r| pct(r.pdr.cv));
    line(s, "PDR CI95", &|r| ci(&r.pdr));
    line(s, "NDR mean", &|r| kpps(r.ndr.mean));
    line(s, "NDR CV", &|r| pct(r.ndr.cv));
    line(s, "NDR CI95", &|r| ci(&r.ndr));
    if cols.iter().flatten().any(|r| r.tester_bound_repetitions() > 0) {
        line(s, "PDR tester-bound", &|r| format!("{}/{}", r.tester_bound_repetitions(), r.repetitions.len()));
    }
    s.push('\n');
}

/// `≥ ` before a value the tester bounded in any repetition.
fn at_least(r: &BehaviorResult) -> &'static str {
    if r.tester_bound_repetitions() > 0 {
        "≥ "
    } else {
        ""
    }
}

fn ratio_table(s: &mut String, results: &[BehaviorResult], fw: &str) {
    let f = cell(fw);
    let _ = writeln!(s, "## {f} / {BASELINE}\n");
    let _ = writeln!(s, "The ratio of the mean rates, per behaviour (above 1: {f} forwards more).\n");
    let head: Vec<String> = vec![
        "behaviour".into(),
        format!("{f} PDR"),
        format!("{BASELINE} PDR"),
        format!("**PDR {f}/{BASELINE}**"),
        format!("{f} NDR"),
        format!("{BASELINE} NDR"),
        format!("NDR {f}/{BASELINE}"),
    ];
    header(s, &head, 1);
    let mut marked = false;
    for b in behaviors(results) {
        let (Some(a), Some(l)) = (find(results, fw, b), find(results, BASELINE, b)) else {
            continue;
        };
        marked |= a.tester_bound_repetitions() + l.tester_bound_repetitions() > 0;
        // The ratio is a lower bound if only the numerator is; unknown if the baseline is.
        let q = ratio_str(ratio(a.pdr.mean, l.pdr.mean));
        let r = if l.tester_bound_repetitions() > 0 {
            format!("{q} ({BASELINE} tester-bound)")
        } else {
            format!("{}{q}", at_least(a))
        };
        row(
            s,
            [
                b.name().to_string(),
                format!("{}{}", at_least(a), kpps(a.pdr.mean)),
                format!("{}{}", at_least(l), kpps(l.pdr.mean)),
                format!("**{r}**"),
                kpps(a.ndr.mean),
                kpps(l.ndr.mean),
                ratio_str(ratio(a.ndr.mean, l.ndr.mean)),
            ],
        );
    }
    s.push('\n');
    if marked {
        let _ = writeln!(
            s,
            "`≥`: in at least one repetition the PDR search stopped at what the tester could \
             send (its ceiling, measured or `max_pps`, or a rate it fell short of) or take back \
             (the trial above the PDR lost frames only at the tester's receiving link), not at \
             the SUT's loss: the mean is a lower bound of the SUT's PDR.\n"
        );
    }
}

/// A rate as a percentage of a baseline rate, one decimal (`87.3%`), or `n/a`.
fn share(a: f64, base: f64) -> String {
    ratio(a, base).map_or_else(|| "n/a".into(), |r| format!("{:.1}%", r * 100.0))
}

/// Each SR proxy row's rates as a share of the same forwarder's plain IPv6 rates.
fn proxies(s: &mut String, results: &[BehaviorResult]) {
    let mut heading = false;
    for fw in forwarders(results) {
        let Some(base) = find(results, fw, Behavior::Ipv6) else { continue };
        let rows: Vec<&BehaviorResult> =
            behaviors(results).into_iter().filter(|b| b.is_proxy()).filter_map(|b| find(results, fw, b)).collect();
        if rows.is_empty() {
            continue;
        }
        if !heading {
            heading = true;
            let _ = writeln!(s, "## SR proxies / plain IPv6\n");
            let _ = writeln!(
                s,
                "Each SR proxy direction's rate as a share of the same forwarder's `ipv6` rate in \
                 this run, the tester playing the service function (docs/perf.md). Goal (issue \
                 27): a PDR of at least {:.0}% of plain IPv6 in each direction; SREXT, the Linux \
                 module of the thesis (§3.6.1), reached 52% (End.AD) and 62% (End.AM) of its \
                 plain IPv6 rate.\n",
                PROXY_GOAL * 100.0
            );
        }
        let _ = writeln!(s, "### {}\n", cell(fw));
        let head: Vec<String> = [
            "behaviour",
            "direction",
            "PDR",
            "**PDR / ipv6**",
            &format!("≥ {:.0}%", PROXY_GOAL * 100.0),
            "NDR",
            "NDR / ipv6",
        ]
        .iter()
        .map(|c| c.to_string())
        .collect();
        header(s, &head, 2);
        for r in rows {
            let q = ratio(r.pdr.mean, base.pdr.mean);
            // A share is a lower bound if only the proxy's PDR is; unknown if ipv6's is.
            let (pdr_share, goal) = if base.tester_bound_repetitions() > 0 {
                (format!("{} (ipv6 tester-bound)", share(r.pdr.mean, base.pdr.mean)), "?".to_string())
            } else {
                let met = q.is_some_and(|q| q >= PROXY_GOAL);
                let goal = match (met, r.tester_bound_repetitions() > 0) {
                    (true, _) => "yes",
                    (false, true) => "?",
                    (false, false) => "no",
                };
                (format!("{}{}", at_least(r), share(r.pdr.mean, base.pdr.mean)), goal.to_string())
            };
            let direction = if r.behavior.proxy_return().is_some() { "from the function" } else { "to the function" };
            row(
                s,
                [
                    r.behavior.name().to_string(),
                    direction.to_string(),
                    format!("{}{}", at_least(r), kpps(r.pdr.mean)),
                    format!("**{pdr_share}**"),
                    goal,
                    kpps(r.ndr.mean),
                    share(r.ndr.mean, base.ndr.mean),
                ],
            );
        }
        let _ = writeln!(
            s,
            "\nipv6: PDR {}{} kpps, NDR {} kpps.\n",
            at_least(base),
            kpps(base.pdr.mean),
            kpps(base.ndr.mean)
        );
    }
}

/// The translations of RFC 9433 beside the SRv6 and GTP-U functions they replace, as
/// the GTP-U/SRv6 paper compares them (its Table II): (translation, SRv6 function,
/// GTP-U function).
const MOBILE_PAIRS: [(&str, &str, &str); 2] =
    [("H.M.GTP4.D", "SRv6.Encap", "GTP-U.Decap"), ("End.M.GTP4.E", "SRv6.Decap", "GTP-U.Encap")];

fn mobile(s: &mut String, results: &[BehaviorResult]) {
    let get = |fw: &str, n: &str| Behavior::parse(n).and_then(|b| find(results, fw, b));
    let mut heading = false;
    for fw in forwarders(results) {
        let rows: Vec<_> =
            MOBILE_PAIRS.iter().filter_map(|(t, sr, gtp)| Some((get(fw, t)?, get(fw, sr)?, get(fw, gtp)))).collect();
        if rows.is_empty() {
            continue;
        }
        if !heading {
            heading = true;
            let _ = writeln!(s, "## Mobile user plane: translation / SRv6\n");
            let _ = writeln!(
                s,
                "Each RFC 9433 translation's rate as a share of the SRv6 function beside it in this \
                 run (H.M.GTP4.D translates GTP-U into what SRv6.Encap makes; End.M.GTP4.E \
                 turns what SRv6.Decap takes into GTP-U). Goal (issue 29): a PDR within {:.0}% \
                 of the SRv6 function's; the GTP-U/SRv6 paper found the gap negligible.\n",
                (1.0 - MOBILE_GOAL) * 100.0
            );
        }
        let _ = writeln!(s, "### {}\n", cell(fw));
        let head: Vec<String> =
            ["translation", "PDR", "SRv6 function", "its PDR", "**PDR / SRv6**", "goal", "GTP-U function", "its PDR"]
                .iter()
                .map(|c| c.to_string())
                .collect();
        header(s, &head, 1);
        for (t, sr, gtp) in rows {
            let q = ratio(t.pdr.mean, sr.pdr.mean);
            let goal = match (q.is_some_and(|q| q >= MOBILE_GOAL), at_least(t), at_least(sr)) {
                (_, _, "≥ ") => "?",
                (true, _, _) => "yes",
                (false, "≥ ", _) => "?",
                (false, _, _) => "no",
            };
            row(
                s,
                [
                    t.behavior.name().to_string(),
                    format!("{}{}", at_least(t), kpps(t.pdr.mean)),
                    sr.behavior.name().to_string(),
                    format!("{}{}", at_least(sr), kpps(sr.pdr.mean)),
                    format!("**{}**", share(t.pdr.mean, sr.pdr.mean)),
                    goal.to_string(),
                    gtp.map_or("—".into(), |g| g.behavior.name().to_string()),
                    gtp.map_or("—".into(), |g| format!("{}{}", at_least(g), kpps(g.pdr.mean))),
                ],
            );
        }
        s.push('\n');
    }
}

/// The End.BPF rows beside what the End.BPF paper compares them with (§5, on the
/// kernel, JIT on): (row, its baseline, the paper's throughput ratio). eBPF End forwards
/// 3% less than the native End, Tag++ 3% less than eBPF End, Add TLV 5% less than eBPF
/// End, eBPF End.T 5% less than the native End.T.
pub const BPF_PAIRS: [(&str, &str, f64); 4] = [
    ("End.BPF-end", "End", 0.97),
    ("End.BPF-tag", "End.BPF-end", 0.97),
    ("End.BPF-tlv", "End.BPF-end", 0.95),
    ("End.BPF-end_t", "End.T", 0.95),
];

fn end_bpf(s: &mut String, results: &[BehaviorResult]) {
    let pairs: Vec<(&str, &str, Option<f64>)> = BPF_PAIRS.iter().map(|&(r, b, p)| (r, b, Some(p))).collect();
    pair_section(
        s,
        results,
        &pairs,
        "End.BPF / native",
        "program",
        "Each End.BPF program's rate as a share of what the End.BPF paper (§5) compares it \
         with, in this run: the same object for every forwarder. The paper's column is its \
         kernel's figure (JIT on).",
    );
}

/// The HMAC rows beside the same behaviour without an HMAC: (row, its baseline, the
/// Lebrun paper's share where it gives one). Its §3 measured the kernel's encapsulation
/// with an HMAC-SHA256 TLV at 290 kpps (SSSE3 SHA-256; 240 with the generic code)
/// against 1,001 kpps without: 29%.
pub const HMAC_PAIRS: [(&str, &str, Option<f64>); 4] = [
    ("H.Encaps-hmac-sha256", "T.Encaps", Some(0.29)),
    ("H.Encaps-hmac-sha1", "T.Encaps", None),
    ("End-hmac-sha256", "End", None),
    ("End-hmac-sha1", "End", None),
];

fn hmac(s: &mut String, results: &[BehaviorResult]) {
    pair_section(
        s,
        results,
        &HMAC_PAIRS,
        "HMAC / without",
        "row",
        "Each HMAC row's rate as a share of the same behaviour without an HMAC, in this run \
         (RFC 8754 §2.1.2: H.Encaps adds an HMAC TLV, End verifies one on a device that \
         requires it). The paper's column is the Lebrun paper's kernel figure (§3, Fig. 8: \
         encapsulation with HMAC-SHA256, 290 kpps against 1,001 without).",
    );
}

/// A section of rows beside the rows they are compared with (`pairs`: row, baseline,
/// the paper's share), per forwarder that has both rows of a pair.
fn pair_section(
    s: &mut String,
    results: &[BehaviorResult],
    pairs: &[(&str, &str, Option<f64>)],
    title: &str,
    what: &str,
    intro: &str,
) {
    let get = |fw: &str, n: &str| Behavior::parse(n).and_then(|b| find(results, fw, b));
    let mut heading = false;
    for fw in forwarders(results) {
        let rows: Vec<_> =
            pairs.iter().filter_map(|(r, base, paper)| Some((get(fw, r)?, get(fw, base)?, *paper))).collect();
        if rows.is_empty() {
            continue;
        }
        if !heading {
            heading = true;
            let _ = writeln!(s, "## {title}\n");
            let _ = writeln!(s, "{intro}\n");
        }
        let _ = writeln!(s, "### {}\n", cell(fw));
        let head: Vec<String> =
            [what, "PDR", "beside", "its PDR", "**PDR / beside**", "paper (kernel)", "NDR / beside"]
                .iter()
                .map(|c| c.to_string())
                .collect();
        header(s, &head, 1);
        for (r, base, paper) in rows {
            row(
                s,
                [
                    r.behavior.name().to_string(),
                    format!("{}{}", at_least(r), kpps(r.pdr.mean)),
                    base.behavior.name().to_string(),
                    format!("{}{}", at_least(base), kpps(base.pdr.mean)),
                    format!("**{}**", share(r.pdr.mean, base.pdr.mean)),
                    paper.map_or("—".to_string(), |p| format!("{:.0}%", p * 100.0)),
                    share(r.ndr.mean, base.ndr.mean),
                ],
            );
        }
        s.push('\n');
    }
}

/// The forwarding rate at maximum offered load ([`crate::model::MaxLoad`]), where
/// measured.
fn max_load(s: &mut String, results: &[BehaviorResult]) {
    let mut rows: Vec<&BehaviorResult> = results.iter().filter(|r| r.max_load.is_some()).collect();
    if rows.is_empty() {
        return;
    }
    let fws = forwarders(results);
    rows.sort_by_key(|r| (fws.iter().position(|f| *f == r.forwarder), r.behavior));
    let _ = writeln!(
        s,
        "## Forwarding rate at maximum offered load
"
    );
    let _ = writeln!(
        s,
        "After each search, one trial at the highest rate the search may offer (RFC 2285 \
         §3.6.2). *Saturated*: trials in which the SUT lost more than the PDR threshold, \
         not at the tester's link — there the forwarded rate is what the SUT does under \
         overload, a measure of it even where its PDR is marked `≥` (an SUT that drops at \
         its own link leaves the tester less to receive, so the tester can offer more than \
         the SUT forwards). Where it was not saturated, the forwarded rate is what the tester \
         could send: a lower bound. Means over the trials, kpps.\n"
    );
    let head: Vec<String> = [
        "forwarder",
        "behaviour",
        "offered (sent)",
        "forwarded",
        "forwarded CV",
        "saturated",
        "PDR",
        "SUT CPU busy",
        "SUT CPU ns / packet",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    header(s, &head, 2);
    let cost = |r: &BehaviorResult| -> (Option<f64>, Option<f64>) {
        let Some(m) = &r.max_load else { return (None, None) };
        let mean =
            |v: Vec<f64>| (!v.is_empty() && v.len() == m.trials.len()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        (
            mean(m.trials.iter().filter_map(|t| t.sut_cpu_busy()).collect()),
            mean(m.trials.iter().filter_map(|t| t.sut_ns_per_packet()).collect()),
        )
    };
    let mut costs: Vec<(&str, Behavior, f64)> = Vec::new();
    for r in rows {
        if let Some(m) = &r.max_load {
            let all = m.saturated == m.trials.len();
            let (busy, ns) = cost(r);
            if let Some(x) = ns {
                costs.push((r.forwarder.as_str(), r.behavior, x));
            }
            row(
                s,
                [
                    cell(&r.forwarder),
                    r.behavior.name().to_string(),
                    kpps(m.offered.mean),
                    format!("{}{}", if m.saturated == 0 { "≥ " } else { "" }, kpps(m.forwarded.mean)),
                    pct(m.forwarded.cv),
                    if all {
                        format!("**{}/{}**", m.saturated, m.trials.len())
                    } else {
                        format!("{}/{}", m.saturated, m.trials.len())
                    },
                    format!("{}{}", at_least(r), kpps(r.pdr.mean)),
                    busy.map_or("—".into(), |b| format!("{:.0}%", b * 100.0)),
                    ns.map_or("—".into(), |x| format!("{x:.0}")),
                ],
            );
        }
    }
    s.push('\n');
    cpu_ratios(s, &costs, &fws);
}

/// Per forwarder other than `linux`: the kernel's SUT CPU time per packet forwarded at
/// maximum load over the forwarder's, per behaviour both were measured on.
fn cpu_ratios(s: &mut String, costs: &[(&str, Behavior, f64)], fws: &[&str]) {
    for fw in fws.iter().filter(|f| **f != BASELINE) {
        let rows: Vec<(Behavior, f64, f64)> = costs
            .iter()
            .filter(|(f, _, _)| f == fw)
            .filter_map(|(_, b, ns)| {
                let k = costs.iter().find(|(f, kb, _)| *f == BASELINE && kb == b)?;
                Some((*b, k.2, *ns))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let fw = cell(fw);
        let _ = writeln!(
            s,
            "### SUT CPU per packet: linux / {fw}\n\nThe SUT CPU's busy time in the max-load trials \
             (`/proc/stat`) over the packets forwarded: what a packet cost the SUT, measured \
             whatever bounded the rate (the tester's ceiling leaves a SUT's CPU partly idle). \
             Above 1: {fw} spends less CPU per packet.\n"
        );
        let head =
            ["behaviour".to_string(), "linux ns / packet".into(), format!("{fw} ns / packet"), format!("linux / {fw}")];
        header(s, &head, 1);
        for (b, k, x) in rows {
            row(
                s,
                [b.name().to_string(), format!("{k:.0}"), format!("{x:.0}"), format!("**{}**", ratio_str(ratio(k, x)))],
            );
        }
        s.push('\n');
    }
}

fn latency(s: &mut String, results: &[BehaviorResult]) {
    let _ = writeln!(s, "## Latency\n");
    let mut rows: Vec<&BehaviorResult> = results.iter().filter(|r| r.latency.is_some()).collect();
    if rows.is_empty() {
        let _ = writeln!(s, "No latency measured.\n");
        return;
    }
    let fws = forwarders(results);
    rows.sort_by_key(|r| (fws.iter().position(|f| *f == r.forwarder), r.behavior));
    // The baseline of the normalised latency: the forwarder's plain forwarding of the
    // same family as the row's innermost packet (the GTP-U/SRv6 paper's L2 forwarding).
    let base = |r: &BehaviorResult| {
        let plain = if r.behavior.inner_ipv4(0) { Behavior::Ipv4 } else { Behavior::Ipv6 };
        results
            .iter()
            .find(|x| x.forwarder == r.forwarder && x.behavior == plain)
            .and_then(|x| x.latency)
            .map(|l| l.avg_us)
            .filter(|a| a.is_finite() && *a > 0.0)
    };
    let normalised = rows.iter().any(|r| base(r).is_some());
    let _ = writeln!(
        s,
        "One-way, at the rate shown (the experiment's `latency_pps`, else a fraction of each row's NDR); \
         microseconds. std: the standard deviation{}.\n",
        if normalised {
            "; normalised: (avg - avg of plain forwarding) / avg of plain forwarding, plain forwarding \
             of the row's innermost family by the same forwarder (the GTP-U/SRv6 paper's Fig. 5)"
        } else {
            ""
        }
    );
    let mut head: Vec<String> =
        ["forwarder", "behaviour", "rate (kpps)", "samples", "min", "p25", "avg", "p50", "p75", "p99", "max", "std"]
            .iter()
            .map(|c| c.to_string())
            .collect();
    if normalised {
        head.push("normalised".into());
    }
    header(s, &head, 2);
    let us = |x: f64| if x.is_finite() { format!("{x:.2}") } else { "n/a".into() };
    for r in rows {
        if let Some(l) = &r.latency {
            let mut cells = vec![
                cell(&r.forwarder),
                r.behavior.name().to_string(),
                kpps(l.rate_pps),
                l.samples.to_string(),
                us(l.min_us),
                us(l.p25_us),
                us(l.avg_us),
                us(l.p50_us),
                us(l.p75_us),
                us(l.p99_us),
                us(l.max_us),
                us(l.std_us),
            ];
            if normalised {
                cells.push(base(r).map_or("n/a".into(), |b| format!("{:+.3}", (l.avg_us - b) / b)));
            }
            row(s, cells);
        }
    }
    s.push('\n');
}

fn plot_links(s: &mut String, plots: &Plots, behs: &[crate::model::Behavior]) {
    let has = |name: &str| plots.files.iter().any(|p| p.file_name().and_then(|n| n.to_str()) == Some(name));
    let mut figures: Vec<(String, String)> = vec![
        ("pdr-boxplot".into(), "PDR per behaviour (box plot over the repetitions; the paper's Fig. 3)".into()),
        ("ndr-boxplot".into(), "NDR per behaviour".into()),
        (
            "latency-boxplot".into(),
            "One-way latency per behaviour at the latency rate (the GTP-U/SRv6 paper's Fig. 5/6)".into(),
        ),
    ];
    figures.extend(behs.iter().map(|b| {
        (
            sweep_stem(*b),
            format!(
                "{}: delivered rate and delivery ratio versus offered rate, every trial (the paper's Fig. 2)",
                b.name()
            ),
        )
    }));
    let shown: Vec<&(String, String)> =
        figures.iter().filter(|(stem, _)| has(&format!("{stem}.png")) || has(&format!("{stem}.svg"))).collect();
    let _ = writeln!(s, "## Plots\n");
    if shown.is_empty() {
        let _ = writeln!(s, "No plot was drawn (see the warnings below).\n");
        return;
    }
    for (stem, what) in shown {
        let _ = writeln!(s, "### {what}\n");
        let png = format!("{stem}.png");
        let svg = format!("{stem}.svg");
        if has(&png) {
            let _ = write!(s, "![{stem}]({png})");
        }
        if has(&svg) {
            let _ = write!(s, "{}[SVG]({svg})", if has(&png) { "\n\n" } else { "" });
        }
        s.push_str("\n\n");
    }
}

fn run_section(s: &mut String, results: &[BehaviorResult], meta: &RunMeta) {
    let _ = writeln!(s, "## Run\n");
    header(s, &["".into(), "".into()], 2);
    let or_dash = |x: &str| if x.is_empty() { "—".to_string() } else { cell(x) };
    let cmd = if meta.command_line.is_empty() {
        "—".to_string()
    } else {
        format!("`{}`", cell(&meta.command_line.replace('`', "'")))
    };
    row(s, ["command".into(), cmd]);
    row(s, ["date".into(), or_dash(&meta.date)]);
    let m = &meta.machine;
    row(s, ["CPU".into(), format!("{}, {} logical CPUs", or_dash(&m.cpu_model), m.cores)]);
    row(s, ["kernel".into(), or_dash(&m.kernel)]);
    let sr6 = match (&meta.sr6_version, &meta.sr6_commit) {
        (Some(v), Some(c)) => format!("{} ({})", cell(v), cell(c)),
        (Some(v), None) => cell(v),
        (None, Some(c)) => cell(c),
        (None, None) => "—".into(),
    };
    row(s, ["sr6".into(), sr6]);
    let dur = if meta.trial_duration_s.is_finite() { format!("{} s", meta.trial_duration_s) } else { "n/a".into() };
    row(s, ["trial duration".into(), dur]);
    row(s, ["repetitions".into(), meta.repetitions.to_string()]);
    row(s, ["innermost packet".into(), format!("{} B", meta.frame_bytes)]);
    let mut thresholds: Vec<String> = results.iter().map(|r| pct(r.pdr_loss_threshold)).collect();
    thresholds.dedup();
    thresholds.sort();
    thresholds.dedup();
    if !thresholds.is_empty() {
        row(s, ["PDR loss threshold".into(), thresholds.join(", ")]);
    }
    s.push('\n');
}
