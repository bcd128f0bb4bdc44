//! One-way latency: a fixed-size log-linear histogram of nanosecond samples.
//!
//! Values below 64 ns have a bucket each; above, every power of two is split into 32
//! buckets, so a bucket is at most 1/32 of its value wide and a percentile read at the
//! bucket's middle is within ±1.6% of the true sample. 1920 buckets cover the whole
//! `u64` range in 15.6 KiB, allocated once; recording a sample is a few instructions
//! and never allocates. Min, max and the sum (for the mean) are kept exactly;
//! percentiles are clamped into `[min, max]`, so `min <= p50 <= p99 <= max` always.

use serde::{Deserialize, Serialize};

use crate::model;

const LINEAR: u64 = 64;
const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
/// 64 linear buckets, then 32 per power of two from 2^6 to 2^63.
const BUCKETS: usize = LINEAR as usize + (64 - 6) * SUB;
/// Buckets of a [`Histogram`].
pub const BUCKET_COUNT: usize = BUCKETS;

/// The histogram. See the module docs.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram").field("stats", &self.stats()).finish()
    }
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram::new()
    }
}

fn index(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= 6
    let sub = ((v >> (e - SUB_BITS)) as usize) & (SUB - 1);
    LINEAR as usize + (e as usize - 6) * SUB + sub
}

/// The smallest value of bucket `i` and its width.
fn bucket(i: usize) -> (u64, u64) {
    if i < LINEAR as usize {
        return (i as u64, 1);
    }
    let e = ((i - LINEAR as usize) / SUB) as u32 + 6;
    let sub = ((i - LINEAR as usize) % SUB) as u64;
    let width = 1u64 << (e - SUB_BITS);
    ((1u64 << e) + sub * width, width)
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram { counts: vec![0; BUCKETS].into_boxed_slice(), n: 0, sum: 0, min: u64::MAX, max: 0 }
    }

    /// A histogram made of counts kept elsewhere in this layout (the XDP counter's, see
    /// `xdp_recv.rs`): one count per bucket ([`BUCKET_COUNT`] of them), the number of
    /// samples, their sum, min and max. `None` if `counts` has another length or does not
    /// add up to `n`.
    pub fn from_counts(counts: &[u64], n: u64, sum: u128, min: u64, max: u64) -> Option<Histogram> {
        if counts.len() != BUCKETS || counts.iter().sum::<u64>() != n {
            return None;
        }
        let (min, max) = if n == 0 { (u64::MAX, 0) } else { (min, max) };
        Some(Histogram { counts: counts.to_vec().into_boxed_slice(), n, sum, min, max })
    }

    /// Forgets every sample (no allocation).
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.n = 0;
        self.sum = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    /// Records one sample (ns).
    #[inline]
    pub fn record(&mut self, v: u64) {
        if let Some(c) = self.counts.get_mut(index(v)) {
            *c += 1;
        }
        self.n += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The `q` quantile (0 ..= 1), the middle of its bucket clamped into `[min, max]`;
    /// 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = bucket(i);
                return (lo + w / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Summary statistics (all 0 when empty).
    pub fn stats(&self) -> LatencyStats {
        if self.n == 0 {
            return LatencyStats::default();
        }
        LatencyStats {
            samples: self.n,
            min_ns: self.min,
            avg_ns: (self.sum / u128::from(self.n)) as u64,
            p50_ns: self.quantile(0.50),
            p99_ns: self.quantile(0.99),
            max_ns: self.max,
            p25_ns: self.quantile(0.25),
            p75_ns: self.quantile(0.75),
            std_ns: self.std_dev(),
        }
    }

    /// The standard deviation (population), each sample taken at its bucket's middle
    /// clamped into `[min, max]`, around the exact mean; 0 with fewer than two samples.
    pub fn std_dev(&self) -> u64 {
        if self.n < 2 {
            return 0;
        }
        let mean = self.sum as f64 / self.n as f64;
        let var: f64 = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, w) = bucket(i);
                let mid = (lo + w / 2).clamp(self.min, self.max) as f64;
                c as f64 * (mid - mean) * (mid - mean)
            })
            .sum::<f64>()
            / self.n as f64;
        var.sqrt().round() as u64
    }
}

/// Latency summary of one trial, nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub samples: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    pub p25_ns: u64,
    pub p75_ns: u64,
    pub std_ns: u64,
}

impl LatencyStats {
    /// The model's [`model::Latency`] (microseconds) at `rate_pps`; `None` without
    /// samples.
    pub fn to_model(&self, rate_pps: f64) -> Option<model::Latency> {
        if self.samples == 0 {
            return None;
        }
        let us = |ns: u64| ns as f64 / 1e3;
        Some(model::Latency {
            rate_pps,
            samples: self.samples,
            min_us: us(self.min_ns),
            avg_us: us(self.avg_ns),
            p50_us: us(self.p50_ns),
            p99_us: us(self.p99_ns),
            max_us: us(self.max_ns),
            p25_us: us(self.p25_ns),
            p75_us: us(self.p75_ns),
            std_us: us(self.std_ns),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_counts_gives_the_same_statistics() {
        let mut h = Histogram::new();
        for v in [5u64, 70, 900, 12_345, 1 << 40] {
            h.record(v);
        }
        let copy = Histogram::from_counts(&h.counts, h.n, h.sum, h.min, h.max).unwrap();
        assert_eq!(copy.stats(), h.stats());
        assert!(Histogram::from_counts(&h.counts, h.n + 1, h.sum, h.min, h.max).is_none());
        assert!(Histogram::from_counts(&h.counts[1..], h.n, h.sum, h.min, h.max).is_none());
        let empty = Histogram::from_counts(&vec![0; BUCKET_COUNT], 0, 0, u64::MAX, 0).unwrap();
        assert_eq!(empty.stats(), LatencyStats::default());
    }

    #[test]
    fn buckets_tile_the_range() {
        let mut next = 0u64;
        for i in 0..BUCKETS {
            let (lo, w) = bucket(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!(index(lo), i);
            assert_eq!(index(lo + (w - 1)), i);
            next = lo.wrapping_add(w);
        }
        assert_eq!(next, 0, "the last bucket ends at 2^64");
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_are_close_and_ordered() {
        let mut h = Histogram::new();
        assert_eq!(h.stats(), LatencyStats::default());
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        let s = h.stats();
        assert_eq!((s.samples, s.min_ns, s.max_ns), (100_000, 10, 1_000_000));
        assert_eq!(s.avg_ns, 500_005);
        assert!((s.p50_ns as f64 - 500_000.0).abs() / 500_000.0 < 0.02, "{s:?}");
        assert!((s.p99_ns as f64 - 990_000.0).abs() / 990_000.0 < 0.02, "{s:?}");
        assert!(s.min_ns <= s.p50_ns && s.p50_ns <= s.p99_ns && s.p99_ns <= s.max_ns);
        assert!(s.p25_ns <= s.p50_ns && s.p50_ns <= s.p75_ns);
        assert!((s.p25_ns as f64 - 250_000.0).abs() / 250_000.0 < 0.02, "{s:?}");
        assert!((s.p75_ns as f64 - 750_000.0).abs() / 750_000.0 < 0.02, "{s:?}");
        // Uniform on [10, 1e6]: sigma = 1e6 / sqrt(12).
        let sigma = 1e6 / 12f64.sqrt();
        assert!((s.std_ns as f64 - sigma).abs() / sigma < 0.02, "{s:?}");
        h.clear();
        h.record(7);
        let s = h.stats();
        assert_eq!((s.min_ns, s.p50_ns, s.p99_ns, s.max_ns), (7, 7, 7, 7));
        assert_eq!(s.std_ns, 0);
        // Two values 100 apart: sigma 50 (the buckets at 64 and above are 2 to 4 wide).
        h.clear();
        h.record(40);
        h.record(140);
        assert!((h.stats().std_ns as i64 - 50).abs() <= 2, "{:?}", h.stats());
        let m = s.to_model(1000.0).unwrap();
        assert_eq!(m.samples, 1);
        assert!((m.p99_us - 0.007).abs() < 1e-12);
    }
}
