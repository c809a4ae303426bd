import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor


@pytest.fixture
def binary_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    X[rng.random(600) < 0.05, 0] = np.nan
    logit = 2 * np.nan_to_num(X[:, 0]) * X[:, 1] + np.sin(2 * X[:, 2])
    y = (rng.random(600) < 1 / (1 + np.exp(-2 * logit))).astype(int)
    return X, y


@pytest.fixture
def regression_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4))
    y = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.1 * rng.normal(size=500)
    return X, y


# Model files of each kind, for the model-file tests (the `data` and `docs`
# fixtures; a test module may define its own of the same name).
_MODEL_KW = dict(n_estimators=4, max_depth=2, min_samples_leaf=5, random_state=0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    return X, X[:, 0] + 0.1 * rng.normal(size=120), (X[:, 0] > 0).astype(int), np.arange(120) % 3


@pytest.fixture(scope="module")
def docs(data):
    X, yr, yb, y3 = data
    return {
        "reg": RGBMRegressor(**_MODEL_KW).fit(X, yr)._to_document(),
        "clf": RGBMClassifier(**_MODEL_KW).fit(X, yb)._to_document(),
        "mc": RGBMClassifier(**_MODEL_KW).fit(X, y3)._to_document(),
        "gauss": RGBMRegressor(loss="gaussian", **_MODEL_KW).fit(X, yr)._to_document(),
    }
