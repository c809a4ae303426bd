"""Facts the estimators read from the core (metrics per loss, links) checked
against independent formulas and against what a fit accepts."""

import numpy as np
import pytest
from scipy.special import expit, softmax

from rgbm_rs import RGBMClassifier, RGBMRegressor, _core

rng = np.random.default_rng(0)
X = rng.normal(size=(150, 3))
Y = {"reg": X[:, 0], "bin": (X[:, 0] > 0).astype(int), "multi": np.arange(150) % 3}
CASES = [
    ("squared", RGBMRegressor, "reg"),
    ("huber", RGBMRegressor, "reg"),
    ("gaussian", RGBMRegressor, "reg"),
    ("logistic", RGBMClassifier, "bin"),
    ("exponential", RGBMClassifier, "bin"),
    ("sla01", RGBMClassifier, "bin"),
    ("softmax", RGBMClassifier, "multi"),
]
ALL_METRICS = sorted({m for loss, _, _ in CASES for m in _core.metrics_for(loss)})


def _estimator(loss, cls, **kw):
    if loss == "softmax":
        return cls(n_estimators=2, **kw)
    if loss == "sla01":
        return cls(loss=loss, gain="gradient", leaf="gradient", n_estimators=2, **kw)
    return cls(loss=loss, n_estimators=2, **kw)


@pytest.mark.parametrize("loss,cls,task", CASES, ids=[c[0] for c in CASES])
def test_metrics_for_a_loss_are_what_a_fit_accepts(loss, cls, task):
    y = Y[task]
    listed = _core.metrics_for(loss)
    # The first is the default: what a fit with an evaluation set records unasked.
    est = _estimator(loss, cls).fit(X, y, eval_set=[(X, y)])
    assert list(est.evals_result_["training"]) == [listed[0]]
    for metric in ALL_METRICS:
        est = _estimator(loss, cls, eval_metric=metric)
        if metric in listed:
            est.fit(X, y, eval_set=[(X, y)])
            assert list(est.evals_result_["training"]) == [metric]
        else:
            with pytest.raises(ValueError, match="eval_metric"):
                est.fit(X, y, eval_set=[(X, y)])


def test_metrics_for_an_unknown_loss():
    with pytest.raises(ValueError, match='unknown loss "bogus"'):
        _core.metrics_for("bogus")


@pytest.mark.parametrize(
    "loss,link",
    [("logistic", lambda f: expit(f)), ("exponential", lambda f: expit(2 * f)), ("sla01", lambda f: expit(f / 0.1))],
)
def test_binary_links(loss, link):
    booster = _estimator(loss, RGBMClassifier).fit(X, Y["bin"]).get_booster()
    raw = np.linspace(-30, 30, 24).reshape(2, 3, 4)[:, ::2]  # 3-D and strided
    p = booster.class_probabilities(raw)
    assert p.shape == raw.shape + (2,)
    np.testing.assert_allclose(p[..., 1], link(raw), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-15)


def test_softmax_link():
    booster = RGBMClassifier(n_estimators=2).fit(X, Y["multi"]).get_booster()
    raw = rng.normal(scale=50, size=(4, 5, 3))
    np.testing.assert_allclose(booster.class_probabilities(raw), softmax(raw, axis=-1), rtol=1e-12, atol=1e-300)
    with pytest.raises(ValueError, match="last axis of 3"):
        booster.class_probabilities(raw[..., :2])


def test_regression_models_have_no_class_probabilities():
    booster = RGBMRegressor(n_estimators=2).fit(X, Y["reg"]).get_booster()
    with pytest.raises(ValueError, match="no class probabilities"):
        booster.class_probabilities(np.zeros(3))
