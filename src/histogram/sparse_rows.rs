//! The sparse-row kernel: every feature of mostly-default data, summing
//! only each row's non-default entries.
use std::ops::Range;

use super::{BinStats, HistSliceMut};
use crate::alloc::filled_vec;
use crate::data::dataset::SparseRows;
use crate::error::Result;

dispatch_avx2! {
    /// The sparse-row kernel (see `build_sparse_chunk_body`): one 32-byte
    /// add per entry is one AVX instruction instead of two SSE2 ones.
    pub(super) fn build_sparse_chunk / build_sparse_chunk_avx2 = build_sparse_chunk_body<; const ALL_ROWS: bool, const WEIGHTED: bool>(
        sparse: &SparseRows, span: Range<usize>, rows: &[u32], gh: &[[f64; 2]], w: &[f64], hist: HistSliceMut) -> Result<()>
}

/// Sparse-row kernel: only the non-default entries of each row. `gh` and
/// `w` are indexed by row (random reads, but no separate gather pass: the
/// kernel already reads each row's entries at random). With ALL_ROWS the
/// rows are `span` and `rows` is unused; otherwise they are `rows`.
#[inline(always)]
fn build_sparse_chunk_body<const ALL_ROWS: bool, const WEIGHTED: bool>(
    sparse: &SparseRows,
    span: Range<usize>,
    rows: &[u32],
    gh: &[[f64; 2]],
    w: &[f64],
    mut hist: HistSliceMut,
) -> Result<()> {
    let n = if ALL_ROWS { span.len() } else { rows.len() };
    let row = |k: usize| {
        if ALL_ROWS {
            span.start + k
        } else {
            rows[k] as usize
        }
    };
    let entries: usize = (0..n)
        .map(|k| sparse.row_ptr[row(k) + 1] - sparse.row_ptr[row(k)])
        .sum();
    if entries * 4 < hist.gh.len() {
        // A few rows (deep nodes): a buffer of every bin would cost more to
        // zero and copy out than the rows cost to add in place. Each bin
        // still sums its rows in order from zero.
        hist.clear();
        for k in 0..n {
            let r = row(k);
            let one = BinStats::row::<WEIGHTED>(gh[r], w, r);
            for &b in &sparse.bins[sparse.row_ptr[r]..sparse.row_ptr[r + 1]] {
                let b = b as usize;
                hist.gh[b] = [hist.gh[b][0] + one.g, hist.gh[b][1] + one.h];
                if let Some(c) = hist.count.get_mut(b) {
                    *c += 1;
                }
                if let Some(s) = hist.weight.get_mut(b) {
                    *s += one.w;
                }
            }
        }
        return Ok(());
    }
    // One-hot data has few bins: as in the feature-major kernel, one 4-wide
    // add per entry into 32-byte records beats two read-modify-writes.
    let mut sums = filled_vec(hist.gh.len(), BinStats::default(), "a sparse histogram")?;
    for k in 0..n {
        let r = row(k);
        let one = BinStats::row::<WEIGHTED>(gh[r], w, r);
        for &b in &sparse.bins[sparse.row_ptr[r]..sparse.row_ptr[r + 1]] {
            debug_assert!((b as usize) < sums.len());
            // SAFETY: sparse rows hold global bin indices below the dataset's
            // bin total (built from its codes; private to the crate), and
            // `build` asserts that the histogram has that many bins.
            unsafe { sums.get_unchecked_mut(b as usize) }.add(&one);
        }
    }
    hist.store(&sums);
    Ok(())
}
