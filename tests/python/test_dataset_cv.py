"""rgbm_rs.Dataset (bin once, fit many) and rgbm_rs.cv."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import log_loss
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


def _lgb_early_stop(mean, higher, patience, min_delta=0.0):
    """(round stopped at, best round) of LightGBM's own early_stopping
    callback fed the mean curve round by round, as lgb.cv feeds it."""
    lgb = pytest.importorskip("lightgbm")
    stop = lgb.early_stopping(patience, min_delta=min_delta, verbose=False)
    for i, value in enumerate(mean):
        result = lgb.EvalResult("valid", "metric", float(value), higher, 0.0)
        env = lgb.callback.CallbackEnv(None, {}, i, 0, len(mean), [result])
        try:
            stop(env)
        except lgb.callback.EarlyStopException as e:
            return i, e.best_iteration
    raise AssertionError("LightGBM's callback stops at the last round at the latest")


def _curves(est, ds, pairs, metric):
    """Each fold's metric curve of a plain fit, in fold order."""
    out = []
    for train, test in pairs:
        m = clone(est).fit(ds.subset(train), eval_set=[ds.subset(test)])
        out.append(m.evals_result_["valid_0"][metric])
    return np.array(out)


def test_cv_early_stopping_stops_the_folds_where_lightgbm_does(data):
    X, y, _ = data
    ds = Dataset(X, y)
    pairs = list(KFold(3, shuffle=True, random_state=0).split(X))
    est = RGBMRegressor(n_estimators=300, learning_rate=0.5, random_state=0)
    res = rgbm_rs.cv(est, ds, folds=pairs, early_stopping_rounds=4)
    stopped, best = res.best_iteration + 4, res.best_iteration
    assert stopped < 299, "the test should stop early"
    # The folds stop together once the mean has not improved for 4 rounds,
    # instead of running all 300 rounds.
    assert [m.n_estimators_ for m in res.models] == [stopped + 1] * 3
    curves = _curves(est, ds, pairs, "l2")[:, : stopped + 20]
    assert _lgb_early_stop(curves.mean(axis=0), False, 4) == (stopped, best)
    # Each fold model is a plain fit of its rows, truncated to the best round.
    for model, (train, _) in zip(res.models, pairs):
        plain = clone(est).fit(ds.subset(train))
        assert _model(model) == plain.get_booster().truncated(best + 1).to_json()
    np.testing.assert_array_equal(res.mean, curves.mean(axis=0)[: best + 1])


def test_cv_follows_early_stopping_min_delta_as_lightgbm(data):
    X, y, _ = data
    ds = Dataset(X, y)
    pairs = list(KFold(3, shuffle=True, random_state=2).split(X))
    base = {"n_estimators": 200, "learning_rate": 0.05, "random_state": 0}
    curves = _curves(RGBMRegressor(**base), ds, pairs, "l2")
    mean = curves.mean(axis=0)
    for delta in (0.0, 0.002, 0.02):
        stopped, best = _lgb_early_stop(mean, False, 5, min_delta=delta)
        res = rgbm_rs.cv(
            RGBMRegressor(**base, early_stopping_min_delta=delta), ds, folds=pairs, early_stopping_rounds=5
        )
        assert res.best_iteration == best, delta
        assert res.models[0].n_estimators_ == stopped + 1
    assert _lgb_early_stop(mean, False, 5, min_delta=0.02)[1] < _lgb_early_stop(mean, False, 5)[1]
    # A higher-is-better metric: AUC, with the rule's sign turned.
    yc = (y > 0).astype(int)
    dc = Dataset(X, yc)
    cls = {"n_estimators": 60, "learning_rate": 0.3, "random_state": 0, "eval_metric": "auc"}
    auc = _curves(RGBMClassifier(**cls), dc, pairs, "auc").mean(axis=0)
    res = rgbm_rs.cv(RGBMClassifier(**cls, early_stopping_min_delta=0.001), dc, folds=pairs, early_stopping_rounds=3)
    assert res.metric == "auc" and res.higher_is_better
    assert res.best_iteration == _lgb_early_stop(auc, True, 3, min_delta=0.001)[1]


def test_cv_out_of_fold_predictions_add_the_starting_scores():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(900, 4))
    offset = rng.normal(scale=2.0, size=900)
    y = X[:, 0] + offset + 0.2 * rng.normal(size=900)
    res = rgbm_rs.cv(RGBMRegressor(n_estimators=15, random_state=0), Dataset(X, y, init_score=offset), folds=3)
    # The metric cv reports is the mean over the folds of the test rows' l2 of oof.
    per_fold = [np.mean((y[test] - res.oof[test]) ** 2) for _, test in res.folds]
    np.testing.assert_allclose(res.mean[-1], np.mean(per_fold), rtol=1e-9)
    # Three classes with per-class starting scores: the same for multi_logloss.
    yc = np.digitize(X[:, 0] + offset, [-1.0, 1.0])
    init = np.column_stack([-offset, np.zeros(900), offset])
    res = rgbm_rs.cv(RGBMClassifier(n_estimators=10, random_state=0), Dataset(X, yc, init_score=init), folds=3)
    assert res.metric == "multi_logloss"
    per_fold = [log_loss(yc[test], res.oof[test], labels=[0, 1, 2]) for _, test in res.folds]
    np.testing.assert_allclose(res.mean[-1], np.mean(per_fold), rtol=1e-9)


def test_cv_custom_loss_needs_a_metric(data):
    X, y, _ = data

    def squared(y_true, raw):
        return raw - y_true, np.ones_like(raw)

    def mse(y_true, raw):
        return "mse", float(np.mean((y_true - raw) ** 2)), False

    ds = Dataset(X, y)
    with pytest.raises(ValueError, match="custom loss has no metric of its own: pass eval_metric"):
        rgbm_rs.cv(RGBMRegressor(n_estimators=3, loss=squared), ds, folds=3)
    for rounds in (None, 2):
        res = rgbm_rs.cv(
            RGBMRegressor(n_estimators=3, loss=squared, eval_metric=mse), ds, folds=3, early_stopping_rounds=rounds
        )
        assert res.metric == "mse"
        per_fold = [np.mean((y[test] - res.oof[test]) ** 2) for _, test in res.folds]
        np.testing.assert_allclose(res.mean[-1], np.mean(per_fold), rtol=1e-9)


def test_cv_names_the_fold_that_misses_a_class(data):
    X, y, _ = data
    yc = np.digitize(X[:, 0], [-0.6, 0.6])
    yc[:3] = 3  # class 3 only in the first test fold
    ds = Dataset(X, yc)
    with pytest.raises(
        ValueError, match=r"fold 0: its training rows have no row of class 3; use StratifiedKFold or fewer"
    ):
        rgbm_rs.cv(RGBMClassifier(n_estimators=2), ds, folds=list(KFold(4).split(X)))
    # StratifiedKFold puts one of its rows in each of 3 folds' test parts: fine.
    res = rgbm_rs.cv(RGBMClassifier(n_estimators=2), ds, folds=3)
    assert res.oof.shape == (600, 4)
    one = yc.copy()
    one[0], one[1:3] = 4, 0
    with (
        pytest.raises(ValueError, match="fold .: .* class 4, which has a single row"),
        pytest.warns(UserWarning, match="least populated class"),
    ):
        rgbm_rs.cv(RGBMClassifier(n_estimators=2), Dataset(X, one), folds=3)


# -- the bin sample's seed, pickling -----------------------------------------


def test_dataset_above_the_bin_sample_keeps_its_seed():
    # Past BIN_SAMPLE_ROWS the cut points come from a sample drawn with
    # random_state: another seed is refused, as another max_bins is, so a
    # Dataset fit is always the raw fit of the same parameters.
    rng = np.random.default_rng(0)
    n = rgbm_rs._core.BIN_SAMPLE_ROWS + 500
    X = rng.normal(size=(n, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    ds = Dataset(X, y)
    a = RGBMRegressor(n_estimators=2, max_depth=3, random_state=1).fit(ds)
    b = RGBMRegressor(n_estimators=2, max_depth=3, random_state=1).fit(X, y)
    assert _model(a) == _model(b)
    other = RGBMRegressor(n_estimators=2, max_depth=3, random_state=2).fit(X, y)
    assert _model(other) != _model(b), "the seed should move the cut points here"
    for target in (ds, ds.subset(np.arange(1000)), Dataset(X[:1000], y[:1000], reference=ds)):
        with pytest.raises(ValueError, match="random_state=1, but the estimator asks for random_state=2"):
            RGBMRegressor(n_estimators=1, random_state=2).fit(target)
    with pytest.raises(ValueError, match="random_state=1"):
        ds.construct(random_state=2)
    # random_state=None asks for no particular seed: the Dataset's sample serves.
    RGBMRegressor(n_estimators=1, random_state=None).fit(ds)
    # Below the sample size the seed does not shape the bins: any seed fits, as on raw rows.
    small = Dataset(X[:5000], y[:5000])
    RGBMRegressor(n_estimators=1, random_state=1).fit(small)
    c = RGBMRegressor(n_estimators=2, max_depth=3, random_state=2, subsample=0.5).fit(small)
    d = RGBMRegressor(n_estimators=2, max_depth=3, random_state=2, subsample=0.5).fit(X[:5000], y[:5000])
    assert _model(c) == _model(d)


def test_dataset_file_keeps_its_bin_sample_seed(tmp_path):
    rng = np.random.default_rng(1)
    n = rgbm_rs._core.BIN_SAMPLE_ROWS + 10
    X = rng.normal(size=(n, 1))
    ds = Dataset(X, X[:, 0], params={"random_state": 5})
    ds.save_binary(tmp_path / "d.bin")
    loaded = Dataset(tmp_path / "d.bin")
    with pytest.raises(ValueError, match="random_state=5"):
        RGBMRegressor(n_estimators=1, random_state=0).fit(loaded)
    RGBMRegressor(n_estimators=1, random_state=5).fit(loaded)


def test_binned_dataset_pickles_and_bins_again(data, tmp_path):
    import copy
    import pickle

    X, y, w = data
    ds = Dataset(X, y, weight=w, categorical_features=[4])
    est = RGBMRegressor(n_estimators=6, max_bins=31, random_state=0)
    first = est.fit(ds)
    sub = ds.subset(np.arange(0, 600, 2))
    on_sub = clone(est).fit(sub)
    valid = Dataset(X[:100], y[:100], reference=ds)
    for copied in (pickle.loads(pickle.dumps(ds)), copy.deepcopy(ds)):
        assert copied._binned is None
        # Bins again with the options it was binned with: the model of the raw rows.
        assert _model(clone(est).fit(copied)) == _model(first)
        raw = clone(est).set_params(categorical_features=[4]).fit(X, y, sample_weight=w)
        assert _model(first) == _model(raw)
        with pytest.raises(ValueError, match="max_bins=31"):
            RGBMRegressor(n_estimators=1).fit(copied)
    sub2, valid2 = pickle.loads(pickle.dumps((sub, valid)))
    assert sub2._parent is not None and valid2.reference is not None
    assert _model(clone(est).fit(sub2, eval_set=[valid2])) == _model(clone(est).fit(sub, eval_set=[valid]))
    assert _model(clone(est).fit(sub2)) == _model(on_sub)
    ds.save_binary(tmp_path / "d.bin")
    with pytest.raises(TypeError, match="loaded from a binary file .* cannot be pickled"):
        pickle.dumps(Dataset(tmp_path / "d.bin"))
