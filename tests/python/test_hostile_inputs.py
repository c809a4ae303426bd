"""Hostile inputs: every bad input, parameter or model file gets a ValueError or
TypeError (OSError for unreadable paths) whose message names the problem.

Complements test_bad_input.py (cases already there are not repeated). One
file of about 1,000 lines on purpose: a catalogue, one section per kind of
input, so that a new hostile case has one obvious home. A bug
found here that cannot be fixed at once goes in as
``pytest.mark.xfail(strict=True, reason="BUG: ...")``, so that fixing it
turns the test into an XPASS failure, the signal to drop the marker.
"""

import copy
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import warnings

import numpy as np
import pytest
from sklearn.exceptions import DataConversionWarning

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model

BAD = (ValueError, TypeError)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    yr = X[:, 0] + 0.1 * rng.normal(size=60)
    y3 = np.arange(60) % 3
    return X, y, yr, y3


def small(cls, **params):
    params.setdefault("n_estimators", 3)
    params.setdefault("min_samples_leaf", 5)
    return cls(**params)


# ---------------------------------------------------------------------------
# Data: non-finite targets and weights
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_classifier_labels(data, value):
    X, y, _, _ = data
    yf = y.astype(float)
    yf[4] = value
    with pytest.raises(ValueError, match="NaN|infinity"):
        small(RGBMClassifier).fit(X, yf)


def test_negative_infinity_regression_target(data):
    X, _, yr, _ = data
    yb = yr.copy()
    yb[0] = -np.inf
    with pytest.raises(ValueError, match="y contains.*infinity"):
        small(RGBMRegressor).fit(X, yb)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_eval_set_target(data, value):
    X, _, yr, _ = data
    ye = yr.copy()
    ye[1] = value
    with pytest.raises(ValueError, match=r"eval_set\[0\].*NaN or infinity"):
        small(RGBMRegressor).fit(X, yr, eval_set=[(X, ye)])


@pytest.mark.parametrize(
    "weights,fragment",
    [
        (lambda n: np.r_[-np.inf, np.ones(n - 1)], "sample_weight.*infinity"),
        (lambda n: -np.ones(n), "[Nn]egative.*sample_weight"),
        (lambda n: np.ones((n, 1)), "Sample weights must be 1D"),
        (lambda n: np.array(["a"] * n), "could not convert string"),
        (lambda n: np.ones(n) + 1j, "[Cc]omplex"),
    ],
    ids=["minus_inf", "all_negative", "2d", "strings", "complex"],
)
def test_bad_sample_weights(data, weights, fragment):
    X, _, yr, _ = data
    with pytest.raises(BAD, match=fragment):
        small(RGBMRegressor).fit(X, yr, sample_weight=weights(len(yr)))


@pytest.mark.parametrize(
    "weights,fragment",
    [
        (lambda n: -np.ones(n), "[Nn]egative"),
        (lambda n: np.zeros(n), "non-zero"),
        (lambda n: np.full(n, np.nan), "NaN"),
    ],
    ids=["negative", "all_zero", "nan"],
)
def test_bad_eval_sample_weights(data, weights, fragment):
    X, _, yr, _ = data
    with pytest.raises(ValueError, match=fragment):
        small(RGBMRegressor).fit(X, yr, eval_set=[(X, yr)], eval_sample_weight=[weights(len(yr))])


def _zero_weight_split_errors(X, yr):
    """Messages when the only weighted row lands in the training part, and in the validation part."""
    w = np.zeros(len(yr))
    w[0] = 1.0
    found = {}
    for seed in range(40):
        est = small(RGBMRegressor, validation_fraction=0.5, random_state=seed)
        with pytest.raises(ValueError) as info:
            est.fit(X, yr, sample_weight=w)
        message = str(info.value)
        found.setdefault("training" if "training part" in message else "validation", message)
        if len(found) == 2:
            return found
    pytest.fail(f"only saw {found}")


def test_weights_zero_after_validation_split(data):
    X, _, yr, _ = data
    found = _zero_weight_split_errors(X, yr)
    assert re.search("sample_weight of the training part .* sums to zero", found["training"])
    assert re.search("validation.*weights must be .*not all 0", found["validation"])


def test_zero_validation_weights_message_is_not_non_finite(data):
    X, _, yr, _ = data
    assert "non-finite" not in _zero_weight_split_errors(X, yr)["validation"]


def _fit_predict_finite_or_valueerror(est, X, y, **fit):
    try:
        est.fit(X, y, **fit)
    except ValueError:
        return
    out = est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)
    assert np.all(np.isfinite(out)), f"silent non-finite output: {out[:3]}"


@pytest.mark.parametrize("cls", [RGBMRegressor, RGBMClassifier])
def test_weights_whose_sum_overflows(data, cls):
    X, y, yr, _ = data
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fit_predict_finite_or_valueerror(
            small(cls), X, yr if cls is RGBMRegressor else y, sample_weight=np.full(len(y), 1e308)
        )


@pytest.mark.parametrize("loss", ["squared", "gaussian"])
def test_targets_whose_sum_overflows(data, loss):
    X, _, _, _ = data
    _fit_predict_finite_or_valueerror(small(RGBMRegressor, loss=loss), X, np.full(len(X), 1e308))


def test_subnormal_weights_give_finite_predictions(data):
    X, y, yr, _ = data
    for cls, target in ((RGBMRegressor, yr), (RGBMClassifier, y)):
        _fit_predict_finite_or_valueerror(small(cls), X, target, sample_weight=np.full(len(y), 1e-320))


# ---------------------------------------------------------------------------
# Data: infinity in X, shapes, dtypes, empty data
# ---------------------------------------------------------------------------


def test_infinity_in_float32_and_eval_x(data):
    X, y, _, _ = data
    Xi = X.copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        small(RGBMClassifier).fit(Xi.astype(np.float32), y)
    with pytest.raises(ValueError, match="infinity"):
        small(RGBMClassifier).fit(X, y, eval_set=[(Xi, y)])
    with pytest.raises(ValueError, match=r'evaluation set "valid_1": X contains infinity at row 0, column 0'):
        small(RGBMClassifier).fit(X, y, eval_set=[(X, y), (Xi, y)])
    with pytest.raises(ValueError, match=r'evaluation set "late": X contains infinity'):
        small(RGBMClassifier).fit(X, y, eval_set=[(X, y), (Xi, y)], eval_names=["early", "late"])
    with np.errstate(over="ignore", invalid="ignore"), pytest.raises(ValueError, match="infinity"):
        small(RGBMClassifier).fit(X * 1e308 * 10, y)  # overflows to inf


def test_three_dimensional_x(data):
    X, y, _, _ = data
    with pytest.raises(ValueError, match="dim 3"):
        small(RGBMClassifier).fit(X[:, :, None], y)
    clf = small(RGBMClassifier).fit(X, y)
    for method in (clf.predict, clf.predict_proba, clf.decision_function):
        with pytest.raises(ValueError, match="dim 3"):
            method(X[:, :, None])
    with pytest.raises(ValueError, match="dim 3"):
        small(RGBMClassifier).fit(X, y, eval_set=[(X[:, :, None], y)])


@pytest.mark.parametrize("cls", [RGBMRegressor, RGBMClassifier])
def test_two_dimensional_y(data, cls):
    X, y, _, _ = data
    # 2-D y is several targets or labels (test_multi_output, test_multilabel);
    # more dimensions are refused, and so are 2-D class labels beyond 0/1.
    with pytest.raises(ValueError, match="dim 3"):
        small(cls).fit(X, y[:, None, None])
    if cls is RGBMClassifier:
        with pytest.raises(ValueError, match="must be 0 or 1"):
            small(cls).fit(X, np.c_[y, 2 * y])
    # A column vector is scikit-learn's accepted-with-a-warning case.
    with pytest.warns(DataConversionWarning):
        small(cls).fit(X, y[:, None])


def test_mismatched_lengths(data):
    X, y, yr, _ = data
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        small(RGBMClassifier).fit(X, y[:-3])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        small(RGBMClassifier).fit(X[:-1], y)
    with pytest.raises(ValueError, match=r"eval_set\[0\]: y must be 1-D with one value per row"):
        small(RGBMRegressor).fit(X, yr, eval_set=[(X, yr[:-1])])
    with pytest.raises(ValueError, match=r"eval_set\[0\]: y must be 1-D"):
        small(RGBMRegressor).fit(X, yr, eval_set=[(X, yr[:, None])])
    with pytest.raises(ValueError, match="eval_sample_weight must be a list of 1"):
        small(RGBMRegressor).fit(X, yr, eval_set=[(X, yr)], eval_sample_weight=[None, None])
    with pytest.raises(ValueError, match="eval_names must be a list of 1"):
        small(RGBMRegressor).fit(X, yr, eval_set=[(X, yr)], eval_names=["a", "b"])


@pytest.mark.parametrize(
    "make,fragment",
    [
        (lambda X: np.array([[1.0, "a", 2.0]] * len(X), dtype=object), "could not convert string"),
        (lambda X: np.full(X.shape, "abc"), "could not convert string"),
        (lambda X: X + 1j, "[Cc]omplex"),
        (lambda X: np.zeros(len(X), dtype=[("a", "f8"), ("b", "f8")]), "[Cc]annot cast|dtype"),
        (lambda X: [[1.0, 2.0], [3.0]], "inhomogeneous"),
    ],
    ids=["object_with_str", "str", "complex", "structured", "ragged"],
)
def test_non_numeric_x_at_fit_and_predict(data, make, fragment):
    X, y, _, _ = data
    bad = make(X)
    target = y if not isinstance(bad, list) else [0, 1]
    with pytest.raises(BAD, match=fragment):
        small(RGBMClassifier).fit(bad, target)
    if isinstance(bad, np.ndarray) and bad.ndim == 2 and bad.shape[1] == 3:
        clf = small(RGBMClassifier).fit(X, y)
        with pytest.raises(BAD, match=fragment):
            clf.predict(bad)


def test_sparse_x_gives_the_dense_model(data):
    sp = pytest.importorskip("scipy.sparse")
    X, y, _, _ = data
    sparse = small(RGBMClassifier).set_params(random_state=0).fit(sp.csr_matrix(X), y)
    dense = small(RGBMClassifier).set_params(random_state=0).fit(X, y)
    assert sparse.get_booster().to_json() == dense.get_booster().to_json()


@pytest.mark.parametrize(
    "make",
    [lambda X: X > 0, lambda X: (10 * X).astype(np.int64), lambda X: X.astype(object), lambda X: X.astype(np.float16)],
    ids=["bool", "int", "object_numbers", "float16"],
)
def test_numeric_like_x_works(data, make):
    X, y, _, _ = data
    clf = small(RGBMClassifier).fit(make(X), y)
    p = clf.predict_proba(make(X))
    assert p.shape == (len(y), 2) and np.all(np.isfinite(p))


@pytest.mark.parametrize("cls", [RGBMRegressor, RGBMClassifier])
def test_empty_data(data, cls):
    X, y, _, _ = data
    with pytest.raises(ValueError, match="0 sample"):
        small(cls).fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="0 feature"):
        small(cls).fit(X[:, :0], y)
    est = small(cls).fit(X, y)
    with pytest.raises(ValueError, match="0 sample"):
        est.predict(X[:0])
    with pytest.raises(ValueError, match="0 feature"):
        est.predict(X[:, :0])
    with pytest.raises(ValueError, match="0 sample"):
        small(cls).fit(X, y, eval_set=[(X[:0], y[:0])])


def test_one_class_only_strings(data):
    X, _, _, _ = data
    with pytest.raises(ValueError, match="at least 2 classes.*only one class"):
        small(RGBMClassifier).fit(X, ["spam"] * len(X))


def test_string_regression_targets(data):
    X, _, _, _ = data
    with pytest.raises(BAD) as e:
        small(RGBMRegressor).fit(X, np.array(["a", "b"] * 30))
    assert re.search(r"\by\b|target", str(e.value)) and re.search("numeric|string|float", str(e.value)), str(e.value)


def test_none_among_string_labels(data):
    X, _, _, _ = data
    with pytest.raises(BAD, match=r"[Ll]abel|missing|\by\b"):
        small(RGBMClassifier).fit(X, np.array(["a", None] * 30, dtype=object))


@pytest.mark.parametrize("dtype", [object, "S1"])
def test_bytes_labels_get_scikit_learns_reason(data, dtype):
    X, _, _, _ = data
    with pytest.raises(TypeError, match="labels represented as bytes"):
        small(RGBMClassifier).fit(X, np.array([b"a", b"b"] * 30, dtype=dtype))


@pytest.mark.parametrize(
    "bad_fit",
    [
        lambda est, X, y: est.set_params(n_estimators=-1).fit(X, y),
        lambda est, X, y: est.fit(np.where(X > 1, np.inf, X), y),
        lambda est, X, y: est.fit(X, y, sample_weight=np.zeros(len(y))),
        lambda est, X, y: est.fit(X, np.zeros(len(y))),
    ],
    ids=["params", "infinity", "zero-weights", "one-class"],
)
def test_a_failed_refit_leaves_an_unfitted_estimator(data, bad_fit):
    from sklearn.exceptions import NotFittedError

    X, y, _, _ = data
    est = small(RGBMClassifier).fit(X, y)
    with pytest.raises(BAD):
        bad_fit(est, X, y)
    learned = [a for a in vars(est) if a.endswith("_") and not a.startswith("__")]
    assert learned == [] and not hasattr(est, "_booster"), learned
    with pytest.raises(NotFittedError):
        est.predict(X)


@pytest.mark.parametrize("labels", [np.full(60, 5), np.array(["a"] * 60), np.where(np.arange(60) < 1, np.nan, 0.0)])
def test_unseen_labels_in_eval_set(data, labels):
    X, y, _, _ = data
    with pytest.raises(ValueError, match=r"eval_set\[0\] has labels not seen in training"):
        small(RGBMClassifier).fit(X, y, eval_set=[(X, labels)])


def test_unseen_label_in_multiclass_eval_set(data):
    X, _, _, y3 = data
    ye = y3.copy()
    ye[7] = 3
    with pytest.raises(ValueError, match=r"eval_set\[0\] has labels not seen in training: 3"):
        small(RGBMClassifier).fit(X, y3, eval_set=[(X, ye)])


# ---------------------------------------------------------------------------
# Feature count and feature names at predict time
# ---------------------------------------------------------------------------


def test_feature_count_mismatch_everywhere(data):
    X, y, yr, _ = data
    clf = small(RGBMClassifier).fit(X, y)
    reg = small(RGBMRegressor, n_estimators=6, langevin=True).fit(X, yr)
    wide = np.c_[X, X]
    calls = [
        clf.predict,
        clf.predict_proba,
        clf.decision_function,
        lambda Z: list(clf.staged_predict_proba(Z)),
        lambda Z: list(reg.staged_predict(Z)),
        reg.predict,
        lambda Z: reg.predict_uncertainty(Z, n_members=2),
    ]
    for call in calls:
        for Z in (X[:, :2], wide):
            with pytest.raises(ValueError, match=r"X has \d+ features, but RGBM\w+ is expecting 3 features"):
                call(Z)
    with pytest.raises(ValueError, match="X has 2 features"):
        small(RGBMClassifier).fit(X, y, eval_set=[(X[:, :2], y)])


def test_feature_name_mismatch():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    y = (df["a"] > 0).astype(int)
    clf = small(RGBMClassifier).fit(df, y)
    with pytest.raises(ValueError, match="Feature names unseen at fit time:\n- z"):
        clf.predict(df.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match="same order"):
        clf.predict(df[["b", "a", "c"]])
    with pytest.raises(ValueError, match="seen at fit time, yet now missing:\n- c"):
        clf.predict(df[["a", "b"]])
    with pytest.raises(ValueError, match="unseen at fit time:\n- d"):
        clf.predict(df.assign(d=1.0))
    with pytest.raises(ValueError, match="feature names should match"):
        small(RGBMClassifier).fit(df, y, eval_set=[(df.rename(columns={"a": "z"}), y)])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        clf.predict(df.to_numpy())
    mixed = df.copy()
    mixed.columns = ["a", 1, "c"]
    with pytest.raises(TypeError, match="Feature names are only supported if all input features have string names"):
        small(RGBMClassifier).fit(mixed, y)
    obj = df.assign(s=["x"] * 60)
    with pytest.raises(TypeError, match="non-numeric column 's'"):
        small(RGBMClassifier).fit(obj, y)


# ---------------------------------------------------------------------------
# Parameters out of range (cases of test_bad_input.py are not repeated)
# ---------------------------------------------------------------------------

CLASSIFIER_PARAMS = [
    ({"n_estimators": -1}, "n_estimators"),
    ({"n_estimators": float("nan")}, "n_estimators"),
    ({"n_estimators": "3"}, "n_estimators"),
    ({"learning_rate": float("nan")}, "learning_rate"),
    ({"learning_rate": float("inf")}, "learning_rate"),
    ({"learning_rate": "0.1"}, "learning_rate"),
    ({"max_depth": 65}, "max_depth"),
    ({"max_depth": 65}, "max_depth"),  # -1 and 0: LightGBM's "no limit"
    ({"max_depth": 1.5}, "max_depth"),
    ({"max_leaves": 0}, "max_leaves"),
    ({"max_leaves": 2**20 + 1}, "max_leaves"),
    ({"max_bins": 0}, "max_bins"),
    ({"max_bins": 65536}, "max_bins"),
    ({"min_samples_leaf": -1}, "min_samples_leaf"),
    ({"min_samples_leaf": 1.5}, "min_samples_leaf"),
    ({"min_child_weight": float("nan")}, "min_child_weight"),
    ({"min_child_weight": float("inf")}, "min_child_weight"),
    ({"reg_lambda": float("nan")}, "reg_lambda"),
    ({"reg_lambda": float("inf")}, "reg_lambda"),
    ({"min_split_gain": float("nan")}, "min_split_gain"),
    ({"min_split_gain": float("inf")}, "min_split_gain"),
    # selection_size against its range, the number of candidate splits, the number of groups
    ({"selection": "random", "selection_size": 0}, "selection_size"),
    ({"selection": "random", "selection_size": -1}, "selection_size"),
    ({"selection": "random", "selection_size": 0.0}, "selection_size"),
    ({"selection": "random", "selection_size": 1.5}, "selection_size"),
    ({"selection": "random", "selection_size": float("nan")}, "selection_size"),
    ({"selection": "random", "selection_size": 10**6}, "selection_size.*more than the .* candidate splits"),
    ({"selection": "random"}, "selection_size.*needs selection_size"),
    ({"selection": "groups"}, "selection_size.*needs selection_size"),
    ({"selection": "groups", "selection_size": 4}, "selection_size.*4 is more than the 3 groups"),
    (
        {"selection": "groups", "selection_size": 3, "groups": [[0], [1, 2]]},
        "selection_size.*3 is more than the 2 groups",
    ),
    ({"selection": "full", "selection_size": 2}, "selection_size.*no effect"),
    ({"selection": "group", "selection_size": 2}, "selection_size.*no effect"),
    # groups that do not partition the features
    ({"selection": "group", "groups": [[0, 1], [1, 2]]}, "groups.*feature 1 is in more than one group"),
    ({"selection": "groups", "selection_size": 1, "groups": [[0, 1], [1, 2]]}, "groups.*more than one group"),
    ({"selection": "group", "groups": [[0, 1]]}, "groups.*feature 2 is in no group"),
    ({"selection": "group", "groups": [[0, 1], [2, 3]]}, "groups.*names feature 3, but X has 3 features"),
    ({"selection": "group", "groups": [[0, 1, 2], []]}, "groups.*group 1 is empty"),
    ({"selection": "group", "groups": []}, "groups.*in no group"),
    ({"selection": "group", "groups": [0, 1, 2]}, "groups must be a list of lists"),
    ({"selection": "group", "groups": [["a"], [0, 1, 2]]}, "groups must be a list of lists"),
    ({"selection": "group", "groups": "012"}, "groups"),
    ({"groups": [[0, 1, 2]]}, "groups.*selection='group' or 'groups' only"),
    ({"selection_scope": "node"}, "selection_scope"),
    ({"temperature": 0}, "temperature"),
    ({"temperature": -1.0}, "temperature"),
    ({"temperature": float("inf")}, "temperature"),
    ({"temperature": float("nan")}, "temperature"),
    ({"shrink_rate": 10.0, "learning_rate": 0.1}, r"shrink_rate \* learning_rate must be in \[0, 1\)"),
    ({"shrink_rate": 25.0, "learning_rate": 0.1}, r"shrink_rate \* learning_rate"),
    ({"shrink_rate": 1.0, "learning_rate": 1.0, "langevin": True}, r"shrink_rate \* learning_rate"),
    ({"shrink_rate": -0.1}, "shrink_rate"),
    ({"shrink_rate": float("inf")}, "shrink_rate"),
    ({"shrink_rate": float("nan")}, "shrink_rate"),
    ({"shrink_rate": 0.5, "step": "line_search"}, "shrink_rate.*step='shrinkage' only"),
    ({"langevin": True, "step": "line_search"}, "step"),
    ({"clamp": 0}, "clamp"),
    ({"clamp": -0.1}, "clamp"),
    ({"clamp": float("nan")}, "clamp"),
    ({"clamp": 0.1, "loss": "sla01", "gain": "gradient", "leaf": "gradient"}, "clamp"),
    ({"booster": "rgb", "rgb_nodes": []}, "rgb_nodes.*non-empty"),
    ({"booster": "rgb", "rgb_nodes": [0]}, "rgb_nodes"),
    ({"booster": "rgb", "rgb_nodes": [4, 0]}, "rgb_nodes"),
    ({"booster": "rgb", "rgb_nodes": [2**21]}, "rgb_nodes"),
    ({"booster": "rgb", "rgb_nodes": 3}, "rgb_nodes"),
    ({"booster": "rgb", "rgb_lambdas": []}, "rgb_lambdas.*non-empty"),
    ({"booster": "rgb", "rgb_lambdas": [0.0]}, "rgb_lambdas"),
    ({"booster": "rgb", "rgb_lambdas": [1.0, -1.0]}, "rgb_lambdas"),
    ({"booster": "rgb", "rgb_lambdas": 0.5}, "rgb_lambdas"),
    ({"rgb_nodes": [2]}, "rgb_nodes.*booster='rgb' only"),
    ({"rgb_lambdas": [1.0]}, "booster='rgb' only"),
    ({"booster": "rgb", "rgb_candidates": 0}, "rgb_candidates"),
    ({"booster": "rgb", "rgb_beta": -1.0}, "rgb_beta"),
    ({"booster": "rgb", "rgb_beta": float("nan")}, "rgb_beta"),
    ({"booster": "rgb", "langevin": True}, "langevin"),
    ({"booster": "rgb", "max_leaves": 8}, "max_leaves"),
    ({"booster": "rgb", "selection": "group"}, "selection"),
    ({"booster": "rgb", "loss": "exponential"}, "loss"),
    ({"sla_scale": 0}, "sla_scale"),
    ({"sla_scale": -1.0}, "sla_scale"),
    ({"sla_scale": float("inf")}, "sla_scale"),
    ({"sla_scale": float("nan")}, "sla_scale"),
    ({"loss": "sla01"}, "loss='sla01'.*gain='gradient'"),
    ({"logistic_reg": float("inf")}, "logistic_reg"),
    ({"subsample": float("nan")}, "subsample"),
    ({"subsample": -0.1}, "subsample"),
    ({"validation_fraction": 0}, "validation_fraction"),
    ({"validation_fraction": 1}, "validation_fraction"),
    ({"validation_fraction": -0.1}, "validation_fraction"),
    ({"validation_fraction": float("nan")}, "validation_fraction"),
    ({"validation_fraction": "0.5"}, "validation_fraction"),
    ({"validation_fraction": 1e-5}, "validation_fraction=1e-05 of 60 rows leaves 0 validation"),
    ({"validation_fraction": 0.99}, "validation_fraction=0.99 of 60 rows leaves 59 validation and 1 training"),
    ({"early_stopping_rounds": 0}, "early_stopping_rounds"),
    ({"early_stopping_rounds": -1}, "early_stopping_rounds"),
    ({"early_stopping_rounds": 1.5}, "early_stopping_rounds"),
    ({"early_stopping_rounds": 5}, "early_stopping_rounds needs evaluation data"),
    ({"step": "constant"}, "step='constant'.*leaf='gradient'"),
    ({"step": "constant", "leaf": "gradient", "loss": "exponential"}, "step='constant' needs a smooth loss"),
    ({"n_jobs": 2.5}, "n_jobs"),
    ({"random_state": 2**64}, "random_state"),
    ({"random_state": 1.5}, "random_state"),
    ({"verbose": 1.5}, "verbose"),  # negative: quiet, as LightGBM's -1
    # unknown option strings
    ({"loss": "bogus"}, "'loss' parameter"),
    ({"loss": "softmax"}, "'loss' parameter"),
    ({"loss": "custom"}, "'loss' parameter"),
    ({"loss": None}, "'loss' parameter"),
    ({"gain": "bogus"}, "'gain' parameter"),
    ({"leaf": "bogus"}, "'leaf' parameter"),
    ({"step": "bogus"}, "'step' parameter"),
    ({"selection": "bogus"}, "'selection' parameter"),
    ({"selection_scope": "bogus"}, "'selection_scope' parameter"),
    ({"booster": "bogus"}, "'booster' parameter"),
    ({"init": "bogus"}, "'init' parameter"),
    ({"importance_type": "bogus"}, "'importance_type' parameter"),
    ({"eval_metric": "bogus"}, "eval_metric 'bogus' is not available"),
    ({"eval_metric": "l2"}, "eval_metric 'l2' is not available for this loss"),
    ({"eval_metric": []}, "eval_metric must name at least one metric"),
    ({"eval_metric": [1]}, "eval_metric 1 is not available"),
    ({"eval_metric": ["logloss", "logloss"]}, "eval_metric names a metric twice"),
    ({"eval_metric": 3}, "eval_metric"),
]


@pytest.mark.parametrize("params,fragment", CLASSIFIER_PARAMS, ids=lambda v: repr(v) if isinstance(v, dict) else "")
def test_invalid_classifier_parameter(data, params, fragment):
    X, y, _, _ = data
    with pytest.raises(ValueError, match=fragment):
        small(RGBMClassifier, **params).fit(X, y)


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"huber_delta": float("inf"), "loss": "huber"}, "huber_delta"),
        ({"huber_delta": float("nan"), "loss": "huber"}, "huber_delta"),
        ({"loss": "bogus"}, "'loss' parameter"),
        ({"loss": "custom"}, "'loss' parameter"),
        ({"loss": lambda y, f: (f - y, np.ones_like(f)), "eval_metric": "huber"}, "eval_metric 'huber'"),
        ({"loss": lambda y, f: (f - y, np.ones_like(f)), "step": "line_search"}, "line_search"),
        ({"eval_metric": ["l2", 3]}, "eval_metric 3 is not available"),
        ({"subsample_for": "leaves"}, "'subsample_for' parameter"),
        ({"langevin_split_noise": False}, "langevin=True only"),
        ({"booster": "rgb", "max_depth": None, "subsample_for": "split"}, "subsample_for"),
        ({"loss": "gaussian", "booster": "rgb"}, "loss"),
        ({"loss": "gaussian", "step": "constant", "leaf": "gradient"}, "step='constant' needs a smooth loss"),
        ({"eval_metric": "logloss"}, "eval_metric 'logloss' is not available"),
        ({"eval_metric": "gaussian_nll"}, "eval_metric 'gaussian_nll' is not available"),
        ({"shrink_rate": 10.0, "learning_rate": 0.1}, "shrink_rate"),
        ({"temperature": 0.0, "langevin": True}, "temperature"),
        ({"max_depth": None}, "max_depth=None needs max_leaves"),
        ({"monotone_constraints": [1, 0]}, "has 2 entries but X has 3 features"),
        ({"monotone_constraints": [1, 0, 2]}, "directions must be -1, 0 or 1, got 2"),
        ({"monotone_constraints": [True, 0, 0]}, "directions must be -1, 0 or 1, got True"),
        ({"monotone_constraints": [0.5, 0, 0]}, "directions must be -1, 0 or 1, got 0.5"),
        ({"monotone_constraints": {"x": 1}}, "'x' is not a feature name of X"),
        ({"monotone_constraints": {7: 1}}, "index 7 is out of range for 3 features"),
        ({"monotone_constraints": "up"}, "'monotone_constraints' parameter"),
        ({"interaction_constraints": [[0, 5]]}, "index 5 is out of range for 3 features"),
        ({"interaction_constraints": [[0], []]}, "set 1 is empty"),
        ({"interaction_constraints": [[0, 0]]}, "set 0 lists a feature more than once"),
        ({"interaction_constraints": [0, 1]}, "expected a list of lists"),
        ({"interaction_constraints": []}, "at least one set"),
        ({"interaction_constraints": [["a"]]}, "'a' is not a feature name of X"),
        ({"interaction_constraints": [[None]]}, "expected a feature index or name"),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else "",
)
def test_invalid_regressor_parameter(data, params, fragment):
    X, _, yr, _ = data
    with pytest.raises(ValueError, match=fragment):
        small(RGBMRegressor, **params).fit(X, yr)


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"loss": "exponential"}, "loss='exponential' is binary only"),
        ({"loss": "sla01", "gain": "gradient", "leaf": "gradient"}, "loss='sla01' is binary only"),
        ({"clamp": 0.1}, "clamp applies to the binary logistic loss only"),
        ({"logistic_reg": 0.1}, "logistic_reg applies to the binary logistic loss only"),
        ({"eval_metric": "logloss"}, "eval_metric 'logloss' is not available"),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else "",
)
def test_invalid_multiclass_parameter(data, params, fragment):
    X, _, _, y3 = data
    with pytest.raises(ValueError, match=fragment):
        small(RGBMClassifier, **params).fit(X, y3)


@pytest.mark.filterwarnings("ignore:The number of unique classes")
def test_too_many_classes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10_001, 2))
    with pytest.raises(ValueError, match="n_classes.*10000"):
        RGBMClassifier(n_estimators=1).fit(X, np.arange(10_001))


# Parameters whose error message does not name them, or that are silently coerced.
CRYPTIC_PARAMS = [
    pytest.param({"n_estimators": 2**70}, "n_estimators"),
    pytest.param({"min_samples_leaf": 2**70}, "min_samples_leaf"),
    pytest.param({"selection": "group", "groups": [[0, 1], [-1, 2]]}, "groups"),
    pytest.param({"selection": "group", "groups": [[0, 1], [2**70]]}, "groups"),
    pytest.param({"selection": "group", "groups": [[0.5, 1], [2]]}, "groups"),
    pytest.param({"booster": "rgb", "rgb_nodes": [-1]}, "rgb_nodes"),
    pytest.param({"booster": "rgb", "rgb_nodes": [1.5]}, "rgb_nodes"),
    pytest.param({"booster": "rgb", "rgb_nodes": ["a"]}, "rgb_nodes"),
    pytest.param({"booster": "rgb", "rgb_lambdas": [float("nan")]}, "rgb_lambdas"),
    pytest.param({"booster": "rgb", "rgb_lambdas": [float("inf")]}, "rgb_lambdas"),
    pytest.param({"booster": "rgb", "rgb_lambdas": ["x"]}, "rgb_lambdas"),
]


@pytest.mark.parametrize("params,fragment", CRYPTIC_PARAMS, ids=lambda v: repr(v) if isinstance(v, dict) else "")
def test_parameter_errors_name_the_parameter(data, params, fragment):
    X, y, _, _ = data
    with pytest.raises(ValueError, match=fragment):
        small(RGBMClassifier, **params).fit(X, y)


def test_absurd_n_jobs_does_not_hang():
    script = textwrap.dedent(
        """
        import numpy as np
        from rgbm_rs import RGBMRegressor
        X = np.random.default_rng(0).normal(size=(60, 3))
        try:
            RGBMRegressor(n_estimators=3, min_samples_leaf=5, n_jobs=10_000).fit(X, X[:, 0])
        except ValueError:
            pass
        print("done")
        """
    )
    try:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail("fit with n_jobs=10000 did not finish within 5 s")
    assert out.stdout.strip() == "done", out.stderr


# ---------------------------------------------------------------------------
# predict_uncertainty: n_members
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sglb(data):
    X, y, yr, _ = data
    reg = small(RGBMRegressor, n_estimators=10, langevin=True, random_state=0).fit(X, yr)
    clf = small(RGBMClassifier, n_estimators=10, langevin=True, random_state=0).fit(X, y)
    return reg, clf


@pytest.mark.parametrize(
    "n_members,exc,fragment",
    [
        (0, ValueError, "n_members.*>= 2"),
        (1, ValueError, "n_members.*>= 2"),
        (6, ValueError, "n_members.*6 members need at least 12 rounds"),
        (10**6, ValueError, "n_members.*need at least"),
        (1.5, TypeError, "n_members must be an int"),
        ("3", TypeError, "n_members must be an int"),
        (None, TypeError, "n_members must be an int"),
        (True, TypeError, "n_members must be an int"),
        pytest.param(-1, BAD, "n_members"),
        pytest.param(2**64, BAD, "n_members"),
        pytest.param(2**63, BAD, "n_members"),
    ],
)
@pytest.mark.parametrize("which", [0, 1], ids=["regressor", "classifier"])
def test_bad_n_members(sglb, data, which, n_members, exc, fragment):
    X = data[0]
    with pytest.raises(exc, match=fragment):
        sglb[which].predict_uncertainty(X, n_members=n_members)


def test_numpy_int_n_members(sglb, data):
    out = sglb[0].predict_uncertainty(data[0], n_members=np.int64(3))
    assert np.all(np.isfinite(out["mean"]))


# ---------------------------------------------------------------------------
# predict's alternative outputs: pred_leaf, pred_contrib, return_std
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,exc,fragment",
    [
        (dict(pred_leaf=True, return_std=True), ValueError, "return_std and pred_leaf cannot be combined"),
        (dict(pred_leaf=True, pred_contrib=True), ValueError, "pred_leaf and pred_contrib cannot be combined"),
        (dict(return_std=True, pred_contrib=True), ValueError, "return_std and pred_contrib cannot be combined"),
        (
            dict(return_std=True, pred_leaf=True, pred_contrib=True),
            ValueError,
            "return_std and pred_leaf and pred_contrib cannot be combined",
        ),
        (dict(pred_contrib="True"), TypeError, "pred_contrib must be a bool, got str"),
        (dict(pred_contrib=0), TypeError, "pred_contrib must be a bool, got int"),
        (dict(pred_leaf=1), TypeError, "pred_leaf must be a bool, got int"),
        (dict(pred_leaf="yes"), TypeError, "pred_leaf must be a bool, got str"),
        (dict(pred_leaf=None), TypeError, "pred_leaf must be a bool, got NoneType"),
        (dict(return_std=np.array([True])), TypeError, "return_std must be a bool, got ndarray"),
    ],
)
def test_bad_regressor_predict_options(sglb, data, kwargs, exc, fragment):
    with pytest.raises(exc, match=fragment):
        sglb[0].predict(data[0], **kwargs)


@pytest.mark.parametrize(
    "kwargs,exc,fragment",
    [
        (dict(pred_leaf=1.0), TypeError, "pred_leaf must be a bool, got float"),
        (dict(pred_leaf=[True]), TypeError, "pred_leaf must be a bool, got list"),
        (dict(pred_leaf=True, pred_contrib=True), ValueError, "pred_leaf and pred_contrib cannot be combined"),
        (dict(pred_contrib=np.float64(1.0)), TypeError, "pred_contrib must be a bool, got float64"),
    ],
)
def test_bad_classifier_predict_options(sglb, data, kwargs, exc, fragment):
    with pytest.raises(exc, match=fragment):
        sglb[1].predict(data[0], **kwargs)


def test_apply_checks_x_as_predict_does(sglb, data):
    X = data[0]
    with pytest.raises(ValueError, match="X has 2 features"):
        sglb[0].apply(X[:, :2])
    bad = X.copy()
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        sglb[1].apply(bad)
    np.testing.assert_array_equal(sglb[1].predict(X, pred_leaf=np.bool_(True)), sglb[1].apply(X))
    with pytest.raises(ValueError, match="X has 4 features"):
        sglb[0].predict(np.hstack([X, X[:, :1]]), pred_contrib=True)
    with pytest.raises(ValueError, match="NaN|infinity"):
        sglb[0].predict(bad, pred_contrib=True)


def test_to_shap_needs_a_fitted_estimator():
    from sklearn.exceptions import NotFittedError

    import rgbm_rs

    with pytest.raises(NotFittedError):
        rgbm_rs.to_shap(RGBMRegressor())
    with pytest.raises((TypeError, NotFittedError)):
        rgbm_rs.to_shap("model.json")


# ---------------------------------------------------------------------------
# load_model on broken or hostile files
# ---------------------------------------------------------------------------


@pytest.fixture
def mdir():
    # A neutral folder name, so fragments cannot match the path in a message.
    d = tempfile.mkdtemp(prefix="m-")
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def docs(data):
    X, y, yr, y3 = data
    kw = dict(n_estimators=3, max_depth=2, min_samples_leaf=5, random_state=0)
    return {
        "reg": RGBMRegressor(**kw).fit(X, yr)._to_document(),
        "clf": RGBMClassifier(**kw).fit(X, y)._to_document(),
        "mc": RGBMClassifier(**kw).fit(X, y3)._to_document(),
        "gauss": RGBMRegressor(loss="gaussian", **kw).fit(X, yr)._to_document(),
    }


def _write(mdir, content):
    path = mdir / "model.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def assert_load_fails(mdir, content, exc, fragment):
    path = _write(mdir, content)
    with pytest.raises(exc) as info:
        load_model(path)
    message = str(info.value).replace(str(path), "<file>")
    assert re.search(fragment, message), f"message {message!r} does not match {fragment!r}"


def _edit(docs, kind, fn):
    doc = copy.deepcopy(docs[kind])
    fn(doc)
    return doc


SENTINEL = 123456.75  # exactly representable, unique in the text


def _with_token(docs, kind, where, token):
    """The document's JSON text with one number replaced by a raw token (NaN, 1e999, ...)."""
    doc = copy.deepcopy(docs[kind])
    where(doc)
    text = json.dumps(doc)
    assert text.count(repr(SENTINEL)) == 1
    return text.replace(repr(SENTINEL), token)


def _set_tree(key, i=0, value=SENTINEL):
    def fn(doc):
        doc["model"]["trees"][0][key][i] = value

    return fn


def test_the_base_documents_load(docs, mdir, data):
    X = data[0]
    for kind in docs:
        est = load_model(_write(mdir, docs[kind]))
        out = est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)
        assert np.all(np.isfinite(out))


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_truncated_file(docs, mdir, fraction):
    text = json.dumps(docs["mc"])
    cut = text[: int(len(text) * fraction)] if fraction else ""
    assert_load_fails(mdir, cut, ValueError, "not a valid rgbm_rs model file")


@pytest.mark.parametrize(
    "content,fragment",
    [
        ("null", "format marker is missing"),
        ("[]", "format marker is missing"),
        ('"rgbm_rs"', "format marker is missing"),
        ("{}", "format marker is missing"),
    ],
)
def test_not_a_model_document(mdir, content, fragment):
    assert_load_fails(mdir, content, ValueError, fragment)


def test_non_utf8_bytes(mdir):
    assert_load_fails(mdir, b"\xff\xfe\x00garbage", ValueError, "decode|utf-8|not a valid")


@pytest.mark.parametrize(
    "edit,fragment",
    [
        (lambda d: d.update(format="xgboost"), "format marker is missing"),
        (lambda d: d.pop("format"), "format marker is missing"),
        (lambda d: d.update(format=None), "format marker is missing"),
        (lambda d: d.update(format="RGBM_RS"), "format marker is missing"),
        (lambda d: d.update(estimator="Foo"), "unknown estimator 'Foo'"),
        (lambda d: d.pop("params"), "'params' must be an object"),
        (lambda d: d.pop("model"), "'model' must be an object"),
        (lambda d: d.update(model=None), "'model' must be an object"),
        (lambda d: d["model"].pop("params"), "missing field `params`"),
        (lambda d: d["model"].update(format_version=0), "format version 0 is not supported"),
        (lambda d: d["params"].update(bogus=1), "unexpected keyword argument 'bogus'"),
        (lambda d: d["model"]["params"].update(n_jobs=0), "n_jobs"),
        (lambda d: d["model"]["params"].update(learning_rate=-1.0), "learning_rate"),
    ],
    ids=[
        "wrong_marker",
        "no_marker",
        "null_marker",
        "marker_case",
        "unknown_estimator",
        "no_params",
        "no_model",
        "null_model",
        "no_model_params",
        "format_version_0",
        "unknown_param",
        "model_n_jobs_0",
        "model_lr_negative",
    ],
)
def test_broken_document_structure(docs, mdir, edit, fragment):
    assert_load_fails(mdir, _edit(docs, "reg", edit), ValueError, fragment)


@pytest.mark.parametrize(
    "edit,fragment",
    [
        (_set_tree("left", 0, 0), "node 0 has an invalid child 0"),  # self loop
        (_set_tree("left", 1, 0), "node 1 has an invalid child 0"),  # child -> its parent (ancestor)
        (_set_tree("right", 2, 1), "node 2 has an invalid child 1"),  # child -> earlier sibling
        (_set_tree("left", 0, 99), "invalid child 99"),
        (_set_tree("left", 0, 2**31 - 1), "invalid child 2147483647"),
        (_set_tree("left", 1, -99), "invalid leaf 98"),
        (_set_tree("left", 1, -(2**31)), "invalid leaf"),
        (_set_tree("right", 1, -1), "invalid leaf 0"),  # leaf reached twice
        (_set_tree("feature", 0, 3), "node 0 splits on feature 3 of 3"),
        (_set_tree("feature", 1, 2**32 - 1), "splits on feature 4294967295 of 3"),
        (lambda d: d["model"]["trees"][0]["threshold"].pop(), "tree array `threshold` has length 2, expected 3"),
        (lambda d: d["model"]["trees"][0]["leaf_value"].pop(), "needs 4 leaves, has 3"),
        (lambda d: d["model"]["trees"][0].pop("gain"), "missing field `gain`"),
        (
            lambda d: d["model"]["trees"][0].update(
                feature=[], threshold=[], default_left=[], left=[], right=[], gain=[], count=[], leaf_value=[]
            ),
            "0 splits needs 1 leaves",
        ),
        (lambda d: d["model"].update(trees=None), "invalid type: null, expected a sequence"),
        (lambda d: (d["model"].update(n_features=0), d.update(n_features_in=0)), "n_features = 0 is out of range"),
        (
            lambda d: (d["model"].update(n_features=10**9), d.update(n_features_in=10**9)),
            "n_features = 1000000000 is out of range",
        ),
        (lambda d: d.update(n_features_in=5), r"n_features_in \(5\) disagrees with the model \(3\)"),
        (lambda d: d.update(n_features_in=-3), r"n_features_in \(-3\) disagrees"),
        (lambda d: d["model"].update(n_outputs=2), "n_outputs = 2 but the loss has 1 outputs"),
        (lambda d: d["model"].update(n_outputs=0), "n_outputs = 0"),
        (lambda d: d["model"].update(base_score=[0.0, 0.0]), "base_score needs 1 finite numbers"),
        (lambda d: d.update(best_iteration=3), "best_iteration 3 is not a round"),
        (lambda d: d.update(best_iteration=-1), "best_iteration -1 is not a round"),
        (lambda d: d.update(feature_names_in=["a"]), "1 feature names for 3 features"),
        (lambda d: d.update(categories=[1, 2, 3]), "categories must be a list of 3"),
        (_set_tree("leaf_count", 0, -1.0), "leaf 0 has leaf_count -1"),
        (lambda d: d["model"]["trees"][0]["leaf_count"].pop(), "tree array `leaf_count` has length 3, expected 4"),
        (lambda d: d["model"]["trees"][0]["leaf_count"].__setitem__(0, 1e308), "node .* has count .* children cover"),
        (lambda d: d["model"]["trees"][0]["leaf_count"].__setitem__(1, "3"), "leaf_count"),
    ],
    ids=[
        "self_loop",
        "child_is_ancestor",
        "child_is_sibling",
        "child_out_of_range",
        "child_i32_max",
        "leaf_out_of_range",
        "leaf_i32_min",
        "leaf_twice",
        "feature_eq_n",
        "feature_u32_max",
        "array_lengths",
        "leaf_count",
        "missing_gain",
        "empty_tree",
        "null_trees",
        "n_features_0",
        "n_features_1e9",
        "n_features_in_disagrees",
        "n_features_in_negative",
        "n_outputs_2",
        "n_outputs_0",
        "base_score_len",
        "best_iteration_high",
        "best_iteration_negative",
        "feature_names_len",
        "categories",
        "leaf_count_negative",
        "leaf_count_short",
        "leaf_count_sum",
        "leaf_count_string",
    ],
)
def test_broken_regressor_model(docs, mdir, edit, fragment):
    assert_load_fails(mdir, _edit(docs, "reg", edit), ValueError, fragment)


@pytest.mark.parametrize(
    "kind,edit,fragment",
    [
        ("mc", lambda d: d.update(classes=[0, 1]), "needs 3 distinct classes"),
        ("mc", lambda d: d.update(classes=[0, 1, 2, 3]), "needs 3 distinct classes"),
        ("mc", lambda d: d.update(classes=[0, 1, 1]), "needs 3 distinct classes"),
        ("mc", lambda d: d.pop("classes"), "needs 3 distinct classes"),
        ("mc", lambda d: d.update(classes="abc"), "needs 3 distinct classes"),
        ("mc", lambda d: d["model"]["params"].update(n_classes=4), "n_outputs = 3 but the loss has 4 outputs"),
        (
            "mc",
            lambda d: (d["model"]["params"].update(n_classes=4), d["model"].update(n_outputs=4)),
            "base_score needs 4 finite numbers",
        ),
        ("mc", lambda d: d["model"].update(n_outputs=2), "n_outputs = 2 but the loss has 3 outputs"),
        ("mc", lambda d: d["model"]["trees"].pop(), "8 trees are not whole rounds of 3 outputs"),
        ("mc", lambda d: d["model"]["params"].update(n_classes=None), "n_classes"),
        ("clf", lambda d: d.update(classes=[0, 1, 2]), "needs 2 distinct classes"),
        ("clf", lambda d: d["model"].update(n_outputs=2), "n_outputs = 2 but the loss has 1 outputs"),
        ("gauss", lambda d: d["model"].update(n_outputs=1), "n_outputs = 1 but the loss has 2 outputs"),
        ("reg", lambda d: d["model"]["params"].update(loss="gaussian"), "n_outputs = 1 but the loss has 2 outputs"),
    ],
)
def test_broken_classes_and_outputs(docs, mdir, kind, edit, fragment):
    assert_load_fails(mdir, _edit(docs, kind, edit), ValueError, fragment)


NONFINITE_FRAGMENT = r"non-finite|NaN|[Ii]nfinit|\binf\b|finite"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
@pytest.mark.parametrize(
    "where",
    [
        pytest.param(_set_tree("threshold", 0), id="threshold"),
        pytest.param(_set_tree("leaf_value", 1), id="leaf_value"),
        pytest.param(lambda d: d["model"].update(base_score=[SENTINEL]), id="base_score"),
    ],
)
def test_non_finite_numbers_in_model(docs, mdir, where, token):
    assert_load_fails(mdir, _with_token(docs, "reg", where, token), ValueError, NONFINITE_FRAGMENT)


def test_non_finite_numbers_are_refused(docs, mdir):
    # Whatever the message, a non-finite number never loads.
    for token in ("NaN", "1e999", "-1e999"):
        for where in (
            _set_tree("threshold", 0),
            _set_tree("leaf_value", 1),
            _set_tree("gain", 0),
            _set_tree("count", 0),
        ):
            path = _write(mdir, _with_token(docs, "reg", where, token))
            with pytest.raises(ValueError):
                load_model(path)


@pytest.mark.parametrize(
    "edit,fragment",
    [
        pytest.param(_set_tree("feature", 0, -1), "feature"),
        pytest.param(lambda d: d["model"].update(n_features=-1), "n_features"),
        pytest.param(lambda d: d["model"].update(n_outputs=-1), "n_outputs"),
        pytest.param(lambda d: d["model"].update(format_version=-1), "format"),
        pytest.param(lambda d: d.update(n_features_in="x"), "n_features_in"),
        pytest.param(lambda d: d.update(estimator=["RGBMRegressor"]), "estimator"),
        pytest.param(lambda d: d.update(feature_names_in=5), "feature"),
    ],
    ids=[
        "feature_negative",
        "n_features_negative",
        "n_outputs_negative",
        "format_version_negative",
        "n_features_in_str",
        "estimator_list",
        "feature_names_int",
    ],
)
def test_load_errors_name_the_field(docs, mdir, edit, fragment):
    assert_load_fails(mdir, _edit(docs, "reg", edit), BAD, fragment)


def test_deeply_nested_json(mdir):
    assert_load_fails(mdir, "[" * 100_000 + "]" * 100_000, ValueError, "not a valid rgbm_rs model file")


def _loads(mdir, doc):
    return load_model(_write(mdir, doc))


def test_outer_params_must_agree_with_the_model(docs, mdir, data):
    X = data[0]
    original = _loads(mdir, docs["clf"]).predict_proba(X)
    doc = _edit(docs, "clf", lambda d: d["params"].update(loss="exponential"))
    try:
        est = _loads(mdir, doc)
    except ValueError:
        return
    np.testing.assert_allclose(est.predict_proba(X), original)


@pytest.mark.parametrize("raw", ['"learning_rate": -1.0', '"learning_rate": 1e999', '"n_estimators": -5'])
def test_outer_params_are_validated(docs, mdir, raw):
    text = json.dumps(docs["reg"])
    key = raw.split(":")[0]
    start = text.index(key)  # the estimator params come first
    end = text.index(",", start)
    path = _write(mdir, text[:start] + raw + text[end:])
    with pytest.raises(ValueError, match=key.strip('"')):
        load_model(path)


def test_staged_predict_of_a_tampered_model(mdir, data):
    X, _, yr, _ = data
    reg = small(RGBMRegressor, n_estimators=6, langevin=True, random_state=0).fit(X, yr)
    doc = reg._to_document()
    doc["params"]["shrink_rate"] = 9.0
    try:
        est = _loads(mdir, doc)
    except ValueError:
        return
    for got, want in zip(est.staged_predict(X), reg.staged_predict(X)):
        np.testing.assert_allclose(got, want)


def test_nested_classes(docs, mdir, data):
    doc = _edit(docs, "clf", lambda d: d.update(classes=[[0], [1]]))
    try:
        est = _loads(mdir, doc)
    except ValueError:
        return
    assert est.predict(data[0]).shape == (len(data[0]),)


def test_feature_names_as_a_string(docs, mdir):
    assert_load_fails(mdir, _edit(docs, "reg", lambda d: d.update(feature_names_in="abc")), ValueError, "feature")


def test_leaf_values_whose_sum_overflows(docs, mdir, data):
    def edit(d):
        for tree in d["model"]["trees"]:
            tree["leaf_value"] = [1e308] * len(tree["leaf_value"])

    try:
        est = _loads(mdir, _edit(docs, "reg", edit))
    except ValueError:
        return
    try:
        out = est.predict(data[0])
    except ValueError:
        return
    assert np.all(np.isfinite(out))


@pytest.mark.skip(reason="a 50 MB model file is too slow for CI; sizes are capped in src/model.rs (MAX_TREES)")
def test_absurdly_large_file():
    pass


def test_unreadable_paths(mdir):
    with pytest.raises(OSError):
        load_model(mdir / "missing.json")
    with pytest.raises(IsADirectoryError):
        load_model(mdir)
    with pytest.raises(ValueError, match="null byte"):
        load_model(str(mdir / "a\0b.json"))
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        path = _write(mdir, "{}")
        path.chmod(0)
        with pytest.raises(PermissionError):
            load_model(path)


def test_round_trip_after_failed_loads_still_works(docs, mdir, data):
    """A failed load leaves nothing behind: the good file still loads and predicts the same."""
    X = data[0]
    good = _loads(mdir, docs["mc"]).predict_proba(X)
    for bad in ("", "{", "null"):
        with pytest.raises(ValueError):
            load_model(_write(mdir, bad))
    again = _loads(mdir, docs["mc"]).predict_proba(X)
    np.testing.assert_array_equal(good, again)
    assert np.allclose(again.sum(axis=1), 1.0) and not math.isnan(again.sum())
