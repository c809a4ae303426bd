"""Data frames as estimator input: pandas, polars, pyarrow and the interchange protocols.

A frame is read column by column into one float array (float32 when every
column is float32, float64 otherwise) laid out in Fortran order, so each
column is a single contiguous copy. No frame library is imported unless the
input is one of its objects.

Column policy
-------------
* Numeric and boolean columns (including pandas' nullable ``Int*``,
  ``Float*`` and ``boolean`` dtypes, pyarrow-backed pandas columns, polars
  and pyarrow numeric, decimal and boolean columns): their values as floats,
  ``True``/``False`` as 1/0; every kind of null (``None``, ``pd.NA``, polars
  and arrow nulls, ``NaN``) becomes NaN, which the booster treats as missing.
* Categorical columns (pandas ``category``, polars ``Categorical`` and
  ``Enum``, arrow ``dictionary``): the position of the value in the list of
  categories recorded at fit is used as a number; a missing value is NaN.
  The list recorded at fit is the dtype's categories for pandas, the declared
  categories for a polars ``Enum``, the sorted distinct values for a polars
  ``Categorical`` and the (unified) dictionary for arrow. When predicting, a
  value is looked up in the fit-time list *by value* (so the codes of the new
  frame do not matter), and a value that was not seen at fit is treated as
  missing (NaN). A column that was categorical at fit must be categorical
  when predicting, unless it holds nothing but missing values (pandas types a
  column of None alone as object, one of NaN alone as float; polars and
  arrow as null): it is then read as missing.
* pandas string columns (``str``/``string`` dtypes, or objects holding
  strings), when the estimator has ``categorical_features``: categorical,
  with the sorted distinct strings recorded at fit as the categories.
* Anything else (strings otherwise, objects, dates, durations, complex
  numbers, nested types) is refused with a ``TypeError`` naming the columns.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

__all__ = ["read_frame", "Frame"]

_MAX_LISTED = 5


def read_frame(X):
    """A :class:`Frame` over ``X`` if it is a data frame, else None (arrays, lists...)."""
    if isinstance(X, np.ndarray) or X is None or isinstance(X, (list, tuple, str, bytes)):
        return None
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(X, pd.DataFrame):
        return _pandas_frame(X)
    pl = sys.modules.get("polars")
    if pl is not None:
        if isinstance(X, pl.DataFrame):
            return _polars_frame(X)
        if isinstance(X, pl.LazyFrame):
            raise TypeError("X is a polars LazyFrame: call .collect() on it first")
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        if isinstance(X, pa.Table):
            return _arrow_frame(X)
        if isinstance(X, pa.RecordBatch):
            return _arrow_frame(pa.Table.from_batches([X]))
    if hasattr(X, "__arrow_c_stream__") and _importable("pyarrow"):
        import pyarrow as pa

        try:
            table = pa.table(X)
        except (pa.ArrowInvalid, TypeError, ValueError):
            table = None  # a 1-D stream (a series): not a frame
        if table is not None:
            return _arrow_frame(table)
    if hasattr(X, "__dataframe__"):
        try:
            from pandas.api.interchange import from_dataframe
        except ImportError:
            raise TypeError(
                f"X is a {type(X).__name__} data frame; reading it through the data frame "
                "interchange protocol needs pandas to be installed"
            ) from None
        with warnings.catch_warnings():
            # pandas 3 deprecates the protocol; it is only the last resort here.
            warnings.filterwarnings("ignore", message=".*[Ii]nterchange [Pp]rotocol is deprecated")
            return _pandas_frame(from_dataframe(X, allow_copy=True))
    return None


def _importable(name):
    if name in sys.modules:
        return True
    try:
        __import__(name)
    except ImportError:
        return False
    return True


class Frame:
    """Column labels, row count and per-column readers of one data frame."""

    def __init__(self, labels, n_rows, columns, whole=None):
        self.labels = list(labels)
        self.n_rows = int(n_rows)
        self.columns = columns
        # Optional fast path reading the whole frame at once (given the target
        # dtype), for frames whose columns are all plain numeric ones.
        self._whole = whole

    @property
    def n_columns(self):
        return len(self.columns)

    def to_array(self, categories=None, text=False):
        """Read the frame into a 2-D float array.

        ``categories=None`` is fit mode: the categories of every categorical
        column are read from the frame. Otherwise ``categories`` lists, per
        column position, the categories recorded at fit (None for a column
        that was not categorical). Returns the array and the per-position list
        of categories used (None for non-categorical columns).
        """
        if text:
            # String columns are categories (``categorical_features`` is "auto" or a list).
            for col in self.columns:
                if getattr(col, "text", False):
                    col.problem, col.categorical = None, True
        problems = [(label, col.problem) for label, col in zip(self.labels, self.columns) if col.problem]
        if problems:
            strings = [label for label, col in zip(self.labels, self.columns) if getattr(col, "text", False)]
            raise TypeError(_problem_message(problems, strings))
        if categories is not None:
            _check_category_layout(self.labels, self.columns, categories, self._all_missing(categories))
        use_float32 = bool(self.columns) and all(col.float32 for col in self.columns)
        if self._whole is not None and self.columns:
            dtype = np.float32 if use_float32 else np.float64
            return np.asarray(self._whole(dtype), dtype=dtype), [None] * self.n_columns
        out = np.empty((self.n_rows, self.n_columns), dtype=np.float32 if use_float32 else np.float64, order="F")
        used = []
        for j, col in enumerate(self.columns):
            if col.categorical:
                cats = col.categories() if categories is None else list(categories[j])
                out[:, j] = col.encode(cats)
                used.append(cats)
            else:
                out[:, j] = col.values(out.dtype)
                used.append(None)
        return out, used

    def _all_missing(self, categories):
        """Positions of the columns that were categorical at fit, are not
        categorical now and hold nothing but missing values: a column of
        None alone is an object column in pandas, one of NaN alone a float
        column, a polars or arrow column of nulls alone has the null type.
        Read as numbers they are NaN, which is what missing categories are."""
        suspects = [
            j for j, (col, cats) in enumerate(zip(self.columns, categories)) if not col.categorical and cats is not None
        ]
        if not suspects:
            return set()
        if self._whole is not None:
            whole = np.asarray(self._whole(np.float64), dtype=np.float64)
            return {j for j in suspects if np.isnan(whole[:, j]).all()}
        return {j for j in suspects if np.isnan(self.columns[j].values(np.float64)).all()}


def _label(label):
    return repr(label) if not isinstance(label, str) else f"'{label}'"


def _listed(items):
    shown = ", ".join(items[:_MAX_LISTED])
    return shown + (f" and {len(items) - _MAX_LISTED} more" if len(items) > _MAX_LISTED else "")


def _problem_message(problems, strings=()):
    """The TypeError for unreadable columns; ``strings``: the labels of the string
    columns among them, which a word in ``categorical_features`` would read."""
    described = [f"{_label(label)} ({why})" for label, why in problems]
    noun = "column" if len(problems) == 1 else "columns"
    message = (
        f"X has non-numeric {noun} {_listed(described)}. rgbm_rs reads numeric, boolean and "
        "categorical columns only: convert them to numbers, or give them a categorical dtype "
        "(pandas 'category', polars Categorical/Enum, arrow dictionary)."
    )
    if strings:
        message += (
            ' To split string columns by category, pass categorical_features="auto" (every categorical '
            f"and string column) or name them: categorical_features={list(strings)!r}."
        )
    return message


def _check_category_layout(labels, columns, categories, all_missing=()):
    """A column must be categorical at predict time exactly when it was at fit
    (or, if it was, hold only missing values: positions ``all_missing``)."""
    now_categorical = [
        _label(lab) for lab, col, cats in zip(labels, columns, categories) if col.categorical and cats is None
    ]
    now_numeric = [
        _label(lab)
        for j, (lab, col, cats) in enumerate(zip(labels, columns, categories))
        if not col.categorical and cats is not None and j not in all_missing
    ]
    parts = []
    if now_categorical:
        parts.append(f"categorical now but not at fit: {_listed(now_categorical)}")
    if now_numeric:
        parts.append(f"categorical at fit but not now: {_listed(now_numeric)}")
    if parts:
        raise TypeError(
            "X's column types differ from those seen at fit (" + "; ".join(parts) + "). Pass every column "
            "with the kind of dtype it had at fit: category values are mapped to the codes recorded at fit."
        )


def _lookup(fitted):
    """Value -> code for the categories recorded at fit."""
    table = {}
    for code, value in enumerate(fitted):
        if value is not None:
            table.setdefault(value, float(code))
    return table


def _codes_through(own_categories, own_codes, fitted):
    """Map codes into ``own_categories`` (-1 = missing) to fit-time codes (NaN = missing/unseen)."""
    own_codes = np.asarray(own_codes)
    if list(own_categories) == list(fitted):
        lut = np.arange(len(fitted) + 1, dtype=np.float64)
    else:
        table = _lookup(fitted)
        lut = np.array([table.get(v, np.nan) for v in own_categories] + [np.nan], dtype=np.float64)
    lut[-1] = np.nan  # code -1 picks the last entry
    return lut[own_codes]


# ----------------------------------------------------------------------------- pandas


class _PandasColumn:
    def __init__(self, series):
        import pandas as pd

        self.series = series
        self.problem = None
        self.categorical = False
        self.float32 = False
        self._arrow = None
        self.text = False
        dtype = series.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            self.categorical = True
        elif isinstance(dtype, getattr(pd, "ArrowDtype", ())):
            self._arrow = _ArrowColumn(series.array.__arrow_array__())
            self.problem, self.categorical, self.float32 = (
                self._arrow.problem,
                self._arrow.categorical,
                self._arrow.float32,
            )
        elif pd.api.types.is_bool_dtype(dtype):
            pass
        elif getattr(dtype, "kind", None) == "c":
            self.problem = f"complex dtype {dtype}"
        elif pd.api.types.is_numeric_dtype(dtype):
            self.float32 = dtype == np.float32 or dtype == pd.Float32Dtype()
        elif dtype == np.dtype(object):
            kind = pd.api.types.infer_dtype(series, skipna=True)
            if kind not in ("integer", "floating", "mixed-integer-float", "boolean", "decimal", "empty"):
                self.problem = f"object dtype holding {kind} values"
                self.text = kind == "string"
        else:
            self.problem = f"dtype {dtype}"
            self.text = pd.api.types.is_string_dtype(dtype)

    def values(self, dtype):
        if self._arrow is not None:
            return self._arrow.values(dtype)
        return self.series.to_numpy(dtype=dtype, na_value=np.nan)

    def categories(self):
        if self.text:
            return sorted(set(self.series.dropna().tolist()))
        if self._arrow is not None:
            return self._arrow.categories()
        return self.series.cat.categories.tolist()

    def encode(self, fitted):
        if self.text:
            # Unseen strings and missing values become NaN (missing).
            table = _lookup(fitted)
            return np.array(
                [table.get(v, np.nan) if isinstance(v, str) else np.nan for v in self.series.tolist()], dtype=np.float64
            )
        if self._arrow is not None:
            return self._arrow.encode(fitted)
        return _codes_through(self.series.cat.categories.tolist(), self.series.cat.codes.to_numpy(), fitted)


def _pandas_frame(X):
    dtypes = list(X.dtypes)
    if all(isinstance(d, np.dtype) and d.kind in "fiub" for d in dtypes):
        # Plain numpy columns: one conversion (often a view of pandas' block).
        columns = [_Plain(d == np.float32) for d in dtypes]
        return Frame(X.columns, X.shape[0], columns, whole=lambda dtype: X.to_numpy(dtype=dtype))
    columns = [_PandasColumn(X.iloc[:, j]) for j in range(X.shape[1])]
    return Frame(X.columns, X.shape[0], columns)


class _Plain:
    """A plain numeric column read by the frame's whole-frame path."""

    problem = None
    categorical = False

    def __init__(self, float32):
        self.float32 = bool(float32)


# ----------------------------------------------------------------------------- polars


class _PolarsColumn:
    def __init__(self, series):
        import polars as pl

        self.series = series
        self.problem = None
        self.categorical = False
        self.float32 = False
        dtype = series.dtype
        if isinstance(dtype, (pl.Categorical, pl.Enum)):
            self.categorical = True
        elif dtype == pl.Boolean or dtype == pl.Null or dtype.is_numeric():
            self.float32 = dtype == pl.Float32
        else:
            self.problem = f"dtype {dtype}"

    def values(self, dtype):
        import polars as pl

        s = self.series
        if not (self.float32 and dtype == np.float32):
            s = s.cast(pl.Float64)
        return s.to_numpy()

    def categories(self):
        import polars as pl

        if isinstance(self.series.dtype, pl.Enum):
            return self.series.dtype.categories.to_list()
        return self.series.cast(pl.String).drop_nulls().unique().sort().to_list()

    def encode(self, fitted):
        import polars as pl

        s = self.series
        if isinstance(s.dtype, pl.Enum) and s.dtype.categories.to_list() == list(fitted):
            return s.to_physical().cast(pl.Float64).to_numpy()
        table = _lookup(fitted)
        strings = s.cast(pl.String)
        mapping = {v: code for v, code in table.items() if isinstance(v, str)}
        return strings.replace_strict(mapping, default=None, return_dtype=pl.Float64).to_numpy()


def _polars_frame(X):
    return Frame(X.columns, X.height, [_PolarsColumn(s) for s in X.get_columns()])


# ----------------------------------------------------------------------------- pyarrow


class _ArrowColumn:
    def __init__(self, column):
        import pyarrow as pa

        if isinstance(column, pa.Array):
            column = pa.chunked_array([column])
        self.column = column
        self.problem = None
        self.categorical = False
        self.float32 = False
        t = column.type
        if pa.types.is_dictionary(t):
            self.categorical = True
        elif (
            pa.types.is_floating(t)
            or pa.types.is_integer(t)
            or pa.types.is_boolean(t)
            or pa.types.is_decimal(t)
            or pa.types.is_null(t)
        ):
            self.float32 = t == pa.float32()
        else:
            self.problem = f"type {t}"

    def values(self, dtype):
        import pyarrow as pa
        import pyarrow.compute as pc

        col = self.column
        if not (self.float32 and dtype == np.float32):
            col = pc.cast(col, pa.float64())
        if col.num_chunks == 0:
            return np.empty(0, dtype=dtype)
        return col.to_numpy(zero_copy_only=False)

    def categories(self):
        col = self.column.unify_dictionaries()
        if col.num_chunks == 0:
            return []
        return [v for v in col.chunk(0).dictionary.to_pylist() if v is not None]

    def encode(self, fitted):
        parts = [
            _codes_through(
                chunk.dictionary.to_pylist(), chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False), fitted
            )
            for chunk in self.column.chunks
        ]
        return np.concatenate(parts) if parts else np.empty(0)


def _arrow_frame(table):
    return Frame(table.column_names, table.num_rows, [_ArrowColumn(c) for c in table.columns])
