//! The binned training matrix: one small integer code per (feature, row),
//! stored feature-major so a histogram pass reads one contiguous column.
//!
//! Binning fills it in steps, a file each: `codes.rs` bins the values into
//! codes, `feature_use.rs` finds each feature's default bin from them,
//! `sparse_rows.rs` (or `sparse_binning.rs`, from a sparse matrix's
//! entries) keeps mostly-default data as sparse rows, `column_index.rs`
//! indexes those by feature. `file.rs` writes and reads the dataset.
use rayon::prelude::*;

use super::binning::{BinLimits, BinMapper};
use super::matrix::{AsMatrix, Element, Matrix};
use crate::cancel::Cancel;
use crate::error::{Result, RgbmError};

mod codes;
mod column_index;
mod feature_use;
mod file;
mod sparse_binning;
mod sparse_rows;
pub use codes::{BinCode, BinCodes};
use codes::{fill_codes, row_major_codes};
pub(crate) use column_index::{ColumnIndex, SparseColumn};
pub use feature_use::DEFAULT_BIN_SHARE;
use feature_use::{FeatureUse, find_modes};
pub use file::{DATASET_FORMAT_VERSION, Extra, Extras, MAGIC};
pub use sparse_rows::SparseRows;
use sparse_rows::build_sparse_rows;

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

/// Memory each column takes at once while it is binned, whether or not it
/// holds values: its cut points (`FeatureBins`) and its mode, both held
/// while the codes are summarised. The fit's other per-column tables come
/// on top.
const PER_COLUMN_BYTES: u64 = (std::mem::size_of::<crate::data::binning::FeatureBins>()
    + std::mem::size_of::<(usize, u64)>()) as u64;

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
                sparse_binning::bin_entries(sx, &mapper, min_rows, cancel)?
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
    fn from_sparse_rows(
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
