//! Sparse rows: each row's non-default codes as global histogram bins,
//! built from feature-major codes (and filled by `sparse_binning.rs`
//! straight from a sparse matrix).
use rayon::prelude::*;

use super::codes::{BinCode, BinCodes, ROW_BLOCK, column_slices};
use super::feature_use::FeatureUse;
use crate::cancel::Cancel;
use crate::error::Result;

/// Compressed rows: for row i, `bins[row_ptr[i]..row_ptr[i + 1]]` are the
/// global histogram indices (feature offset + code) of its non-default entries.
#[derive(Clone, Debug)]
pub struct SparseRows {
    pub row_ptr: Vec<usize>,
    pub bins: Vec<u32>,
}

impl SparseRows {
    /// Memory the rows take.
    pub fn bytes(&self) -> usize {
        self.row_ptr.len() * std::mem::size_of::<usize>() + self.bins.len() * 4
    }
}

/// Sparse rows from the feature-major codes: the codes of used features
/// other than their default bins (see `FeatureUse`), at `offsets`.
pub(super) fn build_sparse_rows(
    codes: &BinCodes,
    n: usize,
    features: &FeatureUse,
    offsets: &[usize],
    cancel: &Cancel,
) -> Result<SparseRows> {
    match codes {
        BinCodes::U8(c) => sparse_rows_of(c, n, features, offsets, cancel),
        BinCodes::U16(c) => sparse_rows_of(c, n, features, offsets, cancel),
    }
}

/// The code a feature's sparse rows leave out: its default bin; an unused
/// feature leaves out every code (`SKIP_ALL`); usize::MAX keeps every code.
const SKIP_ALL: usize = usize::MAX - 1;

fn sparse_rows_of<C: BinCode>(
    codes: &[C],
    n: usize,
    features: &FeatureUse,
    offsets: &[usize],
    cancel: &Cancel,
) -> Result<SparseRows> {
    let skip: Vec<usize> = features
        .default_bins
        .iter()
        .zip(&features.used)
        .map(|(d, &used)| {
            if used {
                d.unwrap_or(usize::MAX)
            } else {
                SKIP_ALL
            }
        })
        .collect();
    // Row lengths into row_ptr[1..], then their running sum in place.
    // Blocks of rows, each reading its slice of every column (in cache).
    let mut row_ptr = crate::alloc::filled_vec(n + 1, 0usize, "the sparse row starts")?;
    row_ptr[1..]
        .par_chunks_mut(ROW_BLOCK)
        .enumerate()
        .for_each(|(b, counts)| {
            if cancel.is_set() {
                return;
            }
            let cols = column_slices(codes, n, b * ROW_BLOCK, counts.len());
            for (col, &s) in cols.zip(&skip) {
                if s == SKIP_ALL {
                    continue;
                }
                for (count, c) in counts.iter_mut().zip(col) {
                    *count += usize::from(c.idx() != s);
                }
            }
        });
    cancel.check()?;
    let mut bins = entries_after_counts(&mut row_ptr)?;
    let blocks = row_blocks(&mut bins, &row_ptr, ROW_BLOCK);
    let row_ptr_ref = &row_ptr;
    blocks.into_par_iter().for_each(|(r0, out)| {
        if cancel.is_set() {
            return;
        }
        let m = (r0 + ROW_BLOCK).min(n) - r0;
        // Next free slot of each row, within the block; features are taken
        // in order, so a row's entries are in increasing bin order.
        let mut next: Vec<usize> = row_ptr_ref[r0..r0 + m]
            .iter()
            .map(|&a| a - row_ptr_ref[r0])
            .collect();
        let cols = column_slices(codes, n, r0, m);
        for ((col, &s), &offset) in cols.zip(&skip).zip(offsets) {
            if s == SKIP_ALL {
                continue;
            }
            for (slot, c) in next.iter_mut().zip(col) {
                if c.idx() != s {
                    out[*slot] = (offset + c.idx()) as u32;
                    *slot += 1;
                }
            }
        }
    });
    cancel.check()?;
    Ok(SparseRows { row_ptr, bins })
}

/// Turns row lengths (in `row_ptr[1..]`) into row starts, and returns the
/// buffer for every row's entries.
pub(super) fn entries_after_counts(row_ptr: &mut [usize]) -> Result<Vec<u32>> {
    for i in 1..row_ptr.len() {
        row_ptr[i] += row_ptr[i - 1];
    }
    crate::alloc::filled_vec(*row_ptr.last().unwrap_or(&0), 0u32, "the sparse rows")
}

/// `bins` cut into the entries of blocks of `block` rows, each with its
/// first row: every block fills its own slice, in row order.
pub(super) fn row_blocks<'b>(
    bins: &'b mut [u32],
    row_ptr: &[usize],
    block: usize,
) -> Vec<(usize, &'b mut [u32])> {
    let n = row_ptr.len() - 1;
    let mut blocks = Vec::with_capacity(n.div_ceil(block));
    let mut rest = bins;
    for r0 in (0..n).step_by(block) {
        let r1 = (r0 + block).min(n);
        let (part, tail) = rest.split_at_mut(row_ptr[r1] - row_ptr[r0]);
        blocks.push((r0, part));
        rest = tail;
    }
    blocks
}
