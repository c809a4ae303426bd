"""End-to-end comparison of rgbm_rs against LightGBM, XGBoost, CatBoost and scikit-learn HGB.

One file on purpose (about 1,200 lines): every measurement runs in a child
process started from this same script, so parent and child cannot be out of
step, and the script can be copied to a benchmark machine and run alone.

For every (repetition, dataset, library) the script starts a fresh child
process (this same file with ``--child``) that loads the data, imports the
library, and then measures one fit:

* fit wall time, and the CPU time the child used for it;
* fit peak memory: the child resets its RSS high-water mark
  (``echo 5 > /proc/self/clear_refs``) just before ``fit`` and reads
  ``VmHWM`` from ``/proc/self/status`` just after; the increase over the
  RSS at reset time is reported in MiB;
* contention: the CPU time every *other* process used during the fit, from
  ``/proc/stat`` (busy + steal jiffies of the whole machine) minus the
  child's own CPU time (``/proc/self/stat``), as a fraction of
  ``wall time x CPUs``; the same is recorded for the predictions, latency
  and setup measurements after the fit (flagged in the table, not retried);
* predict time: median of 3 full-test-set calls (``predict_proba`` for binary
  tasks, ``predict`` for regression);
* the test score: AUC (binary) or RMSE (regression);
* 1-row latency: median of 300 calls of the same method on one test row
  (after 20 warm-up calls), Python-call overhead included;
* setup time (binning / dataset construction), measured after everything
  above so that it cannot disturb the fit's peak-RSS figure: LightGBM
  ``Dataset(...).construct()``, XGBoost ``QuantileDMatrix(...)``, CatBoost
  ``Pool(...).quantize(...)``, each timed on its own; for rgbm_rs the fit
  wall time minus the summed per-round times of ``training_log_["seconds"]``
  (input conversion + binning + initialisation); not measured for
  scikit-learn HGB.  These setup steps also run inside every library's fit.

The parent interleaves the libraries inside every repetition (rotating their
order from one repetition to the next), waits for a quiet moment before each
fit, retries a fit when other processes used more than ``--max-others`` of the
machine during it (at most ``--retries`` times, each after waiting up to
``--retry-pause`` seconds for the machine to calm down; when every attempt was
contended the fastest is kept and flagged CONTENDED in the table), and reports
medians over repetitions plus rgbm_rs / other-library ratios.
rgbm_rs is imported from a copy of the installed build frozen at the start in
bench_out/frozen/<sha256>/ (``--no-freeze`` uses the live editable install),
so a rebuild during the run cannot mix two builds in one table.

Common settings: 2 threads (``n_jobs=2`` / ``thread_count=2`` and
``OMP_NUM_THREADS=2``), 255 bins, 31 leaves grown best-first, learning rate
0.1, ``--rounds`` rounds, at least 20 rows per leaf, no early stopping.
``xgboost`` is the best-first configuration (``grow_policy="lossguide"``,
``max_leaves=31``, ``max_depth=0``); ``xgboost-d6`` is XGBoost's default
depth-wise growth to depth 6, reported for reference.  ``catboost`` keeps
CatBoost's own tree shape, symmetric (oblivious) trees of depth 6, with
``border_count=254`` (255 bins).  ``sklearn-hgb`` is scikit-learn's
HistGradientBoosting with ``max_leaf_nodes=31``, ``max_bins=255``,
``min_samples_leaf=20``, ``early_stopping=False``.  Binary tasks use each
library's classifier (log loss), regression its regressor (squared error).

Datasets
  higgs1m         synthetic Higgs-like binary task, 1M rows x 28 float32
                  features (21 "low-level" kinematic features + 7 invariant
                  masses; label = Bernoulli(sigmoid(nonlinear signal + noise))),
                  last 20% = test.  Generated once from a fixed seed and cached
                  in bench_out/data/.
  a9a             LIBSVM a9a (../shared/data/a9a/a9a and a9a.t relative to the
                  repo root), binary, 123 features, densified to float32, cached
                  in bench_out/data/.
  regression500k  synthetic regression task shaped like YearPredictionMSD:
                  625,000 rows x 90 float32 features (12 correlated "timbre
                  means" + 78 "timbre covariances"), year-like target; first
                  500,000 rows = train, last 125,000 = test.  Generated once
                  from a fixed seed and cached in bench_out/data/.

Usage (from the repository root)
  python benches/python/compare.py                      # all 6 libraries, 3 datasets, 3 reps, 100 rounds
  python benches/python/compare.py --rows 100000 --reg-rows 100000 --reps 1 --rounds 20   # smoke test
  python benches/python/compare.py --reps 3 --rounds 100 --write-md bench_out/compare.md
  python benches/python/compare.py --datasets a9a --libs rgbm,lightgbm
  python benches/python/compare.py --datasets regression500k --libs rgbm,catboost,sklearn-hgb

Libraries (--libs): rgbm, lightgbm, xgboost, xgboost-d6, catboost, sklearn-hgb.
A library that fails to import or fit in its child is reported as failed in
the table; the other libraries still run.

The markdown table is always printed; ``--write-md PATH`` also writes a
self-contained markdown section (command, machine, versions, date, tables)
to PATH, and every individual measurement (including retried attempts) is
saved as JSON (``--json``; by default next to the markdown file, or
bench_out/compare_last.json).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import hashlib
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _report  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = REPO_ROOT / "bench_out"
DATA_DIR = OUT_DIR / "data"
A9A_DIR = Path(_report.DATA_DIR) / "a9a"

# Threads per library; `--threads` changes it (the children read it from the environment).
THREADS = int(os.environ.get("RGBM_COMPARE_THREADS", "2"))
MAX_BINS = 255
LEAVES = 31
LEARNING_RATE = 0.1
MIN_LEAF_ROWS = 20
SEED = 0

HIGGS_ROWS = 1_000_000
HIGGS_SEED = 20240601
HIGGS_VERSION = 1  # bump when the generator changes, so stale caches are not reused
TEST_FRACTION = 0.2

REG_ROWS = 625_000  # YearPredictionMSD's size: 500,000 train rows + 125,000 test rows
REG_FEATURES = 90
REG_SEED = 20240602
REG_VERSION = 1  # bump when generate_regression changes

CATBOOST_DEPTH = 6  # CatBoost's default symmetric-tree depth, set explicitly
LATENCY_CALLS = 300
LATENCY_WARMUP = 20

ALL_LIBS = ("rgbm", "lightgbm", "xgboost", "xgboost-d6", "catboost", "sklearn-hgb")
ALL_DATASETS = ("higgs1m", "a9a", "regression500k")
LIB_LABELS = {
    "rgbm": "rgbm_rs",
    "lightgbm": "LightGBM",
    "xgboost": "XGBoost (hist, lossguide 31 leaves)",
    "xgboost-d6": "XGBoost (hist, depth 6, reference)",
    "catboost": "CatBoost (depth 6 oblivious)",
    "sklearn-hgb": "scikit-learn HGB",
}
METRICS = {"binary": "AUC", "regression": "RMSE"}
RESULT_MARKER = "@@compare-result "
MIB = 1024 * 1024


# --------------------------------------------------------------------------
# Estimators (imported only inside the child that uses them)
# --------------------------------------------------------------------------


def make_estimator(lib: str, task: str, rounds: int):
    """The estimator for ``lib`` with the shared settings: a classifier for "binary", a regressor for "regression"."""
    if task not in METRICS:
        raise ValueError(f"unknown task {task!r}")
    binary = task == "binary"
    if lib == "rgbm":
        from rgbm_rs import RGBMClassifier, RGBMRegressor

        shared = dict(
            n_estimators=rounds,
            learning_rate=LEARNING_RATE,
            max_depth=None,
            max_leaves=LEAVES,
            max_bins=MAX_BINS,
            min_samples_leaf=MIN_LEAF_ROWS,
            n_jobs=THREADS,
            random_state=SEED,
        )
        return RGBMClassifier(**shared) if binary else RGBMRegressor(loss="squared", **shared)
    if lib == "lightgbm":
        from lightgbm import LGBMClassifier, LGBMRegressor

        return (LGBMClassifier if binary else LGBMRegressor)(
            n_estimators=rounds,
            learning_rate=LEARNING_RATE,
            num_leaves=LEAVES,
            max_bin=MAX_BINS,
            min_child_samples=MIN_LEAF_ROWS,
            n_jobs=THREADS,
            random_state=SEED,
            verbose=-1,
        )
    if lib in ("xgboost", "xgboost-d6"):
        from xgboost import XGBClassifier, XGBRegressor

        shape = (
            {"max_leaves": LEAVES, "grow_policy": "lossguide", "max_depth": 0} if lib == "xgboost" else {"max_depth": 6}
        )
        return (XGBClassifier if binary else XGBRegressor)(
            n_estimators=rounds,
            learning_rate=LEARNING_RATE,
            tree_method="hist",
            max_bin=MAX_BINS,
            n_jobs=THREADS,
            random_state=SEED,
            **shape,
        )
    if lib == "catboost":
        from catboost import CatBoostClassifier, CatBoostRegressor

        # CatBoost's own tree shape (symmetric = oblivious, depth 6), not 31 leaves
        # best-first: its growth is built around oblivious trees, so this is its
        # representative configuration.  border_count=254 borders = 255 bins.
        return (CatBoostClassifier if binary else CatBoostRegressor)(
            iterations=rounds,
            learning_rate=LEARNING_RATE,
            depth=CATBOOST_DEPTH,
            grow_policy="SymmetricTree",
            border_count=MAX_BINS - 1,
            thread_count=THREADS,
            random_seed=SEED,
            verbose=False,
            allow_writing_files=False,  # no catboost_info/ folder in the repository
        )
    if lib == "sklearn-hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

        # No n_jobs parameter: its OpenMP threads come from OMP_NUM_THREADS (child_env).
        return (HistGradientBoostingClassifier if binary else HistGradientBoostingRegressor)(
            max_iter=rounds,
            learning_rate=LEARNING_RATE,
            max_leaf_nodes=LEAVES,
            max_bins=MAX_BINS,
            min_samples_leaf=MIN_LEAF_ROWS,
            early_stopping=False,
            random_state=SEED,
        )
    raise ValueError(f"unknown library {lib!r}")


# --------------------------------------------------------------------------
# Datasets
# --------------------------------------------------------------------------


def _save_npy(path: Path, array: np.ndarray) -> None:
    """np.save through a temporary file, so an interrupted run leaves no half cache."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        np.save(f, array)
    os.replace(tmp, path)


def generate_higgs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic stand-in for the UCI HIGGS task.

    Low-level features (21): lepton pT/eta/phi, missing-energy magnitude/phi,
    and pT/eta/phi/b-tag for four jets (gamma pT, clipped normal eta, uniform
    phi, discrete b-tag in {0, 1.1, 2.2}).  High-level features (7): invariant
    masses of jet/lepton/neutrino combinations built from massless
    four-vectors, scaled to median 1.  The label is Bernoulli(sigmoid(logit))
    with logit = a nonlinear "resonance" signal (Gaussian bumps in some
    masses, b-tag count, lepton terms, an angle interaction) plus Gaussian
    noise; this gives about 47% positives and a GBDT test AUC near 0.8.
    """
    rng = np.random.default_rng(seed)

    def particle(shape, scale):
        pt = rng.gamma(shape, scale, n)
        eta = np.clip(rng.normal(0.0, 1.0, n), -2.5, 2.5)
        phi = rng.uniform(-np.pi, np.pi, n)
        return pt, eta, phi

    def four_vector(pt, eta, phi):
        return np.stack([pt * np.cosh(eta), pt * np.cos(phi), pt * np.sin(phi), pt * np.sinh(eta)])

    def inv_mass(*vectors):
        e, px, py, pz = sum(vectors)
        return np.sqrt(np.maximum(e * e - px * px - py * py - pz * pz, 0.0))

    lepton = particle(4.0, 0.25)
    met_pt = rng.gamma(3.0, 0.33, n)
    met_phi = rng.uniform(-np.pi, np.pi, n)
    jets, btags = [], []
    for k in range(4):
        jets.append(particle(3.5 - 0.4 * k, 0.3))
        btags.append(rng.choice([0.0, 1.1, 2.2], n, p=[0.55, 0.15, 0.30]))

    lep4 = four_vector(*lepton)
    nu4 = four_vector(met_pt, np.zeros(n), met_phi)  # neutrino taken at eta = 0
    j4 = [four_vector(*j) for j in jets]
    masses = [
        inv_mass(j4[0], j4[1]),  # m_jj
        inv_mass(j4[0], j4[1], j4[2]),  # m_jjj
        inv_mass(lep4, nu4),  # m_lv
        inv_mass(j4[0], lep4, nu4),  # m_jlv
        inv_mass(j4[2], j4[3]),  # m_bb
        inv_mass(*j4),  # m_wbb
        inv_mass(*j4, lep4, nu4),  # m_wwbb
    ]
    masses = [m / np.median(m) for m in masses]

    columns = [*lepton, met_pt, met_phi]
    for jet, btag in zip(jets, btags):
        columns += [*jet, btag]
    columns += masses
    X = np.column_stack(columns).astype(np.float32)

    def bump(x, centre, width):
        return np.exp(-0.5 * ((x - centre) / width) ** 2)

    n_btagged = sum((b > 2.0).astype(np.float64) for b in btags)
    signal = (
        1.6 * bump(masses[4], 1.0, 0.25)
        + 1.2 * bump(masses[6], 0.9, 0.2)
        + 0.8 * bump(masses[2], 1.0, 0.3)
        + 0.35 * n_btagged
        + 0.5 * np.tanh(lepton[0] - 1.0)
        - 0.3 * np.abs(lepton[1]) * (jets[0][0] > 1.0)
        + 0.4 * np.cos(lepton[2] - met_phi) * bump(masses[3], 1.0, 0.4)
    )
    logit = 1.7 * (signal - signal.mean()) - 0.15 + rng.normal(0.0, 1.0, n)
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int32)
    return X, y


def generate_regression(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic stand-in for YearPredictionMSD's shape: 90 float32 features, a year-like target.

    Features: 12 "timbre means", correlated through 4 shared latent factors
    plus individual noise, and the 78 "timbre covariances" of the upper
    triangle (i <= j) of a 12 x 12 matrix built from them: off-diagonal
    ``0.6 * m_i * m_j + noise``, diagonal ``exp(0.4 * m_i) * gamma noise``
    (positive, skewed).  Columns get very different scales, as in the real data.
    Target: 1998 + a nonlinear function of a handful of features (a linear
    term, a tanh interaction, a threshold, a smooth bump, a sign-gated
    absolute value, a saturating covariance term) + Gaussian noise (sd 6);
    a GBDT gets a test RMSE near the noise floor (6) against ~7.3 for the
    training mean (R^2 ~ 0.3, about YearPredictionMSD's).
    """
    rng = np.random.default_rng(seed)
    n_means = 12
    factor_scale = np.array([1.0, 0.7, 0.5, 0.3])[:, None]
    loadings = rng.normal(0.0, 1.0, (4, n_means)) * factor_scale
    means = rng.standard_normal((n, 4)) @ loadings + 0.6 * rng.standard_normal((n, n_means))
    means /= means.std(axis=0)  # unit-scale copies for the target and the covariances

    X = np.empty((n, REG_FEATURES), dtype=np.float32)
    X[:, :n_means] = means * np.geomspace(50.0, 5.0, n_means) + rng.normal(0.0, 5.0, n_means)
    column = n_means
    for i in range(n_means):
        for j in range(i, n_means):
            if i == j:
                value = np.exp(0.4 * means[:, i]) * rng.gamma(4.0, 0.25, n)
            else:
                value = 0.6 * means[:, i] * means[:, j] + rng.standard_normal(n)
            X[:, column] = value * (100.0 / (1 + i + j))
            column += 1
    assert column == REG_FEATURES

    def bump(x, centre, width):
        return np.exp(-0.5 * ((x - centre) / width) ** 2)

    m = means
    signal = (
        3.0 * m[:, 0]
        + 2.0 * np.tanh(m[:, 1]) * m[:, 2]
        + 3.5 * (m[:, 3] > 0.6)
        + 4.0 * bump(m[:, 4], 0.8, 0.5)
        - 1.5 * np.abs(m[:, 5]) * (m[:, 6] > 0)
        + 1.5 * np.tanh(X[:, n_means] / 100.0 - 1.0)  # the first "covariance" (variance of mean 0)
    )
    y = 1998.0 + 1.2 * (signal - signal.mean()) + rng.normal(0.0, 6.0, n)
    return X, y


def _prepare_synthetic(
    rows: int, full_rows: int, stem: str, generate, seed: int, label: str, task: str, what: str
) -> dict:
    """Generate (or reuse) a cached synthetic dataset of max(rows, full_rows) rows.

    A smaller ``rows`` uses a prefix of the full cache; more rows need their
    own cache. Train = the first 80% of the rows used, test = the last 20%.
    """
    n_total = max(rows, full_rows)
    stem = f"{stem}_n{n_total}_seed{seed}"
    x_path, y_path = DATA_DIR / f"{stem}_X.npy", DATA_DIR / f"{stem}_y.npy"
    if not (x_path.exists() and y_path.exists()):
        log(f"generating {n_total:,} {what} rows -> {x_path.relative_to(REPO_ROOT)}")
        X, y = generate(n_total, seed)
        _save_npy(x_path, X)
        _save_npy(y_path, y)
    n_train = rows - int(round(rows * TEST_FRACTION))
    return {
        "name": label if rows == full_rows else f"{label}[:{rows}]",
        "task": task,
        "train": {"X": str(x_path), "y": str(y_path), "start": 0, "stop": n_train},
        "test": {"X": str(x_path), "y": str(y_path), "start": n_train, "stop": rows},
    }


def prepare_higgs(rows: int) -> dict:
    """The Higgs-like data (1M rows cached; 800k / 200k at the default)."""
    return _prepare_synthetic(
        rows, HIGGS_ROWS, f"higgs_v{HIGGS_VERSION}", generate_higgs, HIGGS_SEED, "higgs1m", "binary", "Higgs-like"
    )


def prepare_regression(rows: int) -> dict:
    """The regression data (625k rows cached; 500,000 / 125,000 at the default)."""
    return _prepare_synthetic(
        rows,
        REG_ROWS,
        f"regression_v{REG_VERSION}",
        generate_regression,
        REG_SEED,
        "regression500k",
        "regression",
        "regression",
    )


def prepare_a9a() -> dict:
    """Densify LIBSVM a9a to float32 once; labels {-1, +1} become {0, 1}."""
    spec = {"name": "a9a", "task": "binary"}
    for part, filename in (("train", "a9a"), ("test", "a9a.t")):
        x_path, y_path = DATA_DIR / f"a9a_{part}_X.npy", DATA_DIR / f"a9a_{part}_y.npy"
        if not (x_path.exists() and y_path.exists()):
            from sklearn.datasets import load_svmlight_file

            source = A9A_DIR / filename
            if not source.exists():
                raise SystemExit(f"a9a file not found: {source}")
            X, y = load_svmlight_file(str(source), n_features=123)
            _save_npy(x_path, np.asarray(X.toarray(), dtype=np.float32))
            _save_npy(y_path, (y > 0).astype(np.int32))
        n = np.load(y_path, mmap_mode="r").shape[0]
        spec[part] = {"X": str(x_path), "y": str(y_path), "start": 0, "stop": n}
    return spec


def load_part(part: dict) -> tuple[np.ndarray, np.ndarray]:
    """Memory-map the cache and copy the requested rows into ordinary memory.

    Copying (rather than fitting on the memory map) keeps the data out of the
    fit's RSS accounting: file-backed pages faulted in during ``fit`` would
    otherwise count towards the fit's peak.
    """
    start, stop = part["start"], part["stop"]
    X_map = np.load(part["X"], mmap_mode="r")
    y_map = np.load(part["y"], mmap_mode="r")
    # An explicit copy: np.ascontiguousarray would return the memory map itself.
    X = np.array(X_map[start:stop], dtype=np.float32, order="C", copy=True)
    y = np.array(y_map[start:stop], copy=True)
    del X_map, y_map
    return X, y


def describe_dataset(spec: dict) -> dict:
    """Sizes plus the target's summary: positive rate (binary), or mean, sd and the mean's test RMSE (regression)."""
    y_train = np.load(spec["train"]["y"], mmap_mode="r")[spec["train"]["start"] : spec["train"]["stop"]]
    n_features = np.load(spec["train"]["X"], mmap_mode="r").shape[1]
    description = {
        "task": spec["task"],
        "train_rows": spec["train"]["stop"] - spec["train"]["start"],
        "test_rows": spec["test"]["stop"] - spec["test"]["start"],
        "features": int(n_features),
    }
    if spec["task"] == "binary":
        description["positive_rate"] = float(np.mean(y_train))
    else:
        y_test = np.load(spec["test"]["y"], mmap_mode="r")[spec["test"]["start"] : spec["test"]["stop"]]
        mean = float(np.mean(y_train))
        description["target_mean"] = mean
        description["target_sd"] = float(np.std(y_train))
        # The score of a constant prediction: the yardstick for the libraries' RMSE.
        description["mean_test_rmse"] = float(np.sqrt(np.mean((np.asarray(y_test, dtype=np.float64) - mean) ** 2)))
    return description


# --------------------------------------------------------------------------
# Child: one fit, measured
# --------------------------------------------------------------------------


def _cpu_busy_ticks() -> int:
    """Busy ticks of the whole machine: user+nice+system+irq+softirq+steal (guest is inside user)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    assert fields[0] == "cpu"
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    return user + nice + system + irq + softirq + steal


def _own_cpu_ticks() -> int:
    """utime + stime of this process (all threads), in clock ticks."""
    with open("/proc/self/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2 :].split()  # the command name may contain spaces
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5)


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _file_digest(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def _core_library_digest() -> str | None:
    """Short sha256 of the rgbm_rs native module this process imports."""
    try:
        import rgbm_rs._core as core

        return _file_digest(core.__file__)
    except Exception:
        return None


def measure_setup(lib: str, model, X: np.ndarray, y: np.ndarray, fit_s: float) -> float | None:
    """Seconds of binning / dataset construction for ``lib``, or None when not measurable.

    LightGBM, XGBoost and CatBoost expose their construction step, so it is
    timed on its own (a repeat of what their ``fit`` did first).  rgbm_rs does
    not: a 1-round refit after the measured fit, minus its round (from
    ``training_log_["seconds"]``), is input validation + binning +
    initialisation, warm like the others' (the cold value, fit time minus
    all rounds, is kept in the raw JSON as ``setup_cold_s``).
    scikit-learn HGB exposes neither.
    """
    if lib == "rgbm":
        # Warm, like the others' construction timed after their fit: a
        # 1-round refit of the same estimator, minus its round.
        from sklearn.base import clone

        one = clone(model).set_params(n_estimators=1)
        t = time.perf_counter()
        one.fit(X, y)
        return time.perf_counter() - t - float(sum(one.training_log_["seconds"]))
    if lib == "lightgbm":
        import lightgbm

        t = time.perf_counter()
        lightgbm.Dataset(X, y, params={"max_bin": MAX_BINS, "verbose": -1}, free_raw_data=True).construct()
        return time.perf_counter() - t
    if lib in ("xgboost", "xgboost-d6"):
        import xgboost

        t = time.perf_counter()
        xgboost.QuantileDMatrix(X, y, max_bin=MAX_BINS, nthread=THREADS)
        return time.perf_counter() - t
    if lib == "catboost":
        import catboost

        t = time.perf_counter()
        catboost.Pool(X, y, thread_count=THREADS).quantize(border_count=MAX_BINS - 1)
        return time.perf_counter() - t
    return None


def run_child(job: dict) -> dict:
    """Load data, build the estimator, fit once under measurement, then predict and time the setup."""
    task = job["dataset"]["task"]
    X_train, y_train = load_part(job["dataset"]["train"])
    X_test, y_test = load_part(job["dataset"]["test"])
    model = make_estimator(job["lib"], task, job["rounds"])
    core_digest = _core_library_digest() if job["lib"] == "rgbm" else None  # the build just imported
    from sklearn.metrics import roc_auc_score

    n_cpus = os.cpu_count() or 1
    clk_tck = os.sysconf("SC_CLK_TCK")
    gc.collect()
    peak_reset = _reset_peak_rss()
    rss_before = _status_kib("VmRSS") if peak_reset else _status_kib("VmHWM")

    busy0, own0 = _cpu_busy_ticks(), _own_cpu_ticks()
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    model.fit(X_train, y_train)
    wall = time.perf_counter() - t0
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    busy1, own1 = _cpu_busy_ticks(), _own_cpu_ticks()
    hwm_after = _status_kib("VmHWM")

    own_cpu = (usage1.ru_utime + usage1.ru_stime) - (usage0.ru_utime + usage0.ru_stime)
    others_cpu = ((busy1 - busy0) - (own1 - own0)) / clk_tck

    # Everything below runs after the peak-RSS reading, so it cannot inflate the fit's figure.
    # Its contention is recorded too (not retried on): one-row latencies of
    # OpenMP libraries jump by orders of magnitude when the other core is busy.
    t_after = time.perf_counter()
    predict = model.predict_proba if task == "binary" else model.predict
    predict_times, prediction = [], None
    for _ in range(3):
        t = time.perf_counter()
        prediction = predict(X_test)
        predict_times.append(time.perf_counter() - t)
    if task == "binary":
        score = float(roc_auc_score(y_test, prediction[:, 1]))
    else:
        residual = np.asarray(prediction, dtype=np.float64).ravel() - y_test
        score = float(np.sqrt(np.mean(residual * residual)))

    # One-row latency: dominated by per-call overhead (validation, Python/C
    # crossings, thread start-up), which matters for online serving.
    one_row = X_test[:1]
    for _ in range(LATENCY_WARMUP):
        predict(one_row)
    latencies = []
    for _ in range(LATENCY_CALLS):
        t = time.perf_counter()
        predict(one_row)
        latencies.append(time.perf_counter() - t)

    del prediction
    gc.collect()
    setup = measure_setup(job["lib"], model, X_train, y_train, wall)
    busy2, own2 = _cpu_busy_ticks(), _own_cpu_ticks()
    after_wall = time.perf_counter() - t_after
    after_others_cpu = ((busy2 - busy1) - (own2 - own1)) / clk_tck

    return {
        "lib": job["lib"],
        "dataset": job["dataset"]["name"],
        "task": task,
        "rep": job["rep"],
        "attempt": job["attempt"],
        "fit_s": wall,
        "fit_cpu_s": own_cpu,
        "others_cpu_s": others_cpu,
        "others_frac": others_cpu / (wall * n_cpus),
        "peak_mib": (hwm_after - rss_before) / 1024.0,
        "peak_reset": peak_reset,
        "rss_before_mib": rss_before / 1024.0,
        "after_others_frac": after_others_cpu / (after_wall * n_cpus),  # predictions + latency + setup
        "predict_s": statistics.median(predict_times),
        "predict_all_s": predict_times,
        "latency_us": 1e6 * statistics.median(latencies),
        "setup_s": setup,
        "setup_cold_s": wall - float(sum(model.training_log_["seconds"])) if job["lib"] == "rgbm" else None,
        "metric": METRICS[task],
        "score": score,
        "core_digest": core_digest,
    }


def child_main(job_json: str) -> None:
    result = run_child(json.loads(job_json))
    sys.stdout.write("\n" + RESULT_MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------
# Parent: scheduling, retries, aggregation, report
# --------------------------------------------------------------------------


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def child_env(frozen: Path | None) -> dict:
    """Thread caps for every library; the frozen rgbm_rs copy (if any) first on the path."""
    env = dict(os.environ)
    env["RGBM_COMPARE_THREADS"] = str(THREADS)
    for var in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(THREADS)
    if frozen is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(frozen), env.get("PYTHONPATH")]))
    return env


def freeze_rgbm() -> tuple[Path, str]:
    """Copy the installed rgbm_rs package (Python files + native module) to bench_out/frozen/<sha>/.

    The editable install is rebuilt whenever someone runs ``pip install -e .``;
    running every child on one frozen copy keeps all rgbm_rs fits of a run on
    the same build.  Returns the folder to put on PYTHONPATH and the native
    module's digest; the copy is checked by importing it in a fresh process.
    """
    import importlib.util

    spec = importlib.util.find_spec("rgbm_rs")
    if spec is None or spec.origin is None:
        raise SystemExit("rgbm_rs is not importable")
    source = Path(spec.origin).parent
    frozen_root = OUT_DIR / "frozen"
    frozen_root.mkdir(parents=True, exist_ok=True)
    for _ in range(3):
        tmp = frozen_root / f".tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(source, tmp / "rgbm_rs", ignore=shutil.ignore_patterns("__pycache__", "*.tmp"))
        natives = sorted((tmp / "rgbm_rs").glob("_core*.so"))
        if len(natives) != 1:
            raise SystemExit(f"expected one native module in {source}, found {[p.name for p in natives]}")
        digest = _file_digest(natives[0])
        dest = frozen_root / digest
        if dest.exists():
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, dest)
        check = subprocess.run(
            [sys.executable, "-c", "import rgbm_rs, rgbm_rs._core; print(rgbm_rs._core.__file__)"],
            capture_output=True,
            text=True,
            env=child_env(dest),
            cwd=REPO_ROOT,
        )
        if check.returncode == 0 and Path(check.stdout.strip()).resolve().is_relative_to(dest.resolve()):
            return dest, digest
        log(f"frozen copy {dest} does not import (a build in progress?); retrying in 20 s")
        shutil.rmtree(dest, ignore_errors=True)
        time.sleep(20)
    raise SystemExit("could not freeze a working copy of rgbm_rs")


def spawn(job: dict, timeout: float, frozen: Path | None) -> dict:
    """Run one measured fit in a fresh interpreter; failures come back as {'error': ...}."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(job)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=child_env(frozen), cwd=REPO_ROOT
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER) :])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    return {"error": f"exit code {proc.returncode}: " + " | ".join(tail)}


def machine_busy_fraction(window: float) -> float:
    """Fraction of all CPUs busy (busy + steal) over ``window`` seconds; the parent idles meanwhile."""
    b0, t0 = _cpu_busy_ticks(), time.perf_counter()
    time.sleep(window)
    b1, t1 = _cpu_busy_ticks(), time.perf_counter()
    return (b1 - b0) / os.sysconf("SC_CLK_TCK") / ((t1 - t0) * (os.cpu_count() or 1))


def wait_for_quiet(threshold: float, max_wait: float, window: float = 2.0) -> float:
    """Poll until one ``window`` with the machine busy at most ``threshold``; give up after ``max_wait`` s.

    Returns the last busy fraction seen (the caller goes ahead either way).
    """
    deadline = time.perf_counter() + max_wait
    while True:
        busy = machine_busy_fraction(window)
        if busy <= threshold or time.perf_counter() >= deadline:
            return busy


def measure(job: dict, args) -> dict:
    """One (library, dataset, repetition) measurement with contention retries.

    Before every attempt the parent waits for a quiet moment (at most 10 s
    before a first attempt, ``--retry-pause`` s before a retry).  The first
    uncontended attempt is kept; if every attempt was contended the fastest
    one is kept (contention only slows a fit down) and flagged.
    """
    attempts = []
    for attempt in range(args.retries + 1):
        if attempt:
            log(f"  contended (> {100 * args.max_others:.0f}% others); waiting up to {args.retry_pause:.0f} s")
        wait_for_quiet(args.max_others, args.retry_pause if attempt else 10.0)
        result = spawn({**job, "attempt": attempt}, args.timeout, args.frozen)
        attempts.append(result)
        if "error" in result:
            log(f"  {job['lib']:<11} {job['dataset']['name']}: ERROR {result['error']}")
            break
        log(
            f"  {job['lib']:<11} {job['dataset']['name']:<10} rep {job['rep']} attempt {attempt}: "
            f"fit {result['fit_s']:.2f} s, setup {_seconds(result['setup_s'])}, "
            f"predict {result['predict_s']:.3f} s, 1 row {result['latency_us']:.0f} µs, "
            f"peak {result['peak_mib']:.0f} MiB, {result['metric']} {result['score']:.4f}, "
            f"others {100 * result['others_frac']:.1f}% (after fit {100 * result['after_others_frac']:.1f}%)"
        )
        if result["others_frac"] <= args.max_others:
            break
    ok = [a for a in attempts if "error" not in a]
    if not ok:
        return {
            "lib": job["lib"],
            "dataset": job["dataset"]["name"],
            "rep": job["rep"],
            "attempts": attempts,
            **attempts[-1],
        }
    clean = [a for a in ok if a["others_frac"] <= args.max_others]
    best = clean[0] if clean else min(ok, key=lambda a: a["fit_s"])
    return {**best, "contended": not clean, "retries": len(attempts) - 1, "attempts": attempts}


def _seconds(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f} s"


def summarize(records: list[dict], libs: list[str], datasets: list[str], max_others: float) -> dict:
    """Medians over repetitions per (dataset, library)."""
    summary = {}
    for ds in datasets:
        for lib in libs:
            rows = [r for r in records if r["dataset"] == ds and r["lib"] == lib]
            good = [r for r in rows if "error" not in r]
            entry = {"n": len(good), "errors": len(rows) - len(good)}
            if good:
                for key in ("fit_s", "fit_cpu_s", "predict_s", "latency_us", "peak_mib", "score"):
                    entry[key] = statistics.median(r[key] for r in good)
                # None for a library whose setup cannot be measured on its own (scikit-learn HGB).
                setups = [r["setup_s"] for r in good if r.get("setup_s") is not None]
                entry["setup_s"] = statistics.median(setups) if setups else None
                entry["metric"] = good[0]["metric"]
                entry["cpu_per_wall"] = statistics.median(r["fit_cpu_s"] / r["fit_s"] for r in good)
                entry["contended"] = sum(r["contended"] for r in good)
                entry["retries"] = sum(r["retries"] for r in good)
                entry["max_others"] = max(r["others_frac"] for r in good)
                # Predict / latency / setup timings taken while others used the machine (not retried).
                entry["after_contended"] = sum(r["after_others_frac"] > max_others for r in good)
                entry["max_after_others"] = max(r["after_others_frac"] for r in good)
                entry["score_spread"] = max(r["score"] for r in good) - min(r["score"] for r in good)
            summary[(ds, lib)] = entry
    return summary


def _notes(entry: dict) -> str:
    notes = []
    if entry.get("errors"):
        notes.append(f"{entry['errors']} failed")
    if entry.get("contended"):
        notes.append(f"CONTENDED {entry['contended']}/{entry['n']} (max {100 * entry['max_others']:.0f}% others)")
    if entry.get("after_contended"):
        notes.append(
            f"predict/setup CONTENDED {entry['after_contended']}/{entry['n']} "
            f"(max {100 * entry['max_after_others']:.0f}% others)"
        )
    if entry.get("retries"):
        notes.append(f"{entry['retries']} retried")
    return "; ".join(notes)


def results_table(summary: dict, libs: list[str], datasets: list[str], tasks: dict) -> str:
    lines = [
        "| dataset | library | fit (s) | setup (s) | predict (s) | 1-row latency (µs) | fit peak RSS (MiB) "
        "| metric | test score | fit CPU/wall | notes |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for ds in datasets:
        metric = METRICS[tasks[ds]]
        for lib in libs:
            e = summary[(ds, lib)]
            if not e["n"]:
                lines.append(f"| {ds} | {LIB_LABELS[lib]} | – | – | – | – | – | {metric} | – | – | {_notes(e)} |")
                continue
            setup = "–" if e["setup_s"] is None else f"{e['setup_s']:.2f}"
            lines.append(
                f"| {ds} | {LIB_LABELS[lib]} | {e['fit_s']:.2f} | {setup} | {e['predict_s']:.3f} | "
                f"{e['latency_us']:.0f} | {e['peak_mib']:.0f} | {metric} | {e['score']:.4f} | "
                f"{e['cpu_per_wall']:.2f} | {_notes(e)} |"
            )
    return "\n".join(lines)


def ratio_table(summary: dict, libs: list[str], datasets: list[str], tasks: dict) -> str | None:
    others = [lib for lib in ALL_LIBS if lib != "rgbm" and lib in libs]
    if "rgbm" not in libs or not others:
        return None
    lines = [
        "| dataset | rgbm_rs / … | fit time | setup time | predict time | 1-row latency | fit peak RSS "
        "| score (AUC: rgbm_rs − other; RMSE: rgbm_rs / other) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]

    def ratio(a, b):
        return f"{a / b:.2f}×" if a is not None and b is not None and b > 0 else "–"

    for ds in datasets:
        mine = summary[(ds, "rgbm")]
        for lib in others:
            theirs = summary[(ds, lib)]
            if not (mine["n"] and theirs["n"]):
                lines.append(f"| {ds} | {LIB_LABELS[lib]} | – | – | – | – | – | – |")
                continue
            if tasks[ds] == "binary":
                score = f"AUC {mine['score'] - theirs['score']:+.4f}"
            else:
                # Three decimals: RMSE ratios of competitive models differ in the third digit.
                score = f"RMSE {mine['score'] / theirs['score']:.3f}×"
            lines.append(
                f"| {ds} | {LIB_LABELS[lib]} | {ratio(mine['fit_s'], theirs['fit_s'])} | "
                f"{ratio(mine['setup_s'], theirs['setup_s'])} | "
                f"{ratio(mine['predict_s'], theirs['predict_s'])} | "
                f"{ratio(mine['latency_us'], theirs['latency_us'])} | "
                f"{ratio(mine['peak_mib'], theirs['peak_mib'])} | {score} |"
            )
    return "\n".join(lines)


def dataset_table(descriptions: dict) -> str:
    lines = [
        "| dataset | task (metric) | train rows | test rows | features | target (train) |",
        "|---|---|---:|---:|---:|---|",
    ]
    for name, d in descriptions.items():
        if d["task"] == "binary":
            target = f"{100 * d['positive_rate']:.1f}% positive"
        else:
            target = (
                f"mean {d['target_mean']:.1f}, sd {d['target_sd']:.2f}; "
                f"test RMSE of the train mean {d['mean_test_rmse']:.4f}"
            )
        lines.append(
            f"| {name} | {d['task']} ({METRICS[d['task']]}) | {d['train_rows']:,} | {d['test_rows']:,} "
            f"| {d['features']} | {target} |"
        )
    return "\n".join(lines)


def machine_description() -> str:
    fields = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    try:
        nproc = subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        nproc = str(os.cpu_count())
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        mem = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    cpu = fields.get("Model name", platform.processor() or "unknown CPU")
    parts = [
        f"{cpu}",
        f"{fields.get('CPU(s)', '?')} CPUs ({fields.get('Thread(s) per core', '?')} thread/core)",
        f"nproc {nproc}",
    ]
    caches = [f"{k.split()[0]} {fields[k]}" for k in ("L2 cache", "L3 cache") if k in fields]
    if caches:
        parts.append(", ".join(caches))
    if "Hypervisor vendor" in fields:
        parts.append(f"{fields['Hypervisor vendor']} VM (shared host)")
    return "; ".join(parts) + mem + f"; Linux {platform.release()}"


def library_versions(digest: str | None, frozen: Path | None) -> str:
    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    git = ""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src", "python", "Cargo.toml", "Cargo.lock"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        git = f" (git {sha}{', uncommitted changes' if dirty else ''})"
    except (OSError, subprocess.CalledProcessError):
        pass
    core = f", native module sha256 {digest}" if digest else ""
    if frozen is not None:
        core += f" (run from the frozen copy {frozen.relative_to(REPO_ROOT)})"
    return (
        f"rgbm_rs {version('rgbm_rs')}{git}{core}; LightGBM {version('lightgbm')}; "
        f"XGBoost {version('xgboost')}; CatBoost {version('catboost')}; numpy {version('numpy')}; scikit-learn {version('scikit-learn')}; "
        f"Python {platform.python_version()}"
    )


SHORT_NAMES = {
    "rgbm": "rgbm_rs",
    "lightgbm": "LightGBM",
    "xgboost": "XGBoost",
    "xgboost-d6": "XGBoost",
    "catboost": "CatBoost",
    "sklearn-hgb": "scikit-learn HGB",
}


def markdown_section(
    args, tables: dict, elapsed: float, versions: str, machine: str, started: str, warnings: list[str]
) -> str:
    command = shlex.join(["python", *sys.argv])
    title = " vs ".join(dict.fromkeys(SHORT_NAMES[lib] for lib in args.libs))  # ordered, deduplicated
    parts = [
        f"## {title}: end-to-end ({args.rounds} rounds)",
        "",
        f"- Command: `{command}`",
        f"- Date: {started} (run took {elapsed / 60:.1f} min)",
        f"- Machine: {machine}",
        f"- Versions: {versions}",
        f"- Settings: {THREADS} threads (`n_jobs={THREADS}` / `thread_count={THREADS}`, "
        f"`OMP_NUM_THREADS={THREADS}`), {MAX_BINS} bins, "
        f"{LEAVES} leaves best-first, learning rate {LEARNING_RATE}, {args.rounds} rounds, "
        f"min {MIN_LEAF_ROWS} rows per leaf, no early stopping, float32 input; each library's classifier "
        "(log loss) for binary tasks, its regressor (squared error) for regression. "
        'XGBoost: `tree_method="hist"`, `grow_policy="lossguide"`, `max_leaves=31`, `max_depth=0` '
        "(its row limit is a hessian one, `min_child_weight=1`, since it has no row-count limit); "
        "the depth-6 row is XGBoost's default depth-wise growth, for reference. "
        f"CatBoost: its own default tree shape, symmetric (oblivious) trees of depth {CATBOOST_DEPTH} "
        f'(`grow_policy="SymmetricTree"`), `border_count={MAX_BINS - 1}` (= {MAX_BINS} bins), other '
        "parameters at CatBoost's defaults (`l2_leaf_reg=3`, no row-count limit per leaf). "
        f"scikit-learn HGB: `HistGradientBoosting*` with `max_leaf_nodes={LEAVES}`, `max_bins={MAX_BINS}`, "
        f"`min_samples_leaf={MIN_LEAF_ROWS}`, `early_stopping=False` (threads from `OMP_NUM_THREADS`).",
        f"- Method: every fit in a fresh process; {args.reps} repetition{'s' if args.reps != 1 else ''} with the libraries interleaved "
        "(order rotated each repetition); medians reported. Fit time = wall time of `fit` only (data "
        "already in memory, library imported). Predict = median of 3 calls on the whole test set "
        "(`predict_proba` for binary tasks, `predict` for regression). 1-row latency = median of "
        f"{LATENCY_CALLS} calls of the same method on one test row after {LATENCY_WARMUP} warm-up calls; "
        "it includes each library's Python-call overhead (input validation, conversion, thread start-up), "
        "which dominates at one row. Test score = AUC (binary) or RMSE (regression) of those predictions. "
        "Fit peak RSS = VmHWM after `fit` minus RSS just before it (high-water mark reset via "
        "`/proc/self/clear_refs`). rgbm_rs runs from a copy of the build frozen at the start. Fit CPU/wall = process CPU time / wall time during `fit` (2.0 = both "
        f"cores busy). A fit during which other processes used > {100 * args.max_others:.0f}% of the "
        f"machine (/proc/stat busy+steal minus the child's own) was retried, after waiting up to "
        f"{args.retry_pause:.0f} s for a quiet machine, at most {args.retries} time{'s' if args.retries != 1 else ''}; when every attempt was "
        "contended the fastest is kept and the row is marked CONTENDED (k/n = repetitions affected). "
        "The predict, 1-row latency and setup timings after the fit are not retried, but when others used "
        f"> {100 * args.max_others:.0f}% of the machine during them the row is marked predict/setup CONTENDED.",
        "- Setup = binning / dataset construction, measured in the same child after fit and "
        "predictions (so it does not affect the fit's peak RSS); it is part of the fit time, not extra. "
        f'LightGBM: `lightgbm.Dataset(X, y, params={{"max_bin": {MAX_BINS}, "verbose": -1}}, '
        "free_raw_data=True).construct()`; "
        f"XGBoost (both rows): `xgboost.QuantileDMatrix(X, y, max_bin={MAX_BINS}, nthread={THREADS})`; "
        f"CatBoost: `catboost.Pool(X, y, thread_count={THREADS}).quantize(border_count={MAX_BINS - 1})`; "
        "each timed on its own. "
        "rgbm_rs has no separate construction step, so its setup is timed like the others', after the "
        "measured fit: a 1-round refit of the same estimator minus its round's wall time from "
        '`training_log_["seconds"]` (input validation and conversion, binning, initialisation). '
        "The cold value (the measured fit minus all its rounds, which also pays the process's first-call "
        "costs) is in the raw JSON as `setup_cold_s`. "
        "scikit-learn HGB: not measured (–).",
        "",
        "### Datasets",
        "",
        tables["datasets"],
        "",
        "higgs1m is synthetic (Higgs-like, generated by `generate_higgs` in compare.py, fixed seed), "
        "test = last 20% of rows; a9a is the LIBSVM a9a/a9a.t split, densified; regression500k is "
        'synthetic with YearPredictionMSD\'s shape (90 features: 12 correlated "timbre means" + 78 '
        '"covariances" built from them; year-like target = nonlinear function of a few features + '
        "Gaussian noise of sd 6; `generate_regression` in compare.py, fixed seed), test = last 20% of rows.",
        "",
        "### Results (medians)",
        "",
        tables["results"],
        "",
    ]
    if tables.get("ratios"):
        parts += [
            "### Ratios (rgbm_rs / other; below 1 = rgbm_rs faster or smaller)",
            "",
            "Score: AUC difference (above 0 = rgbm_rs better) for binary tasks, RMSE ratio "
            "(below 1 = rgbm_rs better) for regression.",
            "",
            tables["ratios"],
            "",
        ]
    if warnings:
        parts += ["### Warnings", "", *[f"- {w}" for w in warnings], ""]
    return "\n".join(parts)


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__[__doc__.index("Usage") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    p.add_argument("--rounds", type=int, default=100, help="boosting rounds (default 100)")
    p.add_argument("--datasets", default=",".join(ALL_DATASETS), help="comma list from: " + ", ".join(ALL_DATASETS))
    p.add_argument("--libs", default=",".join(ALL_LIBS), help="comma list from: " + ", ".join(ALL_LIBS))
    p.add_argument(
        "--rows", type=int, default=HIGGS_ROWS, help="rows of the Higgs-like data (default 1M), for quick checks"
    )
    p.add_argument(
        "--reg-rows",
        type=int,
        default=REG_ROWS,
        help=f"rows of the regression data (default {REG_ROWS:,}; 80%% train, 20%% test), for quick checks",
    )
    p.add_argument("--write-md", metavar="PATH", help="also write a markdown section to PATH")
    p.add_argument(
        "--json", metavar="PATH", help="raw measurements (default: next to --write-md, or bench_out/compare_last.json)"
    )
    p.add_argument(
        "--max-others", type=float, default=0.05, help="contention threshold, fraction of the machine (default 0.05)"
    )
    p.add_argument("--retries", type=int, default=2, help="retries of a contended fit (default 2)")
    p.add_argument(
        "--retry-pause",
        type=float,
        default=30.0,
        help="max seconds to wait for a quiet machine before a retry (default 30)",
    )
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed per child (default 3600)")
    p.add_argument(
        "--no-freeze",
        action="store_true",
        help="run rgbm_rs from the live install instead of a frozen copy of it (bench_out/frozen/)",
    )
    p.add_argument("--threads", type=int, default=THREADS, help=f"threads per library (default {THREADS})")
    p.add_argument("--child", metavar="JOB_JSON", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is None:
        args.libs = [s.strip() for s in args.libs.split(",") if s.strip()]
        args.datasets = [s.strip() for s in args.datasets.split(",") if s.strip()]
        for lib in args.libs:
            if lib not in ALL_LIBS:
                p.error(f"unknown library {lib!r}; choose from {', '.join(ALL_LIBS)}")
        for ds in args.datasets:
            if ds not in ALL_DATASETS:
                p.error(f"unknown dataset {ds!r}; choose from {', '.join(ALL_DATASETS)}")
        if args.reps < 1 or args.rounds < 1 or args.rows < 10 or args.reg_rows < 10:
            p.error("--reps and --rounds must be >= 1, --rows and --reg-rows >= 10")
        if args.threads < 1:
            p.error("--threads must be >= 1")
    return args


def main(argv=None) -> None:
    global THREADS
    args = parse_args(argv)
    if args.child is not None:
        child_main(args.child)
        return
    THREADS = args.threads

    started = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    t_start = time.perf_counter()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    prepare = {
        "higgs1m": lambda: prepare_higgs(args.rows),
        "a9a": prepare_a9a,
        "regression500k": lambda: prepare_regression(args.reg_rows),
    }
    specs = {ds: prepare[ds]() for ds in args.datasets}
    descriptions = {specs[ds]["name"]: describe_dataset(specs[ds]) for ds in args.datasets}
    names = [specs[ds]["name"] for ds in args.datasets]
    tasks = {specs[ds]["name"]: specs[ds]["task"] for ds in args.datasets}
    args.frozen, core_digest = None, None
    if "rgbm" in args.libs:
        if args.no_freeze:
            core_digest = _core_library_digest()
        else:
            args.frozen, core_digest = freeze_rgbm()
            log(f"rgbm_rs build {core_digest} frozen in {args.frozen.relative_to(REPO_ROOT)}")
    versions, machine = library_versions(core_digest, args.frozen), machine_description()

    records = []
    for rep in range(args.reps):
        shift = rep % len(args.libs)
        order = args.libs[shift:] + args.libs[:shift]
        for ds in args.datasets:
            log(f"rep {rep + 1}/{args.reps}, {specs[ds]['name']}: {', '.join(order)}")
            for lib in order:
                job = {"lib": lib, "rounds": args.rounds, "rep": rep, "dataset": specs[ds]}
                records.append(measure(job, args))
    elapsed = time.perf_counter() - t_start

    summary = summarize(records, args.libs, names, args.max_others)
    tables = {
        "datasets": dataset_table(descriptions),
        "results": results_table(summary, args.libs, names, tasks),
        "ratios": ratio_table(summary, args.libs, names, tasks),
    }
    print(tables["results"])
    if tables["ratios"]:
        print()
        print(tables["ratios"])
    print(f"\n{len(records)} measurements in {elapsed / 60:.1f} min", file=sys.stderr)

    warnings = []
    digests = {a.get("core_digest") for r in records for a in r.get("attempts", []) if a.get("core_digest")}
    if digests - {core_digest}:
        warnings.append(
            f"the rgbm_rs native module was rebuilt during the run (sha256 {core_digest} at the start; "
            f"fits used {', '.join(sorted(digests))}): rgbm_rs rows mix builds"
        )
    for w in warnings:
        log(f"WARNING: {w}")

    json_path = (
        Path(args.json)
        if args.json
        else (Path(args.write_md).with_suffix(".json") if args.write_md else OUT_DIR / "compare_last.json")
    )
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(
        json.dumps(
            {
                "command": shlex.join(["python", *sys.argv]),
                "date": started,
                "elapsed_s": elapsed,
                "machine": machine,
                "versions": versions,
                "datasets": descriptions,
                "warnings": warnings,
                "records": records,
            },
            indent=1,
        )
    )
    log(f"raw measurements: {json_path}")
    if args.write_md:
        md_path = Path(args.write_md)
        md_path.parent.mkdir(parents=True, exist_ok=True)
        md_path.write_text(markdown_section(args, tables, elapsed, versions, machine, started, warnings))
        log(f"markdown section: {md_path}")


if __name__ == "__main__":
    main()
