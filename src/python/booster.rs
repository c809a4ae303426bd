//! `rgbm_rs._core.Booster`: a trained model behind an immutable handle.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArrayDyn};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::convert::{Matrix, vector};
use super::dataset::PyBinnedData;
use super::errors::{
    PythonCaller, run_detached, run_interruptible, run_interruptible_watching, to_py,
};
use crate::booster::{
    EvalHistory, EvalResult, EvalSet, Monitor, RoundLog, Trained, TrainingData, train,
};
use crate::cancel::Cancel;
use crate::data::matrix::{Element, Matrix as CoreMatrix};
use crate::error::{Result as CoreResult, RgbmError};
use crate::model::{ImportanceKind, Model};
use crate::objective::Gaussian;
use crate::objective::Queries;
use crate::params::{BoosterParams, Loss};
use crate::threads::with_cached_threads;
use crate::tree::predict::SEQUENTIAL_MAX_ROWS;

/// Model JSON texts up to this size are read and written on the calling
/// thread; larger ones on a helper thread that Ctrl-C can stop.
const JSON_DETACHED_MAX_BYTES: usize = 4 << 20;

/// A trained model: its trees, parameters and training history, with
/// prediction, explanation and serialisation. Estimators hold one
/// (``get_booster()``); ``Booster.from_json`` reads one from a model text.
#[pyclass(module = "rgbm_rs._core", name = "Booster", frozen)]
pub struct PyBooster {
    model: Model,
    /// Per-round training log (empty for loaded models).
    log: Vec<RoundLog>,
    /// Evaluation histories (empty for loaded models).
    evals: Vec<EvalHistory>,
    best_iteration: Option<usize>,
    /// The threads predictions run on (`set_n_jobs`).
    predict_threads: PredictThreads,
}

/// The `n_jobs` of predictions: the fit's until set, as LightGBM's
/// predict reads the estimator's current `n_jobs`. Atomic because the
/// handle is shared by threads predicting at once with the GIL released.
struct PredictThreads(AtomicUsize);

impl PredictThreads {
    /// Stored for "the fit's n_jobs"; 0 stands for None (every core).
    const FIT: usize = usize::MAX;

    fn of_fit() -> Self {
        PredictThreads(AtomicUsize::new(Self::FIT))
    }

    /// `n_jobs` ≥ 1 or None; counts past the cores are clamped when used.
    fn set(&self, n_jobs: Option<usize>) {
        let stored = n_jobs.map_or(0, |n| n.min(Self::FIT - 1));
        self.0.store(stored, Ordering::Relaxed);
    }

    fn copied(&self) -> Self {
        PredictThreads(AtomicUsize::new(self.0.load(Ordering::Relaxed)))
    }

    fn n_jobs(&self, fitted: Option<usize>) -> Option<usize> {
        match self.0.load(Ordering::Relaxed) {
            Self::FIT => fitted,
            0 => None,
            n => Some(n),
        }
    }
}

/// Stops at Ctrl-C, calls the Python callback after every round, and the
/// custom loss and metrics. Each holds the GIL only for its call.
struct PyMonitor<'a> {
    cancel: Cancel,
    callback: Option<Arc<Py<PyAny>>>,
    /// `objective(raw) -> (grad, hess)`: float64 vectors, class-major like `raw`.
    objective: Option<Arc<Py<PyAny>>>,
    /// `metrics(set_index, raw) -> [(name, value, higher_is_better)]`.
    metrics: Option<Arc<Py<PyAny>>>,
    /// The exception a callback raised, re-raised after training.
    failure: &'a Mutex<Option<PyErr>>,
    /// Runs the callables on the thread that called fit, where Ctrl-C reaches them.
    caller: PythonCaller,
}

impl PyMonitor<'_> {
    /// Keeps the exception `e` to re-raise unchanged after training, and
    /// stops training with its text.
    fn fail(&self, e: PyErr) -> RgbmError {
        let text = e.to_string();
        if let Ok(mut slot) = self.failure.lock() {
            *slot = Some(e);
        }
        RgbmError::Callback(text)
    }

    /// Calls into Python with the GIL, unless the fit was interrupted.
    /// Runs `call` on the fit's calling thread (where Ctrl-C reaches it);
    /// a Python exception it raises ends the fit and is raised by `train`.
    fn call_python<R: Send + 'static>(
        &self,
        call: impl FnOnce(Python<'_>) -> PyResult<R> + Send + 'static,
    ) -> CoreResult<R> {
        self.cancel.check()?;
        self.caller.call(call)?.map_err(|e| self.fail(e))
    }
}

impl Monitor for PyMonitor<'_> {
    fn before_round(&mut self, _round: usize) -> CoreResult<()> {
        self.cancel.check()
    }

    fn cancel(&self) -> Cancel {
        self.cancel.clone()
    }

    fn after_round(&mut self, round: usize, results: &[EvalResult]) -> CoreResult<bool> {
        let Some(callback) = self.callback.clone() else {
            return Ok(false);
        };
        let items: Vec<(String, String, f64, bool)> = results
            .iter()
            .map(|r| (r.set.clone(), r.metric.clone(), r.value, r.higher_is_better))
            .collect();
        self.call_python(move |py| callback.call1(py, (round, items))?.is_truthy(py))
    }

    fn learning_rate(&mut self, round: usize) -> CoreResult<Option<f64>> {
        let Some(callback) = self.callback.clone() else {
            return Ok(None);
        };
        self.call_python(move |py| {
            let callback = callback.bind(py);
            if !callback.hasattr("before_round")? {
                return Ok(None);
            }
            callback
                .call_method1("before_round", (round,))?
                .extract::<Option<f64>>()
        })
    }

    fn custom_gradients(&mut self, scores: &[f64], out: &mut [[f64; 2]]) -> CoreResult<()> {
        let Some(objective) = self.objective.clone() else {
            return Err(RgbmError::param(
                "loss",
                "loss='custom' needs a loss function",
            ));
        };
        let scores = scores.to_vec();
        let (g, h) = self.call_python(move |py| {
            let returned = objective.call1(py, (PyArray1::from_vec(py, scores),))?;
            let (g, h) = returned.extract::<(PyReadonlyArray1<f64>, PyReadonlyArray1<f64>)>(py)?;
            Ok((g.to_vec(), h.to_vec()))
        })?;
        let (Ok(g), Ok(h)) = (g, h) else {
            return Err(RgbmError::Shape(
                "the loss function's arrays must be contiguous".into(),
            ));
        };
        if g.len() != out.len() || h.len() != out.len() {
            return Err(RgbmError::Shape(format!(
                "the loss function returned {} gradients and {} hessians for {} scores",
                g.len(),
                h.len(),
                out.len()
            )));
        }
        out.iter_mut()
            .zip(g.iter().zip(&h))
            .for_each(|(o, (&g, &h))| *o = [g, h]);
        Ok(())
    }

    fn custom_metrics(
        &mut self,
        set: usize,
        scores: &[f64],
    ) -> CoreResult<Vec<(String, f64, bool)>> {
        let Some(metrics) = self.metrics.clone() else {
            return Ok(Vec::new());
        };
        let scores = scores.to_vec();
        self.call_python(move |py| {
            metrics
                .call1(py, (set, PyArray1::from_vec(py, scores)))?
                .extract(py)
        })
    }
}

struct PyEvalSet<'py> {
    name: String,
    x: Matrix<'py>,
    y: PyReadonlyArray1<'py, f64>,
    w: Option<PyReadonlyArray1<'py, f64>>,
    init_score: Option<PyReadonlyArray1<'py, f64>>,
    groups: Option<Vec<u64>>,
}

/// Query groups from their sizes, which must cover `n_rows`.
fn queries(sizes: &[u64], n_rows: usize) -> PyResult<Queries> {
    Queries::from_sizes(sizes, n_rows).map_err(to_py)
}

/// An attribute of `obj`, None when it is Python's None.
pub(super) fn optional_attr<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let v = obj.getattr(name)?;
    Ok((!v.is_none()).then_some(v))
}

fn extract_eval_sets<'py>(sets: Option<&Bound<'py, PyAny>>) -> PyResult<Vec<PyEvalSet<'py>>> {
    let Some(sets) = sets else {
        return Ok(Vec::new());
    };
    let list = sets.cast::<PyList>().map_err(|_| {
        PyTypeError::new_err(
            "eval_sets must be a list of EvalSet (name, x, y, sample_weight, init_score, group)",
        )
    })?;
    list.iter()
        .map(|s| {
            Ok(PyEvalSet {
                name: s.getattr("name")?.extract()?,
                x: Matrix::extract(&s.getattr("x")?)?,
                y: vector(&s.getattr("y")?, "eval y")?,
                w: optional_attr(&s, "sample_weight")?
                    .map(|w| vector(&w, "eval sample_weight"))
                    .transpose()?,
                init_score: optional_attr(&s, "init_score")?
                    .map(|i| vector(&i, "eval init_score"))
                    .transpose()?,
                groups: optional_attr(&s, "group")?
                    .map(|g| g.extract::<Vec<u64>>())
                    .transpose()?,
            })
        })
        .collect()
}

/// Core views of the evaluation sets, which must have element type `T`
/// (`pick` gives a matrix's view of that type, None for the other type).
fn eval_views<'a, 'py, T: Element>(
    sets: &'a [PyEvalSet<'py>],
    pick: impl Fn(&'a Matrix<'py>) -> Option<PyResult<CoreMatrix<'a, T>>>,
) -> PyResult<Vec<EvalSet<'a, T>>> {
    sets.iter()
        .map(|s| {
            let x = pick(&s.x).ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "evaluation set {:?}: X must have the training data's dtype",
                    s.name
                ))
            })??;
            Ok(EvalSet {
                name: s.name.clone(),
                x,
                y: s.y.as_slice()?,
                w: match &s.w {
                    Some(w) => Some(w.as_slice()?),
                    None => None,
                },
                init_score: match &s.init_score {
                    Some(i) => Some(i.as_slice()?),
                    None => None,
                },
                queries: s
                    .groups
                    .as_deref()
                    .map(|g| queries(g, s.y.len()?))
                    .transpose()?,
            })
        })
        .collect()
}

/// Runs `$body` with `$m` bound to the core view of whichever dtype `$x` has.
macro_rules! with_view {
    ($x:expr, $m:ident => $body:expr) => {
        match ($x.core_f32(), $x.core_f64()) {
            (Some(m), _) => {
                let $m = m?;
                $body
            }
            (None, Some(m)) => {
                let $m = m?;
                $body
            }
            (None, None) => Err(PyTypeError::new_err("X must be float32 or float64")),
        }
    };
}

impl PyBooster {
    /// The handle of a finished fit.
    pub(super) fn from_trained(trained: Trained) -> PyBooster {
        PyBooster {
            model: trained.model,
            log: trained.log,
            evals: trained.evals,
            best_iteration: trained.best_iteration,
            predict_threads: PredictThreads::of_fit(),
        }
    }
}

#[pymethods]
impl PyBooster {
    /// Trains a model. `params_json` holds BoosterParams (unknown keys are
    /// errors); `data` has the training rows as attributes `x`, `y`,
    /// `sample_weight`, `init_score`, `group` and `binned` (the last four
    /// may be None; `group`: with loss "lambdarank", the sizes of the
    /// consecutive rows' queries; `binned`: a BinnedData of the rows, trained
    /// on instead of binning `x`); `eval_sets` is a list of objects with the
    /// attributes `name`, `x` (of the training dtype), `y`, `sample_weight`,
    /// `init_score` and `group`, the last three possibly None;
    /// `callback(round, results)` runs after every round with results [(set,
    /// metric, value, higher_is_better)] and stops training by returning
    /// True. With loss "custom", `objective(raw)` returns (grad, hess) at the
    /// class-major raw scores; `metrics(set, raw)` returns an evaluation
    /// set's [(name, value, higher_is_better)]. `interrupt`: an object whose
    /// `is_set()` (a `threading.Event`) stops training as Ctrl-C does, for
    /// a fit on a thread other than the main one, which sees no signals.
    #[staticmethod]
    #[pyo3(signature = (params_json, data, eval_sets=None, callback=None, objective=None, metrics=None, interrupt=None))]
    #[allow(clippy::too_many_arguments)]
    fn train(
        py: Python<'_>,
        params_json: &str,
        data: &Bound<'_, PyAny>,
        eval_sets: Option<&Bound<'_, PyAny>>,
        callback: Option<Py<PyAny>>,
        objective: Option<Py<PyAny>>,
        metrics: Option<Py<PyAny>>,
        interrupt: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let params = BoosterParams::from_json(params_json).map_err(to_py)?;
        let part = |name: &str| data.getattr(name);
        let optional = |name: &str| optional_attr(data, name);
        let x = Matrix::extract(&part("x")?)?;
        let y = vector(&part("y")?, "y")?;
        let w = optional("sample_weight")?
            .map(|w| vector(&w, "sample_weight"))
            .transpose()?;
        let init = optional("init_score")?
            .map(|i| vector(&i, "init_score"))
            .transpose()?;
        let group: Option<Vec<u64>> = optional("group")?.map(|g| g.extract()).transpose()?;
        // Binned already: the fit trains on these codes and does not bin `x`
        // (which then only gives the evaluation sets' dtype).
        let binned = optional("binned")?
            .map(|b| {
                b.cast_into::<PyBinnedData>()
                    .map_err(|_| PyTypeError::new_err("data.binned must be a BinnedData or None"))
            })
            .transpose()?;
        let binned = binned.as_ref().map(|b| &b.get().data);
        let sets = extract_eval_sets(eval_sets)?;
        let inits = match &init {
            Some(i) => Some(i.as_slice()?),
            None => None,
        };
        let ys = y.as_slice()?;
        let groups = group.as_deref().map(|g| queries(g, ys.len())).transpose()?;
        let ws = match &w {
            Some(w) => Some(w.as_slice()?),
            None => None,
        };
        let failure = Mutex::new(None);
        let caller = PythonCaller::default();
        let (callback, objective, metrics) = (
            callback.map(Arc::new),
            objective.map(Arc::new),
            metrics.map(Arc::new),
        );
        let monitor = |cancel| PyMonitor {
            cancel,
            callback: callback.clone(),
            objective: objective.clone(),
            metrics: metrics.clone(),
            failure: &failure,
            caller: caller.clone(),
        };
        let result = if x.is_f32() {
            let m = x
                .core_f32()
                .ok_or_else(|| PyTypeError::new_err("X must be float32"))??;
            let evals = eval_views(&sets, Matrix::core_f32)?;
            run_interruptible_watching(py, &caller, interrupt.as_ref(), |cancel| {
                let n_targets = params.n_targets();
                let data = match binned {
                    Some(b) => TrainingData::binned_with_targets(b, ys, n_targets)?,
                    None => TrainingData::with_targets(&m, ys, n_targets)?,
                }
                .with_weights(ws)?
                .with_init_score(inits)?
                .with_queries(groups.as_ref())?;
                train(&params, &data, &evals, &mut monitor(cancel))
            })
        } else {
            let m = x
                .core_f64()
                .ok_or_else(|| PyTypeError::new_err("X must be float64"))??;
            let evals = eval_views(&sets, Matrix::core_f64)?;
            run_interruptible_watching(py, &caller, interrupt.as_ref(), |cancel| {
                let n_targets = params.n_targets();
                let data = match binned {
                    Some(b) => TrainingData::binned_with_targets(b, ys, n_targets)?,
                    None => TrainingData::with_targets(&m, ys, n_targets)?,
                }
                .with_weights(ws)?
                .with_init_score(inits)?
                .with_queries(groups.as_ref())?;
                train(&params, &data, &evals, &mut monitor(cancel))
            })
        };
        if let Some(e) = failure.lock().ok().and_then(|mut slot| slot.take()) {
            return Err(e);
        }
        let trained = result?;
        Ok(PyBooster {
            model: trained.model,
            log: trained.log,
            evals: trained.evals,
            best_iteration: trained.best_iteration,
            predict_threads: PredictThreads::of_fit(),
        })
    }

    /// Loads and validates a model from its JSON text.
    /// Stops at Ctrl-C; raises MemoryError if the model does not fit.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<Self> {
        let model = if text.len() <= JSON_DETACHED_MAX_BYTES {
            run_detached(py, || Model::from_json(text))?
        } else {
            run_interruptible(py, |cancel| Model::from_json_cancellable(text, &cancel))?
        };
        Ok(PyBooster {
            model,
            log: Vec::new(),
            evals: Vec::new(),
            best_iteration: None,
            predict_threads: PredictThreads::of_fit(),
        })
    }

    /// A model file's text split: its `model` member loaded (as by
    /// `from_json`, without parsing the rest) and the rest of the document as
    /// JSON text. ValueError if the text is not a JSON object with a valid
    /// model. Stops at Ctrl-C; raises MemoryError if the model does not fit.
    #[staticmethod]
    fn from_file_text(py: Python<'_>, text: &str) -> PyResult<(Self, String)> {
        let load = |cancel: &Cancel| {
            let (model, rest) = crate::json::split_member(text, "model")?;
            let model = model.ok_or_else(|| RgbmError::ModelFormat("no model".into()))?;
            Ok((Model::from_json_cancellable(model, cancel)?, rest))
        };
        let (model, rest) = if text.len() <= JSON_DETACHED_MAX_BYTES {
            run_detached(py, || load(&Cancel::never()))?
        } else {
            run_interruptible(py, |cancel| load(&cancel))?
        };
        let booster = PyBooster {
            model,
            log: Vec::new(),
            evals: Vec::new(),
            best_iteration: None,
            predict_threads: PredictThreads::of_fit(),
        };
        Ok((booster, rest))
    }

    /// Checks a model file's `feature_names_in` (one distinct name per
    /// feature) and the lengths of its `categories` lists (on categorical
    /// features only, each covering the codes the trees split on) against
    /// the model; ValueError naming the field.
    #[pyo3(signature = (names=None, category_counts=None))]
    fn check_feature_fields(
        &self,
        names: Option<Vec<String>>,
        category_counts: Option<Vec<Option<usize>>>,
    ) -> PyResult<()> {
        self.model
            .check_feature_fields(names.as_deref(), category_counts.as_deref())
            .map_err(to_py)
    }

    /// This model followed by `more`, trained from this one's raw scores;
    /// the log, evaluation histories and prediction threads are the
    /// continuation's.
    fn continued(&self, more: &PyBooster) -> PyResult<Self> {
        let model = self.model.continued(&more.model).map_err(to_py)?;
        Ok(PyBooster {
            model,
            log: more.log.clone(),
            evals: more.evals.clone(),
            best_iteration: more.best_iteration,
            predict_threads: more.predict_threads.copied(),
        })
    }

    /// The model after its first `n_rounds` rounds (shrinkage of the dropped
    /// rounds undone); keeps the log, evaluation histories and prediction
    /// threads.
    fn truncated(&self, n_rounds: usize) -> PyResult<Self> {
        let model = self.model.truncated(n_rounds).map_err(to_py)?;
        // The early-stopping round of the longer model means nothing for the cut one.
        Ok(PyBooster {
            model,
            log: self.log.clone(),
            evals: self.evals.clone(),
            best_iteration: None,
            predict_threads: self.predict_threads.copied(),
        })
    }

    /// Sets the threads of the predictions that follow (None: every core
    /// the process may use, as for a fit). Until called they run on the
    /// fit's `n_jobs`. The model text keeps the fit's `n_jobs`.
    #[pyo3(signature = (n_jobs))]
    fn set_n_jobs(&self, n_jobs: Option<usize>) -> PyResult<()> {
        if n_jobs == Some(0) {
            return Err(PyValueError::new_err(
                "n_jobs must be a positive number of threads or None, got 0",
            ));
        }
        self.predict_threads.set(n_jobs);
        Ok(())
    }

    /// The model's JSON text. Stops at Ctrl-C; raises MemoryError if the
    /// text does not fit.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        let nodes: usize = self.model.trees.iter().map(|t| t.n_leaves()).sum();
        if nodes <= JSON_DETACHED_MAX_BYTES / 64 {
            run_detached(py, || self.model.to_json())
        } else {
            run_interruptible(py, |cancel| self.model.to_json_cancellable(&cancel))
        }
    }

    /// Raw scores (base score + trees) of the first `n_rounds` rounds:
    /// shape (n,) for single-output models, (n, n_outputs) otherwise.
    #[pyo3(signature = (x, n_rounds=None))]
    fn predict_raw<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_rounds: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = Matrix::extract(x)?;
        let out = with_view!(x, m => self.run_prediction(py, m.n_rows(), |c| self.model.predict_raw_cancellable(&m, n_rounds, c)))?;
        self.shaped(py, out)
    }

    /// Sum of the outputs of trees start..end (no base score), shaped like `predict_raw`.
    fn predict_trees<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        start: usize,
        end: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = Matrix::extract(x)?;
        let out = with_view!(x, m => self.run_prediction(py, m.n_rows(), |c| self.model.predict_trees_cancellable(&m, start, end, c)))?;
        self.shaped(py, out)
    }

    /// The leaf each row reaches in every tree (int32): shape (n, n_trees),
    /// tree r·K + k being round r's tree of output k.
    fn predict_leaf<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = Matrix::extract(x)?;
        let n = x.n_rows();
        let leaves = with_view!(x, m => self.run_prediction(py, m.n_rows(), |c| self.model.predict_leaves_cancellable(&m, c)))?;
        // Leaf indices come from i32 child references, so they fit.
        let leaves: Vec<i32> = leaves.into_iter().map(|l| l as i32).collect();
        Ok(PyArray1::from_vec(py, leaves)
            .reshape([n, self.model.n_trees()])?
            .into_any())
    }

    /// SHAP values of the raw scores: shape (n, n_outputs·(n_features + 1)),
    /// per output the feature contributions and then the expected raw score.
    fn predict_contrib<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = Matrix::extract(x)?;
        let n = x.n_rows();
        let out = with_view!(x, m => self.run_prediction(py, m.n_rows(), |c| self.model.predict_contributions_cancellable(&m, c)))?;
        let width = self.model.n_outputs * (self.model.n_features + 1);
        Ok(PyArray1::from_vec(py, out).reshape([n, width])?.into_any())
    }

    /// Raw scores of the virtual-ensemble members: shape (members, n), or
    /// (members, n, n_outputs) for multi-output models.
    fn virtual_ensemble<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_members: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = Matrix::extract(x)?;
        let n = x.n_rows();
        let members = with_view!(x, m => self.run_prediction(py, m.n_rows(), |c| self.model.virtual_ensemble(&m, n_members, c)))?;
        let k = self.model.n_outputs;
        let arr = PyArray1::from_vec(py, members);
        if k == 1 {
            Ok(arr.reshape([n_members, n])?.into_any())
        } else {
            Ok(arr.reshape([n_members, n, k])?.into_any())
        }
    }

    /// Normalised importances: "gain" (total split gain) or "split" (split count).
    fn feature_importances<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let kind = match kind {
            "gain" => ImportanceKind::Gain,
            "split" => ImportanceKind::Split,
            other => {
                return Err(PyValueError::new_err(format!(
                    "importance_type must be 'gain' or 'split', got {other:?}"
                )));
            }
        };
        Ok(PyArray1::from_vec(py, self.model.feature_importances(kind)))
    }

    /// The link from raw scores to predictions as (name, scale): identity,
    /// exp, sigmoid (p = 1 / (1 + e^(−f / scale))) or softmax; None for a
    /// custom-loss classifier (its link is the user's).
    fn link(&self) -> Option<(&'static str, f64)> {
        self.model.objective().link().map(|l| {
            let scale = match l {
                crate::objective::Link::Sigmoid { scale } => scale,
                _ => 1.0,
            };
            (l.name(), scale)
        })
    }

    /// The model's BoosterParams as JSON (every field, defaults filled in).
    fn params_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.model.params)
            .map_err(|e| to_py(RgbmError::ModelFormat(e.to_string())))
    }

    /// The per-round training log as JSON (a list of objects; empty after loading).
    fn training_log_json(&self) -> PyResult<String> {
        crate::json::to_string(&self.log, &Cancel::never()).map_err(to_py)
    }

    /// Evaluation histories as JSON: a list of {set, metric, values} (empty after loading).
    fn evals_json(&self) -> PyResult<String> {
        crate::json::to_string(&self.evals, &Cancel::never()).map_err(to_py)
    }

    /// The round kept by early stopping (0-based), if early stopping ran.
    #[getter]
    fn best_iteration(&self) -> Option<usize> {
        self.best_iteration
    }
    #[getter]
    fn n_rounds(&self) -> usize {
        self.model.n_rounds()
    }
    #[getter]
    fn n_outputs(&self) -> usize {
        self.model.n_outputs
    }

    #[getter]
    fn n_trees(&self) -> usize {
        self.model.n_trees()
    }
    #[getter]
    fn n_features(&self) -> usize {
        self.model.n_features
    }
    /// q = 1 − shrink_rate·learning_rate of the fitted model: each round
    /// scaled the earlier trees by q.
    #[getter]
    fn shrink_factor(&self) -> f64 {
        self.model.params.shrink_factor()
    }

    /// q^-dropped: undoes the shrinkage `dropped` later rounds applied to
    /// the stored trees; ValueError when it overflows.
    fn shrinkage_undo(&self, dropped: usize) -> PyResult<f64> {
        self.model.shrinkage_undo(dropped).map_err(to_py)
    }

    /// The predictions users see of raw scores (any shape and strides) of a
    /// single-output regression model: e^f for a log-link loss, else f.
    fn response<'py>(
        &self,
        py: Python<'py>,
        raw: PyReadonlyArrayDyn<'py, f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let raw = raw.as_array();
        let objective = self.model.objective();
        let no_response = || {
            PyValueError::new_err(format!(
                "the {:?} loss has no single-output regression response",
                self.model.params.loss
            ))
        };
        let mut values =
            crate::alloc::with_capacity(raw.len(), "the predictions").map_err(to_py)?;
        for &f in raw.iter() {
            values.push(objective.response(f).ok_or_else(no_response)?);
        }
        Ok(PyArray1::from_vec(py, values)
            .reshape(raw.shape().to_vec())?
            .into_any())
    }

    /// σ = e^s for each predicted log σ of a gaussian model; a ValueError
    /// names the first row whose σ² would overflow.
    fn standard_deviation<'py>(
        &self,
        py: Python<'py>,
        log_std: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        // Any strides: the log σ column of a (rows, 2) prediction is a view.
        let log_std = log_std.as_array();
        let std = log_std
            .iter()
            .map(|&s| Gaussian::standard_deviation(s))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| {
                let (i, s) = log_std
                    .iter()
                    .enumerate()
                    .find(|(_, s)| Gaussian::standard_deviation(**s).is_none())
                    .map_or((0, f64::NAN), |(i, &s)| (i, s));
                PyValueError::new_err(format!(
                    "the model predicts a log standard deviation of {s} for row {i}, beyond {}: \
                     the standard deviation would overflow",
                    Gaussian::MAX_ABS_LOG_STD
                ))
            })?;
        Ok(PyArray1::from_vec(py, std))
    }

    /// Class probabilities of raw scores (any shape and strides): a binary
    /// model maps shape (...) to (..., 2), a softmax model (..., K) to
    /// (..., K), a multilabel model (..., L) to each label's P(1), (..., L). The loss's own link, so Python never restates it.
    fn class_probabilities<'py>(
        &self,
        py: Python<'py>,
        raw: PyReadonlyArrayDyn<'py, f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let raw = raw.as_array();
        let mut shape = raw.shape().to_vec();
        // The scores are read in place unless their layout needs a copy.
        let copy;
        let values = match raw.as_slice() {
            Some(values) => values,
            None => {
                let mut v = crate::alloc::with_capacity(raw.len(), "a copy of the raw scores")
                    .map_err(to_py)?;
                v.extend(raw.iter().copied());
                copy = v;
                &copy
            }
        };
        let k = self.model.n_outputs;
        if k > 1 && shape.last() != Some(&k) {
            return Err(PyValueError::new_err(format!(
                "raw scores of a {k}-class model need a last axis of {k}, got shape {shape:?}"
            )));
        }
        let p = self
            .model
            .objective()
            .class_probabilities(values)
            .map_err(to_py)?
            .ok_or_else(|| {
                PyValueError::new_err(if self.model.params.loss == Loss::Custom {
                    "the model was fitted with a custom loss, which has no link from raw scores \
                     to probabilities: use decision_function for the raw scores and apply the \
                     loss's own link"
                        .to_string()
                } else {
                    format!(
                        "the {:?} loss has no class probabilities",
                        self.model.params.loss
                    )
                })
            })?;
        if k == 1 {
            shape.push(2);
        }
        Ok(PyArray1::from_vec(py, p).reshape(shape)?.into_any())
    }

    /// Starting score of each output.
    #[getter]
    fn base_score(&self) -> Vec<f64> {
        self.model.base_score.clone()
    }
}

impl PyBooster {
    /// Runs a prediction without the GIL in a pool of `set_n_jobs`'s threads
    /// (never rayon's global pool, which a forked child cannot use),
    /// stopping at Ctrl-C. A few rows are predicted on the calling thread:
    /// the core does not use rayon for them, and the hop to a pool thread
    /// (and to a thread watching for Ctrl-C) would cost more than the work.
    fn run_prediction<R: Send>(
        &self,
        py: Python<'_>,
        n_rows: usize,
        f: impl FnOnce(&Cancel) -> CoreResult<R> + Send,
    ) -> PyResult<R> {
        if n_rows <= SEQUENTIAL_MAX_ROWS {
            return run_detached(py, || f(&Cancel::never()));
        }
        run_interruptible(py, |cancel| {
            with_cached_threads(
                self.predict_threads.n_jobs(self.model.params.n_jobs),
                || f(&cancel),
            )?
        })
    }

    /// A row-major n × n_outputs buffer as a numpy array ((n,) when single-output).
    fn shaped<'py>(&self, py: Python<'py>, out: Vec<f64>) -> PyResult<Bound<'py, PyAny>> {
        let k = self.model.n_outputs;
        let n = out.len() / k;
        let arr = PyArray1::from_vec(py, out);
        if k == 1 {
            Ok(arr.into_any())
        } else {
            Ok(arr.reshape([n, k])?.into_any())
        }
    }
}
