"""Prediction time of models with category-set splits, against the same
model shape on ordinal codes and against LightGBM and XGBoost.

Datasets:

* ``adult``: UCI Adult from the data folder (its own train / test split,
  32,561 / 16,281 rows), 6 numeric and 8 categorical columns read as pandas
  ``category`` with the training rows' categories, ``?`` = missing.
* ``synthetic``: generated (seeded): 3 categorical columns of 10, 100 and
  1,000 Zipf-distributed categories (the frequent ones at random codes), each category with a random effect on
  the log-odds, and 5 normal numeric columns; ``--rows`` training rows
  (1,000,000) and as many other rows to predict, 1 % of the categories
  missing.

Every library fits ``--rounds`` (300) rounds of 31-leaf best-first trees
(learning rate 0.1, 255 bins, 20 rows per leaf, 2 threads):

* rgbm_rs "category sets": the category columns as they are (the default
  ``categorical_features="from_dtype"``);
* rgbm_rs "ordinal codes": the same columns as their codes (float, missing
  NaN) with ``categorical_features=None``;
* LightGBM with the category columns as ``categorical_feature`` (its sklearn
  API reads pandas categories);
* XGBoost ``hist`` with ``enable_categorical=True`` and ``max_leaves=31``
  grown loss-guided.

Each model's ``predict_proba`` of the prediction rows is timed at 1 and 2
threads, all calls interleaved within each of ``--reps`` repetitions,
medians reported. rgbm_rs predicts with the ``n_jobs`` of its fit, so the
1-thread rgbm_rs models are the fitted ones reloaded with ``n_jobs=1``
(models are the same at every thread count); LightGBM and XGBoost are set
to 1 thread with ``set_params``. Prints a markdown table; ``--write-md``
replaces the table between the categorical_predict markers.

    python benches/python/categorical_predict.py --reps 5 --write-md BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _report import adult, cpu_model, git_commit, publish  # noqa: E402


def synthetic(n, seed=0):
    """n training rows and n other rows: 3 category columns (10, 100 and
    1,000 Zipf-distributed levels), 5 numeric ones, a logistic label."""
    rng = np.random.default_rng(seed)
    rows = 2 * n
    cols = {}
    logit = np.zeros(rows)
    for name, k in [("cat_10", 10), ("cat_100", 100), ("cat_1000", 1000)]:
        p = 1.0 / np.arange(1, k + 1) ** 1.1
        # Frequent levels spread over all codes, as in real data.
        codes = rng.permutation(k)[rng.choice(k, size=rows, p=p / p.sum())]
        logit += rng.normal(scale=1.0, size=k)[codes]
        codes[rng.random(rows) < 0.01] = -1
        cols[name] = pd.Categorical.from_codes(codes, categories=range(k))
    for j in range(5):
        x = rng.normal(size=rows)
        cols[f"num_{j}"] = x
        logit += 0.6 * np.sin(2 * x) if j % 2 else 0.4 * x
    y = (rng.random(rows) < 1 / (1 + np.exp(-(logit - logit.mean())))).astype(int)
    X = pd.DataFrame(cols)
    return X.iloc[:n].reset_index(drop=True), y[:n], X.iloc[n:].reset_index(drop=True)


def ordinal(X):
    """The frame with every category column as its codes (float, NaN for missing)."""
    X = X.copy()
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            X[c] = X[c].cat.codes.astype(float).replace(-1.0, np.nan)
    return X


ROUNDS_DEFAULT = 300


def fit_all(Xtr, ytr, rounds, leaves):
    """The four models: rgbm_rs on categories and on their codes, LightGBM, XGBoost."""
    import lightgbm
    import xgboost

    from rgbm_rs import RGBMClassifier

    def rgbm(categorical_features):
        return RGBMClassifier(
            n_estimators=rounds,
            learning_rate=0.1,
            max_depth=None,
            max_leaves=leaves,
            max_bins=255,
            min_samples_leaf=20,
            categorical_features=categorical_features,
            random_state=0,
            n_jobs=2,
        )

    fitted = {}
    t = time.perf_counter()
    fitted["rgbm_rs sets"] = rgbm("from_dtype").fit(Xtr, ytr)
    fitted["rgbm_rs codes"] = rgbm(None).fit(ordinal(Xtr), ytr)
    fitted["LightGBM"] = lightgbm.LGBMClassifier(
        n_estimators=rounds,
        learning_rate=0.1,
        num_leaves=leaves,
        max_depth=-1,
        max_bin=255,
        min_child_samples=20,
        random_state=0,
        n_jobs=2,
        verbose=-1,
    ).fit(Xtr, ytr)
    fitted["XGBoost"] = xgboost.XGBClassifier(
        n_estimators=rounds,
        learning_rate=0.1,
        tree_method="hist",
        grow_policy="lossguide",
        max_leaves=leaves,
        max_depth=0,
        max_bin=255,
        enable_categorical=True,
        random_state=0,
        n_jobs=2,
    ).fit(Xtr, ytr)
    print(f"  fitted in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return fitted


def with_threads(name, est, n):
    """`est` predicting on n threads. rgbm_rs predicts with its fit's n_jobs:
    the same model (trees do not depend on the thread count) reloaded with
    n_jobs=n."""
    if name.startswith("rgbm_rs"):
        from rgbm_rs import _core

        model = json.loads(est.get_booster().to_json())
        model["params"]["n_jobs"] = n
        twin = copy.copy(est)
        twin._booster = _core.Booster.from_json(json.dumps(model))
        return twin
    return copy.deepcopy(est).set_params(n_jobs=n)


def median_times(calls, reps):
    """Median seconds of each call, the calls interleaved within every repetition."""
    for call in calls.values():
        call()
    times = {key: [] for key in calls}
    for _ in range(reps):
        for key, call in calls.items():
            t = time.perf_counter()
            call()
            times[key].append(time.perf_counter() - t)
    return {key: float(np.median(v)) for key, v in times.items()}


def measure(label, Xtr, ytr, Xte, rounds, leaves, reps):
    fitted = fit_all(Xtr, ytr, rounds, leaves)
    inputs = {name: ordinal(Xte) if name == "rgbm_rs codes" else Xte for name in fitted}
    calls, check = {}, {}
    for threads in (1, 2):
        for name, est in fitted.items():
            twin = with_threads(name, est, threads)
            calls[name, threads] = lambda e=twin, x=inputs[name]: e.predict_proba(x)
            check[name, threads] = calls[name, threads]()
    for name in fitted:
        # The thread count changes no prediction (rgbm_rs: bit for bit).
        a, b = check[name, 1], check[name, 2]
        same = np.array_equal(a, b) if name.startswith("rgbm_rs") else np.allclose(a, b, rtol=0, atol=1e-12)
        if not same:
            raise SystemExit(f"{label}, {name}: 1 and 2 threads predict differently")
    t = median_times(calls, reps)
    rows = []
    for threads in (1, 2):
        ms = {name: 1e3 * t[name, threads] for name in fitted}
        sets = ms["rgbm_rs sets"]
        rows.append(
            f"| {label} | {threads} | {sets:.1f} | {ms['rgbm_rs codes']:.1f} | {sets / ms['rgbm_rs codes']:.2f}× "
            f"| {ms['LightGBM']:.1f} | {ms['XGBoost']:.1f} | {sets / ms['LightGBM']:.2f}× "
            f"| {sets / ms['XGBoost']:.2f}× |"
        )
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=ROUNDS_DEFAULT)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--rows", type=int, default=1_000_000, help="synthetic training rows (as many predicted)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sets", default="adult,synthetic", help="comma-separated: adult, synthetic")
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    import warnings

    import lightgbm
    import xgboost

    sets = args.sets.split(",")
    unknown = set(sets) - {"adult", "synthetic"}
    if unknown:
        raise SystemExit(f"unknown --sets {sorted(unknown)}")
    load_before = os.getloadavg()[0]
    rows = []
    with warnings.catch_warnings():
        # cat_1000's rarest levels share the missing bin (255 bins): said once here.
        warnings.filterwarnings("ignore", message="categorical feature 'cat_1000' has 1000 categories")
        if "adult" in sets:
            Xtr, ytr, Xte, _ = adult()
            rows += measure(f"adult ({len(Xte):,} rows)", Xtr, ytr, Xte, args.rounds, args.leaves, args.reps)
        if "synthetic" in sets:
            Xtr, ytr, Xte = synthetic(args.rows)
            rows += measure(f"synthetic ({len(Xte):,} rows)", Xtr, ytr, Xte, args.rounds, args.leaves, args.reps)
    command = "python benches/python/categorical_predict.py" + "".join(
        f" --{k} {v}"
        for k, v in [("rounds", args.rounds), ("leaves", args.leaves), ("rows", args.rows), ("reps", args.reps)]
        if v != ap.get_default(k)
    )
    if args.sets != ap.get_default("sets"):
        command += f" --sets {args.sets}"
    header = (
        f"- Machine: {cpu_model()}, {os.cpu_count()} CPUs, shared (load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after; 2 = both CPUs busy); commit {git_commit()}; run "
        f"{time.strftime('%Y-%m-%d', time.gmtime())}; LightGBM {lightgbm.__version__}, XGBoost {xgboost.__version__}, "
        f"pandas {pd.__version__}.\n"
        f"- {args.rounds} rounds × {args.leaves} leaves; `predict_proba` of the frame, medians of {args.reps} "
        "interleaved calls (ms).\n"
        f"- Command: `{command} --write-md BENCHMARKS.md`\n\n"
        "| data | threads | rgbm_rs sets | rgbm_rs codes | sets / codes | LightGBM | XGBoost "
        "| rgbm_rs sets / LightGBM | rgbm_rs sets / XGBoost |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    publish(header + "\n".join(rows), args.write_md, "categorical_predict")


if __name__ == "__main__":
    main()
