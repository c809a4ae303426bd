"""``rgbm predict``: write a saved model's predictions for a data file as CSV."""

from __future__ import annotations

import csv
import sys
import warnings

from ._outputs import check_not_a_model, check_writable
from ._report import CLIError, UsageError, score_line


def load_model_file(path):
    """The estimator in the model file, and the libsvm index base stored with it (or None)."""
    from ..sklearn import load_model

    try:
        est = load_model(path)
        return est, getattr(est, "_libsvm_index_base_", None)
    except FileNotFoundError:
        raise CLIError(f"cannot read model file {path!r}: no such file") from None
    except IsADirectoryError:
        raise CLIError(f"cannot read model file {path!r}: it is a directory") from None
    except OSError as e:
        raise CLIError(f"cannot read model file {path!r}: {e.strerror or e}") from None
    except ValueError as e:
        message = str(e)
        if str(path) not in message:
            message = f"{path!r} is not a valid rgbm_rs model file: {message}"
        raise CLIError(message) from None


def _prediction_libsvm_base(args, stored, report):
    """``(zero_based, why)`` for reading a libsvm file to predict: the model's base, else --libsvm-base, else a guess."""
    if args.libsvm_base is not None:
        if stored is not None and int(args.libsvm_base) != stored:
            raise UsageError(
                f"--libsvm-base {args.libsvm_base} contradicts the model, which was trained on {stored}-based indices"
            )
        return args.libsvm_base == "0", f"--libsvm-base {args.libsvm_base}"
    if stored is not None:
        why = f"the model was trained on {stored}-based indices"
        if stored == 1:
            why += "; for 0-based files train with --libsvm-base 0"
        return stored == 0, why
    report.warn(
        f"{args.model!r} does not record a libsvm index base (it was not saved by 'rgbm train' from a "
        f"libsvm file): guessing it from "
        f"{args.data!r} (0-based if some index is 0); pass --libsvm-base 0 or 1 to be sure"
    )
    return None, ""


def _load_prediction_data(args, est, libsvm_base, report):
    """Read ``--data`` as features for ``est``: X (matching the model) and the target if known."""
    from . import _data as data

    n_features = int(est.n_features_in_)
    model_names = getattr(est, "feature_names_in_", None)
    try:
        if data.detect_format(args.data) == "libsvm":
            if args.target is not None:
                report.warn(f"--target {args.target!r} is ignored: the label of a libsvm file is its first field")
            zero_based, why = _prediction_libsvm_base(args, libsvm_base, report)
            X, y, _ = data.read_libsvm(args.data, n_features=n_features, zero_based=zero_based, base_source=why)
            return X, y
        if args.libsvm_base is not None:
            report.warn(f"--libsvm-base is ignored: {args.data!r} is a CSV file")
        table = data.read_csv(args.data)
        target = None if args.target is None else table.column_index(args.target)
        available = [k for k in range(len(table.header)) if k != target]
        if model_names is not None:
            position = {table.header[k]: k for k in available}
            missing = [str(n) for n in model_names if str(n) not in position]
            if missing:
                shown = ", ".join(repr(n) for n in missing[:5]) + (" ..." if len(missing) > 5 else "")
                raise CLIError(
                    f"{args.data!r} lacks {len(missing)} feature column(s) the model was trained on: {shown}"
                )
            used = [position[str(n)] for n in model_names]
            unused = [table.header[k] for k in available if k not in set(used)]
            if unused:
                report.info(
                    f"ignoring column(s) the model does not use: {', '.join(repr(n) for n in unused[:5])}"
                    + (" ..." if len(unused) > 5 else "")
                )
        else:
            if len(available) != n_features:
                hint = "" if target is not None else " (pass --target to drop the target column)"
                raise CLIError(
                    f"the model expects {n_features} features, but {args.data!r} has {len(available)} "
                    f"feature columns{hint}"
                )
            used = available
        X = _csv_features(table, used, est, report)
        y = None if target is None else table.target_column(target)
        return X, y
    except data.DataError as e:
        raise CLIError(str(e)) from None


#: Cells (rows x features) of a sparse X predicted at once: the core reads
#: a block of rows as a dense one, so a file with millions of features is
#: predicted a few rows at a time.
SPARSE_BLOCK_CELLS = 1 << 24


def predict_rows(est, X, method: str = "predict"):
    """``est.<method>(X)``; a scipy.sparse X in blocks of rows of at most
    SPARSE_BLOCK_CELLS cells, the results concatenated."""
    import numpy as np
    import scipy.sparse as sp

    fn = getattr(est, method)
    if not sp.issparse(X):
        return fn(X)
    step = max(1, SPARSE_BLOCK_CELLS // max(1, X.shape[1]))
    if X.shape[0] <= step:
        return fn(X)
    X = X.tocsr()
    return np.concatenate([fn(X[i : i + step]) for i in range(0, X.shape[0], step)])


def _csv_features(table, used, est, report):
    """The model's feature columns of the CSV file: numbers, and for a
    feature with categories recorded at fit the positions of its values
    among them (a value not seen at fit is missing, as in predict)."""
    import numpy as np

    from .._validation import fitted_categories

    categories = fitted_categories(est, len(used))
    X = np.empty((table.n_rows, len(used)), dtype=np.float64)
    for pos, k in enumerate(used):
        if categories[pos] is None:
            X[:, pos] = table.numeric_column(k)
            continue
        X[:, pos], unseen = table.coded_column(k, categories[pos])
        if unseen:
            shown = ", ".join(repr(v) for v in unseen[:5]) + (" ..." if len(unseen) > 5 else "")
            report.warn(
                f"column {table.header[k]!r} has {len(unseen)} value(s) not seen in training, read as missing: {shown}"
            )
    return X


def _write_csv(path: str, header, rows) -> None:
    if path == "-":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        sys.stdout.flush()
        return
    from .._files import replace_atomically

    try:
        with replace_atomically(path, newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)
    except OSError as e:
        raise CLIError(f"cannot write {path!r}: {e.strerror or e}") from None


def cmd_predict(args, report) -> int:
    """Write the predictions of ``--model`` for ``--data`` to ``--out``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``predict`` arguments.
    report : Reporter
        Where to print progress (stderr when the predictions go to stdout).

    Returns
    -------
    int
        0 on success (errors raise :class:`CLIError`).
    """
    import numpy as np

    from . import _data as data

    if args.out == "-":
        report.stream = sys.stderr
    else:
        check_writable(args.out, "output file", [("--model", args.model), ("--data", args.data)])
        check_not_a_model(args.out, "predictions")
    est, libsvm_base = load_model_file(args.model)
    is_classifier = hasattr(est, "classes_")
    if args.proba and not is_classifier:
        raise CLIError(f"--proba needs a classifier, but {args.model!r} holds a regressor ({type(est).__name__})")
    X, y = _load_prediction_data(args, est, libsvm_base, report)

    with warnings.catch_warnings():
        # Columns were matched by name above; the array passed on has no names.
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        try:
            if args.proba:
                proba = predict_rows(est, X, "predict_proba")
                pred = est.classes_[np.argmax(proba, axis=1)]
            else:
                pred = predict_rows(est, X)
        except (ValueError, TypeError) as e:
            raise CLIError(f"cannot predict for {args.data!r}: {e}") from None

    if args.proba:
        header = [f"proba_{c}" for c in est.classes_]
        rows = [[repr(float(v)) for v in row] for row in proba]
    elif is_classifier:
        header = ["prediction"]
        rows = [[str(v)] for v in pred]
    else:
        header = ["prediction"]
        rows = [[repr(float(v))] for v in pred]
    _write_csv(args.out, header, rows)
    report.info(
        f"wrote {len(rows)} predictions of {type(est).__name__} ({est.n_estimators_} rounds) to {'stdout' if args.out == '-' else args.out}"
    )

    from ..sklearn import RGBMRanker

    if y is not None and isinstance(est, RGBMRanker):
        # A ranker's scores only order the rows of a query: they are no estimate of the grades.
        report.info("the scores rank each query's rows (highest first); no score against the labels is reported")
    elif y is not None:
        task = "classification" if is_classifier else "regression"
        if is_classifier:
            y = data.class_labels(y)
        if task == "regression" and y.dtype.kind not in "fiu":
            report.warn("the target column is not numeric, so no RMSE is reported")
        else:
            report.info(f"{score_line(task, y, pred)} against the labels in {args.data}")
    return 0
