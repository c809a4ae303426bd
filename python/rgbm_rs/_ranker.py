"""The learning-to-rank estimator (LambdaRank on the core's query groups)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from sklearn.utils._param_validation import StrOptions

from . import _core, _params
from ._base import RGBMBase, store_params
from ._dataset import Dataset
from ._rounds import documents_rounds
from ._training import EvalSet, FitInput
from ._typing import Callback, FeatureSelection, MatrixLike, PathLike, VectorLike

if TYPE_CHECKING:
    from typing_extensions import Self


def _group_sizes(group, qid, n_rows, what):
    """Query group sizes from LightGBM's ``group`` (sizes of consecutive
    queries) or XGBoost's ``qid`` (a query id per row, rows of a query
    together); exactly one of them."""
    if (group is None) == (qid is None):
        raise ValueError(f"{what}: pass the query groups as exactly one of group (sizes) or qid (a query id per row)")
    if group is not None:
        sizes = np.asarray(group)
        if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iu":
            raise ValueError(f"{what}: group must be a non-empty 1-D array of integer query sizes, got {sizes!r:.80}")
        if (sizes < 1).any():
            raise ValueError(f"{what}: every group size must be at least 1, got {int(sizes.min())}")
        if int(sizes.sum()) != n_rows:
            raise ValueError(f"{what}: the group sizes add up to {int(sizes.sum())}, but there are {n_rows} rows")
        return [int(s) for s in sizes]
    ids = np.asarray(qid)
    if ids.ndim != 1 or ids.shape[0] != n_rows:
        raise ValueError(f"{what}: qid must be 1-D with one query id per row ({n_rows}), got shape {ids.shape}")
    if ids.dtype.kind in "fc" and not np.isfinite(ids).all():
        raise ValueError(f"{what}: qid holds NaN or infinity; every row needs a query id")
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    if len(np.unique(ids)) != len(starts):
        raise ValueError(f"{what}: the rows of each query must be consecutive in qid (sort the rows by qid)")
    return np.diff(np.r_[starts, n_rows]).astype(int).tolist()


class _Queries(NamedTuple):
    """A query grouping as fit takes it: ``group`` (sizes) or ``qid`` (ids)."""

    group: Any
    qid: Any


def _eval_queries(eval_set, eval_group, eval_qid):
    """Each evaluation set's query grouping (None without eval_group and
    eval_qid); EvalSet.from_fit checks there is one per evaluation set."""
    if eval_group is None and eval_qid is None:
        return None
    if eval_set is None:
        raise ValueError("eval_group and eval_qid need eval_set")
    given = [list(v) for v in (eval_group, eval_qid) if v is not None]
    if len(given) == 2 and len(given[0]) != len(given[1]):
        raise ValueError("eval_group and eval_qid must hold one entry per eval_set entry each")
    k = len(given[0])
    groups = [None] * k if eval_group is None else list(eval_group)
    qids = [None] * k if eval_qid is None else list(eval_qid)
    return [_Queries(g, q) for g, q in zip(groups, qids)]


def _resolved(grouping, n_rows, what):
    """The query sizes of a grouping: a :class:`_Queries`, a Dataset's sizes, or None."""
    if isinstance(grouping, _Queries):
        return _group_sizes(grouping.group, grouping.qid, n_rows, what)
    return _group_sizes(grouping, None, n_rows, what)


def _encode_grades(ye, i):
    try:
        return np.asarray(ye, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"eval_set[{i}]: y must be numeric relevance grades") from None


class RGBMRanker(RGBMBase):
    """Gradient boosted trees for learning to rank (LambdaRank, NDCG).

    Rows come in query groups: consecutive rows of one query, given to
    ``fit`` as LightGBM's ``group`` (the query sizes) or XGBoost's ``qid``
    (a query id per row). Labels are integer relevance grades 0..31, higher
    is more relevant (gain 2^label - 1). ``predict`` gives raw scores; sort a
    query's rows by them, highest first.

    Takes the tree, categorical, constraint, subsampling, RGBM selection,
    SGLB and training-control parameters of :class:`RGBMRegressor` (not RGB,
    ``step``, ``init``, ``record_train_loss`` or ``validation_fraction``: a
    ranking loss has no value to minimise or record, ranking starts from 0,
    and a random row split would cut queries), with these of its own:

    loss : {"lambdarank"}, default="lambdarank"
        LambdaRank gradients of NDCG: pairs of rows with different grades,
        weighted by the NDCG change of swapping them, with LightGBM's
        normalisations (by the score gap, and per query).
    lambdarank_truncation_level : int or None, default=None
        Pairs whose better-ranked row (in the current order) is below this
        position are skipped; None = 30 (LightGBM's default).
    eval_at : int or None, default=None
        NDCG of the evaluation sets is measured over the top ``eval_at``
        rows of each query (recorded as "ndcg@k"); None = every row
        ("ndcg").

    ``eval_metric`` takes metric names ("ndcg"). Ranking takes no sample
    weights. Model files, pickling, SHAP values (``predict(X,
    pred_contrib=True)``), leaf indices and ONNX export work as for the
    regressor.

    Attributes
    ----------
    n_estimators_, best_iteration_, best_score_, evals_result_,
    training_log_, feature_importances_, n_features_in_, feature_names_in_ :
        As :class:`RGBMRegressor`'s.
    """

    _regression = True
    _multi_output_y = False
    _metric_functions_allowed = False  # they would get no query groups
    _parameter_constraints = {
        **_params.constraints(
            skip=_params.REGRESSION_ONLY + _params.CLASSIFICATION_ONLY + _params.NOT_RANKING,
            loss=_params.RANKING_LOSSES,
        ),
        "loss": [StrOptions(set(_params.RANKING_LOSSES))],
    }
    # What the shared fit reads of the parameters the ranker does not take
    # (the core's own defaults apply to the others it does not take).
    booster, validation_fraction = "gbm", None

    # The parameters are spelled out, not generated from the core's schema:
    # scikit-learn's get_params, clone and set_params read this signature.
    # test_param_schema ties each default and docstring entry to the schema.
    def __init__(
        self,
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        max_depth: int | None = 6,
        max_leaves: int | None = None,
        max_bins: int = 255,
        min_data_in_bin: int | None = None,
        min_samples_leaf: int = 20,
        min_child_weight: float = 1.0,
        reg_lambda: float = 0.0,
        reg_alpha: float = 0.0,
        max_delta_step: float = 0.0,
        path_smooth: float = 0.0,
        min_split_gain: float = 0.0,
        extra_trees: bool = False,
        use_quantized_grad: bool = False,
        num_grad_quant_bins: int = 4,
        quant_train_renew_leaf: bool = False,
        stochastic_rounding: bool = True,
        categorical_features: FeatureSelection | str | None = "from_dtype",
        max_cat_to_onehot: int | None = None,
        max_cat_threshold: int | None = None,
        cat_smooth: float | None = None,
        min_data_per_group: int | None = None,
        cat_l2: float | None = None,
        monotone_constraints: Sequence[int] | Mapping[str, int] | None = None,
        interaction_constraints: Sequence[Sequence[int | str]] | None = None,
        loss: str = "lambdarank",
        lambdarank_truncation_level: int | None = None,
        gain: str = "newton",
        leaf: str = "newton",
        subsample: float = 1.0,
        subsample_freq: int | None = None,
        subsample_for: str | None = None,
        selection: str = "full",
        selection_size: int | None = None,
        groups: Sequence[Sequence[int]] | None = None,
        selection_scope: str = "tree",
        langevin: bool = False,
        langevin_split_noise: bool | None = None,
        temperature: float = 1e4,
        shrink_rate: float | None = None,
        summation: str | None = None,
        early_stopping_rounds: int | None = None,
        early_stopping_min_delta: float | None = None,
        eval_metric: str | Sequence[str] | None = None,
        eval_at: int | None = None,
        importance_type: str = "gain",
        warm_start: bool = False,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: int = 0,
        num_leaves: int | None = None,
        min_child_samples: int | None = None,
        gamma: float | None = None,
        max_bin: int | None = None,
        objective: str | None = None,
        colsample_bytree: float | None = None,
        feature_fraction: float | None = None,
        colsample_bylevel: float | None = None,
        colsample_bynode: float | None = None,
        feature_fraction_bynode: float | None = None,
        verbosity: int | None = None,
        tree_method: str | None = None,
    ) -> None:
        store_params(self, locals())

    def _loss_params(self, native_loss):
        return {
            "init": "zero",  # a ranking score has no best constant: every row's is the same
            "lambdarank_truncation_level": None
            if self.lambdarank_truncation_level is None
            else int(self.lambdarank_truncation_level),
            "eval_at": None if self.eval_at is None else int(self.eval_at),
        }

    def _model_losses(self):
        return set(_params.RANKING_LOSSES)

    # LightGBM's LGBMRanker.fit: query groups in place of sample weights.
    def fit(  # type: ignore[override]
        self,
        X: MatrixLike | Dataset,
        y: VectorLike | None = None,
        group: VectorLike | None = None,
        qid: VectorLike | None = None,
        eval_set: Sequence[tuple[MatrixLike, VectorLike]] | None = None,
        eval_group: Sequence[VectorLike] | None = None,
        eval_qid: Sequence[VectorLike] | None = None,
        eval_names: Sequence[str] | None = None,
        callbacks: Sequence[Callback] | None = None,
        init_score: VectorLike | None = None,
        eval_init_score: Sequence[VectorLike | None] | None = None,
        init_model: PathLike | _core.Booster | RGBMBase | None = None,
    ) -> Self:
        """Fit on X (n_samples, n_features; NaN = missing) and relevance grades y.

        Parameters
        ----------
        X : array-like, data frame of shape (n_samples, n_features), or Dataset
            A :class:`rgbm_rs.Dataset` brings y, its query groups and
            init_score (then not passed here); see :meth:`RGBMRegressor.fit`.
        y : array-like of shape (n_samples,) or None
            Integer relevance grades in 0..31; None only when X is a Dataset.
        group : array-like of int or None
            The sizes of consecutive queries (LightGBM's ``group``); they add
            up to n_samples.
        qid : array-like of shape (n_samples,) or None
            A query id per row, the rows of a query together (XGBoost's
            ``qid``). Pass ``group`` or ``qid``.
        eval_set : list of (X, y) pairs or Datasets, or None
            Data evaluated after every round (``evals_result_``); early
            stopping watches the last one.
        eval_group, eval_qid : list of array-like or None
            The query groups of each eval_set entry, as ``group`` / ``qid``.
        eval_names, callbacks, init_score, eval_init_score, init_model :
            As :meth:`RGBMRegressor.fit`.

        Returns
        -------
        self
        """
        with self._fitting(), self._peer_params():
            metrics = self.eval_metric
            if any(
                callable(m) for m in ([metrics] if isinstance(metrics, str) or callable(metrics) else metrics or [])
            ):
                raise ValueError("RGBMRanker takes metric names in eval_metric (metric functions get no query groups)")
            if isinstance(X, Dataset) and qid is not None:
                raise TypeError("X is a Dataset, which holds the query groups; do not pass qid to fit as well")
            evals = EvalSet.from_fit(
                eval_set,
                eval_names,
                eval_init_score=eval_init_score,
                eval_group=_eval_queries(eval_set, eval_group, eval_qid),
                train=(X, y),
            )
            queries = None if group is None and qid is None else _Queries(group, qid)
            given = FitInput.from_fit(
                X, y, init_score=init_score, group=queries, evals=evals, callbacks=callbacks, init_model=init_model
            )
            return self._fit_given(given)

    def _labels(self, fit):
        evals = [
            dataclasses.replace(e, group=_resolved(e.group, len(np.asarray(e.y)), f"eval_set[{i}]"))
            for i, e in enumerate(fit.evals)
        ]
        return dataclasses.replace(
            fit,
            y=np.asarray(fit.y, dtype=np.float64),
            group=_resolved(fit.group, fit.X.shape[0], "fit"),
            evals=evals,
            loss="lambdarank",
            encode=_encode_grades,
        )

    @documents_rounds
    def predict(
        self,
        X: MatrixLike,
        pred_leaf: bool = False,
        pred_contrib: bool = False,
        *,
        iteration_range: tuple[int, int] | None = None,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        init_score: VectorLike | None = None,
    ) -> np.ndarray:
        """Ranking scores (raw), higher ranks first.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
        pred_leaf, pred_contrib : bool, default=False
            Leaf indices or SHAP values instead, as :meth:`RGBMRegressor.predict`.
        {rounds}
        init_score : array-like of shape (n_samples,) or None
            Raw offsets added to the scores, as ``fit``'s ``init_score``
            (XGBoost's ``base_margin``). Not with ``pred_leaf``.

        Returns
        -------
        ndarray of shape (n_samples,)

        Raises
        ------
        ValueError
            If both ``iteration_range`` and ``start_iteration`` /
            ``num_iteration`` are given, they select no rounds or rounds past
            the model, or ``init_score`` has the wrong shape or non-finite
            values.
        TypeError
            If a round is not an int.
        """
        kind = self._predict_kind(pred_leaf=pred_leaf, pred_contrib=pred_contrib)
        return self._output(X, kind, iteration_range, start_iteration, num_iteration, init_score)

    def staged_predict(self, X: MatrixLike) -> Iterator[np.ndarray]:
        """Ranking scores after each boosting round."""
        yield from self._staged_raw(X)
