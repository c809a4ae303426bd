"""The public :class:`Dataset`: training rows binned once, with their labels,
weights, query groups and starting scores, fitted many times (whole, or as
row subsets that share its bins) and used as evaluation data."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array

from . import _core, _params
from ._frames import read_frame
from ._interrupt import fit_interrupt
from ._validation import (
    _FIT_CHECKS,
    _X_CHECKS,
    _contiguous,
    _feature_names,
    check_sparse_index,
    check_weights,
    native_matrix,
    resolve_n_jobs,
    resolve_seed,
)

__all__ = ["Dataset"]


class Dataset:
    """Training rows binned once, as LightGBM's ``Dataset``.

    Pass it to an estimator's ``fit`` as ``X`` (labels, weights, query groups
    and starting scores then come from it) or in ``eval_set``, or to
    :func:`rgbm_rs.cv`; ``predict`` and its kin read its raw rows (a
    frame's Dataset is checked as the frame would be: column names, and its
    categories matched to the fit's by value). The rows are binned by the first fit that uses the
    Dataset (or one of its subsets), with that fit's ``max_bins``,
    ``min_samples_leaf`` and categorical features (and, above
    ``BIN_SAMPLE_ROWS`` = 200000 rows, its ``random_state``, which draws the
    sample the cut points are placed on; ``random_state=None`` takes the
    Dataset's); every later fit reuses those bins, so it must ask for the
    same options. A pickled (or deep-copied) Dataset leaves its bins out
    and bins again, with those options, when first used. Fitting a Dataset gives
    the model fitting its raw rows gives. ``params`` or :meth:`construct`
    bin it before any fit; :meth:`save_binary` writes the bins to a file
    that ``Dataset(path)`` loads.

    Parameters
    ----------
    data : array-like, scipy.sparse matrix, data frame, str or os.PathLike
        A path names a file :meth:`save_binary` wrote (as LightGBM's
        ``Dataset("train.bin")``): the Dataset is loaded with its bins,
        labels, weights, groups, starting scores and columns, and takes no
        other argument. Otherwise the rows, of shape (n_samples, n_features):
        The features (NaN = missing), float32 or float64; other numeric
        types become float64. A data frame (pandas, polars, pyarrow, or
        what else the estimators' ``fit`` takes) is read as ``fit`` reads
        it: its string column names become the fitted estimator's
        ``feature_names_in_``, its categorical columns (pandas
        ``category``, polars ``Categorical``/``Enum``, arrow
        ``dictionary``) are read by category, and fitting the Dataset
        gives the model fitting the frame gives.
    label : array-like of shape (n_samples,) or None
        The targets (class labels, values or relevance grades). Needed to
        fit; a Dataset without labels can only be predicted on.
    weight : array-like of shape (n_samples,) or None
        Sample weights, finite and >= 0. They also weight the bins'
        quantiles, as in a fit on raw rows (``class_weight`` does not).
    group : array-like of int or None
        Ranking: the sizes of the consecutive queries, adding up to
        n_samples.
    init_score : array-like of shape (n_samples,) or (n_samples, n_outputs), or None
        Raw starting scores per row, as ``fit``'s ``init_score``.
    categorical_features : "from_dtype", "auto", sequence of int or str, or None, default="from_dtype"
        The categorical features: "from_dtype" takes a frame's
        categorical-dtype columns (none for an array), "auto" those and its
        string columns (which "from_dtype" refuses, as ``fit`` does), a
        list their positions or column names (integer codes, NaN =
        missing), None none. An estimator whose own
        ``categorical_features`` is "from_dtype" or "auto" uses the
        Dataset's; one that lists features must list the same ones, or
        the Dataset must have none. With ``reference``, "from_dtype"
        takes the reference's.
    reference : Dataset or None
        Bin these rows with ``reference``'s bins (validation data, or more
        rows of the same kind), as LightGBM's ``reference``. A frame's
        category values are coded with the reference's categories, by
        value, as ``predict`` codes them (a value the reference did not
        have is missing), and its column names must be the reference's.
    params : dict or None
        Binning options (``max_bins``, ``min_data_in_bin``,
        ``min_samples_leaf``, ``random_state``, ``summation``, ``n_jobs``;
        see :meth:`construct`), as LightGBM's ``Dataset(params=...)``: the
        rows are binned with them when first needed (by a fit or
        :meth:`save_binary`), and a fit must ask for the same options.
        None: the first fit's options bin them.

    Examples
    --------
    >>> import numpy as np
    >>> from rgbm_rs import Dataset, RGBMRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> ds = Dataset(X, X[:, 0] + rng.normal(size=200))
    >>> model = RGBMRegressor(n_estimators=5).fit(ds.subset(np.arange(150)))
    >>> model.predict(X[150:]).shape
    (50,)
    """

    def __init__(
        self,
        data: Any,
        label: Any = None,
        *,
        weight: Any = None,
        group: Any = None,
        init_score: Any = None,
        categorical_features: Sequence[int | str] | str | None = "from_dtype",
        reference: Dataset | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        self.params = _binning_options(params)
        if isinstance(data, (str, os.PathLike)):
            given = {"label": label, "weight": weight, "group": group, "init_score": init_score, "reference": reference}
            extra = [name for name, v in given.items() if v is not None]
            if extra or not (isinstance(categorical_features, str) and categorical_features == "from_dtype"):
                raise TypeError(
                    f"a Dataset loaded from a file brings its own {', '.join(extra) or 'categorical_features'}; "
                    "do not pass them"
                )
            if params is not None:
                raise TypeError("a Dataset loaded from a file is binned already; do not pass params")
            self._load(os.fspath(data))
            return
        if isinstance(data, Dataset):
            raise TypeError("data is a Dataset already; use its subset() for some of its rows")
        if reference is not None and not isinstance(reference, Dataset):
            raise TypeError(f"reference must be a Dataset, got {type(reference).__name__}")
        frame = None
        if not (isinstance(data, np.ndarray) or sp.issparse(data) or isinstance(data, (list, tuple))):
            frame = read_frame(data)
            if frame is None:
                raise TypeError(
                    "Dataset takes a numpy array, a scipy.sparse matrix or a data frame (pandas, polars, "
                    f"pyarrow), got {type(data).__name__}"
                )
        if reference is not None and isinstance(categorical_features, str) and categorical_features == "from_dtype":
            categorical_features = reference.categorical_features
        self.feature_names: np.ndarray | None = None
        self._categories: list | None = None
        if frame is None:
            check_sparse_index(data)
            X = check_array(data, input_name="X", **_FIT_CHECKS)
        else:
            X = self._read_frame(frame, categorical_features, reference)
        X = _contiguous(X)
        n, p = X.shape
        if n == 0 or p == 0:
            raise ValueError(f"Dataset needs at least one row and one feature, got shape {X.shape}")
        self._X: Any = X
        self._shape = (int(n), int(p))
        self._dtype = X.dtype
        self._parent: Dataset | None = None
        self._indices: np.ndarray | None = None
        self._binned: Any = None
        self._bin_params: str | None = None
        self._bin_sample_seed: int | None = None
        self.reference = reference
        if reference is not None and reference.n_features != p:
            raise ValueError(f"data has {p} features, but the reference Dataset has {reference.n_features}")
        self.label = None if label is None else _rows_of(label, n, "label")
        self.weight = None if weight is None else check_weights(weight, X)
        self.init_score = None if init_score is None else _scores_of(init_score, n)
        self.group = None if group is None else _group_sizes(group, n)
        self.categorical_features: list[int] | None = self._categorical_positions(categorical_features, p)

    def _read_frame(self, frame, spec, reference):
        """The frame's rows as the array a fit on the frame reads, its column
        names and its categories recorded (a ``reference`` frame Dataset's
        categories encode this frame's values, as ``predict`` encodes them)."""
        names = _feature_names(frame.labels)
        if reference is None:
            text = spec is not None and not (isinstance(spec, str) and spec == "from_dtype")
            X, categories = frame.to_array(text=text)
        else:
            if names is not None or reference.feature_names is not None:
                mine = None if names is None else list(names)
                theirs = None if reference.feature_names is None else list(reference.feature_names)
                if mine != theirs:
                    raise ValueError(
                        f"data's columns {mine} are not the reference Dataset's {theirs}; "
                        "give them the same names, in the same order"
                    )
            fitted = reference._categories or [None] * frame.n_columns
            if len(fitted) != frame.n_columns:
                raise ValueError(
                    f"data has {frame.n_columns} features, but the reference Dataset has {reference.n_features}"
                )
            X, categories = frame.to_array(categories=fitted, text=True)
        self.feature_names = names
        self._categories = categories
        return check_array(X, input_name="X", **_X_CHECKS)

    def _categorical_positions(self, spec, p):
        """``categorical_features`` as sorted positions (None for none): a
        frame's categorical columns for "from_dtype" and "auto"."""
        if spec is None:
            return None
        if isinstance(spec, str):
            if spec not in ("from_dtype", "auto"):
                raise ValueError(f'categorical_features must be "from_dtype", "auto", a list or None, got {spec!r}')
            found = [j for j, c in enumerate(self._categories or []) if c is not None]
            return found or None
        names = None if self.feature_names is None else list(self.feature_names)
        items = []
        for v in spec:
            if isinstance(v, str):
                if names is None or v not in names:
                    raise ValueError(f"categorical_features names {v!r}, which is not a column of data")
                v = names.index(v)
            items.append(v)
        return _positions(items, p)

    # -- shape -------------------------------------------------------------

    @property
    def n_rows(self) -> int:
        """The number of rows."""
        return self._shape[0] if self._indices is None else len(self._indices)

    @property
    def n_features(self) -> int:
        """The number of features."""
        return self._shape[1]

    def __len__(self) -> int:
        return self.n_rows

    def __repr__(self) -> str:
        kind = "subset of a Dataset" if self._parent is not None else "Dataset"
        binned = "binned" if self._binned is not None else "not binned yet"
        return f"<rgbm_rs {kind}: {self.n_rows} rows x {self.n_features} features, {binned}>"

    @property
    def data(self) -> Any:
        """The raw feature rows (gathered from the parent for a subset).
        A Dataset loaded from a file has bins only: ValueError."""
        if self._X is None:
            raise ValueError(
                "this Dataset was loaded from a binary file, which holds its bins, not its raw rows: "
                "it can be fitted (and subset), not predicted on or used in eval_set"
            )
        if self._indices is None:
            return self._X
        return _contiguous(self._X[self._indices])

    def _prediction_rows(self) -> Any:
        """The rows ``predict`` and its kin read when given this Dataset."""
        return self.data

    def _fit_rows(self) -> Any:
        """What a fit reads as X besides the bins: the raw rows, or for a
        Dataset loaded from a file an empty sparse matrix of their shape
        and dtype (a fit on bins reads only those from X)."""
        if self._X is not None:
            return self.data
        return sp.csr_matrix(
            self._shape if self._indices is None else (self.n_rows, self.n_features), dtype=self._dtype
        )

    @property
    def indices(self) -> np.ndarray | None:
        """For a subset, its rows' positions in the Dataset it was taken from."""
        return None if self._indices is None else self._indices.copy()

    # -- subsets -----------------------------------------------------------

    def subset(self, indices: Any) -> Dataset:
        """The rows at ``indices`` (in that order), sharing this Dataset's bins.

        The bin boundaries are not recomputed: fitting the subset gives the
        model of fitting its rows binned with this Dataset's bins. A ranking
        Dataset's subset must hold whole queries, each query's rows
        consecutive.

        Parameters
        ----------
        indices : array-like of int
            Distinct row positions in ``[0, n_rows)``.

        Returns
        -------
        Dataset
        """
        idx = _check_indices(indices, self.n_rows)
        root = self if self._parent is None else self._parent
        rows = idx if self._indices is None else self._indices[idx]
        sub = object.__new__(Dataset)
        sub.params = root.params
        sub._X = root._X
        sub._shape = root._shape
        sub._dtype = root._dtype
        sub._parent = root
        sub._indices = rows
        sub._binned = None
        sub._bin_params = None
        sub._bin_sample_seed = None
        sub.reference = None
        sub.label = None if self.label is None else self.label[idx]
        sub.weight = None if self.weight is None else self.weight[idx]
        sub.init_score = None if self.init_score is None else self.init_score[idx]
        sub.group = None if self.group is None else _subset_groups(self.group, idx)
        sub.categorical_features = self.categorical_features
        sub.feature_names = self.feature_names
        sub._categories = self._categories
        return sub

    # -- binning -----------------------------------------------------------

    def construct(self, **options: Any) -> Dataset:
        """Bin the rows now, as LightGBM's ``construct``, with the binning
        options given (else those of ``params``, else the estimators'
        defaults): ``max_bins``, ``min_data_in_bin``, ``min_samples_leaf``
        (features that cannot split a leaf of that many rows are left
        out), ``random_state`` (which rows place the cut points when there
        are more than 200000) and ``summation``, plus ``n_jobs``. Every
        later fit must ask for the same ``max_bins``, ``min_data_in_bin``,
        ``min_samples_leaf`` and categorical features (ValueError
        otherwise). A Dataset binned already (by a fit, an earlier
        ``construct`` or from a file) is left as it is, and the options
        must be those it was binned with.

        Returns
        -------
        Dataset
            self
        """
        opts = _binning_options({**(self.params or {}), **options}) or {}
        native: dict[str, Any] = {}
        for name in _BINNING:
            value = opts.get(name, _params.SCHEMA[name]["default"])
            native[name] = (
                resolve_seed(value) if name == "random_state" else _params.native_value(_params.SCHEMA[name], value)
            )
        native["n_jobs"] = resolve_n_jobs(opts.get("n_jobs"))
        native["min_data_in_bin"] = native["min_data_in_bin"] or _params.SCHEMA["min_data_in_bin"]["none_means"]
        native["categorical_features"] = self.categorical_features
        seed = opts.get("random_state", _params.SCHEMA["random_state"]["default"])
        self._binned_for(native, isinstance(seed, Integral) and not isinstance(seed, bool))
        return self

    def save_binary(self, path: str | os.PathLike) -> Dataset:
        """Write the binned rows, labels, weights, query groups, starting
        scores, column names and categories to ``path``, which
        ``Dataset(path)`` reads back; a fit on it gives the model a fit on
        this Dataset gives. Rows not binned yet are binned first, as
        :meth:`construct` bins them. The raw rows are not written (as in
        LightGBM): a loaded Dataset is fitted, subset and used as a
        ``reference``, not predicted on.

        The file is replaced atomically. It holds the package version: a
        file from another version is refused (bins are not kept across
        versions); so is a damaged or truncated one (its checksum), with a
        ValueError.

        Returns
        -------
        Dataset
            self
        """
        if self._binned is None:
            self.construct()
        floats, ints, meta = _file_parts(self)
        self._binned.save(os.fspath(path), floats, ints, json.dumps(meta))
        return self

    def _load(self, path: str) -> None:
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, "no such binned dataset file", path)
        binned, meta_text, arrays = _core.BinnedData.load(path)
        try:
            meta = json.loads(meta_text)
            shape = (int(meta["n_rows"]), int(meta["n_features"]))
            dtype = np.dtype(meta["dtype"])
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path} is not a readable rgbm_rs binned dataset file: bad metadata ({e})") from None
        if shape != (binned.n_rows, binned.n_features) or dtype not in (np.float32, np.float64):
            raise ValueError(f"{path} is not a readable rgbm_rs binned dataset file: its metadata and bins disagree")
        found = dict(arrays)
        self._X = None
        self._shape = shape
        self._dtype = dtype
        self._parent = None
        self._indices = None
        self._binned = binned
        self._bin_params = None
        seed = meta.get("bin_sample_seed")
        self._bin_sample_seed = None if seed is None else int(seed)
        self.reference = None
        self.label = _restored_label(meta.get("label"), found.get("label"))
        self.weight = found.get("weight")
        init = found.get("init_score")
        self.init_score = None if init is None else init.reshape(meta["init_score_shape"])
        self.group = found.get("group")
        names = meta.get("feature_names")
        self.feature_names = None if names is None else np.asarray(names, dtype=object)
        self._categories = meta.get("categories")
        cats = meta.get("categorical_features")
        self.categorical_features = None if cats is None else [int(j) for j in cats]

    def _binned_for(self, native: dict, fixed_seed: bool = True) -> Any:
        """The rows binned for a fit with the core parameters ``native``
        (binned now if no fit has binned them yet; a subset bins its root).
        ``fixed_seed``: the fit asked for its ``random_state`` (an int), so
        bins from a sample drawn with another seed are refused."""
        if self._binned is None and self.params is not None and self._parent is None and self.reference is None:
            params, self.params = self.params, None
            try:
                self.construct(**params)
            finally:
                self.params = params
        if self._binned is None:
            if self._parent is not None:
                parent = self._parent._binned_for(native, fixed_seed)
                self._binned = parent.subset(
                    np.ascontiguousarray(self._indices, dtype=np.int64), n_jobs=native["n_jobs"]
                )
            elif self.reference is not None:
                self._binned = self.reference._binned_for(native, fixed_seed).with_same_bins(
                    native_matrix(self._X), n_jobs=native["n_jobs"]
                )
            else:
                if self._bin_params is None:
                    # Kept so that an unpickled copy bins its rows again exactly so.
                    self._bin_params = json.dumps(native)
                    sampled = self._shape[0] > _core.BIN_SAMPLE_ROWS
                    self._bin_sample_seed = int(native["random_state"]) if sampled else None
                self._binned = _core.BinnedData.build(
                    self._bin_params, native_matrix(self._X), self.weight, interrupt=fit_interrupt()
                )
        _check_binning(self._binned, native)
        seed = self._sample_seed()
        if fixed_seed and seed is not None and seed != native["random_state"]:
            raise ValueError(
                f"this Dataset's bins were placed on a sample of {_core.BIN_SAMPLE_ROWS} of its rows drawn with "
                f"random_state={seed}, but the estimator asks for random_state={native['random_state']}; "
                "build a new Dataset to bin with another seed"
            )
        return self._binned

    def _sample_seed(self) -> int | None:
        """The seed of the row sample this Dataset's bins were placed on
        (None: on every row, or unknown)."""
        origin = self
        while origin._parent is not None or origin.reference is not None:
            origin = origin._parent if origin._parent is not None else origin.reference  # type: ignore[assignment]
        return origin._bin_sample_seed

    # -- pickling ----------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """The Dataset without its bins (native objects, which do not
        pickle): the copy bins its rows again, with the options they were
        binned with, when first used."""
        if self._X is None:
            raise TypeError(
                "a Dataset loaded from a binary file holds its bins only, which cannot be pickled; "
                "pickle its path and load the file again where it is needed"
            )
        state = dict(self.__dict__)
        state["_binned"] = None
        return state


#: The options that shape bins (besides the categorical features).
_BINNING = ("max_bins", "min_data_in_bin", "min_samples_leaf", "random_state", "summation")


def _binning_options(params):
    """``params`` checked: binning options only (None stays None)."""
    if params is None:
        return None
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of binning options, got {type(params).__name__}")
    allowed = (*_BINNING, "n_jobs")
    unknown = [k for k in params if k not in allowed]
    if unknown:
        raise ValueError(
            f"params: {unknown} are not binning options; a Dataset is binned with {list(allowed)} "
            "(the estimator takes the others)"
        )
    return dict(params)


def _json_value(v, what):
    """A category or label as JSON holds it (numpy scalars as Python ones)."""
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or isinstance(v, (str, bool, int)) or (isinstance(v, float) and np.isfinite(v)):
        return v
    raise TypeError(f"save_binary: cannot write {what} {v!r} ({type(v).__name__}); use str, int, float or bool")


def _file_parts(ds):
    """The arrays (float64 and int64) and metadata a file holds besides the bins."""
    floats, ints = [], []
    meta: dict[str, Any] = {"n_rows": ds.n_rows, "n_features": ds.n_features, "dtype": np.dtype(ds._dtype).str}
    if ds.label is not None:
        y = np.asarray(ds.label)
        meta["label"] = {"dtype": y.dtype.str}
        if y.dtype.kind == "f":
            floats.append(("label", np.ascontiguousarray(y, dtype=np.float64)))
        elif y.dtype.kind in "biu" and (y.dtype.kind != "u" or y.size == 0 or int(y.max()) < 2**63):
            ints.append(("label", np.ascontiguousarray(y, dtype=np.int64)))
        else:
            meta["label"]["values"] = [_json_value(v, "the label") for v in y.tolist()]
    if ds.weight is not None:
        floats.append(("weight", np.ascontiguousarray(ds.weight, dtype=np.float64)))
    if ds.init_score is not None:
        meta["init_score_shape"] = list(ds.init_score.shape)
        floats.append(("init_score", np.ascontiguousarray(ds.init_score, dtype=np.float64).ravel()))
    if ds.group is not None:
        ints.append(("group", np.ascontiguousarray(ds.group, dtype=np.int64)))
    meta["feature_names"] = None if ds.feature_names is None else [str(c) for c in ds.feature_names]
    meta["categories"] = (
        None
        if ds._categories is None
        else [None if c is None else [_json_value(v, "the category") for v in c] for c in ds._categories]
    )
    meta["categorical_features"] = ds.categorical_features
    meta["bin_sample_seed"] = ds._sample_seed()
    return floats, ints, meta


def _restored_label(meta, values):
    """The labels as they were saved (their dtype too)."""
    if meta is None:
        return None
    dtype = np.dtype(meta["dtype"])
    if "values" in meta:
        return np.asarray(meta["values"], dtype=dtype)
    if values is None:
        raise ValueError("the binned dataset file's labels are missing")
    return values.astype(dtype, copy=False)


def _check_binning(binned, native):
    """The fit's binning options must be those the rows were binned with."""
    max_bins, min_rows, categorical = binned.binning()
    asked = {
        "max_bins": (max_bins, native["max_bins"]),
        "min_samples_leaf": (min_rows, native["min_samples_leaf"]),
        "categorical_features": (list(categorical), sorted(native["categorical_features"] or [])),
    }
    for name, (had, wanted) in asked.items():
        if had != wanted:
            raise ValueError(
                f"this Dataset was binned with {name}={had}, but the estimator asks for {wanted}; "
                "build a new Dataset to bin with other options"
            )


def _rows_of(values, n, what):
    v = np.asarray(values)
    if v.ndim != 1 or v.shape[0] != n:
        raise ValueError(f"{what} must be 1-D with one value per row ({n}), got shape {v.shape}")
    return v


def _scores_of(values, n):
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("init_score must be numeric") from None
    if v.ndim not in (1, 2) or v.shape[0] != n:
        raise ValueError(f"init_score must have one row per data row ({n}), got shape {v.shape}")
    return v


def _group_sizes(group, n):
    g = np.asarray(group)
    if g.ndim != 1 or g.dtype.kind not in "iu" or g.size == 0 or np.any(g <= 0):
        raise ValueError("group must be a 1-D array of positive integer query sizes")
    if int(g.sum()) != n:
        raise ValueError(f"group sizes add up to {int(g.sum())}, but there are {n} rows")
    return g.astype(np.int64)


def _positions(features, p):
    out = []
    for v in features:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"categorical_features must hold feature positions (int), got {v!r}")
        if not 0 <= int(v) < p:
            raise ValueError(f"categorical_features: position {int(v)} is out of range for {p} features")
        out.append(int(v))
    if len(set(out)) != len(out):
        raise ValueError("categorical_features lists a feature more than once")
    return sorted(out)


def _check_indices(indices, n):
    """Distinct int64 positions in [0, n)."""
    idx = np.asarray(indices)
    if idx.dtype == bool:
        raise TypeError("indices must be integer row positions, not a boolean mask (use np.flatnonzero(mask))")
    if idx.ndim != 1:
        raise ValueError(f"indices must be 1-D, got shape {idx.shape}")
    if idx.size == 0:
        raise ValueError("indices must select at least one row")
    if idx.dtype.kind not in "iu":
        raise TypeError(f"indices must be integer row positions, got dtype {idx.dtype}")
    idx = idx.astype(np.int64)
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise ValueError(f"indices: row {int(idx[bad[0]])} is out of range for a Dataset of {n} rows")
    uniq, counts = np.unique(idx, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"indices: row {int(uniq[np.argmax(counts > 1)])} appears more than once")
    return idx


def _subset_groups(sizes, idx):
    """The query sizes of the rows ``idx``: every query whole, its rows consecutive."""
    query = np.repeat(np.arange(len(sizes)), sizes)[idx]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    runs = query[starts]
    if len(np.unique(runs)) != len(runs):
        raise ValueError("subset: a query's rows must be consecutive in indices")
    run_sizes = np.diff(np.r_[starts, len(idx)])
    cut = np.flatnonzero(run_sizes != sizes[runs])
    if cut.size:
        q = int(runs[cut[0]])
        raise ValueError(
            f"subset: query {q} has {int(sizes[q])} rows, {int(run_sizes[cut[0]])} of them selected; "
            "subsets of ranking data hold whole queries (use GroupKFold with the query ids)"
        )
    return run_sizes.astype(np.int64)
