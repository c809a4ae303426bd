//! Quantile binning: each feature's values are cut into at most `max_bins`
//! value bins; NaN gets its own extra bin. Thresholds are raw values, so a
//! split `bin <= b` is the same as `x <= threshold[b]` on unbinned data.
use rayon::prelude::*;

pub use super::feature_bins::{FeatureBins, category_code};
use super::feature_table::FeatureTable;

use super::matrix::{AsMatrix, DenseMatrix, Element, Matrix};
use crate::alloc::{filled_vec, with_capacity};
use crate::cancel::Cancel;
use crate::error::{Result, RgbmError};
use crate::params::MAX_CATEGORY;
use crate::rng::{Purpose, stream};

/// Rows used to find the cut points (LightGBM uses 200k as well).
pub const BIN_SAMPLE_ROWS: usize = 200_000;

/// One distinct value of a feature's sample: its total weight and rows.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Distinct {
    value: f64,
    weight: f64,
    count: usize,
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
    fn from_sample<S: SampleValue>(sample: &mut [S], limits: BinLimits) -> Result<FeatureBins> {
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
    fn from_distinct(distinct: &[Distinct], limits: BinLimits) -> Result<FeatureBins> {
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

    /// One bin per category: the `max_bins` codes with the most weight
    /// (ties to the smaller code), from every row of weight > 0. A value
    /// that is neither NaN nor a category code is an error.
    fn categorical<T: Element>(
        x: &Matrix<T>,
        j: usize,
        max_bins: usize,
        weights: Option<&[f64]>,
    ) -> Result<FeatureBins> {
        let mut weight = filled_vec(MAX_CATEGORY as usize + 1, 0.0f64, "the category weights")?;
        let mut bad = None;
        let mut visit = |i: usize, v: f64| {
            if v.is_nan() || bad.is_some() {
                return;
            }
            match category_code(v) {
                Some(c) => weight[c as usize] += weights.map_or(1.0, |w| w[i]),
                None => bad = Some((i, v)),
            }
        };
        match x {
            Matrix::Dense(d) => d.for_each_in_col(j, visit),
            // Every row, implicit zeros included (category 0).
            Matrix::Sparse(_) => (0..x.n_rows()).for_each(|i| visit(i, x.get(i, j))),
        }
        if let Some((i, v)) = bad {
            return Err(RgbmError::param(
                "categorical_features",
                format!(
                    "feature {j} is categorical but row {i} holds {v}; categories must be \
                     integers in [0, {MAX_CATEGORY}] (NaN = missing)"
                ),
            ));
        }
        let n_seen = weight.iter().filter(|&&w| w > 0.0).count();
        let mut seen: Vec<u32> = with_capacity(n_seen, "the categories")?;
        seen.extend((0..weight.len() as u32).filter(|&c| weight[c as usize] > 0.0));
        if seen.len() > max_bins {
            seen.sort_by(|&a, &b| {
                weight[b as usize]
                    .total_cmp(&weight[a as usize])
                    .then(a.cmp(&b))
            });
            seen.truncate(max_bins);
            seen.sort_unstable();
        }
        let mut thresholds = with_capacity(seen.len().saturating_sub(1), "the bin thresholds")?;
        thresholds.extend(seen.iter().skip(1).map(|&c| c as f64 - 0.5));
        Ok(FeatureBins {
            thresholds,
            categories: Some(seen),
        })
    }
}

/// A gathered sample entry: a bare value (unit weight) or a (value, weight) pair.
trait SampleValue: Copy + Send {
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
struct DistinctValues {
    values: Vec<f64>,
    /// Rows holding each of `values`.
    counts: Vec<usize>,
    /// The bit patterns of `values` while there are at most FEW_VALUES of
    /// them, the rest NaN (never added): a fixed-size copy compared whole.
    few: [u64; FEW_VALUES],
    /// Index of the last value seen: runs of one value skip the search.
    last: usize,
    /// More than `limit` values seen: the feature needs the sort.
    overflow: bool,
    /// A value could not be added for want of memory (`overflow` is set
    /// too, so nothing more is added): the binning fails with OutOfMemory.
    failed: bool,
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

fn tracked_limit(max_bins: usize) -> usize {
    max_bins.min(MAX_TRACKED_VALUES)
}

impl DistinctValues {
    /// Adds a non-NaN value of one row; returns false once the feature
    /// overflows.
    #[inline(always)]
    fn add(&mut self, v: f64, limit: usize) -> bool {
        self.add_rows(v, 1, limit)
    }

    /// Adds a non-NaN value held by `rows` rows.
    #[inline(always)]
    fn add_rows(&mut self, v: f64, rows: usize, limit: usize) -> bool {
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

    fn merge(&mut self, other: DistinctValues, limit: usize) {
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

/// One pass over the sample rows in memory order: the distinct values of
/// every feature that has at most `tracked_limit(max_bins)` of them. Stops
/// early once every feature has overflowed (continuous data).
fn distinct_values<T: Element>(
    x: &DenseMatrix<T>,
    max_bins: usize,
    sample: Option<&[usize]>,
    weights: Option<&[f64]>,
) -> Result<Vec<DistinctValues>> {
    let limit = tracked_limit(max_bins);
    let p = x.n_cols();
    let kept = |i: usize| weights.is_none_or(|w| w[i] > 0.0);
    if x.is_row_major() {
        // One task per thread, each over a contiguous share of the rows.
        let scan = |rows: &mut dyn Iterator<Item = usize>| -> Result<Vec<DistinctValues>> {
            let mut sets = filled_vec(p, DistinctValues::default(), "the distinct values")?;
            let mut open = p;
            let mut gathered = Vec::new();
            for i in rows.filter(|&i| kept(i)) {
                let row = x.row_block(i, 1, &mut gathered);
                for (set, &v) in sets.iter_mut().zip(row) {
                    let v = v.to_f64();
                    if !set.overflow && !v.is_nan() && !set.add(v, limit) {
                        open -= 1;
                    }
                }
                if open == 0 {
                    break;
                }
            }
            Ok(sets)
        };
        let n_rows = sample.map_or(x.n_rows(), <[usize]>::len);
        let per_task = n_rows.div_ceil(rayon::current_num_threads().max(1)).max(1);
        (0..n_rows.div_ceil(per_task))
            .into_par_iter()
            .map(|t| {
                let part = t * per_task..((t + 1) * per_task).min(n_rows);
                match sample {
                    Some(rows) => scan(&mut rows[part].iter().copied()),
                    None => scan(&mut part.into_iter()),
                }
            })
            .try_reduce_with(|mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| a.merge(b, limit));
                Ok(a)
            })
            .unwrap_or_else(|| filled_vec(p, DistinctValues::default(), "the distinct values"))
            .and_then(checked)
    } else {
        let mut sets = with_capacity(p, "the distinct values")?;
        (0..p)
            .into_par_iter()
            .map(|j| {
                let mut set = DistinctValues::default();
                let mut add = |i: usize| {
                    let v = x.get(i, j);
                    !kept(i) || v.is_nan() || set.add(v, limit)
                };
                match sample {
                    Some(rows) => _ = rows.iter().all(|&i| add(i)),
                    None => _ = (0..x.n_rows()).all(add),
                }
                set
            })
            .collect_into_vec(&mut sets);
        checked(sets)
    }
}

/// `sets`, or OutOfMemory if one could not hold its values.
fn checked(sets: Vec<DistinctValues>) -> Result<Vec<DistinctValues>> {
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
const MAX_GATHER_FEATURES: usize = 16;
/// Memory for the gathered sample columns of all threads.
const GATHER_BUDGET_BYTES: usize = 8 << 20;
mod sparse_columns;
/// `amount` distinct indices of `0..length`, the same ones in the same
/// order as `rand::seq::index::sample` draws from `rng` for an `amount` of
/// at least 163 (as the bin sample is), but with fallible buffers: rand's
/// in-place shuffle holds all `length` indices, and running out of memory
/// there would abort the process.
fn sample_indices<R: rand::Rng>(rng: &mut R, length: usize, amount: usize) -> Result<Vec<usize>> {
    use rand::RngExt;
    use rand::distr::{Distribution, Uniform};
    const WHAT: &str = "the bin sample's row indices";
    debug_assert!((163..length).contains(&amount));
    // rand's choice: the in-place shuffle unless `amount` is a small share.
    let share = if length >= 500_000 {
        330.0 / 9.0
    } else {
        270.0
    };
    if let (Ok(len), Ok(amt)) = (u32::try_from(length), u32::try_from(amount))
        && (len as f32) < share * (amt as f32)
    {
        let mut indices: Vec<u32> = with_capacity(length, WHAT)?;
        indices.extend(0..len);
        for i in 0..amt {
            let j: u32 = rng.random_range(i..len);
            indices.swap(i as usize, j as usize);
        }
        let mut rows = with_capacity(amount, WHAT)?;
        rows.extend(indices[..amount].iter().map(|&i| i as usize));
        return Ok(rows);
    }
    // Rejection sampling, in u32 unless the length needs u64.
    let mut seen = std::collections::HashSet::new();
    seen.try_reserve(amount).map_err(|_| {
        RgbmError::OutOfMemory(format!("cannot allocate {WHAT}: {amount} elements"))
    })?;
    let mut rows = with_capacity(amount, WHAT)?;
    if let Ok(len) = u32::try_from(length) {
        let distr = Uniform::new(0, len).map_err(|e| RgbmError::Shape(e.to_string()))?;
        for _ in 0..amount {
            let mut pos = distr.sample(rng);
            while !seen.insert(u64::from(pos)) {
                pos = distr.sample(rng);
            }
            rows.push(pos as usize);
        }
    } else {
        let distr = Uniform::new(0, length as u64).map_err(|e| RgbmError::Shape(e.to_string()))?;
        for _ in 0..amount {
            let mut pos = distr.sample(rng);
            while !seen.insert(pos) {
                pos = distr.sample(rng);
            }
            rows.push(pos as usize);
        }
    }
    Ok(rows)
}

use sparse_columns::SparseColumns;

#[derive(Clone, Debug, PartialEq)]
pub struct BinMapper {
    pub features: FeatureTable,
    pub max_bins: usize,
    /// The fewest rows a value bin was cut to hold.
    pub min_data_in_bin: usize,
}

/// Bins every feature of `x` on the sample rows (all rows if `sample` is
/// `None`). Features are gathered a batch at a time, each batch in one pass
/// over the rows, so a row-major matrix is read a cache line at a time
/// instead of once per feature with a stride.
fn fit_features<S: SampleValue, T: Element>(
    x: &DenseMatrix<T>,
    features_to_bin: &[usize],
    limits: BinLimits,
    sample: Option<&[usize]>,
    weights: Option<&[f64]>,
    cancel: &Cancel,
) -> Result<Vec<FeatureBins>> {
    let rows = Rows {
        n: x.n_rows(),
        sample,
        weights,
    };
    fit_in_batches::<S>(features_to_bin, rows, limits, cancel, |i, group, out| {
        for (o, &j) in out.iter_mut().zip(group) {
            *o = x.get(i, j);
        }
    })
}

/// The rows that place cut points: the sample (all `n` if None), weighted.
#[derive(Clone, Copy)]
struct Rows<'a> {
    n: usize,
    sample: Option<&'a [usize]>,
    weights: Option<&'a [f64]>,
}

/// Cut points of `features_to_bin` from their sample values, gathered up
/// to `MAX_GATHER_FEATURES` features per pass over the rows:
/// `row_values(i, group, out)` writes row i's values of the features in
/// `group` into `out` (NaN values are skipped, as are rows of weight 0).
fn fit_in_batches<S: SampleValue>(
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
fn overflowed(distinct: &[DistinctValues]) -> Vec<usize> {
    (0..distinct.len())
        .filter(|&j| distinct[j].overflow)
        .collect()
}

/// Each column's rows whose value is not 0 (NaN counts), over all rows.
///
/// A column with fewer such rows than the smallest leaf (`min_rows`) gets
/// one bin: fewer than `min_rows` rows lie outside its most common bin,
/// so no split can use it (the binned dataset's feature filter drops it
/// too), and the mapper of a very wide sparse matrix need not hold or
/// compute cuts for the many columns with a handful of entries. Dense and
/// sparse input follow the same rule, so they give the same mapper.
fn nonzero_rows<T: Element>(x: &DenseMatrix<T>) -> Vec<usize> {
    let p = x.n_cols();
    if x.is_row_major() {
        let per_task = x
            .n_rows()
            .div_ceil(rayon::current_num_threads().max(1))
            .max(1);
        (0..x.n_rows().div_ceil(per_task))
            .into_par_iter()
            .map(|t| {
                let mut counts = vec![0usize; p];
                for i in t * per_task..((t + 1) * per_task).min(x.n_rows()) {
                    for (c, j) in counts.iter_mut().zip(0..p) {
                        *c += usize::from(x.get(i, j) != 0.0);
                    }
                }
                counts
            })
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                a
            })
            .unwrap_or_else(|| vec![0; p])
    } else {
        (0..p)
            .into_par_iter()
            .map(|j| {
                let mut c = 0;
                x.for_each_in_col(j, |_, v| c += usize::from(v != 0.0));
                c
            })
            .collect()
    }
}

/// One bin per distinct value, except the sorted features' cuts.
fn combine_cuts(
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

impl BinMapper {
    /// Finds cut points on a seeded sample of at most `BIN_SAMPLE_ROWS` rows.
    /// Quantiles are weighted; rows of weight 0 do not place cut points, so a
    /// zero weight is the same as removing the row.
    pub fn fit<T: Element>(
        x: &impl AsMatrix<T>,
        limits: impl Into<BinLimits>,
        seed: u64,
        weights: Option<&[f64]>,
        cancel: &Cancel,
    ) -> Result<BinMapper> {
        Self::fit_with_categories(x, limits, seed, weights, &[], 0, cancel)
    }

    /// The rows (ascending) whose values place the cut points of `n` rows:
    /// a seeded sample of `BIN_SAMPLE_ROWS` of them, or `None` for all. A
    /// mapper fitted on these rows alone is the mapper of all `n`.
    pub fn sample_rows(n: usize, seed: u64) -> Result<Option<Vec<usize>>> {
        if n <= BIN_SAMPLE_ROWS {
            return Ok(None);
        }
        let mut rng = stream(seed, Purpose::BinSample, 0);
        let mut rows = sample_indices(&mut rng, n, BIN_SAMPLE_ROWS)?;
        rows.sort_unstable();
        Ok(Some(rows))
    }

    /// `fit`, with the `categorical` features binned one bin per category.
    /// Columns with fewer than `min_rows` rows not 0 (the smallest leaf: no
    /// split can use them) get one bin, sparse ones without a look at their
    /// values; 0 bins every column.
    pub fn fit_with_categories<T: Element>(
        x: &impl AsMatrix<T>,
        limits: impl Into<BinLimits>,
        seed: u64,
        weights: Option<&[f64]>,
        categorical: &[usize],
        min_rows: usize,
        cancel: &Cancel,
    ) -> Result<BinMapper> {
        let x = x.as_matrix();
        if let Some(&j) = categorical.iter().find(|&&j| j >= x.n_cols()) {
            return Err(RgbmError::param(
                "categorical_features",
                format!("lists feature {j}, but X has {} features", x.n_cols()),
            ));
        }
        let limits: BinLimits = limits.into();
        let max_bins = limits.max_bins;
        if limits.min_data_in_bin == 0 {
            return Err(RgbmError::param(
                "min_data_in_bin",
                "must be at least 1, got 0",
            ));
        }
        if !(2..=65535).contains(&max_bins) {
            return Err(RgbmError::param(
                "max_bins",
                format!("must be in [2, 65535], got {max_bins}"),
            ));
        }
        let n = x.n_rows();
        if let Some(w) = weights
            && w.len() != n
        {
            return Err(RgbmError::Shape(format!(
                "X has {n} rows but the weights have {}",
                w.len()
            )));
        }
        let sample = Self::sample_rows(n, seed)?;
        let sample = sample.as_deref();
        let features = match &x {
            Matrix::Dense(x) => {
                let distinct = distinct_values(x, max_bins, sample, weights)?;
                cancel.check()?;
                let to_sort = overflowed(&distinct);
                let sorted = match weights {
                    None => fit_features::<f64, T>(x, &to_sort, limits, sample, None, cancel)?,
                    Some(w) => {
                        fit_features::<(f64, f64), T>(x, &to_sort, limits, sample, Some(w), cancel)?
                    }
                };
                let mut features = combine_cuts(distinct, &to_sort, sorted, limits)?;
                if min_rows > 1 {
                    let nonzero = nonzero_rows(x);
                    for (bins, &c) in features.iter_mut().zip(&nonzero) {
                        if c < min_rows {
                            *bins = FeatureBins::single();
                        }
                    }
                }
                FeatureTable::new(features)
            }
            Matrix::Sparse(x) => {
                let columns = SparseColumns::new(x, sample, weights)?;
                let binnable = columns.binnable(min_rows)?;
                let distinct = columns.distinct_values(max_bins, &binnable)?;
                cancel.check()?;
                let to_sort_at = overflowed(&distinct);
                let to_sort: Vec<usize> = to_sort_at.iter().map(|&k| binnable[k]).collect();
                let sorted = match weights {
                    None => columns.fit_features::<f64>(&to_sort, limits, cancel)?,
                    Some(_) => columns.fit_features::<(f64, f64)>(&to_sort, limits, cancel)?,
                };
                let cuts = combine_cuts(distinct, &to_sort_at, sorted, limits)?;
                // The other columns get one bin.
                FeatureTable::with_single_bins(x.n_cols(), &binnable, cuts)?
            }
        };
        let mut features = features;
        let cat_bins: Vec<Result<FeatureBins>> = categorical
            .par_iter()
            .map(|&j| FeatureBins::categorical(&x, j, max_bins, weights))
            .collect();
        for (&j, bins) in categorical.iter().zip(cat_bins) {
            features.set(j, bins?);
        }
        cancel.check()?;
        Ok(BinMapper {
            features,
            max_bins,
            min_data_in_bin: limits.min_data_in_bin,
        })
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
    use crate::data::sparse::{SparseLayout, SparseMatrix};

    /// The fallible sample is rand's `index::sample`, draw for draw, on
    /// both sides of rand's switch from the in-place shuffle to rejection
    /// sampling (at 330/9 x `amount` rows past 500,000, 270 x below), and
    /// past u32's range.
    #[test]
    fn bin_sample_is_rands_index_sample() {
        let cases = [
            (BIN_SAMPLE_ROWS + 1, BIN_SAMPLE_ROWS),
            (499_999, BIN_SAMPLE_ROWS),
            (3_000_000, BIN_SAMPLE_ROWS),
            (7_333_332, BIN_SAMPLE_ROWS),
            (7_340_000, BIN_SAMPLE_ROWS),
            (20_000_000, BIN_SAMPLE_ROWS),
            (100_000, 400),
            (108_001, 400),
            (1usize << 33, BIN_SAMPLE_ROWS),
        ];
        for (length, amount) in cases {
            for seed in [0, 7] {
                let mut a = stream(seed, Purpose::BinSample, 0);
                let mut b = a.clone();
                let want = rand::seq::index::sample(&mut a, length, amount).into_vec();
                let got = sample_indices(&mut b, length, amount).unwrap();
                assert_eq!(got, want, "length {length}, amount {amount}");
                // The generators are left in the same state too.
                assert_eq!(rand::Rng::next_u64(&mut a), rand::Rng::next_u64(&mut b));
            }
        }
        assert!(
            BinMapper::sample_rows(BIN_SAMPLE_ROWS, 0)
                .unwrap()
                .is_none()
        );
    }

    /// Sorted (value, weight) pairs as distinct values with their weights
    /// and rows.
    fn distinct_of(sorted: &[(f64, f64)]) -> Vec<Distinct> {
        let mut distinct: Vec<Distinct> = Vec::new();
        for &(value, weight) in sorted {
            match distinct.last_mut() {
                Some(d) if d.value == value => {
                    d.weight += weight;
                    d.count += 1;
                }
                _ => distinct.push(Distinct {
                    value,
                    weight,
                    count: 1,
                }),
            }
        }
        distinct
    }

    /// The cut rule before `min_data_in_bin`, verbatim: one bin per value up
    /// to `max_bins` values, else greedy equal-weight bins.
    fn cuts_without_min_data(distinct: &[(f64, f64)], max_bins: usize) -> Vec<f64> {
        let cut_between = |a: f64, b: f64| {
            let mid = a + (b - a) / 2.0;
            if mid < b { mid } else { a }
        };
        let mut thresholds = Vec::new();
        if distinct.len() <= max_bins {
            for w in distinct.windows(2) {
                thresholds.push(cut_between(w[0].0, w[1].0));
            }
        } else {
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
        thresholds
    }

    /// Random sorted (value, weight) samples: few or many levels, ties,
    /// weighted or not.
    fn random_samples(seed: u64) -> Vec<Vec<(f64, f64)>> {
        let mut rng = crate::rng::stream(seed, Purpose::BinSample, 3);
        let mut out = Vec::new();
        for (n, levels) in [
            (1, 1),
            (2, 2),
            (10, 10),
            (50, 7),
            (300, 40),
            (3000, 2000),
            (5000, 300),
        ] {
            for weighted in [false, true] {
                let mut s: Vec<(f64, f64)> = (0..n)
                    .map(|_| {
                        let v = rand::RngExt::random_range(&mut rng, 0..levels) as f64 * 0.5 - 1.0;
                        let w = if weighted {
                            rand::RngExt::random_range(&mut rng, 1..8) as f64 * 0.25
                        } else {
                            1.0
                        };
                        (v, w)
                    })
                    .collect();
                s.sort_by(|a, b| a.0.total_cmp(&b.0));
                out.push(s);
            }
        }
        out
    }

    #[test]
    fn min_data_in_bin_one_is_the_rule_before_it() {
        for sample in random_samples(1) {
            let distinct = distinct_of(&sample);
            let pairs: Vec<(f64, f64)> = distinct.iter().map(|d| (d.value, d.weight)).collect();
            for max_bins in [2, 6, 255, 4000] {
                let fb = FeatureBins::from_distinct(&distinct, max_bins.into()).unwrap();
                assert_eq!(fb.thresholds, cuts_without_min_data(&pairs, max_bins));
            }
        }
    }

    #[test]
    fn every_value_bin_holds_min_data_in_bin_rows() {
        for sample in random_samples(2) {
            let distinct = distinct_of(&sample);
            for max_bins in [2, 6, 255, 4000] {
                for min_data_in_bin in [1, 2, 3, 10, 100] {
                    let limits = BinLimits {
                        max_bins,
                        min_data_in_bin,
                    };
                    let fb = FeatureBins::from_distinct(&distinct, limits).unwrap();
                    let mut counts = vec![0usize; fb.n_value_bins()];
                    sample.iter().for_each(|&(v, _)| counts[fb.bin(v)] += 1);
                    assert!(fb.n_value_bins() <= max_bins);
                    if sample.len() < min_data_in_bin {
                        assert_eq!(fb.n_value_bins(), 1);
                    } else {
                        assert!(counts.iter().all(|&c| c >= min_data_in_bin), "{counts:?}");
                        assert!(fb.n_value_bins() <= sample.len() / min_data_in_bin);
                    }
                }
            }
        }
        // Ten rows, ten values: three bins of 3, 3 and 4 rows.
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        let limits = BinLimits {
            max_bins: 255,
            min_data_in_bin: 3,
        };
        let x = DenseMatrix::col_major(&v, 10, 1).unwrap();
        let m = BinMapper::fit(&x, limits, 0, None, &Cancel::never()).unwrap();
        assert_eq!(m.features[0].thresholds, vec![2.5, 5.5]);
    }

    /// Every column of up to 6 rows over {-1, 0, 2, NaN} (and some rows of
    /// weight 0): dense (both layouts), CSC and CSR give the same bins, and
    /// they are the bins of a walk over the sorted rows that closes a bin at
    /// a change of value once it holds `min_data_in_bin` rows and joins a
    /// short last bin to the one before.
    #[test]
    fn tiny_columns_match_a_walk_over_the_sorted_rows() {
        let levels = [-1.0, 0.0, 2.0, f64::NAN];
        for n in 1..=6usize {
            let weights: Vec<f64> = (0..n).map(|i| if i % 3 == 1 { 0.0 } else { 1.0 }).collect();
            // Columns side by side: p = 4^n, each column one combination.
            let p = levels.len().pow(n as u32);
            let col: Vec<f64> = (0..n * p)
                .map(|k| {
                    let (j, i) = (k / n, k % n);
                    levels[(j / levels.len().pow(i as u32)) % levels.len()]
                })
                .collect();
            let row: Vec<f64> = (0..n * p).map(|k| col[(k % p) * n + k / p]).collect();
            let csc_parts = |f: &[f64], major: usize, minor: usize| {
                let (mut ptr, mut idx, mut data) = (vec![0i64], Vec::new(), Vec::new());
                for a in 0..major {
                    for b in 0..minor {
                        let v = f[a * minor + b];
                        // Zeros stored or not, by position.
                        if v != 0.0 || (a + b) % 2 == 0 {
                            idx.push(b as i32);
                            data.push(v);
                        }
                    }
                    ptr.push(idx.len() as i64);
                }
                (ptr, idx, data)
            };
            let (cp, ci, cd) = csc_parts(&col, p, n);
            let (rp, ri, rd) = csc_parts(&row, n, p);
            let csc = SparseMatrix::new(SparseLayout::Csc, n, p, &cp, &ci, &cd).unwrap();
            let csr = SparseMatrix::new(SparseLayout::Csr, n, p, &rp, &ri, &rd).unwrap();
            for min_data_in_bin in [1, 2, 3, 4] {
                let limits = BinLimits {
                    max_bins: 255,
                    min_data_in_bin,
                };
                for w in [None, Some(&weights[..])] {
                    let fit = |x: &dyn AsMatrix<f64>| {
                        BinMapper::fit(&x.as_matrix(), limits, 0, w, &Cancel::never())
                            .unwrap()
                            .features
                            .iter()
                            .cloned()
                            .collect::<Vec<_>>()
                    };
                    let dense = fit(&DenseMatrix::col_major(&col, n, p).unwrap());
                    assert_eq!(dense, fit(&DenseMatrix::row_major(&row, n, p).unwrap()));
                    assert_eq!(dense, fit(&csc), "CSC, {limits:?}");
                    assert_eq!(dense, fit(&csr), "CSR, {limits:?}");
                    for (j, fb) in dense.iter().enumerate() {
                        let mut rows: Vec<f64> = (0..n)
                            .filter(|&i| w.is_none_or(|w| w[i] > 0.0))
                            .map(|i| col[j * n + i])
                            .filter(|v| !v.is_nan())
                            .collect();
                        rows.sort_by(f64::total_cmp);
                        // The walk: bin boundaries as (last value, next value).
                        let mut cuts: Vec<(f64, f64)> = Vec::new();
                        let mut in_bin = 0;
                        for k in 0..rows.len() {
                            in_bin += 1;
                            if k + 1 < rows.len()
                                && rows[k + 1] != rows[k]
                                && in_bin >= min_data_in_bin
                            {
                                cuts.push((rows[k], rows[k + 1]));
                                in_bin = 0;
                            }
                        }
                        if in_bin < min_data_in_bin {
                            cuts.pop();
                        }
                        assert_eq!(fb.thresholds.len(), cuts.len(), "column {j}: {rows:?}");
                        for (&t, &(a, b)) in fb.thresholds.iter().zip(&cuts) {
                            // Between the two observed values it separates.
                            assert!(a <= t && t < b, "column {j}: {t} not in [{a}, {b})");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn few_distinct_values_get_one_bin_each() {
        let fb = FeatureBins::from_sample(
            &mut [(3.0, 1.0), (1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (1.0, 1.0)],
            255.into(),
        )
        .unwrap();
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
        let mut pairs: Vec<(f64, f64)> = v.iter().rev().map(|&x| (x, 1.0)).collect();
        let fb = FeatureBins::from_sample(&mut pairs, 16.into()).unwrap();
        assert_eq!(
            fb,
            FeatureBins::from_sample(&mut v.clone(), 16.into()).unwrap()
        );
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
        let fb = FeatureBins::from_sample(&mut [b, a], 255.into()).unwrap();
        assert_eq!(fb.bin(a), 0);
        assert_eq!(fb.bin(b), 1);
    }

    /// Columns of 2 to 5000 levels (some NaN), row-major and
    /// column-major, unweighted and weighted (some zero weights): the
    /// one-pass distinct path and the sort path give the reference's cuts.
    #[test]
    fn mapper_matches_a_sort_of_every_column() {
        let mut rng = crate::rng::stream(7, Purpose::BinSample, 0);
        let levels = [2usize, 3, 4, 5, 40, 255, 256, 5000];
        let (n, p) = (3000, levels.len());
        let mut col_major = vec![0.0f64; n * p];
        for (j, &l) in levels.iter().enumerate() {
            for i in 0..n {
                let r = rand::RngExt::random_range(&mut rng, 0..l + 1);
                col_major[j * n + i] = if r == l {
                    f64::NAN
                } else {
                    (r as f64 - 3.0) * 0.25
                };
            }
        }
        let row_major: Vec<f64> = (0..n * p).map(|k| col_major[(k % p) * n + k / p]).collect();
        let weights: Vec<f64> = (0..n).map(|i| (i % 5) as f64 * 0.5).collect();
        // 4000: the 5000-level column has more distinct values than are
        // tracked but fewer than max_bins.
        for (max_bins, min_data_in_bin) in [(255, 1), (39, 1), (4000, 1), (255, 3), (39, 200)] {
            let limits = BinLimits {
                max_bins,
                min_data_in_bin,
            };
            for w in [None, Some(&weights[..])] {
                let expected: Vec<FeatureBins> = (0..p)
                    .map(|j| {
                        let mut kept: Vec<(f64, f64)> = (0..n)
                            .map(|i| (col_major[j * n + i], w.map_or(1.0, |w| w[i])))
                            .filter(|&(v, w)| !v.is_nan() && w > 0.0)
                            .collect();
                        kept.sort_by(|a, b| a.0.total_cmp(&b.0));
                        FeatureBins::from_distinct(&distinct_of(&kept), limits).unwrap()
                    })
                    .collect();
                for x in [
                    DenseMatrix::row_major(&row_major, n, p).unwrap(),
                    DenseMatrix::col_major(&col_major, n, p).unwrap(),
                ] {
                    let m = BinMapper::fit(&x, limits, 0, w, &Cancel::never()).unwrap();
                    assert_eq!(
                        m.features.iter().cloned().collect::<Vec<_>>(),
                        expected,
                        "{limits:?}, weighted {}",
                        w.is_some()
                    );
                }
            }
        }
    }

    /// Past `BIN_SAMPLE_ROWS` the cuts come from the seeded row sample:
    /// both layouts read the same rows and give the same cuts.
    #[test]
    fn sampled_rows_give_the_same_cuts_in_both_layouts() {
        let n = BIN_SAMPLE_ROWS + 1001;
        let value = |i: usize, j: usize| match j {
            0 => (i % 7) as f64,
            _ => ((i * 2654435761) % 100_003) as f64,
        };
        let c: Vec<f64> = (0..2 * n).map(|k| value(k / 2, k % 2)).collect();
        let f: Vec<f64> = (0..2 * n).map(|k| value(k % n, k / n)).collect();
        let never = Cancel::never();
        let a = BinMapper::fit(
            &DenseMatrix::row_major(&c, n, 2).unwrap(),
            255,
            5,
            None,
            &never,
        )
        .unwrap();
        let b = BinMapper::fit(
            &DenseMatrix::col_major(&f, n, 2).unwrap(),
            255,
            5,
            None,
            &never,
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.features[0].n_value_bins(), 7);
        assert!(a.features[1].n_value_bins() > 200);
    }

    #[test]
    fn signed_zeros_are_one_value_and_negative_zero_is_kept() {
        for order in [[0.0, -0.0, 1.0], [-0.0, 0.0, 1.0], [1.0, 0.0, -0.0]] {
            let mut set = DistinctValues::default();
            for v in order {
                assert!(set.add(v, 255));
            }
            let bits: Vec<u64> = set.values.iter().map(|v| v.to_bits()).collect();
            assert_eq!(
                bits,
                vec![(-0.0f64).to_bits(), 1.0f64.to_bits()],
                "{order:?}"
            );
        }
        let mut set = DistinctValues::default();
        assert!(set.add(1.0, 2) && set.add(2.0, 2) && set.add(1.0, 2));
        assert!(!set.add(3.0, 2));
        assert!(set.overflow);
    }
}
