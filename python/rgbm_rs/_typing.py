"""Type aliases of the public API, for type checkers (nothing here is checked at run time)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import os

    import scipy.sparse

    from .callback import CallbackEnv

#: A feature matrix: anything numpy converts (arrays, nested lists, pandas and
#: polars frames, pyarrow tables) or a scipy.sparse matrix or array.
MatrixLike = Union[npt.ArrayLike, "scipy.sparse.spmatrix", "scipy.sparse.sparray"]
#: Labels, weights or starting scores: anything numpy converts.
VectorLike = npt.ArrayLike
#: A custom loss: (y_true, raw_score) -> (gradient, hessian).
LossFunction = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
#: A custom metric: (y_true, raw_score[, weight]) -> (name, value, higher_is_better).
MetricFunction = Callable[..., Any]
Metric = Union[str, MetricFunction]
Callback = Callable[["CallbackEnv"], Any]
PathLike = Union[str, "os.PathLike[str]"]
#: Feature indices, names or a boolean mask.
FeatureSelection = Union[Sequence[int], Sequence[str], Sequence[bool], npt.NDArray[Any]]
