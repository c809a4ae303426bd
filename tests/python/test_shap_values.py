"""predict(X, pred_contrib=True): SHAP values of the raw score.

Checked against Shapley values computed here by enumerating every feature
subset (the value of a subset: each tree's expected output when only those
features are known, the others averaged over the training rows by the
covers), against the shap package's TreeExplainer on ``to_shap``, and by
additivity (contributions + expected value = raw score).
"""

import itertools
import json
import math

import numpy as np
import pytest
from shap_oracle import expected

import rgbm_rs
from rgbm_rs import RGBMClassifier, RGBMRegressor


def _data(n=500, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 3] = rng.integers(0, 7, size=n)  # category codes
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.05, 3] = np.nan
    y = X[:, 1] * X[:, 2] + np.nan_to_num(X[:, 0]) + np.isin(X[:, 3], [1, 4]) * 1.5 + 0.2 * rng.normal(size=n)
    return X, y


_SMALL = dict(n_estimators=6, max_leaves=6, max_depth=None, min_samples_leaf=10, random_state=0)
_CAT = dict(categorical_features=[3], min_data_per_group=5, max_cat_to_onehot=2)


def _fit(name, **overrides):
    X, y = _data()
    kw = {**_SMALL, **overrides}
    cls3 = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=len(y))
    fits = {
        "squared": lambda: RGBMRegressor(**kw).fit(X, y),
        "categorical": lambda: RGBMRegressor(**kw, **_CAT).fit(X, y),
        "weighted_subsample": lambda: RGBMRegressor(**kw, subsample=0.7).fit(X, y, sample_weight=w),
        "sglb": lambda: RGBMRegressor(**kw, langevin=True, shrink_rate=0.05).fit(X, y),
        "gaussian": lambda: RGBMRegressor(**kw, loss="gaussian").fit(X, y),
        "poisson": lambda: RGBMRegressor(**kw, loss="poisson").fit(X, np.exp(y / 3)),
        "huber": lambda: RGBMRegressor(**kw, loss="huber").fit(X, y),
        "quantile": lambda: RGBMRegressor(**kw, loss="quantile", alpha=0.8).fit(X, y),
        "rgbm": lambda: RGBMRegressor(**kw, selection="random", selection_size=3).fit(X, y),
        "rgb": lambda: RGBMRegressor(
            n_estimators=kw["n_estimators"], booster="rgb", rgb_candidates=2, rgb_nodes=[2, 4], random_state=0
        ).fit(X, y),
        "binary": lambda: RGBMClassifier(**kw).fit(X, y > 0),
        "binary_categorical": lambda: RGBMClassifier(**kw, **_CAT).fit(X, y > 0),
        "multiclass": lambda: RGBMClassifier(**kw, **_CAT).fit(X, cls3),
        "multiclass_ordinal": lambda: RGBMClassifier(**kw).fit(X, cls3),
    }
    return fits[name](), X


NAMES = [
    "squared",
    "categorical",
    "weighted_subsample",
    "sglb",
    "gaussian",
    "poisson",
    "huber",
    "quantile",
    "rgbm",
    "rgb",
    "binary",
    "binary_categorical",
    "multiclass",
]


@pytest.fixture(scope="module")
def small_models():
    return {name: _fit(name) for name in NAMES}


# ---------------------------------------------------------------- the oracle


def _shapley(trees, x, p):
    """Shapley values of the features and the value of the empty set, by enumeration."""
    value = {}
    for size in range(p + 1):
        for subset in itertools.combinations(range(p), size):
            value[frozenset(subset)] = sum(expected(t, x, set(subset)) for t in trees)
    phi = np.zeros(p)
    for j in range(p):
        others = [f for f in range(p) if f != j]
        for size in range(p):
            weight = math.factorial(size) * math.factorial(p - size - 1) / math.factorial(p)
            for subset in itertools.combinations(others, size):
                s = frozenset(subset)
                phi[j] += weight * (value[s | {j}] - value[s])
    return phi, value[frozenset()]


@pytest.mark.parametrize("name", NAMES)
def test_contributions_are_the_shapley_values_by_enumeration(small_models, name):
    est, X = small_models[name]
    X = X[:12]
    p = X.shape[1]
    dump = est.dump_model()
    k = dump["n_outputs"]
    base = np.atleast_1d(np.asarray(dump["base_score"], dtype=float))
    contrib = est.predict(X, pred_contrib=True)
    assert contrib.shape == (len(X), k * (p + 1))
    for c in range(k):
        trees = [t["tree"] for t in dump["trees"] if t["output"] == c]
        block = contrib[:, c * (p + 1) : (c + 1) * (p + 1)]
        for i, x in enumerate(X):
            phi, empty = _shapley(trees, x, p)
            np.testing.assert_allclose(block[i, :p], phi, rtol=1e-9, atol=1e-11)
            np.testing.assert_allclose(block[i, p], base[c] + empty, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- additivity
@pytest.mark.parametrize(
    "name,overrides",
    [
        ("squared", dict(n_estimators=40, max_leaves=31)),
        ("categorical", dict(n_estimators=40, max_leaves=31)),
        ("weighted_subsample", dict(n_estimators=30, max_depth=8, max_leaves=None)),
        ("sglb", dict(n_estimators=40)),
        ("gaussian", dict(n_estimators=20)),
        ("poisson", dict(n_estimators=30)),
        ("rgb", dict()),
        ("binary", dict(n_estimators=30, max_leaves=20)),
        ("multiclass", dict(n_estimators=20, max_leaves=15)),
    ],
)
def test_contributions_add_up_to_the_raw_score(name, overrides):
    est, X = _fit(name, **overrides)
    raw = est._raw(X).reshape(len(X), -1)
    k, p = raw.shape[1], X.shape[1]
    contrib = est.predict(X, pred_contrib=True).reshape(len(X), k, p + 1)
    total = contrib.sum(axis=2)
    scale = np.abs(contrib).sum(axis=2) + np.abs(raw)
    assert np.all(np.abs(total - raw) <= 1e-9 * scale), np.max(np.abs(total - raw) / scale)
    # The expected value is the same for every row.
    assert np.all(contrib[:, :, p] == contrib[:1, :, p])


def test_contributions_do_not_depend_on_threads_or_the_input_type():
    X, y = _data(n=1500, seed=4)
    kw = dict(n_estimators=20, max_leaves=15, max_depth=None, random_state=0)
    one = RGBMRegressor(**kw, n_jobs=1).fit(X, y)
    two = RGBMRegressor(**kw, n_jobs=2).fit(X, y)
    a, b = one.predict(X, pred_contrib=True), two.predict(X, pred_contrib=True)
    assert a.tobytes() == b.tobytes()
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(
        one.predict(X32, pred_contrib=True), one.predict(X32.astype(np.float64), pred_contrib=True)
    )
    # Few rows (the calling thread) give the rows' values of a large batch.
    np.testing.assert_array_equal(one.predict(X[:7], pred_contrib=True), a[:7])


def test_classifier_contributions_explain_the_decision_function(small_models):
    est, X = small_models["binary"]
    contrib = est.predict(X, pred_contrib=True)
    np.testing.assert_allclose(contrib.sum(axis=1), est.decision_function(X), rtol=1e-9, atol=1e-9)


def test_models_without_leaf_covers_refuse_contributions_only(small_models, tmp_path):
    est, X = small_models["squared"]
    path = tmp_path / "old.json"
    est.save_model(path)
    doc = json.loads(path.read_text())
    for tree in doc["model"]["trees"]:
        tree.pop("leaf_count")
    path.write_text(json.dumps(doc))
    old = rgbm_rs.load_model(path)
    np.testing.assert_array_equal(old.predict(X), est.predict(X))
    np.testing.assert_array_equal(old.apply(X), est.apply(X))
    with pytest.raises(ValueError, match="no leaf covers.*older version"):
        old.predict(X, pred_contrib=True)
    with pytest.raises(ValueError, match="no leaf covers"):
        rgbm_rs.to_shap(old)
    # Written again, the old model keeps its bytes.
    old.save_model(tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text())["model"] == doc["model"]


# ---------------------------------------------------------------- the shap package
@pytest.mark.parametrize(
    "name",
    [
        "squared",
        "categorical",
        "weighted_subsample",
        "sglb",
        "gaussian",
        "poisson",
        "rgb",
        "binary",
        "binary_categorical",
        "multiclass",
        "multiclass_ordinal",
    ],
)
def test_shap_tree_explainer_agrees(name):
    shap = pytest.importorskip("shap")
    est, X = _fit(name, n_estimators=15, max_leaves=12)
    X = X[:200]
    explainer = shap.TreeExplainer(rgbm_rs.to_shap(est))
    theirs = np.asarray(explainer.shap_values(X, check_additivity=False))
    p = X.shape[1]
    ours = est.predict(X, pred_contrib=True).reshape(len(X), -1, p + 1)
    k = ours.shape[1]
    theirs = theirs.reshape(len(X), p) if k == 1 else theirs.reshape(len(X), p, k).transpose(0, 2, 1)
    np.testing.assert_allclose(ours[:, :, :p].squeeze(1) if k == 1 else ours[:, :, :p], theirs, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(np.atleast_1d(explainer.expected_value), ours[0, :, p], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("loss", ["squared", "gaussian"])
def test_a_model_without_trees_gives_contributions_but_no_shap_explainer(tmp_path, loss):
    # Only a hand-edited model file has no trees. predict explains it (every
    # contribution 0, then the base score); to_shap refuses it clearly, where
    # shap's TreeExplainer failed obscurely on the empty ensemble.
    X, y = _data(200)
    est = RGBMRegressor(n_estimators=3, loss=loss, random_state=0).fit(X, y)
    est.save_model(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    doc["model"]["trees"] = []
    (tmp_path / "m.json").write_text(json.dumps(doc))
    empty = rgbm_rs.load_model(tmp_path / "m.json")
    contrib = empty.predict(X, pred_contrib=True).reshape(len(X), -1, X.shape[1] + 1)
    np.testing.assert_array_equal(contrib[:, :, :-1], 0.0)
    base = np.asarray(doc["model"]["base_score"])
    np.testing.assert_array_equal(contrib[:, :, -1], np.broadcast_to(base, contrib[:, :, -1].shape))
    with pytest.raises(ValueError, match="the model has no trees, and shap's TreeExplainer needs at least one"):
        rgbm_rs.to_shap(empty)
