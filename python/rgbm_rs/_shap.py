"""A fitted model in the tree format of the ``shap`` package.

``shap.TreeExplainer`` accepts a dict ``{"trees": [...], "base_offset": ...}``
whose trees are arrays over all nodes (internal and leaf): ``children_left``
/ ``children_right`` (-1 at leaves), ``children_default`` (the child missing
values follow), ``features``, ``thresholds`` (a row goes left when
``x <= threshold``, as here), ``values`` (one column per output) and
``node_sample_weight`` (the covers TreeSHAP weighs by). Nothing here
imports shap.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

if TYPE_CHECKING:
    from ._base import RGBMBase

__all__ = ["to_shap"]


def _shap_tree(tree, output, n_outputs):
    """One rgbm_rs tree as shap's node arrays: internal nodes 0..m-1, leaf l at m + l."""
    m = len(tree["feature"])
    n_nodes = 2 * m + 1
    covers = tree.get("leaf_count") or []
    if m > 0 and len(covers) != m + 1:
        raise ValueError(
            "the model has no leaf covers (training rows per leaf), which shap needs; "
            "it was written by an older version of rgbm_rs: fit it again"
        )

    def node(child):
        return child if child >= 0 else m + (-child - 1)

    left = np.full(n_nodes, -1, dtype=np.int32)
    right = np.full(n_nodes, -1, dtype=np.int32)
    default = np.full(n_nodes, -1, dtype=np.int32)
    features = np.full(n_nodes, -1, dtype=np.int32)
    thresholds = np.zeros(n_nodes, dtype=np.float64)
    weight = np.zeros(n_nodes, dtype=np.float64)
    value = np.zeros(n_nodes, dtype=np.float64)
    for i in range(m):
        left[i], right[i] = node(tree["left"][i]), node(tree["right"][i])
        default[i] = left[i] if tree["default_left"][i] else right[i]
        features[i] = tree["feature"][i]
        thresholds[i] = tree["threshold"][i]
        weight[i] = tree["count"][i]
    value[m:] = tree["leaf_value"]
    weight[m:] = covers if m > 0 else [1.0]
    # An internal node's value is its subtree's cover-weighted mean (shap reads
    # the root's as the tree's expected value); children have larger indices.
    for i in reversed(range(m)):
        if weight[i] > 0:
            value[i] = (weight[left[i]] * value[left[i]] + weight[right[i]] * value[right[i]]) / weight[i]
    values = np.zeros((n_nodes, n_outputs), dtype=np.float64)
    values[:, output] = value
    return {
        "children_left": left,
        "children_right": right,
        "children_default": default,
        "features": features,
        "thresholds": thresholds,
        "values": values,
        "node_sample_weight": weight,
    }


def to_shap(estimator: RGBMBase) -> dict[str, Any]:
    """The fitted model as a dict ``shap.TreeExplainer`` accepts.

    ``shap.TreeExplainer(rgbm_rs.to_shap(est)).shap_values(X)`` explains the
    raw score (log-odds, log mean, per-class scores), as
    ``est.predict(X, pred_contrib=True)`` does: the two agree to rounding.
    For multi-output models (multiclass, ``loss="gaussian"``) each tree has
    one value column per output, zero except its own.

    Parameters
    ----------
    estimator : fitted RGBMRegressor or RGBMClassifier

    Returns
    -------
    dict
        ``{"trees": [...], "base_offset": ..., "tree_output": "raw_value",
        "input_dtype": numpy.float64, "internal_dtype": numpy.float64}``.

    Raises
    ------
    ValueError
        If a tree splits by a set of categories (shap's format has no such
        split for arbitrary category codes; use ``predict(X,
        pred_contrib=True)``), the model has no leaf covers, or no trees.
    """
    check_is_fitted(estimator, "_booster")
    doc = json.loads(estimator._booster.to_json())
    k = int(doc.get("n_outputs", 1))
    if not doc["trees"]:
        # Only a hand-made model file has none; shap's TreeExplainer fails
        # obscurely on an empty ensemble.
        raise ValueError(
            "the model has no trees, and shap's TreeExplainer needs at least one; "
            "predict(X, pred_contrib=True) gives its SHAP values (all 0, then the base score)"
        )
    for t, tree in enumerate(doc["trees"]):
        sets = tree.get("categories") or []
        node = next((i for i, words in enumerate(sets) if words), None)
        if node is not None:
            raise ValueError(
                f"tree {t} splits feature {tree['feature'][node]} by a set of categories, which shap's tree "
                "format cannot express; use predict(X, pred_contrib=True) for this model's SHAP values"
            )
    base = np.asarray(doc["base_score"], dtype=np.float64).reshape(-1)
    return {
        "trees": [_shap_tree(tree, t % k, k) for t, tree in enumerate(doc["trees"])],
        "base_offset": base if k > 1 else float(base[0]),
        "tree_output": "raw_value",
        "input_dtype": np.float64,
        "internal_dtype": np.float64,
    }
