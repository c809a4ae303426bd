//! Gradient / hessian / weight / count histograms of a node, per feature.
//!
//! The hot loop of training. Each feature's histogram is built by one task
//! in row order, so sums (f64) do not depend on the thread count.
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::dataset::{BinCode, BinCodes, BinnedDataset, SparseRows};

/// Sums over the rows that fall in one bin (or one node).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[repr(C)]
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

/// Per-row (weighted) gradient and hessian, plus optional row weights.
pub struct Gradients<'a> {
    pub gh: &'a [[f64; 2]],
    /// `None` when every weight is 1: then Σw = n and the kernel skips it.
    pub weights: Option<&'a [f64]>,
}

/// Below this many (row, feature) pairs a node's histogram is built on one thread.
const PARALLEL_MIN_WORK: usize = 32 * 1024;

/// One feature's histogram over `rows` (or all rows when `rows` is None).
/// `gh`/`w` are in the same order as `rows` (gathered) or full-length for the root.
#[inline(always)]
fn build_feature_body<C: BinCode, const ALL_ROWS: bool, const WEIGHTED: bool>(
    codes: &[C],
    rows: &[u32],
    gh: &[[f64; 2]],
    w: &[f64],
    hist: &mut [BinStats],
    skip: usize,
) {
    let m = if ALL_ROWS { codes.len() } else { rows.len() };
    let gh = &gh[..m];
    for k in 0..m {
        if !ALL_ROWS {
            if let Some(&ahead) = rows.get(k + PREFETCH_AHEAD) {
                prefetch(codes.as_ptr().wrapping_add(ahead as usize));
            }
        }
        let code = if ALL_ROWS {
            codes[k]
        } else {
            codes[rows[k] as usize]
        }
        .idx();
        if code != skip {
            hist[code].add(&BinStats::row::<WEIGHTED>(gh[k], w, k));
        }
    }
}

/// The dense kernels compiled twice: for the baseline target and with AVX2,
/// where a bin update is one 256-bit add; the AVX2 copy runs when the CPU
/// has it. Both do the same IEEE additions in the same order.
macro_rules! dispatch_avx2 {
    ($(#[$doc:meta])* fn $name:ident / $avx2:ident = $body:ident <$($gen:ident : $bound:path),* ; $(const $c:ident),*> ($($arg:ident : $ty:ty),*)) => {
        $(#[$doc])*
        #[inline(never)]
        fn $name<$($gen: $bound,)* $(const $c: bool),*>($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { $avx2::<$($gen,)* $($c),*>($($arg),*) };
            }
            $body::<$($gen,)* $($c),*>($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn $avx2<$($gen: $bound,)* $(const $c: bool),*>($($arg: $ty),*) {
            $body::<$($gen,)* $($c),*>($($arg),*)
        }
    };
}

dispatch_avx2! {
    /// One feature's histogram (see `build_feature_body`).
    fn build_feature / build_feature_avx2 = build_feature_body<C: BinCode; const ALL_ROWS, const WEIGHTED>(
        codes: &[C], rows: &[u32], gh: &[[f64; 2]], w: &[f64], hist: &mut [BinStats], skip: usize)
}

dispatch_avx2! {
    /// Every feature of a chunk of rows (see `build_rows_chunk_body`).
    fn build_rows_chunk / build_rows_chunk_avx2 = build_rows_chunk_body<C: BinCode; const WEIGHTED>(
        row_codes: &[C], offsets: &[usize], rows: &[u32], gh: &[[f64; 2]], w: &[f64], hist: &mut [BinStats])
}

fn build_typed<C: BinCode>(
    codes: &[C],
    n_rows: usize,
    offsets: &[usize],
    defaults: &[Option<usize>],
    features: &[usize],
    rows: Option<&[u32]>,
    grads: &Gradients,
    hist: &mut [BinStats],
) {
    // Split the flat histogram into per-feature slices for the active features.
    let mut slices: Vec<(usize, &mut [BinStats])> = Vec::with_capacity(features.len());
    let mut rest: &mut [BinStats] = hist;
    let mut consumed = 0;
    for &j in features {
        let (_, tail) = rest.split_at_mut(offsets[j] - consumed);
        let (mine, tail) = tail.split_at_mut(offsets[j + 1] - offsets[j]);
        consumed = offsets[j + 1];
        rest = tail;
        slices.push((j, mine));
    }
    let work = rows.map_or(n_rows, |r| r.len()) * features.len();
    let run = |(j, h): &mut (usize, &mut [BinStats])| {
        h.fill(BinStats::default());
        let col = &codes[*j * n_rows..(*j + 1) * n_rows];
        let w = grads.weights.unwrap_or(&[]);
        let skip = defaults[*j].unwrap_or(usize::MAX);
        match (rows, grads.weights.is_some()) {
            (None, false) => build_feature::<C, true, false>(col, &[], grads.gh, w, h, skip),
            (None, true) => build_feature::<C, true, true>(col, &[], grads.gh, w, h, skip),
            (Some(r), false) => build_feature::<C, false, false>(col, r, grads.gh, w, h, skip),
            (Some(r), true) => build_feature::<C, false, true>(col, r, grads.gh, w, h, skip),
        }
    };
    if work >= PARALLEL_MIN_WORK {
        slices.par_iter_mut().for_each(run);
    } else {
        slices.iter_mut().for_each(run);
    }
}

/// Hints the CPU to start loading `ptr`'s cache line (no effect elsewhere).
#[inline(always)]
pub fn prefetch<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(ptr as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// How many rows ahead the subset kernels prefetch a row's codes.
pub const PREFETCH_AHEAD: usize = 16;

/// Row-major kernel: every feature of each row in `rows` (one cache line per row).
#[inline(always)]
fn build_rows_chunk_body<C: BinCode, const WEIGHTED: bool>(
    row_codes: &[C],
    offsets: &[usize],
    rows: &[u32],
    gh: &[[f64; 2]],
    w: &[f64],
    hist: &mut [BinStats],
) {
    let p = offsets.len() - 1;
    hist.fill(BinStats::default());
    // Features in tiles whose bins fit in L1: the chunk's rows are walked
    // once per tile, so each bin still sees its rows in row order.
    let mut f0 = 0;
    while f0 < p {
        let mut f1 = f0 + 1;
        while f1 < p && offsets[f1 + 1] - offsets[f0] <= TILE_BINS {
            f1 += 1;
        }
        let tile_offsets = &offsets[f0..f1];
        for (k, &r) in rows.iter().enumerate() {
            if let Some(&ahead) = rows.get(k + PREFETCH_AHEAD) {
                prefetch(row_codes.as_ptr().wrapping_add(ahead as usize * p + f0));
            }
            let r = r as usize;
            let codes = &row_codes[r * p + f0..r * p + f1];
            let one = BinStats::row::<WEIGHTED>(gh[k], w, k);
            for (code, &off) in codes.iter().zip(tile_offsets) {
                hist[off + code.idx()].add(&one);
            }
        }
        f0 = f1;
    }
}

/// Bins per feature tile of the row-major kernel (32 KiB of `BinStats`).
const TILE_BINS: usize = 1024;

/// Sparse-row kernel: only the non-default entries of each row. With
/// ALL_ROWS the rows are `first..first + gh.len()` and `rows` is unused.
#[inline(never)]
fn build_sparse_chunk<const ALL_ROWS: bool, const WEIGHTED: bool>(
    sparse: &SparseRows,
    first: usize,
    rows: &[u32],
    gh: &[[f64; 2]],
    w: &[f64],
    hist: &mut [BinStats],
) {
    hist.fill(BinStats::default());
    for k in 0..gh.len() {
        let r = if ALL_ROWS {
            first + k
        } else {
            rows[k] as usize
        };
        let one = BinStats::row::<WEIGHTED>(gh[k], w, k);
        for &b in &sparse.bins[sparse.row_ptr[r]..sparse.row_ptr[r + 1]] {
            hist[b as usize].add(&one);
        }
    }
}

/// Rows per chunk below which a subset histogram is not split further: a
/// chunk costs a zeroed partial histogram and its reduction, so small
/// histograms (few bins, e.g. one-hot data) afford smaller chunks. At most
/// MAX_CHUNKS chunks. Depends only on sizes, never on the thread count.
fn rows_per_chunk(total_bins: usize) -> usize {
    (2 * total_bins).clamp(1024, 8192)
}
const MAX_CHUNKS: usize = 16;

/// All features of a row subset via the row-major codes: fixed chunks of
/// rows (their number depends only on the row count) build partial
/// histograms in parallel, then partials are summed in chunk order, so the
/// result does not depend on the thread count.
fn build_rows_chunked(
    m: usize,
    hist: &mut [BinStats],
    partials: &mut Vec<Vec<BinStats>>,
    run: impl Fn(usize, usize, &mut [BinStats]) + Sync,
) {
    let n_chunks = (m / rows_per_chunk(hist.len())).clamp(1, MAX_CHUNKS);
    if n_chunks == 1 {
        run(0, m, hist);
        return;
    }
    let chunk = m.div_ceil(n_chunks);
    while partials.len() < n_chunks {
        partials.push(vec![BinStats::default(); hist.len()]);
    }
    let parts = &mut partials[..n_chunks];
    parts
        .par_iter_mut()
        .enumerate()
        .for_each(|(c, part)| run(c * chunk, ((c + 1) * chunk).min(m), part));
    let parts = &*parts;
    hist.par_chunks_mut(2048)
        .enumerate()
        .for_each(|(blk, out)| {
            let base = blk * 2048;
            for (i, o) in out.iter_mut().enumerate() {
                let mut sum = parts[0][base + i];
                for part in &parts[1..] {
                    sum.add(&part[base + i]);
                }
                *o = sum;
            }
        });
}

/// Builds the histograms of `features` for a node into `hist` (length =
/// total bins; bins of other features are left untouched).
///
/// `rows = None` means every row, with `grads` indexed by row. Otherwise
/// `grads` must already be gathered in the order of `rows`. `partials` is
/// scratch space reused across calls; `total` holds the node's sums (used
/// to derive skipped default bins).
pub fn build(
    data: &BinnedDataset,
    features: &[usize],
    rows: Option<&[u32]>,
    grads: &Gradients,
    hist: &mut [BinStats],
    partials: &mut Vec<Vec<BinStats>>,
    total: &BinStats,
) {
    debug_assert_eq!(hist.len(), data.total_bins());
    let all_features = features.len() == data.n_features();
    let w = grads.weights.unwrap_or(&[]);
    let weighted = grads.weights.is_some();
    let offsets = &data.bin_offsets;
    macro_rules! chunks {
        ($r:expr, $kernel:ident, $($arg:expr),*) => {
            build_rows_chunked($r.len(), hist, partials, |lo, hi, out| {
                let (r, gh) = (&$r[lo..hi], &grads.gh[lo..hi]);
                if weighted { $kernel::<_, true>($($arg,)* r, gh, &w[lo..hi], out) } else { $kernel::<_, false>($($arg,)* r, gh, &[], out) }
            })
        };
    }
    let no_skip = data.sparse_rows.is_none();
    match (rows, &data.codes, &data.row_codes, &data.sparse_rows) {
        (Some(r), _, _, Some(sp)) if all_features => {
            build_rows_chunked(r.len(), hist, partials, |lo, hi, out| {
                let (rr, gh) = (&r[lo..hi], &grads.gh[lo..hi]);
                if weighted {
                    build_sparse_chunk::<false, true>(sp, 0, rr, gh, &w[lo..hi], out)
                } else {
                    build_sparse_chunk::<false, false>(sp, 0, rr, gh, &[], out)
                }
            })
        }
        (None, _, _, Some(sp)) if all_features => {
            build_rows_chunked(data.n_rows, hist, partials, |lo, hi, out| {
                let gh = &grads.gh[lo..hi];
                if weighted {
                    build_sparse_chunk::<true, true>(sp, lo, &[], gh, &w[lo..hi], out)
                } else {
                    build_sparse_chunk::<true, false>(sp, lo, &[], gh, &[], out)
                }
            })
        }
        (Some(r), _, BinCodes::U8(c), None) if all_features => {
            chunks!(r, build_rows_chunk, c.as_slice(), offsets.as_slice())
        }
        (Some(r), _, BinCodes::U16(c), None) if all_features => {
            chunks!(r, build_rows_chunk, c.as_slice(), offsets.as_slice())
        }
        (_, BinCodes::U8(c), _, _) => build_typed(
            c,
            data.n_rows,
            offsets,
            &data.default_bins,
            features,
            rows,
            grads,
            hist,
        ),
        (_, BinCodes::U16(c), _, _) => build_typed(
            c,
            data.n_rows,
            offsets,
            &data.default_bins,
            features,
            rows,
            grads,
            hist,
        ),
    }
    // Default bins were skipped (by the sparse rows or the feature kernels):
    // their sums are the node total minus the feature's other bins.
    let skipped_dense_rows = rows.is_some() && all_features && no_skip;
    if !skipped_dense_rows {
        for &j in features {
            if let Some(d) = data.default_bins[j] {
                let h = &mut hist[offsets[j]..offsets[j + 1]];
                let mut rest = BinStats::default();
                for (b, s) in h.iter().enumerate() {
                    if b != d {
                        rest.add(s);
                    }
                }
                h[d] = total.sub(&rest);
            }
        }
    }
}

/// Turns `parent` into the histogram of the sibling of `child` (parent − child).
pub fn subtract_into(parent: &mut [BinStats], child: &[BinStats]) {
    for (p, c) in parent.iter_mut().zip(child) {
        *p = p.sub(c);
    }
}

/// Reusable histogram buffers, so growing a tree does not allocate per node.
pub struct HistogramPool {
    len: usize,
    free: Vec<Vec<BinStats>>,
}

impl HistogramPool {
    pub fn new(len: usize) -> Self {
        HistogramPool {
            len,
            free: Vec::new(),
        }
    }
    pub fn take(&mut self) -> Vec<BinStats> {
        self.free
            .pop()
            .unwrap_or_else(|| vec![BinStats::default(); self.len])
    }
    pub fn give(&mut self, h: Vec<BinStats>) {
        self.free.push(h);
    }
}

#[cfg(test)]
mod tests {
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

    fn close(a: &[BinStats], b: &[BinStats]) {
        for (x, y) in a.iter().zip(b) {
            for (u, v) in [(x.g, y.g), (x.h, y.h), (x.w, y.w), (x.n, y.n)] {
                assert!((u - v).abs() <= 1e-9 * (1.0 + v.abs()), "{x:?} vs {y:?}");
            }
        }
    }

    #[test]
    fn kernels_match_naive_reference_and_subtraction() {
        for sparse in [false, true] {
            kernels_match_naive(sparse);
        }
    }

    fn kernels_match_naive(sparse: bool) {
        let (n, p) = (30_000, 5);
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
                    (next() * 40.0).floor()
                }
            })
            .collect();
        let gh: Vec<[f64; 2]> = (0..n).map(|_| [next() - 0.5, next()]).collect();
        let w: Vec<f64> = (0..n).map(|_| next() * 2.0).collect();
        let m = DenseMatrix::row_major(&x, n, p).unwrap();
        let data = BinnedDataset::from_matrix(&m, 16, 0).unwrap();
        assert_eq!(data.sparse_rows.is_some(), sparse);
        assert_eq!(data.default_bins.iter().all(|d| d.is_some()), sparse);
        let all: Vec<u32> = (0..n as u32).collect();
        let subset: Vec<u32> = all.iter().copied().filter(|r| r % 3 != 0).collect();
        let rest: Vec<u32> = all.iter().copied().filter(|r| r % 3 == 0).collect();
        let features: Vec<usize> = (0..p).collect();
        for weights in [None, Some(&w[..])] {
            let mut partials = Vec::new();
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
            let mut root = vec![BinStats::default(); data.total_bins()];
            build(
                &data,
                &features,
                None,
                &Gradients { gh: &gh, weights },
                &mut root,
                &mut partials,
                &sum(&all),
            );
            close(&root, &naive(&data, &all, &gh, weights));

            let ggh: Vec<[f64; 2]> = subset.iter().map(|&r| gh[r as usize]).collect();
            let gw: Vec<f64> = subset.iter().map(|&r| w[r as usize]).collect();
            let gw = weights.map(|_| &gw[..]);
            let mut sub = vec![BinStats::default(); data.total_bins()];
            build(
                &data,
                &features,
                Some(&subset),
                &Gradients {
                    gh: &ggh,
                    weights: gw,
                },
                &mut sub,
                &mut partials,
                &sum(&subset),
            );
            close(&sub, &naive(&data, &subset, &gh, weights));
            // The feature-major subset kernel (used when only some features are active).
            let some: Vec<usize> = (0..p).filter(|j| j % 2 == 0).collect();
            let mut part = vec![BinStats::default(); data.total_bins()];
            build(
                &data,
                &some,
                Some(&subset),
                &Gradients {
                    gh: &ggh,
                    weights: gw,
                },
                &mut part,
                &mut partials,
                &sum(&subset),
            );
            let want = naive(&data, &subset, &gh, weights);
            for &j in &some {
                let r = data.bin_offsets[j]..data.bin_offsets[j + 1];
                close(&part[r.clone()], &want[r]);
            }

            subtract_into(&mut root, &sub);
            close(&root, &naive(&data, &rest, &gh, weights));
        }
    }
}
