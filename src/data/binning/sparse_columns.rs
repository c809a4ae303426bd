//! A CSC or CSR matrix as binning reads it: distinct values and sample
//! cuts from the stored entries, never a dense copy.
use rayon::prelude::*;

use super::cuts::{
    BinLimits, DistinctValues, MAX_GATHER_FEATURES, Rows, SampleValue, checked, fit_in_batches,
    tracked_limit,
};
use crate::alloc::{filled_vec, with_capacity};
use crate::cancel::Cancel;
use crate::data::feature_bins::FeatureBins;
use crate::data::matrix::Element;
use crate::data::sparse::{SparseLayout, SparseMatrix};
use crate::error::Result;

/// A CSR matrix's columns to bin are copied out (CSC) when there are more
/// than fit in one batch per thread and the copy takes at most this much
/// (entries of `COLUMN_COPY_ENTRY_BYTES`: a row index and a value).
const COLUMN_COPY_BYTES: usize = 512 << 20;
const COLUMN_COPY_ENTRY_BYTES: usize = 12;
/// Above this much memory for one task's distinct-value sets (a set per
/// column), CSR rows are scanned by one task.
const WIDE_SETS_BYTES: usize = 256 << 20;

/// A CSC or CSR matrix as binning reads it: the stored entries of the
/// sample rows, and how many kept sample rows each column leaves implicit
/// (zeros, counted rather than written out). Reproduces what the
/// dense path sees on the same matrix, so the cuts are the same.
pub(super) struct SparseColumns<'s, 'a, T: Element> {
    x: &'s SparseMatrix<'a, T>,
    sample: Option<&'s [usize]>,
    weights: Option<&'s [f64]>,
    /// With a row sample: whether each row is in it.
    in_sample: Option<Vec<bool>>,
}

impl<'s, 'a, T: Element> SparseColumns<'s, 'a, T> {
    pub(super) fn new(
        x: &'s SparseMatrix<'a, T>,
        sample: Option<&'s [usize]>,
        weights: Option<&'s [f64]>,
    ) -> Result<Self> {
        let in_sample = match sample {
            Some(rows) => {
                let mut mask = filled_vec(x.n_rows(), false, "the binning sample mask")?;
                rows.iter().for_each(|&i| mask[i] = true);
                Some(mask)
            }
            None => None,
        };
        Ok(SparseColumns {
            x,
            sample,
            weights,
            in_sample,
        })
    }

    /// Whether row i places cut points (in the sample, weight > 0).
    #[inline]
    fn kept(&self, i: usize) -> bool {
        self.in_sample.as_ref().is_none_or(|m| m[i]) && self.weights.is_none_or(|w| w[i] > 0.0)
    }

    /// The columns whose bins can matter: those with at least
    /// `max(min_rows, 1)` rows not 0 (NaN counts) over all rows; the
    /// others get one bin (see `nonzero_rows`).
    pub(super) fn binnable(&self, min_rows: usize) -> Result<Vec<usize>> {
        let p = self.x.n_cols();
        let least = min_rows.max(1);
        let mut columns = Vec::new();
        if self.x.layout() == SparseLayout::Csr {
            let mut nonzero = filled_vec(p, 0u32, "the nonzero counts")?;
            for i in 0..self.x.n_rows() {
                let (idx, vals) = self.x.major(i);
                for (&j, v) in idx.iter().zip(vals) {
                    if v.to_f64() != 0.0 {
                        let c = &mut nonzero[j as usize];
                        *c = c.saturating_add(1);
                    }
                }
            }
            columns.extend((0..p).filter(|&j| nonzero[j] as usize >= least));
        } else {
            columns.extend((0..p).filter(|&j| {
                let vals = self.x.major(j).1;
                vals.iter()
                    .filter(|v| v.to_f64() != 0.0)
                    .take(least)
                    .count()
                    >= least
            }));
        }
        Ok(columns)
    }

    /// `distinct_values` of the dense path for `columns` (one set each): a
    /// set does not depend on the order values are added, so the stored
    /// values are added first and then 0.0 once, held by the implicit rows.
    pub(super) fn distinct_values(
        &self,
        max_bins: usize,
        columns: &[usize],
    ) -> Result<Vec<DistinctValues>> {
        let limit = tracked_limit(max_bins);
        let kept_rows = match (self.sample, self.weights) {
            (Some(rows), _) => rows.iter().filter(|&&i| self.kept(i)).count(),
            (None, _) => (0..self.x.n_rows()).filter(|&i| self.kept(i)).count(),
        };
        if self.x.layout() == SparseLayout::Csr {
            return self.distinct_values_by_row(limit, kept_rows, columns);
        }
        let mut sets = with_capacity(columns.len(), "the distinct values")?;
        columns
            .par_iter()
            .map(|&j| {
                let mut set = DistinctValues::default();
                let (idx, vals) = self.x.major(j);
                let mut stored_kept = 0;
                for (&i, v) in idx.iter().zip(vals) {
                    if self.kept(i as usize) {
                        stored_kept += 1;
                        let v = v.to_f64();
                        if !set.overflow && !v.is_nan() {
                            set.add(v, limit);
                        }
                    }
                }
                if stored_kept < kept_rows && !set.overflow {
                    set.add_rows(0.0, kept_rows - stored_kept, limit);
                }
                set
            })
            .collect_into_vec(&mut sets);
        checked(sets)
    }

    /// `distinct_values` for CSR: tasks over shares of the rows, each with a
    /// set and a count of stored kept entries per column, merged.
    fn distinct_values_by_row(
        &self,
        limit: usize,
        kept_rows: usize,
        columns: &[usize],
    ) -> Result<Vec<DistinctValues>> {
        let p = columns.len();
        let slot = self.slots(columns)?;
        let n_rows = self.sample.map_or(self.x.n_rows(), <[usize]>::len);
        // A set per column and task: very wide data gets one task.
        let per_column = std::mem::size_of::<DistinctValues>() + std::mem::size_of::<usize>();
        let tasks = if p.saturating_mul(per_column) > WIDE_SETS_BYTES {
            1
        } else {
            rayon::current_num_threads().max(1)
        };
        let per_task = n_rows.div_ceil(tasks).max(1);
        let merged = (0..n_rows.div_ceil(per_task))
            .into_par_iter()
            .map(|t| -> Result<(Vec<DistinctValues>, Vec<usize>)> {
                let mut sets = filled_vec(p, DistinctValues::default(), "the distinct values")?;
                let mut stored = filled_vec(p, 0usize, "the stored counts")?;
                for k in t * per_task..((t + 1) * per_task).min(n_rows) {
                    let i = self.sample.map_or(k, |rows| rows[k]);
                    if !self.kept(i) {
                        continue;
                    }
                    let (idx, vals) = self.x.major(i);
                    for (&j, v) in idx.iter().zip(vals) {
                        let k = slot[j as usize];
                        if k == u32::MAX {
                            continue;
                        }
                        let (set, v) = (&mut sets[k as usize], v.to_f64());
                        stored[k as usize] += 1;
                        if !set.overflow && !v.is_nan() {
                            set.add(v, limit);
                        }
                    }
                }
                Ok((sets, stored))
            })
            .try_reduce_with(|(mut a, mut ca), (b, cb)| {
                a.iter_mut().zip(b).for_each(|(a, b)| a.merge(b, limit));
                ca.iter_mut().zip(cb).for_each(|(a, b)| *a += b);
                Ok((a, ca))
            })
            .transpose()?;
        let (mut sets, stored) = match merged {
            Some(m) => m,
            None => (
                filled_vec(p, DistinctValues::default(), "the distinct values")?,
                filled_vec(p, 0usize, "the stored counts")?,
            ),
        };
        for (set, stored) in sets.iter_mut().zip(stored) {
            if stored < kept_rows && !set.overflow {
                set.add_rows(0.0, kept_rows - stored, limit);
            }
        }
        checked(sets)
    }

    /// Stored entries of a CSR matrix in the columns `slot` places.
    fn stored_in(&self, slot: &[u32]) -> usize {
        (0..self.x.n_rows())
            .into_par_iter()
            .map(|i| {
                let (idx, _) = self.x.major(i);
                idx.iter()
                    .filter(|&&j| slot[j as usize] != u32::MAX)
                    .count()
            })
            .sum()
    }

    /// Each column's position in `features`, or u32::MAX.
    fn slots(&self, features: &[usize]) -> Result<Vec<u32>> {
        let mut slot = filled_vec(self.x.n_cols(), u32::MAX, "the column slots")?;
        for (k, &j) in features.iter().enumerate() {
            slot[j] = k as u32;
        }
        Ok(slot)
    }

    /// The CSC arrays of the `k` columns `slot` places (`stored` entries).
    fn columns_of(
        &self,
        slot: &[u32],
        k: usize,
        stored: usize,
    ) -> Result<(Vec<i64>, Vec<i32>, Vec<T>)> {
        let mut indptr = filled_vec(k + 1, 0i64, "the column copy")?;
        for i in 0..self.x.n_rows() {
            for &j in self.x.major(i).0 {
                if let Some(&k) = slot.get(j as usize).filter(|&&k| k != u32::MAX) {
                    indptr[k as usize + 1] += 1;
                }
            }
        }
        for k in 1..indptr.len() {
            indptr[k] += indptr[k - 1];
        }
        let mut next: Vec<usize> = with_capacity(k, "the column copy")?;
        next.extend(indptr[..k].iter().map(|&a| a as usize));
        let mut indices = filled_vec(stored, 0i32, "the column copy")?;
        let mut data = filled_vec(stored, T::ZERO, "the column copy")?;
        for i in 0..self.x.n_rows() {
            let (idx, vals) = self.x.major(i);
            for (&j, &v) in idx.iter().zip(vals) {
                let k = slot[j as usize];
                if k != u32::MAX {
                    let at = &mut next[k as usize];
                    indices[*at] = i as i32;
                    data[*at] = v;
                    *at += 1;
                }
            }
        }
        Ok((indptr, indices, data))
    }

    /// `fit_features` for CSR: up to `MAX_GATHER_FEATURES` features per
    /// pass over the rows, each row's entries scattered into the batch's
    /// values (0.0 where not stored), in row order.
    fn fit_features_by_row<S: SampleValue>(
        &self,
        features_to_bin: &[usize],
        limits: BinLimits,
        cancel: &Cancel,
    ) -> Result<Vec<FeatureBins>> {
        let rows = Rows {
            n: self.x.n_rows(),
            sample: self.sample,
            weights: self.weights,
        };
        fit_in_batches::<S>(features_to_bin, rows, limits, cancel, |i, group, out| {
            out.fill(0.0);
            let (idx, vals) = self.x.major(i);
            for (&j, v) in idx.iter().zip(vals) {
                if let Ok(k) = group.binary_search(&(j as usize)) {
                    out[k] = v.to_f64();
                }
            }
        })
    }

    /// `fit_features` of the dense path: each feature's sample gathered in
    /// the same row order (implicit entries as 0.0), so sorting and the
    /// weighted sums over ties see the same sequence.
    pub(super) fn fit_features<S: SampleValue>(
        &self,
        features_to_bin: &[usize],
        limits: BinLimits,
        cancel: &Cancel,
    ) -> Result<Vec<FeatureBins>> {
        let p = features_to_bin.len();
        if p == 0 {
            return Ok(Vec::new());
        }
        if self.x.layout() == SparseLayout::Csr {
            // Many features: their columns copied out once (CSC) beat a pass
            // over every row per batch of features.
            let slot = self.slots(features_to_bin)?;
            let stored = self.stored_in(&slot);
            if p <= MAX_GATHER_FEATURES * rayon::current_num_threads()
                || stored.saturating_mul(COLUMN_COPY_ENTRY_BYTES) > COLUMN_COPY_BYTES
            {
                return self.fit_features_by_row::<S>(features_to_bin, limits, cancel);
            }
            let (indptr, indices, data) = self.columns_of(&slot, p, stored)?;
            let n = self.x.n_rows();
            let csc = SparseMatrix::new(SparseLayout::Csc, n, p, &indptr, &indices, &data)?;
            let columns = SparseColumns {
                x: &csc,
                sample: self.sample,
                weights: self.weights,
                in_sample: None,
            };
            let all: Vec<usize> = (0..p).collect();
            return columns.fit_features::<S>(&all, limits, cancel);
        }
        let n = self.x.n_rows();
        let cap = self.sample.map_or(n, <[usize]>::len).max(1);
        let slots = rayon::current_num_threads().clamp(1, p);
        // Allocated on the calling thread (see `fit_features`).
        let mut buf = filled_vec(slots * cap, S::new(0.0, 0.0), "the binning sample")?;
        let mut features = Vec::with_capacity(p);
        for batch in features_to_bin.chunks(slots) {
            cancel.check()?;
            let binned: Vec<FeatureBins> = batch
                .par_iter()
                .zip(buf.par_chunks_mut(cap))
                .map(|(&j, slot)| {
                    let (idx, vals) = self.x.major(j);
                    let mut next = 0;
                    let mut len = 0;
                    let mut gather = |i: usize| {
                        while next < idx.len() && (idx[next] as usize) < i {
                            next += 1;
                        }
                        let w = self.weights.map_or(1.0, |w| w[i]);
                        if w > 0.0 {
                            let v = match idx.get(next) {
                                Some(&r) if r as usize == i => vals[next].to_f64(),
                                _ => 0.0,
                            };
                            if !v.is_nan() {
                                slot[len] = S::new(v, w);
                                len += 1;
                            }
                        }
                    };
                    match self.sample {
                        Some(rows) => rows.iter().for_each(|&i| gather(i)),
                        None => (0..n).for_each(&mut gather),
                    }
                    FeatureBins::from_sample(&mut slot[..len], limits)
                })
                .collect::<Result<_>>()?;
            features.extend(binned);
        }
        Ok(features)
    }
}
