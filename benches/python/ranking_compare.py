"""Learning to rank against LightGBM's LGBMRanker and XGBoost's XGBRanker.

Synthetic LETOR-like data (no ranking data set is in ../shared/data): 3,000
training and 1,000 test queries of 10..90 rows, 30 features; the grade 0..4
of a row rises with a nonlinear score of 8 features plus a per-query shift
and noise, most rows irrelevant (grade 0). Every library: LambdaRank-style
NDCG objective, 200 rounds of 31-leaf trees (XGBoost: lossguide growth),
learning rate 0.1, at least 20 rows per leaf, 2 threads; fits interleaved,
medians of --reps. Test NDCG@10 is computed here for all three the same way
(scikit-learn's ndcg_score with gain 2^grade - 1, queries averaged).
Prints a markdown table; --write-md replaces the table between the ranking
markers in BENCHMARKS.md.

    python benches/python/ranking_compare.py --reps 3 --write-md BENCHMARKS.md
"""

import argparse
import os
import time

import lightgbm as lgb
import numpy as np
import xgboost as xgb
from _report import cpu_model, write_between_markers
from objectives_compare import head_commit
from sklearn.metrics import ndcg_score

from rgbm_rs import RGBMRanker

ROUNDS = 200


def queries(n_queries, seed, p=30):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(10, 91, n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, p))
    shift = np.repeat(rng.normal(scale=0.5, size=n_queries), sizes)
    s = (
        X[:, 0]
        + 0.7 * X[:, 1] * X[:, 2]
        - 0.5 * np.abs(X[:, 3])
        + 0.5 * np.sin(2 * X[:, 4])
        + 0.4 * (X[:, 5] > 0.5) * X[:, 6]
        + 0.3 * X[:, 7] ** 2
        + shift
        + rng.normal(scale=0.7, size=n)
    )
    y = np.digitize(s, [1.0, 1.8, 2.5, 3.2])
    return X, y, sizes


def mean_ndcg(y, scores, sizes, k):
    out, start = [], 0
    for q in sizes:
        yy, ss = y[start : start + q], scores[start : start + q]
        start += q
        out.append(ndcg_score([2.0**yy - 1], [ss], k=k) if yy.max() > 0 else 1.0)
    return float(np.mean(out))


def model(name):
    if name == "rgbm_rs":
        return RGBMRanker(n_estimators=ROUNDS, max_depth=None, max_leaves=31, n_jobs=2, random_state=0)
    if name == "LightGBM":
        return lgb.LGBMRanker(n_estimators=ROUNDS, num_leaves=31, n_jobs=2, verbose=-1, random_state=0)
    return xgb.XGBRanker(
        n_estimators=ROUNDS,
        objective="rank:ndcg",
        tree_method="hist",
        grow_policy="lossguide",
        max_leaves=31,
        max_depth=0,
        min_child_weight=0.0,
        learning_rate=0.1,
        n_jobs=2,
        random_state=0,
    )


def fit(name, est, X, y, sizes):
    if name == "XGBoost":
        return est.fit(X, y, qid=np.repeat(np.arange(len(sizes)), sizes))
    return est.fit(X, y, group=sizes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    X, y, g = queries(3000, 0)
    Xt, yt, gt = queries(1000, 1)
    names = ["rgbm_rs", "LightGBM", "XGBoost"]
    times = {n: [] for n in names}
    scores = {}
    load_before = os.getloadavg()[0]
    for _ in range(args.reps):
        for name in names:
            est = model(name)
            t = time.perf_counter()
            fit(name, est, X, y, g)
            times[name].append(time.perf_counter() - t)
            scores[name] = est.predict(Xt)
    med = {n: float(np.median(v)) for n, v in times.items()}
    rows = [
        "| library | test NDCG@5 | test NDCG@10 | fit (s) | fit / LightGBM |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in names:
        rows.append(
            f"| {name} | {mean_ndcg(yt, scores[name], gt, 5):.4f} | {mean_ndcg(yt, scores[name], gt, 10):.4f} "
            f"| {med[name]:.2f} | {med[name] / med['LightGBM']:.2f} |"
        )
    header = (
        f"- Machine: {cpu_model()}, {os.cpu_count()} CPUs; commit {head_commit()}; LightGBM {lgb.__version__}, "
        f"XGBoost {xgb.__version__}; {len(y):,} training rows in {len(g):,} queries, {len(yt):,} test rows in "
        f"{len(gt):,} queries, 30 features; {ROUNDS} rounds, medians of {args.reps} interleaved fits; run "
        f"{time.strftime('%Y-%m-%d', time.gmtime())}; load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after (2 = both CPUs busy).\n"
        f"- Command: `python benches/python/ranking_compare.py --reps {args.reps} --write-md BENCHMARKS.md`\n\n"
    )
    table = header + "\n".join(rows)
    print(table)
    if args.write_md:
        write_between_markers(args.write_md, "ranking", table)


if __name__ == "__main__":
    main()
