//! The row-major kernel: a row subset over every feature (or a share of
//! them), reading each row's codes from one cache line.
use std::cell::RefCell;
use std::ops::Range;

use super::HistSliceMut;
use super::prefetch::{PREFETCH_AHEAD, prefetch};
use crate::data::dataset::BinCode;

thread_local! {
    /// A row-major task's gradients (and weights) in node order: its first
    /// tile reads them by row and keeps them here for the other tiles, so
    /// they come from L2 instead of another random read.
    static NODE_ORDER_GH: RefCell<Kept> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Gradients and weights of a task's rows in node order.
type Kept = (Vec<[f64; 2]>, Vec<f64>);

/// One tile of the row-major kernel: features `features` of `row_codes`
/// (p codes per row), each feature's first bin at `offsets` in the tile.
struct Tile<'a, C> {
    row_codes: &'a [C],
    p: usize,
    features: Range<usize>,
    offsets: Vec<usize>,
}

impl<C: BinCode> Tile<'_, C> {
    /// Adds the rows `rows` to the tile's bins `out`. `src` holds (g, h) and
    /// w by row when BY_ROW, else in the order of `rows`; KEEP appends them
    /// to `keep` in the order of `rows`.
    #[inline(always)]
    fn pass<const WEIGHTED: bool, const COUNTED: bool, const BY_ROW: bool, const KEEP: bool>(
        &self,
        rows: &[u32],
        (gh, w): (&[[f64; 2]], &[f64]),
        keep: &mut Kept,
        out: HistSliceMut,
    ) {
        let (row_codes, p, f0, f1) = (
            self.row_codes,
            self.p,
            self.features.start,
            self.features.end,
        );
        // Equal-length views of the tile, so one bounds check covers them.
        let bins = out.gh;
        let count = &mut out.count[..if COUNTED { bins.len() } else { 0 }];
        let weight = &mut out.weight[..if WEIGHTED { bins.len() } else { 0 }];
        for (k, &r) in rows.iter().enumerate() {
            if let Some(&ahead) = rows.get(k + PREFETCH_AHEAD) {
                let ahead = ahead as usize;
                prefetch(row_codes.as_ptr().wrapping_add(ahead * p + f0));
                if BY_ROW {
                    prefetch(gh.as_ptr().wrapping_add(ahead));
                }
            }
            let r = r as usize;
            let at = if BY_ROW { r } else { k };
            let [g, h] = gh[at];
            let wk = if WEIGHTED { w[at] } else { 0.0 };
            if KEEP {
                keep.0.push([g, h]);
                if WEIGHTED {
                    keep.1.push(wk);
                }
            }
            let codes = &row_codes[r * p + f0..r * p + f1];
            for (code, &off) in codes.iter().zip(&self.offsets) {
                let i = off + code.idx();
                debug_assert!(i < bins.len());
                // SAFETY: a feature's codes are below its bin count (binning
                // only writes `FeatureBins::bin` values, and the dataset's
                // fields are private to the crate), and its bins lie within
                // the tile at `off`; counts and weights have the bins' length.
                let bin = unsafe { bins.get_unchecked_mut(i) };
                bin[0] += g;
                bin[1] += h;
                if COUNTED {
                    *unsafe { count.get_unchecked_mut(i) } += 1;
                }
                if WEIGHTED {
                    *unsafe { weight.get_unchecked_mut(i) } += wk;
                }
            }
        }
    }
}

/// Row-major kernel: the features in `features` (all when None) of each
/// row in `rows` (one cache line per row); `hist` holds those features' bins.
/// `gh` and `w` are indexed by row: the first tile reads them at random
/// beside the row's codes (no separate gather pass over the node), the
/// other tiles read the copy it kept.
///
/// Compiled once: its updates are two-lane (g, h) adds, and an AVX2 copy
/// (VEX encoding) measured no faster.
#[inline(never)]
pub(super) fn build_rows_chunk<C: BinCode, const WEIGHTED: bool, const COUNTED: bool>(
    row_codes: &[C],
    offsets: &[usize],
    features: Option<Range<usize>>,
    rows: &[u32],
    gh: &[[f64; 2]],
    w: &[f64],
    mut hist: HistSliceMut,
) {
    let p = offsets.len() - 1;
    let features = features.unwrap_or(0..p);
    let base = offsets[features.start];
    hist.clear();
    NODE_ORDER_GH.with_borrow_mut(|kept| {
        // Features in tiles of TILE_BINS bins: the chunk's rows are walked
        // once per tile, so each bin still sees its rows in row order.
        let mut f0 = features.start;
        let mut first = true;
        while f0 < features.end {
            let mut f1 = f0 + 1;
            while f1 < features.end && offsets[f1 + 1] - offsets[f0] <= TILE_BINS {
                f1 += 1;
            }
            let (lo, hi) = (offsets[f0] - base, offsets[f1] - base);
            let tile = Tile {
                row_codes,
                p,
                features: f0..f1,
                offsets: offsets[f0..f1].iter().map(|o| o - base - lo).collect(),
            };
            let out = hist.bins(lo..hi);
            if !first {
                let kept = (&kept.0[..], &kept.1[..]);
                tile.pass::<WEIGHTED, COUNTED, false, false>(
                    rows,
                    kept,
                    &mut (Vec::new(), Vec::new()),
                    out,
                );
            } else if f1 < features.end {
                kept.0.clear();
                kept.1.clear();
                tile.pass::<WEIGHTED, COUNTED, true, true>(rows, (gh, w), kept, out);
            } else {
                tile.pass::<WEIGHTED, COUNTED, true, false>(
                    rows,
                    (gh, w),
                    &mut (Vec::new(), Vec::new()),
                    out,
                );
            }
            first = false;
            f0 = f1;
        }
    });
}

/// Bins per feature tile of the row-major kernel (80 KiB of (g, h) bins and
/// counts). Measured, not derived: each tile re-reads the chunk's rows, so
/// smaller tiles cost more passes, and larger ones (or no tiling) more
/// cache misses.
pub(super) const TILE_BINS: usize = 4096;
