"""The scikit-learn classifier backed by the native booster."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _params
from ._base import RGBMBase, store_params
from ._rounds import documents_rounds
from ._typing import (
    FeatureSelection,
    LossFunction,
    MatrixLike,
    Metric,
    VectorLike,
)
from ._validation import check_target_columns, check_weights, encode_classes

if TYPE_CHECKING:
    pass


def _binary_entropy(p):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


def _entropy(p, axis=-1):
    p = np.clip(p, 1e-15, 1.0)
    return -(p * np.log(p)).sum(axis=axis)


class RGBMClassifier(ClassifierMixin, RGBMBase):
    """Gradient boosted trees for binary and multiclass classification.

    Takes the parameters of :class:`RGBMRegressor`, with classification
    losses instead of regression ones:

    loss : {"logistic", "exponential", "sla01"} or callable, default="logistic"
        Binomial deviance; AdaBoost's exponential loss (probabilities are
        then sigmoid(2f)); or SGLB's smoothed 0-1 loss 1 - sigmoid(y f / sla_scale)
        (needs ``gain="gradient", leaf="gradient"``; probabilities sigmoid(f / sla_scale);
        starts from 0 since the 0-1 loss has no finite optimal constant).
        With more than two classes, "logistic" means the softmax
        (multinomial) loss: one tree per class per round; the other losses
        are binary only. A function is a custom loss as for the regressor,
        on the class indices 0..n_classes-1 (see ``classes_``).
    sla_scale : float, default=0.1
        The smoothing scale of ``loss="sla01"``.
    logistic_reg : float, default=0.0
        d in the regularized logistic loss log(1+e^{-yf}) + (d/2)f² (binary only).
    clamp : float in (0, 0.5) or None, default=None
        Probability clamping ρ of Sun, Zhang & Zhou (2014): bounds Newton
        steps on badly misclassified rows (binary logistic loss only).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, keyed by the original labels (missing
        classes weigh 1), or "balanced": n_samples / (n_classes * count of
        the class). Multiplied into ``sample_weight`` as scikit-learn's
        ``compute_sample_weight`` defines it, before ``validation_fraction``
        holds rows out (as scikit-learn's HistGradientBoostingClassifier
        does); ``eval_set`` weights are not changed.
    scale_pos_weight : float > 0 or None, default=None
        LightGBM's and XGBoost's weight of the positive class (binary y:
        ``classes_[1]``), multiplied into ``sample_weight`` as
        ``class_weight={classes_[1]: scale_pos_weight}`` is; not with
        ``class_weight``.

    Labels may be of any type; the originals are in ``classes_``.
    ``predict_proba`` has one column per class, in ``classes_`` order.
    Multilabel y (2-D, one 0/1 column per label) fits one logistic output
    per label, each the binary fit of its column alone; as scikit-learn's
    MLPClassifier, ``classes_`` is then ``arange(n_labels)``, ``predict``
    returns the (n_samples, n_labels) 0/1 matrix and ``predict_proba`` and
    ``decision_function`` each label's P(1) and raw score, (n_samples,
    n_labels).
    """

    _regression = False
    _regression_y = False
    _parameter_constraints = _params.constraints(
        skip=_params.REGRESSION_ONLY + _params.RANKING_ONLY, loss=_params.CLASSIFICATION_LOSSES
    )

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
        loss: str | LossFunction = "logistic",
        logistic_reg: float = 0.0,
        clamp: float | None = None,
        sla_scale: float = 0.1,
        gain: str = "newton",
        leaf: str = "newton",
        subsample: float = 1.0,
        subsample_freq: int | None = None,
        subsample_for: str | None = None,
        step: str = "shrinkage",
        selection: str = "full",
        selection_size: int | None = None,
        groups: Sequence[Sequence[int]] | None = None,
        selection_scope: str = "tree",
        record_train_loss: bool = False,
        booster: str = "gbm",
        rgb_candidates: int = 4,
        rgb_beta: float = 0.1,
        rgb_nodes: Sequence[int] | None = None,
        rgb_lambdas: Sequence[float] | None = None,
        rgb_step: str | None = None,
        rgb_candidate: str | None = None,
        rgb_penalty: str | None = None,
        langevin: bool = False,
        langevin_split_noise: bool | None = None,
        temperature: float = 1e4,
        shrink_rate: float | None = None,
        summation: str | None = None,
        init: str = "optimal",
        early_stopping_rounds: int | None = None,
        early_stopping_min_delta: float | None = None,
        validation_fraction: float | None = None,
        eval_metric: Metric | Sequence[Metric] | None = None,
        importance_type: str = "gain",
        warm_start: bool = False,
        class_weight: Mapping[Any, float] | str | None = None,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: int = 0,
        num_leaves: int | None = None,
        min_child_samples: int | None = None,
        gamma: float | None = None,
        max_bin: int | None = None,
        objective: str | LossFunction | None = None,
        colsample_bytree: float | None = None,
        feature_fraction: float | None = None,
        colsample_bylevel: float | None = None,
        colsample_bynode: float | None = None,
        feature_fraction_bynode: float | None = None,
        verbosity: int | None = None,
        tree_method: str | None = None,
        scale_pos_weight: float | None = None,
    ) -> None:
        store_params(self, locals())

    def _with_class_weight(self, sample_weight, X, y):
        """sample_weight times the rows' class weights (the weights the core gets)."""
        self._check_class_weight()
        w = check_weights(sample_weight, X)
        by_class = compute_sample_weight(self.class_weight, y)
        if not np.any(by_class > 0):
            raise ValueError(
                f"class_weight={self.class_weight!r} gives every row weight 0 (the classes of y are "
                f"{self.classes_.tolist()}): at least one class present in y needs a positive weight"
            )
        if w is None:
            return by_class
        with np.errstate(over="ignore"):
            product = w * by_class
        if not np.all(np.isfinite(product)):
            i = int(np.flatnonzero(~np.isfinite(product))[0])
            raise ValueError(
                f"sample_weight times class_weight overflows: row {i} weighs {float(w[i])!r} * {float(by_class[i])!r} "
                "(beyond the float range); only relative weights matter, so scale class_weight or "
                "sample_weight down"
            )
        if not np.any(product > 0):
            raise ValueError(
                "sample_weight times class_weight is zero on every row: the rows with a positive "
                "sample_weight all belong to classes of class_weight 0"
            )
        return product

    def _classes(self, y):
        """The classes of labels y (checked by check_X_y) and each label's
        code, as np.unique gives them; labels that are no classes refused."""
        try:
            if not (y.ndim == 1 and y.dtype.kind in "iub"):
                # One-dimensional integer or boolean labels are always binary or
                # multiclass targets; anything else gets scikit-learn's check.
                check_classification_targets(y)
            return encode_classes(y)
        except TypeError:
            kinds = sorted({type(v).__name__ for v in np.asarray(y, dtype=object).ravel()})
            if len(kinds) < 2:
                raise  # scikit-learn's own reason (bytes labels, ...)
            raise TypeError(
                f"the labels in y cannot be ordered: they mix types {kinds} (missing labels such as None "
                "are not allowed); use labels of one type"
            ) from None

    def _with_positive_weight(self, sample_weight, X, encoded):
        """sample_weight (ones if None) times scale_pos_weight on the positive class's rows."""
        if self.class_weight is not None:
            raise ValueError(
                f"scale_pos_weight={self.scale_pos_weight!r} and class_weight={self.class_weight!r} both weight "
                "the classes; pass one of them"
            )
        if len(self.classes_) != 2:
            raise ValueError(
                f"scale_pos_weight weights the positive class of binary y, but y has {len(self.classes_)} classes; "
                "use class_weight"
            )
        w = np.ones(len(encoded)) if sample_weight is None else check_weights(sample_weight, X)
        return w * np.where(encoded == 1, float(self.scale_pos_weight), 1.0)

    def _check_class_weight(self):
        """A dict class_weight: finite weights >= 0 for labels of y (classes_ set)."""
        if isinstance(self.class_weight, dict):
            bad = {
                k: v
                for k, v in self.class_weight.items()
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, Real) or not (np.isfinite(v) and v >= 0)
            }
            if bad:
                raise ValueError(f"class_weight values must be finite numbers >= 0, got {bad}")
            unknown = [k for k in self.class_weight if k not in set(self.classes_.tolist())]
            if unknown:
                raise ValueError(
                    f"class_weight names labels not in y: {unknown}; the classes are {self.classes_.tolist()}"
                )

    def _native_loss(self, n_classes):
        if callable(self.loss):
            return "custom"
        if n_classes <= 2:
            return self.loss
        if self.loss != "logistic":
            raise ValueError(
                f"loss={self.loss!r} is binary only, but y has {n_classes} classes; "
                "use loss='logistic' (softmax for more than two classes)"
            )
        if self.clamp is not None:
            raise ValueError(f"clamp applies to the binary logistic loss only; y has {n_classes} classes")
        if self.logistic_reg != 0:
            raise ValueError(f"logistic_reg applies to the binary logistic loss only; y has {n_classes} classes")
        return "softmax"

    def _model_losses(self):
        return super()._model_losses() | {"softmax"}

    def _loss_params(self, native_loss):
        if self.clamp is not None and self.loss != "logistic":
            raise ValueError(f"clamp applies to loss='logistic' only, not loss={self.loss!r}")
        if native_loss in ("softmax", "custom"):
            return {"n_classes": len(self.classes_)}
        return {
            "logistic_reg": float(self.logistic_reg),
            "clamp": None if self.clamp is None else float(self.clamp),
            "sla_scale": float(self.sla_scale),
        }

    def _labels(self, fit):
        y = check_target_columns(fit.y)
        if y.ndim == 2:
            return self._multilabel_labels(fit, y)
        classes, encoded = self._classes(y)
        if len(classes) < 2:
            raise ValueError(
                f"RGBMClassifier needs samples of at least 2 classes, but y contains only one class: {classes[0]!r}"
            )
        native_loss = self._native_loss(len(classes))
        self.classes_ = classes
        w = fit.sample_weight
        if self.class_weight is not None:
            w = self._with_class_weight(w, fit.X, y)
        if self.scale_pos_weight is not None:
            w = self._with_positive_weight(w, fit.X, encoded)

        def encode(ye, i):
            ye = np.asarray(ye)
            try:
                known = np.isin(ye, classes)
            except TypeError:
                known = np.array([v in set(classes.tolist()) for v in ye.tolist()], dtype=bool)
            if not known.all():
                unseen = sorted({repr(v) for v in ye[~known].tolist()})
                raise ValueError(
                    f"eval_set[{i}] has labels not seen in training: {', '.join(unseen[:10])}; "
                    f"the classes are {classes.tolist()}"
                )
            return np.searchsorted(classes, ye).astype(np.float64)

        return dataclasses.replace(fit, y=encoded.astype(np.float64), sample_weight=w, loss=native_loss, encode=encode)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # 2-D 0/1 y: one logistic output per label (see fit); 2-D y of
        # other classes (multiclass-multioutput) is refused, as by
        # MLPClassifier, so the estimator is not multi_output.
        tags.classifier_tags.multi_label = True
        return tags

    def _multilabel_labels(self, fit, y):
        """A multilabel fit's labels: one logistic output per column of 0/1 labels."""
        encoded = _encode_multilabel(y, None)
        if callable(self.loss) or self.loss != "logistic":
            raise ValueError(
                f"2-D y (multilabel, one 0/1 column per label) needs loss='logistic', not loss={self.loss!r}"
            )
        if self.class_weight is not None:
            raise ValueError("class_weight applies to 1-D y; with multilabel y weight the rows by sample_weight")
        # As MLPClassifier: classes_ are the label indices, predict_proba (n, n_labels).
        self.classes_ = np.arange(y.shape[1])
        return dataclasses.replace(fit, y=encoded, loss="logistic", encode=_encode_multilabel)

    def _multilabel(self) -> bool:
        return json.loads(self._booster.params_json()).get("n_targets") is not None

    @property
    def n_classes_(self) -> int:
        """Number of classes seen in fit."""
        check_is_fitted(self, "classes_")
        return len(self.classes_)

    def _proba_from_raw(self, raw):
        if self._multilabel():
            # Each label's own probability (its logistic output's sigmoid).
            return self._booster.class_probabilities(raw)
        # The fitted loss's link (sigmoid of f, 2f or f/sla_scale; softmax), from the model itself.
        return self._booster.class_probabilities(raw)

    def _labels_from_raw(self, raw):
        if self._multilabel():
            return (raw > 0).astype(np.int64)
        if raw.ndim == 2:
            return self.classes_[np.argmax(raw, axis=1)]
        return self.classes_[(raw > 0).astype(np.intp)]

    @documents_rounds
    def decision_function(
        self,
        X: MatrixLike,
        *,
        iteration_range: tuple[int, int] | None = None,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        init_score: VectorLike | None = None,
    ) -> np.ndarray:
        """Raw scores (log-odds for the binary logistic loss).

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
            NaN means missing; a data frame must have the columns seen in fit.
        {rounds}
        init_score : array-like of shape (n_samples,) for two classes, (n_samples, n_classes) for more, or None
            Raw offsets added to the scores before the link, as ``fit``'s
            ``init_score`` (XGBoost's ``base_margin``; LightGBM's predict
            has none): a model fitted with offsets predicts what it adds.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, (n_samples, n_classes) for more

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
        return self._output(X, None, iteration_range, start_iteration, num_iteration, init_score)

    @documents_rounds
    def predict_proba(
        self,
        X: MatrixLike,
        *,
        iteration_range: tuple[int, int] | None = None,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        init_score: VectorLike | None = None,
    ) -> np.ndarray:
        """Class probabilities.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
            NaN means missing; a data frame must have the columns seen in fit.
        {rounds}
        init_score : array-like of shape (n_samples,) for two classes, (n_samples, n_classes) for more, or None
            Raw offsets added to the scores before the link, as ``fit``'s
            ``init_score`` (XGBoost's ``base_margin``; LightGBM's predict
            has none): a model fitted with offsets predicts what it adds.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to 1. Multilabel: each
            label's P(1), (n_samples, n_labels).

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
        return self._proba_from_raw(self._output(X, None, iteration_range, start_iteration, num_iteration, init_score))

    @documents_rounds
    def predict(
        self,
        X: MatrixLike,
        pred_leaf: bool = False,
        pred_contrib: bool = False,
        *,
        raw_score: bool = False,
        iteration_range: tuple[int, int] | None = None,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        init_score: VectorLike | None = None,
    ) -> np.ndarray:
        """Predicted labels.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
            NaN means missing; a data frame must have the columns seen in fit.
        pred_leaf : bool, default=False
            Return the leaf index of every row in every tree instead
            (LightGBM's name; the same as :meth:`apply`).
        pred_contrib : bool, default=False
            Return SHAP values of the raw score (:meth:`decision_function`)
            instead (exact TreeSHAP, LightGBM's layout): shape (n_samples,
            n_features + 1) for two classes, the contribution of each
            feature and then the expected raw score over the training rows;
            (n_samples, n_classes * (n_features + 1)) for more, one such
            block per class. Each block sums to its raw score. Over a range
            of rounds: the SHAP values of those rounds' trees, the last
            column holding the base score plus their expected value (and
            ``init_score``), so rows still sum to the range's raw score.
        raw_score : bool, default=False
            Return the raw scores instead (LightGBM's name): the margin
            before the link, as :meth:`decision_function` for classifiers
            (the log mean for the log-link losses).
        {rounds}
        init_score : array-like of shape (n_samples,) for two classes, (n_samples, n_classes) for more, or None
            Raw offsets added to the scores before the link, as ``fit``'s
            ``init_score`` (XGBoost's ``base_margin``; LightGBM's predict
            has none): a model fitted with offsets predicts what it adds.
            Not with ``pred_leaf``.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_labels)
            Labels from ``classes_`` (multilabel: the 0/1 matrix, P(1) > 1/2); with ``pred_leaf`` the int32 array of
            :meth:`apply`: (n_samples, n_rounds) for two classes,
            (n_samples, n_rounds, n_classes) for more; with ``pred_contrib``
            the contributions.

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
        kind = self._predict_kind(raw_score=raw_score, pred_leaf=pred_leaf, pred_contrib=pred_contrib)
        out = self._output(
            X, None if kind == "raw_score" else kind, iteration_range, start_iteration, num_iteration, init_score
        )
        return out if kind is not None else self._labels_from_raw(out)

    def staged_decision_function(self, X: MatrixLike) -> Iterator[np.ndarray]:
        """Raw scores after each boosting round.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
            NaN means missing; a data frame must have the columns seen in fit.

        Yields
        ------
        ndarray
            As :meth:`decision_function`, for the model after rounds 1, 2, ...
        """
        yield from self._staged_raw(X)

    def staged_predict_proba(self, X: MatrixLike) -> Iterator[np.ndarray]:
        """Class probabilities after each boosting round.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
            NaN means missing; a data frame must have the columns seen in fit.

        Yields
        ------
        ndarray of shape (n_samples, n_classes)
        """
        for raw in self._staged_raw(X):
            yield self._proba_from_raw(raw)

    def staged_predict(self, X: MatrixLike) -> Iterator[np.ndarray]:
        """Labels after each boosting round.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
            NaN means missing; a data frame must have the columns seen in fit.

        Yields
        ------
        ndarray of shape (n_samples,)
        """
        for raw in self._staged_raw(X):
            yield self._labels_from_raw(raw)

    def predict_uncertainty(self, X: MatrixLike, n_members: int = 10) -> dict[str, np.ndarray]:
        """Virtual-ensemble uncertainty of an SGLB model (entropy-based).

        Returns a dict with ``proba`` (mean member probability: of
        ``classes_[1]`` for two classes, shape (n_samples, n_classes) for
        more), ``total`` (entropy of the mean probability), ``data`` (mean
        entropy of the members) and ``knowledge`` (their difference, the
        mutual information between prediction and model), all in nats.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
        n_members : int, default=10
            Members of the virtual ensemble (>= 2; the model needs at least
            2 * n_members rounds).

        Returns
        -------
        dict of ndarray
        """
        check_is_fitted(self, "_booster")
        if self._multilabel():
            raise ValueError("predict_uncertainty needs a model of one label (its entropies are per class)")
        members = self._virtual_members(X, n_members)
        if members.ndim == 3:
            probs = self._proba_from_raw(members)
            mean = probs.mean(axis=0)
            total = _entropy(mean)
            data = _entropy(probs).mean(axis=0)
        else:
            probs = self._proba_from_raw(members)[..., 1]
            mean = probs.mean(axis=0)
            total = _binary_entropy(mean)
            data = _binary_entropy(probs).mean(axis=0)
        return {"proba": mean, "total": total, "data": data, "knowledge": np.maximum(total - data, 0.0)}


def _encode_multilabel(y, i):
    """Multilabel targets (0/1 or booleans, one column per label) as float64."""
    where = "y" if i is None else f"eval_set[{i}]: y"
    y = np.asarray(y)
    if y.dtype.kind not in "fiub":
        raise ValueError(f"{where}: 2-D labels (multilabel) must be 0/1 numbers or booleans, got dtype {y.dtype}")
    y = y.astype(np.float64)
    if not np.all((y == 0) | (y == 1)):
        raise ValueError(f"{where}: 2-D labels (multilabel) must be 0 or 1, one column per label")
    return y
