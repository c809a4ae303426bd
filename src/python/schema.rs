//! Facts the Python layer reads from the core instead of restating them.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::options::Metric;
use crate::params::Loss;

/// The evaluation metrics that apply to a loss (with `n_classes` for a
/// custom loss's task), its default first.
#[pyfunction]
#[pyo3(signature = (loss, n_classes=None))]
pub fn metrics_for(loss: &str, n_classes: Option<usize>) -> PyResult<Vec<&'static str>> {
    let loss: Loss = serde_json::from_value(serde_json::Value::String(loss.to_string()))
        .map_err(|_| PyValueError::new_err(format!("unknown loss {loss:?}")))?;
    Ok(Metric::for_loss(loss, n_classes)
        .into_iter()
        .map(Metric::name)
        .collect())
}

/// Every loss with its task (`Loss::task`), in declaration order.
#[pyfunction]
pub fn loss_tasks() -> Vec<(&'static str, &'static str)> {
    Loss::ALL.iter().map(|l| (l.name(), l.task())).collect()
}

/// The losses that fit several targets (`n_targets`), in declaration order.
#[pyfunction]
pub fn target_losses() -> Vec<&'static str> {
    Loss::TARGETS.iter().map(|l| l.name()).collect()
}

/// Checks parameters (JSON) as a fit on shards would, before any data moves:
/// the sharded-fit refusals, then the bounds and the rules between them.
#[pyfunction]
pub fn check_shard_params(params_json: &str) -> PyResult<()> {
    let params =
        crate::params::BoosterParams::parse_json(params_json).map_err(super::errors::to_py)?;
    crate::booster::shard::check_params(&params).map_err(super::errors::to_py)?;
    params.validate().map_err(super::errors::to_py)
}

/// Every training parameter as a JSON list: name, type and bounds, whether
/// None is allowed, a one-line doc and the default.
#[pyfunction]
pub fn param_schema() -> PyResult<String> {
    crate::params::schema_json().map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Lu & Mazumder's formula (18): Type 1 selection's minimal cosine angle
/// for p orthogonal weak learners, t drawn per round.
#[pyfunction]
pub fn type1_theta(p: usize, t: usize) -> PyResult<f64> {
    crate::selection::type1_theta(p, t).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The cores this process may use (affinity mask and cgroup quota): what
/// `n_jobs=None` or -1 runs on, and what -k counts down from.
#[pyfunction]
pub fn available_cores() -> usize {
    crate::threads::available_cores()
}

/// The peers' parameter and objective names and what each is here, as
/// JSON: {"names": [{name, peers, use, of, estimator, note}], "objectives":
/// [{name, loss, note}]}.
#[pyfunction]
pub fn peer_names() -> String {
    crate::params::peer_names_json()
}
