"""Cross-validation on one :class:`~rgbm_rs.Dataset` (:func:`cv`), as
LightGBM's ``lgb.cv(return_cvbooster=True)``: every fold fits a subset that
shares the Dataset's bins, early stopping watches the mean metric across
folds, and the out-of-fold predictions come back with the fold models."""

from __future__ import annotations

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
        ``predict_proba`` of a classifier).
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
    every fold model is truncated to it.

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
        Stop once the mean metric has not improved for this many rounds.
        None: every fold runs all rounds; the best round is still chosen by
        the mean metric only when this is set (else the last round).
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

    models: list[Any] = []
    curves: list[dict[str, list[float]]] = []
    higher: dict[str, bool] = {}
    for train, test in pairs:
        est = clone(template)
        est.fit(dataset.subset(train), eval_set=[dataset.subset(test)], callbacks=[_Directions(higher)])
        models.append(est)
        curves.append(next(iter(est.evals_result_.values())))
    names = list(curves[0])
    if metric is None:
        metric = names[0]
    elif metric not in names:
        raise ValueError(f"metric {metric!r} is not evaluated by these fits; they evaluate {names}")
    n_rounds = min(len(c[metric]) for c in curves)
    values = {m: np.array([c[m][:n_rounds] for c in curves], dtype=np.float64) for m in names}
    best = _best_round(values[metric].mean(axis=0), higher[metric], early_stopping_rounds)
    kept = best + 1 if early_stopping_rounds is not None else n_rounds
    if early_stopping_rounds is not None:
        for est in models:
            est._keep_rounds(best)
    mean = values[metric].mean(axis=0)[:kept]
    std = values[metric].std(axis=0)[:kept]
    history: dict[str, list[float]] = {}
    for m in names:
        history[f"valid {m}-mean"] = values[m].mean(axis=0)[:kept].tolist()
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


def _best_round(mean, higher, patience):
    """lgb.cv's choice: the best mean seen before ``patience`` rounds without
    improvement (the first best on ties); the last round without patience."""
    if patience is None:
        return len(mean) - 1
    best = 0
    for r in range(1, len(mean)):
        if (mean[r] > mean[best]) if higher else (mean[r] < mean[best]):
            best = r
        elif r - best >= patience:
            break
    return best


def _out_of_fold(models, pairs, dataset):
    X = dataset.data
    first = models[0]
    proba = is_classifier(first)
    outs = []
    for est, (_, test) in zip(models, pairs):
        rows = X[test]
        outs.append((test, est.predict_proba(rows) if proba else est.predict(rows)))
    shape = (dataset.n_rows,) + outs[0][1].shape[1:]
    oof = np.empty(shape, dtype=np.float64)
    for test, pred in outs:
        oof[test] = pred
    return oof
