"""Multiclass classification: softmax, one tree per class per round."""

import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.metrics import accuracy_score
from sklearn.model_selection import cross_val_score, train_test_split

from rgbm_rs import RGBMClassifier, load_model

# The benchmark data folder (benches/README.md): $RGBM_DATA, or ../shared/data.
DATA = Path(os.environ.get("RGBM_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def three(iris):
    X, y = iris
    return train_test_split(X, np.array(["setosa", "versicolor", "virginica"])[y], random_state=0, stratify=y)


def test_iris_cross_validated_accuracy(iris):
    X, y = iris
    clf = RGBMClassifier(n_estimators=100, max_depth=3, min_samples_leaf=5, random_state=0)
    scores = cross_val_score(clf, X, y, cv=5)
    assert scores.mean() >= 0.93, scores


def _optdigits(name):
    path = DATA / "optdigits" / name
    if not path.exists():
        pytest.skip(f"{path} is not available")
    data = np.loadtxt(path, delimiter=",")
    return data[:, :-1], data[:, -1].astype(int)


def test_optdigits_ten_classes():
    X_train, y_train = _optdigits("optdigits.tra")
    X_test, y_test = _optdigits("optdigits.tes")
    clf = RGBMClassifier(n_estimators=100, max_depth=4, min_samples_leaf=5, random_state=0).fit(X_train, y_train)
    assert clf.get_booster().n_outputs == 10
    assert clf.get_booster().n_trees == 10 * 100
    assert accuracy_score(y_test, clf.predict(X_test)) >= 0.95


def test_probabilities_labels_and_shapes(three):
    X_train, X_test, y_train, y_test = three
    clf = RGBMClassifier(n_estimators=30, max_depth=3, min_samples_leaf=5, random_state=0).fit(X_train, y_train)
    assert list(clf.classes_) == ["setosa", "versicolor", "virginica"] and clf.n_classes_ == 3
    proba = clf.predict_proba(X_test)
    assert proba.shape == (len(X_test), 3)
    assert np.allclose(proba.sum(axis=1), 1.0) and (proba > 0).all()
    raw = clf.decision_function(X_test)
    assert raw.shape == (len(X_test), 3)
    # Probabilities are the softmax of the raw scores; labels their argmax.
    e = np.exp(raw - raw.max(axis=1, keepdims=True))
    assert np.allclose(proba, e / e.sum(axis=1, keepdims=True))
    assert (clf.predict(X_test) == clf.classes_[proba.argmax(axis=1)]).all()
    assert clf.score(X_test, y_test) > 0.9
    # Staged outputs: one per round, the last equal to the final model.
    staged = list(clf.staged_predict_proba(X_test))
    assert len(staged) == 30 and np.allclose(staged[-1], proba)
    assert (list(clf.staged_predict(X_test))[-1] == clf.predict(X_test)).all()


def test_integer_labels_need_not_be_contiguous(iris):
    X, y = iris
    labels = np.array([-5, 10, 7])[y]
    clf = RGBMClassifier(n_estimators=10, random_state=0).fit(X, labels)
    assert list(clf.classes_) == [-5, 7, 10]
    assert set(clf.predict(X)) <= {-5, 7, 10}


def test_two_classes_keep_the_single_output_logistic(iris):
    X, y = iris
    clf = RGBMClassifier(n_estimators=5, random_state=0).fit(X[y < 2], y[y < 2])
    assert clf.get_booster().n_outputs == 1
    assert clf.decision_function(X[:4]).shape == (4,)
    assert clf.predict_proba(X[:4]).shape == (4, 2)


@pytest.mark.parametrize(
    "options",
    [
        dict(selection="groups", selection_size=2),
        dict(selection="random", selection_size=10, selection_scope="node"),
        dict(langevin=True, temperature=1e3),
        dict(subsample=0.7, max_leaves=7, max_depth=None),
        dict(step="line_search"),
        dict(step="constant", leaf="gradient", gain="gradient"),
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_composes_with_other_options(three, options):
    X_train, X_test, y_train, y_test = three
    kw = dict(n_estimators=40, max_depth=3, min_samples_leaf=5, random_state=1)
    kw.update(options)
    a = RGBMClassifier(**kw).fit(X_train, y_train)
    assert a.score(X_test, y_test) > 0.85
    b = RGBMClassifier(**{**kw, "n_jobs": 1}).fit(X_train, y_train)
    assert a.get_booster().to_json().replace('"n_jobs":null', '"n_jobs":1') == b.get_booster().to_json()


def test_constant_step_never_increases_the_training_loss(three):
    X_train, _, y_train, _ = three
    clf = RGBMClassifier(
        n_estimators=30,
        step="constant",
        leaf="gradient",
        gain="gradient",
        max_depth=2,
        record_train_loss=True,
        random_state=0,
    ).fit(X_train, y_train)
    loss = np.array(clf.training_log_["train_loss"])
    assert (np.diff(loss) <= 1e-12).all()
    assert clf.training_log_["step"][0] == pytest.approx(2.0)  # 1/sigma, sigma = 1/2 for softmax


def test_sglb_uncertainty_has_class_probabilities(three):
    X_train, X_test, y_train, _ = three
    clf = RGBMClassifier(n_estimators=60, langevin=True, temperature=1e3, max_depth=3, random_state=0)
    clf.fit(X_train, y_train)
    u = clf.predict_uncertainty(X_test, n_members=5)
    assert u["proba"].shape == (len(X_test), 3) and np.allclose(u["proba"].sum(axis=1), 1.0)
    for key in ("total", "data", "knowledge"):
        assert u[key].shape == (len(X_test),) and (u[key] >= 0).all()
    assert np.all(u["total"] <= np.log(3) + 1e-12)
    assert np.allclose(u["total"], u["data"] + u["knowledge"])


def test_save_load_and_pickle(tmp_path, three):
    X_train, X_test, y_train, _ = three
    clf = RGBMClassifier(n_estimators=15, random_state=0).fit(X_train, y_train)
    clf.save_model(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    assert (back.predict_proba(X_test) == clf.predict_proba(X_test)).all()
    assert list(back.classes_) == list(clf.classes_)
    again = pickle.loads(pickle.dumps(clf))
    assert (again.predict(X_test) == clf.predict(X_test)).all()


def test_binary_only_options_are_refused(three):
    X_train, _, y_train, _ = three
    cases = [
        (dict(loss="exponential"), "binary only"),
        (dict(loss="sla01", gain="gradient", leaf="gradient"), "binary only"),
        (dict(clamp=0.05), "clamp"),
        (dict(logistic_reg=0.1), "logistic_reg"),
    ]
    for options, fragment in cases:
        with pytest.raises(ValueError, match=fragment):
            RGBMClassifier(n_estimators=3, **options).fit(X_train, y_train)


def test_eval_set_labels_must_be_known(three):
    X_train, X_test, y_train, y_test = three
    bad = y_test.copy()
    bad[0] = "rose"
    with pytest.raises(ValueError, match="not seen in training.*rose"):
        RGBMClassifier(n_estimators=3).fit(X_train, y_train, eval_set=[(X_test, bad)])


def test_rgb_multiclass_with_weights_and_early_stopping():
    X_all, y_all = _optdigits("optdigits.tra")
    X_train, X_val, y_train, y_val = train_test_split(X_all, y_all, test_size=0.3, random_state=0, stratify=y_all)
    w = np.where(y_train == 3, 2.0, 1.0)
    clf = RGBMClassifier(
        booster="rgb", rgb_beta=0.01, max_depth=None, n_estimators=60, early_stopping_rounds=5, random_state=0
    )
    clf.fit(X_train, y_train, sample_weight=w, eval_set=[(X_val, y_val)])
    booster = clf.get_booster()
    assert booster.n_outputs == 10 and booster.n_trees == 10 * booster.n_rounds
    assert sum(clf.rgb_family_counts_.values()) == 10 * clf.n_estimators_
    curve = clf.evals_result_["valid_0"]["multi_logloss"]
    if clf.n_estimators_ < 60:
        assert clf.best_iteration == int(np.argmin(curve))
    assert clf.score(X_val, y_val) > 0.9
