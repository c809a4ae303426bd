"""Fit time on small and multiclass data: rgbm_rs against LightGBM (and XGBoost), in process.

The fits people run by the thousand in a grid search: scikit-learn-sized sets, 200 rounds of
31-leaf best-first trees, learning rate 0.1, at most 20 rows per leaf... the same shape for
every library, 2 threads. Each library fits once to warm up, then the repetitions interleave
libraries; the table gives the median fit time, the ratio to LightGBM, and the test metric
(accuracy or R^2 on a fixed 25 % split) so equal accuracy can be checked.

With ``--libs rgbm,rgbm-quant,lightgbm,lightgbm-quant`` the table (its own BENCHMARKS.md
markers, ``small_data_quantized``) adds both libraries' quantized training
(``use_quantized_grad=True``, everything else at its default).

Usage::

    python benches/python/small_data_compare.py --reps 7 --write-md BENCHMARKS.md
    python benches/python/small_data_compare.py --reps 5 --libs rgbm,rgbm-quant,lightgbm,lightgbm-quant --write-md BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import datetime, timezone

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _report  # noqa: E402

DATA = _report.DATA_DIR
ROUNDS, LEAVES, LR, MIN_LEAF, BINS = 200, 31, 0.1, 20, 255
MARKER = "small_data"
LABELS = {
    "rgbm": "rgbm_rs",
    "lightgbm": "LightGBM",
    "xgboost": "XGBoost",
    "rgbm-quant": "rgbm_rs quantized",
    "lightgbm-quant": "LightGBM quantized",
}
QUANT = "-quant"


def load(name: str):
    """(X, y, task) of a data set; None when its files are missing."""
    from sklearn import datasets

    if name == "breast-cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True)
        return X, y, "binary"
    if name == "digits":
        X, y = datasets.load_digits(return_X_y=True)
        return X, y, "multiclass"
    if name == "diabetes":
        X, y = datasets.load_diabetes(return_X_y=True)
        return X, y, "regression"
    if name == "synthetic-20k":
        X, y = datasets.make_classification(n_samples=20_000, n_features=50, n_informative=20, random_state=0)
        return X, y, "binary"
    if name == "optdigits":
        path = os.path.join(DATA, "optdigits", "optdigits.tra")
        if not os.path.exists(path):
            return None
        a = np.loadtxt(path, delimiter=",")
        return a[:, :-1], a[:, -1].astype(int), "multiclass"
    if name == "covtype-10k":
        path = os.path.join(DATA, "covtype", "covtype_small.csv")
        if not os.path.exists(path):
            return None
        a = np.loadtxt(path, delimiter=",", skiprows=1)
        return a[:, :-1], a[:, -1].astype(int) - 1, "multiclass"
    if name == "a9a":
        path = os.path.join(DATA, "a9a", "a9a")
        if not os.path.exists(path):
            return None
        X, y = datasets.load_svmlight_file(path, n_features=123)
        return X.toarray(), (y > 0).astype(int), "binary"
    raise ValueError(name)


DATASETS = ("breast-cancer", "digits", "diabetes", "optdigits", "covtype-10k", "a9a", "synthetic-20k")


def estimator(lib: str, task: str, threads: int):
    quant = dict(use_quantized_grad=True) if lib.endswith(QUANT) else {}
    lib = lib.removesuffix(QUANT)
    if lib == "rgbm":
        import rgbm_rs

        cls = rgbm_rs.RGBMRegressor if task == "regression" else rgbm_rs.RGBMClassifier
        kw = dict(loss="squared") if task == "regression" else {}
        return cls(
            n_estimators=ROUNDS,
            learning_rate=LR,
            max_depth=None,
            max_leaves=LEAVES,
            min_samples_leaf=MIN_LEAF,
            max_bins=BINS,
            n_jobs=None if threads == os.cpu_count() else threads,
            random_state=0,
            **kw,
            **quant,
        )
    if lib == "lightgbm":
        import lightgbm

        cls = lightgbm.LGBMRegressor if task == "regression" else lightgbm.LGBMClassifier
        return cls(
            n_estimators=ROUNDS,
            learning_rate=LR,
            num_leaves=LEAVES,
            min_child_samples=MIN_LEAF,
            max_bin=BINS,
            n_jobs=threads,
            random_state=0,
            verbose=-1,
            **quant,
        )
    if lib == "xgboost":
        import xgboost

        cls = xgboost.XGBRegressor if task == "regression" else xgboost.XGBClassifier
        return cls(
            n_estimators=ROUNDS,
            learning_rate=LR,
            max_leaves=LEAVES,
            grow_policy="lossguide",
            max_depth=0,
            tree_method="hist",
            max_bin=BINS,
            n_jobs=threads,
            random_state=0,
        )
    raise ValueError(lib)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--libs", default="rgbm,lightgbm,xgboost")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    from sklearn.metrics import accuracy_score, r2_score
    from sklearn.model_selection import train_test_split

    libs = args.libs.split(",")
    rows = []
    load0 = os.getloadavg()[0]
    start = time.perf_counter()
    for name in args.datasets.split(","):
        loaded = load(name)
        if loaded is None:
            print(f"{name}: data missing, skipped")
            continue
        X, y, task = loaded
        Xtr, Xte, ytr, yte = train_test_split(
            X, y, test_size=0.25, random_state=0, stratify=None if task == "regression" else y
        )
        times = {lib: [] for lib in libs}
        score = {}
        for lib in libs:  # warm-up, and the test metric
            m = estimator(lib, task, args.threads).fit(Xtr, ytr)
            p = m.predict(Xte)
            score[lib] = r2_score(yte, p) if task == "regression" else accuracy_score(yte, p)
        for _ in range(args.reps):
            for lib in libs:
                m = estimator(lib, task, args.threads)
                t0 = time.perf_counter()
                m.fit(Xtr, ytr)
                times[lib].append(time.perf_counter() - t0)
        med = {lib: statistics.median(v) for lib, v in times.items()}
        rows.append((name, Xtr.shape, task, len(np.unique(y)) if task != "regression" else None, med, score))
        print(name, {k: round(v * 1000, 1) for k, v in med.items()}, score, flush=True)
    import lightgbm

    import rgbm_rs

    metric = {"regression": "R²", "binary": "accuracy", "multiclass": "accuracy"}
    quantized = any(lib.endswith(QUANT) for lib in libs)
    lib_arg = f"--libs {args.libs} " if quantized else ""
    lines = [
        f"- Command: `python benches/python/small_data_compare.py --reps {args.reps} --threads {args.threads} "
        f"{lib_arg}--write-md BENCHMARKS.md`",
        f"- Machine: {_report.cpu_model()}, {os.cpu_count()} CPUs; commit {_report.git_commit()}; rgbm_rs "
        f"{rgbm_rs.__version__}, LightGBM {lightgbm.__version__}; Python {platform.python_version()}",
        f"- {ROUNDS} rounds of {LEAVES}-leaf best-first trees, learning rate {LR}, at least {MIN_LEAF} rows "
        f"per leaf, {BINS} bins, {args.threads} threads (rgbm_rs: its default n_jobs=None when that is "
        f"every core); 75 % of the rows to fit, 25 % to score; medians of "
        f"{args.reps} interleaved in-process fits after one warm-up fit each; run "
        f"{datetime.now(timezone.utc):%Y-%m-%d}, {time.perf_counter() - start:.0f} s; load average "
        f"{load0:.1f} before, {os.getloadavg()[0]:.1f} after (2 = both CPUs busy).",
        "",
        "| data | rows x features | task | "
        + " | ".join(f"{LABELS[lib]} fit (ms)" for lib in libs)
        + " | "
        + " | ".join(f"{LABELS[lib]} / LightGBM" for lib in libs if lib != "lightgbm")
        + " | test metric ("
        + ", ".join(LABELS[lib] for lib in libs)
        + ") |",
        "|" + "---|" * (3 + len(libs) + len(libs) - 1 + 1),
    ]
    for name, shape, task, k, med, score in rows:
        kind = f"{k} classes" if task == "multiclass" else task
        ratios = [f"{med[lib] / med['lightgbm']:.2f}" for lib in libs if lib != "lightgbm" and "lightgbm" in med]
        lines.append(
            f"| {name} | {shape[0]:,} x {shape[1]} | {kind} | "
            + " | ".join(f"{med[lib] * 1000:.0f}" for lib in libs)
            + " | "
            + " | ".join(ratios)
            + f" | {metric[task]} "
            + " / ".join(f"{score[lib]:.3f}" for lib in libs)
            + " |"
        )
    # One table per thread count: the default run (2 threads) and --threads 1.
    marker = MARKER + ("_quantized" if quantized else "")
    marker = marker if args.threads == 2 else f"{marker}_{args.threads}_thread"
    _report.publish("\n".join(lines), args.write_md, marker)


if __name__ == "__main__":
    main()
