"""Small numpy batches skip scikit-learn's input checks (they cost more than
predicting one row); the shortcut must not change any result, message or warning."""

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor, _validation


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, (np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=400) > 0).astype(int)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_batches_predict_exactly_like_the_full_path(data, dtype, monkeypatch):
    X, y = data
    clf = RGBMClassifier(n_estimators=20, random_state=0).fit(X, y)
    reg = RGBMRegressor(n_estimators=20, random_state=0).fit(X, y + 0.1 * np.nan_to_num(X[:, 1]))
    batches = [X[:1].astype(dtype), X[5:37].astype(dtype), X[:400].astype(dtype)]
    assert _validation._is_plain_small_batch(clf, batches[0])
    assert _validation._is_plain_small_batch(clf, batches[1])
    fast = [(clf.predict_proba(b), reg.predict(b)) for b in batches]
    monkeypatch.setattr(_validation, "_is_plain_small_batch", lambda est, X: False)
    slow = [(clf.predict_proba(b), reg.predict(b)) for b in batches]
    for (p1, r1), (p2, r2) in zip(fast, slow):
        np.testing.assert_array_equal(p1, p2)
        np.testing.assert_array_equal(r1, r2)


def test_small_batches_still_get_the_full_checks_when_they_would_fail(data):
    X, y = data
    clf = RGBMClassifier(n_estimators=5, random_state=0).fit(X, y)
    bad = X[:1].copy()
    bad[0, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.predict(bad)
    with pytest.raises(ValueError, match="5 features"):
        clf.predict(X[:1, :4])
    with pytest.raises(ValueError, match="0 sample"):
        clf.predict(X[:0])
    assert not _validation._is_plain_small_batch(clf, X[:3].T.copy().T)  # F-order goes the full way
    assert not _validation._is_plain_small_batch(clf, X[:3].astype(np.int64))


def test_small_batches_warn_when_the_model_was_fitted_with_names(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(5)])
    clf = RGBMClassifier(n_estimators=5, random_state=0).fit(frame, y)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        clf.predict(X[:1])
