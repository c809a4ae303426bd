"""Custom loss and metric functions (LightGBM's scikit-learn signatures).

The oracles: a function returning a built-in loss's gradient and hessian
gives the built-in model (to rounding); a metric function's values equal
scikit-learn's metric of the staged raw scores; early stopping on a
function's metric stops where the recorded history says it should.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import mean_squared_error, roc_auc_score

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model, record_evaluation


def logistic(y, f):
    p = 1.0 / (1.0 + np.exp(-f))
    return p - y, p * (1.0 - p)


def softmax(y, f):
    p = np.exp(f - f.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    k = f.shape[1]
    # The built-in multiclass hessian carries Friedman's K / (K - 1).
    return p - np.eye(k)[y.astype(int)], k / (k - 1) * p * (1.0 - p)


def squared(y, f):
    return f - y, np.ones_like(f)


def weighted_rmse(y, f, w):
    w = np.ones_like(y) if w is None else w
    return "my_rmse", float(np.sqrt(np.average((y - f) ** 2, weights=w))), False


@pytest.fixture(scope="module")
def binary():
    return make_classification(1500, 8, random_state=0)


@pytest.fixture(scope="module")
def regression():
    return make_regression(1200, 6, noise=5.0, random_state=0)


def test_logistic_function_reproduces_the_builtin_model(binary):
    X, y = binary
    w = np.random.default_rng(1).uniform(0.2, 2.0, len(y))
    common = dict(n_estimators=40, subsample=0.8, random_state=3)
    # A custom loss starts from 0, so the built-in one does too here.
    builtin = RGBMClassifier(init="zero", **common).fit(X, y, sample_weight=w)
    custom = RGBMClassifier(loss=logistic, **common).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(custom.decision_function(X), builtin.decision_function(X), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(custom.predict(X), builtin.predict(X))
    assert custom.get_booster().base_score == [0.0]


def test_softmax_function_reproduces_the_builtin_multiclass_model():
    X, y = make_classification(1200, 8, n_informative=5, n_classes=3, random_state=0)
    builtin = RGBMClassifier(init="zero", n_estimators=25, random_state=0).fit(X, y)
    custom = RGBMClassifier(loss=softmax, n_estimators=25, random_state=0).fit(X, y)
    assert custom.get_booster().n_outputs == 3
    np.testing.assert_allclose(custom.decision_function(X), builtin.decision_function(X), rtol=0, atol=1e-10)


def test_squared_function_reproduces_the_builtin_regressor(regression):
    X, y = regression
    builtin = RGBMRegressor(init="zero", n_estimators=30, gain="gradient", leaf="gradient").fit(X, y)
    custom = RGBMRegressor(loss=squared, n_estimators=30, gain="gradient", leaf="gradient").fit(X, y)
    np.testing.assert_array_equal(custom.predict(X), builtin.predict(X))


def test_the_loss_sees_labels_and_raw_scores_of_every_round(binary):
    X, y = binary
    seen = []

    def spy(y_true, raw):
        seen.append((y_true.copy(), raw.copy()))
        return logistic(y_true, raw)

    m = RGBMClassifier(loss=spy, n_estimators=5).fit(X, y)
    assert len(seen) == 5
    np.testing.assert_array_equal(seen[0][0], y)
    np.testing.assert_array_equal(seen[0][1], np.zeros(len(y)))
    staged = list(m.staged_decision_function(X))
    for (_, raw), expected in zip(seen[1:], staged):
        np.testing.assert_allclose(raw, expected, rtol=0, atol=1e-12)


def test_metric_functions_follow_the_builtin_metrics_and_match_sklearn(regression):
    X, y = regression
    Xt, yt, Xv, yv = X[:900], y[:900], X[900:], y[900:]
    wv = np.random.default_rng(2).uniform(0.5, 2.0, len(yv))
    m = RGBMRegressor(n_estimators=15, eval_metric=[weighted_rmse, "l2"]).fit(
        Xt, yt, eval_set=[(Xv, yv)], eval_sample_weight=[wv]
    )
    history = m.evals_result_["valid_0"]
    assert list(history) == ["l2", "my_rmse"]  # built-in names first, then functions
    expected = [mean_squared_error(yv, p, sample_weight=wv) ** 0.5 for p in m.staged_predict(Xv)]
    np.testing.assert_allclose(history["my_rmse"], expected, rtol=1e-12)
    np.testing.assert_allclose(np.square(history["my_rmse"]), history["l2"], rtol=1e-9)


def test_a_metric_function_sees_every_output_of_a_multi_output_model(regression):
    X, y = regression
    seen = []

    def mean_rmse(y_true, raw):
        seen.append(raw.shape)
        return "mean_rmse", float(np.sqrt(np.mean((y_true - raw[:, 0]) ** 2))), False

    m = RGBMRegressor(loss="gaussian", n_estimators=4, eval_metric=["rmse", mean_rmse]).fit(X, y, eval_set=[(X, y)])
    assert seen == [(len(y), 2)] * 4
    h = m.evals_result_["training"]
    np.testing.assert_allclose(h["mean_rmse"], h["rmse"], rtol=1e-12)


def test_metric_functions_with_a_custom_classification_loss(binary):
    X, y = binary

    def auc(y_true, raw):
        return [("my_auc", roc_auc_score(y_true, raw), True), ("n", float(len(y_true)), True)]

    m = RGBMClassifier(loss=logistic, n_estimators=8, eval_metric=["auc", auc]).fit(
        X[:1000], y[:1000], eval_set=[(X[1000:], y[1000:])]
    )
    h = m.evals_result_["valid_0"]
    assert list(h) == ["auc", "my_auc", "n"]
    np.testing.assert_allclose(h["my_auc"], h["auc"], rtol=1e-12)
    assert h["n"] == [500.0] * 8


def test_early_stopping_watches_the_first_metric_function(regression):
    X, y = regression
    Xt, yt, Xv, yv = X[:900], y[:900], X[900:], y[900:]

    def wobbly(y_true, raw):
        # Not monotone in the rounds: a stop that the built-in l2 would not make.
        return "wobbly", float(np.mean(np.abs(y_true - raw) ** 0.5)) + 0.0, False

    full = RGBMRegressor(n_estimators=60, learning_rate=0.5, eval_metric=wobbly).fit(Xt, yt, eval_set=[(Xv, yv)])
    values = full.evals_result_["valid_0"]["wobbly"]
    patience = 3
    best, stop = 0, len(values) - 1
    for r, v in enumerate(values):
        if v < values[best]:
            best = r
        if r - best >= patience:
            stop = r
            break
    early = RGBMRegressor(n_estimators=60, learning_rate=0.5, eval_metric=wobbly, early_stopping_rounds=patience).fit(
        Xt, yt, eval_set=[(Xv, yv)]
    )
    assert early.best_iteration == best
    assert early.n_estimators_ == stop + 1
    np.testing.assert_allclose(early.best_score_["valid_0"]["wobbly"], values[best])


def _same_values(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, float) and (g == w or (np.isnan(g) and np.isnan(w))), (got, want)


def test_non_finite_metric_values_stay_non_finite(regression):
    # The core hands its histories over as JSON, which wrote NaN and ±inf as
    # null: evals_result_ held None where record_evaluation held the values.
    X, y = regression
    sequence = [1.0, np.nan, np.inf, -np.inf, 0.5, 0.25]

    def metric(y_true, raw):
        metric.calls += 1
        return "m", sequence[(metric.calls - 1) % len(sequence)], False

    for extra in ({}, {"callbacks": [record_evaluation(recorded := {})]}):
        metric.calls = 0
        est = RGBMRegressor(n_estimators=6, eval_metric=["l2", metric]).fit(X, y, eval_set=[(X, y)], **extra)
        _same_values(est.evals_result_["training"]["m"], sequence)
        assert all(np.isfinite(est.evals_result_["training"]["l2"]))
        if extra:
            _same_values(recorded["training"]["m"], sequence)
            assert recorded["training"]["l2"] == est.evals_result_["training"]["l2"]
    # Early stopping on the metric keeps the -inf round, and best_score_ says so.
    metric.calls = 0
    early = RGBMRegressor(n_estimators=6, eval_metric=metric, early_stopping_rounds=3).fit(X, y, eval_set=[(X, y)])
    assert early.best_iteration == 3
    assert early.best_score_ == {"training": {"m": -np.inf}}
    _same_values(early.evals_result_["training"]["m"], sequence)


class Boom(Exception):
    pass


@pytest.mark.parametrize("where", ["loss", "metric"])
def test_an_exception_propagates_unchanged_and_leaves_no_model(binary, where):
    X, y = binary
    raised = Boom("from the user's function")
    calls = []

    def loss(y_true, raw):
        calls.append(1)
        if len(calls) == 3:
            raise raised
        return logistic(y_true, raw)

    def metric(y_true, raw):
        calls.append(1)
        if len(calls) == 3:
            raise raised
        return "m", 0.0, False

    m = RGBMClassifier(n_estimators=10, **({"loss": loss} if where == "loss" else {"eval_metric": metric}))
    with pytest.raises(Boom) as info:
        m.fit(X, y, eval_set=[(X, y)])
    assert info.value is raised
    assert not hasattr(m, "_booster") and not hasattr(m, "classes_")


@pytest.mark.parametrize(
    "loss,error,fragment",
    [
        (lambda y, f: (f - y,), TypeError, r"must return \(grad, hess\)"),
        (lambda y, f: (f[:-1] - y[:-1], np.ones(len(f) - 1)), ValueError, "grad of shape"),
        (lambda y, f: (f - y, np.ones((len(f), 2))), ValueError, "hess of shape"),
        (lambda y, f: (np.full_like(f, np.nan), np.ones_like(f)), ValueError, "non-finite value at row 0"),
        (lambda y, f: (f - y, -np.ones_like(f)), ValueError, "negative hessian"),
        (lambda y, f: (["a"] * len(f), np.ones_like(f)), (TypeError, ValueError), "grad"),
        (lambda y, f: (f - y, [10**400] * len(f)), ValueError, "hess holds a number too large for a float"),
        (lambda y: (y, y), TypeError, r"must take \(y_true, raw_score\)"),
        (lambda y, f, w, g: (y, y), TypeError, r"must take \(y_true, raw_score\)"),
    ],
)
def test_bad_loss_functions_get_clear_errors(regression, loss, error, fragment):
    X, y = regression
    with pytest.raises(error, match=fragment):
        RGBMRegressor(loss=loss, n_estimators=3).fit(X, y)


def test_a_negative_hessian_is_fine_for_gradient_steps(regression):
    X, y = regression
    m = RGBMRegressor(loss=lambda y, f: (f - y, -np.ones_like(f)), gain="gradient", leaf="gradient", n_estimators=5)
    ref = RGBMRegressor(loss=squared, gain="gradient", leaf="gradient", n_estimators=5)
    np.testing.assert_array_equal(m.fit(X, y).predict(X), ref.fit(X, y).predict(X))


@pytest.mark.parametrize(
    "metric,error,fragment",
    [
        (lambda y, f: 0.5, TypeError, r"\(name, value, higher_is_better\)"),
        (lambda y, f: (1, 0.5, False), TypeError, "expected a str"),
        (lambda y, f: ("m", "x", False), TypeError, "expected a number"),
        (lambda y, f: ("m", 0.5, 1), TypeError, "expected a bool"),
        (lambda y, f: ("l2", 0.5, False), ValueError, "names a metric twice"),
        (lambda y: ("m", 0.5, False), TypeError, r"must take \(y_true, raw_score\)"),
        # A Python int beyond the float range (float() raises OverflowError).
        (lambda y, f: ("huge", 10**400, False), ValueError, "eval_metric 'huge' of function .* too large for a float"),
    ],
)
def test_bad_metric_functions_get_clear_errors(regression, metric, error, fragment):
    X, y = regression
    with pytest.raises(error, match=fragment):
        RGBMRegressor(eval_metric=["l2", metric], n_estimators=3).fit(X, y, eval_set=[(X, y)])


def test_a_metric_must_keep_its_name(regression):
    X, y = regression
    names = iter(["a", "b", "c"])
    with pytest.raises(ValueError, match="same name every round"):
        RGBMRegressor(eval_metric=lambda y, f: (next(names), 0.0, False), n_estimators=3).fit(X, y, eval_set=[(X, y)])


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"step": "line_search"}, "line_search"),
        ({"record_train_loss": True}, "no value to record"),
        ({"step": "constant", "leaf": "gradient"}, "smooth loss"),
        ({"booster": "rgb", "max_depth": None}, "booster='rgb'"),
        ({"eval_metric": "logloss"}, "eval_metric 'logloss' is not available"),
        ({"early_stopping_rounds": 2}, "custom loss has no default"),
    ],
)
def test_rules_that_need_the_loss_refuse_a_function(binary, params, fragment):
    X, y = binary
    with pytest.raises(ValueError, match=fragment):
        RGBMClassifier(loss=logistic, n_estimators=3, **params).fit(X, y, eval_set=[(X, y)])


def test_raw_score_metrics_apply_to_a_custom_loss():
    X, y = make_classification(600, 6, n_informative=4, n_classes=3, random_state=0)
    m = RGBMClassifier(loss=softmax, n_estimators=4, eval_metric="multi_error").fit(X, y, eval_set=[(X, y)])
    expected = [np.mean(np.argmax(r, axis=1) != y) for r in m.staged_decision_function(X)]
    np.testing.assert_allclose(m.evals_result_["training"]["multi_error"], expected)
    with pytest.raises(ValueError, match="multi_logloss"):
        RGBMClassifier(loss=softmax, eval_metric="multi_logloss").fit(X, y, eval_set=[(X, y)])


def test_a_saved_model_records_the_function_and_predicts_raw_scores(binary, tmp_path):
    X, y = binary
    m = RGBMClassifier(loss=logistic, eval_metric=[weighted_rmse], n_estimators=6).fit(X, y)
    m.save_model(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert repr(loaded.loss) == f"SavedFunction('{__name__}.logistic')"
    np.testing.assert_array_equal(loaded.decision_function(X), m.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), m.predict(X))
    with pytest.raises(ValueError, match="no link from raw scores to probabilities"):
        loaded.predict_proba(X)
    with pytest.raises(ValueError, match="not saved with the model"):
        loaded.fit(X, y)
    loaded.set_params(loss=logistic, eval_metric=None).fit(X, y)  # the function given again


def test_a_custom_model_continues_with_the_same_function(binary):
    X, y = binary
    once = RGBMClassifier(loss=logistic, n_estimators=12).fit(X, y)
    first = RGBMClassifier(loss=logistic, n_estimators=7).fit(X, y)
    both = RGBMClassifier(loss=logistic, n_estimators=5).fit(X, y, init_model=first)
    np.testing.assert_allclose(both.decision_function(X), once.decision_function(X), rtol=0, atol=1e-10)


def test_onnx_exports_a_custom_regressor_and_refuses_a_custom_classifier(regression, binary):
    onnxruntime = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from rgbm_rs import to_onnx

    X, y = regression
    reg = RGBMRegressor(loss=squared, n_estimators=10).fit(X, y)
    runner = onnxruntime.InferenceSession(to_onnx(reg).SerializeToString())
    (out,) = runner.run(None, {runner.get_inputs()[0].name: X.astype(np.float32)})
    np.testing.assert_allclose(out.ravel(), reg.predict(X.astype(np.float32)), rtol=1e-5, atol=1e-4)
    Xb, yb = binary
    with pytest.raises(ValueError, match="custom loss"):
        to_onnx(RGBMClassifier(loss=logistic, n_estimators=3).fit(Xb, yb))
