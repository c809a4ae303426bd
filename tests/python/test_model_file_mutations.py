"""Saved models mutated at random (Hypothesis): load_model refuses the file,
or the loaded model predicts finite values and saves again unchanged.

The models are those of test_model_file.py (same data, same parameters).
"""

import copy
import json
import math
import os
import re

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model

hypothesis = pytest.importorskip("hypothesis")
pd = pytest.importorskip("pandas")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

KW = dict(n_estimators=4, max_depth=2, min_samples_leaf=5, random_state=0)


MUTATIONS = settings(
    max_examples=int(os.environ.get("RGBM_FUZZ_EXAMPLES", "300")),
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Values a tampered or corrupted file might hold instead of the real one.
ODD_VALUES = st.one_of(
    st.sampled_from(
        [
            0,
            1,
            -1,
            2,
            2**31,
            2**63,
            2**64,
            -(2**63),
            0.0,
            -0.0,
            0.5,
            -0.5,
            1e-320,
            1e200,
            -1e200,
            1e300,
            -1e300,
            1.7e308,
            -1.7e308,
            350.0,
            351.0,
            True,
            False,
            None,
            "",
            "a",
            "squared",
            "softmax",
            [],
            [0],
            [1.0, 1],
            [None],
            {},
            {"a": 1},
            {"float": "inf"},
        ]
    ),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)


@pytest.fixture(scope="module")
def mutable_models(data, docs):
    """Saved documents of several kinds, with the data each one predicts."""
    X, yr, yb, y3 = data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame["c"] = pd.cut(frame["c"], [-np.inf, -0.5, 0.5, np.inf])
    sglb = RGBMRegressor(langevin=True, n_estimators=8, max_depth=2, random_state=0).fit(X, yr)
    return {
        **{kind: (doc, X) for kind, doc in docs.items()},
        "categories": (RGBMClassifier(**KW).fit(frame, y3)._to_document(), frame),
        "sglb": (sglb._to_document(), X),
    }


def _locations(node, at=()):
    """The path of every value in a JSON document, the document itself excluded."""
    if isinstance(node, dict):
        items = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return
    for key, value in items:
        yield at + (key,)
        yield from _locations(value, at + (key,))


def _mutate(doc, at, how, value):
    parent = doc
    for key in at[:-1]:
        parent = parent[key]
    key = at[-1]
    if how == "replace":
        parent[key] = value
    elif how == "delete":
        del parent[key]
    elif isinstance(parent, list):  # "repeat": a list gains a copy of one element
        parent.insert(key, copy.deepcopy(parent[key]))
    else:
        parent[key] = [parent[key], parent[key]]


def _check_predicts_sanely(est, X):
    """A loaded model predicts finite values, with consistent staged and saved forms."""
    imp = est.feature_importances_
    assert np.all(np.isfinite(imp)) and np.all((imp >= 0) & (imp <= 1)), imp
    assert math.isclose(imp.sum(), 1.0) or imp.sum() == 0, imp
    if hasattr(est, "predict_proba"):
        proba = est.predict_proba(X)
        assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
        assert len(set(est.classes_.tolist())) == len(est.classes_)
        assert np.isin(est.predict(X), est.classes_).all()
        out = proba
    else:
        out = est.predict(X)
        assert np.all(np.isfinite(out))
        if est.get_booster().n_outputs == 2:
            try:
                _, std = est.predict(X, return_std=True)
                assert np.all(np.isfinite(std)) and np.all(std >= 0)
            except ValueError as e:
                assert "log standard deviation" in str(e)
    staged = None
    for staged in est.staged_predict_proba(X) if hasattr(est, "predict_proba") else est.staged_predict(X):
        assert np.all(np.isfinite(staged))
    np.testing.assert_allclose(staged, out, rtol=1e-6, atol=1e-9 * (1 + np.abs(out).max()))
    if getattr(est, "langevin", False) and est.n_estimators_ >= 4:
        try:
            u = est.predict_uncertainty(X, n_members=2)
            assert all(np.all(np.isfinite(v)) for v in u.values())
        except ValueError as e:
            assert "n_members" in str(e) or "log standard deviation" in str(e)
    return out


@MUTATIONS
@given(kind=st.sampled_from(["reg", "clf", "mc", "gauss", "categories", "sglb"]), draw=st.data())
def test_a_mutated_model_file_is_refused_or_predicts_sanely(mutable_models, tmp_path, kind, draw):
    doc, X = mutable_models[kind]
    doc = copy.deepcopy(doc)
    at = draw.draw(st.sampled_from(list(_locations(doc))))
    how = draw.draw(st.sampled_from(["replace", "delete", "repeat"]))
    _mutate(doc, at, how, draw.draw(ODD_VALUES) if how == "replace" else None)
    path = tmp_path / "mutant.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    try:
        est = load_model(path)
    except ValueError:
        return
    if kind == "categories":
        try:
            est.predict(X[:1])
        except (TypeError, ValueError) as e:
            # A file without categories or with other feature names is valid;
            # the frame just no longer fits the model, and predict says why.
            assert re.search("categorical|feature names", str(e)), e
            return
    out = _check_predicts_sanely(est, X)
    est.save_model(tmp_path / "again.json")
    again = load_model(tmp_path / "again.json")
    np.testing.assert_array_equal(_check_predicts_sanely(again, X), out)
