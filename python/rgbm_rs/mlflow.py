"""MLflow autologging for the rgbm_rs estimators (needs the mlflow package).

``mlflow.sklearn.autolog()`` patches the estimators scikit-learn's
``all_estimators()`` lists, which are scikit-learn's own, so it does not see
an rgbm_rs fit. :func:`autolog` does for the rgbm_rs estimators what
``mlflow.lightgbm.autolog()`` does for LightGBM's::

    import rgbm_rs.mlflow

    rgbm_rs.mlflow.autolog()
    RGBMClassifier().fit(X, y, eval_set=[(X_valid, y_valid)])

This module is not imported by ``import rgbm_rs``; importing it does not
import mlflow either (that happens at the first logged fit).
"""

from __future__ import annotations

import functools
import time
import warnings
from typing import Any

from .sklearn import SKOPS_TRUSTED_TYPES, RGBMClassifier, RGBMRanker, RGBMRegressor

__all__ = ["autolog", "SKOPS_TRUSTED_TYPES"]

_CLASSES: tuple[type[Any], ...] = (RGBMRegressor, RGBMClassifier, RGBMRanker)
# Per patched class: whether it defined fit itself, and the fit it had.
_patched: dict[type[Any], tuple[bool, Any]] = {}
_config = {"log_models": True}
# MLflow's limit on the metrics of one log_batch call.
_BATCH = 1000


def autolog(*, log_models: bool = True, disable: bool = False) -> None:
    """Log every ``fit`` of RGBMRegressor, RGBMClassifier and RGBMRanker to MLflow.

    Each fit logs into the active run, or into a new run that ends with the
    fit when none is active (as ``mlflow.lightgbm.autolog`` does):

    - the parameters, ``get_params(deep=False)`` (logged before training, so
      a failed fit keeps them);
    - the evaluation history ``evals_result_``, as metrics named
      ``"<set>-<metric>"`` (``"valid_0-l2"``) with one step per round (MLflow
      shows the last round's value as the metric's value);
    - ``best_iteration`` (``best_iteration_``: the rounds kept, as
      ``mlflow.lightgbm`` logs LightGBM's) with early stopping;
    - with ``log_models``, the fitted estimator as an MLflow model under
      ``"model"``, through ``mlflow.sklearn.log_model`` in its default skops
      format with ``skops_trusted_types=SKOPS_TRUSTED_TYPES``.

    A logging failure (a metric name MLflow refuses, a model skops cannot
    store, such as one with a Python function as its loss or metric) is a
    warning: the fit itself is unaffected.

    Parameters
    ----------
    log_models : bool, default=True
        Log the fitted estimator as a model.
    disable : bool, default=False
        Restore the estimators' own ``fit``.
    """
    if disable:
        for cls, (own, fit) in _patched.items():
            if own:
                cls.fit = fit
            else:
                delattr(cls, "fit")
        _patched.clear()
        return
    _config["log_models"] = bool(log_models)
    for cls in _CLASSES:
        if cls not in _patched:
            _patched[cls] = ("fit" in cls.__dict__, cls.__dict__.get("fit"))
            cls.fit = _logged(cls.fit)


def _logged(fit):
    @functools.wraps(fit)
    def logged_fit(self, *args, **kwargs):
        import mlflow

        own_run = mlflow.active_run() is None
        run = mlflow.start_run() if own_run else mlflow.active_run()
        try:
            _attempt("parameters", _log_params, self, run)
            fitted = fit(self, *args, **kwargs)
        except BaseException:
            if own_run:
                mlflow.end_run(status="FAILED")
            raise
        try:
            _attempt("evaluation metrics", _log_metrics, self, run)
            if _config["log_models"]:
                _attempt("model", _log_model, self, run)
        finally:
            if own_run:
                mlflow.end_run()
        return fitted

    return logged_fit


def _attempt(what, log, estimator, run):
    try:
        log(estimator, run)
    except Exception as e:
        warnings.warn(
            f"rgbm_rs.mlflow.autolog: the {what} of {type(estimator).__name__} were not logged: {e}",
            RuntimeWarning,
            stacklevel=4,
        )


def _log_params(estimator, run):
    import mlflow

    mlflow.log_params(estimator.get_params(deep=False))


def _log_metrics(estimator, run):
    from mlflow import MlflowClient
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    metrics = [
        Metric(key=f"{set_name}-{metric}", value=float(value), timestamp=now, step=step)
        for set_name, by_metric in estimator.evals_result_.items()
        for metric, values in by_metric.items()
        for step, value in enumerate(values)
    ]
    if hasattr(estimator, "best_iteration_"):
        metrics.append(Metric(key="best_iteration", value=float(estimator.best_iteration_), timestamp=now, step=0))
    client = MlflowClient()
    for start in range(0, len(metrics), _BATCH):
        client.log_batch(run.info.run_id, metrics=metrics[start : start + _BATCH])


def _log_model(estimator, run):
    import mlflow.sklearn

    mlflow.sklearn.log_model(estimator, name="model", skops_trusted_types=list(SKOPS_TRUSTED_TYPES))
