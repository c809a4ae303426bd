"""Per-round cost of RGB (S candidates) versus plain boosting, rgbm_rs.

Claim checked (Cortes, Mohri & Storcheus, NeurIPS 2019, section 4.3): "given a fixed
sample of S coordinates, the runtime of one RGB round is equal to the runtime of S
rounds of GB when the same subroutine is used for tree splitting", and the S candidates
"can be done in parallel, making the time of RGB per thread comparable to that of
standard GB".

Setup
-----
* data: synthetic binary task, ``--rows`` x ``--features`` (default 200,000 x 20),
  x ~ N(0, I), y = 1{x0 + x1*x2 + sin(3 x3) - 0.5 x4^2 + 0.5 N(0,1) > 0}, seed 0.
* one tree family for RGB so every candidate has the same size: ``rgb_nodes=[N]``,
  ``rgb_lambdas=[1.0]`` (``--lambdas``: several radii, so candidates are distinct
  families of the same size), ``max_depth=None`` (default N = 15 internal nodes = 16 leaves),
  S in ``--S``. Both boosters keep the classifier's default min_samples_leaf (20).
* plain boosting: ``booster="gbm"``, ``max_depth=None, max_leaves=N+1`` (the same
  tree size), same ``min_samples_leaf``; learning rate 0.1.
* timing: ``training_log_["seconds"]`` (per-round wall time). Each fit runs
  ``--rounds`` rounds; the first ``--skip`` rounds are dropped (warm-up), the median
  over the remaining rounds is taken per fit, and the median over ``--reps`` fits is
  reported. Threads: ``--threads`` (default 2, via ``n_jobs``); ``--also-1thread``
  adds the single-thread numbers to see what the parallel candidates buy.
"""

import argparse
import datetime
import os
import sys
import time

import numpy as np

from rgbm_rs import RGBMClassifier


def data(m, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    f = X[:, 0] + X[:, 1] * X[:, 2] + np.sin(3 * X[:, 3]) - 0.5 * X[:, 4] ** 2
    y = (f + 0.5 * rng.standard_normal(m) > 0).astype(int)
    return X, y


def per_round(make, X, y, reps, skip):
    meds, totals = [], []
    for r in range(reps):
        t = time.time()
        clf = make(r).fit(X, y)
        totals.append(time.time() - t)
        s = np.asarray(clf.training_log_["seconds"], float)[skip:]
        meds.append(float(np.median(s)))
    return float(np.median(meds)), float(np.median(totals)), clf


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--nodes", type=int, default=15)
    ap.add_argument(
        "--lambdas",
        default="1.0",
        help="the families' leaf radii (one node size): with one, every candidate is the same family",
    )
    ap.add_argument("--S", default="1,4,8")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--skip", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--also-1thread", action="store_true")
    ap.add_argument("--write-md", default=None)
    ap.add_argument("--append", action="store_true", help="add the table to --write-md instead of replacing it")
    args = ap.parse_args()
    cmd = "python " + " ".join(sys.argv)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    X, y = data(args.rows, args.features)
    Ss = [int(v) for v in args.S.split(",")]
    threads = [args.threads] + ([1] if args.also_1thread and args.threads != 1 else [])
    res = {}
    t0 = time.time()
    for nt in threads:

        def gbm(r, nt=nt):
            return RGBMClassifier(
                booster="gbm",
                n_estimators=args.rounds,
                max_depth=None,
                max_leaves=args.nodes + 1,
                learning_rate=0.1,
                random_state=r,
                n_jobs=nt,
            )

        g, gt, _ = per_round(gbm, X, y, args.reps, args.skip)
        res[(nt, "gbm")] = (g, gt, None)
        print(f"threads={nt} gbm: {1000 * g:.1f} ms/round (fit {gt:.1f}s)", flush=True)
        for S in Ss:

            def rgb(r, S=S, nt=nt):
                return RGBMClassifier(
                    booster="rgb",
                    n_estimators=args.rounds,
                    rgb_candidates=S,
                    rgb_beta=0.1,
                    rgb_nodes=[args.nodes],
                    rgb_lambdas=[float(v) for v in args.lambdas.split(",")],
                    max_depth=None,
                    random_state=r,
                    n_jobs=nt,
                )

            t, tt, clf = per_round(rgb, X, y, args.reps, args.skip)
            res[(nt, S)] = (t, tt, clf.rgb_family_counts_)
            print(
                f"threads={nt} rgb S={S}: {1000 * t:.1f} ms/round = {t / g:.2f} gbm rounds "
                f"(ideal S/threads = {S / min(S, nt):.2f}; fit {tt:.1f}s) families {clf.rgb_family_counts_}",
                flush=True,
            )
    total = time.time() - t0
    L = [
        "## RGB per-round cost vs plain boosting (rgbm_rs)\n",
        f"- command: `{cmd}`",
        f"- date: {date}; total wall time {total:.0f} s; machine: {os.cpu_count()} cores (shared)",
        f"- data {args.rows} x {args.features} synthetic binary; tree size {args.nodes} internal nodes "
        f"({args.nodes + 1} leaves) for both, RGB families lambda in {{{args.lambdas}}}; {args.rounds} rounds per fit, first {args.skip} dropped, "
        f"median per-round time per fit, median of {args.reps} fits\n",
        "| threads | booster | S | ms / round | / gbm round | / (S x gbm round) | median fit (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for nt in threads:
        g = res[(nt, "gbm")][0]
        L.append(
            f"| {nt} | gbm (max_leaves={args.nodes + 1}) | - | {1000 * g:.1f} | 1.00 | - | {res[(nt, 'gbm')][1]:.1f} |"
        )
        for S in Ss:
            t, tt, _ = res[(nt, S)]
            L.append(f"| {nt} | rgb | {S} | {1000 * t:.1f} | {t / g:.2f} | {t / (S * g):.2f} | {tt:.1f} |")
    if len(threads) > 1:
        L.append("")
        L.append(
            f"Speed-up from {args.threads} threads (1-thread ms / {args.threads}-thread ms): "
            + ", ".join(
                f"gbm {res[(1, 'gbm')][0] / res[(args.threads, 'gbm')][0]:.2f}"
                if k == "gbm"
                else f"S={k} {res[(1, k)][0] / res[(args.threads, k)][0]:.2f}"
                for k in ["gbm"] + Ss
            )
        )
    md = "\n".join(L) + "\n"
    print()
    print(md)
    if args.write_md:
        os.makedirs(os.path.dirname(os.path.abspath(args.write_md)), exist_ok=True)
        with open(args.write_md, "a" if args.append else "w") as f:
            f.write(("\n" if args.append else "") + md)


if __name__ == "__main__":
    main()
