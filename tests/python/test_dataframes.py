"""Data frames as input: pandas, polars and pyarrow give the same models as numpy."""

import warnings

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor

NAMES = ["a", "b", "c", "d"]
PARAMS = dict(n_estimators=20, max_depth=3, min_samples_leaf=5, random_state=0)
# The numpy reference of a frame whose column 1 ('k') is categorical, which
# the default categorical_features="from_dtype" splits by category sets.
CODES = dict(PARAMS, categorical_features=[1])


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 4))
    X[rng.random(300) < 0.1, 1] = np.nan
    y_reg = X[:, 0] + np.sin(2 * X[:, 2]) + 0.1 * rng.normal(size=300)
    y_clf = (np.nan_to_num(X[:, 1]) + X[:, 3] > 0).astype(int)
    return X, y_reg, y_clf


def _outputs(est, X):
    if isinstance(est, RGBMClassifier):
        return [est.predict(X), est.predict_proba(X), est.decision_function(X)]
    return [est.predict(X)]


def _assert_same_as_numpy(make_frame, X, y, cls, X_np=None):
    """The model fitted on the frame predicts exactly as the numpy model, on frames and arrays."""
    X_np = X if X_np is None else X_np
    ref = cls(**PARAMS).fit(X_np, y)
    frame = make_frame(X)
    est = cls(**PARAMS).fit(frame, y)
    assert list(est.feature_names_in_) == NAMES
    assert est.feature_names_in_.dtype == object
    assert est.n_features_in_ == X_np.shape[1]
    for got, want in zip(_outputs(est, frame), _outputs(ref, X_np)):
        assert np.array_equal(got, want)
    staged = list(est.staged_predict(frame))
    assert np.array_equal(staged[-1], list(ref.staged_predict(X_np))[-1])
    return est


# ---------------------------------------------------------------- constructors


def _pandas(X):
    pd = pytest.importorskip("pandas")
    return pd.DataFrame(X, columns=NAMES)


def _polars(X):
    pl = pytest.importorskip("polars")
    return pl.DataFrame({n: X[:, j] for j, n in enumerate(NAMES)}, nan_to_null=True)


def _arrow(X):
    pa = pytest.importorskip("pyarrow")
    return pa.table({n: pa.array(X[:, j], from_pandas=True) for j, n in enumerate(NAMES)})


FRAMES = [_pandas, _polars, _arrow]


@pytest.mark.parametrize("make_frame", FRAMES, ids=["pandas", "polars", "pyarrow"])
@pytest.mark.parametrize("cls", [RGBMRegressor, RGBMClassifier])
def test_frame_equals_numpy(data, make_frame, cls):
    X, y_reg, y_clf = data
    y = y_reg if cls is RGBMRegressor else y_clf
    frame = make_frame(X)
    est = _assert_same_as_numpy(make_frame, X, y, cls)
    # Predicting on the plain array warns (no names) but gives the same answer.
    with pytest.warns(UserWarning, match="feature names"):
        assert np.array_equal(est.predict(X), est.predict(frame))


@pytest.mark.parametrize("make_frame", FRAMES, ids=["pandas", "polars", "pyarrow"])
def test_float32_frames_stay_float32(data, make_frame):
    X, y, _ = data
    X32 = X.astype(np.float32)
    frame = make_frame(X32)
    if type(frame).__module__.startswith("pandas"):
        frame = frame.astype(np.float32)
    elif type(frame).__module__.startswith("polars"):
        import polars as pl

        frame = frame.cast(pl.Float32)
    else:
        import pyarrow as pa

        frame = frame.cast(pa.schema([(n, pa.float32()) for n in NAMES]))
    ref = RGBMRegressor(**PARAMS).fit(X32, y)
    est = RGBMRegressor(**PARAMS).fit(frame, y)
    assert np.array_equal(est.predict(frame), ref.predict(X32))
    # float64 prediction data for a float32 model is binned the float64 way, as with numpy.
    assert np.array_equal(est.predict(make_frame(X)), ref.predict(X))


def test_polars_and_arrow_targets_and_weights(data):
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    X, y, _ = data
    w = np.linspace(0.5, 2.0, len(y))
    ref = RGBMRegressor(**PARAMS).fit(X, y, sample_weight=w).predict(X)
    got = RGBMRegressor(**PARAMS).fit(_polars(X), pl.Series(y), sample_weight=pl.Series(w)).predict(_polars(X))
    assert np.array_equal(got, ref)
    got = RGBMRegressor(**PARAMS).fit(_arrow(X), pa.chunked_array([y]), sample_weight=pa.array(w)).predict(_arrow(X))
    assert np.array_equal(got, ref)


def test_arrow_record_batch_and_chunked_table(data):
    pa = pytest.importorskip("pyarrow")
    X, y, _ = data
    ref = RGBMRegressor(**PARAMS).fit(X, y).predict(X)
    table = _arrow(X)
    chunked = pa.concat_tables([table.slice(0, 100), table.slice(100)])
    assert chunked.column(0).num_chunks == 2
    est = RGBMRegressor(**PARAMS).fit(chunked, y)
    assert np.array_equal(est.predict(chunked), ref)
    assert np.array_equal(est.predict(table.to_batches(max_chunksize=10_000)[0]), ref)


# ---------------------------------------------------------------- nullable dtypes, bools


def test_pandas_nullable_dtypes_equal_numpy_with_nan():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 240
    ints = rng.integers(0, 10, n).astype(float)
    ints[rng.random(n) < 0.15] = np.nan
    floats = rng.normal(size=n)
    floats[rng.random(n) < 0.15] = np.nan
    flags = (rng.random(n) < 0.5).astype(float)
    flags[rng.random(n) < 0.15] = np.nan
    plain_bool = rng.random(n) < 0.3
    X_np = np.column_stack([ints, floats, flags, plain_bool.astype(float)])
    y = np.nan_to_num(ints) + 2 * np.nan_to_num(flags) - plain_bool + np.nan_to_num(floats)

    def make(_):
        return pd.DataFrame(
            {
                "a": pd.array([None if np.isnan(v) else int(v) for v in ints], dtype="Int64"),
                "b": pd.array([None if np.isnan(v) else v for v in floats], dtype="Float64"),
                "c": pd.array([None if np.isnan(v) else bool(v) for v in flags], dtype="boolean"),
                "d": plain_bool,
            }
        )

    frame = make(None)
    assert frame["a"].isna().any() and frame["c"].isna().any()
    _assert_same_as_numpy(make, None, y, RGBMRegressor, X_np=X_np)
    _assert_same_as_numpy(make, None, (y > np.median(y)).astype(int), RGBMClassifier, X_np=X_np)


def test_pandas_object_column_of_numbers_is_numeric(data):
    X, y, _ = data
    frame = _pandas(X).astype({"b": object})
    frame.loc[frame["b"].isna(), "b"] = None
    ref = RGBMRegressor(**PARAMS).fit(X, y).predict(X)
    assert np.array_equal(RGBMRegressor(**PARAMS).fit(frame, y).predict(frame), ref)


def test_polars_and_arrow_nulls_equal_numpy_nan():
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(4)
    n = 240
    ints = [None if rng.random() < 0.2 else int(v) for v in rng.integers(0, 20, n)]
    flags = [None if rng.random() < 0.2 else bool(v) for v in rng.random(n) < 0.5]
    floats = [None if rng.random() < 0.2 else float(v) for v in rng.normal(size=n)]
    other = rng.normal(size=n)
    to_f = lambda vals: np.array([np.nan if v is None else float(v) for v in vals])  # noqa: E731
    X_np = np.column_stack([to_f(ints), to_f(flags), to_f(floats), other])
    y = np.nan_to_num(X_np[:, 0]) - 3 * np.nan_to_num(X_np[:, 1]) + other
    ref = RGBMRegressor(**PARAMS).fit(X_np, y).predict(X_np)
    frames = [
        pl.DataFrame({"a": ints, "b": flags, "c": floats, "d": other}),
        pa.table({"a": pa.array(ints, pa.int32()), "b": pa.array(flags), "c": pa.array(floats), "d": other}),
    ]
    for frame in frames:
        assert np.array_equal(RGBMRegressor(**PARAMS).fit(frame, y).predict(frame), ref)


# ---------------------------------------------------------------- categories


@pytest.fixture
def cat_data():
    rng = np.random.default_rng(5)
    n = 400
    levels = ["lo", "mid", "hi", "top"]
    codes = rng.integers(0, 4, n)
    codes[rng.random(n) < 0.1] = -1
    x = rng.normal(size=n)
    effect = np.array([0.0, 1.0, -1.0, 2.0, 0.5])[codes]  # code -1 picks 0.5
    y = x + effect + 0.05 * rng.normal(size=n)
    X_codes = np.column_stack([x, np.where(codes < 0, np.nan, codes).astype(float)])
    return levels, codes, x, y, X_codes


def _pandas_cat(levels, codes, x):
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({"x": x, "k": pd.Categorical.from_codes(codes, categories=levels)})


def _values(levels, codes):
    return [None if c < 0 else levels[c] for c in codes]


def test_pandas_category_uses_codes(cat_data):
    pd = pytest.importorskip("pandas")
    levels, codes, x, y, X_codes = cat_data
    frame = _pandas_cat(levels, codes, x)
    est = RGBMRegressor(**PARAMS).fit(frame, y)
    ref = RGBMRegressor(**CODES).fit(X_codes, y)
    assert est._categories_ == {"k": levels}
    assert np.array_equal(est.predict(frame), ref.predict(X_codes))
    # Same values with the categories listed in another order: mapped by value.
    shuffled = frame.assign(k=frame["k"].cat.reorder_categories(levels[::-1]))
    assert np.array_equal(est.predict(shuffled), ref.predict(X_codes))
    # Fewer declared categories at predict time is fine too.
    sub = pd.DataFrame({"x": [0.1, 0.2], "k": pd.Categorical(["hi", None], categories=["hi"])})
    assert np.array_equal(est.predict(sub), ref.predict(np.array([[0.1, 2.0], [0.2, np.nan]])))


def test_unseen_category_is_missing(cat_data):
    pd = pytest.importorskip("pandas")
    levels, codes, x, y, X_codes = cat_data
    est = RGBMRegressor(**PARAMS).fit(_pandas_cat(levels, codes, x), y)
    new = pd.DataFrame({"x": [0.0, 1.0, -1.0], "k": pd.Categorical(["never-seen", "mid", None])})
    as_nan = np.array([[0.0, np.nan], [1.0, 1.0], [-1.0, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # array input to a model fitted with names
        want = est.predict(as_nan)
    assert np.array_equal(est.predict(new), want)


def test_polars_categorical_and_enum(cat_data):
    pl = pytest.importorskip("polars")
    levels, codes, x, y, X_codes = cat_data
    vals = _values(levels, codes)
    ref = RGBMRegressor(**CODES).fit(X_codes, y)
    # Enum: the declared categories, in their order.
    enum = pl.DataFrame({"x": x, "k": pl.Series(vals, dtype=pl.Enum(levels))})
    est = RGBMRegressor(**PARAMS).fit(enum, y)
    assert est._categories_ == {"k": levels}
    assert np.array_equal(est.predict(enum), ref.predict(X_codes))
    # Categorical: the sorted distinct values.
    cat = pl.DataFrame({"x": x, "k": pl.Series(vals, dtype=pl.Categorical)})
    est = RGBMRegressor(**PARAMS).fit(cat, y)
    order = sorted(levels)
    assert est._categories_ == {"k": order}
    sorted_codes = np.array([np.nan if v is None else order.index(v) for v in vals])
    X_sorted = np.column_stack([x, sorted_codes])
    ref_sorted = RGBMRegressor(**CODES).fit(X_sorted, y)
    assert np.array_equal(est.predict(cat), ref_sorted.predict(X_sorted))
    # Unseen values are missing; a pandas frame with the same values predicts the same.
    new = pl.DataFrame({"x": [0.5, 0.5], "k": pl.Series(["zzz", "hi"], dtype=pl.Categorical)})
    want = ref_sorted.predict(np.array([[0.5, np.nan], [0.5, order.index("hi")]]))
    assert np.array_equal(est.predict(new), want)
    pytest.importorskip("pandas")
    assert np.array_equal(est.predict(new.to_pandas()), want)


def test_arrow_dictionary(cat_data):
    pa = pytest.importorskip("pyarrow")
    levels, codes, x, y, X_codes = cat_data
    dictionary = pa.array(levels)
    indices = pa.array([None if c < 0 else int(c) for c in codes], pa.int32())
    table = pa.table({"x": x, "k": pa.DictionaryArray.from_arrays(indices, dictionary)})
    ref = RGBMRegressor(**CODES).fit(X_codes, y)
    est = RGBMRegressor(**PARAMS).fit(table, y)
    assert est._categories_ == {"k": levels}
    assert np.array_equal(est.predict(table), ref.predict(X_codes))
    # The pandas conversion of the table keeps the codes.
    pytest.importorskip("pandas")
    assert np.array_equal(est.predict(table.to_pandas()), ref.predict(X_codes))
    # Chunks with their own dictionaries are mapped by value; unseen values are missing.
    other = pa.table({"x": [0.3, 0.3, 0.3], "k": pa.array(["top", "new", None]).dictionary_encode()})
    mixed = pa.concat_tables([table.slice(0, 5), other])
    got = est.predict(mixed)
    want = ref.predict(np.vstack([X_codes[:5], [[0.3, 3.0], [0.3, np.nan], [0.3, np.nan]]]))
    assert np.array_equal(got, want)


def test_classifier_with_categories(cat_data):
    levels, codes, x, y, X_codes = cat_data
    labels = (y > np.median(y)).astype(int)
    frame = _pandas_cat(levels, codes, x)
    est = RGBMClassifier(**PARAMS).fit(frame, labels)
    ref = RGBMClassifier(**CODES).fit(X_codes, labels)
    assert np.array_equal(est.predict_proba(frame), ref.predict_proba(X_codes))


def test_category_kind_must_match_fit(cat_data):
    pd = pytest.importorskip("pandas")
    levels, codes, x, y, X_codes = cat_data
    est = RGBMRegressor(**PARAMS).fit(_pandas_cat(levels, codes, x), y)
    numeric = pd.DataFrame(X_codes, columns=["x", "k"])
    with pytest.raises(TypeError, match="categorical at fit but not now: 'k'"):
        est.predict(numeric)
    est = RGBMRegressor(**PARAMS).fit(numeric, y)
    assert not hasattr(est, "_categories_")
    with pytest.raises(TypeError, match="categorical now but not at fit: 'k'"):
        est.predict(_pandas_cat(levels, codes, x))


def test_refit_on_numpy_forgets_categories(cat_data):
    levels, codes, x, y, X_codes = cat_data
    est = RGBMRegressor(**PARAMS).fit(_pandas_cat(levels, codes, x), y)
    est.fit(X_codes, y)
    assert not hasattr(est, "_categories_")
    assert not hasattr(est, "feature_names_in_")


def test_categories_survive_pickle(cat_data):
    import pickle

    levels, codes, x, y, X_codes = cat_data
    frame = _pandas_cat(levels, codes, x)
    est = RGBMRegressor(**PARAMS).fit(frame, y)
    back = pickle.loads(pickle.dumps(est))
    assert back._categories_ == est._categories_
    assert np.array_equal(back.predict(frame), est.predict(frame))


def test_categories_json_helpers(cat_data):
    import json

    from rgbm_rs._model_file import _categories_from_json as categories_from_json
    from rgbm_rs._model_file import _categories_to_json as categories_to_json

    levels, codes, x, y, X_codes = cat_data
    frame = _pandas_cat(levels, codes, x)
    est = RGBMRegressor(**PARAMS).fit(frame, y)
    saved = json.loads(json.dumps(categories_to_json(est)))
    assert saved == [None, levels]
    clone = RGBMRegressor(**PARAMS).fit(frame, y)
    del clone._categories_
    categories_from_json(clone, saved, clone.get_booster())
    assert clone._categories_ == est._categories_
    assert categories_to_json(RGBMRegressor(**PARAMS).fit(X_codes, y)) is None


# ---------------------------------------------------------------- one reader for every library


def _mixed_pandas(n=400, seed=11):
    """A pandas frame with a column of every kind: floats with NaN, nullable
    integers and booleans, a category (sorted levels, all present, so every
    library lists them alike) and strings, with missing values in each."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    gone = lambda: rng.random(n) < 0.1  # noqa: E731
    x = rng.normal(size=n)
    x[gone()] = np.nan
    ints = [None if m else int(v) for v, m in zip(rng.integers(-5, 50, n), gone())]
    flags = [None if m else bool(v) for v, m in zip(rng.random(n) < 0.4, gone())]
    levels = ["amber", "blue", "cyan", "dusk"]
    kind = pd.Categorical([None if m else levels[v] for v, m in zip(rng.integers(0, 4, n), gone())], levels)
    towns = np.array(["oslo", "lima", "kiev", "baku", "rome"], dtype=object)
    town = [None if m else towns[v] for v, m in zip(rng.integers(0, 5, n), gone())]
    frame = pd.DataFrame(
        {
            "x": x,
            "n": pd.array(ints, dtype="Int64"),
            "flag": pd.array(flags, dtype="boolean"),
            "kind": kind,
            "town": pd.Series(town, dtype=object),
        }
    )
    effect = {"oslo": 1.0, "lima": -1.0, "kiev": 0.5, "baku": 2.0, "rome": 0.0, None: 0.3}
    y = np.nan_to_num(x) + 0.05 * frame["n"].fillna(0).to_numpy(float) + frame["town"].map(effect).to_numpy(float)
    y = y + frame["flag"].fillna(False).to_numpy(float) + (frame["kind"] == "cyan").to_numpy(float)
    return frame, y


def _in_library(frame, library):
    if library == "polars":
        return pytest.importorskip("polars").from_pandas(frame)
    if library == "pyarrow":
        return pytest.importorskip("pyarrow").Table.from_pandas(frame, preserve_index=False)
    return frame


@pytest.mark.parametrize("cls", [RGBMRegressor, RGBMClassifier])
def test_the_same_frame_in_every_library_gives_the_same_model(cls):
    frame, y = _mixed_pandas()
    y = y if cls is RGBMRegressor else (y > np.median(y)).astype(int)
    frames = {lib: _in_library(frame, lib) for lib in ("pandas", "polars", "pyarrow")}
    models = {lib: cls(categorical_features="auto", **PARAMS).fit(f, y) for lib, f in frames.items()}
    ref = models["pandas"]
    assert ref._categories_ == {
        "kind": ["amber", "blue", "cyan", "dusk"],
        "town": ["baku", "kiev", "lima", "oslo", "rome"],
    }
    assert '"categories"' in ref.get_booster().to_json()
    for lib, est in models.items():
        assert est.get_booster().to_json() == ref.get_booster().to_json(), lib
        assert est._categories_ == ref._categories_, lib
        for other in frames.values():
            # Each model reads every library's frame bit for bit alike.
            for got, want in zip(_outputs(est, other), _outputs(ref, frame)):
                assert np.array_equal(got, want), lib


def test_polars_string_columns_are_read_as_pandas_strings():
    pl = pytest.importorskip("polars")
    frame, y = _mixed_pandas()
    strings = frame[["x", "town"]]
    polars = pl.DataFrame({"x": frame["x"].to_numpy(), "town": pl.Series(frame["town"].tolist(), dtype=pl.String)})
    assert polars.schema["town"] == pl.String
    ref = RGBMRegressor(categorical_features="auto", **PARAMS).fit(strings, y)
    est = RGBMRegressor(categorical_features="auto", **PARAMS).fit(polars, y)
    assert est.get_booster().to_json() == ref.get_booster().to_json()
    assert est._categories_ == ref._categories_ == {"town": ["baku", "kiev", "lima", "oslo", "rome"]}
    assert np.array_equal(est.predict(polars), ref.predict(strings))
    # Unseen strings and nulls are missing in both.
    probe = pl.DataFrame({"x": [0.0, 0.0, 0.0], "town": ["nuuk", None, "rome"]})
    assert np.array_equal(est.predict(probe), ref.predict(probe.to_pandas()))
    assert est.predict(probe)[0] == est.predict(probe)[1]


def test_narwhals_frames_and_arrow_streams_with_strings_are_read_alike():
    nw = pytest.importorskip("narwhals.stable.v2")
    pa = pytest.importorskip("pyarrow")
    frame, y = _mixed_pandas()
    table = pa.Table.from_pandas(frame, preserve_index=False)

    class Stream:
        def __arrow_c_stream__(self, requested_schema=None):
            return table.__arrow_c_stream__(requested_schema)

    ref = RGBMRegressor(categorical_features="auto", **PARAMS).fit(frame, y)
    for X in (nw.from_native(frame, eager_only=True), Stream()):
        est = RGBMRegressor(categorical_features="auto", **PARAMS).fit(X, y)
        assert est.get_booster().to_json() == ref.get_booster().to_json()
        assert np.array_equal(est.predict(X), ref.predict(frame))


def test_duplicate_names_and_lazy_frames_are_refused(data):
    pd = pytest.importorskip("pandas")
    X, y, _ = data
    plain = pd.DataFrame(X, columns=["a", "b", "a", "d"])
    with_category = plain.assign(k=pd.Categorical(["u"] * len(y)))
    for frame in (plain, with_category):
        with pytest.raises(ValueError, match="(?s)column names must be distinct.*'a' 2 times"):
            RGBMRegressor(**PARAMS).fit(frame, y)
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(TypeError, match="dask DataFrame: fit the estimators of rgbm_rs.dask"):
        RGBMRegressor(**PARAMS).fit(dd.from_pandas(_pandas(X), npartitions=2), y)


# ---------------------------------------------------------------- names and bad columns


@pytest.mark.parametrize("make_frame", FRAMES, ids=["pandas", "polars", "pyarrow"])
def test_feature_name_mismatch_lists_differences(data, make_frame):
    pd = pytest.importorskip("pandas")
    X, y, _ = data
    est = RGBMRegressor(**PARAMS).fit(make_frame(X), y)

    def renamed(names, cols=None):
        cols = list(range(len(NAMES))) if cols is None else cols
        frame = pd.DataFrame(X[:, cols], columns=names)
        return frame if make_frame is _pandas else _convert(frame, make_frame)

    with pytest.raises(ValueError, match="(?s)unseen at fit time:\n- e\n.*yet now missing:\n- d\n"):
        est.predict(renamed(["a", "b", "c", "e"]))
    with pytest.raises(ValueError, match="(?s)yet now missing:\n- c\n- d\n"):
        est.predict(renamed(["a", "b"], [0, 1]))
    with pytest.raises(ValueError, match="unseen at fit time:\n- zz\n"):
        est.predict(renamed(NAMES + ["zz"], [0, 1, 2, 3, 0]))
    with pytest.raises(ValueError, match="(?s)same order.*position 0: b \\(was a at fit\\)\n- position 1: a"):
        est.predict(renamed(["b", "a", "c", "d"], [1, 0, 2, 3]))


def _convert(frame, make_frame):
    if make_frame is _polars:
        import polars as pl

        return pl.from_pandas(frame)
    import pyarrow as pa

    return pa.Table.from_pandas(frame, preserve_index=False)


def test_frame_without_names_and_array_input(data):
    pd = pytest.importorskip("pandas")
    X, y, _ = data
    # Non-string labels are not feature names (scikit-learn's rule), in fit or predict.
    est = RGBMRegressor(**PARAMS).fit(pd.DataFrame(X), y)
    assert not hasattr(est, "feature_names_in_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.predict(X)
        est.predict(pd.DataFrame(X))
    with pytest.warns(UserWarning, match="X has feature names, but RGBMRegressor was fitted without"):
        est.predict(_pandas(X))
    est = RGBMRegressor(**PARAMS).fit(_pandas(X), y)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        est.predict(pd.DataFrame(X))
    with pytest.raises(TypeError, match="string names"):
        RGBMRegressor(**PARAMS).fit(pd.DataFrame(X, columns=["a", 1, "c", "d"]), y)


def test_wrong_number_of_columns_without_names(data):
    pd = pytest.importorskip("pandas")
    X, y, _ = data
    est = RGBMRegressor(**PARAMS).fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but RGBMRegressor is expecting 4"):
        est.predict(pd.DataFrame(X[:, :3]))


def test_object_and_string_columns_are_named():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"ok": [1.0, 2.0, 3.0], "city": ["x", "y", "z"], "when": pd.to_datetime(["2020", "2021", "2022"])})
    with pytest.raises(TypeError, match="'city'.*'when'.*category"):
        RGBMRegressor(**PARAMS).fit(X, [1.0, 2.0, 3.0])
    objects = pd.DataFrame({"ok": [1.0, 2.0], "mixed": pd.Series(["a", 1], dtype=object)})
    with pytest.raises(TypeError, match="'mixed'"):
        RGBMRegressor(**PARAMS).fit(objects, [1.0, 2.0])


def test_polars_and_arrow_string_columns_are_named():
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(TypeError, match="'s'.*convert"):
        RGBMRegressor(**PARAMS).fit(pl.DataFrame({"x": [1.0, 2.0], "s": ["a", "b"]}), [1.0, 2.0])
    with pytest.raises(TypeError, match="'s'.*convert"):
        RGBMRegressor(**PARAMS).fit(pa.table({"x": [1.0, 2.0], "s": ["a", "b"]}), [1.0, 2.0])
    with pytest.raises(TypeError, match="collect"):
        RGBMRegressor(**PARAMS).fit(pl.DataFrame({"x": [1.0, 2.0]}).lazy(), [1.0, 2.0])


def test_infinity_in_frames_is_an_error(data):
    X, y, _ = data
    X = X.copy()
    X[3, 0] = np.inf
    est = RGBMRegressor(**PARAMS).fit(_pandas(np.nan_to_num(X, posinf=0.0)), y)
    for make_frame in FRAMES:
        frame = make_frame(X)
        with pytest.raises(ValueError, match="[Ii]nf"):
            RGBMRegressor(**PARAMS).fit(frame, y)
        with pytest.raises(ValueError, match="[Ii]nf"):
            est.predict(frame)


def test_interchange_fallback(data):
    """An object known only through the interchange protocol is read via pandas."""
    pytest.importorskip("pandas.api.interchange")
    X, y, _ = data
    frame = _pandas(X)

    class Foreign:
        def __dataframe__(self, nan_as_null=False, allow_copy=True):
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*[Ii]nterchange [Pp]rotocol is deprecated")
                return frame.__dataframe__(nan_as_null=nan_as_null, allow_copy=allow_copy)

    ref = RGBMRegressor(**PARAMS).fit(X, y).predict(X)
    est = RGBMRegressor(**PARAMS).fit(Foreign(), y)
    assert list(est.feature_names_in_) == NAMES
    assert np.array_equal(est.predict(Foreign()), ref)


def test_arrow_stream_fallback(data):
    """An object exporting an Arrow C stream (PyCapsule interface) is read via pyarrow."""
    pa = pytest.importorskip("pyarrow")
    X, y, _ = data
    table = _arrow(X)

    class Foreign:
        def __arrow_c_stream__(self, requested_schema=None):
            return table.__arrow_c_stream__(requested_schema)

    ref = RGBMRegressor(**PARAMS).fit(X, y).predict(X)
    est = RGBMRegressor(**PARAMS).fit(Foreign(), y)
    assert list(est.feature_names_in_) == NAMES
    assert np.array_equal(est.predict(Foreign()), ref)
    # A one-dimensional stream is not a frame: the usual 2-D error.
    with pytest.raises(ValueError, match="2D"):
        RGBMRegressor(**PARAMS).fit(pa.chunked_array([X[:, 0]]), y)
