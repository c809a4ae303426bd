"""``rgbm train``: fit an estimator on a data file and save it as JSON."""

from __future__ import annotations

import difflib
import time
from typing import Any

from ._outputs import check_model_output, check_writable
from ._report import CLIError, UsageError, score_line


def _libsvm_base(option):
    """``--libsvm-base`` as ``zero_based`` for read_libsvm: None (guess), True or False."""
    return None if option in (None, "auto") else option == "0"


def _load_training_data(args, report, categorical=None):
    """Read ``--data`` for training: X, y, feature names (CSV) or None, a
    description, the libsvm base or None, the categories of each feature
    read as categories (CSV text columns that ``categorical``, the
    categorical_features parameter, names or takes with "auto"; None for
    the other features) or None, and for ranking each row's query id
    (None otherwise)."""
    from . import _data as data

    ranking = args.task == "ranking"
    try:
        fmt = data.detect_format(args.data)
        if fmt == "libsvm":
            if args.target is not None:
                report.warn(f"--target {args.target!r} is ignored: the label of a libsvm file is its first field")
            if not ranking and data.mentions_query_ids(args.data):
                report.warn(
                    f"the qid fields of {args.data!r} are ignored: use --task ranking to train a ranker on its queries"
                )
            read = data.read_libsvm(
                args.data, zero_based=_libsvm_base(args.libsvm_base), base_source="--libsvm-base 1", query_ids=ranking
            )
            X, y, zero_based = read[:3]
            qid = read[3] if ranking else None
            if args.libsvm_base != "auto":
                how = "as given"
            else:
                how = "as some index is 0" if zero_based else "as no index is 0; else use --libsvm-base 0"
            desc = f"libsvm, {'0' if zero_based else '1'}-based indices {how}"
            if qid is not None:
                desc += f", {len(data.query_group_sizes(qid))} queries"
            return X, y, None, desc, int(not zero_based), None, qid
        if ranking:
            raise UsageError(
                f"--task ranking needs query groups, read from the qid:N fields of a libsvm file "
                f"(label qid:N index:value ...); {args.data!r} is a CSV file"
            )
        if args.libsvm_base != "auto":
            report.warn(f"--libsvm-base is ignored: {args.data!r} is a CSV file")
        if args.target is None:
            raise UsageError(
                f"--target is required for CSV files ({args.data!r}): give the target column's name or index"
            )
        table = data.read_csv(args.data)
        j = table.column_index(args.target)
        if len(table.header) < 2:
            raise CLIError(f"{args.data!r} has only the target column, no features")
        y = table.target_column(j)
        features = [k for k in range(len(table.header)) if k != j]
        names = [table.header[k] for k in features]
        X, categories = _csv_features(table, features, _categorical_positions(categorical, names))
        return X, y, names, f"CSV, target {table.header[j]!r}", None, categories, None
    except data.DataError as e:
        raise CLIError(str(e)) from None


def _categorical_positions(spec, names):
    """The feature positions categorical_features may make categorical
    ("auto": all, the text columns among them becoming categorical); the
    entries that are neither names, indices nor a mask are left for the
    estimator to refuse."""
    import numpy as np

    n = len(names)
    if isinstance(spec, str):
        return set(range(n)) if spec == "auto" else set()
    if not isinstance(spec, list):
        return set()
    if spec and all(isinstance(v, bool) for v in spec):
        return {j for j, v in enumerate(spec) if v} if len(spec) == n else set()
    out = set()
    for v in spec:
        if isinstance(v, str) and v in names:
            out.add(names.index(v))
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool) and -n <= v < n:
            out.add(int(v) % n)
    return out


def _csv_features(table, features, categorical):
    """The feature columns as a float matrix: numbers, or for a text
    column among the positions `categorical` its categories' positions;
    with the categories of each column (None for numeric ones)."""
    import numpy as np

    X = np.empty((table.n_rows, len(features)), dtype=np.float64)
    categories = [None] * len(features)
    for pos, k in enumerate(features):
        if pos in categorical and not table.is_numeric(k):
            X[:, pos], categories[pos] = table.category_column(k)
        else:
            X[:, pos] = table.numeric_column(k)
    return X, categories


def _resolve_task(args, y):
    """The task and the sentence explaining how it was chosen."""
    import numpy as np

    from . import _data as data

    if args.task != "auto":
        return args.task, "as requested"
    task = data.infer_task(y)
    if y.dtype.kind not in "fiu":
        why = "the target is not numeric"
    elif task == "classification":
        why = f"the target has {len(np.unique(y))} distinct integer values"
    else:
        why = f"the target is numeric with {len(np.unique(y))} distinct values"
    return task, f"auto: {why}"


def _collect_params(args) -> dict:
    """``--param`` and trailing ``key=value`` arguments as one dict; a key given twice is an error."""
    params: dict[str, Any] = {}
    for key, value in list(args.params) + list(args.hyperparams):
        if key in params:
            raise UsageError(f"parameter {key!r} is given twice ({params[key]!r} and {value!r})")
        params[key] = value
    return params


def _named_constraints(params: dict, names, categories=None) -> dict:
    """Constraints and categorical features given by CSV column name, as
    positions (the estimator is fitted on a plain array); names that are
    not columns are left for the estimator to refuse.
    ``categorical_features=auto`` becomes the positions of the text columns
    read as categories (`categories`)."""
    if names is None:
        return params
    pos = {n: j for j, n in enumerate(names)}
    at = lambda v: pos.get(v, v) if isinstance(v, str) else v  # noqa: E731
    out = dict(params)
    cat = params.get("categorical_features")
    if cat == "auto":
        found = [j for j, c in enumerate(categories or []) if c is not None]
        out["categorical_features"] = found or None
    elif isinstance(cat, list):
        out["categorical_features"] = [at(v) for v in cat]
    mono = params.get("monotone_constraints")
    if isinstance(mono, dict):
        out["monotone_constraints"] = {at(k): d for k, d in mono.items()}
    sets = params.get("interaction_constraints")
    if isinstance(sets, list) and all(isinstance(s, list) for s in sets):
        out["interaction_constraints"] = [[at(v) for v in s] for s in sets]
    return out


def _class_weight_labels(params: dict, y) -> dict:
    """class_weight with its keys as labels of y: JSON object keys are
    strings, so a key that is the text of exactly one numeric label (``"1"``
    for 1, ``"0.5"`` for 0.5; or equal to it as a number, ``"1.0"`` for 1)
    stands for that label. Other keys are left for the estimator to refuse."""
    import numpy as np

    from ._data import _strict_float

    weights = params.get("class_weight")
    if not isinstance(weights, dict) or y.dtype.kind not in "iuf":
        return params
    classes = np.unique(y).tolist()
    by_text = {str(c): c for c in classes}
    out: dict = {}
    for key, w in weights.items():
        label = key
        if isinstance(key, str):
            if key in by_text:
                label = by_text[key]
            else:
                v = _strict_float(key.strip())
                same = [c for c in classes if v is not None and c == v]
                label = same[0] if len(same) == 1 else key
        if label in out:
            raise UsageError(
                f"class_weight gives label {label!r} twice (keys {out[label][0]!r} and {key!r}); give each label once"
            )
        out[label] = (key, w)
    return {**params, "class_weight": {label: w for label, (_, w) in out.items()}}


def _make_estimator(task: str, params: dict, seed: int):
    """Construct the estimator; unknown parameter names are a one-line error."""
    from ..sklearn import RGBMClassifier, RGBMRanker, RGBMRegressor

    classes = {"classification": RGBMClassifier, "regression": RGBMRegressor, "ranking": RGBMRanker}
    cls = classes[task]
    valid = cls().get_params()
    for key in params:
        if key not in valid:
            close = difflib.get_close_matches(key, list(valid), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            others = [c for c in classes.values() if c is not cls and key in c().get_params()]
            if others:
                hint = f" (it is a parameter of {' and '.join(c.__name__ for c in others)}: check --task)"
            raise CLIError(f"unknown parameter {key!r} for {cls.__name__}{hint}")
    params = dict(params)
    params.setdefault("random_state", seed)
    try:
        est = cls(**params)
        # Check the values now, not after reading the data.
        est._validate_params()
    except (TypeError, ValueError) as e:
        raise CLIError(f"bad parameters for {cls.__name__}: {e}") from None
    return est


def _save_model(est, path: str, libsvm_base) -> None:
    """save_model, keeping the libsvm index base the features were read with (if any)."""
    if libsvm_base is not None:
        est._libsvm_index_base_ = libsvm_base
    est.save_model(path)


def cmd_train(args, report) -> int:
    """Fit a model on ``--data`` and save it to ``--model``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``train`` arguments.
    report : Reporter
        Where to print progress.

    Returns
    -------
    int
        0 on success (errors raise :class:`CLIError`).
    """
    import numpy as np

    from . import _data as data

    params = _collect_params(args)
    if args.task != "auto":  # otherwise the data tell which estimator the parameters are for
        _make_estimator(args.task, params, args.seed)
    check_writable(args.model, "model file", [("--data", args.data)])
    check_model_output(args.model)
    X, y, names, desc, libsvm_base, categories, qid = _load_training_data(
        args, report, params.get("categorical_features")
    )
    report.info(f"data: {args.data} ({desc}): {X.shape[0]} rows, {X.shape[1]} features")

    task, why = _resolve_task(args, y)
    if task == "classification":
        y = data.class_labels(y)
        params = _class_weight_labels(params, y)
    elif y.dtype.kind not in "fiu":
        raise CLIError("the target is not numeric: use --task classification (or auto) for labels")
    est = _make_estimator(task, _named_constraints(params, names, categories), args.seed)
    report.info(f"task: {task} ({why}) -> {type(est).__name__}")

    X_train, y_train, X_test, y_test = X, y, None, None
    qid_train, qid_test = qid, None
    if args.test_size > 0:
        from sklearn.model_selection import GroupShuffleSplit, train_test_split

        try:
            if qid is not None:
                # Whole queries are held out; the indices come sorted, so each query's rows stay together.
                split = GroupShuffleSplit(n_splits=1, test_size=args.test_size, random_state=args.seed)
                train, test = next(split.split(X, y, groups=qid))
                X_train, X_test, y_train, y_test = X[train], X[test], y[train], y[test]
                qid_train, qid_test = qid[train], qid[test]
            else:
                stratify = y if task == "classification" else None
                X_train, X_test, y_train, y_test = train_test_split(
                    X, y, test_size=args.test_size, random_state=args.seed, stratify=stratify
                )
        except ValueError as e:
            raise CLIError(f"cannot hold out --test-size {args.test_size}: {e}") from None

    fit_params = {} if qid_train is None else {"group": data.query_group_sizes(qid_train)}
    start = time.perf_counter()
    try:
        est.fit(X_train, y_train, **fit_params)
    except (ValueError, TypeError) as e:
        message = f"cannot train {type(est).__name__}: {e}"
        if task == "classification" and args.task == "auto" and y.dtype.kind in "fiu" and len(np.unique(y)) > 2:
            message += " (the target was read as classes because it has few distinct integer values; use --task regression to fit it as a number)"
        raise CLIError(message) from None
    fit_s = time.perf_counter() - start
    report.info(f"trained {est.n_estimators_} rounds on {len(y_train)} rows in {fit_s:.3f} s")

    if X_test is not None and y_test is not None:
        from ._predict import predict_rows

        groups = None if qid_test is None else data.query_group_sizes(qid_test)
        line = score_line(task, y_test, predict_rows(est, X_test), groups)
        held_out = f"{len(y_test)} held-out rows" + ("" if groups is None else f" ({len(groups)} queries)")
        report.info(f"test {line} on {held_out}")
    if names is not None:
        from .._validation import set_categories

        # The estimator was fitted on a plain array; record the CSV header and
        # the text columns' categories as a fit on a data frame would, so that
        # save_model stores them and `rgbm predict` (or predict on a frame)
        # matches columns by name and reads categories by value.
        est.feature_names_in_ = np.asarray(names, dtype=object)
        set_categories(est, names, categories)
    try:
        _save_model(est, args.model, libsvm_base)
    except OSError as e:
        raise CLIError(f"cannot write model file {args.model!r}: {e.strerror or e}") from None
    report.info(f"model saved to {args.model}")
    return 0
