//! The binned training matrix: one small integer code per (feature, row),
//! stored feature-major so a histogram pass reads one contiguous column.
use rayon::prelude::*;

use super::binning::{BinLimits, BinMapper};
use super::matrix::{AsMatrix, DenseMatrix, Element, Matrix};
use super::sparse::{SparseLayout, SparseMatrix, infinity_error};
use crate::alloc::with_capacity;
use crate::cancel::Cancel;
use crate::error::{Result, RgbmError};

mod column_index;
mod file;
pub(crate) use column_index::{ColumnIndex, SparseColumn};
pub use file::{DATASET_FORMAT_VERSION, Extra, Extras, MAGIC};

/// A bin code type (u8 when every feature has at most 256 bins, else u16).
pub trait BinCode: Copy + Send + Sync + 'static {
    fn idx(self) -> usize;
    fn from_idx(i: usize) -> Self;
}
impl BinCode for u8 {
    #[inline(always)]
    fn idx(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn from_idx(i: usize) -> Self {
        i as u8
    }
}
impl BinCode for u16 {
    #[inline(always)]
    fn idx(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn from_idx(i: usize) -> Self {
        i as u16
    }
}

#[derive(Clone, Debug)]
pub enum BinCodes {
    U8(Vec<u8>),
    U16(Vec<u16>),
}

/// The binned matrix is kept in two layouts: feature-major (a column per
/// feature: root histograms, partitions, per-feature work) and row-major (a
/// row's codes in one cache line: histograms of row subsets, where
/// feature-major would miss the cache once per feature and row).
///
/// The fields are private to the crate: built only by binning, a feature's
/// codes are below its bin count, which the histogram kernels rely on to
/// index bins without a bounds check.
#[derive(Clone, Debug)]
pub struct BinnedDataset {
    pub(crate) n_rows: usize,
    pub(crate) mapper: BinMapper,
    /// Feature-major: code of (row i, feature j) at j·n + i. None when the
    /// sparse rows hold the codes (memory then scales with the entries).
    pub(crate) codes: Option<BinCodes>,
    /// Row-major: code of (row i, feature j) at i·p + j.
    pub(crate) row_codes: BinCodes,
    /// Start of each feature's bins in a flat histogram; last entry = total
    /// bins. With sparse rows, a feature that can split no node (fewer than
    /// the fit's `min_samples_leaf` rows outside its most populated bin) has
    /// no bins: histograms and sparse rows leave it out.
    pub(crate) bin_offsets: Vec<usize>,
    /// Per feature, the bin holding at least `DEFAULT_BIN_SHARE` of the rows
    /// (e.g. the zero of a one-hot column). Kernels skip it and derive its
    /// sums as node total − the other bins, which makes sparse data cheap.
    pub(crate) default_bins: Vec<Option<usize>>,
    /// Row-major codes without default bins, when that saves enough work.
    pub(crate) sparse_rows: Option<SparseRows>,
    /// The sparse rows' feature-major index (partitions and row counts).
    pub(crate) column_index: Option<ColumnIndex>,
    /// The `min_rows` the dataset was binned with (which features it keeps
    /// depends on it), so a fit can check that its own matches.
    pub(crate) min_rows: usize,
}

/// One feature's codes, wherever the dataset keeps them.
#[derive(Clone, Copy)]
pub(crate) enum Column<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    Sparse(SparseColumn<'a>),
}

/// Share of rows a bin needs to be a feature's skipped default bin.
pub const DEFAULT_BIN_SHARE: f64 = 0.7;
/// Sparse rows are kept when they hold at most this share of all entries.
const SPARSE_MAX_SHARE: f64 = 0.5;

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

/// Memory each column takes at once while it is binned, whether or not it
/// holds values: its cut points (`FeatureBins`) and its mode, both held
/// while the codes are summarised. The fit's other per-column tables come
/// on top.
const PER_COLUMN_BYTES: u64 = (std::mem::size_of::<crate::data::binning::FeatureBins>()
    + std::mem::size_of::<(usize, u64)>()) as u64;

/// One empty list per block of `ROW_BLOCK` rows, with room for a part of
/// each of `p` columns.
fn block_parts<T>(n: usize, p: usize) -> Result<Vec<Vec<T>>> {
    const WHAT: &str = "the column parts of the row blocks";
    let mut parts = with_capacity(n.div_ceil(ROW_BLOCK), WHAT)?;
    for _ in 0..n.div_ceil(ROW_BLOCK) {
        parts.push(with_capacity(p, WHAT)?);
    }
    Ok(parts)
}

/// The most frequent code of every feature (the lowest on ties) and its rows.
fn find_modes(codes: &BinCodes, n: usize, mapper: &BinMapper) -> Result<Vec<(usize, u64)>> {
    match codes {
        BinCodes::U8(c) => modes_of(c, n, mapper),
        BinCodes::U16(c) => modes_of(c, n, mapper),
    }
}

fn modes_of<C: BinCode>(codes: &[C], n: usize, mapper: &BinMapper) -> Result<Vec<(usize, u64)>> {
    let mut modes = with_capacity(mapper.n_features(), "the feature modes")?;
    codes
        .par_chunks(n.max(1))
        .enumerate()
        .map(|(j, col)| {
            let fb = &mapper.features[j];
            // Four interleaved counters per bin: a run of equal codes would
            // otherwise wait on its own previous increment.
            let mut lanes = vec![[0u64; 4]; fb.n_bins()];
            let mut quads = col.chunks_exact(4);
            for q in &mut quads {
                lanes[q[0].idx()][0] += 1;
                lanes[q[1].idx()][1] += 1;
                lanes[q[2].idx()][2] += 1;
                lanes[q[3].idx()][3] += 1;
            }
            for c in quads.remainder() {
                lanes[c.idx()][0] += 1;
            }
            mode(lanes.iter().map(|l| l.iter().sum::<u64>()))
        })
        .collect_into_vec(&mut modes);
    Ok(modes)
}

/// The most frequent bin of per-bin `counts` (the lowest on ties) and its count.
pub(super) fn mode(counts: impl Iterator<Item = u64>) -> (usize, u64) {
    counts
        .enumerate()
        .max_by_key(|&(b, c)| (c, std::cmp::Reverse(b)))
        .unwrap_or((0, 0))
}

/// What binning decides per feature from its most frequent bin: the
/// default bin (skipped by the kernels) and whether the feature can split
/// any node at all. A split puts the mode's rows on one side, so the other
/// side has at most n − top rows: below `min_rows` (the fit's row minimum
/// per leaf; 0 keeps every feature) no split is possible, on any subset of
/// the rows either.
pub(super) struct FeatureUse {
    pub default_bins: Vec<Option<usize>>,
    pub used: Vec<bool>,
}

impl FeatureUse {
    pub(super) fn from_modes(
        modes: &[(usize, u64)],
        n: usize,
        min_rows: usize,
    ) -> Result<FeatureUse> {
        let mut default_bins = with_capacity(modes.len(), "the features' default bins")?;
        default_bins.extend(
            modes
                .iter()
                .map(|&(bin, top)| (top as f64 >= DEFAULT_BIN_SHARE * n as f64).then_some(bin)),
        );
        let mut used = with_capacity(modes.len(), "the features in use")?;
        used.extend(
            modes
                .iter()
                .map(|&(_, top)| min_rows == 0 || n as u64 - top >= min_rows as u64),
        );
        Ok(FeatureUse { default_bins, used })
    }

    /// The histogram offsets of sparse rows (used features only) when the
    /// data is sparse enough to keep them instead of codes: the rows would
    /// hold every row of a used feature without a default bin and the
    /// non-default rows of the others, at most `SPARSE_MAX_SHARE` of all
    /// codes, and every global bin fits a u32.
    pub(super) fn sparse_offsets(
        &self,
        modes: &[(usize, u64)],
        n: usize,
        mapper: &BinMapper,
    ) -> Result<Option<Vec<usize>>> {
        let p = modes.len();
        if self.default_bins.iter().all(Option::is_none) {
            return Ok(None);
        }
        let total: u64 = modes
            .iter()
            .zip(&self.default_bins)
            .zip(&self.used)
            .filter(|(_, used)| **used)
            .map(|((&(_, top), d), _)| n as u64 - if d.is_some() { top } else { 0 })
            .sum();
        let offsets = self.offsets(mapper, true)?;
        let fits = *offsets.last().unwrap_or(&0) <= u32::MAX as usize;
        Ok((fits && total as f64 <= SPARSE_MAX_SHARE * n as f64 * p as f64).then_some(offsets))
    }

    /// Histogram offsets: every feature's bins, or with `filtered` only the
    /// used features'.
    pub(super) fn offsets(&self, mapper: &BinMapper, filtered: bool) -> Result<Vec<usize>> {
        let mut offsets = with_capacity(mapper.n_features() + 1, "the histogram offsets")?;
        let mut total = 0;
        for (fb, &used) in mapper.features.iter().zip(&self.used) {
            offsets.push(total);
            if used || !filtered {
                total += fb.n_bins();
            }
        }
        offsets.push(total);
        Ok(offsets)
    }
}

/// Sparse rows from the feature-major codes: the codes of used features
/// other than their default bins (see `FeatureUse`), at `offsets`.
fn build_sparse_rows(
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

/// Rows `r0..r0 + m` of the feature-major `codes` (n rows per feature).
fn column_slices<C>(codes: &[C], n: usize, r0: usize, m: usize) -> impl Iterator<Item = &[C]> {
    codes.chunks_exact(n).map(move |col| &col[r0..r0 + m])
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

/// The row-major copy of feature-major `codes` (n rows, p features),
/// transposed a block of rows at a time.
fn row_major_codes<C: BinCode>(codes: &[C], n: usize, p: usize, cancel: &Cancel) -> Result<Vec<C>> {
    let mut rows = alloc_codes::<C>(codes.len(), "row-major")?;
    rows.par_chunks_mut(ROW_BLOCK * p)
        .enumerate()
        .for_each(|(b, block)| {
            if cancel.is_set() {
                return;
            }
            let m = block.len() / p;
            let cols: Vec<&[C]> = column_slices(codes, n, b * ROW_BLOCK, m).collect();
            // Rows written in order, each gathered from the p columns'
            // current cache lines.
            for (r, row) in block.chunks_exact_mut(p).enumerate() {
                for (out, col) in row.iter_mut().zip(&cols) {
                    *out = col[r];
                }
            }
        });
    cancel.check()?;
    Ok(rows)
}

fn alloc_codes<C: BinCode>(len: usize, what: &str) -> Result<Vec<C>> {
    crate::alloc::filled_vec(len, C::from_idx(0), &format!("the {what} binned matrix"))
}

/// Rows per task when filling or transposing codes row-block by row-block.
const ROW_BLOCK: usize = 4096;
/// Threshold tables above this size are read one feature at a time...
const WIDE_BYTES: usize = 256 << 10;
/// ...when a block of rows is at most this large.
const BLOCK_IN_CACHE_BYTES: usize = 1 << 20;

/// Bins every value and returns the feature-major codes. Infinity is an
/// error (NaN = missing).
fn fill_codes<C: BinCode, T: Element>(
    x: &Matrix<T>,
    mapper: &BinMapper,
    cancel: &Cancel,
) -> Result<Vec<C>> {
    let len = x
        .n_rows()
        .checked_mul(x.n_cols())
        .ok_or_else(|| RgbmError::Shape("n_rows * n_features overflows".into()))?;
    match x {
        Matrix::Dense(x) => fill_dense_codes(x, len, mapper, cancel),
        Matrix::Sparse(x) => fill_sparse_codes(x, len, mapper, cancel),
    }
}

/// The codes of a CSC matrix, column by column: a column starts as the
/// code of zero and its stored entries overwrite their rows.
fn fill_sparse_codes<C: BinCode, T: Element>(
    x: &SparseMatrix<T>,
    len: usize,
    mapper: &BinMapper,
    cancel: &Cancel,
) -> Result<Vec<C>> {
    if x.layout() == SparseLayout::Csr {
        return fill_csr_codes(x, len, mapper, cancel);
    }
    let n = x.n_rows();
    let mut cols = alloc_codes::<C>(len, "feature-major")?;
    let bad = cols
        .par_chunks_mut(n.max(1))
        .enumerate()
        .map(|(j, col)| {
            if cancel.is_set() {
                return None;
            }
            let fb = &mapper.features[j];
            col.fill(C::from_idx(fb.bin(0.0)));
            let (idx, vals) = x.major(j);
            let mut bad = None;
            for (&i, v) in idx.iter().zip(vals) {
                let v = v.to_f64();
                if v.is_infinite() && bad.is_none() {
                    bad = Some((i as usize, j));
                }
                col[i as usize] = C::from_idx(fb.bin(v));
            }
            bad
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .min();
    cancel.check()?;
    if let Some((i, j)) = bad {
        return Err(infinity_error(i, j));
    }
    Ok(cols)
}

/// The codes of a CSR matrix by block of rows: each block's slice of every
/// column starts as the code of zero and the block's stored entries
/// overwrite their rows.
fn fill_csr_codes<C: BinCode, T: Element>(
    x: &SparseMatrix<T>,
    len: usize,
    mapper: &BinMapper,
    cancel: &Cancel,
) -> Result<Vec<C>> {
    let n = x.n_rows();
    let mut zero: Vec<C> = with_capacity(mapper.n_features(), "the codes of zero")?;
    zero.extend(mapper.features.iter().map(|fb| C::from_idx(fb.bin(0.0))));
    let mut cols = alloc_codes::<C>(len, "feature-major")?;
    let col_parts = block_parts(n, mapper.n_features())?;
    let mut col_parts: Vec<Vec<&mut [C]>> = col_parts;
    for col in cols.chunks_mut(n.max(1)) {
        for (parts, part) in col_parts.iter_mut().zip(col.chunks_mut(ROW_BLOCK)) {
            parts.push(part);
        }
    }
    let bad = col_parts
        .into_par_iter()
        .enumerate()
        .map(|(b, mut col_part)| {
            if cancel.is_set() {
                return None;
            }
            let r0 = b * ROW_BLOCK;
            let m = col_part.first().map_or(0, |c| c.len());
            for (col, &z) in col_part.iter_mut().zip(&zero) {
                col.fill(z);
            }
            let mut bad = None;
            for (r, row) in (r0..r0 + m).enumerate() {
                let (idx, vals) = x.major(row);
                for (&j, v) in idx.iter().zip(vals) {
                    let (j, v) = (j as usize, v.to_f64());
                    if v.is_infinite() && bad.is_none() {
                        bad = Some((row, j));
                    }
                    col_part[j][r] = C::from_idx(mapper.features[j].bin(v));
                }
            }
            bad
        })
        .find_first(|b| b.is_some())
        .flatten();
    cancel.check()?;
    if let Some((i, j)) = bad {
        return Err(infinity_error(i, j));
    }
    Ok(cols)
}

/// Bins every value of a dense matrix, reading it in its memory order.
fn fill_dense_codes<C: BinCode, T: Element>(
    x: &DenseMatrix<T>,
    len: usize,
    mapper: &BinMapper,
    cancel: &Cancel,
) -> Result<Vec<C>> {
    let (n, p) = (x.n_rows(), x.n_cols());
    let infinity = infinity_error;
    if x.is_row_major() {
        // Threshold tables too large to stay in cache together (max_bins in
        // the thousands) are read one at a time, going over the block once
        // per feature, while the block itself stays in cache.
        let table_bytes: usize = mapper.features.iter().map(|f| f.thresholds.len() * 8).sum();
        let block_bytes = ROW_BLOCK * p * std::mem::size_of::<T>();
        let wide = table_bytes > WIDE_BYTES && block_bytes <= BLOCK_IN_CACHE_BYTES;
        let mut cols = alloc_codes::<C>(len, "feature-major")?;
        // Each block of rows writes its slice of every column.
        let mut col_parts: Vec<Vec<&mut [C]>> = block_parts(n, p)?;
        for col in cols.chunks_mut(n) {
            for (parts, part) in col_parts.iter_mut().zip(col.chunks_mut(ROW_BLOCK)) {
                parts.push(part);
            }
        }
        let bad = col_parts
            .into_par_iter()
            .enumerate()
            .map(|(b, mut col_part)| {
                if cancel.is_set() {
                    return None;
                }
                let r0 = b * ROW_BLOCK;
                let mut gathered = Vec::new();
                let m = col_part.first().map_or(0, |c| c.len());
                let values = x.row_block(r0, m, &mut gathered);
                // Infinity is flagged without a branch; its position is
                // looked up only when there is one.
                let mut infinite = false;
                if wide {
                    // One feature's thresholds at a time stay in cache.
                    for (j, (fb, col)) in
                        mapper.features.iter().zip(col_part.iter_mut()).enumerate()
                    {
                        for (k, row) in values.chunks_exact(p).enumerate() {
                            let v = row[j].to_f64();
                            infinite |= v.is_infinite();
                            col[k] = C::from_idx(fb.bin(v));
                        }
                    }
                } else {
                    for (k, row) in values.chunks_exact(p).enumerate() {
                        for ((v, fb), col) in
                            row.iter().zip(&mapper.features).zip(col_part.iter_mut())
                        {
                            let v = v.to_f64();
                            infinite |= v.is_infinite();
                            col[k] = C::from_idx(fb.bin(v));
                        }
                    }
                }
                if !infinite {
                    return None;
                }
                let at = values.iter().position(|v| v.to_f64().is_infinite())?;
                Some((r0 + at / p, at % p))
            })
            .find_first(|b| b.is_some())
            .flatten();
        cancel.check()?;
        if let Some((i, j)) = bad {
            return Err(infinity(i, j));
        }
        Ok(cols)
    } else {
        let mut cols = alloc_codes::<C>(len, "feature-major")?;
        let bad = cols
            .par_chunks_mut(n)
            .enumerate()
            .map(|(j, col)| {
                let mut bad = None;
                if cancel.is_set() {
                    return bad;
                }
                let fb = &mapper.features[j];
                x.for_each_in_col(j, |i, v| {
                    if v.is_infinite() && bad.is_none() {
                        bad = Some((i, j));
                    }
                    col[i] = C::from_idx(fb.bin(v));
                });
                bad
            })
            .collect::<Vec<_>>()
            .into_iter()
            .flatten()
            .min();
        cancel.check()?;
        if let Some((i, j)) = bad {
            return Err(infinity(i, j));
        }
        Ok(cols)
    }
}

impl BinnedDataset {
    /// Bins `x` with a new mapper fitted on it (unweighted quantiles).
    pub fn from_matrix<T: Element>(
        x: &impl AsMatrix<T>,
        max_bins: usize,
        seed: u64,
    ) -> Result<BinnedDataset> {
        Self::from_weighted_matrix(x, max_bins, seed, None, &[], 0, &Cancel::never())
    }

    /// Bins `x` with a new mapper fitted on it (at most `max_bins` value
    /// bins per feature, each with at least `min_data_in_bin` sample rows;
    /// a bare `max_bins` means 1), quantiles weighted by `weights`, the `categorical` features one bin per category; `min_rows`
    /// as in `bin`; stops with `Interrupted` once `cancel` is set.
    pub fn from_weighted_matrix<T: Element>(
        x: &impl AsMatrix<T>,
        limits: impl Into<BinLimits>,
        seed: u64,
        weights: Option<&[f64]>,
        categorical: &[usize],
        min_rows: usize,
        cancel: &Cancel,
    ) -> Result<BinnedDataset> {
        let x = x.as_matrix();
        if x.n_rows() == 0 || x.n_cols() == 0 {
            return Err(RgbmError::EmptyInput(format!(
                "X has shape ({}, {}); at least one row and one feature are needed",
                x.n_rows(),
                x.n_cols()
            )));
        }
        // The per-column tables (cut points, modes, default bins, offsets)
        // follow X's columns, not the columns that hold values: a sparse X
        // of billions of mostly empty columns would exhaust the machine.
        let p = x.n_cols() as u64;
        crate::alloc::ensure_available(p.saturating_mul(PER_COLUMN_BYTES), || {
            format!(
                "X has {p} columns: binning's per-column tables ({PER_COLUMN_BYTES} bytes per column, whether or not it holds values; drop the columns without values)"
            )
        })?;
        let mapper = BinMapper::fit_with_categories(
            &x,
            limits,
            seed,
            weights,
            categorical,
            min_rows,
            cancel,
        )?;
        Self::bin(&x, mapper, min_rows, cancel)
    }

    /// Bins `x` with an existing mapper (e.g. validation data).
    pub fn with_mapper<T: Element>(
        x: &impl AsMatrix<T>,
        mapper: BinMapper,
    ) -> Result<BinnedDataset> {
        Self::bin(&x.as_matrix(), mapper, 0, &Cancel::never())
    }

    /// Bins `x` with another dataset's mapper and `min_rows` (see `bin`): a
    /// dataset a fit may train on with the options that dataset was binned
    /// with, e.g. validation rows or more rows of the same kind.
    pub fn with_bins_of<T: Element>(
        x: &impl AsMatrix<T>,
        other: &BinnedDataset,
        cancel: &Cancel,
    ) -> Result<BinnedDataset> {
        Self::bin(&x.as_matrix(), other.mapper.clone(), other.min_rows, cancel)
    }

    /// Bins `x` with `mapper`. Mostly-default data keeps sparse rows only,
    /// without the features that have fewer than `min_rows` rows outside
    /// their most populated bin (0 keeps every feature: a shard's rows do
    /// not say what the whole data can split).
    pub(crate) fn bin<T: Element>(
        x: &Matrix<T>,
        mapper: BinMapper,
        min_rows: usize,
        cancel: &Cancel,
    ) -> Result<BinnedDataset> {
        if x.n_rows() == 0 {
            return Err(RgbmError::EmptyInput(
                "X has no rows; at least one row is needed".into(),
            ));
        }
        if x.n_cols() != mapper.n_features() {
            return Err(RgbmError::Shape(format!(
                "X has {} features, the bin mapper {}",
                x.n_cols(),
                mapper.n_features()
            )));
        }
        if let Matrix::Sparse(sx) = x
            && let Some((features, offsets, sparse)) =
                super::sparse_binning::bin_entries(sx, &mapper, min_rows, cancel)?
        {
            let n = x.n_rows();
            return Self::from_sparse_rows(n, mapper, features, offsets, sparse, min_rows);
        }
        let n = x.n_rows();
        let codes = if mapper.fits_u8() {
            BinCodes::U8(fill_codes::<u8, T>(x, &mapper, cancel)?)
        } else {
            BinCodes::U16(fill_codes::<u16, T>(x, &mapper, cancel)?)
        };
        Self::from_codes(n, mapper, codes, min_rows, cancel)
    }

    /// The dataset of `n` rows whose feature-major `codes` are given: the
    /// default bins, used features and layouts found from them.
    fn from_codes(
        n: usize,
        mapper: BinMapper,
        codes: BinCodes,
        min_rows: usize,
        cancel: &Cancel,
    ) -> Result<BinnedDataset> {
        let modes = find_modes(&codes, n, &mapper)?;
        cancel.check()?;
        let features = FeatureUse::from_modes(&modes, n, min_rows)?;
        if let Some(bin_offsets) = features.sparse_offsets(&modes, n, &mapper)? {
            // The sparse rows replace both copies of the codes.
            let sparse = build_sparse_rows(&codes, n, &features, &bin_offsets, cancel)?;
            return Self::from_sparse_rows(n, mapper, features, bin_offsets, sparse, min_rows);
        }
        // Dense data: every feature keeps its bins and default bin.
        let (p, bin_offsets) = (mapper.n_features(), features.offsets(&mapper, false)?);
        let row_codes = match &codes {
            BinCodes::U8(c) => BinCodes::U8(row_major_codes(c, n, p, cancel)?),
            BinCodes::U16(c) => BinCodes::U16(row_major_codes(c, n, p, cancel)?),
        };
        Ok(BinnedDataset {
            n_rows: n,
            mapper,
            codes: Some(codes),
            row_codes,
            bin_offsets,
            default_bins: features.default_bins,
            sparse_rows: None,
            column_index: None,
            min_rows,
        })
    }

    /// A dataset whose codes are all in `sparse` (unused features have no
    /// bins and no default bin).
    pub(super) fn from_sparse_rows(
        n_rows: usize,
        mapper: BinMapper,
        features: FeatureUse,
        bin_offsets: Vec<usize>,
        sparse: SparseRows,
        min_rows: usize,
    ) -> Result<BinnedDataset> {
        let columns = ColumnIndex::of(&sparse, &bin_offsets)?;
        let default_bins = features
            .default_bins
            .into_iter()
            .zip(&features.used)
            .map(|(d, &used)| d.filter(|_| used))
            .collect();
        Ok(BinnedDataset {
            n_rows,
            mapper,
            codes: None,
            row_codes: BinCodes::U8(Vec::new()),
            bin_offsets,
            default_bins,
            sparse_rows: Some(sparse),
            column_index: Some(columns),
            min_rows,
        })
    }

    pub fn n_features(&self) -> usize {
        self.mapper.n_features()
    }

    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// The bin boundaries (to bin other data the same way).
    pub fn mapper(&self) -> &BinMapper {
        &self.mapper
    }

    pub fn total_bins(&self) -> usize {
        *self.bin_offsets.last().unwrap_or(&0)
    }

    /// The code of (row, feature), for slow paths (tests, a few rows).
    #[inline]
    pub fn code(&self, row: usize, feature: usize) -> usize {
        match self.column(feature) {
            Column::U8(c) => c[row] as usize,
            Column::U16(c) => c[row] as usize,
            Column::Sparse(c) => c.code(row),
        }
    }

    /// Feature `j`'s codes, from the feature-major copy or the sparse rows.
    pub(crate) fn column(&self, j: usize) -> Column<'_> {
        let n = self.n_rows;
        match (&self.codes, &self.sparse_rows, &self.column_index) {
            (Some(BinCodes::U8(c)), ..) => Column::U8(&c[j * n..(j + 1) * n]),
            (Some(BinCodes::U16(c)), ..) => Column::U16(&c[j * n..(j + 1) * n]),
            (None, Some(rows), Some(index)) => Column::Sparse(SparseColumn {
                rows,
                index,
                feature: j,
                lo: self.bin_offsets[j] as u32,
                hi: self.bin_offsets[j + 1] as u32,
                default: self.default_bins[j].unwrap_or(0),
            }),
            (None, ..) => unreachable!("a dataset keeps codes or sparse rows and their index"),
        }
    }

    /// The `min_rows` of the binning (see `bin`).
    pub fn min_rows(&self) -> usize {
        self.min_rows
    }

    /// A value of row `row`'s bin of `feature` that every tree split on
    /// this dataset's bins sends the way the row's raw value goes (see
    /// [`crate::data::binning::FeatureBins::bin_value`]): training from binned rows alone.
    #[inline]
    pub fn value(&self, row: usize, feature: usize) -> f64 {
        let code = self
            .row_code(row, feature)
            .unwrap_or_else(|| self.code(row, feature));
        self.mapper.features[feature].bin_value(code)
    }

    /// The dataset of `rows` (in that order, repeats allowed) with this
    /// dataset's bin boundaries: each row's codes are gathered, not binned
    /// again, and the layouts are found anew for these rows, so the result
    /// is the dataset binning those rows with this mapper would give
    /// (sparse input aside, whose layout may differ).
    pub fn subset(&self, rows: &[usize], cancel: &Cancel) -> Result<BinnedDataset> {
        if rows.is_empty() {
            return Err(RgbmError::EmptyInput(
                "a subset needs at least one row".into(),
            ));
        }
        if let Some(&bad) = rows.iter().find(|&&r| r >= self.n_rows) {
            return Err(RgbmError::Shape(format!(
                "row index {bad} is out of range for a dataset of {} rows",
                self.n_rows
            )));
        }
        let (m, p) = (rows.len(), self.n_features());
        let len = m
            .checked_mul(p)
            .ok_or_else(|| RgbmError::Shape("n_rows * n_features overflows".into()))?;
        let codes = if self.mapper.fits_u8() {
            BinCodes::U8(self.gather(rows, len, cancel)?)
        } else {
            BinCodes::U16(self.gather(rows, len, cancel)?)
        };
        Self::from_codes(m, self.mapper.clone(), codes, self.min_rows, cancel)
    }

    /// Feature-major codes of `rows`, a feature at a time.
    fn gather<C: BinCode>(&self, rows: &[usize], len: usize, cancel: &Cancel) -> Result<Vec<C>> {
        let mut out: Vec<C> = crate::alloc::filled_vec(len, C::from_idx(0), "the subset's codes")?;
        let m = rows.len();
        out.par_chunks_mut(m)
            .enumerate()
            .for_each(|(j, col)| match self.column(j) {
                Column::U8(c) => gather_into(col, rows, |r| c[r] as usize),
                Column::U16(c) => gather_into(col, rows, |r| c[r] as usize),
                Column::Sparse(c) => gather_into(col, rows, |r| c.code(r)),
            });
        cancel.check()?;
        Ok(out)
    }

    /// The code of (row, feature) read from the row-major copy, which only
    /// dense data keeps (None for sparse data, which keeps sparse rows).
    #[inline]
    pub fn row_code(&self, row: usize, feature: usize) -> Option<usize> {
        let k = row * self.n_features() + feature;
        match &self.row_codes {
            BinCodes::U8(c) => c.get(k).map(|&c| c as usize),
            BinCodes::U16(c) => c.get(k).map(|&c| c as usize),
        }
    }
}

/// `col[i]` = the code of `rows[i]` (codes of the same mapper fit `C`).
fn gather_into<C: BinCode>(col: &mut [C], rows: &[usize], code: impl Fn(usize) -> usize) {
    for (o, &r) in col.iter_mut().zip(rows) {
        *o = C::from_idx(code(r));
    }
}

#[cfg(test)]
mod sparse_tests;
#[cfg(test)]
mod tests;
