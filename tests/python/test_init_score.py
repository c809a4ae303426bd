"""init_score: a fit from given raw starting scores continues where another
model stopped (checked against one long fit), eval sets start from theirs,
and bad shapes or values are refused."""

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor

rng = np.random.default_rng(11)
X = rng.normal(size=(600, 4))
Y = {
    "reg": X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.1 * rng.normal(size=600),
    "bin": (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int),
    "multi": np.digitize(X[:, 0] + 0.5 * X[:, 2], [-0.7, 0.0, 0.7]),
}
KW = dict(max_depth=3, learning_rate=0.1, random_state=0)


def _estimator(task, **kw):
    return RGBMRegressor(**KW, **kw) if task == "reg" else RGBMClassifier(**KW, **kw)


@pytest.mark.parametrize("task", sorted(Y))
def test_a_fit_from_another_models_scores_continues_it(task):
    y = Y[task]
    whole = _estimator(task, n_estimators=30).fit(X, y)
    first = _estimator(task, n_estimators=18).fit(X, y)
    start = first._raw(X)
    rest = _estimator(task, n_estimators=12).fit(X, y, init_score=start)
    # The continuation's base score is 0: its raw output is what it adds.
    np.testing.assert_allclose(start + rest._raw(X), whole._raw(X), rtol=1e-9, atol=1e-9)


def test_eval_sets_start_from_their_init_score():
    y = Y["reg"]
    first = _estimator("reg", n_estimators=10).fit(X[:400], y[:400])
    start, start_val = first._raw(X[:400]), first._raw(X[400:])
    est = _estimator("reg", n_estimators=5, eval_metric="l2")
    est.fit(X[:400], y[:400], init_score=start, eval_set=[(X[400:], y[400:])], eval_init_score=[start_val])
    total = start_val + est._raw(X[400:])
    np.testing.assert_allclose(est.evals_result_["valid_0"]["l2"][-1], np.mean((y[400:] - total) ** 2), rtol=1e-10)


def test_init_score_splits_with_validation_fraction():
    y = Y["bin"]
    offset = np.where(X[:, 3] > 0, 2.0, -2.0)
    est = _estimator("bin", n_estimators=3, validation_fraction=0.25).fit(X, y, init_score=offset)
    assert len(est.evals_result_["validation"]["logloss"]) == 3


@pytest.mark.parametrize(
    "task,init,match",
    [
        ("reg", np.zeros(599), r"init_score must have shape \(600,\)"),
        ("reg", np.full(600, np.nan), "init_score contains NaN"),
        ("multi", np.zeros(600), "init_score has 600 values, but 600 rows"),
        ("multi", np.zeros((600, 3)), "init_score has 1800 values, but 600 rows"),
        ("reg", np.zeros((600, 2, 1)), "init_score must have shape"),
    ],
)
def test_bad_init_score_is_refused(task, init, match):
    with pytest.raises(ValueError, match=match):
        _estimator(task, n_estimators=2).fit(X, Y[task], init_score=init)


def test_eval_init_score_needs_matching_eval_sets():
    y = Y["reg"]
    with pytest.raises(ValueError, match="eval_init_score must be a list of 1"):
        _estimator("reg", n_estimators=2).fit(X, y, eval_set=[(X, y)], eval_init_score=[None, None])
    with pytest.raises(ValueError, match="eval_init_score needs eval_set"):
        _estimator("reg", n_estimators=2).fit(X, y, eval_init_score=[np.zeros(600)])


@pytest.mark.parametrize("task", sorted(Y))
def test_init_model_continues_a_model(task, tmp_path):
    y = Y[task]
    whole = _estimator(task, n_estimators=30).fit(X, y)
    first = _estimator(task, n_estimators=18).fit(X, y)
    path = tmp_path / "first.json"
    first.save_model(path)
    for init_model in (first, first.get_booster(), str(path)):
        more = _estimator(task, n_estimators=12).fit(X, y, init_model=init_model)
        assert more.n_estimators_ == 30 and more.get_booster().n_rounds == 30
        np.testing.assert_allclose(more._raw(X), whole._raw(X), rtol=1e-9, atol=1e-9)
        staged = list(more.staged_predict(X))
        assert len(staged) == 30


def test_warm_start_adds_rounds_up_to_n_estimators():
    y = Y["bin"]
    whole = _estimator("bin", n_estimators=25).fit(X, y)
    est = _estimator("bin", n_estimators=10, warm_start=True).fit(X, y)
    est.set_params(n_estimators=25).fit(X, y)
    assert est.n_estimators_ == 25
    np.testing.assert_allclose(est.predict_proba(X), whole.predict_proba(X), rtol=1e-9, atol=1e-12)
    before = est.dump_model()
    est.fit(X, y)  # nothing to add
    assert est.dump_model() == before
    with pytest.raises(ValueError, match="below the 25 rounds already fitted"):
        est.set_params(n_estimators=5).fit(X, y)
    # A failed continuation keeps the fitted model.
    assert est.dump_model() == before


def test_early_stopping_in_a_continuation_counts_all_rounds():
    y = Y["reg"]
    first = _estimator("reg", n_estimators=5).fit(X[:400], y[:400])
    more = RGBMRegressor(n_estimators=200, early_stopping_rounds=3, learning_rate=0.5, max_depth=3, random_state=0)
    more.fit(X[:400], y[:400], init_model=first, eval_set=[(X[400:], y[400:])])
    assert more.best_iteration_ >= 6 and more.get_booster().n_rounds == more.best_iteration_


@pytest.mark.parametrize(
    "first_kw,init_model_of,error,match",
    [
        ({}, lambda m: 42, TypeError, "init_model must be a path"),
        ({}, lambda m: "/nonexistent/model.json", OSError, "model.json"),
        ({}, lambda m: RGBMClassifier(n_estimators=2).fit(X, Y["bin"]), TypeError, "is a RGBMClassifier"),
        ({"loss": "huber"}, lambda m: m, ValueError, "loss 'huber'"),
        ({"shrink_rate": 0.01}, lambda m: m, ValueError, "model shrinkage"),
    ],
)
def test_bad_init_models_are_refused(first_kw, init_model_of, error, match):
    first = RGBMRegressor(n_estimators=3, **first_kw).fit(X, Y["reg"])
    with pytest.raises(error, match=match):
        RGBMRegressor(n_estimators=2).fit(X, Y["reg"], init_model=init_model_of(first))


def test_init_model_classes_must_match():
    first = RGBMClassifier(n_estimators=3).fit(X, Y["bin"])
    with pytest.raises(ValueError, match="fitted on classes"):
        RGBMClassifier(n_estimators=2).fit(X, Y["bin"] + 5, init_model=first)
