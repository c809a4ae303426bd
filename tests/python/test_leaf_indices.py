"""apply / predict(pred_leaf=True): the leaf of every row in every tree.

Checked against a walk of the dumped trees written here (thresholds, NaN
defaults, category sets), and by summing the leaf values it picks.
"""

import math

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor


def _walk(node, row):
    """The (leaf index, value) a row reaches in a tree_to_dict tree."""
    while "leaf_index" not in node:
        v = row[node["split_feature"]]
        if "categories" in node:
            member = not math.isnan(v) and v >= 0 and v == int(v) and int(v) in node["categories"]
            go_left = node["default_left"] != member
        elif math.isnan(v):
            go_left = node["default_left"]
        else:
            go_left = v <= node["threshold"]
        node = node["left"] if go_left else node["right"]
    return node["leaf_index"], node["value"]


def _data(n=700, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[:, 3] = rng.integers(0, 9, size=n)  # category codes
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.05, 3] = np.nan
    y = X[:, 1] * 2 + np.nan_to_num(X[:, 0]) + np.isin(X[:, 3], [1, 4, 6]) * 1.5 + 0.1 * rng.normal(size=n)
    return X, y


def _models():
    X, y = _data()
    cls3 = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    kw = dict(n_estimators=12, max_leaves=9, max_depth=None, min_samples_leaf=5, random_state=0)
    cat = dict(categorical_features=[3], min_data_per_group=5, max_cat_to_onehot=2)
    return {
        "squared": (RGBMRegressor(**kw).fit(X, y), X),
        "categorical": (RGBMRegressor(**kw, **cat).fit(X, y), X),
        "sglb": (RGBMRegressor(**kw, langevin=True, shrink_rate=0.05).fit(X, y), X),
        "gaussian": (RGBMRegressor(**kw, loss="gaussian").fit(X, y), X),
        "binary": (RGBMClassifier(**kw, **cat).fit(X, y > 0), X),
        "multiclass": (RGBMClassifier(**kw, **cat).fit(X, cls3), X),
        "rgb": (RGBMRegressor(n_estimators=8, booster="rgb", rgb_candidates=2, random_state=0).fit(X, y), X),
    }


@pytest.fixture(scope="module")
def models():
    return _models()


@pytest.mark.parametrize("name", ["squared", "categorical", "sglb", "gaussian", "binary", "multiclass", "rgb"])
def test_leaves_match_a_walk_of_the_dumped_trees_and_sum_to_the_raw_score(models, name):
    est, X = models[name]
    X = X[:150]
    dump = est.dump_model()
    k = est.get_booster().n_outputs
    rounds = est.get_booster().n_rounds
    leaves = est.apply(X)
    assert leaves.dtype == np.int32
    assert leaves.shape == ((len(X), rounds) if k == 1 else (len(X), rounds, k))
    flat = leaves.reshape(len(X), -1)
    if name == "categorical":
        assert any("categories" in str(t["tree"]) for t in dump["trees"])
    base = np.atleast_1d(np.asarray(dump["base_score"], dtype=float))
    total = np.tile(base, (len(X), 1))
    for t, tree in enumerate(dump["trees"]):
        for i, row in enumerate(X):
            leaf, value = _walk(tree["tree"], row)
            assert flat[i, t] == leaf, (t, i)
            total[i, tree["output"]] += value
    # Stored leaf values already carry SGLB's shrinkage, so no factor is applied here.
    raw = est._raw(X).reshape(len(X), k)
    np.testing.assert_allclose(total, raw, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X, pred_leaf=True), leaves)


def test_leaf_values_picked_by_apply_sum_to_the_raw_score_on_many_rows(models):
    # Past 256 rows the rows are split into blocks run in parallel.
    est, _ = models["multiclass"]
    X, _ = _data(n=3000, seed=5)
    leaves = est.apply(X)
    doc = est.dump_model()
    values = [np.array(_leaf_values(t["tree"])) for t in doc["trees"]]
    k = len(doc["base_score"])
    total = np.tile(np.asarray(doc["base_score"]), (len(X), 1))
    for r in range(leaves.shape[1]):
        for c in range(k):
            total[:, c] += values[r * k + c][leaves[:, r, c]]
    np.testing.assert_allclose(total, est.decision_function(X), rtol=1e-12, atol=1e-12)
    # float32 input takes the same decisions as predict's float32 path.
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(est.apply(X32), np.asarray(est.apply(X32.astype(np.float64))))


def _leaf_values(node):
    out = {}
    stack = [node]
    while stack:
        n = stack.pop()
        if "leaf_index" in n:
            out[n["leaf_index"]] = n["value"]
        else:
            stack += [n["left"], n["right"]]
    return [out[i] for i in range(len(out))]


def test_apply_uses_the_rounds_early_stopping_kept():
    X, y = _data(n=600, seed=3)
    est = RGBMRegressor(n_estimators=300, learning_rate=0.5, early_stopping_rounds=3, random_state=0)
    est.fit(X[:400], y[:400], eval_set=[(X[400:], y[400:])])
    assert est.best_iteration_ < 300
    assert est.apply(X).shape == (len(X), est.best_iteration_)


def test_apply_on_sparse_input_equals_dense():
    import scipy.sparse as sp

    X, y = _data(n=400, seed=2)
    X = np.where(np.abs(X) < 0.7, 0.0, X)
    est = RGBMRegressor(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.apply(sp.csr_matrix(X)), est.apply(X))
    np.testing.assert_array_equal(est.apply(sp.csc_matrix(X)), est.apply(X))


# The rarest levels of the largest column share the missing bin, which is what is said.
@pytest.mark.filterwarnings("ignore:categorical feature 3 has")
@pytest.mark.parametrize("leaves", [31, 63])
def test_many_level_categories_in_the_block_walks_match_a_walk_of_the_dumped_trees(leaves):
    # Categories of 12 to 6,000 levels give sets of one word up to past the
    # 4,096 codes a code table holds; 1,200 rows take the block walks (32-bit
    # leaf masks for 31 leaves, 64-bit for 63).
    rng = np.random.default_rng(3)
    n, levels = 3000, [12, 300, 1500, 6000]
    X = rng.normal(size=(n, len(levels) + 1))
    y = X[:, -1].copy()
    for j, k in enumerate(levels):
        p = 1.0 / np.arange(1, k + 1) ** 0.8
        X[:, j] = rng.permutation(k)[rng.choice(k, size=n, p=p / p.sum())]
        y += rng.normal(scale=1 + j, size=k)[X[:, j].astype(int)]
    X[rng.random(X.shape) < 0.03] = np.nan
    est = RGBMRegressor(
        n_estimators=6,
        max_leaves=leaves,
        max_depth=None,
        min_samples_leaf=3,
        min_data_per_group=3,
        max_bins=1023,
        categorical_features=list(range(len(levels))),
        random_state=0,
    ).fit(X, y)
    dump = est.dump_model()
    longest = max(max(_category_sets(t["tree"]), default=0) for t in dump["trees"])
    assert longest > 4096
    Xp = X[:1200].copy()
    odd = [1.5, -1.0, -0.0, 7.25, 4096.0, 6001.0, 1e9, 65536.0, 3e10, np.nan]
    for j in range(len(levels)):
        picked = rng.random(len(Xp)) < 0.1
        Xp[picked, j] = rng.choice(odd, picked.sum())
    leaves_at = est.apply(Xp)
    total = np.full(len(Xp), float(np.atleast_1d(dump["base_score"])[0]))
    for t, tree in enumerate(dump["trees"]):
        for i, row in enumerate(Xp):
            leaf, value = _walk(tree["tree"], row)
            assert leaves_at[i, t] == leaf, (t, i)
            total[i] += value
    np.testing.assert_allclose(est.predict(Xp), total, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(est.predict(Xp.astype(np.float32)), est.predict(Xp.astype(np.float32).astype(float)))


def _category_sets(node):
    """The largest code + 1 of every category set in a tree_to_dict tree."""
    if "leaf_index" in node:
        return []
    own = [max(node["categories"]) + 1] if node.get("categories") else []
    return own + _category_sets(node["left"]) + _category_sets(node["right"])
