"""scikit-learn estimators backed by the native booster."""
from __future__ import annotations

import json
import os
import tempfile
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _core
from ._validation import check_weights, check_X, check_X_y, resolve_n_jobs, resolve_seed

_MODEL_FILE_FORMAT = "rgbm_rs"

# Constraints shared by both estimators (sklearn's validation gives messages
# like "The 'learning_rate' parameter of RGBMClassifier must be ...").
_COMMON_CONSTRAINTS = {
    "n_estimators": [Interval(Integral, 1, None, closed="left")],
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "max_depth": [Interval(Integral, 1, 64, closed="both"), None],
    "max_leaves": [Interval(Integral, 2, 1 << 20, closed="both"), None],
    "max_bins": [Interval(Integral, 2, 65535, closed="both")],
    "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
    "min_child_weight": [Interval(Real, 0, None, closed="left")],
    "reg_lambda": [Interval(Real, 0, None, closed="left")],
    "min_split_gain": [Interval(Real, 0, None, closed="left")],
    "gain": [StrOptions({"newton", "gradient"})],
    "leaf": [StrOptions({"newton", "gradient"})],
    "subsample": [Interval(Real, 0, 1, closed="right")],
    "step": [StrOptions({"shrinkage", "constant", "line_search"})],
    "selection": [StrOptions({"full", "random", "group", "groups"})],
    "selection_size": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="right"), None],
    "groups": [list, tuple, None],
    "selection_scope": [StrOptions({"tree", "node"})],
    "record_train_loss": ["boolean"],
    "booster": [StrOptions({"gbm", "rgb"})],
    "rgb_candidates": [Interval(Integral, 1, None, closed="left")],
    "rgb_beta": [Interval(Real, 0, None, closed="left")],
    "rgb_nodes": [list, tuple, None],
    "rgb_lambdas": [list, tuple, None],
    "langevin": ["boolean"],
    "temperature": [Interval(Real, 0, None, closed="neither")],
    "shrink_rate": [Interval(Real, 0, None, closed="left"), None],
    "init": [StrOptions({"optimal", "zero"})],
    "random_state": ["random_state"],
    "n_jobs": [Integral, None],
}


def _store_params(estimator, values):
    """Store constructor arguments unchanged, as scikit-learn requires."""
    for name, value in values.items():
        if name != "self":
            setattr(estimator, name, value)


def _selection_size(size):
    """An int is a count t, a float a fraction of the candidates."""
    if size is None:
        return None
    if isinstance(size, Integral):
        return int(size)
    return float(size)


def _groups(groups):
    if groups is None:
        return None
    try:
        return [[int(j) for j in g] for g in groups]
    except (TypeError, ValueError):
        raise ValueError("groups must be a list of lists of feature indices") from None


class _RGBMBase(BaseEstimator):
    """Fitting, prediction and persistence shared by the estimators."""

    _regression = True

    def _native_params(self) -> dict:
        if self.max_depth is None and self.max_leaves is None and self.booster != "rgb":
            raise ValueError("max_depth=None needs max_leaves: set one of them to bound the trees")
        if self.max_depth is not None and self.max_leaves is not None and self.max_leaves > 2**self.max_depth:
            raise ValueError(
                f"max_leaves={self.max_leaves} cannot be reached with max_depth={self.max_depth} "
                f"(at most {2**self.max_depth} leaves)"
            )
        p = {
            "n_estimators": int(self.n_estimators),
            "learning_rate": float(self.learning_rate),
            "max_depth": None if self.max_depth is None else int(self.max_depth),
            "max_leaves": None if self.max_leaves is None else int(self.max_leaves),
            "max_bins": int(self.max_bins),
            "min_samples_leaf": int(self.min_samples_leaf),
            "min_child_weight": float(self.min_child_weight),
            "reg_lambda": float(self.reg_lambda),
            "min_split_gain": float(self.min_split_gain),
            "loss": self.loss,
            "gain": self.gain,
            "leaf": self.leaf,
            "subsample": float(self.subsample),
            "step": self.step,
            "selection": self.selection,
            "selection_size": _selection_size(self.selection_size),
            "groups": _groups(self.groups),
            "selection_scope": self.selection_scope,
            "record_train_loss": bool(self.record_train_loss),
            "booster": self.booster,
            "rgb_candidates": int(self.rgb_candidates),
            "rgb_beta": float(self.rgb_beta),
            "rgb_nodes": None if self.rgb_nodes is None else [int(v) for v in self.rgb_nodes],
            "rgb_lambdas": None if self.rgb_lambdas is None else [float(v) for v in self.rgb_lambdas],
            "langevin": bool(self.langevin),
            "temperature": float(self.temperature),
            "shrink_rate": None if self.shrink_rate is None else float(self.shrink_rate),
            "init": self.init,
            "random_state": resolve_seed(self.random_state),
            "n_jobs": resolve_n_jobs(self.n_jobs),
        }
        p.update(self._loss_params())
        return p

    def _fit_native(self, X, y_float, sample_weight):
        w = check_weights(sample_weight, X)
        params = json.dumps(self._native_params())
        self._booster = _core.Booster.train(params, X, np.ascontiguousarray(y_float, dtype=np.float64), w)
        self.n_estimators_ = self._booster.n_trees
        rounds = json.loads(self._booster.training_log_json())
        self.training_log_ = {
            key: [r[key] for r in rounds]
            for key in ("root_feature", "root_threshold", "features_searched", "step", "seconds", "train_loss")
        }
        if self.booster == "rgb":
            self.training_log_["rgb_nodes"] = [r["rgb_nodes"] for r in rounds]
            self.training_log_["rgb_lambda"] = [r["rgb_lambda"] for r in rounds]
            counts = {}
            for r in rounds:
                key = (r["rgb_nodes"], r["rgb_lambda"])
                counts[key] = counts.get(key, 0) + 1
            self.rgb_family_counts_ = dict(sorted(counts.items()))
        return self

    def _raw(self, X):
        check_is_fitted(self, "_booster")
        return self._booster.predict_raw(check_X(self, X))

    def _shrink_factor(self) -> float:
        """q = 1 - shrink_rate * learning_rate: each round scales earlier trees by q."""
        gamma = self.shrink_rate if self.shrink_rate is not None else (1e-3 if self.langevin else 0.0)
        return 1.0 - gamma * self.learning_rate

    def _staged_raw(self, X):
        """Raw scores of the model as it was after each round.

        With model shrinkage the stored trees carry the final scaling; the
        model after round t is base + q^-(T-1-t) * (sum of the first t+1 stored trees).
        """
        check_is_fitted(self, "_booster")
        X = check_X(self, X)
        base = self._booster.base_score
        n_trees = self._booster.n_trees
        q = self._shrink_factor()
        acc = np.zeros(X.shape[0])
        for t in range(n_trees):
            acc = acc + self._booster.predict_trees(X, t, t + 1)
            yield base + acc * q ** -(n_trees - 1 - t) if q != 1.0 else base + acc

    def _virtual_members(self, X, n_members):
        check_is_fitted(self, "_booster")
        if not isinstance(n_members, int) or isinstance(n_members, bool):
            raise TypeError(f"n_members must be an int, got {type(n_members).__name__}")
        return self._booster.virtual_ensemble(check_X(self, X), n_members)

    @property
    def feature_importances_(self):
        """Total split gain per feature, normalised to sum to 1."""
        check_is_fitted(self, "_booster")
        return self._booster.feature_importances("gain")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # Persistence: pickle and save_model share one JSON document.
    def _to_document(self) -> dict:
        check_is_fitted(self, "_booster")
        params = self.get_params()
        if not (params["random_state"] is None or isinstance(params["random_state"], Integral)):
            params["random_state"] = None  # a RandomState object has no JSON form
        doc = {
            "format": _MODEL_FILE_FORMAT,
            "estimator": type(self).__name__,
            "params": params,
            "n_features_in": int(self.n_features_in_),
            "feature_names_in": None if not hasattr(self, "feature_names_in_") else [str(c) for c in self.feature_names_in_],
            "model": json.loads(self._booster.to_json()),
        }
        if hasattr(self, "classes_"):
            doc["classes"] = self.classes_.tolist()
        return doc

    def save_model(self, path) -> None:
        """Write the fitted model as JSON; the file is replaced atomically."""
        text = json.dumps(self._to_document())
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".rgbm-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def __getstate__(self):
        state = super().__getstate__()
        if "_booster" in state:
            state = dict(state)
            state["_booster"] = state["_booster"].to_json()
        return state

    def __setstate__(self, state):
        if isinstance(state.get("_booster"), str):
            state = dict(state)
            state["_booster"] = _core.Booster.from_json(state["_booster"])
        super().__setstate__(state)


class RGBMRegressor(RegressorMixin, _RGBMBase):
    """Gradient boosted trees for regression.

    Parameters
    ----------
    n_estimators : int, default=100
        Boosting rounds (trees).
    learning_rate : float, default=0.1
        Shrinkage ν applied to every tree.
    max_depth : int or None, default=6
        Depth limit. None (only with ``max_leaves``) means unlimited.
    max_leaves : int or None, default=None
        If set, trees grow best-first up to this many leaves.
    max_bins : int, default=255
        Value bins per feature (NaN gets one more).
    min_samples_leaf : int, default=20
        Minimum rows in a leaf.
    min_child_weight : float, default=1e-3
        Minimum hessian sum in a leaf.
    reg_lambda : float, default=0.0
        L2 penalty λ on leaf values.
    min_split_gain : float, default=0.0
        A split must gain more than this.
    loss : {"squared", "huber"}, default="squared"
    huber_delta : float, default=1.0
        Threshold δ of the Huber loss.
    gain, leaf : {"newton", "gradient"}, default="newton"
        Second-order (Newton) or first-order (least-squares fit of the
        negative gradient) split gain and leaf values.
    subsample : float, default=1.0
        Fraction of rows drawn (without replacement, per row) for each tree.
    step : {"shrinkage", "constant", "line_search"}, default="shrinkage"
        How each tree u is added: ``learning_rate * u``; RGBM's principled
        ``u / sigma`` (needs ``leaf="gradient"`` and a smooth loss; ignores
        ``learning_rate``); or ``learning_rate * rho * u`` with rho the exact
        1-D minimiser of the training loss along u.
    selection : {"full", "random", "group", "groups"}, default="full"
        RGBM's random-then-greedy rule: all splits (Type 0); t random
        candidate splits (Type 1); one random feature group (Type 2); t random
        groups (Type 3). The best split is searched only among the drawn ones,
        and histograms are built only for the features they touch.
    selection_size : int, float or None, default=None
        t, as a count or as a fraction of the candidate splits (Type 1) or
        groups (Type 3). Required by "random" and "groups".
    groups : list of lists of int or None, default=None
        A partition of the feature indices into groups; None = one group per feature.
    selection_scope : {"tree", "node"}, default="tree"
        Draw the candidate set once per tree (as in the paper) or for every node.
    record_train_loss : bool, default=False
        Record the mean training loss after every round in ``training_log_``.
    booster : {"gbm", "rgb"}, default="gbm"
        "rgb" is regularized boosting over tree families with structural risk
        minimisation (Cortes, Mohri & Storcheus 2019): each round draws
        ``rgb_candidates`` families (n internal nodes, leaf L2 radius lambda)
        with probability proportional to lambda, grows the best tree of each,
        projects its leaves onto the lambda ball, takes the coordinate step
        alpha = -<g, h> / (sigma |h|^2) (``learning_rate`` is not used) and
        keeps the candidate with the lowest training loss + ``rgb_beta`` *
        complexity. ``max_depth`` still caps the trees (use None to let the
        families decide). After fit, ``rgb_family_counts_`` counts the chosen
        (nodes, lambda) families.
    rgb_candidates : int, default=4
    rgb_beta : float, default=0.1
    rgb_nodes, rgb_lambdas : list or None
        The family grid; None = the paper's n in {2, ..., 256} and
        lambda in {0.001, ..., 4}.
    langevin : bool, default=False
        SGLB (Ustimenko & Prokhorenkova 2021): Gaussian noise of per-row scale
        sqrt(2 / (learning_rate * temperature)) on the gradients that choose
        each tree's structure, and independent noise on its leaf values.
    temperature : float, default=1e4
        SGLB's inverse diffusion temperature beta (CatBoost's normalisation:
        the paper's beta divided by the number of rows).
    shrink_rate : float or None, default=None
        Model shrinkage gamma: F <- b + (1 - gamma * learning_rate)(F - b) + tree
        (the base score b is not shrunk). None means 1e-3 with ``langevin``, else 0.
    init : {"optimal", "zero"}, default="optimal"
        Start from the loss-minimising constant or from 0.
    random_state : int, RandomState or None, default=None
    n_jobs : int or None, default=None
        Threads; None or -1 uses every core.
    """

    _regression = True
    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "loss": [StrOptions({"squared", "huber"})],
        "huber_delta": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        n_estimators=100,
        learning_rate=0.1,
        max_depth=6,
        max_leaves=None,
        max_bins=255,
        min_samples_leaf=20,
        min_child_weight=1e-3,
        reg_lambda=0.0,
        min_split_gain=0.0,
        loss="squared",
        huber_delta=1.0,
        gain="newton",
        leaf="newton",
        subsample=1.0,
        step="shrinkage",
        selection="full",
        selection_size=None,
        groups=None,
        selection_scope="tree",
        record_train_loss=False,
        booster="gbm",
        rgb_candidates=4,
        rgb_beta=0.1,
        rgb_nodes=None,
        rgb_lambdas=None,
        langevin=False,
        temperature=1e4,
        shrink_rate=None,
        init="optimal",
        random_state=None,
        n_jobs=None,
    ):
        _store_params(self, locals())

    def _loss_params(self):
        return {"huber_delta": float(self.huber_delta)}

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features; NaN = missing) and targets y."""
        self._validate_params()
        X, y = check_X_y(self, X, y, regression=True)
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity")
        return self._fit_native(X, y, sample_weight)

    def predict(self, X):
        """Predicted values."""
        return self._raw(X)

    def staged_predict(self, X):
        """Predictions after each boosting round (a generator)."""
        yield from self._staged_raw(X)

    def predict_uncertainty(self, X, n_members=10):
        """Virtual-ensemble uncertainty of an SGLB model.

        The members are the model truncated at ``n_members`` rounds spread over
        the second half of the chain (CatBoost's virtual ensembles), each
        rescaled to undo the shrinkage. Returns a dict with ``mean`` (mean
        member prediction) and ``knowledge`` (variance of the member
        predictions). The squared and Huber losses predict no variance, so
        there is no per-row data uncertainty to report.
        """
        members = self._virtual_members(X, n_members)
        return {"mean": members.mean(axis=0), "knowledge": members.var(axis=0)}


def _binary_entropy(p):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


class RGBMClassifier(ClassifierMixin, _RGBMBase):
    """Gradient boosted trees for binary classification.

    Takes the parameters of :class:`RGBMRegressor`, with classification
    losses instead of regression ones:

    loss : {"logistic", "exponential", "sla01"}, default="logistic"
        Binomial deviance; AdaBoost's exponential loss (probabilities are
        then sigmoid(2f)); or SGLB's smoothed 0-1 loss 1 - sigmoid(y f / sla_scale)
        (needs ``gain="gradient", leaf="gradient"``; probabilities sigmoid(f / sla_scale);
        starts from 0 since the 0-1 loss has no finite optimal constant).
    sla_scale : float, default=0.1
        The smoothing scale of ``loss="sla01"``.
    logistic_reg : float, default=0.0
        d in the regularized logistic loss log(1+e^{-yf}) + (d/2)f².
    clamp : float in (0, 0.5) or None, default=None
        Probability clamping ρ of Sun, Zhang & Zhou (2014): bounds Newton
        steps on badly misclassified rows (logistic loss only).

    Labels may be of any type; the originals are in ``classes_``.
    """

    _regression = False
    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "loss": [StrOptions({"logistic", "exponential", "sla01"})],
        "logistic_reg": [Interval(Real, 0, None, closed="left")],
        "sla_scale": [Interval(Real, 0, None, closed="neither")],
        "clamp": [Interval(Real, 0, 0.5, closed="neither"), None],
    }

    def __init__(
        self,
        n_estimators=100,
        learning_rate=0.1,
        max_depth=6,
        max_leaves=None,
        max_bins=255,
        min_samples_leaf=20,
        min_child_weight=1e-3,
        reg_lambda=0.0,
        min_split_gain=0.0,
        loss="logistic",
        logistic_reg=0.0,
        clamp=None,
        sla_scale=0.1,
        gain="newton",
        leaf="newton",
        subsample=1.0,
        step="shrinkage",
        selection="full",
        selection_size=None,
        groups=None,
        selection_scope="tree",
        record_train_loss=False,
        booster="gbm",
        rgb_candidates=4,
        rgb_beta=0.1,
        rgb_nodes=None,
        rgb_lambdas=None,
        langevin=False,
        temperature=1e4,
        shrink_rate=None,
        init="optimal",
        random_state=None,
        n_jobs=None,
    ):
        _store_params(self, locals())

    def _loss_params(self):
        if self.clamp is not None and self.loss != "logistic":
            raise ValueError(f"clamp applies to loss='logistic' only, not loss={self.loss!r}")
        return {
            "logistic_reg": float(self.logistic_reg),
            "clamp": None if self.clamp is None else float(self.clamp),
            "sla_scale": float(self.sla_scale),
        }

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features; NaN = missing) and labels y."""
        self._validate_params()
        X, y = check_X_y(self, X, y, regression=False)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"RGBMClassifier needs samples of at least 2 classes, but y contains only one class: {self.classes_[0]!r}"
            )
        if len(self.classes_) > 2:
            raise ValueError(
                f"RGBMClassifier supports binary classification only so far; y has {len(self.classes_)} classes"
            )
        return self._fit_native(X, encoded.astype(np.float64), sample_weight)

    def _proba_from_raw(self, raw):
        # The link of each loss: log-odds f (logistic), f/2 (exponential), f/sla_scale (sla01).
        scale = {"exponential": 2.0, "sla01": 1.0 / self.sla_scale}.get(self.loss, 1.0)
        p = 1.0 / (1.0 + np.exp(-scale * raw))
        return np.column_stack([1.0 - p, p])

    def decision_function(self, X):
        """Raw scores (log-odds for the logistic loss)."""
        return self._raw(X)

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, 2), columns in ``classes_`` order."""
        return self._proba_from_raw(self._raw(X))

    def predict(self, X):
        """Predicted labels."""
        raw = self._raw(X)
        return self.classes_[(raw > 0).astype(np.intp)]

    def staged_decision_function(self, X):
        """Raw scores after each boosting round (a generator)."""
        yield from self._staged_raw(X)

    def staged_predict_proba(self, X):
        """Class probabilities after each boosting round (a generator)."""
        for raw in self._staged_raw(X):
            yield self._proba_from_raw(raw)

    def staged_predict(self, X):
        """Labels after each boosting round (a generator)."""
        for raw in self._staged_raw(X):
            yield self.classes_[(raw > 0).astype(np.intp)]

    def predict_uncertainty(self, X, n_members=10):
        """Virtual-ensemble uncertainty of an SGLB model (entropy-based).

        Returns a dict with ``proba`` (mean member probability of
        ``classes_[1]``), ``total`` (entropy of the mean probability), ``data``
        (mean entropy of the members) and ``knowledge`` (their difference, the
        mutual information between prediction and model), all in nats.
        """
        members = self._virtual_members(X, n_members)
        probs = self._proba_from_raw(members.ravel())[:, 1].reshape(members.shape)
        mean = probs.mean(axis=0)
        total = _binary_entropy(mean)
        data = _binary_entropy(probs).mean(axis=0)
        return {"proba": mean, "total": total, "data": data, "knowledge": np.maximum(total - data, 0.0)}


_ESTIMATORS = {"RGBMRegressor": RGBMRegressor, "RGBMClassifier": RGBMClassifier}


def load_model(path):
    """Load an estimator written by ``save_model``; the file is validated in full."""
    with open(os.fspath(path), "r", encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not a valid rgbm_rs model file: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != _MODEL_FILE_FORMAT:
        raise ValueError(f"{path} is not an rgbm_rs model file (missing format marker)")
    cls = _ESTIMATORS.get(doc.get("estimator"))
    if cls is None:
        raise ValueError(f"{path}: unknown estimator {doc.get('estimator')!r}")
    try:
        est = cls(**doc["params"])
        booster = _core.Booster.from_json(json.dumps(doc["model"]))
        n_features = int(doc["n_features_in"])
        names = doc.get("feature_names_in")
        classes = doc.get("classes")
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a valid rgbm_rs model file: {e!r}") from None
    if n_features != booster.n_features:
        raise ValueError(f"{path}: n_features_in ({n_features}) disagrees with the model ({booster.n_features})")
    if names is not None:
        if len(names) != n_features:
            raise ValueError(f"{path}: {len(names)} feature names for {n_features} features")
        est.feature_names_in_ = np.asarray(names, dtype=object)
    if cls is RGBMClassifier:
        if not isinstance(classes, list) or len(classes) != 2:
            raise ValueError(f"{path}: a classifier needs exactly 2 classes")
        est.classes_ = np.asarray(classes)
    est.n_features_in_ = n_features
    est._booster = booster
    est.n_estimators_ = booster.n_trees
    return est
