//! One node's histogram: the kernel for the data's layout and the node's
//! rows, gradients gathered in node order where the kernel wants them, and
//! the skipped default bins filled in from the node total.
use rayon::prelude::*;

use super::row_major::build_rows_chunk;
use super::schedule::{build_rows_chunked, build_typed, n_chunks};
use super::sparse_rows::build_sparse_chunk;
use super::{BinStats, BuildScratch, Gradients, Histogram};
use crate::data::dataset::{BinCodes, BinnedDataset};
use crate::error::Result;

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

/// Whether `build` over a subset of the features gives each of those
/// features' bins, bit for bit, as a build over every feature does, for a
/// node of `m` rows (a row subset). Every kernel sums a bin's rows in order
/// from zero, but the every-feature kernels sum several chunks of rows
/// apart on larger nodes, and the dense row-major one sums default bins
/// that the feature kernel fills in from the node total.
pub fn subset_builds_alike(data: &BinnedDataset, m: usize) -> bool {
    let one_chunk = n_chunks(m, data.total_bins()) == 1;
    let defaults_alike =
        data.sparse_rows.is_some() || data.default_bins.iter().all(Option::is_none);
    one_chunk && defaults_alike
}

/// Builds the histograms of `features` for a node into `hist` (length =
/// total bins; bins of other features are left untouched, except on data
/// kept as sparse rows only, where they may be written too).
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
    // gathered in node order. Sparse data keeps no feature-major codes: its
    // builds for a subset of the features sum every feature's entries (the
    // bins of the others are never read).
    let by_row_kernel = all_features || data.codes.is_none();
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
                Ok(())
            })
        };
    }
    let no_skip = data.sparse_rows.is_none();
    match (rows, &data.codes, &data.row_codes, &data.sparse_rows) {
        (Some(r), _, _, Some(sp)) if by_row_kernel => {
            build_rows_chunked(r.len(), hist, partials, None, |lo, hi, _, out| {
                let (rr, gh) = (&r[lo..hi], grads.gh);
                if weighted {
                    build_sparse_chunk::<false, true>(sp, 0..0, rr, gh, w, out)
                } else {
                    build_sparse_chunk::<false, false>(sp, 0..0, rr, gh, &[], out)
                }
            })?
        }
        (None, _, _, Some(sp)) if by_row_kernel => {
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
        (_, Some(BinCodes::U8(c)), _, _) => build_typed(
            c,
            data.n_rows,
            offsets,
            &data.default_bins,
            features,
            rows,
            grads,
            hist.view_mut(),
        ),
        (_, Some(BinCodes::U16(c)), _, _) => build_typed(
            c,
            data.n_rows,
            offsets,
            &data.default_bins,
            features,
            rows,
            grads,
            hist.view_mut(),
        ),
        (_, None, _, _) => unreachable!("a dataset without codes keeps sparse rows"),
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
    use super::*;
    use crate::data::matrix::DenseMatrix;
    use crate::histogram::feature_major::{FEATURE_BLOCK_ROWS, KERNEL_FEATURES};
    use crate::histogram::row_major::TILE_BINS;
    use crate::histogram::schedule::rows_per_chunk;
    use crate::histogram::{subtract_features_into, subtract_into};

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

    /// What `subset_builds_alike` promises: on nodes of one row chunk, a
    /// build over every feature (the sparse-row kernel, which adds in place
    /// on few rows, or the dense row-major one) and builds over feature
    /// subsets (the feature-major kernel) give each feature the same bins,
    /// bit for bit, weighted or not, counted or not.
    #[test]
    fn every_feature_and_subset_builds_agree_where_alike() {
        use rand::{RngExt, SeedableRng};
        let (n, p) = (3000, 24);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(77);
        let mut next = || rng.random::<f64>();
        let sparse_x: Vec<f64> = (0..n * p)
            .map(|_| {
                if next() < 0.9 {
                    0.0
                } else {
                    (next() * 300.0).floor()
                }
            })
            .collect();
        let dense_x: Vec<f64> = (0..n * p).map(|_| next()).collect();
        let gh: Vec<[f64; 2]> = (0..n).map(|_| [next() - 0.5, next()]).collect();
        let unit: Vec<[f64; 2]> = gh.iter().map(|&[g, _]| [g, 1.0]).collect();
        let w: Vec<f64> = (0..n).map(|_| next() * 2.0).collect();
        for (x, sparse) in [(&sparse_x, true), (&dense_x, false)] {
            let m = DenseMatrix::row_major(x, n, p).unwrap();
            let data = BinnedDataset::from_matrix(&m, 255, 0).unwrap();
            assert_eq!(data.sparse_rows.is_some(), sparse);
            let len = data.total_bins();
            for m in [3, 40, 700] {
                assert!(subset_builds_alike(&data, m));
                let rows: Vec<u32> = (0..m as u32).map(|i| (i * 7 + 5) % n as u32).collect();
                let mut rows = rows;
                rows.sort_unstable();
                for (weights, unit_hessian) in [(None, false), (Some(&w[..]), false), (None, true)]
                {
                    let grads = Gradients {
                        gh: if unit_hessian { &unit } else { &gh },
                        weights,
                        unit_hessian,
                        uncounted: false,
                    };
                    let mut total = BinStats::default();
                    for &r in &rows {
                        let [g, h] = grads.gh[r as usize];
                        let wr = weights.map_or(1.0, |w| w[r as usize]);
                        total.add(&BinStats {
                            g,
                            h,
                            w: wr,
                            n: 1.0,
                        });
                    }
                    let mut scratch = BuildScratch::new(n).unwrap();
                    let mut run = |features: &[usize]| {
                        let mut h = Histogram::new(len).unwrap();
                        build(
                            &data,
                            features,
                            Some(&rows),
                            &grads,
                            &mut h,
                            &mut scratch,
                            &total,
                        )
                        .unwrap();
                        h
                    };
                    let all = run(&(0..p).collect::<Vec<_>>());
                    let evens: Vec<usize> = (0..p).step_by(2).collect();
                    let odds: Vec<usize> = (1..p).step_by(2).collect();
                    let (a, b) = (run(&evens), run(&odds));
                    for j in 0..p {
                        let part = if j % 2 == 0 { &a } else { &b };
                        for i in data.bin_offsets[j]..data.bin_offsets[j + 1] {
                            let (x, y) = (all.stats(i), part.stats(i));
                            let bits = |s: BinStats| [s.g, s.h, s.w, s.n].map(f64::to_bits);
                            assert_eq!(bits(x), bits(y), "sparse {sparse}, {m} rows, bin {i}");
                        }
                    }
                }
            }
        }
    }
}
