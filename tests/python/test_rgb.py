"""RGB through the scikit-learn estimators."""

import json

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model


def test_rgb_classifier_learns_and_reports_families(tmp_path):
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0, stratify=y)
    clf = RGBMClassifier(booster="rgb", n_estimators=60, max_depth=None, rgb_beta=0.01, random_state=0).fit(Xtr, ytr)
    assert clf.score(Xte, yte) > 0.9
    counts = clf.rgb_family_counts_
    assert sum(counts.values()) == 60
    assert all(n in (2, 4, 8, 16, 32, 64, 256) and lam in (0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0) for n, lam in counts)
    path = tmp_path / "rgb.json"
    clf.save_model(path)
    np.testing.assert_array_equal(load_model(path).predict_proba(Xte), clf.predict_proba(Xte))


def test_rgb_regressor_custom_grid_and_determinism():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 4))
    y = X[:, 0] - 2 * X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=800)
    fits = [
        RGBMRegressor(
            booster="rgb",
            n_estimators=60,
            max_depth=None,
            rgb_nodes=[1, 3, 7],
            rgb_lambdas=[0.1, 1.0],
            rgb_candidates=3,
            random_state=1,
            n_jobs=n,
        ).fit(X, y)
        for n in (1, 2)
    ]
    assert json.dumps(fits[0]._to_document()["model"]["trees"]) == json.dumps(fits[1]._to_document()["model"]["trees"])
    assert fits[0].score(X, y) > 0.5
    assert set(fits[0].training_log_["rgb_nodes"]) <= {1, 3, 7}


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"booster": "xgb"}, "booster"),
        ({"booster": "rgb", "rgb_candidates": 0}, "rgb_candidates"),
        ({"booster": "rgb", "rgb_beta": -1}, "rgb_beta"),
        ({"booster": "rgb", "rgb_lambdas": [0.0]}, "rgb_lambdas"),
        ({"booster": "rgb", "rgb_nodes": []}, "rgb_nodes"),
        ({"booster": "rgb", "loss": "exponential"}, "loss"),
        ({"booster": "rgb", "langevin": True}, "langevin"),
        ({"booster": "rgb", "max_leaves": 8}, "max_leaves"),
        ({"rgb_nodes": [2]}, "rgb_nodes"),
        ({"rgb_step": "exact"}, "rgb_step"),
        ({"rgb_penalty": "weighted"}, "rgb_penalty"),
        ({"booster": "rgb", "rgb_step": "nesterov"}, "rgb_step"),
        ({"booster": "rgb", "rgb_penalty": "eq7"}, "rgb_penalty"),
    ],
)
def test_invalid_rgb_parameters(params, fragment):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=fragment):
        RGBMClassifier(n_estimators=2, **params).fit(X, y)


def test_lambda_acts_through_the_lipschitz_step_and_the_model_says_so(tmp_path):
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)

    def fit(step, lam):
        return RGBMClassifier(
            booster="rgb", rgb_step=step, rgb_lambdas=[lam], n_estimators=20, max_depth=None, random_state=0
        ).fit(X, y)

    exact = [fit("exact", lam).decision_function(X) for lam in (0.01, 1.0)]
    np.testing.assert_allclose(exact[0], exact[1], rtol=0, atol=1e-9)
    lipschitz = [fit(None, lam) for lam in (0.01, 1.0)]
    assert np.abs(lipschitz[0].decision_function(X) - lipschitz[1].decision_function(X)).max() > 0.1
    params = json.loads(lipschitz[0].get_booster().params_json())
    assert (params["rgb_step"], params["rgb_penalty"]) == ("lipschitz", "per_candidate")


def test_radii_above_one_overshoot_the_squared_loss_and_a_divergence_says_what_to_change():
    # The Lipschitz step moves lambda * G_l / (m sigma): for lambda > 1 it can exceed
    # the squared loss's curvature and diverge, as a too-large learning rate does.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = 10 * X[:, 0] + rng.normal(size=400)
    fit = dict(booster="rgb", max_depth=None, rgb_nodes=[1], record_train_loss=True, random_state=0)
    small = RGBMRegressor(n_estimators=30, rgb_lambdas=[1.0], **fit).fit(X, y)
    assert np.all(np.diff(small.training_log_["train_loss"]) <= 1e-9)
    with pytest.raises(ValueError, match="rgb_lambdas .at most 1. or rgb_step='exact'"):
        RGBMRegressor(n_estimators=3000, rgb_lambdas=[8.0], **fit).fit(X, y)
    exact = RGBMRegressor(n_estimators=30, rgb_lambdas=[8.0], rgb_step="exact", **fit).fit(X, y)
    assert np.all(np.diff(exact.training_log_["train_loss"]) <= 1e-9)
