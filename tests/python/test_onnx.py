"""ONNX export: onnxruntime's outputs equal predict / predict_proba.

Trees are compared against independent references where routing matters:
models whose leaves hold their own index (so any row sent to another leaf
shows), a pure-Python walk of the model JSON in float64, and predict on the
same float32 values given as float64 (the core's other comparison path).
"""

import json
import subprocess
import sys

import numpy as np
import pytest
from packaging.version import Version
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from rgbm_rs import RGBMClassifier, RGBMRegressor, _core, load_model, to_onnx  # noqa: E402

TOL = dict(rtol=1e-5, atol=1e-5)
# Category sets need ai.onnx.ml opset 5 (TreeEnsemble), which onnxruntime runs from 1.20.
TREE_ENSEMBLE_5 = pytest.mark.skipif(
    Version(ort.__version__) < Version("1.20"), reason="onnxruntime < 1.20 has no ai.onnx.ml TreeEnsemble"
)


def float32_at_most(t: np.ndarray) -> np.ndarray:
    """The largest float32 ≤ t for each t (−inf if none): ``v <= result`` exactly when ``float64(v) <= t``."""
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore"):
        near = t.astype(np.float32)
    above = near.astype(np.float64) > t
    near[above] = np.nextafter(near[above], np.float32(-np.inf))
    return near


def run(model, X):
    runner = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return runner.run(None, {"X": np.asarray(X, dtype=np.float32)})


def with_nans(X, rng, rate=0.1):
    X = X.copy()
    X[rng.random(X.shape) < rate] = np.nan
    return X


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 6))
    y = 2 * X[:, 0] + X[:, 1] ** 2 + np.sin(3 * X[:, 2]) + 0.1 * rng.normal(size=1500)
    return with_nans(X, rng), y


def regression_target(loss, y):
    if loss in ("poisson", "tweedie"):
        return np.random.default_rng(1).poisson(np.exp(y / 3)).astype(float)
    if loss == "gamma":
        return np.exp(y / 3)
    return y


@pytest.mark.parametrize(
    "loss,extra",
    [
        ("squared", {}),
        ("huber", {"huber_delta": 0.5}),
        ("absolute_error", {}),
        ("quantile", {"alpha": 0.8}),
        ("poisson", {}),
        ("gamma", {}),
        ("tweedie", {"tweedie_variance_power": 1.3}),
        ("gaussian", {}),
    ],
)
def test_regressor_matches_predict(data, loss, extra):
    X, y = data
    est = RGBMRegressor(loss=loss, n_estimators=150, max_depth=5, random_state=0, **extra).fit(
        X, regression_target(loss, y)
    )
    model = to_onnx(est)
    assert [o.name for o in model.graph.output] == ["variable"]
    (out,) = run(model, X)
    assert out.shape == (len(X), 1) and out.dtype == np.float32
    np.testing.assert_allclose(out[:, 0], est.predict(X.astype(np.float32)), **TOL)


def test_log_link_output_is_exp_of_the_raw_score(data):
    X, y = data
    est = RGBMRegressor(loss="poisson", n_estimators=50, random_state=0).fit(X, regression_target("poisson", y))
    ops = [n.op_type for n in to_onnx(est).graph.node]
    assert ops == ["Cast", "TreeEnsembleRegressor", "Cast", "Exp", "Cast"], ops
    # The raw scores themselves are not what predict returns: the Exp is needed.
    assert not np.allclose(est.get_booster().predict_raw(X), est.predict(X), **TOL)


def test_model_shrinkage_is_exported_as_predict_applies_it(data):
    X, y = data
    est = RGBMRegressor(langevin=True, shrink_rate=0.05, n_estimators=100, random_state=0).fit(X, y)
    assert est.get_booster().shrink_factor < 1
    np.testing.assert_allclose(run(to_onnx(est), X)[0][:, 0], est.predict(X.astype(np.float32)), **TOL)


def test_rgb_and_continued_models(data):
    X, y = data
    X32 = X.astype(np.float32)
    rgb = RGBMClassifier(booster="rgb", max_depth=None, n_estimators=30, random_state=0)
    rgb.fit(X, np.digitize(y, [-1, 1]))
    np.testing.assert_allclose(run(to_onnx(rgb), X)[1], rgb.predict_proba(X32), **TOL)
    first = RGBMRegressor(n_estimators=20, random_state=0).fit(X, y)
    more = RGBMRegressor(n_estimators=20, random_state=0).fit(X, y, init_model=first)
    np.testing.assert_allclose(run(to_onnx(more), X)[0][:, 0], more.predict(X32), **TOL)


def decided(margin):
    """Rows whose label the float32 sum in onnxruntime cannot flip (far from a tie)."""
    keep = np.abs(margin) > 1e-4
    assert keep.mean() > 0.99
    return keep


@pytest.mark.parametrize(
    "loss,extra,labels",
    [
        ("logistic", {}, np.array([0, 1])),
        ("logistic", {"logistic_reg": 0.1, "clamp": 0.01}, np.array([-3, 7])),
        ("exponential", {}, np.array(["no", "yes"])),
        ("sla01", {"gain": "gradient", "leaf": "gradient", "sla_scale": 0.3}, np.array([False, True])),
    ],
)
def test_binary_classifier_matches_predict_proba(data, loss, extra, labels):
    X, y = data
    target = labels[(y > 1).astype(int)]
    est = RGBMClassifier(loss=loss, n_estimators=150, random_state=0, **extra).fit(X, target)
    X32 = X.astype(np.float32)
    model = to_onnx(est)
    assert [o.name for o in model.graph.output] == ["label", "probabilities"]
    label, proba = run(model, X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba, est.predict_proba(X32), **TOL)
    keep = decided(est.decision_function(X32))
    assert (label[keep] == est.predict(X32)[keep]).all()
    assert set(label.tolist()) == set(labels.tolist())


@pytest.mark.parametrize(
    "labels", [np.array([2, 5, 11, 40]), np.array(["a", "b", "c", "d"]), np.array([-1.0, 1.0, 2.0, 4.0])]
)
def test_multiclass_matches_predict_proba(data, labels):
    X, y = data
    target = labels[np.digitize(y, [-1, 0.5, 2])]
    est = RGBMClassifier(n_estimators=80, max_depth=4, random_state=0).fit(X, target)
    X32 = X.astype(np.float32)
    label, proba = run(to_onnx(est), X)
    assert proba.shape == (len(X), 4)
    np.testing.assert_allclose(proba, est.predict_proba(X32), **TOL)
    raw = np.sort(est.decision_function(X32), axis=1)
    keep = decided(raw[:, -1] - raw[:, -2])
    assert (label[keep] == est.predict(X32)[keep]).all()


def test_early_stopping_exports_the_kept_rounds(data):
    X, y = data
    est = RGBMRegressor(n_estimators=1000, learning_rate=0.5, early_stopping_rounds=5, random_state=0)
    est.fit(X[:1000], y[:1000], eval_set=[(X[1000:], y[1000:])])
    rounds = est.get_booster().n_rounds
    assert rounds == est.best_iteration_ < est.n_estimators_
    model = to_onnx(est)
    (node,) = [n for n in model.graph.node if n.op_type == "TreeEnsembleRegressor"]
    treeids = next(a.ints for a in node.attribute if a.name == "nodes_treeids")
    assert len(set(treeids)) == rounds
    np.testing.assert_allclose(run(model, X)[0][:, 0], est.predict(X.astype(np.float32)), **TOL)


# --------------------------------------------------------------------------- precision

#: float32's relative rounding: the bound of the README for identity-link outputs.
EPS32 = 2.0**-24


def assert_within(got, want, bound, atol=0.0):
    """|got - want| <= bound * |want| + atol element-wise (bound a scalar or one per row), with
    room for double-sum noise (1e-12 relative) and float32's subnormals."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    bound = np.asarray(bound, dtype=np.float64).reshape(-1, *([1] * (want.ndim - 1)))
    excess = np.abs(got - want) - (bound + 1e-12) * np.abs(want) - max(atol, 1e-44)
    assert excess.max() <= 0, (np.abs(got - want) / np.abs(want)).max()


def many_trees_data(n=1500):
    rng = np.random.default_rng(6)
    X = with_nans(rng.normal(size=(n, 5)), rng, 0.05)
    signal = np.nan_to_num(X[:, 0]) + np.sin(3 * np.nan_to_num(X[:, 1])) + np.nan_to_num(X[:, 2] * X[:, 3])
    return X, signal + 0.1 * rng.normal(size=n)


def test_thousands_of_trees_on_large_targets_are_summed_in_double():
    # 3000 trees, targets about 1000: summed in float32 the output was off
    # by up to 1.8e-4 relative; summed in double it is predict rounded to float32.
    X, y = many_trees_data()
    est = RGBMRegressor(n_estimators=3000, learning_rate=0.05, max_depth=5, random_state=0).fit(X, 1000 + 300 * y)
    X32 = X.astype(np.float32)
    (out,) = run(to_onnx(est), X32)
    want = est.predict(X32)
    assert np.median(np.abs(want)) > 500
    assert_within(out[:, 0], want, EPS32)
    assert (out[:, 0] == want.astype(np.float32)).mean() > 0.999


def test_many_tree_log_link_and_classifiers_stay_within_the_stated_bound():
    X, y = many_trees_data()
    X32 = X.astype(np.float32)
    # The raw score is rounded to float32 before the link: (1 + 2 |raw|) * 2**-24.
    reg = RGBMRegressor(loss="poisson", n_estimators=1000, max_depth=4, random_state=0)
    reg.fit(X, np.random.default_rng(1).poisson(np.exp(2 + y)).astype(float))
    raw = reg.get_booster().predict_raw(X32)
    assert_within(run(to_onnx(reg), X32)[0][:, 0], reg.predict(X32), (1 + 2 * np.abs(raw)) * EPS32)
    # predict_proba's negative class is 1 - p in double: 1e-15 absolute at most.
    binary = RGBMClassifier(n_estimators=1000, max_depth=4, random_state=0).fit(X, y > 0.5)
    raw = np.abs(binary.decision_function(X32))
    assert raw.max() > 20
    assert_within(run(to_onnx(binary), X32)[1], binary.predict_proba(X32), (1 + 2 * raw) * EPS32, 1e-15)
    multi = RGBMClassifier(n_estimators=400, max_depth=4, random_state=0).fit(X, np.digitize(y, [-0.5, 0.5, 1.5]))
    raw = np.abs(multi.decision_function(X32)).max(axis=1)
    assert_within(run(to_onnx(multi), X32)[1], multi.predict_proba(X32), (1 + 2 * raw) * EPS32)


@TREE_ENSEMBLE_5
def test_many_tree_categorical_models_are_double_up_to_the_outputs():
    X, y = categorical_data()
    X32 = odd_codes(X, np.random.default_rng(3)).astype(np.float32)
    reg = RGBMRegressor(categorical_features=[0, 2], n_estimators=1000, min_data_per_group=5, random_state=0)
    reg.fit(X, 1000 * y)
    assert_within(run(to_onnx(reg), X32)[0][:, 0], reg.predict(X32), EPS32)
    clf = RGBMClassifier(categorical_features=[0, 2], n_estimators=500, min_data_per_group=5, random_state=0)
    clf.fit(X, np.digitize(y, [0.5, 1.5]))
    assert_within(run(to_onnx(clf), X32)[1], clf.predict_proba(X32), EPS32, 1e-15)


# --------------------------------------------------------------------------- exact routing


def test_float32_at_most_is_the_largest_float32_not_above():
    rng = np.random.default_rng(0)
    t = np.concatenate(
        [
            rng.normal(size=5000) * 10.0 ** rng.integers(-40, 40, 5000),
            rng.normal(size=200).astype(np.float32),  # already float32: kept
            [0.0, -0.0, 1e39, -1e39, 3.4028235e38, 1e-46, -1e-46],
        ]
    )
    r = float32_at_most(t)
    assert r.dtype == np.float32
    assert (r.astype(np.float64) <= t).all()
    with np.errstate(over="ignore"):
        above = np.nextafter(r, np.float32(np.inf)).astype(np.float64)
    assert (above > t).all()


def leaf_index_model(est):
    """est with every leaf value replaced by its tree's leaf index (base 0): predictions name the leaf."""
    doc = json.loads(est.get_booster().to_json())
    doc["base_score"] = [0.0] * len(doc["base_score"])
    for tree in doc["trees"]:
        tree["leaf_value"] = [float(i) for i in range(len(tree["leaf_value"]))]
    est._booster = _core.Booster.from_json(json.dumps(doc))
    return est, doc["trees"][0]


def walk(tree, row):
    """Leaf of a row in float64, by the tree layout's rules (the oracle)."""
    node = 0
    while True:
        v = float(row[tree["feature"][node]])
        words = (tree.get("categories") or [[]] * len(tree["feature"]))[node]
        if words:
            c = int(v) if v == v and v >= 0 and v == int(v) and v < 32 * len(words) else -1
            member = c >= 0 and words[c // 32] >> (c % 32) & 1
            left = tree["default_left"][node] != bool(member)
        elif np.isnan(v):
            left = tree["default_left"][node]
        else:
            left = v <= tree["threshold"][node]
        nxt = tree["left"][node] if left else tree["right"][node]
        if nxt < 0:
            return ~nxt
        node = nxt


def test_float32_inputs_at_the_thresholds_take_predicts_branch():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 4))  # float64 values: thresholds are not float32 numbers
    y = X[:, 0] + np.sign(X[:, 1]) + X[:, 2] * X[:, 3]
    est = RGBMRegressor(n_estimators=1, learning_rate=1.0, max_depth=6, min_samples_leaf=5, random_state=0)
    est, tree = leaf_index_model(est.fit(with_nans(X, rng, 0.05), y))
    assert len(tree["leaf_value"]) > 30
    rows = []
    for j, t in zip(tree["feature"], tree["threshold"]):
        low = float32_at_most(t)
        assert np.float64(low) != t  # a threshold float32 cannot hold
        for v in (low, np.nextafter(low, np.float32(np.inf)), np.nextafter(low, np.float32(-np.inf)), np.float32(t)):
            base = X[rng.integers(len(X), size=8)].astype(np.float32)
            base[:, j] = v
            base[::3, (j + 1) % 4] = np.nan
            rows.append(base)
    X32 = np.concatenate(rows)
    (out,) = run(to_onnx(est), X32)
    oracle = np.array([walk(tree, r) for r in X32.astype(np.float64)])
    assert (out[:, 0] == oracle).all()
    assert (est.predict(X32) == oracle).all()
    assert (est.predict(X32.astype(np.float64)) == oracle).all()


def categorical_data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    c1 = rng.integers(0, 40, n).astype(float)
    c2 = rng.integers(0, 300, n).astype(float)
    X = np.c_[c1, rng.normal(size=n), c2]
    X[rng.random(n) < 0.1, 0] = np.nan
    y = np.isin(c1, [1, 5, 7, 30, 33]) * 2.0 + (c2 % 7 == 0) + X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


def odd_codes(X, rng):
    """Values a categorical column may hold besides its codes: each follows the default side in predict."""
    X = X.copy()
    odd = [1.5, 5.0000005, -1.0, -0.0, 41.0, 299.75, 7.25, 1e9, -1e9, 65536.0, 3e10, np.nan]
    a = len(X) // 3
    X[:a, 0] = rng.choice(odd, a)
    X[a : 2 * a, 2] = rng.choice(odd, a)
    return X


@TREE_ENSEMBLE_5
def test_category_sets_route_exactly():
    X, y = categorical_data()
    est = RGBMRegressor(
        categorical_features=[0, 2], n_estimators=1, learning_rate=1.0, max_depth=6, min_data_per_group=5
    )
    est, tree = leaf_index_model(est.fit(X, y))
    assert any(tree.get("categories", []))
    X32 = odd_codes(X, np.random.default_rng(1)).astype(np.float32)
    model = to_onnx(est)
    assert "TreeEnsemble" in [n.op_type for n in model.graph.node]
    (out,) = run(model, X32)
    oracle = np.array([walk(tree, r) for r in X32.astype(np.float64)])
    assert (out[:, 0] == oracle).all()
    assert (est.predict(X32) == oracle).all()


@TREE_ENSEMBLE_5
def test_categorical_models_match_predict():
    X, y = categorical_data()
    X32 = odd_codes(X, np.random.default_rng(2)).astype(np.float32)
    reg = RGBMRegressor(categorical_features=[0, 2], n_estimators=100, min_data_per_group=5, random_state=0)
    np.testing.assert_allclose(run(to_onnx(reg.fit(X, y)), X32)[0][:, 0], reg.predict(X32), **TOL)
    clf = RGBMClassifier(categorical_features=[0, 2], n_estimators=50, min_data_per_group=5, random_state=0)
    clf.fit(X, np.digitize(y, [0.5, 1.5]))
    label, proba = run(to_onnx(clf), X32)
    np.testing.assert_allclose(proba, clf.predict_proba(X32), **TOL)


@pytest.mark.parametrize("categorical", [None, pytest.param([0], marks=TREE_ENSEMBLE_5)])
def test_single_leaf_trees(categorical):
    X, y = categorical_data(n=300)
    est = RGBMRegressor(categorical_features=categorical, n_estimators=3, min_samples_leaf=300).fit(X, y)
    assert all(len(t["feature"]) == 0 for t in json.loads(est.get_booster().to_json())["trees"])
    np.testing.assert_allclose(run(to_onnx(est), X)[0][:, 0], est.predict(X), **TOL)


@TREE_ENSEMBLE_5
def test_pandas_categories_are_codes_and_names_are_recorded():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    city = rng.choice(["x", "y", "z", "w"], 600)
    frame = pd.DataFrame({"city": pd.Categorical(city), "v": rng.normal(size=600)})
    target = (city == "y") | (city == "w")
    est = RGBMClassifier(categorical_features="auto", n_estimators=5, min_data_per_group=5).fit(frame, target)
    model = to_onnx(est)
    props = {p.key: p.value for p in model.metadata_props}
    assert json.loads(props["feature_names"]) == ["city", "v"]
    codes = np.c_[frame["city"].cat.codes.to_numpy(float), frame["v"].to_numpy()]
    label, proba = run(model, codes)
    np.testing.assert_allclose(proba, est.predict_proba(frame), **TOL)


# --------------------------------------------------------------------------- files and errors


def test_path_is_written_and_replaced(tmp_path, data):
    X, y = data
    est = RGBMRegressor(n_estimators=5).fit(X, y)
    path = tmp_path / "m.onnx"
    path.write_bytes(b"old")
    model = to_onnx(est, path)
    assert path.read_bytes() == model.SerializeToString()
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]  # no temporary file left
    np.testing.assert_allclose(run(onnx.load(str(path)), X)[0][:, 0], est.predict(X.astype(np.float32)), **TOL)
    with pytest.raises(TypeError, match="path"):
        to_onnx(est, 3)


def test_unfitted_and_foreign_estimators_are_refused(data):
    with pytest.raises(NotFittedError):
        to_onnx(RGBMClassifier())
    X, y = data
    with pytest.raises(TypeError, match="RGBMRegressor, RGBMClassifier or RGBMRanker"):
        to_onnx(LinearRegression().fit(np.nan_to_num(X), y))


def test_leaves_beyond_float32_are_refused(data):
    X, y = data
    est = RGBMRegressor(n_estimators=2).fit(X, y)
    doc = json.loads(est.get_booster().to_json())
    doc["trees"][1]["leaf_value"][0] = 1e39
    est._booster = _core.Booster.from_json(json.dumps(doc))
    with pytest.raises(ValueError, match="float32"):
        to_onnx(est)


def test_labels_onnx_cannot_hold_are_refused(data):
    X, y = data
    est = RGBMClassifier(n_estimators=2).fit(X, y > 0)
    est.classes_ = np.array([None, (1, 2)], dtype=object)
    with pytest.raises(ValueError, match="cannot be ONNX labels"):
        to_onnx(est)


def test_missing_onnx_package_is_named(monkeypatch, data):
    X, y = data
    est = RGBMRegressor(n_estimators=2).fit(X, y)
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match="pip install onnx"):
        to_onnx(est)


# --------------------------------------------------------------------------- command line


def test_cli_export_round_trip(tmp_path, data):
    X, y = data
    labels = np.where(y > 1, "hi", "lo")
    RGBMClassifier(n_estimators=30, random_state=0).fit(X, labels).save_model(tmp_path / "m.json")
    out = subprocess.run(
        [sys.executable, "-m", "rgbm_rs", "export", "--format", "onnx", "m.json", "m.onnx"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "m.onnx" in out.stdout and "label, probabilities" in out.stdout
    est = load_model(tmp_path / "m.json")
    label, proba = run(onnx.load(str(tmp_path / "m.onnx")), X)
    X32 = X.astype(np.float32)
    np.testing.assert_allclose(proba, est.predict_proba(X32), **TOL)
    keep = decided(est.decision_function(X32))
    assert (label[keep] == est.predict(X32)[keep]).all()
