"""Input and parameter checks done in Python before any native code runs.

Data frames (pandas, polars, pyarrow, whatever narwhals takes, and other
libraries through the Arrow stream or data frame interchange protocols) are
read by :mod:`._frames`; see
its docstring for the column policy. In short: numeric and boolean columns are
used as floats with every kind of null as NaN (= missing); categorical columns
use the position of their value in the categories recorded at fit, a value
unseen at fit counting as missing; other columns are refused. String column
names become ``feature_names_in_`` whatever the library, and are checked at
predict time with scikit-learn's messages and warnings.
"""

from __future__ import annotations

import numbers
import sys
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.validation import _check_sample_weight, check_array, column_or_1d, validate_data

from . import _core
from ._frames import _codes_through, read_frame

# No finiteness scan here: NaN means missing, and every native entry point
# that reads X (fit, predict, eval sets) refuses infinity itself with a
# ValueError naming its row and column, so a second pass over X would only
# cost time (1 ms on a9a's 32561 x 123, 4 % of its warm setup).
_X_CHECKS = dict(dtype=[np.float64, np.float32], ensure_all_finite=False, accept_sparse=False)
# scipy.sparse input (any format, sparray or spmatrix) is converted to a
# layout the core reads without densifying: CSR or CSC for binning (either is
# binned as it is, so fit makes no copy of it), CSR for prediction and
# evaluation sets.
_FIT_CHECKS = dict(_X_CHECKS, accept_sparse=["csr", "csc"], accept_large_sparse=True)
_PREDICT_CHECKS = dict(_X_CHECKS, accept_sparse="csr", accept_large_sparse=True)


def strings_are_categories(estimator) -> bool:
    """Whether fit reads a frame's string columns as categories: with
    ``categorical_features="auto"`` or a list (which may name them); the
    default "from_dtype" takes categorical dtypes only, None none at all."""
    spec = getattr(estimator, "categorical_features", None)
    return spec is not None and not (isinstance(spec, str) and spec == "from_dtype")


def check_X_y(
    estimator, X, y, *, regression: bool, model=None, what="init_model", multi_output=False
) -> tuple[Any, np.ndarray]:
    """Validate training data; NaN in X means missing, infinity is an error.

    X may be an array or a data frame. For a frame, string column names are
    stored in ``feature_names_in_`` and the categories of its categorical
    columns in ``_categories_`` (feature name, or position when the frame has
    no string names -> list of categories); prediction maps category values to
    these codes, an unseen value counting as missing.

    ``multi_output``: y may be 2-D (one column per target; NaN refused).

    ``model``: the fitted estimator a continued fit starts from (``what``:
    "init_model" or "warm_start"). Its trees read X's columns by position, so
    X is checked and encoded as ``model.predict`` would read it (a frame's
    columns by name in the fit's order, category values mapped to the
    categories recorded at that fit), and ``estimator`` records that model's
    categories.
    """
    check_sparse_index(X)
    if model is not None:
        return _check_continued_X_y(estimator, model, what, X, y, regression, multi_output)
    frame = read_frame(X)
    if frame is None:
        X, y = validate_data(
            estimator, X, _as_1d(y), reset=True, y_numeric=regression, multi_output=multi_output, **_FIT_CHECKS
        )
        set_categories(estimator, None, [])
        return _contiguous(X), y
    names = _feature_names(frame.labels)
    X, categories = frame.to_array(text=strings_are_categories(estimator))
    X, y = validate_data(
        estimator, X, _as_1d(y), reset=True, y_numeric=regression, multi_output=multi_output, **_X_CHECKS
    )
    if names is not None:
        estimator.feature_names_in_ = names
    set_categories(estimator, names, categories)
    return _contiguous(X), y


def _check_continued_X_y(estimator, model, what, X, y, regression, multi_output):
    frame = read_frame(X)
    names = None if frame is None else _feature_names(frame.labels)
    with _naming(what):
        if frame is None:
            # predict's checks of the width and (absent) names, keeping CSC input as it is.
            X = validate_data(model, X, reset=False, **_FIT_CHECKS)
        else:
            X = check_X(model, X)
    X, y = validate_data(
        estimator, X, _as_1d(y), reset=True, y_numeric=regression, multi_output=multi_output, **_FIT_CHECKS
    )
    if names is not None:
        estimator.feature_names_in_ = names
    set_categories(estimator, names, fitted_categories(model, X.shape[1]))
    return _contiguous(X), y


def continued_model(what):
    """The model a continued fit starts from, in words: ``what`` is
    "init_model" or "warm_start"."""
    return "the model warm_start continues" if what == "warm_start" else what


class _naming:
    """Prefix the ValueError or TypeError of a column check with the model it checks against."""

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is not None and kind in (ValueError, TypeError):
            raise kind(f"X does not have the columns of {continued_model(self.what)}: {error}") from None
        return False


def check_model_columns(estimator, model, what="init_model"):
    """The columns of a continued fit's X against those of the model it continues.

    For fits that read X before they know the model (the Dask estimators):
    ``estimator`` holds what its X recorded (``n_features_in_``,
    ``feature_names_in_``, the categories), ``model`` is the fitted estimator
    the fit continues (``what``: "init_model" or "warm_start"). The names are
    checked as ``model.predict`` checks them (ValueError; a warning when only
    one side has names); a column must be categorical in both or in neither
    (TypeError), and its categories must be the same list, in the same order
    (ValueError): the model's trees read the codes, and the codes X was
    encoded to are positions in X's own categories.
    """
    n, expected = int(estimator.n_features_in_), int(model.n_features_in_)
    with _naming(what):
        if n != expected:
            raise ValueError(
                f"X has {n} features, but {type(model).__name__} is expecting {expected} features as input."
            )
        names = getattr(estimator, "feature_names_in_", None)
        _check_frame_names(model, names)
        labels = [str(c) for c in names] if names is not None else list(range(n))
        mine, theirs = fitted_categories(estimator, n), fitted_categories(model, n)
        layout = [(j, a is not None) for j, (a, b) in enumerate(zip(mine, theirs)) if (a is None) != (b is None)]
        if layout:
            now = [_frame_label(labels[j]) for j, categorical in layout if categorical]
            before = [_frame_label(labels[j]) for j, categorical in layout if not categorical]
            parts = ([f"categorical now but not at fit: {', '.join(now)}"] if now else []) + (
                [f"categorical at fit but not now: {', '.join(before)}"] if before else []
            )
            raise TypeError(f"X's column types differ from those seen at fit ({'; '.join(parts)})")
        for j, (a, b) in enumerate(zip(mine, theirs)):
            if a is not None and list(a) != list(b):
                raise ValueError(
                    f"the categories of column {_frame_label(labels[j])} differ from those recorded at fit: "
                    f"{_short_list(a)} now, {_short_list(b)} at fit. The model's trees read the categories' "
                    "positions, so give the column the categories of the fit, in their order "
                    "(pandas: .cat.set_categories(...))"
                )


def _frame_label(label):
    return f"'{label}'" if isinstance(label, str) else str(label)


def _short_list(values, limit=8):
    shown = ", ".join(repr(v) for v in list(values)[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}] ({len(values)})"


def check_X(estimator, X):
    """Validate prediction data against what the estimator was fitted on.

    A data frame must have the columns seen at fit, in the same order (a
    ValueError lists the unexpected, missing or misplaced names); categorical
    columns are encoded with the categories recorded at fit. A plain array is
    taken as is, categorical features as their fit-time codes.
    """
    if _is_plain_small_batch(estimator, X):
        return X
    # A Dataset (defined in a higher layer) is predicted on by its raw rows.
    rows = getattr(X, "_prediction_rows", None)
    if callable(rows):
        categories = getattr(X, "_categories", None)
        if categories is not None:
            return _frame_dataset_rows(estimator, rows(), X.feature_names, categories)
        X = rows()
    check_sparse_index(X)
    frame = read_frame(X)
    if frame is None:
        return _contiguous(validate_data(estimator, X, reset=False, **_PREDICT_CHECKS))
    _check_frame_names(estimator, _feature_names(frame.labels))
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and frame.n_columns != expected:
        raise ValueError(
            f"X has {frame.n_columns} features, but {type(estimator).__name__} "
            f"is expecting {expected} features as input."
        )
    # String columns are accepted where fit recorded categories (checked by position).
    X, _ = frame.to_array(categories=fitted_categories(estimator, frame.n_columns), text=True)
    X = check_array(X, input_name="X", estimator=estimator, **_X_CHECKS)
    return _contiguous(X)


def _frame_dataset_rows(estimator, X, names, categories):
    """The rows of a Dataset read from a frame, checked as that frame would
    be (names, width, which columns are categorical) and its category codes
    mapped to the categories recorded at fit, by value."""
    _check_frame_names(estimator, names)
    n = X.shape[1]
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and n != expected:
        raise ValueError(
            f"X has {n} features, but {type(estimator).__name__} is expecting {expected} features as input."
        )
    fitted = fitted_categories(estimator, n)
    labels = list(names) if names is not None else list(range(n))
    now = [_frame_label(labels[j]) for j in range(n) if categories[j] is not None and fitted[j] is None]
    before = [_frame_label(labels[j]) for j in range(n) if categories[j] is None and fitted[j] is not None]
    if now or before:
        parts = ([f"categorical now but not at fit: {', '.join(now)}"] if now else []) + (
            [f"categorical at fit but not now: {', '.join(before)}"] if before else []
        )
        raise TypeError(f"X's column types differ from those seen at fit ({'; '.join(parts)})")
    X = check_array(X, input_name="X", estimator=estimator, **_PREDICT_CHECKS)
    remap = [j for j in range(n) if categories[j] is not None and list(categories[j]) != list(fitted[j])]
    if remap:
        X = np.array(X, dtype=X.dtype, order="C", copy=True)
        for j in remap:
            col = X[:, j]
            codes = np.where(np.isnan(col), -1, col).astype(np.intp)
            X[:, j] = _codes_through(categories[j], codes, fitted[j])
    return _contiguous(X)


# Up to this many values a prediction batch may skip scikit-learn's checks.
_FAST_PATH_MAX_VALUES = 4096


def _is_plain_small_batch(estimator, X) -> bool:
    """True for a small float numpy matrix that scikit-learn's checks would pass unchanged.

    scikit-learn's validation costs about 100 µs per call, more than predicting
    one row with hundreds of trees. Anything else (other types or dtypes,
    wrong width, no rows, infinity, or an estimator fitted with feature names,
    which must warn) takes the full path, with its messages and warnings.
    """
    return (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype in (np.float32, np.float64)
        and 0 < X.size <= _FAST_PATH_MAX_VALUES
        and X.flags.c_contiguous
        and X.flags.aligned
        and X.shape[1] == getattr(estimator, "n_features_in_", -1)
        and getattr(estimator, "feature_names_in_", None) is None
        and not np.isinf(X).any()
    )


def encode_classes(y):
    """``np.unique(y, return_inverse=True)`` for classification labels.

    Integer and boolean labels over a range no wider than the data are
    counted with ``np.bincount`` instead of sorted (800k int32 labels: 6 ms
    against 22 ms); the classes and codes are the same as np.unique's.
    Other labels (floats, strings, wide integer ranges) go to np.unique.
    """
    y = np.asarray(y)
    if y.ndim == 1 and y.size and y.dtype.kind in "iub":
        lo, hi = int(y.min()), int(y.max())
        span = hi - lo + 1
        # The table has at most max(rows, 256) slots; values beyond ±2**62
        # (uint64) would not survive the cast to intp.
        if span <= max(y.size, 256) and -(2**62) < lo and hi < 2**62:
            shifted = y.astype(np.intp) - lo
            counts = np.bincount(shifted, minlength=span)
            present = np.flatnonzero(counts)
            codes = np.zeros(span, dtype=np.intp)
            codes[present] = np.arange(len(present))
            return (present + lo).astype(y.dtype), codes[shifted]
    return np.unique(y, return_inverse=True)


def _as_1d(v):
    """polars Series and arrow arrays as numpy (nulls as NaN); anything else unchanged."""
    pl = sys.modules.get("polars")
    if pl is not None and isinstance(v, pl.Series):
        return v.to_numpy()
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(v, (pa.Array, pa.ChunkedArray)):
        return v.to_numpy(zero_copy_only=False)
    return v


def _feature_names(labels):
    """Column labels as ``feature_names_in_``: all strings, or None (scikit-learn's rule)."""
    if not labels:
        return None
    is_str = [isinstance(label, str) for label in labels]
    if all(is_str):
        return np.asarray(labels, dtype=object)
    if any(is_str):
        types = sorted({type(label).__qualname__ for label in labels})
        raise TypeError(
            "Feature names are only supported if all input features have string names, "
            f"but your input has {types} as feature name / column name types. "
            "If you want feature names to be stored and validated, you must convert "
            "them all to strings, by using X.columns = X.columns.astype(str) for "
            "example. Otherwise you can remove feature / column names from your input "
            "data, or convert them all to a non-string data type."
        )
    return None


def _name_list(names, limit=5):
    lines = [f"- {name}\n" for name in names[:limit]]
    if len(names) > limit:
        lines.append("- ...\n")
    return "".join(lines)


def _check_frame_names(estimator, names):
    """scikit-learn's feature name check (same messages), for any kind of frame."""
    fitted = getattr(estimator, "feature_names_in_", None)
    cls = type(estimator).__name__
    if fitted is None and names is None:
        return
    if fitted is None:
        warnings.warn(f"X has feature names, but {cls} was fitted without feature names", UserWarning, stacklevel=3)
        return
    if names is None:
        warnings.warn(
            f"X does not have valid feature names, but {cls} was fitted with feature names", UserWarning, stacklevel=3
        )
        return
    fitted = [str(n) for n in fitted]
    given = [str(n) for n in names]
    if fitted == given:
        return
    message = "The feature names should match those that were passed during fit.\n"
    unexpected = sorted(set(given) - set(fitted))
    missing = sorted(set(fitted) - set(given))
    if unexpected:
        message += "Feature names unseen at fit time:\n" + _name_list(unexpected)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + _name_list(missing)
    if not unexpected and not missing:
        repeated = sorted({n for n in given if given.count(n) > 1})
        if repeated:
            message += "Feature names repeated in X:\n" + _name_list(repeated)
        else:
            message += "Feature names must be in the same order as they were in fit.\n"
            moved = [f"position {j}: {g} (was {f} at fit)" for j, (f, g) in enumerate(zip(fitted, given)) if f != g]
            message += "Columns out of place:\n" + _name_list(moved)
    raise ValueError(message)


def set_categories(estimator, names, categories):
    """Record fit-time categories as ``_categories_`` (name or position -> list); drop stale ones."""
    found = {
        (names[j] if names is not None else j): list(cats) for j, cats in enumerate(categories) if cats is not None
    }
    if found:
        estimator._categories_ = found
    elif hasattr(estimator, "_categories_"):
        del estimator._categories_


def fitted_categories(estimator, n_features=None):
    """The fit-time categories per feature position (None for non-categorical features)."""
    n = int(getattr(estimator, "n_features_in_", 0) if n_features is None else n_features)
    recorded = getattr(estimator, "_categories_", None) or {}
    names = getattr(estimator, "feature_names_in_", None)
    keys = list(names) if names is not None and len(names) == n else list(range(n))
    return [recorded.get(k, recorded.get(j)) for j, k in enumerate(keys)]


def check_sparse_index(X):
    """A compressed sparse matrix's index pointer must run from 0 up to its
    number of entries without decreasing: checked here (one pass of numpy)
    because scipy's canonicalisation, which runs first, does not check it
    and fails obscurely (or reads out of bounds) on a bad one."""
    if not sp.issparse(X) or X.format not in ("csr", "csc", "bsr"):
        return
    indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
    if X.format == "bsr":
        major = X.shape[0] // X.blocksize[0]
    else:
        major = X.shape[0] if X.format == "csr" else X.shape[1]
    what = f"sparse X ({X.format})"
    if indptr.ndim != 1 or indptr.shape[0] != major + 1:
        raise ValueError(f"{what}: indptr has {indptr.size} entries, expected {major + 1}")
    if indptr.dtype.kind not in "iu":
        raise ValueError(f"{what}: indptr must hold integers, got dtype {indptr.dtype}")
    if indptr[0] != 0 or indptr[-1] != indices.shape[0]:
        raise ValueError(
            f"{what}: indptr must run from 0 to the number of stored entries ({indices.shape[0]}), "
            f"got {indptr[0]} to {indptr[-1]}"
        )
    falls = np.flatnonzero(indptr[1:] < indptr[:-1])
    if falls.size:
        k = int(falls[0])
        raise ValueError(
            f"{what}: indptr must not decrease, but it falls from {indptr[k]} to {indptr[k + 1]} at entry {k + 1}"
        )


def _contiguous(X):
    """X as the core reads it without a copy: C- or Fortran-contiguous and aligned.

    A sparse matrix gets sorted indices without duplicates (summed, as
    scipy does), on a copy when the caller's is not in that form.
    """
    if sp.issparse(X):
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return X
    if not (X.flags.aligned and (X.flags.c_contiguous or X.flags.f_contiguous)):
        X = np.require(X, requirements=["C", "A"])
    return X


def native_matrix(X):
    """X as ``_core`` takes it: the array itself, or a sparse matrix's arrays.

    Indices are passed as int32 and the index pointer as int64 (copied only
    when scipy holds them in another type).
    """
    if not sp.issparse(X):
        return X
    if X.format not in ("csc", "csr"):
        X = X.tocsr()
    if max(X.shape) > np.iinfo(np.int32).max:
        raise ValueError(f"sparse X of shape {X.shape}: at most {np.iinfo(np.int32).max} rows and columns")
    return (
        X.format,
        X.shape[0],
        X.shape[1],
        np.require(X.indptr, dtype=np.int64, requirements=["C", "A"]),
        np.require(X.indices, dtype=np.int32, requirements=["C", "A"]),
        np.require(X.data, requirements=["C", "A"]),
    )


def as_rows(X, dtype):
    """Evaluation or validation rows in the layout prediction reads: a C array, or CSR."""
    if sp.issparse(X):
        return _contiguous(X.tocsr().astype(dtype, copy=False))
    return np.ascontiguousarray(X, dtype=dtype)


def native_vector(v):
    """A 1-D float64 array as the core reads it: contiguous and aligned (copied only if needed)."""
    return np.require(v, dtype=np.float64, requirements=["C", "A"])


#: The refusal of weights without a positive one.
ZERO_WEIGHTS = "sample_weight sums to zero: at least one row needs a positive weight"


def check_weights(sample_weight, X, *, whole=True):
    """Finite, non-negative float64 weights, one per row, not all zero (or None).

    ``whole=False`` checks one part of the rows (a partition): it may be all
    zero, the caller checking that some part has a positive weight.
    """
    if sample_weight is None:
        return None
    w = _check_sample_weight(
        _as_1d(sample_weight), X, dtype=np.float64, ensure_non_negative=True, allow_all_zero_weights=not whole
    )
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity")
    # Only relative weights matter (the core normalises them to mean 1), so a
    # sum that overflows is no error; all zero is.
    if whole and not np.any(w > 0):
        raise ValueError(ZERO_WEIGHTS)
    return native_vector(w)


def resolve_seed(random_state) -> int:
    """An int seed for the native RNG: the int itself, or drawn from numpy's generator."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if int(random_state) < 0 or int(random_state) >= 2**64:
            raise ValueError(f"random_state must be in [0, 2**64), got {random_state}")
        return int(random_state)
    rng = check_random_state(random_state)
    return int(rng.randint(0, 2**31 - 1))


def resolve_n_jobs(n_jobs):
    """joblib's convention: None or -1 = all cores, -k = all but k-1, counting the cores
    this process may use (affinity mask and cgroup quota, as the core counts them)."""
    if n_jobs is None or n_jobs == -1:
        return None
    n_jobs = int(n_jobs)
    if n_jobs > 0:
        return n_jobs
    if n_jobs < 0:
        return max(1, _core.available_cores() + 1 + n_jobs)
    raise ValueError("n_jobs must be a non-zero integer or None, got 0")


def check_target_columns(y) -> np.ndarray:
    """2-D targets as one 1-D target when they have one column, as
    scikit-learn's single-output estimators take them (with its
    DataConversionWarning); other 2-D targets unchanged."""
    if y.ndim == 2 and y.shape[1] == 1:
        return column_or_1d(y, warn=True)
    if y.ndim == 2 and y.shape[1] == 0:
        raise ValueError("y has no columns")
    return y


def check_regression_target(y) -> np.ndarray:
    """Numeric, finite targets as float64 (the core refuses magnitudes its losses cannot square)."""
    if y.dtype.kind not in "fiub":
        raise ValueError(f"y must be numeric for regression, got values of dtype {y.dtype} (e.g. {y.flat[0]!r})")
    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    return y


def as_int(value, name):
    """An integer (numpy integers too; bools and floats refused) as int; the core checks its bounds."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def _as_list(values, name, kind, what):
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a list of {what}s, got {type(values).__name__}")
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, kind):
            raise ValueError(f"{name} must hold {what}s, got {v!r}")
        out.append(v)
    return out


def as_int_list(values, name):
    """A list of ints (no floats, bools or strings) as Python ints; the core checks their bounds."""
    return [int(v) for v in _as_list(values, name, numbers.Integral, "int")]


def as_float_list(values, name):
    """A list of finite numbers (JSON carries no NaN) as Python floats; the core checks their bounds."""
    out = [float(v) for v in _as_list(values, name, numbers.Real, "number")]
    bad = [v for v in out if not np.isfinite(v)]
    if bad:
        raise ValueError(f"{name} must hold finite numbers, got {bad[0]!r}")
    return out
