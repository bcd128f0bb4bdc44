//! Statistics over repetitions and latency samples.
//!
//! The SRPerf paper (Abdelsalam et al., 2018, section IV-A and Table I) reports, for each
//! behaviour, the mean PDR over 10 repetitions with its coefficient of variation (CV) and
//! the 95% confidence interval of the mean (CI95); the thesis (Abdelsalam, 2020, section
//! 5.3.2) uses mean and standard deviation over repetitions in the same way.
//! [`summarize`] computes exactly those figures into a [`Summary`]:
//!
//! * `mean` — arithmetic mean;
//! * `std` — *sample* standard deviation (divisor `n - 1`), computed in two passes over
//!   data shifted by its first value;
//! * `cv` — `std / |mean|`, a fraction (0.01 = 1%);
//! * `ci95` — half-width of the 95% confidence interval of the mean with Student's t:
//!   `t(0.975, n - 1) * std / sqrt(n)`. The quantile is a table (exact to 1e-12, from
//!   `scipy.stats.t.ppf`) for 1..=30 degrees of freedom and the Cornish–Fisher expansion
//!   (Abramowitz & Stegun 26.7.5, four terms) above, whose relative error there is below
//!   2e-8.
//!
//! [`percentile`] gives latency percentiles by linear interpolation between closest ranks
//! (Hyndman & Fan type 7, numpy's default `linear`, Excel's `PERCENTILE.INC`).
//!
//! Degenerate inputs never panic and never produce NaN in a [`Summary`] (NaN does not
//! survive a JSON round trip): see each function for its documented values.

use crate::model::Summary;

/// Two-sided 97.5% quantiles of Student's t for 1..=30 degrees of freedom
/// (`scipy.stats.t.ppf(0.975, df)`, scipy 1.17).
const T975: [f64; 30] = [
    12.706204736174694,
    4.302652729749462,
    3.1824463052837078,
    2.7764451051977934,
    2.5705818356363146,
    2.4469118511449786,
    2.364624251592784,
    2.306004135204166,
    2.262157162798205,
    2.228138851986274,
    2.200985160091639,
    2.1788128296672284,
    2.1603686564627913,
    2.144786687917804,
    2.131449545559776,
    2.1199052992212546,
    2.1098155778333156,
    2.1009220402410382,
    2.0930240544083087,
    2.085963447265864,
    2.0796138447276795,
    2.0738730679040254,
    2.0686576104190486,
    2.0638985616280245,
    2.0595385527532972,
    2.0555294386428735,
    2.0518305164802846,
    2.0484071417952454,
    2.045229642132703,
    2.0422724563012378,
];

/// The 97.5% quantile of the standard normal distribution.
const Z975: f64 = 1.959963984540054;

/// `t(0.975, df)`: the multiplier of the standard error for a two-sided 95% confidence
/// interval with `df` degrees of freedom. `df = 0` has no interval: returns 0.
pub fn t975(df: usize) -> f64 {
    match df {
        0 => 0.0,
        1..=30 => T975[df - 1],
        _ => {
            // Cornish–Fisher expansion of the t quantile around the normal one.
            let z = Z975;
            let n = df as f64;
            let z2 = z * z;
            let g1 = (z2 + 1.0) * z / 4.0;
            let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
            let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
            let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
            z + g1 / n + g2 / (n * n) + g3 / (n * n * n) + g4 / (n * n * n * n)
        }
    }
}

/// Mean, sample standard deviation, CV and CI95 of `samples` (one value per repetition).
///
/// Documented values for degenerate input:
/// * non-finite samples (NaN, ±inf) are ignored; `n` counts the finite ones only, so a
///   caller can compare it with `samples.len()`;
/// * no finite sample: everything 0 (`n = 0`);
/// * `n = 1`: `std`, `cv` and `ci95` are 0 (no spread can be estimated);
/// * `mean = 0`: `cv` is 0 (undefined; `std` still tells the spread).
pub fn summarize(samples: &[f64]) -> Summary {
    let finite = || samples.iter().copied().filter(|x| x.is_finite());
    let n = finite().count();
    if n == 0 {
        return Summary { n: 0, mean: 0.0, std: 0.0, cv: 0.0, ci95: 0.0 };
    }
    let nf = n as f64;
    // Shifted by the first sample: exact for constant data, and less rounding when the
    // spread is small against the magnitude (rates of 1e6 pps varying by a few pps).
    let shift = finite().next().unwrap_or(0.0);
    let mean = shift + finite().map(|x| x - shift).sum::<f64>() / nf;
    if n == 1 {
        return Summary { n, mean, std: 0.0, cv: 0.0, ci95: 0.0 };
    }
    let ss: f64 = finite().map(|x| (x - mean) * (x - mean)).sum();
    let std = (ss / (nf - 1.0)).sqrt();
    let cv = if mean != 0.0 { std / mean.abs() } else { 0.0 };
    let ci95 = t975(n - 1) * std / nf.sqrt();
    Summary { n, mean, std, cv, ci95 }
}

/// The `p`-th percentile (`p` in percent, 0..=100) of `sorted`, which must be sorted
/// ascending, by linear interpolation between closest ranks (Hyndman & Fan type 7): with
/// `h = (n - 1) * p / 100`, the result is `sorted[floor(h)] + (h - floor(h)) *
/// (sorted[floor(h) + 1] - sorted[floor(h)])`. So `p = 0` is the minimum, `p = 100` the
/// maximum and `p = 50` the usual median.
///
/// Documented values: an empty slice gives 0; `p` outside 0..=100 is clamped; a NaN `p`
/// gives NaN. An unsorted slice gives an unspecified value (no panic).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    if p.is_nan() {
        return f64::NAN;
    }
    let p = p.clamp(0.0, 100.0);
    let h = (sorted.len() - 1) as f64 * p / 100.0;
    let i = (h.floor() as usize).min(sorted.len() - 1);
    let frac = h - i as f64;
    match sorted.get(i + 1) {
        Some(&next) if frac > 0.0 => sorted[i] + frac * (next - sorted[i]),
        _ => sorted[i],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn summary_of_known_samples() {
        // Oracle: python3 `statistics.mean/stdev` and `scipy.stats.t.ppf(0.975, 7)`:
        //   xs = [2, 4, 4, 4, 5, 5, 7, 9]
        //   mean = 5.0, stdev = 2.138089935299395, cv = 0.427617987059879,
        //   ci95 = 2.364624251592784 * 2.138089935299395 / sqrt(8) = 1.7874879182362098
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.n, 8);
        assert!(close(s.mean, 5.0, 1e-15));
        assert!(close(s.std, 2.138089935299395, 1e-12));
        assert!(close(s.cv, 0.427617987059879, 1e-12));
        assert!(close(s.ci95, 1.7874879182362098, 1e-12));
    }

    #[test]
    fn summary_of_pdr_like_repetitions() {
        // Ten PDR values in kpps around the paper's IPv6 figure (Table I), oracle python3
        // statistics + scipy 1.17:
        //   mean = 1119.25, stdev = 0.040824829046349174, cv = 3.647516555403098e-05,
        //   ci95 = t(0.975, 9) * stdev / sqrt(10) = 0.029204323393377668
        let xs = [1119.25, 1119.3, 1119.2, 1119.25, 1119.3, 1119.2, 1119.25, 1119.3, 1119.2, 1119.25];
        let s = summarize(&xs);
        assert_eq!(s.n, 10);
        assert!(close(s.mean, 1119.25, 1e-13));
        assert!(close(s.std, 0.040824829046349174, 1e-9));
        assert!(close(s.cv, 3.647516555403098e-05, 1e-9));
        assert!(close(s.ci95, 0.029204323393377668, 1e-9));
    }

    #[test]
    fn summary_of_two_and_of_large_n() {
        // n = 2: [1, 3] -> mean 2, stdev sqrt(2), ci95 = 12.706204736174694 * sqrt(2) / sqrt(2)
        let s = summarize(&[1.0, 3.0]);
        assert!(close(s.std, std::f64::consts::SQRT_2, 1e-15));
        assert!(close(s.ci95, 12.706204736174694, 1e-14));
        // n = 41 (df 40, beyond the table): 0..=40 -> stdev = 11.979148550710939,
        // t(0.975, 40) = 2.021075390306273 -> ci95 = 3.781085831683246 (scipy).
        let xs: Vec<f64> = (0..=40).map(f64::from).collect();
        let s = summarize(&xs);
        assert_eq!(s.n, 41);
        assert!(close(s.mean, 20.0, 1e-15));
        assert!(close(s.std, 11.979148550710939, 1e-12));
        assert!(close(s.ci95, 3.781085831683246, 1e-7));
    }

    #[test]
    fn t_quantiles_table_and_expansion() {
        // scipy.stats.t.ppf(0.975, df)
        for (df, want) in [
            (1, 12.706204736174694),
            (9, 2.262157162798205),
            (30, 2.0422724563012378),
            (31, 2.039513446396408),
            (35, 2.030107928250343),
            (60, 2.0002978220142604),
            (120, 1.9799304050824402),
            (1000, 1.9623390808264083),
            (10000, 1.960201239890626),
        ] {
            assert!(close(t975(df), want, 2e-8), "df {df}: {} vs {want}", t975(df));
        }
        assert_eq!(t975(0), 0.0);
        assert!(close(t975(usize::MAX), Z975, 1e-12));
    }

    #[test]
    fn summary_degenerate_inputs() {
        assert_eq!(summarize(&[]), Summary { n: 0, mean: 0.0, std: 0.0, cv: 0.0, ci95: 0.0 });
        assert_eq!(summarize(&[f64::NAN, f64::INFINITY]), Summary { n: 0, mean: 0.0, std: 0.0, cv: 0.0, ci95: 0.0 });
        assert_eq!(summarize(&[42.0]), Summary { n: 1, mean: 42.0, std: 0.0, cv: 0.0, ci95: 0.0 });
        let s = summarize(&[42.0, f64::NAN, 44.0]);
        assert_eq!(s.n, 2);
        assert_eq!(s.mean, 43.0);
        let s = summarize(&[-1.0, 1.0]);
        assert_eq!(s.mean, 0.0);
        assert_eq!(s.cv, 0.0);
        assert!(s.std > 0.0);
        let s = summarize(&[0.0, 0.0, 0.0]);
        assert_eq!(s, Summary { n: 3, mean: 0.0, std: 0.0, cv: 0.0, ci95: 0.0 });
        // Constant large values: the two-pass variance is exactly 0.
        let s = summarize(&[1.0e9 + 0.1; 7]);
        assert_eq!(s.std, 0.0);
    }

    #[test]
    fn percentile_linear_interpolation() {
        // Oracle: numpy.percentile(xs, p) (method "linear"), numpy 2.4:
        //   xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
        //   p0 = 1, p25 = 3.25, p50 = 5.5, p90 = 9.1, p99 = 9.91, p100 = 10
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        for (p, want) in [(0.0, 1.0), (25.0, 3.25), (50.0, 5.5), (90.0, 9.1), (99.0, 9.91), (100.0, 10.0)] {
            assert!(close(percentile(&xs, p), want, 1e-12), "p{p}: {}", percentile(&xs, p));
        }
        // numpy.percentile([3.5, 10.25, 11, 20], [50, 75]) = [10.625, 13.25]
        let ys = [3.5, 10.25, 11.0, 20.0];
        assert!(close(percentile(&ys, 50.0), 10.625, 1e-12));
        assert!(close(percentile(&ys, 75.0), 13.25, 1e-12));
    }

    #[test]
    fn percentile_degenerate_inputs() {
        assert_eq!(percentile(&[], 50.0), 0.0);
        assert_eq!(percentile(&[7.0], 0.0), 7.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[1.0, 2.0], -5.0), 1.0);
        assert_eq!(percentile(&[1.0, 2.0], 500.0), 2.0);
        assert!(percentile(&[1.0, 2.0], f64::NAN).is_nan());
        assert_eq!(percentile(&[1.0, 2.0], f64::INFINITY), 2.0);
        // Unsorted: some value, no panic.
        let _ = percentile(&[3.0, 1.0, 2.0], 50.0);
    }
}
