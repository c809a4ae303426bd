"""Which boosting rounds a prediction uses: XGBoost's ``iteration_range``
or LightGBM's ``start_iteration`` / ``num_iteration``, resolved to one
range of rounds, and the raw offsets (``init_score``) a prediction adds."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral
from typing import Any, TypeVar

import numpy as np

#: The round options' entries of a prediction method's docstring.
_ROUNDS_DOC = """iteration_range : tuple of (int, int) or None, default=None
            Use only the rounds [start, end) (XGBoost's name and meaning;
            end=0: to the last round). The base score is kept, as in
            XGBoost; LightGBM holds its starting score in the first round's
            trees, so its ``start_iteration`` > 0 leaves that out.
        start_iteration : int, default=0
            LightGBM's: the first round used.
        num_iteration : int or None, default=None
            LightGBM's: how many rounds from ``start_iteration`` are used;
            None or <= 0 for all the model holds (after early stopping the
            rounds up to ``best_iteration_``, what LightGBM's None picks).
            Rounds past the model are refused (LightGBM clips them)."""


_Method = TypeVar("_Method", bound=Callable[..., Any])


def documents_rounds(method: _Method) -> _Method:
    """Write the round options' entries into ``method``'s docstring at ``{rounds}``."""
    method.__doc__ = (method.__doc__ or "").replace("{rounds}", _ROUNDS_DOC)
    return method


def _int(value, name):
    """An int option (numpy integers too, bools not)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return int(value)


def _pair(iteration_range):
    """iteration_range as two ints (start, end)."""
    if isinstance(iteration_range, (str, bytes)) or not hasattr(iteration_range, "__len__"):
        raise TypeError(f"iteration_range must be a pair (start, end) of ints, got {type(iteration_range).__name__}")
    if len(iteration_range) != 2:
        raise TypeError(f"iteration_range must be a pair (start, end) of ints, got {len(iteration_range)} values")
    start, end = (_int(v, f"iteration_range[{i}]") for i, v in enumerate(iteration_range))
    if start < 0 or end < 0:
        raise ValueError(f"iteration_range={(start, end)}: rounds cannot be negative")
    return start, end


def resolve_rounds(n_rounds, iteration_range=None, start_iteration=0, num_iteration=None):
    """The rounds [start, end) a prediction uses, or None for all
    ``n_rounds`` of the model.

    ``iteration_range`` is XGBoost's (end 0: to the last round);
    ``start_iteration`` and ``num_iteration`` are LightGBM's (num_iteration
    counts rounds from start_iteration; None or <= 0: to the last round).
    Unlike LightGBM, which clips them, rounds past the model are refused.
    """
    start = _int(start_iteration, "start_iteration")
    if start < 0:
        raise ValueError(f"start_iteration must be >= 0, got {start}")
    count = None if num_iteration is None else _int(num_iteration, "num_iteration")
    if iteration_range is not None:
        if count is not None or start != 0:
            raise ValueError("pass iteration_range (XGBoost's) or start_iteration/num_iteration (LightGBM's), not both")
        start, end = _pair(iteration_range)
        given = f"iteration_range={(start, end)}"
        end = n_rounds if end == 0 else end
        if end > n_rounds:
            raise ValueError(f"{given}: end {end} is past the model's {n_rounds} rounds")
    else:
        end = n_rounds if count is None or count <= 0 else start + count
        given = f"start_iteration={start}" + ("" if count is None else f", num_iteration={count}")
        if end > n_rounds:
            raise ValueError(f"{given} asks for {end} rounds, but the model has {n_rounds}")
    if (start, end) == (0, n_rounds):
        return None
    if start >= end:
        raise ValueError(f"{given} selects no rounds (the model has {n_rounds})")
    return start, end


def predict_offsets(init_score, n_rows, n_outputs):
    """``init_score`` at predict as float64 shaped like the raw scores:
    (n_rows,) for one output ((n_rows, 1) is accepted), (n_rows, n_outputs)
    otherwise; None stays None."""
    if init_score is None:
        return None
    try:
        a = np.asarray(init_score, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"init_score must be numbers: {e}") from None
    want = f"({n_rows},)" if n_outputs == 1 else f"({n_rows}, {n_outputs})"
    if n_outputs == 1 and a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.shape != ((n_rows,) if n_outputs == 1 else (n_rows, n_outputs)):
        raise ValueError(f"init_score must have shape {want} (one raw score per row and output), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("init_score contains NaN or infinity")
    return a
