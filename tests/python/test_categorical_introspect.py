"""Category-set splits in every view of a fitted tree: plot_tree, trees_to_dataframe, dump_model.

The oracle is routing: each training row is sent down the trees by the
dataframe's description alone (set membership by label, thresholds), and the
leaves it reaches must be the core's ``apply``.
"""

import json
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from rgbm_rs import (  # noqa: E402
    RGBMClassifier,
    RGBMRegressor,
    dump_model,
    load_model,
    plotting,
    tree_to_dict,
    trees_to_dataframe,
)
from rgbm_rs._core import Booster  # noqa: E402
from rgbm_rs.plotting import plot_tree  # noqa: E402

ADULT = Path("/work/shared/data/adult")
LABELS = list("abcdefgh")
MEMBERS = {"b", "e", "g"}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _frame(seed=0, n=2000, dtype="category"):
    """A non-ordinal category effect (b, e, g against the rest) that only a
    category set captures in one split, plus a numeric column."""
    rng = np.random.default_rng(seed)
    c = rng.choice(LABELS, n).astype(object)
    x = rng.normal(size=n)
    y = (np.isin(c, list(MEMBERS)) ^ (x > 1.0)).astype(int)
    c[:25] = None  # missing categories follow the default side
    col = pd.Series(c, dtype="category").cat.set_categories(LABELS) if dtype == "category" else pd.Series(c)
    return pd.DataFrame({"c": col, "x": x}), y


@pytest.fixture(scope="module")
def cat_model():
    X, y = _frame()
    return RGBMClassifier(n_estimators=6, max_depth=3, random_state=0).fit(X, y), X


@pytest.fixture(scope="module")
def codes_model():
    X, y = _frame()
    Xn = np.column_stack([X["c"].cat.codes.to_numpy().astype(float), X["x"].to_numpy()])
    Xn[Xn[:, 0] < 0, 0] = np.nan
    est = RGBMClassifier(n_estimators=6, max_depth=3, categorical_features=[0], random_state=0).fit(Xn, y)
    return est, Xn


def _route_leaves(df, X):
    """Leaf index of every row of X in every tree, from the dataframe alone.

    ``X`` is a frame (values compared by their ``str``) or an array.
    """
    cols = [X.iloc[:, j] for j in range(X.shape[1])] if hasattr(X, "iloc") else [X[:, j] for j in range(X.shape[1])]
    nodes = df.set_index("node_id")
    out = np.empty((X.shape[0], df.tree_index.nunique()), dtype=np.int64)
    for t, g in df.groupby("tree_index"):
        root = g.iloc[0].node_id
        at = np.array([root] * X.shape[0], dtype=object)
        while True:
            open_ = np.array([not nodes.loc[n, "is_leaf"] for n in at])
            if not open_.any():
                break
            for nid in set(at[open_]):
                row = nodes.loc[nid]
                here = at == nid
                v = cols[row.feature][here]
                missing = pd.isna(np.asarray(v, dtype=object))
                if row.decision_type == "<=":
                    vals = np.asarray(v, dtype=float)
                    left = np.where(missing, bool(row.default_left), vals <= float(row.threshold))
                else:
                    members = set(row.threshold.split("||"))
                    inside = np.array([not m and _label(x) in members for x, m in zip(v, missing)], dtype=bool)
                    left = inside if row.decision_type == "==" else ~inside
                at[here] = np.where(left, row.left_child, row.right_child)
        out[:, t] = [int(n.split("-L")[1]) for n in at]
    return out


def _label(v):
    """How the dataframe writes a value of an integer-code column: the code."""
    return str(int(v)) if isinstance(v, (float, np.floating)) else str(v)


def _category_nodes(dump):
    for item in dump["trees"]:
        stack = [item["tree"]]
        while stack:
            node = stack.pop()
            if "leaf_index" in node:
                continue
            if "categories" in node:
                yield item["tree_index"], node
            stack += [node["left"], node["right"]]


def _split_texts(ax):
    return [t.get_text() for t in ax.texts if t.get_gid() == plotting.SPLIT_GID]


def _rule(text):
    """The rule of a split box: the lines before its gain, joined back."""
    lines = text.split("\n")
    return " ".join(lines[: next(i for i, s in enumerate(lines) if s.startswith("gain: "))])


# ---------------------------------------------------------------- labels from a frame
@pytest.mark.parametrize("dtype", ["category", "str"])
def test_routing_by_the_dataframe_reproduces_apply(dtype):
    X, y = _frame(dtype=dtype)
    est = RGBMClassifier(n_estimators=6, max_depth=3, categorical_features="auto", random_state=0).fit(X, y)
    df = trees_to_dataframe(est)
    sets = df[df.decision_type == "=="]
    assert len(sets) >= 1 and set(sets.feature_name) == {"c"}
    assert df.loc[0, "threshold"] == "b||e||g"  # the root is the set the labels were drawn from
    np.testing.assert_array_equal(_route_leaves(df, X), est.apply(X))


def test_dataframe_and_dump_agree_through_the_fitted_categories(cat_model):
    est, _X = cat_model
    cats = est._categories_["c"]
    assert cats == LABELS
    dump = est.dump_model()
    df = est.trees_to_dataframe().set_index("node_id")
    found = list(_category_nodes(dump))
    assert found
    for t, node in found:
        labels = [cats[c] for c in node["categories"]]
        assert node["category_labels"] == labels
        row = df.loc[f"{t}-N{node['node_index']}"]
        assert row.threshold == "||".join(labels)
        assert row.decision_type == ("!=" if node["default_left"] else "==")
    # numeric nodes keep their float thresholds in the object column
    numeric = df[df.decision_type == "<="]
    assert len(numeric) and all(isinstance(v, float) for v in numeric.threshold)
    assert df.threshold.dtype == object and df.threshold[df.is_leaf].isna().all()
    assert df.decision_type[df.is_leaf].isna().all()


def test_plot_shows_the_labels(cat_model):
    est, _X = cat_model
    ax = plot_tree(est, tree_index=0)
    rules = [_rule(s) for s in _split_texts(ax)]
    assert "c ∈ {b, e, g}" in rules
    edges = sorted(t.get_text() for t in ax.texts if t.get_gid() == plotting.EDGE_LABEL_GID)
    assert "no, missing" in edges  # missing categories go right, with the non-members
    assert not any("<= 0" in r and r.startswith("c ") for r in rules)


def test_saved_document_keeps_the_labels(cat_model, tmp_path):
    est, X = cat_model
    path = tmp_path / "m.json"
    est.save_model(path)
    doc = json.loads(path.read_text())
    assert trees_to_dataframe(doc).equals(trees_to_dataframe(est))
    assert dump_model(doc) == dump_model(est)
    assert "c ∈ {b, e, g}" in [_rule(s) for s in _split_texts(plot_tree(load_model(path)))]
    # the bare model document has no categories: codes
    bare = trees_to_dataframe(json.loads(est._booster.to_json()))
    assert bare.loc[0, "threshold"] == "1||4||6"
    for bad, message in (("abc", "one list or null per feature"), ([LABELS], "1 entries for a model with 2")):
        with pytest.raises(ValueError, match=message):
            dump_model({**doc, "categories": bad})


# ---------------------------------------------------------------- integer codes
def test_numpy_codes_model_shows_codes(codes_model):
    est, Xn = codes_model
    df = trees_to_dataframe(est)
    assert df.loc[0, "decision_type"] == "==" and df.loc[0, "threshold"] == "1||4||6"
    np.testing.assert_array_equal(_route_leaves(df, Xn), est.apply(Xn))
    for _t, node in _category_nodes(dump_model(est)):
        assert node["category_labels"] == node["categories"]
    assert "f0 ∈ {1, 4, 6}" in [_rule(s) for s in _split_texts(plot_tree(est))]


def test_members_going_right_read_not_in(codes_model):
    """A set on the right (default_left true) is a valid model the core
    routes; the views say "!=" / "∉" and still route as the core does."""
    est, Xn = codes_model
    doc = json.loads(est._booster.to_json())
    flipped = 0
    for tree in doc["trees"]:
        for i, words in enumerate(tree.get("categories") or []):
            if words:
                tree["left"][i], tree["right"][i] = tree["right"][i], tree["left"][i]
                tree["default_left"][i] = True
                flipped += 1
    assert flipped
    booster = Booster.from_json(json.dumps(doc))
    np.testing.assert_array_equal(booster.predict_leaf(np.ascontiguousarray(Xn)), est.apply(Xn))
    df = trees_to_dataframe(doc)
    assert df.loc[0, "decision_type"] == "!=" and df.loc[0, "threshold"] == "1||4||6"
    np.testing.assert_array_equal(_route_leaves(df, Xn), est.apply(Xn))
    ax = plot_tree(doc)
    assert "f0 ∉ {1, 4, 6}" in [_rule(s) for s in _split_texts(ax)]
    edges = [t.get_text() for t in ax.texts if t.get_gid() == plotting.EDGE_LABEL_GID]
    assert "yes, missing" in edges


# ---------------------------------------------------------------- long sets
def test_long_sets_are_abbreviated():
    rng = np.random.default_rng(3)
    k, n = 40, 8000
    names = [f"cat{i:02d}" for i in range(k)]
    codes = rng.integers(0, k, n)
    effect = rng.permutation(np.r_[np.ones(k // 2), -np.ones(k // 2)])
    X = pd.DataFrame({"c": pd.Categorical.from_codes(codes, names)})
    y = effect[codes] + 0.1 * rng.normal(size=n)
    est = RGBMRegressor(n_estimators=1, max_depth=1, max_cat_threshold=64, random_state=0).fit(X, y)
    node = est.dump_model()["trees"][0]["tree"]
    labels = node["category_labels"]
    assert len(labels) > 5 and labels == [names[c] for c in node["categories"]]
    assert set(labels) in ({names[c] for c in range(k) if effect[c] > 0}, {names[c] for c in range(k) if effect[c] < 0})
    rule = _rule(_split_texts(plot_tree(est))[0])
    assert rule == f"c ∈ {{{', '.join(labels[:5])}, … (+{len(labels) - 5} more)}}"
    (text,) = _split_texts(plot_tree(est, max_category_labels=2))
    assert _rule(text) == f"c ∈ {{{labels[0]}, {labels[1]}, … (+{len(labels) - 2} more)}}"
    (text,) = _split_texts(plot_tree(est, max_category_labels=k))
    assert _rule(text) == f"c ∈ {{{', '.join(labels)}}}"
    rule_lines = text.split("\n")[:-2]  # wrapped at spaces
    assert len(rule_lines) > 1 and all(len(line) <= 36 for line in rule_lines)
    assert trees_to_dataframe(est).loc[0, "threshold"] == "||".join(labels)
    for bad in (0, -1, 2.0, True, None):
        with pytest.raises(ValueError, match="max_category_labels"):
            plot_tree(est, max_category_labels=bad)


# ---------------------------------------------------------------- tree_to_dict's categories
def test_tree_to_dict_categories_argument(codes_model):
    est, _Xn = codes_model
    tree = json.loads(est._booster.to_json())["trees"][0]
    root = tree_to_dict(tree, ["c", "x"], [LABELS, None])
    assert root["categories"] == [1, 4, 6] and root["category_labels"] == ["b", "e", "g"]
    assert tree_to_dict(tree)["category_labels"] == [1, 4, 6]
    assert tree_to_dict(tree, categories=[None, None])["category_labels"] == [1, 4, 6]
    assert tree_to_dict(tree, categories=[np.array(LABELS), None])["category_labels"] == ["b", "e", "g"]
    assert tree_to_dict(tree, categories=[["a", "b"], None])["category_labels"] == ["b", 4, 6]  # beyond the list
    with pytest.raises(ValueError, match="categories has only 0 entries"):
        tree_to_dict(tree, categories=[])
    with pytest.raises(TypeError, match="categories must be a sequence"):
        tree_to_dict(tree, categories="abc")


# ---------------------------------------------------------------- LightGBM's layout
def test_layout_matches_lightgbm_on_the_same_frame():
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame()
    theirs = lgb.LGBMClassifier(n_estimators=2, num_leaves=4, verbose=-1).fit(X, y).booster_.trees_to_dataframe()
    ours = RGBMClassifier(n_estimators=2, max_leaves=4, max_depth=None, random_state=0).fit(X, y).trees_to_dataframe()
    for df in (theirs, ours):
        assert df.threshold.dtype == object
        root = df.iloc[0]
        assert root.decision_type == "=="
        assert set(ours.decision_type.dropna()) <= {"==", "<="}
    # LightGBM writes the codes of the same categories, ours the labels: the same set goes left
    assert {LABELS[int(c)] for c in theirs.iloc[0].threshold.split("||")} == set(ours.iloc[0].threshold.split("||"))
    # a model without category sets has a float threshold column in both
    plain = lgb.LGBMClassifier(n_estimators=1, num_leaves=4, verbose=-1).fit(X[["x"]], y)
    assert plain.booster_.trees_to_dataframe().threshold.dtype == np.float64
    assert RGBMClassifier(n_estimators=1).fit(X[["x"]], y).trees_to_dataframe().threshold.dtype == np.float64


# ---------------------------------------------------------------- adult
@pytest.mark.skipif(not (ADULT / "adult-train.csv").exists(), reason="the adult data set is not in /work/shared/data")
def test_adult_labels_route_as_apply():
    cols = [
        "age",
        "workclass",
        "fnlwgt",
        "education",
        "education-num",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "capital-gain",
        "capital-loss",
        "hours-per-week",
        "native-country",
        "income",
    ]
    df = pd.read_csv(ADULT / "adult-train.csv", header=None, names=cols, skipinitialspace=True, na_values="?")
    df = df.dropna(subset=["income"]).iloc[:8000]
    y = (df.pop("income") == ">50K").astype(int).to_numpy()
    est = RGBMClassifier(n_estimators=8, max_depth=4, categorical_features="auto", random_state=0).fit(df, y)
    table = est.trees_to_dataframe()
    sets = table[table.decision_type == "=="]
    assert len(sets)
    for _, row in sets.iterrows():
        assert set(row.threshold.split("||")) <= set(df[row.feature_name].dropna().astype(str))
    np.testing.assert_array_equal(_route_leaves(table, df), est.apply(df))
    for t in sorted(set(sets.tree_index))[:2]:
        rules = [_rule(s) for s in _split_texts(plot_tree(est, tree_index=t))]
        for _, row in sets[sets.tree_index == t].iterrows():
            labels = row.threshold.split("||")
            shown = ", ".join(labels[:5]) + (f", … (+{len(labels) - 5} more)" if len(labels) > 5 else "")
            assert f"{row.feature_name} ∈ {{{shown}}}" in rules
