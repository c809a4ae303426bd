"""Multilabel classification: 2-D 0/1 y, one logistic output per label,
each equal to the binary fit of its column alone."""

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, load_model

rng = np.random.default_rng(1)
N, P, K = 600, 5, 3
X = rng.normal(size=(N, P))
Y = np.column_stack([(j + 1) * X[:, j] + np.sin(X[:, (j + 1) % P]) + 0.3 * rng.normal(size=N) for j in range(K)])
W = rng.uniform(0.2, 2.0, size=N)
BASE = dict(n_estimators=15, max_depth=4, random_state=7)


LABELS = (Y > np.median(Y, axis=0)).astype(np.int64)


def test_each_label_is_its_binary_fit():
    params = {**BASE, "subsample": 0.8}
    multi = RGBMClassifier(**params).fit(X, LABELS, sample_weight=W)
    assert multi.classes_.tolist() == list(range(K))
    proba, pred, raw = multi.predict_proba(X), multi.predict(X), multi.decision_function(X)
    assert proba.shape == pred.shape == raw.shape == (N, K)
    assert pred.dtype == np.int64 and set(np.unique(pred)) <= {0, 1}
    for k in range(K):
        single = RGBMClassifier(**params).fit(X, LABELS[:, k], sample_weight=W)
        np.testing.assert_array_equal(raw[:, k], single.decision_function(X))
        np.testing.assert_array_equal(proba[:, k], single.predict_proba(X)[:, 1])
        np.testing.assert_array_equal(pred[:, k], single.predict(X))
    staged = list(multi.staged_predict_proba(X[:10]))
    np.testing.assert_allclose(staged[-1], proba[:10], rtol=1e-12)


def test_multilabel_early_stopping_and_persistence(tmp_path):
    est = RGBMClassifier(n_estimators=60, early_stopping_rounds=3, learning_rate=0.5, random_state=0)
    est.fit(X[200:], LABELS[200:], eval_set=[(X[:200], LABELS[:200])])
    history = est.evals_result_["valid_0"]["logloss"]
    assert est.best_iteration == int(np.argmin(history))
    path = tmp_path / "labels.json"
    est.save_model(path)
    back = load_model(path)
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_bad_multilabel_fits_are_refused():
    with pytest.raises(ValueError, match="must be 0 or 1"):
        RGBMClassifier(**BASE).fit(X, LABELS * 2)
    with pytest.raises(ValueError, match="needs loss='logistic'"):
        RGBMClassifier(loss="exponential", **BASE).fit(X, LABELS)
    with pytest.raises(ValueError, match="class_weight"):
        RGBMClassifier(class_weight="balanced", **BASE).fit(X, LABELS)
    with pytest.raises(ValueError, match="eval_set\\[0\\]: y: 2-D labels"):
        RGBMClassifier(**BASE).fit(X, LABELS, eval_set=[(X, LABELS + 0.5)])


def test_multilabel_tag():
    tags = RGBMClassifier().__sklearn_tags__()
    assert tags.classifier_tags.multi_label and not tags.target_tags.multi_output
