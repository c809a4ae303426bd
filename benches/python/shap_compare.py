"""SHAP values and leaf indices against LightGBM on comparable models.

Both libraries fit 500 rounds of 31-leaf best-first trees (learning rate
0.1, 20 rows per leaf, 255 bins, 2 threads) on the same synthetic
regression data (20k rows × 20 features, a few NaNs), then explain 10k
other rows: rgbm_rs ``predict(X, pred_contrib=True)`` against LightGBM
``predict(X, pred_contrib=True)`` (both exact TreeSHAP), and ``apply(X)``
against ``predict(X, pred_leaf=True)``. Calls are interleaved, median of
--reps repetitions. Prints a markdown table; --write-md replaces the table
between the shap markers in BENCHMARKS.md.

    python benches/python/shap_compare.py --reps 5 --write-md BENCHMARKS.md
"""

import argparse
import os
import subprocess
import time

import lightgbm as lgb
import numpy as np
from _report import cpu_model, write_between_markers

from rgbm_rs import RGBMRegressor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
ROUNDS = 500
N_TRAIN, N_EXPLAIN, P = 20_000, 10_000, 20


def data(seed=0):
    r = np.random.default_rng(seed)
    x = r.normal(size=(N_TRAIN + N_EXPLAIN, P))
    y = x[:, 0] * x[:, 1] + np.sin(2 * x[:, 2]) + 0.5 * x[:, 3:8].sum(axis=1) + 0.3 * r.normal(size=len(x))
    x[r.random(len(x)) < 0.03, 4] = np.nan
    return x[:N_TRAIN], y[:N_TRAIN], np.ascontiguousarray(x[N_TRAIN:])


def median_times(calls, reps):
    """Median seconds of each call, the calls interleaved within every repetition."""
    times = {name: [] for name in calls}
    for _ in range(reps):
        for name, call in calls.items():
            t = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - t)
    return {name: float(np.median(v)) for name, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    x, y, xe = data()
    ours = RGBMRegressor(n_estimators=ROUNDS, max_depth=None, max_leaves=31, n_jobs=2, random_state=0).fit(x, y)
    theirs = lgb.LGBMRegressor(n_estimators=ROUNDS, num_leaves=31, n_jobs=2, verbose=-1, random_state=0).fit(x, y)
    # Sanity: both explain their own raw scores.
    for name, contrib, raw in [
        ("rgbm_rs", ours.predict(xe, pred_contrib=True), ours.predict(xe)),
        ("LightGBM", theirs.predict(xe, pred_contrib=True), theirs.predict(xe, raw_score=True)),
    ]:
        err = np.max(np.abs(contrib.sum(axis=1) - raw))
        if err > 1e-6:
            raise SystemExit(f"{name}: contributions miss the raw score by {err}")
    leaves_ours = sum(_leaves(t["tree"]) for t in ours.dump_model()["trees"])
    leaves_theirs = int(theirs.booster_.trees_to_dataframe().query("left_child.isna()").shape[0])
    t = median_times(
        {
            "ours contrib": lambda: ours.predict(xe, pred_contrib=True),
            "theirs contrib": lambda: theirs.predict(xe, pred_contrib=True),
            "ours leaf": lambda: ours.apply(xe),
            "theirs leaf": lambda: theirs.predict(xe, pred_leaf=True),
        },
        args.reps,
    )
    rows = [
        "| 10k rows × 500 trees | rgbm_rs | LightGBM | rgbm_rs / LightGBM |",
        "|---|---:|---:|---:|",
        f"| SHAP values (`pred_contrib`) | {t['ours contrib']:.3f} s | {t['theirs contrib']:.3f} s | "
        f"{t['ours contrib'] / t['theirs contrib']:.2f}× |",
        f"| leaf indices (`apply` / `pred_leaf`) | {t['ours leaf'] * 1e3:.1f} ms | {t['theirs leaf'] * 1e3:.1f} ms | "
        f"{t['ours leaf'] / t['theirs leaf']:.2f}× |",
        f"| leaves in the 500 trees | {leaves_ours} | {leaves_theirs} | |",
    ]
    commit = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    header = (
        f"- Machine: {cpu_model()}, {os.cpu_count()} CPUs; commit {commit}; LightGBM {lgb.__version__}; "
        f"models of {ROUNDS} rounds × 31 leaves fitted on {N_TRAIN:,} × {P} synthetic rows, "
        f"{N_EXPLAIN:,} other rows explained; 2 threads; medians of {args.reps} interleaved calls; run "
        f"{time.strftime('%Y-%m-%d', time.gmtime())}; load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after (2 = both CPUs busy).\n"
        f"- Command: `python benches/python/shap_compare.py --reps {args.reps} --write-md BENCHMARKS.md`\n\n"
    )
    table = header + "\n".join(rows)
    print(table)
    if args.write_md:
        write_between_markers(args.write_md, "shap", table)


def _leaves(node):
    return 1 if "leaf_index" in node else _leaves(node["left"]) + _leaves(node["right"])


if __name__ == "__main__":
    main()
