"""Fit time on a busy machine: rgbm_rs, LightGBM and XGBoost next to a CPU-bound process.

Each library fits the same 200,000 x 28 Higgs-like binary task (compare.py's generator)
for 100 rounds of 31-leaf trees with 2 threads, once on a quiet machine and once while
``--competitors`` other processes each spin one core. Every fit runs in a fresh child
process (thread pools start cold each time, as in a new script); the competitors start
before the child and stop after it. Repetitions interleave libraries and conditions; the
table reports medians and the slow-down busy / quiet per library.

Usage::

    python benches/python/busy_machine.py --reps 5 --write-md BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _report  # noqa: E402

ROWS, ROUNDS, THREADS = 200_000, 100, 2
LIBS = {"rgbm": "rgbm_rs", "lightgbm": "LightGBM", "xgboost": "XGBoost (hist, lossguide)"}
MARKER = "busy_machine"
SPIN = "import time\nwhile True:\n    time.perf_counter()\n"


def child(lib: str, data: str) -> None:
    """Fit ``lib`` on the cached data; print the fit seconds as JSON."""
    os.environ["RGBM_COMPARE_THREADS"] = str(THREADS)
    import compare

    X, y = np.load(data + "_X.npy"), np.load(data + "_y.npy")
    model = compare.make_estimator(lib, "binary", ROUNDS)
    t0 = time.perf_counter()
    model.fit(X, y)
    print(json.dumps({"fit": time.perf_counter() - t0}))


def run_fit(lib: str, data: str, competitors: int, timeout: float) -> float | None:
    """One fit in a child process with ``competitors`` spinning processes beside it."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS"):
        env[var] = str(THREADS)
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(competitors)]
    try:
        if spinners:
            time.sleep(0.5)  # the competitors are running before the fit starts
        out = subprocess.run(
            [sys.executable, __file__, "--child", lib, "--data", data],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    finally:
        for s in spinners:
            s.kill()
            s.wait()
    if out.returncode != 0:
        raise SystemExit(f"{lib} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])["fit"]


def table(times: dict, libs: list, args, wall: float) -> str:
    import lightgbm
    import xgboost

    import rgbm_rs

    med = {k: statistics.median(v) if v and None not in v else None for k, v in times.items()}
    lines = [
        "- Command: `python benches/python/busy_machine.py "
        + f"--reps {args.reps} --competitors {args.competitors} --write-md BENCHMARKS.md`",
        f"- Machine: {_report.cpu_model()}, {os.cpu_count()} CPUs; commit {_report.git_commit()}; "
        f"rgbm_rs {rgbm_rs.__version__}, LightGBM {lightgbm.__version__}, XGBoost {xgboost.__version__}; "
        f"Python {platform.python_version()}",
        f"- Task: {ROWS:,} x 28 Higgs-like binary rows (compare.py's generator), {ROUNDS} rounds of "
        f"31-leaf trees, {THREADS} threads (`n_jobs={THREADS}`, OMP_NUM_THREADS={THREADS}); "
        f"busy = {args.competitors} other process(es) each spinning one core; every fit in a fresh "
        f"process; medians of {args.reps} interleaved repetitions; run "
        f"{datetime.now(timezone.utc):%Y-%m-%d}, {wall / 60:.0f} min in all; a fit cut at "
        f"{args.timeout:.0f} s shows as >{args.timeout:.0f}.",
        "",
        "| library | quiet fit (s) | busy fit (s) | busy / quiet |",
        "|---|---|---|---|",
    ]
    for lib in libs:
        label = LIBS[lib]
        q, b = med[(lib, "quiet")], med[(lib, "busy")]
        fq = f"{q:.2f}" if q is not None else f">{args.timeout:.0f}"
        fb = f"{b:.2f}" if b is not None else f">{args.timeout:.0f}"
        ratio = f"{b / q:.2f}" if q and b else (f">{args.timeout / q:.1f}" if q else "-")
        lines.append(f"| {label} | {fq} | {fb} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--competitors", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.data)
        return
    import compare

    data = os.path.join(str(compare.OUT_DIR), f"busy_higgs_{ROWS}")
    if not os.path.exists(data + "_y.npy"):
        os.makedirs(compare.OUT_DIR, exist_ok=True)
        X, y = compare.generate_higgs(ROWS, compare.HIGGS_SEED)
        np.save(data + "_X.npy", X)
        np.save(data + "_y.npy", y)
    libs = args.libs.split(",")
    times: dict = {(lib, c): [] for lib in LIBS for c in ("quiet", "busy")}
    start = time.perf_counter()
    for rep in range(args.reps):
        for cond, competitors in (("quiet", 0), ("busy", args.competitors)):
            for lib in libs:
                t = run_fit(lib, data, competitors, args.timeout)
                times[(lib, cond)].append(t)
                print(f"rep {rep} {cond:5s} {lib:9s} {t if t is None else round(t, 2)} s", flush=True)
    _report.publish(table(times, libs, args, time.perf_counter() - start), args.write_md, MARKER)


if __name__ == "__main__":
    main()
