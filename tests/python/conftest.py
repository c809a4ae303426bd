import sys

import numpy as np
import pytest



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
