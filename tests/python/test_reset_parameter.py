"""Learning-rate schedules: ``reset_parameter`` and ``env.model`` in callbacks."""

import numpy as np
import pytest

import rgbm_rs
from rgbm_rs import RGBMClassifier, RGBMRegressor
from rgbm_rs.callback import TrainingModel


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.normal(size=n)
    return X, y


def _model(est):
    return est.booster_.to_json()


@pytest.mark.parametrize("schedule", [[0.05] * 12, lambda r: 0.05])
def test_a_constant_schedule_is_the_fixed_rate_fit(schedule):
    X, y = _data()
    fixed = RGBMRegressor(n_estimators=12, learning_rate=0.05, random_state=1).fit(X, y)
    reset = RGBMRegressor(n_estimators=12, random_state=1).fit(
        X, y, callbacks=[rgbm_rs.reset_parameter(learning_rate=schedule)]
    )
    np.testing.assert_array_equal(reset.predict(X), fixed.predict(X))


@pytest.mark.parametrize(
    "params",
    [{}, {"step": "line_search"}, {"langevin": True, "shrink_rate": 0.0, "temperature": 1e4}],
    ids=["shrinkage", "line_search", "sglb"],
)
def test_a_decaying_schedule_is_the_chain_of_one_round_fits(params):
    # Oracle: one round at a time, each continuing the last with that round's rate.
    X, y = _data()
    rates = [0.3 * 0.7**r for r in range(6)]
    scheduled = RGBMRegressor(n_estimators=6, random_state=2, **params).fit(
        X, y, callbacks=[rgbm_rs.reset_parameter(learning_rate=rates)]
    )
    if params.get("langevin"):
        # Every round draws its own noise stream: the chain cannot replay it;
        # the noise scale follows the rate, so the rounds differ from a fixed 0.3.
        fixed = RGBMRegressor(n_estimators=6, random_state=2, learning_rate=0.3, **params).fit(X, y)
        assert not np.array_equal(scheduled.predict(X), fixed.predict(X))
        return
    chained = None
    for rate in rates:
        chained = RGBMRegressor(n_estimators=1, learning_rate=rate, random_state=2, **params).fit(
            X, y, init_model=chained
        )
    np.testing.assert_allclose(scheduled.predict(X), chained.predict(X), rtol=0, atol=1e-12)


def test_lightgbms_own_reset_parameter_callback_works():
    lgb = pytest.importorskip("lightgbm")
    X, y = _data()
    ours = RGBMRegressor(n_estimators=8, random_state=3).fit(
        X, y, callbacks=[rgbm_rs.reset_parameter(learning_rate=lambda r: 0.2 * 0.9**r)]
    )
    theirs = RGBMRegressor(n_estimators=8, random_state=3).fit(
        X, y, callbacks=[lgb.reset_parameter(learning_rate=lambda r: 0.2 * 0.9**r)]
    )
    assert _model(ours) == _model(theirs)


def test_env_model_and_params_follow_the_fit():
    X, y = _data()
    seen = []

    def before(env):
        seen.append(("before", env.iteration, env.model.current_iteration(), env.params["learning_rate"]))
        env.model.reset_parameter({"eta": 0.1 + env.iteration})

    before.before_iteration = True

    def after(env):
        seen.append(("after", env.iteration, env.model.current_iteration(), env.params["learning_rate"]))
        assert isinstance(env.model, TrainingModel)

    RGBMRegressor(n_estimators=2, learning_rate=0.5).fit(X, y, callbacks=[after, before])
    assert seen == [
        ("before", 0, 0, 0.5),
        ("after", 0, 1, 0.1),
        ("before", 1, 1, 0.1),
        ("after", 1, 2, 1.1),
    ]


def test_classifier_schedule_changes_the_model():
    X, y = _data()
    yc = (y > 0).astype(int)
    fixed = RGBMClassifier(n_estimators=10, random_state=0).fit(X, yc)
    decayed = RGBMClassifier(n_estimators=10, random_state=0).fit(
        X, yc, callbacks=[rgbm_rs.reset_parameter(learning_rate=lambda r: 0.1 / (1 + r))]
    )
    # Smaller steps: the scores move less from the base score.
    base = fixed.booster_.base_score
    spread = lambda est: np.abs(est.predict(X, raw_score=True) - base).mean()  # noqa: E731
    assert spread(decayed) < spread(fixed)


@pytest.mark.parametrize(
    ("params", "rate", "words"),
    [
        ({"booster": "rgb"}, 0.1, "booster='rgb'"),
        ({"step": "constant", "leaf": "gradient"}, 0.1, "step='constant'"),
        ({"langevin": True}, 0.1, "shrink_rate"),
        ({}, 0.0, "finite number > 0"),
        ({}, float("nan"), "finite number > 0"),
    ],
)
def test_schedules_the_fit_cannot_follow_are_refused(params, rate, words):
    X, y = _data()
    est = RGBMRegressor(n_estimators=3, **params)
    with pytest.raises(ValueError, match="learning_rate") as info:
        est.fit(X, y, callbacks=[rgbm_rs.reset_parameter(learning_rate=[rate] * 3)])
    assert words in str(info.value)


def test_bad_schedules_are_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="one per round, n_estimators = 4"):
        RGBMRegressor(n_estimators=4).fit(X, y, callbacks=[rgbm_rs.reset_parameter(learning_rate=[0.1] * 3)])
    with pytest.raises(ValueError, match=r"only the learning rate.*\['num_leaves'\]"):
        rgbm_rs.reset_parameter(num_leaves=[7] * 3)
    with pytest.raises(TypeError, match="list or a function"):
        rgbm_rs.reset_parameter(learning_rate=0.1)
    with pytest.raises(ValueError, match="pass one"):
        TrainingModel().reset_parameter({"eta": 0.1, "learning_rate": 0.2})
    with pytest.raises(TypeError, match="must be a number"):
        TrainingModel().reset_parameter({"learning_rate": "fast"})
