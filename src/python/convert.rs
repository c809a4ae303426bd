//! numpy arrays and scipy.sparse arrays -> borrowed core views, without copying.
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::data::matrix::{DenseMatrix, Matrix as CoreMatrix};
use crate::data::sparse::{SparseLayout, SparseMatrix};

/// The arrays of a compressed sparse matrix, as the Python package passes
/// them: ("csc" or "csr", n_rows, n_cols, indptr int64, indices int32, data).
pub struct SparseArrays<'py, T: numpy::Element> {
    layout: SparseLayout,
    n_rows: usize,
    n_cols: usize,
    indptr: PyReadonlyArray1<'py, i64>,
    indices: PyReadonlyArray1<'py, i32>,
    data: PyReadonlyArray1<'py, T>,
}

/// A 2-D float32 or float64 array, C or Fortran contiguous, or a sparse one.
pub enum Matrix<'py> {
    F32(PyReadonlyArray2<'py, f32>),
    F64(PyReadonlyArray2<'py, f64>),
    SparseF32(SparseArrays<'py, f32>),
    SparseF64(SparseArrays<'py, f64>),
}

const EXPECTED: &str = "X must be a 2-D numpy array of float32 or float64, or a tuple \
     (layout, n_rows, n_cols, indptr, indices, data) of a compressed sparse matrix";

fn readonly1<'py, T: numpy::Element>(
    v: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<PyReadonlyArray1<'py, T>> {
    let a = v
        .cast::<PyArray1<T>>()
        .map_err(|_| PyTypeError::new_err(format!("sparse X: {what} has the wrong type")))?;
    let r = a.try_readonly()?;
    if r.as_slice().is_err() {
        return Err(PyValueError::new_err(format!(
            "sparse X: {what} must be contiguous and aligned"
        )));
    }
    Ok(r)
}

impl<'py> Matrix<'py> {
    pub fn extract(x: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = x.cast::<PyArray2<f64>>() {
            Ok(Matrix::F64(a.try_readonly()?))
        } else if let Ok(a) = x.cast::<PyArray2<f32>>() {
            Ok(Matrix::F32(a.try_readonly()?))
        } else if let Ok(t) = x.cast::<PyTuple>() {
            if t.len() != 6 {
                return Err(PyTypeError::new_err(EXPECTED));
            }
            let layout = match t.get_item(0)?.extract::<String>()?.as_str() {
                "csc" => SparseLayout::Csc,
                "csr" => SparseLayout::Csr,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "sparse X: layout must be 'csc' or 'csr', got {other:?}"
                    )));
                }
            };
            let n_rows: usize = t.get_item(1)?.extract()?;
            let n_cols: usize = t.get_item(2)?.extract()?;
            let indptr = readonly1::<i64>(&t.get_item(3)?, "indptr (int64)")?;
            let indices = readonly1::<i32>(&t.get_item(4)?, "indices (int32)")?;
            let data = t.get_item(5)?;
            if data.cast::<PyArray1<f64>>().is_ok() {
                Ok(Matrix::SparseF64(SparseArrays {
                    layout,
                    n_rows,
                    n_cols,
                    indptr,
                    indices,
                    data: readonly1(&data, "data")?,
                }))
            } else {
                Ok(Matrix::SparseF32(SparseArrays {
                    layout,
                    n_rows,
                    n_cols,
                    indptr,
                    indices,
                    data: readonly1(&data, "data (float32 or float64)")?,
                }))
            }
        } else {
            Err(PyTypeError::new_err(EXPECTED))
        }
    }

    pub fn is_f32(&self) -> bool {
        matches!(self, Matrix::F32(_) | Matrix::SparseF32(_))
    }

    pub fn n_rows(&self) -> usize {
        match self {
            Matrix::F32(a) => a.shape()[0],
            Matrix::F64(a) => a.shape()[0],
            Matrix::SparseF32(s) => s.n_rows,
            Matrix::SparseF64(s) => s.n_rows,
        }
    }
}

macro_rules! core_view {
    ($name:ident, $t:ty, $dense:ident, $sparse:ident) => {
        impl<'py> Matrix<'py> {
            /// The core view when the elements are of this type, else None.
            pub fn $name(&self) -> Option<PyResult<CoreMatrix<'_, $t>>> {
                match self {
                    Matrix::$dense(a) => Some(view(a).map(CoreMatrix::Dense)),
                    Matrix::$sparse(s) => Some(sparse_view(s).map(CoreMatrix::Sparse)),
                    _ => None,
                }
            }
        }
    };
}
core_view!(core_f32, f32, F32, SparseF32);
core_view!(core_f64, f64, F64, SparseF64);

fn sparse_view<'a, T: numpy::Element + crate::data::Element>(
    s: &'a SparseArrays<'_, T>,
) -> PyResult<SparseMatrix<'a, T>> {
    SparseMatrix::new(
        s.layout,
        s.n_rows,
        s.n_cols,
        s.indptr.as_slice()?,
        s.indices.as_slice()?,
        s.data.as_slice()?,
    )
    .map_err(super::errors::to_py)
}

/// Builds the core view of a contiguous array.
pub fn view<'a, T: numpy::Element + crate::data::Element>(
    a: &'a PyReadonlyArray2<'_, T>,
) -> PyResult<DenseMatrix<'a, T>> {
    let shape = a.shape();
    let (n, p) = (shape[0], shape[1]);
    let c = a.is_c_contiguous();
    let f = a.is_fortran_contiguous();
    // numpy's flags can say contiguous for an unaligned buffer (a memmap
    // at an odd offset), which cannot be read as a slice.
    let data = a
        .as_slice()
        .map_err(|_| PyValueError::new_err("X must be C- or Fortran-contiguous and aligned"))?;
    let m = if c {
        DenseMatrix::row_major(data, n, p)
    } else if f {
        DenseMatrix::col_major(data, n, p)
    } else {
        return Err(PyValueError::new_err("X must be C- or Fortran-contiguous"));
    };
    m.map_err(super::errors::to_py)
}

/// A contiguous 1-D float64 array as a slice holder.
pub fn vector<'py>(v: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray1<'py, f64>> {
    let a = v.cast::<PyArray1<f64>>().map_err(|_| {
        PyTypeError::new_err(format!("{name} must be a 1-D numpy array of float64"))
    })?;
    let r = a.try_readonly()?;
    if r.as_slice().is_err() {
        return Err(PyValueError::new_err(format!(
            "{name} must be contiguous and aligned"
        )));
    }
    Ok(r)
}
