//! `rgbm_rs._core.Booster`: a trained model behind an immutable handle.
use std::sync::atomic::Ordering;

use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::convert::{vector, view, Matrix};
use super::errors::{run_detached, run_interruptible, to_py};
use crate::booster::{train_logged, RoundLog};
use crate::error::RgbmError;
use crate::model::{ImportanceKind, Model};
use crate::params::BoosterParams;

#[pyclass(module = "rgbm_rs._core", name = "Booster", frozen)]
pub struct PyBooster {
    model: Model,
    /// Per-round training log (empty for loaded models).
    log: Vec<RoundLog>,
}

/// Runs `$body` with `$m` bound to the core view of whichever dtype `$x` has.
macro_rules! with_view {
    ($x:expr, $m:ident => $body:expr) => {
        match &$x {
            Matrix::F32(a) => {
                let $m = view(a)?;
                $body
            }
            Matrix::F64(a) => {
                let $m = view(a)?;
                $body
            }
        }
    };
}

#[pymethods]
impl PyBooster {
    /// Trains a model. `params_json` holds BoosterParams (unknown keys are errors).
    #[staticmethod]
    #[pyo3(signature = (params_json, x, y, sample_weight=None))]
    fn train(py: Python<'_>, params_json: &str, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, sample_weight: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let params = BoosterParams::from_json(params_json).map_err(to_py)?;
        let x = Matrix::extract(x)?;
        let y = vector(y, "y")?;
        let w = sample_weight.map(|w| vector(w, "sample_weight")).transpose()?;
        let ys = y.as_slice()?;
        let ws = match &w {
            Some(w) => Some(w.as_slice()?),
            None => None,
        };
        let trained = with_view!(x, m => run_interruptible(py, |stop| {
            let mut hook = |_round: usize| if stop.load(Ordering::Relaxed) { Err(RgbmError::Interrupted) } else { Ok(()) };
            train_logged(&params, &m, ys, ws, &mut hook)
        }))?;
        Ok(PyBooster { model: trained.model, log: trained.log })
    }

    /// Loads and validates a model from its JSON text.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        Model::from_json(text).map(|model| PyBooster { model, log: Vec::new() }).map_err(to_py)
    }

    fn to_json(&self) -> PyResult<String> {
        self.model.to_json().map_err(to_py)
    }

    /// Raw scores (base score + trees), using the first `n_trees` trees.
    #[pyo3(signature = (x, n_trees=None))]
    fn predict_raw<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>, n_trees: Option<usize>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = Matrix::extract(x)?;
        let out = with_view!(x, m => run_detached(py, || self.model.predict_raw(&m, n_trees)))?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// Sum of the outputs of trees start..end (no base score).
    fn predict_trees<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>, start: usize, end: usize) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = Matrix::extract(x)?;
        let out = with_view!(x, m => run_detached(py, || self.model.predict_trees(&m, start, end)))?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// Raw scores of the K virtual-ensemble members, shape (K, n).
    fn virtual_ensemble<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>, n_members: usize) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = Matrix::extract(x)?;
        let members = with_view!(x, m => run_detached(py, || self.model.virtual_ensemble(&m, n_members)))?;
        PyArray2::from_vec2(py, &members).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Normalised importances: "gain" (total split gain) or "split" (split count).
    fn feature_importances<'py>(&self, py: Python<'py>, kind: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let kind = match kind {
            "gain" => ImportanceKind::Gain,
            "split" => ImportanceKind::Split,
            other => return Err(PyValueError::new_err(format!("importance_type must be 'gain' or 'split', got {other:?}"))),
        };
        Ok(PyArray1::from_vec(py, self.model.feature_importances(kind)))
    }

    /// The per-round training log as JSON (a list of objects; empty after loading).
    fn training_log_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.log).map_err(|e| to_py(RgbmError::ModelFormat(e.to_string())))
    }

    #[getter]
    fn n_trees(&self) -> usize {
        self.model.n_trees()
    }
    #[getter]
    fn n_features(&self) -> usize {
        self.model.n_features
    }
    #[getter]
    fn base_score(&self) -> f64 {
        self.model.base_score
    }
}

