"""Plots of fitted rgbm_rs models, drawn with matplotlib only.

matplotlib is imported when a function is called, so ``import rgbm_rs``
does not need it. Every function takes ``ax=None`` (a new figure is created
when omitted) and returns what it drew on: the Axes, or for
:func:`plot_selection_comparison` the Figure holding its two Axes.

Example::

    from rgbm_rs import RGBMClassifier
    from rgbm_rs.plotting import plot_importance, plot_tree

    est = RGBMClassifier(n_estimators=50).fit(X, y)
    plot_importance(est, max_num_features=10)
    plot_tree(est, tree_index=0)
"""

from __future__ import annotations

import textwrap
from numbers import Integral

import numpy as np

from ._introspect import (
    _category_labels,
    _check_categories,
    _check_feature_names,
    _feature_name,
    _n_outputs,
    _read_model,
    _split_codes,
    _walk,
)

__all__ = [
    "plot_cosine",
    "plot_importance",
    "plot_metric",
    "plot_rgb_families",
    "plot_selection_comparison",
    "plot_tree",
    "plot_weak_learnability",
]

#: gid of the artists ``plot_tree`` draws, so they can be found again.
SPLIT_GID = "rgbm-tree-split"
LEAF_GID = "rgbm-tree-leaf"
EDGE_GID = "rgbm-tree-edge"
EDGE_LABEL_GID = "rgbm-tree-edge-label"


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("rgbm_rs.plotting needs matplotlib: pip install matplotlib") from None
    return plt


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize)
    return ax


def _fmt(value, precision):
    return f"{float(value):.{precision}g}"


def _check_precision(precision):
    if not isinstance(precision, Integral) or isinstance(precision, bool) or precision < 1:
        raise ValueError(f"precision must be an int >= 1 (significant digits), got {precision!r}")
    return int(precision)


def _require_booster(estimator, what):
    if not hasattr(estimator, "_booster"):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"{what} needs a fitted rgbm_rs estimator; {type(estimator).__name__} is not fitted")


def _default_feature_names(estimator, n_features):
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    return [f"f{j}" for j in range(n_features)]


# ---------------------------------------------------------------- importance
def plot_importance(
    estimator,
    importance_type="gain",
    max_num_features=None,
    ax=None,
    *,
    feature_names=None,
    title="Feature importance",
    xlabel=None,
    ylabel="Feature",
    color=None,
    height=0.6,
    grid=True,
    figsize=None,
):
    """Horizontal bar chart of feature importances, largest on top.

    Parameters
    ----------
    estimator : RGBMRegressor or RGBMClassifier
        A fitted estimator.
    importance_type : {"gain", "split"}, default="gain"
        ``"gain"``: total split gain per feature (``feature_importances_``);
        ``"split"``: number of splits per feature. Both are normalised to sum
        to 1 (all zeros when no tree splits).
    max_num_features : int or None, default=None
        Show only this many of the most important features; None shows all.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is created when omitted.
    feature_names : sequence of str, optional
        Bar labels. Defaults to ``estimator.feature_names_in_`` when the
        estimator was fitted on a DataFrame, else ``"f0", "f1", ...``.
    title, xlabel, ylabel : str or None
        Axes labels; None leaves one unset. ``xlabel`` defaults to a
        description of ``importance_type``.
    color : matplotlib color, optional
        Bar colour.
    height : float, default=0.6
        Bar height.
    grid : bool, default=True
        Draw a grid.
    figsize : tuple of float, optional
        Figure size when ``ax`` is None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes with one bar per shown feature (``ax.patches``), widths equal
        to the importances; ties keep feature order.

    Raises
    ------
    ValueError
        If ``importance_type`` is unknown, ``max_num_features`` is not a
        positive int, or the number of feature names is wrong.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    if importance_type not in ("gain", "split"):
        raise ValueError(f"importance_type must be 'gain' or 'split', got {importance_type!r}")
    if max_num_features is not None and (
        not isinstance(max_num_features, Integral) or isinstance(max_num_features, bool) or max_num_features < 1
    ):
        raise ValueError(f"max_num_features must be None or an int >= 1, got {max_num_features!r}")
    _require_booster(estimator, "plot_importance")
    if importance_type == "gain":
        values = np.asarray(estimator.feature_importances_, dtype=float)
    else:
        values = np.asarray(estimator._booster.feature_importances("split"), dtype=float)
    n_features = len(values)
    if feature_names is None:
        names = _default_feature_names(estimator, n_features)
    else:
        names = _check_feature_names(feature_names, n_features)
    order = np.argsort(-values, kind="stable")
    if max_num_features is not None:
        order = order[:max_num_features]
    # barh draws bottom-up: reverse so the largest ends on top.
    order = order[::-1]
    ax = _new_axes(ax, figsize)
    y = np.arange(len(order))
    bar_kwargs = {} if color is None else {"color": color}
    ax.barh(y, values[order], height=height, align="center", **bar_kwargs)
    ax.set_yticks(y)
    ax.set_yticklabels([names[j] for j in order])
    if len(order):
        ax.set_ylim(-0.5 - height / 2, len(order) - 0.5 + height / 2)
    if xlabel is None:
        xlabel = "total split gain (normalised)" if importance_type == "gain" else "number of splits (normalised)"
    if title is not None:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if grid:
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    return ax


# ---------------------------------------------------------------- metric curves
def _evals_result(obj):
    if isinstance(obj, dict):
        return obj, None
    if not hasattr(obj, "evals_result_"):
        raise ValueError(
            f"{type(obj).__name__} has no evals_result_: fit it with evaluation data, "
            "or pass the {set_name: {metric_name: [values]}} dict directly"
        )
    return obj.evals_result_, getattr(obj, "best_iteration_", None)


def plot_metric(
    estimator_or_evals_result,
    metric=None,
    ax=None,
    *,
    dataset_names=None,
    best_iteration=None,
    title="Metric during training",
    xlabel="boosting round",
    ylabel=None,
    grid=True,
    figsize=None,
):
    """Curves of an evaluation metric over the boosting rounds.

    Parameters
    ----------
    estimator_or_evals_result : estimator or dict
        A fitted estimator with an ``evals_result_`` attribute, or such a
        dict ``{set_name: {metric_name: [value after each round]}}``.
    metric : str, optional
        Which metric to draw; defaults to the first one found.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is created when omitted.
    dataset_names : sequence of str, optional
        Only these evaluation sets (default: all that record ``metric``).
    best_iteration : int, optional
        Round to mark with a vertical dashed line. Defaults to the
        estimator's ``best_iteration_`` when it has one (nothing is marked
        for a plain dict). Rounds are numbered from 1: the value at round
        ``i`` is element ``i - 1`` of the lists, and ``best_iteration`` is
        drawn at ``x = best_iteration``.
    title, xlabel, ylabel : str or None
        Axes labels; ``ylabel`` defaults to the metric name.
    grid : bool, default=True
        Draw a grid.
    figsize : tuple of float, optional
        Figure size when ``ax`` is None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes with one line per evaluation set (``ax.lines``, labelled with
        the set name; x = 1, 2, ..., y = the recorded values), plus the
        best-iteration line when one is marked.

    Raises
    ------
    ValueError
        If there is nothing to plot: no ``evals_result_``, an empty result,
        an unknown metric or evaluation set, or only empty curves.
    """
    evals, est_best = _evals_result(estimator_or_evals_result)
    if best_iteration is None:
        best_iteration = est_best
    if not isinstance(evals, dict) or not evals:
        raise ValueError("no evaluation results to plot: evals_result_ is empty (was evaluation data given to fit?)")
    for name, metrics in evals.items():
        if not isinstance(metrics, dict):
            raise ValueError(
                f"evals_result must map set names to {{metric_name: [values]}} dicts; set {name!r} holds "
                f"{type(metrics).__name__}"
            )
    if dataset_names is None:
        sets = list(evals)
    else:
        sets = [str(s) for s in dataset_names] if not isinstance(dataset_names, str) else [dataset_names]
        unknown = [s for s in sets if s not in evals]
        if unknown:
            raise ValueError(f"unknown evaluation sets {unknown}; available: {list(evals)}")
    available = []
    for s in sets:
        for m in evals[s]:
            if m not in available:
                available.append(m)
    if not available:
        raise ValueError("no metrics recorded in the evaluation results")
    if metric is None:
        metric = available[0]
    elif metric not in available:
        raise ValueError(f"metric {metric!r} was not recorded; available metrics: {available}")

    curves = []
    for s in sets:
        values = evals[s].get(metric)
        if values is None:
            continue
        y = np.asarray(values, dtype=float).ravel()
        if len(y):
            curves.append((s, y))
    if not curves:
        raise ValueError(f"metric {metric!r} has no recorded values to plot")

    ax = _new_axes(ax, figsize)
    for s, y in curves:
        ax.plot(np.arange(1, len(y) + 1), y, label=str(s))
    if best_iteration is not None:
        ax.axvline(
            float(best_iteration), color="0.4", linestyle="--", lw=1.0, label=f"best iteration ({best_iteration})"
        )
    if title is not None:
        ax.set_title(title)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    ax.set_ylabel(metric if ylabel is None else ylabel)
    ax.legend(loc="best")
    if grid:
        ax.grid(True, alpha=0.3)
    return ax


# ---------------------------------------------------------------- one tree
def _tree_layout(tree):
    """Positions of every node: leaves at x = 0, 1, ... in left-to-right
    order, each parent centred over its two children, y = -depth.

    Returns the pre-order walk and a dict (kind, index) -> (x, y).
    """
    walk = list(_walk(tree))
    pos = {}
    next_leaf = 0
    for kind, idx, depth, _parent, _side in walk:
        if kind == "leaf":  # pre-order visits leaves left to right
            pos[(kind, idx)] = (float(next_leaf), -float(depth))
            next_leaf += 1
    for kind, idx, depth, _parent, _side in reversed(walk):  # children before parents
        if kind == "node":
            xs = []
            for side in ("left", "right"):
                c = int(tree[side][idx])
                xs.append(pos[("node", c) if c >= 0 else ("leaf", -c - 1)][0])
            pos[(kind, idx)] = ((xs[0] + xs[1]) / 2.0, -float(depth))
    return walk, pos


def _set_rule(name, labels, members_left, max_labels):
    """``name ∈ {a, b, …}`` (``∉`` when the members go right, so that the
    rule holds on the left edge), at most ``max_labels`` labels, wrapped."""
    shown = [str(v) for v in labels[:max_labels]]
    if len(labels) > max_labels:
        shown.append(f"… (+{len(labels) - max_labels} more)")
    rule = f"{name} {'∈' if members_left else '∉'} {{{', '.join(shown)}}}"
    return "\n".join(textwrap.wrap(rule, width=_RULE_WIDTH, break_long_words=False, break_on_hyphens=False))


#: Characters per line of a category-set rule before it wraps.
_RULE_WIDTH = 36


def plot_tree(
    estimator,
    tree_index=0,
    feature_names=None,
    precision=3,
    ax=None,
    *,
    max_category_labels=5,
    fontsize=None,
    figsize=None,
):
    """Draw one tree of the model.

    Split nodes show their rule with their gain and training row count;
    leaves show their value (learning rate included). A threshold node's
    rule is ``feature <= threshold``; a category-set node's is
    ``feature ∈ {label, label, ...}``, the categories whose rows go left
    (``∉`` for a set whose rows go right, which fit never writes). The edge
    to the left child is labelled "yes" (the rule holds), the other "no";
    the edge missing values follow also says "missing" (for a category set,
    missing values and categories not in the set follow that edge).

    The labels are the categories recorded at fit (pandas ``category`` or
    string columns, also kept by ``save_model``); where fit saw integer
    codes (an array with ``categorical_features``), or for a bare model
    document or booster, the codes. A set longer than
    ``max_category_labels`` shows its first labels in code order followed
    by ``"… (+k more)"``, and a long rule wraps onto several lines (at
    spaces); :func:`rgbm_rs.trees_to_dataframe` and
    :func:`rgbm_rs.dump_model` list every category.

    Parameters
    ----------
    estimator : fitted estimator, booster or model document
        Anything :func:`rgbm_rs._introspect.dump_model` accepts.
    tree_index : int, default=0
        Which tree, ``0 <= tree_index < n_trees``. With several outputs tree
        ``t`` belongs to output ``t % n_outputs``.
    feature_names : sequence of str, optional
        Defaults to ``feature_names_in_`` when available, else ``"f{j}"``.
    precision : int, default=3
        Significant digits of thresholds, gains and values.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure sized to the tree is created when omitted.
    max_category_labels : int, default=5
        Most categories a category-set node lists before abbreviating.
    fontsize : float, optional
        Font size of the node text (matplotlib's default when omitted).
    figsize : tuple of float, optional
        Figure size when ``ax`` is None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes. Node boxes are Text artists with gid ``SPLIT_GID`` (one per
        internal node) or ``LEAF_GID`` (one per leaf); edges are lines with
        gid ``EDGE_GID``, their labels Text with gid ``EDGE_LABEL_GID``.
        Leaves sit at x = 0, 1, ... in left-to-right order, y = -depth.

    Raises
    ------
    IndexError
        If ``tree_index`` is out of range (the message gives the valid range).
    TypeError
        If ``tree_index`` is not an int.
    ValueError
        If ``precision`` or ``max_category_labels`` is invalid or the tree
        is malformed.
    """
    precision = _check_precision(precision)
    if (
        not isinstance(max_category_labels, Integral)
        or isinstance(max_category_labels, bool)
        or max_category_labels < 1
    ):
        raise ValueError(f"max_category_labels must be an int >= 1, got {max_category_labels!r}")
    if not isinstance(tree_index, Integral) or isinstance(tree_index, bool):
        raise TypeError(f"tree_index must be an int, got {type(tree_index).__name__}")
    doc, default_names, categories = _read_model(estimator)
    n_trees = len(doc["trees"])
    if not 0 <= tree_index < n_trees:
        valid = "the model has no trees" if n_trees == 0 else f"valid range is 0..{n_trees - 1}"
        raise IndexError(f"tree_index {tree_index} is out of range: {valid} ({n_trees} trees)")
    names = _check_feature_names(feature_names if feature_names is not None else default_names, doc.get("n_features"))
    categories = _check_categories(categories, doc.get("n_features"))
    tree = doc["trees"][tree_index]
    walk, pos = _tree_layout(tree)
    n_leaves = len(tree["leaf_value"])
    depth = max(-y for _x, y in pos.values())

    if ax is None:
        if figsize is None:
            figsize = (min(max(4.0, 1.9 * n_leaves), 60.0), min(max(2.5, 1.5 * (depth + 1)), 40.0))
        ax = _new_axes(None, figsize)
    text_kw = {"ha": "center", "va": "center", "zorder": 3}
    if fontsize is not None:
        text_kw["fontsize"] = fontsize
    edge_kw = {"ha": "center", "va": "center", "zorder": 2, "fontsize": (fontsize or 10) * 0.8, "color": "0.25"}

    for kind, idx, _depth, _parent, _side in walk:
        x, y = pos[(kind, idx)]
        if kind == "leaf":
            ax.text(
                x,
                y,
                f"leaf {idx}\nvalue: {_fmt(tree['leaf_value'][idx], precision)}",
                bbox={"boxstyle": "round,pad=0.4", "fc": "#e8f4e0", "ec": "#4a7a3a"},
                gid=LEAF_GID,
                **text_kw,
            )
            continue
        j = int(tree["feature"][idx])
        missing_left = bool(tree["default_left"][idx])
        codes = _split_codes(tree, idx)
        if codes is None:
            rule = f"{_feature_name(j, names)} <= {_fmt(tree['threshold'][idx], precision)}"
        else:
            # Members leave the default side: they go left unless missing values do.
            labels = _category_labels(j, codes, categories)
            rule = _set_rule(_feature_name(j, names), labels, not missing_left, int(max_category_labels))
        label = f"{rule}\ngain: {_fmt(tree['gain'][idx], precision)}\ncount: {_fmt(tree['count'][idx], precision)}"
        split_box = {"boxstyle": "round,pad=0.4", "fc": "#e6eef8", "ec": "#3a5a8a"}
        ax.text(x, y, label, bbox=split_box, gid=SPLIT_GID, **text_kw)
        for side in ("left", "right"):
            c = int(tree[side][idx])
            cx, cy = pos[("node", c) if c >= 0 else ("leaf", -c - 1)]
            ax.plot([x, cx], [y, cy], color="0.5", lw=1.0, zorder=1, gid=EDGE_GID)
            text = "yes" if side == "left" else "no"
            if missing_left == (side == "left"):
                text += ", missing"
            ax.text(
                (x + cx) / 2.0,
                (y + cy) / 2.0,
                text,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                gid=EDGE_LABEL_GID,
                **edge_kw,
            )

    ax.set_xlim(-0.7, n_leaves - 0.3)
    ax.set_ylim(-depth - 0.6, 0.6)
    ax.set_axis_off()
    k = _n_outputs(doc)
    ax.set_title(f"Tree {tree_index}" + (f" (output {tree_index % k})" if k > 1 else ""))
    return ax


# ---------------------------------------------------------------- RGBM runs
def _run_curves(estimator, metric):
    log = getattr(estimator, "training_log_", None)
    if log is None:
        raise ValueError(f"{type(estimator).__name__} has no training_log_: fit it first")
    values = log.get(metric)
    if values is None:
        raise ValueError(f"training_log_ has no {metric!r}; available: {sorted(log)}")
    if len(values) == 0 or any(v is None for v in values):
        hint = " (fit with record_train_loss=True)" if metric == "train_loss" else ""
        raise ValueError(f"the estimator has no recorded {metric!r}{hint}")
    y = np.asarray(values, dtype=float)
    seconds = np.cumsum(np.asarray(log["seconds"], dtype=float))
    searched = np.asarray(log["features_searched"], dtype=float)
    n_features = getattr(estimator, "n_features_in_", None)
    if n_features is None:
        raise ValueError(f"{type(estimator).__name__} has no n_features_in_: fit it first")
    passes = np.cumsum(searched) / float(n_features)
    return y, seconds, passes, _default_label(estimator, log)


def _default_label(estimator, log):
    """ "t = ..." from the estimator's selection settings when it has them.

    For ``selection="random"`` t counts candidate *splits*, which can exceed
    the number of features searched, so the parameter is the better label.
    """
    selection = getattr(estimator, "selection", None)
    size = getattr(estimator, "selection_size", None)
    if selection == "full":
        return f"t = {int(log['features_searched'][0])} (full)"
    if selection is not None and size is not None:
        return f"t = {size}"
    return f"t = {int(log['features_searched'][0])}"


def plot_selection_comparison(
    estimators,
    labels=None,
    metric="train_loss",
    ax=None,
    *,
    relative=True,
    reference=None,
    title=None,
    figsize=(11.0, 4.2),
):
    """Compare runs of random-then-greedy selection (e.g. several t).

    Two panels in the manner of Figure 5 of Lu & Mazumder (2020): the metric
    against cumulative wall time, and against passes over the features
    (cumulative ``features_searched`` / ``n_features_in_``; one pass = one
    full-selection round).

    Parameters
    ----------
    estimators : sequence of fitted estimators
        Fitted with ``record_train_loss=True`` (for ``metric="train_loss"``).
    labels : sequence of str, optional
        One per estimator. Default ``"t = {selection_size}"``, or
        ``"t = {features searched in round 1} (full)"`` for
        ``selection="full"`` (and ``"t = {features searched in round 1}"``
        for objects without selection parameters).
    metric : str, default="train_loss"
        A key of ``training_log_`` holding one number per round.
    ax : sequence of two matplotlib Axes, optional
        Where to draw the time and passes panels; a new figure when omitted.
    relative : bool, default=True
        Plot ``metric - reference`` on a log scale (values <= 0, e.g. the
        best point itself, are left out). False plots the plain metric.
    reference : float, optional
        The reference of ``relative``; defaults to the smallest value over
        all runs.
    title : str, optional
        Figure title.
    figsize : tuple of float, default=(11, 4.2)
        Figure size when ``ax`` is None.

    Returns
    -------
    matplotlib.figure.Figure
        The figure; its first two Axes (time, passes) carry one line per
        estimator, in the order given.

    Raises
    ------
    ValueError
        If no estimators are given, an estimator has no recorded metric
        (``record_train_loss=False``), or ``labels``/``ax`` have the wrong
        length.
    """
    if hasattr(estimators, "training_log_"):
        estimators = [estimators]
    estimators = list(estimators)
    if not estimators:
        raise ValueError("plot_selection_comparison needs at least one fitted estimator")
    runs = [_run_curves(est, metric) for est in estimators]
    if labels is None:
        labels = [r[3] for r in runs]
    else:
        labels = [str(lab) for lab in labels]
        if len(labels) != len(estimators):
            raise ValueError(f"{len(labels)} labels given for {len(estimators)} estimators")

    if ax is None:
        plt = _pyplot()
        fig, axes = plt.subplots(1, 2, figsize=figsize)
    else:
        axes = list(ax)
        if len(axes) != 2:
            raise ValueError(f"ax must hold two Axes (time, passes), got {len(axes)}")
        fig = axes[0].figure

    if relative:
        ref = min(float(np.min(r[0])) for r in runs) if reference is None else float(reference)
    any_positive = False
    for (y, seconds, passes, _t), label in zip(runs, labels):
        if relative:
            y = y - ref
            y = np.where(y > 0, y, np.nan)
            any_positive = any_positive or bool(np.any(np.isfinite(y)))
        axes[0].plot(seconds, y, lw=1.3, label=label)
        axes[1].plot(passes, y, lw=1.3, label=label)
    if not relative:
        ylabel = metric
    elif reference is None:
        ylabel = f"{metric} above its lowest value ({ref:.4g})"
    else:
        ylabel = f"{metric} above {ref:.4g}"
    for a, xlabel in zip(axes, ("cumulative training time (s)", "passes (features searched / n_features)")):
        if relative and any_positive:
            a.set_yscale("log")
        a.set_xlabel(xlabel)
        a.set_ylabel(ylabel)
        a.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    if title is not None:
        fig.suptitle(title)
    if ax is None:
        fig.tight_layout()
    return fig


# ---------------------------------------------------------------- the papers' diagnostics
def _log_series(estimator, keys):
    """The per-round values of ``training_log_[key]`` for each key, as float
    arrays with NaN where a round has none."""
    log = getattr(estimator, "training_log_", None)
    if log is None:
        raise ValueError(f"{type(estimator).__name__} has no training_log_: fit it first")
    out = []
    for key in keys:
        values = log.get(key)
        if values is None:
            raise ValueError(f"training_log_ has no {key!r}; available: {sorted(log)}")
        out.append(np.array([np.nan if v is None else float(v) for v in values], dtype=float))
    if not any(np.isfinite(v).any() for v in out):
        raise ValueError(f"the estimator recorded no {' or '.join(map(repr, keys))} (a Dask fit, or no tree split)")
    return out


def _per_round(ax, figsize, lines):
    """Axes with one line per (values per round, label, plot keywords)."""
    ax = _new_axes(ax, figsize)
    for values, label, kw in lines:
        ax.plot(np.arange(1, len(values) + 1), values, **{"lw": 1.2, "label": label, **kw})
    return ax


def _finish_rounds(ax, ylabel, title, default_title):
    ax.set_xlabel("round")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title if title is not None else default_title)
    return ax


def plot_weak_learnability(estimator, ax=None, *, title=None, figsize=(6.4, 4.0)):
    """Sun, Zhang & Zhou's weak-learnability ratios per round.

    ``gamma`` (sum_l G_l^2/n_l over sum_i g_i^2) and ``gamma_star`` (the
    same in the hessian metric) of each round's first tree, from
    ``training_log_``, on a log scale. Their paper's Table 2 reports each
    ratio's minimum over the rounds: a larger gamma* means a faster linear
    rate for Newton boosting, while gamma does not order the rates.

    Returns
    -------
    matplotlib.axes.Axes
        Two lines, labelled ``gamma`` and ``gamma*`` (rounds where a ratio
        is undefined are gaps).

    Raises
    ------
    ValueError
        If the estimator is not fitted or recorded neither ratio.
    """
    gamma, star = _log_series(estimator, ("gamma", "gamma_star"))
    ax = _per_round(ax, figsize, [(gamma, "gamma", {}), (star, "gamma*", {})])
    ax.set_yscale("log")
    return _finish_rounds(ax, "ratio", title, "Weak learnability per round")


def plot_cosine(estimator, ax=None, *, theta=None, title=None, figsize=(6.4, 4.0)):
    """The cosine of each round's tree with the residual, and its running minimum.

    ``cosine`` = ``abs(<r, b>) / ||r||`` from ``training_log_`` per round, and
    ``theta``, its running minimum: the realised minimal cosine angle of Lu &
    Mazumder (2020), whose square sets RGBM's linear rate.

    Parameters
    ----------
    theta : float, optional
        A reference level drawn as a horizontal line, e.g.
        :func:`rgbm_rs.theory.type1_theta` for the selection's p and t.

    Returns
    -------
    matplotlib.axes.Axes
        Lines labelled ``cosine`` and ``running minimum`` (and ``reference``).

    Raises
    ------
    ValueError
        If the estimator is not fitted or recorded no cosine.
    """
    cosine, low = _log_series(estimator, ("cosine", "theta"))
    ax = _per_round(ax, figsize, [(cosine, "cosine", {"alpha": 0.7}), (low, "running minimum", {"lw": 1.6})])
    if theta is not None:
        ax.axhline(float(theta), color="k", ls="--", lw=1.0, label="reference")
    return _finish_rounds(ax, "|<r, b>| / ||r||", title, "Cosine of each tree with the residual")


def plot_rgb_families(estimator, ax=None, *, title=None, figsize=(6.4, 4.4)):
    """How often RGB chose each family: a (nodes x lambda) grid of counts.

    Reads ``rgb_family_counts_`` of a model fitted with ``booster="rgb"``.

    Returns
    -------
    matplotlib.axes.Axes
        An image whose rows are the node limits and columns the radii seen,
        each cell annotated with its count.

    Raises
    ------
    ValueError
        If the estimator was not fitted with ``booster="rgb"``.
    """
    counts = getattr(estimator, "rgb_family_counts_", None)
    if counts is None:
        raise ValueError(f"{type(estimator).__name__} has no rgb_family_counts_: fit it with booster='rgb'")
    nodes = sorted({n for n, _ in counts})
    lambdas = sorted({lam for _, lam in counts})
    grid = np.zeros((len(nodes), len(lambdas)))
    for (n, lam), c in counts.items():
        grid[nodes.index(n), lambdas.index(lam)] = c
    ax = _new_axes(ax, figsize)
    ax.imshow(grid, cmap="Blues", aspect="auto", origin="lower")
    for i in range(len(nodes)):
        for j in range(len(lambdas)):
            if grid[i, j]:
                ax.text(j, i, f"{int(grid[i, j])}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(lambdas)), [f"{lam:g}" for lam in lambdas])
    ax.set_yticks(range(len(nodes)), [str(n) for n in nodes])
    ax.set_xlabel("lambda (leaf L2 radius)")
    ax.set_ylabel("internal nodes n")
    ax.set_title(title if title is not None else "RGB: chosen families")
    return ax
