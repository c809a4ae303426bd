"""A fitted model in the tree format of the ``shap`` package.

``shap.TreeExplainer`` accepts a dict ``{"trees": [...], "base_offset": ...}``
whose trees are arrays over all nodes (internal and leaf): ``children_left``
/ ``children_right`` (-1 at leaves), ``children_default`` (the child missing
values follow), ``features``, ``thresholds`` (a row goes left when
``x <= threshold``, as here), ``values`` (one column per output) and
``node_sample_weight`` (the covers TreeSHAP weighs by). Nothing here
imports shap.

That format has no category-set split (its bitmask splits, read from
LightGBM dumps, hold codes 1 to 31 only, and shap reads XGBoost's
categorical splits only through XGBoost's own predict). A set split on
feature j is written as threshold nodes on j that cut the line into
segments: each run of consecutive member codes c..d, ``(c - 0.5, d + 0.5]``,
goes to the member child, and the segments between and around them (the
other codes, unseen and negative ones) to the other child, NaN too, as
``predict`` routes them. A value that is not an integer is routed as the
nearest code (a half-integer as the code below), where ``predict`` takes it
as no category (the other side). Below the segments, each child's subtree
is written once per segment (a tree, so the size grows with the number of
runs along each path) or, with ``shared=True``, once for all the segments
of its side (a graph of about the model's size).

The covers of a child written for r segments are divided by r. TreeSHAP
reads covers only through the ratio of a child's to its parent's, and
along a path these ratios multiply to (cover of the node reached) / (cover
of the root); the r copies or paths together carry the child's cover, and
each chain node's cover is the sum of its children's, so every expectation
TreeSHAP takes without a background data set (path-dependent, and the
conditioning behind interaction values) is that of the model's tree. With a
background data set shap walks each tree by parent links and recounts the
covers per node, which a graph does not support: ``shared=True`` is for
explanations without one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._trees import read_ensemble

if TYPE_CHECKING:
    from ._base import RGBMBase
    from ._trees import Tree

__all__ = ["to_shap"]


def _segments(codes: list[int]) -> list[tuple[float, bool]]:
    """The segments of the line a category set cuts, ascending, as (upper
    end, member?): each run of consecutive member codes c..d is the member
    segment (c - 0.5, d + 0.5]; the others, and the last (upper end +inf),
    hold the other codes. Half-integers are float32 numbers, so shap's
    background-data TreeSHAP, which reads thresholds as float32, cuts the
    same segments."""
    out: list[tuple[float, bool]] = []
    start = prev = codes[0]
    for c in [*codes[1:], None]:
        if c is not None and c == prev + 1:
            prev = c
            continue
        out += [(start - 0.5, False), (prev + 0.5, True)]
        if c is not None:
            start = prev = c
    out.append((math.inf, False))
    return out


def _n_nodes(tree: Tree, shared: bool) -> int:
    """How many nodes :func:`_shap_tree` writes for ``tree``."""
    if not tree.nodes:
        return 1
    size = [0] * len(tree.nodes)

    def of(child: int) -> int:
        return 1 if child < 0 else size[child]

    # A node's children come after it.
    for i in reversed(range(len(tree.nodes))):
        node = tree.nodes[i]
        if node.codes is None:
            size[i] = 1 + of(node.left) + of(node.right)
        else:
            n = len(_segments(node.codes)) // 2  # runs of member codes
            size[i] = 2 * n + (
                of(node.left) + of(node.right) if shared else n * of(node.left) + (n + 1) * of(node.right)
            )
    return size[0]


def _shap_tree(tree: Tree, n_outputs: int, shared: bool) -> dict[str, np.ndarray]:
    """One rgbm_rs tree as shap's node arrays: node 0 the root, every node
    numbered after the nodes that lead to it; a set split's children written
    once (``shared``) or once per segment."""
    covers = tree.leaf_counts
    if tree.nodes and len(covers) != len(tree.leaves):
        raise ValueError(
            "the model has no leaf covers (training rows per leaf), which shap needs; "
            "it was written by an older version of rgbm_rs: fit it again"
        )
    left: list[int] = []
    right: list[int] = []
    default_left: list[bool] = []
    features: list[int] = []
    thresholds: list[float] = []
    weight: list[float] = []
    leaf_value: list[float] = []

    def new(feature=-1, threshold=0.0, goes_left=False, w=0.0, v=0.0) -> int:
        left.append(-1)
        right.append(-1)
        default_left.append(goes_left)
        features.append(feature)
        thresholds.append(threshold)
        weight.append(w)
        leaf_value.append(v)
        return len(left) - 1

    def chain(feature, segments, parent, side, exits) -> None:
        """Threshold nodes on ``feature`` below ``parent``'s ``side`` sending
        each segment to its child; NaN follows the right branches to the
        last segment's (the non-members'). ``exits`` collects the open branches."""
        if len(segments) == 1:
            exits[segments[0][1]].append((parent, side))
            return
        half = len(segments) // 2
        i = new(feature, segments[half - 1][0])
        attach([(parent, side)], i)
        chain(feature, segments[:half], i, 0, exits)
        chain(feature, segments[half:], i, 1, exits)

    def attach(slots, i) -> None:
        for parent, side in slots:
            if parent >= 0:
                (left if side == 0 else right)[parent] = i

    if not tree.nodes:
        new(w=1.0, v=tree.leaves[0])
    else:
        # (model child reference, 1 / number of paths to it, the branches that lead to it)
        stack: list[tuple[int, float, list]] = [(0, 1.0, [(-1, 0)])]
        while stack:
            child, share, slots = stack.pop()
            if child < 0:
                attach(slots, new(w=share * float(covers[~child]), v=tree.leaves[~child]))
                continue
            node = tree.nodes[child]
            if node.codes is None:
                i = new(node.feature, node.split, node.default_left)
                attach(slots, i)
                stack += [(node.right, share, [(i, 1)]), (node.left, share, [(i, 0)])]
                continue
            exits: dict[bool, list] = {True: [], False: []}
            first = len(left)
            chain(node.feature, _segments(node.codes), -1, 0, exits)
            attach(slots, first)
            n = len(exits[True])
            if shared:
                stack += [(node.right, share / (n + 1), exits[False]), (node.left, share / n, exits[True])]
            else:
                stack += [(node.right, share / (n + 1), [slot]) for slot in exits[False]]
                stack += [(node.left, share / n, [slot]) for slot in exits[True]]
    n_nodes = len(left)
    value = np.asarray(leaf_value, dtype=np.float64)
    w = np.asarray(weight, dtype=np.float64)
    # Children come after their parents: weights (sums of the children's) and
    # values (their cover-weighted means; shap reads the root's as the tree's
    # expected value) from the last node up.
    for i in reversed(range(n_nodes)):
        a, b = left[i], right[i]
        if a >= 0:
            w[i] = w[a] + w[b]
            if w[i] > 0:
                value[i] = (w[a] * value[a] + w[b] * value[b]) / w[i]
    lefts, rights = np.asarray(left, dtype=np.int32), np.asarray(right, dtype=np.int32)
    values = np.zeros((n_nodes, n_outputs), dtype=np.float64)
    values[:, tree.output] = value
    return {
        "children_left": lefts,
        "children_right": rights,
        "children_default": np.where(np.asarray(default_left), lefts, rights).astype(np.int32),
        "features": np.asarray(features, dtype=np.int32),
        "thresholds": np.asarray(thresholds, dtype=np.float64),
        "values": values,
        "node_sample_weight": w,
    }


#: Most nodes in one tree: shap's TreeSHAP with a background data set holds
#: node indices as 16-bit integers, and crashes on larger trees.
MAX_TREE_NODES = 2**15


def to_shap(estimator: RGBMBase, *, shared: bool = False) -> dict[str, Any]:
    """The fitted model as a dict ``shap.TreeExplainer`` accepts.

    ``shap.TreeExplainer(rgbm_rs.to_shap(est)).shap_values(X)`` explains the
    raw score (log-odds, log mean, per-class scores), as
    ``est.predict(X, pred_contrib=True)`` does: the two agree to rounding.
    ``shap_interaction_values``, ``shap.Explainer`` and a background data
    set (``shap.TreeExplainer(rgbm_rs.to_shap(est), data)``, shap's
    ``feature_perturbation="interventional"``) work too. For multi-output
    models (multiclass, ``loss="gaussian"``) each tree has one value column
    per output, zero except its own.

    ``shap.TreeExplainer(est)`` itself cannot work: shap recognises a model
    by ``isinstance`` against the classes of the libraries it knows, or as a
    ``dict`` with ``"trees"``, and has no hook for other classes; this dict
    is the second form.

    Models with category-set splits are included. X is then what
    ``predict`` takes in a plain array, categorical features as their codes
    (shap reads a pandas frame's category columns as their labels, which it
    cannot convert to numbers). shap's tree format has no set split, so
    each one is written as threshold nodes on its feature that send each
    run of consecutive member codes, ``(c - 0.5, d + 0.5]``, to the member
    side, and the subtrees below it are written once per segment of the
    line these nodes cut (see ``rgbm_rs._shap``). The values are those of
    ``predict(X, pred_contrib=True)`` for every code, unseen codes and NaN
    included; a value that is not an integer is taken as the nearest code
    (``predict`` takes it as no category). The trees grow with the number
    of runs along each path, and shap's TreeSHAP takes time in proportion.

    Parameters
    ----------
    estimator : fitted RGBMRegressor, RGBMClassifier or RGBMRanker
    shared : bool, default=False
        Write the subtrees below a set split once, shared by the segments
        that lead to them: trees of about the model's size, as fast to
        explain as the expanded ones (shap walks every path either way).
        Only for explanations without a background data set (shap's
        default then, ``feature_perturbation="tree_path_dependent"``, and
        interaction values): with one, shap walks trees by parent links,
        which shared subtrees break. Models without set splits are the
        same either way.

    Returns
    -------
    dict
        ``{"trees": [...], "base_offset": ..., "tree_output": "raw_value",
        "input_dtype": numpy.float64, "internal_dtype": numpy.float64}``.

    Raises
    ------
    TypeError
        If ``shared`` is not a bool.
    ValueError
        If the model has no leaf covers or no trees, or (``shared=False``)
        an expanded tree would hold more than 32768 nodes, which shap's
        TreeSHAP with a background data set cannot index.
    """
    check_is_fitted(estimator, "_booster")
    if not isinstance(shared, (bool, np.bool_)):
        raise TypeError(f"shared must be a bool, got {type(shared).__name__}")
    ensemble = read_ensemble(estimator._booster)
    k = ensemble.n_outputs
    if not ensemble.trees:
        # Only a hand-made model file has none; shap's TreeExplainer fails
        # obscurely on an empty ensemble.
        raise ValueError(
            "the model has no trees, and shap's TreeExplainer needs at least one; "
            "predict(X, pred_contrib=True) gives its SHAP values (all 0, then the base score)"
        )
    if not shared:
        largest = max(_n_nodes(tree, False) for tree in ensemble.trees)
        if largest > MAX_TREE_NODES:
            raise ValueError(
                f"the model's category-set splits, written as shap's threshold nodes, make a tree of {largest} "
                f"nodes, more than the {MAX_TREE_NODES} shap's TreeSHAP with a background data set can index: "
                "pass shared=True for explanations without a background data set (shap's default then, and "
                "interaction values), or use predict(X, pred_contrib=True)"
            )
    base = np.asarray(ensemble.base, dtype=np.float64).reshape(-1)
    return {
        "trees": [_shap_tree(tree, k, bool(shared)) for tree in ensemble.trees],
        "base_offset": base if k > 1 else float(base[0]),
        "tree_output": "raw_value",
        "input_dtype": np.float64,
        "internal_dtype": np.float64,
    }
