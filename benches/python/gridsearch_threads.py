"""A grid search over all cores: each library's fits left to choose their threads.

``GridSearchCV(n_jobs=-1)`` runs one fit per core in joblib's worker
processes; each fit, left to choose its threads, should take only its share
of the cores (joblib sets ``OMP_NUM_THREADS`` in its workers, threadpoolctl
bounds registered pools) instead of starting one thread per core in every
worker. The table times the same search (3-fold CV over 8 configurations,
100 rounds of 31-leaf trees, 60,000 x 20 binary task) with:

* rgbm_rs ``n_jobs=None`` (obeys the workers' limit),
* rgbm_rs ``n_jobs=<cores>`` in every worker (what ``n_jobs=None`` did
  before it obeyed the limit: every worker takes every core),
* LightGBM (``n_jobs=None``: physical cores), XGBoost (``n_jobs=None``:
  OpenMP's default) and scikit-learn's HGB (OpenMP) left to choose.

Each search runs in a fresh process; repetitions interleave the variants;
medians.

Usage::

    python benches/python/gridsearch_threads.py --reps 3 --write-md BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _report  # noqa: E402

MARKER = "gridsearch_threads"
ROWS, FEATURES, ROUNDS = 60_000, 20, 100
GRID = {"learning_rate": [0.05, 0.1], "reg_lambda": [0.0, 1.0], "min_samples_leaf": [10, 40]}
VARIANTS = {
    "rgbm_none": "rgbm_rs, n_jobs=None",
    "rgbm_all": "rgbm_rs, n_jobs=cores in every worker",
    "lightgbm": "LightGBM, n_jobs=None",
    "xgboost": "XGBoost, n_jobs=None",
    "hgb": "scikit-learn HGB",
}

CHILD = r"""
import json, os, sys, time
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV
variant, rows, features, rounds, grid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), json.loads(sys.argv[5])
X, y = make_classification(n_samples=rows, n_features=features, n_informative=10, random_state=0)
X = X.astype(np.float32)
if variant.startswith("rgbm"):
    from rgbm_rs import RGBMClassifier, _core
    n_jobs = None if variant == "rgbm_none" else _core.available_cores()
    est = RGBMClassifier(n_estimators=rounds, max_leaves=31, max_depth=None, n_jobs=n_jobs, random_state=0)
elif variant == "lightgbm":
    import lightgbm as lgb
    est = lgb.LGBMClassifier(n_estimators=rounds, num_leaves=31, verbose=-1, random_state=0)
    grid = {"learning_rate": grid["learning_rate"], "reg_lambda": grid["reg_lambda"], "min_child_samples": grid["min_samples_leaf"]}
elif variant == "xgboost":
    import xgboost as xgb
    est = xgb.XGBClassifier(n_estimators=rounds, max_leaves=31, max_depth=0, grow_policy="lossguide", tree_method="hist", random_state=0)
    grid = {"learning_rate": grid["learning_rate"], "reg_lambda": grid["reg_lambda"], "min_child_weight": [1, 4]}
else:
    from sklearn.ensemble import HistGradientBoostingClassifier
    est = HistGradientBoostingClassifier(max_iter=rounds, max_leaf_nodes=31, early_stopping=False, random_state=0)
    grid = {"learning_rate": grid["learning_rate"], "l2_regularization": grid["reg_lambda"], "min_samples_leaf": grid["min_samples_leaf"]}
search = GridSearchCV(est, grid, cv=3, n_jobs=-1)
t0 = time.perf_counter()
search.fit(X, y)
print(json.dumps({"seconds": time.perf_counter() - t0, "score": search.best_score_}))
"""


def run(variant: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS")}
    args = [variant, str(ROWS), str(FEATURES), str(ROUNDS), json.dumps(GRID)]
    out = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--write-md", default=None, help="put the table between this file's markers")
    args = ap.parse_args()
    variants = args.variants.split(",")
    times: dict[str, list[float]] = {v: [] for v in variants}
    scores: dict[str, float] = {}
    for rep in range(args.reps):
        for v in variants:
            r = run(v)
            times[v].append(r["seconds"])
            scores[v] = r["score"]
            print(f"rep {rep} {v}: {r['seconds']:.2f} s", file=sys.stderr)
    base = statistics.median(times["lightgbm"]) if "lightgbm" in times else None
    from rgbm_rs import _core

    lines = [
        f"`python benches/python/gridsearch_threads.py --reps {args.reps}` at {_report.git_commit()}, "
        f"{_report.cpu_model()}, {_core.available_cores()} cores: `GridSearchCV(n_jobs=-1)`, 3-fold CV over "
        f"8 configurations, {ROUNDS} rounds of 31-leaf trees, {ROWS:,} x {FEATURES} binary task (float32); "
        f"median of {args.reps} searches, each in a fresh process, variants interleaved.",
        "",
        "| search | seconds | / LightGBM | best CV accuracy |",
        "|---|---|---|---|",
    ]
    for v in variants:
        t = statistics.median(times[v])
        ratio = f"{t / base:.2f}" if base else "—"
        lines.append(f"| {VARIANTS[v]} | {t:.1f} | {ratio} | {scores[v]:.4f} |")
    _report.publish("\n".join(lines), args.write_md, MARKER)


if __name__ == "__main__":
    main()
