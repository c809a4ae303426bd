"""Data frames as estimator input, read through narwhals.

pandas, polars and pyarrow frames, and whatever else narwhals takes, are read
by one path: narwhals types each column, and :class:`_Column` applies the
policy below to that type. Objects known only through the Arrow PyCapsule
stream interface (``__arrow_c_stream__``, e.g. duckdb and ibis results) are
read through it, objects known only through the data frame interchange
protocol through pandas. A frame is read column by column into one float
array (float32 when every column is float32, float64 otherwise) laid out in
Fortran order, so each column is a single contiguous copy. Neither narwhals
nor this module imports a frame library the input does not come from.

What narwhals does not express is read natively, under the same policy: the
category lists and codes of categorical columns (narwhals lists the values
present, not a pandas dtype's categories, which may be of any type, nor
arrow's dictionaries), pandas object columns (typed by their values), and a
pandas frame of plain numpy numeric columns, converted whole (often a view
of its block).

Column policy
-------------
* Numeric and boolean columns (including pandas' nullable ``Int*``,
  ``Float*`` and ``boolean`` dtypes, pyarrow-backed pandas columns, polars
  and pyarrow numeric, decimal and boolean columns, pandas object columns
  holding numbers): their values as floats, ``True``/``False`` as 1/0;
  every kind of null (``None``, ``pd.NA``, polars and arrow nulls, ``NaN``)
  becomes NaN, which the booster treats as missing. So does a column of
  nulls alone (polars and arrow null type, pandas objects).
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
* String columns (pandas ``str``/``string`` dtypes or objects holding
  strings, polars ``String``, arrow ``string``/``large_string``), when
  ``categorical_features`` is ``"auto"`` or a list (and always when
  predicting, where fit recorded categories): categorical, with the sorted
  distinct strings recorded at fit as the categories. Otherwise they are
  refused with a ``TypeError`` that names the word to pass.
* Anything else (objects, dates, durations, complex numbers, nested types)
  is refused with a ``TypeError`` naming the columns; so are lazy frames
  (collect them first). Column names must be distinct (``ValueError``).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

__all__ = ["read_frame", "Frame"]

_MAX_LISTED = 5
# What pandas' infer_dtype calls an object column read as numbers.
_NUMERIC_OBJECTS = ("integer", "floating", "mixed-integer-float", "boolean", "decimal", "empty")


def read_frame(X):
    """A :class:`Frame` over ``X`` if it is a data frame, else None (arrays, lists...)."""
    if isinstance(X, np.ndarray) or X is None or isinstance(X, (list, tuple, str, bytes)):
        return None
    plain = _plain_pandas(X)
    if plain is not None:
        return plain
    df = _narwhals_frame(X)
    if df is None:
        if hasattr(X, "__dataframe__"):
            return read_frame(_from_interchange(X))
        return None
    dtypes = list(df.schema.values())
    whole = _whole_floats(df, dtypes)
    if whole is not None:
        return whole
    return Frame(df.columns, df.shape[0], [_Column(s, d) for s, d in zip(df.iter_columns(), dtypes)])


def _plain_pandas(X):
    """The whole-frame fast path: a pandas frame of plain numpy numeric and
    boolean columns with distinct names, read in one conversion."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(X, pd.DataFrame) or not X.columns.is_unique:
        return None
    dtypes = list(X.dtypes)
    if not all(isinstance(d, np.dtype) and d.kind in "fiub" for d in dtypes):
        return None
    columns = [_Plain(d == np.float32) for d in dtypes]
    return Frame(X.columns, X.shape[0], columns, whole=lambda dtype: X.to_numpy(dtype=dtype))


def _whole_floats(df, dtypes):
    """The whole-frame path of a polars frame whose columns are all Float64
    or all Float32: polars converts it in one pass to a Fortran-ordered
    array (nulls as NaN), and per-column reading costs more on small batches."""
    import narwhals.stable.v2 as nw

    if not dtypes or not df.implementation.is_polars():
        return None
    for kind in (nw.Float64, nw.Float32):
        if all(d == kind for d in dtypes):
            columns = [_Plain(kind == nw.Float32) for _ in dtypes]
            return Frame(df.columns, df.shape[0], columns, whole=lambda dtype: df.to_numpy())
    return None


def _narwhals_frame(X):
    """``X`` as an eager narwhals DataFrame, or None when it is no frame."""
    import narwhals.stable.v2 as nw
    from narwhals.exceptions import DuplicateError

    dd = sys.modules.get("dask.dataframe")
    if dd is not None and isinstance(X, dd.DataFrame):
        raise TypeError(
            "X is a dask DataFrame: fit the estimators of rgbm_rs.dask on it, or call .compute() on it first"
        )
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(X, pa.RecordBatch):
        X = pa.Table.from_batches([X])  # narwhals takes tables, not batches
    try:
        df = nw.from_native(X, pass_through=True)
    except DuplicateError as e:
        raise ValueError(f"X's column names must be distinct (features are matched by name): {e}") from None
    if isinstance(df, nw.DataFrame):
        return df
    if isinstance(df, nw.LazyFrame):
        if df.implementation.is_polars():
            raise TypeError("X is a polars LazyFrame: call .collect() on it first")
        if not hasattr(X, "__arrow_c_stream__"):
            raise TypeError(f"X is a lazy {type(X).__module__.split('.')[0]} frame: collect it into a data frame first")
    if hasattr(X, "__arrow_c_stream__") and _importable("pyarrow"):
        import pyarrow as pa

        try:
            return nw.from_arrow(X, backend=pa)
        except (pa.ArrowInvalid, TypeError, ValueError):
            return None  # a 1-D stream (a series): not a frame
    return None


def _from_interchange(X):
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
        return from_dataframe(X, allow_copy=True)


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


# ----------------------------------------------------------------------------- columns


class _Plain:
    """A plain numeric column read by the frame's whole-frame path."""

    problem = None
    categorical = False
    text = False

    def __init__(self, float32):
        self.float32 = bool(float32)


class _Column:
    """One column of a narwhals frame: its kind under the column policy
    (``problem``, ``categorical``, ``text``, ``float32``) and its readers."""

    def __init__(self, series, dtype):
        import narwhals.stable.v2 as nw

        self.series = series
        self.dtype = dtype  # narwhals' type of the column
        self.problem = None
        self.categorical = False
        self.text = False
        self.float32 = False
        self._by_pandas = False  # numbers narwhals does not type, converted by pandas
        self._categories = None
        native = series.to_native()
        if _is_pandas_series(native) and (native.dtype == np.dtype(object) or dtype == nw.Unknown):
            # narwhals guesses an object column's type (None alone reads as
            # String) and leaves some extension dtypes (Sparse, Period...)
            # untyped: pandas inspects the values, as the policy says.
            self._pandas_kind(native)
        elif isinstance(dtype, (nw.Categorical, nw.Enum)):
            self.categorical = True
            self._categories = _categories_of(series)
        elif dtype.is_numeric() or dtype == nw.Boolean:
            self.float32 = dtype == nw.Float32
        elif dtype == nw.String:
            self.text = True
            self.problem = f"dtype {_native_dtype(native)}"
        elif dtype == nw.Unknown and series.null_count() == len(series):
            pass  # polars and arrow's null type: missing values alone
        else:
            self.problem = f"dtype {_native_dtype(native)}"

    def _pandas_kind(self, native):
        import pandas as pd

        dtype = native.dtype
        if dtype == np.dtype(object):
            kind = pd.api.types.infer_dtype(native, skipna=True)
            if kind in _NUMERIC_OBJECTS:
                self._by_pandas = True
            else:
                self.problem = f"object dtype holding {kind} values"
                self.text = kind == "string"
        elif getattr(dtype, "kind", None) == "c":
            self.problem = f"complex dtype {dtype}"
        elif pd.api.types.is_numeric_dtype(dtype):
            self._by_pandas = True
        else:
            self.problem = f"dtype {dtype}"

    def values(self, dtype):
        import narwhals.stable.v2 as nw

        if self._by_pandas:
            return self.series.to_native().to_numpy(dtype=np.float64, na_value=np.nan)
        target = nw.Float32 if self.float32 and dtype == np.float32 else nw.Float64
        s = self.series if self.dtype == target else self.series.cast(target)
        return s.to_numpy()

    def categories(self):
        if self.text:
            return sorted(self.series.drop_nulls().unique().to_list())
        return self._categories.categories()

    def encode(self, fitted):
        if self.text:
            return _by_value(self.series, fitted)
        return self._categories.encode(fitted)


def _is_pandas_series(native):
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(native, pd.Series)


def _native_dtype(native):
    return native.type if hasattr(native, "type") and not hasattr(native, "dtype") else native.dtype


def _by_value(strings, fitted):
    """Fit-time codes of a narwhals string column (NaN for missing and unseen values)."""
    import narwhals.stable.v2 as nw

    present = strings.drop_nulls().unique().to_list()
    if not present:
        return np.full(len(strings), np.nan)
    table = _lookup(fitted)
    codes = [table.get(v, np.nan) for v in present]
    return strings.replace_strict(present, codes, return_dtype=nw.Float64).to_numpy()


def _categories_of(series):
    """The native reader of a categorical column's categories and codes."""
    native = series.to_native()
    if _is_pandas_series(native):
        import pandas as pd

        if isinstance(native.dtype, pd.CategoricalDtype):
            return _PandasCategories(native)
        if isinstance(native.dtype, getattr(pd, "ArrowDtype", ())):
            return _ArrowCategories(native.array.__arrow_array__())
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(native, (pa.ChunkedArray, pa.Array)):
        return _ArrowCategories(native)
    return _ValueCategories(series)


class _PandasCategories:
    """A pandas ``category`` column: its dtype's categories, of any type."""

    def __init__(self, native):
        self.native = native

    def categories(self):
        return self.native.cat.categories.tolist()

    def encode(self, fitted):
        return _codes_through(self.native.cat.categories.tolist(), self.native.cat.codes.to_numpy(), fitted)


class _ArrowCategories:
    """An arrow ``dictionary`` column: its (unified) dictionary; each chunk
    may have its own, mapped by value."""

    def __init__(self, column):
        import pyarrow as pa

        self.column = pa.chunked_array([column]) if isinstance(column, pa.Array) else column

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


class _ValueCategories:
    """A polars ``Categorical`` or ``Enum`` column (or another library's):
    an Enum's declared categories, else the sorted distinct values; codes
    looked up by value."""

    def __init__(self, series):
        self.series = series

    def categories(self):
        import narwhals.stable.v2 as nw

        if isinstance(self.series.dtype, nw.Enum):
            return list(self.series.dtype.categories)
        return sorted(self.series.cast(nw.String).drop_nulls().unique().to_list())

    def encode(self, fitted):
        import narwhals.stable.v2 as nw

        native = self.series.to_native()
        pl = sys.modules.get("polars")
        same = isinstance(self.series.dtype, nw.Enum) and list(self.series.dtype.categories) == list(fitted)
        if same and pl is not None and isinstance(native, pl.Series):
            return native.to_physical().cast(pl.Float64).to_numpy()  # the Enum's codes are the fit's
        return _by_value(self.series.cast(nw.String), fitted)
