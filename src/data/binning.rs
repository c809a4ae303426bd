//! Quantile binning: each feature's values are cut into at most `max_bins`
//! value bins; NaN gets its own extra bin. Thresholds are raw values, so a
//! split "bin <= b" is the same as "x <= threshold[b]" on unbinned data.
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::matrix::{DenseMatrix, Element};
use crate::alloc::filled_vec;
use crate::error::{Result, RgbmError};
use crate::rng::{Purpose, stream};

/// Rows used to find the cut points (LightGBM uses 200k as well).
pub const BIN_SAMPLE_ROWS: usize = 200_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeatureBins {
    /// Upper bounds of value bins 0..k-1 (the last value bin is unbounded).
    pub thresholds: Vec<f64>,
}

impl FeatureBins {
    /// Number of value bins (excluding the missing bin).
    #[inline]
    pub fn n_value_bins(&self) -> usize {
        self.thresholds.len() + 1
    }
    /// The code given to NaN.
    #[inline]
    pub fn missing_bin(&self) -> usize {
        self.thresholds.len() + 1
    }
    /// Value bins plus the missing bin.
    #[inline]
    pub fn n_bins(&self) -> usize {
        self.thresholds.len() + 2
    }
    #[inline]
    pub fn bin(&self, x: f64) -> usize {
        if x.is_nan() {
            self.missing_bin()
        } else {
            self.thresholds.partition_point(|&t| t < x)
        }
    }

    /// Cut points from (value, weight) pairs sorted by value (no NaN, weights > 0).
    fn from_sorted(sorted: &[(f64, f64)], max_bins: usize) -> FeatureBins {
        let mut distinct: Vec<(f64, f64)> = Vec::new();
        for &(v, w) in sorted {
            match distinct.last_mut() {
                Some((last, weight)) if *last == v => *weight += w,
                _ => distinct.push((v, w)),
            }
        }
        let cut_between = |a: f64, b: f64| {
            let mid = a + (b - a) / 2.0;
            // Adjacent floats: the midpoint may round up to b; keep b in the upper bin.
            if mid < b { mid } else { a }
        };
        let mut thresholds = Vec::new();
        if distinct.len() <= max_bins {
            for w in distinct.windows(2) {
                thresholds.push(cut_between(w[0].0, w[1].0));
            }
        } else {
            // Greedy equal-weight bins over distinct values, re-aiming the
            // target after every cut so heavy ties do not waste bins.
            let mut remaining: f64 = distinct.iter().map(|d| d.1).sum();
            let mut bins_left = max_bins;
            let mut acc = 0.0;
            for i in 0..distinct.len() - 1 {
                acc += distinct[i].1;
                if acc >= remaining / bins_left as f64 && bins_left > 1 {
                    thresholds.push(cut_between(distinct[i].0, distinct[i + 1].0));
                    remaining -= acc;
                    acc = 0.0;
                    bins_left -= 1;
                }
            }
        }
        FeatureBins { thresholds }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BinMapper {
    pub features: Vec<FeatureBins>,
    pub max_bins: usize,
}

impl BinMapper {
    /// Finds cut points on a seeded sample of at most `BIN_SAMPLE_ROWS` rows.
    /// Quantiles are weighted; rows of weight 0 do not place cut points, so a
    /// zero weight is the same as removing the row.
    pub fn fit<T: Element>(
        x: &DenseMatrix<T>,
        max_bins: usize,
        seed: u64,
        weights: Option<&[f64]>,
    ) -> Result<BinMapper> {
        if !(2..=65535).contains(&max_bins) {
            return Err(RgbmError::param(
                "max_bins",
                format!("must be in [2, 65535], got {max_bins}"),
            ));
        }
        let n = x.n_rows();
        if let Some(w) = weights {
            if w.len() != n {
                return Err(RgbmError::Shape(format!(
                    "X has {n} rows but the weights have {}",
                    w.len()
                )));
            }
        }
        let sample: Option<Vec<usize>> = if n > BIN_SAMPLE_ROWS {
            let mut rng = stream(seed, Purpose::BinSample, 0);
            let mut rows = rand::seq::index::sample(&mut rng, n, BIN_SAMPLE_ROWS).into_vec();
            rows.sort_unstable();
            Some(rows)
        } else {
            None
        };
        // The (value, weight) pairs of the features binned at the same time
        // live in one buffer allocated here, not in the workers: glibc keeps
        // memory freed on a worker in that thread's arena, where the training
        // buffers allocated later on this thread cannot reuse it (6 MiB more
        // fit peak on 800k × 28 with two threads).
        let p = x.n_cols();
        let cap = sample.as_ref().map_or(n, |rows| rows.len()).max(1);
        let slots = rayon::current_num_threads().clamp(1, p.max(1));
        let mut buf = filled_vec(slots * cap, (0.0, 0.0), "the binning sample")?;
        let mut features = Vec::with_capacity(p);
        for first in (0..p).step_by(slots) {
            let binned = (first..(first + slots).min(p))
                .into_par_iter()
                .zip(buf.par_chunks_mut(cap))
                .map(|(j, slot)| {
                    let weight = |i: usize| weights.map_or(1.0, |w| w[i]);
                    let mut len = 0;
                    let mut keep = |v: f64, w: f64| {
                        if !v.is_nan() && w > 0.0 {
                            slot[len] = (v, w);
                            len += 1;
                        }
                    };
                    match &sample {
                        Some(rows) => rows.iter().for_each(|&i| keep(x.get(i, j), weight(i))),
                        None => x.for_each_in_col(j, |i, v| keep(v, weight(i))),
                    }
                    let values = &mut slot[..len];
                    values.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
                    FeatureBins::from_sorted(values, max_bins)
                });
            features.par_extend(binned);
        }
        Ok(BinMapper { features, max_bins })
    }

    pub fn n_features(&self) -> usize {
        self.features.len()
    }

    /// Whether every code fits in a byte.
    pub fn fits_u8(&self) -> bool {
        self.features.iter().all(|f| f.n_bins() <= 256)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_distinct_values_get_one_bin_each() {
        let fb = FeatureBins::from_sorted(
            &[(1.0, 1.0), (1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (3.0, 1.0)],
            255,
        );
        assert_eq!(fb.thresholds, vec![1.5, 2.5]);
        assert_eq!(fb.bin(1.0), 0);
        assert_eq!(fb.bin(1.5), 0);
        assert_eq!(fb.bin(2.0), 1);
        assert_eq!(fb.bin(100.0), 2);
        assert_eq!(fb.bin(f64::NAN), 3);
    }

    #[test]
    fn many_values_are_cut_into_at_most_max_bins_balanced_bins() {
        let v: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
        let pairs: Vec<(f64, f64)> = v.iter().map(|&x| (x, 1.0)).collect();
        let fb = FeatureBins::from_sorted(&pairs, 16);
        assert!(
            fb.n_value_bins() <= 16 && fb.n_value_bins() >= 15,
            "{}",
            fb.n_value_bins()
        );
        let mut counts = vec![0usize; fb.n_bins()];
        for &x in &v {
            counts[fb.bin(x)] += 1;
        }
        for &c in &counts[..fb.n_value_bins()] {
            assert!((600..=700).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn adjacent_floats_stay_separated() {
        let a = 1.0f64;
        let b = f64::from_bits(a.to_bits() + 1);
        let fb = FeatureBins::from_sorted(&[(a, 1.0), (b, 1.0)], 255);
        assert_eq!(fb.bin(a), 0);
        assert_eq!(fb.bin(b), 1);
    }
}
