"""The training parameters as the core describes them.

The core owns each parameter's values, bounds, default and one-line doc
(``_core.param_schema()``); the estimators' ``_parameter_constraints`` and
the parameter table of docs/parameters.md are built from it here. Parameters that exist
only in Python (how to hold out data, threads, logging) are described below.
"""

from __future__ import annotations

import json
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from . import _core
from ._validation import as_float_list, as_int_list


class Number(Interval):
    """scikit-learn's ``Interval`` refusing bools: ``True`` is not a count, a
    depth or a rate, though Python counts it as the int 1 (scikit-learn's own
    intervals take it)."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


#: name -> {"type", bounds..., "optional", "doc", "default"}, in the core's order.
SCHEMA = {p["name"]: p for p in json.loads(_core.param_schema())}

_PEERS = json.loads(_core.peer_names())
#: LightGBM's and XGBoost's parameter names: name -> {"peers", "use", "of",
#: "estimator", "note"} ("use": same, alias, mapped, differs or refused).
PEER_NAMES = {p["name"]: p for p in _PEERS["names"]}
#: The peers' objective names: name -> {"loss", "note"} (loss "" = refused).
PEER_OBJECTIVES = {o["name"]: o for o in _PEERS["objectives"]}
#: The peers' metric names for ours: theirs -> ours.
PEER_METRICS = _PEERS["metrics"]
#: Constructor arguments that are the peers' names for one of ours: name -> ours.
ALIASES = {n: p["of"] for n, p in PEER_NAMES.items() if p["use"] == "alias" and p["estimator"]}
#: Constructor arguments of peer parameters built from ours, with the values they take.
MAPPED = {
    "colsample_bytree": [Number(Real, 0, 1, closed="right"), None],
    "feature_fraction": [Number(Real, 0, 1, closed="right"), None],
    "scale_pos_weight": [Number(Real, 0, None, closed="neither"), None],
    "verbosity": [Number(Integral, 0, 3, closed="both"), None],
    "tree_method": [StrOptions({"hist"}), None],
}

# Core parameters the estimators set themselves: n_classes and n_targets
# from y, alphas from a list of alpha, feature_weights from fit's.
_DERIVED = {"n_classes", "n_targets", "alphas", "feature_weights"}

#: The losses each estimator offers, by the core's task of each (the
#: classifier's "logistic" becomes the core's "softmax" with more than two
#: classes; "custom" is a callable's).
_TASKS = _core.loss_tasks()
REGRESSION_LOSSES = tuple(name for name, task in _TASKS if task == "regression")
CLASSIFICATION_LOSSES = tuple(name for name, task in _TASKS if task == "binary")
RANKING_LOSSES = tuple(name for name, task in _TASKS if task == "ranking")
_TASK_OF = dict(_TASKS)


def _for_tasks(*tasks):
    """Core parameters whose losses (their schema scope) are all of ``tasks``."""
    return tuple(
        name
        for name, spec in SCHEMA.items()
        if isinstance(spec["scope"], dict)
        and "losses" in spec["scope"]
        and all(_TASK_OF[loss] in tasks for loss in spec["scope"]["losses"])
    )


#: Core parameters of one estimator's losses only (plus the classifier's
#: Python-side class weights).
REGRESSION_ONLY = _for_tasks("regression")
CLASSIFICATION_ONLY = _for_tasks("binary", "multiclass") + ("class_weight", "scale_pos_weight")
RANKING_ONLY = _for_tasks("ranking")
#: The regression losses that fit 2-D y (one column per target) one target
#: at a time (the core's n_targets; it refuses the others too).
MULTI_TARGET_LOSSES = tuple(loss for loss in _core.target_losses() if loss in REGRESSION_LOSSES)
#: Core parameters of booster="rgb" only.
RGB_ONLY = tuple(name for name, spec in SCHEMA.items() if spec["scope"] == {"booster": "rgb"})
#: Core parameters an estimator sets by its loss (``_loss_params``), not from the
#: estimator's parameter of the same name alone.
LOSS_SPECIFIC = frozenset(REGRESSION_ONLY + CLASSIFICATION_ONLY + RANKING_ONLY) | _DERIVED
#: What ranking cannot use (RGB, the constant step and the line search need a
#: loss value or σ, a query cannot be split by validation_fraction, the fit
#: starts from 0): the ranker has no such parameters.
NOT_RANKING = (
    "booster",
    *RGB_ONLY,
    "step",
    "record_train_loss",
    "init",
    "validation_fraction",
)

#: XGBoost's ``booster`` values taken as ours (its default "gbtree" is gradient boosting).
PEER_BOOSTERS = {"gbtree": "gbm"}

# (constraints, default, values, doc) of parameters the core does not see,
# or sees in a resolved form (random_state as a seed, n_jobs as a count,
# eval_metric as a list).
PYTHON_ONLY = {
    "categorical_features": (
        [StrOptions({"from_dtype", "auto"}), list, tuple, np.ndarray, None],
        "from_dtype",
        "`from_dtype`, `auto`, indices, names, boolean mask or None",
        "features split by category sets: `from_dtype` = the frame's categorical-dtype columns; "
        "`auto` = those and its string columns; None = none (category codes split as ordinal numbers)",
    ),
    "monotone_constraints": (
        [list, tuple, np.ndarray, dict, None],
        None,
        "list of -1/0/1 per feature, dict by feature name, or None",
        "raw scores non-increasing (-1), free (0) or non-decreasing (1) in each numeric feature",
    ),
    "interaction_constraints": (
        [list, tuple, None],
        None,
        "list of lists of feature indices or names, or None",
        "each root-to-leaf path splits on features of one set (a feature in no set: on its own)",
    ),
    "validation_fraction": (
        [Number(Real, 0, 1, closed="neither"), None],
        None,
        "(0, 1) or None",
        "hold out this share of the training rows (stratified for classifiers) as evaluation set `validation`",
    ),
    "eval_metric": (
        [str, callable, list, tuple, None],
        None,
        "names and functions",
        "metrics on evaluation sets (built-in names first, then functions), the first one for early stopping; "
        "None = the loss's default",
    ),
    "importance_type": (
        [StrOptions({"gain", "split", "total_gain", "weight"})],
        "gain",
        "`gain` \\| `split` \\| `total_gain` \\| `weight`",
        "what `feature_importances_` measures: total gain (`total_gain` too) or split count (`weight` too)",
    ),
    "warm_start": (
        ["boolean"],
        False,
        "bool",
        "a new fit continues the fitted model up to `n_estimators` rounds",
    ),
    "class_weight": (
        [dict, StrOptions({"balanced"}), None],
        None,
        "dict, `balanced` or None",
        "classifier: weights of the classes, multiplied into `sample_weight`",
    ),
    "random_state": (
        # scikit-learn's "random_state" constraint, without bools.
        [Number(Integral, 0, 2**32 - 1, closed="both"), np.random.RandomState, None],
        None,
        "int, RandomState or None",
        "seed of every random draw (None draws one)",
    ),
    "n_jobs": (
        [Number(Integral, None, None, closed="neither"), None],
        None,
        "int ≠ 0 or None",
        "threads; None or -1 = every core this process may use (affinity, cgroup quota) within a threadpoolctl"
        f" limit or OMP_NUM_THREADS, or one for fits of under {_core.SERIAL_FIT_VALUES:,} input values;"
        " -k = all but k - 1",
    ),
    "verbose": (
        [Number(Integral, None, None, closed="neither")],
        0,
        "int",
        "log every `verbose` rounds (with a tqdm progress bar when installed); 0 quiet; < 0 also hides warnings",
    ),
}


def _interval(kind, low, high, low_closed, high_closed):
    closed = {(True, True): "both", (True, False): "left", (False, True): "right", (False, False): "neither"}
    return Number(kind, low, high, closed=closed[(low_closed, high_closed)])


def _core_constraint(spec, options=None):
    kind = spec["type"]
    if kind == "int":
        out = [_interval(Integral, spec["min"], spec["max"], True, True)]
    elif kind == "float":
        out = [_interval(Real, spec["min"], spec["max"], spec["min_closed"], spec["max_closed"])]
    elif kind == "choice":
        allowed = set(spec["options"])
        if options is not None:
            if not set(options) <= allowed:
                raise ValueError(f"{spec['name']}: {sorted(set(options) - allowed)} are not core options")
            allowed = set(options)
        out = [StrOptions(allowed)]
    elif kind == "bool":
        out = ["boolean"]
    elif kind == "count_or_fraction":
        out = [Number(Integral, 1, None, closed="left"), Number(Real, 0, 1, closed="right")]
    elif kind in ("int_list", "positive_list", "feature_groups"):
        out = [list, tuple]
    elif kind == "non_negative_list":
        out = [list, tuple, np.ndarray]
    else:
        raise ValueError(f"{spec['name']}: unknown parameter type {kind!r}")
    return out + [None] if spec["optional"] else out


def constraints(skip=(), loss=None):
    """scikit-learn parameter constraints of every core parameter but those
    in ``skip``, and of the Python-only ones; ``loss`` narrows the losses."""
    out = {}
    for name, spec in SCHEMA.items():
        if name in _DERIVED or name in skip:
            continue
        if name in PYTHON_ONLY:
            out[name] = PYTHON_ONLY[name][0]
        else:
            out[name] = _core_constraint(spec, loss if name == "loss" else None)
    if "loss" in out:
        out["loss"] = out["loss"] + [callable]  # a custom loss: core loss "custom"
    if "booster" in out:
        out["booster"] = out["booster"] + [StrOptions(set(PEER_BOOSTERS))]
    if "max_depth" in out:
        # LightGBM's "no limit" (-1, 0): best-first growth.
        out["max_depth"] = out["max_depth"] + [Number(Integral, None, 0, closed="right")]
    for name, (constraint, *_rest) in PYTHON_ONLY.items():
        if name not in skip:
            out[name] = constraint
    for alias, of in ALIASES.items():
        if alias == "objective":
            out[alias] = [StrOptions(set(PEER_OBJECTIVES) | set(loss or ())), callable, None]
        elif of in out:
            out[alias] = [c for c in out[of] if c is not None] + [None]
    for name, constraint in MAPPED.items():
        if name not in skip:
            out[name] = constraint
    return out


def _values(spec):
    kind = spec["type"]
    if kind == "int":
        high = "" if spec["max"] >= 2**53 else f", {spec['max']}"
        text = f"int in [{spec['min']}{high}]" if high else f"int ≥ {spec['min']}"
    elif kind == "float":
        low = "[" if spec["min_closed"] else "("
        if spec["max"] is None:
            text = f"float {'≥' if spec['min_closed'] else '>'} {spec['min']:g}"
        else:
            high = "]" if spec["max_closed"] else ")"
            text = f"float in {low}{spec['min']:g}, {spec['max']:g}{high}"
    elif kind == "choice":
        text = " \\| ".join(f"`{o}`" for o in spec["options"])
    elif kind == "bool":
        text = "bool"
    elif kind == "count_or_fraction":
        text = "int t ≥ 1 or fraction in (0, 1]"
    elif kind == "int_list":
        text = f"list of ints in [{spec['min']}, {spec['max']}]"
    elif kind == "positive_list":
        text = "list of floats > 0"
    elif kind == "non_negative_list":
        text = "list of floats ≥ 0"
    elif kind == "feature_groups":
        text = "list of lists of feature indices"
    elif kind == "metrics":
        text = "list of metric names"
    else:
        raise ValueError(f"{spec['name']}: unknown parameter type {kind!r}")
    return text + " or None" if spec["optional"] else text


def native_value(spec, value):
    """An estimator parameter's value as the core reads it, by the schema's type
    (numpy scalars become Python numbers; the core checks the bounds)."""
    if value is None:
        return None
    kind = spec["type"]
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        return bool(value)
    if kind == "int_list":
        return as_int_list(value, spec["name"])
    if kind in ("positive_list", "non_negative_list"):
        return as_float_list(value, spec["name"])
    return value


def _default(value):
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:g}"
    return "None" if value is None else str(value)


def markdown_table():
    """The parameter table of docs/parameters.md: one row per estimator parameter."""
    rows = ["| parameter | values | default | meaning |", "|---|---|---|---|"]
    for name, spec in SCHEMA.items():
        if name in _DERIVED:
            continue
        if name in PYTHON_ONLY:
            _c, default, values, doc = PYTHON_ONLY[name]
        else:
            default, values, doc = spec["default"], _values(spec), spec["doc"]
        if name == "loss":
            values = (
                "regressor: {}; classifier: {}; either: a function `(y_true, raw_score) -> (grad, hess)`; "
                "ranker: {}".format(
                    " \\| ".join(f"`{o}`" for o in REGRESSION_LOSSES),
                    " \\| ".join(f"`{o}`" for o in CLASSIFICATION_LOSSES),
                    " \\| ".join(f"`{o}`" for o in RANKING_LOSSES),
                )
            )
            default = f"`{REGRESSION_LOSSES[0]}`, `{CLASSIFICATION_LOSSES[0]}`"
        else:
            default = f"`{_default(default)}`"
        rows.append(f"| `{name}` | {values} | {default} | {doc} |")
    for name, (_c, default, values, doc) in PYTHON_ONLY.items():
        if name not in SCHEMA:
            rows.append(f"| `{name}` | {values} | `{_default(default)}` | {doc} |")
    return "\n".join(rows)


def peer_table():
    """The table of the peers' names in docs/parameters.md, one row per name."""
    uses = {
        "same": "same name and meaning",
        "alias": "alias",
        "mapped": "built from ours",
        "differs": "different meaning",
        "refused": "refused",
    }
    rows = ["| name | peers | taken as | here | note |", "|---|---|---|---|---|"]
    for name, p in sorted(PEER_NAMES.items()):
        of = f"`{p['of']}`" if p["of"] else ""
        rows.append(f"| `{name}` | {p['peers']} | {uses[p['use']]} | {of} | {p['note']} |")
    rows += ["", "| objective | loss | note |", "|---|---|---|"]
    for name, o in PEER_OBJECTIVES.items():
        loss = f"`{o['loss']}`" if o["loss"] else "refused"
        rows.append(f"| `{name}` | {loss} | {o['note']} |")
    return "\n".join(rows)
