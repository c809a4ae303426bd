"""The regression objectives against LightGBM on the same data.

Poisson and Tweedie on synthetic counts / claim amounts with a known log
mean, Gamma, absolute error and quantiles on California housing (from
../shared/data, next to the repository). Both libraries: 31 leaves
best-first, learning rate 0.1, 20 rows per leaf, 255 bins, 2 threads;
fits interleaved, median fit time of --reps repetitions. Prints a markdown
table; --write-md replaces the table between the objectives markers in
BENCHMARKS.md.

    python benches/python/objectives_compare.py --reps 3 --write-md BENCHMARKS.md
"""

import argparse
import os
import subprocess
import time

import lightgbm as lgb
import numpy as np
from _report import DATA_DIR, cpu_model, write_between_markers
from sklearn.metrics import mean_pinball_loss, mean_tweedie_deviance
from sklearn.model_selection import train_test_split

from rgbm_rs import RGBMRegressor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
DATA = os.path.join(DATA_DIR, "california-housing", "california_housing.csv")
ROUNDS = 300


def synthetic(kind, n=100_000, seed=0):
    r = np.random.default_rng(seed)
    x = r.normal(size=(n, 8))
    mu = np.exp(0.5 * x[:, 0] - 0.3 * x[:, 1] + 0.2 * x[:, 2] * x[:, 3] + 0.1 * np.sin(3 * x[:, 4]))
    if kind == "poisson":
        y = r.poisson(mu).astype(float)
    else:  # compound Poisson-Gamma claim amounts, exact zeros
        k = r.poisson(0.8 * mu)
        y = np.where(k > 0, r.gamma(np.maximum(1.5 * k, 1e-12), 0.8), 0.0)
    return train_test_split(x, y, test_size=0.5, random_state=0)


def california():
    table = np.loadtxt(DATA, delimiter=",", skiprows=1)
    return train_test_split(table[:, :-1], table[:, -1], test_size=0.25, random_state=0)


def cases():
    cal = california() if os.path.exists(DATA) else None
    yield (
        "poisson (synthetic 50k/50k)",
        synthetic("poisson"),
        {"loss": "poisson"},
        {"objective": "poisson"},
        "Poisson deviance",
        lambda y, p: mean_tweedie_deviance(y, p, power=1),
    )
    yield (
        "tweedie ρ=1.5 (synthetic 50k/50k)",
        synthetic("tweedie"),
        {"loss": "tweedie", "tweedie_variance_power": 1.5},
        {"objective": "tweedie", "tweedie_variance_power": 1.5},
        "Tweedie deviance",
        lambda y, p: mean_tweedie_deviance(y, p, power=1.5),
    )
    if cal is None:
        return
    yield (
        "gamma (California housing)",
        cal,
        {"loss": "gamma"},
        {"objective": "gamma"},
        "Gamma deviance",
        lambda y, p: mean_tweedie_deviance(y, p, power=2),
    )
    yield (
        "absolute_error (California housing)",
        cal,
        {"loss": "absolute_error"},
        {"objective": "l1"},
        "MAE",
        lambda y, p: float(np.mean(np.abs(y - p))),
    )
    for alpha in (0.1, 0.9):
        yield (
            f"quantile α={alpha} (California housing)",
            cal,
            {"loss": "quantile", "alpha": alpha},
            {"objective": "quantile", "alpha": alpha},
            "pinball loss / coverage",
            (lambda a: lambda y, p: f"{mean_pinball_loss(y, p, alpha=a):.4f} / {np.mean(y <= p):.3f}")(alpha),
        )


def fit_both(data, ours_kw, theirs_kw, reps):
    x_tr, x_te, y_tr, y_te = data
    times = {"rgbm_rs": [], "LightGBM": []}
    preds = {}
    for _ in range(reps):
        for name in times:
            if name == "rgbm_rs":
                model = RGBMRegressor(
                    n_estimators=ROUNDS, max_depth=None, max_leaves=31, n_jobs=2, random_state=0, **ours_kw
                )
            else:
                model = lgb.LGBMRegressor(
                    n_estimators=ROUNDS, num_leaves=31, n_jobs=2, verbose=-1, random_state=0, **theirs_kw
                )
            t = time.perf_counter()
            model.fit(x_tr, y_tr)
            times[name].append(time.perf_counter() - t)
            preds[name] = model.predict(x_te)
    return {k: float(np.median(v)) for k, v in times.items()}, preds, y_te


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    rows = ["| data | measure | rgbm_rs | LightGBM | rgbm_rs / LightGBM fit time |", "|---|---|---:|---:|---:|"]
    for name, data, ours_kw, theirs_kw, measure, score in cases():
        times, preds, y_te = fit_both(data, ours_kw, theirs_kw, args.reps)
        s = {k: score(y_te, p) for k, p in preds.items()}
        fmt = (lambda v: v) if isinstance(s["rgbm_rs"], str) else (lambda v: f"{v:.4f}")
        rows.append(f"| {name} | {measure} | {fmt(s['rgbm_rs'])} | {fmt(s['LightGBM'])} | {time_cell(times)} |")
        print(rows[-1], flush=True)
    commit = head_commit()
    header = (
        f"- Machine: {cpu_model()}, {os.cpu_count()} CPUs; "
        f"commit {commit}; LightGBM {lgb.__version__}; {ROUNDS} rounds, medians of {args.reps} interleaved "
        f"fits; run {time.strftime('%Y-%m-%d', time.gmtime())}; load average "
        f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after (2 = both CPUs busy).\n"
        "- Command: `python benches/python/objectives_compare.py --reps "
        f"{args.reps} --write-md BENCHMARKS.md`\n\n"
    )
    table = header + "\n".join(rows)
    print(table)
    if args.write_md:
        write_between_markers(args.write_md, "objectives", table)


def head_commit():
    """The repository's current commit, short form."""
    return subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()


def time_cell(times):
    """Median fit times of both libraries and their ratio, for a table cell."""
    return f"{times['rgbm_rs']:.2f} s / {times['LightGBM']:.2f} s = {times['rgbm_rs'] / times['LightGBM']:.2f}×"


if __name__ == "__main__":
    main()
