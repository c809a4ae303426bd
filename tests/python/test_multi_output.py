"""Several outputs in one model: 2-D y (one tree per target per round) and
several quantiles of one target, each output equal to its single-output fit."""

import io
import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import DataConversionWarning

from rgbm_rs import RGBMRegressor, load_model

rng = np.random.default_rng(0)
N, P, K = 600, 5, 3
X = rng.normal(size=(N, P))
Y = np.column_stack([(j + 1) * X[:, j] + np.sin(X[:, (j + 1) % P]) + 0.3 * rng.normal(size=N) for j in range(K)])
W = rng.uniform(0.2, 2.0, size=N)
BASE = dict(n_estimators=15, max_depth=4, random_state=7)


def _singles(params, y, **fit):
    return [RGBMRegressor(**params).fit(X, y[:, k], **fit) for k in range(y.shape[1])]


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"subsample": 0.7},
        {"subsample": 0.6, "subsample_for": "split"},
        {"selection": "random", "selection_size": 0.3, "selection_scope": "node"},
        {"langevin": True, "temperature": 1e3},
        {"loss": "huber", "huber_delta": 0.5},
        {"loss": "absolute_error"},
        {"loss": "quantile", "alpha": 0.3},
    ],
)
def test_each_target_is_its_single_target_fit(extra):
    # The targets share each round's random draws (rows, candidate splits,
    # noise), so target k's trees are exactly those of a fit on y[:, k].
    params = {**BASE, **extra}
    multi = RGBMRegressor(**params).fit(X, Y)
    pred = multi.predict(X)
    assert pred.shape == (N, K)
    assert multi.get_booster().n_outputs == K
    for k, single in enumerate(_singles(params, Y)):
        np.testing.assert_array_equal(pred[:, k], single.predict(X))


def test_log_link_targets_and_sample_weights():
    y = np.exp(0.3 * Y)
    params = {**BASE, "loss": "poisson"}
    multi = RGBMRegressor(**params).fit(X, y, sample_weight=W)
    for k, single in enumerate(_singles(params, y, sample_weight=W)):
        np.testing.assert_array_equal(multi.predict(X)[:, k], single.predict(X))
    assert np.all(multi.predict(X) > 0)


def test_early_stopping_watches_the_mean_of_the_targets_metric():
    Xv, Yv = X[:200], Y[:200] + rng.normal(size=(200, K))
    params = {**BASE, "n_estimators": 60, "learning_rate": 0.3}
    multi = RGBMRegressor(early_stopping_rounds=3, **params).fit(X[200:], Y[200:], eval_set=[(Xv, Yv)])
    history = multi.evals_result_["valid_0"]["l2"]
    singles = [
        RGBMRegressor(**params).fit(X[200:], Y[200:, k], eval_set=[(Xv, Yv[:, k])]).evals_result_["valid_0"]["l2"]
        for k in range(K)
    ]
    mean = np.mean([s[: len(history)] for s in singles], axis=0)
    np.testing.assert_allclose(history, mean, rtol=1e-12)
    assert multi.best_iteration == int(np.argmin(history))
    assert len(history) < params["n_estimators"]
    assert multi.get_booster().n_rounds == multi.best_iteration_


def test_staged_predictions_shap_and_leaves_have_a_block_per_target():
    multi = RGBMRegressor(**BASE).fit(X, Y)
    staged = list(multi.staged_predict(X[:20]))
    assert len(staged) == BASE["n_estimators"] and staged[-1].shape == (20, K)
    np.testing.assert_allclose(staged[-1], multi.predict(X[:20]), rtol=1e-13)
    contrib = multi.predict(X[:20], pred_contrib=True)
    assert contrib.shape == (20, K * (P + 1))
    np.testing.assert_allclose(contrib.reshape(20, K, P + 1).sum(axis=2), multi.predict(X[:20]), atol=1e-9)
    assert multi.apply(X[:20]).shape == (20, BASE["n_estimators"], K)


def test_save_load_and_pickle_keep_the_predictions(tmp_path):
    multi = RGBMRegressor(**BASE).fit(X, Y)
    path = tmp_path / "multi.json"
    multi.save_model(path)
    np.testing.assert_array_equal(load_model(path).predict(X), multi.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(multi)).predict(X), multi.predict(X))


def test_one_column_y_is_one_target_with_scikit_learns_warning():
    # As HistGradientBoostingRegressor and the forests: warn, then fit 1-D y.
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        column = RGBMRegressor(**BASE).fit(X, Y[:, :1])
    pred = column.predict(X)
    assert pred.shape == (N,)
    np.testing.assert_array_equal(pred, RGBMRegressor(**BASE).fit(X, Y[:, 0]).predict(X))


@pytest.mark.parametrize("loss", ["gaussian", "custom"])
def test_two_d_y_with_a_loss_of_one_target_is_refused(loss):
    def squared(y, f):
        return f - y, np.ones_like(f)

    est = RGBMRegressor(loss=squared if loss == "custom" else loss, **BASE)
    with pytest.raises(ValueError, match="2-D y .*'squared'"):
        est.fit(X, Y)


def test_bad_two_d_targets_are_refused():
    bad = Y.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RGBMRegressor(**BASE).fit(X, bad)
    with pytest.raises(ValueError, match="2-D with 3 columns"):
        RGBMRegressor(**BASE).fit(X, Y, eval_set=[(X, Y[:, :2])])
    with pytest.raises(ValueError, match="line_search"):
        RGBMRegressor(step="line_search", **BASE).fit(X, Y)
    multi = RGBMRegressor(**BASE).fit(X, Y)
    with pytest.raises(ValueError, match="gaussian"):
        multi.predict(X, return_std=True)


QUANTILES = [0.1, 0.5, 0.9]


def test_each_quantile_is_its_single_alpha_fit():
    y = Y[:, 0]
    params = {**BASE, "loss": "quantile", "subsample": 0.8}
    multi = RGBMRegressor(alpha=QUANTILES, **params).fit(X, y, sample_weight=W)
    raw = multi.get_booster().predict_raw(X)  # unsorted: output k is alpha[k]'s
    for k, alpha in enumerate(QUANTILES):
        single = RGBMRegressor(alpha=alpha, **params).fit(X, y, sample_weight=W)
        np.testing.assert_array_equal(raw[:, k], single.predict(X))
    pred = multi.predict(X)
    np.testing.assert_array_equal(pred, np.sort(raw, axis=1))
    assert np.all(np.diff(pred, axis=1) >= 0)


def test_a_list_of_one_alpha_is_its_single_alpha_fit(tmp_path):
    # Each output of a list is its single-alpha fit, so a list of one is
    # that model: the same trees, the same file, the same predictions.
    params = {**BASE, "loss": "quantile", "subsample": 0.8}
    one = RGBMRegressor(alpha=[0.3], **params).fit(X, Y[:, 0], sample_weight=W)
    single = RGBMRegressor(alpha=0.3, **params).fit(X, Y[:, 0], sample_weight=W)
    assert one.get_booster().to_json() == single.get_booster().to_json()
    np.testing.assert_array_equal(one.predict(X), single.predict(X))
    assert one.predict(X).shape == (len(X),) and one.get_params()["alpha"] == [0.3]
    # Its training quantile is the alpha's: about 30% of the rows lie below.
    assert abs(np.average(Y[:, 0] <= one.predict(X), weights=W) - 0.3) < 0.05
    path = tmp_path / "one.json"
    one.save_model(path)
    np.testing.assert_array_equal(load_model(path).predict(X), one.predict(X))
    # The rules of a list still hold for it.
    with pytest.raises(ValueError, match="loss='quantile' and 1-D y"):
        RGBMRegressor(alpha=[0.3], **BASE).fit(X, Y[:, 0])
    with pytest.raises(ValueError, match="loss='quantile' and 1-D y"):
        RGBMRegressor(loss="quantile", alpha=[0.3], **BASE).fit(X, Y)
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        RGBMRegressor(loss="quantile", alpha=[1.5], **BASE).fit(X, Y[:, 0])


def test_quantiles_cover_held_out_rows():
    n = 6000
    x = rng.normal(size=(2 * n, 4))
    y = x[:, 0] + (1 + np.abs(x[:, 1])) * rng.normal(size=2 * n)
    est = RGBMRegressor(
        loss="quantile", alpha=QUANTILES, n_estimators=100, learning_rate=0.1, min_samples_leaf=200, random_state=0
    )
    est.fit(x[:n], y[:n])
    pred = est.predict(x[n:])
    for k, alpha in enumerate(QUANTILES):
        coverage = np.mean(y[n:] <= pred[:, k])
        assert abs(coverage - alpha) <= 0.03, (alpha, coverage)


@pytest.mark.parametrize(
    "alpha, match",
    [
        ([0.5, 0.1], "strictly increasing"),
        ([0.1, 0.1], "strictly increasing"),
        ([0.0, 0.5], r"in \(0, 1\)"),
        ([0.5, 1.0], r"in \(0, 1\)"),
        ([], "non-empty"),
    ],
)
def test_bad_alpha_lists_are_refused(alpha, match):
    with pytest.raises(ValueError, match=match):
        RGBMRegressor(loss="quantile", alpha=alpha, **BASE).fit(X, Y[:, 0])


def test_alpha_list_needs_quantile_loss_and_one_target():
    with pytest.raises(ValueError, match="loss='quantile' and 1-D y"):
        RGBMRegressor(loss="quantile", alpha=QUANTILES, **BASE).fit(X, Y)
    with pytest.raises(ValueError, match="loss='quantile' and 1-D y"):
        RGBMRegressor(alpha=QUANTILES, **BASE).fit(X, Y[:, 0])


def test_quantile_models_round_trip_sorted(tmp_path):
    est = RGBMRegressor(loss="quantile", alpha=QUANTILES, **BASE).fit(X, Y[:, 0])
    buf = io.BytesIO()
    pickle.dump(est, buf)
    np.testing.assert_array_equal(pickle.loads(buf.getvalue()).predict(X), est.predict(X))
    path = tmp_path / "q.json"
    est.save_model(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(load_model(path).predict(X), est.predict(X))


def test_exports_of_one_target_refuse_several(tmp_path):
    multi = RGBMRegressor(**BASE).fit(X, Y)
    with pytest.raises(ValueError, match="3 targets"):
        multi.save_model(tmp_path / "x.json", format="xgboost")
    pytest.importorskip("onnx")
    from rgbm_rs import to_onnx

    with pytest.raises(ValueError, match="3 outputs"):
        to_onnx(multi)


def test_multi_output_tag():
    assert RGBMRegressor().__sklearn_tags__().target_tags.multi_output
