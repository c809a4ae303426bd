"""Behaviour of the estimators: accuracy against LightGBM, persistence,
determinism, staged predictions, label handling, input layouts."""

import json
import pickle

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import train_test_split

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model


@pytest.fixture
def lgb():
    return pytest.importorskip("lightgbm")


def test_breast_cancer_accuracy_matches_lightgbm(lgb):
    X, y = load_breast_cancer(return_X_y=True)
    accs = {"rgbm": [], "lgb": []}
    for seed in range(5):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)
        ours = RGBMClassifier(
            n_estimators=200, learning_rate=0.1, max_depth=None, max_leaves=31, min_samples_leaf=20, random_state=0
        )
        theirs = lgb.LGBMClassifier(
            n_estimators=200, learning_rate=0.1, num_leaves=31, min_child_samples=20, verbose=-1, random_state=0
        )
        accs["rgbm"].append(accuracy_score(yte, ours.fit(Xtr, ytr).predict(Xte)))
        accs["lgb"].append(accuracy_score(yte, theirs.fit(Xtr, ytr).predict(Xte)))
    assert np.mean(accs["rgbm"]) >= np.mean(accs["lgb"]) - 0.01, accs


def test_diabetes_r2_matches_lightgbm(lgb):
    X, y = load_diabetes(return_X_y=True)
    r2 = {"rgbm": [], "lgb": []}
    for seed in range(5):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed)
        ours = RGBMRegressor(
            n_estimators=100, learning_rate=0.05, max_depth=None, max_leaves=8, min_samples_leaf=20, random_state=0
        )
        theirs = lgb.LGBMRegressor(
            n_estimators=100, learning_rate=0.05, num_leaves=8, min_child_samples=20, verbose=-1, random_state=0
        )
        r2["rgbm"].append(r2_score(yte, ours.fit(Xtr, ytr).predict(Xte)))
        r2["lgb"].append(r2_score(yte, theirs.fit(Xtr, ytr).predict(Xte)))
    assert np.mean(r2["rgbm"]) >= np.mean(r2["lgb"]) - 0.03, r2


@pytest.mark.parametrize("loss", ["logistic", "exponential"])
def test_string_labels_and_probabilities(binary_data, loss):
    X, y = binary_data
    labels = np.array(["no", "yes"])[y]
    clf = RGBMClassifier(n_estimators=30, loss=loss, random_state=0).fit(X, labels)
    assert list(clf.classes_) == ["no", "yes"]
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    pred = clf.predict(X)
    np.testing.assert_array_equal(pred, clf.classes_[(proba[:, 1] > 0.5).astype(int)])
    assert (pred == labels).mean() > 0.75


def test_staged_predictions_end_at_the_final_prediction(binary_data, regression_data):
    X, y = binary_data
    clf = RGBMClassifier(n_estimators=15, random_state=0).fit(X, y)
    staged = list(clf.staged_predict_proba(X))
    assert len(staged) == 15
    np.testing.assert_allclose(staged[-1], clf.predict_proba(X), rtol=1e-12)
    np.testing.assert_array_equal(list(clf.staged_predict(X))[-1], clf.predict(X))
    np.testing.assert_allclose(list(clf.staged_decision_function(X))[-1], clf.decision_function(X), rtol=1e-12)
    X, y = regression_data
    reg = RGBMRegressor(n_estimators=12, random_state=0).fit(X, y)
    stages = list(reg.staged_predict(X))
    np.testing.assert_allclose(stages[-1], reg.predict(X), rtol=1e-12)
    # Training error falls over the stages.
    mse = [np.mean((s - y) ** 2) for s in stages]
    assert all(b <= a + 1e-12 for a, b in zip(mse, mse[1:]))


def test_pickle_and_save_load_round_trip(tmp_path, binary_data):
    X, y = binary_data
    clf = RGBMClassifier(n_estimators=20, random_state=3).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    path = tmp_path / "m.json"
    clf.save_model(path)
    loaded = load_model(path)
    assert isinstance(loaded, RGBMClassifier)
    assert loaded.get_params() == clf.get_params()
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    assert loaded.n_features_in_ == X.shape[1]


def test_same_seed_same_model_for_any_thread_count(binary_data):
    X, y = binary_data
    models = [RGBMClassifier(n_estimators=15, subsample=0.8, random_state=7, n_jobs=n).fit(X, y) for n in (1, 2, 1)]
    docs = [json.dumps(m._to_document()["model"]["trees"]) for m in models]
    assert docs[0] == docs[1] == docs[2]
    other = RGBMClassifier(n_estimators=15, subsample=0.8, random_state=8).fit(X, y)
    assert json.dumps(other._to_document()["model"]["trees"]) != docs[0]


def test_float32_and_fortran_input_give_the_same_model(regression_data):
    X, y = regression_data
    X32 = X.astype(np.float32)
    a = RGBMRegressor(n_estimators=10, random_state=0).fit(X32, y)
    b = RGBMRegressor(n_estimators=10, random_state=0).fit(np.asfortranarray(X32), y)
    np.testing.assert_array_equal(a.predict(X32), b.predict(X32))
    np.testing.assert_array_equal(a.predict(X32), a.predict(np.asfortranarray(X32)))
    # Non-contiguous views are accepted too.
    wide = np.repeat(X32, 2, axis=1)
    np.testing.assert_array_equal(a.predict(wide[:, ::2]), a.predict(X32))


def test_pandas_feature_names(binary_data):
    pd = pytest.importorskip("pandas")
    X, y = binary_data
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    clf = RGBMClassifier(n_estimators=5, random_state=0).fit(df, y)
    assert list(clf.feature_names_in_) == list(df.columns)
    np.testing.assert_array_equal(clf.predict_proba(df), clf.predict_proba(df.copy()))
    with pytest.warns(UserWarning, match="feature names"):
        np.testing.assert_array_equal(clf.predict_proba(X), clf.predict_proba(df))


def test_missing_values_learn_a_direction():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 1))
    y = (X[:, 0] > 0).astype(float) * 2.0
    missing = rng.random(2000) < 0.2
    X[missing, 0] = np.nan
    y[missing] = 5.0  # missing rows behave like their own group
    reg = RGBMRegressor(n_estimators=50, learning_rate=0.3, max_depth=2, random_state=0).fit(X, y)
    assert abs(reg.predict(np.array([[np.nan]]))[0] - 5.0) < 0.1
    assert abs(reg.predict(np.array([[1.0]]))[0] - 2.0) < 0.1
    assert abs(reg.predict(np.array([[-1.0]]))[0] - 0.0) < 0.1


@pytest.mark.parametrize(
    "gain,leaf", [("gradient", "gradient"), ("gradient", "newton"), ("newton", "newton"), ("newton", "gradient")]
)
def test_every_gain_and_leaf_mode_learns(binary_data, gain, leaf):
    X, y = binary_data
    clf = RGBMClassifier(n_estimators=40, gain=gain, leaf=leaf, clamp=0.05, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.8


def test_huber_is_robust_to_outliers(regression_data):
    X, y = regression_data
    y_noisy = y.copy()
    y_noisy[::25] += 200.0
    sq = RGBMRegressor(n_estimators=60, random_state=0).fit(X, y_noisy)
    hb = RGBMRegressor(n_estimators=60, loss="huber", huber_delta=1.0, random_state=0).fit(X, y_noisy)
    clean = np.ones(len(y), bool)
    clean[::25] = False
    err = lambda m: np.mean((m.predict(X[clean]) - y[clean]) ** 2)  # noqa: E731
    assert err(hb) < 0.5 * err(sq)


def test_feature_importances_point_at_the_signal(regression_data):
    X, y = regression_data
    reg = RGBMRegressor(n_estimators=30, random_state=0).fit(X, y)
    imp = reg.feature_importances_
    assert imp.shape == (4,) and abs(imp.sum() - 1) < 1e-12
    assert imp[3] < 0.05  # feature 3 is pure noise


def test_init_zero_and_subsample(binary_data):
    X, y = binary_data
    zero = RGBMClassifier(n_estimators=1, init="zero", random_state=0).fit(X, y)
    assert zero._booster.base_score == [0.0]
    opt = RGBMClassifier(n_estimators=1, random_state=0).fit(X, y)
    assert abs(opt._booster.base_score - np.log(y.mean() / (1 - y.mean()))) < 1e-9
    sub = RGBMClassifier(n_estimators=30, subsample=0.5, random_state=0).fit(X, y)
    assert sub.score(X, y) > 0.75
