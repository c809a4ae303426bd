"""Native categorical splits from Python: how features are named, what
one split can learn, unseen categories, persistence and bad input."""

import warnings

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model

GROUP = np.array([c in (3, 17, 8, 0, 11, 5, 14, 9, 19, 2) for c in range(20)])


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 20, size=n)
    X = np.column_stack([codes.astype(float), rng.normal(size=n)])
    return X, GROUP[codes].astype(float)


def _stump(**kw):
    return RGBMRegressor(n_estimators=1, max_depth=1, learning_rate=1.0, min_samples_leaf=1, min_data_per_group=1, **kw)


def test_a_non_ordinal_grouping_is_learned_in_one_split():
    X, y = _data()
    native = _stump(categorical_features=[0]).fit(X, y)
    assert np.abs(native.predict(X) - y).max() < 1e-9
    root = native.dump_model()["trees"][0]["tree"]
    assert set(root["categories"]) in ({c for c in range(20) if GROUP[c]}, {c for c in range(20) if not GROUP[c]})
    # The same data as ordinal codes: one split leaves most of the variance,
    # and three levels still do not separate the groups.
    ordinal = _stump().fit(X, y)
    assert np.mean((ordinal.predict(X) - y) ** 2) > 0.1
    deeper = _stump(categorical_features=None).set_params(max_depth=3).fit(X, y)
    assert np.mean((deeper.predict(X) - y) ** 2) > 1e-3


def test_auto_indices_names_and_masks_name_the_same_features():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame({"code": pd.Categorical(X[:, 0].astype(int)), "noise": X[:, 1]})
    preds = []
    for spec in ["auto", [0], ["code"], [True, False], np.array([True, False]), (0,)]:
        est = RGBMRegressor(n_estimators=5, categorical_features=spec, random_state=0).fit(frame, y)
        preds.append(est.predict(frame))
    for p in preds[1:]:
        np.testing.assert_array_equal(p, preds[0])
    assert np.abs(preds[0] - y).max() < 0.5


def test_unseen_and_missing_categories_follow_the_default_side():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    names = np.array([f"c{i}" for i in range(20)], dtype=object)
    frame = pd.DataFrame({"city": pd.Categorical(names[X[:, 0].astype(int)]), "noise": X[:, 1]})
    est = RGBMClassifier(n_estimators=5, categorical_features="auto", random_state=0).fit(frame, y.astype(int))
    probe = pd.DataFrame({"city": pd.Categorical(["c1", "zzz", None], categories=["c1", "zzz"]), "noise": 0.0})
    p = est.predict_proba(probe)[:, 1]
    assert p[1] == p[2]


def test_categorical_models_survive_save_and_load(tmp_path):
    X, y = _data()
    est = RGBMRegressor(n_estimators=10, categorical_features=[0], random_state=0).fit(X, y)
    path = tmp_path / "m.json"
    est.save_model(path)
    back = load_model(path)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.get_params()["categorical_features"] == [0]


@pytest.mark.parametrize(
    "spec, match",
    [
        ([5], "out of range"),
        (["nope"], "not a feature name"),
        ([True], "boolean mask needs 2"),
        ([0, 0], "more than once"),
        ([1.5], "expected feature indices"),
    ],
)
def test_bad_categorical_features_are_refused(spec, match):
    X, y = _data(200)
    with pytest.raises(ValueError, match=f"categorical_features: .*{match}"):
        RGBMRegressor(n_estimators=2, categorical_features=spec).fit(X, y)


def test_values_that_are_not_codes_are_refused():
    X, y = _data(200)
    for bad in (0.5, -1.0, 1e6):
        Xb = X.copy()
        Xb[3, 0] = bad
        with pytest.raises(ValueError, match="categorical_features"):
            RGBMRegressor(n_estimators=2, categorical_features=[0]).fit(Xb, y)
    with pytest.raises(ValueError, match="categorical_features"):
        RGBMRegressor(categorical_features="all").fit(X, y)
    with pytest.raises(ValueError, match="max_cat_threshold"):
        RGBMRegressor(categorical_features=[0], max_cat_threshold=0).fit(X, y)


def test_string_columns_are_encoded_at_fit_and_checked_at_predict(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _data()
    names = np.array([f"city-{i}" for i in range(20)], dtype=object)
    frame = pd.DataFrame({"city": names[X[:, 0].astype(int)], "noise": X[:, 1]})
    frame.loc[::50, "city"] = None
    with pytest.raises(TypeError, match="non-numeric column 'city'"):
        RGBMRegressor(n_estimators=2).fit(frame, y)
    est = RGBMRegressor(n_estimators=5, categorical_features="auto", random_state=0).fit(frame, y)
    coded = pd.DataFrame({"city": pd.Categorical(frame["city"], categories=sorted(names)), "noise": X[:, 1]})
    same = RGBMRegressor(n_estimators=5, categorical_features="auto", random_state=0).fit(coded, y)
    np.testing.assert_array_equal(est.predict(frame), same.predict(coded))
    # Unseen strings and missing values take the same side; numbers in the column are refused.
    probe = pd.DataFrame({"city": ["never-seen", None], "noise": [0.0, 0.0]})
    p = est.predict(probe)
    assert p[0] == p[1]
    est.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(load_model(tmp_path / "m.json").predict(frame), est.predict(frame))
    with pytest.raises(TypeError, match="categorical at fit but not now"):
        est.predict(pd.DataFrame({"city": [1.0, 2.0], "noise": [0.0, 0.0]}))


def test_sparse_categorical_fit_equals_dense():
    sp = pytest.importorskip("scipy.sparse")
    r = np.random.default_rng(0)
    X = r.integers(0, 20, size=(500, 3)).astype(float)
    X[r.random((500, 3)) < 0.5] = 0  # implicit zeros are category 0
    y = np.isin(X[:, 0], [1, 4, 7, 11, 13]).astype(float) + 0.1 * r.normal(size=500)
    dense = RGBMRegressor(n_estimators=5, categorical_features=[0]).fit(X, y)
    sparse = RGBMRegressor(n_estimators=5, categorical_features=[0]).fit(sp.csr_array(X), y)
    assert dense.dump_model() == sparse.dump_model()
    np.testing.assert_array_equal(dense.predict(X), sparse.predict(sp.csr_array(X)))


@pytest.mark.parametrize("fitted_as", ["strings", "category"])
def test_a_column_of_missing_values_alone_predicts_as_missing(fitted_as):
    # pandas types a column of None alone as object and one of NaN alone as
    # float64, and these were refused as "categorical at fit but not now".
    pd = pytest.importorskip("pandas")
    X, y = _data()
    names = np.array([f"city-{i}" for i in range(20)], dtype=object)[X[:, 0].astype(int)]
    city = names if fitted_as == "strings" else pd.Categorical(names)
    frame = pd.DataFrame({"city": city, "noise": X[:, 1]})
    est = RGBMRegressor(n_estimators=5, categorical_features="auto", random_state=0).fit(frame, y)
    # The reference: the same rows inside a batch whose column has its categorical
    # dtype (a missing value among categories) and in the codes a plain array takes.
    rows = pd.DataFrame(
        {"city": pd.Series(["city-3", None, None], dtype=frame["city"].dtype), "noise": [0.2, 0.1, -1.5]}
    )
    if fitted_as == "strings":
        rows["city"] = rows["city"].astype(object)
    want = est.predict(rows)[1:]
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(want, est.predict(np.array([[np.nan, 0.1], [np.nan, -1.5]])))
    blank = [
        pd.DataFrame({"city": [None, None], "noise": [0.1, -1.5]}),
        pd.DataFrame({"city": [np.nan, np.nan], "noise": [0.1, -1.5]}),
        pd.DataFrame({"city": [pd.NA, None], "noise": [0.1, -1.5]}),
        pd.DataFrame({"city": pd.array([None, None], dtype="Float64"), "noise": [0.1, -1.5]}),
    ]
    for batch in blank:
        assert batch["city"].dtype.kind in "Of"
        np.testing.assert_array_equal(est.predict(batch), want)
        np.testing.assert_array_equal(est.predict(batch.iloc[:1]), want[:1])
    pl = pytest.importorskip("polars")
    np.testing.assert_array_equal(est.predict(pl.DataFrame({"city": [None, None], "noise": [0.1, -1.5]})), want)
    pa = pytest.importorskip("pyarrow")
    np.testing.assert_array_equal(est.predict(pa.table({"city": pa.nulls(2), "noise": [0.1, -1.5]})), want)
    # A numeric column with a value in it is still refused.
    with pytest.raises(TypeError, match="categorical at fit but not now: 'city'"):
        est.predict(pd.DataFrame({"city": [np.nan, 2.0], "noise": [0.1, -1.5]}))


def test_more_categories_than_max_bins_warn_and_more_bins_keep_them_apart():
    # 300 categories, each its own mean: at max_bins=255 the 45 least
    # frequent share the missing bin (a warning says so); with max_bins=300
    # every category has its bin and the training error is far smaller.
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 300, 30_000)
    y = (rng.normal(size=300) * 2)[codes] + 0.1 * rng.normal(size=30_000)
    X = codes[:, None].astype(float)
    kw = dict(
        categorical_features=[0], n_estimators=100, learning_rate=0.3, min_data_per_group=1, max_cat_threshold=300
    )
    with pytest.warns(UserWarning, match="300 categories, more than max_bins=255"):
        merged = RGBMRegressor(**kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        apart = RGBMRegressor(max_bins=300, **kw).fit(X, y)
    mse = lambda m: float(np.mean((m.predict(X) - y) ** 2))  # noqa: E731
    assert mse(apart) < 0.05 < mse(merged)


def _one_hot(codes, k):
    return (codes[:, None] == np.arange(k)).astype(float)


def _native_equals_one_hot(cls, params, k, codes, other, y, output):
    """A native categorical fit with max_cat_to_onehot=4 predicts as the
    fit on the one-hot columns (`output`: the method compared)."""
    native_X = np.column_stack([codes.astype(float), other])
    one_hot_X = np.column_stack([_one_hot(codes, k), other])
    native = cls(categorical_features=[0], max_cat_to_onehot=4, **params).fit(native_X, y)
    one_hot = cls(**params).fit(one_hot_X, y)
    np.testing.assert_allclose(
        getattr(native, output)(native_X), getattr(one_hot, output)(one_hot_X), rtol=1e-9, atol=1e-9
    )


def _few_categories(min_rows):
    """Hypothesis examples (k categories, n rows, seed) for the one-hot tests."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    return lambda check: hypothesis.settings(max_examples=12, deadline=None)(
        hypothesis.given(st.integers(2, 4), st.integers(min_rows, 400), st.integers(0, 2**31))(check)
    )


@pytest.mark.parametrize("loss", ["squared", "huber", "absolute_error", "quantile", "poisson", "gamma", "tweedie"])
def test_few_categories_split_as_their_one_hot_columns_for_every_regression_loss(loss):
    # Up to max_cat_to_onehot categories a split is one category against the
    # rest: the partitions, and so the models, of the one-hot columns.
    @_few_categories(60)
    def check(k, n, seed):
        rng = np.random.default_rng(seed)
        codes, other, effect = rng.integers(0, k, size=n), rng.normal(size=n), rng.normal(size=k)
        y = np.exp(0.5 * effect[codes] + 0.3 * other + 0.2 * rng.normal(size=n))
        params = dict(loss=loss, n_estimators=5, max_depth=3, min_samples_leaf=5, min_data_per_group=1)
        if loss == "quantile":
            params["alpha"] = 0.7
        _native_equals_one_hot(RGBMRegressor, params, k, codes, other, y, "predict")

    check()


@pytest.mark.parametrize("loss", ["logistic", "exponential", "softmax"])
def test_few_categories_split_as_their_one_hot_columns_for_every_classification_loss(loss):
    @_few_categories(80)
    def check(k, n, seed):
        rng = np.random.default_rng(seed)
        codes, other = rng.integers(0, k, size=n), rng.normal(size=n)
        classes = 3 if loss == "softmax" else 2
        logits = rng.normal(size=(k, classes))[codes] + 0.5 * other[:, None] + rng.normal(size=(n, classes))
        params = dict(n_estimators=5, max_depth=3, min_samples_leaf=5, min_data_per_group=1)
        if loss != "softmax":
            params["loss"] = loss
        _native_equals_one_hot(RGBMClassifier, params, k, codes, other, logits.argmax(axis=1), "decision_function")

    check()


def _city_frame(pd, X):
    names = np.array([f"c{i}" for i in range(20)], dtype=object)
    return pd.DataFrame({"city": pd.Categorical(names[X[:, 0].astype(int)]), "noise": X[:, 1]})


def _model(est):
    return est.get_booster().to_json()


def test_by_default_a_categorical_dtype_is_split_by_category_sets():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = _city_frame(pd, X)
    default = RGBMRegressor(n_estimators=5, random_state=0).fit(frame, y)
    assert default.categorical_features == "from_dtype"
    named = RGBMRegressor(n_estimators=5, categorical_features=["city"], random_state=0).fit(frame, y)
    assert _model(default) == _model(named)
    assert '"categories"' in _model(default)
    np.testing.assert_array_equal(default.predict(frame), named.predict(frame))
    # An array has no categorical features: the model is the one None gives.
    plain = RGBMRegressor(n_estimators=5, random_state=0).fit(X, y)
    assert _model(plain) == _model(RGBMRegressor(n_estimators=5, categorical_features=None, random_state=0).fit(X, y))
    assert '"categories"' not in _model(plain)


def test_none_splits_category_codes_as_ordinal_numbers():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = _city_frame(pd, X)
    ordinal = RGBMRegressor(n_estimators=5, categorical_features=None, random_state=0).fit(frame, y)
    codes = pd.DataFrame({"city": frame["city"].cat.codes.astype(float), "noise": X[:, 1]})
    numbers = RGBMRegressor(n_estimators=5, random_state=0).fit(codes, y)
    assert _model(ordinal) == _model(numbers)
    assert '"categories"' not in _model(ordinal)
    np.testing.assert_array_equal(ordinal.predict(frame), numbers.predict(codes))
    # The category values are still looked up by value at predict time.
    assert ordinal._categories_ == {"city": list(frame["city"].cat.categories)}


def _as_library(frame, library):
    if library == "polars":
        return pytest.importorskip("polars").from_pandas(frame)
    if library == "pyarrow":
        return pytest.importorskip("pyarrow").Table.from_pandas(frame, preserve_index=False)
    return frame


@pytest.mark.parametrize("library", ["pandas", "polars", "pyarrow"])
@pytest.mark.parametrize("spec", ["from_dtype", None])
def test_string_columns_without_a_word_say_which_word(spec, library):
    pd = pytest.importorskip("pandas")
    X, y = _data(200)
    city = np.array(["a", "b"], dtype=object)[X[:, 0].astype(int) % 2]
    frame = _as_library(pd.DataFrame({"city": city, "noise": X[:, 1]}), library)
    with pytest.raises(TypeError, match=r"'city'.*categorical_features=\"auto\".*categorical_features=\['city'\]"):
        RGBMRegressor(n_estimators=2, categorical_features=spec).fit(frame, y)
    # Either word reads them, as pandas strings are read.
    for word in ("auto", ["city"]):
        RGBMRegressor(n_estimators=2, categorical_features=word).fit(frame, y)


def _split_sides(categories, present):
    """A category split as the unordered pair of its sides (present codes only)."""
    side = frozenset(categories) & present
    return frozenset({side, present - side})


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("task", ["regression", "binary"])
@pytest.mark.parametrize("n_categories", [6, 40])
def test_one_category_split_is_lightgbms_with_the_defaults(seed, task, n_categories):
    # Every categorical default (max_cat_to_onehot, max_cat_threshold,
    # cat_smooth, min_data_per_group, cat_l2) has LightGBM's value and
    # meaning: on skewed category counts, the first split sends the same
    # categories each way. Hessians of a first tree are equal across rows,
    # so LightGBM's counts estimated from them are exact.
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(seed)
    n = 6000
    codes = rng.choice(n_categories, size=n, p=rng.dirichlet(np.full(n_categories, 0.7)))
    z = rng.normal(size=n_categories)[codes] + rng.normal(size=n)
    X = codes.reshape(-1, 1).astype(float)
    one = dict(n_estimators=1, learning_rate=1.0)
    if task == "regression":
        y = z
        ours = RGBMRegressor(max_leaves=2, max_depth=None, categorical_features=[0], **one)
        theirs = lgb.LGBMRegressor(num_leaves=2, verbose=-1, **one)
    else:
        y = (z > 0).astype(int)
        ours = RGBMClassifier(max_leaves=2, max_depth=None, categorical_features=[0], **one)
        theirs = lgb.LGBMClassifier(num_leaves=2, verbose=-1, **one)
    ours.fit(X, y)
    theirs.fit(X, y, categorical_feature=[0])
    present = frozenset(np.unique(codes).tolist())
    root = ours.dump_model()["trees"][0]["tree"]
    lgb_root = theirs.booster_.dump_model()["tree_info"][0]["tree_structure"]
    assert lgb_root["decision_type"] == "=="
    lgb_left = [int(v) for v in str(lgb_root["threshold"]).split("||")]
    assert _split_sides(root["categories"], present) == _split_sides(lgb_left, present)


def test_rare_categories_stay_out_of_the_sorted_scan():
    # cat_smooth is also a row count: a category with fewer rows in the node
    # is not sorted, so it stays on the default side with unseen categories,
    # however strong its signal.
    rng = np.random.default_rng(3)
    codes = np.concatenate([np.repeat(np.arange(10), 200), [10] * 5])
    y = np.where(codes % 2 == 0, 1.0, 0.0) + 0.01 * rng.normal(size=codes.size)
    y[codes == 10] = 5.0
    X = codes.reshape(-1, 1).astype(float)
    kw = dict(n_estimators=1, max_depth=1, learning_rate=1.0, categorical_features=[0], min_samples_leaf=1)
    rare_out = RGBMRegressor(cat_smooth=10, **kw).fit(X, y)
    rare_in = RGBMRegressor(cat_smooth=4, **kw).fit(X, y)
    unseen, rare, even, odd = [99.0], [10.0], [0.0], [1.0]
    out = rare_out.predict([unseen, rare, even, odd])
    assert out[1] == out[0] and out[2] != out[3]
    assert set(rare_out.dump_model()["trees"][0]["tree"]["categories"]) in ({0, 2, 4, 6, 8}, {1, 3, 5, 7, 9})
    # Sorted, it goes with the even codes, its side by its mean.
    inside = rare_in.predict([unseen, rare, even, odd])
    assert inside[1] == inside[2] and inside[2] != inside[3]
    assert 10 in rare_in.dump_model()["trees"][0]["tree"]["categories"]
