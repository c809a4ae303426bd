"""Per-round cost of SGLB (Langevin noise on gradients and leaves, model shrinkage) against
plain boosting, rgbm_rs, on the same data and tree shape.

Data: rgb_round_cost.py's synthetic binary task (``--rows`` x ``--features``, default
1,000,000 x 20). Both fits: logistic loss, 31-leaf best-first trees, learning rate 0.1,
``--rounds`` rounds with the first ``--skip`` dropped; per fit the median of
``training_log_["seconds"]``, then the median over ``--reps`` fits, interleaved; the ratio to
plain is the median of the per-repetition ratios. SGLB:
``langevin=True, temperature=1e4, shrink_rate=1e-3``; a third row adds the leaf-noise-only
variant (``langevin_split_noise=False``).

Usage::

    python benches/python/sglb_round_cost.py --write-md BENCHMARKS.md
"""

import argparse
import os
import shlex
import sys
from datetime import datetime, timezone

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _report  # noqa: E402
from rgb_round_cost import data  # noqa: E402

from rgbm_rs import RGBMClassifier  # noqa: E402

MARKER = "sglb_round_cost"
VARIANTS = {
    "plain": {},
    "SGLB": dict(langevin=True, temperature=1e4, shrink_rate=1e-3),
    "SGLB, leaf noise only": dict(langevin=True, langevin_split_noise=False, temperature=1e4, shrink_rate=1e-3),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=22)
    ap.add_argument("--skip", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    X, y = data(args.rows, args.features)
    per_round = {name: [] for name in VARIANTS}
    for rep in range(args.reps):
        for name, extra in VARIANTS.items():
            clf = RGBMClassifier(
                n_estimators=args.rounds,
                max_depth=None,
                max_leaves=31,
                learning_rate=0.1,
                n_jobs=args.threads,
                random_state=rep,
                **extra,
            ).fit(X, y)
            s = np.asarray(clf.training_log_["seconds"], float)[args.skip :]
            per_round[name].append(float(np.median(s)))
            print(f"rep {rep} {name}: {1000 * per_round[name][-1]:.1f} ms / round", flush=True)
    med = {k: float(np.median(v)) for k, v in per_round.items()}
    lines = [
        f"- Command: `python benches/python/sglb_round_cost.py {shlex.join(sys.argv[1:])}` "
        f"(rows {args.rows:,}, features {args.features}, {args.rounds} rounds, first {args.skip} dropped, "
        f"{args.reps} interleaved fits, {args.threads} threads)",
        f"- Machine: {_report.cpu_model()}, {os.cpu_count()} CPUs; commit {_report.git_commit()}; "
        f"run {datetime.now(timezone.utc):%Y-%m-%d}",
        "",
        "| booster | ms / round | / plain round (range over fits) |",
        "|---|---:|---:|",
    ]
    for name in VARIANTS:
        # Ratios within a repetition pair fits run back to back, so the
        # machine's drift between repetitions cancels.
        ratios = np.asarray(per_round[name]) / np.asarray(per_round["plain"])
        lines.append(
            f"| {name} | {1000 * med[name]:.1f} | {np.median(ratios):.2f} ({ratios.min():.2f}–{ratios.max():.2f}) |"
        )
    _report.publish("\n".join(lines), args.write_md, MARKER)


if __name__ == "__main__":
    main()
