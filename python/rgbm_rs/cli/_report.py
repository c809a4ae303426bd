"""What the command line tells the user: one-line errors, progress, warnings and scores.

Errors meant for the user are raised as :class:`CLIError` (or
:class:`UsageError` for a wrong command line) and printed by
:func:`rgbm_rs.cli.main` as one ``rgbm: error: ...`` line.
"""

from __future__ import annotations

import contextlib
import re
import sys
import warnings

PROG = "rgbm"


class CLIError(Exception):
    """An error meant for the user: printed as one line, exit status ``exit_code``."""

    exit_code = 1


class UsageError(CLIError):
    """The command line itself is wrong (exit status 2, like argparse's own errors)."""

    exit_code = 2


def one_line(text) -> str:
    return re.sub(r"\s*\n\s*", " ", str(text)).strip()


class Reporter:
    """Informational output (suppressed by ``--quiet``) and one-line warnings."""

    def __init__(self, quiet: bool = False, stream=None):
        self.quiet = quiet
        self.stream = stream

    def info(self, message: str) -> None:
        if not self.quiet:
            print(message, file=self.stream or sys.stdout, flush=True)

    @staticmethod
    def warn(message: str) -> None:
        print(f"{PROG}: warning: {one_line(message)}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def one_line_warnings():
    """Show Python warnings (e.g. from scikit-learn) as ``rgbm: warning: ...`` lines."""
    with warnings.catch_warnings():
        warnings.showwarning = lambda message, *args, **kwargs: Reporter.warn(message)
        yield


def score_line(task: str, y_true, y_pred, groups=None) -> str:
    """Accuracy, RMSE, or for ranking (``groups``: query sizes) the mean
    NDCG over the queries of more than one row, by scikit-learn's ndcg_score."""
    import numpy as np

    if task == "ranking":
        from sklearn.metrics import ndcg_score

        y_true, y_pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
        ends = np.cumsum(groups)
        scores = [
            ndcg_score(y_true[None, end - size : end], y_pred[None, end - size : end])
            for size, end in zip(groups, ends)
            if size > 1
        ]
        return f"NDCG {float(np.mean(scores)):.4f}" if scores else "NDCG n/a (no query has two rows)"
    if task == "classification":
        acc = float(np.mean(np.asarray(y_true).astype(str) == np.asarray(y_pred).astype(str)))
        return f"accuracy {acc:.4f}"
    rmse = float(np.sqrt(np.mean((np.asarray(y_true, dtype=float) - np.asarray(y_pred, dtype=float)) ** 2)))
    return f"RMSE {rmse:.6g}"
