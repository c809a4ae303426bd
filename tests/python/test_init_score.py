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
