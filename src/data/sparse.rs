//! Borrowed compressed sparse matrices (scipy's CSC and CSR): entries that
//! are not stored are zero, a stored NaN is missing. Nothing is copied or
//! densified; binning reads the stored entries in either layout, prediction
//! writes a small block of rows out at a time.
use super::element::Element;
use crate::error::{Result, RgbmError};

/// Which axis the index pointer runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SparseLayout {
    /// Compressed sparse columns: `indptr` has n_cols + 1 entries, `indices` are rows.
    Csc,
    /// Compressed sparse rows: `indptr` has n_rows + 1 entries, `indices` are columns.
    Csr,
}

#[derive(Clone, Copy, Debug)]
pub struct SparseMatrix<'a, T: Element> {
    layout: SparseLayout,
    n_rows: usize,
    n_cols: usize,
    indptr: &'a [i64],
    indices: &'a [i32],
    data: &'a [T],
}

impl<'a, T: Element> SparseMatrix<'a, T> {
    /// A view of scipy's (indptr, indices, data) arrays. Checks everything
    /// reading relies on: the pointer runs from 0 to the number of entries
    /// without decreasing, and the indices of each row or column are in
    /// bounds and strictly increasing (sorted, no duplicates).
    pub fn new(
        layout: SparseLayout,
        n_rows: usize,
        n_cols: usize,
        indptr: &'a [i64],
        indices: &'a [i32],
        data: &'a [T],
    ) -> Result<Self> {
        let (major, minor) = match layout {
            SparseLayout::Csc => (n_cols, n_rows),
            SparseLayout::Csr => (n_rows, n_cols),
        };
        let bad = |msg: String| Err(RgbmError::Shape(format!("sparse X: {msg}")));
        if indptr.len() != major + 1 {
            return bad(format!(
                "indptr has {} entries, expected {}",
                indptr.len(),
                major + 1
            ));
        }
        if indices.len() != data.len() {
            return bad(format!(
                "{} indices but {} values",
                indices.len(),
                data.len()
            ));
        }
        if indptr[0] != 0 || indptr[major] != data.len() as i64 {
            return bad(format!(
                "indptr must run from 0 to the number of entries ({}), got {} to {}",
                data.len(),
                indptr[0],
                indptr[major]
            ));
        }
        for k in 0..major {
            let (a, b) = (indptr[k], indptr[k + 1]);
            if b < a {
                return bad("indptr decreases".into());
            }
            let mut last = -1i64;
            for &i in &indices[a as usize..b as usize] {
                let i = i64::from(i);
                if i <= last || i >= minor as i64 {
                    return bad(format!(
                        "indices must be sorted, distinct and below {minor}; \
                         call sum_duplicates() and sort_indices() first"
                    ));
                }
                last = i;
            }
        }
        Ok(SparseMatrix {
            layout,
            n_rows,
            n_cols,
            indptr,
            indices,
            data,
        })
    }

    pub fn layout(&self) -> SparseLayout {
        self.layout
    }
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }
    /// Number of rows (CSR) or columns (CSC) the index pointer runs over.
    pub fn major_count(&self) -> usize {
        self.indptr.len() - 1
    }
    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.data.len()
    }

    /// The stored (index, value) entries of column k (CSC) or row k (CSR),
    /// indices increasing.
    #[inline]
    pub fn major(&self, k: usize) -> (&'a [i32], &'a [T]) {
        let (a, b) = (self.indptr[k] as usize, self.indptr[k + 1] as usize);
        (&self.indices[a..b], &self.data[a..b])
    }

    #[inline]
    pub fn get(&self, row: usize, col: usize) -> f64 {
        let (k, i) = match self.layout {
            SparseLayout::Csc => (col, row),
            SparseLayout::Csr => (row, col),
        };
        let (idx, vals) = self.major(k);
        match idx.binary_search(&(i as i32)) {
            Ok(at) => vals[at].to_f64(),
            Err(_) => 0.0,
        }
    }

    /// Rows start..start+rows written out row-major into `buf`, zeros included.
    pub fn row_block<'b>(&self, start: usize, rows: usize, buf: &'b mut Vec<T>) -> &'b [T] {
        let p = self.n_cols;
        buf.clear();
        buf.resize(rows * p, T::ZERO);
        match self.layout {
            SparseLayout::Csr => {
                for (r, out) in buf.chunks_exact_mut(p.max(1)).enumerate().take(rows) {
                    let (idx, vals) = self.major(start + r);
                    for (&j, &v) in idx.iter().zip(vals) {
                        out[j as usize] = v;
                    }
                }
            }
            SparseLayout::Csc => {
                let (lo, hi) = (start as i32, (start + rows) as i64);
                for j in 0..p {
                    let (idx, vals) = self.major(j);
                    let from = idx.partition_point(|&i| i < lo);
                    for (&i, &v) in idx[from..].iter().zip(&vals[from..]) {
                        if i64::from(i) >= hi {
                            break;
                        }
                        buf[(i as usize - start) * p + j] = v;
                    }
                }
            }
        }
        buf
    }

    /// Rejects +-inf among the stored values (NaN is missing), naming the
    /// first in row order as the dense check does.
    pub fn check_no_infinity(&self) -> Result<()> {
        match self.first_infinity() {
            Some((row, col)) => Err(infinity_error(row, col)),
            None => Ok(()),
        }
    }

    /// (row, column) of the first infinite value in row order.
    pub(crate) fn first_infinity(&self) -> Option<(usize, usize)> {
        let mut found: Option<(usize, usize)> = None;
        for k in 0..self.indptr.len() - 1 {
            let (idx, vals) = self.major(k);
            if let Some(at) = vals.iter().position(|v| v.to_f64().is_infinite()) {
                let i = idx[at] as usize;
                let at = match self.layout {
                    SparseLayout::Csc => (i, k),
                    SparseLayout::Csr => return Some((k, i)),
                };
                found = Some(found.map_or(at, |f| f.min(at)));
            }
        }
        found
    }
}

pub(crate) fn infinity_error(row: usize, col: usize) -> RgbmError {
    RgbmError::NonFinite(format!(
        "X contains infinity at row {row}, column {col} (NaN is allowed and means missing)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DenseMatrix;

    /// (indptr, indices, data).
    type Arrays = (Vec<i64>, Vec<i32>, Vec<f64>);

    /// A 3 × 4 matrix in both layouts and dense.
    fn example() -> (Vec<f64>, [Arrays; 2]) {
        let dense = vec![
            0.0,
            1.5,
            0.0,
            f64::NAN,
            -2.0,
            0.0,
            0.0,
            0.0,
            0.0,
            3.0,
            0.0,
            4.0,
        ];
        let csr = (
            vec![0, 2, 4, 6],
            vec![1, 3, 0, 2, 1, 3],
            vec![1.5, f64::NAN, -2.0, 0.0, 3.0, 4.0],
        );
        let csc = (
            vec![0, 1, 3, 4, 6],
            vec![1, 0, 2, 1, 0, 2],
            vec![-2.0, 1.5, 3.0, 0.0, f64::NAN, 4.0],
        );
        (dense, [csc, csr])
    }

    #[test]
    fn both_layouts_read_as_the_dense_matrix() {
        let (dense, layouts) = example();
        let d = DenseMatrix::row_major(&dense, 3, 4).unwrap();
        for ((p, i, v), layout) in layouts.iter().zip([SparseLayout::Csc, SparseLayout::Csr]) {
            let s = SparseMatrix::new(layout, 3, 4, p, i, v).unwrap();
            for r in 0..3 {
                for c in 0..4 {
                    assert_eq!(s.get(r, c).to_bits(), d.get(r, c).to_bits());
                }
            }
            let mut buf = Vec::new();
            for (start, rows) in [(0, 3), (1, 2), (2, 1), (1, 0)] {
                let block: Vec<u64> = s
                    .row_block(start, rows, &mut buf)
                    .iter()
                    .map(|v| v.to_bits())
                    .collect();
                let expected: Vec<u64> = dense[start * 4..(start + rows) * 4]
                    .iter()
                    .map(|v| v.to_bits())
                    .collect();
                assert_eq!(block, expected);
            }
        }
    }

    #[test]
    fn malformed_structure_and_infinity_are_refused() {
        let v = [1.0f64, 2.0];
        let csc = SparseLayout::Csc;
        assert!(SparseMatrix::new(csc, 2, 2, &[0, 1, 2], &[0, 2], &v).is_err());
        assert!(SparseMatrix::new(csc, 2, 2, &[0, 2, 2], &[1, 0], &v).is_err());
        assert!(SparseMatrix::new(csc, 2, 2, &[0, 2, 2], &[1, 1], &v).is_err());
        assert!(SparseMatrix::new(csc, 2, 2, &[0, 2, 1], &[0, 1], &v).is_err());
        assert!(SparseMatrix::new(csc, 2, 2, &[0, 1], &[0, 1], &v).is_err());
        assert!(SparseMatrix::new(csc, 2, 2, &[0, 1, 2], &[0, -1], &v).is_err());
        assert!(SparseMatrix::new(csc, 2, 2, &[0, 1, 2], &[0], &v).is_err());
        let ok = SparseMatrix::new(csc, 2, 2, &[0, 1, 2], &[1, 0], &v).unwrap();
        ok.check_no_infinity().unwrap();
        // Infinity at (1, 0) and (0, 1): the first in row order is named.
        let inf = [f64::INFINITY, f64::NEG_INFINITY];
        for (layout, idx) in [(csc, [1, 0]), (SparseLayout::Csr, [1, 0])] {
            let m = SparseMatrix::new(layout, 2, 2, &[0, 1, 2], &idx, &inf).unwrap();
            let e = m.check_no_infinity().unwrap_err().to_string();
            assert!(e.contains("row 0, column 1"), "{e}");
        }
    }
}
