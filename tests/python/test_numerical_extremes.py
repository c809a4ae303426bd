"""Extreme but accepted inputs and parameters: a fit gives the model the
documentation promises or raises a clear error, never a silent non-finite or
degenerate model."""

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor

X = np.random.default_rng(0).normal(size=(200, 4))
y = X[:, 0].copy()
yb = (y > 0).astype(int)


# --- AUC on an evaluation set of one class ---------------------------------


@pytest.mark.parametrize("early_stopping_rounds", [None, 5])
def test_auc_on_a_single_class_evaluation_set_is_refused(early_stopping_rounds):
    # sklearn's roc_auc_score raises for one class; so does the fit, before training.
    clf = RGBMClassifier(eval_metric="auc", early_stopping_rounds=early_stopping_rounds)
    with pytest.raises(ValueError, match="AUC is undefined with one class"):
        clf.fit(X, yb, eval_set=[(X[:50], np.ones(50, int))])
    # A class present only with zero weight counts as absent.
    w = (yb[:50] == 1).astype(float)
    with pytest.raises(ValueError, match="class 1 only"):
        clf.fit(X, yb, eval_set=[(X[:50], yb[:50])], eval_sample_weight=[w])


def test_auc_with_both_classes_still_early_stops():
    from sklearn.metrics import roc_auc_score

    Xe, ye = X[:60], yb[:60]
    clf = RGBMClassifier(eval_metric="auc", early_stopping_rounds=3, n_estimators=50).fit(
        X[60:], yb[60:], eval_set=[(Xe, ye)]
    )
    aucs = clf.evals_result_["valid_0"]["auc"]
    assert clf.best_iteration == int(np.argmax(aucs))
    # The kept model is the best round's: its AUC is the recorded best.
    assert roc_auc_score(ye, clf.decision_function(Xe)) == pytest.approx(max(aucs), abs=1e-12)


# --- subsample so small that a draw can be empty ----------------------------


def test_tiny_subsample_trains_on_one_row_not_all():
    tiny = RGBMRegressor(subsample=1e-6, n_estimators=5, random_state=0).fit(X, y)
    full = RGBMRegressor(subsample=1.0, n_estimators=5, random_state=0).fit(X, y)
    assert not np.array_equal(tiny.predict(X), full.predict(X))
    # One row per tree: a single leaf worth 0.1 x that row's residual, so the
    # first round moves every prediction by the same amount.
    first = next(tiny.staged_predict(X))
    assert np.ptp(first) == 0.0
    step = first[0] - y.mean()
    assert np.min(np.abs(0.1 * (y - y.mean()) - step)) < 1e-12


# --- the scale of sample weights ----------------------------------------------


@pytest.mark.parametrize("c", [1e-100, 1e-10, 1e10, 1e160, 1e300])
def test_weights_times_a_constant_give_the_same_model(c):
    w = np.random.default_rng(1).uniform(0.2, 3.0, size=200)
    ref = RGBMRegressor(reg_lambda=2.0, min_child_weight=3.0, random_state=0).fit(X, y, sample_weight=w)
    got = RGBMRegressor(reg_lambda=2.0, min_child_weight=3.0, random_state=0).fit(X, y, sample_weight=c * w)
    np.testing.assert_allclose(got.predict(X), ref.predict(X), rtol=1e-9, atol=1e-12)
    assert np.mean((got.predict(X) - y) ** 2) < 0.05


def test_huge_weights_with_large_targets_stay_finite():
    plain = RGBMRegressor(random_state=0).fit(X, y * 1e10)
    heavy = RGBMRegressor(random_state=0).fit(X, y * 1e10, sample_weight=np.full(200, 1e300))
    # Equal weights are no weights: the same model up to rounding, finite.
    np.testing.assert_allclose(heavy.predict(X), plain.predict(X), rtol=1e-12)


def test_weights_whose_sum_overflows_are_accepted():
    w = np.full(200, 1e308)
    m = RGBMRegressor(random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(m.predict(X), RGBMRegressor(random_state=0).fit(X, y).predict(X), rtol=1e-12, atol=1e-14)


# --- fits that diverge, and degenerate classes --------------------------------


@pytest.mark.parametrize(
    "params",
    [dict(loss="gaussian", learning_rate=1000), dict(learning_rate=1e100)],
    ids=["gaussian_lr1000", "lr1e100"],
)
def test_a_diverging_fit_raises_instead_of_returning_nan(params):
    with pytest.raises(ValueError, match=r"diverged in round \d+.*smaller learning_rate"):
        RGBMRegressor(**params).fit(X, y)


def test_langevin_noise_that_overflows_is_refused():
    with pytest.raises(ValueError, match="temperature"):
        RGBMRegressor(langevin=True, temperature=5e-324).fit(X, y)
    with pytest.raises(ValueError, match="min_child_weight"):
        RGBMClassifier(langevin=True, min_child_weight=0.0).fit(X, yb)


def test_a_class_whose_rows_all_weigh_zero_is_refused():
    # Unrefused, SGLB gives such a fit leaf values of 1e24 and predicts the zero-weight class everywhere.
    w = np.where(yb == 0, 0.0, 1.0)
    for langevin in (False, True):
        with pytest.raises(ValueError, match="class 0 has no rows of positive sample_weight"):
            RGBMClassifier(langevin=langevin, random_state=0).fit(X, yb, sample_weight=w)


def test_sglb_on_separable_data_stays_bounded():
    # A root that cannot split has a tiny hessian sum once rows are confidently
    # classified; its leaf noise is that of a leaf at min_child_weight.
    clf = RGBMClassifier(langevin=True, learning_rate=1.0, n_estimators=300, random_state=0).fit(X, yb)
    assert np.abs(clf.decision_function(X)).max() < 100
    assert (clf.predict(X) == yb).mean() == 1.0


def test_targets_that_differ_by_less_than_1e_150_are_refused():
    for loss in ("squared", "huber", "gaussian"):
        with pytest.raises(ValueError, match="rescale y"):
            RGBMRegressor(loss=loss).fit(X, y * 1e-200)
    # So are targets beyond 1e150 (squared residuals would overflow), in evaluation sets too.
    with pytest.raises(ValueError, match="1e200 at index 0.*rescale y"):
        RGBMRegressor().fit(X, np.r_[1e200, y[1:]])
    with pytest.raises(ValueError, match='evaluation set "valid_0".*rescale y'):
        RGBMRegressor().fit(X, y, eval_set=[(X, np.r_[-1e200, y[1:]])])
    # Constant targets are fine: the model predicts the constant.
    np.testing.assert_array_equal(RGBMRegressor().fit(X, np.full(200, 3.7)).predict(X), 3.7)


def test_line_search_learning_rate_above_one_is_refused():
    with pytest.raises(ValueError, match="must be <= 1"):
        RGBMRegressor(step="line_search", learning_rate=50).fit(X, y)


# --- strong model shrinkage ------------------------------------------------


def test_staged_predictions_under_strong_shrinkage():
    # q = 1 - 9.99 * 0.1 = 0.001: after 50 rounds the first tree is stored
    # scaled by 1e-147, which can still be undone; after 200 rounds by 1e-597,
    # below the float range, and the early models are lost.
    kept = RGBMRegressor(n_estimators=50, shrink_rate=9.99, random_state=0).fit(X, y)
    staged = list(kept.staged_predict(X))
    assert len(staged) == 50 and all(np.all(np.isfinite(s)) for s in staged)
    np.testing.assert_allclose(staged[-1], kept.predict(X), rtol=1e-12, atol=1e-12)
    # Each stage is the model a shorter fit gives (rounds do not depend on later ones).
    for rounds in (1, 10):
        short = RGBMRegressor(n_estimators=rounds, shrink_rate=9.99, random_state=0).fit(X, y)
        np.testing.assert_allclose(staged[rounds - 1], short.predict(X), rtol=1e-9, atol=1e-12)
    lost = RGBMRegressor(n_estimators=200, shrink_rate=9.99, random_state=0).fit(X, y)
    assert np.all(np.isfinite(lost.predict(X)))
    with pytest.raises(ValueError, match=r"undoing the shrinkage of 199 rounds overflows"):
        next(lost.staged_predict(X))
