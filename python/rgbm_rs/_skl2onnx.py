"""skl2onnx converters for the estimators, so that a scikit-learn pipeline
ending in one exports whole with ``skl2onnx.to_onnx``.

The converter writes the nodes that :func:`rgbm_rs.to_onnx` writes (the
same tree walker and links, see ``_onnx``) into skl2onnx's container,
under names the scope makes unique; the outputs take the types skl2onnx's
shape calculators give them (float or double, as the input; labels int64
or strings, class positions with ``nocl``), and its parser adds the ZipMap
of the ``zipmap`` option after a classifier.
"""

from __future__ import annotations

import numpy as np

from ._onnx import _OPSETS, _classifier_outputs, _import_onnx, _Model, _raw_scores, _regression_output

__all__ = ["register_skl2onnx"]


class _ContainerGraph:
    """``_onnx._Graph``'s ``const`` and ``op`` writing into a skl2onnx
    container: every name made unique in the scope except the operator's
    declared outputs, which the next operator reads."""

    def __init__(self, onnx, scope, container, outputs, ml_version: int):
        self.onnx = onnx
        self.scope = scope
        self.container = container
        self.outputs = set(outputs)
        self.ml_version = ml_version

    def _name(self, hint: str) -> str:
        return hint if hint in self.outputs else self.scope.get_unique_variable_name(f"rgbm_{hint}")

    def const(self, name: str, value) -> str:
        name = self._name(name)
        value = np.asarray(value)
        if value.dtype.kind in "OU":
            # add_initializer copies a TensorProto's raw_data, which strings do not use.
            strings = [str(v) for v in value.ravel()]
            self.container.add_initializer(name, self.onnx.TensorProto.STRING, list(value.shape), strings)
        else:
            tensor = self.onnx.numpy_helper.from_array(value, name)
            self.container.add_initializer(name, tensor.data_type, list(tensor.dims), tensor)
        return name

    def op(self, op_type: str, inputs: list, output: str, domain: str = "", **attrs) -> str:
        output = self._name(output)
        # The ml domain's version is the model's (3 or 5); the default domain's the highest the target allows.
        version = None if not domain else self.ml_version
        self.container.add_node(
            op_type,
            inputs,
            [output],
            op_domain=domain,
            op_version=version,
            name=self.scope.get_unique_operator_name(f"rgbm_{op_type}"),
            **attrs,
        )
        return output


def _elem_type(variable) -> int:
    """The ONNX element type skl2onnx declared for an output variable."""
    return variable.type.to_onnx_type().tensor_type.elem_type


def _skl2onnx_labels(onnx, scope, estimator, label_variable):
    """The labels as the type the shape calculator declared: int64 (integer
    classes, or class positions with the ``nocl`` option) or strings."""
    from skl2onnx.common.utils_classifier import get_label_classes

    classes = np.asarray(get_label_classes(scope, estimator))
    if _elem_type(label_variable) == onnx.TensorProto.STRING:
        return classes.astype(str).astype(object), "STRING"
    # Numeric classes are integers (a classifier refuses continuous targets), booleans or floats holding integers.
    return classes.astype(np.int64), "INT64"


def convert_rgbm(scope, operator, container):
    """skl2onnx converter of RGBMRegressor, RGBMClassifier and RGBMRanker."""
    onnx = _import_onnx()
    estimator = operator.raw_operator
    model = _Model(estimator)
    supported = _ml_opset_supported()
    ml_version = container.target_opset_any_domain("ai.onnx.ml")
    if model.ml_opset == 5 and not ((supported is None or supported >= 5) and (ml_version is None or ml_version >= 5)):
        # skl2onnx 1.20 writes ai.onnx.ml opset 3 at most: set splits as chains of BRANCH_EQ nodes there.
        model.ml_opset = 3
    if ml_version is not None and ml_version < model.ml_opset:
        raise ValueError(
            f"the {type(estimator).__name__} needs ai.onnx.ml opset {model.ml_opset} for its double thresholds, "
            f"but the target opset is {ml_version}: pass "
            f"target_opset={{'': {_OPSETS[False][0]}, 'ai.onnx.ml': {model.ml_opset}}}"
        )
    outputs = [v.full_name for v in operator.outputs]
    g = _ContainerGraph(onnx, scope, container, outputs, model.ml_opset)
    raw = _raw_scores(g, model, operator.inputs[0].full_name)
    if model.is_classifier:
        label, proba = operator.outputs[:2]
        labels = _skl2onnx_labels(onnx, scope, estimator, label)
        _classifier_outputs(
            g,
            raw,
            model.kind,
            model.scale,
            labels[0],
            names=(label.full_name, proba.full_name),
            proba_type=_elem_type(proba),
            label_tensor=labels,
        )
    else:
        _regression_output(g, raw, model.kind, outputs[0], _elem_type(operator.outputs[0]))


def _ml_opset_supported() -> int | None:
    """The highest ai.onnx.ml opset skl2onnx writes (it refuses a model using
    a higher one), None if this skl2onnx does not tell."""
    try:
        from skl2onnx.common._topology import get_default_opset_for_domain
    except ImportError:
        return None
    return get_default_opset_for_domain("ai.onnx.ml")


def register_skl2onnx() -> None:
    """Register the estimators with skl2onnx (needs the ``skl2onnx`` package).

    After this call ``skl2onnx.to_onnx`` converts an RGBMRegressor,
    RGBMClassifier or RGBMRanker, alone or as a step of a Pipeline (after a
    ColumnTransformer, scalers, ...), into the nodes :func:`rgbm_rs.to_onnx`
    writes: the same trees, links and precision. Calling it again is
    harmless.

    A classifier takes skl2onnx's options ``zipmap`` (True, the default:
    probabilities as a list of dicts; False: a tensor; "columns": one
    output per class) and ``nocl`` (labels as class positions). The trees
    need ai.onnx.ml opset 3. A category-set split becomes a chain of
    ``BRANCH_EQ`` nodes, one per member code, sharing the member subtree
    (skl2onnx 1.20 writes ai.onnx.ml opset 3 at most, which has no set
    membership; where skl2onnx and the target opset allow opset 5, the
    ``TreeEnsemble`` node :func:`rgbm_rs.to_onnx` writes): every value that
    is not a member code, NaN, unseen codes and non-integers included, goes
    to the default side, as ``predict`` sends it.

    Raises
    ------
    ImportError
        If skl2onnx is not installed.
    """
    try:
        from skl2onnx import update_registered_converter
        from skl2onnx.common.shape_calculator import (
            calculate_linear_classifier_output_shapes,
            calculate_linear_regressor_output_shapes,
        )
    except ImportError:
        raise ImportError("register_skl2onnx needs the skl2onnx package: pip install skl2onnx") from None
    from .sklearn import RGBMClassifier, RGBMRanker, RGBMRegressor

    update_registered_converter(
        RGBMClassifier,
        "RgbmRsRGBMClassifier",
        calculate_linear_classifier_output_shapes,
        convert_rgbm,
        options={"zipmap": [True, False, "columns"], "nocl": [True, False]},
    )
    for cls in (RGBMRegressor, RGBMRanker):
        update_registered_converter(
            cls, f"RgbmRs{cls.__name__}", calculate_linear_regressor_output_shapes, convert_rgbm
        )
