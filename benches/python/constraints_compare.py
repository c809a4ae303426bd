"""Monotone and interaction constraints against LightGBM on the same data.

California housing (../shared/data, next to the repository), 75/25 split.
Monotone: median income non-decreasing (+1), average occupancy
non-increasing (-1), LightGBM with monotone_constraints_method="basic" (the
method rgbm_rs implements). Interaction: the partition {income, age, rooms,
bedrooms} / {population, occupancy} / {latitude, longitude}, which both
libraries read the same way. Settings as objectives_compare.py (31 leaves
best-first, learning rate 0.1, 300 rounds, 2 threads, fits interleaved,
median of --reps). Prints a markdown table; --write-md replaces the table
between the constraints markers in BENCHMARKS.md.

    python benches/python/constraints_compare.py --reps 5 --write-md BENCHMARKS.md
"""

import argparse
import os
import time

import lightgbm as lgb
import numpy as np
from _report import cpu_model, write_between_markers
from objectives_compare import ROUNDS, california, fit_both, head_commit, time_cell

MONOTONE = [1, 0, 0, 0, 0, -1, 0, 0]
SETS = [[0, 1, 2, 3], [4, 5], [6, 7]]


def cases():
    yield "none", {}, {}
    yield (
        "monotone",
        {"monotone_constraints": MONOTONE},
        {
            "monotone_constraints": MONOTONE,
            "monotone_constraints_method": "basic",
        },
    )
    yield "interaction", {"interaction_constraints": SETS}, {"interaction_constraints": SETS}
    yield (
        "both",
        {"monotone_constraints": MONOTONE, "interaction_constraints": SETS},
        {
            "monotone_constraints": MONOTONE,
            "monotone_constraints_method": "basic",
            "interaction_constraints": SETS,
        },
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    data = california()
    load_before = os.getloadavg()[0]
    rows = [
        "| constraints | test RMSE rgbm_rs | test RMSE LightGBM | rgbm_rs / LightGBM fit time |",
        "|---|---:|---:|---:|",
    ]
    for name, ours_kw, theirs_kw in cases():
        times, preds, y_te = fit_both(data, ours_kw, theirs_kw, args.reps)
        rmse = {k: float(np.sqrt(np.mean((p - y_te) ** 2))) for k, p in preds.items()}
        rows.append(f"| {name} | {rmse['rgbm_rs']:.4f} | {rmse['LightGBM']:.4f} | {time_cell(times)} |")
        print(rows[-1], flush=True)
    commit = head_commit()
    header = (
        f"- Machine: {cpu_model()}, {os.cpu_count()} CPUs; "
        f"commit {commit}; LightGBM {lgb.__version__}; California housing 15,480 / 5,160 rows; "
        f"{ROUNDS} rounds, medians of {args.reps} interleaved fits; run {time.strftime('%Y-%m-%d', time.gmtime())}; "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after (2 = both CPUs busy).\n"
        f"- Monotone: {MONOTONE} (LightGBM `monotone_constraints_method='basic'`); interaction sets: {SETS}.\n"
        "- Command: `python benches/python/constraints_compare.py --reps "
        f"{args.reps} --write-md BENCHMARKS.md`\n\n"
    )
    table = header + "\n".join(rows)
    print(table)
    if args.write_md:
        write_between_markers(args.write_md, "constraints", table)


if __name__ == "__main__":
    main()
