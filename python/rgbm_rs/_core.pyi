"""Type stubs for the native module ``rgbm_rs._core`` (built from ``src/python/``).

Keep in sync with ``src/python/mod.rs`` and ``src/python/booster.rs``; CI checks
these stubs against the compiled module with ``python3 -m mypy.stubtest rgbm_rs._core``.
"""

import os
from collections.abc import Sequence
from typing import Any, Callable, Final, Protocol, final

import numpy as np
from numpy.typing import NDArray
from typing_extensions import TypeAlias

__all__ = [
    "BIN_SAMPLE_ROWS",
    "BinnedData",
    "Booster",
    "FORMAT_VERSION",
    "SERIAL_FIT_VALUES",
    "Shard",
    "__version__",
    "available_cores",
    "check_shard_params",
    "loss_tasks",
    "target_losses",
    "metrics_for",
    "param_schema",
    "peer_names",
    "type1_theta",
]

#: Version of the model JSON format this build writes (it reads 1..FORMAT_VERSION).
FORMAT_VERSION: Final[int]
#: Fits of fewer input values (rows × features) than this run on one
#: thread when ``n_jobs`` is None or -1.
SERIAL_FIT_VALUES: Final[int]
#: Rows past which binning places the cut points on a sample of this many
#: rows, drawn with the fit's ``random_state``.
BIN_SAMPLE_ROWS: Final[int]
#: The package version (Cargo.toml's).
__version__: Final[str]

def metrics_for(loss: str, n_classes: int | None = None) -> list[str]:
    """The evaluation metrics that apply to ``loss`` (with ``n_classes`` for
    a custom loss's task), its default first."""

def available_cores() -> int:
    """The cores this process may use (its affinity mask and cgroup CPU
    quota): what ``n_jobs=None`` or -1 runs on."""

def type1_theta(p: int, t: int) -> float:
    """Lu & Mazumder's formula (18): Type 1 selection's minimal cosine angle
    for ``p`` orthogonal weak learners, ``t`` drawn per round (1 <= t <= p)."""

def check_shard_params(params_json: str) -> None:
    """Checks parameters (JSON) as a fit on shards would, before any data
    moves; ValueError names the first parameter refused."""

def loss_tasks() -> list[tuple[str, str]]:
    """Every loss with its task ("regression", "binary", "multiclass",
    "ranking" or "custom"), in the core's order."""

def target_losses() -> list[str]:
    """The losses that fit several targets (``n_targets``), in the core's order."""

def peer_names() -> str:
    """LightGBM's and XGBoost's parameter and objective names and what each
    is here, as JSON: ``{"names": [{name, peers, use, of, estimator, note}],
    "objectives": [{name, loss, note}]}``."""

def param_schema() -> str:
    """Every training parameter as JSON: a list of objects with ``name``,
    ``type`` and its bounds, ``optional``, ``doc`` and ``default``."""

#: The arrays of a compressed sparse matrix: ("csc" or "csr", n_rows, n_cols,
#: indptr int64, indices int32 sorted within each row or column, data float32
#: or float64). Entries not stored are 0.
_Sparse: TypeAlias = tuple[
    str, int, int, NDArray[np.int64], NDArray[np.int32], NDArray[np.float32] | NDArray[np.float64]
]
#: Feature matrix: 2-D, float32 or float64, C- or Fortran-contiguous (NaN =
#: missing), or a sparse one.
_Matrix: TypeAlias = NDArray[np.float32] | NDArray[np.float64] | _Sparse
#: Targets / weights: 1-D contiguous float64.
_Vector: TypeAlias = NDArray[np.float64]

class _Rows(Protocol):
    """Rows as the core reads them: X, labels, and optional weights,
    class-major starting scores (n × n_outputs) and query group sizes."""

    @property
    def x(self) -> _Matrix: ...
    @property
    def y(self) -> _Vector: ...
    @property
    def sample_weight(self) -> _Vector | None: ...
    @property
    def init_score(self) -> _Vector | None: ...
    @property
    def group(self) -> Sequence[int] | None: ...

class _EvalSet(_Rows, Protocol):
    """An evaluation set as :meth:`Booster.train` and :class:`Shard` read it
    (``rgbm_rs._training.EvalSet``), X of the training dtype."""

    @property
    def name(self) -> str: ...

class _TrainingData(_Rows, Protocol):
    """What :meth:`Booster.train` reads the training rows from (``rgbm_rs._training.TrainingData``)."""

    @property
    def binned(self) -> BinnedData | None: ...

#: One evaluation result: (set name, metric name, value, higher_is_better).
_EvalItem: TypeAlias = tuple[str, str, float, bool]
#: ``callback(round, results)``, called after every round; a truthy result stops training.
_Callback: TypeAlias = Callable[[int, list[_EvalItem]], object]

class _Interrupt(Protocol):
    """What stops a fit from another thread (``threading.Event``)."""

    def is_set(self) -> bool: ...

@final
class Booster:
    """A trained model behind an immutable handle.

    Not constructible directly: use :meth:`train` or :meth:`from_json`.
    """

    @staticmethod
    def train(
        params_json: str,
        data: _TrainingData,
        eval_sets: list[_EvalSet] | None = None,
        callback: _Callback | None = None,
        objective: Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], NDArray[np.float64]]] | None = None,
        metrics: Callable[[int, NDArray[np.float64]], list[tuple[str, float, bool]]] | None = None,
        interrupt: _Interrupt | None = None,
    ) -> Booster:
        """Trains a model. ``params_json`` holds BoosterParams (unknown keys are
        errors); ``data`` has the training rows as attributes ``x``, ``y``,
        ``sample_weight``, ``init_score``, ``group`` and ``binned`` (the last
        four may be None; ``group``: with loss "lambdarank", the sizes of the
        consecutive rows' queries; ``binned``: a BinnedData of the rows,
        trained on instead of binning ``x``); ``eval_sets`` is a list of
        evaluation sets read by attribute (``name``, ``x`` of the training
        dtype, ``y``, ``sample_weight``, ``init_score``, ``group``);
        ``callback(round, results)`` runs after every round with results
        [(set, metric, value, higher_is_better)] and stops training by
        returning True. With loss "custom", ``objective(raw)`` returns (grad,
        hess) at the class-major raw scores; ``metrics(set, raw)`` returns an
        evaluation set's [(name, value, higher_is_better)]. ``interrupt``: an
        object whose ``is_set()`` (a ``threading.Event``) stops training as
        Ctrl-C does, for a fit on a thread other than the main one, which
        sees no signals.

        Raises ValueError for invalid parameters or data, TypeError for wrong
        array types, KeyboardInterrupt on Ctrl-C (or ``interrupt``), and
        re-raises any exception the callback raised.
        """

    @staticmethod
    def from_json(text: str) -> Booster:
        """Loads and validates a model from its JSON text (no training log,
        evaluation histories or ``best_iteration``)."""

    @staticmethod
    def from_file_text(text: str) -> tuple[Booster, str]:
        """A model file's ``model`` member loaded as by :meth:`from_json`, and
        the rest of the document as JSON text; ValueError if the text is not
        a JSON object with a valid model."""

    def check_feature_fields(
        self, names: list[str] | None = None, category_counts: list[int | None] | None = None
    ) -> None:
        """Checks a model file's ``feature_names_in`` (one distinct name per
        feature) and the lengths of its ``categories`` lists (on categorical
        features only, each covering the codes the trees split on) against
        the model; ValueError naming the field."""

    def continued(self, more: Booster) -> Booster:
        """This model followed by ``more``, a model trained from this one's
        raw scores (``init_score``, base score 0); ValueError when features,
        outputs or loss differ, or either uses model shrinkage. Keeps
        ``more``'s log, evaluation histories, best iteration and prediction
        threads."""

    def truncated(self, n_rounds: int) -> Booster:
        """The model after its first ``n_rounds`` rounds (shrinkage of the dropped
        rounds undone); keeps the log, evaluation histories and prediction
        threads. ``n_rounds`` must be in [1, self.n_rounds]."""

    def set_n_jobs(self, n_jobs: int | None) -> None:
        """Sets the threads of the predictions that follow (None: every core
        the process may use). Until called they run on the fit's ``n_jobs``;
        the model text keeps the fit's ``n_jobs``. ValueError for 0."""

    def to_json(self) -> str:
        """The model as JSON text (readable by :meth:`from_json`)."""

    def predict_raw(self, x: _Matrix, n_rounds: int | None = None) -> NDArray[np.float64]:
        """Raw scores (base score + trees) of the first ``n_rounds`` rounds:
        shape (n,) for single-output models, (n, n_outputs) otherwise."""

    def predict_trees(self, x: _Matrix, start: int, end: int) -> NDArray[np.float64]:
        """Sum of the outputs of trees start..end (tree indices, not rounds; no
        base score), shaped like :meth:`predict_raw`."""

    def predict_leaf(self, x: _Matrix) -> NDArray[np.int32]:
        """The leaf each row reaches in every tree: shape (n, n_trees), tree
        r·K + k being round r's tree of output k."""

    def predict_contrib(self, x: _Matrix) -> NDArray[np.float64]:
        """SHAP values of the raw scores: shape (n, n_outputs·(n_features + 1)),
        per output the feature contributions and then the expected raw score."""

    def virtual_ensemble(self, x: _Matrix, n_members: int) -> NDArray[np.float64]:
        """Raw scores of the virtual-ensemble members: shape (members, n), or
        (members, n, n_outputs) for multi-output models."""

    def feature_importances(self, kind: str) -> NDArray[np.float64]:
        """Normalised importances, shape (n_features,): ``"gain"`` (total split
        gain) or ``"split"`` (split count)."""

    def link(self) -> tuple[str, float] | None:
        """The link from raw scores to predictions as (name, scale):
        ``"identity"``, ``"exp"``, ``"sigmoid"`` (p = 1 / (1 + e^(-f / scale)))
        or ``"softmax"``; None for a custom-loss classifier."""

    def params_json(self) -> str:
        """The model's BoosterParams as JSON (every field, defaults filled in)."""

    def training_log_json(self) -> str:
        """The per-round training log as JSON (a list of objects; empty after loading)."""

    def evals_json(self) -> str:
        """Evaluation histories as JSON: a list of {set, metric, values} (empty after loading)."""

    @property
    def best_iteration(self) -> int | None:
        """The round kept by early stopping (0-based), if early stopping ran."""

    @property
    def n_rounds(self) -> int:
        """Boosting rounds (trees per output)."""

    @property
    def n_outputs(self) -> int:
        """Outputs per row: 1, or the number of classes for softmax models."""

    @property
    def n_trees(self) -> int:
        """Trees in the model: ``n_rounds * n_outputs``."""

    @property
    def n_features(self) -> int:
        """Number of features the model was trained on."""

    @property
    def shrink_factor(self) -> float:
        """q = 1 - shrink_rate * learning_rate of the fitted model (each round
        scaled the earlier trees by q)."""

    def shrinkage_undo(self, dropped: int) -> float:
        """q ** -dropped, undoing the shrinkage ``dropped`` later rounds applied
        to the stored trees; ValueError when it overflows."""

    def class_probabilities(self, raw: NDArray[np.float64]) -> NDArray[np.float64]:
        """Class probabilities of raw scores (any shape and strides): shape
        (...) -> (..., 2) for a binary model, (..., K) -> (..., K) for softmax."""

    def response(self, raw: NDArray[np.float64]) -> NDArray[np.float64]:
        """The predictions of raw scores (any shape and strides) of a
        single-output regression model: exp(f) for a log-link loss (poisson,
        gamma, tweedie), else f; ValueError for other models."""

    def standard_deviation(self, log_std: NDArray[np.float64]) -> NDArray[np.float64]:
        """sigma = exp(s) for each predicted log sigma (1-D, any strides) of a
        gaussian model; ValueError where sigma squared would overflow."""

    @property
    def base_score(self) -> list[float]:
        """Starting score of each output."""

@final
class BinnedData:
    """Binned rows: codes and the bin boundaries they were made with."""

    @staticmethod
    def build(
        params_json: str,
        x: _Matrix,
        sample_weight: NDArray[np.float64] | None = None,
        interrupt: _Interrupt | None = None,
    ) -> BinnedData:
        """The rows ``x`` binned as ``Booster.train(params_json, ...)`` would
        bin them, with quantiles weighted by ``sample_weight`` (None:
        unweighted); ``interrupt`` as in :meth:`Booster.train`."""

    def with_same_bins(self, x: _Matrix, n_jobs: int | None = None) -> BinnedData:
        """The rows ``x`` binned with this dataset's bin boundaries, on
        ``n_jobs`` threads (None: all cores)."""

    def subset(self, indices: NDArray[np.int64], n_jobs: int | None = None) -> BinnedData:
        """The rows at ``indices`` (int64, in that order), their codes gathered
        with the same bin boundaries, on ``n_jobs`` threads (None: all cores)."""

    def save(
        self,
        path: str | os.PathLike[str],
        floats: Sequence[tuple[str, NDArray[np.float64]]],
        ints: Sequence[tuple[str, NDArray[np.int64]]],
        meta: str,
    ) -> None:
        """Writes the rows to ``path`` (atomically) with the named float64
        arrays ``floats``, int64 arrays ``ints`` and the JSON text ``meta``."""

    @staticmethod
    def load(path: str | os.PathLike[str]) -> tuple[BinnedData, str, list[tuple[str, NDArray[Any]]]]:
        """Reads a file ``save`` wrote: the rows, the JSON text ``meta`` and the
        named arrays (float64 or int64), in the order they were saved."""

    @property
    def n_rows(self) -> int: ...
    @property
    def n_features(self) -> int: ...
    def binning(self) -> tuple[int, int, list[int]]:
        """The ``max_bins`` and ``min_samples_leaf`` the rows were binned with, and
        the categorical features' positions."""

@final
class Shard:
    """One shard's fit (a Dask worker's rows) on a thread of its own, whose
    exchanges the caller relays between all shards (``rgbm_rs.dask``).
    ``data``: the shard's rows (``x`` dense, ``y``, ``sample_weight``,
    ``init_score``); ``resume``: the records of rounds 0..k of the same fit
    (as "round" messages carry them), replayed rather than trained, and
    whether the caller had stopped the fit after the last."""

    def __new__(
        cls,
        params_json: str,
        data: _TrainingData,
        row_ids: NDArray[np.uint64],
        n_total: int,
        eval_sets: list[_EvalSet] | None = None,
        threads: int | None = None,
        resume: tuple[list[str], bool] | None = None,
    ) -> Shard: ...
    def first(self) -> tuple[Any, ...]:
        """The fit's first message: ("sum" | "max", values), ("limbs", int64
        limbs), ("gather", width, records), ("round", index, [(set, metric,
        value, higher_is_better)], the round's record as JSON, which a
        resumed shard takes back in ``resume``) or ("done", Booster); a
        failed fit raises its error."""

    def reply(self, kind: str, values: Any) -> tuple[Any, ...]:
        """Answers the last message ("values", "limbs" or "stop") and returns
        the next one."""

    def close(self) -> None:
        """Stops the fit and frees the shard's rows."""
