"""``save_model(path, format="xgboost")``: the model in XGBoost's JSON model
schema (as XGBoost 3.2 writes it), for XGBoost itself and the tools that
read its models (treelite / tl2cgen, NVIDIA FIL, PMML converters).

XGBoost predicts differently from the core in three ways, each undone here:

* it reads features as float32 and sends ``x < split`` left, where the core
  sends ``x <= threshold`` left in double: the split written is the float32
  just above the largest float32 ``<= threshold``, so every float32 value
  (±inf included) takes the branch it takes in ``predict``;
* a category-set node sends its listed categories right and every other
  value left (NaN to the default child): listed are the codes that leave
  the model's default side, which becomes the left child;
* ``base_score`` is kept in the response space as float32 and turned back
  into a margin in float32 (for ``binary:logistic`` with p clamped near 1,
  so a margin of 10 comes back as 9.9996). Where that round trip is exact
  to float32 rounding (identity and softmax links, the log link within the
  float32 range) the base score is written there; otherwise ``base_score``
  is the link's zero margin and the base score is added to the leaves of
  the first tree of each output.

A model fitted on a data frame's category columns carries their
categories in XGBoost's category encoder, so that XGBoost maps a frame's
categories to the codes by value, as ``predict`` does (it refuses a frame
listing a category unseen at fit, which ``predict`` takes as missing).

Leaf values are those ``predict`` sums (learning rate and model shrinkage
included), divided by the link's scale for ``loss="exponential"`` and
``"sla01"`` (their probability is the sigmoid of ``f / scale``), and
rounded to float32, as XGBoost holds them.
"""

from __future__ import annotations

import json

import numpy as np

from . import _params
from ._files import replace_atomically
from ._trees import Ensemble, Tree, read_ensemble
from ._validation import fitted_categories

__all__ = ["document", "save"]

#: The XGBoost version whose schema is written.
VERSION = [3, 2, 0]
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_FLOAT32_TINY = float(np.finfo(np.float32).tiny)
#: XGBoost's parent of the root.
_NO_PARENT = 2**31 - 1


def _param(params, name):
    """A model's parameter ``name``, unset resolved as the core resolves it."""
    value = params.get(name)
    if value is not None:
        return value
    spec = _params.SCHEMA[name]
    return spec.get("none_means", spec["default"])


def _num(v: float) -> str:
    """A number as XGBoost's string-valued parameters hold it."""
    return repr(float(v))


def _objective(e: Ensemble) -> dict:
    """XGBoost's objective of the same link as the model's loss."""
    p, loss = e.params, e.loss
    if loss == "gaussian":
        raise ValueError(
            "cannot write a loss='gaussian' model in XGBoost's format: it predicts two values per row (a mean and "
            "a log standard deviation, each with its own link), and an XGBoost objective has one link for all outputs"
        )
    if p.get("n_targets") is not None:
        # XGBoost's multi-target files differ (num_target, multi_strategy)
        # and it has no file of several quantile alphas with sorted output.
        raise ValueError(
            f"cannot write a model of {p['n_targets']} targets (2-D y or a list of alpha) in XGBoost's format: "
            "only models of one target are written"
        )
    if loss == "custom":
        raise ValueError(
            "cannot write a model fitted with a custom loss in XGBoost's format: its file names one of XGBoost's "
            "built-in objectives, and none is known to have the link of a loss given as a function"
        )
    regression = {"reg_loss_param": {"scale_pos_weight": "1"}}
    objectives = {
        "squared": ("reg:squarederror", regression),
        # XGBoost has no Huber loss: pseudo-Huber of the same slope has the same (identity) link.
        "huber": ("reg:pseudohubererror", {"pseudo_huber_param": {"huber_slope": _num(_param(p, "huber_delta"))}}),
        "absolute_error": ("reg:absoluteerror", {}),
        "quantile": (
            "reg:quantileerror",
            {"quantile_loss_param": {"quantile_alpha": f"[{_num(_param(p, 'alpha'))}]"}},
        ),
        "poisson": ("count:poisson", {"poisson_regression_param": {"max_delta_step": "0.7"}}),
        "gamma": ("reg:gamma", regression),
        "tweedie": (
            "reg:tweedie",
            {"tweedie_regression_param": {"tweedie_variance_power": _num(_param(p, "tweedie_variance_power"))}},
        ),
        "logistic": ("binary:logistic", regression),
        "exponential": ("binary:logistic", regression),
        "sla01": ("binary:logistic", regression),
        "softmax": ("multi:softprob", {"softmax_multiclass_param": {"num_class": str(e.n_outputs)}}),
        "lambdarank": (
            "rank:ndcg",
            {
                "lambdarank_param": {
                    "lambdarank_pair_method": "topk",
                    "lambdarank_num_pair_per_sample": str(_param(p, "lambdarank_truncation_level")),
                }
            },
        ),
    }
    if loss not in objectives:
        raise ValueError(f"cannot write a loss={loss!r} model in XGBoost's format: XGBoost has no objective for it")
    name, extra = objectives[loss]
    return {"name": name, **extra}


def _base_score(e: Ensemble) -> tuple[list[float], list[float]]:
    """``base_score`` (response space) and what to add to the leaves of the
    first tree of each output (margins, after the link's scale)."""
    base = np.asarray(e.base, dtype=np.float64)
    zero = np.zeros_like(base)
    if e.link in ("identity", "softmax"):
        return base.tolist(), zero.tolist()
    if e.link == "exp":
        with np.errstate(over="ignore"):
            response = np.exp(base).astype(np.float32)
        # XGBoost takes float32 log(base_score): exact to rounding for a normal float32.
        if np.all((response >= _FLOAT32_TINY) & (response <= _FLOAT32_MAX)):
            return np.exp(base).tolist(), zero.tolist()
        return [1.0] * len(base), base.tolist()
    # The logistic's margin from base_score loses up to 4e-4 at a margin of 10: p = 0.5 is margin 0 exactly.
    return [0.5] * len(base), (base / e.scale).tolist()


def _float32(values, what: str) -> np.ndarray:
    """Values as float32, refusing those beyond its range."""
    a = np.asarray(values, dtype=np.float64)
    if a.size and not np.abs(a).max() <= _FLOAT32_MAX:
        raise ValueError(
            f"cannot write the model in XGBoost's format: it has a {what} of {a[np.abs(a).argmax()]:g}, "
            "beyond the float32 range XGBoost holds it in"
        )
    return a.astype(np.float32)


def _splits(thresholds: list[float]) -> np.ndarray:
    """float32 splits s with ``v < s`` exactly when ``v <= t`` for every
    float32 v (±inf included): the float32 just above the largest float32
    ``<= t`` (+inf for a t beyond the float32 range, -float32 max below it)."""
    t = np.asarray(thresholds, dtype=np.float64)
    with np.errstate(over="ignore"):
        below = t.astype(np.float32)
        above = below.astype(np.float64) > t
        below[above] = np.nextafter(below[above], np.float32(-np.inf))
        return np.nextafter(below, np.float32(np.inf))


def _tree(tree: Tree, tid: int, n_features: int, scale: float, shift: float) -> dict:
    """One tree, its nodes numbered breadth first with the two children of a
    node next to each other: XGBoost's predictor takes a node's right child
    to be its left child + 1."""
    leaves = _float32(np.asarray(tree.leaves, dtype=np.float64) / scale + shift, "leaf value")
    leaf_covers = tree.leaf_counts or [0.0] * len(tree.leaves)
    n = len(tree.nodes) + len(tree.leaves)
    left, right, parents = [-1] * n, [-1] * n, [_NO_PARENT] * n
    features, default_left, split_type = [0] * n, [0] * n, [0] * n
    gains, covers = [0.0] * n, [0.0] * n
    conditions = np.zeros(n, dtype=np.float32)
    numeric: list[int] = []
    thresholds: list[float] = []
    categories: list[int] = []
    cat_nodes: list[int] = []
    segments: list[int] = []
    sizes: list[int] = []
    order = [0 if tree.nodes else ~0]  # the model's child references, in XGBoost's node order
    for i in range(n):
        c = order[i]
        if c < 0:
            conditions[i], covers[i] = leaves[~c], float(leaf_covers[~c])
            continue
        node = tree.nodes[c]
        features[i], gains[i], covers[i] = node.feature, float(tree.gains[c]), float(tree.counts[c])
        if node.codes is None:
            order += [node.left, node.right]
            default_left[i] = int(node.default_left)
            numeric.append(i)
            thresholds.append(node.split)
        else:
            # XGBoost sends the listed categories right and every other value left, NaN to the
            # default child: the model's default side, where every non-member goes, is left.
            order += [node.right, node.left]
            default_left[i], split_type[i] = 1, 1
            cat_nodes.append(i)
            segments.append(len(categories))
            sizes.append(len(node.codes))
            categories.extend(node.codes)
        left[i], right[i] = len(order) - 2, len(order) - 1
        parents[left[i]] = parents[right[i]] = i
    conditions[numeric] = _splits(thresholds)
    # Internal nodes' weights (read only by XGBoost's approximate contributions): the
    # cover-weighted mean of their leaves. Children come after their parent.
    weights = conditions.astype(np.float64)
    cover = np.asarray(covers, dtype=np.float64)
    for i in range(n - 1, -1, -1):
        a, b = left[i], right[i]
        if a >= 0:
            total = cover[a] + cover[b]
            weights[i] = (
                (cover[a] * weights[a] + cover[b] * weights[b]) / total
                if total > 0
                else 0.5 * (weights[a] + weights[b])
            )
    return {
        "base_weights": weights.astype(np.float32).tolist(),
        "categories": categories,
        "categories_nodes": cat_nodes,
        "categories_segments": segments,
        "categories_sizes": sizes,
        "default_left": default_left,
        "id": tid,
        "left_children": left,
        "loss_changes": gains,
        "parents": parents,
        "right_children": right,
        "split_conditions": conditions.tolist(),
        "split_indices": features,
        "split_type": split_type,
        "sum_hessian": covers,
        "tree_param": {
            "num_deleted": "0",
            "num_feature": str(n_features),
            "num_nodes": str(n),
            "size_leaf_vector": "1",
        },
    }


#: XGBoost 3.2's type tag of an encoder of int64 categories.
_INT64_CATEGORIES = 15
_EMPTY_ENCODER: dict[str, list] = {"enc": [], "feature_segments": [], "sorted_idx": []}


def _encoder(est, n_features: int, categorical: set) -> dict:
    """XGBoost's category encoder (``cats``): each categorical feature's
    fit-time categories in the model's code order, with which XGBoost 3.1+
    maps a data frame's categories to the codes by value, as ``predict``
    does. Written when every split categorical feature has categories all
    ASCII strings or all integers (what XGBoost's own files hold and read
    back alike: it stores a string's bytes but counts its characters);
    otherwise none, and XGBoost reads a frame's category codes as they are."""
    cats = fitted_categories(est, n_features)
    if not categorical or any(cats[j] is None for j in categorical):
        return _EMPTY_ENCODER
    enc: list[dict] = []
    segments, order = [0], []
    for j in range(n_features):
        values = cats[j] if j in categorical else []
        if values and all(isinstance(v, str) and v.isascii() for v in values):
            data = [v.encode("ascii") for v in values]
            offsets = np.cumsum([0, *(len(b) for b in data)]).tolist()
            enc.append({"offsets": offsets, "values": [c for b in data for c in b]})
        elif values and all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values):
            data = [int(v) for v in values]
            enc.append({"type": _INT64_CATEGORIES, "values": data})
        elif values:
            return _EMPTY_ENCODER
        else:
            data = []
            enc.append({"offsets": [], "values": []})
        order += sorted(range(len(data)), key=data.__getitem__)
        segments.append(segments[-1] + len(data))
    return {"enc": enc, "feature_segments": segments, "sorted_idx": order}


def document(est) -> dict:
    """The fitted estimator as an XGBoost JSON model document."""
    e = read_ensemble(est._booster)
    objective = _objective(e)
    base_score, shift = _base_score(e)
    k, trees = e.n_outputs, e.trees
    if not trees:  # a tree per output to carry the base score
        stump: dict = {key: [] for key in ("feature", "threshold", "default_left", "left", "right", "gain", "count")}
        stump["leaf_value"] = [0.0]
        trees = [Tree(stump, j) for j in range(k)]
    written = [_tree(t, i, e.n_features, e.scale, shift[t.output] if i < k else 0.0) for i, t in enumerate(trees)]
    names = getattr(est, "feature_names_in_", None)
    # Categorical: split by category sets (a frame's category column fitted as ordinal codes is not).
    categorical = set(e.categorical_features)
    types = [("c" if j in categorical else "float") for j in range(e.n_features)] if categorical else []
    scores = _float32(base_score, "base score")
    return {
        "learner": {
            "attributes": {},
            "feature_names": [] if names is None else [str(c) for c in names],
            "feature_types": types,
            "gradient_booster": {
                "model": {
                    "cats": _encoder(est, e.n_features, categorical),
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(len(written))},
                    "iteration_indptr": list(range(0, len(written) + 1, k)),
                    "tree_info": [t.output for t in trees],
                    "trees": written,
                },
                "name": "gbtree",
            },
            "learner_model_param": {
                "base_score": "[" + ",".join(repr(float(v)) for v in scores) + "]",
                "boost_from_average": "1",
                "num_class": str(k) if e.link == "softmax" else "0",
                "num_feature": str(e.n_features),
                "num_target": "1",
            },
            "objective": objective,
        },
        "version": VERSION,
    }


def save(path, est) -> None:
    """Write :func:`document` of ``est`` as the file ``path``, atomically."""
    doc = document(est)
    # A split beyond the float32 range is +inf, which XGBoost reads as Infinity.
    text = json.dumps(doc, separators=(",", ":"))
    with replace_atomically(path) as f:
        f.write(text)
