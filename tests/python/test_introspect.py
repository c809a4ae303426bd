"""rgbm_rs._introspect: nested dumps and node tables of the model JSON."""

import copy
import json
import sys

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor
from rgbm_rs._introspect import dump_model, tree_to_dict, trees_to_dataframe


# ---------------------------------------------------------------- helpers
def _route(node, row):
    """Follow a row through a nested tree_to_dict result by hand."""
    while "leaf_index" not in node:
        v = row[node["split_feature"]]
        go_left = node["default_left"] if np.isnan(v) else v <= node["threshold"]
        node = node["left"] if go_left else node["right"]
    return node["value"]


def _reaching(node, X, idx, out):
    """Record, per internal node, how many of rows `idx` reach it."""
    stack = [(node, idx)]
    while stack:
        node, idx = stack.pop()
        if "leaf_index" in node:
            continue
        out[node["node_index"]] = len(idx)
        v = X[idx, node["split_feature"]]
        left = np.where(np.isnan(v), node["default_left"], v <= node["threshold"])
        stack.append((node["left"], idx[left]))
        stack.append((node["right"], idx[~left]))
    return out


def _model_doc(est):
    return json.loads(est._booster.to_json())


@pytest.fixture(scope="module")
def reg_data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 5))
    X[rng.random(400) < 0.1, 1] = np.nan  # exercise the learned missing direction
    y = X[:, 0] * np.nan_to_num(X[:, 1]) + np.sin(2 * X[:, 2]) + 0.1 * rng.normal(size=400)
    return X, y


@pytest.fixture(scope="module")
def reg_model(reg_data):
    X, y = reg_data
    return RGBMRegressor(n_estimators=15, max_depth=3, min_samples_leaf=5, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def clf_model(reg_data):
    X, y = reg_data
    labels = (y > np.median(y)).astype(int)
    est = RGBMClassifier(n_estimators=10, max_depth=None, max_leaves=7, min_samples_leaf=5, random_state=1)
    return est.fit(X, labels)


# A hand-written two-output model: 2 rounds x 2 outputs, one single-leaf tree.
def _tree(feature, threshold, default_left, left, right, leaf_value):
    m = len(feature)
    return {
        "feature": feature,
        "threshold": threshold,
        "default_left": default_left,
        "left": left,
        "right": right,
        "gain": [float(10 - i) for i in range(m)],
        "count": [float(100 - 10 * i) for i in range(m)],
        "leaf_value": leaf_value,
    }


TINY = {
    "format_version": 1,
    "params": {},
    "n_features": 3,
    "base_score": [0.5, -0.25],
    "n_outputs": 2,
    "trees": [
        _tree([0], [1.5], [True], [-1], [-2], [0.1, -0.1]),  # round 0, output 0
        _tree([2, 1], [0.0, -3.0], [False, True], [-1, -2], [1, -3], [1.0, 2.0, 3.0]),  # round 0, output 1
        _tree([], [], [], [], [], [0.7]),  # round 1, output 0: a single leaf
        _tree([1], [2.0], [False], [-2], [-1], [5.0, 6.0]),  # round 1, output 1 (leaf 1 on the left)
    ],
}


# ---------------------------------------------------------------- routing = native prediction
@pytest.mark.parametrize("model", ["reg_model", "clf_model"])
def test_hand_routing_reproduces_each_tree(model, reg_data, request):
    est = request.getfixturevalue(model)
    X, _ = reg_data
    dump = dump_model(_model_doc(est))
    assert len(dump["trees"]) == est._booster.n_trees
    for item in dump["trees"]:
        t = item["tree_index"]
        by_hand = np.array([_route(item["tree"], row) for row in X])
        np.testing.assert_array_equal(by_hand, est._booster.predict_trees(X, t, t + 1))


def test_hand_routing_sums_to_predictions(reg_model, reg_data):
    X, _ = reg_data
    dump = dump_model(_model_doc(reg_model))
    total = dump["base_score"] + sum(np.array([_route(it["tree"], row) for row in X]) for it in dump["trees"])
    np.testing.assert_allclose(total, reg_model.predict(X), rtol=1e-12, atol=1e-12)


def test_counts_are_the_training_rows_reaching_each_node(reg_model, reg_data):
    X, _ = reg_data
    for item in dump_model(_model_doc(reg_model))["trees"]:
        reached = _reaching(item["tree"], X, np.arange(len(X)), {})
        df_counts = {}
        stack = [item["tree"]]
        while stack:
            node = stack.pop()
            if "leaf_index" not in node:
                df_counts[node["node_index"]] = node["count"]
                stack += [node["left"], node["right"]]
        assert df_counts == {k: float(v) for k, v in reached.items()}
        assert item["tree"]["count"] == len(X)


# ---------------------------------------------------------------- structure
@pytest.mark.parametrize("model", ["reg_model", "clf_model"])
def test_dataframe_structure(model, request):
    pytest.importorskip("pandas")
    est = request.getfixturevalue(model)
    doc = _model_doc(est)
    df = trees_to_dataframe(doc)
    assert list(df.columns) == [
        "tree_index",
        "output",
        "node_id",
        "depth",
        "is_leaf",
        "feature",
        "feature_name",
        "threshold",
        "decision_type",
        "default_left",
        "left_child",
        "right_child",
        "parent",
        "gain",
        "count",
        "value",
    ]
    # no category sets: the float threshold column and "<=" of before
    assert df["threshold"].dtype == np.float64
    assert (df.decision_type[~df.is_leaf] == "<=").all() and df.decision_type[df.is_leaf].isna().all()
    assert df["node_id"].is_unique
    assert (df["output"] == 0).all()
    for t, g in df.groupby("tree_index"):
        tree = doc["trees"][t]
        n_internal, n_leaves = int((~g.is_leaf).sum()), int(g.is_leaf.sum())
        assert n_leaves == n_internal + 1
        assert (n_internal, n_leaves) == (len(tree["feature"]), len(tree["leaf_value"]))
        assert g.iloc[0]["depth"] == 0 and g.iloc[0]["parent"] is None  # pre-order: root first
        if est.max_depth is not None:
            assert g["depth"].max() <= est.max_depth
        if est.max_leaves is not None:
            assert n_leaves <= est.max_leaves
        internal = g[~g.is_leaf].set_index("node_id")
        leaves = g[g.is_leaf].set_index("node_id")
        # every node except the root is the child of exactly one internal node
        children = list(internal.left_child) + list(internal.right_child)
        assert sorted(children) == sorted(set(g.node_id) - {f"{t}-N0" if n_internal else f"{t}-L0"})
        # children are one level deeper and name their parent
        for nid, row in internal.iterrows():
            for c in (row.left_child, row.right_child):
                child = g.set_index("node_id").loc[c]
                assert child.depth == row.depth + 1 and child.parent == nid
        # the leaf values are the tree's, internal nodes have none
        np.testing.assert_array_equal(sorted(leaves.value), sorted(tree["leaf_value"]))
        assert internal.value.isna().all() and leaves[["gain", "threshold"]].isna().all().all()
        # leaves count their training rows: a node's count is the sum of its children's
        counts = g.set_index("node_id")["count"]
        assert (leaves["count"] >= 1).all()
        for _, row in internal.iterrows():
            assert counts[row.left_child] + counts[row.right_child] == row["count"]
        assert (leaves.feature == -1).all() and leaves.feature_name.isna().all()
        assert leaves.default_left.isna().all() and internal.default_left.notna().all()
        # a parent's count is at least each internal child's, and two internal children add up to it
        for _, row in internal.iterrows():
            kids = [c for c in (row.left_child, row.right_child) if c in internal.index]
            assert all(internal.loc[c, "count"] <= row["count"] for c in kids)
            if len(kids) == 2:
                assert internal.loc[kids, "count"].sum() == row["count"]


def test_dataframe_gains_and_splits_match_importances(reg_model):
    pytest.importorskip("pandas")
    df = trees_to_dataframe(_model_doc(reg_model))
    internal = df[~df.is_leaf]
    p = reg_model.n_features_in_
    gain = internal.groupby("feature")["gain"].sum().reindex(range(p), fill_value=0.0).to_numpy()
    np.testing.assert_allclose(gain / gain.sum(), reg_model.feature_importances_, rtol=1e-12)
    splits = internal.groupby("feature").size().reindex(range(p), fill_value=0).to_numpy()
    np.testing.assert_allclose(splits / splits.sum(), reg_model._booster.feature_importances("split"), rtol=1e-12)


def test_dump_model_top_level(reg_model):
    doc = _model_doc(reg_model)
    dump = dump_model(doc)
    assert dump["n_features"] == reg_model.n_features_in_
    assert dump["n_outputs"] == 1
    assert dump["base_score"] == pytest.approx(reg_model._booster.base_score[0])
    assert [it["tree_index"] for it in dump["trees"]] == list(range(reg_model.n_estimators_))
    assert all(it["output"] == 0 for it in dump["trees"])
    json.dumps(dump)  # plain JSON types only


def test_inputs_are_not_modified_and_other_forms_agree(reg_model, tmp_path):
    pytest.importorskip("pandas")
    doc = _model_doc(reg_model)
    before = copy.deepcopy(doc)
    dump = dump_model(doc)
    trees_to_dataframe(doc)
    tree_to_dict(doc["trees"][0])
    assert doc == before
    assert dump_model(reg_model._booster.to_json()) == dump
    assert dump_model(reg_model._booster) == dump
    assert dump_model(reg_model) == dump
    path = tmp_path / "m.json"
    reg_model.save_model(path)
    assert dump_model(json.loads(path.read_text())) == dump


# ---------------------------------------------------------------- feature names
def test_feature_names(reg_model):
    pytest.importorskip("pandas")
    doc = _model_doc(reg_model)
    names = ["age", "height", "weight", "income", "zip"]
    df = trees_to_dataframe(doc, feature_names=names)
    internal = df[~df.is_leaf]
    assert (internal.feature_name == [names[j] for j in internal.feature]).all()
    root = tree_to_dict(doc["trees"][0], names)
    assert root["feature_name"] == names[root["split_feature"]]
    assert tree_to_dict(doc["trees"][0])["feature_name"] == f"f{root['split_feature']}"
    with pytest.raises(ValueError, match="3 feature names given for a model with 5 features"):
        dump_model(doc, feature_names=names[:3])
    with pytest.raises(ValueError, match="only 0 feature names"):
        tree_to_dict(doc["trees"][0], [])


def test_feature_names_from_a_dataframe_fit(reg_data):
    pd = pytest.importorskip("pandas")
    X, y = reg_data
    cols = ["a", "b", "c", "d", "e"]
    est = RGBMRegressor(n_estimators=3, max_depth=2, random_state=0).fit(pd.DataFrame(X, columns=cols), y)
    df = trees_to_dataframe(est)
    internal = df[~df.is_leaf]
    assert set(internal.feature_name) <= set(cols)
    assert (internal.feature_name == [cols[j] for j in internal.feature]).all()
    # the raw document has no names: f{j}
    assert set(trees_to_dataframe(_model_doc(est))[~df.is_leaf].feature_name) <= {f"f{j}" for j in range(5)}


# ---------------------------------------------------------------- several outputs
def test_hand_written_two_output_model():
    dump = dump_model(TINY)
    assert dump["n_outputs"] == 2
    assert dump["base_score"] == [0.5, -0.25]
    assert [it["output"] for it in dump["trees"]] == [0, 1, 0, 1]
    assert dump["trees"][2]["tree"] == {"leaf_index": 0, "value": 0.7}
    t1 = dump["trees"][1]["tree"]
    assert (t1["split_feature"], t1["threshold"], t1["default_left"]) == (2, 0.0, False)
    assert t1["left"] == {"leaf_index": 0, "value": 1.0}
    assert t1["right"]["node_index"] == 1 and t1["right"]["feature_name"] == "f1"
    assert t1["right"]["right"] == {"leaf_index": 2, "value": 3.0}
    # routing by hand: x = (0, -5, 1) goes right at node 0, left at node 1 -> leaf 1
    assert _route(t1, np.array([0.0, -5.0, 1.0])) == 2.0
    assert _route(t1, np.array([0.0, np.nan, 1.0])) == 2.0  # NaN follows default_left=True
    assert _route(dump["trees"][3]["tree"], np.array([0.0, 1.0, 0.0])) == 6.0  # left child is leaf 1

    pytest.importorskip("pandas")
    df = trees_to_dataframe(TINY)
    assert df.groupby("tree_index")["output"].first().tolist() == [0, 1, 0, 1]
    assert df.groupby("tree_index").size().tolist() == [3, 5, 1, 3]
    single = df[df.tree_index == 2].iloc[0]
    assert single.node_id == "2-L0" and single.is_leaf and single.depth == 0 and single.value == 0.7
    row = df.set_index("node_id").loc["1-N1"]
    assert (row.left_child, row.right_child, row.parent, row.depth) == ("1-L1", "1-L2", "1-N0", 1)
    assert df.set_index("node_id").loc["3-L1", "depth"] == 1


def test_n_outputs_default():
    doc = copy.deepcopy(TINY)
    del doc["n_outputs"]  # inferred from the list of base scores
    assert [it["output"] for it in dump_model(doc)["trees"]] == [0, 1, 0, 1]
    doc["base_score"] = 0.5  # a float: one output
    dump = dump_model(doc)
    assert dump["n_outputs"] == 1 and dump["base_score"] == 0.5
    assert all(it["output"] == 0 for it in dump["trees"])


# ---------------------------------------------------------------- bad input
def test_malformed_trees_raise():
    good = TINY["trees"][1]
    cycle = dict(good, right=[1, 0])  # node 1 points back to the root
    with pytest.raises(ValueError, match="malformed tree"):
        tree_to_dict(cycle)
    dangling = dict(good, left=[-1, -7])
    with pytest.raises(ValueError, match="malformed tree"):
        tree_to_dict(dangling)
    short = dict(good, gain=[1.0])
    with pytest.raises(ValueError, match="'gain' has 1 entries, expected 2"):
        tree_to_dict(short)
    with pytest.raises(ValueError, match="must have 3 leaves"):
        tree_to_dict(dict(good, leaf_value=[1.0]))
    with pytest.raises(ValueError, match="lacks the arrays"):
        tree_to_dict({"feature": []})
    with pytest.raises(ValueError, match="no 'trees' list"):
        dump_model({"n_features": 2})
    with pytest.raises(ValueError, match="not a valid model JSON"):
        dump_model("{not json")
    with pytest.raises(TypeError, match="expected a model document"):
        dump_model(42)


def test_unfitted_estimator():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="not fitted"):
        dump_model(RGBMRegressor())


def test_missing_pandas_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        trees_to_dataframe(TINY)


def test_empty_model_gives_empty_frame():
    pytest.importorskip("pandas")
    df = trees_to_dataframe(dict(TINY, trees=[]))
    assert len(df) == 0 and list(df.columns)[:3] == ["tree_index", "output", "node_id"]
