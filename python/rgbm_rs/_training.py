"""What a fit is given, as one object each: :class:`FitInput` (what the
estimator's ``fit`` received, labels already encoded) and
:class:`TrainingData` (the checked training rows the core trains on, the
Python face of the core's ``TrainingData``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class TrainingData:
    """The training rows as the core reads them (attribute names are its
    ``Booster.train`` contract): ``x`` the native matrix, ``y`` float64
    labels, optional ``sample_weight``, ``init_score`` (class-major, n × K)
    and ``group`` (ranking: the sizes of consecutive queries)."""

    x: Any
    y: np.ndarray
    sample_weight: np.ndarray | None = None
    init_score: np.ndarray | None = None
    group: Sequence[int] | None = None
    binned: Any = None


@dataclass(frozen=True)
class FitInput:
    """Everything one ``fit`` call trains from.

    ``y`` holds the labels encoded as float64 (class indices for
    classifiers); ``loss`` is the core's loss name ("custom" for a
    callable); ``encode(y, i)`` encodes evaluation set ``i``'s labels the
    same way; ``group`` / ``eval_group`` are ranking's query group sizes,
    checked by the caller. The ``eval_*`` fields are as ``fit`` takes them.
    ``dataset`` is the :class:`rgbm_rs.Dataset` ``X`` came from (None for
    raw rows): the fit trains on its bins.
    A 2-D ``y`` (n, K) fits K targets, one output each; ``repeat`` > 1
    fits that many outputs on a 1-D ``y`` (one per quantile).
    """

    X: Any
    y: Any
    loss: str
    encode: Callable[[Any, int], np.ndarray]
    sample_weight: Any = None
    init_score: Any = None
    group: Sequence[int] | None = None
    eval_set: Any = None
    eval_names: Sequence[str] | None = None
    eval_sample_weight: Any = None
    eval_init_score: Any = None
    eval_group: Sequence[Sequence[int] | None] | None = None
    callbacks: Sequence[Callable] | None = None
    init_model: Any = None
    dataset: Any = None
    #: Outputs fitted on each (1-D) label: several quantiles of one target.
    repeat: int = 1
