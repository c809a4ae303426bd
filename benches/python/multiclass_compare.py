"""Multiclass comparison of rgbm_rs against LightGBM on two real datasets.

Protocol
--------
Datasets (from ``../shared/data`` next to the repository, see its README.md):

* ``optdigits``: UCI optical digits, 10 classes, 64 integer features; the
  dataset's own split (``optdigits.tra`` 3,823 rows / ``optdigits.tes``
  1,797 rows).
* ``covtype``: the 10,000-row sample of UCI Covertype shipped in the data
  folder (``covtype_small.csv``), 7 classes, 54 features.  It has no split
  of its own, so a stratified 80/20 split seeded with ``random_state=0`` is
  used.  The sample is small enough to use whole (no further subsampling).

Both libraries get the same settings: 2 threads, 255 bins, learning rate
0.1, 31 leaves grown best-first with no depth limit, at least 20 rows and
a hessian sum of at least 1e-3 per leaf, no L2 penalty, no row or column
subsampling, ``--rounds`` boosting rounds (each round grows one tree per
class: softmax loss), ``random_state=0``.

Every (repetition, dataset, library) measurement runs in a fresh child
process (this file with ``--child``), which loads the data, imports the
library, then times ``fit`` and ``predict_proba`` on the test set and
computes test accuracy and multi-class log loss.  The child's peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) covers its whole life:
interpreter, library import, data and model.  The child prints one JSON line
that the parent collects.

The parent interleaves the libraries inside each repetition (the order is
rotated from one repetition to the next so neither library always runs
first), records the 1-minute load average just before starting each child,
and reports medians over ``--reps`` repetitions plus the rgbm_rs / LightGBM
ratio of median fit times.  The machine has 2 cores and is shared, so the
maximum load average seen is reported next to the results.

The load average alone cannot tell other users' work from this benchmark's
own back-to-back children, so each child also measures contention during
its fit: the CPU time the whole machine spent busy (``/proc/stat``, busy +
steal) minus the child's own CPU time, as a share of ``wall time x CPUs``.
Before every attempt the parent waits (up to ``--quiet-timeout`` seconds)
for a one-second window in which the machine is at most ``--max-others``
busy.  When the share measured during the fit still exceeds ``--max-others``
the parent waits ``--retry-pause`` seconds and repeats the measurement, at
most ``--retries`` times, keeping the least contended attempt; rows where
even that one was contended are flagged.  (OpenMP libraries such as LightGBM slow down by large factors when
another process takes one of the two cores, so unflagged contention would
dominate the comparison.)

The rgbm_rs package may be reinstalled by someone else while the benchmark
runs, so the parent copies the installed package to a temporary directory at
start (re-copying after 60 seconds if that copy does not import) and every
child imports rgbm_rs from that copy.  Each rgbm_rs child reports a hash of
the native module it imported, so a table that mixes builds would still be
flagged.  A child that fails is retried once after 60 seconds.

Usage (from the repository root)::

    python benches/python/multiclass_compare.py --reps 3 --write-md benches/results/multiclass.md
    python benches/python/multiclass_compare.py --reps 1 --rounds 20      # quick smoke test
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _report  # noqa: E402

DATA_DIR = Path(_report.DATA_DIR)

THREADS = 2
MAX_BINS = 255
LEARNING_RATE = 0.1
LEAVES = 31
MIN_LEAF_ROWS = 20
MIN_CHILD_WEIGHT = 1e-3
SEED = 0
TEST_FRACTION = 0.2

LIBRARIES = ("rgbm_rs", "LightGBM")
DATASETS = ("optdigits", "covtype")
RESULT_PREFIX = "@@result "
FAILURE_PAUSE_SECONDS = 60


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------


@dataclass
class Split:
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    description: str


def _read_optdigits(path: Path) -> tuple[np.ndarray, np.ndarray]:
    table = np.loadtxt(path, delimiter=",", dtype=np.float64)
    return table[:, :-1], table[:, -1].astype(np.int64)


def load_dataset(name: str) -> Split:
    """The train/test split of dataset ``name``."""
    if name == "optdigits":
        X_train, y_train = _read_optdigits(DATA_DIR / "optdigits" / "optdigits.tra")
        X_test, y_test = _read_optdigits(DATA_DIR / "optdigits" / "optdigits.tes")
        return Split(X_train, y_train, X_test, y_test, "own split (optdigits.tra / optdigits.tes)")
    if name == "covtype":
        from sklearn.model_selection import train_test_split

        table = np.loadtxt(DATA_DIR / "covtype" / "covtype_small.csv", delimiter=",", skiprows=1, dtype=np.float64)
        X, y = table[:, :-1], table[:, -1].astype(np.int64)
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=TEST_FRACTION, stratify=y, random_state=SEED
        )
        return Split(
            X_train,
            y_train,
            X_test,
            y_test,
            "10k-row sample (covtype_small.csv), used whole; stratified 80/20 split, seed 0",
        )
    raise ValueError(f"unknown dataset {name!r}")


# --------------------------------------------------------------------------
# Estimators
# --------------------------------------------------------------------------


def make_estimator(lib: str, rounds: int):
    """A classifier for ``lib`` with the shared settings (imported lazily)."""
    if lib == "rgbm_rs":
        from rgbm_rs import RGBMClassifier

        return RGBMClassifier(
            n_estimators=rounds,
            learning_rate=LEARNING_RATE,
            max_leaves=LEAVES,
            max_depth=None,
            max_bins=MAX_BINS,
            min_samples_leaf=MIN_LEAF_ROWS,
            min_child_weight=MIN_CHILD_WEIGHT,
            reg_lambda=0.0,
            subsample=1.0,
            n_jobs=THREADS,
            random_state=SEED,
        )
    if lib == "LightGBM":
        from lightgbm import LGBMClassifier

        return LGBMClassifier(
            n_estimators=rounds,
            learning_rate=LEARNING_RATE,
            num_leaves=LEAVES,
            max_depth=-1,
            max_bin=MAX_BINS,
            min_child_samples=MIN_LEAF_ROWS,
            min_child_weight=MIN_CHILD_WEIGHT,
            reg_lambda=0.0,
            subsample=1.0,
            colsample_bytree=1.0,
            n_jobs=THREADS,
            random_state=SEED,
            verbose=-1,
        )
    raise ValueError(f"unknown library {lib!r}")


def library_build_id(lib: str) -> str:
    """Version of ``lib``; for rgbm_rs also a short hash of its native module."""
    if lib == "rgbm_rs":
        import rgbm_rs
        from rgbm_rs import _core

        digest = hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()[:12]
        return f"{getattr(rgbm_rs, '__version__', '?')} (native module sha256 {digest})"
    import lightgbm

    return lightgbm.__version__


# --------------------------------------------------------------------------
# Child: one measurement
# --------------------------------------------------------------------------


def multi_log_loss(y_true: np.ndarray, proba: np.ndarray, classes: np.ndarray) -> float:
    """Mean negative log-probability of the true class (probabilities clipped at 1e-15)."""
    column = np.searchsorted(classes, y_true)
    picked = proba[np.arange(len(y_true)), column]
    return float(-np.mean(np.log(np.clip(picked, 1e-15, 1.0))))


def machine_busy_seconds() -> float:
    """CPU seconds all CPUs have spent busy (incl. steal) since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def run_child(lib: str, dataset: str, rounds: int) -> dict:
    data = load_dataset(dataset)
    model = make_estimator(lib, rounds)

    busy_before, own_before = machine_busy_seconds(), time.process_time()
    start = time.perf_counter()
    model.fit(data.X_train, data.y_train)
    fit_seconds = time.perf_counter() - start
    own_cpu = time.process_time() - own_before
    others_cpu = machine_busy_seconds() - busy_before - own_cpu
    others_share = max(0.0, others_cpu) / (fit_seconds * os.cpu_count())

    start = time.perf_counter()
    proba = np.asarray(model.predict_proba(data.X_test))
    predict_seconds = time.perf_counter() - start

    classes = np.asarray(model.classes_)
    predicted = classes[np.argmax(proba, axis=1)]
    peak_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "lib": lib,
        "dataset": dataset,
        "fit_s": fit_seconds,
        "others_share": others_share,
        "predict_s": predict_seconds,
        "accuracy": float(np.mean(predicted == data.y_test)),
        "logloss": multi_log_loss(data.y_test, proba, classes),
        "peak_rss_mib": peak_rss_kib / 1024,
        "build": library_build_id(lib),
        "n_train": len(data.y_train),
        "n_test": len(data.y_test),
        "n_features": data.X_train.shape[1],
        "n_classes": len(classes),
        "split": data.description,
    }


# --------------------------------------------------------------------------
# Parent: schedule children, aggregate, report
# --------------------------------------------------------------------------


def freeze_rgbm_rs() -> Path:
    """Copy the installed rgbm_rs package to a temporary directory; return that directory.

    Retried after a pause when the copy does not import (a reinstall was in
    progress while copying).
    """
    for attempt in (1, 2, 3):
        source = Path(importlib.util.find_spec("rgbm_rs").origin).parent
        frozen_root = Path(tempfile.mkdtemp(prefix="rgbm_rs_frozen_"))
        shutil.copytree(source, frozen_root / "rgbm_rs", ignore=shutil.ignore_patterns("__pycache__"))
        check = subprocess.run(
            [sys.executable, "-c", "import rgbm_rs._core"], env=child_env(frozen_root), capture_output=True
        )
        if check.returncode == 0:
            return frozen_root
        shutil.rmtree(frozen_root)
        print(f"copy of rgbm_rs does not import (attempt {attempt}); retrying in 60 s", file=sys.stderr)
        time.sleep(FAILURE_PAUSE_SECONDS)
    raise RuntimeError("could not take a working copy of the installed rgbm_rs")


def child_env(frozen_root: Path) -> dict:
    """Environment in which ``import rgbm_rs`` finds the frozen copy first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(frozen_root), env.get("PYTHONPATH")]))
    return env


def spawn_child(lib: str, dataset: str, rounds: int, env: dict) -> dict:
    """Run one measurement in a fresh process; retry once after a pause if it fails."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        "--lib",
        lib,
        "--dataset",
        dataset,
        "--rounds",
        str(rounds),
    ]
    for attempt in (1, 2):
        proc = subprocess.run(command, capture_output=True, text=True, env=env)
        for line in proc.stdout.splitlines():
            if line.startswith(RESULT_PREFIX):
                return json.loads(line[len(RESULT_PREFIX) :])
        print(
            f"  child {lib}/{dataset} failed (attempt {attempt}, exit {proc.returncode}):\n"
            f"{proc.stderr.strip()[-2000:]}",
            file=sys.stderr,
        )
        if attempt == 1:
            time.sleep(FAILURE_PAUSE_SECONDS)
    raise RuntimeError(f"{lib} on {dataset} failed twice")


def machine_description() -> str:
    fields = {}
    output = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    for line in output.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return f"{fields.get('Model name', 'unknown CPU')}, {fields.get('CPU(s)', '?')} CPUs (lscpu)"


def wait_for_quiet(max_share: float, timeout: float) -> float:
    """Wait until the machine was at most ``max_share`` busy over one second.

    Gives up after ``timeout`` seconds; returns the seconds waited.
    """
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        busy_before = machine_busy_seconds()
        time.sleep(1.0)
        if (machine_busy_seconds() - busy_before) / os.cpu_count() <= max_share:
            break
    return time.perf_counter() - started


def measure(lib: str, dataset: str, args, env: dict, loads: list[float]) -> dict:
    """One measurement, repeated while other processes took too much of the machine.

    Returns the least contended attempt, with the number of attempts and
    whether it was still contended.
    """
    attempts = []
    for attempt in range(1 + args.retries):
        if attempt:
            time.sleep(args.retry_pause)
        wait_for_quiet(args.max_others, args.quiet_timeout)
        load = os.getloadavg()[0]
        loads.append(load)
        result = spawn_child(lib, dataset, args.rounds, env)
        result["load1"] = load
        attempts.append(result)
        print(
            f"  {dataset:9s} {lib:8s} load {load:4.2f}  fit {result['fit_s']:6.2f}s  "
            f"others {100 * result['others_share']:3.0f}%  predict {result['predict_s']:.3f}s  "
            f"acc {result['accuracy']:.4f}  logloss {result['logloss']:.4f}  "
            f"rss {result['peak_rss_mib']:.0f} MiB",
            file=sys.stderr,
            flush=True,
        )
        if result["others_share"] <= args.max_others:
            break
    best = min(attempts, key=lambda r: r["others_share"])
    best["attempts"] = len(attempts)
    best["contended"] = best["others_share"] > args.max_others
    return best


def fmt_row(lib: str, runs: list[dict]) -> tuple[str, float]:
    med = {
        key: statistics.median(r[key] for r in runs)
        for key in ("fit_s", "predict_s", "accuracy", "logloss", "peak_rss_mib")
    }
    per_rep_fits = " / ".join(f"{r['fit_s']:.2f}" for r in runs)
    retried = sum(r["attempts"] > 1 for r in runs)
    contended = sum(r["contended"] for r in runs)
    notes = []
    if retried:
        notes.append(f"{retried} rep(s) retried")
    if contended:
        notes.append(f"CONTENDED in {contended}/{len(runs)} rep(s)")
    others = statistics.median(r["others_share"] for r in runs)
    row = (
        f"| {lib} | {med['fit_s']:.2f} | {med['predict_s']:.3f} | {100 * med['accuracy']:.2f}% "
        f"| {med['logloss']:.4f} | {med['peak_rss_mib']:.0f} "
        f"| {per_rep_fits} | {100 * others:.0f}% | {'; '.join(notes)} |"
    )
    return row, med["fit_s"]


def build_report(args, results: list[dict], loads: list[float], elapsed: float) -> str:
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    builds = {lib: sorted({r["build"] for r in results if r["lib"] == lib}) for lib in LIBRARIES}
    lines = [
        f"## rgbm_rs vs LightGBM: multiclass (softmax), {args.rounds} rounds",
        "",
        f"- Command: `{command}` (from the repository root)",
        f"- Machine: {machine_description()}; shared VM, so timings are noisy",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; whole run took {elapsed / 60:.1f} min",
        f"- Versions: rgbm_rs {'; '.join(builds['rgbm_rs'])}, installed build copied at start "
        f"and used by every run; LightGBM {'; '.join(builds['LightGBM'])}",
        f"- Settings (both): `n_jobs=2`, 255 bins, learning rate 0.1, 31 leaves best-first with no "
        f"depth limit, min 20 rows and min hessian 1e-3 per leaf, `reg_lambda=0`, no row/column "
        f"subsampling, {args.rounds} rounds (one tree per class per round), `random_state=0`.",
        f"- Method: each fit in its own process; {args.reps} repetition(s) with the two libraries "
        f"interleaved (order alternated every repetition); medians reported. Fit = wall time of "
        f"`fit`; predict = wall time of one `predict_proba` on the test set; peak RSS = the child's "
        f"`ru_maxrss` (whole process: interpreter, import, data, model). Accuracy / log loss on "
        f"the test set.",
        f"- 1-minute load average just before each run (retries included): max {max(loads):.2f}, "
        f"median {statistics.median(loads):.2f} (2 CPUs; the benchmark's own previous children "
        f"count in it).",
        f'- Contention: "others" = CPU time used by other processes during the fit (busy + '
        f"steal in `/proc/stat` minus the child's own CPU time) as a share of wall time x CPUs. "
        f"Before each attempt the script waited (up to {args.quiet_timeout:g} s) for a 1-s window "
        f"with the machine at most {100 * args.max_others:.0f}% busy; a fit with others > "
        f"{100 * args.max_others:.0f}% was re-run after {args.retry_pause:g} s, at most "
        f"{args.retries} times, keeping the least contended attempt.",
    ]
    if any(len(b) > 1 for b in builds.values()):
        lines.append("- WARNING: a library build changed during the run; the table mixes builds.")

    for dataset in args.datasets:
        runs = [r for r in results if r["dataset"] == dataset]
        first = runs[0]
        lines += [
            "",
            f"### {dataset}: {first['n_classes']} classes, {first['n_train']:,} train / "
            f"{first['n_test']:,} test rows, {first['n_features']} features",
            "",
            f"Split: {first['split']}.",
            "",
            "| library | fit (s) | predict (s) | test accuracy | test multi-logloss "
            "| peak RSS (MiB) | fit per rep (s) | others | notes |",
            "|---|---:|---:|---:|---:|---:|---|---:|---|",
        ]
        fit_medians = {}
        for lib in LIBRARIES:
            row, fit_medians[lib] = fmt_row(lib, [r for r in runs if r["lib"] == lib])
            lines.append(row)
        ratio = fit_medians["rgbm_rs"] / fit_medians["LightGBM"]
        lines += ["", f"Median fit time ratio rgbm_rs / LightGBM: **{ratio:.2f}x**."]
    return "\n".join(lines) + "\n"


def run_parent(args) -> None:
    started = time.perf_counter()
    frozen_root = freeze_rgbm_rs()
    env = child_env(frozen_root)
    results, loads = [], []
    for rep in range(args.reps):
        order = LIBRARIES if rep % 2 == 0 else LIBRARIES[::-1]
        print(f"repetition {rep + 1}/{args.reps}", file=sys.stderr)
        for dataset in args.datasets:
            for lib in order:
                results.append(measure(lib, dataset, args, env, loads))
    shutil.rmtree(frozen_root)
    print(f"max 1-minute load average before a run: {max(loads):.2f}", file=sys.stderr)

    report = build_report(args, results, loads, time.perf_counter() - started)
    if args.write_md:
        path = Path(args.write_md)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(report)
        print(f"wrote {path}", file=sys.stderr)
    print(report)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="boosting rounds (default 200)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per library (default 3)")
    parser.add_argument(
        "--datasets",
        type=lambda s: s.split(","),
        default=list(DATASETS),
        help="comma-separated subset of: " + ",".join(DATASETS),
    )
    parser.add_argument(
        "--max-others",
        type=float,
        default=0.10,
        help="re-run a fit when other processes used more than this share of the machine during it (default 0.10)",
    )
    parser.add_argument("--retries", type=int, default=2, help="at most this many re-runs per measurement (default 2)")
    parser.add_argument("--retry-pause", type=float, default=5.0, help="seconds to wait before a re-run (default 5)")
    parser.add_argument(
        "--quiet-timeout",
        type=float,
        default=30.0,
        help="longest wait for a quiet machine before each attempt (default 30 s)",
    )
    parser.add_argument("--write-md", metavar="PATH", help="write the markdown section to PATH (it is always printed)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--lib", choices=LIBRARIES, help=argparse.SUPPRESS)
    parser.add_argument("--dataset", choices=DATASETS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    unknown = set(args.datasets) - set(DATASETS)
    if unknown:
        parser.error(f"unknown dataset(s): {', '.join(sorted(unknown))}")
    return args


def main() -> None:
    args = parse_args()
    if args.child:
        print(RESULT_PREFIX + json.dumps(run_child(args.lib, args.dataset, args.rounds)), flush=True)
    else:
        run_parent(args)


if __name__ == "__main__":
    main()
