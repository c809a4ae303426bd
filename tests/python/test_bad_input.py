"""Bad input gets a clear Python exception naming the problem, never a crash."""

import re

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


def test_nan_in_x_is_missing_not_an_error(data):
    X, y = data
    X = X.copy()
    X[::7, 1] = np.nan
    RGBMClassifier(n_estimators=3).fit(X, y).predict(X)


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinity_in_x(data, value):
    X, y = data
    X = X.copy()
    X[3, 2] = value
    with pytest.raises(ValueError, match="[Ii]nf"):
        RGBMClassifier(n_estimators=3).fit(X, y)
    clf = RGBMClassifier(n_estimators=3).fit(data[0], y)
    with pytest.raises(ValueError, match="[Ii]nf"):
        clf.predict(X)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_targets(data, value):
    X, y = data
    yr = y.astype(float)
    yr[5] = value
    with pytest.raises(ValueError, match="NaN|[Ii]nf"):
        RGBMRegressor(n_estimators=3).fit(X, yr)
    with pytest.raises(ValueError):
        RGBMClassifier(n_estimators=3).fit(X, yr)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_bad_sample_weight(data, bad):
    X, y = data
    w = np.ones(len(y))
    w[2] = bad
    with pytest.raises(ValueError, match="sample_weight|[Nn]egative|NaN|[Ii]nf"):
        RGBMClassifier(n_estimators=3).fit(X, y, sample_weight=w)


def test_all_zero_or_misshaped_weights(data):
    X, y = data
    with pytest.raises(ValueError, match="non-zero|sum"):
        RGBMClassifier(n_estimators=3).fit(X, y, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match="sample_weight"):
        RGBMClassifier(n_estimators=3).fit(X, y, sample_weight=np.ones(len(y) - 1))


def test_shapes(data):
    X, y = data
    with pytest.raises(ValueError, match="2D|2-D|Expected 2D"):
        RGBMRegressor(n_estimators=3).fit(X[:, 0], y)
    with pytest.raises(ValueError, match="inconsistent|samples"):
        RGBMRegressor(n_estimators=3).fit(X, y[:-1])
    with pytest.raises(ValueError, match="0 sample|minimum"):
        RGBMRegressor(n_estimators=3).fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="0 feature|minimum"):
        RGBMRegressor(n_estimators=3).fit(X[:, :0], y)
    reg = RGBMRegressor(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        reg.predict(X[:, :2])


def test_non_numeric_data(data):
    X, y = data
    with pytest.raises((TypeError, ValueError), match="could not convert|string|numeric|dtype"):
        RGBMRegressor(n_estimators=3).fit(np.array([["a", "b"], ["c", "d"]]), [1.0, 2.0])
    with pytest.raises((TypeError, ValueError), match="[Cc]omplex"):
        RGBMRegressor(n_estimators=3).fit(X.astype(complex), y)


def test_one_class_only(data):
    X, _ = data
    with pytest.raises(ValueError, match="class"):
        RGBMClassifier(n_estimators=3).fit(X, np.zeros(len(X)))


def test_continuous_labels_for_classifier(data):
    X, _ = data
    with pytest.raises(ValueError, match="[Uu]nknown label type|continuous"):
        RGBMClassifier(n_estimators=3).fit(X, np.linspace(0, 1, len(X)))


def test_predict_before_fit(data):
    X, _ = data
    for est in (RGBMClassifier(), RGBMRegressor()):
        with pytest.raises(NotFittedError):
            est.predict(X)
    with pytest.raises(NotFittedError):
        RGBMClassifier().predict_proba(X)
    with pytest.raises(NotFittedError):
        RGBMClassifier().save_model("never-written.json")


@pytest.mark.parametrize(
    "params,name",
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"n_estimators": 2.5}, "n_estimators"),
        ({"learning_rate": -0.1}, "learning_rate"),
        ({"learning_rate": 0}, "learning_rate"),
        ({"max_depth": 65}, "max_depth"),  # 0 and below: LightGBM's "no limit"
        ({"max_leaves": 1}, "max_leaves"),
        ({"max_bins": 1}, "max_bins"),
        ({"max_bins": 70000}, "max_bins"),
        ({"min_samples_leaf": 0}, "min_samples_leaf"),
        ({"min_child_weight": -1}, "min_child_weight"),
        ({"reg_lambda": -1}, "reg_lambda"),
        ({"min_split_gain": -1}, "min_split_gain"),
        ({"loss": "squared"}, "loss"),
        ({"loss": "hinge"}, "loss"),
        ({"gain": "hessian"}, "gain"),
        ({"leaf": "mean"}, "leaf"),
        ({"subsample": 0.0}, "subsample"),
        ({"subsample": 1.5}, "subsample"),
        ({"init": "mean"}, "init"),
        ({"clamp": 0.5}, "clamp"),
        ({"clamp": 0.1, "loss": "exponential"}, "clamp"),
        ({"logistic_reg": -1}, "logistic_reg"),
        ({"n_jobs": 0}, "n_jobs"),
        ({"random_state": -3}, "random_state"),
        ({"max_depth": None}, "max_leaves"),
        ({"max_depth": 2, "max_leaves": 9}, "max_leaves"),
    ],
)
def test_invalid_classifier_parameters(data, params, name):
    X, y = data
    with pytest.raises(ValueError, match=name):
        RGBMClassifier(n_estimators=params.pop("n_estimators", 3), **params).fit(X, y)


@pytest.mark.parametrize(
    "params,name",
    [({"loss": "logistic"}, "loss"), ({"huber_delta": 0.0}, "huber_delta"), ({"huber_delta": -1}, "huber_delta")],
)
def test_invalid_regressor_parameters(data, params, name):
    X, y = data
    with pytest.raises(ValueError, match=name):
        RGBMRegressor(n_estimators=3, **params).fit(X, y.astype(float))


def test_load_model_rejects_broken_files(tmp_path, data):
    X, y = data
    good = tmp_path / "good.json"
    RGBMClassifier(n_estimators=3, random_state=0).fit(X, y).save_model(good)
    text = good.read_text()
    # The model part is written compactly: match with or without spaces.
    bad_version, n_version = re.subn(r'"format_version":\s*2\b', '"format_version": 7', text)
    bad_feature, n_feature = re.subn(r'"feature":\s*\[', '"feature": [99999, ', text, count=1)
    assert n_version >= 1 and n_feature == 1
    cases = {
        "not_json.json": "this is not json",
        "wrong_format.json": '{"format": "xgboost"}',
        "bad_version.json": bad_version,
        "bad_feature.json": bad_feature,
        "truncated.json": text[: len(text) // 2],
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_text(content)
        with pytest.raises(ValueError):
            load_model(path)
    with pytest.raises(OSError):
        load_model(tmp_path / "does-not-exist.json")


def test_failed_save_keeps_the_existing_file(tmp_path, data):
    X, y = data
    path = tmp_path / "model.json"
    path.write_text("precious")
    with pytest.raises(NotFittedError):
        RGBMClassifier().save_model(path)
    assert path.read_text() == "precious"


def test_a_misspelt_parameter_names_the_closest_one():
    from rgbm_rs import RGBMRanker

    for cls, typo, meant in [
        (RGBMRegressor, "n_estimator", "n_estimators"),
        (RGBMClassifier, "min_sample_leaf", "min_samples_leaf"),
        (RGBMRanker, "learnig_rate", "learning_rate"),
    ]:
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{typo}'; did you mean '{meant}'"):
            cls(**{typo: 1})
    with pytest.raises(TypeError, match="unexpected keyword argument 'zzz'$"):
        RGBMRegressor(zzz=1)
