"""scikit-learn estimators backed by the native booster: the regressor here,
the classifier (``_classifier``) and the ranker (``_ranker``) re-exported, and
``load_model`` for all three."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _model_file, _params
from ._base import ESTIMATORS, RGBMBase, store_params
from ._classifier import RGBMClassifier
from ._ranker import RGBMRanker
from ._rounds import documents_rounds
from ._typing import (
    FeatureSelection,
    LossFunction,
    MatrixLike,
    Metric,
    PathLike,
    VectorLike,
)
from ._validation import check_regression_target, check_target_columns


class RGBMRegressor(RegressorMixin, RGBMBase):
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
        Value bins per feature (NaN gets one more). A categorical feature
        gets one bin per category up to ``max_bins`` of them; beyond, the
        least frequent categories share the missing bin (a UserWarning
        says so). LightGBM caps categories separately: raise ``max_bins``
        to keep more than 255 categories apart.
    min_data_in_bin : int or None, default=None
        LightGBM's ``min_data_in_bin``: the fewest (sampled) rows a value
        bin holds. Neighbouring values share a bin until it holds this
        many, so a feature of n rows gets at most about n / min_data_in_bin
        bins: fewer bins to scan on small data, smaller histograms for wide
        sparse data. Missing values keep their own bin and categorical
        features one bin per category. None = 3, LightGBM's default; 1
        gives every distinct value a bin of its own (up to ``max_bins``).
        As in LightGBM the count is of rows, not weights, so above 1 a row
        of integer weight k does not bin as k copies of it would.
    min_samples_leaf : int, default=20
        Minimum rows in a leaf.
    min_child_weight : float, default=1.0
        Minimum hessian sum in a leaf (with ``sample_weight``, of the
        weighted hessians after the weights are normalised to mean 1).
        XGBoost's default; LightGBM's is 1e-3, which lets a leaf of rows
        the model already gets confidently wrong (hessians near 0) take a
        Newton step of hundreds: on a 10,000-row, 7-class covertype sample
        such leaves made 3 of 5 cross-validation folds diverge. At 1 a
        classifier's trees also stop growing once it fits well, so later
        rounds cost less. Under the squared error a row's hessian is its
        weight (mean 1), so there it binds only on leaves of light rows.
        With ``gain="gradient"`` and ``leaf="gradient"`` (MART) the trees
        never read the hessian and the floor does not apply; with
        ``booster="rgb"`` it applies to the candidate trees as well.
    reg_lambda : float, default=0.0
        L2 penalty λ on leaf values (in the same units as min_child_weight).
    reg_alpha : float, default=0.0
        L1 penalty α on leaf values (LightGBM's ``lambda_l1``, XGBoost's
        ``alpha``), in the units of reg_lambda: a leaf's gradient sum G is
        soft-thresholded, T(G) = sign(G)·max(abs(G) − α, 0), so its value is
        −T(G)/(H + λ) and its score T(G)²/(H + λ) (with leaf="gradient" and
        gain="gradient", W in place of H). Refused with langevin=True,
        booster="rgb" with rgb_candidate="argmin", and the losses whose
        leaves are residual quantiles (absolute_error, quantile).
    max_delta_step : float, default=0.0
        Each leaf's value, before the learning rate, is clipped to
        [-max_delta_step, max_delta_step]; 0 = no limit. LightGBM's rule:
        the gain is the loss reduction of the clipped value,
        −(2·T(G)·w + (H + λ)·w²). (XGBoost's gain for a clipped value differs
        when reg_alpha > 0.) Refused where reg_alpha is.
    path_smooth : float, default=0.0
        LightGBM's path smoothing s: a leaf of n rows (counts, not weights)
        whose own value is w takes (w·n + w_parent·s)/(n + s), w_parent its
        parent's value; the gain uses the smoothed values, and the root is
        not smoothed. Refused where reg_alpha is, and with booster="rgb",
        subsample_for="split" and step="constant".
    min_split_gain : float, default=0.0
        A split must gain more than this.
    extra_trees : bool, default=False
        LightGBM's extremely randomised trees: at each node every numeric
        feature tries one threshold only, drawn uniformly among its bin
        boundaries (both missing-value directions are tried at it), and
        the node takes the best of these. The draw comes from
        ``random_state`` (LightGBM has a separate ``extra_seed``) and
        depends on the tree, the node and the feature only, so models do
        not depend on ``n_jobs``. Categorical features are searched as
        usual (LightGBM also draws among their category splits). With
        ``selection="random"`` a feature keeps its drawn threshold only if
        the selection drew it too. Works with booster="rgb" and
        langevin=True.
    use_quantized_grad : bool, default=False
        LightGBM's quantized training (Shi et al., NeurIPS 2022): before each
        tree every row's gradient is rounded to an integer level on the
        scale max|g| / (num_grad_quant_bins / 2) and its hessian to one on
        max|h| / num_grad_quant_bins; the tree's splits are found on those.
        As in LightGBM, hessians equal on every row keep their value; here
        the squared error's hessians (the row weights) are kept too. Levels
        are held as floats (multiples of the scales), so unlike LightGBM's
        packed integer histograms it does not make a fit faster: it is
        there for LightGBM's results, and its sums are exact only with
        ``summation="exact"``. Not with booster="rgb" or langevin=True.
    num_grad_quant_bins : int, default=4
        Levels of the quantized hessians; the gradients get half as many on
        each side of zero. More levels come closer to the unquantized fit.
    quant_train_renew_leaf : bool, default=False
        With use_quantized_grad, each leaf's value from its rows' exact
        gradient and hessian sums rather than the quantized ones.
    stochastic_rounding : bool, default=True
        With use_quantized_grad, each value is rounded up or down at random
        with the probabilities that keep it unbiased, drawn from
        ``random_state``, the tree and the row (the same model at any
        ``n_jobs``); False rounds to the nearest level.
    categorical_features : "from_dtype", "auto", list of int or str, boolean mask or None, default="from_dtype"
        Features split by sets of categories instead of thresholds.
        "from_dtype" takes the frame's columns of a categorical dtype
        (pandas ``category``, polars ``Categorical``/``Enum``, arrow
        dictionary), as scikit-learn's HistGradientBoosting does, and no
        column of an array; a string column is refused (TypeError) unless
        "auto" or a list makes strings categories. "auto" takes the
        categorical-dtype columns and the string columns (pandas, polars,
        arrow), whose sorted distinct values become the categories at fit
        (strings unseen at fit count as missing); LightGBM's "auto" refuses
        string columns. A list gives positions or column names, a mask one bool
        per column (string columns are then read as categories); other
        listed columns must hold integer codes in [0, 65535] (NaN =
        missing). Categories unseen at fit and missing values follow each
        split's default side. None: no feature is split by category; a
        categorical column is split by its category codes as ordinal
        numbers (the default of earlier versions).
    max_cat_to_onehot : int or None, default=None
        Nodes with at most this many categories split one category off the
        rest; None = 4.
    max_cat_threshold : int or None, default=None
        Otherwise categories are sorted by G/(H + cat_smooth) and a prefix
        or suffix of at most this many goes one way; None = 32.
    cat_smooth : float or None, default=None
        Added to each category's hessian sum in that sort; categories with
        fewer rows in the node stay out of it (on the default side). None =
        10, LightGBM's default.
    min_data_per_group : int or None, default=None
        LightGBM's meaning: each side of a sorted split holds at least this
        many rows, and so do the categories added between two prefixes
        tried. None = 100, LightGBM's default.
    cat_l2 : float or None, default=None
        Added to reg_lambda in the gain of a sorted split (LightGBM's
        ``cat_l2``; not with ``gain="unit"``, which has no hessian sum to
        add it to). Unlike LightGBM, the children's leaf values keep
        reg_lambda: a leaf's value depends on its rows alone. None = 10,
        LightGBM's default.
    monotone_constraints : list of {-1, 0, 1}, dict or None, default=None
        Per feature: the raw scores (every output's: each class score, the
        gaussian mean and log standard deviation) are non-increasing (-1),
        free (0) or non-decreasing (1) in it, by construction (LightGBM's
        "basic" method: bounds on leaf values). A list has one entry per
        feature; a dict maps column names (or positions) to directions.
        Numeric features only.
    interaction_constraints : list of lists of int or str, or None, default=None
        Sets of features allowed to interact: every root-to-leaf path splits
        on features of one set only (XGBoost's rule); a feature in no set
        may split a path only on its own. Positions or column names.
    loss : {"squared", "huber", "gaussian", "absolute_error", "quantile", "poisson", "gamma", "tweedie"} \
or callable, default="squared"
        "gaussian" fits a mean and a standard deviation per row by the
        Gaussian negative log-likelihood (two trees per round; Fisher-scoring
        Newton steps); ``predict(X, return_std=True)`` returns both.
        "absolute_error" and "quantile" grow each tree on the gradient and
        then set every leaf to the weighted median / ``alpha``-quantile of
        its rows' residuals. "poisson" (counts >= 0), "gamma" (targets > 0)
        and "tweedie" (targets >= 0) model log E[y]: raw scores are logs,
        ``predict`` returns exp of them. A function ``loss(y_true,
        raw_score) -> (grad, hess)`` (LightGBM's ``objective``) gives each
        row's unweighted gradient and hessian at the raw scores, arrays of
        shape (n,) (or (n, n_classes) with more than two classes); sample
        weights are applied for it. The fit then starts from 0 and predicts
        raw scores (the classifier: labels from the largest score, or score
        > 0 for two classes; no ``predict_proba``). Rules that need the
        loss's value or smoothness (``step="line_search"`` or
        ``"constant"``, ``booster="rgb"``, ``record_train_loss``) refuse it.
    huber_delta : float, default=1.0
        Threshold δ of the Huber loss.
    alpha : float in (0, 1), list of float or None, default=None
        The quantile ``loss="quantile"`` predicts; None = 0.9 (LightGBM's
        and scikit-learn's GradientBoostingRegressor's default). A strictly
        increasing list fits one output per quantile in one model, each the
        single-alpha fit; ``predict`` then returns (n_samples, n_alphas),
        each row sorted so that the quantiles never cross
        (``get_booster().predict_raw`` gives them unsorted). A list of one
        is that single-alpha fit, the model of ``alpha=a``, predicting shape
        (n_samples,) as a y of one column does. The other
        losses ignore it, as in scikit-learn's GradientBoostingRegressor
        (a list needs ``loss="quantile"`` and 1-D y).
    tweedie_variance_power : float in (1, 2) or None, default=None
        Variance power ρ of ``loss="tweedie"`` (Var y = φ μ^ρ); None = 1.5.
        The other losses ignore it.
    gain, leaf : {"newton", "gradient"}, default="newton"
        Second-order (Newton) or first-order (least-squares fit of the
        negative gradient) split gain and leaf values.
    subsample : float, default=1.0
        Fraction of rows drawn (without replacement, per row) for each tree;
        a draw that picks no row takes one row at random.
    subsample_freq : int or None, default=None
        LightGBM's ``subsample_freq`` (``bagging_freq``): a new row sample
        every this many rounds, the rounds between reusing it; 0 turns the
        sample off. None draws every round, XGBoost's behaviour (LightGBM's
        default 0 samples no rows whatever ``subsample`` says).
    subsample_for : {"tree", "split"} or None, default=None
        What the drawn rows decide: the whole tree ("tree", None; Friedman's
        stochastic gradient boosting, LightGBM's bagging), or only its
        splits ("split"), the leaf values (and SGLB's leaf noise) then
        coming from every row, as in CatBoost's Bernoulli bootstrap.
    step : {"shrinkage", "constant", "line_search"}, default="shrinkage"
        How each tree u is added: ``learning_rate * u``; RGBM's principled
        ``u / sigma`` (needs ``leaf="gradient"`` and a smooth loss; ignores
        ``learning_rate``); or ``learning_rate * rho * u`` with rho the exact
        1-D minimiser of the training loss along u
        (``learning_rate`` <= 1 there: it damps the exact minimiser).
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
    booster : {"gbm", "rgb", "gbtree"}, default="gbm"
        "gbm" is gradient boosting (XGBoost's "gbtree" is taken as "gbm";
        its "gblinear" and "dart" are not built).
        "rgb" is regularized boosting over tree families with structural risk
        minimisation (Cortes, Mohri & Storcheus 2019): each round draws
        ``rgb_candidates`` families (n internal nodes, leaf L2 radius lambda)
        with probability proportional to lambda, takes each family's best
        member (``rgb_candidate``), takes the coordinate step (``rgb_step``;
        ``learning_rate`` is not used) and keeps the candidate with the lowest
        training loss + ``rgb_beta`` * complexity (``rgb_penalty``).
        ``max_depth`` still caps the trees (use None to let the families
        decide). After fit, ``rgb_family_counts_`` counts the chosen
        (nodes, lambda) families and ``rgb_complexity_`` is the fitted
        model's complexity term of Theorem 2.
    rgb_candidates : int, default=4
    rgb_beta : float, default=0.1
    rgb_nodes, rgb_lambdas : list or None
        The family grid; None = the paper's n in {2, ..., 256} and
        lambda in {0.001, ..., 4}.
    rgb_step : {"lipschitz", "exact"} or None, default=None
        The coordinate step alpha = -mean(g h) / C: "lipschitz" (None; the
        paper's experiments) takes C = lambda * sigma, so the family's
        radius sets the step length; it is a descent step when mean(h^2) <=
        lambda, always so for lambda <= 1 (a projected leaf is at most
        lambda), not necessarily for larger radii. "exact" takes C = sigma *
        mean(h^2), the minimiser of the sigma-smooth bound along h: it never
        raises the loss, but undoes the leaves' scale, so lambda then only
        enters the sampling and the penalty.
    rgb_candidate : {"argmin", "projected"} or None, default=None
        Which member of a drawn family is its candidate. "argmin" (None; the
        paper's Algorithm 1 line 4) is the member with the largest
        first-order decrease under ``rgb_step``: for "lipschitz" the
        structure maximising sum_l G_l^2 (G_l a leaf's gradient sum) with
        leaves -lambda * G / ||G|| on the lambda sphere, so the update is
        -lambda * G_l / (m * sigma); for "exact" the structure maximising
        sum_l G_l^2 / n_l with leaves proportional to -G_l / n_l. Structures
        grow greedily, split by split, as in every tree learner; the
        candidate has its own gain and leaves, so ``gain``, ``leaf`` and
        ``reg_lambda`` must stay at their defaults. "projected" grows a tree
        with ``gain`` and ``leaf`` (Newton by default) and scales its leaves
        down onto the lambda ball when outside it: a departure from the
        paper, kept for comparison and for models made before the choice.
    rgb_penalty : {"per_candidate", "weighted"} or None, default=None
        How a candidate pays for its family's complexity Omega:
        "per_candidate" (None; Algorithm 1) adds ``rgb_beta`` * Omega,
        "weighted" (the objective of Eq. 7) ``rgb_beta * |alpha| * Omega``.
    langevin : bool, default=False
        SGLB (Ustimenko & Prokhorenkova 2021): Gaussian noise of per-row scale
        sqrt(2 / (learning_rate * temperature)) on the gradients that choose
        each tree's structure, and independent noise on its leaf values
        (of variance c^2 / (H + reg_lambda) for Newton leaves, so it needs
        ``min_child_weight > 0`` or ``reg_lambda > 0``).
    langevin_split_noise : bool or None, default=None
        With ``langevin=True``: False keeps the split choice noise-free, so
        only the leaf values are noisy (what CatBoost's implementation ends
        up doing); None = True, the paper's algorithm.
    temperature : float, default=1e4
        SGLB's inverse diffusion temperature beta (CatBoost's normalisation:
        the paper's beta divided by the number of rows).
    shrink_rate : float or None, default=None
        Model shrinkage gamma: F <- b + (1 - gamma * learning_rate)(F - b) + tree
        (the base score b is not shrunk). None means 1e-3 with ``langevin``, else 0.
    summation : {"float", "exact"} or None, default=None
        How sums over rows are formed. "exact" rounds each round's gradients
        and hessians (and the weights, once) to a power-of-two grid on which
        every sum of them is exact, so the model does not depend on the
        order of the rows or on how they are split among threads or
        machines; the rounding is about 2^-52 of the largest possible sum.
        Not with ``step="line_search"``, ``booster="rgb"`` or
        ``loss="gaussian"``, which compare floating-point loss sums.
        None = "float".
    init : {"optimal", "zero"}, default="optimal"
        Start from the loss-minimising constant or from 0.
    early_stopping_rounds : int or None, default=None
        Stop when the first metric on the last evaluation set has not improved
        for this many rounds, and keep the model of the best round
        (``best_iteration_``). Needs ``eval_set`` in ``fit`` or ``validation_fraction``.
    early_stopping_min_delta : float >= 0 or None, default=None
        The smallest change of the watched metric that counts as an
        improvement (LightGBM's parameter and rule: it must beat the best
        by more than this). None = 0.
    validation_fraction : float in (0, 1) or None, default=None
        Hold out this fraction of the training rows (stratified for
        classifiers, drawn from ``random_state``) as the evaluation set
        "validation". Not combinable with ``eval_set``.
    eval_metric : str, callable, list of them or None, default=None
        Metrics recorded on every evaluation set after every round, in
        ``evals_result_``; None = the loss itself. Regression: "l2", "rmse",
        "mae" ("huber" too with the Huber loss); binary: "logloss", "error",
        "auc" (and the training loss's own name); multiclass: "multi_logloss",
        "multi_error"; with a custom loss only those of raw scores ("l2",
        "rmse", "mae"; "error", "auc"; "multi_error"). A function
        ``metric(y_true, raw_score[, weight]) -> (name, value,
        higher_is_better)`` (or a list of such tuples) is called with each
        evaluation set's labels, raw scores and ``eval_sample_weight``.
        Built-in names are evaluated first, then functions, each in the
        order given; early stopping watches the first. "auc" needs
        both classes (with positive weight) in every evaluation set, else
        fit raises ValueError (AUC is undefined for one class). Unlike
        LightGBM, which records the objective's metric beside these and
        early-stops on all of them (leaving out the training set), only the
        metrics named are recorded and the first of the last set is
        watched; the peers' metric names are taken and reported as given.
    importance_type : {"gain", "split"}, default="gain"
        What ``feature_importances_`` measures: total split gain or split count.
    warm_start : bool, default=False
        A new ``fit`` continues the fitted model up to ``n_estimators``
        rounds in all (as scikit-learn's ensembles do; see ``init_model`` in
        ``fit`` for what continuing means; X is read as ``predict`` reads
        it). A failed continuation keeps the fitted model.
    random_state : int, RandomState or None, default=None
    n_jobs : int or None, default=None
        Threads; None or -1 uses every core this process may use (its affinity
        mask and cgroup CPU quota), or one thread for fits of under 10,000
        input values, where more cost more than they save; -k all but k - 1.
        None and -1 obey the limits nested parallelism sets, as OpenMP
        libraries (HGB, XGBoost) do: ``threadpoolctl.threadpool_limits``
        (rgbm_rs registers itself with threadpoolctl), else the
        ``OMP_NUM_THREADS`` environment variable (which joblib sets in the
        workers of ``GridSearchCV(n_jobs=-1)``). Models do not depend on it.
        Predictions read the current value, as LightGBM's do:
        ``set_params(n_jobs=)`` after fit sets the threads of later
        predictions.
    verbose : int, default=0
        0 is quiet. k > 0 logs the evaluation results every k rounds through
        the ``logging`` logger "rgbm_rs" (a stderr handler is added when
        logging is not configured) and shows a tqdm progress bar when tqdm is
        installed. A negative value (LightGBM's -1) is quiet and also hides
        the fit's warnings.
    num_leaves, min_child_samples, gamma, max_bin, objective : default=None
        LightGBM's and XGBoost's names for ``max_leaves``,
        ``min_samples_leaf``, ``min_split_gain``, ``max_bins`` and ``loss``,
        with their meanings (``objective`` takes the peers' objective names,
        such as ``"binary"`` or ``"reg:squarederror"``, and functions).
        Giving one and ours (not at its default) is a ValueError.
        ``num_leaves`` with ``max_depth`` at its default leaves the depth
        unlimited, as LightGBM's ``max_depth=-1``; ``max_depth`` <= 0 is
        that too (best-first to ``max_leaves``, 31 when unset).
        ``get_params`` returns them as given. The full list of the peers'
        names, and what each is here, is in docs/parameters.md.
    colsample_bytree, feature_fraction, colsample_bylevel, colsample_bynode, feature_fraction_bynode : default=None
        The share of features searched, as XGBoost nests them: each tree
        draws ceil(f × n_features) features (``colsample_bytree``,
        LightGBM's ``feature_fraction``), each depth level of the tree
        ceil(f × n) of the tree's n (``colsample_bylevel``), and each node
        ceil(f × n) of its level's n (``colsample_bynode``, LightGBM's
        ``feature_fraction_bynode``); None is 1. A per-tree fraction f
        below 1 is ``selection="groups"`` (one group per feature) with
        ``selection_size=f``. XGBoost rounds each count down and LightGBM
        to nearest, both at least one. Every draw follows
        ``random_state``, the tree and the depth or node, and
        ``fit(feature_weights=...)`` weights it. Histograms cover the
        tree's features, so per-level and per-node draws save search time,
        not histogram time.
    verbosity : int in [0, 3] or None, default=None
        XGBoost's message level: 0 hides the warnings a fit gives; rounds
        are logged by ``verbose``.
    tree_method : {"hist"} or None, default=None
        XGBoost's: the trees are always grown on binned histograms, so only
        "hist" (XGBoost's default) is taken; "exact" and "approx" are refused.

    A fit that diverges (a tree with non-finite leaf values, or scores that
    would overflow, e.g. from a far too large ``learning_rate``) raises
    ValueError naming the round instead of returning a non-finite model.

    Attributes
    ----------
    n_estimators_ : int
        Rounds actually trained (fewer than ``n_estimators`` after early stopping).
    best_iteration_ : int
        With early stopping: the rounds kept and used for prediction, up to
        the best one (LightGBM's count, 1-based; XGBoost's 0-based
        ``best_iteration`` is one less).
    best_score_ : dict
        With early stopping: ``{set: {metric: value}}`` at the best round,
        LightGBM's layout (XGBoost's ``best_score`` is the watched metric's value).
    evals_result_ : dict
        ``{set name: {metric: [value per round]}}`` (empty without evaluation data).
    training_log_ : dict
        Per round: root split (``root_feature``, ``root_threshold``),
        ``features_searched``, ``step``, ``seconds`` and ``train_loss`` (with
        ``record_train_loss``). The papers' diagnostics of the round's first
        tree, on the rows it was fitted to (None on Dask shards and where
        undefined): ``gamma`` = sum_l G_l^2/n_l / sum_i g_i^2 and
        ``gamma_star`` = sum_l G_l^2/H_l / sum_i g_i^2/h_i, Sun, Zhang & Zhou's
        weak-learnability ratios (their Table 2 reports each one's minimum
        over the rounds); ``cosine`` = ``abs(<r, b>) / ||r||``, the cosine of the
        tree's output b with the residual r = -g, and ``theta``, its running
        minimum (Lu & Mazumder's realised minimal cosine angle). With
        ``booster="rgb"`` also the chosen family (``rgb_nodes``,
        ``rgb_lambda``), its normalised complexity ``rgb_omega`` and the
        round's ``rgb_complexity`` = ``abs(alpha) * R(H_k)`` (Theorem 1's
        Rademacher bound of the family).
    rgb_complexity_ : float
        With ``booster="rgb"``: ``sum_t abs(alpha_t) * R(H_{k_t})`` over the kept
        rounds of this fit (a continued fit counts its own rounds only), the
        complexity term of Cortes, Mohri & Storcheus' Theorem 2.
    feature_importances_ : ndarray of shape (n_features,)
    n_features_in_, feature_names_in_ : scikit-learn's input attributes.
    """

    _regression = True
    # scikit-learn's validation gives messages like "The 'learning_rate'
    # parameter of RGBMRegressor must be ..."; the bounds come from the core.
    _parameter_constraints = _params.constraints(
        skip=_params.CLASSIFICATION_ONLY + _params.RANKING_ONLY, loss=_params.REGRESSION_LOSSES
    )
    # A list of alphas fits several quantiles (checked in fit).
    _parameter_constraints["alpha"] = [*_parameter_constraints["alpha"], "array-like"]

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
        loss: str | LossFunction = "squared",
        huber_delta: float = 1.0,
        alpha: float | Sequence[float] | None = None,
        tweedie_variance_power: float | None = None,
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
    ) -> None:
        store_params(self, locals())

    def _loss_params(self, native_loss):
        p = {"huber_delta": float(self.huber_delta)}
        # Like scikit-learn's GradientBoostingRegressor and LightGBM, the
        # other losses ignore these (scikit-learn's checks set alpha freely).
        alphas = self._alphas()
        if native_loss == "quantile" and alphas is not None:
            p["alphas"] = alphas
        elif native_loss == "quantile" and self.alpha is not None:
            listed = self._alpha_list()
            p["alpha"] = float(self.alpha) if listed is None else listed[0]
        if native_loss == "tweedie" and self.tweedie_variance_power is not None:
            p["tweedie_variance_power"] = float(self.tweedie_variance_power)
        return p

    def _alphas(self) -> list[float] | None:
        """The quantiles of a fit of several: a list of two or more alphas as
        floats, checked; None for one alpha (or none). A list of one is its
        single-alpha fit, as each output of a longer list is."""
        values = self._alpha_list()
        return values if values is not None and len(values) > 1 else None

    def _alpha_list(self) -> list[float] | None:
        """``alpha`` given as a list, as floats, checked; None for a number (or None)."""
        if self.alpha is None or isinstance(self.alpha, Real):
            return None
        alphas = np.asarray(self.alpha)
        if alphas.ndim != 1 or alphas.size == 0 or alphas.dtype.kind not in "fiu":
            raise ValueError(f"alpha must be a float or a non-empty 1-D list of floats, got {self.alpha!r}")
        values = [float(a) for a in alphas]
        if not all(0.0 < a < 1.0 for a in values) or any(b <= a for a, b in zip(values, values[1:])):
            raise ValueError(f"a list of alpha must be strictly increasing in (0, 1), got {values}")
        return values

    def _multi_output(self) -> str | None:
        """How the fitted model's outputs are read: "targets" (one per
        column of a 2-D y), "quantiles" (one per alpha) or None."""
        params = json.loads(self._booster.params_json())
        if params.get("alphas") is not None:
            return "quantiles"
        return "targets" if params.get("n_targets") is not None else None

    def _prediction(self, raw):
        """The predictions users see of raw scores."""
        multi = self._multi_output()
        if multi is None:
            return raw[:, 0] if raw.ndim == 2 else self._booster.response(raw)
        out = self._booster.response(raw).reshape(raw.shape)
        if multi == "quantiles":
            # Each quantile has its own trees, so two may cross on a row;
            # sorted, column k is the k-th smallest, as the alphas are.
            out.sort(axis=1)
        return out

    def _labels(self, fit):
        y = check_regression_target(check_target_columns(fit.y))
        loss = "custom" if callable(self.loss) else self.loss
        alphas = self._alphas()
        if self._alpha_list() is not None and (loss != "quantile" or y.ndim == 2):
            raise ValueError("a list of alpha fits quantiles of one target: it needs loss='quantile' and 1-D y")
        if y.ndim == 2 and loss not in _params.MULTI_TARGET_LOSSES:
            raise ValueError(
                f"loss={loss!r} takes 1-D y; 2-D y (one column per target) needs one of the losses "
                f"{', '.join(map(repr, _params.MULTI_TARGET_LOSSES))}"
            )
        repeat = 1 if alphas is None else len(alphas)
        return dataclasses.replace(fit, y=y, loss=loss, encode=_encode_values, repeat=repeat)

    @documents_rounds
    def predict(
        self,
        X: MatrixLike,
        return_std: bool = False,
        pred_leaf: bool = False,
        pred_contrib: bool = False,
        *,
        raw_score: bool = False,
        iteration_range: tuple[int, int] | None = None,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        init_score: VectorLike | None = None,
    ) -> Any:
        """Predicted values.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
            NaN means missing; a data frame must have the columns seen in fit.
        return_std : bool, default=False
            Also return the predicted standard deviation (``loss="gaussian"`` only).
        pred_leaf : bool, default=False
            Return the leaf index of every row in every tree instead
            (LightGBM's name; the same as :meth:`apply`).
        pred_contrib : bool, default=False
            Return SHAP values of the raw score instead (exact TreeSHAP,
            LightGBM's layout): shape (n_samples, n_features + 1), the
            contribution of each feature and then the expected raw score over
            the training rows, summing to the raw score (the log mean for the
            log-link losses). ``loss="gaussian"``: shape (n_samples,
            2 * (n_features + 1)), the mean's block and then the log
            standard deviation's. Over a range of rounds: the SHAP values of
            those rounds' trees, the last column holding the base score plus
            their expected value (and ``init_score``), so rows still sum to
            the range's raw score. XGBoost refuses a range starting after
            round 0 here; LightGBM leaves its starting score out of it.
        raw_score : bool, default=False
            Return the raw scores instead (LightGBM's name): the margin
            before the link, as :meth:`decision_function` for classifiers
            (the log mean for the log-link losses).
        {rounds}
        init_score : array-like of shape (n_samples,), (n_samples, 2) for ``loss="gaussian"``, or None
            Raw offsets added to the scores before the link, as ``fit``'s
            ``init_score`` (XGBoost's ``base_margin``; LightGBM's predict
            has none): with a log link (poisson, gamma, tweedie) the log of
            an exposure, the prediction then being exp(raw + offset). A
            model fitted with offsets predicts what it adds. Not with
            ``pred_leaf``.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
            The predicted mean (one column per target of a 2-D y fit, per
            quantile of a list of ``alpha``, rows sorted); with ``return_std`` a pair (mean, std); with
            ``pred_leaf`` the int32 array of :meth:`apply`; with
            ``pred_contrib`` the contributions.

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
        kind = self._predict_kind(
            return_std=return_std, raw_score=raw_score, pred_leaf=pred_leaf, pred_contrib=pred_contrib
        )
        raw = self._output(
            X,
            None if kind in ("return_std", "raw_score") else kind,
            iteration_range,
            start_iteration,
            num_iteration,
            init_score,
        )
        if kind in ("pred_leaf", "pred_contrib", "raw_score"):
            return raw
        if return_std:
            if raw.ndim != 2 or self._multi_output() is not None:
                raise ValueError(
                    "return_std=True needs loss='gaussian' (the model predicts a variance), "
                    f"not loss={self._fitted_loss()!r}"
                )
            return raw[:, 0], self._booster.standard_deviation(raw[:, 1])
        return self._prediction(raw)

    def staged_predict(self, X: MatrixLike) -> Iterator[np.ndarray]:
        """Predictions after each boosting round.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
            NaN means missing; a data frame must have the columns seen in fit.

        Yields
        ------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
            The prediction of the model as it was after rounds 1, 2, ..., ``n_estimators_``.
        """
        for raw in self._staged_raw(X):
            yield self._prediction(raw)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict_uncertainty(self, X: MatrixLike, n_members: int = 10) -> dict[str, np.ndarray]:
        """Virtual-ensemble uncertainty of an SGLB model.

        The members are the model truncated at ``n_members`` rounds spread over
        the second half of the chain (CatBoost's virtual ensembles), each
        rescaled to undo the shrinkage. Returns a dict with ``mean`` (mean
        member prediction) and ``knowledge`` (variance of the member means).
        With ``loss="gaussian"`` the members also predict a variance, and
        ``data`` is the mean of the member variances and ``total`` = ``data`` +
        ``knowledge`` (the law of total variance). The squared and Huber
        losses predict no variance, so they report no data uncertainty.

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)
        n_members : int, default=10
            Members of the virtual ensemble (>= 2; the model needs at least
            2 * n_members rounds).

        Returns
        -------
        dict of ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "_booster")
        if self._multi_output() is not None:
            raise ValueError("predict_uncertainty needs a model of one target (its members' spread is per target)")
        members = self._virtual_members(X, n_members)
        if members.ndim == 3:
            means = members[..., 0]
            variances = self._booster.standard_deviation(members[..., 1].ravel()).reshape(means.shape) ** 2
            knowledge, data = means.var(axis=0), variances.mean(axis=0)
            return {"mean": means.mean(axis=0), "knowledge": knowledge, "data": data, "total": data + knowledge}
        members = self._booster.response(members)
        return {"mean": members.mean(axis=0), "knowledge": members.var(axis=0)}


def _encode_values(ye, i):
    """Evaluation set ``i``'s targets, checked as the training targets."""
    try:
        ye = np.asarray(ye, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"eval_set[{i}]: y must be numeric") from None
    try:
        return check_regression_target(ye)
    except ValueError as e:
        raise ValueError(f"eval_set[{i}]: {e}") from None


ESTIMATORS.update(RGBMRegressor=RGBMRegressor, RGBMClassifier=RGBMClassifier, RGBMRanker=RGBMRanker)

#: ``rgbm_rs.SKOPS_TRUSTED_TYPES``: the types skops must be told to trust to
#: load a fitted estimator (``skops.io.load(file, trusted=SKOPS_TRUSTED_TYPES)``,
#: or MLflow's ``mlflow.sklearn.log_model(model, skops_trusted_types=SKOPS_TRUSTED_TYPES)``):
#: skops trusts scikit-learn's own estimators only, and a fitted estimator's
#: other attributes are built-in, NumPy and scikit-learn types it already
#: trusts. A list (MLflow writes it into the model's YAML metadata).
SKOPS_TRUSTED_TYPES: list[str] = [f"{cls.__module__}.{cls.__qualname__}" for cls in ESTIMATORS.values()]


def load_model(path: PathLike) -> RGBMRegressor | RGBMClassifier | RGBMRanker:
    """Load an estimator written by ``save_model``.

    The file is untrusted input: its structure, sizes, indices and numbers
    are validated in full before use.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    RGBMRegressor, RGBMClassifier or RGBMRanker
        Fitted, predicting exactly as the saved estimator did.

    Raises
    ------
    ValueError
        If the file is not a valid rgbm_rs model.
    OSError
        If it cannot be read.
    """
    return _model_file.load(path, ESTIMATORS)
