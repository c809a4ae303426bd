"""Callbacks run after every boosting round.

A callback is any callable taking one :class:`CallbackEnv`; returning True
stops training after the current round. Pass them to ``fit(..., callbacks=[...])``.
Callbacks run in order; all of them see every round, even when an earlier one
asks to stop. An exception raised by a callback stops training and propagates
out of ``fit`` unchanged (the estimator is then left unfitted).

A callback with the attribute ``before_iteration = True`` runs before each
round instead (LightGBM's protocol), with no results yet; it can change the
learning rate of the rounds to come through ``env.model.reset_parameter``.

Built-ins: :func:`early_stopping`, :func:`log_evaluation`,
:func:`record_evaluation`, :func:`reset_parameter`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Callable

__all__ = [
    "CallbackEnv",
    "EarlyStopping",
    "TrainingModel",
    "early_stopping",
    "log_evaluation",
    "record_evaluation",
    "reset_parameter",
]

logger = logging.getLogger("rgbm_rs")

#: One evaluation result: (set name, metric name, value, higher_is_better).
EvalItem = tuple[str, str, float, bool]

#: The names ``reset_parameter`` takes for the learning rate (LightGBM's aliases).
_LEARNING_RATE_NAMES = ("learning_rate", "eta", "shrinkage_rate")


class TrainingModel:
    """The model being trained, as a callback sees it (``env.model``).

    Unlike LightGBM's ``env.model``, a full Booster, it offers what can
    change or be read while the rounds run: :meth:`reset_parameter` (the
    learning rate only) and :meth:`current_iteration`. The fitted model is
    the estimator's ``booster_`` once ``fit`` returns.
    """

    def __init__(self) -> None:
        self._iteration = 0
        self._learning_rate: float | None = None

    def current_iteration(self) -> int:
        """The rounds trained so far."""
        return self._iteration

    @property
    def boosters(self) -> list[TrainingModel]:
        """``[self]``: ``lightgbm.reset_parameter`` updates every member of a
        model that is not a LightGBM Booster (its CVBooster's), so it
        updates this one."""
        return [self]

    def reset_parameter(self, params: dict[str, Any]) -> TrainingModel:
        """Use ``params["learning_rate"]`` (or LightGBM's aliases ``eta``,
        ``shrinkage_rate``) from the next round on. Other parameters cannot
        change during a fit: a ValueError names them. The core refuses a
        rate that is not finite and > 0, and a fit where no rate scales the
        trees (``step="constant"``, ``booster="rgb"``) or with model
        shrinkage (``shrink_rate > 0``)."""
        if not isinstance(params, dict):
            raise TypeError(f"reset_parameter takes a dict of parameters, got {type(params).__name__}")
        other = sorted(set(params) - set(_LEARNING_RATE_NAMES))
        if other:
            raise ValueError(
                f"reset_parameter: only the learning rate can change during a fit, not {other} "
                f"(names: {list(_LEARNING_RATE_NAMES)})"
            )
        given = [name for name in _LEARNING_RATE_NAMES if name in params]
        if len(given) > 1:
            raise ValueError(f"reset_parameter: {given} all name the learning rate; pass one")
        if given:
            value = params[given[0]]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"reset_parameter: {given[0]} must be a number, got {value!r}")
            self._learning_rate = float(value)
        return self

    def _take_learning_rate(self) -> float | None:
        rate, self._learning_rate = self._learning_rate, None
        return rate


@dataclass(frozen=True)
class CallbackEnv:
    """What a callback sees after a round.

    Attributes
    ----------
    estimator : RGBMRegressor or RGBMClassifier
        The estimator being fitted (its parameters; the model itself is
        available only after ``fit`` returns).
    iteration : int
        The round just finished, 0-based (before-iteration callbacks: the
        round about to start).
    end_iteration : int
        ``n_estimators``: the number of rounds training would run at most.
    evaluation_result_list : list of (set, metric, value, higher_is_better)
        This round's metrics, sets in ``eval_set`` order, metrics in ``eval_metric`` order.
    evals_result : dict
        Every value so far, ``{set: {metric: [value per round]}}``.
    elapsed : float
        Seconds since training started.
    model : TrainingModel
        The model being trained: :meth:`TrainingModel.reset_parameter` and
        :meth:`TrainingModel.current_iteration`.
    params : dict
        The estimator's parameters (``get_params()``) as the fit runs: a
        learning rate set by ``reset_parameter`` shows here, as in
        LightGBM, whose own ``lightgbm.reset_parameter`` callback therefore
        works too.
    begin_iteration : int
        0: the first round of this fit (LightGBM's field).
    """

    estimator: object
    iteration: int
    end_iteration: int
    evaluation_result_list: list[EvalItem]
    evals_result: dict[str, dict[str, list[float]]]
    elapsed: float
    model: TrainingModel
    params: dict[str, Any]
    begin_iteration: int = 0


def format_results(items) -> str:
    """``valid_0's l2: 0.1234  valid_0's rmse: 0.35``."""
    return "\t".join(f"{s}'s {m}: {v:.6g}" for s, m, v, _ in items)


class EarlyStopping:
    """Stop when a metric has not improved for ``stopping_rounds`` rounds.

    Watches the first metric of the last evaluation set (what the
    ``early_stopping_rounds`` constructor option watches), or the given
    ``metric`` / ``dataset``. After ``fit``, the estimator keeps the model of
    the best round: ``best_iteration_`` is the number of rounds kept
    (LightGBM's; the callback's own ``best_iteration`` is 0-based) and
    predictions use them. ``min_delta`` is the smallest change that counts as an
    improvement. NaN never counts as an improvement.
    """

    def __init__(
        self,
        stopping_rounds: int,
        *,
        metric: str | None = None,
        dataset: str | None = None,
        min_delta: float = 0.0,
        verbose: bool = False,
    ):
        if isinstance(stopping_rounds, bool) or not isinstance(stopping_rounds, int) or stopping_rounds < 1:
            raise ValueError(f"stopping_rounds must be an int >= 1, got {stopping_rounds!r}")
        if not (isinstance(min_delta, (int, float)) and math.isfinite(min_delta) and min_delta >= 0):
            raise ValueError(f"min_delta must be a finite number >= 0, got {min_delta!r}")
        self.stopping_rounds = stopping_rounds
        self.metric = metric
        self.dataset = dataset
        self.min_delta = float(min_delta)
        self.verbose = verbose
        self._reset()

    def _reset(self):
        self.best_iteration: int | None = None
        self.best_score: float | None = None
        self._watched: tuple[str, str] | None = None

    def _pick(self, items):
        if not items:
            raise ValueError("early_stopping needs evaluation data: pass eval_set to fit or set validation_fraction")
        candidates = [it for it in items if (self.dataset is None or it[0] == self.dataset)]
        candidates = [it for it in candidates if (self.metric is None or it[1] == self.metric)]
        if not candidates:
            available = sorted({f"{s}/{m}" for s, m, _, _ in items})
            raise ValueError(
                f"early_stopping watches dataset={self.dataset!r}, metric={self.metric!r}, "
                f"which is not among the evaluation results: {available}"
            )
        if self.dataset is None:
            last = candidates[-1][0]
            candidates = [it for it in candidates if it[0] == last]
        return candidates[0][0], candidates[0][1]

    def __call__(self, env: CallbackEnv) -> bool:
        if env.iteration == 0 or self._watched is None:
            self._reset()
            self._watched = self._pick(env.evaluation_result_list)
        item = next(it for it in env.evaluation_result_list if (it[0], it[1]) == self._watched)
        value, higher = item[2], item[3]
        better = not math.isnan(value) and (
            self.best_score is None
            or (value > self.best_score + self.min_delta if higher else value < self.best_score - self.min_delta)
        )
        if better:
            self.best_iteration, self.best_score = env.iteration, value
        since = env.iteration - (self.best_iteration if self.best_iteration is not None else -1)
        stop = (
            since >= self.stopping_rounds
            if self.best_iteration is not None
            else env.iteration + 1 >= self.stopping_rounds
        )
        if stop and self.verbose:
            logger.info(
                "early stopping at round %d: best round %s, %s's %s = %s",
                env.iteration,
                self.best_iteration,
                self._watched[0],
                self._watched[1],
                self.best_score,
            )
        return stop


def early_stopping(
    stopping_rounds: int,
    *,
    metric: str | None = None,
    dataset: str | None = None,
    min_delta: float = 0.0,
    verbose: bool = False,
) -> EarlyStopping:
    """An :class:`EarlyStopping` callback (see there)."""
    return EarlyStopping(stopping_rounds, metric=metric, dataset=dataset, min_delta=min_delta, verbose=verbose)


def log_evaluation(period: int = 1) -> Callable[[CallbackEnv], bool]:
    """Log the evaluation results every ``period`` rounds (and the last) to
    the ``rgbm_rs`` logger at INFO; ``period=0`` logs nothing (LightGBM's
    rule)."""
    if isinstance(period, bool) or not isinstance(period, int) or period < 0:
        raise ValueError(f"period must be an int >= 0, got {period!r}")

    def _log(env: CallbackEnv) -> bool:
        if period == 0:
            return False
        round_no = env.iteration + 1
        if round_no % period == 0 or round_no == env.end_iteration:
            text = format_results(env.evaluation_result_list) or f"{env.elapsed:.2f} s"
            logger.info("[%d]\t%s", round_no, text)
        return False

    return _log


def record_evaluation(eval_result: dict) -> Callable[[CallbackEnv], bool]:
    """Fill ``eval_result`` (cleared first) with ``{set: {metric: [values]}}`` as training runs."""
    if not isinstance(eval_result, dict):
        raise TypeError(f"eval_result must be a dict, got {type(eval_result).__name__}")

    def _record(env: CallbackEnv) -> bool:
        if env.iteration == 0:
            eval_result.clear()
        for s, m, v, _ in env.evaluation_result_list:
            eval_result.setdefault(s, {}).setdefault(m, []).append(v)
        return False

    return _record


def reset_parameter(**kwargs: list[float] | Callable[[int], float]) -> Callable[[CallbackEnv], bool]:
    """Change the learning rate before each round, as LightGBM's
    ``reset_parameter``: ``learning_rate=[...]`` gives one rate per round
    (the list's length must be ``n_estimators``), ``learning_rate=f`` the
    rate ``f(round)`` (0-based). Only the learning rate can change (see
    :meth:`TrainingModel.reset_parameter`); the model keeps the rates its
    trees were scaled by, and its saved parameters show the first.
    """
    for name, value in kwargs.items():
        if not (callable(value) or isinstance(value, (list, tuple))):
            raise TypeError(f"reset_parameter: {name} must be a list or a function of the round, got {value!r}")
    TrainingModel().reset_parameter(dict.fromkeys(kwargs, 0.0))  # the names are checked here

    def _reset(env: CallbackEnv) -> bool:
        new = {}
        for name, value in kwargs.items():
            if callable(value):
                new[name] = value(env.iteration)
            else:
                if len(value) != env.end_iteration:
                    raise ValueError(
                        f"reset_parameter: the list for {name} has {len(value)} values; it needs one per "
                        f"round, n_estimators = {env.end_iteration}"
                    )
                new[name] = value[env.iteration]
        env.model.reset_parameter(new)
        return False

    _reset.before_iteration = True  # type: ignore[attr-defined]
    return _reset
