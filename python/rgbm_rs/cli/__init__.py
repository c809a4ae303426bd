"""Command line of rgbm_rs: ``python -m rgbm_rs`` (console script ``rgbm``).

Commands
--------
train
    Fit an estimator (classifier, regressor, or ranker on a libsvm file's
    ``qid:`` queries) on a CSV or libsvm file and save it as JSON.
predict
    Load a saved model and write its predictions for a data file as CSV.
export
    Write a saved model as ONNX (needs the onnx package).
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

This module parses the command line; each command is carried out by its own
module (``_train``, ``_predict``, ``_export``, ``_demo``), which read data with
``_data``, check output paths with ``_outputs`` and report to the
user through ``_report``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import traceback

from .._core import __version__
from ._demo import cmd_demo
from ._export import cmd_export
from ._predict import cmd_predict
from ._report import PROG, CLIError, Reporter, one_line, one_line_warnings
from ._train import cmd_train


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors on a single line."""

    def error(self, message):
        self.exit(2, f"{PROG}: error: {one_line(message)} (see '{self.prog} --help')\n")


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
        With sub-commands ``train``, ``predict``, ``export`` and ``demo``; the chosen
        command's handler is ``args.func``.
    """
    parser = _ArgumentParser(
        prog=PROG,
        description="rgbm_rs: gradient boosting (GBM, RGBM, SGLB, RGB) with a Rust core.",
    )
    parser.add_argument("--version", action="version", version=f"rgbm_rs {__version__}")
    common = _ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true", help="print only errors and warnings")
    common.add_argument("-v", "--verbose", action="store_true", help="show a traceback on unexpected internal errors")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="{train,predict,export,demo}", parser_class=_ArgumentParser
    )

    train = sub.add_parser(
        "train",
        parents=[common],
        help="fit a model on a CSV or libsvm file and save it as JSON",
        description=(
            "Fit RGBMClassifier, RGBMRegressor or RGBMRanker on FILE and save it with save_model. "
            "CSV files need a header row; every column but the target is a feature "
            "(numeric; empty or NaN = missing). A text column is a categorical feature when named in "
            "categorical_features ('categorical_features=[\"city\"]'; categorical_features=auto takes every "
            "text column): its categories are its distinct values, stored with the model, and 'rgbm predict' "
            "reads a value not seen in training as missing. Constraints and categorical_features may name "
            "columns. class_weight keys are labels; for numeric labels the JSON keys are their text "
            "('class_weight={\"1\": 5}' weights label 1). "
            "libsvm files (.libsvm/.svm/.txt) carry the label first and are read as a sparse matrix "
            "(feature indices in the millions are fine); with --task ranking each label is followed by qid:N, "
            "the query the line belongs to. Files must be UTF-8 (or ASCII) text. "
            "Estimator parameters follow as KEY=VALUE (e.g. max_depth=4 n_estimators=300)."
        ),
    )
    train.add_argument("--data", required=True, metavar="FILE", help="training data (.csv, .tsv, .libsvm, .svm, .txt)")
    train.add_argument(
        "--target", metavar="COL", help="target column of a CSV file: name, or 0-based index (-1 = last)"
    )
    train.add_argument("--model", required=True, metavar="OUT.json", help="where to save the fitted model")
    train.add_argument(
        "--task",
        choices=("auto", "classification", "regression", "ranking"),
        default="auto",
        help="auto: classification if the target is not numeric or has <= 20 distinct integer values; "
        "ranking: RGBMRanker on the queries of a libsvm file's qid:N fields (the lines of a query consecutive)",
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
        help="hold out this fraction of the rows (of the queries, for ranking) and report accuracy / RMSE / NDCG "
        "on it (default 0: no hold-out); "
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
        "--target",
        metavar="COL",
        help="target column of a CSV file, dropped from the features and used to report a score",
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

    export = sub.add_parser(
        "export",
        parents=[common],
        help="write a saved model as ONNX or in XGBoost's JSON model format",
        description=(
            "Load a model saved by 'rgbm train' (or save_model) and write it as an ONNX model "
            "(needs the onnx package; the graph takes X, float32 (n, n_features), NaN = missing, "
            "and outputs what predict and predict_proba return) or in XGBoost's JSON model format "
            "(save_model(format='xgboost'), for xgboost.Booster and the tools that read XGBoost models)."
        ),
    )
    export.add_argument("--format", required=True, choices=("onnx", "xgboost"), help="the format to write")
    export.add_argument("model", metavar="MODEL", help="model file")
    export.add_argument("out", metavar="OUT", help="where to write the exported model")
    export.set_defaults(func=cmd_export)

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
    demo.add_argument(
        "--out-dir",
        default=os.path.join(tempfile.gettempdir(), "rgbm_demo"),
        metavar="DIR",
        help="folder for the PNG plots (default: rgbm_demo in the temporary folder; the demo prints the paths)",
    )
    demo.set_defaults(func=cmd_demo)
    return parser


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
    report = Reporter(quiet=args.quiet)
    try:
        with one_line_warnings():
            return args.func(args, report)
    except CLIError as e:
        print(f"{PROG}: error: {one_line(e)}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
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
            f"{PROG}: error: unexpected {type(e).__name__}: {one_line(e)} (run with --verbose for the traceback)",
            file=sys.stderr,
        )
        return 1
