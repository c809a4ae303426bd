//! Cut points from a feature's values, shared by dense and sparse input:
//! from its sorted sample (weighted quantiles) or from its few distinct
//! values (one bin each), the sample gathered a batch of features at a
//! time.
use rayon::prelude::*;

use super::FeatureBins;
use crate::alloc::{filled_vec, with_capacity};
use crate::cancel::Cancel;
use crate::error::{Result, RgbmError};

/// One distinct value of a feature's sample: its total weight and rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Distinct {
    pub(super) value: f64,
    pub(super) weight: f64,
    pub(super) count: usize,
}

/// How finely a feature is cut: at most `max_bins` value bins, each with
/// at least `min_data_in_bin` sample rows (LightGBM's parameter). A bare
/// `max_bins` converts with `min_data_in_bin` 1, where every distinct value
/// can have a bin of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinLimits {
    pub max_bins: usize,
    pub min_data_in_bin: usize,
}

impl From<usize> for BinLimits {
    fn from(max_bins: usize) -> Self {
        BinLimits {
            max_bins,
            min_data_in_bin: 1,
        }
    }
}

impl FeatureBins {
    /// Cut points from a feature's non-missing sample values, by sorting them.
    /// `OutOfMemory` if the distinct values do not fit.
    pub(super) fn from_sample<S: SampleValue>(
        sample: &mut [S],
        limits: BinLimits,
    ) -> Result<FeatureBins> {
        sample.sort_unstable_by(|a, b| a.value().total_cmp(&b.value()));
        let mut distinct: Vec<Distinct> = Vec::new();
        for s in sample.iter() {
            let (v, w) = (s.value(), s.weight());
            match distinct.last_mut() {
                Some(d) if d.value == v => {
                    d.weight += w;
                    d.count += 1;
                }
                _ => {
                    if distinct.try_reserve(1).is_err() {
                        // Freed before the message is made: it needs memory too.
                        let len = std::mem::take(&mut distinct).len();
                        return Err(RgbmError::OutOfMemory(format!(
                            "cannot grow a feature's distinct values past {len} while binning"
                        )));
                    }
                    distinct.push(Distinct {
                        value: v,
                        weight: w,
                        count: 1,
                    });
                }
            }
        }
        FeatureBins::from_distinct(&distinct, limits)
    }

    /// Cut points from distinct values in increasing order. Every value bin
    /// holds at least `limits.min_data_in_bin` rows (a feature with fewer
    /// rows gets one bin): as in LightGBM, a bin is closed only once it has
    /// that many, and a short last bin joins the one before it.
    pub(super) fn from_distinct(distinct: &[Distinct], limits: BinLimits) -> Result<FeatureBins> {
        let BinLimits {
            max_bins,
            min_data_in_bin,
        } = limits;
        let min_count = min_data_in_bin.max(1);
        let cut_between = |a: f64, b: f64| {
            let mid = a + (b - a) / 2.0;
            // Adjacent floats: the midpoint may round up to b; keep b in the upper bin.
            if mid < b { mid } else { a }
        };
        let most = distinct.len().min(max_bins).saturating_sub(1);
        let mut thresholds = with_capacity(most, "the bin thresholds")?;
        // Rows in the bin being filled.
        let mut count = 0usize;
        if distinct.len() <= max_bins {
            for w in distinct.windows(2) {
                count += w[0].count;
                if count >= min_count {
                    thresholds.push(cut_between(w[0].value, w[1].value));
                    count = 0;
                }
            }
        } else {
            // Greedy equal-weight bins over distinct values, re-aiming the
            // target after every cut so heavy ties do not waste bins.
            let mut remaining: f64 = distinct.iter().map(|d| d.weight).sum();
            let mut bins_left = max_bins;
            let mut acc = 0.0;
            for i in 0..distinct.len() - 1 {
                acc += distinct[i].weight;
                count += distinct[i].count;
                if acc >= remaining / bins_left as f64 && bins_left > 1 && count >= min_count {
                    thresholds.push(cut_between(distinct[i].value, distinct[i + 1].value));
                    remaining -= acc;
                    acc = 0.0;
                    count = 0;
                    bins_left -= 1;
                }
            }
        }
        count += distinct.last().map_or(0, |d| d.count);
        if count < min_count {
            thresholds.pop();
        }
        Ok(FeatureBins {
            thresholds,
            categories: None,
        })
    }
}

/// A gathered sample entry: a bare value (unit weight) or a (value, weight) pair.
pub(super) trait SampleValue: Copy + Send {
    fn new(value: f64, weight: f64) -> Self;
    fn value(&self) -> f64;
    fn weight(&self) -> f64;
}
impl SampleValue for f64 {
    #[inline(always)]
    fn new(value: f64, _: f64) -> Self {
        value
    }
    #[inline(always)]
    fn value(&self) -> f64 {
        *self
    }
    #[inline(always)]
    fn weight(&self) -> f64 {
        1.0
    }
}
impl SampleValue for (f64, f64) {
    #[inline(always)]
    fn new(value: f64, weight: f64) -> Self {
        (value, weight)
    }
    #[inline(always)]
    fn value(&self) -> f64 {
        self.0
    }
    #[inline(always)]
    fn weight(&self) -> f64 {
        self.1
    }
}

/// The distinct values of one feature, in increasing order, while there are
/// at most `limit` of them (`tracked_limit`), and the rows holding each.
/// Such a feature gets a bin per value (values joined where fewer than
/// `min_data_in_bin` rows hold them) and its weights do not matter, so it
/// needs no sorted copy of its sample.
#[derive(Clone, Debug)]
pub(super) struct DistinctValues {
    pub(super) values: Vec<f64>,
    /// Rows holding each of `values`.
    pub(super) counts: Vec<usize>,
    /// The bit patterns of `values` while there are at most FEW_VALUES of
    /// them, the rest NaN (never added): a fixed-size copy compared whole.
    few: [u64; FEW_VALUES],
    /// Index of the last value seen: runs of one value skip the search.
    last: usize,
    /// More than `limit` values seen: the feature needs the sort.
    pub(super) overflow: bool,
    /// A value could not be added for want of memory (`overflow` is set
    /// too, so nothing more is added): the binning fails with OutOfMemory.
    pub(super) failed: bool,
}

impl Default for DistinctValues {
    fn default() -> Self {
        DistinctValues {
            values: Vec::new(),
            counts: Vec::new(),
            few: [f64::NAN.to_bits(); FEW_VALUES],
            last: 0,
            overflow: false,
            failed: false,
        }
    }
}

/// Up to this many distinct values, `DistinctValues::add` compares them all.
const FEW_VALUES: usize = 4;

/// At most this many distinct values are tracked per feature: an insertion
/// into the sorted list moves all larger values, so tracking costs O(k²),
/// seconds per feature at k = 65535. A feature with more goes to the sort,
/// which gives the same one-bin-per-value cuts while it has at most
/// `max_bins` values.
const MAX_TRACKED_VALUES: usize = 1024;

pub(super) fn tracked_limit(max_bins: usize) -> usize {
    max_bins.min(MAX_TRACKED_VALUES)
}

impl DistinctValues {
    /// Adds a non-NaN value of one row; returns false once the feature
    /// overflows.
    #[inline(always)]
    pub(super) fn add(&mut self, v: f64, limit: usize) -> bool {
        self.add_rows(v, 1, limit)
    }

    /// Adds a non-NaN value held by `rows` rows.
    #[inline(always)]
    pub(super) fn add_rows(&mut self, v: f64, rows: usize, limit: usize) -> bool {
        // A value already in the set: the common case, kept free of
        // mispredicted branches. Few values (one-hot columns) are all
        // compared; more are checked against the previous value's slot.
        // Bit patterns, not values, are compared: -0.0 does not match a
        // stored +0.0, so the slow path can decide which zero to keep.
        let bits = v.to_bits();
        let known = if self.values.len() <= FEW_VALUES {
            // The matching slot, or FEW_VALUES (unused slots hold NaN,
            // which no added value is).
            self.few
                .iter()
                .enumerate()
                .fold(FEW_VALUES, |hit, (k, &d)| if d == bits { k } else { hit })
        } else if self.values.get(self.last).map(|d| d.to_bits()) == Some(bits) {
            self.last
        } else {
            FEW_VALUES.max(self.values.len())
        };
        match self.counts.get_mut(known) {
            Some(c) => {
                *c += rows;
                true
            }
            None => self.add_other(v, rows, limit),
        }
    }

    #[inline(never)]
    fn add_other(&mut self, v: f64, rows: usize, limit: usize) -> bool {
        let at = self.values.partition_point(|&d| d < v);
        if self.values.get(at) == Some(&v) {
            // ±0 compare equal; keep -0.0 as the sorted order would.
            if v.is_sign_negative() {
                self.values[at] = v;
            }
            self.counts[at] += rows;
        } else if self.values.len() == limit {
            *self = DistinctValues {
                overflow: true,
                ..Default::default()
            };
            return false;
        } else {
            // The sets grow on rayon's workers, where a failed allocation
            // would abort the process.
            if self.values.try_reserve(1).is_err() || self.counts.try_reserve(1).is_err() {
                *self = DistinctValues {
                    overflow: true,
                    failed: true,
                    ..Default::default()
                };
                return false;
            }
            self.values.insert(at, v);
            self.counts.insert(at, rows);
        }
        self.last = at;
        if self.values.len() <= FEW_VALUES {
            for (slot, d) in self.few.iter_mut().zip(&self.values) {
                *slot = d.to_bits();
            }
        }
        true
    }

    pub(super) fn merge(&mut self, other: DistinctValues, limit: usize) {
        if self.overflow || other.overflow {
            *self = DistinctValues {
                overflow: true,
                failed: self.failed || other.failed,
                ..Default::default()
            };
            return;
        }
        for (v, rows) in other.values.into_iter().zip(other.counts) {
            if !self.add_rows(v, rows, limit) {
                return;
            }
        }
    }
}

/// `sets`, or OutOfMemory if one could not hold its values.
pub(super) fn checked(sets: Vec<DistinctValues>) -> Result<Vec<DistinctValues>> {
    if sets.iter().any(|s| s.failed) {
        drop(sets); // the message needs memory too
        return Err(RgbmError::OutOfMemory(
            "cannot grow a feature's distinct values while binning".to_string(),
        ));
    }
    Ok(sets)
}

/// At most this many features are gathered in one pass over the sample rows
/// (16 f32 values are one cache line of a row-major row).
pub(super) const MAX_GATHER_FEATURES: usize = 16;
/// Memory for the gathered sample columns of all threads.
const GATHER_BUDGET_BYTES: usize = 8 << 20;
/// The rows that place cut points: the sample (all `n` if None), weighted.
#[derive(Clone, Copy)]
pub(super) struct Rows<'a> {
    pub(super) n: usize,
    pub(super) sample: Option<&'a [usize]>,
    pub(super) weights: Option<&'a [f64]>,
}

/// Cut points of `features_to_bin` from their sample values, gathered up
/// to `MAX_GATHER_FEATURES` features per pass over the rows:
/// `row_values(i, group, out)` writes row i's values of the features in
/// `group` into `out` (NaN values are skipped, as are rows of weight 0).
pub(super) fn fit_in_batches<S: SampleValue>(
    features_to_bin: &[usize],
    rows: Rows,
    limits: BinLimits,
    cancel: &Cancel,
    row_values: impl Fn(usize, &[usize], &mut [f64]) + Sync,
) -> Result<Vec<FeatureBins>> {
    let p = features_to_bin.len();
    if p == 0 {
        return Ok(Vec::new());
    }
    let cap = rows.sample.map_or(rows.n, <[usize]>::len).max(1);
    let slots = rayon::current_num_threads().clamp(1, p);
    let batch = (GATHER_BUDGET_BYTES / (slots * cap * std::mem::size_of::<S>()))
        .clamp(1, MAX_GATHER_FEATURES)
        .min(p.div_ceil(slots));
    // One buffer allocated here, not in the workers: glibc keeps memory freed
    // on a worker in that thread's arena, where the training buffers
    // allocated later on this thread cannot reuse it (6 MiB more fit peak on
    // 800k × 28 with two threads).
    let mut buf = filled_vec(slots * batch * cap, S::new(0.0, 0.0), "the binning sample")?;
    let mut features = Vec::with_capacity(p);
    for first in (0..p).step_by(slots * batch) {
        cancel.check()?;
        let last = (first + slots * batch).min(p);
        let binned: Vec<Vec<FeatureBins>> = (first..last)
            .step_by(batch)
            .collect::<Vec<_>>()
            .into_par_iter()
            .zip(buf.par_chunks_mut(batch * cap))
            .map(|(j0, slot)| {
                let group = &features_to_bin[j0..(j0 + batch).min(last)];
                let mut lens = [0usize; MAX_GATHER_FEATURES];
                let mut values = [0.0f64; MAX_GATHER_FEATURES];
                let mut gather = |i: usize| {
                    let w = rows.weights.map_or(1.0, |w| w[i]);
                    if w <= 0.0 {
                        return;
                    }
                    row_values(i, group, &mut values[..group.len()]);
                    for (k, &v) in values[..group.len()].iter().enumerate() {
                        if !v.is_nan() {
                            slot[k * cap + lens[k]] = S::new(v, w);
                            lens[k] += 1;
                        }
                    }
                };
                match rows.sample {
                    Some(sample) => sample.iter().for_each(|&i| gather(i)),
                    None => (0..rows.n).for_each(&mut gather),
                }
                slot.chunks_mut(cap)
                    .zip(&lens[..group.len()])
                    .map(|(col, &len)| FeatureBins::from_sample(&mut col[..len], limits))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?;
        features.extend(binned.into_iter().flatten());
    }
    Ok(features)
}

/// The features that overflowed their distinct-value set and need the sort.
pub(super) fn overflowed(distinct: &[DistinctValues]) -> Vec<usize> {
    (0..distinct.len())
        .filter(|&j| distinct[j].overflow)
        .collect()
}

/// One bin per distinct value, except the sorted features' cuts.
pub(super) fn combine_cuts(
    distinct: Vec<DistinctValues>,
    to_sort: &[usize],
    sorted: Vec<FeatureBins>,
    limits: BinLimits,
) -> Result<Vec<FeatureBins>> {
    // Pushed into a vector of its own: collected from `distinct` in place,
    // the mapper would keep the sets' larger allocation.
    let mut features: Vec<FeatureBins> = with_capacity(distinct.len(), "the bin mapper")?;
    for d in distinct {
        // Weights place no cut when every value can have a bin: left 0.
        let values: Vec<Distinct> = (d.values.into_iter().zip(d.counts))
            .map(|(value, count)| Distinct {
                value,
                weight: 0.0,
                count,
            })
            .collect();
        features.push(FeatureBins::from_distinct(&values, limits)?);
    }
    for (&j, bins) in to_sort.iter().zip(sorted) {
        features[j] = bins;
    }
    Ok(features)
}
