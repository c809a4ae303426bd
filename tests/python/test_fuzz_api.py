"""Property-based fuzzing of the estimator API (Hypothesis, bounded and derandomized for CI).

Property: for any data shape, dtype, pattern of NaN/inf, labels, weights and
parameter values (in range or not), ``fit`` followed by prediction either
succeeds with finite outputs of the right shape (probabilities in [0, 1]
summing to 1, labels from ``classes_``), or raises ValueError/TypeError.
Any other exception, a crash or a hang fails the test.

Weights range from 1e-300 to 1e300 (the core normalises their scale);
a fitted model must also agree with its last staged prediction, its pickle
and its saved-and-loaded copy.
"""

import contextlib
import faulthandler
import os
import pickle
import tempfile
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model  # noqa: E402

ALLOWED = (ValueError, TypeError)
# RGBM_FUZZ_EXAMPLES raises the budget for a local or nightly bug hunt.
FUZZ = settings(
    max_examples=int(os.environ.get("RGBM_FUZZ_EXAMPLES", "60")),
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@contextlib.contextmanager
def watchdog(seconds=120):
    """A hang (deadlock, endless loop) in one example ends the run with every
    thread's traceback, instead of stalling CI until its own time limit."""
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


NAN = float("nan")
INF = float("inf")

# Parameter values: (valid, invalid). A hostile case sets at most one parameter
# to an invalid value; combinations of valid values may still be refused.
COMMON = {
    "n_estimators": ([1, 2, 3, 5], [0, -1, 2.5, 2**70, "3", None]),
    "learning_rate": ([0.1, 0.5, 1.0, 1e-9, 1e3], [0, -0.1, NAN, INF, "0.1"]),
    "max_depth": ([1, 2, 3, 6, 64, None], [0, 65, -1, 1.5]),
    "max_leaves": ([None, 2, 4, 31, 2**20], [1, 0, 2**20 + 1]),
    "max_bins": ([2, 3, 16, 255, 65535], [1, 0, 65536]),
    "min_samples_leaf": ([1, 2, 5, 20, 10**6], [0, -1, 2**70]),
    "min_child_weight": ([0.0, 1e-3, 1.0, 1e6], [-1.0, NAN, INF]),
    "reg_lambda": ([0.0, 1.0, 1e6], [-1.0, NAN, INF]),
    "min_split_gain": ([0.0, 0.5, 1e6], [-1.0, NAN]),
    "gain": (["newton", "gradient"], ["bogus"]),
    "leaf": (["newton", "gradient"], ["bogus"]),
    "subsample": ([1.0, 0.5, 0.1, 1e-6], [0.0, 1.5, NAN]),
    "step": (["shrinkage", "constant", "line_search"], ["bogus"]),
    "selection": (["full", "random", "group", "groups"], ["bogus"]),
    "selection_size": ([None, 1, 2, 3, 0.5, 1.0], [0, 0.0, 1.5, 10**6, NAN]),
    "groups": ([None, [[0]], [[0, 1], [2]], [[0], [1], [2], [3], [4], [5]]], [[[0, 0]], [[-1]], [[]], [0]]),
    "selection_scope": (["tree", "node"], ["bogus"]),
    "booster": (["gbm", "rgb"], ["bogus"]),
    "rgb_candidates": ([1, 2, 4], [0]),
    "rgb_beta": ([0.0, 0.1, 10.0], [-1.0, NAN]),
    "rgb_nodes": ([None, [1], [2, 4]], [[], [0], [-1], [2**21]]),
    "rgb_lambdas": ([None, [0.1], [1e-3, 4.0]], [[], [0.0], [-1.0], [NAN], [INF]]),
    "langevin": ([False, True], ["yes"]),
    "temperature": ([1e4, 1.0, 1e-6, 1e12], [0.0, -1.0, NAN, INF]),
    "shrink_rate": ([None, 0.0, 1e-3, 1.0, 9.0], [10.0, -1.0, NAN]),
    "init": (["optimal", "zero"], ["bogus"]),
    "early_stopping_rounds": ([None, 1, 3], [0, -1]),
    "validation_fraction": ([None, 0.2, 0.5], [0.0, 1.0, NAN]),
    "importance_type": (["gain", "split"], ["bogus"]),
    "random_state": ([0, 1, 2**32 - 1, None], [-1, 1.5]),
    "n_jobs": ([1, 2, None, -1], [0, 1.5]),
}
REGRESSOR = {
    **COMMON,
    "loss": (["squared", "huber", "gaussian"], ["logistic", "bogus"]),
    "huber_delta": ([1.0, 1e-6, 1e6], [0.0, -1.0, NAN, INF]),
    "eval_metric": ([None, "l2", "rmse", "mae", ["l2", "mae"]], ["gaussian_nll_x", "logloss", [], ["l2", "l2"], 3]),
}
CLASSIFIER = {
    **COMMON,
    "loss": (["logistic", "exponential", "sla01"], ["squared", "bogus"]),
    "logistic_reg": ([0.0, 0.1, 10.0], [-1.0, NAN]),
    "clamp": ([None, 0.01, 0.25, 0.4999], [0.0, 0.5, NAN]),
    "sla_scale": ([0.1, 1.0, 1e-6, 1e6], [0.0, -1.0, NAN, INF]),
    "eval_metric": ([None, "logloss", "error", "auc", "multi_logloss", "multi_error", ["error", "auc"]], ["l2", [], 3]),
}


@st.composite
def params(draw, space, hostile):
    """A few overridden parameters (the rest default), at most one of them invalid when hostile."""
    names = draw(st.lists(st.sampled_from(sorted(space)), max_size=5, unique=True))
    bad = draw(st.sampled_from([None] + names)) if hostile else None
    chosen = {name: draw(st.sampled_from(space[name][1] if name == bad else space[name][0])) for name in names}
    chosen.setdefault("n_estimators", draw(st.integers(1, 4)))
    return chosen


X_DTYPES = ["float64", "float32", "int64", "bool", "object", "object_none"]
CLEAN_PATTERNS = ["none", "none", "nan_cells", "nan_column", "all_nan", "constant", "huge"]
HOSTILE_PATTERNS = CLEAN_PATTERNS + ["inf_cell", "neg_inf_cell"]


@st.composite
def features(draw, hostile):
    n = draw(st.integers(0, 40) if hostile else st.integers(2, 40))
    p = draw(st.integers(0, 6) if hostile else st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    dtype = draw(st.sampled_from(X_DTYPES))
    pattern = draw(st.sampled_from(HOSTILE_PATTERNS if hostile else CLEAN_PATTERNS))
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=draw(st.sampled_from([1.0, 1e-6, 1e6])), size=(n, p))
    if pattern == "nan_cells" and X.size:
        X[rng.random(X.shape) < 0.3] = np.nan
    elif pattern == "nan_column" and p:
        X[:, rng.integers(p)] = np.nan
    elif pattern == "all_nan":
        X[:] = np.nan
    elif pattern in ("inf_cell", "neg_inf_cell") and X.size:
        X[rng.integers(n), rng.integers(p)] = np.inf if pattern == "inf_cell" else -np.inf
    elif pattern == "constant":
        X[:] = 1.0
    elif pattern == "huge" and (hostile or dtype != "float32"):
        X = X * 1e300
    if dtype == "float32":
        with np.errstate(over="ignore"):
            X = X.astype(np.float32)
    elif dtype in ("int64", "bool"):
        X = np.nan_to_num(X, nan=0.0, posinf=1e6, neginf=-1e6)
        X = np.clip(X, -1e6, 1e6).round().astype(np.int64) if dtype == "int64" else X > 0
    elif dtype == "object":
        X = X.astype(object)
    elif dtype == "object_none":
        X = X.astype(object)
        if X.size:
            X[np.isnan(X.astype(float))] = None
    return X, rng


CLEAN_WEIGHTS = ["none", "none", "ones", "random", "one_positive", "tiny", "huge", "spread"]
HOSTILE_WEIGHTS = CLEAN_WEIGHTS + ["zeros", "negative", "nan", "inf", "short", "2d"]


def _weights(draw, n, rng, hostile):
    kind = draw(st.sampled_from(HOSTILE_WEIGHTS if hostile else CLEAN_WEIGHTS))
    if kind == "none":
        return None
    return {
        "ones": lambda: np.ones(n),
        "random": lambda: rng.uniform(0, 1e3, size=n),
        "zeros": lambda: np.zeros(n),
        "negative": lambda: np.r_[-1.0, np.ones(max(n - 1, 0))][:n],
        "nan": lambda: np.r_[np.nan, np.ones(max(n - 1, 0))][:n],
        "inf": lambda: np.r_[np.inf, np.ones(max(n - 1, 0))][:n],
        "short": lambda: np.ones(max(n - 1, 0)),
        "2d": lambda: np.ones((n, 2)),
        "one_positive": lambda: np.r_[1.0, np.zeros(max(n - 1, 0))][:n],
        "tiny": lambda: np.full(n, 1e-300),
        "huge": lambda: np.full(n, 1e300),
        "spread": lambda: 10.0 ** rng.uniform(-100, 100, size=n),
    }[kind]()


CLEAN_TARGETS = ["normal", "normal", "int", "bool", "constant", "big"]
HOSTILE_TARGETS = CLEAN_TARGETS + ["nan", "inf", "short", "2d", "str"]


@st.composite
def regression_case(draw, hostile=None):
    hostile = draw(st.booleans()) if hostile is None else hostile
    X, rng = draw(features(hostile))
    n = X.shape[0]
    kind = draw(st.sampled_from(HOSTILE_TARGETS if hostile else CLEAN_TARGETS))
    y = {
        "normal": lambda: rng.normal(size=n),
        "int": lambda: rng.integers(-5, 5, size=n),
        "bool": lambda: rng.random(n) < 0.5,
        "constant": lambda: np.full(n, 3.0),
        "nan": lambda: np.r_[np.nan, rng.normal(size=max(n - 1, 0))][:n],
        "inf": lambda: np.r_[np.inf, rng.normal(size=max(n - 1, 0))][:n],
        "big": lambda: rng.normal(scale=1e6, size=n),
        "short": lambda: rng.normal(size=max(n - 1, 0)),
        "2d": lambda: rng.normal(size=(n, 2)),
        "str": lambda: np.array(["a"] * n),
    }[kind]()
    return X, y, _weights(draw, n, rng, hostile), draw(params(REGRESSOR, hostile))


CLEAN_LABELS = ["int", "int", "str", "bool", "float_labels", "negative"]
HOSTILE_LABELS = CLEAN_LABELS + ["nan", "continuous", "short", "object_mixed"]


@st.composite
def classification_case(draw):
    hostile = draw(st.booleans())
    X, rng = draw(features(hostile))
    n = X.shape[0]
    k = draw(st.integers(1, 4) if hostile else st.integers(2, 4))
    kind = draw(st.sampled_from(HOSTILE_LABELS if hostile else CLEAN_LABELS))
    codes = rng.integers(0, k, size=n)
    if not hostile:
        codes[:k] = np.arange(k)[: len(codes)]  # every class present
        rng.shuffle(codes)
        if kind == "bool":
            codes = np.arange(n) % 2
    y = {
        "int": lambda: codes,
        "str": lambda: np.array(["cat", "dog", "eel", "fox"])[codes],
        "bool": lambda: codes % 2 == 0,
        "float_labels": lambda: codes.astype(float) * 0.5,
        "negative": lambda: codes - 10,
        "nan": lambda: np.r_[np.nan, codes[1:].astype(float)][:n],
        "continuous": lambda: rng.normal(size=n),
        "short": lambda: codes[:-1],
        "object_mixed": lambda: np.array([1, "a"] * n, dtype=object)[:n],
    }[kind]()
    return X, y, _weights(draw, n, rng, hostile), draw(params(CLASSIFIER, hostile))


def _fit(est, X, y, w):
    """Fit; True if it succeeded, False if it raised an allowed exception."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            est.fit(X, y, sample_weight=w)
    except ALLOWED as e:
        event(f"refused: {type(e).__name__}")
        return False
    event("fitted")
    return True


def _assert_close(staged, full):
    """The last stage of a staged prediction is the prediction, up to rounding
    (stages are sums of per-round outputs, the prediction one pass)."""
    scale = max(1.0, float(np.max(np.abs(full), initial=0.0)))
    np.testing.assert_allclose(staged, full, rtol=1e-9, atol=1e-9 * scale)


def _saved_and_loaded(est):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.json")
        est.save_model(path)
        return load_model(path)


@FUZZ
@given(regression_case())
@watchdog()
def test_fuzz_regressor(case):
    X, y, w, p = case
    est = RGBMRegressor(**p)
    if not _fit(est, X, y, w):
        return
    n = X.shape[0]
    pred = est.predict(X)
    # 2-D y fits one output per target (column).
    shape = (n,) if np.ndim(y) == 1 else (n, np.shape(y)[1])
    assert pred.shape == shape
    assert np.all(np.isfinite(pred)), (p, pred[:5])
    assert est.n_features_in_ == X.shape[1]
    imp = est.feature_importances_
    assert imp.shape == (X.shape[1],) and np.all(np.isfinite(imp)) and np.all(imp >= 0)
    if est.loss == "gaussian":
        mean, std = est.predict(X, return_std=True)
        assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std > 0)
    staged = list(est.staged_predict(X))
    assert len(staged) == est.n_estimators_
    for s in staged:
        assert s.shape == shape and np.all(np.isfinite(s))
    _assert_close(staged[-1], pred)
    if est.langevin and est.n_estimators_ >= 4:
        u = est.predict_uncertainty(X, n_members=2)
        for v in u.values():
            assert np.all(np.isfinite(v)), (p, u)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(X), pred)
    np.testing.assert_array_equal(_saved_and_loaded(est).predict(X), pred)


@FUZZ
@given(classification_case())
@watchdog()
def test_fuzz_classifier(case):
    X, y, w, p = case
    est = RGBMClassifier(**p)
    if not _fit(est, X, y, w):
        return
    n = X.shape[0]
    k = len(est.classes_)
    assert k >= 2
    proba = est.predict_proba(X)
    assert proba.shape == (n, k)
    assert np.all(np.isfinite(proba)), (p, proba[:3])
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    labels = est.predict(X)
    assert labels.shape == (n,)
    assert set(np.asarray(labels).tolist()) <= set(est.classes_.tolist())
    raw = est.decision_function(X)
    assert raw.shape == ((n,) if k == 2 else (n, k)) and np.all(np.isfinite(raw))
    imp = est.feature_importances_
    assert imp.shape == (X.shape[1],) and np.all(np.isfinite(imp))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict_proba(X), proba)
    np.testing.assert_array_equal(_saved_and_loaded(est).predict_proba(X), proba)
    _assert_close(list(est.staged_predict_proba(X))[-1], proba)


@FUZZ
@given(
    regression_case(hostile=False),
    st.sampled_from(["float64", "float32", "object", "wide", "narrow", "inf", "nan", "3d"]),
)
@watchdog()
def test_fuzz_predict_inputs(case, variant):
    """A fitted model facing odd prediction inputs: finite output of the right shape, or ValueError/TypeError."""
    X, y, w, p = case
    est = RGBMRegressor(**{**p, "min_samples_leaf": 1})
    if not _fit(est, X, y, w):
        return
    Z = np.asarray(X, dtype=float) if X.dtype != object else np.array(X.tolist(), dtype=float)
    with np.errstate(over="ignore"):
        Z = {
            "float64": lambda: Z,
            "float32": lambda: Z.astype(np.float32),
            "object": lambda: Z.astype(object),
            "wide": lambda: np.c_[Z, Z],
            "narrow": lambda: Z[:, :-1],
            "inf": lambda: np.where(np.isnan(Z), np.inf, Z) if np.isnan(Z).any() else np.full_like(Z, np.inf),
            "nan": lambda: np.full_like(Z, np.nan),
            "3d": lambda: Z[:, :, None],
        }[variant]()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pred = est.predict(Z)
    except ALLOWED:
        return
    assert pred.shape == (Z.shape[0],) and np.all(np.isfinite(pred))
