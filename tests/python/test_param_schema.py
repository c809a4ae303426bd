"""The core's parameter schema against what the estimators accept, default
and document, and against the parameter table of docs/parameters.md."""

import inspect
import json
import os
import re

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRanker, RGBMRegressor, _core, _params
from rgbm_rs._training import TrainingData

ESTIMATORS = [RGBMRegressor, RGBMClassifier, RGBMRanker]
PARAMETERS_PAGE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "parameters.md")
X = np.random.default_rng(0).normal(size=(60, 2))
Y = {RGBMRegressor: X[:, 0], RGBMClassifier: (X[:, 0] > 0).astype(int), RGBMRanker: (X[:, 0] > 0).astype(int)}


def _init_defaults(cls):
    return {n: p.default for n, p in inspect.signature(cls.__init__).parameters.items() if n != "self"}


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_every_parameter_has_a_constraint(cls):
    assert set(cls._parameter_constraints) == set(_init_defaults(cls))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_estimator_defaults_are_the_core_defaults(cls):
    # Where Python and the core differ, the difference is deliberate: the
    # classifier's loss, and random_state=None (a fresh seed) as in scikit-learn.
    differ = {"random_state"} | ({"loss"} if cls is not RGBMRegressor else set())
    for name, default in _init_defaults(cls).items():
        if name in _params.PYTHON_ONLY:
            # Resolved in Python first (categorical_features "from_dtype" to
            # positions, or to the core's None): the default declared there.
            assert default == _params.PYTHON_ONLY[name][1], name
        elif name in _core_names() and name not in differ:
            assert default == _params.SCHEMA[name]["default"], name
    assert RGBMClassifier().loss == _params.CLASSIFICATION_LOSSES[0]
    assert RGBMRanker().loss == _params.RANKING_LOSSES[0]


def _core_names():
    return {p["name"] for p in json.loads(_core.param_schema())}


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_every_parameter_is_documented_with_its_default(cls):
    # An estimator's own lines first; the others defer to the regressor's.
    doc = (cls.__doc__ if cls is not RGBMRegressor else "") + RGBMRegressor.__doc__
    lines = {}
    for m in re.finditer(r"^    ([a-z0-9_, ]+) : (.*)$", doc, re.M):
        for name in m.group(1).split(", "):
            lines.setdefault(name, m.group(2))
    defaults = _init_defaults(cls)
    for name, default in defaults.items():
        assert name in lines, f"{cls.__name__} docstring lacks {name}"
        found = re.search(r"default=(\S+)", lines[name])
        if found and not (cls is RGBMClassifier and name == "loss" and "logistic" not in lines[name]):
            assert found.group(1).strip('"') == str(default) or float(found.group(1)) == default, name


@pytest.mark.parametrize("name", sorted(n for n, s in _params.SCHEMA.items() if s["type"] in ("int", "float")))
def test_a_value_past_a_core_bound_is_refused_before_the_core(name):
    spec = _params.SCHEMA[name]
    cls = (
        RGBMClassifier
        if name in _params.CLASSIFICATION_ONLY
        else RGBMRanker
        if name in _params.RANKING_ONLY
        else RGBMRegressor
    )
    if name not in _init_defaults(cls) or name in _params.PYTHON_ONLY:
        pytest.skip(f"{name} is not an estimator parameter with a core bound")
    below = spec["min"] - 1 if spec["type"] == "int" else (spec["min"] if not spec["min_closed"] else spec["min"] - 1)
    if name == "max_depth":
        # 0 and below are LightGBM's "no limit" (test_peer_names); above the bound is refused.
        below = spec["max"] + 1
    ranking = {"group": [len(X)]} if cls is RGBMRanker else {}
    with pytest.raises(ValueError, match=f"'{name}' parameter of {cls.__name__} must be"):
        cls(**{name: below}).fit(X, Y[cls], **ranking)


def test_the_core_refuses_what_the_constraints_refuse():
    # The same bound, met one level down: the core's message names it.
    for params, want in [
        ({"max_depth": 65}, "`max_depth`: must be an integer in [1, 64] or None, got 65"),
        ({"rgb_candidates": 0}, "`rgb_candidates`: must be an integer in [1, 1024], got 0"),
        ({"subsample": 1.5}, "`subsample`: must be a number in (0, 1], got 1.5"),
    ]:
        with pytest.raises(ValueError) as e:
            _core.Booster.train(json.dumps(params), TrainingData(X, X[:, 0].copy()))
        assert want in str(e.value)


def test_list_elements_are_checked_by_the_core():
    est = RGBMRegressor(booster="rgb", max_depth=None, rgb_nodes=[2, 2**21], n_estimators=2)
    with pytest.raises(ValueError, match=r"rgb_nodes.*\[1, 1048576\]"):
        est.fit(X, Y[RGBMRegressor])
    with pytest.raises(ValueError, match="rgb_lambdas must hold finite numbers"):
        RGBMRegressor(booster="rgb", rgb_lambdas=[1.0, float("nan")]).fit(X, Y[RGBMRegressor])


def test_the_parameter_table_is_generated_from_the_schema():
    with open(PARAMETERS_PAGE, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- parameters: start -->\n(.*?)\n<!-- parameters: end -->", text, re.S)
    assert m, "docs/parameters.md lacks the parameter table markers"
    assert m.group(1) == _params.markdown_table(), (
        "docs/parameters.md's table is stale: regenerate it from rgbm_rs._params.markdown_table()"
    )


def _numeric_parameters():
    """(estimator, name) of every numeric parameter: the core's int, float and
    count-or-fraction ones and the Python-only numbers."""
    core = [n for n, s in _params.SCHEMA.items() if s["type"] in ("int", "float", "count_or_fraction")]
    python = ["validation_fraction", "n_jobs", "verbose", "random_state"]
    out = []
    for name in sorted(set(core + python) - _params._DERIVED):
        owners = [cls for cls in ESTIMATORS if name in _init_defaults(cls)]
        assert owners, f"{name} is no estimator's parameter"
        out.append((owners[0], name))
    return out


NUMERIC = _numeric_parameters()


def test_the_numeric_parameters_are_found():
    names = {name for _, name in NUMERIC}
    assert {"n_estimators", "max_depth", "learning_rate", "selection_size", "eval_at", "n_jobs", "verbose"} <= names
    assert "booster" not in names and "langevin" not in names


@pytest.mark.parametrize("cls,name", NUMERIC, ids=[name for _, name in NUMERIC])
@pytest.mark.parametrize("flag", [True, False, np.True_], ids=["True", "False", "np.True_"])
def test_a_bool_is_refused_for_every_numeric_parameter(cls, name, flag):
    # Python counts True as the int 1 (and scikit-learn's intervals take it):
    # max_depth=True used to fit stumps. The constraint refuses it by type.
    with pytest.raises(TypeError, match=rf"'{name}' parameter of {cls.__name__} must be .*Got {flag!r} instead"):
        cls(**{name: flag})._validate_params()
    ranking = {"group": [len(X)]} if cls is RGBMRanker else {}
    with pytest.raises(TypeError, match=f"'{name}' parameter"):
        cls(**{"n_estimators": 2, name: flag}).fit(X, Y[cls], **ranking)


def _one_in_range(name):
    """Whether the number 1 (what True stands for) is a valid value of ``name``."""
    spec = _params.SCHEMA.get(name)
    if name == "validation_fraction":
        return False  # (0, 1)
    if spec is None or name in _params.PYTHON_ONLY or spec["type"] == "count_or_fraction":
        return True  # n_jobs, verbose, random_state; selection_size counts from 1
    low = spec["min"] < 1 or (spec["min"] == 1 and spec.get("min_closed", True))
    high = spec["max"] is None or spec["max"] > 1 or (spec["max"] == 1 and spec.get("max_closed", True))
    return low and high


@pytest.mark.parametrize("cls,name", NUMERIC, ids=[name for _, name in NUMERIC])
def test_the_number_a_bool_stands_for_is_accepted(cls, name):
    # What is refused is the type: the number 1 passes the same constraint
    # wherever it is in range (and is refused as a number where it is not).
    if _one_in_range(name):
        cls(**{name: 1})._validate_params()
    else:
        with pytest.raises(ValueError, match="Got 1 instead"):
            cls(**{name: 1})._validate_params()
