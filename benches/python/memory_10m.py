"""Peak memory of a fit on 10M x 28 float32 rows.

Generates a Higgs-like synthetic binary task (seeded), fits ``--rounds`` rounds
of 31-leaf trees with 2 threads and reports the process's peak RSS, the size of
the raw matrix and the fit time. The raw matrix is never copied (float32,
C order, passed as is), so peak RSS ~= raw matrix + binned codes (two u8
layouts) + O(n) training buffers.

Usage: python benches/python/memory_10m.py [--rows 10000000] [--rounds 10]
"""

import argparse
import resource
import time

import numpy as np

from rgbm_rs import RGBMClassifier


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--features", type=int, default=28)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.rows, args.features), dtype=np.float32)
    logit = X[:, 0] - 0.5 * X[:, 1] + 0.3 * X[:, 2] * X[:, 3]
    y = (rng.random(args.rows) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    del logit
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    clf = RGBMClassifier(n_estimators=args.rounds, max_depth=None, max_leaves=31, n_jobs=2, random_state=0).fit(X, y)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rows={args.rows} features={args.features} rounds={args.rounds} trees={clf.get_booster().n_trees}")
    print(
        f"raw matrix {X.nbytes / 2**20:.0f} MiB; peak RSS before fit {before:.0f} MiB, after fit {peak:.0f} MiB "
        f"(fit added {peak - before:.0f} MiB); fit {seconds:.1f} s"
    )


if __name__ == "__main__":
    main()
