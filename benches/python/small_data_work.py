"""Work per fit on small data: leaves grown and CPU time per leaf, rgbm_rs against LightGBM and XGBoost.

Breast cancer and digits (75 % to fit, stratified, seed 0), 200 rounds of
31-leaf best-first trees, learning rate 0.1, one thread, each library at
min_child_weight 1e-3 (LightGBM's default) and 1 (XGBoost's and rgbm_rs's),
everything else at the library's defaults. Reported: the leaves grown in
the fit, the median CPU time of ``--reps`` interleaved fits (process time:
one thread, so another process on the machine changes it less than wall
time) and its ratio to the leaves, and the test accuracy. Separates how
much work each library decides to do from how fast it does it.

Usage::

    python benches/python/small_data_work.py --reps 5 --write-md BENCHMARKS.md
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _report  # noqa: E402

MARKER = "small_data_work"
ROUNDS, LEAVES = 200, 31
LIBS = {"rgbm": "rgbm_rs", "lightgbm": "LightGBM", "xgboost": "XGBoost"}


def make(lib, mcw):
    if lib == "rgbm":
        from rgbm_rs import RGBMClassifier

        return RGBMClassifier(
            n_estimators=ROUNDS, max_leaves=LEAVES, max_depth=None, min_child_weight=mcw, n_jobs=1, random_state=0
        )
    if lib == "lightgbm":
        import lightgbm

        return lightgbm.LGBMClassifier(
            n_estimators=ROUNDS, num_leaves=LEAVES, min_child_weight=mcw, verbose=-1, n_jobs=1, random_state=0
        )
    import xgboost

    return xgboost.XGBClassifier(
        n_estimators=ROUNDS,
        max_leaves=LEAVES,
        max_depth=0,
        grow_policy="lossguide",
        tree_method="hist",
        min_child_weight=mcw,
        n_jobs=1,
        random_state=0,
    )


def leaves(lib, m):
    if lib == "rgbm":
        return sum(len(t["leaf_value"]) for t in json.loads(m._booster.to_json())["trees"])
    if lib == "lightgbm":
        return sum(t["num_leaves"] for t in m.booster_.dump_model()["tree_info"])
    return int((m.get_booster().trees_to_dataframe().Feature == "Leaf").sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.model_selection import train_test_split

    start = time.perf_counter()
    load0 = os.getloadavg()[0]
    rows = []
    for name, loader in (("breast-cancer", load_breast_cancer), ("digits", load_digits)):
        X, y = loader(return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
        cfgs = [(lib, mcw) for mcw in (1e-3, 1.0) for lib in LIBS]
        info = {}
        for c in cfgs:  # warm-up, leaves and accuracy
            m = make(*c).fit(Xtr, ytr)
            info[c] = (leaves(c[0], m), m.score(Xte, yte))
        cpu = {c: [] for c in cfgs}
        for _ in range(args.reps):
            for c in cfgs:
                m = make(*c)
                t0 = time.process_time()
                m.fit(Xtr, ytr)
                cpu[c].append(time.process_time() - t0)
        for c in cfgs:
            t = statistics.median(cpu[c])
            n, acc = info[c]
            rows.append(
                f"| {name} | {LIBS[c[0]]} | {c[1]:g} | {n:,} | {t * 1000:.1f} | {t / n * 1e6:.1f} | {acc:.4f} |"
            )
            print(rows[-1], flush=True)
    table = "\n".join(
        [
            f"- Command: `python benches/python/small_data_work.py --reps {args.reps} --write-md BENCHMARKS.md`",
            f"- Machine: {_report.cpu_model()}, {os.cpu_count()} CPUs; commit {_report.git_commit()}; "
            f"Python {platform.python_version()}; run {datetime.now(timezone.utc):%Y-%m-%d}, "
            f"{time.perf_counter() - start:.0f} s; load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after",
            f"- {ROUNDS} rounds of {LEAVES}-leaf best-first trees, 1 thread, medians of {args.reps} interleaved fits",
            "",
            "| data | library | min_child_weight | leaves grown | CPU per fit (ms) | CPU per leaf (µs) | test accuracy |",
            "|---|---|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    _report.publish(table, args.write_md, MARKER)


if __name__ == "__main__":
    main()
