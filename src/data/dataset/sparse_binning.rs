//! Binning a compressed sparse matrix straight into sparse rows: memory
//! scales with the stored entries and the used features' bins, never with
//! rows × columns. The rows are those binning the same matrix dense would
//! give (`sparse_rows::build_sparse_rows`), entry for entry.
use rayon::prelude::*;

use super::feature_use::{FeatureUse, mode};
use super::sparse_rows::{SparseRows, entries_after_counts, row_blocks};
use crate::alloc::{filled_vec, with_capacity};
use crate::cancel::Cancel;
use crate::data::binning::BinMapper;
use crate::data::matrix::Element;
use crate::data::sparse::{SparseLayout, SparseMatrix};
use crate::error::Result;

/// Majors (rows of CSR, columns of CSC) per counting task.
const MAJOR_BLOCK: usize = 4096;

/// The sparse rows of `x` binned by `mapper`, with which features they keep
/// (`FeatureUse`, `min_rows` as in `BinnedDataset::bin`) and the histogram
/// offsets; None when the data is not sparse enough (binning then writes
/// every code, as for dense data).
pub(super) fn bin_entries<T: Element>(
    x: &SparseMatrix<T>,
    mapper: &BinMapper,
    min_rows: usize,
    cancel: &Cancel,
) -> Result<Option<(FeatureUse, Vec<usize>, SparseRows)>> {
    x.check_no_infinity()?;
    let (n, p) = (x.n_rows(), x.n_cols());
    // Every feature's bins, unfiltered, for the counts.
    let mut all_offsets = with_capacity::<usize>(p + 1, "the bin offsets")?;
    let mut total = 0usize;
    for fb in &mapper.features {
        all_offsets.push(total);
        total += fb.n_bins();
    }
    all_offsets.push(total);
    let mut counts = count_stored(x, mapper, &all_offsets, cancel)?;
    let mut modes = with_capacity::<(usize, u64)>(p, "the feature modes")?;
    let mut zero_codes = with_capacity::<usize>(p, "the codes of zero")?;
    for (j, fb) in mapper.features.iter().enumerate() {
        let bins = &mut counts[all_offsets[j]..all_offsets[j + 1]];
        let stored: u64 = bins.iter().sum();
        let zero = fb.bin(0.0);
        bins[zero] += n as u64 - stored;
        zero_codes.push(zero);
        modes.push(mode(bins.iter().copied()));
    }
    drop(counts);
    let features = FeatureUse::from_modes(&modes, n, min_rows)?;
    let Some(offsets) = features.sparse_offsets(&modes, n, mapper)? else {
        return Ok(None);
    };
    // What each feature writes: its code for a stored value unless that is
    // its default bin; for a row without a stored value, the code of zero
    // when that is not the default bin (`zero_entry`).
    let plan = Plan {
        mapper,
        offsets: &offsets,
        features: &features,
        zero_entry: features
            .used
            .iter()
            .zip(&features.default_bins)
            .zip(&zero_codes)
            .enumerate()
            .filter(|&(_, ((&used, &d), &z))| used && d != Some(z))
            .map(|(j, (_, &z))| (j, (offsets[j] + z) as u32))
            .collect(),
    };
    let sparse = match x.layout() {
        SparseLayout::Csr => plan.rows_of_csr(x, cancel)?,
        SparseLayout::Csc => plan.rows_of_csc(x, cancel)?,
    };
    Ok(Some((features, offsets, sparse)))
}

/// Per bin of every feature (at `offsets`), the stored values it holds.
/// One task per thread, each counting a share of the majors into a buffer
/// of its own (integer counts: the sum does not depend on the split).
fn count_stored<T: Element>(
    x: &SparseMatrix<T>,
    mapper: &BinMapper,
    offsets: &[usize],
    cancel: &Cancel,
) -> Result<Vec<u64>> {
    let total = *offsets.last().unwrap_or(&0);
    let majors = x.major_count();
    let layout = x.layout();
    let tasks = rayon::current_num_threads().clamp(1, majors.div_ceil(MAJOR_BLOCK).max(1));
    let share = majors.div_ceil(tasks);
    let parts = (0..tasks)
        .into_par_iter()
        .map(|t| -> Result<Vec<u32>> {
            let mut counts = filled_vec(total, 0u32, "the bin counts")?;
            for k in t * share..((t + 1) * share).min(majors) {
                if k % MAJOR_BLOCK == 0 {
                    cancel.check()?;
                }
                let (idx, vals) = x.major(k);
                for (&i, v) in idx.iter().zip(vals) {
                    let j = match layout {
                        SparseLayout::Csr => i as usize,
                        SparseLayout::Csc => k,
                    };
                    counts[offsets[j] + mapper.features[j].bin(v.to_f64())] += 1;
                }
            }
            Ok(counts)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut merged = filled_vec(total, 0u64, "the bin counts")?;
    for part in parts {
        merged
            .iter_mut()
            .zip(part)
            .for_each(|(m, c)| *m += u64::from(c));
    }
    Ok(merged)
}

/// What the sparse rows hold, feature by feature.
struct Plan<'a> {
    mapper: &'a BinMapper,
    offsets: &'a [usize],
    features: &'a FeatureUse,
    /// Increasing features whose rows without a stored value have an
    /// entry, with that entry (the global bin of zero's code).
    zero_entry: Vec<(usize, u32)>,
}

impl Plan<'_> {
    /// The entry of a stored value `v` of feature `j`, if it has one.
    #[inline]
    fn stored_entry(&self, j: usize, v: f64) -> Option<u32> {
        if !self.features.used[j] {
            return None;
        }
        let code = self.mapper.features[j].bin(v);
        (self.features.default_bins[j] != Some(code)).then(|| (self.offsets[j] + code) as u32)
    }

    /// Calls `emit` with row `r`'s entries of a CSR matrix, in increasing
    /// feature order: its stored values merged with the zero entries of the
    /// features it does not store.
    #[inline]
    fn row_entries<T: Element>(&self, x: &SparseMatrix<T>, r: usize, mut emit: impl FnMut(u32)) {
        let (idx, vals) = x.major(r);
        let mut zeros = self.zero_entry.iter().peekable();
        for (&j, v) in idx.iter().zip(vals) {
            let j = j as usize;
            while let Some(&&(z, e)) = zeros.peek() {
                if z > j {
                    break;
                }
                zeros.next();
                if z < j {
                    emit(e);
                }
            }
            if let Some(e) = self.stored_entry(j, v.to_f64()) {
                emit(e);
            }
        }
        zeros.for_each(|&(_, e)| emit(e));
    }

    fn rows_of_csr<T: Element>(&self, x: &SparseMatrix<T>, cancel: &Cancel) -> Result<SparseRows> {
        let n = x.n_rows();
        let mut row_ptr = filled_vec(n + 1, 0usize, "the sparse row starts")?;
        row_ptr[1..]
            .par_chunks_mut(MAJOR_BLOCK)
            .enumerate()
            .for_each(|(b, lens)| {
                if cancel.is_set() {
                    return;
                }
                for (k, len) in lens.iter_mut().enumerate() {
                    self.row_entries(x, b * MAJOR_BLOCK + k, |_| *len += 1);
                }
            });
        cancel.check()?;
        let mut bins = entries_after_counts(&mut row_ptr)?;
        row_blocks(&mut bins, &row_ptr, MAJOR_BLOCK)
            .into_par_iter()
            .for_each(|(r0, out)| {
                if cancel.is_set() {
                    return;
                }
                let mut at = 0;
                for r in r0..(r0 + MAJOR_BLOCK).min(n) {
                    self.row_entries(x, r, |e| {
                        out[at] = e;
                        at += 1;
                    });
                }
            });
        cancel.check()?;
        Ok(SparseRows { row_ptr, bins })
    }

    /// CSC: features in increasing order append to each row's entries.
    fn rows_of_csc<T: Element>(&self, x: &SparseMatrix<T>, cancel: &Cancel) -> Result<SparseRows> {
        let (n, p) = (x.n_rows(), x.n_cols());
        let mut zero_of = filled_vec(p, None, "the zero entries")?;
        for &(j, e) in &self.zero_entry {
            zero_of[j] = Some(e);
        }
        // Visits feature j's entries in row order: (row, entry).
        let visit = |j: usize, f: &mut dyn FnMut(usize, u32)| {
            let (idx, vals) = x.major(j);
            let mut stored = idx.iter().zip(vals).peekable();
            match zero_of[j] {
                None => {
                    for (&i, v) in stored {
                        if let Some(e) = self.stored_entry(j, v.to_f64()) {
                            f(i as usize, e);
                        }
                    }
                }
                Some(zero) => {
                    for r in 0..n {
                        match stored.next_if(|(i, _)| **i as usize == r) {
                            Some((_, v)) => {
                                if let Some(e) = self.stored_entry(j, v.to_f64()) {
                                    f(r, e);
                                }
                            }
                            None => f(r, zero),
                        }
                    }
                }
            }
        };
        let mut row_ptr = filled_vec(n + 1, 0usize, "the sparse row starts")?;
        for j in 0..p {
            if j % MAJOR_BLOCK == 0 {
                cancel.check()?;
            }
            visit(j, &mut |r, _| row_ptr[r + 1] += 1);
        }
        let mut bins = entries_after_counts(&mut row_ptr)?;
        let mut next = filled_vec(n, 0usize, "the sparse row cursors")?;
        next.copy_from_slice(&row_ptr[..n]);
        for j in 0..p {
            if j % MAJOR_BLOCK == 0 {
                cancel.check()?;
            }
            visit(j, &mut |r, e| {
                bins[next[r]] = e;
                next[r] += 1;
            });
        }
        Ok(SparseRows { row_ptr, bins })
    }
}
