"""A fitted estimator predicts from what it was fitted with: set_params after
fit changes the constructor parameters (scikit-learn's convention: they apply
to the next fit), never the fitted model."""

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model

X = np.random.default_rng(0).normal(size=(200, 4))
y = X[:, 0].copy()
yb = (y > 0).astype(int)

# Everything prediction could have read from the constructor.
CHANGES = {"loss": "huber", "learning_rate": 0.05, "shrink_rate": 0.5, "langevin": True, "temperature": 3.0}


def _outputs(m, X):
    out = {"predict": m.predict(X), "staged": np.stack(list(m.staged_predict(X)))}
    if isinstance(m, RGBMClassifier):
        out["proba"] = m.predict_proba(X)
        out["staged_proba"] = np.stack(list(m.staged_predict_proba(X)))
    return out


@pytest.mark.parametrize(
    "make",
    [
        lambda: RGBMRegressor(n_estimators=20, shrink_rate=0.1).fit(X, y),
        lambda: RGBMRegressor(n_estimators=20, loss="gaussian", langevin=True, random_state=0).fit(X, y),
        lambda: RGBMClassifier(n_estimators=20, loss="exponential", shrink_rate=0.2).fit(X, yb),
        lambda: RGBMClassifier(
            n_estimators=20,
            loss="sla01",
            sla_scale=0.5,
            gain="gradient",
            leaf="gradient",
            langevin=True,
            random_state=0,
        ).fit(X, yb),
    ],
    ids=["squared_shrink", "gaussian_sglb", "exponential_shrink", "sla01_sglb"],
)
def test_set_params_after_fit_does_not_change_predictions(make, tmp_path):
    m = make()
    before = _outputs(m, X)
    changes = dict(CHANGES)
    if isinstance(m, RGBMClassifier):
        changes["loss"] = "logistic"
        changes["sla_scale"] = 7.0
    m.set_params(**changes)
    after = _outputs(m, X)
    for key in before:
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)
    # The file keeps the estimator as it is (its current parameters and its
    # fitted model) and loads back predicting the same.
    m.save_model(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert loaded.get_params() == m.get_params()
    for key, value in _outputs(loaded, X).items():
        np.testing.assert_array_equal(value, before[key], err_msg=key)


def test_model_of_the_wrong_kind_is_refused(tmp_path):
    import json

    RGBMRegressor(n_estimators=2).fit(X, y).save_model(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    doc["estimator"] = "RGBMClassifier"
    doc["params"] = RGBMClassifier(n_estimators=2).get_params()
    doc["classes"] = [0, 1]
    (tmp_path / "c.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="RGBMClassifier cannot hold a model of loss 'squared'"):
        load_model(tmp_path / "c.json")
