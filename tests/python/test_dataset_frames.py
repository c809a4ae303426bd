"""rgbm_rs.Dataset built from data frames: the model of fitting the frame itself."""

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from rgbm_rs import Dataset, RGBMClassifier, RGBMRegressor


def _model(est):
    return est.get_booster().to_json()


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(7)
    n = 500
    a = rng.normal(size=n)
    a[::11] = np.nan
    colour = rng.choice(["red", "green", "blue", "grey"], n)
    df = pd.DataFrame(
        {
            "a": a,
            "colour": pd.Categorical(colour, categories=["red", "green", "blue", "grey"]),
            "b": rng.integers(0, 10, n),
            "c": rng.normal(size=n).astype(np.float32),
        }
    )
    y = np.nan_to_num(a) + 1.5 * (colour == "green") - (colour == "grey") + rng.normal(scale=0.2, size=n)
    return df, y


def _kinds(df):
    return {
        "pandas": df,
        "polars": pl.from_pandas(df),
        "pyarrow": pa.Table.from_pandas(df, preserve_index=False),
    }


@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow"])
def test_dataset_of_a_frame_fits_the_model_of_the_frame(frame, kind):
    df, y = frame
    X = _kinds(df)[kind]
    a = RGBMRegressor(n_estimators=8, random_state=1).fit(X, y)
    ds = Dataset(X, y)
    assert ds.categorical_features == [1]
    b = RGBMRegressor(n_estimators=8, random_state=1).fit(ds)
    assert _model(a) == _model(b)
    assert list(b.feature_names_in_) == ["a", "colour", "b", "c"]
    assert b._categories_ == a._categories_
    # Predicting on the Dataset reads its rows as predicting on the frame does.
    np.testing.assert_array_equal(b.predict(ds), a.predict(X))
    np.testing.assert_array_equal(b.predict(X), a.predict(X))

    yc = (y > np.median(y)).astype(int)
    a = RGBMClassifier(n_estimators=5, random_state=2).fit(X, yc)
    b = RGBMClassifier(n_estimators=5, random_state=2).fit(Dataset(X, yc))
    assert _model(a) == _model(b)
    np.testing.assert_array_equal(b.predict_proba(Dataset(X)), a.predict_proba(X))


@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow"])
def test_reference_datasets_of_frames_are_the_eval_sets_of_frames(frame, kind):
    df, y = frame
    frames = _kinds(df)
    train, valid = frames[kind], _kinds(df.iloc[:150].reset_index(drop=True))[kind]
    ds = Dataset(train, y)
    a = RGBMRegressor(n_estimators=6, random_state=0).fit(train, y, eval_set=[(valid, y[:150])])
    b = RGBMRegressor(n_estimators=6, random_state=0).fit(ds, eval_set=[Dataset(valid, y[:150], reference=ds)])
    assert _model(a) == _model(b)
    assert a.evals_result_ == b.evals_result_


def test_categories_are_matched_by_value(frame):
    df, y = frame
    ds = Dataset(df, y)
    est = RGBMRegressor(n_estimators=6, random_state=0).fit(ds)
    # The same values under another category order (so other codes).
    shuffled = df.copy()
    shuffled["colour"] = shuffled["colour"].cat.reorder_categories(["grey", "blue", "green", "red"])
    np.testing.assert_array_equal(est.predict(Dataset(shuffled)), est.predict(df))
    valid = Dataset(shuffled, y, reference=ds)
    np.testing.assert_array_equal(valid.data, ds.data)
    # A category the training frame did not have is missing, as in predict(frame).
    other = df.iloc[:20].copy()
    other["colour"] = pd.Categorical(["purple"] * 20)
    np.testing.assert_array_equal(est.predict(Dataset(other)), est.predict(other))
    assert np.isnan(Dataset(other, reference=ds).data[:, 1]).all()


def test_string_columns_follow_categorical_features(frame):
    df, y = frame
    text = df.assign(colour=df["colour"].astype(str))
    with pytest.raises(TypeError, match='categorical_features="auto"'):
        Dataset(text, y)
    a = RGBMRegressor(n_estimators=5, random_state=0, categorical_features="auto").fit(text, y)
    b = RGBMRegressor(n_estimators=5, random_state=0).fit(Dataset(text, y, categorical_features="auto"))
    assert _model(a) == _model(b)
    c = RGBMRegressor(n_estimators=5, random_state=0).fit(Dataset(text, y, categorical_features=["colour"]))
    assert _model(a) == _model(c)
    np.testing.assert_array_equal(c.predict(text), a.predict(text))


def test_categorical_features_by_name_and_none(frame):
    df, y = frame
    a = RGBMRegressor(n_estimators=5, random_state=0, categorical_features=["colour", "b"]).fit(df, y)
    b = RGBMRegressor(n_estimators=5, random_state=0).fit(Dataset(df, y, categorical_features=["colour", "b"]))
    assert _model(a) == _model(b)
    # The estimator may name them instead of the Dataset.
    c = RGBMRegressor(n_estimators=5, random_state=0, categorical_features=["colour", "b"]).fit(
        Dataset(df, y, categorical_features=None)
    )
    assert _model(a) == _model(c)
    # None: the category column is read as its codes, no category splits.
    a = RGBMRegressor(n_estimators=5, random_state=0, categorical_features=None).fit(df, y)
    b = RGBMRegressor(n_estimators=5, random_state=0).fit(Dataset(df, y, categorical_features=None))
    assert _model(a) == _model(b)
    with pytest.raises(ValueError, match="'nope'"):
        Dataset(df, y, categorical_features=["nope"])
    with pytest.raises(ValueError, match="categorical_features"):
        Dataset(df, y, categorical_features="everything")


def test_subsets_keep_the_frame_columns(frame):
    df, y = frame
    ds = Dataset(df, y)
    idx = np.arange(0, 500, 2)
    est = RGBMRegressor(n_estimators=4, random_state=0).fit(ds.subset(idx))
    assert list(est.feature_names_in_) == list(df.columns)
    ref = RGBMRegressor(n_estimators=4, random_state=0).fit(Dataset(df.iloc[idx], y[idx], reference=ds))
    assert _model(est) == _model(ref)


def test_frame_columns_are_checked_against_the_fit(frame):
    df, y = frame
    est = RGBMRegressor(n_estimators=3, random_state=0).fit(Dataset(df, y))
    with pytest.raises(ValueError, match="feature names"):
        est.predict(Dataset(df.rename(columns={"a": "z"})))
    with pytest.raises(TypeError, match="categorical at fit but not now: 'colour'"):
        est.predict(Dataset(df.assign(colour=df["colour"].cat.codes)))
    with pytest.raises(ValueError, match="reference Dataset"):
        Dataset(df.rename(columns={"a": "z"}), y, reference=Dataset(df, y))
    # A frame Dataset's eval set is checked as a frame is.
    with pytest.raises(ValueError, match="feature names"):
        RGBMRegressor(n_estimators=2).fit(Dataset(df, y), eval_set=[Dataset(df[["c", "b", "colour", "a"]], y)])
