"""skl2onnx exports pipelines ending in an rgbm_rs estimator whole, after
``rgbm_rs.register_skl2onnx()``, with the nodes ``rgbm_rs.to_onnx`` writes."""

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from rgbm_rs import RGBMClassifier, RGBMRanker, RGBMRegressor, register_skl2onnx, to_onnx

skl2onnx = pytest.importorskip("skl2onnx")
ort = pytest.importorskip("onnxruntime")

from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def registered():
    register_skl2onnx()
    register_skl2onnx()  # twice is harmless


def data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)) * [1, 10, 100, 1, 1, 5] + [0, 50, -3, 0, 0, 1]
    X[rng.random(X.shape) < 0.05] = np.nan
    return X.astype(np.float32), rng


def pipeline(model):
    # Scaled columns and passed-through ones: the model sees them reordered.
    ct = ColumnTransformer([("scaled", StandardScaler(), [1, 2, 5])], remainder="passthrough")
    return Pipeline([("ct", ct), ("m", model)])


def run(onx, X, name="X"):
    sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {name: X})


@pytest.mark.parametrize(
    "labels,params",
    [
        (np.array([0, 1]), {}),
        (np.array(["ham", "spam"]), {"loss": "exponential"}),
        (np.array([3, 5, 9]), {}),
        (np.array(["a", "b", "c", "d"]), {"max_depth": 4}),
    ],
)
def test_a_classifier_pipeline_exports_whole(labels, params):
    X, rng = data()
    score = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 3]) + 0.5 * rng.normal(size=len(X))
    y = labels[np.digitize(score, np.quantile(score, np.linspace(0, 1, len(labels) + 1)[1:-1]))]
    pipe = pipeline(RGBMClassifier(n_estimators=40, random_state=0, **params)).fit(X, y)
    onx = skl2onnx.to_onnx(pipe, X[:1], options={"zipmap": False})
    label, proba = run(onx, X)
    np.testing.assert_allclose(proba, pipe.predict_proba(X), rtol=0, atol=1e-5)
    np.testing.assert_array_equal(label, pipe.predict(X))
    assert proba.dtype == np.float32

    # The default zipmap: one {class: probability} per row.
    label, proba = run(skl2onnx.to_onnx(pipe, X[:1]), X)
    np.testing.assert_array_equal(label, pipe.predict(X))
    np.testing.assert_allclose([[row[c] for c in pipe.classes_] for row in proba], pipe.predict_proba(X), atol=1e-5)

    # zipmap="columns": one output per class after the label.
    label, *columns = run(skl2onnx.to_onnx(pipe, X[:1], options={"zipmap": "columns"}), X)
    np.testing.assert_array_equal(label, pipe.predict(X))
    np.testing.assert_allclose(np.stack(columns, axis=1), pipe.predict_proba(X), atol=1e-5)

    # nocl: class positions as labels.
    label, _ = run(skl2onnx.to_onnx(pipe, X[:1], options={"zipmap": False, "nocl": True}), X)
    np.testing.assert_array_equal(label, np.searchsorted(pipe.classes_, pipe.predict(X)))


@pytest.mark.parametrize("loss", ["squared", "poisson", "huber"])
def test_a_regressor_pipeline_exports_whole(loss):
    X, rng = data(seed=1)
    y = np.exp(0.3 * np.nan_to_num(X[:, 0]) + 0.01 * np.nan_to_num(X[:, 1])) + rng.random(len(X))
    pipe = pipeline(RGBMRegressor(n_estimators=60, loss=loss, random_state=0)).fit(X, y)
    (pred,) = run(skl2onnx.to_onnx(pipe, X[:1]), X)
    assert pred.shape == (len(X), 1) and pred.dtype == np.float32
    np.testing.assert_allclose(pred[:, 0], pipe.predict(X), rtol=1e-5, atol=1e-5)


def test_double_input_gives_double_outputs():
    X, rng = data(seed=2)
    y = (np.nan_to_num(X[:, 0]) > 0).astype(int)
    Xd = X.astype(np.float64)
    reg = pipeline(RGBMRegressor(n_estimators=20, random_state=0)).fit(Xd, np.nan_to_num(Xd[:, 3]) + y)
    clf = pipeline(RGBMClassifier(n_estimators=20, random_state=0)).fit(Xd, y)
    (pred,) = run(skl2onnx.to_onnx(reg, Xd[:1]), Xd)
    assert pred.dtype == np.float64
    np.testing.assert_allclose(pred[:, 0], reg.predict(Xd), rtol=1e-6)
    _, proba = run(skl2onnx.to_onnx(clf, Xd[:1], options={"zipmap": False}), Xd)
    assert proba.dtype == np.float64
    np.testing.assert_allclose(proba, clf.predict_proba(Xd), atol=1e-6)


def test_a_ranker_exports_its_scores():
    X, rng = data(seed=3)
    grades = np.clip(np.floor(np.nan_to_num(X[:, 0]) + 2), 0, 4).astype(int)
    ranker = RGBMRanker(n_estimators=20, random_state=0).fit(X, grades, group=[40] * 10)
    (pred,) = run(skl2onnx.to_onnx(ranker, X[:1]), X)
    np.testing.assert_allclose(pred[:, 0], ranker.predict(X), rtol=1e-5, atol=1e-6)


def _tree_node(model_proto):
    (node,) = [n for n in model_proto.graph.node if n.op_type.startswith("TreeEnsemble")]
    return node


def test_the_same_trees_as_to_onnx():
    X, rng = data(seed=4)
    y = (np.nan_to_num(X[:, 0]) > 0).astype(int)
    clf = RGBMClassifier(n_estimators=15, random_state=0).fit(X, y)
    ours = _tree_node(to_onnx(clf))
    theirs = _tree_node(skl2onnx.to_onnx(clf, X[:1], options={"zipmap": False}))
    assert ours.op_type == theirs.op_type == "TreeEnsembleRegressor"
    assert ours.attribute == theirs.attribute
    with pytest.raises(
        ValueError, match=r"needs ai.onnx.ml opset 3 for its double thresholds, but the target opset is 2"
    ):
        skl2onnx.to_onnx(clf, X[:1], target_opset={"": 17, "ai.onnx.ml": 2})


def _categorical_data(n=3000, seed=5):
    rng = np.random.default_rng(seed)
    X = np.c_[rng.normal(size=n), rng.integers(0, 40, n), rng.normal(size=n) * 10].astype(np.float32)
    members = [1, 2, 3, 5, 7, 11, 12, 13, 20, 30, 33, 38]
    y = np.isin(X[:, 1], members).astype(int) + (X[:, 0] > 1)
    X[rng.random(n) < 0.03, 1] = np.nan
    return X, y, members


def _odd_codes(X, members):
    """Rows whose category is a member code, a member code plus a fraction, an unseen or negative code, NaN."""
    values = [*members, *(np.asarray(members) + 0.5), *(np.asarray(members) - 0.25), 40, 41, 1000, -1, -0.5, np.nan]
    odd = np.repeat(X[: len(values)], 1, axis=0).copy()
    odd[:, 1] = values
    return np.vstack([X, odd]).astype(np.float32)


@pytest.mark.parametrize("target_opset", [None, {"": 17, "ai.onnx.ml": 3}, {"": 21, "ai.onnx.ml": 5}])
def test_a_categorical_classifier_pipeline_exports_whole(target_opset):
    X, y, members = _categorical_data()
    # The ColumnTransformer puts the scaled column first: the categories are the model's feature 2.
    clf = RGBMClassifier(n_estimators=30, categorical_features=[2], min_data_per_group=5, random_state=0)
    pipe = Pipeline([("ct", ColumnTransformer([("s", StandardScaler(), [2])], remainder="passthrough")), ("m", clf)])
    pipe.fit(X, y)
    assert any(n["codes"] for t in pipe[-1].dump_model()["trees"] for n in _set_nodes(t["tree"]))
    onx = skl2onnx.to_onnx(pipe, X[:1], options={"zipmap": False}, target_opset=target_opset)
    assert _tree_node(onx).op_type == "TreeEnsembleRegressor"
    assert {o.domain: o.version for o in onx.opset_import}["ai.onnx.ml"] == 3
    Xt = _odd_codes(X[:500], members)
    label, proba = run(onx, Xt)
    np.testing.assert_allclose(proba, pipe.predict_proba(Xt), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(label, pipe.predict(Xt))


def test_a_categorical_regressor_matches_predict_and_to_onnx():
    X, y, members = _categorical_data(seed=8)
    reg = RGBMRegressor(n_estimators=60, categorical_features=[1], min_data_per_group=5, random_state=0)
    reg.fit(X, y + X[:, 2] / 10)
    onx = skl2onnx.to_onnx(reg, X[:1])
    Xt = _odd_codes(X[:500], members)
    (out,) = run(onx, Xt)
    expected = reg.predict(Xt)
    # The raw score in double, rounded to float once.
    np.testing.assert_allclose(out[:, 0], expected, rtol=2**-24, atol=0)
    (alone,) = run(to_onnx(reg), Xt)
    np.testing.assert_allclose(out, alone, rtol=2**-23, atol=0)


def _set_nodes(node):
    if "leaf_index" in node:
        return []
    return [{"codes": node.get("categories")}, *_set_nodes(node["left"]), *_set_nodes(node["right"])]


def test_float_labels_become_int64():
    X, _ = data(seed=6)
    y = np.where(np.nan_to_num(X[:, 0]) > 0, 2.0, -1.0)
    clf = RGBMClassifier(n_estimators=5).fit(X, y)
    label, _ = run(skl2onnx.to_onnx(clf, X[:1], options={"zipmap": False}), X)
    assert label.dtype == np.int64
    np.testing.assert_array_equal(label, clf.predict(X))


def test_initial_types_name_the_input():
    X, _ = data(seed=7)
    reg = pipeline(RGBMRegressor(n_estimators=5)).fit(X, np.nan_to_num(X[:, 0]))
    onx = skl2onnx.to_onnx(reg, initial_types=[("features", FloatTensorType([None, 6]))])
    (pred,) = run(onx, X, "features")
    np.testing.assert_allclose(pred[:, 0], reg.predict(X), rtol=1e-5, atol=1e-6)
    assert DoubleTensorType  # imported for the double test above
