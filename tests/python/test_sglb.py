"""SGLB options through the scikit-learn estimators."""

import json

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1200, 3))
    y = (np.sin(X[:, 0] * X[:, 1] * X[:, 2]) + rng.normal(size=1200) > 0).astype(int)
    return X, y


def test_staged_predictions_are_the_models_after_each_round(data):
    X, y = data
    params = dict(langevin=True, temperature=1e3, shrink_rate=0.2, learning_rate=0.3, max_depth=2, random_state=1)
    full = RGBMClassifier(n_estimators=6, **params).fit(X, y)
    stages = list(full.staged_decision_function(X))
    for k in (1, 3, 6):
        shorter = RGBMClassifier(n_estimators=k, **params).fit(X, y)
        np.testing.assert_allclose(stages[k - 1], shorter.decision_function(X), rtol=1e-10, atol=1e-12)


def test_sla01_with_langevin(data):
    X, y = data
    clf = RGBMClassifier(
        n_estimators=100,
        loss="sla01",
        sla_scale=0.1,
        gain="gradient",
        leaf="gradient",
        langevin=True,
        temperature=1e3,
        max_depth=1,
        max_bins=5,
        random_state=0,
    ).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    raw = clf.decision_function(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-raw / 0.1)))
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(raw > 0).astype(int)])


@pytest.mark.parametrize(
    "extra",
    [{}, {"subsample": 0.5}, {"selection": "groups", "selection_size": 2}, {"max_depth": None, "max_leaves": 6}],
)
def test_langevin_is_reproducible_and_seeded(data, extra):
    X, y = data
    fits = [RGBMClassifier(n_estimators=8, langevin=True, random_state=3, n_jobs=n, **extra).fit(X, y) for n in (1, 2)]
    trees = [json.dumps(f._to_document()["model"]["trees"]) for f in fits]
    assert trees[0] == trees[1]
    other = RGBMClassifier(n_estimators=8, langevin=True, random_state=4, **extra).fit(X, y)
    assert json.dumps(other._to_document()["model"]["trees"]) != trees[0]


def test_langevin_regression_and_persistence(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=800)
    reg = RGBMRegressor(n_estimators=50, langevin=True, temperature=1e4, random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.8
    path = tmp_path / "sglb.json"
    reg.save_model(path)
    from rgbm_rs import load_model

    again = load_model(path)
    np.testing.assert_array_equal(again.predict(X), reg.predict(X))
    np.testing.assert_allclose(list(again.staged_predict(X))[-1], reg.predict(X), rtol=1e-12)


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"langevin": True, "temperature": 0.0}, "temperature"),
        ({"langevin": True, "temperature": -5}, "temperature"),
        ({"shrink_rate": -0.1}, "shrink_rate"),
        ({"shrink_rate": 20.0, "learning_rate": 0.1}, "shrink_rate"),
        ({"langevin": True, "step": "line_search"}, "step"),
        ({"loss": "sla01"}, "gradient"),
        ({"loss": "sla01", "gain": "gradient", "leaf": "gradient", "sla_scale": 0}, "sla_scale"),
    ],
)
def test_invalid_sglb_parameters(data, params, fragment):
    X, y = data
    with pytest.raises(ValueError, match=fragment):
        RGBMClassifier(n_estimators=2, **params).fit(X, y)


def test_knowledge_uncertainty_grows_away_from_the_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(2000, 1))
    y = np.sin(3 * X[:, 0]) + 0.3 * rng.normal(size=2000)
    reg = RGBMRegressor(n_estimators=400, langevin=True, temperature=100, max_depth=3, random_state=0).fit(X, y)
    inside = reg.predict_uncertainty(np.linspace(-0.6, 0.6, 25)[:, None], n_members=10)
    outside = reg.predict_uncertainty(np.r_[np.linspace(-3, -2, 5), np.linspace(2, 3, 5)][:, None], n_members=10)
    assert outside["knowledge"].mean() > 3 * inside["knowledge"].mean()
    np.testing.assert_allclose(inside["mean"], reg.predict(np.linspace(-0.6, 0.6, 25)[:, None]), atol=0.1)


def test_classifier_uncertainty_is_entropy_based(data):
    X, y = data
    clf = RGBMClassifier(n_estimators=60, langevin=True, temperature=1e3, random_state=0).fit(X, y)
    u = clf.predict_uncertainty(X[:50], n_members=5)
    assert set(u) == {"proba", "total", "data", "knowledge"}
    np.testing.assert_allclose(u["total"], u["data"] + u["knowledge"], atol=1e-12)
    assert np.all(u["knowledge"] >= 0) and np.all(u["total"] <= np.log(2) + 1e-12)
    with pytest.raises(ValueError, match="n_members"):
        clf.predict_uncertainty(X, n_members=100)
    with pytest.raises(TypeError):
        clf.predict_uncertainty(X, n_members=2.5)


def test_sla01_splits_are_not_blocked_by_negative_hessians():
    # Four cells; by the first-order gain G²/W feature 0 (26.5) beats feature 1 (24.2),
    # but feature 0's left child has a negative hessian sum under the sla01 loss.
    counts = {(0, 0): (6, 5), (0, 1): (15, 32), (1, 0): (37, 58), (1, 1): (47, 20)}
    X, y = [], []
    for (a, b), (n0, n1) in counts.items():
        X += [[a, b]] * (n0 + n1)
        y += [0] * n0 + [1] * n1
    X, y = np.array(X, float), np.array(y)
    kw = dict(
        loss="sla01",
        sla_scale=0.1,
        gain="gradient",
        leaf="gradient",
        max_depth=1,
        learning_rate=0.1,
        init="zero",
        min_samples_leaf=1,
        min_child_weight=0.0,
        n_jobs=1,
    )
    clf = RGBMClassifier(n_estimators=2, **kw).fit(X, y)
    trees = json.loads(clf._booster.to_json())["trees"]
    assert trees[1]["feature"] == [0]


def test_leaf_noise_only_keeps_the_clean_splits_and_split_subsampling_uses_every_row():
    from sklearn.datasets import make_classification

    X, y = make_classification(1500, 6, random_state=3)
    plain = RGBMClassifier(n_estimators=1, random_state=2).fit(X, y).dump_model()["trees"][0]["tree"]
    noisy = RGBMClassifier(n_estimators=1, random_state=2, langevin=True, langevin_split_noise=False).fit(X, y)
    noisy = noisy.dump_model()["trees"][0]["tree"]

    def splits(node):
        if "leaf_index" in node:
            return []
        return [(node["split_feature"], node["threshold"])] + splits(node["left"]) + splits(node["right"])

    def leaves(node):
        return [node["value"]] if "leaf_index" in node else leaves(node["left"]) + leaves(node["right"])

    assert splits(plain) == splits(noisy) and leaves(plain) != leaves(noisy)
    # subsample_for="split": the same splits as "tree", leaves from every row.
    fits = {
        s: RGBMRegressor(n_estimators=1, subsample=0.3, subsample_for=s, random_state=1).fit(X, y.astype(float))
        for s in ("tree", "split")
    }
    trees = {s: f.dump_model()["trees"][0]["tree"] for s, f in fits.items()}
    assert splits(trees["tree"]) == splits(trees["split"]) and leaves(trees["tree"]) != leaves(trees["split"])
