"""Prediction over a range of rounds (XGBoost's iteration_range, LightGBM's
start_iteration / num_iteration) and with raw offsets (init_score): checked
against the staged predictions, truncated models, the additivity of
TreeSHAP, hand-computed Poisson predictions, and LightGBM's and XGBoost's
own meaning of the same options on the same data."""

import copy
import json

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRanker, RGBMRegressor

rng = np.random.default_rng(5)
X = rng.normal(size=(400, 4))
Y = {
    "reg": X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 3.0 + 0.1 * rng.normal(size=400),
    "bin": (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int),
    "multi": np.digitize(X[:, 0] + 0.5 * X[:, 2], [-0.7, 0.0, 0.7]),
    "poisson": rng.poisson(np.exp(0.5 * X[:, 0])),
    "gaussian": X[:, 0] + np.abs(X[:, 1]) * rng.normal(size=400),
}
KW = dict(max_depth=3, learning_rate=0.3, random_state=0)
N_ROUNDS = 9


def _fit(task, **kw):
    kw = {**KW, "n_estimators": N_ROUNDS, **kw}
    if task in ("bin", "multi"):
        return RGBMClassifier(**kw).fit(X, Y[task])
    if task in ("poisson", "gaussian"):
        return RGBMRegressor(loss=task, **kw).fit(X, Y[task])
    return RGBMRegressor(**kw).fit(X, Y[task])


def _truncated(est, n_rounds):
    """The estimator with its model cut after ``n_rounds`` rounds."""
    out = copy.copy(est)
    out._booster = est.get_booster().truncated(n_rounds)
    return out


TASKS = ["reg", "bin", "multi", "poisson", "gaussian"]
SHRINK = [{}, {"shrink_rate": 0.05}]


@pytest.mark.parametrize("kw", SHRINK, ids=["plain", "model_shrinkage"])
@pytest.mark.parametrize("task", TASKS)
def test_the_first_rounds_predict_as_the_staged_model(task, kw):
    est = _fit(task, **kw)
    methods = ["predict"] + (["predict_proba", "decision_function"] if task in ("bin", "multi") else [])
    for method in methods:
        staged = list(getattr(est, f"staged_{method}")(X))
        for e in (1, 4, N_ROUNDS):
            want = staged[e - 1]
            for options in ({"iteration_range": (0, e)}, {"num_iteration": e}):
                got = getattr(est, method)(X, **options)
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"{method} {options}")
            np.testing.assert_allclose(getattr(_truncated(est, e), method)(X), want, rtol=1e-12, atol=1e-12)


def _hand_sums(est, Z):
    """Raw scores after each round, summed by hand from the leaves each row
    reaches: the base score first, then every tree in turn (the model's order)."""
    doc = json.loads(est.get_booster().to_json())
    k = doc["n_outputs"]
    leaves = est.apply(Z).reshape(len(Z), -1)  # tree r*k + j is column r*k + j
    scores = np.tile(np.asarray(doc["base_score"], dtype=np.float64), (len(Z), 1))
    out = []
    for r in range(len(doc["trees"]) // k):
        for j in range(k):
            t = r * k + j
            scores[:, j] = scores[:, j] + np.asarray(doc["trees"][t]["leaf_value"])[leaves[:, t]]
        out.append(scores[:, 0].copy() if k == 1 else scores.copy())
    return out


@pytest.mark.parametrize("task", TASKS + ["targets", "labels"])
def test_each_stage_is_the_hand_sum_and_the_last_is_predict_bit_for_bit(task):
    # Stages, predict and iteration_range=(0, t) add the same trees in the
    # same order, so they agree exactly, not merely to rounding.
    rows = np.random.default_rng(1).normal(size=(300, 4))
    if task == "targets":
        est = RGBMRegressor(**KW, n_estimators=40).fit(X, np.column_stack([Y["reg"], Y["poisson"]]))
    elif task == "labels":
        est = RGBMClassifier(**KW, n_estimators=40).fit(X, np.column_stack([Y["bin"], Y["multi"] > 1]))
    else:
        est = _fit(task, n_estimators=40)
    hand = _hand_sums(est, rows)
    raw = est.decision_function if isinstance(est, RGBMClassifier) else (lambda Z, **o: est._output(Z, None, **o))
    stages = list(est.staged_decision_function(rows) if isinstance(est, RGBMClassifier) else est._staged_raw(rows))
    assert len(stages) == len(hand) == 40
    for t in (0, 9, 39):
        np.testing.assert_array_equal(stages[t], hand[t])
        np.testing.assert_array_equal(raw(rows, iteration_range=(0, t + 1)), hand[t])
    np.testing.assert_array_equal(raw(rows), hand[-1])
    np.testing.assert_array_equal(list(est.staged_predict(rows))[-1], est.predict(rows))
    if isinstance(est, RGBMClassifier):
        np.testing.assert_array_equal(list(est.staged_predict_proba(rows))[-1], est.predict_proba(rows))


def test_with_model_shrinkage_the_last_stage_is_predict_bit_for_bit():
    for task in ("reg", "multi"):
        est = _fit(task, n_estimators=30, shrink_rate=0.05)
        method = "predict_proba" if task == "multi" else "predict"
        stages = list(getattr(est, f"staged_{method}")(X))
        np.testing.assert_array_equal(stages[-1], getattr(est, method)(X))
        # The earlier stages undo the later rounds' scaling (not the same bits).
        np.testing.assert_allclose(stages[9], getattr(_truncated(est, 10), method)(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kw", SHRINK, ids=["plain", "model_shrinkage"])
@pytest.mark.parametrize("task", TASKS)
def test_a_later_range_keeps_the_base_score(task, kw):
    # Base score + the range's trees, as the model after round `end` holds
    # them: the first `end` rounds minus the first `start`, whose trees the
    # later rounds scaled by q**(end - start).
    est = _fit(task, **kw)
    b = est.get_booster()
    raw = est.decision_function if task in ("bin", "multi") else (lambda Z, **o: est._output(Z, None, **o))
    base = np.asarray(b.base_score) if b.n_outputs > 1 else b.base_score[0]
    s, e = 3, 7
    head, upto = _truncated(est, s)._raw(X), _truncated(est, e)._raw(X)
    want = base + (upto - base) - (head - base) / b.shrinkage_undo(e - s)
    for options in ({"iteration_range": (s, e)}, {"start_iteration": s, "num_iteration": e - s}):
        np.testing.assert_allclose(raw(X, **options), want, rtol=1e-10, atol=1e-10)
    # The range to the last round: end=0 (XGBoost), num_iteration None or <= 0 (LightGBM).
    tail = raw(X, iteration_range=(s, N_ROUNDS))
    for options in ({"iteration_range": (s, 0)}, {"start_iteration": s}, {"start_iteration": s, "num_iteration": -1}):
        np.testing.assert_array_equal(raw(X, **options), tail)
    for options in ({"iteration_range": (0, 0)}, {"num_iteration": 0}, {"iteration_range": (0, N_ROUNDS)}):
        np.testing.assert_array_equal(raw(X, **options), raw(X))


@pytest.mark.parametrize("task", ["reg", "multi", "gaussian"])
def test_leaves_of_a_range_are_those_columns(task):
    est = _fit(task)
    whole = est.apply(X)
    for options in ({"iteration_range": (2, 6)}, {"start_iteration": 2, "num_iteration": 4}):
        np.testing.assert_array_equal(est.apply(X, **options), whole[:, 2:6])
        np.testing.assert_array_equal(est.predict(X, pred_leaf=True, **options), whole[:, 2:6])
    np.testing.assert_array_equal(est.apply(X, num_iteration=3), _truncated(est, 3).apply(X))


@pytest.mark.parametrize("kw", SHRINK, ids=["plain", "model_shrinkage"])
@pytest.mark.parametrize("task", ["reg", "bin", "multi", "gaussian"])
def test_contributions_of_a_range(task, kw):
    est = _fit(task, **kw)
    b = est.get_booster()
    n, k, width = len(X), b.n_outputs, X.shape[1] + 1

    def contrib(**options):
        return est.predict(X, pred_contrib=True, **options).reshape(n, k, width)

    def raw(**options):
        return est._output(X, None, **options).reshape(n, k)

    # The first rounds: the truncated model's SHAP values.
    np.testing.assert_allclose(
        contrib(num_iteration=4).reshape(n, -1), _truncated(est, 4).predict(X, pred_contrib=True), rtol=1e-12
    )
    for s, e in ((0, 4), (3, 7), (5, N_ROUNDS)):
        c = contrib(iteration_range=(s, e))
        # Each row still sums to the range's raw score (base score kept).
        np.testing.assert_allclose(c.sum(axis=2), raw(iteration_range=(s, e)), rtol=1e-10, atol=1e-10)
    if not kw:
        # Additive over trees: [0, 3) and [3, 9) give the whole model's
        # feature columns; their expected values share one base score.
        first, rest = contrib(iteration_range=(0, 3)), contrib(iteration_range=(3, 0))
        whole = contrib()
        np.testing.assert_allclose(first[:, :, :-1] + rest[:, :, :-1], whole[:, :, :-1], rtol=1e-9, atol=1e-12)
        base = np.asarray(b.base_score)
        np.testing.assert_allclose(first[:, :, -1] + rest[:, :, -1] - base, whole[:, :, -1], rtol=1e-9, atol=1e-12)


def test_the_ranker_takes_the_same_options():
    group = [40] * 10
    grades = np.clip(np.round(X[:, 0] + 1.5), 0, 3).astype(int)
    est = RGBMRanker(n_estimators=N_ROUNDS, **KW).fit(X, grades, group=group)
    staged = list(est.staged_predict(X))
    np.testing.assert_allclose(est.predict(X, num_iteration=5), staged[4], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(est.apply(X, iteration_range=(2, 5)), est.apply(X)[:, 2:5])
    c = est.predict(X, pred_contrib=True, iteration_range=(2, 5))
    np.testing.assert_allclose(c.sum(axis=1), est.predict(X, iteration_range=(2, 5)), rtol=1e-10, atol=1e-10)
    offset = rng.normal(size=len(X))
    np.testing.assert_allclose(est.predict(X, init_score=offset), est.predict(X) + offset, rtol=1e-12)


@pytest.mark.filterwarnings("ignore:The argument .eval_set. is deprecated")
def test_the_default_is_the_best_iteration_as_in_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    y = Y["reg"]
    tr, va = slice(0, 300), slice(300, None)
    ours = RGBMRegressor(n_estimators=300, learning_rate=0.3, early_stopping_rounds=5, random_state=0)
    ours.fit(X[tr], y[tr], eval_set=[(X[va], y[va])])
    theirs = lgb.LGBMRegressor(n_estimators=300, learning_rate=0.3, verbose=-1)
    theirs.fit(X[tr], y[tr], eval_set=[(X[va], y[va])], callbacks=[lgb.early_stopping(5, verbose=False)])
    # Both models end at the best round, best_iteration_ rounds from 1.
    assert ours.best_iteration_ < ours.n_estimators_
    assert theirs.booster_.current_iteration() == theirs.best_iteration_
    assert ours.get_booster().n_rounds == ours.best_iteration_
    for est in (ours, theirs):
        best = est.best_iteration_
        np.testing.assert_array_equal(est.predict(X), est.predict(X, num_iteration=best))
        np.testing.assert_array_equal(est.predict(X), est.predict(X, start_iteration=0, num_iteration=None))
        assert est.predict(X, pred_leaf=True).shape == (len(X), best)
        # num_iteration counts rounds from start_iteration.
        whole = est.predict(X, pred_leaf=True)
        np.testing.assert_array_equal(est.predict(X, pred_leaf=True, start_iteration=2, num_iteration=3), whole[:, 2:5])
    with pytest.raises(ValueError, match="asks for 200 rounds"):
        ours.predict(X, num_iteration=200)  # LightGBM clips it to its trees


def test_a_later_start_keeps_the_base_score_as_xgboost_not_lightgbm():
    # XGBoost adds base_score to any range; LightGBM holds its starting
    # score in the first round's trees, so its start_iteration=1 drops it.
    # Here, as XGBoost: whole = range(0, 1) + range(1, end) - base score.
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    y = Y["reg"]
    ours = RGBMRegressor(n_estimators=6, **KW).fit(X, y)
    base = ours.get_booster().base_score[0]
    np.testing.assert_allclose(
        ours.predict(X), ours.predict(X, iteration_range=(0, 1)) + ours.predict(X, iteration_range=(1, 0)) - base
    )
    xg = xgb.XGBRegressor(n_estimators=6, max_depth=3, base_score=base, n_jobs=1).fit(X, y)
    # (XGBoost's scikit-learn wrapper reads (1, 0) as the whole model: spelt out here.)
    np.testing.assert_allclose(
        xg.predict(X), xg.predict(X, iteration_range=(0, 1)) + xg.predict(X, iteration_range=(1, 6)) - base, rtol=1e-5
    )
    lg = lgb.LGBMRegressor(n_estimators=6, max_depth=3, verbose=-1, n_jobs=1).fit(X, y)
    np.testing.assert_allclose(
        lg.predict(X), lg.predict(X, num_iteration=1) + lg.predict(X, start_iteration=1), rtol=1e-9
    )


def test_a_poisson_model_with_exposure_offsets():
    exposure = rng.uniform(0.5, 4.0, size=len(X))
    counts = rng.poisson(exposure * np.exp(0.4 * X[:, 0] - 0.3 * X[:, 1]))
    offset = np.log(exposure)
    est = RGBMRegressor(loss="poisson", n_estimators=30, **KW).fit(X, counts, init_score=offset)
    # The model's raw score is what it adds to the offset (base score 0).
    assert est.get_booster().base_score == [0.0]
    raw = est.predict(X, pred_contrib=True).sum(axis=1)
    np.testing.assert_allclose(est.predict(X, init_score=offset), np.exp(raw + offset), rtol=1e-12)
    np.testing.assert_allclose(est.predict(X), np.exp(raw), rtol=1e-12)
    np.testing.assert_allclose(est.predict(X, init_score=offset.reshape(-1, 1)), np.exp(raw + offset), rtol=1e-12)
    # The offset goes to the expected-value column of the SHAP values.
    c = est.predict(X, pred_contrib=True, init_score=offset)
    np.testing.assert_allclose(c.sum(axis=1), raw + offset, rtol=1e-12, atol=1e-12)
    # With a range of rounds too.
    ranged = est._output(X, None, iteration_range=(5, 20))
    np.testing.assert_allclose(
        est.predict(X, iteration_range=(5, 20), init_score=offset), np.exp(ranged + offset), rtol=1e-12
    )


@pytest.mark.parametrize("task", ["bin", "multi"])
def test_classifier_offsets_go_before_the_link(task):
    est = _fit(task)
    k = est.get_booster().n_outputs
    offset = rng.normal(size=(len(X), k)) if k > 1 else rng.normal(size=len(X))
    raw = est.decision_function(X) + offset
    np.testing.assert_allclose(est.decision_function(X, init_score=offset), raw, rtol=1e-12)
    proba = est.predict_proba(X, init_score=offset)
    np.testing.assert_allclose(proba, est.get_booster().class_probabilities(raw), rtol=1e-12)
    np.testing.assert_array_equal(est.predict(X, init_score=offset), est.classes_[np.argmax(proba, axis=1)])


@pytest.mark.parametrize(
    "options,error,match",
    [
        ({"iteration_range": (0, N_ROUNDS + 1)}, ValueError, r"iteration_range=\(0, 10\): end 10 is past"),
        ({"iteration_range": (4, 4)}, ValueError, r"iteration_range=\(4, 4\) selects no rounds"),
        ({"iteration_range": (5, 2)}, ValueError, "selects no rounds"),
        ({"iteration_range": (-1, 3)}, ValueError, "iteration_range=.*cannot be negative"),
        ({"iteration_range": (0, 3.0)}, TypeError, r"iteration_range\[1\] must be an int"),
        ({"iteration_range": 3}, TypeError, "iteration_range must be a pair"),
        ({"iteration_range": (1, 2, 3)}, TypeError, "iteration_range must be a pair"),
        ({"start_iteration": -1}, ValueError, "start_iteration must be >= 0"),
        ({"start_iteration": N_ROUNDS}, ValueError, "start_iteration=9 selects no rounds"),
        ({"start_iteration": 1.5}, TypeError, "start_iteration must be an int"),
        ({"start_iteration": None}, TypeError, "start_iteration must be an int"),
        ({"num_iteration": N_ROUNDS + 1}, ValueError, "num_iteration=10 asks for 10 rounds"),
        ({"start_iteration": 5, "num_iteration": 5}, ValueError, "asks for 10 rounds, but the model has 9"),
        ({"num_iteration": "3"}, TypeError, "num_iteration must be an int"),
        ({"num_iteration": True}, TypeError, "num_iteration must be an int"),
        ({"iteration_range": (0, 3), "num_iteration": 2}, ValueError, "not both"),
        ({"iteration_range": (0, 3), "start_iteration": 1}, ValueError, "not both"),
        ({"init_score": np.zeros(5)}, ValueError, r"init_score must have shape \(400, 4\)"),
        ({"init_score": np.zeros(len(X))}, ValueError, r"init_score must have shape \(400, 4\)"),
        ({"init_score": np.zeros((len(X), 3))}, ValueError, "got \\(400, 3\\)"),
        ({"init_score": np.full((len(X), 4), np.inf)}, ValueError, "init_score contains NaN or infinity"),
        ({"init_score": np.array([["a"] * 4] * len(X))}, ValueError, "init_score must be numbers"),
    ],
)
def test_bad_options_are_refused(options, error, match):
    est = _fit("multi")
    methods = ["predict", "predict_proba", "decision_function"]
    if "init_score" not in options:
        methods += ["apply"]
    for method in methods:
        with pytest.raises(error, match=match):
            getattr(est, method)(X, **options)


def test_bad_offsets_for_a_one_output_model():
    est = _fit("poisson")
    for init, match in [
        (np.zeros((len(X), 2)), r"init_score must have shape \(400,\)"),
        (np.zeros(len(X) - 1), r"got \(399,\)"),
        (np.full(len(X), np.nan), "NaN or infinity"),
    ]:
        with pytest.raises(ValueError, match=match):
            est.predict(X, init_score=init)
    with pytest.raises(ValueError, match="init_score does not change which leaf"):
        est.predict(X, pred_leaf=True, init_score=np.zeros(len(X)))


def test_sparse_rows_take_the_same_options():
    sp = pytest.importorskip("scipy.sparse")
    est = _fit("multi")
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    Xd = Xs.toarray()
    offset = rng.normal(size=(len(X), 4))
    options = {"iteration_range": (2, 7), "init_score": offset}
    np.testing.assert_array_equal(est.predict_proba(Xs, **options), est.predict_proba(Xd, **options))
    np.testing.assert_array_equal(
        est.predict(Xs, pred_contrib=True, **options), est.predict(Xd, pred_contrib=True, **options)
    )
