"""Monotone and interaction constraints through the estimators: properties
on random data and constraints (hypothesis), names for data frames, and the
constraints LightGBM enforces on the same data."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rgbm_rs import RGBMClassifier, RGBMRegressor, _core
from rgbm_rs._training import TrainingData

P = 4

# Options of each booster a constraint must survive.
BOOSTERS = {
    "newton": {},
    "best_first_line_search": {"max_depth": None, "max_leaves": 10, "step": "line_search"},
    "constant_step": {"leaf": "gradient", "step": "constant"},
    "rgbm_random_subsample": {"selection": "random", "selection_size": 0.4, "subsample": 0.7},
    "rgbm_node_scope": {"selection": "groups", "selection_size": 2, "selection_scope": "node"},
    "rgb": {"booster": "rgb", "max_depth": None, "rgb_nodes": [2, 8]},
    "sglb": {"langevin": True, "temperature": 50.0, "reg_lambda": 1.0},
    "quantile": {"loss": "quantile", "alpha": 0.3},
    "huber": {"loss": "huber"},
}


def _data(seed, n=300):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, P))
    y = X[:, 0] - X[:, 1] + np.sin(2 * X[:, 2]) + X[:, 3] * X[:, 0] + rng.normal(0, 0.5, n)
    return X, y


def _violations(predict, X, directions, n_outputs=1):
    """Largest step against a direction over a grid of each constrained
    feature, other features fixed at rows of X."""
    grid = np.linspace(-2.5, 2.5, 121)
    worst = 0.0
    for j, d in enumerate(directions):
        if d == 0:
            continue
        for row in X[:: max(1, len(X) // 15)]:
            probe = np.repeat(row[None, :], len(grid), axis=0)
            probe[:, j] = grid
            f = np.asarray(predict(probe)).reshape(len(grid), n_outputs)
            worst = max(worst, float(np.max(-d * np.diff(f, axis=0))))
    return worst


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    booster=st.sampled_from(sorted(BOOSTERS)),
    directions=st.lists(st.sampled_from([-1, 0, 1]), min_size=P, max_size=P),
)
def test_regressor_predictions_follow_the_directions(seed, booster, directions):
    X, y = _data(seed)
    est = RGBMRegressor(
        n_estimators=15,
        learning_rate=0.3,
        min_samples_leaf=5,
        random_state=seed,
        monotone_constraints=directions,
        **BOOSTERS[booster],
    ).fit(X, y)
    assert _violations(est.predict, X, directions) == 0.0


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), directions=st.lists(st.sampled_from([-1, 0, 1]), min_size=P, max_size=P))
def test_every_class_score_follows_the_directions(seed, directions):
    X, y = _data(seed)
    labels = np.digitize(y, [-0.5, 0.5])
    est = RGBMClassifier(n_estimators=10, min_samples_leaf=5, random_state=seed, monotone_constraints=directions).fit(
        X, labels
    )
    assert _violations(est.decision_function, X, directions, n_outputs=3) == 0.0


def test_all_zero_directions_are_no_constraint():
    X, y = _data(3)
    for options in BOOSTERS.values():
        free = RGBMRegressor(n_estimators=10, random_state=0, **options).fit(X, y)
        zero = RGBMRegressor(n_estimators=10, random_state=0, monotone_constraints=[0] * P, **options).fit(X, y)
        assert np.array_equal(free.predict(X), zero.predict(X))


def test_names_and_positions_give_the_same_model():
    X, y = _data(4, n=600)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    by_name = RGBMRegressor(
        n_estimators=20, monotone_constraints={"a": 1, "b": -1}, interaction_constraints=[["a", "b"], ["c", "d"]]
    ).fit(frame, y)
    by_position = RGBMRegressor(
        n_estimators=20, monotone_constraints=[1, -1, 0, 0], interaction_constraints=[[0, 1], [2, 3]]
    ).fit(X, y)
    assert np.array_equal(by_name.predict(frame), by_position.predict(X))
    dict_by_position = RGBMRegressor(
        n_estimators=20, monotone_constraints={0: 1, 1: -1}, interaction_constraints=[[0, 1], [2, 3]]
    ).fit(X, y)
    assert np.array_equal(dict_by_position.predict(X), by_position.predict(X))


def _paths(node, used=()):
    if "leaf_index" in node:
        yield set(used)
        return
    used = (*used, node["split_feature"])
    yield from _paths(node["left"], used)
    yield from _paths(node["right"], used)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    booster=st.sampled_from(sorted(BOOSTERS)),
    sets=st.lists(st.sets(st.integers(0, P - 1), min_size=1, max_size=3), min_size=1, max_size=3),
)
def test_every_dumped_path_stays_in_one_set(seed, booster, sets):
    X, y = _data(seed)
    sets = [sorted(s) for s in sets]
    est = RGBMRegressor(
        n_estimators=8, min_samples_leaf=5, random_state=seed, interaction_constraints=sets, **BOOSTERS[booster]
    ).fit(X, y)
    for entry in est.dump_model()["trees"]:
        for used in _paths(entry["tree"]):
            assert len(used) <= 1 or any(used <= set(s) for s in sets), (used, sets)


def test_a_feature_in_no_set_splits_only_on_its_own():
    X, y = _data(5, n=1000)
    est = RGBMRegressor(n_estimators=20, interaction_constraints=[[0, 1]]).fit(X, y)
    paths = [u for e in est.dump_model()["trees"] for u in _paths(e["tree"])]
    assert any(u == {3} for u in paths) or any(u == {2} for u in paths)
    assert all(u <= {0, 1} or len(u) == 1 for u in paths)


def test_lightgbm_with_the_same_constraints_is_monotone_too_and_fits_alike():
    lgb = pytest.importorskip("lightgbm")
    X, y = _data(6, n=3000)
    directions = [1, -1, 0, 0]
    ours = RGBMRegressor(n_estimators=100, max_depth=None, max_leaves=31, monotone_constraints=directions).fit(X, y)
    theirs = lgb.LGBMRegressor(
        n_estimators=100,
        num_leaves=31,
        monotone_constraints=directions,
        monotone_constraints_method="basic",
        verbose=-1,
    ).fit(X, y)
    assert _violations(ours.predict, X, directions) == 0.0
    assert _violations(theirs.predict, X, directions) <= 1e-12
    mse = lambda m: float(np.mean((m.predict(X) - y) ** 2))  # noqa: E731
    assert mse(ours) < 1.15 * mse(theirs)


def test_categorical_features_cannot_be_constrained():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"city": pd.Categorical(rng.choice(["x", "y", "z"], 200)), "v": rng.normal(size=200)})
    with pytest.raises(ValueError, match="feature 'city' is categorical"):
        RGBMRegressor(categorical_features="auto", monotone_constraints={"city": 1}).fit(frame, frame["v"])
    RGBMRegressor(n_estimators=3, categorical_features="auto", monotone_constraints={"v": 1}).fit(frame, frame["v"])


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"monotone_constraints": [1, 0, 0]}, "has 3 entries but X has 4 features"),
        ({"monotone_constraints": [1, 0, 0, -2]}, "must be a non-empty list of -1, 0 and 1"),
        ({"monotone_constraints": [300, 0, 0, 0]}, "monotone_constraints"),
        ({"monotone_constraints": []}, "non-empty"),
        ({"interaction_constraints": [[0, 4]]}, "set 0 names feature 4, but X has 4 features"),
        ({"interaction_constraints": [[-1]]}, "interaction_constraints"),
        ({"interaction_constraints": [[0], []]}, "non-empty lists"),
        ({"monotone_constraints": [1, 0, 0, 0], "categorical_features": [0]}, "numeric features only"),
    ],
)
def test_the_core_refuses_bad_constraints(params, fragment):
    X, y = _data(0, n=50)
    with pytest.raises(ValueError, match=fragment):
        _core.Booster.train(json.dumps(params), TrainingData(X, y))


def test_a_model_file_with_constraints_that_do_not_fit_is_refused():
    X, y = _data(0, n=100)
    est = RGBMRegressor(n_estimators=2, monotone_constraints=[1, 0, 0, 0]).fit(X, y)
    doc = json.loads(est._booster.to_json())
    doc["params"]["monotone_constraints"] = [1, 0]
    with pytest.raises(ValueError, match="monotone_constraints"):
        _core.Booster.from_json(json.dumps(doc))


@pytest.mark.parametrize(
    "extra",
    [
        {"subsample": 0.3, "subsample_for": "split"},
        {"subsample": 0.5, "subsample_for": "split", "langevin": True, "langevin_split_noise": False},
    ],
)
def test_leaves_from_every_row_stay_within_the_bounds(extra):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(2000, 3))
    y = 3 * X[:, 0] - X[:, 1] + np.sin(8 * X[:, 2]) + rng.normal(0, 0.5, 2000)
    m = RGBMRegressor(n_estimators=40, monotone_constraints=[1, -1, 0], temperature=1e2, **extra).fit(X, y)
    grid = np.linspace(0, 1, 60)
    for row in X[:100]:
        for j, sign in ((0, 1), (1, -1)):
            g = np.tile(row, (60, 1))
            g[:, j] = grid
            assert np.all(sign * np.diff(m.predict(g)) >= 0)
