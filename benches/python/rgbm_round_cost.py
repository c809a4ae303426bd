"""Per-round cost of RGBM's randomized selection against a full round.

Compares, on one synthetic 1M x 100 float32 binary task (seeded):

* rgbm_rs ``selection="full"`` and ``selection="groups", selection_size=p//10``:
  per-round wall time from ``training_log_["seconds"]`` (median over rounds,
  first round dropped), median over ``--reps`` fits;
* LightGBM with ``colsample_bytree=1.0`` and ``0.1``: per-round time as
  (fit(R2) - fit(R1)) / (R2 - R1), median over ``--reps``.

2 threads, 255 bins, 31 leaves best-first, learning rate 0.1.

Usage (repository root)::

    python benches/python/rgbm_round_cost.py --reps 3 --write-md bench_out/rgbm_round_cost.md
"""
from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time

import numpy as np


def make_data(n: int, p: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).astype(np.float32)
    signal = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.5 * X[:, 3:13].sum(axis=1) / np.sqrt(10)
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * signal))).astype(np.int32)
    return X, y


def rgbm_round_ms(X, y, selection, size, rounds, reps):
    from rgbm_rs import RGBMClassifier

    per_fit = []
    for rep in range(reps):
        clf = RGBMClassifier(
            n_estimators=rounds, max_depth=None, max_leaves=31, max_bins=255, n_jobs=2, random_state=rep,
            selection=selection, selection_size=size,
        ).fit(X, y)
        per_fit.append(1000 * statistics.median(clf.training_log_["seconds"][1:]))
    return statistics.median(per_fit)


def lgb_round_ms(X, y, colsample, r1, r2, reps):
    import lightgbm as lgb

    def fit(rounds):
        model = lgb.LGBMClassifier(
            n_estimators=rounds, num_leaves=31, max_bin=255, n_jobs=2, colsample_bytree=colsample, verbose=-1,
            min_child_samples=20,
        )
        start = time.perf_counter()
        model.fit(X, y)
        return time.perf_counter() - start

    per_rep = [1000 * (fit(r2) - fit(r1)) / (r2 - r1) for _ in range(reps)]
    return statistics.median(per_rep)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=25, help="rgbm_rs rounds per fit")
    ap.add_argument("--r1", type=int, default=5)
    ap.add_argument("--r2", type=int, default=25)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--write-md")
    args = ap.parse_args(argv)
    X, y = make_data(args.rows, args.features)
    t = args.features // 10
    rows = [
        ("rgbm_rs", "selection='full'", rgbm_round_ms(X, y, "full", None, args.rounds, args.reps)),
        ("rgbm_rs", f"selection='groups', t={t}", rgbm_round_ms(X, y, "groups", t, args.rounds, args.reps)),
        ("LightGBM", "colsample_bytree=1.0", lgb_round_ms(X, y, 1.0, args.r1, args.r2, args.reps)),
        ("LightGBM", "colsample_bytree=0.1", lgb_round_ms(X, y, 0.1, args.r1, args.r2, args.reps)),
    ]
    full, groups, lgb_full, lgb_cs = (r[2] for r in rows)
    lines = [
        "| library | configuration | ms per round (median) |",
        "|---|---|---:|",
        *[f"| {lib} | {cfg} | {ms:.1f} |" for lib, cfg, ms in rows],
        "",
        f"- groups(t = p/10) / full = {groups / full:.3f} (target <= 0.2)",
        f"- rgbm_rs groups(t = p/10) / LightGBM colsample 0.1 = {groups / lgb_cs:.3f} (target <= 0.5)",
        f"- rgbm_rs full / LightGBM full = {full / lgb_full:.3f}",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write_md:
        header = [
            "## RGBM per-round cost",
            "",
            f"- Command: `python {' '.join(sys.argv)}`",
            f"- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"- Data: synthetic binary, {args.rows} x {args.features} float32; 2 threads, 255 bins, 31 leaves, "
            f"{args.reps} repetitions, rgbm_rs per-round times from training_log_ (first round dropped), "
            f"LightGBM (fit({args.r2}) - fit({args.r1})) / {args.r2 - args.r1}.",
            "",
        ]
        with open(args.write_md, "w") as f:
            f.write("\n".join(header) + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
