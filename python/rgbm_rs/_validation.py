"""Input and parameter checks done in Python before any native code runs."""
from __future__ import annotations

import numbers
import os

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import _check_sample_weight, validate_data


def check_X_y(estimator, X, y, *, regression: bool):
    """Validate training data; NaN in X means missing, infinity is an error."""
    X, y = validate_data(
        estimator,
        X,
        y,
        reset=True,
        dtype=[np.float64, np.float32],
        ensure_all_finite="allow-nan",
        y_numeric=regression,
        accept_sparse=False,
    )
    return _contiguous(X), y


def check_X(estimator, X):
    """Validate prediction data against what the estimator was fitted on."""
    X = validate_data(
        estimator,
        X,
        reset=False,
        dtype=[np.float64, np.float32],
        ensure_all_finite="allow-nan",
        accept_sparse=False,
    )
    return _contiguous(X)


def _contiguous(X):
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    return X


def check_weights(sample_weight, X):
    """Finite, non-negative float64 weights, one per row, not all zero (or None)."""
    if sample_weight is None:
        return None
    w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity")
    if not w.sum() > 0:
        raise ValueError("sample_weight sums to zero: at least one row needs a positive weight")
    return np.ascontiguousarray(w, dtype=np.float64)


def resolve_seed(random_state) -> int:
    """An int seed for the native RNG: the int itself, or drawn from numpy's generator."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0 or random_state >= 2**64:
            raise ValueError(f"random_state must be in [0, 2**64), got {random_state}")
        return int(random_state)
    rng = check_random_state(random_state)
    return int(rng.randint(0, 2**31 - 1))


def resolve_n_jobs(n_jobs):
    """joblib's convention: None or -1 = all cores, -k = all but k-1."""
    if n_jobs is None:
        return None
    n_jobs = int(n_jobs)
    if n_jobs > 0:
        return n_jobs
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    raise ValueError("n_jobs must be a non-zero integer or None, got 0")
