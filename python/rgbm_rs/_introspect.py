"""Read-only views of a fitted model's trees.

Everything here works on the model JSON document, i.e.
``json.loads(estimator._booster.to_json())``::

    {"format_version": 1, "params": {...}, "n_features": p,
     "base_score": float or [float, ...],   # one per output
     "n_outputs": K,                         # optional, 1 when absent
     "trees": [tree, ...]}

A tree is a set of flat arrays. Internal node ``i`` sends a row left when
``x[feature[i]] <= threshold[i]`` (NaN follows ``default_left[i]``); a child
reference ``c >= 0`` is internal node ``c``, ``c < 0`` is leaf ``~c``
(``-c - 1``). ``leaf_value`` already includes the learning rate. A tree
without internal nodes is a single leaf. Trees are stored round by round:
tree ``t`` belongs to output ``t % K``.

A tree may also hold ``categories``: one bitset (a list of 32-bit words)
per internal node, empty for a threshold node. A non-empty set makes node
``i`` a category-set split: the category codes in the set go away from the
default side and every other value (other codes, NaN, non-integers)
follows ``default_left[i]``; ``threshold[i]`` is then unused. The codes are
positions in the categories the estimator recorded at fit (pandas
``category`` / string columns), or the integer codes themselves when fit saw
an array; the views below show those categories as labels.

The functions are pure: they never modify the document they are given.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["dump_model", "tree_to_dict", "trees_to_dataframe"]

_TREE_ARRAYS = ("feature", "threshold", "default_left", "left", "right", "gain", "count")


# ---------------------------------------------------------------- helpers
def _as_model_doc(model):
    """Return ``(model_doc, default_feature_names)`` for the accepted inputs
    (see :func:`_read_model`)."""
    doc, names, _categories = _read_model(model)
    return doc, names


def _read_model(model):
    """Return ``(model_doc, default_feature_names, categories)``.

    Accepted: a model document (dict with ``"trees"``), the document written
    by ``save_model`` (dict with ``"model"``, whose ``feature_names_in`` become
    the default names and whose ``categories`` the labels), JSON text of
    either, a native booster (has ``to_json``) or a fitted estimator (has
    ``_booster``). ``categories`` lists per feature the categories recorded at
    fit (None for a feature without), or is None when nothing was recorded
    (a bare model document or booster: category sets then show their codes).
    """
    names = None
    categories = None
    if hasattr(model, "fit") and not hasattr(model, "_booster"):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"this {type(model).__name__} is not fitted yet: call fit first")
    if hasattr(model, "_booster"):
        names = getattr(model, "feature_names_in_", None)
        if getattr(model, "_categories_", None):
            from ._validation import fitted_categories

            categories = fitted_categories(model)
        model = model._booster
    if hasattr(model, "to_json") and not isinstance(model, (dict, str, bytes)):
        model = model.to_json()
    if isinstance(model, (str, bytes, bytearray)):
        try:
            model = json.loads(model)
        except json.JSONDecodeError as e:
            raise ValueError(f"not a valid model JSON document: {e}") from None
    if not isinstance(model, dict):
        raise TypeError(
            "expected a model document (dict), its JSON text, a booster or a fitted estimator; "
            f"got {type(model).__name__}"
        )
    if "trees" not in model and isinstance(model.get("model"), dict):
        if names is None:
            names = model.get("feature_names_in")
        if categories is None:
            categories = _saved_categories(model.get("categories"))
        model = model["model"]
    if not isinstance(model.get("trees"), list):
        raise ValueError("the model document has no 'trees' list")
    return model, None if names is None else [str(n) for n in names], categories


def _saved_categories(value):
    """The categories of a ``save_model`` document (None when it has none)."""
    if value is None:
        return None
    from ._model_file import _decode_category

    if not isinstance(value, list) or not all(c is None or isinstance(c, list) for c in value):
        raise ValueError("the document's 'categories' must be a list holding one list or null per feature")
    return [
        None if cats is None else [_decode_category(v, f"categories[{j}][{i}]") for i, v in enumerate(cats)]
        for j, cats in enumerate(value)
    ]


def _n_outputs(model_doc) -> int:
    k = model_doc.get("n_outputs")
    if k is None:
        base = model_doc.get("base_score")
        return len(base) if isinstance(base, (list, tuple)) and len(base) > 0 else 1
    k = int(k)
    if k < 1:
        raise ValueError(f"n_outputs must be >= 1, got {k}")
    return k


def _check_feature_names(feature_names, n_features=None):
    if feature_names is None:
        return None
    names = [str(n) for n in feature_names]
    if n_features is not None and len(names) != n_features:
        raise ValueError(f"{len(names)} feature names given for a model with {n_features} features")
    return names


def _feature_name(j, feature_names):
    if feature_names is None:
        return f"f{j}"
    if j >= len(feature_names):
        raise ValueError(f"the tree splits on feature {j}, but only {len(feature_names)} feature names were given")
    return feature_names[j]


def _check_tree(tree):
    """Validate the flat arrays and return (n_internal, n_leaves)."""
    if not isinstance(tree, dict):
        raise TypeError(f"a tree must be a dict of flat arrays, got {type(tree).__name__}")
    missing = [k for k in _TREE_ARRAYS + ("leaf_value",) if k not in tree]
    if missing:
        raise ValueError(f"the tree lacks the arrays {missing}")
    m = len(tree["feature"])
    for key in _TREE_ARRAYS:
        if len(tree[key]) != m:
            raise ValueError(f"tree array '{key}' has {len(tree[key])} entries, expected {m} (one per internal node)")
    n_leaves = len(tree["leaf_value"])
    if n_leaves != m + 1:
        raise ValueError(f"a tree with {m} internal nodes must have {m + 1} leaves, this one has {n_leaves}")
    covers = tree.get("leaf_count") or []
    if covers and len(covers) != n_leaves:
        raise ValueError(
            f"tree array 'leaf_count' has {len(covers)} entries, expected {n_leaves} (one per leaf) or none"
        )
    return m, n_leaves


def _leaf_count(tree, leaf):
    """Training rows that reached a leaf (NaN for models written before leaf covers were recorded)."""
    covers = tree.get("leaf_count") or []
    return float(covers[leaf]) if covers else float("nan")


def _walk(tree):
    """Pre-order walk (root, left subtree, right subtree) without recursion.

    Yields ``(kind, index, depth, parent_internal_index, side)`` with kind
    "node" or "leaf" and side "left"/"right" (None for the root). Checks that
    every node and leaf is reached exactly once, so a malformed tree raises
    ValueError instead of looping.
    """
    m, n_leaves = _check_tree(tree)
    if m == 0:
        yield ("leaf", 0, 0, None, None)
        return
    seen_nodes = [False] * m
    seen_leaves = [False] * n_leaves
    stack = [(0, 0, None, None)]  # child reference, depth, parent, side
    while stack:
        ref, depth, parent, side = stack.pop()
        if ref >= 0:
            if ref >= m or seen_nodes[ref]:
                raise ValueError(f"malformed tree: internal node {ref} is out of range or reached twice")
            seen_nodes[ref] = True
            yield ("node", ref, depth, parent, side)
            stack.append((int(tree["right"][ref]), depth + 1, ref, "right"))
            stack.append((int(tree["left"][ref]), depth + 1, ref, "left"))
        else:
            leaf = -ref - 1
            if leaf >= n_leaves or seen_leaves[leaf]:
                raise ValueError(f"malformed tree: leaf {leaf} is out of range or reached twice")
            seen_leaves[leaf] = True
            yield ("leaf", leaf, depth, parent, side)
    if not all(seen_nodes) or not all(seen_leaves):
        raise ValueError("malformed tree: some nodes or leaves are not reachable from the root")


def _float(v):
    return float("nan") if v is None else float(v)


def _split_codes(tree, idx):
    """The category codes of node ``idx``'s set, ascending; None for a threshold node."""
    sets = tree.get("categories") or []
    if idx >= len(sets) or not sets[idx]:
        return None
    return [32 * w + b for w, word in enumerate(sets[idx]) for b in range(32) if int(word) >> b & 1]


def _check_categories(categories, n_features=None):
    if categories is None:
        return None
    if isinstance(categories, (str, bytes, dict)):
        raise TypeError(
            "categories must be a sequence with one entry per feature (its categories, or None), "
            f"got {type(categories).__name__}"
        )
    cats = list(categories)
    if n_features is not None and len(cats) != n_features:
        raise ValueError(f"categories has {len(cats)} entries for a model with {n_features} features")
    return cats


def _plain(v):
    """A numpy scalar as the Python value it holds, anything else unchanged."""
    return v.item() if isinstance(v, np.generic) else v


def _category_labels(j, codes, categories):
    """The categories that codes of feature ``j`` stand for; the codes
    themselves where fit recorded none (integer codes) or a code lies
    beyond the recorded list."""
    cats = None
    if categories is not None:
        if j >= len(categories):
            raise ValueError(f"the tree splits on feature {j}, but categories has only {len(categories)} entries")
        cats = categories[j]
    if cats is None:
        return list(codes)
    cats = list(cats)
    return [_plain(cats[c]) if c < len(cats) else c for c in codes]


def _decision_type(tree, idx, codes):
    """LightGBM's ``decision_type`` of an internal node: ``"<="`` for a
    threshold, ``"=="`` when the set's members go left, ``"!="`` when they go
    right."""
    if codes is None:
        return "<="
    return "!=" if bool(tree["default_left"][idx]) else "=="


# ---------------------------------------------------------------- public API
def tree_to_dict(
    tree: dict[str, Any],
    feature_names: Sequence[str] | None = None,
    categories: Sequence[Sequence[Any] | None] | None = None,
) -> dict[str, Any]:
    """Convert one tree's flat arrays to a nested dict.

    Parameters
    ----------
    tree : dict
        One entry of the model document's ``"trees"`` list (flat arrays
        ``feature``, ``threshold``, ``default_left``, ``left``, ``right``,
        ``gain``, ``count``, ``leaf_value`` and, when recorded, ``leaf_count``).
    feature_names : sequence of str, optional
        Names indexed by feature number; ``"f{j}"`` when omitted.
    categories : sequence, optional
        Indexed by feature number: the categories recorded at fit for that
        feature, in code order (code ``c`` stands for ``categories[j][c]``),
        or None for a feature without. When omitted (or None for the split
        feature) ``category_labels`` repeats the codes.

    Returns
    -------
    dict
        The root node. An internal node is::

            {"node_index": i, "split_feature": j, "feature_name": name,
             "threshold": thr, "default_left": bool, "gain": g, "count": n,
             "left": child, "right": child}

        where a row goes to ``"left"`` when ``x[j] <= thr`` (missing values
        follow ``default_left``). A category-set split also has
        ``"categories"``: the category codes that go away from the default
        side (every other value follows ``default_left``; ``threshold`` is
        unused), and ``"category_labels"``: the categories those codes stand
        for, in the same order. A leaf is
        ``{"leaf_index": k, "value": v, "count": n}``; ``value`` includes the
        learning rate, ``count`` is the training rows that reached the leaf
        (absent in models written before leaf counts were recorded). A tree
        without splits is a single leaf.

    Raises
    ------
    ValueError
        If the arrays are inconsistent (wrong lengths, dangling or repeated
        child references) or a split feature has no name or no entry in
        ``categories``.
    """
    names = _check_feature_names(feature_names)
    categories = _check_categories(categories)
    nodes: dict[int, dict] = {}
    leaves: dict[int, dict] = {}
    root: dict = {}
    for kind, idx, _depth, parent, side in _walk(tree):
        if kind == "node":
            j = int(tree["feature"][idx])
            item = {
                "node_index": idx,
                "split_feature": j,
                "feature_name": _feature_name(j, names),
                "threshold": _float(tree["threshold"][idx]),
                "default_left": bool(tree["default_left"][idx]),
                "gain": _float(tree["gain"][idx]),
                "count": _float(tree["count"][idx]),
                "left": None,
                "right": None,
            }
            codes = _split_codes(tree, idx)
            if codes is not None:
                # A category-set split: these codes go away from the default side.
                item["categories"] = codes
                item["category_labels"] = _category_labels(j, codes, categories)
            nodes[idx] = item
        else:
            item = {"leaf_index": idx, "value": _float(tree["leaf_value"][idx])}
            if tree.get("leaf_count"):
                item["count"] = _leaf_count(tree, idx)
            leaves[idx] = item
        if parent is None:
            root = item
        else:
            nodes[parent][side] = item
    return root


def dump_model(model_doc: Any, feature_names: Sequence[str] | None = None) -> dict[str, Any]:
    """Nested description of every tree of a model.

    Parameters
    ----------
    model_doc : dict, str, booster or fitted estimator
        The model JSON document (``json.loads(est._booster.to_json())``).
        Its JSON text, the document written by ``save_model``, the native
        booster or a fitted estimator are accepted too.
    feature_names : sequence of str, optional
        One name per feature. Defaults to the estimator's
        ``feature_names_in_`` (or the saved file's names) when available,
        else ``"f{j}"``.

    Returns
    -------
    dict
        ``{"n_features", "n_outputs", "base_score", "trees"}`` where
        ``base_score`` is a float for single-output models and a list with one
        float per output otherwise, and ``trees`` is a list of
        ``{"tree_index": t, "output": t % n_outputs, "tree": nested}`` with
        ``nested`` as returned by :func:`tree_to_dict`. A category-set node's
        ``category_labels`` are the categories recorded at fit (by the
        estimator, or in the ``save_model`` document); a bare model document
        or booster has none, and neither has a fit on integer codes (an array
        with ``categorical_features``): the labels are then the codes.

    Raises
    ------
    ValueError
        If the document is malformed or the number of feature names does not
        match ``n_features``.
    """
    doc, default_names, categories = _read_model(model_doc)
    n_features = doc.get("n_features")
    names = _check_feature_names(feature_names if feature_names is not None else default_names, n_features)
    categories = _check_categories(categories, n_features)
    k = _n_outputs(doc)
    base = doc.get("base_score")
    if isinstance(base, (list, tuple)):
        base = [float(b) for b in base]
        if len(base) == 1 and k == 1:
            base = base[0]
    elif base is not None:
        base = float(base)
    return {
        "n_features": None if n_features is None else int(n_features),
        "n_outputs": k,
        "base_score": base,
        "trees": [
            {"tree_index": t, "output": t % k, "tree": tree_to_dict(tree, names, categories)}
            for t, tree in enumerate(doc["trees"])
        ],
    }


_COLUMNS = [
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


def _node_id(tree_index, kind, idx):
    return f"{tree_index}-{'N' if kind == 'node' else 'L'}{idx}"


def trees_to_dataframe(model_doc: Any, feature_names: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per node (internal and leaf) of every tree.

    Parameters
    ----------
    model_doc : dict, str, booster or fitted estimator
        As for :func:`dump_model`.
    feature_names : sequence of str, optional
        As for :func:`dump_model`.

    Returns
    -------
    pandas.DataFrame
        Trees in order, nodes of a tree in pre-order (root, left subtree,
        right subtree). Columns:

        ``tree_index``, ``output`` (``tree_index % n_outputs``), ``node_id``
        (``"3-N5"`` = internal node 5 of tree 3, ``"3-L2"`` = its leaf 2),
        ``depth`` (root = 0), ``is_leaf``, ``feature`` (split feature index,
        -1 for leaves), ``feature_name`` (None for leaves), ``threshold``
        and ``decision_type`` (see below), ``default_left`` (nullable
        boolean, NA for leaves), ``left_child`` / ``right_child`` (node ids,
        None for leaves), ``parent`` (node id, None for the root), ``gain``
        (NaN for leaves) and ``count`` (training rows reaching the node; NaN
        for the leaves of models written before leaf counts were recorded),
        ``value`` (leaf value including the learning rate; NaN for internal
        nodes).

        ``threshold`` and ``decision_type`` follow LightGBM's
        ``Booster.trees_to_dataframe``. A threshold node has
        ``decision_type`` ``"<="`` and its float ``threshold``: a row goes
        left when ``x <= threshold``, a missing value as ``default_left``
        says. A category-set node has ``decision_type`` ``"=="`` and a
        ``threshold`` string joining its categories with ``"||"``
        (``"Husband||Wife"``): a row goes left when its value is one of them,
        and every other value (other or unseen categories, missing values)
        goes right. The categories are the labels recorded at fit (``str``
        of each) where the estimator or the ``save_model`` document has
        them, else the integer codes, as LightGBM writes (``"0||5"``).
        Leaves have NaN and None. The ``threshold`` column is float64 for a
        model without category-set nodes and object (floats, strings and
        NaN) for one with them, as in LightGBM.

        Differences from LightGBM: a category-set node whose set goes right
        (``default_left`` true: fit never writes one, a model file may hold
        it) has ``decision_type`` ``"!="``, so that ``"=="`` keeps
        LightGBM's meaning; column names other than these two are this
        package's own (LightGBM's ``node_depth``, ``node_index``,
        ``parent_index``, ``split_feature``, ``split_gain`` and
        ``missing_direction`` are ``depth``, ``node_id``, ``parent``,
        ``feature_name``, ``gain`` and ``default_left`` here, and LightGBM's
        root has depth 1 where ours has 0); there is no ``missing_type``
        or ``weight`` (hessian sum), and ``value`` is NaN for internal
        nodes.

    Raises
    ------
    ImportError
        If pandas is not installed.
    ValueError
        If the document is malformed.
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("trees_to_dataframe needs pandas: pip install pandas") from None
    doc, default_names, categories = _read_model(model_doc)
    n_features = doc.get("n_features")
    names = _check_feature_names(feature_names if feature_names is not None else default_names, n_features)
    categories = _check_categories(categories, n_features)
    k = _n_outputs(doc)
    rows: list[tuple] = []
    nan = float("nan")
    has_sets = False
    for t, tree in enumerate(doc["trees"]):
        for kind, idx, depth, parent, _side in _walk(tree):
            parent_id = None if parent is None else _node_id(t, "node", parent)
            if kind == "node":
                j = int(tree["feature"][idx])
                left, right = (int(tree[s][idx]) for s in ("left", "right"))
                codes = _split_codes(tree, idx)
                if codes is None:
                    threshold: float | str = _float(tree["threshold"][idx])
                else:
                    has_sets = True
                    threshold = "||".join(str(v) for v in _category_labels(j, codes, categories))
                rows.append(
                    (
                        t,
                        t % k,
                        _node_id(t, kind, idx),
                        depth,
                        False,
                        j,
                        _feature_name(j, names),
                        threshold,
                        _decision_type(tree, idx, codes),
                        bool(tree["default_left"][idx]),
                        _node_id(t, "node", left) if left >= 0 else _node_id(t, "leaf", -left - 1),
                        _node_id(t, "node", right) if right >= 0 else _node_id(t, "leaf", -right - 1),
                        parent_id,
                        _float(tree["gain"][idx]),
                        _float(tree["count"][idx]),
                        nan,
                    )
                )
            else:
                rows.append(
                    (
                        t,
                        t % k,
                        _node_id(t, kind, idx),
                        depth,
                        True,
                        -1,
                        None,
                        nan,
                        None,
                        None,
                        None,
                        None,
                        parent_id,
                        nan,
                        _leaf_count(tree, idx),
                        _float(tree["leaf_value"][idx]),
                    )
                )
    dtypes = {
        "tree_index": "int64",
        "output": "int64",
        "node_id": object,
        "depth": "int64",
        "is_leaf": "bool",
        "feature": "int64",
        "feature_name": object,
        "threshold": object if has_sets else "float64",
        "decision_type": object,
        "default_left": "boolean",
        "left_child": object,
        "right_child": object,
        "parent": object,
        "gain": "float64",
        "count": "float64",
        "value": "float64",
    }
    columns = list(zip(*rows)) if rows else [()] * len(_COLUMNS)
    # Object columns keep None for "not applicable" (pandas >= 3 would
    # otherwise infer its string dtype and turn None into NaN).
    df = pd.DataFrame({name: pd.Series(list(col), dtype=dtypes[name]) for name, col in zip(_COLUMNS, columns)})
    return df
