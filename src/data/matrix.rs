//! Borrowed dense matrices of f32 or f64 in C (row-major) or Fortran
//! (column-major) order. Nothing is copied: training and prediction read the
//! caller's buffer through the strides.
pub use super::element::Element;
use super::sparse::SparseMatrix;
use crate::error::{Result, RgbmError};

/// The input of binning, training and prediction: a dense or a sparse view.
#[derive(Clone, Copy, Debug)]
pub enum Matrix<'a, T: Element> {
    Dense(DenseMatrix<'a, T>),
    Sparse(SparseMatrix<'a, T>),
}

/// Anything that can be read as a [`Matrix`]: the views themselves.
pub trait AsMatrix<T: Element>: Sync {
    fn as_matrix(&self) -> Matrix<'_, T>;
}
impl<T: Element> AsMatrix<T> for DenseMatrix<'_, T> {
    fn as_matrix(&self) -> Matrix<'_, T> {
        Matrix::Dense(*self)
    }
}
impl<T: Element> AsMatrix<T> for SparseMatrix<'_, T> {
    fn as_matrix(&self) -> Matrix<'_, T> {
        Matrix::Sparse(*self)
    }
}
impl<T: Element> AsMatrix<T> for Matrix<'_, T> {
    fn as_matrix(&self) -> Matrix<'_, T> {
        *self
    }
}
impl<'a, T: Element> From<DenseMatrix<'a, T>> for Matrix<'a, T> {
    fn from(m: DenseMatrix<'a, T>) -> Self {
        Matrix::Dense(m)
    }
}
impl<'a, T: Element> From<SparseMatrix<'a, T>> for Matrix<'a, T> {
    fn from(m: SparseMatrix<'a, T>) -> Self {
        Matrix::Sparse(m)
    }
}

impl<T: Element> Matrix<'_, T> {
    pub fn n_rows(&self) -> usize {
        match self {
            Matrix::Dense(m) => m.n_rows(),
            Matrix::Sparse(m) => m.n_rows(),
        }
    }
    pub fn n_cols(&self) -> usize {
        match self {
            Matrix::Dense(m) => m.n_cols(),
            Matrix::Sparse(m) => m.n_cols(),
        }
    }
    /// Values held: every cell of a dense matrix, the stored entries of a sparse one.
    pub fn stored_values(&self) -> usize {
        match self {
            Matrix::Dense(m) => m.n_rows().saturating_mul(m.n_cols()),
            Matrix::Sparse(m) => m.nnz(),
        }
    }
    /// The value at (row, col); a search within the row or column for sparse input.
    #[inline]
    pub fn get(&self, row: usize, col: usize) -> f64 {
        match self {
            Matrix::Dense(m) => m.get(row, col),
            Matrix::Sparse(m) => m.get(row, col),
        }
    }
    /// Rows start..start+rows as one row-major slice (see `DenseMatrix::row_block`);
    /// sparse rows are written out into `buf`, zeros included.
    pub fn row_block<'b>(&'b self, start: usize, rows: usize, buf: &'b mut Vec<T>) -> &'b [T] {
        match self {
            Matrix::Dense(m) => m.row_block(start, rows, buf),
            Matrix::Sparse(m) => m.row_block(start, rows, buf),
        }
    }
    /// Rejects +-inf (NaN means missing), naming the first in row order.
    pub fn check_no_infinity(&self) -> Result<()> {
        match self {
            Matrix::Dense(m) => m.check_no_infinity(),
            Matrix::Sparse(m) => m.check_no_infinity(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct DenseMatrix<'a, T: Element> {
    data: &'a [T],
    n_rows: usize,
    n_cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a, T: Element> DenseMatrix<'a, T> {
    /// A row-major (C order) view.
    pub fn row_major(data: &'a [T], n_rows: usize, n_cols: usize) -> Result<Self> {
        Self::with_strides(data, n_rows, n_cols, n_cols, 1)
    }

    /// A column-major (Fortran order) view.
    pub fn col_major(data: &'a [T], n_rows: usize, n_cols: usize) -> Result<Self> {
        Self::with_strides(data, n_rows, n_cols, 1, n_rows)
    }

    /// A view with explicit element strides; checks that every index is in bounds.
    pub fn with_strides(
        data: &'a [T],
        n_rows: usize,
        n_cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self> {
        if n_rows > 0 && n_cols > 0 {
            let last = (n_rows - 1)
                .checked_mul(row_stride)
                .and_then(|a| {
                    (n_cols - 1)
                        .checked_mul(col_stride)
                        .and_then(|b| a.checked_add(b))
                })
                .ok_or_else(|| RgbmError::Shape("matrix strides overflow".into()))?;
            if last >= data.len() {
                return Err(RgbmError::Shape(format!(
                    "a {n_rows} x {n_cols} matrix with strides ({row_stride}, {col_stride}) needs more than {} elements",
                    data.len()
                )));
            }
        }
        Ok(DenseMatrix {
            data,
            n_rows,
            n_cols,
            row_stride,
            col_stride,
        })
    }

    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }
    pub fn is_row_major(&self) -> bool {
        self.col_stride == 1
    }

    #[inline(always)]
    pub fn get(&self, row: usize, col: usize) -> f64 {
        self.data[row * self.row_stride + col * self.col_stride].to_f64()
    }

    /// Rows start..start+rows as one row-major slice of rows × n_cols values:
    /// borrowed when the matrix is C-contiguous, otherwise gathered into `buf`.
    pub fn row_block<'b>(&'b self, start: usize, rows: usize, buf: &'b mut Vec<T>) -> &'b [T] {
        if self.col_stride == 1 && self.row_stride == self.n_cols {
            return &self.data[start * self.n_cols..(start + rows) * self.n_cols];
        }
        buf.clear();
        buf.extend((start..start + rows).flat_map(|r| {
            (0..self.n_cols).map(move |c| self.data[r * self.row_stride + c * self.col_stride])
        }));
        buf
    }

    /// Calls `f(row, value)` for every row of column `col`, in row order.
    pub fn for_each_in_col(&self, col: usize, mut f: impl FnMut(usize, f64)) {
        if self.row_stride == 1 {
            let start = col * self.col_stride;
            for (row, v) in self.data[start..start + self.n_rows].iter().enumerate() {
                f(row, v.to_f64());
            }
        } else {
            for row in 0..self.n_rows {
                f(row, self.get(row, col));
            }
        }
    }

    /// Rejects +-inf: NaN means "missing" and is allowed. Reads in memory order.
    pub fn check_no_infinity(&self) -> Result<()> {
        let found = if self.is_row_major() {
            (0..self.n_rows).find_map(|i| {
                (0..self.n_cols)
                    .find(|&j| self.get(i, j).is_infinite())
                    .map(|j| (i, j))
            })
        } else {
            (0..self.n_cols)
                .filter_map(|j| {
                    let mut bad = None;
                    self.for_each_in_col(j, |i, v| {
                        if v.is_infinite() && bad.is_none() {
                            bad = Some(i);
                        }
                    });
                    bad.map(|i| (i, j))
                })
                .min()
        };
        match found {
            Some((row, col)) => Err(RgbmError::NonFinite(format!(
                "X contains infinity at row {row}, column {col} (NaN is allowed and means missing)"
            ))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_and_f_order_agree() {
        let c = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 x 3
        let f = [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0];
        let a = DenseMatrix::row_major(&c, 2, 3).unwrap();
        let b = DenseMatrix::col_major(&f, 2, 3).unwrap();
        for i in 0..2 {
            for j in 0..3 {
                assert_eq!(a.get(i, j), b.get(i, j));
            }
        }
        assert!(DenseMatrix::row_major(&c, 3, 3).is_err());
    }
}
