"""loss="gaussian": a predicted mean and standard deviation, and SGLB data uncertainty."""

import numpy as np
import pytest

from rgbm_rs import RGBMRegressor, load_model


@pytest.fixture(scope="module")
def heteroscedastic():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(3000, 2))
    scale = 0.1 + 0.3 * (X[:, 1] + 2)
    y = np.sin(X[:, 0]) + scale * rng.normal(size=3000)
    return X, y, scale


def test_mean_and_spread_follow_the_data(heteroscedastic):
    X, y, scale = heteroscedastic
    reg = RGBMRegressor(loss="gaussian", n_estimators=200, max_depth=3, random_state=0).fit(X, y)
    mean, std = reg.predict(X, return_std=True)
    assert np.array_equal(mean, reg.predict(X))
    # Weighting rows by their predicted precision beats least squares under
    # heteroscedastic noise (same trees, same rounds).
    plain = RGBMRegressor(n_estimators=200, max_depth=3, random_state=0).fit(X, y)
    truth = np.sin(X[:, 0])
    assert np.mean((mean - truth) ** 2) < 0.8 * np.mean((plain.predict(X) - truth) ** 2)
    assert np.corrcoef(std, scale)[0, 1] > 0.9
    # Calibration: standardised residuals have roughly unit variance.
    z = (y - mean) / std
    assert 0.8 < z.std() < 1.2
    assert reg.get_booster().n_outputs == 2 and reg.get_booster().n_trees == 400
    assert len(list(reg.staged_predict(X[:5]))) == 200


def test_nll_metric_equals_an_independent_computation(heteroscedastic):
    X, y, _ = heteroscedastic
    reg = RGBMRegressor(loss="gaussian", n_estimators=20, eval_metric=["gaussian_nll", "rmse"], random_state=0)
    reg.fit(X[:2000], y[:2000], eval_set=[(X[2000:], y[2000:])])
    mean, std = reg.predict(X[2000:], return_std=True)
    nll = np.mean(0.5 * np.log(2 * np.pi) + np.log(std) + 0.5 * ((y[2000:] - mean) / std) ** 2)
    assert reg.evals_result_["valid_0"]["gaussian_nll"][-1] == pytest.approx(nll, rel=1e-10)
    assert reg.evals_result_["valid_0"]["rmse"][-1] == pytest.approx(
        np.sqrt(np.mean((y[2000:] - mean) ** 2)), rel=1e-10
    )


def test_sglb_gives_data_and_knowledge_uncertainty():
    # Noise sd 0.1 on the left half, 0.5 on the right; no training data beyond |x| > 1.
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=3000)
    y = np.sin(3 * x) + np.where(x < 0, 0.1, 0.5) * rng.normal(size=3000)
    reg = RGBMRegressor(
        loss="gaussian", langevin=True, temperature=100, n_estimators=400, max_depth=3, random_state=0
    ).fit(x[:, None], y)
    left = reg.predict_uncertainty(np.linspace(-0.8, -0.2, 13)[:, None], n_members=10)
    right = reg.predict_uncertainty(np.linspace(0.2, 0.8, 13)[:, None], n_members=10)
    outside = reg.predict_uncertainty(np.r_[np.linspace(-3, -2, 5), np.linspace(2, 3, 5)][:, None], n_members=10)
    assert set(left) == {"mean", "data", "knowledge", "total"}
    assert np.allclose(left["total"], left["data"] + left["knowledge"])
    # Data uncertainty is the noise variance (0.01 and 0.25), within a factor 1.5.
    assert 0.01 / 1.5 < np.median(left["data"]) < 0.01 * 1.5
    assert 0.25 / 1.5 < np.median(right["data"]) < 0.25 * 1.5
    # The chain's spread of the mean follows the noise: the posterior of the
    # mean is wider where the data are noisier.
    assert right["knowledge"].mean() > 3 * left["knowledge"].mean()
    assert np.all(outside["knowledge"] >= 0)


def test_refusals_and_persistence(tmp_path, heteroscedastic):
    X, y, _ = heteroscedastic
    with pytest.raises(ValueError, match="return_std"):
        RGBMRegressor(n_estimators=3).fit(X, y).predict(X, return_std=True)
    with pytest.raises(ValueError, match="smoothness"):
        RGBMRegressor(loss="gaussian", step="constant", leaf="gradient", n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="rgb"):
        RGBMRegressor(loss="gaussian", booster="rgb", n_estimators=3).fit(X, y)
    reg = RGBMRegressor(loss="gaussian", n_estimators=5, random_state=0).fit(X, y)
    reg.save_model(tmp_path / "g.json")
    back = load_model(tmp_path / "g.json")
    for a, b in zip(back.predict(X, return_std=True), reg.predict(X, return_std=True)):
        assert np.array_equal(a, b)
