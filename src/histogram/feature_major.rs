//! The feature-major kernel: a node's rows over a group of features, read
//! from the column-major codes, a few features per pass.
use std::ops::Range;

use super::even_runs::even_sizes;
use super::prefetch::{PREFETCH_AHEAD, prefetch};
use super::{BinSums, Gradients, HistSliceMut};
use crate::data::dataset::BinCode;

/// F features' sums over positions `block` of `rows` (every row when
/// ALL_ROWS, and then `rows` is unused), added to `sums`. `gh`/`w` are in
/// the same order as `rows` (gathered) or full-length for the root.
///
/// A row's gradients are loaded once for all F features, and each bin
/// still sums its rows in order. A feature's bins fit in L1 however they
/// are laid out, so here the sums go to one record `A` per bin (one add
/// per row, where the split layout would need two read-modify-writes: a
/// 32-byte `BinStats`, or a 16-byte `GhSums` without counts and weights)
/// and are copied out at the end.
#[inline(always)]
fn build_features_body<
    C: BinCode,
    A: BinSums,
    const ALL_ROWS: bool,
    const WEIGHTED: bool,
    const F: usize,
>(
    cols: [&[C]; F],
    rows: &[u32],
    gh: &[[f64; 2]],
    w: &[f64],
    sums: [&mut [A]; F],
    skips: [usize; F],
    block: Range<usize>,
) {
    let gh = &gh[block.clone()];
    let (cols, rows) = if ALL_ROWS {
        (cols.map(|c| &c[block.clone()]), &[][..])
    } else {
        (cols, &rows[block.clone()])
    };
    let lo = block.start;
    for (k, &gh) in gh.iter().enumerate() {
        if !ALL_ROWS && let Some(&ahead) = rows.get(k + PREFETCH_AHEAD) {
            for col in &cols {
                prefetch(col.as_ptr().wrapping_add(ahead as usize));
            }
        }
        let one = A::row::<WEIGHTED>(gh, w, lo + k);
        for f in 0..F {
            let code = if ALL_ROWS {
                cols[f][k]
            } else {
                cols[f][rows[k] as usize]
            }
            .idx();
            if code != skips[f] {
                debug_assert!(code < sums[f].len());
                // SAFETY: `sums[f]` has one record per bin of its feature, and
                // the dataset's codes are below its bin count (see
                // `BinnedDataset`).
                unsafe { sums[f].get_unchecked_mut(code) }.add(&one);
            }
        }
    }
}

/// Features per call of the feature-major kernel (their bins and codes
/// stay in L1 together).
pub(super) const KERNEL_FEATURES: usize = 4;

/// `build_features` for F = `cols.len()` features.
fn features_n<C: BinCode, A: BinSums, const F: usize>(
    cols: &[&[C]],
    rows: Option<&[u32]>,
    grads: &Gradients,
    w: &[f64],
    sums: &mut [Vec<A>],
    skips: &[usize],
    block: Range<usize>,
) {
    let cols: [&[C]; F] = std::array::from_fn(|f| cols[f]);
    let skips: [usize; F] = std::array::from_fn(|f| skips[f]);
    let mut sums = sums.iter_mut();
    let sums: [&mut [A]; F] =
        std::array::from_fn(|_| sums.next().map_or(&mut [][..], |s| &mut s[..]));
    let gh = grads.gh;
    match (rows, grads.weights.is_some()) {
        (None, false) => {
            build_features::<C, A, true, false, F>(cols, &[], gh, w, sums, skips, block)
        }
        (None, true) => build_features::<C, A, true, true, F>(cols, &[], gh, w, sums, skips, block),
        (Some(r), false) => {
            build_features::<C, A, false, false, F>(cols, r, gh, w, sums, skips, block)
        }
        (Some(r), true) => {
            build_features::<C, A, false, true, F>(cols, r, gh, w, sums, skips, block)
        }
    }
}

/// Rows per block of the feature-major kernel: a group of features walks
/// the rows block by block, so a block's gradients (256 KiB) are read from
/// L2 by every feature of the group, not streamed again per feature.
/// Each bin still sums its rows in order.
pub(super) const FEATURE_BLOCK_ROWS: usize = 16 * 1024;

dispatch_avx2! {
    /// F features' sums over a block of rows (see `build_features_body`).
    fn build_features / build_features_avx2 = build_features_body<C: BinCode, A: BinSums; const ALL_ROWS: bool, const WEIGHTED: bool, const F: usize>(
        cols: [&[C]; F], rows: &[u32], gh: &[[f64; 2]], w: &[f64], sums: [&mut [A]; F], skips: [usize; F], block: Range<usize>)
}

/// One task of the feature-major kernel: a group of features over the
/// node's `m` rows (`rows`, or every row when None).
pub(super) struct GroupTask<'a, C> {
    pub(super) codes: &'a [C],
    pub(super) n_rows: usize,
    pub(super) defaults: &'a [Option<usize>],
    pub(super) rows: Option<&'a [u32]>,
    pub(super) grads: &'a Gradients<'a>,
    pub(super) m: usize,
}

impl<C: BinCode> GroupTask<'_, C> {
    /// Sums the group's features into records `A`, block by block of rows,
    /// then stores them in the group's histogram slices.
    pub(super) fn run<A: BinSums>(&self, group: Vec<(usize, HistSliceMut)>) {
        let (rows, grads, n_rows) = (self.rows, self.grads, self.n_rows);
        let w = grads.weights.unwrap_or(&[]);
        let mut sums: Vec<Vec<A>> = group
            .iter()
            .map(|(_, h)| vec![A::default(); h.gh.len()])
            .collect();
        let cols: Vec<&[C]> = group
            .iter()
            .map(|(j, _)| &self.codes[j * n_rows..(j + 1) * n_rows])
            .collect();
        let skips: Vec<usize> = group
            .iter()
            .map(|(j, _)| self.defaults[*j].unwrap_or(usize::MAX))
            .collect();
        let passes = even_sizes(cols.len(), cols.len().div_ceil(KERNEL_FEATURES));
        for lo in (0..self.m).step_by(FEATURE_BLOCK_ROWS) {
            let block = lo..(lo + FEATURE_BLOCK_ROWS).min(self.m);
            let mut first = 0;
            for &len in &passes {
                let f = first..first + len;
                first += len;
                let (c, k, s) = (&cols[f.clone()], &skips[f.clone()], &mut sums[f]);
                let b = block.clone();
                match len {
                    4 => features_n::<C, A, 4>(c, rows, grads, w, s, k, b),
                    3 => features_n::<C, A, 3>(c, rows, grads, w, s, k, b),
                    2 => features_n::<C, A, 2>(c, rows, grads, w, s, k, b),
                    _ => features_n::<C, A, 1>(c, rows, grads, w, s, k, b),
                }
            }
        }
        for ((_, mut h), s) in group.into_iter().zip(&sums) {
            h.store(s);
        }
    }
}
