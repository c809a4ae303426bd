"""rgbm_rs.Dataset (bin once, fit many) and rgbm_rs.cv."""

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

import rgbm_rs
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
    with pytest.raises(ValueError, match="requires y to be passed"):
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
        Dataset({"a": X[:, 0]}, y)
    with pytest.raises(ValueError, match="validation_fraction"):
        RGBMRegressor(validation_fraction=0.2).fit(ds)


# -- cv ---------------------------------------------------------------------


def test_cv_equals_fitting_each_fold_by_hand(data):
    X, y, w = data
    ds = Dataset(X, y, weight=w)
    est = RGBMRegressor(n_estimators=25, learning_rate=0.3, random_state=5, subsample=0.8)
    res = rgbm_rs.cv(est, ds, folds=KFold(4, shuffle=True, random_state=1), early_stopping_rounds=3)
    curves = []
    hand = []
    for train, test in KFold(4, shuffle=True, random_state=1).split(X):
        m = RGBMRegressor(n_estimators=25, learning_rate=0.3, random_state=5, subsample=0.8)
        m.fit(ds.subset(train), eval_set=[ds.subset(test)])
        curves.append(m.evals_result_["valid_0"]["l2"])
        hand.append(m)
    mean = np.mean(curves, axis=0)
    # lgb.cv's rule: stop 3 rounds after the last improvement of the mean.
    best = 0
    for r in range(1, len(mean)):
        if mean[r] < mean[best]:
            best = r
        elif r - best >= 3:
            break
    assert best < 24, "the test should stop early"
    assert res.best_iteration == best
    assert res.metric == "l2" and not res.higher_is_better
    np.testing.assert_array_equal(res.mean, mean[: best + 1])
    np.testing.assert_array_equal(res.std, np.std(curves, axis=0)[: best + 1])
    assert res.history["valid l2-mean"] == mean[: best + 1].tolist()
    for m, fold_model, (_, test) in zip(hand, res.models, res.folds):
        assert fold_model.get_booster().to_json() == m.get_booster().truncated(best + 1).to_json()
        assert fold_model.best_iteration == best
        np.testing.assert_array_equal(res.oof[test], fold_model.predict(X[test]))
    # Same seed, same models.
    again = rgbm_rs.cv(est, ds, folds=KFold(4, shuffle=True, random_state=1), early_stopping_rounds=3)
    assert [m.get_booster().to_json() for m in again.models] == [m.get_booster().to_json() for m in res.models]


def test_cv_stratified_int_folds_and_params_dict(data):
    X, y, _ = data
    yc = (y > 0.5).astype(int)
    ds = Dataset(X, yc)
    res = rgbm_rs.cv({"loss": "logistic", "n_estimators": 5, "random_state": 0}, ds, folds=3, seed=2)
    assert all(isinstance(m, RGBMClassifier) for m in res.models)
    expected = list(StratifiedKFold(3, shuffle=True, random_state=2).split(X, yc))
    for (_, te), (_, ete) in zip(res.folds, expected):
        np.testing.assert_array_equal(te, ete)
    assert res.oof.shape == (600, 2)
    assert res.best_iteration == 4 and len(res.mean) == 5
    for m, (_, te) in zip(res.models, res.folds):
        np.testing.assert_array_equal(res.oof[te], m.predict_proba(X[te]))


def test_cv_ranking_keeps_queries_whole():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    y = rng.integers(0, 4, 400)
    ds = Dataset(X, y, group=np.full(40, 10))
    res = rgbm_rs.cv(RGBMRanker(n_estimators=6, random_state=0), ds, folds=4, early_stopping_rounds=2)
    query = np.repeat(np.arange(40), 10)
    for train, test in res.folds:
        assert not set(query[train]) & set(query[test])
    assert res.metric.startswith("ndcg") and res.higher_is_better
    # A user splitter gets the query ids as groups.
    res2 = rgbm_rs.cv(RGBMRanker(n_estimators=3, random_state=0), ds, folds=GroupKFold(5))
    assert len(res2.models) == 5


def test_cv_user_pairs_and_bad_folds(data):
    X, y, _ = data
    ds = Dataset(X, y)
    est = RGBMRegressor(n_estimators=3)
    halves = [(np.arange(300), np.arange(300, 600)), (np.arange(300, 600), np.arange(300))]
    res = rgbm_rs.cv(est, ds, folds=halves)
    assert len(res.models) == 2 and res.best_iteration == 2
    with pytest.raises(ValueError, match="do not cover"):
        rgbm_rs.cv(est, ds, folds=[(np.arange(300), np.arange(300, 500)), (np.arange(300, 600), np.arange(300))])
    with pytest.raises(ValueError, match="overlap"):
        rgbm_rs.cv(est, ds, folds=[(np.arange(250), np.arange(250, 600)), (np.arange(300, 600), np.arange(300))])
    with pytest.raises(ValueError, match="in both train and test"):
        rgbm_rs.cv(est, ds, folds=[(np.arange(400), np.arange(300, 600)), (np.arange(300, 600), np.arange(300))])
    with pytest.raises(ValueError, match="out of range"):
        rgbm_rs.cv(est, ds, folds=[(np.arange(300), np.arange(300, 601)), (np.arange(300, 600), np.arange(300))])
    with pytest.raises(TypeError, match="Dataset"):
        rgbm_rs.cv(est, X, folds=3)
    with pytest.raises(TypeError, match="folds must be"):
        rgbm_rs.cv(est, ds, folds=2.5)
    with pytest.raises(ValueError, match="early_stopping_rounds in cv"):
        rgbm_rs.cv(RGBMRegressor(early_stopping_rounds=2), ds)
    with pytest.raises(ValueError, match="metric 'auc'"):
        rgbm_rs.cv(est, ds, folds=2, metric="auc")
