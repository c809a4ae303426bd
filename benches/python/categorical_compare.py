"""Categorical features: native category-set splits against one-hot and
ordinal codes, in rgbm_rs and LightGBM.

Datasets:

* ``adult``: UCI Adult from ``../shared/data/adult`` (its own train / test
  split, 32,561 / 16,281 rows), 6 numeric and 8 categorical columns
  (``native-country`` has 41 values), ``?`` = missing.
* ``synthetic``: the data folder holds no real data set with high-cardinality
  categories, so this one is generated (seeded): 3 categorical columns of
  1,000, 300 and 50 Zipf-distributed categories, each category with a random
  effect on the log-odds, plus 5 normal numeric columns with a non-linear
  effect; 100,000 training and 50,000 test rows.

Settings for every method: 2 threads, 255 bins, 31 leaves best-first,
learning rate 0.1, ``--rounds`` rounds, at least 20 rows per leaf, the
categorical parameters at their defaults (LightGBM's and ours are the same:
max_cat_to_onehot 4, max_cat_threshold 32, cat_smooth 10,
min_data_per_group 100). "one-hot" expands every categorical column into
indicator columns (pandas ``get_dummies``; missing = all zeros); "ordinal"
(rgbm_rs only) uses the category codes as numbers. Fit time is the median
of ``--reps`` fits in this process; accuracy and log-loss are on the test
rows. Prints a markdown table.

    python benches/python/categorical_compare.py --rounds 300 --reps 3
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _report  # noqa: E402
import pandas as pd
from sklearn.metrics import accuracy_score, log_loss


def synthetic(n_train=100_000, n_test=50_000, seed=0):
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    cols = {}
    logit = np.zeros(n)
    for name, k in [("cat_a", 1000), ("cat_b", 300), ("cat_c", 50)]:
        p = 1.0 / np.arange(1, k + 1) ** 1.1
        codes = rng.choice(k, size=n, p=p / p.sum())
        logit += rng.normal(scale=1.0, size=k)[codes]
        cols[name] = pd.Categorical(codes, categories=range(k))
    for j in range(5):
        x = rng.normal(size=n)
        cols[f"num_{j}"] = x
        logit += 0.6 * np.sin(2 * x) if j % 2 else 0.4 * x
    y = (rng.random(n) < 1 / (1 + np.exp(-(logit - logit.mean())))).astype(int)
    X = pd.DataFrame(cols)
    return X.iloc[:n_train].reset_index(drop=True), y[:n_train], X.iloc[n_train:].reset_index(drop=True), y[n_train:]


def one_hot(Xtr, Xte):
    cats = [c for c in Xtr.columns if isinstance(Xtr[c].dtype, pd.CategoricalDtype)]
    return (
        pd.get_dummies(Xtr, columns=cats, dtype=np.float32).astype(np.float64),
        pd.get_dummies(Xte, columns=cats, dtype=np.float32).astype(np.float64),
    )


def ordinal(X):
    X = X.copy()
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            X[c] = X[c].cat.codes.replace(-1, np.nan).astype(float)
    return X


def rgbm(native, rounds):
    from rgbm_rs import RGBMClassifier

    return RGBMClassifier(
        n_estimators=rounds,
        learning_rate=0.1,
        max_depth=None,
        max_leaves=31,
        max_bins=255,
        min_samples_leaf=20,
        categorical_features="auto" if native else None,
        random_state=0,
        n_jobs=2,
    )


def lgbm(rounds):
    import lightgbm

    return lightgbm.LGBMClassifier(
        n_estimators=rounds,
        learning_rate=0.1,
        num_leaves=31,
        max_depth=-1,
        max_bin=255,
        min_child_samples=20,
        reg_lambda=0.0,
        subsample=1.0,
        colsample_bytree=1.0,
        random_state=0,
        n_jobs=2,
        verbose=-1,
    )


def measure(make, Xtr, ytr, Xte, yte, reps):
    times = []
    for _ in range(reps):
        est = make()
        t0 = time.perf_counter()
        est.fit(Xtr, ytr)
        times.append(time.perf_counter() - t0)
    p = est.predict_proba(Xte)[:, 1]
    return float(np.median(times)), accuracy_score(yte, p > 0.5), log_loss(yte, np.clip(p, 1e-15, 1 - 1e-15))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    import lightgbm

    rows = []
    for name, load in [("adult", _report.adult), ("synthetic", synthetic)]:
        Xtr, ytr, Xte, yte = load()
        Htr, Hte = one_hot(Xtr, Xte)
        Otr, Ote = ordinal(Xtr), ordinal(Xte)
        methods = [
            ("rgbm_rs native", lambda: rgbm(True, args.rounds), Xtr, Xte),
            ("rgbm_rs one-hot", lambda: rgbm(False, args.rounds), Htr, Hte),
            ("rgbm_rs ordinal", lambda: rgbm(False, args.rounds), Otr, Ote),
            ("LightGBM native", lambda: lgbm(args.rounds), Xtr, Xte),
            ("LightGBM one-hot", lambda: lgbm(args.rounds), Htr, Hte),
        ]
        for label, make, a, b in methods:
            fit_s, acc, ll = measure(make, a, ytr, b, yte, args.reps)
            rows.append(
                f"| {name} ({a.shape[0]:,} / {b.shape[0]:,}, {a.shape[1]} columns) | {label} "
                f"| {fit_s:.2f} | {100 * acc:.2f} % | {ll:.4f} |"
            )
    print(
        f"rounds {args.rounds}, medians of {args.reps} fits; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs; LightGBM {lightgbm.__version__}\n"
    )
    print("| data (train / test, input columns) | method | fit (s) | accuracy | log-loss |")
    print("|---|---|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
