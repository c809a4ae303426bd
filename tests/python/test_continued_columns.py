"""A continued fit (init_model, warm_start) reads X as the model it continues
reads it: the model's trees see columns by position and categories by code,
so X is checked and encoded as the model's predict would check and encode it.

Oracles: predict of the model being continued (it refuses what the
continuation refuses), and the continuation on the frame laid out as at the
first fit (same columns in the same order, the same categories in the same
order), which was always read correctly.
"""

import warnings

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model

pd = pytest.importorskip("pandas")

rng = np.random.default_rng(0)
N = 1200
X = rng.normal(size=(N, 4))
Y = 3 * X[:, 0] + X[:, 1]
FRAME = pd.DataFrame(X, columns=list("abcd"))
LEVELS = list("abcdefgh")
CITY = rng.choice(LEVELS, N)
Y_CAT = np.searchsorted(LEVELS, CITY) % 3 + X[:, 0]
PARAMS = dict(max_depth=3, min_samples_leaf=5, min_data_per_group=5, random_state=0)


def _cats(order):
    return pd.DataFrame({"city": pd.Categorical(CITY, categories=order), "x": X[:, 0]})


def _mse(est, frame, y):
    return float(np.mean((est.predict(frame) - y) ** 2))


def _same_model(a, b):
    assert a.get_booster().to_json() == b.get_booster().to_json()


@pytest.fixture(scope="module")
def first():
    return RGBMRegressor(n_estimators=30, **PARAMS).fit(FRAME, Y)


@pytest.fixture(scope="module")
def first_cat():
    return RGBMRegressor(n_estimators=30, categorical_features="auto", **PARAMS).fit(_cats(LEVELS), Y_CAT)


@pytest.mark.parametrize("given", ["estimator", "path"])
def test_reordered_columns_are_refused_as_predict_refuses_them(first, tmp_path, given):
    # They were read by position: MSE 0.02 -> 17 with no error.
    reordered = FRAME[list("dcba")]
    with pytest.raises(ValueError, match="Feature names must be in the same order as they were in fit"):
        first.predict(reordered)
    first.save_model(tmp_path / "first.json")
    init_model = first if given == "estimator" else tmp_path / "first.json"
    with pytest.raises(
        ValueError, match="(?s)X does not have the columns of init_model: .*same order as they were in fit"
    ):
        RGBMRegressor(n_estimators=1, **PARAMS).fit(reordered, Y, init_model=init_model)
    with pytest.raises(ValueError, match="Feature names seen at fit time, yet now missing:\n- d"):
        RGBMRegressor(n_estimators=1, **PARAMS).fit(FRAME[list("abc")].assign(e=0.0), Y, init_model=init_model)
    # In the fit's order the continuation goes ahead, from the model's scores.
    more = RGBMRegressor(n_estimators=1, learning_rate=1e-9, **PARAMS).fit(FRAME, Y, init_model=init_model)
    np.testing.assert_allclose(more.predict(FRAME), first.predict(FRAME), rtol=0, atol=1e-6)


def test_warm_start_refuses_reordered_columns_and_keeps_its_model(first):
    est = RGBMRegressor(n_estimators=30, warm_start=True, **PARAMS).fit(FRAME, Y)
    before = est.get_booster().to_json()
    with pytest.raises(ValueError, match="X does not have the columns of the model warm_start continues"):
        est.set_params(n_estimators=35).fit(FRAME[list("dcba")], Y)
    assert est.get_booster().to_json() == before
    _same_model(est.fit(FRAME, Y), RGBMRegressor(n_estimators=5, **PARAMS).fit(FRAME, Y, init_model=first))


def test_a_width_that_differs_from_a_booster_is_refused(first):
    # A bare Booster records no names: only the width can be checked.
    with pytest.raises(ValueError, match="X has 3 features, but init_model has 4"):
        RGBMRegressor(n_estimators=1).fit(X[:, :3], Y, init_model=first.get_booster())
    with pytest.raises(ValueError, match="X has 3 features, but RGBMRegressor is expecting 4 features"):
        with pytest.warns(UserWarning, match="X does not have valid feature names"):
            RGBMRegressor(n_estimators=1).fit(X[:, :3], Y, init_model=first)


def test_an_array_continues_a_frame_model_with_predicts_warning(first):
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        from_array = RGBMRegressor(n_estimators=3, **PARAMS).fit(X, Y, init_model=first)
    _same_model(from_array, RGBMRegressor(n_estimators=3, **PARAMS).fit(FRAME, Y, init_model=first))


@pytest.mark.parametrize("given", ["estimator", "path", "warm_start"])
def test_categories_listed_in_another_order_are_mapped_by_value(first_cat, tmp_path, given):
    # Codes into the new frame's own categories used to reach the old trees:
    # MSE 0.009 -> 20 with no error.
    reordered = _cats(LEVELS[::-1])
    np.testing.assert_array_equal(first_cat.predict(reordered), first_cat.predict(_cats(LEVELS)))

    def continued(frame):
        if given == "warm_start":
            est = RGBMRegressor(n_estimators=30, categorical_features="auto", warm_start=True, **PARAMS)
            return est.fit(_cats(LEVELS), Y_CAT).set_params(n_estimators=35).fit(frame, Y_CAT)
        first_cat.save_model(tmp_path / "first.json")
        init_model = first_cat if given == "estimator" else tmp_path / "first.json"
        est = RGBMRegressor(n_estimators=5, categorical_features="auto", **PARAMS)
        return est.fit(frame, Y_CAT, init_model=init_model, eval_set=[(frame, Y_CAT)])

    got, want = continued(reordered), continued(_cats(LEVELS))
    _same_model(got, want)
    assert got.evals_result_ == want.evals_result_
    assert _mse(got, reordered, Y_CAT) < _mse(first_cat, reordered, Y_CAT) < 0.05
    np.testing.assert_array_equal(got.predict(reordered), got.predict(_cats(LEVELS)))


def test_string_columns_continue_with_the_fits_categories(first_cat):
    # The first fit's categories come from a category column; the continuation
    # gets strings, only some of them: their sorted distinct values would be
    # other codes.
    part = CITY != "a"
    strings = pd.DataFrame({"city": CITY[part].astype(object), "x": X[part, 0]})
    got = RGBMRegressor(n_estimators=5, categorical_features="auto", **PARAMS).fit(
        strings, Y_CAT[part], init_model=first_cat
    )
    want = RGBMRegressor(n_estimators=5, categorical_features="auto", **PARAMS).fit(
        _cats(LEVELS)[part], Y_CAT[part], init_model=first_cat
    )
    _same_model(got, want)
    np.testing.assert_array_equal(got.predict(strings), want.predict(_cats(LEVELS)[part]))


def test_a_column_categorical_on_one_side_only_is_refused(first_cat):
    codes = pd.DataFrame({"city": np.searchsorted(LEVELS, CITY).astype(float), "x": X[:, 0]})
    with pytest.raises(TypeError, match="categorical at fit but not now: 'city'"):
        first_cat.predict(codes)
    with pytest.raises(
        TypeError, match="(?s)X does not have the columns of init_model: .*categorical at fit but not now"
    ):
        RGBMRegressor(n_estimators=1, **PARAMS).fit(codes, Y_CAT, init_model=first_cat)


def test_classifier_continuation_reads_the_columns_as_its_model():
    y = (Y > 0).astype(int)
    first = RGBMClassifier(n_estimators=10, **PARAMS).fit(FRAME, y)
    with pytest.raises(ValueError, match="X does not have the columns of init_model"):
        RGBMClassifier(n_estimators=2, **PARAMS).fit(FRAME[list("badc")], y, init_model=first)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        more = RGBMClassifier(n_estimators=2, **PARAMS).fit(FRAME, y, init_model=first)
    assert more.n_estimators_ == 12


def test_a_saved_continuation_keeps_the_fits_categories(first_cat, tmp_path):
    reordered = _cats(LEVELS[::-1])
    est = RGBMRegressor(n_estimators=3, categorical_features="auto", **PARAMS).fit(
        reordered, Y_CAT, init_model=first_cat
    )
    est.save_model(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict(reordered), est.predict(reordered))
    np.testing.assert_array_equal(back.predict(_cats(LEVELS)), est.predict(reordered))


# ------------------------------------------------------------------ Dask


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("dask.dataframe", reason="the dask extra is not installed")
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None, silence_logs=40
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_dask_continuation_checks_the_columns_and_categories(client):
    import dask.dataframe as dd

    from rgbm_rs.dask import DaskRGBMRegressor

    params = dict(PARAMS, summation="exact")
    first = RGBMRegressor(n_estimators=10, **params).fit(FRAME, Y)
    y = dd.from_pandas(pd.Series(Y), npartitions=2)
    frame = dd.from_pandas(FRAME, npartitions=2)
    with pytest.raises(ValueError, match="(?s)X does not have the columns of init_model: .*same order"):
        DaskRGBMRegressor(n_estimators=1, **params).fit(frame[list("dcba")], y, init_model=first)
    est = DaskRGBMRegressor(n_estimators=2, warm_start=True, **params).fit(frame, y)
    with pytest.raises(ValueError, match="the model warm_start continues"):
        est.set_params(n_estimators=3).fit(frame[list("dcba")], y)
    # In the fit's order: the model of the local continuation.
    got = DaskRGBMRegressor(n_estimators=2, **params).fit(frame, y, init_model=first)
    _same_model(got, RGBMRegressor(n_estimators=2, **params).fit(FRAME, Y, init_model=first))

    first_cat = RGBMRegressor(n_estimators=10, categorical_features="auto", **params).fit(_cats(LEVELS), Y_CAT)
    y_cat = dd.from_pandas(pd.Series(Y_CAT), npartitions=2)
    reordered = dd.from_pandas(_cats(LEVELS[::-1]), npartitions=2)
    with pytest.raises(ValueError, match="the categories of column 'city' differ from those recorded at fit"):
        DaskRGBMRegressor(n_estimators=1, categorical_features="auto", **params).fit(
            reordered, y_cat, init_model=first_cat
        )
    same = dd.from_pandas(_cats(LEVELS), npartitions=2)
    got = DaskRGBMRegressor(n_estimators=2, categorical_features="auto", **params).fit(
        same, y_cat, init_model=first_cat
    )
    want = RGBMRegressor(n_estimators=2, categorical_features="auto", **params).fit(
        _cats(LEVELS), Y_CAT, init_model=first_cat
    )
    _same_model(got, want)
