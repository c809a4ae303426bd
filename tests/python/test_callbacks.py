"""Evaluation sets, early stopping, metrics, callbacks, logging and progress."""

import io
import logging
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.exceptions import NotFittedError
from sklearn.metrics import log_loss, mean_absolute_error, mean_squared_error, roc_auc_score
from sklearn.model_selection import train_test_split

import rgbm_rs
from rgbm_rs import RGBMClassifier, RGBMRegressor
from rgbm_rs.callback import CallbackEnv


@pytest.fixture(scope="module")
def noisy_regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = X[:, 0] + 0.5 * np.sin(3 * X[:, 1]) + rng.normal(scale=1.0, size=600)
    return train_test_split(X, y, test_size=0.4, random_state=0)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


# Deep trees and a large step on noisy data: the validation loss turns up quickly.
OVERFIT = dict(n_estimators=300, learning_rate=0.5, max_depth=8, min_samples_leaf=2, random_state=0)


def test_early_stopping_keeps_the_best_round(noisy_regression):
    X_train, X_val, y_train, y_val = noisy_regression
    reg = RGBMRegressor(early_stopping_rounds=10, **OVERFIT).fit(X_train, y_train, eval_set=[(X_val, y_val)])
    curve = np.array(reg.evals_result_["valid_0"]["l2"])
    assert reg.n_estimators_ < 300 and len(curve) == reg.n_estimators_
    # LightGBM's count of the rounds kept; XGBoost's best_iteration is the 0-based round.
    assert reg.best_iteration_ - 1 == reg.best_iteration == int(np.argmin(curve))
    assert reg.n_estimators_ == reg.best_iteration_ + 10
    assert reg.best_score_ == {"valid_0": {"l2": curve.min()}}
    assert reg.best_score == curve.min()
    # Predictions are those of the model trained for best_iteration_ rounds.
    short = RGBMRegressor(**{**OVERFIT, "n_estimators": reg.best_iteration_}).fit(X_train, y_train)
    assert np.array_equal(reg.predict(X_val), short.predict(X_val))
    assert mean_squared_error(y_val, reg.predict(X_val)) == pytest.approx(curve.min(), rel=1e-12)


def test_early_stopping_callback_matches_the_constructor_option(noisy_regression):
    X_train, X_val, y_train, y_val = noisy_regression
    built_in = RGBMRegressor(early_stopping_rounds=10, **OVERFIT).fit(X_train, y_train, eval_set=[(X_val, y_val)])
    stopper = rgbm_rs.early_stopping(10)
    by_callback = RGBMRegressor(**OVERFIT).fit(X_train, y_train, eval_set=[(X_val, y_val)], callbacks=[stopper])
    assert stopper.best_iteration == built_in.best_iteration == by_callback.best_iteration
    assert by_callback.n_estimators_ == built_in.n_estimators_
    assert np.array_equal(by_callback.predict(X_val), built_in.predict(X_val))


def test_early_stopping_min_delta_follows_lightgbms_rule(noisy_regression):
    X_train, X_val, y_train, y_val = noisy_regression
    # A gentle step: late rounds improve the validation loss by little.
    slow = dict(n_estimators=300, learning_rate=0.05, max_depth=3, random_state=0)
    full = RGBMRegressor(**slow).fit(X_train, y_train, eval_set=[(X_val, y_val)])
    curve = np.array(full.evals_result_["valid_0"]["l2"])
    for delta in (0.0, 0.002, 0.02):
        # LightGBM's rule by hand: a round counts when it beats the best by more than delta.
        best, stop = 0, None
        for r in range(1, len(curve)):
            if curve[r] < curve[best] - delta:
                best = r
            elif r - best >= 5:
                stop = r
                break
        reg = RGBMRegressor(early_stopping_rounds=5, early_stopping_min_delta=delta, **slow)
        reg.fit(X_train, y_train, eval_set=[(X_val, y_val)])
        assert reg.best_iteration == best, delta
        assert reg.n_estimators_ == (len(curve) if stop is None else stop + 1), delta
        # The callback with the same min_delta agrees.
        stopper = rgbm_rs.early_stopping(5, min_delta=delta)
        RGBMRegressor(**slow).fit(X_train, y_train, eval_set=[(X_val, y_val)], callbacks=[stopper])
        assert stopper.best_iteration == best, delta
    with pytest.raises(ValueError, match="early_stopping_min_delta"):
        RGBMRegressor(early_stopping_min_delta=-0.1).fit(X_train, y_train)


def test_callback_early_stopping_with_sglb_shrinkage_equals_the_shorter_chain(noisy_regression):
    # Stored trees carry the final shrinkage; truncation must undo what the dropped rounds applied.
    X_train, X_val, y_train, y_val = noisy_regression
    kw = dict(OVERFIT, langevin=True, temperature=1e3, shrink_rate=0.2)
    reg = RGBMRegressor(**kw).fit(X_train, y_train, eval_set=[(X_val, y_val)], callbacks=[rgbm_rs.early_stopping(5)])
    short = RGBMRegressor(**{**kw, "n_estimators": reg.best_iteration_}).fit(X_train, y_train)
    assert np.allclose(reg.predict(X_val), short.predict(X_val), rtol=0, atol=1e-10)


def test_metrics_equal_independent_computations(noisy_regression, cancer):
    X_train, X_val, y_train, y_val = noisy_regression
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y_val))
    reg = RGBMRegressor(n_estimators=8, eval_metric=["l2", "rmse", "mae"], random_state=0)
    reg.fit(X_train, y_train, eval_set=[(X_val, y_val)], eval_sample_weight=[w], eval_names=["val"])
    for t, pred in enumerate(reg.staged_predict(X_val)):
        got = {m: reg.evals_result_["val"][m][t] for m in ("l2", "rmse", "mae")}
        assert got["l2"] == pytest.approx(mean_squared_error(y_val, pred, sample_weight=w), rel=1e-10)
        assert got["rmse"] == pytest.approx(np.sqrt(got["l2"]), rel=1e-12)
        assert got["mae"] == pytest.approx(mean_absolute_error(y_val, pred, sample_weight=w), rel=1e-10)

    X_train, X_val, y_train, y_val = cancer
    clf = RGBMClassifier(n_estimators=6, eval_metric=["logloss", "error", "auc"], random_state=0)
    clf.fit(X_train, y_train, eval_set=[(X_val, y_val)])
    for t, proba in enumerate(clf.staged_predict_proba(X_val)):
        res = {m: clf.evals_result_["valid_0"][m][t] for m in ("logloss", "error", "auc")}
        assert res["logloss"] == pytest.approx(log_loss(y_val, proba), rel=1e-9)
        assert res["error"] == pytest.approx(np.mean((proba[:, 1] > 0.5) != y_val))
        assert res["auc"] == pytest.approx(roc_auc_score(y_val, proba[:, 1]), rel=1e-12)


def test_multiclass_metrics_and_early_stopping():
    X, y = load_digits(return_X_y=True)
    X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    clf = RGBMClassifier(n_estimators=15, max_depth=3, eval_metric=["multi_logloss", "multi_error"], random_state=0)
    clf.fit(X_train, y_train, eval_set=[(X_val, y_val)])
    for t, proba in enumerate(clf.staged_predict_proba(X_val)):
        assert clf.evals_result_["valid_0"]["multi_logloss"][t] == pytest.approx(log_loss(y_val, proba), rel=1e-9)
        assert clf.evals_result_["valid_0"]["multi_error"][t] == pytest.approx(np.mean(proba.argmax(1) != y_val))
    early = RGBMClassifier(
        n_estimators=400, learning_rate=0.5, max_depth=6, min_samples_leaf=1, early_stopping_rounds=5, random_state=0
    ).fit(X_train, y_train, eval_set=[(X_val, y_val)])
    curve = early.evals_result_["valid_0"]["multi_logloss"]
    assert early.n_estimators_ < 400 and early.best_iteration == int(np.argmin(curve))
    assert early.get_booster().n_rounds == early.best_iteration_


def test_validation_fraction_holds_out_a_stratified_part(cancer):
    X_train, _, y_train, _ = cancer
    clf = RGBMClassifier(
        n_estimators=200, learning_rate=0.3, validation_fraction=0.2, early_stopping_rounds=5, random_state=0
    ).fit(X_train, y_train)
    assert list(clf.evals_result_) == ["validation"]
    assert clf.n_estimators_ < 200
    again = RGBMClassifier(**clf.get_params()).fit(X_train, y_train)
    assert again.evals_result_ == clf.evals_result_


@pytest.mark.parametrize(
    "params,fit_kw,fragment",
    [
        (dict(early_stopping_rounds=5), {}, "needs evaluation data"),
        (dict(validation_fraction=0.2), {"eval_set": "both"}, "either eval_set or validation_fraction"),
        (dict(eval_metric="auc"), {"eval_set": "val"}, "not available for this loss"),
        (dict(eval_metric=[]), {"eval_set": "val"}, "at least one metric"),
        (dict(validation_fraction=0.001), {}, "validation_fraction"),
        ({}, {"eval_set": "bad"}, "list of \\(X, y\\) pairs"),
        ({}, {"eval_set": "val", "eval_names": ["a", "b"]}, "eval_names"),
    ],
)
def test_options_that_would_do_nothing_or_are_wrong_are_refused(noisy_regression, params, fit_kw, fragment):
    X_train, X_val, y_train, y_val = noisy_regression
    kw = dict(fit_kw)
    if kw.get("eval_set") in ("val", "both"):
        kw["eval_set"] = [(X_val, y_val)]
    elif kw.get("eval_set") == "bad":
        kw["eval_set"] = [X_val]
    with pytest.raises((ValueError, TypeError), match=fragment):
        RGBMRegressor(n_estimators=5, **params).fit(X_train[:200], y_train[:200], **kw)


def test_callbacks_see_every_round_and_can_stop(noisy_regression):
    X_train, X_val, y_train, y_val = noisy_regression
    seen = []

    def watch(env):
        assert isinstance(env, CallbackEnv)
        seen.append((env.iteration, env.end_iteration, [r[:2] for r in env.evaluation_result_list]))
        assert env.evals_result["valid_0"]["l2"][-1] == env.evaluation_result_list[0][2]
        return env.iteration == 4

    record = {}
    reg = RGBMRegressor(n_estimators=50, random_state=0)
    reg.fit(X_train, y_train, eval_set=[(X_val, y_val)], callbacks=[watch, rgbm_rs.record_evaluation(record)])
    assert [s[0] for s in seen] == [0, 1, 2, 3, 4]
    assert all(s[1] == 50 and s[2] == [("valid_0", "l2")] for s in seen)
    assert reg.n_estimators_ == 5 and reg.get_booster().n_rounds == 5
    assert record == reg.evals_result_
    assert not hasattr(reg, "best_iteration_")


def test_a_failing_callback_propagates_and_leaves_the_estimator_unfitted(noisy_regression):
    X_train, _, y_train, _ = noisy_regression

    class Boom(RuntimeError):
        pass

    def explode(env):
        if env.iteration == 2:
            raise Boom("stop here")

    reg = RGBMRegressor(n_estimators=20)
    with pytest.raises(Boom, match="stop here"):
        reg.fit(X_train, y_train, callbacks=[explode])
    with pytest.raises(NotFittedError):
        reg.predict(X_train)
    with pytest.raises(TypeError, match="callables"):
        reg.fit(X_train, y_train, callbacks=[42])


def test_verbose_logs_every_k_rounds(noisy_regression, caplog):
    X_train, X_val, y_train, y_val = noisy_regression
    with caplog.at_level(logging.INFO, logger="rgbm_rs"):
        RGBMRegressor(n_estimators=20, verbose=5).fit(X_train, y_train, eval_set=[(X_val, y_val)])
    lines = [r.getMessage() for r in caplog.records if r.name == "rgbm_rs"]
    assert [line.split("\t")[0] for line in lines] == ["[5]", "[10]", "[15]", "[20]"]
    assert all("valid_0's l2:" in line for line in lines)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="rgbm_rs"):
        RGBMRegressor(n_estimators=20).fit(X_train, y_train, eval_set=[(X_val, y_val)])
        rgbm_rs.log_evaluation(10)  # building the callback logs nothing
    assert not [r for r in caplog.records if r.name == "rgbm_rs"]


def test_log_evaluation_callback(noisy_regression, caplog):
    X_train, X_val, y_train, y_val = noisy_regression
    with caplog.at_level(logging.INFO, logger="rgbm_rs"):
        RGBMRegressor(n_estimators=7).fit(
            X_train, y_train, eval_set=[(X_val, y_val)], callbacks=[rgbm_rs.log_evaluation(3)]
        )
    assert [r.getMessage().split("\t")[0] for r in caplog.records if r.name == "rgbm_rs"] == ["[3]", "[6]", "[7]"]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_with_verbose_on_a_terminal_only(noisy_regression, capsys, monkeypatch):
    pytest.importorskip("tqdm")
    X_train, X_val, y_train, y_val = noisy_regression
    terminal = _Terminal()
    with monkeypatch.context() as m:
        m.setattr(sys, "stderr", terminal)
        RGBMRegressor(n_estimators=12, verbose=100).fit(X_train, y_train)
    assert "12/12" in terminal.getvalue()
    # Redirected (not a terminal): no bar redrawn with carriage returns among the log lines.
    RGBMRegressor(n_estimators=12, verbose=4).fit(X_train, y_train, eval_set=[(X_val, y_val)])
    err = capsys.readouterr().err
    assert "\r" not in err and "12/12" not in err
    RGBMRegressor(n_estimators=12).fit(X_train, y_train)
    assert capsys.readouterr().err == ""


def test_importance_types_and_introspection(cancer):
    pytest.importorskip("pandas")
    X_train, _, y_train, _ = cancer
    gain = RGBMClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X_train, y_train)
    split = RGBMClassifier(n_estimators=10, max_depth=3, importance_type="split", random_state=0).fit(X_train, y_train)
    nodes = gain.trees_to_dataframe()
    internal = nodes[~nodes["is_leaf"]]
    counts = np.bincount(internal["feature"], minlength=X_train.shape[1]).astype(float)
    assert np.allclose(split.feature_importances_, counts / counts.sum())
    gains = np.bincount(internal["feature"], weights=internal["gain"], minlength=X_train.shape[1])
    assert np.allclose(gain.feature_importances_, gains / gains.sum())
    assert gain.dump_model()["n_features"] == X_train.shape[1]
    booster = gain.get_booster()
    assert booster.n_rounds == 10 and booster.n_outputs == 1
    with pytest.raises(ValueError, match="importance_type"):
        RGBMClassifier(importance_type="cover").fit(X_train, y_train)


def test_verbose_output_redirected_to_a_file_is_lines(tmp_path):
    code = (
        "import numpy as np\n"
        "from rgbm_rs import RGBMRegressor\n"
        "X = np.random.default_rng(0).normal(size=(300, 3))\n"
        "y = X[:, 0]\n"
        "RGBMRegressor(n_estimators=20, verbose=5).fit(X, y, eval_set=[(X, y)])\n"
    )
    with open(tmp_path / "err.txt", "w") as err:
        subprocess.run([sys.executable, "-c", code], stderr=err, check=True, timeout=120)
    lines = (tmp_path / "err.txt").read_text().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["[5]", "[10]", "[15]", "[20]"]
    assert all("training's l2: " in line for line in lines)
