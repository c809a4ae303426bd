"""Monotone and interaction constraints in the form the core takes:
feature positions, from positions or (for data frames) column names."""

from __future__ import annotations

from numbers import Integral

import numpy as np


def feature_position(v, names, n, what):
    """The position of feature ``v`` (an index, negative from the end, or a
    column name of the fitted frame), or ValueError naming ``what``."""
    if isinstance(v, str):
        if names is None or v not in list(names):
            raise ValueError(f"{what}: {v!r} is not a feature name of X")
        return list(names).index(v)
    if isinstance(v, (Integral, np.integer)) and not isinstance(v, (bool, np.bool_)):
        j = int(v)
        if not -n <= j < n:
            raise ValueError(f"{what}: index {j} is out of range for {n} features")
        return j % n
    raise ValueError(f"{what}: expected a feature index or name, got {v!r}")


def _direction(d, what):
    if isinstance(d, (Integral, np.integer)) and not isinstance(d, (bool, np.bool_)) and int(d) in (-1, 0, 1):
        return int(d)
    raise ValueError(f"{what}: directions must be -1, 0 or 1, got {d!r}")


def monotone_directions(est):
    """``monotone_constraints`` as one direction per feature (None for none).

    A list or array gives one direction per feature; a dict maps feature
    names (or positions) to directions, the others being free."""
    spec = est.monotone_constraints
    if spec is None:
        return None
    n = int(est.n_features_in_)
    names = getattr(est, "feature_names_in_", None)
    what = "monotone_constraints"
    if isinstance(spec, dict):
        out = [0] * n
        for key, d in spec.items():
            out[feature_position(key, names, n, what)] = _direction(d, what)
        return out
    if isinstance(spec, (str, bytes)) or not hasattr(spec, "__iter__"):
        raise ValueError(f"{what}: expected a list of -1/0/1 per feature or a dict by feature name, got {spec!r}")
    items = np.asarray(spec).tolist() if isinstance(spec, np.ndarray) else list(spec)
    if len(items) != n:
        raise ValueError(f"{what}: has {len(items)} entries but X has {n} features (one entry per feature)")
    return [_direction(d, what) for d in items]


def interaction_sets(est):
    """``interaction_constraints`` as lists of feature positions (None for none)."""
    spec = est.interaction_constraints
    if spec is None:
        return None
    n = int(est.n_features_in_)
    names = getattr(est, "feature_names_in_", None)
    what = "interaction_constraints"
    shape = f"{what}: expected a list of lists of feature indices or names"
    if isinstance(spec, (str, bytes, dict)) or not hasattr(spec, "__iter__"):
        raise ValueError(f"{shape}, got {spec!r}")
    out = []
    for k, group in enumerate(spec):
        if isinstance(group, (str, bytes, dict)) or not hasattr(group, "__iter__"):
            raise ValueError(f"{shape}; set {k} is {group!r}")
        members = [feature_position(v, names, n, what) for v in group]
        if not members:
            raise ValueError(f"{what}: set {k} is empty")
        if len(set(members)) != len(members):
            raise ValueError(f"{what}: set {k} lists a feature more than once")
        out.append(members)
    if not out:
        raise ValueError(f"{what}: give at least one set, or None for no constraint")
    return out


def check_monotone_numeric(directions, categorical, names):
    """Monotone constraints apply to numeric features only."""
    for j in categorical or ():
        if directions and directions[j] != 0:
            name = repr(str(names[j])) if names is not None else str(j)
            raise ValueError(
                f"monotone_constraints: feature {name} is categorical; monotone constraints apply to numeric features only"
            )
