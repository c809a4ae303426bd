"""Cross-validation on one :class:`~rgbm_rs.Dataset` (:func:`cv`), as
LightGBM's ``lgb.cv(return_cvbooster=True)``: every fold fits a subset that
shares the Dataset's bins, early stopping watches the mean metric across
folds, and the out-of-fold predictions come back with the fold models."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

from . import _core
from ._base import RGBMBase
from ._dataset import Dataset
from ._interrupt import interrupted_by
from .sklearn import RGBMClassifier, RGBMRanker, RGBMRegressor

__all__ = ["CVResult", "cv"]


@dataclass
class CVResult:
    """What :func:`cv` returns.

    Attributes
    ----------
    metric : str
        The metric early stopping and ``mean`` / ``std`` follow.
    higher_is_better : bool
        Whether a larger value of ``metric`` is better.
    mean, std : ndarray of shape (n_rounds,)
        Per round, the mean and the (population) standard deviation of
        ``metric`` over the folds' test rows, up to the round training
        stopped at.
    best_iteration : int
        The round (0-based) with the best mean: every fold model keeps its
        rounds up to it. The last round without early stopping.
    models : list of fitted estimators
        One per fold, in the order of ``folds``.
    folds : list of (train, test) index arrays
    oof : ndarray
        Out-of-fold predictions: each row predicted by the model of the fold
        that held it out (``predict`` of a regressor or ranker,
        ``predict_proba`` of a classifier), with the Dataset's
        ``init_score`` of the row added, as the fold's metric was computed.
    history : dict
        LightGBM's layout: ``{"valid <metric>-mean": [...], "valid
        <metric>-stdv": [...]}`` for every metric evaluated.
    """

    metric: str
    higher_is_better: bool
    mean: np.ndarray
    std: np.ndarray
    best_iteration: int
    models: list[Any]
    folds: list[tuple[np.ndarray, np.ndarray]]
    oof: np.ndarray
    history: dict[str, list[float]] = field(default_factory=dict)


def cv(
    estimator: RGBMBase | Mapping[str, Any],
    dataset: Dataset,
    folds: Any = 5,
    *,
    stratified: bool | None = None,
    shuffle: bool = True,
    seed: int = 0,
    groups: Any = None,
    early_stopping_rounds: int | None = None,
    metric: str | None = None,
) -> CVResult:
    """Cross-validate on one Dataset binned once.

    Each fold fits ``dataset.subset(train)`` (the Dataset's bins, never
    binned again) for up to ``n_estimators`` rounds, evaluating
    ``dataset.subset(test)`` after every round. The round kept is the one
    where the mean metric over the folds is best, as ``lgb.cv`` chooses it;
    every fold model is truncated to it. With early stopping the folds run
    on threads of their own, one at a time, each fold model the plain fit of
    its rows; Ctrl-C stops the round being grown.

    Parameters
    ----------
    estimator : RGBMRegressor, RGBMClassifier, RGBMRanker or dict
        Cloned for each fold. A dict holds parameters of the estimator its
        ``loss`` names a task for (regression when there is none; a Dataset
        with query groups fits RGBMRanker).
    dataset : Dataset
        The rows, with labels (and query groups for ranking).
    folds : int, splitter or iterable of (train, test) pairs
        An int k: k folds of KFold, StratifiedKFold (``stratified``) or, for
        a ranking Dataset, GroupKFold over its queries (queries stay whole).
        An object with ``split(X, y, groups)`` (scikit-learn's splitters;
        ``groups`` is ``groups``, or the query ids of a ranking Dataset).
        Or the (train, test) index pairs themselves. The test parts must not
        overlap and must cover every row (each row gets one out-of-fold
        prediction); a fold's train and test parts must be disjoint.
    stratified : bool or None
        With an int ``folds``: stratify on the labels (default: for
        classifiers).
    shuffle : bool
        With an int ``folds``: shuffle before splitting (not for GroupKFold).
    seed : int
        The shuffle's seed.
    groups : array-like of shape (n_samples,) or None
        Group labels for a splitter that takes them (e.g. GroupKFold).
    early_stopping_rounds : int or None
        Stop every fold once the mean metric has not improved for this many
        rounds (LightGBM's rule, with the estimator's
        ``early_stopping_min_delta``): the folds train round by round
        together, as lgb.cv's do, and keep the best round. None: every fold
        runs all rounds and keeps them.
    metric : str or None
        The metric to follow, among those the fits evaluate (default: the
        first, as for early stopping in ``fit``).

    Returns
    -------
    CVResult
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be an rgbm_rs.Dataset, got {type(dataset).__name__}")
    if dataset.label is None:
        raise ValueError("the Dataset has no label; build it with Dataset(X, label)")
    template = _template(estimator, dataset)
    if template.get_params().get("early_stopping_rounds") is not None:
        raise ValueError("set early_stopping_rounds in cv(), not on the estimator: cv stops on the mean across folds")
    if template.get_params().get("validation_fraction") is not None:
        raise ValueError("validation_fraction splits each fold's rows again; cv evaluates the test folds")
    if early_stopping_rounds is not None and (
        isinstance(early_stopping_rounds, bool)
        or not isinstance(early_stopping_rounds, Integral)
        or early_stopping_rounds < 1
    ):
        raise ValueError(f"early_stopping_rounds must be a positive int or None, got {early_stopping_rounds!r}")
    pairs = _folds(folds, dataset, template, stratified, shuffle, seed, groups)

    _check_fold_classes(template, dataset, pairs)
    if callable(template.get_params().get("loss")) and template.get_params().get("eval_metric") is None:
        raise ValueError("a custom loss has no metric of its own: pass eval_metric to follow in cv")
    models = [clone(template) for _ in pairs]
    higher: dict[str, bool] = {}
    if early_stopping_rounds is None:
        for est, (train, test) in zip(models, pairs):
            est.fit(dataset.subset(train), eval_set=[dataset.subset(test)], callbacks=[_Directions(higher)])
    else:
        delta = template.get_params().get("early_stopping_min_delta")
        stopping = _Stopping(int(early_stopping_rounds), 0.0 if delta is None else float(delta))
        _Lockstep(models, pairs, dataset, higher).run(metric, stopping)
    curves: list[dict[str, list[float]]] = [next(iter(est.evals_result_.values()), {}) for est in models]
    if not curves[0]:
        raise ValueError("the fits evaluate no metric: pass eval_metric")
    names = list(curves[0])
    if metric is None:
        metric = names[0]
    elif metric not in names:
        raise ValueError(f"metric {metric!r} is not evaluated by these fits; they evaluate {names}")
    n_rounds = min(len(c[metric]) for c in curves)
    values = {m: np.array([c[m][:n_rounds] for c in curves], dtype=np.float64) for m in names}
    if early_stopping_rounds is None:
        best = n_rounds - 1
        kept = n_rounds
    else:
        best = stopping.best
        kept = best + 1
        for est in models:
            est._keep_rounds(best)
    mean = _fold_mean(values[metric])[:kept]
    std = values[metric].std(axis=0)[:kept]
    history: dict[str, list[float]] = {}
    for m in names:
        history[f"valid {m}-mean"] = _fold_mean(values[m])[:kept].tolist()
        history[f"valid {m}-stdv"] = values[m].std(axis=0)[:kept].tolist()
    return CVResult(
        metric=metric,
        higher_is_better=higher[metric],
        mean=mean,
        std=std,
        best_iteration=best,
        models=models,
        folds=pairs,
        oof=_out_of_fold(models, pairs, dataset),
        history=history,
    )


class _Directions:
    """A fit callback recording each metric's direction (higher_is_better)."""

    def __init__(self, into: dict[str, bool]) -> None:
        self.into = into

    def __call__(self, env) -> bool:
        for _, name, _, higher in env.evaluation_result_list:
            self.into.setdefault(name, bool(higher))
        return False


def _template(estimator, dataset):
    if isinstance(estimator, RGBMBase):
        return estimator
    if not isinstance(estimator, Mapping):
        raise TypeError(
            f"estimator must be an RGBMRegressor, RGBMClassifier, RGBMRanker or a dict of parameters, "
            f"got {type(estimator).__name__}"
        )
    params = dict(estimator)
    if dataset.group is not None:
        cls: type[RGBMBase] = RGBMRanker
    else:
        loss = params.get("loss", "squared")
        task = dict(_core.loss_tasks()).get(loss, "regression") if isinstance(loss, str) else "regression"
        cls = RGBMClassifier if task in ("binary", "multiclass") else RGBMRegressor
    try:
        return cls(**params)
    except TypeError as e:
        raise TypeError(f"cv parameters for {cls.__name__}: {e}") from None


def _folds(folds, dataset, template, stratified, shuffle, seed, groups):
    """(train, test) int64 index pairs, checked: disjoint test parts covering every row."""
    n = dataset.n_rows
    y = dataset.label
    query = None if dataset.group is None else np.repeat(np.arange(len(dataset.group)), dataset.group)
    if groups is not None:
        groups = np.asarray(groups)
        if groups.shape != (n,):
            raise ValueError(f"groups must hold one label per row ({n}), got shape {groups.shape}")
    split_groups = query if groups is None else groups
    if isinstance(folds, Integral) and not isinstance(folds, bool):
        k = int(folds)
        if k < 2:
            raise ValueError(f"folds must be at least 2, got {k}")
        if query is not None:
            splitter: Any = GroupKFold(n_splits=k)
        elif stratified if stratified is not None else is_classifier(template):
            splitter = StratifiedKFold(n_splits=k, shuffle=shuffle, random_state=seed if shuffle else None)
        else:
            splitter = KFold(n_splits=k, shuffle=shuffle, random_state=seed if shuffle else None)
        raw = splitter.split(np.zeros((n, 1)), y, split_groups)
    elif hasattr(folds, "split"):
        raw = folds.split(np.zeros((n, 1)), y, split_groups)
    elif isinstance(folds, Iterable) and not isinstance(folds, (str, bytes)):
        raw = folds
    else:
        raise TypeError(
            f"folds must be an int, a splitter with .split or (train, test) index pairs, got {type(folds).__name__}"
        )
    pairs = []
    for i, pair in enumerate(raw):
        try:
            train, test = pair
        except (TypeError, ValueError):
            raise TypeError(f"folds[{i}] must be a (train, test) pair of index arrays") from None
        train, test = (_indices(part, n, f"folds[{i}] {what}") for part, what in ((train, "train"), (test, "test")))
        if np.intersect1d(train, test).size:
            raise ValueError(f"folds[{i}]: row {int(np.intersect1d(train, test)[0])} is in both train and test")
        pairs.append((train, test))
    if len(pairs) < 2:
        raise ValueError(f"cv needs at least 2 folds, got {len(pairs)}")
    seen = np.zeros(n, dtype=np.int64)
    for _, test in pairs:
        seen[test] += 1
    if np.any(seen > 1):
        raise ValueError(f"folds overlap: row {int(np.flatnonzero(seen > 1)[0])} is in more than one test fold")
    if np.any(seen == 0):
        missing = np.flatnonzero(seen == 0)
        raise ValueError(
            f"folds do not cover the data: {missing.size} rows (first {int(missing[0])}) are in no test fold"
        )
    return pairs


def _indices(part, n, what):
    idx = np.asarray(part)
    if idx.dtype == bool or idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
        raise TypeError(f"{what} must be a non-empty 1-D array of integer row positions")
    idx = idx.astype(np.int64)
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise ValueError(f"{what}: row {int(idx[bad[0]])} is out of range for a Dataset of {n} rows")
    if np.unique(idx).size != idx.size:
        raise ValueError(f"{what} holds a row more than once")
    return idx


class _Stopping:
    """lgb.cv's early stopping on the mean over the folds, fed round by
    round: a round improves on the best when it beats it by more than
    ``min_delta`` (round 0 is the first best, ties keep the earlier round);
    training stops ``patience`` rounds after the last improvement."""

    def __init__(self, patience: int, min_delta: float) -> None:
        self.patience = patience
        self.min_delta = min_delta
        self.best = 0
        self.best_value = float("nan")

    def update(self, r: int, value: float, higher: bool) -> bool:
        """Round ``r``'s mean; True when training should stop after it."""
        if r == 0 or (value > self.best_value + self.min_delta if higher else value < self.best_value - self.min_delta):
            self.best, self.best_value = r, value
            return False
        return r - self.best >= self.patience


def _fold_mean(values: np.ndarray) -> np.ndarray:
    """The mean over the folds (rows) of ``values``, summed in fold order,
    so the mean stopping follows and the mean reported are the same bits."""
    total = values[0].astype(np.float64, copy=True)
    for row in values[1:]:
        total += row
    return total / len(values)


#: What the driver answers a fold after a round: train on, stop, or give up (Ctrl-C, another fold failed).
_GO, _STOP, _ABORT = "go", "stop", "abort"


class _Aborted(Exception):
    """Raised in a fold's fit to end it when cv gives up."""


class _Lockstep:
    """The folds' fits trained round by round together, as lgb.cv trains
    its boosters: each fold's fit runs on a thread of its own, one at a time,
    and after every round hands its results to the driver (the caller) and
    waits. Once every fold has finished a round, the driver feeds the mean
    to :class:`_Stopping` and answers each fold: go on, or stop (its
    callback returns True, so the fit ends as a fit of that many rounds
    ends). Each fold's model is the one a plain fit of those rounds gives;
    only one fold computes at a time, in fold order.

    Ctrl-C reaches the driver, which waits in the main thread: it stops the
    fold computing (mid-round, through its fit's interrupt event) and ends
    every other fold's fit, then the KeyboardInterrupt propagates."""

    def __init__(self, models, pairs, dataset, higher: dict[str, bool]) -> None:
        self.models = models
        self.pairs = pairs
        self.dataset = dataset
        self.higher = higher
        self.inbox: queue.Queue = queue.Queue()
        self.replies: list[queue.Queue] = [queue.Queue() for _ in models]
        # Set when cv gives up: stops the fold computing mid-round, as Ctrl-C stops a fit.
        self.interrupt = threading.Event()

    def _fold(self, i: int) -> None:
        try:
            if self.replies[i].get() == _ABORT:
                self.inbox.put((i, "done", None))
                return
            train, test = self.pairs[i]
            with interrupted_by(self.interrupt):
                self.models[i].fit(
                    self.dataset.subset(train), eval_set=[self.dataset.subset(test)], callbacks=[_Turn(self, i)]
                )
            self.inbox.put((i, "done", None))
        except BaseException as e:  # handed to the driver, which raises it
            self.inbox.put((i, "failed", e))

    def _answer(self, i: int, reply: str):
        """Send fold ``i`` its next instruction and wait for what it does."""
        self.replies[i].put(reply)
        while True:
            try:
                j, kind, payload = self.inbox.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "failed" and not isinstance(payload, _Aborted):
                raise payload
            if j != i:
                raise RuntimeError(f"internal error: cv expected fold {i}, heard from fold {j}")
            return kind, payload

    def run(self, metric: str | None, stopping: _Stopping) -> None:
        k = len(self.models)
        threads = [threading.Thread(target=self._fold, args=(i,), daemon=True) for i in range(k)]
        for t in threads:
            t.start()
        ended = [False] * k
        try:
            r = 0
            while True:
                values = []
                for i in range(k):
                    kind, items = self._answer(i, _GO)
                    if kind == "done":
                        # Its rounds ran out (n_estimators): so did every fold's.
                        ended[i] = True
                        continue
                    if r == 0 and i == 0:
                        metric = self._watched(metric, items)
                    for _, name, _, h in items:
                        self.higher.setdefault(name, bool(h))
                    values.append([v for _, name, v, _ in items if name == metric][0])
                if all(ended):
                    return
                if any(ended):
                    break
                assert metric is not None
                mean = float(_fold_mean(np.array(values, dtype=np.float64).reshape(k, 1))[0])
                if stopping.update(r, mean, self.higher[metric]):
                    break
                r += 1
            for i in range(k):
                if not ended[i]:
                    self._answer(i, _STOP)
                    ended[i] = True
        except BaseException:
            # The fold computing stops mid-round; the others get the abort as their answer.
            self.interrupt.set()
            for q in self.replies:
                q.put(_ABORT)
            for t in threads:
                while t.is_alive():
                    t.join(0.1)
            raise
        finally:
            for t in threads:
                t.join()

    @staticmethod
    def _watched(metric, items):
        names = [name for _, name, _, _ in items]
        if not names:
            raise ValueError("the fits evaluate no metric: pass eval_metric")
        if metric is None:
            return names[0]
        if metric not in names:
            raise ValueError(f"metric {metric!r} is not evaluated by these fits; they evaluate {names}")
        return metric


class _Turn:
    """A fold fit's callback in :class:`_Lockstep`: hands the round's
    results to the driver, then waits for its answer."""

    def __init__(self, lockstep: _Lockstep, i: int) -> None:
        self.lockstep = lockstep
        self.i = i

    def __call__(self, env) -> bool:
        self.lockstep.inbox.put((self.i, "round", list(env.evaluation_result_list)))
        reply = self.lockstep.replies[self.i].get()
        if reply == _ABORT:
            raise _Aborted
        return reply == _STOP


def _check_fold_classes(template, dataset, pairs):
    """A classifier's fold must train on every class its test rows may hold."""
    y = dataset.label
    if not is_classifier(template) or y is None or np.ndim(y) != 1:
        return
    classes, counts = np.unique(y, return_counts=True)
    for i, (train, _) in enumerate(pairs):
        missing = np.setdiff1d(classes, y[train])
        if missing.size:
            c = missing[0]
            label = c.item() if isinstance(c, np.generic) else c
            if counts[np.searchsorted(classes, c)] == 1:
                raise ValueError(
                    f"fold {i}: its training rows have no row of class {label!r}, which has a single row: "
                    "every split leaves it out of one fold's training rows; drop or merge that class"
                )
            raise ValueError(
                f"fold {i}: its training rows have no row of class {label!r}; use StratifiedKFold or fewer folds"
            )


def _out_of_fold(models, pairs, dataset):
    X = dataset.data
    first = models[0]
    proba = is_classifier(first)
    init = dataset.init_score
    outs = []
    for est, (_, test) in zip(models, pairs):
        rows = X[test]
        # As the fold's metric was computed: with the test rows' starting scores.
        offsets = None if init is None else init[test]
        outs.append(
            (test, est.predict_proba(rows, init_score=offsets) if proba else est.predict(rows, init_score=offsets))
        )
    shape = (dataset.n_rows,) + outs[0][1].shape[1:]
    oof = np.empty(shape, dtype=np.float64)
    for test, pred in outs:
        oof[test] = pred
    return oof
