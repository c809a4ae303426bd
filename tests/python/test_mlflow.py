"""skops and MLflow: SKOPS_TRUSTED_TYPES and rgbm_rs.mlflow.autolog.

mlflow and skops are optional (not in the test extra): their tests skip
without them. The tracking store is a local sqlite database."""

import importlib.util
import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

from rgbm_rs import SKOPS_TRUSTED_TYPES, RGBMClassifier, RGBMRanker, RGBMRegressor

needs_skops = pytest.mark.skipif(importlib.util.find_spec("skops") is None, reason="skops is not installed")
needs_mlflow = pytest.mark.skipif(
    importlib.util.find_spec("mlflow") is None or importlib.util.find_spec("skops") is None,
    reason="mlflow (with skops) is not installed",
)
needs_pandas = pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is not installed")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(300, 4))
Y = X[:, 0] - 0.5 * X[:, 1] + RNG.normal(scale=0.3, size=300)


def _frame():
    import pandas as pd

    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["colour"] = pd.Categorical(RNG.choice(["red", "green", "blue"], 300))
    return df, (Y + (df["colour"] == "red").to_numpy() > 0)


def _fitted(kind):
    """A fitted estimator of each kind whose state skops must store."""
    if kind == "regressor":
        return RGBMRegressor(n_estimators=8).fit(X, Y, eval_set=[(X[:50], Y[:50])]), X
    if kind == "early_stopping":
        model = RGBMRegressor(n_estimators=200, learning_rate=0.5, early_stopping_rounds=2)
        return model.fit(X[:200], Y[:200], eval_set=[(X[200:], Y[200:])]), X
    if kind == "multi_output":
        return RGBMRegressor(n_estimators=8).fit(X, np.c_[Y, -Y]), X
    if kind == "rgb":
        return RGBMRegressor(n_estimators=8, booster="rgb").fit(X, Y), X
    if kind == "categorical_frame":
        df, labels = _frame()
        return RGBMClassifier(n_estimators=8).fit(df, labels), df
    if kind == "multiclass":
        labels = np.array(["low", "mid", "high"])[np.digitize(Y, [-0.5, 0.5])]
        return RGBMClassifier(n_estimators=8).fit(X, labels), X
    if kind == "multilabel":
        return RGBMClassifier(n_estimators=8).fit(X, np.c_[Y > 0, X[:, 2] > 0]), X
    if kind == "ranker":
        grades = np.clip(np.round(Y + 1.5), 0, 3).astype(int)
        return RGBMRanker(n_estimators=8).fit(X, grades, group=[100, 100, 100]), X
    raise AssertionError(kind)


KINDS = [
    "regressor",
    "early_stopping",
    "multi_output",
    "rgb",
    "categorical_frame",
    "multiclass",
    "multilabel",
    "ranker",
]


def _assert_same_predictions(loaded, model, data):
    assert type(loaded) is type(model)
    np.testing.assert_array_equal(loaded.predict(data), model.predict(data))
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(loaded.predict_proba(data), model.predict_proba(data))


def test_import_rgbm_rs_does_not_import_mlflow_or_skops():
    code = "import sys, rgbm_rs, rgbm_rs.mlflow; print('mlflow' in sys.modules, 'skops' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_trusted_types_name_the_estimator_classes():
    import importlib

    classes = []
    for name in SKOPS_TRUSTED_TYPES:
        module, _, cls = name.rpartition(".")
        classes.append(getattr(importlib.import_module(module), cls))
    assert classes == [RGBMRegressor, RGBMClassifier, RGBMRanker]
    import rgbm_rs.mlflow

    assert rgbm_rs.mlflow.SKOPS_TRUSTED_TYPES is SKOPS_TRUSTED_TYPES


def test_rgb_family_counts_survive_pickle():
    model, _ = _fitted("rgb")
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded.rgb_family_counts_ == model.rgb_family_counts_
    assert all(isinstance(key, tuple) for key in loaded.rgb_family_counts_)


@needs_skops
@pytest.mark.parametrize("kind", KINDS)
def test_skops_round_trip_needs_only_the_trusted_types(kind):
    if kind == "categorical_frame" and importlib.util.find_spec("pandas") is None:
        pytest.skip("pandas is not installed")
    import skops.io

    model, data = _fitted(kind)
    dumped = skops.io.dumps(model)
    assert set(skops.io.get_untrusted_types(data=dumped)) <= set(SKOPS_TRUSTED_TYPES)
    with pytest.raises(skops.io.exceptions.UntrustedTypesFoundException):
        skops.io.loads(dumped)
    loaded = skops.io.loads(dumped, trusted=SKOPS_TRUSTED_TYPES)
    _assert_same_predictions(loaded, model, data)
    for name in ("evals_result_", "best_iteration_", "rgb_family_counts_", "feature_names_in_"):
        if hasattr(model, name):
            np.testing.assert_equal(getattr(loaded, name), getattr(model, name))


@pytest.fixture(scope="module")
def tracking(tmp_path_factory):
    """A local sqlite tracking store; each test gets its own experiment."""
    import mlflow

    root = tmp_path_factory.mktemp("mlflow")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{root / 'mlflow.db'}")
    yield root
    mlflow.set_tracking_uri(previous)


@pytest.fixture
def experiment(tracking, request):
    import mlflow

    import rgbm_rs.mlflow

    name = request.node.name
    exp = mlflow.create_experiment(name, artifact_location=(tracking / name).as_uri())
    mlflow.set_experiment(experiment_id=exp)
    yield exp
    rgbm_rs.mlflow.autolog(disable=True)
    while mlflow.active_run() is not None:
        mlflow.end_run()


def _runs(experiment):
    import mlflow

    return mlflow.MlflowClient().search_runs([experiment])


@needs_mlflow
def test_sklearn_log_model_needs_the_trusted_types(experiment):
    # mlflow's default skops format trusts scikit-learn's estimators only;
    # if this starts passing, the flag is no longer needed.
    import mlflow
    import mlflow.sklearn

    model, _ = _fitted("regressor")
    with mlflow.start_run(), pytest.raises(mlflow.exceptions.MlflowException, match="untrusted types"):
        mlflow.sklearn.log_model(model, name="model")


@needs_mlflow
@needs_pandas
def test_sklearn_log_model_with_trusted_types_loads_back(experiment):
    import mlflow
    import mlflow.pyfunc
    import mlflow.sklearn

    model, df = _fitted("categorical_frame")
    with mlflow.start_run():
        info = mlflow.sklearn.log_model(model, name="model", skops_trusted_types=SKOPS_TRUSTED_TYPES)
    _assert_same_predictions(mlflow.sklearn.load_model(info.model_uri), model, df)
    pyfunc = mlflow.pyfunc.load_model(info.model_uri)
    np.testing.assert_array_equal(np.asarray(pyfunc.predict(df)), model.predict(df))


@needs_mlflow
def test_autolog_logs_params_history_best_iteration_and_model(experiment):
    import mlflow
    import mlflow.sklearn

    import rgbm_rs.mlflow

    rgbm_rs.mlflow.autolog()
    model = RGBMRegressor(n_estimators=200, learning_rate=0.5, early_stopping_rounds=2, eval_metric=["l2", "l1"])
    model.fit(X[:200], Y[:200], eval_set=[(X[200:], Y[200:])], eval_names=["valid"])
    assert mlflow.active_run() is None
    (run,) = _runs(experiment)
    assert run.info.status == "FINISHED"
    assert run.data.params == {key: str(value) for key, value in model.get_params(deep=False).items()}
    assert model.best_iteration_ < model.n_estimators
    assert run.data.metrics["best_iteration"] == model.best_iteration_
    client = mlflow.MlflowClient()
    assert len(model.evals_result_["valid"]) == 2
    for metric in model.evals_result_["valid"]:
        history = sorted(client.get_metric_history(run.info.run_id, f"valid-{metric}"), key=lambda m: m.step)
        assert [m.step for m in history] == list(range(len(model.evals_result_["valid"][metric])))
        assert [m.value for m in history] == model.evals_result_["valid"][metric]
        assert run.data.metrics[f"valid-{metric}"] == model.evals_result_["valid"][metric][-1]
    (logged,) = mlflow.search_logged_models(experiment_ids=[experiment], output_format="list")
    assert logged.source_run_id == run.info.run_id
    _assert_same_predictions(mlflow.sklearn.load_model(logged.model_uri), model, X)


@needs_mlflow
def test_autolog_logs_into_the_active_run_and_classifier_ranker(experiment):
    import mlflow

    import rgbm_rs.mlflow

    rgbm_rs.mlflow.autolog(log_models=False)
    ranker, _ = _fitted("ranker")
    with mlflow.start_run() as outer:
        model, _ = _fitted("multiclass")
        assert mlflow.active_run().info.run_id == outer.info.run_id
    runs = {r.info.run_id: r for r in _runs(experiment)}
    assert len(runs) == 2
    run = runs.pop(outer.info.run_id)
    (ranker_run,) = runs.values()
    assert run.data.params == {key: str(value) for key, value in model.get_params(deep=False).items()}
    assert run.data.metrics == {}
    assert ranker_run.data.params == {key: str(value) for key, value in ranker.get_params(deep=False).items()}
    assert mlflow.search_logged_models(experiment_ids=[experiment], output_format="list") == []


@needs_mlflow
def test_autolog_failed_fit_keeps_params_and_fails_the_run(experiment):
    import rgbm_rs.mlflow

    rgbm_rs.mlflow.autolog(log_models=False)
    with pytest.raises(ValueError):
        RGBMRegressor(n_estimators=3).fit(X, np.full(300, np.nan))
    (run,) = _runs(experiment)
    assert run.info.status == "FAILED"
    assert run.data.params["n_estimators"] == "3"


@needs_mlflow
def test_autolog_warns_when_the_model_cannot_be_logged(experiment):
    import mlflow

    import rgbm_rs.mlflow

    class Subclass(RGBMRegressor):
        pass

    rgbm_rs.mlflow.autolog()
    with pytest.warns(RuntimeWarning, match="the model of Subclass were not logged"):
        model = Subclass(n_estimators=3).fit(X, Y)
    assert model.n_estimators_ == 3
    (run,) = _runs(experiment)
    assert run.info.status == "FINISHED"
    assert run.data.params["n_estimators"] == "3"
    # mlflow records the attempt as a model whose status is FAILED.
    logged = mlflow.search_logged_models(experiment_ids=[experiment], output_format="list")
    assert [m.status.name for m in logged] == ["FAILED"]


@needs_mlflow
def test_autolog_disable_restores_fit(experiment):
    import rgbm_rs.mlflow

    own = {cls: cls.__dict__.get("fit") for cls in (RGBMRegressor, RGBMClassifier, RGBMRanker)}
    rgbm_rs.mlflow.autolog(log_models=False)
    rgbm_rs.mlflow.autolog(log_models=False)  # a second call does not wrap twice
    assert RGBMRegressor.fit.__wrapped__ is rgbm_rs.sklearn.RGBMBase.fit
    rgbm_rs.mlflow.autolog(disable=True)
    assert {cls: cls.__dict__.get("fit") for cls in own} == own
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RGBMRegressor(n_estimators=3).fit(X, Y)
    assert _runs(experiment) == []
