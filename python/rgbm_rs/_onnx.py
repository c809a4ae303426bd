"""ONNX export of fitted estimators (needs the ``onnx`` package).

The trees become one ``ai.onnx.ml`` tree-ensemble node that computes the raw
scores (base score + trees, what ``decision_function`` returns); the loss's
link follows as standard ONNX operators, so the graph's outputs are those of
``predict`` / ``predict_proba``:

* regressor: ``variable``, float (n, 1): the raw score, or ``Exp`` of it for
  the log-link losses (poisson, gamma, tweedie); the mean of a gaussian model;
* classifier: ``label`` (n,), the class from ``classes_``, and
  ``probabilities``, float (n, n_classes): sigmoid of the scaled score for the
  binary losses (f, 2f or f / sla_scale), softmax for more classes. Labels are
  taken from the raw scores as ``predict`` takes them (score > 0, argmax).

The input is ``X``, float32 (n, n_features), NaN = missing, categorical
features as their codes (what ``predict`` takes in a plain array). The graph
casts X to double (exactly) and holds thresholds, leaf values and base
scores as doubles, so every float32 input is routed exactly as ``predict``
routes it and the trees are summed in double. Threshold-only models use
``TreeEnsembleRegressor`` (ai.onnx.ml opset 3, its ``*_as_tensor``
attributes): its output is float, so the raw score is rounded to float32
once before the link. Models with category-set splits use ``TreeEnsemble``
(ai.onnx.ml opset 5; onnxruntime >= 1.20), in double up to the outputs, and
its ``BRANCH_MEMBER`` nodes, fed the categorical columns with every value
that is not an integer code replaced by NaN (onnxruntime truncates 1.5 to
code 1; ``predict`` sends it to the default side). The outputs are float:

* identity-link regressors: ``predict`` rounded to float32, a relative
  difference of at most 2**-24 (6e-8) whatever the number of trees;
* log-link regressors and classifiers: at most (1 + abs(raw score)) * 2**-24
  relative (the rounding of the raw score, then of the output), 2**-24 for
  models with category-set splits.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._trees import Node, read_ensemble

if TYPE_CHECKING:
    import onnx

    from ._base import RGBMBase

__all__ = ["to_onnx"]

#: Opsets: (default domain, ai.onnx.ml) for threshold-only and categorical models.
_OPSETS = {False: (17, 3), True: (21, 5)}
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _import_onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError("to_onnx needs the onnx package: pip install onnx") from None
    return onnx


def _link(booster) -> tuple[str, float]:
    """The model's link (name, scale), as the core applies it in predict."""
    link = booster.link()
    if link is None:
        raise ValueError(
            "to_onnx cannot export a classifier fitted with a custom loss: it has no link from raw scores "
            "to probabilities"
        )
    return link


def _checked(values, what: str) -> np.ndarray:
    """Leaf values or base scores as float64, refusing those beyond the
    float32 range of the graph's outputs."""
    a = np.asarray(values, dtype=np.float64)
    if a.size and not np.abs(a).max() <= _FLOAT32_MAX:
        raise ValueError(
            f"the model has a {what} of {a[np.abs(a).argmax()]:g}, beyond the float32 range of the ONNX "
            "model's outputs: it cannot be exported exactly"
        )
    return a


def _double(numpy_helper, values):
    """A double tensor attribute."""
    return numpy_helper.from_array(np.asarray(values, dtype=np.float64))


def _node_id(c: int, m: int) -> int:
    """TreeEnsembleRegressor's id of child reference c in a tree of m internal nodes."""
    return c if c >= 0 else m + ~c


def _regressor_node(numpy_helper, trees: list, n_targets: int, base: list) -> dict:
    """The attributes of TreeEnsembleRegressor on double X, its thresholds,
    leaf values and base score double tensors (the ``*_as_tensor``
    attributes), so that the trees are summed in double; the output is
    float. Per tree, node ids 0..m-1 the internal nodes, m.. the leaves,
    then the further nodes of category-set splits: a set split is a chain
    of ``BRANCH_EQ`` nodes, one per member code (ai.onnx.ml opset 3 has no
    set membership)."""
    a: dict = {k: [] for k in ("treeids", "nodeids", "featureids", "values", "modes", "true", "false", "missing")}
    targets: dict = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for t, tree in enumerate(trees):
        m = len(tree.nodes)
        rows = []
        chains: list = []  # the BRANCH_EQ nodes after a set split's first, numbered after the leaves
        next_id = m + len(tree.leaves)
        for n in tree.nodes:
            yes, no = _node_id(n.left, m), _node_id(n.right, m)
            if n.codes is None:
                rows.append((n.feature, n.split, "BRANCH_LEQ", yes, no, int(n.default_left)))
                continue
            # x == code for each member code in turn, all leading to the one member subtree (onnxruntime
            # takes a node of several parents); the last false branch, which NaN and every other value
            # (non-integers included) reach, to the default side.
            ids = [None, *range(next_id, next_id + len(n.codes) - 1)]
            next_id += len(n.codes) - 1
            for k, code in enumerate(n.codes):
                row = (n.feature, float(code), "BRANCH_EQ", yes, ids[k + 1] if k + 1 < len(ids) else no, 0)
                (rows if k == 0 else chains).append(row)
        rows += [(0, 0.0, "LEAF", 0, 0, 0)] * len(tree.leaves)
        rows += chains
        for i, (f, s, mode, yes, no, miss) in enumerate(rows):
            for key, v in zip(a, (t, i, f, s, mode, yes, no, miss)):
                a[key].append(v)
        for li, v in enumerate(tree.leaves):
            for key, item in zip(targets, (t, m + li, tree.output, v)):
                targets[key].append(item)
    return dict(
        n_targets=n_targets,
        aggregate_function="SUM",
        post_transform="NONE",
        base_values_as_tensor=_double(numpy_helper, _checked(base, "base score")),
        nodes_treeids=a["treeids"],
        nodes_nodeids=a["nodeids"],
        nodes_featureids=a["featureids"],
        nodes_values_as_tensor=_double(numpy_helper, a["values"]),
        nodes_modes=a["modes"],
        nodes_truenodeids=a["true"],
        nodes_falsenodeids=a["false"],
        nodes_missing_value_tracks_true=a["missing"],
        target_treeids=targets["treeids"],
        target_nodeids=targets["nodeids"],
        target_ids=targets["ids"],
        target_weights_as_tensor=_double(numpy_helper, _checked(targets["weights"], "leaf value")),
    )


def _ensemble_node(numpy_helper, trees: list, n_targets: int, cat_column: dict) -> dict:
    """The attributes of TreeEnsemble (ai.onnx.ml opset 5) on double X, in
    double throughout: nodes and leaves numbered across trees; no base score.
    Category-set nodes read the cleaned copy of their feature, column
    ``cat_column[j]``."""
    a: dict = {k: [] for k in ("features", "splits", "modes", "true", "true_leaf", "false", "false_leaf", "missing")}
    roots: list[int] = []
    members: list[float] = []
    leaf_targets: list[int] = []
    leaf_weights: list[float] = []
    for tree in trees:
        node0, leaf0 = len(a["features"]), len(leaf_weights)
        roots.append(node0)
        leaf_weights.extend(tree.leaves)
        leaf_targets.extend([tree.output] * len(tree.leaves))
        # A single-leaf tree has no node to be its root: one whose two branches reach the leaf.
        nodes = tree.nodes or [Node(0, 0.0, None, False, -1, -1)]
        for f, s, codes, default_left, yes, no in nodes:
            if codes is not None:
                members.extend([*codes, np.nan])
            row = (
                f if codes is None else cat_column[f],
                s,
                0 if codes is None else 6,  # BRANCH_LEQ, BRANCH_MEMBER
                node0 + yes if yes >= 0 else leaf0 + ~yes,
                int(yes < 0),
                node0 + no if no >= 0 else leaf0 + ~no,
                int(no < 0),
                int(default_left),
            )
            for key, v in zip(a, row):
                a[key].append(v)
    extra = {}
    if members:
        extra["membership_values"] = _double(numpy_helper, members)
    return dict(
        n_targets=n_targets,
        aggregate_function=1,  # SUM
        post_transform=0,  # NONE
        tree_roots=roots,
        nodes_featureids=a["features"],
        nodes_splits=_double(numpy_helper, a["splits"]),
        nodes_modes=numpy_helper.from_array(np.asarray(a["modes"], dtype=np.uint8)),
        nodes_truenodeids=a["true"],
        nodes_trueleafs=a["true_leaf"],
        nodes_falsenodeids=a["false"],
        nodes_falseleafs=a["false_leaf"],
        nodes_missing_value_tracks_true=a["missing"],
        leaf_targetids=leaf_targets,
        leaf_weights=_double(numpy_helper, _checked(leaf_weights, "leaf value")),
        **extra,
    )


class _Graph:
    """Nodes and constants of a standalone graph being built: names as given
    (the graph holds one model, so they cannot clash).

    The graph builders below write through ``const`` and ``op`` only, so
    that the skl2onnx converter can write the same nodes into a container
    whose names it makes unique (see ``_skl2onnx``)."""

    def __init__(self, onnx):
        self.onnx = onnx
        self.nodes: list = []
        self.constants: list = []

    def const(self, name: str, value) -> str:
        self.constants.append(self.onnx.numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, inputs: list, output: str, domain: str = "", **attrs) -> str:
        self.nodes.append(self.onnx.helper.make_node(op_type, inputs, [output], domain=domain or None, **attrs))
        return output


def _clean_categories(g: _Graph, x: str, columns: list, max_code: int) -> str:
    """X followed by its categorical columns with every value that is not an
    integer code in [0, max_code] replaced by NaN (the default side)."""
    cats = g.op("Gather", [x, g.const("cat_columns", np.asarray(columns, np.int64))], "cat_values", axis=1)
    whole = g.op("Equal", [g.op("Floor", [cats], "cat_floor"), cats], "cat_is_integer")
    low = g.op("GreaterOrEqual", [cats, g.const("cat_lowest", np.float64(0))], "cat_above_0")
    high = g.op("LessOrEqual", [cats, g.const("cat_highest", np.float64(max_code))], "cat_below_max")
    ok = g.op("And", [g.op("And", [whole, low], "cat_whole_above_0"), high], "cat_is_code")
    clean = g.op("Where", [ok, cats, g.const("nan", np.float64(np.nan))], "cat_codes")
    return g.op("Concat", [x, clean], "X_with_codes", axis=1)


def _label_tensor(classes: np.ndarray):
    """classes_ as the constant the label is gathered from, and its ONNX element type name."""
    kind = classes.dtype.kind
    if kind in "iu":
        if kind == "u" and classes.max() > np.iinfo(np.int64).max:
            raise ValueError("classes_ holds integers beyond int64: ONNX labels cannot hold them")
        return classes.astype(np.int64), "INT64"
    if kind == "b":
        return classes, "BOOL"
    if kind == "f":
        return classes.astype(np.float64), "DOUBLE"
    if kind == "U" or (kind == "O" and all(isinstance(c, str) for c in classes)):
        return classes.astype(object), "STRING"
    kinds = sorted({type(c).__name__ for c in classes.tolist()})
    raise ValueError(f"classes_ of type {kinds} cannot be ONNX labels (integers, booleans, floats or strings can)")


class _Model:
    """What the graph is built from: the loss's link, the trees and base
    scores (for a gaussian model, those of the mean), the features with
    category-set splits."""

    def __init__(self, estimator):
        from .sklearn import RGBMClassifier, RGBMRanker, RGBMRegressor

        if not isinstance(estimator, (RGBMRegressor, RGBMClassifier, RGBMRanker)):
            raise TypeError(
                f"to_onnx exports a fitted RGBMRegressor, RGBMClassifier or RGBMRanker, got {type(estimator).__name__}"
            )
        check_is_fitted(estimator, "_booster")
        booster = estimator._booster
        self.kind, self.scale = _link(booster)
        ensemble = read_ensemble(booster)
        k, base, trees = ensemble.n_outputs, ensemble.base, ensemble.trees
        if ensemble.params.get("n_targets") is not None:
            # Their predict has one column per target (sorted per row for
            # several quantiles), which the graphs of one target do not give.
            raise ValueError(
                f"to_onnx exports models of one target; this model has {k} outputs (2-D y or a list of alpha)"
            )
        if ensemble.loss == "gaussian":  # predict returns the mean: output 0's trees
            k, base, trees = 1, base[:1], trees[0::2]
        self.k, self.base, self.trees = k, base, trees
        self.n_features = ensemble.n_features
        self.cat_features = sorted({n.feature for t in trees for n in t.nodes if n.codes})
        self.cat_column = {j: self.n_features + c for c, j in enumerate(self.cat_features)}
        # ai.onnx.ml opset: TreeEnsembleRegressor's *_as_tensor attributes need 3, TreeEnsemble 5.
        self.ml_opset = _OPSETS[bool(self.cat_features)][1]

    @property
    def is_classifier(self) -> bool:
        return self.kind not in ("identity", "exp")


def _raw_scores(g, model: _Model, x: str) -> str:
    """The raw scores (n, k), double: base score + trees, summed in double
    on X in double (float32 values are doubles exactly, so the trees route
    them as predict does)."""
    numpy_helper, TensorProto = g.onnx.numpy_helper, g.onnx.TensorProto
    x = g.op("Cast", [x], "X_double", to=TensorProto.DOUBLE)
    trees, k = model.trees, model.k
    if model.ml_opset < 5:
        # TreeEnsembleRegressor's output is float: its double sum rounded once.
        attrs = _regressor_node(numpy_helper, trees, k, model.base)
        raw_float = g.op("TreeEnsembleRegressor", [x], "raw_float", domain="ai.onnx.ml", **attrs)
        return g.op("Cast", [raw_float], "raw", to=TensorProto.DOUBLE)
    max_code = max(codes[-1] for t in trees for _, _, codes, *_ in t.nodes if codes)
    x = _clean_categories(g, x, model.cat_features, max_code)
    attrs = _ensemble_node(numpy_helper, trees, k, model.cat_column)
    sums = g.op("TreeEnsemble", [x], "tree_sums", domain="ai.onnx.ml", **attrs)
    return g.op("Add", [sums, g.const("base_score", np.asarray([_checked(model.base, "base score")]))], "raw")


def _regression_output(g, raw: str, kind: str, out: str = "variable", out_type: int | None = None) -> list:
    """``out`` (n, 1), float (or ``out_type``): the raw score, or its exp for a log link."""
    out_type = g.onnx.TensorProto.FLOAT if out_type is None else out_type
    if kind == "exp":
        raw = g.op("Exp", [raw], "response")
    g.op("Cast", [raw], out, to=out_type)
    return [g.onnx.helper.make_tensor_value_info(out, out_type, [None, 1])]


def _classifier_outputs(
    g,
    raw: str,
    kind: str,
    scale: float,
    classes: np.ndarray,
    names: tuple[str, str] = ("label", "probabilities"),
    proba_type: int | None = None,
    label_tensor=None,
) -> list:
    """``label`` (n,) from the raw scores as predict takes it, ``probabilities``
    (n, n_classes), float (computed in double; ``proba_type`` for another
    type); ``names`` for other output names, ``label_tensor`` for other
    labels (an array and its ONNX type name)."""
    helper, TensorProto = g.onnx.helper, g.onnx.TensorProto
    proba_type = TensorProto.FLOAT if proba_type is None else proba_type
    labels, label_type = _label_tensor(classes) if label_tensor is None else label_tensor
    if kind == "softmax":
        proba = g.op("Softmax", [raw], "probabilities_double", axis=1)
        index = g.op("ArgMax", [raw], "class_index", axis=1, keepdims=0)  # the first of ties, as numpy
    else:
        # z = f / scale, in the core's operation (for the exponential loss
        # scale 0.5, so z = 2f exactly).
        z = g.op("Div", [raw, g.const("link_scale", np.float64(scale))], "scaled") if scale != 1.0 else raw
        # p = 1 / (1 + exp(-z)) and 1 - p, as predict_proba computes them:
        # onnxruntime's Sigmoid gives 0 below about -36 (double; float below
        # -18) and is off by 1e-3 relative at -30, where Exp is exact to rounding.
        one = g.const("one", np.float64(1))
        e = g.op("Exp", [g.op("Neg", [z], "minus_z")], "exp_minus_z")
        p = g.op("Div", [one, g.op("Add", [one, e], "one_plus_exp_minus_z")], "p_positive")
        q = g.op("Sub", [one, p], "p_negative")
        proba = g.op("Concat", [q, p], "probabilities_double", axis=1)
        positive = g.op("Greater", [raw, g.const("zero", np.float64(0))], "positive")
        as_int = g.op("Cast", [positive], "positive_int", to=TensorProto.INT64)
        index = g.op("Reshape", [as_int, g.const("flat", np.asarray([-1], np.int64))], "class_index")
    g.op("Cast", [proba], names[1], to=proba_type)
    g.op("Gather", [g.const("classes", labels), index], names[0], axis=0)
    return [
        helper.make_tensor_value_info(names[0], getattr(TensorProto, label_type), [None]),
        helper.make_tensor_value_info(names[1], proba_type, [None, len(labels)]),
    ]


def to_onnx(estimator: RGBMBase, path: str | os.PathLike | None = None) -> onnx.ModelProto:
    """The fitted estimator as an ONNX model (needs the ``onnx`` package).

    Parameters
    ----------
    estimator : RGBMRegressor, RGBMClassifier or RGBMRanker
        A fitted estimator.
    path : str or os.PathLike, optional
        Also write the model there (to a temporary name, then renamed, as
        :meth:`~rgbm_rs.RGBMRegressor.save_model` does).

    Returns
    -------
    onnx.ModelProto
        Input ``X``: float32 (n, n_features), NaN = missing, categorical
        features as codes. A regressor outputs ``variable`` (n, 1), what
        ``predict`` returns; a classifier ``label`` (n,) and
        ``probabilities`` (n, n_classes), what ``predict`` and
        ``predict_proba`` return. For float32 input the trees decide
        exactly as ``predict`` and are summed in double; the float outputs
        differ from ``predict``'s by at most 2**-24 (6e-8) relative for
        identity-link regressors, ``(1 + abs(raw score)) * 2**-24`` for the other
        links (2**-24 for models with category-set splits).

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    TypeError
        If ``estimator`` is not an rgbm_rs estimator.
    ValueError
        If the model cannot be expressed exactly (leaf values beyond the
        float32 range, labels ONNX cannot hold).
    """
    from ._core import __version__

    model_parts = _Model(estimator)
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    onnx = _import_onnx()
    helper, TensorProto = onnx.helper, onnx.TensorProto

    g = _Graph(onnx)
    raw = _raw_scores(g, model_parts, "X")
    if model_parts.is_classifier:
        classes = np.asarray(estimator.classes_)
        outputs = _classifier_outputs(g, raw, model_parts.kind, model_parts.scale, classes)
    else:
        outputs = _regression_output(g, raw, model_parts.kind)
    graph = helper.make_graph(
        g.nodes,
        f"rgbm_rs_{type(estimator).__name__}",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, model_parts.n_features])],
        outputs,
        initializer=g.constants,
    )
    main, ml = _OPSETS[bool(model_parts.cat_features)]
    opsets = [helper.make_opsetid("", main), helper.make_opsetid("ai.onnx.ml", ml)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="rgbm_rs", producer_version=__version__)
    model.ir_version = helper.find_min_ir_version_for(opsets)
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        helper.set_model_props(model, {"feature_names": json.dumps([str(v) for v in names])})
    onnx.checker.check_model(model)
    if path is not None:
        from ._files import replace_atomically

        with replace_atomically(path, "wb") as f:
            f.write(model.SerializeToString())
    return model
