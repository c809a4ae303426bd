//! Stable in-place partition of a leaf's row range: rows going left keep their
//! order at the front, rows going right at the back. Deterministic whatever
//! the thread count, because chunk boundaries are fixed.
use rayon::prelude::*;

use crate::data::dataset::{BinCode, BinnedDataset, Column, SparseColumn};
use crate::histogram::{PREFETCH_AHEAD, prefetch};

/// Rows per chunk when partitioning in parallel (at most: a range is cut
/// into a multiple of the thread count of equal chunks, so no thread waits
/// on another's extra chunk; the result does not depend on the cut).
const CHUNK: usize = 4 * 1024;
/// Below this many rows a partition runs on one thread.
const PARALLEL_MIN_ROWS: usize = 4 * 1024;

/// Where rows go for one split on a binned feature.
#[derive(Clone, Copy, Debug)]
pub struct SplitRoute {
    pub feature: usize,
    pub bin: usize,
    pub missing_bin: usize,
    pub default_left: bool,
}

/// Where a row goes, from its bin code.
trait Route: Copy + Sync {
    fn goes_left(&self, code: usize) -> bool;
}

impl Route for SplitRoute {
    #[inline(always)]
    fn goes_left(&self, code: usize) -> bool {
        if code == self.missing_bin {
            self.default_left
        } else {
            code <= self.bin
        }
    }
}

/// A categorical split: `left[bin]` for each of the feature's bins.
#[derive(Clone, Copy)]
struct BinTable<'t>(&'t [bool]);

impl Route for BinTable<'_> {
    #[inline(always)]
    fn goes_left(&self, code: usize) -> bool {
        self.0[code]
    }
}

/// `partition` for a split that sends bin b of `feature` left iff `left[b]`.
pub fn partition_by_bins(
    data: &BinnedDataset,
    feature: usize,
    left: &[bool],
    rows: &mut [u32],
    scratch: &mut [u32],
) -> usize {
    partition_column(data.column(feature), BinTable(left), rows, scratch)
}

/// Partitions `rows` (a leaf's range) using `scratch` (same length); returns
/// the number of rows that went left.
pub fn partition(
    data: &BinnedDataset,
    route: SplitRoute,
    rows: &mut [u32],
    scratch: &mut [u32],
) -> usize {
    partition_column(data.column(route.feature), route, rows, scratch)
}

fn partition_column<R: Route>(
    col: Column,
    route: R,
    rows: &mut [u32],
    scratch: &mut [u32],
) -> usize {
    match col {
        Column::U8(c) => partition_typed(Dense(c), route, rows, scratch),
        Column::U16(c) => partition_typed(Dense(c), route, rows, scratch),
        Column::Sparse(c) => partition_typed(c, route, rows, scratch),
    }
}

/// A feature's codes for a leaf's rows.
trait Codes: Copy + Sync {
    /// Calls `f(row, code)` for each of `rows` in order.
    fn for_each(&self, rows: &[u32], f: impl FnMut(u32, usize));
}

#[derive(Clone, Copy)]
struct Dense<'a, C>(&'a [C]);

impl<C: BinCode> Codes for Dense<'_, C> {
    #[inline(always)]
    fn for_each(&self, rows: &[u32], mut f: impl FnMut(u32, usize)) {
        for (k, &row) in rows.iter().enumerate() {
            if let Some(&ahead) = rows.get(k + PREFETCH_AHEAD) {
                prefetch(self.0.as_ptr().wrapping_add(ahead as usize));
            }
            f(row, self.0[row as usize].idx());
        }
    }
}

impl Codes for SparseColumn<'_> {
    #[inline(always)]
    fn for_each(&self, rows: &[u32], f: impl FnMut(u32, usize)) {
        self.for_each_code(rows, f);
    }
}

/// Splits one chunk into `out`: lefts from the front, rights from the back
/// (reversed). Returns the left count.
#[inline(never)]
fn split_chunk<K: Codes, R: Route>(col: K, route: R, rows: &[u32], out: &mut [u32]) -> usize {
    let (mut l, mut r) = (0usize, out.len());
    col.for_each(rows, |row, code| {
        // Branch-free (the direction is a coin flip the CPU cannot predict):
        // write the row at both ends, then advance the end it belongs to.
        // r − l = rows still to place ≥ 1, so both slots are free.
        let left = route.goes_left(code);
        out[l] = row;
        out[r - 1] = row;
        l += usize::from(left);
        r -= usize::from(!left);
    });
    l
}

fn partition_typed<K: Codes, R: Route>(
    col: K,
    route: R,
    rows: &mut [u32],
    scratch: &mut [u32],
) -> usize {
    let m = rows.len();
    let scratch = &mut scratch[..m];
    let threads = rayon::current_num_threads();
    let parallel = threads > 1 && m >= PARALLEL_MIN_ROWS;
    let chunk = if parallel {
        m.div_ceil(m.div_ceil(CHUNK).next_multiple_of(threads))
    } else {
        m.max(1)
    };
    let lefts: Vec<usize> = if parallel {
        rows.par_chunks(chunk)
            .zip(scratch.par_chunks_mut(chunk))
            .map(|(r, s)| split_chunk(col, route, r, s))
            .collect()
    } else {
        vec![split_chunk(col, route, rows, scratch)]
    };
    let n_left: usize = lefts.iter().sum();
    // Chunk c's lefts go to the left part after the lefts of chunks < c, its
    // rights (reversed in scratch) likewise to the right part: disjoint
    // destinations, so large ranges copy back in parallel.
    let (mut left_rest, mut right_rest) = rows.split_at_mut(n_left);
    let mut moves = Vec::with_capacity(lefts.len());
    for (s, &nl) in scratch.chunks(chunk).zip(&lefts) {
        let (l, rest) = std::mem::take(&mut left_rest).split_at_mut(nl);
        left_rest = rest;
        let (r, rest) = std::mem::take(&mut right_rest).split_at_mut(s.len() - nl);
        right_rest = rest;
        moves.push((s, l, r));
    }
    let copy_back = |(s, l, r): (&[u32], &mut [u32], &mut [u32])| {
        let nl = l.len();
        l.copy_from_slice(&s[..nl]);
        for (d, &row) in r.iter_mut().zip(s[nl..].iter().rev()) {
            *d = row;
        }
    };
    if parallel {
        moves.into_par_iter().for_each(copy_back);
    } else {
        moves.into_iter().for_each(copy_back);
    }
    n_left
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::matrix::DenseMatrix;

    /// Every thread count and range size (serial, one chunk per thread,
    /// uneven last chunks) gives the stable filter's order.
    #[test]
    fn matches_a_stable_filter() {
        let n = 100_000;
        let x: Vec<f64> = (0..n)
            .map(|i| {
                if i % 11 == 0 {
                    f64::NAN
                } else {
                    ((i * 7919) % 97) as f64
                }
            })
            .collect();
        let m = DenseMatrix::row_major(&x, n, 1).unwrap();
        let data = BinnedDataset::from_matrix(&m, 32, 0).unwrap();
        let route = SplitRoute {
            feature: 0,
            bin: 10,
            missing_bin: data.mapper.features[0].missing_bin(),
            default_left: true,
        };
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for len in [0, 1, 4095, 4096, 8193, 12_289, 66_666] {
                let original: Vec<u32> = (0..n as u32).filter(|r| r % 3 != 1).take(len).collect();
                let mut rows = original.clone();
                let mut scratch = vec![0u32; rows.len()];
                let nl = pool.install(|| partition(&data, route, &mut rows, &mut scratch));
                let (want_l, want_r): (Vec<u32>, Vec<u32>) = original
                    .iter()
                    .partition(|&&r| route.goes_left(data.code(r as usize, 0)));
                assert_eq!(nl, want_l.len(), "{threads} threads, {len} rows");
                assert_eq!(&rows[..nl], &want_l[..], "{threads} threads, {len} rows");
                assert_eq!(&rows[nl..], &want_r[..], "{threads} threads, {len} rows");
            }
        }
    }

    /// Data kept as sparse rows partitions through its feature-major index:
    /// every feature, on increasing rows and on rows out of order, gives the
    /// stable filter of the codes read from the rows' own entries.
    #[test]
    fn sparse_rows_match_a_stable_filter() {
        let (n, p) = (20_000, 6);
        let x: Vec<f64> = (0..n * p)
            .map(|k| {
                let (i, j) = (k / p, k % p);
                match (i * 7919 + j * 104_729) % 23 {
                    // Feature 0 has no default bin: an entry in every row.
                    _ if j == 0 => ((i * 13) % 29) as f64,
                    0 => f64::NAN,
                    1..=4 => ((i * 31 + j) % 17) as f64 + 1.0,
                    _ => 0.0,
                }
            })
            .collect();
        let m = DenseMatrix::row_major(&x, n, p).unwrap();
        let data = BinnedDataset::from_matrix(&m, 32, 0).unwrap();
        assert!(data.sparse_rows.is_some() && data.codes.is_none());
        let increasing: Vec<u32> = (0..n as u32).filter(|r| r % 5 != 2).collect();
        let shuffled: Vec<u32> = increasing
            .iter()
            .map(|&r| (r * 7_001) % n as u32)
            .filter(|r| r % 5 != 2)
            .collect();
        // Out of order with the first row below the last.
        let mixed: Vec<u32> = [10_001]
            .into_iter()
            .chain(shuffled.iter().copied())
            .chain([19_999])
            .collect();
        for j in 0..p {
            let route = SplitRoute {
                feature: j,
                bin: 3,
                missing_bin: data.mapper.features[j].missing_bin(),
                default_left: j % 2 == 0,
            };
            for original in [
                &increasing,
                &shuffled,
                &mixed,
                &increasing[9_000..9_050].to_vec(),
            ] {
                let mut rows = original.clone();
                let mut scratch = vec![0u32; rows.len()];
                let nl = partition(&data, route, &mut rows, &mut scratch);
                let (want_l, want_r): (Vec<u32>, Vec<u32>) = original
                    .iter()
                    .partition(|&&r| route.goes_left(data.code(r as usize, j)));
                assert!(!want_l.is_empty() && !want_r.is_empty(), "feature {j}");
                assert_eq!(&rows[..nl], &want_l[..], "feature {j}");
                assert_eq!(&rows[nl..], &want_r[..], "feature {j}");
            }
        }
    }
}
