"""The public API as a user's type checker sees it: CI runs mypy on this file
against the installed package (it is not a pytest module; nothing here runs)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from typing_extensions import assert_type

import rgbm_rs
from rgbm_rs import RGBMClassifier, RGBMRanker, RGBMRegressor, load_model
from rgbm_rs.callback import CallbackEnv, early_stopping
from rgbm_rs.dask import DaskRGBMClassifier


def squared(y: np.ndarray, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return raw - y, np.ones_like(raw)


def use(X: np.ndarray, y: np.ndarray, frame: pd.DataFrame) -> None:
    reg = RGBMRegressor(n_estimators=10, loss=squared, monotone_constraints=[1, 0], random_state=0)
    assert_type(reg.fit(X, y, eval_set=[(X, y)], callbacks=[early_stopping(5)]), RGBMRegressor)
    assert_type(reg.predict(X), Any)
    assert_type(reg.staged_predict(X), Iterator[np.ndarray])
    assert_type(reg.predict_uncertainty(X, n_members=4), dict[str, np.ndarray])
    assert_type(reg.apply(X), np.ndarray)
    assert_type(reg.apply(X, iteration_range=(0, 5)), np.ndarray)
    assert_type(reg.predict(X, start_iteration=2, num_iteration=3, init_score=np.zeros(len(X))), Any)
    reg.predict(X, iteration_range=[0, 5.0])  # type: ignore[arg-type]
    assert_type(reg.feature_importances_, np.ndarray)
    assert_type(reg.get_booster(), rgbm_rs._core.Booster)
    reg.save_model("model.json")

    clf = RGBMClassifier(class_weight="balanced", eval_metric=["auc", "error"]).fit(
        frame, y, sample_weight=[1.0] * len(y)
    )
    assert_type(clf, RGBMClassifier)
    assert_type(clf.predict_proba(X), np.ndarray)
    assert_type(clf.decision_function(X, num_iteration=4, init_score=np.zeros((len(X), 3))), np.ndarray)
    assert_type(clf.staged_predict_proba(X), Iterator[np.ndarray])
    assert_type(clf.n_classes_, int)
    assert_type(load_model("model.json"), RGBMRegressor | RGBMClassifier | RGBMRanker)
    ranker = RGBMRanker(eval_at=10).fit(X, y, group=[3, 4], eval_set=[(X, y)], eval_qid=[y])
    assert_type(ranker, RGBMRanker)
    assert_type(ranker.predict(X), np.ndarray)

    def stop_early(env: CallbackEnv) -> bool:
        return env.iteration > 3

    RGBMClassifier(n_estimators="100")  # type: ignore[arg-type]
    RGBMClassifier().fit(X, y, callbacks=[stop_early], init_model=clf)
    assert_type(DaskRGBMClassifier(n_estimators=5).fit(X, y), DaskRGBMClassifier)
