"""Cost and accuracy of ``summation="exact"`` against the default float sums, rgbm_rs.

Data: compare.py's Higgs-like binary task (``--rows`` rows, 80 % to fit, 20 % to score)
and its YearPredictionMSD-shaped regression task (``--reg-rows``). Both fits: 31-leaf
best-first trees, learning rate 0.1, 255 bins, ``--rounds`` rounds, ``--threads``
threads, ``random_state=0`` (the bin edges come from a seeded sample of the rows); the
float and the exact fit alternate within each of ``--reps`` repetitions
(in-process, after one warm-up fit each). Reported: median fit time, the median of the
per-repetition ratios exact / float, and the test metric of each (AUC, RMSE).

Usage::

    python benches/python/exact_summation_cost.py --write-md BENCHMARKS.md
"""

import argparse
import os
import shlex
import sys
import time
from datetime import datetime, timezone

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _report  # noqa: E402
import compare  # noqa: E402

from rgbm_rs import RGBMClassifier, RGBMRegressor  # noqa: E402

MARKER = "exact_summation"


def tasks(args):
    X, y = compare.generate_higgs(args.rows, 0)
    cut = int(0.8 * len(y))
    yield "higgs-like binary", RGBMClassifier, X[:cut], y[:cut], X[cut:], y[cut:], "AUC"
    X, y = compare.generate_regression(args.reg_rows, 0)
    cut = int(0.8 * len(y))
    yield "regression (MSD-shaped)", RGBMRegressor, X[:cut], y[:cut], X[cut:], y[cut:], "RMSE"


def score(metric, model, X, y):
    if metric == "AUC":
        from sklearn.metrics import roc_auc_score

        return roc_auc_score(y, model.predict_proba(X)[:, 1])
    return float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reg-rows", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    started = time.perf_counter()
    rows = []
    for name, Est, Xtr, ytr, Xte, yte, metric in tasks(args):

        def make(summation, Est=Est):
            return Est(
                n_estimators=args.rounds,
                max_depth=None,
                max_leaves=31,
                learning_rate=0.1,
                n_jobs=args.threads,
                random_state=0,
                summation=summation,
            )

        times = {"float": [], "exact": []}
        scores = {}
        for mode in times:  # warm-up
            make(mode).fit(Xtr[:20_000], ytr[:20_000])
        for rep in range(args.reps):
            for mode in times:
                t0 = time.perf_counter()
                model = make(mode).fit(Xtr, ytr)
                times[mode].append(time.perf_counter() - t0)
                scores[mode] = score(metric, model, Xte, yte)
                print(f"{name} rep {rep} {mode}: {times[mode][-1]:.2f} s, {metric} {scores[mode]:.5f}", flush=True)
        ratios = np.asarray(times["exact"]) / np.asarray(times["float"])
        rows.append(
            f"| {name} | {len(ytr):,} x {Xtr.shape[1]} | {np.median(times['float']):.2f} | "
            f"{np.median(times['exact']):.2f} | {np.median(ratios):.2f} ({ratios.min():.2f}–{ratios.max():.2f}) | "
            f"{metric} {scores['float']:.5f} / {scores['exact']:.5f} |"
        )
    lines = [
        f"- Command: `python benches/python/exact_summation_cost.py {shlex.join(sys.argv[1:])}` "
        f"({args.rounds} rounds of 31-leaf trees, {args.threads} threads, {args.reps} interleaved repetitions)",
        f"- Machine: {_report.cpu_model()}, {os.cpu_count()} CPUs; commit {_report.git_commit()}; "
        f"run {datetime.now(timezone.utc):%Y-%m-%d}, {(time.perf_counter() - started) / 60:.0f} min",
        "",
        "| task | rows x features | float fit (s) | exact fit (s) | exact / float (range) | test metric float / exact |",
        "|---|---|---:|---:|---:|---|",
        *rows,
    ]
    _report.publish("\n".join(lines), args.write_md, MARKER)


if __name__ == "__main__":
    main()
