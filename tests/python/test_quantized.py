"""use_quantized_grad and its settings: against LightGBM's quantized
training on the same data, against the exact leaf sums they renew from,
and as a limit (many levels give the unquantized fit)."""

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.metrics import log_loss

from rgbm_rs import RGBMClassifier, RGBMRegressor


def _binary(n=6000, p=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    logit = X[:, 0] - 0.8 * X[:, 1] * X[:, 2] + np.sin(2 * X[:, 3]) + 0.5 * X[:, 4] ** 2 - 0.5
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * logit))).astype(int)
    return X[: n // 2], y[: n // 2], X[n // 2 :], y[n // 2 :]


COMMON = {"n_estimators": 100, "learning_rate": 0.1, "random_state": 3}


def _ours(**extra):
    return RGBMClassifier(**{**COMMON, "max_leaves": 31, "max_depth": None, **extra})


def _lightgbm(**extra):
    return lgb.LGBMClassifier(**COMMON, num_leaves=31, verbose=-1, **extra)


SETTINGS = {
    "exact": {},
    "4 levels": {"use_quantized_grad": True},
    "2 levels": {"use_quantized_grad": True, "num_grad_quant_bins": 2},
    "renewed": {"use_quantized_grad": True, "quant_train_renew_leaf": True},
}


def test_held_out_loss_matches_lightgbm_quantized():
    """Mean held-out log loss over two data seeds, setting by setting: the
    two libraries agree within 0.01, and two levels cost both about as much
    (about 0.02 here: the comparison sees quantization at work)."""
    losses = {}
    for seed in (0, 1):
        Xtr, ytr, Xte, yte = _binary(seed=seed)
        for lib, make in (("ours", _ours), ("lightgbm", _lightgbm)):
            for setting, extra in SETTINGS.items():
                proba = make(**extra).fit(Xtr, ytr).predict_proba(Xte)[:, 1]
                losses[lib, setting] = losses.get((lib, setting), 0.0) + log_loss(yte, proba) / 2
    for setting in SETTINGS:
        assert abs(losses["ours", setting] - losses["lightgbm", setting]) < 0.01, (setting, losses)
    for lib in ("ours", "lightgbm"):
        assert losses[lib, "2 levels"] - losses[lib, "exact"] > 0.008, losses


def test_many_levels_give_the_unquantized_fit():
    Xtr, ytr, Xte, yte = _binary(n=3000)
    exact = _ours().fit(Xtr, ytr).predict_proba(Xte)[:, 1]
    fine = _ours(use_quantized_grad=True, num_grad_quant_bins=1 << 20, stochastic_rounding=False)
    fine = fine.fit(Xtr, ytr).predict_proba(Xte)[:, 1]
    coarse = _ours(use_quantized_grad=True, num_grad_quant_bins=2).fit(Xtr, ytr).predict_proba(Xte)[:, 1]
    assert np.abs(fine - exact).max() < 0.02
    assert np.abs(coarse - exact).max() > 0.05


# One quantized tree from a zero start, its leaves at full step.
ONE_TREE = dict(n_estimators=1, learning_rate=1.0, init="zero", max_depth=None, use_quantized_grad=True, random_state=0)


def test_renewed_leaves_are_the_exact_leaf_sums():
    """One tree from a zero start: with renewal each leaf is −ΣG/ΣH of its
    rows' exact gradients (weighted, so hessians differ and are quantized);
    without it the leaves come from the quantized sums and differ."""
    Xtr, ytr, _, _ = _binary(n=2000)
    w = np.random.default_rng(1).uniform(0.2, 3.0, size=len(ytr))
    g, h = w * (0.5 - ytr), w * 0.25
    for renew in (True, False):
        model = RGBMClassifier(**ONE_TREE, max_leaves=8, min_child_weight=0.0, quant_train_renew_leaf=renew)
        model.fit(Xtr, ytr, sample_weight=w)
        leaf = model.apply(Xtr)[:, 0]
        raw = model.decision_function(Xtr)
        exact = {k: -g[leaf == k].sum() / h[leaf == k].sum() for k in np.unique(leaf)}
        gap = max(abs(raw[leaf == k][0] - v) for k, v in exact.items())
        if renew:
            assert gap < 1e-9
        else:
            assert gap > 1e-3


def test_squared_error_renewed_leaves_are_the_leaf_means():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1500, 5))
    y = X[:, 0] + np.abs(X[:, 1]) + rng.normal(size=1500)
    model = RGBMRegressor(**ONE_TREE, max_leaves=6, quant_train_renew_leaf=True).fit(X, y)
    leaf = model.apply(X)[:, 0]
    pred = model.predict(X)
    for k in np.unique(leaf):
        np.testing.assert_allclose(pred[leaf == k], y[leaf == k].mean(), rtol=1e-12, atol=1e-12)


def test_the_model_does_not_depend_on_the_thread_count():
    Xtr, ytr, Xte, _ = _binary(n=4000)
    a, b = (_ours(use_quantized_grad=True, n_jobs=j, n_estimators=20).fit(Xtr, ytr).predict_proba(Xte) for j in (1, 2))
    np.testing.assert_array_equal(a, b)
    c = _ours(use_quantized_grad=True, n_estimators=20, random_state=4).fit(Xtr, ytr).predict_proba(Xte)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("extra", [{"booster": "rgb"}, {"langevin": True}])
def test_refused_where_trees_are_grown_otherwise(extra):
    Xtr, ytr, _, _ = _binary(n=400)
    with pytest.raises(ValueError, match="use_quantized_grad"):
        RGBMClassifier(use_quantized_grad=True, **extra).fit(Xtr, ytr)
