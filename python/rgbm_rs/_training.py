"""What a fit is given, as one object each: :class:`FitInput` (everything
one ``fit`` call trains from), :class:`EvalSet` (one evaluation set) and
:class:`TrainingData` (the checked training rows the core trains on, the
Python face of the core's ``TrainingData``).

A fit's data takes two shapes only: as given (``FitInput.from_fit``, with
every :class:`rgbm_rs.Dataset` replaced by its parts), and as the core
reads it (:class:`TrainingData` and checked :class:`EvalSet` entries), on
the local and the cluster path alike."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._dataset import Dataset


@dataclass(frozen=True)
class TrainingData:
    """The training rows as the core reads them (attribute names are its
    ``Booster.train`` and ``Shard`` contract): ``x`` the native matrix,
    ``y`` float64 labels, optional ``sample_weight``, ``init_score``
    (class-major, n × K) and ``group`` (ranking: the sizes of consecutive
    queries); ``binned`` the rows' bins (a Dataset's), trained on instead
    of binning ``x``."""

    x: Any
    y: np.ndarray
    sample_weight: np.ndarray | None = None
    init_score: np.ndarray | None = None
    group: Sequence[int] | None = None
    binned: Any = None


@dataclass(frozen=True)
class EvalSet:
    """One evaluation set. As ``fit`` was given it (``from_fit``): its
    rows and labels as passed, with the entry's weights, starting scores
    and query groups. As the core reads it (attribute names are its
    contract, as :class:`TrainingData`'s): ``x`` the native matrix of the
    training dtype, ``y`` float64 labels and ``init_score`` class-major."""

    name: str
    x: Any
    y: Any
    sample_weight: Any = None
    init_score: Any = None
    group: Any = None

    @staticmethod
    def from_fit(
        eval_set, eval_names=None, *, eval_sample_weight=None, eval_init_score=None, eval_group=None, train=None
    ) -> list[EvalSet]:
        """``fit``'s evaluation arguments as one entry per set: (X, y)
        pairs or Datasets (which bring their own weights, starting scores
        and groups), each list checked for one entry per set. Unnamed sets
        are "valid_i", or "training" when the pair is the fit's own (X, y)
        objects, ``train`` (LightGBM's names)."""
        if eval_set is None:
            for what, given in (("eval_init_score", eval_init_score), ("eval_group", eval_group)):
                if given is not None:
                    raise ValueError(f"{what} needs eval_set")
            return []
        entries = _entries(eval_set)
        k = len(entries)
        if eval_names is not None and (isinstance(eval_names, str) or len(eval_names) != k):
            raise ValueError(f"eval_names must be a list of {k} names, one per eval_set entry")
        per_set = {}
        for what, given in (
            ("eval_sample_weight", eval_sample_weight),
            ("eval_init_score", eval_init_score),
            ("eval_group", eval_group),
        ):
            if given is not None and (isinstance(given, (str, np.ndarray)) or len(given) != k):
                raise ValueError(f"{what} must be a list of {k} entries (or None), one per eval_set entry")
            per_set[what] = [None] * k if given is None else list(given)
        out = []
        for i, entry in enumerate(entries):
            if eval_names is not None:
                name = str(eval_names[i])
            elif train is not None and not isinstance(entry, Dataset) and all(a is b for a, b in zip(entry, train)):
                name = "training"
            else:
                name = f"valid_{i}"
            own = {what: values[i] for what, values in per_set.items()}
            if isinstance(entry, Dataset):
                if entry.label is None:
                    raise ValueError(f"eval_set[{i}] is a Dataset without labels")
                for what, given in own.items():
                    if given is not None:
                        raise TypeError(
                            f"eval_set[{i}] is a Dataset, which holds its own {what[5:]}; do not pass {what}"
                        )
                # A frame's Dataset goes whole: its column names and categories are checked as predict checks them.
                rows = entry if entry._categories is not None else entry.data
                out.append(EvalSet(name, rows, entry.label, entry.weight, entry.init_score, entry.group))
            else:
                Xe, ye = entry
                out.append(EvalSet(name, Xe, ye, own["eval_sample_weight"], own["eval_init_score"], own["eval_group"]))
        names = [e.name for e in out]
        if len(set(names)) != len(names):
            raise ValueError(f"eval_names must be unique, got {names}")
        return out


def _entries(eval_set):
    """eval_set as a list of (X, y) pairs and Datasets (one bare pair or Dataset is accepted)."""
    if isinstance(eval_set, Dataset) or (isinstance(eval_set, tuple) and len(eval_set) == 2):
        eval_set = [eval_set]
    if not isinstance(eval_set, (list, tuple)) or not all(
        isinstance(e, Dataset) or (isinstance(e, (list, tuple)) and len(e) == 2) for e in eval_set
    ):
        raise TypeError("eval_set must be a list of (X, y) pairs")
    return list(eval_set)


@dataclass(frozen=True)
class FitInput:
    """Everything one ``fit`` call trains from.

    As ``from_fit`` makes it: the arguments as given, every Dataset
    replaced by its parts (``dataset`` is the training Dataset, whose bins
    the fit trains on; None for raw rows). The estimator's label hook
    (``RGBMBase._labels``) then sets ``y`` to the labels encoded as float64
    (class indices for classifiers), ``loss`` to the core's loss name
    ("custom" for a callable) and ``encode(y, i)``, which encodes
    evaluation set ``i``'s labels the same way. A 2-D ``y`` (n, K) fits K
    targets, one output each; ``repeat`` > 1 fits that many outputs on a
    1-D ``y`` (one per quantile). ``init_model`` is what ``fit`` was given
    until the fit reads X (then the :class:`Continued` model, or None).
    """

    X: Any
    y: Any
    sample_weight: Any = None
    init_score: Any = None
    group: Any = None
    evals: Sequence[EvalSet] = ()
    callbacks: Sequence[Callable] | None = None
    init_model: Any = None
    dataset: Dataset | None = None
    loss: str = ""
    encode: Callable[[Any, int], np.ndarray] | None = None
    #: Outputs fitted on each (1-D) label: several quantiles of one target.
    repeat: int = 1
    #: fit's ``feature_weights`` as given (None: none).
    feature_weights: Any = None

    @classmethod
    def from_fit(
        cls, X, y, *, sample_weight=None, init_score=None, group=None, evals=(), callbacks=None, init_model=None
    ) -> FitInput:
        """The record of a fit's arguments; ``evals`` as
        :meth:`EvalSet.from_fit` makes them. A Dataset ``X`` brings y, the
        weights, starting scores and groups, which are then not passed."""
        dataset = None
        if isinstance(X, Dataset):
            dataset = X
            for name, given in (
                ("y", y),
                ("sample_weight", sample_weight),
                ("init_score", init_score),
                ("group", group),
            ):
                if given is not None:
                    raise TypeError(f"X is a Dataset, which holds {name}; do not pass {name} to fit as well")
            if X.label is None:
                raise ValueError("the Dataset has no label; build it with Dataset(X, label)")
            for i, e in enumerate(evals):
                shape: tuple[int, ...] = tuple(getattr(e.x, "shape", ()))
                if len(shape) == 2 and shape[1] != X.n_features:
                    raise ValueError(f"eval_set[{i}] has {shape[1]} features, the training Dataset {X.n_features}")
            X, y = dataset._fit_rows(), dataset.label
            sample_weight, init_score, group = dataset.weight, dataset.init_score, dataset.group
        elif y is None:
            # scikit-learn's wording for a missing y (its estimator checks look for it).
            raise ValueError(
                "this estimator requires y to be passed, but the target y is None (or pass X as a Dataset)"
            )
        return cls(X, y, sample_weight, init_score, group, tuple(evals), callbacks, init_model, dataset)
