"""Dataset.save_binary and Dataset(path): a fit on the loaded bins gives the
model of a fit on the Dataset they were saved from."""

import json
import os
import struct

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import rgbm_rs
from rgbm_rs import Dataset, RGBMClassifier, RGBMRanker, RGBMRegressor


def _model(est):
    return est.get_booster().to_json()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    n = 600
    X = rng.normal(size=(n, 5))
    X[::9, 2] = np.nan
    X[:, 4] = rng.integers(0, 6, n)
    y = X[:, 0] - 0.5 * X[:, 1] + (X[:, 4] == 2) + rng.normal(scale=0.3, size=n)
    return X, y, rng.uniform(0.5, 2.0, n), rng.normal(scale=0.1, size=n)


def _roundtrip(ds, tmp_path, name="d.bin"):
    path = tmp_path / name
    assert ds.save_binary(path) is ds
    return Dataset(path)


def test_fits_on_a_loaded_dataset_give_the_same_model(data, tmp_path):
    X, y, w, init = data
    kw = dict(n_estimators=8, random_state=4, subsample=0.7)
    ds = Dataset(X, y, weight=w, init_score=init, categorical_features=[4])
    a = RGBMRegressor(**kw).fit(ds)
    loaded = _roundtrip(ds, tmp_path)
    assert (loaded.n_rows, loaded.n_features, loaded.categorical_features) == (600, 5, [4])
    np.testing.assert_array_equal(loaded.label, ds.label)
    np.testing.assert_array_equal(loaded.weight, ds.weight)
    np.testing.assert_array_equal(loaded.init_score, ds.init_score)
    b = RGBMRegressor(**kw).fit(loaded)
    assert _model(a) == _model(b)
    # Subsets of the loaded bins are the original's subsets.
    idx = np.arange(0, 600, 3)
    a = RGBMRegressor(**kw).fit(ds.subset(idx))
    assert _model(a) == _model(RGBMRegressor(**kw).fit(loaded.subset(idx)))
    # As a reference: validation rows binned with the loaded bins.
    valid = Dataset(X[:100], y[:100], reference=loaded)
    a = RGBMRegressor(**kw).fit(ds, eval_set=[Dataset(X[:100], y[:100], reference=ds)])
    b = RGBMRegressor(**kw).fit(loaded, eval_set=[valid])
    assert _model(a) == _model(b) and a.evals_result_ == b.evals_result_


def test_classifier_ranker_sparse_and_float32(data, tmp_path):
    X, y, _, _ = data
    labels = np.where(y > 0.5, "high", np.where(y < -0.5, "low", "mid"))
    ds = Dataset(X, labels)
    a = RGBMClassifier(n_estimators=4, random_state=0).fit(ds)
    loaded = _roundtrip(ds, tmp_path, "c.bin")
    assert loaded.label.dtype == labels.dtype
    b = RGBMClassifier(n_estimators=4, random_state=0).fit(loaded)
    assert _model(a) == _model(b) and list(b.classes_) == ["high", "low", "mid"]

    grades = np.clip(np.round(y + 1), 0, 3).astype(np.int32)
    ds = Dataset(X, grades, group=np.full(60, 10))
    a = RGBMRanker(n_estimators=4, random_state=0).fit(ds)
    loaded = _roundtrip(ds, tmp_path, "r.bin")
    assert loaded.label.dtype == np.int32
    np.testing.assert_array_equal(loaded.group, ds.group)
    assert _model(a) == _model(RGBMRanker(n_estimators=4, random_state=0).fit(loaded))

    S = sp.random(2000, 30, density=0.05, random_state=1, format="csr")
    ys = np.asarray(S.sum(axis=1)).ravel()
    ds = Dataset(S, ys)
    a = RGBMRegressor(n_estimators=4, random_state=0).fit(ds)
    b = RGBMRegressor(n_estimators=4, random_state=0).fit(_roundtrip(ds, tmp_path, "s.bin"))
    assert _model(a) == _model(b)

    X32 = X.astype(np.float32)
    ds = Dataset(X32, y)
    a = RGBMRegressor(n_estimators=4, random_state=0).fit(ds, eval_set=[(X32[:50], y[:50])])
    b = RGBMRegressor(n_estimators=4, random_state=0).fit(
        _roundtrip(ds, tmp_path, "f.bin"), eval_set=[(X32[:50], y[:50])]
    )
    assert _model(a) == _model(b) and a.evals_result_ == b.evals_result_


def test_frames_survive_the_file(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=300), "kind": pd.Categorical(rng.choice(["a", "b", "c"], 300))})
    y = df["x"] + (df["kind"] == "b")
    a = RGBMRegressor(n_estimators=5, random_state=0).fit(df, y)
    loaded = _roundtrip(Dataset(df, y), tmp_path)
    b = RGBMRegressor(n_estimators=5, random_state=0).fit(loaded)
    assert _model(a) == _model(b)
    assert list(b.feature_names_in_) == ["x", "kind"] and b._categories_ == {"kind": ["a", "b", "c"]}
    np.testing.assert_array_equal(b.predict(df), a.predict(df))
    # A frame validation set coded with the loaded Dataset's categories.
    shuffled = df.assign(kind=df["kind"].cat.reorder_categories(["c", "a", "b"]))
    np.testing.assert_array_equal(Dataset(shuffled, y, reference=loaded).data, Dataset(df, y).data)


def test_bins_before_any_fit_come_from_params_or_construct(data, tmp_path):
    X, y, _, _ = data
    ds = Dataset(X, y, params={"max_bins": 15, "min_samples_leaf": 10})
    loaded = _roundtrip(ds, tmp_path)
    kw = dict(n_estimators=4, random_state=0, max_bins=15, min_samples_leaf=10)
    assert _model(RGBMRegressor(**kw).fit(loaded)) == _model(RGBMRegressor(**kw).fit(X, y))
    with pytest.raises(ValueError, match="binned with max_bins=15, but the estimator asks for 255"):
        RGBMRegressor(n_estimators=2, min_samples_leaf=10).fit(loaded)
    # params also bin a Dataset a fit uses first: the fit must ask for them.
    with pytest.raises(ValueError, match="max_bins=15"):
        RGBMRegressor(n_estimators=2).fit(Dataset(X, y, params={"max_bins": 15}))
    ds = Dataset(X, y).construct(max_bins=31, min_data_in_bin=5)
    kw = dict(n_estimators=4, random_state=0, max_bins=31, min_data_in_bin=5)
    assert _model(RGBMRegressor(**kw).fit(_roundtrip(ds, tmp_path, "c.bin"))) == _model(RGBMRegressor(**kw).fit(X, y))
    # Without options the estimators' defaults.
    loaded = _roundtrip(Dataset(X, y), tmp_path, "d.bin")
    assert _model(RGBMRegressor(n_estimators=3, random_state=1).fit(loaded)) == _model(
        RGBMRegressor(n_estimators=3, random_state=1).fit(X, y)
    )
    with pytest.raises(ValueError, match="binned with max_bins=31"):
        ds.construct(max_bins=63)
    with pytest.raises(ValueError, match="not binning options"):
        Dataset(X, y, params={"learning_rate": 0.1})


def test_what_a_loaded_dataset_cannot_do(data, tmp_path):
    X, y, _, _ = data
    est = RGBMRegressor(n_estimators=2, random_state=0).fit(X, y)
    loaded = _roundtrip(Dataset(X, y), tmp_path)
    with pytest.raises(ValueError, match="binary file"):
        est.predict(loaded)
    with pytest.raises(ValueError, match="binary file"):
        RGBMRegressor(n_estimators=2).fit(Dataset(X, y), eval_set=[loaded])
    with pytest.raises(ValueError, match="no raw rows"):
        RGBMRegressor(n_estimators=2).fit(loaded, init_model=est)
    with pytest.raises(TypeError, match="brings its own label"):
        Dataset(tmp_path / "d.bin", y)


def _parts(raw):
    (n,) = struct.unpack("<Q", raw[8:16])
    return json.loads(raw[16 : 16 + n]), raw[16 + n :]


def _rebuilt(header, rest):
    text = json.dumps(header).encode()
    return b"RGBMBINS" + struct.pack("<Q", len(text)) + text + rest


def test_bad_files_are_refused(data, tmp_path):
    X, y, _, _ = data
    path = tmp_path / "d.bin"
    Dataset(X, y).save_binary(path)
    raw = path.read_bytes()
    header, rest = _parts(raw)
    assert header["package_version"] == rgbm_rs.__version__

    def refused(content, match, error=ValueError):
        bad = tmp_path / "bad.bin"
        bad.write_bytes(content)
        with pytest.raises(error, match=match):
            Dataset(bad)

    refused(raw[: len(raw) // 2], "truncated")
    refused(raw[:-3], "truncated")
    refused(b"", "truncated")
    refused(np.random.default_rng(0).bytes(5000), "tag")
    tampered = bytearray(raw)
    tampered[-200] ^= 1
    refused(bytes(tampered), "checksum")
    refused(_rebuilt({**header, "package_version": "0.0.1"}, rest), "written by rgbm_rs 0.0.1")
    refused(_rebuilt({**header, "format_version": 7}, rest), "format 7")
    refused(_rebuilt({**header, "n_rows": 2**40}, rest), "not a readable")
    blocks = [dict(b) for b in header["blocks"]]
    blocks[0]["len"] = 2**40
    refused(_rebuilt({**header, "blocks": blocks}, rest), "truncated or damaged")
    with pytest.raises(FileNotFoundError):
        Dataset(tmp_path / "missing.bin")


def test_a_lightgbm_binary_file_is_refused(data, tmp_path):
    lgb = pytest.importorskip("lightgbm")
    X, y, _, _ = data
    path = str(tmp_path / "lgb.bin")
    lgb.Dataset(X, y, params={"verbose": -1}).save_binary(path)
    with pytest.raises(ValueError, match="rgbm_rs binned dataset tag"):
        Dataset(path)


def test_saving_replaces_the_file_atomically(data, tmp_path):
    X, y, _, _ = data
    path = tmp_path / "d.bin"
    path.write_bytes(b"old")
    Dataset(X, y).save_binary(str(path))
    assert Dataset(os.fspath(path)).n_rows == 600
    assert sorted(os.listdir(tmp_path)) == ["d.bin"]
    with pytest.raises(OSError):
        Dataset(X, y).save_binary(tmp_path / "no" / "such" / "d.bin")
