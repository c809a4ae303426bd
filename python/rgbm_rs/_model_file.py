"""The model file: one JSON document written by ``save_model`` and the
command line, read back by ``load_model``.

A file is untrusted input. Everything the estimator reads from it is checked
here (the native model is checked in full by the core): a file either loads
as an estimator that predicts finite values, or is refused with a
ValueError naming the field at fault.

Besides JSON's own types, the document holds pandas category values of a
few kinds as tagged objects (``{"interval": ...}``, ``{"timestamp": ...}``,
``{"timedelta": ...}``, ``{"period": ...}``, ``{"float": "inf"}``) so that
``pd.cut`` bins and datetime categories survive a round trip, and a loss or
metric function as ``{"function": "module.name"}``: functions are not saved,
so the loaded estimator holds a ``SavedFunction`` of that name, which
predicts as before but must be replaced to fit again.

A dict parameter whose keys are all strings is a JSON object. Other dicts
(``class_weight={0: 1.0, 1: 5.0}``, ``monotone_constraints={0: 1}``, keys
from ``np.unique``) are written as ``{"dict": [[key, value], ...]}``, since
JSON would turn their keys into strings: a key is a JSON string, number,
boolean or null of its own type, a tagged float or pandas value as above,
or a NumPy scalar as ``{"numpy": "<i8", "value": 1}`` (its dtype and value),
so that the keys come back with their types.
"""

from __future__ import annotations

import codecs
import json
import math
import numbers
import os

import numpy as np

from . import _core
from ._custom import SavedFunction, function_name
from ._files import replace_atomically
from ._validation import fitted_categories, set_categories

FORMAT = "rgbm_rs"
#: How the command line read LIBSVM feature indices (0 or 1), kept with the model.
LIBSVM_BASE_KEY = "libsvm_index_base"
_KEYS = {
    "format",
    "estimator",
    "params",
    "n_features_in",
    "feature_names_in",
    "categories",
    "best_iteration",
    "model",
    "classes",
    LIBSVM_BASE_KEY,
}


class _Invalid(ValueError):
    """A problem with one field; ``load`` adds the file name."""


class _NotAModel(_Invalid):
    """The file is not an rgbm_rs model at all (no format marker)."""


# --------------------------------------------------------------------------- writing


def document(est, with_model=True) -> dict:
    """The JSON document of a fitted estimator (without ``model`` unless ``with_model``)."""
    params = est.get_params()
    if not (params["random_state"] is None or isinstance(params["random_state"], numbers.Integral)):
        params["random_state"] = None  # a RandomState object has no JSON form
    names = getattr(est, "feature_names_in_", None)
    doc = {
        "format": FORMAT,
        "estimator": type(est).__name__,
        "params": {name: _plain_param(name, value) for name, value in params.items()},
        "n_features_in": int(est.n_features_in_),
        "feature_names_in": None if names is None else [str(c) for c in names],
        "categories": _categories_to_json(est),
        # 0-based in the file; best_iteration_ counts the rounds kept (LightGBM's).
        "best_iteration": est.best_iteration_ - 1 if hasattr(est, "best_iteration_") else None,
    }
    if with_model:
        doc["model"] = json.loads(est._booster.to_json())
    if hasattr(est, "classes_"):
        doc["classes"] = [_plain(c) for c in est.classes_.tolist()]
    base = getattr(est, "_libsvm_index_base_", None)
    if base is not None:
        doc[LIBSVM_BASE_KEY] = base
    return doc


def save(path, est) -> None:
    """Write the document of ``est`` as the file ``path``, atomically: the
    model's JSON text from the core is spliced in as it is, not parsed and
    written again (seconds for a large model)."""
    doc = document(est, with_model=False)
    head = json.dumps(doc, allow_nan=False)
    text = f'{head[:-1]}, "model": {est._booster.to_json()}}}'
    with replace_atomically(path) as f:
        # In pieces: Ctrl-C is seen between two (a write is one C call).
        for start in range(0, len(text), _WRITE_CHARS):
            f.write(text[start : start + _WRITE_CHARS])


_WRITE_CHARS = 1 << 24


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _plain_param(name, value):
    """A hyperparameter as JSON (NumPy scalars and arrays as Python numbers
    and lists, functions by name)."""
    if isinstance(value, dict):
        value = _dict_to_json(name, value)
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, (list, tuple)):
        value = [_plain_function(_plain(v.tolist() if isinstance(v, np.ndarray) else v)) for v in value]
    else:
        value = _plain_function(_plain(value))
    try:
        json.dumps(value, allow_nan=False)
    except TypeError:
        raise TypeError(
            f"cannot save the parameter {name}={value!r}: a model file holds numbers, strings, "
            "booleans, None and lists of them"
        ) from None
    except ValueError:
        raise ValueError(f"cannot save the parameter {name}={value!r}: it is not a finite number") from None
    return value


def _plain_function(v):
    return {"function": function_name(v)} if callable(v) else v


#: The NumPy scalar kinds a dict key may have in a model file: bool, ints, floats, strings.
_NUMPY_KEY_KINDS = "biufU"


def _dict_to_json(name, value):
    """A dict parameter: a JSON object if its keys are all str, else tagged
    pairs keeping each key's type."""
    items = [(k, _plain_function(_plain(v))) for k, v in value.items()]
    if all(type(k) is str for k, _ in items):
        return dict(items)
    return {"dict": [[_key_to_json(name, k), v] for k, v in items]}


def _key_to_json(name, key):
    if isinstance(key, (float, np.floating)) and math.isnan(key):
        raise ValueError(f"cannot save the parameter {name}: one of its keys is NaN")
    if isinstance(key, np.generic) and key.dtype.kind in _NUMPY_KEY_KINDS:
        plain = key.item()
        if isinstance(plain, float) and not math.isfinite(plain):
            plain = {"float": repr(plain)}
        return {"numpy": key.dtype.str, "value": plain}
    try:
        return _encode_category(key, None)
    except TypeError:
        raise TypeError(
            f"cannot save the parameter {name}: its key {key!r} is a {type(key).__name__}; a model file holds "
            "dict keys that are strings, numbers, booleans, None, NumPy scalars and pandas Interval, "
            "Timestamp, Timedelta and Period values"
        ) from None


def _dict_from_json(pairs, where):
    """A dict parameter written by :func:`_dict_to_json` as tagged pairs."""
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise _Invalid(f"{where}: a dict is written as a list of [key, value] pairs")
    out = {}
    for i, (key, value) in enumerate(pairs):
        key = _key_from_json(key, f"{where} key {i}")
        if key in out:
            raise _Invalid(f"{where} repeats the key {key!r}")
        out[key] = value
    return out


def _key_from_json(key, where):
    if not (isinstance(key, dict) and set(key) == {"numpy", "value"}):
        if key is None:
            return None
        if not isinstance(key, (str, bool, int, float, dict)):
            raise _Invalid(
                f"{where} is not a dict key (a string, number, boolean, null, or a tagged NumPy or pandas value)"
            )
        return _decode_category(key, where)
    try:
        dtype = np.dtype(key["numpy"]) if isinstance(key["numpy"], str) else None
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in _NUMPY_KEY_KINDS:
        raise _Invalid(f"{where}: {key['numpy']!r} is not a NumPy bool, integer, float or string dtype")
    value = key["value"]
    if isinstance(value, dict):
        value = _decode_category(value, where)
    kinds = {"b": bool, "i": int, "u": int, "f": (int, float), "U": str}[dtype.kind]
    if not isinstance(value, kinds) or (dtype.kind in "iuf" and isinstance(value, bool)):
        raise _Invalid(f"{where}: {value!r} is not a value of dtype {dtype}")
    try:
        with np.errstate(over="raise"):
            scalar = dtype.type(value)
    except (OverflowError, FloatingPointError, ValueError):
        raise _Invalid(f"{where}: {value!r} does not fit in dtype {dtype}") from None
    if scalar != value and not (isinstance(value, float) and math.isnan(value)):
        raise _Invalid(f"{where}: {value!r} does not fit in dtype {dtype}")
    return scalar


def _params_from_json(params):
    """The saved hyperparameters, with functions as ``SavedFunction``."""

    def read(v, name):
        if isinstance(v, dict) and set(v) == {"function"}:
            if not isinstance(v["function"], str):
                raise _Invalid(f"params: a function is recorded by its name, not {v['function']!r}")
            return SavedFunction(v["function"])
        if isinstance(v, dict) and set(v) == {"dict"}:
            return _dict_from_json(v["dict"], f"params.{name}")
        return v

    return {k: [read(x, k) for x in v] if isinstance(v, list) else read(v, k) for k, v in params.items()}


def _categories_to_json(est):
    """The fit-time categories per feature (None = not categorical), or None."""
    if not getattr(est, "_categories_", None):
        return None
    return [
        None if cats is None else [_encode_category(v, j) for v in cats]
        for j, cats in enumerate(fitted_categories(est))
    ]


def _encode_category(v, j):
    v = _plain(v)
    if isinstance(v, float) and not math.isfinite(v):
        return {"float": repr(v)}
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    pd = _pandas_or_none()
    if pd is not None:
        if isinstance(v, pd.Interval):
            return {"interval": [_encode_category(v.left, j), _encode_category(v.right, j)], "closed": v.closed}
        if isinstance(v, pd.Timestamp):
            return {"timestamp": v.isoformat(), "tz": None if v.tz is None else str(v.tz)}
        if isinstance(v, pd.Timedelta):
            return {"timedelta": v.isoformat()}
        if isinstance(v, pd.Period):
            return {"period": str(v), "freq": v.freqstr}
    raise TypeError(
        f"cannot save the categories of feature {j}: a value of type {type(v).__name__} ({v!r}); "
        "a model file holds strings, numbers, booleans and pandas Interval, Timestamp, Timedelta "
        "and Period categories"
    )


def _pandas_or_none():
    try:
        import pandas
    except ImportError:
        return None
    return pandas


# --------------------------------------------------------------------------- reading


def load(path, estimators):
    """The fitted estimator in the file ``path`` (``estimators`` maps class names to classes)."""
    try:
        with open(os.fspath(path), encoding="utf-8-sig") as f:  # a UTF-8 BOM is allowed
            text = f.read()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a valid rgbm_rs model file: it is not UTF-8 text") from None
    try:
        # The model member is loaded by the core straight from the text; a
        # file it refuses is read again in full here, for the same refusals
        # (with the field named) as before.
        try:
            booster, rest = _core.Booster.from_file_text(text)
        except ValueError:
            return _estimator(_parse(text), estimators)
        return _estimator(_parse(rest), estimators, booster)
    except _NotAModel as e:
        raise ValueError(f"{path} is not an rgbm_rs model file ({e})") from None
    except _Invalid as e:
        raise ValueError(f"{path} is not a valid rgbm_rs model file: {e}") from None


def holds_model(path):
    """True if ``path`` is an rgbm_rs model file, False if it holds something else, None if empty or absent."""
    try:
        with open(path, "rb") as f:
            head = f.read(64).removeprefix(codecs.BOM_UTF8).lstrip()
            if not head:
                return None
            if not head.startswith(b"{"):  # not JSON: no need to read a large data file
                return False
            doc = json.loads(head + f.read())
    except OSError:
        return None
    except (ValueError, RecursionError):  # includes UnicodeDecodeError
        return False
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def _parse(text):
    """The JSON document, refusing non-finite numbers (NaN, Infinity, 1e999) with their location."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise _Invalid(str(e)) from None
    except RecursionError:
        raise _Invalid("nested too deeply") from None
    where = _non_finite_at(doc)
    if where is not None:
        raise _Invalid(f"non-finite number at {where}")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _NotAModel("its format marker is missing")
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise _Invalid(f"unknown fields {unknown}")
    return doc


def _non_finite_at(node, where="$"):
    """The path of the first non-finite float in a parsed JSON document, or None."""
    stack = [(node, where)]
    while stack:
        value, at = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return at
        if isinstance(value, dict):
            stack.extend((v, f"{at}.{k}") for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((v, f"{at}[{i}]") for i, v in reversed(list(enumerate(value))))
    return None


def _estimator(doc, estimators, booster=None):
    """The estimator of ``doc``; ``booster``, if given, is its model, already loaded."""
    name = doc.get("estimator")
    cls = estimators.get(name) if isinstance(name, str) else None
    if cls is None:
        raise _Invalid(f"unknown estimator {name!r}")
    for part in ("params",) if booster is not None else ("params", "model"):
        if not isinstance(doc.get(part), dict):
            raise _Invalid(f"'{part}' must be an object")
    try:
        est = cls(**_params_from_json(doc["params"]))
        est._validate_params()
    except (TypeError, ValueError) as e:
        raise _Invalid(f"params: {e}") from None
    if booster is None:
        try:
            booster = _core.Booster.from_json(json.dumps(doc["model"]))
        except ValueError as e:
            raise _Invalid(str(e)) from None
    # Prediction reads only the model, so its loss need only suit the
    # estimator (set_params after fit may have changed the saved params).
    loss = json.loads(booster.params_json())["loss"]
    if loss not in est._model_losses():
        raise _Invalid(f"a {type(est).__name__} cannot hold a model of loss {loss!r}")
    n_features = doc.get("n_features_in")
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features != booster.n_features:
        raise _Invalid(f"n_features_in ({n_features!r}) disagrees with the model ({booster.n_features})")
    est.n_features_in_ = n_features
    names = doc.get("feature_names_in")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(c, str) for c in names):
            raise _Invalid("feature_names_in must be a list of strings")
        _check_feature_fields(booster, names=names)
        est.feature_names_in_ = np.asarray(names, dtype=object)
    if "classes" in doc or hasattr(est, "predict_proba"):
        k = booster.n_outputs
        est.classes_ = _classes(doc.get("classes"), 2 if k == 1 else k)
    _categories_from_json(est, doc.get("categories"), booster)
    best = doc.get("best_iteration")
    if best is not None:
        if isinstance(best, bool) or not isinstance(best, int) or not 0 <= best < booster.n_rounds:
            raise _Invalid(f"best_iteration {best!r} is not a round of the model")
        est.best_iteration_ = best + 1
    base = doc.get(LIBSVM_BASE_KEY)
    if base is not None:
        if isinstance(base, bool) or base not in (0, 1):
            raise _Invalid(f"{LIBSVM_BASE_KEY} must be 0 or 1, not {base!r}")
        est._libsvm_index_base_ = base
    est._booster = booster
    est.n_estimators_ = booster.n_rounds
    return est


def _label_kind(c):
    if isinstance(c, bool):
        return "bool"
    if isinstance(c, (int, float)):
        return "number"
    return "str" if isinstance(c, str) else None


def _classes(value, expected):
    """``classes_``: ``expected`` distinct labels, all strings, all booleans or all numbers."""
    problem = f"the model needs {expected} distinct classes (all strings, all booleans or all numbers)"
    if not isinstance(value, list) or len(value) != expected:
        raise _Invalid(f"{problem}, got {value!r}"[:300])
    kinds = {_label_kind(c) for c in value}
    if None in kinds or len(kinds) != 1:
        raise _Invalid(f"{problem}, got {value!r}"[:300])
    classes = np.asarray(value)
    # Equal labels of different spellings (1 and 1.0) become one in the array.
    if classes.dtype.kind not in "biufU" or len(np.unique(classes)) != expected:
        raise _Invalid(f"{problem}, got {value!r}"[:300])
    return classes


def _check_feature_fields(booster, names=None, category_counts=None):
    """The core's check of the fields describing the model's features."""
    try:
        booster.check_feature_fields(names, category_counts)
    except ValueError as e:
        raise _Invalid(str(e).removeprefix("invalid model: ")) from None


def _categories_from_json(est, value, booster):
    """Restore the categories written by :func:`_categories_to_json`, which
    the core checks against the model's categorical features and splits."""
    if value is None:
        return
    n = int(est.n_features_in_)
    if not isinstance(value, list) or len(value) != n or not all(c is None or isinstance(c, list) for c in value):
        raise _Invalid(f"categories must be a list of {n} lists or nulls")
    decoded = []
    for j, cats in enumerate(value):
        if cats is None:
            decoded.append(None)
            continue
        values = [_decode_category(v, f"categories[{j}][{i}]") for i, v in enumerate(cats)]
        if len(set(values)) != len(values):
            raise _Invalid(f"categories[{j}] repeats a category")
        decoded.append(values)
    _check_feature_fields(booster, category_counts=[None if c is None else len(c) for c in decoded])
    names = getattr(est, "feature_names_in_", None)
    set_categories(est, None if names is None else list(names), decoded)


def _decode_category(v, where):
    if isinstance(v, (str, bool, int, float)):
        return v
    tags = {"float": set(), "interval": {"closed"}, "timestamp": {"tz"}, "timedelta": set(), "period": {"freq"}}
    tag = next((t for t in tags if isinstance(v, dict) and t in v), None)
    if tag is None or set(v) != {tag} | tags[tag]:
        raise _Invalid(f"{where} is not a category value (a string, number, boolean or tagged pandas value)")
    if tag == "float":
        if v["float"] not in ("inf", "-inf"):
            raise _Invalid(f"{where}: {v['float']!r} is not 'inf' or '-inf'")
        return float(v["float"])
    pd = _pandas_or_none()
    if pd is None:
        raise _Invalid(f"{where} is a pandas {tag}: reading it needs pandas")
    try:
        if tag == "interval":
            ends = v["interval"]
            if not isinstance(ends, list) or len(ends) != 2:
                raise _Invalid(f"{where}: an interval needs [left, right]")
            left, right = (_decode_category(e, f"{where}.interval") for e in ends)
            return pd.Interval(left, right, closed=v["closed"])
        if not all(isinstance(x, str) or x is None for x in v.values()) or v[tag] is None:
            raise _Invalid(f"{where}: a {tag} is written as text")
        if tag == "timestamp":
            stamp = pd.Timestamp(v["timestamp"])
            return stamp if v["tz"] is None else stamp.tz_convert(v["tz"])
        if tag == "timedelta":
            return pd.Timedelta(v["timedelta"])
        return pd.Period(v["period"], freq=v["freq"])
    except _Invalid:
        raise
    except (TypeError, ValueError, OverflowError, AttributeError, KeyError) as e:
        raise _Invalid(f"{where} is not a valid pandas {tag}: {e}") from None
