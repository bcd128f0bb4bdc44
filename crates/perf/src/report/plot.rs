//! The report's figures, each written as PNG and SVG, after the SRPerf paper:
//!
//! - `pdr-boxplot` and `ndr-boxplot` (Fig. 3): one box per forwarder and behaviour over
//!   the repetitions' PDR (NDR), in kpps; forwarders side by side in each behaviour's slot,
//!   one colour each. Box: quartiles (linear interpolation), bold line: median, whiskers:
//!   the farthest values within 1.5 IQR of the box, hollow circles: values beyond. The y
//!   axis starts at 0 so heights compare as ratios.
//! - `latency-boxplot` (the GTP-U/SRv6 paper's Fig. 5/6, where any row has latency):
//!   one box per forwarder and behaviour over the one-way latency's distribution at the
//!   latency rate, in µs: box p25-p75, bold line p50, whiskers min and p99.
//! - `sweep-<behaviour>` (Fig. 2): for one behaviour, one panel per forwarder: every trial
//!   of every repetition, delivered rate (kpps, left axis) and delivery ratio (%, right
//!   axis) against the offered rate; the dashed diagonal is "delivered = offered", the
//!   vertical dashed lines the mean NDR and PDR.
//!
//! Figure sizes grow with the number of behaviours and forwarders ([`boxplot_size`],
//! [`sweep_size`]) so 1 to 14 behaviours and 1 to 3 forwarders stay readable.
//! Non-finite values are left out, empty or all-zero data get unit axes and a "no data"
//! note, and axis ranges are never empty or NaN (plotters asserts on those); a figure that
//! fails anyway (a panic inside plotters included) becomes a warning, not an error.
//!
//! Text needs a font on the machine (Debian's `fonts-dejavu-core`): see [`super::font`].
//! PNGs are drawn through [`super::raster::PngBackend`], which places glyphs correctly.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::font::{faces, Faces, FAMILY};
use super::raster::PngBackend;
use super::{behaviors, file_safe, find, forwarders};
use crate::model::{Behavior, BehaviorResult};

/// What [`write_plots`] made.
#[derive(Debug, Clone, Default)]
pub struct Plots {
    /// The files written (PNG and SVG of each figure).
    pub files: Vec<PathBuf>,
    /// Figures that could not be drawn, and why.
    pub warnings: Vec<String>,
}

/// Draws every figure into `dir` (PNG and SVG); never fails, see [`Plots::warnings`].
pub fn write_plots(results: &[BehaviorResult], dir: &Path) -> Plots {
    let mut out = Plots::default();
    let faces = match faces() {
        Ok(f) => f,
        Err(e) => {
            out.warnings.push(format!("plots not drawn: {e}"));
            return out;
        }
    };
    let fws = forwarders(results);
    let behs = behaviors(results);
    for metric in [Metric::Pdr, Metric::Ndr] {
        let fig = BoxFigure { results, fws: &fws, behs: &behs, metric };
        save(&fig, dir, metric.stem(), faces, &mut out);
    }
    if results.iter().any(|r| r.latency.is_some_and(|l| l.samples > 0)) {
        let lbehs: Vec<Behavior> =
            behs.iter().copied().filter(|&b| results.iter().any(|r| r.behavior == b && r.latency.is_some())).collect();
        let fig = BoxFigure { results, fws: &fws, behs: &lbehs, metric: Metric::Latency };
        save(&fig, dir, Metric::Latency.stem(), faces, &mut out);
    }
    for &b in &behs {
        let fig = SweepFigure { results, fws: &fws, behavior: b };
        save(&fig, dir, &sweep_stem(b), faces, &mut out);
    }
    out
}

/// The file stem of the sweep figure of a behaviour (`sweep-<behaviour>`).
pub fn sweep_stem(b: Behavior) -> String {
    format!("sweep-{}", file_safe(b.name()))
}

/// Pixel size of a box plot with `behaviors` slots of `forwarders` boxes.
pub fn boxplot_size(behaviors: usize, forwarders: usize) -> (u32, u32) {
    let slot = (36 * forwarders.max(1) + 40).max(110);
    let w = (180 + behaviors.max(1) * slot).clamp(720, 2400);
    (w as u32, 600)
}

/// Pixel size of a sweep figure with one panel per forwarder.
pub fn sweep_size(forwarders: usize) -> (u32, u32) {
    (760 * forwarders.clamp(1, 4) as u32, 580)
}

trait Figure {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

fn save(fig: &impl Figure, dir: &Path, stem: &str, faces: &'static Faces, out: &mut Plots) {
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    let r = guarded(|| {
        let root = PngBackend::new(&png, fig.size(), faces).into_drawing_area();
        fig.draw(&root)?;
        root.present().map_err(|e| e.to_string())
    });
    record(r, png, out);
    let r = guarded(|| {
        let root = SVGBackend::new(&svg, fig.size()).into_drawing_area();
        fig.draw(&root)?;
        root.present().map_err(|e| e.to_string())
    });
    record(r, svg, out);
}

/// Runs a drawing, turning a panic inside plotters into an error.
fn guarded(f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(format!(
            "plotters panicked: {}",
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default()
        )),
    }
}

fn record(r: Result<(), String>, path: PathBuf, out: &mut Plots) {
    match r {
        Ok(()) if path.exists() => out.files.push(path),
        Ok(()) => out.warnings.push(format!("{}: not written", path.display())),
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            out.warnings.push(format!("{}: {e}", path.display()));
        }
    }
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

#[derive(Clone, Copy, PartialEq)]
enum Metric {
    Pdr,
    Ndr,
    /// The one-way latency's distribution (one box from its percentiles).
    Latency,
}

impl Metric {
    fn stem(self) -> &'static str {
        match self {
            Metric::Pdr => "pdr-boxplot",
            Metric::Ndr => "ndr-boxplot",
            Metric::Latency => "latency-boxplot",
        }
    }
    fn name(self) -> &'static str {
        match self {
            Metric::Pdr => "PDR",
            Metric::Ndr => "NDR",
            Metric::Latency => "latency",
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Metric::Pdr | Metric::Ndr => "kpps",
            Metric::Latency => "\u{b5}s",
        }
    }
    /// The box of a result: over the repetitions' rates, or the latency's percentiles
    /// (whiskers min and p99; no outlier drawn).
    fn stats(self, r: &BehaviorResult) -> Option<BoxStats> {
        match self {
            Metric::Latency => {
                let l = r.latency.filter(|l| l.samples > 0)?;
                let v = [l.min_us, l.p25_us, l.p50_us, l.p75_us, l.p99_us];
                v.iter().all(|x| x.is_finite()).then(|| BoxStats {
                    q1: l.p25_us,
                    median: l.p50_us,
                    q3: l.p75_us,
                    low: l.min_us,
                    high: l.p99_us,
                    outliers: Vec::new(),
                })
            }
            _ => box_stats(&self.values_kpps(r)),
        }
    }
    /// The repetitions' values in kpps (finite only); the mean when there is no
    /// repetition.
    fn values_kpps(self, r: &BehaviorResult) -> Vec<f64> {
        let pick = |pdr: f64, ndr: f64| if self == Metric::Pdr { pdr } else { ndr };
        let mut v: Vec<f64> =
            r.repetitions.iter().map(|s| pick(s.pdr_pps, s.ndr_pps) / 1000.0).filter(|x| x.is_finite()).collect();
        if r.repetitions.is_empty() {
            let mean = pick(r.pdr_pps, r.ndr_pps) / 1000.0;
            if mean.is_finite() {
                v.push(mean);
            }
        }
        v
    }
}

/// Colours of the forwarders, in order (matplotlib's tab10, which the paper's figures
/// resemble); cycled past six.
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const GRID_LIGHT: RGBColor = RGBColor(238, 238, 238);
const GRID_BOLD: RGBColor = RGBColor(210, 210, 210);
const NO_DATA: &str = "no data";

/// A category axis: value `i as f64` is the centre of category `i`; each category is
/// one unit wide, so boxes can be offset within it. Labels are the category names.
struct Categories {
    names: Vec<String>,
}

impl Ranged for Categories {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let n = self.names.len().max(1) as f64;
        let t = (value + 0.5) / n;
        let px = f64::from(limit.0) + t * f64::from(limit.1 - limit.0);
        if px.is_finite() {
            px.round() as i32
        } else {
            limit.0
        }
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        (0..self.names.len()).map(|i| i as f64).collect()
    }

    fn range(&self) -> Range<f64> {
        -0.5..self.names.len().max(1) as f64 - 0.5
    }
}

impl ValueFormatter<f64> for Categories {
    fn format(value: &f64) -> String {
        format!("{value}")
    }
    fn format_ext(&self, value: &f64) -> String {
        let i = value.round();
        if i >= 0.0 && (i as usize) < self.names.len() {
            self.names[i as usize].clone()
        } else {
            String::new()
        }
    }
}

/// The smallest "round" number (1, 1.2, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 9 times a power of
/// ten) at or above `x`; 1 for anything not finite and positive.
pub(crate) fn nice_ceil(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0] {
        if m * p >= x * (1.0 - 1e-12) {
            return m * p;
        }
    }
    10.0 * p
}

/// Tick labels: no trailing zeros (`1200`, `0.5`, `1.25`).
fn tick(v: &f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// Linear-interpolation quantile of sorted data (`p` in 0..=1).
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let Some(&last) = sorted.last() else {
        return f64::NAN;
    };
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let a = sorted.get(lo).copied().unwrap_or(last);
    let b = sorted.get(lo + 1).copied().unwrap_or(a);
    a + (h - lo as f64) * (b - a)
}

/// Tukey box: quartiles, whisker ends (the farthest values within 1.5 IQR) and the
/// values beyond them.
struct BoxStats {
    q1: f64,
    median: f64,
    q3: f64,
    low: f64,
    high: f64,
    outliers: Vec<f64>,
}

fn box_stats(values: &[f64]) -> Option<BoxStats> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let (q1, median, q3) = (quantile(&v, 0.25), quantile(&v, 0.5), quantile(&v, 0.75));
    let iqr = q3 - q1;
    let (lo_fence, hi_fence) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    let inside = || v.iter().copied().filter(|x| *x >= lo_fence && *x <= hi_fence);
    let low = inside().fold(q1, f64::min);
    let high = inside().fold(q3, f64::max);
    let outliers = v.iter().copied().filter(|x| *x < lo_fence || *x > hi_fence).collect();
    Some(BoxStats { q1, median, q3, low, high, outliers })
}

/// A rate label: no decimals from 100 up, one below.
fn short(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The colour at 70% brightness, for text in a series' colour.
fn darker(c: RGBColor) -> RGBColor {
    let d = |x: u8| (f64::from(x) * 0.7) as u8;
    RGBColor(d(c.0), d(c.1), d(c.2))
}

fn title_font<'a>() -> TextStyle<'a> {
    (FAMILY, 22).into_font().style(FontStyle::Bold).into()
}

fn text(size: u32) -> TextStyle<'static> {
    (FAMILY, size).into_font().into()
}

/// Writes "no data" in the middle of a chart's plotting area.
fn no_data<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> Result<(), String> {
    let (w, h) = area.dim_in_pixel();
    let style = text(20).color(&RGBColor(120, 120, 120)).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(NO_DATA, ((w / 2) as i32, (h / 2) as i32), style)).map_err(err)
}

/// Fig. 3: box plots of a rate over the repetitions, per behaviour and forwarder.
struct BoxFigure<'a> {
    results: &'a [BehaviorResult],
    fws: &'a [&'a str],
    behs: &'a [Behavior],
    metric: Metric,
}

impl Figure for BoxFigure<'_> {
    fn size(&self) -> (u32, u32) {
        boxplot_size(self.behs.len(), self.fws.len())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(err)?;
        let nf = self.fws.len().max(1);
        // stats[f][b]
        let stats: Vec<Vec<Option<BoxStats>>> = self
            .fws
            .iter()
            .map(|fw| self.behs.iter().map(|&b| find(self.results, fw, b).and_then(|r| self.metric.stats(r))).collect())
            .collect();
        let top = stats
            .iter()
            .flatten()
            .flatten()
            .flat_map(|s| s.outliers.iter().copied().chain([s.high, s.q3]))
            .fold(0.0, f64::max);
        let any = stats.iter().flatten().any(|s| s.is_some());
        // Head room above the tallest box for the legend.
        let y_top = nice_ceil(top * 1.18);

        let threshold = self.results.first().map(|r| r.pdr_loss_threshold).filter(|t| t.is_finite());
        let title = match (self.metric, threshold) {
            (Metric::Pdr, Some(t)) => {
                format!("Partial-Drop Rate (loss \u{2264} {}%) per behaviour", tick(&(t * 100.0)))
            }
            (Metric::Pdr, None) => "Partial-Drop Rate per behaviour".to_string(),
            (Metric::Ndr, _) => "No-Drop Rate per behaviour".to_string(),
            (Metric::Latency, _) => "One-way latency: box p25-p75, whiskers min-p99".to_string(),
        };
        let names = self.behs.iter().map(|b| b.name().to_string()).collect();
        let mut chart = ChartBuilder::on(root)
            .caption(title, title_font())
            .margin(18)
            .x_label_area_size(56)
            .y_label_area_size(84)
            .build_cartesian_2d(Categories { names }, 0.0..y_top)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .max_light_lines(1)
            .light_line_style(GRID_LIGHT)
            .bold_line_style(GRID_BOLD)
            .axis_style(BLACK.mix(0.8))
            .label_style(text(15))
            .axis_desc_style(text(17))
            .y_desc(format!("{} ({})", self.metric.name(), self.metric.unit()))
            .x_desc("behaviour")
            .y_label_formatter(&tick)
            .draw()
            .map_err(err)?;
        if !any {
            return no_data(&chart.plotting_area().strip_coord_spec());
        }

        let slot = 0.8 / nf as f64;
        let half = (slot * 0.36).min(0.2);
        for (fi, (fw, row)) in self.fws.iter().zip(&stats).enumerate() {
            let c = color(fi);
            let off = (fi as f64 - (nf as f64 - 1.0) / 2.0) * slot;
            let boxes: Vec<(f64, &BoxStats)> =
                row.iter().enumerate().filter_map(|(bi, s)| s.as_ref().map(|s| (bi as f64 + off, s))).collect();
            // The filled bodies carry the legend entry.
            chart
                .draw_series(
                    boxes
                        .iter()
                        .map(|(x, s)| Rectangle::new([(x - half, s.q1), (x + half, s.q3)], c.mix(0.25).filled())),
                )
                .map_err(err)?
                .label(fw.to_string())
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + Rectangle::new([(0, -7), (18, 7)], c.mix(0.25).filled())
                        + Rectangle::new([(0, -7), (18, 7)], c.stroke_width(2))
                        + PathElement::new(vec![(0, 0), (18, 0)], c.stroke_width(3))
                });
            let line = c.stroke_width(2);
            chart
                .draw_series(boxes.iter().map(|(x, s)| Rectangle::new([(x - half, s.q1), (x + half, s.q3)], line)))
                .map_err(err)?;
            chart
                .draw_series(boxes.iter().flat_map(|(x, s)| {
                    [
                        PathElement::new(vec![(*x, s.q3), (*x, s.high)], line),
                        PathElement::new(vec![(*x, s.q1), (*x, s.low)], line),
                        PathElement::new(vec![(x - half / 2.0, s.high), (x + half / 2.0, s.high)], line),
                        PathElement::new(vec![(x - half / 2.0, s.low), (x + half / 2.0, s.low)], line),
                        PathElement::new(vec![(x - half, s.median), (x + half, s.median)], c.stroke_width(4)),
                    ]
                }))
                .map_err(err)?;
            chart
                .draw_series(
                    boxes
                        .iter()
                        .flat_map(|(x, s)| s.outliers.iter().map(move |v| Circle::new((*x, *v), 4, c.stroke_width(1)))),
                )
                .map_err(err)?;
            // The median, written above the box; "n/a" where the forwarder has a result
            // but no finite value.
            let dark = darker(c);
            let label = text(12).color(&dark).pos(Pos::new(HPos::Center, VPos::Bottom));
            chart
                .draw_series(boxes.iter().map(|(x, s)| {
                    let top = s.outliers.iter().copied().fold(s.high, f64::max);
                    EmptyElement::at((*x, top)) + Text::new(short(s.median), (0, -5), label.clone())
                }))
                .map_err(err)?;
            let grey = text(12).color(&RGBColor(120, 120, 120)).pos(Pos::new(HPos::Center, VPos::Bottom));
            chart
                .draw_series(self.behs.iter().enumerate().filter_map(|(bi, &b)| {
                    let missing = row.get(bi).is_some_and(|s| s.is_none()) && find(self.results, fw, b).is_some();
                    missing.then(|| EmptyElement::at((bi as f64 + off, 0.0)) + Text::new("n/a", (0, -5), grey.clone()))
                }))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.92))
            .border_style(BLACK.mix(0.35))
            .label_font(text(15))
            .draw()
            .map_err(err)
    }
}

/// Fig. 2: delivered rate and delivery ratio versus offered rate, one panel per
/// forwarder, for one behaviour.
struct SweepFigure<'a> {
    results: &'a [BehaviorResult],
    fws: &'a [&'a str],
    behavior: Behavior,
}

impl Figure for SweepFigure<'_> {
    fn size(&self) -> (u32, u32) {
        sweep_size(self.fws.len())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(err)?;
        let panels = root.split_evenly((1, self.fws.len().clamp(1, 4)));
        for (fi, (fw, panel)) in self.fws.iter().zip(&panels).enumerate() {
            let r = find(self.results, fw, self.behavior);
            sweep_panel(panel, fw, self.behavior, r, color(fi))?;
        }
        Ok(())
    }
}

fn sweep_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fw: &str,
    b: Behavior,
    r: Option<&BehaviorResult>,
    c: RGBColor,
) -> Result<(), String> {
    // (offered, delivered, ratio %), finite only, sorted by offered.
    let mut pts: Vec<(f64, f64, f64)> = r
        .iter()
        .flat_map(|r| r.repetitions.iter())
        .flat_map(|s| s.trials.iter())
        .map(|t| (t.offered_pps / 1000.0, t.delivered_pps / 1000.0, t.delivery_ratio * 100.0))
        .filter(|(o, d, _)| o.is_finite() && d.is_finite())
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let top = nice_ceil(pts.iter().map(|p| p.0.max(p.1)).fold(0.0, f64::max) * 1.05);
    let ratio_top = pts.iter().map(|p| p.2).filter(|x| x.is_finite()).fold(100.0, f64::max) * 1.05;
    let frame = r.map(|r| format!(" ({} B frames)", r.frame_bytes)).unwrap_or_default();
    let grey = RGBColor(150, 150, 150);
    let red = RGBColor(200, 30, 30);
    let mut legend = vec![
        ("delivered = offered".to_string(), Icon::Dashed(grey)),
        ("throughput (kpps)".to_string(), Icon::Marked(c, Marker::Circle)),
        ("delivery ratio (%)".to_string(), Icon::Marked(red, Marker::Triangle)),
    ];
    let mut rates = Vec::new();
    if let Some(r) = r {
        for (name, v, col) in [("NDR", r.ndr.mean, RGBColor(0, 130, 60)), ("PDR", r.pdr.mean, RGBColor(130, 50, 160))] {
            let k = v / 1000.0;
            if k.is_finite() && k > 0.0 && k <= top {
                legend.push((format!("{name} {} kpps", tick(&((k * 10.0).round() / 10.0))), Icon::Dashed(col)));
                rates.push((k, col));
            }
        }
    }

    // The legend goes in a strip under the chart, where it hides no data.
    let (_, h) = area.dim_in_pixel();
    let (upper, strip) = area.split_vertically(h.saturating_sub(LEGEND_STRIP));
    let mut chart = ChartBuilder::on(&upper)
        .caption(format!("{fw}: {}{frame}", b.name()), title_font())
        .margin(16)
        .margin_bottom(4)
        .x_label_area_size(52)
        .y_label_area_size(78)
        .right_y_label_area_size(72)
        .build_cartesian_2d(0.0..top, 0.0..top)
        .map_err(err)?
        .set_secondary_coord(0.0..top, 0.0..ratio_top);
    chart
        .configure_mesh()
        .max_light_lines(1)
        .light_line_style(GRID_LIGHT)
        .bold_line_style(GRID_BOLD)
        .axis_style(BLACK.mix(0.8))
        .label_style(text(14))
        .axis_desc_style(text(16))
        .x_desc("offered rate (kpps)")
        .y_desc("delivered rate (kpps)")
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .draw()
        .map_err(err)?;
    chart
        .configure_secondary_axes()
        .axis_style(BLACK.mix(0.8))
        .label_style(text(14))
        .axis_desc_style(text(16))
        .y_desc("delivery ratio (%)")
        .y_label_formatter(&tick)
        .draw()
        .map_err(err)?;
    if pts.is_empty() {
        return no_data(&chart.plotting_area().strip_coord_spec());
    }

    chart.draw_series(DashedLineSeries::new([(0.0, 0.0), (top, top)], 6, 5, grey.stroke_width(1))).map_err(err)?;
    for (k, col) in rates {
        chart.draw_series(DashedLineSeries::new([(k, 0.0), (k, top)], 8, 4, col.stroke_width(2))).map_err(err)?;
    }
    // Every trial as a marker; the line through the mean of each of 40 bins of offered
    // rate (the repetitions' searches probe different rates near the NDR), drawn segment
    // by segment: plotters joins thick polylines with unlimited miters, which spike at
    // sharp turns.
    chart
        .draw_series(
            segments(&binned(pts.iter().map(|p| (p.0, p.1)), top)).map(|s| PathElement::new(s, c.stroke_width(2))),
        )
        .map_err(err)?;
    chart.draw_series(pts.iter().map(|p| Circle::new((p.0, p.1), 4, c.filled()))).map_err(err)?;
    let ratio: Vec<(f64, f64)> = pts.iter().filter(|p| p.2.is_finite()).map(|p| (p.0, p.2)).collect();
    chart
        .draw_secondary_series(
            segments(&binned(ratio.iter().copied(), top)).map(|s| PathElement::new(s, red.stroke_width(2))),
        )
        .map_err(err)?;
    chart.draw_secondary_series(ratio.iter().map(|p| TriangleMarker::new(*p, 5, red.filled()))).map_err(err)?;
    legend_strip(&strip, &legend)
}

/// Height of the legend strip under a sweep panel (two rows).
const LEGEND_STRIP: u32 = 56;

#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Triangle,
}

/// A legend entry's symbol.
#[derive(Clone, Copy)]
enum Icon {
    Dashed(RGBColor),
    Marked(RGBColor, Marker),
}

/// Draws legend entries in rows, centred, wrapping to the area's width.
fn legend_strip<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[(String, Icon)]) -> Result<(), String> {
    const ICON: i32 = 24;
    const GAP: i32 = 22;
    const ROW: i32 = 22;
    let style = text(14).pos(Pos::new(HPos::Left, VPos::Center));
    let (w, _) = area.dim_in_pixel();
    let w = w as i32 - 20;
    let mut rows: Vec<Vec<(&str, Icon, i32)>> = vec![Vec::new()];
    let mut used = 0;
    for (label, icon) in entries {
        let tw = area.estimate_text_size(label, &style).map(|s| s.0 as i32).unwrap_or(8 * label.len() as i32);
        let ew = ICON + 6 + tw;
        if used > 0 && used + GAP + ew > w {
            rows.push(Vec::new());
            used = 0;
        }
        used += if used > 0 { GAP } else { 0 } + ew;
        if let Some(row) = rows.last_mut() {
            row.push((label.as_str(), *icon, ew));
        }
    }
    for (ri, row) in rows.iter().enumerate() {
        let total: i32 = row.iter().map(|e| e.2).sum::<i32>() + GAP * (row.len() as i32 - 1).max(0);
        let mut x = 10 + (w - total).max(0) / 2;
        let y = 14 + ROW * ri as i32;
        for &(label, icon, ew) in row {
            match icon {
                Icon::Dashed(c) => {
                    for (a, b) in [(0, 7), (11, 18), (22, ICON)] {
                        area.draw(&PathElement::new(vec![(x + a, y), (x + b, y)], c.stroke_width(2))).map_err(err)?;
                    }
                }
                Icon::Marked(c, m) => {
                    area.draw(&PathElement::new(vec![(x, y), (x + ICON, y)], c.stroke_width(2))).map_err(err)?;
                    match m {
                        Marker::Circle => area.draw(&Circle::new((x + ICON / 2, y), 4, c.filled())),
                        Marker::Triangle => area.draw(&TriangleMarker::new((x + ICON / 2, y), 5, c.filled())),
                    }
                    .map_err(err)?;
                }
            }
            area.draw(&Text::new(label, (x + ICON + 6, y), style.clone())).map_err(err)?;
            x += ew + GAP;
        }
    }
    Ok(())
}

/// The mean point of each non-empty bin of 40 equal bins of x over `0..top`, by x.
fn binned(pts: impl Iterator<Item = (f64, f64)>, top: f64) -> Vec<(f64, f64)> {
    const BINS: usize = 40;
    let mut sums = [(0.0f64, 0.0f64, 0usize); BINS];
    for (x, y) in pts.filter(|(x, y)| x.is_finite() && y.is_finite()) {
        let i = ((x / top * BINS as f64).floor().max(0.0) as usize).min(BINS - 1);
        sums[i] = (sums[i].0 + x, sums[i].1 + y, sums[i].2 + 1);
    }
    sums.iter().filter(|s| s.2 > 0).map(|s| (s.0 / s.2 as f64, s.1 / s.2 as f64)).collect()
}

/// Consecutive point pairs, as two-point paths.
fn segments(pts: &[(f64, f64)]) -> impl Iterator<Item = Vec<(f64, f64)>> + '_ {
    pts.windows(2).map(|w| w.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_numbers() {
        assert_eq!(nice_ceil(0.0), 1.0);
        assert_eq!(nice_ceil(f64::NAN), 1.0);
        assert_eq!(nice_ceil(f64::INFINITY), 1.0);
        assert_eq!(nice_ceil(1119.25), 1200.0);
        assert_eq!(nice_ceil(1200.0), 1200.0);
        assert_eq!(nice_ceil(0.03), 0.03);
        assert_eq!(nice_ceil(9.1), 10.0);
    }

    #[test]
    fn ticks() {
        assert_eq!(tick(&1200.0), "1200");
        assert_eq!(tick(&0.5), "0.5");
        assert_eq!(tick(&1.25), "1.25");
        assert_eq!(tick(&-0.0001), "0");
    }

    #[test]
    fn boxes() {
        let s = box_stats(&[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap();
        assert_eq!((s.q1, s.median, s.q3), (2.0, 3.0, 4.0));
        assert_eq!((s.low, s.high), (1.0, 4.0));
        assert_eq!(s.outliers, vec![100.0]);
        let s = box_stats(&[5.0, f64::NAN]).unwrap();
        assert_eq!((s.q1, s.median, s.q3, s.low, s.high), (5.0, 5.0, 5.0, 5.0, 5.0));
        assert!(box_stats(&[f64::NAN]).is_none());
        assert!(box_stats(&[]).is_none());
    }

    #[test]
    fn bins() {
        let b = binned([(1.0, 10.0), (1.2, 20.0), (50.0, 5.0), (f64::NAN, 1.0), (200.0, 1.0)].into_iter(), 100.0);
        assert_eq!(b, vec![(1.1, 15.0), (50.0, 5.0), (200.0, 1.0)]);
        assert_eq!(segments(&b).count(), 2);
        assert!(binned(std::iter::empty(), 1.0).is_empty());
    }
}
