"""Bin once or rebin every fit: ``rgbm_rs.cv`` on one Dataset against the same folds fitted from raw arrays.

Data: a synthetic regression task of ``--rows`` rows x ``--features`` features
(Gaussian features, a nonlinear target with noise, 2 % missing values).
Grid: ``--configs`` configurations (learning rate x leaves x row subsample x
L2, the options that do not shape bins), each cross-validated on the same
``--folds`` KFold folds for ``--rounds`` rounds with early stopping on the
mean l2 (``--patience``), 255 bins, ``--threads`` threads, ``random_state=0``.

- Dataset: one ``rgbm_rs.Dataset``; every fit trains on ``ds.subset(train)``
  (binned once by the first fit; a subset gathers its rows' codes).
- raw arrays: every fit gets ``X[train]``, ``y[train]`` and bins them.

Reported: the total time of each path and the share spent binning. The
binning time of the Dataset path is one binning of all rows plus the subset
gathers; that of the raw path is each fold's binning, timed on its own
(``_core.BinnedData.build``, what a fit runs before its first round) and
counted once per configuration.

Usage::

    python benches/python/cv_rebin.py --write-md BENCHMARKS.md
"""

import argparse
import itertools
import json
import os
import shlex
import sys
import time
from datetime import datetime, timezone

import numpy as np
from sklearn.model_selection import KFold

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _report  # noqa: E402

import rgbm_rs  # noqa: E402
from rgbm_rs import Dataset, RGBMRegressor, _core  # noqa: E402

MARKER = "cv_rebin"


def make_data(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * np.abs(X[:, 3]) + 0.3 * rng.normal(size=n)
    X[rng.random(size=X.shape) < 0.02] = np.nan
    return X, y


def grid(k):
    """The first ``k`` configurations of the options that leave the bins alone."""
    axes = itertools.product([0.05, 0.1, 0.2], [15, 31, 63], [1.0, 0.8], [0.0, 1.0])
    return [
        dict(learning_rate=lr, max_leaves=leaves, max_depth=None, subsample=sub, reg_lambda=lam)
        for lr, leaves, sub, lam in itertools.islice(axes, k)
    ]


def best_round(curves, patience):
    """lgb.cv's round: the best mean l2 before ``patience`` rounds without improvement."""
    mean = np.mean([c[: min(map(len, curves))] for c in curves], axis=0)
    best = 0
    for r in range(1, len(mean)):
        if mean[r] < mean[best]:
            best = r
        elif r - best >= patience:
            break
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--features", type=int, default=30)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--configs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--patience", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    started = time.perf_counter()
    X, y = make_data(args.rows, args.features, 0)
    folds = list(KFold(args.folds, shuffle=True, random_state=0).split(X))
    configs = grid(args.configs)

    def make(cfg):
        return RGBMRegressor(n_estimators=args.rounds, n_jobs=args.threads, random_state=0, **cfg)

    # Warm-up: thread pools, first-call costs.
    make(configs[0]).fit(X[:2000], y[:2000])

    # Dataset: binned by the first fit, then shared by every fold of every configuration.
    t0 = time.perf_counter()
    ds = Dataset(X, y)
    bests_ds = []
    for cfg in configs:
        res = rgbm_rs.cv(make(cfg), ds, folds=folds, early_stopping_rounds=args.patience)
        bests_ds.append(res.best_iteration)
    total_ds = time.perf_counter() - t0

    # Raw arrays: every fit bins its training rows.
    t0 = time.perf_counter()
    bests_raw = []
    for cfg in configs:
        curves = []
        for train, test in folds:
            est = make(cfg).fit(X[train], y[train], eval_set=[(X[test], y[test])])
            curves.append(est.evals_result_["valid_0"]["l2"])
        bests_raw.append(best_round(curves, args.patience))
    total_raw = time.perf_counter() - t0

    # Binning alone, as each path does it.
    params = json.dumps({"random_state": 0, "n_jobs": args.threads})
    t0 = time.perf_counter()
    full = _core.BinnedData.build(params, X)
    for train, _ in folds:
        full.subset(train.astype(np.int64))
    for _, test in folds:
        full.subset(test.astype(np.int64))
    bin_ds = time.perf_counter() - t0
    t0 = time.perf_counter()
    for train, _ in folds:
        _core.BinnedData.build(params, np.ascontiguousarray(X[train]))
    bin_raw = (time.perf_counter() - t0) * len(configs)

    n_fits = len(configs) * len(folds)
    rows = [
        f"| Dataset + `rgbm_rs.cv` | {n_fits} | {total_ds:.1f} | {bin_ds:.2f} | {100 * bin_ds / total_ds:.1f} % |",
        f"| raw arrays, rebinned every fit | {n_fits} | {total_raw:.1f} | {bin_raw:.2f} | "
        f"{100 * bin_raw / total_raw:.1f} % |",
    ]
    lines = [
        f"- Command: `python benches/python/cv_rebin.py {shlex.join(sys.argv[1:])}` "
        f"({args.rows:,} x {args.features}, {args.folds} folds x {len(configs)} configurations, up to "
        f"{args.rounds} rounds, early stopping after {args.patience}, {args.threads} threads)",
        f"- Machine: {_report.cpu_model()}, {os.cpu_count()} CPUs; commit {_report.git_commit()}; "
        f"run {datetime.now(timezone.utc):%Y-%m-%d}, {(time.perf_counter() - started) / 60:.0f} min",
        f"- Best rounds (mean over configurations): Dataset {np.mean(bests_ds):.1f}, raw {np.mean(bests_raw):.1f}",
        "",
        "| path | fits | total (s) | binning (s) | binning share |",
        "|---|---:|---:|---:|---:|",
        *rows,
    ]
    _report.publish("\n".join(lines), args.write_md, MARKER)


if __name__ == "__main__":
    main()
