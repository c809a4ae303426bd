//! The codes themselves: the code types (u8, u16) and every value of a
//! dense or sparse matrix binned into feature-major codes, with their
//! row-major copy.
use rayon::prelude::*;

use crate::alloc::with_capacity;
use crate::cancel::Cancel;
use crate::data::binning::BinMapper;
use crate::data::matrix::{DenseMatrix, Element, Matrix};
use crate::data::sparse::{SparseLayout, SparseMatrix, infinity_error};
use crate::error::{Result, RgbmError};

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

/// Rows `r0..r0 + m` of the feature-major `codes` (n rows per feature).
pub(super) fn column_slices<C>(
    codes: &[C],
    n: usize,
    r0: usize,
    m: usize,
) -> impl Iterator<Item = &[C]> {
    codes.chunks_exact(n).map(move |col| &col[r0..r0 + m])
}

/// The row-major copy of feature-major `codes` (n rows, p features),
/// transposed a block of rows at a time.
pub(super) fn row_major_codes<C: BinCode>(
    codes: &[C],
    n: usize,
    p: usize,
    cancel: &Cancel,
) -> Result<Vec<C>> {
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
pub(super) const ROW_BLOCK: usize = 4096;
/// Threshold tables above this size are read one feature at a time...
pub(super) const WIDE_BYTES: usize = 256 << 10;
/// ...when a block of rows is at most this large.
const BLOCK_IN_CACHE_BYTES: usize = 1 << 20;

/// Bins every value and returns the feature-major codes. Infinity is an
/// error (NaN = missing).
pub(super) fn fill_codes<C: BinCode, T: Element>(
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
