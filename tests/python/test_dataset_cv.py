"""rgbm_rs.Dataset (bin once, fit many) and rgbm_rs.cv."""

import numpy as np
import pytest

from rgbm_rs import Dataset, RGBMClassifier, RGBMRanker, RGBMRegressor


def _model(est):
    return est.get_booster().to_json()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    X[::9, 2] = np.nan
    X[:, 4] = rng.integers(0, 5, 600)
    y = X[:, 0] - 0.5 * X[:, 1] + rng.normal(scale=0.3, size=600)
    w = rng.uniform(0.5, 2.0, 600)
    return X, y, w


def test_fit_on_a_dataset_equals_fit_on_its_rows(data):
    X, y, w = data
    for kw in ({}, {"subsample": 0.6, "categorical_features": [4]}):
        a = RGBMRegressor(n_estimators=8, random_state=3, **kw).fit(Dataset(X, y, weight=w))
        b = RGBMRegressor(n_estimators=8, random_state=3, **kw).fit(X, y, sample_weight=w)
        assert _model(a) == _model(b)
    yc = (y > 0).astype(int)
    a = RGBMClassifier(n_estimators=5, random_state=1).fit(Dataset(X, yc))
    b = RGBMClassifier(n_estimators=5, random_state=1).fit(X, yc)
    assert _model(a) == _model(b)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_dataset_categorical_features_reach_the_fit(data):
    X, y, _ = data
    a = RGBMRegressor(n_estimators=4, random_state=0).fit(Dataset(X, y, categorical_features=[4]))
    b = RGBMRegressor(n_estimators=4, random_state=0, categorical_features=[4]).fit(X, y)
    assert _model(a) == _model(b)
    with pytest.raises(ValueError, match="categorical_features"):
        RGBMRegressor(categorical_features=[3]).fit(Dataset(X, y, categorical_features=[4]))


def test_subset_shares_the_bins(data):
    X, y, _ = data
    ds = Dataset(X, y)
    idx = np.arange(0, 600, 3)
    est = RGBMRegressor(n_estimators=6, random_state=2)
    a = est.fit(ds.subset(idx))
    # The reference: the subset's rows binned with the full Dataset's bins.
    ref = Dataset(X[idx], y[idx], reference=ds)
    b = RGBMRegressor(n_estimators=6, random_state=2).fit(ref)
    assert _model(a) == _model(b)
    # Rebinning the rows themselves gives other bins: close, not equal.
    c = RGBMRegressor(n_estimators=6, random_state=2).fit(X[idx], y[idx])
    np.testing.assert_allclose(a.predict(X), c.predict(X), atol=0.5)
    # A subset of a subset is a subset of the root.
    inner = ds.subset(idx).subset(np.arange(10, 100))
    np.testing.assert_array_equal(inner.indices, idx[10:100])
    d = RGBMRegressor(n_estimators=3, random_state=2).fit(inner)
    e = RGBMRegressor(n_estimators=3, random_state=2).fit(ds.subset(idx[10:100]))
    assert _model(d) == _model(e)


def test_eval_set_takes_datasets(data):
    X, y, _ = data
    ds = Dataset(X, y)
    tr, te = np.arange(400), np.arange(400, 600)
    est = RGBMRegressor(n_estimators=30, random_state=0, early_stopping_rounds=3)
    a = est.fit(ds.subset(tr), eval_set=[ds.subset(te)])
    b = RGBMRegressor(n_estimators=30, random_state=0, early_stopping_rounds=3).fit(
        ds.subset(tr), eval_set=[(X[te], y[te])]
    )
    assert _model(a) == _model(b)
    assert a.evals_result_ == b.evals_result_


def test_ranking_dataset_and_its_subsets():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = rng.integers(0, 4, 300)
    group = np.full(30, 10)
    ds = Dataset(X, y, group=group)
    a = RGBMRanker(n_estimators=4, random_state=0).fit(ds)
    b = RGBMRanker(n_estimators=4, random_state=0).fit(X, y, group=group)
    assert _model(a) == _model(b)
    sub = ds.subset(np.arange(50, 150))
    np.testing.assert_array_equal(sub.group, np.full(10, 10))
    with pytest.raises(ValueError, match="query 0 has 10 rows, 5 of them"):
        ds.subset(np.arange(5, 100))


def test_bad_input_is_named(data):
    X, y, _ = data
    ds = Dataset(X, y)
    with pytest.raises(ValueError, match="out of range"):
        ds.subset([0, 600])
    with pytest.raises(ValueError, match="more than once"):
        ds.subset([1, 2, 1])
    with pytest.raises(TypeError, match="boolean mask"):
        ds.subset(np.ones(600, bool))
    with pytest.raises(TypeError, match="holds y"):
        RGBMRegressor().fit(ds, y)
    with pytest.raises(TypeError, match="needs y"):
        RGBMRegressor().fit(X)
    with pytest.raises(ValueError, match="no label"):
        RGBMRegressor().fit(Dataset(X))
    with pytest.raises(ValueError, match="max_bins=255"):
        est = RGBMRegressor(n_estimators=2).fit(ds)
        RGBMRegressor(n_estimators=2, max_bins=63).fit(ds)
    with pytest.raises(ValueError, match="4 features, but the reference"):
        Dataset(X[:, :4], y, reference=ds)
    est = RGBMRegressor(n_estimators=2).fit(ds)
    np.testing.assert_array_equal(est.predict(ds.subset(np.arange(5))), est.predict(X[:5]))
    with pytest.raises(ValueError, match="X has 4 features, but RGBMRegressor is expecting 5"):
        est.predict(Dataset(X[:, :4]))
    with pytest.raises(TypeError, match="data frame"):
        pd = pytest.importorskip("pandas")
        Dataset(pd.DataFrame(X), y)
    with pytest.raises(ValueError, match="validation_fraction"):
        RGBMRegressor(validation_fraction=0.2).fit(ds)
