"""LightGBM's and XGBoost's parameter, objective, metric, fit and predict
names: each gives the model our own name for the same thing gives, a name
and its counterpart together are refused naming both, and get_params keeps
what was passed."""

import json
import os
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from rgbm_rs import RGBMClassifier, RGBMRanker, RGBMRegressor, _params

PARAMETERS_PAGE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "parameters.md")
rng = np.random.default_rng(0)
X = rng.normal(size=(600, 6))
Y = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.3, size=600)
YC = (Y > np.median(Y)).astype(int)
Y3 = np.digitize(Y, np.quantile(Y, [1 / 3, 2 / 3]))


def _model(est, X_=X, y=Y, **fit):
    return json.loads(est.fit(X_, y, **fit).get_booster().to_json())


def _same_model(a, b, X_=X, y=Y):
    # The trees and scores; the parameters recorded may name an option two ways
    # (subsample_freq=1 or unset).
    ma, mb = _model(a, X_, y), _model(b, X_, y)
    assert {k: v for k, v in ma.items() if k != "params"} == {k: v for k, v in mb.items() if k != "params"}


@pytest.mark.parametrize(
    "peer, ours",
    [
        ({"num_leaves": 12}, {"max_leaves": 12, "max_depth": None}),
        ({"num_leaves": 12, "max_depth": 4}, {"max_leaves": 12, "max_depth": 4}),
        ({"min_child_samples": 40}, {"min_samples_leaf": 40}),
        ({"gamma": 2.0}, {"min_split_gain": 2.0}),
        ({"max_bin": 31}, {"max_bins": 31}),
        ({"objective": "regression"}, {"loss": "squared"}),
        ({"objective": "reg:squarederror"}, {"loss": "squared"}),
        ({"objective": "regression_l1"}, {"loss": "absolute_error"}),
        ({"objective": "huber"}, {"loss": "huber"}),
        ({"max_depth": -1}, {"max_depth": None, "max_leaves": 31}),
        ({"max_depth": 0, "max_leaves": 9}, {"max_depth": None, "max_leaves": 9}),
        ({"colsample_bytree": 0.5}, {"selection": "groups", "selection_size": 0.5}),
        ({"feature_fraction": 0.5}, {"selection": "groups", "selection_size": 0.5}),
        ({"feature_fraction_bynode": 0.5}, {"colsample_bynode": 0.5}),
        ({"colsample_bynode": 1.0}, {}),
        ({"colsample_bylevel": None, "colsample_bynode": None}, {}),
        ({"colsample_bytree": 1.0}, {}),
        ({"subsample": 0.7, "subsample_freq": 1}, {"subsample": 0.7}),
        ({"subsample": 0.7, "subsample_freq": 0}, {}),
    ],
)
def test_a_peer_name_gives_the_model_of_ours(peer, ours):
    common = {"n_estimators": 8, "random_state": 3}
    _same_model(RGBMRegressor(**common, **peer), RGBMRegressor(**common, **ours))


def test_the_classifier_takes_the_peers_objectives_and_positive_weight():
    common = {"n_estimators": 6, "random_state": 1}
    for objective in ("binary", "binary:logistic"):
        _same_model(RGBMClassifier(objective=objective, **common), RGBMClassifier(**common), y=YC)
    for objective in ("multiclass", "multi:softprob"):
        _same_model(RGBMClassifier(objective=objective, **common), RGBMClassifier(**common), y=Y3)
    _same_model(RGBMClassifier(scale_pos_weight=3.0, **common), RGBMClassifier(class_weight={1: 3.0}, **common), y=YC)
    labels = np.where(YC == 1, "yes", "no")
    _same_model(
        RGBMClassifier(scale_pos_weight=0.5, **common), RGBMClassifier(class_weight={"yes": 0.5}, **common), y=labels
    )
    with pytest.raises(ValueError, match="scale_pos_weight.*binary y.*3 classes"):
        RGBMClassifier(scale_pos_weight=2.0).fit(X, Y3)
    with pytest.raises(ValueError, match="scale_pos_weight=2.0 and class_weight"):
        RGBMClassifier(scale_pos_weight=2.0, class_weight="balanced").fit(X, YC)


def test_the_ranker_takes_the_peers_objectives():
    grades = np.clip(np.round(Y - Y.min()), 0, 4).astype(int)
    group = [50] * 12
    a = RGBMRanker(objective="rank:ndcg", n_estimators=4, random_state=0).fit(X, grades, group=group)
    b = RGBMRanker(n_estimators=4, random_state=0).fit(X, grades, group=group)
    assert a.get_booster().to_json() == b.get_booster().to_json()


@pytest.mark.parametrize(
    "kwargs, names",
    [
        ({"num_leaves": 12, "max_leaves": 20}, ("num_leaves=12", "max_leaves=20")),
        ({"min_child_samples": 5, "min_samples_leaf": 7}, ("min_child_samples=5", "min_samples_leaf=7")),
        ({"gamma": 1.0, "min_split_gain": 0.5}, ("gamma=1.0", "min_split_gain=0.5")),
        ({"max_bin": 63, "max_bins": 31}, ("max_bin=63", "max_bins=31")),
        ({"objective": "regression", "loss": "huber"}, ("objective='regression'", "loss='huber'")),
        ({"colsample_bytree": 0.5, "feature_fraction": 0.5}, ("colsample_bytree=0.5", "feature_fraction=0.5")),
        (
            {"feature_fraction_bynode": 0.5, "colsample_bynode": 0.4},
            ("feature_fraction_bynode=0.5", "colsample_bynode=0.4"),
        ),
        ({"colsample_bytree": 0.5, "selection": "random"}, ("colsample_bytree=0.5", "selection='random'")),
    ],
)
def test_a_peer_name_and_ours_together_are_refused_naming_both(kwargs, names):
    est = RGBMRegressor(n_estimators=2, **kwargs)
    with pytest.raises(ValueError) as e:
        est.fit(X, Y)
    for name in names:
        assert name in str(e.value)
    assert est.get_params()["max_leaves"] == kwargs.get("max_leaves")


def test_refused_objectives_say_why():
    with pytest.raises(ValueError, match="objective='binary' is the loss 'logistic', which RGBMRegressor does not fit"):
        RGBMRegressor(objective="binary").fit(X, Y)
    with pytest.raises(ValueError, match="pseudo-Huber loss is not built"):
        RGBMRegressor(objective="reg:pseudohubererror").fit(X, Y)
    with pytest.raises(ValueError, match="'objective' parameter of RGBMRegressor"):
        RGBMRegressor(objective="no such objective").fit(X, Y)


def test_get_params_keeps_what_was_passed_and_grid_search_round_trips():
    est = RGBMRegressor(num_leaves=7, objective="regression", colsample_bytree=0.8, n_estimators=5)
    est.fit(X, Y)
    params = est.get_params()
    assert (params["num_leaves"], params["max_leaves"], params["max_depth"]) == (7, None, 6)
    assert (params["objective"], params["loss"], params["selection"]) == ("regression", "squared", "full")
    assert clone(est).get_params() == params
    search = GridSearchCV(RGBMRegressor(n_estimators=5), {"num_leaves": [4, 16], "min_child_samples": [5, 40]}, cv=2)
    search.fit(X, Y)
    assert set(search.best_params_) == {"num_leaves", "min_child_samples"}
    assert search.best_estimator_.get_params()["num_leaves"] in (4, 16)


def test_a_fit_that_fails_keeps_the_parameters_given():
    est = RGBMRegressor(num_leaves=7, n_estimators=2)
    with pytest.raises(ValueError):
        est.fit(X[:, :0], Y)
    assert est.get_params()["max_leaves"] is None and est.get_params()["max_depth"] == 6


def test_subsample_freq_keeps_a_draw_for_that_many_rounds():
    # Each tree's root counts the rows of its round's draw: rounds k*freq ..
    # k*freq + freq - 1 share one draw.
    est = RGBMRegressor(n_estimators=9, subsample=0.5, subsample_freq=3, random_state=5).fit(X, Y)
    roots = [t["count"][0] for t in json.loads(est.get_booster().to_json())["trees"]]
    for start in (0, 3, 6):
        assert roots[start] == roots[start + 1] == roots[start + 2]
    assert len({roots[0], roots[3], roots[6]}) > 1
    every = RGBMRegressor(n_estimators=3, subsample=0.5, random_state=5).fit(X, Y)
    first = [t["count"][0] for t in json.loads(every.get_booster().to_json())["trees"]]
    assert first[0] == roots[0] and len(set(first)) > 1


def test_verbose_below_zero_and_verbosity_zero_hide_warnings():
    cats = np.c_[rng.integers(0, 40, size=600), X[:, 1:]]
    loud = RGBMRegressor(n_estimators=2, categorical_features=[0], max_bins=8)
    with pytest.warns(UserWarning, match="more than max_bins"):
        loud.fit(cats, Y)
    for quiet in ({"verbose": -1}, {"verbosity": 0}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est = RGBMRegressor(n_estimators=2, categorical_features=[0], max_bins=8, **quiet).fit(cats, Y)
        assert est.get_params()["verbose"] == quiet.get("verbose", 0)


def test_fit_takes_eval_metric_and_eval_x_eval_y():
    common = {"n_estimators": 5, "random_state": 0}
    a = RGBMClassifier(**common).fit(X, YC, eval_X=X[:100], eval_y=YC[:100], eval_metric=["auc", "binary_logloss"])
    b = RGBMClassifier(eval_metric=["auc", "logloss"], **common).fit(X, YC, eval_set=[(X[:100], YC[:100])])
    # Results are reported under the names asked for (LightGBM's layout).
    assert list(a.evals_result_["valid_0"]) == ["auc", "binary_logloss"]
    assert a.evals_result_["valid_0"]["binary_logloss"] == b.evals_result_["valid_0"]["logloss"]
    assert a.evals_result_["valid_0"]["auc"] == b.evals_result_["valid_0"]["auc"]
    assert a.get_params()["eval_metric"] is None
    two = RGBMClassifier(**common).fit(X, YC, eval_X=(X[:100], X[100:200]), eval_y=(YC[:100], YC[100:200]))
    assert list(two.evals_result_) == ["valid_0", "valid_1"]
    with pytest.raises(ValueError, match="given to fit and to the constructor"):
        RGBMClassifier(eval_metric="auc").fit(X, YC, eval_set=[(X, YC)], eval_metric="auc")
    with pytest.raises(ValueError, match="eval_set or eval_X and eval_y, not both"):
        RGBMClassifier().fit(X, YC, eval_set=[(X, YC)], eval_X=X, eval_y=YC)
    with pytest.raises(ValueError, match="go together"):
        RGBMClassifier().fit(X, YC, eval_X=X)


def test_predict_raw_score_booster_and_importance_names():
    clf = RGBMClassifier(n_estimators=5).fit(X, YC)
    np.testing.assert_array_equal(clf.predict(X, raw_score=True), clf.decision_function(X))
    reg = RGBMRegressor(loss="poisson", n_estimators=5).fit(X, np.exp(Y / 3))
    raw = reg.predict(X, raw_score=True)
    np.testing.assert_allclose(np.exp(raw), reg.predict(X), rtol=1e-12)
    assert clf.booster_ is clf.get_booster()
    for peer, ours in (("total_gain", "gain"), ("weight", "split")):
        np.testing.assert_array_equal(
            clf.set_params(importance_type=peer).feature_importances_,
            clf.set_params(importance_type=ours).feature_importances_,
        )
    with pytest.raises(ValueError, match="cannot be combined"):
        clf.predict(X, raw_score=True, pred_leaf=True)


@pytest.mark.parametrize("name", [n for n, p in _params.PEER_NAMES.items() if not p["estimator"]])
def test_a_refused_peer_name_points_to_its_meaning(name):
    peer = _params.PEER_NAMES[name]
    same = re.escape(f" (here {peer['of']!r})") if peer["of"] else ""
    with pytest.raises(TypeError, match=f"{name} is .*'s parameter{same}: " + re.escape(peer["note"])):
        RGBMRegressor(**{name: 1})


#: LightGBM parameters whose meaning the estimators have under one of
#: LightGBM's spellings (or scikit-learn's name of it).
LIGHTGBM_GROUPS = [
    "min_data_in_leaf", "bagging_fraction", "bagging_freq", "learning_rate", "num_iterations", "seed",
    "feature_fraction", "feature_fraction_bynode", "min_sum_hessian_in_leaf", "lambda_l2", "lambda_l1",
    "early_stopping_round", "num_threads", "min_gain_to_split", "num_leaves", "max_bin", "max_depth", "objective",
    "max_delta_step", "extra_trees", "path_smooth", "cat_smooth", "cat_l2", "max_cat_threshold", "min_data_in_bin",
]  # fmt: skip


@pytest.mark.parametrize("group", LIGHTGBM_GROUPS)
def test_every_lightgbm_spelling_is_taken_or_points_to_its_meaning(group):
    # LightGBM's own alias table is the oracle: each spelling of a parameter
    # is either a constructor argument here, or refused with a hint naming
    # our parameter of the same group (its meaning, not a close spelling).
    lgb = pytest.importorskip("lightgbm")
    names = lgb.basic._ConfigAliases.get(group)
    taken = set(RGBMRegressor().get_params())
    ours = names & taken
    assert ours, f"no spelling of {group} is a parameter here"
    for name in sorted(names - taken):
        with pytest.raises(TypeError) as e:
            RGBMRegressor(**{name: 1})
        hint = re.search(r"\(here '(\w+)'\)", str(e.value))
        assert hint and hint.group(1) in ours | {_params.ALIASES.get(n) for n in ours}, (name, str(e.value))


@pytest.mark.parametrize(
    "given, ours",
    [
        ("min_data_in_leaf", "min_samples_leaf"),
        ("bagging_fraction", "subsample"),
        ("eta", "learning_rate"),
        ("seed", "random_state"),
        ("num_boost_round", "n_estimators"),
        ("lambda", "reg_lambda"),
        ("lambda_l2", "reg_lambda"),
        ("min_split_loss", "min_split_gain"),
        ("nthread", "n_jobs"),
        ("metric", "eval_metric"),
        ("is_unbalance", "class_weight"),
    ],
)
def test_a_peer_spelling_points_to_the_parameter_of_its_meaning(given, ours):
    # difflib matched spelling (min_data_in_leaf -> min_data_in_bin,
    # bagging_fraction -> validation_fraction); the table gives the meaning.
    for cls in (RGBMRegressor, RGBMClassifier):
        with pytest.raises(TypeError, match=rf"{given} is .*'s parameter \(here '{ours}'\)"):
            cls(**{given: 1})


@pytest.mark.parametrize("cls", [RGBMRegressor, RGBMClassifier, RGBMRanker])
def test_every_accepted_peer_name_is_a_parameter(cls):
    taken = set(cls().get_params())
    for name, p in _params.PEER_NAMES.items():
        if p["estimator"] and name not in ("scale_pos_weight", "class_weight") and not _params.SCHEMA.get(name):
            assert name in taken or name in _params.NOT_RANKING, (cls.__name__, name)


def test_the_peer_table_is_generated_from_the_core():
    with open(PARAMETERS_PAGE, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- peers: start -->\n(.*?)\n<!-- peers: end -->", text, re.S)
    assert m and m.group(1) == _params.peer_table(), "regenerate docs/parameters.md's table from _params.peer_table()"


def test_evals_result_has_lightgbms_set_and_metric_names():
    lgb = pytest.importorskip("lightgbm")
    sets = [(X, Y), (X[:100], Y[:100])]
    ours = RGBMRegressor(n_estimators=3, eval_metric="l1").fit(X, Y, eval_set=sets)
    theirs = lgb.LGBMRegressor(n_estimators=3, metric="l1", verbose=-1).fit(X, Y, eval_set=sets)
    assert {s: list(m) for s, m in ours.evals_result_.items()} == {s: list(m) for s, m in theirs.evals_result_.items()}
    seen = []
    RGBMRegressor(n_estimators=1, eval_metric="l1").fit(
        X, Y, eval_set=sets, callbacks=[lambda env: seen.extend(env.evaluation_result_list)]
    )
    assert [(s, m) for s, m, _, _ in seen] == [("training", "l1"), ("valid_1", "l1")]


def test_xgboosts_fitted_names_read_as_xgboost_does():
    xgb = pytest.importorskip("xgboost")
    sets = [(X[:150], YC[:150]), (X[150:300], YC[150:300])]
    common = dict(n_estimators=200, eval_metric="logloss", early_stopping_rounds=5)
    ours = RGBMClassifier(**common).fit(X, YC, eval_set=sets)
    theirs = xgb.XGBClassifier(**common).fit(X, YC, eval_set=sets, verbose=False)
    assert {s: list(m) for s, m in ours.evals_result().items()} == {
        s: list(m) for s, m in theirs.evals_result().items()
    }
    # Both 0-based, the best value of the watched metric on the last set.
    for est in (ours, theirs):
        history = est.evals_result()["validation_1"]["logloss"]
        assert est.best_score == min(history) == history[est.best_iteration]
    with pytest.raises(AttributeError, match="did not stop early"):
        _ = RGBMClassifier(n_estimators=2).fit(X, YC).best_iteration


def test_log_evaluation_period_zero_logs_nothing(caplog):
    import rgbm_rs

    with caplog.at_level("INFO", logger="rgbm_rs"):
        RGBMRegressor(n_estimators=3).fit(X, Y, eval_set=[(X, Y)], callbacks=[rgbm_rs.log_evaluation(0)])
    assert not caplog.records
    with pytest.raises(ValueError, match=">= 0"):
        rgbm_rs.log_evaluation(-1)


def test_best_iteration_counts_rounds_as_lightgbm_and_survives_saving(tmp_path):
    import rgbm_rs

    est = RGBMRegressor(n_estimators=300, learning_rate=0.5, early_stopping_rounds=3)
    est.fit(X[:400], Y[:400], eval_set=[(X[400:], Y[400:])])
    history = est.evals_result_["valid_0"]["l2"]
    assert est.best_iteration_ == int(np.argmin(history)) + 1 == est.get_booster().n_rounds
    assert est.best_score_ == {"valid_0": {"l2": min(history)}}
    est.save_model(tmp_path / "m.json")
    assert rgbm_rs.load_model(tmp_path / "m.json").best_iteration_ == est.best_iteration_


def test_tree_method_takes_hist_only():
    from sklearn.base import clone

    est = RGBMClassifier(n_estimators=3, tree_method="hist", random_state=0)
    plain = RGBMClassifier(n_estimators=3, random_state=0)
    assert est.fit(X, YC).get_booster().to_json() == plain.fit(X, YC).get_booster().to_json()
    assert clone(est).get_params()["tree_method"] == "hist"
    for other in ("exact", "approx", "gpu_hist"):
        with pytest.raises(ValueError, match="tree_method"):
            RGBMClassifier(n_estimators=3, tree_method=other).fit(X, YC)


def test_xgboosts_default_booster_is_gradient_boosting():
    common = {"n_estimators": 6, "random_state": 2}
    est = RGBMClassifier(booster="gbtree", **common)
    _same_model(est, RGBMClassifier(**common), y=YC)
    assert est.get_params()["booster"] == "gbtree"
    for other in ("dart", "gblinear"):
        with pytest.raises(ValueError, match="booster"):
            RGBMRegressor(booster=other).fit(X, Y)
