//! Gradient / hessian / weight / count histograms of a node, per feature.
//!
//! The hot loop of training. Each feature's histogram is built by one task
//! in row order, so sums (f64) do not depend on the thread count.
use std::ops::Range;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::alloc::{filled_vec, grow_to};
use crate::data::dataset::{BinCode, BinCodes, BinnedDataset};
use crate::error::Result;

mod feature_major;
mod pool;
mod prefetch;
mod row_major;
mod sparse_rows;
mod subtract;

pub use pool::{BuildScratch, HistogramPool};
pub use prefetch::{PREFETCH_AHEAD, prefetch};
pub use subtract::{subtract_features_into, subtract_into};

use feature_major::{BinSums, GhSums, GroupTask};
use row_major::build_rows_chunk;
use sparse_rows::build_sparse_chunk;

/// Sums over the rows that fall in one bin (or one node).
///
/// Aligned to its 32-byte size so that no record of a `Vec<BinStats>`
/// straddles two cache lines (a split load and store per row otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[repr(C, align(32))]
pub struct BinStats {
    /// Σ w·g
    pub g: f64,
    /// Σ w·h
    pub h: f64,
    /// Σ w
    pub w: f64,
    /// number of rows
    pub n: f64,
}

impl BinStats {
    #[inline(always)]
    pub fn add(&mut self, o: &BinStats) {
        self.g += o.g;
        self.h += o.h;
        self.w += o.w;
        self.n += o.n;
    }
    #[inline(always)]
    pub fn sub(&self, o: &BinStats) -> BinStats {
        BinStats {
            g: self.g - o.g,
            h: self.h - o.h,
            w: self.w - o.w,
            n: self.n - o.n,
        }
    }
}

impl BinStats {
    /// One row's contribution. Σw counts 1 per row when unweighted, so a
    /// bin update is one 4-wide add (a single AVX instruction).
    #[inline(always)]
    fn row<const WEIGHTED: bool>([g, h]: [f64; 2], w: &[f64], k: usize) -> BinStats {
        BinStats {
            g,
            h,
            w: if WEIGHTED { w[k] } else { 1.0 },
            n: 1.0,
        }
    }
}

/// A node's histogram, one entry per bin of every feature: (Σw·g, Σw·h),
/// the row count, and Σw when rows are weighted (otherwise Σw is the count).
/// Keeping (g, h) in 16-byte bins with the counts beside them halves the
/// memory a bin update touches compared with one 32-byte record per bin.
/// When every row's hessian is exactly 1 (unweighted squared error), Σh is
/// the row count, exactly, so `count` is left empty and not maintained.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    pub gh: Vec<[f64; 2]>,
    /// Rows per bin; empty when every hessian is 1 (then Σh is the count).
    pub count: Vec<u32>,
    /// Σw per bin; empty when the rows are unweighted.
    pub weight: Vec<f64>,
}

impl Histogram {
    /// An unweighted all-zero histogram of `len` bins, or `OutOfMemory`.
    pub fn new(len: usize) -> Result<Self> {
        Ok(Histogram {
            gh: filled_vec(len, [0.0; 2], "a histogram")?,
            count: filled_vec(len, 0, "a histogram's counts")?,
            weight: Vec::new(),
        })
    }

    /// Bytes of a histogram of `len` bins with every array present.
    pub fn bytes(len: usize) -> usize {
        len.saturating_mul(std::mem::size_of::<[f64; 2]>() + 4 + 8)
    }

    /// A histogram holding `stats` (Σw kept separately).
    pub fn from_stats(stats: &[BinStats]) -> Self {
        Histogram {
            gh: stats.iter().map(|s| [s.g, s.h]).collect(),
            count: stats.iter().map(|s| s.n as u32).collect(),
            weight: stats.iter().map(|s| s.w).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.gh.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gh.is_empty()
    }

    /// Keeps Σw per bin only when the rows are weighted, and counts only
    /// when the hessians are not all 1.
    fn set_layout(&mut self, weighted: bool, counted: bool) -> Result<()> {
        let len = self.gh.len();
        if weighted {
            grow_to(&mut self.weight, len, 0.0, "a histogram's weights")?;
        } else {
            self.weight.clear();
        }
        if counted {
            grow_to(&mut self.count, len, 0, "a histogram's counts")?;
        } else {
            self.count.clear();
        }
        Ok(())
    }

    /// All bins.
    pub fn view(&self) -> HistSlice<'_> {
        HistSlice {
            gh: &self.gh,
            count: &self.count,
            weight: &self.weight,
        }
    }

    /// The bins in `range` (one feature's, typically).
    pub fn slice(&self, range: Range<usize>) -> HistSlice<'_> {
        self.view().slice(range)
    }

    fn view_mut(&mut self) -> HistSliceMut<'_> {
        HistSliceMut {
            gh: &mut self.gh,
            count: &mut self.count,
            weight: &mut self.weight,
        }
    }

    /// The sums of bin `i`.
    pub fn stats(&self, i: usize) -> BinStats {
        self.view().stats(i)
    }
}

/// Borrowed bins of a histogram (all of them, or one feature's).
#[derive(Clone, Copy, Debug)]
pub struct HistSlice<'a> {
    pub gh: &'a [[f64; 2]],
    /// Empty when every hessian is 1.
    pub count: &'a [u32],
    /// Empty when unweighted.
    pub weight: &'a [f64],
}

impl<'a> HistSlice<'a> {
    pub fn len(&self) -> usize {
        self.gh.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gh.is_empty()
    }

    pub fn slice(&self, range: Range<usize>) -> HistSlice<'a> {
        HistSlice {
            gh: &self.gh[range.clone()],
            count: if self.count.is_empty() {
                &[]
            } else {
                &self.count[range.clone()]
            },
            weight: if self.weight.is_empty() {
                &[]
            } else {
                &self.weight[range]
            },
        }
    }

    /// The sums of bin `i`; unweighted, Σw is the row count.
    #[inline(always)]
    pub fn stats(&self, i: usize) -> BinStats {
        let [g, h] = self.gh[i];
        let n = if self.count.is_empty() {
            h
        } else {
            self.count[i] as f64
        };
        BinStats {
            g,
            h,
            w: if self.weight.is_empty() {
                n
            } else {
                self.weight[i]
            },
            n,
        }
    }
}

/// Mutable bins of a histogram; `count` is empty when every hessian is 1,
/// `weight` when unweighted.
struct HistSliceMut<'a> {
    gh: &'a mut [[f64; 2]],
    count: &'a mut [u32],
    weight: &'a mut [f64],
}

impl<'a> HistSliceMut<'a> {
    fn clear(&mut self) {
        self.gh.fill([0.0; 2]);
        self.count.fill(0);
        self.weight.fill(0.0);
    }

    fn split_at(self, mid: usize) -> (HistSliceMut<'a>, HistSliceMut<'a>) {
        let (g0, g1) = self.gh.split_at_mut(mid);
        let (c0, c1) = if self.count.is_empty() {
            (Default::default(), Default::default())
        } else {
            self.count.split_at_mut(mid)
        };
        let (w0, w1) = if self.weight.is_empty() {
            (Default::default(), Default::default())
        } else {
            self.weight.split_at_mut(mid)
        };
        (
            HistSliceMut {
                gh: g0,
                count: c0,
                weight: w0,
            },
            HistSliceMut {
                gh: g1,
                count: c1,
                weight: w1,
            },
        )
    }

    /// The bins `range` (of counts and weights too, where kept).
    fn bins(&mut self, range: Range<usize>) -> HistSliceMut<'_> {
        HistSliceMut {
            gh: &mut self.gh[range.clone()],
            count: if self.count.is_empty() {
                &mut []
            } else {
                &mut self.count[range.clone()]
            },
            weight: if self.weight.is_empty() {
                &mut []
            } else {
                &mut self.weight[range]
            },
        }
    }

    /// Stores `sums` (one record per bin, all bins) from a feature-major or
    /// sparse-row kernel.
    fn store<A: BinSums>(&mut self, sums: &[A]) {
        for (i, s) in sums.iter().enumerate() {
            s.store(self, i);
        }
    }

    /// Stores `s` in bin `i`.
    fn set(&mut self, i: usize, s: &BinStats) {
        self.gh[i] = [s.g, s.h];
        if !self.count.is_empty() {
            self.count[i] = s.n as u32;
        }
        if !self.weight.is_empty() {
            self.weight[i] = s.w;
        }
    }

    fn as_slice(&self) -> HistSlice<'_> {
        HistSlice {
            gh: self.gh,
            count: self.count,
            weight: self.weight,
        }
    }
}

/// Per-row (weighted) gradient and hessian, plus optional row weights.
pub struct Gradients<'a> {
    pub gh: &'a [[f64; 2]],
    /// `None` when every weight is 1: then Σw = n and the kernel skips it.
    pub weights: Option<&'a [f64]>,
    /// Every hessian in `gh` is exactly 1 (unweighted squared error): then
    /// Σh counts the rows and histograms keep no separate counts.
    pub unit_hessian: bool,
    /// Keep no row counts even though Σh is not the count: the split search
    /// bounds counts from hessians instead (`RowCounts::Bounded`).
    pub uncounted: bool,
}

impl<'a> Gradients<'a> {
    /// Gradients with hessians of any value.
    pub fn new(gh: &'a [[f64; 2]], weights: Option<&'a [f64]>) -> Self {
        Gradients {
            gh,
            weights,
            unit_hessian: false,
            uncounted: false,
        }
    }

    /// Whether histograms keep row counts (they do unless Σh is the count
    /// or the search bounds counts instead).
    fn counted(&self) -> bool {
        !(self.uncounted || self.unit_hessian && self.weights.is_none())
    }
}

/// Below this many (row, feature) pairs a node's histogram is built on one thread.
const PARALLEL_MIN_WORK: usize = 32 * 1024;

#[allow(clippy::too_many_arguments)]
fn build_typed<C: BinCode>(
    codes: &[C],
    n_rows: usize,
    offsets: &[usize],
    defaults: &[Option<usize>],
    features: &[usize],
    rows: Option<&[u32]>,
    grads: &Gradients,
    hist: HistSliceMut,
) {
    // Split the histogram into per-feature slices for the active features.
    let mut slices: Vec<(usize, HistSliceMut)> = Vec::with_capacity(features.len());
    let mut rest = hist;
    let mut consumed = 0;
    for &j in features {
        let (_, tail) = rest.split_at(offsets[j] - consumed);
        let (mine, tail) = tail.split_at(offsets[j + 1] - offsets[j]);
        consumed = offsets[j + 1];
        rest = tail;
        slices.push((j, mine));
    }
    let m = rows.map_or(n_rows, |r| r.len());
    let work = m * features.len();
    // A task is a group of features; more groups than threads so that
    // work stealing can balance them. Small nodes are one group.
    let parallel = work >= PARALLEL_MIN_WORK;
    let n_groups = if parallel {
        2 * rayon::current_num_threads()
    } else {
        1
    };
    // Without counts or weights a bin is summed as (g, h) alone.
    let pairs = !grads.counted() && grads.weights.is_none();
    let run = |group: Vec<(usize, HistSliceMut)>| {
        let task = GroupTask {
            codes,
            n_rows,
            defaults,
            rows,
            grads,
            m,
        };
        if pairs {
            task.run::<GhSums>(group)
        } else {
            task.run::<BinStats>(group)
        }
    };
    let sizes = even_sizes(slices.len(), n_groups);
    let mut slices = slices.into_iter();
    let groups: Vec<Vec<_>> = sizes
        .into_iter()
        .map(|len| slices.by_ref().take(len).collect())
        .collect();
    if groups.len() > 1 {
        groups.into_par_iter().for_each(run);
    } else {
        groups.into_iter().for_each(run);
    }
}

/// `len` items cut into at most `parts` non-empty runs whose lengths differ
/// by at most one, the longer runs spread evenly: the halves rayon splits a
/// task list into then carry equal work (10 features in 4 groups are
/// 2, 3, 2, 3, not 3, 3, 3, 1).
fn even_sizes(len: usize, parts: usize) -> Vec<usize> {
    let parts = parts.clamp(1, len.max(1));
    let (base, extra) = (len / parts, len % parts);
    // Run i is longer when the line from (0, 0) to (parts, extra) crosses
    // an integer within it.
    (0..parts)
        .map(|i| base + (i + 1) * extra / parts - i * extra / parts)
        .filter(|&s| s > 0)
        .collect()
}

/// Rows per chunk below which a subset histogram is not split further: a
/// chunk costs a zeroed partial histogram and its reduction, so small
/// histograms (few bins, e.g. one-hot data) afford smaller chunks. At most
/// MAX_CHUNKS chunks. Depends only on sizes, never on the thread count.
fn rows_per_chunk(total_bins: usize) -> usize {
    (2 * total_bins).clamp(1024, 8192)
}
const MAX_CHUNKS: usize = 16;

/// Bins per task when partial histograms are summed.
const REDUCE_BLOCK: usize = 2048;

/// A kernel call: rows `lo..hi`, the features (all when None), the bins.
type ChunkTask<'a> = (usize, usize, Option<Range<usize>>, HistSliceMut<'a>);

/// Rows `lo..hi` into `out` as one task, or as `groups` tasks over equal
/// shares of the features (`offsets` = bin offsets) and their bins.
fn push_tasks<'a>(
    out: HistSliceMut<'a>,
    lo: usize,
    hi: usize,
    groups: usize,
    offsets: Option<&[usize]>,
    tasks: &mut Vec<ChunkTask<'a>>,
) {
    let Some(offsets) = offsets.filter(|_| groups > 1) else {
        tasks.push((lo, hi, None, out));
        return;
    };
    let p = offsets.len() - 1;
    let mut rest = out;
    let mut f_lo = 0;
    for g in 0..groups {
        let f_hi = p * (g + 1) / groups;
        let (mine, tail) = rest.split_at(offsets[f_hi] - offsets[f_lo]);
        tasks.push((lo, hi, Some(f_lo..f_hi), mine));
        rest = tail;
        f_lo = f_hi;
    }
}

fn run_tasks(
    tasks: Vec<ChunkTask>,
    run: &(impl Fn(usize, usize, Option<Range<usize>>, HistSliceMut) + Sync),
) {
    if tasks.len() == 1 {
        for (lo, hi, features, out) in tasks {
            run(lo, hi, features, out);
        }
    } else {
        tasks
            .into_par_iter()
            .for_each(|(lo, hi, features, out)| run(lo, hi, features, out));
    }
}

/// All features of a row subset via the row-major codes: fixed chunks of
/// rows (their number depends only on the row count) build partial
/// histograms in parallel, then partials are summed in chunk order, so the
/// result does not depend on the thread count.
///
/// `run(lo, hi, features, out)` builds rows `lo..hi` into `out`, for the
/// features in `features` (all when None). When there are fewer chunks than
/// twice the threads and `offsets` (the bin offsets) say the kernel can,
/// chunks are also split by features: each bin still sums its chunk's rows
/// in order, so the result is the same, bit for bit, whatever the thread count.
fn build_rows_chunked(
    m: usize,
    hist: &mut Histogram,
    partials: &mut Vec<Histogram>,
    offsets: Option<&[usize]>,
    run: impl Fn(usize, usize, Option<Range<usize>>, HistSliceMut) + Sync,
) -> Result<()> {
    let len = hist.len();
    let n_chunks = (m / rows_per_chunk(len)).clamp(1, MAX_CHUNKS);
    // Too few chunks to keep every thread busy: each chunk is also split by
    // features (grouping never changes a bin's sum, so neither do threads).
    let threads = rayon::current_num_threads();
    let groups = match offsets {
        Some(o)
            if threads > 1 && n_chunks < 2 * threads && m * (o.len() - 1) >= PARALLEL_MIN_WORK =>
        {
            (2 * threads).div_ceil(n_chunks).min(o.len() - 1)
        }
        _ => 1,
    };
    if n_chunks == 1 {
        let mut tasks = Vec::with_capacity(groups);
        push_tasks(hist.view_mut(), 0, m, groups, offsets, &mut tasks);
        run_tasks(tasks, &run);
        return Ok(());
    }
    let chunk = m.div_ceil(n_chunks);
    while partials.len() < n_chunks {
        partials.push(Histogram::new(len)?);
    }
    let (weighted, counted) = (!hist.weight.is_empty(), !hist.count.is_empty());
    let parts = &mut partials[..n_chunks];
    let mut tasks = Vec::with_capacity(n_chunks * groups);
    for (c, part) in parts.iter_mut().enumerate() {
        part.set_layout(weighted, counted)?;
        let rows = c * chunk..((c + 1) * chunk).min(m);
        push_tasks(
            part.view_mut(),
            rows.start,
            rows.end,
            groups,
            offsets,
            &mut tasks,
        );
    }
    run_tasks(tasks, &run);
    let parts = &*parts;
    let sum_into = |out: &mut [[f64; 2]], base: usize| {
        for (i, o) in out.iter_mut().enumerate() {
            let mut s = parts[0].gh[base + i];
            for part in &parts[1..] {
                let x = part.gh[base + i];
                s = [s[0] + x[0], s[1] + x[1]];
            }
            *o = s;
        }
    };
    let Histogram { gh, count, weight } = hist;
    gh.par_chunks_mut(REDUCE_BLOCK)
        .enumerate()
        .for_each(|(blk, out)| sum_into(out, blk * REDUCE_BLOCK));
    count
        .par_chunks_mut(REDUCE_BLOCK)
        .enumerate()
        .for_each(|(blk, out)| {
            let base = blk * REDUCE_BLOCK;
            for (i, c) in out.iter_mut().enumerate() {
                *c = parts.iter().map(|p| p.count[base + i]).sum();
            }
        });
    weight
        .par_chunks_mut(REDUCE_BLOCK)
        .enumerate()
        .for_each(|(blk, out)| {
            let base = blk * REDUCE_BLOCK;
            for (i, o) in out.iter_mut().enumerate() {
                let mut s = parts[0].weight[base + i];
                for part in &parts[1..] {
                    s += part.weight[base + i];
                }
                *o = s;
            }
        });
    Ok(())
}

/// Below this many rows a gather runs on one thread.
const PARALLEL_GATHER_MIN: usize = 16 * 1024;

/// `grads` (indexed by row) of `rows`, in the order of `rows`, into `gh`
/// and `w`.
fn gather<'s>(
    gh: &'s mut Vec<[f64; 2]>,
    w: &'s mut Vec<f64>,
    rows: &[u32],
    grads: &Gradients,
) -> Gradients<'s> {
    let m = rows.len();
    if gh.len() < m {
        // Within the reserved capacity (m ≤ n), so this never reallocates.
        gh.resize(m, [0.0; 2]);
    }
    let copy = |out: &mut [[f64; 2]], idx: &[u32]| {
        for (o, &r) in out.iter_mut().zip(idx) {
            *o = grads.gh[r as usize];
        }
    };
    if m >= PARALLEL_GATHER_MIN {
        gh[..m]
            .par_chunks_mut(8192)
            .zip(rows.par_chunks(8192))
            .for_each(|(o, r)| copy(o, r));
    } else {
        copy(&mut gh[..m], rows);
    }
    let weights = grads.weights.map(|weights| {
        w.clear();
        w.extend(rows.iter().map(|&r| weights[r as usize]));
        &w[..]
    });
    Gradients {
        gh: &gh[..m],
        weights,
        ..*grads
    }
}

/// Builds the histograms of `features` for a node into `hist` (length =
/// total bins; bins of other features are left untouched).
///
/// `grads` are indexed by row; `rows = None` means every row. `scratch`
/// holds buffers reused across calls; `total` holds the node's sums (used
/// to derive skipped default bins).
pub fn build(
    data: &BinnedDataset,
    features: &[usize],
    rows: Option<&[u32]>,
    grads: &Gradients,
    hist: &mut Histogram,
    scratch: &mut BuildScratch,
    total: &BinStats,
) -> Result<()> {
    // The sparse-row kernel indexes bins unchecked: the histogram must be this dataset's.
    assert_eq!(
        hist.len(),
        data.total_bins(),
        "a histogram of another dataset"
    );
    debug_assert_eq!(grads.gh.len(), data.n_rows);
    let all_features = features.len() == data.n_features();
    let weighted = grads.weights.is_some();
    let counted = grads.counted();
    hist.set_layout(weighted, counted)?;
    let offsets = &data.bin_offsets;
    let BuildScratch { partials, gh, w } = scratch;
    // The sparse-row and row-major kernels (every feature) read gradients
    // by row, beside each row's codes; the feature-major one reads them
    // gathered in node order.
    let by_row_kernel = all_features;
    let gathered;
    let grads = match rows {
        Some(r) if !by_row_kernel => {
            gathered = gather(gh, w, r, grads);
            &gathered
        }
        _ => grads,
    };
    let w = grads.weights.unwrap_or(&[]);
    macro_rules! chunks {
        ($r:expr, $codes:expr) => {
            build_rows_chunked($r.len(), hist, partials, Some(offsets), |lo, hi, f, out| {
                let (r, gh) = (&$r[lo..hi], grads.gh);
                let c = $codes;
                match (weighted, counted) {
                    (true, _) => build_rows_chunk::<_, true, true>(c, offsets, f, r, gh, w, out),
                    (false, true) => {
                        build_rows_chunk::<_, false, true>(c, offsets, f, r, gh, &[], out)
                    }
                    (false, false) => {
                        build_rows_chunk::<_, false, false>(c, offsets, f, r, gh, &[], out)
                    }
                }
            })
        };
    }
    let no_skip = data.sparse_rows.is_none();
    match (rows, &data.codes, &data.row_codes, &data.sparse_rows) {
        (Some(r), _, _, Some(sp)) if all_features => {
            build_rows_chunked(r.len(), hist, partials, None, |lo, hi, _, out| {
                let (rr, gh) = (&r[lo..hi], grads.gh);
                if weighted {
                    build_sparse_chunk::<false, true>(sp, 0..0, rr, gh, w, out)
                } else {
                    build_sparse_chunk::<false, false>(sp, 0..0, rr, gh, &[], out)
                }
            })?
        }
        (None, _, _, Some(sp)) if all_features => {
            build_rows_chunked(data.n_rows, hist, partials, None, |lo, hi, _, out| {
                let gh = grads.gh;
                if weighted {
                    build_sparse_chunk::<true, true>(sp, lo..hi, &[], gh, w, out)
                } else {
                    build_sparse_chunk::<true, false>(sp, lo..hi, &[], gh, &[], out)
                }
            })?
        }
        (Some(r), _, BinCodes::U8(c), None) if all_features => chunks!(r, c.as_slice())?,
        (Some(r), _, BinCodes::U16(c), None) if all_features => chunks!(r, c.as_slice())?,
        (_, BinCodes::U8(c), _, _) => build_typed(
            c,
            data.n_rows,
            offsets,
            &data.default_bins,
            features,
            rows,
            grads,
            hist.view_mut(),
        ),
        (_, BinCodes::U16(c), _, _) => build_typed(
            c,
            data.n_rows,
            offsets,
            &data.default_bins,
            features,
            rows,
            grads,
            hist.view_mut(),
        ),
    }
    // Default bins were skipped (by the sparse rows or the feature kernels):
    // their sums are the node total minus the feature's other bins.
    let skipped_dense_rows = rows.is_some() && all_features && no_skip;
    if !skipped_dense_rows {
        for &j in features {
            if let Some(d) = data.default_bins[j] {
                let (_, tail) = hist.view_mut().split_at(offsets[j]);
                let (mut h, _) = tail.split_at(offsets[j + 1] - offsets[j]);
                let mut rest = BinStats::default();
                let view = h.as_slice();
                for b in (0..view.len()).filter(|&b| b != d) {
                    rest.add(&view.stats(b));
                }
                h.set(d, &total.sub(&rest));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::feature_major::{FEATURE_BLOCK_ROWS, KERNEL_FEATURES};
    use super::row_major::TILE_BINS;
    use super::*;
    use crate::data::matrix::DenseMatrix;

    fn naive(
        data: &BinnedDataset,
        rows: &[u32],
        gh: &[[f64; 2]],
        w: Option<&[f64]>,
    ) -> Vec<BinStats> {
        let mut h = vec![BinStats::default(); data.total_bins()];
        for &r in rows {
            let r = r as usize;
            let wi = w.map_or(1.0, |w| w[r]);
            for j in 0..data.n_features() {
                let b = &mut h[data.bin_offsets[j] + data.code(r, j)];
                b.g += gh[r][0];
                b.h += gh[r][1];
                b.w += wi;
                b.n += 1.0;
            }
        }
        h
    }

    fn all_stats(h: &Histogram) -> Vec<BinStats> {
        (0..h.len()).map(|i| h.stats(i)).collect()
    }

    fn close(a: &[BinStats], b: &[BinStats]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            for (u, v) in [(x.g, y.g), (x.h, y.h), (x.w, y.w), (x.n, y.n)] {
                assert!((u - v).abs() <= 1e-9 * (1.0 + v.abs()), "{x:?} vs {y:?}");
            }
        }
    }

    #[test]
    fn even_sizes_cover_the_items_in_balanced_alternating_runs() {
        assert_eq!(even_sizes(10, 4), [2, 3, 2, 3]);
        assert_eq!(even_sizes(0, 4), Vec::<usize>::new());
        for len in 0..60 {
            for parts in 1..10 {
                let sizes = even_sizes(len, parts);
                assert_eq!(sizes.iter().sum::<usize>(), len, "{len} {parts}");
                assert_eq!(sizes.len(), parts.min(len), "{len} {parts}");
                let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
                assert!(hi.zip(lo).is_none_or(|(h, l)| h - l <= 1), "{sizes:?}");
                // Halves (as rayon splits them) differ by at most one item
                // when the run count is even.
                if sizes.len().is_multiple_of(2) {
                    let (a, b) = sizes.split_at(sizes.len() / 2);
                    let (a, b) = (a.iter().sum::<usize>(), b.iter().sum::<usize>());
                    assert!(a.abs_diff(b) <= 1, "{sizes:?}");
                }
            }
        }
    }

    #[test]
    fn kernels_match_naive_reference_and_subtraction() {
        // Several row blocks of the feature-major kernel, for the root (all
        // 30k rows) and the subsets (20k rows). Its calls take 1-4 features
        // (groups of 5 features split by threads here, of 40 below).
        const { assert!(20_000 > FEATURE_BLOCK_ROWS && KERNEL_FEATURES == 4) };
        for sparse in [false, true] {
            kernels_match_naive(sparse, 30_000, 5, 16);
        }
        // Enough bins (40 × 255) for the row-major kernel to walk several
        // feature tiles, and too few rows for several chunks, so subsets are
        // split by features (with three threads: six groups).
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let bins = pool.install(|| kernels_match_naive(false, 6000, 40, 255));
        assert!(bins > 2 * TILE_BINS, "{bins} bins");
        assert_eq!(6000 / rows_per_chunk(bins), 0);
        // On one thread a task takes every feature: its first tile reads the
        // gradients by row and keeps them for the next two.
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        one.install(|| kernels_match_naive(false, 6000, 40, 255));
    }

    /// Returns the dataset's total bin count.
    fn kernels_match_naive(sparse: bool, n: usize, p: usize, max_bins: usize) -> usize {
        let mut s = 12345u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        // Sparse: mostly zeros, so default bins are skipped and sparse rows are used.
        let x: Vec<f64> = (0..n * p)
            .map(|_| {
                let u = next();
                if sparse && u < 0.85 {
                    0.0
                } else if u < 0.1 || (sparse && u < 0.87) {
                    f64::NAN
                } else {
                    (next() * 4.0 * max_bins as f64).floor()
                }
            })
            .collect();
        let gh_any: Vec<[f64; 2]> = (0..n).map(|_| [next() - 0.5, next()]).collect();
        // Hessians of exactly 1: unweighted, histograms count rows with Σh.
        let gh_unit: Vec<[f64; 2]> = gh_any.iter().map(|&[g, _]| [g, 1.0]).collect();
        let w: Vec<f64> = (0..n).map(|_| next() * 2.0).collect();
        let m = DenseMatrix::row_major(&x, n, p).unwrap();
        let data = BinnedDataset::from_matrix(&m, max_bins, 0).unwrap();
        assert_eq!(data.sparse_rows.is_some(), sparse);
        assert_eq!(data.default_bins.iter().all(|d| d.is_some()), sparse);
        let all: Vec<u32> = (0..n as u32).collect();
        let subset: Vec<u32> = all.iter().copied().filter(|r| r % 3 != 0).collect();
        let rest: Vec<u32> = all.iter().copied().filter(|r| r % 3 == 0).collect();
        let features: Vec<usize> = (0..p).collect();
        for (weights, unit_hessian) in [
            (None, false),
            (Some(&w[..]), false),
            (None, true),
            (Some(&w[..]), true),
        ] {
            let gh = if unit_hessian { &gh_unit } else { &gh_any };
            let grads = |gh, weights| Gradients {
                gh,
                weights,
                unit_hessian,
                uncounted: false,
            };
            let mut scratch = BuildScratch::new(n).unwrap();
            let sum = |rows: &[u32]| {
                let mut t = BinStats::default();
                for &r in rows {
                    t.add(&BinStats {
                        g: gh[r as usize][0],
                        h: gh[r as usize][1],
                        w: weights.map_or(1.0, |w| w[r as usize]),
                        n: 1.0,
                    });
                }
                t
            };
            let mut root = Histogram::new(data.total_bins()).unwrap();
            build(
                &data,
                &features,
                None,
                &grads(gh, weights),
                &mut root,
                &mut scratch,
                &sum(&all),
            )
            .unwrap();
            close(&all_stats(&root), &naive(&data, &all, gh, weights));
            assert_eq!(root.count.is_empty(), unit_hessian && weights.is_none());

            let mut sub = Histogram::new(data.total_bins()).unwrap();
            build(
                &data,
                &features,
                Some(&subset),
                &grads(gh, weights),
                &mut sub,
                &mut scratch,
                &sum(&subset),
            )
            .unwrap();
            close(&all_stats(&sub), &naive(&data, &subset, gh, weights));
            // The feature-major subset kernel (used when only some features are active).
            let some: Vec<usize> = (0..p).filter(|j| j % 2 == 0).collect();
            let mut part = Histogram::new(data.total_bins()).unwrap();
            build(
                &data,
                &some,
                Some(&subset),
                &grads(gh, weights),
                &mut part,
                &mut scratch,
                &sum(&subset),
            )
            .unwrap();
            let want = naive(&data, &subset, gh, weights);
            for &j in &some {
                let r = data.bin_offsets[j]..data.bin_offsets[j + 1];
                close(&all_stats(&part)[r.clone()], &want[r]);
            }

            let rest_want = naive(&data, &rest, gh, weights);
            // Only the subset's bins are subtracted; the others keep the root's.
            let mut some_rest = root.clone();
            subtract_features_into(&mut some_rest, &sub, &data, &some);
            let (got, kept) = (all_stats(&some_rest), all_stats(&root));
            for j in 0..p {
                let r = data.bin_offsets[j]..data.bin_offsets[j + 1];
                let want = if some.contains(&j) { &rest_want } else { &kept };
                close(&got[r.clone()], &want[r]);
            }
            subtract_into(&mut root, &sub);
            close(&all_stats(&root), &rest_want);
        }
        data.total_bins()
    }
}
