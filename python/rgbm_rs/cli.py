"""Command line of rgbm_rs: ``python -m rgbm_rs`` (console script ``rgbm``).

Commands
--------
train
    Fit an estimator on a CSV or libsvm file and save it as JSON.
predict
    Load a saved model and write its predictions for a data file as CSV.
demo
    Compare plain GBM, RGBM, SGLB and RGB on data bundled with scikit-learn.

Outputs (model, predictions, plots) are written to a temporary file in the
same folder and renamed into place, so an interrupted command leaves the
previous file intact; a command never writes over one of its input files.

User errors (missing or malformed files, unknown columns, bad parameters,
bad model files, mismatched features) end with a one-line
``rgbm: error: ...`` on stderr and exit status 2 for usage errors, 1 for
everything else; no traceback is shown (``--verbose`` shows one for
unexpected internal errors).
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import difflib
import json
import os
import re
import sys
import time
import traceback
import warnings

from . import __version__

_PROG = "rgbm"


class CLIError(Exception):
    """An error meant for the user: printed as one line, exit status ``exit_code``."""

    exit_code = 1


class UsageError(CLIError):
    """The command line itself is wrong (exit status 2, like argparse's own errors)."""

    exit_code = 2


def _one_line(text) -> str:
    return re.sub(r"\s*\n\s*", " ", str(text)).strip()


class _Reporter:
    """Informational output (suppressed by ``--quiet``) and one-line warnings."""

    def __init__(self, quiet: bool = False, stream=None):
        self.quiet = quiet
        self.stream = stream

    def info(self, message: str) -> None:
        if not self.quiet:
            print(message, file=self.stream or sys.stdout, flush=True)

    @staticmethod
    def warn(message: str) -> None:
        print(f"{_PROG}: warning: {_one_line(message)}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _one_line_warnings():
    """Show Python warnings (e.g. from scikit-learn) as ``rgbm: warning: ...`` lines."""
    with warnings.catch_warnings():
        warnings.showwarning = lambda message, *args, **kwargs: _Reporter.warn(message)
        yield


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors on a single line."""

    def error(self, message):
        self.exit(2, f"{_PROG}: error: {_one_line(message)} (see '{self.prog} --help')\n")


# --------------------------------------------------------------------------- arguments


def _parse_param_value(text: str):
    """JSON if it parses (numbers, true/false/null, lists, quoted strings), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return {"True": True, "False": False, "None": None}.get(text, text)


def _param_arg(text: str):
    """argparse type of ``--param``: ``key=value`` -> ``(key, value)``."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected key=value (e.g. learning_rate=0.05), got {text!r}")
    return key, _parse_param_value(value.strip())


def _fraction_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}")
    return value


def _seed_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``rgbm`` command.

    Returns
    -------
    argparse.ArgumentParser
        With sub-commands ``train``, ``predict`` and ``demo``; the chosen
        command's handler is ``args.func``.
    """
    parser = _ArgumentParser(
        prog=_PROG,
        description="rgbm_rs: gradient boosting (GBM, RGBM, SGLB, RGB) with a Rust core.",
    )
    parser.add_argument("--version", action="version", version=f"rgbm_rs {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true", help="print only errors and warnings")
    common.add_argument(
        "-v", "--verbose", action="store_true", help="show a traceback on unexpected internal errors"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{train,predict,demo}", parser_class=_ArgumentParser)

    train = sub.add_parser(
        "train",
        parents=[common],
        help="fit a model on a CSV or libsvm file and save it as JSON",
        description=(
            "Fit RGBMClassifier or RGBMRegressor on FILE and save it with save_model. "
            "CSV files need a header row; every column but the target is a feature "
            "(numeric; empty or NaN = missing). libsvm files (.libsvm/.svm/.txt) carry the label first. "
            "Estimator parameters follow as KEY=VALUE (e.g. max_depth=4 n_estimators=300)."
        ),
    )
    train.add_argument("--data", required=True, metavar="FILE", help="training data (.csv, .tsv, .libsvm, .svm, .txt)")
    train.add_argument("--target", metavar="COL", help="target column of a CSV file: name, or 0-based index (-1 = last)")
    train.add_argument("--model", required=True, metavar="OUT.json", help="where to save the fitted model")
    train.add_argument(
        "--task",
        choices=("auto", "classification", "regression"),
        default="auto",
        help="auto: classification if the target is not numeric or has <= 20 distinct integer values",
    )
    train.add_argument(
        "--param",
        dest="params",
        action="extend",
        nargs="+",
        type=_param_arg,
        default=[],
        metavar="KEY=VALUE",
        help="estimator parameter, value parsed as JSON when possible (e.g. n_estimators=200 "
        "selection=groups selection_size=5 'groups=[[0,1],[2]]'); repeatable",
    )
    train.add_argument(
        "hyperparams",
        nargs="*",
        type=_param_arg,
        metavar="KEY=VALUE",
        help="estimator parameters, as for --param (e.g. max_depth=4 n_estimators=300)",
    )
    train.add_argument(
        "--libsvm-base",
        choices=("auto", "0", "1"),
        default="auto",
        help="index base of a libsvm file (auto: 0 if some index is 0, else 1); stored with the model, "
        "so that 'rgbm predict' reads its files the same way",
    )
    train.add_argument(
        "--test-size",
        type=_fraction_arg,
        default=0.0,
        metavar="F",
        help="hold out this fraction of the rows and report accuracy / RMSE on it (default 0: no hold-out); "
        "the saved model is the one fitted on the remaining rows",
    )
    train.add_argument(
        "--seed", type=_seed_arg, default=0, metavar="N", help="seed of the hold-out split and default random_state (0)"
    )
    train.set_defaults(func=cmd_train)

    predict = sub.add_parser(
        "predict",
        parents=[common],
        help="predict with a saved model and write a CSV",
        description=(
            "Load a model saved by 'rgbm train' (or save_model) and write its predictions for FILE. "
            "A model trained on CSV columns picks its features by name; other columns are ignored."
        ),
    )
    predict.add_argument("--model", required=True, metavar="M.json", help="model file")
    predict.add_argument("--data", required=True, metavar="FILE", help="data (.csv, .tsv, .libsvm, .svm, .txt)")
    predict.add_argument(
        "--target", metavar="COL", help="target column of a CSV file, dropped from the features and used to report a score"
    )
    predict.add_argument("--out", required=True, metavar="PREDS.csv", help="output CSV ('-' for stdout)")
    predict.add_argument(
        "--proba", action="store_true", help="write class probabilities, one column proba_<class> per class"
    )
    predict.add_argument(
        "--libsvm-base",
        choices=("0", "1"),
        help="index base of a libsvm file; default: the base stored with the model by 'rgbm train' "
        "(needed only for models saved without one)",
    )
    predict.set_defaults(func=cmd_predict)

    demo = sub.add_parser(
        "demo",
        parents=[common],
        help="compare GBM, RGBM, SGLB and RGB on scikit-learn's bundled data",
        description=(
            "Train plain GBM, RGBM (random-then-greedy selection of t feature groups), SGLB "
            "(Langevin boosting) and RGB (regularized boosting) on breast cancer and digits 3 vs 8, "
            "print test accuracy, log-loss and fit time, and draw plots when matplotlib and "
            "rgbm_rs.plotting are available. Nothing is downloaded."
        ),
    )
    demo.add_argument("--seed", type=_seed_arg, default=0, metavar="N", help="train/test split and model seed (0)")
    demo.add_argument("--out-dir", default=".", metavar="DIR", help="folder for the PNG plots (default: current)")
    demo.set_defaults(func=cmd_demo)
    return parser


# --------------------------------------------------------------------------- helpers


def _check_writable(path: str, what: str, inputs) -> None:
    """Fail early, before any work, if ``path`` cannot be written or is one of the ``inputs``.

    ``inputs`` is a list of ``(option, path)``: writing over one of them would
    destroy what the command reads (through any spelling: links, ``..``).
    """
    from ._files import same_file

    for option, source in inputs:
        if same_file(path, source):
            raise UsageError(f"refusing to write the {what} over {option} {source!r}: they are the same file")
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    if os.path.isdir(target):
        raise CLIError(f"{what} {path!r} is a directory")
    if not os.path.isdir(folder):
        raise CLIError(f"cannot write {what} {path!r}: folder {folder!r} does not exist")
    # The output replaces the file by a rename, which a read-only file would not stop: ask the file too.
    if not os.access(folder, os.W_OK) or (os.path.exists(target) and not os.access(target, os.W_OK)):
        raise CLIError(f"cannot write {what} {path!r}: permission denied")


def _holds_model(path: str):
    """True if ``path`` is an rgbm_rs model file, False if it holds something else, None if empty or absent."""
    from ._model_file import holds_model

    return holds_model(path)


def _check_model_output(path: str) -> None:
    """``train --model``: replace a model or create a file, never replace other data (e.g. a typo'd CSV)."""
    if os.path.isfile(path) and _holds_model(path) is False:
        raise CLIError(
            f"refusing to write the model over {path!r}: it exists and is not an rgbm_rs model file "
            "(remove it or choose another name)"
        )


def _check_predictions_output(path: str) -> None:
    """``predict --out``: never replace a model file with predictions."""
    if os.path.isfile(path) and _holds_model(path):
        raise CLIError(
            f"refusing to write predictions over {path!r}: it is an rgbm_rs model file (choose another name)"
        )


def _libsvm_base(option):
    """``--libsvm-base`` as ``zero_based`` for read_libsvm: None (guess), True or False."""
    return None if option in (None, "auto") else option == "0"


def _load_training_data(args, report):
    """Read ``--data`` for training: X, y, feature names (CSV) or None, a description, the libsvm base or None."""
    from . import _cli_data as data

    try:
        fmt = data.detect_format(args.data)
        if fmt == "libsvm":
            if args.target is not None:
                report.warn(f"--target {args.target!r} is ignored: the label of a libsvm file is its first field")
            X, y, zero_based = data.read_libsvm(
                args.data, zero_based=_libsvm_base(args.libsvm_base), base_source="--libsvm-base 1"
            )
            if args.libsvm_base != "auto":
                how = "as given"
            else:
                how = "as some index is 0" if zero_based else "as no index is 0; else use --libsvm-base 0"
            desc = f"libsvm, {'0' if zero_based else '1'}-based indices {how}"
            return X, y, None, desc, int(not zero_based)
        if args.libsvm_base != "auto":
            report.warn(f"--libsvm-base is ignored: {args.data!r} is a CSV file")
        if args.target is None:
            raise UsageError(f"--target is required for CSV files ({args.data!r}): give the target column's name or index")
        table = data.read_csv(args.data)
        j = table.column_index(args.target)
        if len(table.header) < 2:
            raise CLIError(f"{args.data!r} has only the target column, no features")
        y = table.target_column(j)
        features = [k for k in range(len(table.header)) if k != j]
        X = table.feature_matrix(features)
        names = [table.header[k] for k in features]
        return X, y, names, f"CSV, target {table.header[j]!r}", None
    except data.DataError as e:
        raise CLIError(str(e)) from None


def _resolve_task(args, y):
    """The task and the sentence explaining how it was chosen."""
    import numpy as np

    from . import _cli_data as data

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
    params = {}
    for key, value in list(args.params) + list(args.hyperparams):
        if key in params:
            raise UsageError(f"parameter {key!r} is given twice ({params[key]!r} and {value!r})")
        params[key] = value
    return params


def _make_estimator(task: str, params: dict, seed: int):
    """Construct the estimator; unknown parameter names are a one-line error."""
    from . import RGBMClassifier, RGBMRegressor

    cls = RGBMClassifier if task == "classification" else RGBMRegressor
    valid = cls().get_params()
    for key in params:
        if key not in valid:
            close = difflib.get_close_matches(key, list(valid), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            other = RGBMRegressor if cls is RGBMClassifier else RGBMClassifier
            if key in other().get_params():
                hint = f" (it is a parameter of {other.__name__}: check --task)"
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


def _score_line(task: str, y_true, y_pred) -> str:
    import numpy as np

    if task == "classification":
        acc = float(np.mean(np.asarray(y_true).astype(str) == np.asarray(y_pred).astype(str)))
        return f"accuracy {acc:.4f}"
    rmse = float(np.sqrt(np.mean((np.asarray(y_true, dtype=float) - np.asarray(y_pred, dtype=float)) ** 2)))
    return f"RMSE {rmse:.6g}"


# --------------------------------------------------------------------------- train


def cmd_train(args, report) -> int:
    """Fit a model on ``--data`` and save it to ``--model``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``train`` arguments.
    report : _Reporter
        Where to print progress.

    Returns
    -------
    int
        0 on success (errors raise :class:`CLIError`).
    """
    import numpy as np

    from . import _cli_data as data

    params = _collect_params(args)
    if args.task != "auto":  # otherwise the data tell which estimator the parameters are for
        _make_estimator(args.task, params, args.seed)
    _check_writable(args.model, "model file", [("--data", args.data)])
    _check_model_output(args.model)
    X, y, names, desc, libsvm_base = _load_training_data(args, report)
    report.info(f"data: {args.data} ({desc}): {X.shape[0]} rows, {X.shape[1]} features")

    task, why = _resolve_task(args, y)
    if task == "classification":
        y = data.class_labels(y)
    elif y.dtype.kind not in "fiu":
        raise CLIError("the target is not numeric: use --task classification (or auto) for labels")
    est = _make_estimator(task, params, args.seed)
    report.info(f"task: {task} ({why}) -> {type(est).__name__}")

    X_train, y_train, X_test, y_test = X, y, None, None
    if args.test_size > 0:
        from sklearn.model_selection import train_test_split

        stratify = y if task == "classification" else None
        try:
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=args.test_size, random_state=args.seed, stratify=stratify
            )
        except ValueError as e:
            raise CLIError(f"cannot hold out --test-size {args.test_size}: {e}") from None

    start = time.perf_counter()
    try:
        est.fit(X_train, y_train)
    except (ValueError, TypeError) as e:
        message = f"cannot train {type(est).__name__}: {e}"
        if task == "classification" and args.task == "auto" and y.dtype.kind in "fiu" and len(np.unique(y)) > 2:
            message += " (the target was read as classes because it has few distinct integer values; use --task regression to fit it as a number)"
        raise CLIError(message) from None
    fit_s = time.perf_counter() - start
    report.info(f"trained {est.n_estimators_} rounds on {len(y_train)} rows in {fit_s:.3f} s")

    if X_test is not None:
        report.info(f"test {_score_line(task, y_test, est.predict(X_test))} on {len(y_test)} held-out rows")
    if names is not None:
        # The estimator was fitted on a plain array; record the CSV header so that
        # save_model stores the names and `rgbm predict` can match columns by name.
        est.feature_names_in_ = np.asarray(names, dtype=object)
    try:
        _save_model(est, args.model, libsvm_base)
    except OSError as e:
        raise CLIError(f"cannot write model file {args.model!r}: {e.strerror or e}") from None
    report.info(f"model saved to {args.model}")
    return 0


# --------------------------------------------------------------------------- predict


def _load_model(path):
    """The estimator in the model file, and the libsvm index base stored with it (or None)."""
    from . import load_model

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
                f"--libsvm-base {args.libsvm_base} contradicts the model, which was trained on "
                f"{stored}-based indices"
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
    from . import _cli_data as data

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
                report.info(f"ignoring column(s) the model does not use: {', '.join(repr(n) for n in unused[:5])}"
                            + (" ..." if len(unused) > 5 else ""))
        else:
            if len(available) != n_features:
                hint = "" if target is not None else " (pass --target to drop the target column)"
                raise CLIError(
                    f"the model expects {n_features} features, but {args.data!r} has {len(available)} "
                    f"feature columns{hint}"
                )
            used = available
        X = table.feature_matrix(used)
        y = None if target is None else table.target_column(target)
        return X, y
    except data.DataError as e:
        raise CLIError(str(e)) from None


def _write_csv(path: str, header, rows) -> None:
    if path == "-":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        sys.stdout.flush()
        return
    from ._files import replace_atomically

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
    report : _Reporter
        Where to print progress (stderr when the predictions go to stdout).

    Returns
    -------
    int
        0 on success (errors raise :class:`CLIError`).
    """
    import numpy as np

    from . import _cli_data as data

    if args.out == "-":
        report.stream = sys.stderr
    else:
        _check_writable(args.out, "output file", [("--model", args.model), ("--data", args.data)])
        _check_predictions_output(args.out)
    est, libsvm_base = _load_model(args.model)
    is_classifier = hasattr(est, "classes_")
    if args.proba and not is_classifier:
        raise CLIError(f"--proba needs a classifier, but {args.model!r} holds a regressor ({type(est).__name__})")
    X, y = _load_prediction_data(args, est, libsvm_base, report)

    with warnings.catch_warnings():
        # Columns were matched by name above; the array passed on has no names.
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        try:
            if args.proba:
                proba = est.predict_proba(X)
                pred = est.classes_[np.argmax(proba, axis=1)]
            else:
                pred = est.predict(X)
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
    report.info(f"wrote {len(rows)} predictions of {type(est).__name__} ({est.n_estimators_} rounds) to {'stdout' if args.out == '-' else args.out}")

    if y is not None:
        task = "classification" if is_classifier else "regression"
        if is_classifier:
            y = data.class_labels(y)
        if task == "regression" and y.dtype.kind not in "fiu":
            report.warn("the target column is not numeric, so no RMSE is reported")
        else:
            report.info(f"{_score_line(task, y, pred)} against the labels in {args.data}")
    return 0


# --------------------------------------------------------------------------- demo


def _demo_datasets(seed: int):
    """Breast cancer and digits 3 vs 8, split 75/25 stratified: name -> (X_tr, X_te, y_tr, y_te)."""
    import numpy as np
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True)
    digits = load_digits()
    keep = np.isin(digits.target, (3, 8))
    sets = {"breast cancer": (X, y), "digits 3 vs 8": (digits.data[keep], digits.target[keep])}
    return {
        name: tuple(train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y))
        for name, (X, y) in sets.items()
    }


_DEMO_SETTINGS = dict(n_estimators=200, learning_rate=0.1, max_depth=4)


def _demo_methods(p: int):
    """(method, note, estimator parameters) for a data set with p features."""
    t = max(1, round(p / 5))
    return [
        ("GBM", f"greedy search over all {p} features", {}),
        ("RGBM", f'selection="groups", t={t} of {p} features per tree', dict(selection="groups", selection_size=t)),
        ("SGLB", "langevin=True (Langevin noise + model shrinkage)", dict(langevin=True)),
        ("RGB", 'booster="rgb" (tree families + SRM penalty)', dict(booster="rgb")),
    ]


def _figure_of(obj):
    """The matplotlib Figure behind what a plotting function returned."""
    from matplotlib.figure import Figure

    if isinstance(obj, Figure):
        return obj
    if hasattr(obj, "figure") and obj.figure is not None:
        return obj.figure
    if hasattr(obj, "flat"):  # an array of Axes
        return next(iter(obj.flat)).figure
    if isinstance(obj, (tuple, list)) and obj:
        return _figure_of(obj[0])
    raise TypeError(f"cannot find the figure in a {type(obj).__name__}")


def _demo_plots(models, data, out_dir, seed, report) -> None:
    """Draw the importance and selection-comparison plots, or say why not."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        report.info("plots skipped: matplotlib is not installed (pip install matplotlib)")
        return
    import matplotlib

    matplotlib.use("Agg")
    try:
        from . import plotting
    except ImportError as e:
        report.info(f"plots skipped: rgbm_rs.plotting cannot be imported ({_one_line(e)})")
        return
    missing = [f for f in ("plot_importance", "plot_selection_comparison") if not hasattr(plotting, f)]
    if missing:
        report.info(f"plots skipped: rgbm_rs.plotting has no {' / '.join(missing)}")
        return

    import matplotlib.pyplot as plt

    from . import RGBMClassifier
    from ._files import replace_atomically

    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise CLIError(f"cannot create --out-dir {out_dir!r}: {e.strerror or e}") from None

    def draw(name, make):
        try:
            fig = _figure_of(make())
            path = os.path.join(out_dir, name)
            with replace_atomically(path, "wb") as f:
                fig.savefig(f, format="png", dpi=100, bbox_inches="tight")
            plt.close(fig)
        except OSError as e:
            raise CLIError(f"cannot write {os.path.join(out_dir, name)!r}: {e.strerror or e}") from None
        except Exception as e:  # the plotting module is optional: a failure must not end the demo
            report.info(f"plot {name} skipped: {type(e).__name__}: {_one_line(e)}")
            return
        report.info(f"plot: {path}")

    draw("demo_importance.png", lambda: plotting.plot_importance(models[("breast cancer", "GBM")]))

    X_tr, _, y_tr, _ = data["breast cancer"]
    p = X_tr.shape[1]
    sizes = [1, 3, 10]
    fitted, labels = [], []
    for t in sizes:
        est = RGBMClassifier(selection="groups", selection_size=t, record_train_loss=True, random_state=seed, **_DEMO_SETTINGS)
        fitted.append(est.fit(X_tr, y_tr))
        labels.append(f"RGBM t={t}")
    fitted.append(RGBMClassifier(record_train_loss=True, random_state=seed, **_DEMO_SETTINGS).fit(X_tr, y_tr))
    labels.append(f"GBM (t={p}, all)")
    draw("demo_selection.png", lambda: plotting.plot_selection_comparison(fitted, labels=labels))


def cmd_demo(args, report) -> int:
    """Compare GBM, RGBM, SGLB and RGB on scikit-learn's bundled data.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``demo`` arguments (``seed``, ``out_dir``).
    report : _Reporter
        Where to print progress; the results table is always printed.

    Returns
    -------
    int
        0 on success.
    """
    import numpy as np
    from sklearn.metrics import accuracy_score, log_loss

    from . import RGBMClassifier

    data = _demo_datasets(args.seed)
    for name, (X_tr, X_te, _, _) in data.items():
        report.info(f"{name}: {len(X_tr)} train / {len(X_te)} test rows, {X_tr.shape[1]} features (bundled with scikit-learn)")
    settings = ", ".join(f"{k}={v}" for k, v in _DEMO_SETTINGS.items())
    report.info(f"common settings: {settings} (RGB ignores learning_rate)")

    try:
        import lightgbm
    except ImportError:
        lightgbm = None

    # Start the native thread pool before timing anything.
    X_tr, _, y_tr, _ = data["breast cancer"]
    RGBMClassifier(n_estimators=2, random_state=0).fit(X_tr, y_tr)

    rows, models = [], {}
    for name, (X_tr, X_te, y_tr, y_te) in data.items():
        methods = [(m, note, RGBMClassifier(random_state=args.seed, **_DEMO_SETTINGS, **kw))
                   for m, note, kw in _demo_methods(X_tr.shape[1])]
        if lightgbm is not None:
            methods.append(("LightGBM", "reference (installed)", lightgbm.LGBMClassifier(
                n_estimators=200, learning_rate=0.1, max_depth=4, num_leaves=16, verbose=-1, random_state=args.seed)))
        for method, note, est in methods:
            start = time.perf_counter()
            est.fit(X_tr, y_tr)
            fit_s = time.perf_counter() - start
            proba = est.predict_proba(X_te)
            pred = est.classes_[np.argmax(proba, axis=1)]
            rows.append((name, method, accuracy_score(y_te, pred), log_loss(y_te, proba, labels=est.classes_), fit_s, note))
            models[(name, method)] = est

    wd = max(len("dataset"), *(len(r[0]) for r in rows))
    wm = max(len("method"), *(len(r[1]) for r in rows))
    print()
    print(f"{'dataset':<{wd}}  {'method':<{wm}}  accuracy  log-loss  fit (s)  settings")
    for name, method, acc, ll, fit_s, note in rows:
        print(f"{name:<{wd}}  {method:<{wm}}  {acc:8.4f}  {ll:8.4f}  {fit_s:7.3f}  {note}")
    print(flush=True)
    _demo_plots(models, data, args.out_dir, args.seed, report)
    return 0


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    """Run the ``rgbm`` command line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 1 on a runtime error, 2 on a usage error
        (argparse's own usage errors exit with status 2 through SystemExit),
        130 when interrupted.
    """
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # argparse takes one run of positionals: key=value arguments after a later option land here.
        if args.command != "train" or any(e.startswith("-") for e in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        try:
            args.hyperparams = list(args.hyperparams) + [_param_arg(e) for e in extra]
        except argparse.ArgumentTypeError as e:
            parser.error(f"argument KEY=VALUE: {e}")
    report = _Reporter(quiet=args.quiet)
    try:
        with _one_line_warnings():
            return args.func(args, report)
    except CLIError as e:
        print(f"{_PROG}: error: {_one_line(e)}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `rgbm predict --out - | head`: the reader left
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1
    except Exception as e:  # a bug rather than a user error: still one line unless --verbose
        if args.verbose:
            traceback.print_exc()
        print(
            f"{_PROG}: error: unexpected {type(e).__name__}: {_one_line(e)} (run with --verbose for the traceback)",
            file=sys.stderr,
        )
        return 1

