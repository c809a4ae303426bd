"""rgbm_rs: gradient boosting with theory-backed methods on a fast Rust core.

Estimators follow scikit-learn conventions::

    from rgbm_rs import RGBMClassifier, RGBMRanker, RGBMRegressor, load_model

Submodules: :mod:`rgbm_rs.callback` (callbacks for ``fit``),
:mod:`rgbm_rs.plotting` (matplotlib plots, optional); :func:`to_onnx`
exports a fitted estimator as ONNX (needs the onnx package), and
:func:`register_skl2onnx` lets skl2onnx export pipelines ending in one;
:func:`to_shap`
gives a fitted model to the ``shap`` package's ``TreeExplainer``.
:class:`Dataset` holds training rows binned once, fitted whole or by
subsets; :func:`cv` cross-validates on one.
:data:`SKOPS_TRUSTED_TYPES` lets skops (and MLflow's default ``sklearn``
flavor) load a fitted estimator; ``rgbm_rs.mlflow.autolog()`` (imported on
its own, needs mlflow) logs fits to MLflow.
"""

from . import callback
from ._core import FORMAT_VERSION, __version__
from ._cv import CVResult, cv
from ._dataset import Dataset
from ._introspect import dump_model, tree_to_dict, trees_to_dataframe
from ._onnx import to_onnx
from ._shap import to_shap
from ._skl2onnx import register_skl2onnx
from ._threadpool import register as _register_threadpool
from .callback import early_stopping, log_evaluation, record_evaluation, reset_parameter
from .sklearn import SKOPS_TRUSTED_TYPES, RGBMClassifier, RGBMRanker, RGBMRegressor, load_model

__all__ = [
    "RGBMClassifier",
    "RGBMRegressor",
    "RGBMRanker",
    "Dataset",
    "cv",
    "CVResult",
    "load_model",
    "callback",
    "early_stopping",
    "log_evaluation",
    "record_evaluation",
    "reset_parameter",
    "dump_model",
    "tree_to_dict",
    "trees_to_dataframe",
    "to_onnx",
    "register_skl2onnx",
    "to_shap",
    "SKOPS_TRUSTED_TYPES",
    "FORMAT_VERSION",
    "__version__",
]

_register_threadpool()
