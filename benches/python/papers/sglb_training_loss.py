"""SGLB: does Langevin boosting reach a lower training loss on a non-convex loss?

Ustimenko & Prokhorenkova (ICML 2021) motivate SGLB by global optimisation:
on a multimodal loss such as the smoothed 0-1 loss (SLA, their eq. 12) plain
gradient boosting stops in a local minimum while the Langevin chain can
escape it. This script shows the training curves behind their Table 1: on
the same synthetic task and settings as ``sglb_table1.py`` part 1 (stumps,
5 borders, nu = 0.1, varsigma = 0.1, beta = 1e3, gamma = 1e-3, SGB subsample
0.5, f0 = 0), each method's training SLA loss (``record_train_loss=True``:
the objective the fit descends, per round) and training 0-1 loss at
100, 500, 1000, 3000 and 5000 trees, over --folds folds, with two-sided
paired t-tests against SLA + SGLB. SGLB's model shrinkage makes its
objective a regularised one; the table reports the plain SLA loss of the
scores for every method, which is what the claim is about.

Usage::

    python benches/python/papers/sglb_training_loss.py --n-jobs 2 --write-md BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _runs  # noqa: E402
import sglb_table1 as t1  # noqa: E402

MARKER = "sglb_training_loss"
CHECKPOINTS = (100, 500, 1000, 3000, 5000)
METHODS = {
    name: t1.METHODS[name][0]
    for name in ("SLA + GB", "SLA + SGB (split)", "SLA + SGB (tree)", "SLA + SGLB", "SLA + SGLB, leaf noise only")
}
REF = "SLA + SGLB"


def run(job):
    fold, method, iterations, seed = job
    X, y, _, _ = t1.synthetic_fold(seed, fold)
    est = t1.rgbm(iterations, seed=seed * 1_000_003 + fold, record_train_loss=True, **METHODS[method])
    est.fit(X, y)
    sla = est.training_log_["train_loss"]
    zero_one = []
    for i, f in enumerate(est.staged_decision_function(X), start=1):
        if i in CHECKPOINTS:
            zero_one.append(float(np.mean((f > 0) != (y == 1))))
    return fold, method, [float(sla[c - 1]) for c in CHECKPOINTS if c <= iterations], zero_one


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args(argv)
    cps = [c for c in CHECKPOINTS if c <= args.iterations]
    jobs = [(k, m, args.iterations, args.seed) for k in range(args.folds) for m in METHODS]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.n_jobs) as pool:
        results = list(pool.map(run, jobs))
    seconds = time.perf_counter() - start
    sla = {m: np.zeros((args.folds, len(cps))) for m in METHODS}
    err = {m: np.zeros((args.folds, len(cps))) for m in METHODS}
    for fold, m, s, e in results:
        sla[m][fold], err[m][fold] = s, e
    rows = []
    for m in METHODS:
        cells = []
        for j in range(len(cps)):
            p = "" if m == REF else f", p {t1.fmt_p(t1.ttest_p(sla[m][:, j], sla[REF][:, j]))}"
            cells.append(f"{sla[m][:, j].mean():.4f} / {err[m][:, j].mean():.4f}{p}")
        rows.append([m] + cells)
    gb_gap = sla["SLA + GB"][:, -1] - sla[REF][:, -1]
    p_gb = t1.ttest_p(sla["SLA + GB"][:, -1], sla[REF][:, -1])
    claim = (
        f"At {cps[-1]} trees SLA + SGLB's training SLA loss is "
        + (
            f"lower than SLA + GB's by {gb_gap.mean():.4f} (p = {t1.fmt_p(p_gb)})"
            if gb_gap.mean() > 0
            else f"higher than SLA + GB's by {-gb_gap.mean():.4f} (p = {t1.fmt_p(p_gb)})"
        )
        + ": the paper's global-optimisation claim "
        + ("holds on the training loss." if gb_gap.mean() > 0 and p_gb < 0.05 else "is not shown on the training loss.")
    )
    cmd = "python " + " ".join(shlex.quote(a) for a in ["benches/python/papers/sglb_training_loss.py"] + argv)
    md = "\n".join(
        [
            f"- Command: `{cmd}`",
            f"- Commit: {_runs.git_commit()}; machine: {_runs.machine()}; {args.n_jobs} worker process(es), "
            f"each fit single-threaded; {seconds:.0f} s",
            f"- {args.folds} folds of the Table 1 task (1000 training rows each), stumps, 5 borders, nu = 0.1, "
            "varsigma = 0.1, beta = 1e3, gamma = 1e-3, SGB subsample 0.5, f0 = 0",
            "",
            "Training SLA loss / training 0-1 loss (fold means); p = two-sided paired t-test of the SLA loss "
            "against SLA + SGLB:",
            "",
            _runs.md_table(["method"] + [f"T = {c}" for c in cps], rows),
            "",
            claim,
        ]
    )
    print(md)
    if args.write_md:
        _runs.replace_between_markers(args.write_md, MARKER, md + "\n")
        print(f"wrote the {MARKER} section of {args.write_md}")


if __name__ == "__main__":
    main()
