"""min_data_in_bin: LightGBM's fewest rows per histogram bin."""

import numpy as np
import pytest
import scipy.sparse as sp

from rgbm_rs import RGBMClassifier, RGBMRegressor

X10 = np.arange(10, dtype=np.float64).reshape(-1, 1)
Y10 = np.arange(10, dtype=np.float64) ** 2


def _one_deep_tree(**kw):
    # One tree that may isolate every row: the bins decide what it can split.
    return RGBMRegressor(n_estimators=1, learning_rate=1.0, max_depth=None, max_leaves=64, min_samples_leaf=1, **kw)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "3"])
def test_min_data_in_bin_must_be_an_int_of_at_least_one(bad):
    with pytest.raises(ValueError, match="min_data_in_bin"):
        _one_deep_tree(min_data_in_bin=bad).fit(X10, Y10)


def test_the_core_names_min_data_in_bin():
    import json

    from rgbm_rs import _core
    from rgbm_rs._training import TrainingData

    with pytest.raises(ValueError, match=r"`min_data_in_bin`: must be an integer >= 1 or None, got 0"):
        _core.Booster.train(json.dumps({"min_data_in_bin": 0}), TrainingData(X10, Y10.copy()))


def test_ten_rows_get_at_most_three_bins_at_three():
    # Bins of 3, 3 and 4 rows: the tree can tell three groups apart.
    # None is LightGBM's default, 3.
    assert len(np.unique(_one_deep_tree().fit(X10, Y10).predict(X10))) == 3
    assert len(np.unique(_one_deep_tree(min_data_in_bin=3).fit(X10, Y10).predict(X10))) == 3
    # One row per bin: every row its own leaf.
    assert len(np.unique(_one_deep_tree(min_data_in_bin=1).fit(X10, Y10).predict(X10))) == 10
    # More than the rows: one bin, no split.
    assert len(np.unique(_one_deep_tree(min_data_in_bin=11).fit(X10, Y10).predict(X10))) == 1


def test_missing_values_keep_their_bin():
    x = np.r_[X10[:, 0], np.nan].reshape(-1, 1)
    y = np.r_[np.zeros(10), 100.0]
    pred = _one_deep_tree(min_data_in_bin=5).fit(x, y).predict(x)
    assert pred[-1] == pytest.approx(100.0) and np.allclose(pred[:-1], 0.0)


def test_categories_keep_a_bin_each():
    x = X10.copy()
    est = _one_deep_tree(categorical_features=[0], max_cat_to_onehot=16, min_data_per_group=1, cat_smooth=0.0)
    pred = est.fit(x, Y10).predict(x)
    assert len(np.unique(pred)) == 10


@pytest.mark.parametrize("min_data_in_bin", [1, None, 7])
def test_sparse_and_dense_input_give_the_same_model(min_data_in_bin):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 6))
    x[rng.random(x.shape) < 0.8] = 0.0
    x[:, 2] = np.round(x[:, 2])
    y = (x[:, 0] + x[:, 1] > 0).astype(int)
    kw = dict(n_estimators=10, min_samples_leaf=2, min_data_in_bin=min_data_in_bin, random_state=0)
    dense = RGBMClassifier(**kw).fit(x, y)
    for fmt in ("csr", "csc"):
        sparse = RGBMClassifier(**kw).fit(sp.csr_matrix(x).asformat(fmt), y)
        assert dense.get_booster().to_json() == sparse.get_booster().to_json()
