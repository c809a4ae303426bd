"""shap's TreeExplainer on models with category-set splits, through to_shap.

Checked against Shapley values computed here by enumerating every feature
subset: for shap's path-dependent TreeSHAP (no background data) the value
of a subset is each tree's expected output with the other features averaged
over the model's covers, walked on dump_model's trees; for the
interventional one (a background data set) it is the mean of the model's
raw score over the background rows with the subset's features taken from
the explained row, from predict. Interaction values are checked
against the Shapley interaction index of the same subset values, and
against predict(X, pred_contrib=True) and additivity.
"""

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from shap_oracle import expected

import rgbm_rs
from rgbm_rs import RGBMClassifier, RGBMRegressor

shap = pytest.importorskip("shap")
pd = pytest.importorskip("pandas")

# The explainers take arrays of codes; predict on those arrays warns that a frame was fitted.
pytestmark = pytest.mark.filterwarnings("ignore:X does not have valid feature names")

ADULT = Path("/work/shared/data/adult")
LETTERS = list("abcdefghijkl")


def _frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    city = rng.choice(LETTERS, size=n)
    x = rng.normal(size=n)
    z = rng.normal(size=n)
    x[rng.random(n) < 0.08] = np.nan
    # Members 1, 4, 5, 7, 10 of the codes: several runs, so each set split becomes several segments.
    y = np.isin(city, ["b", "e", "f", "h", "k"]) * 2.0 + np.nan_to_num(x) * (city < "f") + 0.3 * z
    y += 0.1 * rng.normal(size=n)
    frame = pd.DataFrame({"city": pd.Categorical(city, categories=LETTERS), "x": x, "z": z})
    return frame, y


def _codes(frame):
    """The frame as predict reads it: category columns as their codes (fit-time categories), NaN = missing."""
    codes = frame["city"].cat.codes.to_numpy().astype(float)
    codes[codes < 0] = np.nan
    return np.column_stack([codes, frame["x"].to_numpy(float), frame["z"].to_numpy(float)])


_TINY = dict(n_estimators=4, max_leaves=5, max_depth=None, min_samples_leaf=10, min_data_per_group=5, random_state=0)


@pytest.fixture(scope="module")
def tiny():
    frame, y = _frame()
    est = RGBMRegressor(**_TINY).fit(frame, y)
    sets = [n["categories"] for t in est.dump_model()["trees"] for n in _internal(t["tree"]) if "categories" in n]
    assert sets, "the model has no category-set split"
    assert any(len(_runs(s)) > 1 for s in sets), "no set split of several runs"
    return est, frame


def _runs(codes):
    """Runs of consecutive codes (code minus position is constant along one)."""
    return [list(g) for _, g in itertools.groupby(enumerate(codes), key=lambda item: item[1] - item[0])]


def _internal(node):
    if "leaf_index" in node:
        return []
    return [node, *_internal(node["left"]), *_internal(node["right"])]


def _rows(n=40, seed=1):
    """Rows to explain: codes seen at fit, an unseen code (12), a negative one, missing values."""
    frame, _ = _frame(n, seed)
    X = _codes(frame)
    X[:4, 0] = [12.0, -1.0, np.nan, 40000.0]
    return X


# ---------------------------------------------------------------- the oracles


def _path_dependent_values(est, x):
    trees = [t["tree"] for t in est.dump_model()["trees"]]
    p = len(x)
    return {
        frozenset(s): sum(expected(t, x, set(s)) for t in trees)
        for size in range(p + 1)
        for s in itertools.combinations(range(p), size)
    }


def _interventional_values(est, x, background):
    p = len(x)
    out = {}
    for size in range(p + 1):
        for s in itertools.combinations(range(p), size):
            hybrid = background.copy()
            hybrid[:, list(s)] = x[list(s)]
            out[frozenset(s)] = est.predict(hybrid).mean()  # squared loss: the raw score
    return out


def _shapley(value, p):
    phi = np.zeros(p)
    for j in range(p):
        others = [f for f in range(p) if f != j]
        for size in range(p):
            weight = math.factorial(size) * math.factorial(p - size - 1) / math.factorial(p)
            for s in itertools.combinations(others, size):
                s = frozenset(s)
                phi[j] += weight * (value[s | {j}] - value[s])
    return phi


def _interactions(value, p):
    """The Shapley interaction index (off the diagonal); the diagonal makes each row sum to the Shapley value."""
    phi = _shapley(value, p)
    out = np.zeros((p, p))
    for i, j in itertools.permutations(range(p), 2):
        others = [f for f in range(p) if f not in (i, j)]
        for size in range(p - 1):
            weight = math.factorial(size) * math.factorial(p - size - 2) / (2 * math.factorial(p - 1))
            for s in itertools.combinations(others, size):
                s = frozenset(s)
                out[i, j] += weight * (value[s | {i, j}] - value[s | {i}] - value[s | {j}] + value[s])
    for i in range(p):
        out[i, i] = phi[i] - out[i].sum()
    return out


# ---------------------------------------------------------------- path-dependent
@pytest.mark.parametrize("shared", [False, True])
def test_shap_values_are_the_path_dependent_shapley_values(tiny, shared):
    est, _ = tiny
    X = _rows(12)
    explainer = shap.TreeExplainer(rgbm_rs.to_shap(est, shared=shared))
    theirs = explainer.shap_values(X)
    for i, x in enumerate(X):
        value = _path_dependent_values(est, x)
        np.testing.assert_allclose(theirs[i], _shapley(value, len(x)), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(explainer.expected_value, est._booster.base_score[0] + value[frozenset()])


@pytest.mark.parametrize("shared", [False, True])
def test_interaction_values_are_the_shapley_interaction_index(tiny, shared):
    est, _ = tiny
    X = _rows(8)
    explainer = shap.TreeExplainer(rgbm_rs.to_shap(est, shared=shared))
    theirs = explainer.shap_interaction_values(X)
    for i, x in enumerate(X):
        np.testing.assert_allclose(theirs[i], _interactions(_path_dependent_values(est, x), len(x)), atol=1e-10)
    np.testing.assert_allclose(theirs.sum(axis=2), explainer.shap_values(X), atol=1e-12)


def test_interventional_values_are_the_shapley_values_of_the_background_mean(tiny):
    est, frame = tiny
    X = _rows(6)
    background = _codes(frame)[:30]
    explainer = shap.TreeExplainer(rgbm_rs.to_shap(est), background)
    theirs = explainer.shap_values(X)
    for i, x in enumerate(X):
        value = _interventional_values(est, x, background)
        # shap's interventional TreeSHAP accumulates in float32.
        np.testing.assert_allclose(theirs[i], _shapley(value, len(x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(explainer.expected_value, est.predict(background).mean(), rtol=1e-12)


# ---------------------------------------------------------------- against predict
@pytest.mark.parametrize(
    "make",
    [
        lambda: RGBMRegressor(n_estimators=40, max_leaves=15, min_data_per_group=5, random_state=0),
        lambda: RGBMClassifier(n_estimators=30, max_leaves=12, min_data_per_group=5, random_state=0),
        lambda: RGBMRegressor(n_estimators=15, max_leaves=8, loss="gaussian", min_data_per_group=5, random_state=0),
    ],
    ids=["regressor", "binary", "gaussian"],
)
def test_shap_values_equal_pred_contrib(make):
    frame, y = _frame(1500, seed=2)
    target = y > np.median(y) if "Classifier" in type(make()).__name__ else y
    est = make().fit(frame, target)
    X = _rows(300, seed=3)
    p = X.shape[1]
    ours = est.predict(X, pred_contrib=True).reshape(len(X), -1, p + 1)
    k = ours.shape[1]
    for shared in (False, True):
        explainer = shap.TreeExplainer(rgbm_rs.to_shap(est, shared=shared))
        theirs = np.asarray(explainer.shap_values(X)).reshape(len(X), p, k).transpose(0, 2, 1)
        np.testing.assert_allclose(theirs, ours[:, :, :p], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(np.atleast_1d(explainer.expected_value), ours[0, :, p], rtol=1e-12, atol=1e-12)
        raw = est._raw(X).reshape(len(X), k)
        np.testing.assert_allclose(theirs.sum(axis=2) + np.atleast_1d(explainer.expected_value), raw, atol=1e-9)


def test_multiclass_interaction_values_add_up(tiny):
    frame, y = _frame(900, seed=4)
    classes = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    est = RGBMClassifier(n_estimators=8, max_leaves=8, min_data_per_group=5, random_state=0).fit(frame, classes)
    X = _rows(30, seed=5)
    explainer = shap.TreeExplainer(rgbm_rs.to_shap(est))
    values = explainer.shap_values(X)  # (n, p, 3)
    inter = explainer.shap_interaction_values(X)  # (n, p, p, 3)
    np.testing.assert_allclose(inter.sum(axis=2), values, atol=1e-12)
    ours = est.predict(X, pred_contrib=True).reshape(len(X), 3, -1)
    np.testing.assert_allclose(values.transpose(0, 2, 1), ours[:, :, :-1], atol=1e-9)


def test_a_value_that_is_not_a_code_is_taken_as_the_nearest_code(tiny):
    est, _ = tiny
    X = _rows(10)
    X[:, 0] = 4.0
    near = X.copy()
    near[:, 0] = [3.6, 4.4, 4.5, 4.0000001, 3.5000001, 3.9, 4.2, 4.49, 3.51, 4.1]
    explainer = shap.TreeExplainer(rgbm_rs.to_shap(est))
    np.testing.assert_allclose(explainer.shap_values(near), explainer.shap_values(X), atol=1e-12)


def test_the_explainer_on_the_frame_codes_of_an_unseen_frame(tiny):
    # A frame coded with other categories: predict maps by value; shap takes
    # the codes of the fit-time categories.
    est, frame = tiny
    other = frame.iloc[:50].assign(
        city=pd.Categorical(frame["city"].iloc[:50].astype(str), categories=["zz", *LETTERS])
    )
    recoded = other.assign(city=pd.Categorical(other["city"].astype(str), categories=LETTERS))
    explainer = shap.TreeExplainer(rgbm_rs.to_shap(est))
    ours = est.predict(other, pred_contrib=True)
    np.testing.assert_allclose(explainer.shap_values(_codes(recoded)), ours[:, :-1], atol=1e-10)


# ---------------------------------------------------------------- refusals
def test_trees_shap_cannot_index_are_refused_unless_shared(tiny, monkeypatch):
    est, _ = tiny
    from rgbm_rs import _shap

    sizes = [len(t["features"]) for t in rgbm_rs.to_shap(est)["trees"]]
    monkeypatch.setattr(_shap, "MAX_TREE_NODES", max(sizes) - 1)
    with pytest.raises(ValueError, match=rf"make a tree of {max(sizes)} nodes.*pass shared=True"):
        rgbm_rs.to_shap(est)
    assert rgbm_rs.to_shap(est, shared=True)["trees"]
    with pytest.raises(TypeError, match="shared must be a bool"):
        rgbm_rs.to_shap(est, shared="yes")


def test_shared_subtrees_are_smaller_and_models_without_sets_are_the_same_either_way(tiny):
    est, frame = tiny
    expanded, shared = rgbm_rs.to_shap(est), rgbm_rs.to_shap(est, shared=True)
    assert sum(len(t["features"]) for t in shared["trees"]) < sum(len(t["features"]) for t in expanded["trees"])
    ordinal = RGBMRegressor(**{**_TINY, "categorical_features": None}).fit(_codes(frame), _frame()[1])
    a, b = rgbm_rs.to_shap(ordinal), rgbm_rs.to_shap(ordinal, shared=True)
    for s, t in zip(a["trees"], b["trees"]):
        for key in s:
            np.testing.assert_array_equal(s[key], t[key])


# ---------------------------------------------------------------- adult
def _adult():
    if not (ADULT / "adult-train.csv").exists():
        pytest.skip(f"the adult data set is not in {ADULT}")
    cols = [
        "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
        "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
    ]  # fmt: skip
    df = pd.read_csv(ADULT / "adult-train.csv", header=None, names=cols, sep=",", skipinitialspace=True)
    df = df.replace("?", np.nan)
    y = (df.pop("income") == ">50K").to_numpy()
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):
            df[c] = df[c].astype("category")
    return df, y


def test_adult():
    df, y = _adult()
    est = RGBMClassifier(n_estimators=60, random_state=0).fit(df, y)
    assert any("categories" in n for t in est.dump_model()["trees"] for n in _internal(t["tree"]))
    rows = df.iloc[:200]
    X = np.column_stack(
        [
            np.where(rows[c].cat.codes < 0, np.nan, rows[c].cat.codes) if rows[c].dtype == "category" else rows[c]
            for c in df.columns
        ]
    ).astype(float)
    ours = est.predict(rows, pred_contrib=True)
    explainer = shap.TreeExplainer(rgbm_rs.to_shap(est))
    theirs = explainer.shap_values(X)
    np.testing.assert_allclose(theirs, ours[:, :-1], atol=1e-9)
    np.testing.assert_allclose(theirs.sum(axis=1) + explainer.expected_value, est.decision_function(rows), atol=1e-9)
    inter = shap.TreeExplainer(rgbm_rs.to_shap(est, shared=True)).shap_interaction_values(X[:10])
    np.testing.assert_allclose(inter.sum(axis=2), theirs[:10], atol=1e-9)
    background = shap.TreeExplainer(rgbm_rs.to_shap(est), X[:50])
    values = background.shap_values(X[50:60])
    np.testing.assert_allclose(
        values.sum(axis=1) + background.expected_value, est.decision_function(rows.iloc[50:60]), atol=1e-5
    )
