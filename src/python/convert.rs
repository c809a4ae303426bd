//! numpy arrays -> borrowed core views, without copying.
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::data::matrix::DenseMatrix;

/// A 2-D float32 or float64 array, C or Fortran contiguous.
pub enum Matrix<'py> {
    F32(PyReadonlyArray2<'py, f32>),
    F64(PyReadonlyArray2<'py, f64>),
}

impl<'py> Matrix<'py> {
    pub fn extract(x: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = x.cast::<PyArray2<f64>>() {
            Ok(Matrix::F64(a.try_readonly()?))
        } else if let Ok(a) = x.cast::<PyArray2<f32>>() {
            Ok(Matrix::F32(a.try_readonly()?))
        } else {
            Err(PyTypeError::new_err(
                "X must be a 2-D numpy array of float32 or float64",
            ))
        }
    }
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
