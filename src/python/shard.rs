//! `rgbm_rs._core.Shard`: one shard's fit (a Dask worker's rows), whose
//! exchanges the caller relays (`rgbm_rs.dask` does, through actors).
use std::sync::Mutex;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::booster::PyBooster;
use super::convert::{Matrix, vector};
use super::errors::to_py;
use crate::booster::EvalSet;
use crate::booster::shard::{ShardRows, check_params};
use crate::booster::{Resume, RoundRecord, TrainingData, train_resumed};
use crate::data::matrix::{DenseMatrix, Element, Matrix as CoreMatrix};
use crate::error::RgbmError;
use crate::params::BoosterParams;
use crate::relay::{Message, Reply, ShardFit, ShardTraining};

#[pyclass(module = "rgbm_rs._core", name = "Shard", frozen)]
pub struct PyShard {
    fit: Mutex<Option<ShardFit>>,
}

/// An evaluation set owned by a shard's fit: (name, row-major X, columns,
/// y, weights, starting scores).
type OwnedEval<T> = (
    String,
    Vec<T>,
    usize,
    Vec<f64>,
    Option<Vec<f64>>,
    Option<Vec<f64>>,
);

/// What a shard's fit owns besides its X and evaluation sets, whose
/// element type (float32 or float64) the fit is generic over.
struct ShardInput {
    params: BoosterParams,
    y: Vec<f64>,
    w: Option<Vec<f64>>,
    init: Option<Vec<f64>>,
    ids: Vec<u64>,
    n_total: usize,
    threads: Option<usize>,
    resumed: Vec<RoundRecord>,
    stopped: bool,
}

/// The shard's training on owned copies of its rows and evaluation sets.
fn training<T: Element>(
    input: ShardInput,
    x: Vec<T>,
    n_cols: usize,
    evals: Vec<OwnedEval<T>>,
) -> ShardTraining {
    let ShardInput {
        params,
        y,
        w,
        init,
        ids,
        n_total,
        threads,
        resumed,
        stopped,
    } = input;
    Box::new(move |reduce, monitor| {
        let m = DenseMatrix::row_major(&x, y.len(), n_cols)?;
        let rows = ShardRows {
            reduce,
            ids: Some(&ids),
            n_total,
        };
        let sets = evals
            .iter()
            .map(|(name, ex, cols, ey, ew, ei)| {
                Ok(EvalSet {
                    name: name.clone(),
                    x: CoreMatrix::Dense(DenseMatrix::row_major(ex, ey.len(), *cols)?),
                    y: ey,
                    w: ew.as_deref(),
                    init_score: ei.as_deref(),
                    queries: None,
                })
            })
            .collect::<crate::error::Result<Vec<_>>>()?;
        let data = TrainingData::new(&m, &y)?
            .with_weights(w.as_deref())?
            .with_init_score(init.as_deref())?
            .on_shard(rows)?;
        // The worker's thread count: the trees do not depend on it, and the
        // model keeps the parameters the user gave.
        let resume = Resume {
            rounds: &resumed,
            stopped,
        };
        let mut on_worker = params.clone();
        on_worker.n_jobs = threads.or(params.n_jobs);
        let mut trained = train_resumed(&on_worker, &data, &sets, resume, monitor)?;
        trained.model.params.n_jobs = params.n_jobs;
        Ok(trained)
    })
}

/// A dense float64 array's values in row order and its columns.
fn rows_f64(x: &Matrix<'_>) -> Option<(Vec<f64>, usize)> {
    match x {
        Matrix::F64(a) => Some((a.as_array().iter().copied().collect(), a.as_array().ncols())),
        _ => None,
    }
}

/// A dense float32 array's values in row order and its columns.
fn rows_f32(x: &Matrix<'_>) -> Option<(Vec<f32>, usize)> {
    match x {
        Matrix::F32(a) => Some((a.as_array().iter().copied().collect(), a.as_array().ncols())),
        _ => None,
    }
}

/// A float64 vector copied out of `v`, or None for None.
fn optional_vector(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<Vec<f64>>> {
    if v.is_none() {
        return Ok(None);
    }
    Ok(Some(vector(v, what)?.as_slice()?.to_vec()))
}

/// Owned copies of the evaluation sets (objects with the attributes
/// `name`, `x`, `y`, `sample_weight` and `init_score`, as
/// `rgbm_rs._training.EvalSet`) whose X `pick` accepts (the training data's
/// dtype, dense).
fn owned_evals<T>(
    sets: Option<&Bound<'_, PyAny>>,
    pick: impl Fn(&Matrix<'_>) -> Option<(Vec<T>, usize)>,
) -> PyResult<Vec<OwnedEval<T>>> {
    let Some(sets) = sets else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for item in sets.try_iter()? {
        let item = item?;
        let name: String = item.getattr("name")?.extract()?;
        let (values, cols) = pick(&Matrix::extract(&item.getattr("x")?)?).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "evaluation set {name:?}: X must be dense, of the training data's dtype"
            ))
        })?;
        let y = vector(&item.getattr("y")?, "eval y")?.as_slice()?.to_vec();
        let w = optional_vector(&item.getattr("sample_weight")?, "eval sample_weight")?;
        let init = optional_vector(&item.getattr("init_score")?, "eval init_score")?;
        out.push((name, values, cols, y, w, init));
    }
    Ok(out)
}

#[pymethods]
impl PyShard {
    /// Starts training on this shard's rows: `data` has the attributes `x`
    /// (a dense 2-D float32 or float64 array, copied), `y`, `sample_weight`
    /// and `init_score` (the rows' starting scores, class-major, n × K; the
    /// last two may be None), as `rgbm_rs._training.TrainingData`;
    /// `row_ids` each row's index in the whole data (uint64), `n_total` the
    /// rows of all shards; `eval_sets` a list of evaluation sets (as
    /// `Booster.train` takes them, without groups), whole (every shard gets
    /// the same ones); `threads` the threads this shard uses (the model does
    /// not depend on it); `resume` None, or the records (JSON, as "round"
    /// messages carry them) of rounds 0..k of this fit, which it then
    /// replays rather than trains, and whether the caller had stopped the
    /// fit after the last of them. `first()` then returns the fit's first
    /// message.
    #[new]
    #[pyo3(signature = (params_json, data, row_ids, n_total, eval_sets=None, threads=None, resume=None))]
    fn new(
        params_json: &str,
        data: &Bound<'_, PyAny>,
        row_ids: PyReadonlyArray1<'_, u64>,
        n_total: usize,
        eval_sets: Option<&Bound<'_, PyAny>>,
        threads: Option<usize>,
        resume: Option<(Vec<String>, bool)>,
    ) -> PyResult<Self> {
        let params = BoosterParams::parse_json(params_json).map_err(to_py)?;
        check_params(&params).map_err(to_py)?;
        params.validate().map_err(to_py)?;
        let y = vector(&data.getattr("y")?, "y")?.as_slice()?.to_vec();
        let w = optional_vector(&data.getattr("sample_weight")?, "sample_weight")?;
        let init = optional_vector(&data.getattr("init_score")?, "init_score")?;
        let ids = row_ids.as_slice()?.to_vec();
        let (records, resume_stopped) = resume.unwrap_or_default();
        let resumed = records
            .iter()
            .map(|r| RoundRecord::from_json(r))
            .collect::<crate::error::Result<Vec<_>>>()
            .map_err(to_py)?;
        let input = ShardInput {
            params,
            y,
            w,
            init,
            ids,
            n_total,
            threads,
            resumed,
            stopped: resume_stopped,
        };
        let x = Matrix::extract(&data.getattr("x")?)?;
        let training = if let Some((values, cols)) = rows_f64(&x) {
            training(input, values, cols, owned_evals(eval_sets, rows_f64)?)
        } else if let Some((values, cols)) = rows_f32(&x) {
            training(input, values, cols, owned_evals(eval_sets, rows_f32)?)
        } else {
            return Err(PyTypeError::new_err(
                "a shard's X must be a dense 2-D float32 or float64 array",
            ));
        };
        let fit = ShardFit::start(training).map_err(to_py)?;
        Ok(PyShard {
            fit: Mutex::new(Some(fit)),
        })
    }

    /// The fit's first message: ("sum" | "max", float64 values), ("limbs",
    /// int64 limbs), ("gather", width, float64 records), ("round", index,
    /// evaluation results, the round's record as JSON) or ("done", Booster). A failed fit raises its error.
    fn first<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.exchange(py, None)
    }

    /// Answers the last message with the combined values (`kind` "values",
    /// "limbs" or "stop") and returns the next message.
    fn reply<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let reply = match kind {
            "values" => Reply::Values(vector(values, "values")?.as_slice()?.to_vec()),
            "limbs" => {
                let a = values
                    .cast::<PyArray1<i64>>()
                    .map_err(|_| PyTypeError::new_err("limbs must be an int64 array"))?;
                Reply::Limbs(a.try_readonly()?.as_slice()?.to_vec())
            }
            "stop" => Reply::Stop(values.is_truthy()?),
            other => {
                return Err(PyValueError::new_err(format!(
                    "kind must be 'values', 'limbs' or 'stop', got {other:?}"
                )));
            }
        };
        self.exchange(py, Some(reply))
    }

    /// Stops the fit (if it is still running) and frees its rows.
    fn close(&self, py: Python<'_>) {
        // The lock only with the GIL released (see `exchange`).
        py.detach(|| drop(self.fit.lock().ok().and_then(|mut f| f.take())));
    }
}

impl PyShard {
    fn exchange<'py>(
        &self,
        py: Python<'py>,
        reply: Option<Reply>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        // The lock is taken with the GIL released: a thread that holds it
        // needs the GIL back to return, so one waiting for it while holding
        // the GIL (an exchange, or close from another thread) would deadlock.
        let message = py.detach(|| -> Result<crate::error::Result<Message>, &'static str> {
            let guard = self
                .fit
                .lock()
                .map_err(|_| "the shard's fit failed earlier")?;
            let fit = guard.as_ref().ok_or("the shard is closed")?;
            Ok(match reply {
                None => fit.first(),
                Some(r) => fit.reply(r),
            })
        });
        let message = message.map_err(PyValueError::new_err)?.map_err(to_py)?;
        message_tuple(py, message)
    }
}

fn message_tuple(py: Python<'_>, message: Message) -> PyResult<Bound<'_, PyTuple>> {
    match message {
        Message::Combine { op, values } => PyTuple::new(
            py,
            [
                op.name().into_pyobject(py)?.into_any(),
                PyArray1::from_vec(py, values).into_any(),
            ],
        ),
        Message::Limbs(l) => PyTuple::new(
            py,
            [
                "limbs".into_pyobject(py)?.into_any(),
                PyArray1::from_vec(py, l).into_any(),
            ],
        ),
        Message::Gather { width, records } => PyTuple::new(
            py,
            [
                "gather".into_pyobject(py)?.into_any(),
                width.into_pyobject(py)?.into_any(),
                PyArray1::from_vec(py, records).into_any(),
            ],
        ),
        Message::Round(r, results, record) => {
            let items: Vec<(String, String, f64, bool)> = results
                .into_iter()
                .map(|e| (e.set, e.metric, e.value, e.higher_is_better))
                .collect();
            PyTuple::new(
                py,
                [
                    "round".into_pyobject(py)?.into_any(),
                    r.into_pyobject(py)?.into_any(),
                    items.into_pyobject(py)?.into_any(),
                    record
                        .to_json()
                        .map_err(to_py)?
                        .into_pyobject(py)?
                        .into_any(),
                ],
            )
        }
        Message::Done(result) => {
            let trained = result.map_err(|e: RgbmError| to_py(e))?;
            let booster = Bound::new(py, PyBooster::from_trained(*trained))?;
            PyTuple::new(
                py,
                ["done".into_pyobject(py)?.into_any(), booster.into_any()],
            )
        }
    }
}
