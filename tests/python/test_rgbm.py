"""RGBM options through the scikit-learn estimators."""

import json

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor


@pytest.fixture
def wide():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1500, 12))
    y = X[:, 0] * 2 + np.sin(3 * X[:, 5]) + 0.5 * X[:, 9] + 0.1 * rng.normal(size=1500)
    return X, y


def test_groups_selection_searches_t_features_per_round(wide):
    X, y = wide
    reg = RGBMRegressor(n_estimators=30, selection="groups", selection_size=3, random_state=0).fit(X, y)
    assert reg.training_log_["features_searched"] == [3] * 30
    assert len(reg.training_log_["seconds"]) == 30
    assert all(s >= 0 for s in reg.training_log_["seconds"])
    # Still learns: far better than predicting the mean.
    assert reg.score(X, y) > 0.8


def test_user_groups_and_random_splits(wide):
    X, y = wide
    groups = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    reg = RGBMRegressor(n_estimators=20, selection="group", groups=groups, random_state=0).fit(X, y)
    searched = reg.training_log_["features_searched"]
    assert set(searched) == {4}
    for f in reg.training_log_["root_feature"]:
        assert f is None or 0 <= f < 12
    reg = RGBMRegressor(n_estimators=20, selection="random", selection_size=0.05, random_state=0).fit(X, y)
    assert max(reg.training_log_["features_searched"]) <= 12


@pytest.mark.parametrize("scope", ["tree", "node"])
@pytest.mark.parametrize("selection,size", [("random", 10), ("group", None), ("groups", 0.25)])
def test_selection_is_reproducible_for_any_thread_count(wide, scope, selection, size):
    X, y = wide
    fits = [
        RGBMRegressor(
            n_estimators=10, selection=selection, selection_size=size, selection_scope=scope, random_state=4, n_jobs=n
        ).fit(X, y)
        for n in (1, 2)
    ]
    trees = [json.dumps(f._to_document()["model"]["trees"]) for f in fits]
    assert trees[0] == trees[1]


def test_constant_step_decreases_logistic_training_loss(wide):
    X, y = wide
    labels = (y > np.median(y)).astype(int)
    clf = RGBMClassifier(
        n_estimators=40,
        step="constant",
        leaf="gradient",
        gain="gradient",
        logistic_reg=1e-4,
        selection="groups",
        selection_size=4,
        init="zero",
        record_train_loss=True,
        random_state=0,
    ).fit(X, labels)
    loss = clf.training_log_["train_loss"]
    assert all(b <= a + 1e-12 for a, b in zip(loss, loss[1:]))
    assert clf.training_log_["step"][0] == pytest.approx(1 / (0.25 + 1e-4))
    assert loss[-1] < 0.5


def test_line_search_step_is_recorded(wide):
    X, y = wide
    labels = (y > 0).astype(int)
    clf = RGBMClassifier(n_estimators=5, step="line_search", learning_rate=0.5, random_state=0).fit(X, labels)
    assert all(s > 0 for s in clf.training_log_["step"])
    assert clf.training_log_["train_loss"] == [None] * 5


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"selection": "groups"}, "selection_size"),
        ({"selection": "random"}, "selection_size"),
        ({"selection": "full", "selection_size": 3}, "selection_size"),
        ({"selection": "groups", "selection_size": 13}, "selection_size"),
        ({"selection": "groups", "selection_size": 0}, "selection_size"),
        ({"selection": "groups", "selection_size": 1.5}, "selection_size"),
        ({"selection": "group", "groups": [[0, 1], [1, 2]]}, "groups"),
        ({"selection": "group", "groups": [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]]}, "groups"),
        ({"selection": "group", "groups": [["a"]]}, "groups"),
        ({"groups": [[0]]}, "groups"),
        ({"selection_scope": "leaf"}, "selection_scope"),
        ({"selection_scope": "node"}, "selection_scope"),
        ({"step": "newton"}, "step"),
        ({"step": "constant"}, "gradient leaves"),
    ],
)
def test_invalid_rgbm_parameters(wide, params, fragment):
    X, y = wide
    with pytest.raises(ValueError, match=fragment):
        RGBMRegressor(n_estimators=2, **params).fit(X, y)


def test_constant_step_refuses_the_exponential_loss(wide):
    X, y = wide
    with pytest.raises(ValueError, match="smooth"):
        RGBMClassifier(n_estimators=2, loss="exponential", step="constant", leaf="gradient").fit(X, (y > 0).astype(int))
