"""What the estimators share: parameters to the core, evaluation sets,
the fit itself, staged and ensemble prediction, persistence."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import difflib
import inspect
import json
import os
import warnings
from collections.abc import Sequence
from numbers import Integral
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_is_fitted

from . import _core, _custom, _model_file, _params
from ._constraints import check_monotone_numeric, feature_position, interaction_sets, monotone_directions
from ._interrupt import fit_interrupt
from ._progress import Progress
from ._rounds import predict_offsets, resolve_rounds
from ._training import EvalSet, FitInput, TrainingData
from ._typing import Callback, MatrixLike, Metric, PathLike, VectorLike
from ._validation import (
    as_int,
    as_rows,
    check_model_columns,
    check_weights,
    check_X,
    check_X_y,
    continued_model,
    fitted_categories,
    native_matrix,
    native_vector,
    resolve_n_jobs,
    resolve_seed,
    set_categories,
)
from .callback import EarlyStopping

if TYPE_CHECKING:
    import pandas as pd
    from typing_extensions import Self

    from ._dataset import Dataset


def store_params(estimator, values):
    """Store constructor arguments unchanged, as scikit-learn requires."""
    for name, value in values.items():
        if name != "self":
            setattr(estimator, name, value)


def _selection_size(size):
    """An int is a count t, a float a fraction of the candidates."""
    if size is None:
        return None
    if isinstance(size, Integral):
        return as_int(size, "selection_size")
    return float(size)


def _groups(groups, n_features):
    if groups is None:
        return None
    shape = "groups must be a list of lists of feature indices"
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__iter__"):
        raise ValueError(shape)
    out = []
    for g in groups:
        if isinstance(g, (str, bytes)) or not hasattr(g, "__iter__"):
            raise ValueError(shape)
        members = []
        for j in g:
            if isinstance(j, (bool, np.bool_)) or not isinstance(j, Integral):
                raise ValueError(f"{shape}; got {j!r}")
            if not 0 <= int(j) < n_features:
                raise ValueError(f"groups names feature {int(j)}, but X has {n_features} features")
            members.append(int(j))
        out.append(members)
    return out


def categorical_indices(est):
    """``categorical_features`` as the sorted positions the core takes (None for none)."""
    spec = est.categorical_features
    n = int(est.n_features_in_)
    if spec is None:
        return None
    if isinstance(spec, str):
        if not getattr(est, "_categories_", None):
            # An array or a frame without categorical columns: no per-feature
            # list, which a sparse X of 10^14 columns could not hold.
            return None
        cats = fitted_categories(est, n)
        found = [j for j, c in enumerate(cats) if c is not None]
        return found or None
    items = list(np.asarray(spec).tolist()) if isinstance(spec, np.ndarray) else list(spec)
    if not items:
        return None
    if all(isinstance(v, (bool, np.bool_)) for v in items):
        if len(items) != n:
            raise ValueError(
                f"categorical_features: a boolean mask needs {n} entries (one per feature), got {len(items)}"
            )
        return [j for j, v in enumerate(items) if v]
    names = getattr(est, "feature_names_in_", None)
    out = []
    for v in items:
        if not isinstance(v, (str, Integral, np.integer)) or isinstance(v, (bool, np.bool_)):
            raise ValueError(f"categorical_features: expected feature indices, names or a boolean mask, got {v!r}")
        out.append(feature_position(v, names, n, "categorical_features"))
    if len(set(out)) != len(out):
        raise ValueError("categorical_features: lists a feature more than once")
    return sorted(out)


def _metric_list(eval_metric):
    """eval_metric as a list of names and functions (None: the loss's default)."""
    if eval_metric is None:
        return None
    metrics = [eval_metric] if isinstance(eval_metric, str) or callable(eval_metric) else list(eval_metric)
    if not metrics:
        raise ValueError("eval_metric must name at least one metric, or be None for the loss's default")
    return metrics


def _metric_names(eval_metric, native_loss, n_classes=None, functions=True):
    """The built-in metrics requested, checked against the loss: None for
    the loss's default, [] when only functions are requested. ``functions``:
    whether the estimator also takes metric functions (the ranker does not)."""
    metrics = _metric_list(eval_metric)
    if metrics is None:
        return None
    allowed = _core.metrics_for(native_loss, n_classes)
    # The peers' names for our metrics (LightGBM's binary_logloss, XGBoost's mlogloss, ...).
    names = [_params.PEER_METRICS.get(m, m) if isinstance(m, str) else m for m in metrics if not callable(m)]
    for m in names:
        if not isinstance(m, str) or m not in allowed:
            choose = f"choose from {list(allowed)}" + (" or pass a function" if functions else "")
            raise ValueError(f"eval_metric {m!r} is not available for this loss; {choose}")
    if len(set(names)) != len(names):
        raise ValueError(f"eval_metric names a metric twice: {names}")
    return names


def _scores_at(evals_result, best):
    """``{set: {metric: value at round best}}`` (0-based), LightGBM's ``best_score_``."""
    return {s: {m: values[best] for m, values in metrics.items()} for s, metrics in evals_result.items()}


def _metric_spelling(eval_metric):
    """Our metric names -> the peer names the user gave for them (LightGBM's
    ``l1``, ``binary_logloss``, ...), under which the results are reported."""
    given = [m for m in _metric_list(eval_metric) or [] if isinstance(m, str)]
    return {_params.PEER_METRICS[m]: m for m in given if _params.PEER_METRICS.get(m, m) != m}


def _metric_functions(eval_metric):
    """The functions among the requested metrics."""
    return [m for m in _metric_list(eval_metric) or [] if callable(m)]


def _init_rows(values, n_rows, what):
    """Starting scores as float64 rows: shape (n,) or (n, n_outputs)."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim not in (1, 2) or a.shape[0] != n_rows:
        raise ValueError(f"{what} must have shape ({n_rows},) or ({n_rows}, n_outputs), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} contains NaN or infinity")
    return a


def _checked_callbacks(callbacks):
    """fit's callbacks as a list, each a callable."""
    callbacks = [] if callbacks is None else list(callbacks)
    for cb in callbacks:
        if not callable(cb):
            raise TypeError(f"callbacks must be callables taking a CallbackEnv, got {type(cb).__name__}")
    return callbacks


def _eval_pairs(eval_set, eval_X, eval_y):
    """eval_set, or LightGBM 4.7's eval_X / eval_y as its (X, y) pairs."""
    if eval_X is None and eval_y is None:
        return eval_set
    if eval_set is not None:
        raise ValueError("pass eval_set or eval_X and eval_y, not both")
    if eval_X is None or eval_y is None:
        raise ValueError("eval_X and eval_y go together: pass both (or eval_set)")
    many = isinstance(eval_X, (list, tuple))
    if many != isinstance(eval_y, (list, tuple)):
        raise ValueError("eval_X and eval_y must both be one set or both be tuples of sets")
    if not many:
        return [(eval_X, eval_y)]
    if len(eval_X) != len(eval_y):
        raise ValueError(f"eval_X has {len(eval_X)} sets but eval_y has {len(eval_y)}")
    return list(zip(eval_X, eval_y))


def _same(value, default):
    """Whether a parameter still has its default (arrays and functions compare by identity)."""
    if value is default:
        return True
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):
        return False


def _peer_loss(est, objective):
    """The loss a peer's ``objective`` names (a function is a custom loss)."""
    if callable(objective):
        return objective
    entry = _params.PEER_OBJECTIVES.get(objective)
    loss = objective if entry is None else entry["loss"]
    if not loss:
        raise ValueError(f"objective={objective!r} is refused: {entry['note']}")
    options = est._parameter_constraints["loss"][0].options
    if loss not in options:
        raise ValueError(
            f"objective={objective!r} is the loss {loss!r}, which {type(est).__name__} does not fit; "
            f"its losses are {sorted(options)}"
        )
    return loss


def _resolve_peer_params(est, given, fit_metric, fit_verbose=None):
    """Sets ``est``'s parameters from the peers' names it was given,
    recording the values replaced in ``given``; whether to hide warnings."""
    defaults = {n: p.default for n, p in inspect.signature(type(est).__init__).parameters.items()}

    def put(name, value):
        given.setdefault(name, getattr(est, name))
        setattr(est, name, value)

    def set_once(name, value, by):
        if not _same(getattr(est, name), defaults[name]):
            raise ValueError(f"{by} and {name}={getattr(est, name)!r} both set {name}; pass one of them")
        put(name, value)

    for alias, of in _params.ALIASES.items():
        value = getattr(est, alias, None)
        if value is None:
            continue
        set_once(of, _peer_loss(est, value) if alias == "objective" else value, f"{alias}={value!r}")
        if alias == "num_leaves" and _same(est.max_depth, defaults["max_depth"]):
            put("max_depth", None)  # LightGBM's max_depth=-1
    if est.max_depth is not None and est.max_depth <= 0:
        put("max_depth", None)
        if est.max_leaves is None:
            put("max_leaves", 31)  # LightGBM's num_leaves
    if getattr(est, "booster", None) in _params.PEER_BOOSTERS:
        put("booster", _params.PEER_BOOSTERS[est.booster])
    by_tree = _one_of(est, "colsample_bytree", "feature_fraction")
    if by_tree is not None:
        set_once("selection", "groups", f"{by_tree[0]}={by_tree[1]!r}")
        put("selection_size", float(by_tree[1]))
    if fit_metric is not None:
        if est.eval_metric is not None:
            raise ValueError("eval_metric is given to fit and to the constructor: pass it in one place")
        put("eval_metric", fit_metric)
    if fit_verbose is not None:
        put("verbose", int(fit_verbose))
    quiet = est.verbose < 0 or getattr(est, "verbosity", None) == 0
    if est.verbose < 0:
        put("verbose", 0)
    return quiet


def _feature_weights(weights, n_features):
    """fit's ``feature_weights`` as a list of floats, one per feature (the
    core checks their bounds; NaN and infinity are refused here, as the
    JSON that carries them to the core cannot hold them)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n_features,):
        raise ValueError(f"feature_weights must have shape ({n_features},), one weight per feature, got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(
            f"feature_weights must be finite, got {w[~np.isfinite(w)][0]} at {np.flatnonzero(~np.isfinite(w))[0]}"
        )
    return [float(v) for v in w]


def _one_of(est, name, alias):
    """(name, fraction) of a feature fraction below 1 given as ``name`` or
    ``alias`` (both is an error); None for none."""
    a, b = getattr(est, name, None), getattr(est, alias, None)
    if a is not None and b is not None:
        raise ValueError(f"{name}={a!r} and {alias}={b!r} are the same parameter; pass one of them")
    value, used = (a, name) if a is not None else (b, alias)
    return None if value is None or value >= 1.0 else (used, value)


class Continued:
    """The model a fit continues: its ``booster``, its ``classes`` (None if
    unknown), ``model``, the fitted estimator that records its columns (None
    for a bare Booster, which records none), and ``what`` names it
    ("init_model" or "warm_start")."""

    def __init__(self, booster, classes, model, what):
        self.booster, self.classes, self.model, self.what = booster, classes, model, what


#: The estimator classes a model file may name, by class name; the modules
#: that define them add them (so this module need not import them).
ESTIMATORS: dict[str, type] = {}


def _init_model(init_model, cls):
    """init_model (a Booster, a fitted estimator of the same class, or the
    path of a saved one) as a :class:`Continued`."""
    if isinstance(init_model, _core.Booster):
        return Continued(init_model, None, None, "init_model")
    if isinstance(init_model, (str, os.PathLike)):
        init_model = _model_file.load(init_model, ESTIMATORS)
    if isinstance(init_model, RGBMBase):
        if not isinstance(init_model, cls):
            raise TypeError(f"init_model is a {type(init_model).__name__}, this is a {cls.__name__}")
        check_is_fitted(init_model, "_booster")
        return Continued(init_model._booster, getattr(init_model, "classes_", None), init_model, "init_model")
    raise TypeError(f"init_model must be a path, a Booster or a fitted {cls.__name__}, got {type(init_model).__name__}")


def _warn_merged_categories(X, categorical, max_bins, est):
    """Warns about categorical features with more categories than ``max_bins``:
    binning keeps the ``max_bins`` most frequent and sends the others to the
    missing bin."""
    names = getattr(est, "feature_names_in_", None)
    for j in categorical or ():
        col = X[:, j]
        col = np.asarray(col.toarray() if sp.issparse(col) else col, dtype=np.float64).ravel()
        k = np.unique(col[~np.isnan(col)]).size
        if k > max_bins:
            name = repr(str(names[j])) if names is not None else str(j)
            warnings.warn(
                f"categorical feature {name} has {k} categories, more than max_bins={max_bins}: "
                f"the {k - max_bins} least frequent share the missing bin (they follow each split's "
                f"missing-value side); raise max_bins to at least {k} to keep them apart",
                UserWarning,
                stacklevel=5,
            )


def exact_evals(evals, recorded):
    """The core's evaluation histories ``evals`` ([{set, metric, values}])
    with the NaN and infinite values its JSON holds as null put back, from
    the values the per-round hook saw (``recorded``: {set: {metric: [values]}},
    what :class:`Progress` collects); ``evals`` unchanged without them."""
    if not recorded:
        return evals
    out = []
    for h in evals:
        seen = recorded.get(h["set"], {}).get(h["metric"])
        values = h["values"]
        if seen is not None and len(seen) == len(values):
            values = [s if v is None else v for v, s in zip(values, seen)]
        out.append({**h, "values": values})
    return out


def _running_min(values):
    """The running minimum of per-round values, skipping None (undefined rounds)."""
    out, low = [], None
    for v in values:
        if v is not None and (low is None or v < low):
            low = v
        out.append(low)
    return out


def _n_rows(X):
    """Rows of a native matrix (an array, or the tuple of a sparse one)."""
    return int(X[1]) if isinstance(X, tuple) else X.shape[0]


def _class_major(rows):
    """(n, K) rows to the core's class-major layout (block k = output k)."""
    return np.ascontiguousarray(rows.T).ravel() if rows.ndim == 2 else np.ascontiguousarray(rows)


class RGBMBase(BaseEstimator):
    """Fitting, prediction and persistence shared by the estimators."""

    _regression = True
    #: How check_X_y reads y: numbers (not class labels), and whether 2-D.
    _regression_y = True
    _multi_output_y = True
    #: Whether eval_metric may hold functions besides metric names.
    _metric_functions_allowed = True

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # A misspelt parameter gets Python's TypeError, with the closest
        # parameter name (n_estimator -> n_estimators) as the CLI gives it.
        if kwargs:
            accepted = inspect.signature(cls.__init__).parameters
            for name in kwargs:
                if name not in accepted:
                    peer = _params.PEER_NAMES.get(name)
                    close = difflib.get_close_matches(name, [p for p in accepted if p != "self"], n=1)
                    if peer is not None:
                        # A peer's name: point to its meaning, not its spelling.
                        same = f" (here {peer['of']!r})" if peer["of"] else ""
                        hint = f"; {name} is {peer['peers']}'s parameter{same}: {peer['note']}"
                    else:
                        hint = f"; did you mean {close[0]!r}?" if close else ""
                    raise TypeError(f"{cls.__name__} got an unexpected keyword argument {name!r}{hint}")
        return super().__new__(cls)

    def _native_params(self, seed, native_loss, n_rounds=None) -> dict:
        categorical = categorical_indices(self)
        monotone = monotone_directions(self)
        check_monotone_numeric(monotone, categorical, getattr(self, "feature_names_in_", None))
        # Parameters the core resolves from the estimator's own; the rest of
        # the estimator's core parameters go as they are (typed by the schema).
        derived = {
            "n_estimators": int(self.n_estimators if n_rounds is None else n_rounds),
            "categorical_features": categorical,
            "monotone_constraints": monotone,
            "interaction_constraints": interaction_sets(self),
            "loss": native_loss,
            "selection_size": _selection_size(self.selection_size),
            "groups": _groups(self.groups, int(self.n_features_in_)),
            "random_state": seed,
            "n_jobs": resolve_n_jobs(self.n_jobs),
        }
        own = set(self._get_param_names())
        p = {}
        for name, spec in _params.SCHEMA.items():
            if name in derived:
                p[name] = derived[name]
            elif name in own and name not in _params.LOSS_SPECIFIC and name != "eval_metric":
                p[name] = _params.native_value(spec, getattr(self, name))
        p.update(self._loss_params(native_loss))
        p["eval_metric"] = _metric_names(
            self.eval_metric, native_loss, p.get("n_classes"), functions=self._metric_functions_allowed
        )
        return p

    def _checked_evals(self, fit, dtype, start=None):
        """The evaluation sets of ``fit`` as the core reads them
        (:class:`EvalSet` of native rows of ``dtype``, encoded class-major
        labels, class-major starting scores, plus the raw scores of
        ``start``, the model the fit continues), each checked as the
        training rows are."""
        if fit.evals and self.validation_fraction is not None:
            raise ValueError(
                "pass either eval_set or validation_fraction, not both (early stopping watches the last evaluation set)"
            )
        targets = fit.y.shape[1] if fit.y.ndim == 2 else None
        out = []
        for i, e in enumerate(fit.evals):
            Xe = check_X(self, e.x)
            n = Xe.shape[0]
            if n == 0:
                raise ValueError(f"eval_set[{i}] has no rows")
            ye = np.asarray(e.y)
            if targets is not None:
                want, shape = f"2-D with {targets} columns (the targets) and one row", (n, targets)
            else:
                want, shape = "1-D with one value", (n,)
            if ye.shape != shape:
                raise ValueError(f"eval_set[{i}]: y must be {want} per row of X ({n}), got shape {ye.shape}")
            we = None if e.sample_weight is None else check_weights(e.sample_weight, Xe)
            ye = fit.encode(ye, i)
            ie = None if e.init_score is None else _init_rows(e.init_score, len(ye), f"eval_init_score[{i}]")
            if start is not None:
                # Continue from the model's raw scores, on the rows as given (before any cast).
                raw = start.predict_raw(native_matrix(Xe))
                ie = raw if ie is None else raw + ie
            out.append(self._native_eval(e.name, as_rows(Xe, dtype), ye, we, ie, e.group, fit.repeat))
        return out

    @staticmethod
    def _native_eval(name, X, y, w, init, group, repeat):
        """An evaluation set as the core reads it: labels of several targets
        and starting scores of several outputs class-major, like its scores;
        the labels repeated once per output of one target (quantiles)."""
        y = native_vector(_class_major(y))
        init = None if init is None else _class_major(init)
        return EvalSet(name, native_matrix(X), np.tile(y, repeat) if repeat > 1 else y, w, init, group)

    def _held_out(self, X, y, w, init, seed):
        """With ``validation_fraction``: the training rows left and the
        held-out evaluation set ``validation`` (stratified for classifiers);
        else the rows as they are and None."""
        if self.validation_fraction is None:
            return X, y, w, init, None
        n_val = int(np.floor(self.validation_fraction * X.shape[0]))
        if n_val < 1 or X.shape[0] - n_val < 2:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} of {X.shape[0]} rows leaves "
                f"{n_val} validation and {X.shape[0] - n_val} training rows; both sides need rows"
            )
        stratify = None if self._regression or y.ndim == 2 else y
        idx_train, idx_val = train_test_split(
            np.arange(X.shape[0]), test_size=n_val, random_state=seed % 2**32, stratify=stratify
        )
        idx_train.sort()
        idx_val.sort()
        held = (
            as_rows(X[idx_val], X.dtype),
            y[idx_val],
            None if w is None else w[idx_val],
            None if init is None else init[idx_val],
        )
        X, y, w = X[idx_train], y[idx_train], None if w is None else w[idx_train]
        init = None if init is None else init[idx_train]
        X = X if sp.issparse(X) else np.ascontiguousarray(X)
        if w is not None and not w.sum() > 0:
            raise ValueError("sample_weight of the training part (after validation_fraction) sums to zero")
        return X, y, w, init, held

    @contextlib.contextmanager
    def _fitting(self):
        """Forget the previous fit, and everything learned so far if this one fails.

        A fit either completes or leaves an unfitted estimator, never a new
        ``classes_`` or ``n_features_in_`` beside an old model or none.
        """
        kept = {a: v for a, v in vars(self).items() if a == "_booster" or (a.endswith("_") and not a.startswith("__"))}
        self._forget_fit()
        # warm_start continues the model this fit forgot.
        self._previous = kept if getattr(self, "warm_start", False) and "_booster" in kept else None
        try:
            yield
        except BaseException:
            self._forget_fit()
            if self._previous is not None:
                # A failed continuation leaves the model it was to continue.
                self.__dict__.update(self._previous)
            raise
        finally:
            self.__dict__.pop("_previous", None)

    @contextlib.contextmanager
    def _peer_params(self, fit_metric=None, fit_verbose=None):
        """Validate the parameters, then, for this fit, set ours from the
        peers' names given (``num_leaves`` -> ``max_leaves``, ``objective`` ->
        ``loss``, ``colsample_bytree`` -> random selection, ...) and from
        ``fit(eval_metric=)``; the values given are put back after the fit,
        so that ``get_params`` returns them. Hides the fit's warnings when a
        peer's verbosity asks for silence."""
        self._validate_params()
        given = {}
        try:
            quiet = _resolve_peer_params(self, given, fit_metric, fit_verbose)
            with warnings.catch_warnings():
                if quiet:
                    warnings.simplefilter("ignore")
                yield
        finally:
            self.__dict__.update(given)

    def _forget_fit(self):
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")] + ["_booster"]:
            self.__dict__.pop(attr, None)

    def _continued(self, init_model):
        """The model this fit continues, as a :class:`Continued`: init_model,
        or with warm_start the previous fit; None for a fresh fit.

        Called before X is read, so that X is read as the model reads it
        (``check_X_y(..., model=...)``).
        """
        if init_model is not None:
            # A model of the estimator's kind (local or trained on a cluster).
            return _init_model(init_model, getattr(self, "_local_class", None) or type(self))
        if self._previous is not None:
            # The estimator as the previous fit left it: its columns and categories.
            model = copy.copy(self)
            model.__dict__.update(self._previous)
            return Continued(self._previous["_booster"], self._previous.get("classes_"), model, "warm_start")
        return None

    def _check_fit_data(self, fit):
        """``fit`` with X and y read by check_X_y and ``init_model`` the
        :class:`Continued` model (or None), X read as that model reads it."""
        continued = self._continued(fit.init_model)
        model = (
            {} if continued is None or continued.model is None else {"model": continued.model, "what": continued.what}
        )
        X, y = check_X_y(self, fit.X, fit.y, regression=self._regression_y, multi_output=self._multi_output_y, **model)
        dataset = fit.dataset
        if dataset is not None and dataset._categories is not None:
            # A Dataset read from a frame: what a fit on that frame records.
            if dataset.feature_names is not None:
                self.feature_names_in_ = dataset.feature_names
            set_categories(self, dataset.feature_names, dataset._categories)
            if model:
                check_model_columns(self, model["model"], model["what"])
        return dataclasses.replace(fit, X=X, y=y, init_model=continued)

    def _start(self, init_model, native_loss):
        """The model to continue and the rounds to add: init_model, or with
        warm_start the previous fit; (None, n_estimators) for a fresh fit.

        ``init_model`` is what fit was given, or the :class:`Continued` of
        :meth:`_continued` whose columns X was read with. Given the former
        (X read already, as the Dask estimators do), X's recorded columns
        are checked against the model's here.
        """
        continued = init_model if isinstance(init_model, Continued) else self._continued(init_model)
        if continued is None:
            return None, int(self.n_estimators)
        if not isinstance(init_model, Continued) and continued.model is not None:
            check_model_columns(self, continued.model, continued.what)
        start, classes = continued.booster, continued.classes
        if start.n_features != self.n_features_in_:
            raise ValueError(
                f"X has {self.n_features_in_} features, but {continued_model(continued.what)} has {start.n_features}"
            )
        rounds = int(self.n_estimators)
        if continued.what == "warm_start":
            rounds -= start.n_rounds
            if rounds < 0:
                raise ValueError(
                    f"warm_start: n_estimators={self.n_estimators} is below the {start.n_rounds} rounds "
                    "already fitted; raise it, or set warm_start=False to start over"
                )
        if classes is not None and not np.array_equal(classes, self.classes_):
            raise ValueError(f"init_model was fitted on classes {classes.tolist()}, y has {self.classes_.tolist()}")
        fitted = json.loads(start.params_json())["loss"]
        if fitted != native_loss:
            raise ValueError(f"init_model was trained with loss {fitted!r}, this fit uses {native_loss!r}")
        return start, rounds

    def fit(
        self,
        X: MatrixLike | Dataset,
        y: VectorLike | None = None,
        sample_weight: VectorLike | None = None,
        eval_set: Sequence[tuple[MatrixLike, VectorLike]] | None = None,
        eval_names: Sequence[str] | None = None,
        eval_sample_weight: Sequence[VectorLike | None] | None = None,
        callbacks: Sequence[Callback] | None = None,
        init_score: VectorLike | None = None,
        eval_init_score: Sequence[VectorLike | None] | None = None,
        init_model: PathLike | _core.Booster | RGBMBase | None = None,
        *,
        eval_metric: Metric | Sequence[Metric] | None = None,
        eval_X: Any = None,
        eval_y: Any = None,
        verbose: bool | int | None = None,
        feature_weights: VectorLike | None = None,
    ) -> Self:
        """Fit on X (n_samples, n_features; NaN = missing) and targets y.

        Parameters
        ----------
        X : array-like, data frame of shape (n_samples, n_features), or Dataset
            A :class:`rgbm_rs.Dataset` is fitted on its bins (binned once,
            shared by its subsets) and holds y, sample_weight and init_score,
            which are then not passed here.
        y : array-like of shape (n_samples,) or (n_samples, n_targets), or None
            The targets (the classifier's labels may be of any type; see
            ``classes_``); None only when X is a Dataset. Regressor: 2-D y
            fits one output per target (one tree per target per round; each
            target's trees are those of a fit on its column alone) with the
            losses squared, huber, absolute_error, quantile, poisson, gamma
            and tweedie. Classifier: a 2-D y of 0/1 (or booleans) is
            multilabel, one logistic output per column, with
            ``loss="logistic"`` and without ``class_weight``. Early stopping
            then watches the mean of the outputs' metric. One column is read
            as 1-D y, with scikit-learn's DataConversionWarning.
        sample_weight : array-like of shape (n_samples,) or None
            Finite, >= 0, not all zero. Only relative weights matter: they
            are normalised to mean 1, so ``c * sample_weight`` gives the same
            model for any c > 0 (``min_child_weight``, ``reg_lambda`` and
            ``min_split_gain`` apply to the normalised weights).
        eval_set : list of (X, y) pairs or Datasets, or None
            Data evaluated after every round (``evals_result_``); early
            stopping watches the last one. A Dataset entry brings its own
            labels, weights and starting scores. A classifier's evaluation
            labels must be among its training labels.
        eval_names : list of str or None
            Names of the eval_set entries. By default "valid_i" for entry
            i, and "training" for an entry that is the fit's own ``X`` and
            ``y`` objects (LightGBM's names). Metrics asked for by a peer's
            name (``l1``, ``binary_logloss``, ``mlogloss``, ...) are reported
            under that name in ``evals_result_`` and to callbacks.
        eval_sample_weight : list of array-like or None
            Row weights of each eval_set entry.
        callbacks : list of callables or None
            Called after every round with a :class:`rgbm_rs.callback.CallbackEnv`;
            returning True stops training.
        init_score : array-like of shape (n_samples,) or (n_samples, n_outputs), or None
            Raw starting scores per row (log-odds, log mean, one column per
            class or per gaussian output), as LightGBM's ``init_score``: the
            fit starts there instead of at the best constant, and the model
            (base score 0) predicts what it adds to them.
        eval_init_score : list of array-like or None
            The same for each eval_set entry.
        init_model : str, os.PathLike, Booster, fitted estimator or None
            Continue this model: ``n_estimators`` more rounds are fitted from
            its raw scores and appended to its trees (its bins need not be
            the data's; its trees are kept as they are). Random draws restart
            at round 0, so with ``subsample`` < 1 or random ``selection`` the
            result differs from one long fit; model shrinkage (SGLB) cannot
            be continued. X is read as the model's ``predict`` reads it: a
            data frame needs the columns of the model's fit in the same
            order, and category values are mapped to the categories
            recorded at that fit (which this estimator then keeps). A bare
            Booster records no column names or categories: only the number
            of columns is checked.
        eval_metric : str, callable, list of them, or None
            LightGBM's ``fit(eval_metric=...)``: the constructor's
            ``eval_metric`` for this fit (passing both is an error).
        eval_X, eval_y : array-like or tuple of them, or None
            LightGBM 4.7's form of ``eval_set``: the evaluation sets' rows
            and labels (one X and one y, or tuples/lists of them);
            ``eval_set=list(zip(eval_X, eval_y))``.
        verbose : bool, int or None
            XGBoost's ``fit(verbose=...)``: the constructor's ``verbose`` for
            this fit (True logs every round, False none, k every k-th).
            XGBoost's default True logs; here None keeps the constructor's.
        feature_weights : array-like of shape (n_features,) or None
            XGBoost's ``fit(feature_weights=...)``: finite weights >= 0, not
            all 0, one per feature. The feature draws of column sampling
            (``colsample_bytree``, ``colsample_bylevel`` or ``colsample_bynode`` below 1, or
            ``selection="group"`` / ``"groups"`` without ``groups``) take
            each feature with probability in proportion to its weight,
            without replacement. A feature of weight 0 is never drawn, so
            never split on (XGBoost draws such features once the others run
            out, and falls back to equal weights when all are 0, which is
            refused here). Without column sampling XGBoost ignores the
            weights; here that is a ValueError, as with booster="rgb",
            which draws no features. The weights are recorded with the
            model's parameters.

        Returns
        -------
        self
        """
        eval_set = _eval_pairs(eval_set, eval_X, eval_y)
        with self._fitting(), self._peer_params(eval_metric, verbose):
            evals = EvalSet.from_fit(
                eval_set,
                eval_names,
                eval_sample_weight=eval_sample_weight,
                eval_init_score=eval_init_score,
                train=(X, y),
            )
            given = FitInput.from_fit(
                X,
                y,
                sample_weight=sample_weight,
                init_score=init_score,
                evals=evals,
                callbacks=callbacks,
                init_model=init_model,
            )
            if feature_weights is not None:
                given = dataclasses.replace(given, feature_weights=feature_weights)
            return self._fit_given(given)

    def _fit_given(self, fit: FitInput):
        """The fit of what ``fit`` was given: X and y read, the labels
        encoded by the estimator's :meth:`_labels`, then trained."""
        return self._fit_native(self._labels(self._check_fit_data(fit)))

    def _labels(self, fit: FitInput) -> FitInput:
        """``fit`` with its labels checked and encoded, the core's ``loss``
        and ``encode`` for the evaluation sets' labels set (each estimator's
        own rules)."""
        raise NotImplementedError

    def _fit_native(self, fit: FitInput):
        """The fit itself, from what ``fit`` was given (:class:`FitInput`,
        labels encoded)."""
        native_loss = fit.loss
        if native_loss == "custom":
            _custom.check_loss(self.loss)
        start, n_rounds = self._start(fit.init_model, native_loss)
        if start is not None and fit.dataset is not None and fit.dataset._X is None:
            raise ValueError(
                "a Dataset loaded from a binary file has no raw rows to score with the model a fit continues "
                "(init_model, warm_start): continue on a Dataset built from the rows"
            )
        if start is not None and n_rounds == 0:
            self.__dict__.update(self._previous)  # warm start, nothing to add
            return self
        seed = resolve_seed(self.random_state)
        X = fit.X
        w = check_weights(fit.sample_weight, X)
        y_float = native_vector(fit.y)
        init = None if fit.init_score is None else _init_rows(fit.init_score, len(y_float), "init_score")
        sets = self._checked_evals(fit, X.dtype, start)
        if start is not None:
            # Continue from the model's raw scores on the training rows too.
            init = start.predict_raw(native_matrix(X)) + (0.0 if init is None else init)
        X, y_float, w, init, held = self._held_out(X, y_float, w, init, seed)
        if held is not None:
            Xv, yv, wv, iv = held
            sets = [self._native_eval("validation", Xv, yv, wv, iv, None, fit.repeat)]
        if self.early_stopping_rounds is not None and not sets:
            raise ValueError(
                "early_stopping_rounds needs evaluation data: pass eval_set to fit or set validation_fraction"
            )
        y_float = native_vector(_class_major(y_float))
        init = None if init is None else _class_major(init)
        callbacks = _checked_callbacks(fit.callbacks)
        native = self._native_params(seed, native_loss, n_rounds)
        if fit.feature_weights is not None:
            native["feature_weights"] = _feature_weights(fit.feature_weights, int(self.n_features_in_))
        binned = None if fit.dataset is None else self._dataset_bins(fit.dataset, native)
        if fit.repeat > 1:
            # Each output's labels are the target: one block per output.
            y_float = np.tile(y_float, fit.repeat)
            native["n_targets"] = fit.repeat
        if fit.y.ndim == 2:
            native["n_targets"] = int(fit.y.shape[1])
            if callable(self.loss) or _metric_functions(self.eval_metric):
                raise ValueError("custom loss and metric functions take one target: with 2-D y use the built-in ones")
        _warn_merged_categories(X, native["categorical_features"], self.max_bins, self)
        params = json.dumps(native)
        loss_fn = _custom.loss_hook(self.loss, y_float) if native_loss == "custom" else None
        metric_fns = _metric_functions(self.eval_metric)
        metrics_fn = _custom.metrics_hook(metric_fns, sets, native["eval_metric"]) if metric_fns and sets else None
        # With evaluation sets the per-round hook also records their values: the
        # core's histories come as JSON, where NaN and infinity become null.
        spelling = _metric_spelling(self.eval_metric)
        progress = Progress(self, callbacks, n_rounds, spelling) if (callbacks or self.verbose or sets) else None
        try:
            data = TrainingData(native_matrix(X), y_float, w, init, fit.group, binned)
            booster = _core.Booster.train(
                params, data, sets or None, progress, loss_fn, metrics_fn, interrupt=fit_interrupt()
            )
        finally:
            if progress is not None:
                progress.close()
        rounds = json.loads(booster.training_log_json())
        evals = exact_evals(json.loads(booster.evals_json()), None if progress is None else progress.evals)
        return self._store_fit(booster, rounds, evals, booster.best_iteration, callbacks, start, sets)

    def _dataset_bins(self, dataset, native):
        """The bins of a Dataset fit, its categorical features merged into ``native``'s."""
        if self.validation_fraction is not None:
            raise ValueError(
                "validation_fraction splits raw rows; with a Dataset pass eval_set=[dataset.subset(rows)] instead"
            )
        own = dataset.categorical_features
        if dataset._categories is not None and isinstance(self.categorical_features, str):
            # "from_dtype" and "auto" read the frame's dtypes, which the
            # Dataset did when it read the frame.
            native["categorical_features"] = own
        elif own is not None:
            if native["categorical_features"] is None:
                native["categorical_features"] = own
            elif sorted(native["categorical_features"]) != own:
                raise ValueError(
                    f"categorical_features: the Dataset has {own}, the estimator "
                    f"{sorted(native['categorical_features'])}; give them in one place"
                )
        # random_state=None (or a generator) asks for no particular seed: the Dataset's sample serves.
        fixed_seed = isinstance(self.random_state, Integral) and not isinstance(self.random_state, bool)
        return dataset._binned_for(native, fixed_seed)

    def _store_fit(self, booster, rounds, evals, best, callbacks, start, sets):
        """The fitted attributes of a finished fit: its booster, per-round
        log `rounds`, evaluation histories `evals` and best round."""
        self.n_estimators_ = len(rounds)
        self.evals_result_ = {}
        spelling = _metric_spelling(self.eval_metric)
        for h in evals:
            self.evals_result_.setdefault(h["set"], {})[spelling.get(h["metric"], h["metric"])] = h["values"]
        stoppers = [cb for cb in callbacks if isinstance(cb, EarlyStopping) and cb.best_iteration is not None]
        if best is None and stoppers:
            # A callback stopped training: keep the best round it saw, as the constructor option does.
            best = min(cb.best_iteration for cb in stoppers)
            booster = booster.truncated(best + 1)
        done = 0
        if start is not None:
            done = start.n_rounds
            booster = start.continued(booster)
            self.n_estimators_ = done + len(rounds)
        self._booster = booster
        if best is not None:
            # LightGBM's: the number of rounds kept (best round + 1), and every set's metrics there.
            self.best_iteration_ = done + int(best) + 1
            if sets:
                self.best_score_ = _scores_at(self.evals_result_, int(best))
        keys = ("root_feature", "root_threshold", "features_searched", "step", "seconds", "train_loss")
        keys += ("gamma", "gamma_star", "cosine")
        self.training_log_ = {key: [r[key] for r in rounds] for key in keys}
        self.training_log_["theta"] = _running_min(self.training_log_["cosine"])
        if self.booster == "rgb":
            for key in ("rgb_nodes", "rgb_lambda", "rgb_omega", "rgb_complexity"):
                self.training_log_[key] = [r[key] for r in rounds]
            counts = {}
            for r in rounds:
                # One chosen family per tree: per class for multiclass models.
                for nodes, lam in r["rgb_families"]:
                    counts[(nodes, lam)] = counts.get((nodes, lam), 0) + 1
            self.rgb_family_counts_ = dict(sorted(counts.items()))
            kept = rounds if best is None else rounds[: int(best) + 1]
            self.rgb_complexity_ = float(sum(r["rgb_complexity"] for r in kept))
        return self

    def _keep_rounds(self, best: int) -> None:
        """Keep the model's rounds up to ``best`` (0-based), as early stopping
        keeps them (``rgbm_rs.cv`` chooses the round across folds)."""
        self._booster = self._booster.truncated(int(best) + 1)
        self.best_iteration_ = int(best) + 1
        if self.evals_result_:
            self.best_score_ = _scores_at(self.evals_result_, int(best))

    def _output(self, X, kind=None, iteration_range=None, start_iteration=0, num_iteration=None, init_score=None):
        """What every prediction method computes: the raw scores (``kind``
        None), leaf indices ("pred_leaf") or SHAP values ("pred_contrib") of
        the rounds the iteration options select, with ``init_score`` added."""
        rounds = self._rounds(iteration_range, start_iteration, num_iteration)
        if kind == "pred_leaf":
            return self._leaves(X, rounds, init_score)
        if kind == "pred_contrib":
            return self._contributions(X, rounds, init_score)
        return self._raw(X, rounds, init_score)

    def _predictor(self) -> _core.Booster:
        """The fitted booster, set to predict on the current ``n_jobs`` (as
        LightGBM's predict reads it: ``set_params(n_jobs=)`` after fit applies)."""
        check_is_fitted(self, "_booster")
        self._booster.set_n_jobs(resolve_n_jobs(self.n_jobs))
        return self._booster

    def _raw(self, X, rounds=None, init_score=None):
        """Raw scores of the rounds [start, end) (all for None), plus ``init_score``."""
        b = self._predictor()
        X = native_matrix(check_X(self, X))
        offsets = predict_offsets(init_score, _n_rows(X), b.n_outputs)
        raw = b.predict_raw(X) if rounds is None else self._range_raw(X, *rounds)
        return raw if offsets is None else raw + offsets

    def _rounds(self, iteration_range, start_iteration, num_iteration):
        """The rounds [start, end) the options select (None: all)."""
        check_is_fitted(self, "_booster")
        return resolve_rounds(self._booster.n_rounds, iteration_range, start_iteration, num_iteration)

    def _range_raw(self, X, start, end):
        """Base score + the trees of rounds [start, end), as in the model
        after round ``end`` (with model shrinkage the stored trees carry the
        final scaling; the rounds after ``end`` scaled them down)."""
        b = self._booster
        k = b.n_outputs
        undo = b.shrinkage_undo(b.n_rounds - end)
        if start == 0 and undo == 1.0:
            # The core's order (the base score, then each tree in turn), as
            # predict and the stages add them: the same rounds, the same bits.
            return b.predict_raw(X, end)
        base = np.asarray(b.base_score) if k > 1 else b.base_score[0]
        trees = b.predict_trees(X, start * k, end * k)
        return base + (trees * undo if undo != 1.0 else trees)

    def apply(
        self,
        X: MatrixLike,
        *,
        iteration_range: tuple[int, int] | None = None,
        start_iteration: int = 0,
        num_iteration: int | None = None,
    ) -> np.ndarray:
        """The leaf each row reaches in every tree (scikit-learn's ``apply``).

        Leaves are numbered as in the model's trees (``leaf_value`` indices,
        the ``leaf_index`` of :meth:`dump_model`). All trees of the fitted
        model are used by default, as :meth:`predict` does (after early
        stopping the model holds the rounds up to ``best_iteration_``).

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
        iteration_range : tuple of (int, int) or None, default=None
            Only the trees of rounds [start, end) (XGBoost's name and
            meaning; end=0: to the last round). XGBoost refuses start > 0
            here; rgbm_rs, as LightGBM's ``pred_leaf``, gives those rounds.
        start_iteration : int, default=0
            LightGBM's: the first round used.
        num_iteration : int or None, default=None
            LightGBM's: the number of rounds used from ``start_iteration``;
            None or <= 0 for all the model holds. Rounds past the model are
            refused (LightGBM clips them).

        Returns
        -------
        ndarray of int32
            Shape (n_samples, n_rounds) for one-output models; (n_samples,
            n_rounds, n_outputs) for multiclass and ``loss="gaussian"``
            models, entry [i, r, k] being round r's tree of output k.
            ``n_rounds`` is the number of rounds selected.

        Raises
        ------
        ValueError
            If both ``iteration_range`` and ``start_iteration`` /
            ``num_iteration`` are given, or they select no rounds or rounds
            past the model.
        TypeError
            If a round is not an int.
        """
        return self._output(X, "pred_leaf", iteration_range, start_iteration, num_iteration)

    def _leaves(self, X, rounds, init_score=None):
        """Leaf indices of the rounds [start, end) (all for None), shaped as :meth:`apply`'s."""
        if init_score is not None:
            raise ValueError("init_score does not change which leaf a row reaches: drop it with pred_leaf=True")
        b = self._predictor()
        leaves = b.predict_leaf(native_matrix(check_X(self, X)))
        k = b.n_outputs
        if rounds is not None:
            leaves = leaves[:, rounds[0] * k : rounds[1] * k]
        return leaves if k == 1 else leaves.reshape(leaves.shape[0], -1, k)

    def _contributions(self, X, rounds=None, init_score=None):
        """SHAP values of the raw scores of the rounds [start, end) (all
        rounds for None), plus ``init_score`` in the expected-value column:
        (n, n_outputs * (n_features + 1))."""
        b = self._predictor()
        X = native_matrix(check_X(self, X))
        k, n = b.n_outputs, _n_rows(X)
        offsets = predict_offsets(init_score, n, k)
        if rounds is None:
            out = b.predict_contrib(X)
        else:
            start, end = rounds
            out = (b if end == b.n_rounds else b.truncated(end)).predict_contrib(X)
            if start > 0:
                # TreeSHAP is additive over trees: rounds [start, end) are the
                # first `end` minus the first `start`. truncated(start) undoes
                # the shrinkage of `end - start` more rounds than truncated(end).
                head = b.truncated(start).predict_contrib(X).reshape(n, k, -1)
                head[:, :, -1] -= np.asarray(b.base_score)  # the base score stays in the range's
                out = (out.reshape(n, k, -1) - head / b.shrinkage_undo(end - start)).reshape(n, -1)
        if offsets is not None:
            blocks = out.reshape(n, k, -1)
            blocks[:, :, -1] += offsets.reshape(n, k)
        return out

    def _predict_kind(self, **flags):
        """Which one of predict's boolean options is set (None for plain predictions)."""
        for name, value in flags.items():
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
        asked = [name for name, value in flags.items() if value]
        if len(asked) > 1:
            raise ValueError(f"{' and '.join(asked)} cannot be combined: ask for one output at a time")
        return asked[0] if asked else None

    def _fitted_loss(self) -> str:
        """The loss the model was fitted with (set_params after fit does not change the model)."""
        return json.loads(self._booster.params_json())["loss"]

    def _staged_raw(self, X):
        """Raw scores of the model as it was after each round.

        With model shrinkage the stored trees carry the final scaling; the
        model after round t is base + q^-(R-1-t) * (sum of the first t+1 stored rounds).
        Otherwise each round's trees are added to the running scores in the
        core's order (the base score first, then the trees in turn), so the
        last stage is ``predict``'s raw score bit for bit.
        """
        b = self._predictor()
        X = native_matrix(check_X(self, X))
        base = np.asarray(b.base_score) if b.n_outputs > 1 else b.base_score[0]
        rounds, k = b.n_rounds, b.n_outputs
        trees = 0.0  # the stored rounds' sum, for the shrinkage undo
        scores = None  # base + the rounds so far, in the core's order
        for t in range(rounds):
            # The fitted model's q, not the constructor's: set_params after fit must not move predictions.
            undo = b.shrinkage_undo(rounds - 1 - t)
            step = b.predict_trees(X, t * k, (t + 1) * k)
            if undo != 1.0:
                trees = trees + step
                yield base + trees * undo
                continue
            if scores is None:
                # Rounds before this one were scaled: start again from the core's sum.
                scores = b.predict_raw(X, t + 1)
            else:
                scores = scores + step
            yield scores

    def _virtual_members(self, X, n_members):
        check_is_fitted(self, "_booster")
        if isinstance(n_members, (bool, np.bool_)) or not isinstance(n_members, Integral):
            raise TypeError(f"n_members must be an int, got {type(n_members).__name__}")
        n_members = int(n_members)
        if n_members < 2:
            raise ValueError(f"n_members must be >= 2, got {n_members}")
        rounds = self._booster.n_rounds
        if n_members > rounds // 2:
            raise ValueError(
                f"n_members: {n_members} members need at least {2 * n_members} rounds (2 per member), "
                f"the model has {rounds}"
            )
        return self._predictor().virtual_ensemble(native_matrix(check_X(self, X)), n_members)

    @property
    def feature_importances_(self) -> np.ndarray:
        """Importance per feature, normalised to sum to 1 (0 everywhere for a model without splits).

        ``importance_type="gain"`` (default): total split gain of the feature;
        ``"split"``: how many splits use it. XGBoost's names: ``"total_gain"``
        (the same as ``"gain"``, LightGBM's meaning; XGBoost's ``"gain"`` is
        the mean gain per split) and ``"weight"`` (as ``"split"``).
        """
        check_is_fitted(self, "_booster")
        kind = {"total_gain": "gain", "weight": "split"}.get(self.importance_type, self.importance_type)
        return self._booster.feature_importances(kind)

    @property
    def best_iteration(self) -> int:
        """XGBoost's name: the best round, 0-based as in XGBoost (LightGBM's
        ``best_iteration_`` counts the rounds kept: this + 1); an
        AttributeError when the fit did not stop early."""
        if not hasattr(self, "best_iteration_"):
            raise AttributeError("best_iteration: the fit did not stop early (pass early_stopping_rounds)")
        return self.best_iteration_ - 1

    @property
    def best_score(self) -> float:
        """XGBoost's name: the watched metric (the first of the last
        evaluation set; XGBoost watches the last) at ``best_iteration``."""
        if not getattr(self, "best_score_", None):
            raise AttributeError("best_score: the fit did not stop early (pass early_stopping_rounds)")
        last = list(self.best_score_.values())[-1]
        return float(next(iter(last.values())))

    def evals_result(self) -> dict[str, dict[str, list[float]]]:
        """XGBoost's layout of ``evals_result_``: the sets named
        "validation_i" by their position in ``eval_set``."""
        check_is_fitted(self, "_booster")
        return {f"validation_{i}": dict(m) for i, m in enumerate(self.evals_result_.values())}

    @property
    def booster_(self) -> _core.Booster:
        """The fitted native booster, as :meth:`get_booster` (LightGBM's name;
        its methods are rgbm_rs's ``Booster``'s, not LightGBM's)."""
        return self.get_booster()

    def get_booster(self) -> _core.Booster:
        """The native booster (immutable): ``to_json()``, ``n_rounds``, ``n_outputs``, ``base_score``, ..."""
        check_is_fitted(self, "_booster")
        return self._booster

    def dump_model(self) -> dict[str, Any]:
        """The trees as nested dicts (see :func:`rgbm_rs.dump_model`), with feature names."""
        from ._introspect import dump_model

        return dump_model(self)

    def trees_to_dataframe(self) -> pd.DataFrame:
        """One row per node of every tree, as a pandas DataFrame (needs pandas)."""
        from ._introspect import trees_to_dataframe

        return trees_to_dataframe(self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    # Persistence: pickle and save_model share one JSON document.
    def _to_document(self) -> dict:
        check_is_fitted(self, "_booster")
        return _model_file.document(self)

    def _model_losses(self):
        """The losses a model of this estimator may have."""
        return self._parameter_constraints["loss"][0].options | {"custom"}

    def save_model(self, path: PathLike, format: str = "rgbm_rs") -> None:
        """Write the fitted estimator as JSON.

        Parameters
        ----------
        path : str or os.PathLike
            The file is written to a temporary name in the same folder and
            then renamed, so an existing file is never left half-written.
            A symbolic link is followed, and an existing file keeps its
            permissions.
        format : {"rgbm_rs", "xgboost"}, default="rgbm_rs"
            ``"rgbm_rs"``: the whole estimator (parameters, classes,
            categories), read back with :func:`load_model`.
            ``"xgboost"``: the trees in XGBoost's JSON model schema (that of
            XGBoost 3.2), for ``xgboost.Booster(model_file=path)`` and the
            tools that read XGBoost models. XGBoost then computes the raw
            scores and predictions of :meth:`predict` (probabilities for a
            classifier: column j is class ``classes_[j]``) for float32
            input, categorical features given as their codes, to float32
            rounding: see the export guide.

        Raises
        ------
        ValueError
            If ``format`` is not one of the above, or the model cannot be
            written as an XGBoost model: ``loss="gaussian"`` (two outputs
            per row with different links), a custom loss (no XGBoost
            objective of known link), leaf values beyond the float32 range.
        """
        check_is_fitted(self, "_booster")
        if not isinstance(format, str):
            raise TypeError(f"format must be a str, got {type(format).__name__}")
        if format == "rgbm_rs":
            _model_file.save(path, self)
        elif format == "xgboost":
            from . import _xgboost

            _xgboost.save(path, self)
        else:
            raise ValueError(f"format must be 'rgbm_rs' or 'xgboost', got {format!r}")

    def __getstate__(self):
        state = super().__getstate__()
        if "_booster" in state or "rgb_family_counts_" in state:
            state = dict(state)
        if "_booster" in state:
            state["_booster"] = state["_booster"].to_json()
        if "rgb_family_counts_" in state:
            # skops stores dicts with scalar keys only: the (nodes, lambda)
            # keys travel as (key, count) pairs.
            state["rgb_family_counts_"] = list(state["rgb_family_counts_"].items())
        return state

    def __setstate__(self, state):
        if isinstance(state.get("_booster"), str) or isinstance(state.get("rgb_family_counts_"), list):
            state = dict(state)
        if isinstance(state.get("_booster"), str):
            state["_booster"] = _core.Booster.from_json(state["_booster"])
        if isinstance(state.get("rgb_family_counts_"), list):
            state["rgb_family_counts_"] = {tuple(key): count for key, count in state["rgb_family_counts_"]}
        super().__setstate__(state)
