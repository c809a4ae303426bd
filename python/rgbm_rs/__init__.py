"""rgbm_rs: gradient boosting with theory-backed methods on a fast Rust core.

Estimators follow scikit-learn conventions::

    from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model
"""
from ._core import FORMAT_VERSION
from .sklearn import RGBMClassifier, RGBMRegressor, load_model

__version__ = "0.1.0"
__all__ = ["RGBMClassifier", "RGBMRegressor", "load_model", "FORMAT_VERSION", "__version__"]
