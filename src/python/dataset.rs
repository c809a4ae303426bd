//! `rgbm_rs._core.BinnedData`: a training dataset binned once, trained on
//! whole or by row subsets without binning again.
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use super::convert::{Matrix, vector};
use super::errors::{PythonCaller, run_interruptible, run_interruptible_watching, to_py};
use crate::booster::{TrainingData, bin_for_training};
use crate::data::BinnedDataset;
use crate::data::dataset::{Extra, Extras};
use crate::params::BoosterParams;
use crate::threads::with_cached_threads;

/// Arrays by name, as a file holds them.
type NamedArrays<'py> = Vec<(String, Bound<'py, PyAny>)>;

/// Binned rows: codes and the bin boundaries they were made with.
#[pyclass(module = "rgbm_rs._core", name = "BinnedData", frozen)]
pub struct PyBinnedData {
    pub(super) data: BinnedDataset,
}

#[pymethods]
impl PyBinnedData {
    /// The rows `x` binned as `Booster.train(params_json, ...)` would bin
    /// them, with quantiles weighted by `sample_weight` (None: unweighted);
    /// `interrupt` as in `Booster.train`.
    #[staticmethod]
    #[pyo3(signature = (params_json, x, sample_weight=None, interrupt=None))]
    fn build(
        py: Python<'_>,
        params_json: &str,
        x: &Bound<'_, PyAny>,
        sample_weight: Option<&Bound<'_, PyAny>>,
        interrupt: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let params = BoosterParams::from_json(params_json).map_err(to_py)?;
        let x = Matrix::extract(x)?;
        let w = sample_weight
            .map(|w| vector(w, "sample_weight"))
            .transpose()?;
        let ws = match &w {
            Some(w) => Some(w.as_slice()?),
            None => None,
        };
        let n = x.n_rows();
        // The labels play no part in binning.
        let y: Vec<f64> = crate::alloc::zeroed_vec(n, "the placeholder labels").map_err(to_py)?;
        let data = if x.is_f32() {
            let m = x
                .core_f32()
                .ok_or_else(|| PyTypeError::new_err("X must be float32"))??;
            run_interruptible_watching(
                py,
                &PythonCaller::default(),
                interrupt.as_ref(),
                |cancel| {
                    let d = TrainingData::new(&m, &y)?.with_weights(ws)?;
                    bin_for_training(&params, &d, &cancel)
                },
            )?
        } else {
            let m = x
                .core_f64()
                .ok_or_else(|| PyTypeError::new_err("X must be float64"))??;
            run_interruptible_watching(
                py,
                &PythonCaller::default(),
                interrupt.as_ref(),
                |cancel| {
                    let d = TrainingData::new(&m, &y)?.with_weights(ws)?;
                    bin_for_training(&params, &d, &cancel)
                },
            )?
        };
        Ok(PyBinnedData { data })
    }

    /// The rows `x` binned with this dataset's bin boundaries.
    #[pyo3(signature = (x, n_jobs=None))]
    fn with_same_bins(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        n_jobs: Option<usize>,
    ) -> PyResult<Self> {
        let x = Matrix::extract(x)?;
        let data = if x.is_f32() {
            let m = x
                .core_f32()
                .ok_or_else(|| PyTypeError::new_err("X must be float32"))??;
            run_interruptible(py, |cancel| {
                with_cached_threads(n_jobs, || {
                    BinnedDataset::with_bins_of(&m, &self.data, &cancel)
                })?
            })?
        } else {
            let m = x
                .core_f64()
                .ok_or_else(|| PyTypeError::new_err("X must be float64"))??;
            run_interruptible(py, |cancel| {
                with_cached_threads(n_jobs, || {
                    BinnedDataset::with_bins_of(&m, &self.data, &cancel)
                })?
            })?
        };
        Ok(PyBinnedData { data })
    }

    /// The rows at `indices` (int64, in that order), their codes gathered
    /// with the same bin boundaries, on `n_jobs` threads (None: all cores).
    #[pyo3(signature = (indices, n_jobs=None))]
    fn subset(
        &self,
        py: Python<'_>,
        indices: PyReadonlyArray1<'_, i64>,
        n_jobs: Option<usize>,
    ) -> PyResult<Self> {
        let idx = indices.as_slice()?;
        let n = self.data.n_rows();
        let mut rows =
            crate::alloc::with_capacity(idx.len(), "the subset's rows").map_err(to_py)?;
        for &i in idx {
            rows.push(usize::try_from(i).ok().filter(|&r| r < n).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "row index {i} is out of range for a dataset of {n} rows"
                ))
            })?);
        }
        let data = run_interruptible(py, |cancel| {
            with_cached_threads(n_jobs, || self.data.subset(&rows, &cancel))?
        })?;
        Ok(PyBinnedData { data })
    }

    /// Writes the rows to `path` (atomically) with the named float64
    /// arrays `floats`, int64 arrays `ints` and the JSON text `meta`.
    fn save(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        floats: Vec<(String, PyReadonlyArray1<'_, f64>)>,
        ints: Vec<(String, PyReadonlyArray1<'_, i64>)>,
        meta: String,
    ) -> PyResult<()> {
        let mut arrays = Vec::with_capacity(floats.len() + ints.len());
        const WHAT: &str = "a copy of a saved array";
        for (name, a) in &floats {
            let a = a.as_slice()?;
            let mut v = crate::alloc::with_capacity(a.len(), WHAT).map_err(to_py)?;
            v.extend_from_slice(a);
            arrays.push((name.clone(), Extra::F64(v)));
        }
        for (name, a) in &ints {
            let a = a.as_slice()?;
            let mut v = crate::alloc::with_capacity(a.len(), WHAT).map_err(to_py)?;
            v.extend_from_slice(a);
            arrays.push((name.clone(), Extra::I64(v)));
        }
        let extras = Extras { arrays, meta };
        run_interruptible(py, |cancel| self.data.save(&path, &extras, &cancel))
    }

    /// Reads a file `save` wrote: the rows, the JSON text `meta` and the
    /// named arrays (float64 or int64), in the order they were saved.
    #[staticmethod]
    fn load<'py>(
        py: Python<'py>,
        path: std::path::PathBuf,
    ) -> PyResult<(Self, String, NamedArrays<'py>)> {
        let (data, extras) = run_interruptible(py, |cancel| BinnedDataset::load(&path, &cancel))?;
        let arrays = extras
            .arrays
            .into_iter()
            .map(|(name, a)| {
                let array = match a {
                    Extra::F64(v) => v.into_pyarray(py).into_any(),
                    Extra::I64(v) => v.into_pyarray(py).into_any(),
                };
                (name, array)
            })
            .collect();
        Ok((PyBinnedData { data }, extras.meta, arrays))
    }

    #[getter]
    fn n_rows(&self) -> usize {
        self.data.n_rows()
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.data.n_features()
    }

    /// The `max_bins` and `min_samples_leaf` the rows were binned with, and
    /// the categorical features' positions.
    fn binning(&self) -> (usize, usize, Vec<usize>) {
        let mapper = self.data.mapper();
        let categorical = (0..mapper.n_features())
            .filter(|&j| mapper.features[j].is_categorical())
            .collect();
        (mapper.max_bins, self.data.min_rows(), categorical)
    }
}
