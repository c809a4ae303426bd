"""summation="exact": models that do not depend on the order of the rows."""

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[rng.random(n) < 0.05, 2] = np.nan
    y = X[:, 0] * X[:, 1] + np.sin(2 * np.nan_to_num(X[:, 2])) + rng.normal(scale=0.3, size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    return X, y, w


@pytest.mark.parametrize(
    "make, target",
    [
        (lambda: RGBMRegressor(n_estimators=40, summation="exact"), lambda y: y),
        (
            lambda: RGBMRegressor(n_estimators=40, loss="poisson", summation="exact"),
            lambda y: np.floor(np.clip(y + 2, 0, None)),
        ),
        (lambda: RGBMClassifier(n_estimators=40, summation="exact"), lambda y: (y > 0).astype(int)),
        (
            lambda: RGBMClassifier(n_estimators=40, max_depth=4, max_leaves=None, summation="exact"),
            lambda y: np.digitize(y, [-0.5, 0.5]),  # 3 classes
        ),
    ],
)
def test_shuffled_rows_give_the_same_model(make, target):
    X, y, w = _data()
    y = target(y)
    perm = np.random.default_rng(1).permutation(len(y))
    a = make().fit(X, y, sample_weight=w)
    b = make().fit(X[perm], y[perm], sample_weight=w[perm])
    if isinstance(a, RGBMClassifier):
        assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    else:
        assert np.array_equal(a.predict(X), b.predict(X))


def test_exact_is_as_accurate_as_float():
    X, y, _ = _data()
    exact = RGBMRegressor(n_estimators=60, summation="exact").fit(X, y)
    plain = RGBMRegressor(n_estimators=60).fit(X, y)
    mse = [np.mean((m.predict(X) - y) ** 2) for m in (exact, plain)]
    assert abs(mse[0] - mse[1]) < 1e-6 * mse[1]


@pytest.mark.parametrize(
    "bad, name",
    [
        (dict(summation="kahan"), "summation"),
        (dict(summation="exact", step="line_search"), "step"),
        (dict(summation="exact", booster="rgb"), "booster"),
    ],
)
def test_refused_combinations_name_the_parameter(bad, name):
    X, y, _ = _data(300)
    with pytest.raises(ValueError, match=name):
        RGBMClassifier(n_estimators=2, **bad).fit(X, (y > 0).astype(int))
