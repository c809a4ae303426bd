"""Custom loss and metric functions with LightGBM's scikit-learn signatures.

``loss(y_true, raw_score) -> (grad, hess)`` and ``metric(y_true, raw_score[,
weight]) -> (name, value, higher_is_better)`` see raw scores of shape (n,)
or, with K scores per row (K > 2 classes; a gaussian model's mean and log
sigma), (n, K); the core keeps them class-major (block k = output k). The hooks made here translate between the two and check what the
functions return; the core calls them once per round with the GIL held only
for the call, and re-raises their exceptions unchanged.
"""

from __future__ import annotations

import inspect
from numbers import Real

import numpy as np


class SavedFunction:
    """Stands for a loss or metric function of a model read from a file.

    Functions are not saved with a model, only their names: the model
    predicts raw scores as before, but fitting again needs the function.
    """

    def __init__(self, name: str):
        self.name = str(name)

    def __repr__(self):
        return f"SavedFunction({self.name!r})"

    def __eq__(self, other):
        return isinstance(other, SavedFunction) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __call__(self, *args):
        raise ValueError(
            f"the function {self.name} was not saved with the model; pass it again (set_params) to fit a model with it"
        )


def function_name(fn) -> str:
    """``module.qualname`` of a function (what a model file records)."""
    if isinstance(fn, SavedFunction):
        return fn.name
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{module}.{name}" if module else name


def _positional(fn):
    """(required, most) positional arguments of ``fn``; None when unknown."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None  # builtins and some C functions: trust the call
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    positional = [p for p in params if p.kind in kinds]
    required = sum(p.default is inspect.Parameter.empty for p in positional)
    varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    return required, float("inf") if varargs else len(positional)


def _refuse_saved(fn, what):
    if isinstance(fn, SavedFunction):
        raise ValueError(
            f"{what} is {fn.name}, a function not saved with the model; pass the function itself to fit again"
        )


def check_loss(fn):
    """Refuses a loss function that cannot take (y_true, raw_score)."""
    _refuse_saved(fn, "loss")
    arity = _positional(fn)
    if arity is not None and not arity[0] <= 2 <= arity[1]:
        raise TypeError(
            f"loss function {function_name(fn)} must take (y_true, raw_score) and return (grad, hess); "
            f"it takes {arity[0]} required arguments (sample weights are applied by rgbm_rs)"
        )


def _takes_weight(fn):
    """Whether a metric function is called as (y_true, raw_score, weight)."""
    _refuse_saved(fn, "eval_metric")
    arity = _positional(fn)
    if arity is None:
        return False
    required, most = arity
    if required > 3 or most < 2:
        raise TypeError(
            f"eval_metric function {function_name(fn)} must take (y_true, raw_score) or "
            "(y_true, raw_score, weight) and return (name, value, higher_is_better)"
        )
    return required == 3 or (required <= 2 and most >= 3)


def _rows(raw, n_rows):
    """Class-major raw scores of ``n_rows`` rows as (n,) or (n, K), C-contiguous
    (K, the model's outputs per row, is the core's to decide)."""
    if raw.size == n_rows:
        return raw
    return np.ascontiguousarray(raw.reshape(-1, n_rows).T)


def _short(value, limit=60):
    """repr(value), shortened (an int of 400 digits is not worth printing)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _class_major(a, what, shape):
    try:
        a = np.asarray(a, dtype=np.float64)
    except OverflowError:
        raise ValueError(
            f"the loss function's {what} holds a number too large for a float (at most about 1.8e308)"
        ) from None
    except (TypeError, ValueError):
        raise TypeError(f"the loss function's {what} must be an array of numbers") from None
    if a.shape != shape:
        raise ValueError(f"the loss function returned {what} of shape {a.shape}; raw_score has shape {shape}")
    return np.ascontiguousarray(a.T).ravel() if a.ndim == 2 else np.ascontiguousarray(a)


def loss_hook(fn, y):
    """``hook(raw) -> (grad, hess)`` for the core, class-major."""
    y = np.array(y, dtype=np.float64)
    y.flags.writeable = False

    def hook(raw):
        scores = _rows(raw, len(y))
        out = fn(y, scores)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"the loss function must return (grad, hess), got {type(out).__name__}")
        return tuple(_class_major(a, what, scores.shape) for a, what in zip(out, ("grad", "hess")))

    return hook


def _metric_values(fn, out):
    """(name, value, higher_is_better) tuples of one metric call."""
    items = out if isinstance(out, list) else [out]
    checked = []
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 3):
            raise TypeError(
                f"eval_metric function {function_name(fn)} must return (name, value, higher_is_better) "
                f"or a list of them, got {item!r}"
            )
        name, value, higher = item
        if not isinstance(name, str) or not name:
            raise TypeError(f"eval_metric function {function_name(fn)} returned the name {name!r}; expected a str")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.number)):
            raise TypeError(f"eval_metric {name!r} returned the value {value!r}; expected a number")
        if not isinstance(higher, (bool, np.bool_)):
            raise TypeError(f"eval_metric {name!r} returned higher_is_better={higher!r}; expected a bool")
        try:
            value = float(value)
        except OverflowError:
            # A Python int (or Fraction, Decimal) beyond the float range.
            raise ValueError(
                f"eval_metric {name!r} of function {function_name(fn)} returned {_short(value)}, "
                "too large for a float (at most about 1.8e308)"
            ) from None
        checked.append((name, value, bool(higher)))
    return checked


def metrics_hook(fns, sets, builtin):
    """``hook(set_index, raw) -> [(name, value, higher_is_better)]`` over
    the evaluation sets ``sets`` (their ``y`` and ``sample_weight``); names
    must not repeat the built-in metrics ``builtin`` or each other."""
    weighted = [_takes_weight(fn) for fn in fns]
    sets = [
        (
            np.array(e.y, dtype=np.float64),
            None if e.sample_weight is None else np.array(e.sample_weight, dtype=np.float64),
        )
        for e in sets
    ]
    for y, w in sets:
        y.flags.writeable = False
        if w is not None:
            w.flags.writeable = False

    def hook(i, raw):
        y, w = sets[i]
        scores = _rows(raw, len(y))
        values = []
        for fn, takes_weight in zip(fns, weighted):
            values += _metric_values(fn, fn(y, scores, w) if takes_weight else fn(y, scores))
        names = list(builtin) + [name for name, _, _ in values]
        if len(set(names)) != len(names):
            raise ValueError(f"eval_metric names a metric twice: {names}")
        return values

    return hook
