"""The regression objectives absolute_error, quantile, poisson, gamma and
tweedie: closed-form starting constants, leaves re-estimated as quantiles
(checked against numpy), held-out quantile coverage, the log link, their
metrics, refusal of targets outside their domain, and deviance against
LightGBM on the same data."""

import numpy as np
import pytest

from rgbm_rs import RGBMRegressor, _core

rng = np.random.default_rng(7)
N = 4000
X = rng.normal(size=(2 * N, 5))
MU = np.exp(0.5 * X[:, 0] - 0.3 * X[:, 1] + 0.2 * X[:, 2] * X[:, 3])
COUNTS = rng.poisson(MU).astype(float)
AMOUNTS = rng.gamma(2.0, MU / 2.0)


def _compound(r, mu):
    """Compound Poisson-Gamma amounts (Tweedie, exact zeros): k ~ Poisson,
    the sum of k Gamma(1.5, 0.8) claims is Gamma(1.5 k, 0.8)."""
    k = r.poisson(0.8 * mu)
    return np.where(k > 0, r.gamma(np.maximum(1.5 * k, 1e-12), 0.8), 0.0)


CLAIMS = _compound(rng, MU)
NOISY = X[:, 0] + (1 + np.abs(X[:, 1])) * rng.normal(size=2 * N)
LOG_LINK = {"poisson": COUNTS, "gamma": AMOUNTS, "tweedie": CLAIMS}
W = rng.uniform(0.2, 3.0, size=2 * N)


def _lower_quantile(values, weights, alpha):
    """Smallest value whose cumulative weight reaches alpha of the total."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    return values[order][np.searchsorted(cum, alpha * cum[-1] * (1 - 1e-15))]


@pytest.mark.parametrize("loss", sorted(LOG_LINK))
def test_log_link_start_is_log_weighted_mean_and_predict_is_exp(loss):
    y = LOG_LINK[loss]
    est = RGBMRegressor(loss=loss, n_estimators=20, random_state=0).fit(X, y, sample_weight=W)
    np.testing.assert_allclose(est._booster.base_score[0], np.log(np.average(y, weights=W)), rtol=1e-12)
    raw = est._raw(X[:50])
    np.testing.assert_allclose(est.predict(X[:50]), np.exp(raw), rtol=1e-15)
    staged = list(est.staged_predict(X[:50]))
    np.testing.assert_allclose(staged[-1], est.predict(X[:50]), rtol=1e-14)
    assert list(est.fit(X, y, eval_set=[(X, y)]).evals_result_["training"]) == [loss]


@pytest.mark.parametrize("loss,alpha", [("absolute_error", 0.5), ("quantile", 0.3), ("quantile", 0.9)])
def test_start_and_leaves_are_weighted_quantiles(loss, alpha):
    kw = {"alpha": alpha} if loss == "quantile" else {}
    # One round, learning_rate 1: every prediction is base + its leaf, and
    # the leaf is the alpha-quantile of y - base over the leaf's rows.
    est = RGBMRegressor(loss=loss, n_estimators=1, learning_rate=1.0, max_depth=2, random_state=0, **kw)
    est.fit(X, NOISY, sample_weight=W)
    assert est._booster.base_score[0] == _lower_quantile(NOISY, W, alpha)
    pred = est.predict(X)
    leaves = np.unique(pred)
    assert 2 <= len(leaves) <= 4
    for value in leaves:
        rows = pred == value
        np.testing.assert_allclose(value, _lower_quantile(NOISY[rows], W[rows], alpha), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9])
def test_quantile_coverage_on_held_out_rows(alpha):
    # Exact in sample by construction; held out it drifts towards 1/2 as the
    # trees fit noise, so the fit is regularised and the sample large.
    n = 20_000
    x = rng.normal(size=(2 * n, 5))
    y = x[:, 0] + (1 + np.abs(x[:, 1])) * rng.normal(size=2 * n)
    est = RGBMRegressor(
        loss="quantile", alpha=alpha, n_estimators=300, learning_rate=0.05, min_samples_leaf=200, random_state=0
    )
    est.fit(x[:n], y[:n])
    coverage = np.mean(y[n:] <= est.predict(x[n:]))
    assert abs(coverage - alpha) <= 0.02, coverage


def test_quantile_without_alpha_predicts_lightgbms_default_quantile():
    # LightGBM's (and GradientBoostingRegressor's) alpha defaults to 0.9.
    y = X[:, 0] + rng.normal(size=2 * N)
    params = dict(loss="quantile", n_estimators=30, random_state=0)
    default = RGBMRegressor(**params).fit(X, y)
    np.testing.assert_array_equal(default.predict(X), RGBMRegressor(alpha=0.9, **params).fit(X, y).predict(X))
    coverage = np.mean(y <= default.predict(X))
    assert abs(coverage - 0.9) <= 0.02, coverage


def test_absolute_error_beats_squared_on_heavy_tails():
    y = X[:, 0] + rng.standard_t(df=1.5, size=2 * N)
    mae = {
        loss: np.mean(
            np.abs(y[N:] - RGBMRegressor(loss=loss, n_estimators=100, random_state=0).fit(X[:N], y[:N]).predict(X[N:]))
        )
        for loss in ("absolute_error", "squared")
    }
    assert mae["absolute_error"] < mae["squared"]


def test_metrics_of_the_new_losses_are_their_mean_losses():
    y = COUNTS
    est = RGBMRegressor(loss="poisson", n_estimators=5, eval_metric=["poisson", "rmse", "mae"], random_state=0)
    est.fit(X, y, eval_set=[(X, y)])
    mu = est.predict(X)
    got = {m: v[-1] for m, v in est.evals_result_["training"].items()}
    np.testing.assert_allclose(got["poisson"], np.mean(mu - y * np.log(mu)), rtol=1e-10)
    np.testing.assert_allclose(got["rmse"], np.sqrt(np.mean((y - mu) ** 2)), rtol=1e-10)
    np.testing.assert_allclose(got["mae"], np.mean(np.abs(y - mu)), rtol=1e-10)
    assert _core.metrics_for("quantile")[0] == "quantile"


@pytest.mark.parametrize(
    "loss,y,match",
    [
        ("poisson", -COUNTS - 1, "loss='poisson' needs counts >= 0"),
        ("tweedie", CLAIMS - 5, "loss='tweedie' needs targets >= 0"),
        ("gamma", COUNTS, "loss='gamma' needs targets > 0"),
        ("poisson", np.zeros(2 * N), "at least one target must be positive"),
    ],
)
def test_targets_outside_the_domain_are_refused(loss, y, match):
    with pytest.raises(ValueError, match=match):
        RGBMRegressor(loss=loss, n_estimators=2).fit(X, y)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"loss": "quantile", "alpha": 1.0}, "'alpha' parameter of RGBMRegressor must be"),
        ({"loss": "tweedie", "tweedie_variance_power": 2.0}, "'tweedie_variance_power' parameter"),
        ({"loss": "poisson", "step": "constant", "leaf": "gradient", "gain": "gradient"}, "smooth"),
        ({"loss": "quantile", "alpha": 0.5, "langevin": True}, "quantiles of the residuals"),
        ({"loss": "gamma", "booster": "rgb"}, "coordinate step"),
    ],
)
def test_bad_combinations_are_refused(params, match):
    with pytest.raises(ValueError, match=match):
        RGBMRegressor(n_estimators=2, **params).fit(X, AMOUNTS)


def test_other_losses_ignore_alpha_and_the_tweedie_power():
    # As scikit-learn's GradientBoostingRegressor and LightGBM do (and as
    # scikit-learn's estimator checks expect of a parameter named alpha).
    plain = RGBMRegressor(loss="gamma", n_estimators=3, random_state=0).fit(X, AMOUNTS)
    extra = RGBMRegressor(loss="gamma", n_estimators=3, random_state=0, alpha=0.3, tweedie_variance_power=1.2)
    assert extra.fit(X, AMOUNTS).dump_model() == plain.dump_model()


def test_sglb_composes_with_a_log_link():
    est = RGBMRegressor(loss="tweedie", langevin=True, n_estimators=40, random_state=0).fit(X, CLAIMS)
    u = est.predict_uncertainty(X[:100], n_members=5)
    assert np.all(u["mean"] > 0) and np.all(u["knowledge"] >= 0)


@pytest.mark.parametrize("loss", sorted(LOG_LINK))
def test_deviance_matches_lightgbm(loss):
    lgb = pytest.importorskip("lightgbm")
    from sklearn.metrics import mean_tweedie_deviance

    # Enough rows that neither library is deep in overfitting after 150
    # rounds (with 4000 rows both are, and the comparison measures noise).
    n = 20_000
    r = np.random.default_rng(0)
    x = r.normal(size=(2 * n, 6))
    mu = np.exp(0.5 * x[:, 0] - 0.3 * x[:, 1] + 0.2 * x[:, 2] * x[:, 3])
    if loss == "poisson":
        y = r.poisson(mu).astype(float)
    elif loss == "gamma":
        y = r.gamma(2.0, mu / 2.0)
    else:
        y = _compound(r, mu)
    power = {"poisson": 1.0, "gamma": 2.0, "tweedie": 1.5}[loss]
    ours = RGBMRegressor(loss=loss, n_estimators=150, max_depth=None, max_leaves=31, random_state=0)
    theirs = lgb.LGBMRegressor(objective=loss, n_estimators=150, verbose=-1, random_state=0, n_jobs=1)
    dev = {
        name: mean_tweedie_deviance(y[n:], m.fit(x[:n], y[:n]).predict(x[n:]), power=power)
        for name, m in (("ours", ours), ("lightgbm", theirs))
    }
    assert dev["ours"] <= 1.02 * dev["lightgbm"], dev
