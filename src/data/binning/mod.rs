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

impl FeatureBins {
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

mod cuts;
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

pub use cuts::BinLimits;
use cuts::{
    DistinctValues, Rows, SampleValue, checked, combine_cuts, fit_in_batches, overflowed,
    tracked_limit,
};
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
    use cuts::Distinct;

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
