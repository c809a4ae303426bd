"""rgbm_rs.plotting: what is drawn matches the model, and bad arguments fail clearly."""

import json
import types

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from rgbm_rs import (  # noqa: E402
    RGBMClassifier,
    RGBMRegressor,
    plotting,  # noqa: E402
)
from rgbm_rs.plotting import plot_importance, plot_metric, plot_selection_comparison, plot_tree  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=300, n_features=6, n_informative=3, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def clf(data):
    X, y = data
    return RGBMClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X, y)


def _save(obj, tmp_path, name="plot.png"):
    fig = obj if isinstance(obj, Figure) else obj.figure
    path = tmp_path / name
    fig.savefig(path)
    assert path.stat().st_size > 1024
    return path


def _bars(ax):
    """(label, width) of the bars from top to bottom (ticks sit at the bar centres)."""
    bars = sorted(ax.patches, key=lambda p: -(p.get_y() + p.get_height() / 2))
    ticks = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())), key=lambda tl: -tl[0])
    assert len(ticks) == len(bars)
    for (pos, _), bar in zip(ticks, bars):
        assert pos == pytest.approx(bar.get_y() + bar.get_height() / 2)
    return [(label, bar.get_width()) for (_, label), bar in zip(ticks, bars)]


# ---------------------------------------------------------------- plot_importance
def test_importance_bars_are_the_importances(clf, tmp_path):
    ax = plot_importance(clf)
    assert isinstance(ax, Axes)
    bars = _bars(ax)
    assert len(bars) == clf.n_features_in_
    imp = clf.feature_importances_
    assert {name: w for name, w in bars} == pytest.approx({f"f{j}": imp[j] for j in range(len(imp))})
    widths = [w for _, w in bars]
    assert widths == sorted(widths, reverse=True)  # largest on top
    _save(ax, tmp_path)


def test_importance_max_num_features_and_split(clf):
    ax = plot_importance(clf, max_num_features=3)
    bars = _bars(ax)
    assert len(bars) == 3
    imp = clf.feature_importances_
    top = np.argsort(-imp, kind="stable")[:3]
    assert [name for name, _ in bars] == [f"f{j}" for j in top]
    assert [w for _, w in bars] == pytest.approx(imp[top])

    split = clf._booster.feature_importances("split")
    ax = plot_importance(clf, importance_type="split")
    assert {n: w for n, w in _bars(ax)} == pytest.approx({f"f{j}": split[j] for j in range(len(split))})
    assert "splits" in ax.get_xlabel()


def test_importance_uses_given_axes_and_names(clf):
    fig, ax = plt.subplots()
    names = ["a", "b", "c", "d", "e", "f"]
    assert plot_importance(clf, ax=ax, feature_names=names, title="T") is ax
    assert {n for n, _ in _bars(ax)} == set(names)
    assert ax.get_title() == "T"


@pytest.mark.filterwarnings("error")
def test_grid_off_gives_no_grid(clf):
    for ax in (plot_importance(clf, grid=False), plot_metric(EVALS, grid=False)):
        assert not any(line.get_visible() for line in ax.get_xgridlines() + ax.get_ygridlines())


def test_importance_dataframe_names(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    cols = [f"col_{j}" for j in range(X.shape[1])]
    est = RGBMRegressor(n_estimators=5, max_depth=2, random_state=0).fit(pd.DataFrame(X, columns=cols), y)
    assert {n for n, _ in _bars(plot_importance(est))} == set(cols)


def test_importance_bad_arguments(clf):
    with pytest.raises(ValueError, match="importance_type must be 'gain' or 'split'"):
        plot_importance(clf, importance_type="cover")
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="max_num_features"):
            plot_importance(clf, max_num_features=bad)
    with pytest.raises(ValueError, match="2 feature names given for a model with 6 features"):
        plot_importance(clf, feature_names=["a", "b"])
    with pytest.raises(NotFittedError):
        plot_importance(RGBMClassifier())


# ---------------------------------------------------------------- plot_metric
EVALS = {
    "train": {"logloss": [0.69, 0.6, 0.5, 0.45], "error": [0.4, 0.3, 0.2, 0.1]},
    "valid": {"logloss": [0.7, 0.65, 0.63, 0.64], "error": [0.45, 0.4, 0.35, 0.36]},
}


def _curves(ax):
    return {ln.get_label(): ln for ln in ax.lines}


def test_metric_from_dict(tmp_path):
    ax = plot_metric(EVALS)
    assert isinstance(ax, Axes)
    curves = _curves(ax)
    assert set(curves) == {"train", "valid"}  # no best-iteration line for a plain dict
    for name in ("train", "valid"):
        np.testing.assert_array_equal(curves[name].get_xdata(), [1, 2, 3, 4])
        np.testing.assert_array_equal(curves[name].get_ydata(), EVALS[name]["logloss"])  # first metric
    assert ax.get_ylabel() == "logloss"
    _save(ax, tmp_path)

    ax = plot_metric(EVALS, metric="error", dataset_names=["valid"])
    assert list(_curves(ax)) == ["valid"]
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), EVALS["valid"]["error"])


def test_metric_from_estimator_stub_marks_best_iteration():
    stub = types.SimpleNamespace(evals_result_=EVALS, best_iteration_=3)
    fig, ax = plt.subplots()
    assert plot_metric(stub, metric="error", ax=ax) is ax
    curves = _curves(ax)
    np.testing.assert_array_equal(curves["train"].get_ydata(), EVALS["train"]["error"])
    best = [ln for ln in ax.lines if ln.get_label().startswith("best iteration")]
    assert len(best) == 1
    np.testing.assert_array_equal(best[0].get_xdata(), [3, 3])
    # without best_iteration_ nothing is marked; an explicit value overrides
    ax = plot_metric(types.SimpleNamespace(evals_result_=EVALS))
    assert len(ax.lines) == 2
    ax = plot_metric(EVALS, best_iteration=2)
    assert [ln.get_xdata()[0] for ln in ax.lines if ln.get_label().startswith("best")] == [2]


def test_metric_nothing_to_plot():
    with pytest.raises(ValueError, match="no evals_result_"):
        plot_metric(object())
    with pytest.raises(ValueError, match="evals_result_ is empty"):
        plot_metric({})
    with pytest.raises(ValueError, match="evals_result_ is empty"):
        plot_metric(types.SimpleNamespace(evals_result_={}))
    with pytest.raises(ValueError, match=r"metric 'auc' was not recorded; available metrics: \['logloss', 'error'\]"):
        plot_metric(EVALS, metric="auc")
    with pytest.raises(ValueError, match="unknown evaluation sets"):
        plot_metric(EVALS, dataset_names=["test"])
    with pytest.raises(ValueError, match="no metrics recorded"):
        plot_metric({"train": {}})
    with pytest.raises(ValueError, match="no recorded values"):
        plot_metric({"train": {"l2": []}})
    with pytest.raises(ValueError, match="set 'train' holds list"):
        plot_metric({"train": [1.0, 2.0]})


# ---------------------------------------------------------------- plot_tree
def _texts(ax, gid):
    return [t for t in ax.texts if t.get_gid() == gid]


def test_tree_draws_every_node(clf, tmp_path):
    doc = json.loads(clf._booster.to_json())
    for t in (0, 7, 19):
        tree = doc["trees"][t]
        m, n_leaves = len(tree["feature"]), len(tree["leaf_value"])
        ax = plot_tree(clf, tree_index=t)
        assert isinstance(ax, Axes)
        splits, leaves = _texts(ax, plotting.SPLIT_GID), _texts(ax, plotting.LEAF_GID)
        assert (len(splits), len(leaves)) == (m, n_leaves)
        assert n_leaves == m + 1
        edge_labels = [t.get_text() for t in _texts(ax, plotting.EDGE_LABEL_GID)]
        assert len(edge_labels) == 2 * m
        assert sum("missing" in s for s in edge_labels) == m  # one missing direction per split
        assert sum(s.startswith("yes") for s in edge_labels) == m
        assert len([ln for ln in ax.lines if ln.get_gid() == plotting.EDGE_GID]) == 2 * m
        # split boxes state the rule; leaves show their values
        rules = sorted(s.get_text().split("\n")[0] for s in splits)
        expected = sorted(f"f{j} <= {thr:.3g}" for j, thr in zip(tree["feature"], tree["threshold"]))
        assert rules == expected
        shown = sorted(float(s.get_text().split("value: ")[1]) for s in leaves)
        np.testing.assert_allclose(shown, sorted(float(f"{v:.3g}") for v in tree["leaf_value"]))
    _save(ax, tmp_path)


def test_tree_layout(clf):
    pytest.importorskip("pandas")
    from rgbm_rs._introspect import trees_to_dataframe

    df = trees_to_dataframe(clf).set_index("node_id")
    t = 3
    ax = plot_tree(clf, tree_index=t)
    pos = {}
    for s in _texts(ax, plotting.LEAF_GID):
        pos[f"{t}-L{s.get_text().split()[1]}"] = s.get_position()
    leaf_x = sorted(x for x, _ in pos.values())
    assert leaf_x == list(range(len(leaf_x)))  # leaves evenly spaced
    for nid, (_x, y) in pos.items():
        assert y == -df.loc[nid, "depth"]
    # split nodes: match them to the dataframe by their order along x
    g = df[(df.tree_index == t)]
    splits = sorted(_texts(ax, plotting.SPLIT_GID), key=lambda s: (s.get_position()[1], s.get_position()[0]))
    assert len(splits) == int((~g.is_leaf).sum())
    # recompute the expected centring from the table
    xy = dict(pos)
    for nid in reversed(list(g.index)):  # pre-order reversed: children first
        row = g.loc[nid]
        if not row.is_leaf:
            xy[nid] = ((xy[row.left_child][0] + xy[row.right_child][0]) / 2, -row.depth)
    expected = sorted((xy[n][1], xy[n][0]) for n in g.index if not g.loc[n, "is_leaf"])
    got = [(s.get_position()[1], s.get_position()[0]) for s in splits]
    np.testing.assert_allclose(np.array(got).reshape(-1, 2), np.array(expected).reshape(-1, 2))


def test_tree_names_precision_and_axes(clf):
    names = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]
    fig, ax = plt.subplots()
    assert plot_tree(clf, 0, feature_names=names, precision=6, ax=ax) is ax
    doc = json.loads(clf._booster.to_json())
    tree = doc["trees"][0]
    root = f"{names[tree['feature'][0]]} <= {tree['threshold'][0]:.6g}"
    assert root in [s.get_text().split("\n")[0] for s in _texts(ax, plotting.SPLIT_GID)]
    assert ax.get_title() == "Tree 0"


def _flat_tree(feature, threshold, default_left, left, right, leaf_value):
    m = len(feature)
    return dict(
        feature=feature,
        threshold=threshold,
        default_left=default_left,
        left=left,
        right=right,
        gain=[1.0] * m,
        count=[10.0] * m,
        leaf_value=leaf_value,
    )


TINY = {
    "format_version": 1,
    "params": {},
    "n_features": 3,
    "base_score": [0.5, -0.25],
    "n_outputs": 2,
    "trees": [
        _flat_tree([0], [1.5], [True], [-1], [-2], [0.1, -0.1]),
        _flat_tree([2, 1], [0.0, -3.0], [False, True], [-1, -2], [1, -3], [1.0, 2.0, 3.0]),
        _flat_tree([], [], [], [], [], [0.7]),
    ],
}


def test_tree_from_a_model_document_with_two_outputs():
    ax = plot_tree(TINY, tree_index=1)
    assert ax.get_title() == "Tree 1 (output 1)"
    assert len(_texts(ax, plotting.SPLIT_GID)) == 2 and len(_texts(ax, plotting.LEAF_GID)) == 3
    labels = [s.get_text() for s in _texts(ax, plotting.EDGE_LABEL_GID)]
    assert sorted(labels) == sorted(["yes", "no, missing", "yes, missing", "no"])
    ax = plot_tree(TINY, tree_index=2)  # a single leaf
    assert len(_texts(ax, plotting.SPLIT_GID)) == 0 and len(_texts(ax, plotting.LEAF_GID)) == 1


def test_tree_bad_arguments(clf):
    with pytest.raises(IndexError, match=r"tree_index 20 is out of range: valid range is 0\.\.19"):
        plot_tree(clf, tree_index=20)
    with pytest.raises(IndexError, match="valid range is 0..19"):
        plot_tree(clf, tree_index=-1)
    with pytest.raises(TypeError, match="tree_index must be an int"):
        plot_tree(clf, tree_index=1.0)
    with pytest.raises(ValueError, match="precision"):
        plot_tree(clf, precision=0)
    with pytest.raises(ValueError, match="3 feature names"):
        plot_tree(clf, feature_names=["a", "b", "c"])
    with pytest.raises(NotFittedError):
        plot_tree(RGBMClassifier())


# ---------------------------------------------------------------- plot_selection_comparison
@pytest.fixture(scope="module")
def runs(data):
    X, y = data
    out = []
    for t in (2, 4):
        est = RGBMClassifier(
            n_estimators=25, max_depth=3, selection="random", selection_size=t, record_train_loss=True, random_state=0
        )
        out.append(est.fit(X, y))
    out.append(RGBMClassifier(n_estimators=25, max_depth=3, record_train_loss=True, random_state=0).fit(X, y))
    return out


def test_selection_comparison_curves(runs, tmp_path):
    fig = plot_selection_comparison(runs)
    assert isinstance(fig, Figure)
    time_ax, pass_ax = fig.axes[:2]
    best = min(min(e.training_log_["train_loss"]) for e in runs)
    assert len(time_ax.lines) == len(pass_ax.lines) == len(runs)
    for est, lt, lp in zip(runs, time_ax.lines, pass_ax.lines):
        log = est.training_log_
        np.testing.assert_allclose(lt.get_xdata(), np.cumsum(log["seconds"]))
        np.testing.assert_allclose(lp.get_xdata(), np.cumsum(log["features_searched"]) / est.n_features_in_)
        gap = np.asarray(log["train_loss"]) - best
        expected = np.where(gap > 0, gap, np.nan)
        np.testing.assert_allclose(lt.get_ydata(), expected)
        np.testing.assert_allclose(lp.get_ydata(), expected)
    assert time_ax.get_yscale() == "log" and pass_ax.get_yscale() == "log"
    assert [ln.get_label() for ln in time_ax.lines] == ["t = 2", "t = 4", "t = 6 (full)"]
    # full selection searches every feature each round: one pass per round
    np.testing.assert_allclose(pass_ax.lines[2].get_xdata(), np.arange(1, 26))
    _save(fig, tmp_path)


def test_selection_comparison_plain_loss_labels_and_axes(runs):
    fig, axes = plt.subplots(1, 2)
    out = plot_selection_comparison(runs[:2], labels=["a", "b"], relative=False, ax=axes)
    assert out is fig
    assert [ln.get_label() for ln in axes[0].lines] == ["a", "b"]
    np.testing.assert_allclose(axes[1].lines[0].get_ydata(), runs[0].training_log_["train_loss"])
    assert axes[0].get_yscale() == "linear"
    fig = plot_selection_comparison(runs[0], relative=True, reference=0.0)  # a single estimator is accepted
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata(), runs[0].training_log_["train_loss"])


def test_selection_comparison_bad_arguments(runs, data):
    X, y = data
    no_loss = RGBMClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="record_train_loss=True"):
        plot_selection_comparison([runs[0], no_loss])
    with pytest.raises(ValueError, match="2 labels given for 3 estimators"):
        plot_selection_comparison(runs, labels=["a", "b"])
    with pytest.raises(ValueError, match="at least one"):
        plot_selection_comparison([])
    with pytest.raises(ValueError, match="no training_log_"):
        plot_selection_comparison([RGBMClassifier()])
    with pytest.raises(ValueError, match="training_log_ has no 'auc'"):
        plot_selection_comparison(runs, metric="auc")
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="two Axes"):
        plot_selection_comparison(runs, ax=[ax])
