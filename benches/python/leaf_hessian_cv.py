"""The smallest hessian sum of a leaf: rgbm_rs at min_child_weight 1 (its default, XGBoost's) against 1e-3 (LightGBM's).

Every set of the small-data table, 5-fold cross-validation (stratified for
classes, shuffled, seed 0), 200 rounds of 31-leaf best-first trees,
learning rate 0.1, one thread, everything else at rgbm_rs's defaults.
Reported per setting: the mean test metric over the folds (accuracy or R²)
with its standard error, the mean test log-loss (RMSE for regression), the
folds whose log-loss exceeds 2 (a fit that diverged), the leaves grown and
the CPU time of the five fits (process time: one thread, so a busy machine
changes it less than wall time).

Usage::

    python benches/python/leaf_hessian_cv.py --write-md BENCHMARKS.md
"""

import argparse
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone

import numpy as np
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error, r2_score
from sklearn.model_selection import KFold, StratifiedKFold

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _report  # noqa: E402
from small_data_compare import DATASETS, load  # noqa: E402

import rgbm_rs  # noqa: E402

MARKER = "leaf_hessian"
SETTINGS = (1.0, 1e-3)


def cross_validate(X, y, task, mcw, folds):
    metric, loss, leaves, cpu = [], [], 0, 0.0
    for tr, te in folds.split(X, y):
        cls = rgbm_rs.RGBMRegressor if task == "regression" else rgbm_rs.RGBMClassifier
        m = cls(
            n_estimators=200,
            learning_rate=0.1,
            max_depth=None,
            max_leaves=31,
            min_child_weight=mcw,
            n_jobs=1,
            random_state=0,
        )
        t0 = time.process_time()
        m.fit(X[tr], y[tr])
        cpu += time.process_time() - t0
        leaves += sum(len(t["leaf_value"]) for t in json.loads(m._booster.to_json())["trees"])
        if task == "regression":
            p = m.predict(X[te])
            metric.append(r2_score(y[te], p))
            loss.append(mean_squared_error(y[te], p) ** 0.5)
        else:
            P = m.predict_proba(X[te])
            metric.append(accuracy_score(y[te], m.classes_[P.argmax(1)]))
            loss.append(log_loss(y[te], P, labels=m.classes_))
    diverged = sum(v > 2 for v in loss) if task != "regression" else 0
    return np.mean(metric), np.std(metric) / np.sqrt(len(metric)), np.mean(loss), diverged, leaves, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    start = time.perf_counter()
    lines = []
    for name in args.datasets.split(","):
        loaded = load(name)
        if loaded is None:
            print(f"{name}: data missing, skipped")
            continue
        X, y, task = loaded
        folds = (KFold if task == "regression" else StratifiedKFold)(5, shuffle=True, random_state=0)
        res = {mcw: cross_validate(X, y, task, mcw, folds) for mcw in SETTINGS}
        kind = "R²; RMSE" if task == "regression" else "accuracy; log-loss"
        cells = []
        for mcw in SETTINGS:
            m, se, loss, div, leaves, cpu = res[mcw]
            cells.append(f"{m:.4f} ± {se:.4f}; {loss:.4f} | {div} | {leaves:,} | {cpu:.2f}")
        lines.append(f"| {name} | {X.shape[0]:,} x {X.shape[1]} | {kind} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    head = " | ".join(f"mcw={mcw:g}: metric ± SE; loss | diverged folds | leaves | CPU (s)" for mcw in SETTINGS)
    table = "\n".join(
        [
            "- Command: `python benches/python/leaf_hessian_cv.py --write-md BENCHMARKS.md`",
            f"- Machine: {_report.cpu_model()}, {os.cpu_count()} CPUs; commit {_report.git_commit()}; "
            f"rgbm_rs {rgbm_rs.__version__}; Python {platform.python_version()}; run "
            f"{datetime.now(timezone.utc):%Y-%m-%d}, {time.perf_counter() - start:.0f} s",
            "- 5-fold CV, 200 rounds of 31-leaf trees, learning rate 0.1, 1 thread; a fold diverged if its "
            "log-loss exceeds 2",
            "",
            f"| data | rows x features | metric; loss | {head} |",
            "|---|---|---|" + "---|---|---|---|" * len(SETTINGS),
            *lines,
        ]
    )
    _report.publish(table, args.write_md, MARKER)


if __name__ == "__main__":
    main()
