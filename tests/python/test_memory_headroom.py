"""Every operation ends in a result or a MemoryError at any memory headroom,
never in a signal (a failed infallible allocation aborts with SIGABRT). At
the smallest headrooms a fit may instead find no room for its threads'
stacks: the RuntimeError "cannot start threads" is a clean end too.

Each case runs in a child process that prepares its data, runs the
operation once on a small input (thread pools and allocator arenas then
exist), then runs it on the full input under an address-space limit
(RLIMIT_AS, soft only, so it can be lifted again) at each of a geometric
sweep of headrooms above the current usage, from a MiB, where the first
large buffer fails, up to a GiB, where the operation completes. glibc's
mmap threshold is fixed, so that every large buffer is a new mapping that
the limit governs, whatever the earlier runs freed, and glibc keeps one
arena: a thread's own arena reserves 64 MiB of address space up front,
inside which the limit never bites. Which
allocation fails first moves with the headroom, so a sweep reaches the
buffers a single limit would miss. The sizes are small, but above the
thresholds that switch code paths: more than 200,000 rows (the bin
sample), sparse input, a million columns.
"""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")

# MiB above the usage at the call: doubling from 1 MiB, then factors of
# about 1.5 up to 1 GiB (freed memory the allocator kept counts as used).
HEADROOMS = (1, 2, 4, 8, 12, 18, 27, 40, 60, 90, 135, 200, 300, 450, 680, 1024)

_PRELUDE = """
import gc, resource, sys
import numpy as np
import scipy.sparse as sp
import rgbm_rs
from rgbm_rs import Dataset, RGBMClassifier, RGBMRegressor

HEADROOMS = {headrooms}
rng = np.random.default_rng(0)

def sweep(run, warm):
    warm()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    for mib in HEADROOMS:
        gc.collect()
        with open("/proc/self/status") as f:
            used = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (used + (mib << 20), hard))
        try:
            run()
            outcome = "result"
        except MemoryError:
            outcome = "MemoryError"
        except RuntimeError as e:
            # No room for a new thread's stack (EAGAIN from the OS).
            if not str(e).startswith("cannot start threads"):
                raise
            outcome = "threads"
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        print(mib, outcome, flush=True)
"""

_LARGE = """
X = rng.normal(size=(300_000, 4)); y = X[:, 0] + rng.normal(size=300_000)
fit = lambda X, y: RGBMRegressor(n_estimators=2, **PARAMS).fit(X, y)
"""
_FIT = _LARGE + "sweep(lambda: fit(X, y), lambda: fit(X[:1000], y[:1000]))"
_PREDICT = """
Xs = rng.normal(size=(2000, 5)); Xp = rng.normal(size=(1_000_000, 5))
m = MODEL
sweep(lambda: CALL(Xp), lambda: CALL(Xp[:1000]))
"""
_SPARSE = """
X = sp.csr_matrix((rng.normal(size={nnz}), (rng.integers(0, {n}, {nnz}), rng.integers(0, {d}, {nnz}))), shape=({n}, {d}))
y = rng.normal(size={n})
fit = lambda X, y: RGBMRegressor(n_estimators=2, max_depth=4).fit(X, y)
sweep(lambda: fit(X, y), lambda: fit(X[:1000, :100], y[:1000]))
"""


def _predict(model, call):
    return _PREDICT.replace("MODEL", model).replace("CALL", call)


def _sparse(n, d, nnz):
    return _SPARSE.format(n=n, d=d, nnz=nnz)


_CASES = {
    "fit": _FIT.replace("PARAMS", "{}"),
    "fit_huber": _FIT.replace("PARAMS", "dict(loss='huber')"),
    "fit_quantiles": _FIT.replace("PARAMS", "dict(loss='quantile', alpha=[0.1, 0.9])"),
    "Dataset_fit": _LARGE.replace("**PARAMS", "")
    + "sweep(lambda: fit(Dataset(X, y), None), lambda: fit(Dataset(X[:1000], y[:1000]), None))",
    "cv": _LARGE.replace("**PARAMS", "")
    + "cv = lambda X, y: rgbm_rs.cv(RGBMRegressor(n_estimators=2), Dataset(X, y), folds=2)\n"
    + "sweep(lambda: cv(X, y), lambda: cv(X[:1000], y[:1000]))",
    "predict_poisson": _predict("RGBMRegressor(n_estimators=5, loss='poisson').fit(Xs, np.exp(Xs[:, 0]))", "m.predict"),
    "predict_quantiles": _predict(
        "RGBMRegressor(n_estimators=5, loss='quantile', alpha=[0.1, 0.5, 0.9]).fit(Xs, Xs[:, 0])",
        "m.predict",
    ),
    "predict_proba_binary": _predict("RGBMClassifier(n_estimators=5).fit(Xs, Xs[:, 0] > 0)", "m.predict_proba"),
    "predict_proba_multiclass": _predict(
        "RGBMClassifier(n_estimators=5).fit(Xs, np.digitize(Xs[:, 0], [-1, 0, 1]))", "m.predict_proba"
    ),
    "apply": _predict("RGBMRegressor(n_estimators=20).fit(Xs, Xs[:, 0])", "m.apply"),
    # 300k rows x 500 columns, 3M stored values.
    "fit_sparse": _sparse(300_000, 500, 3_000_000),
    # A million columns, 20,000 stored values: the per-column tables.
    "fit_wide_sparse": _sparse(2000, 1_000_000, 20_000),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_every_headroom_ends_in_a_result_or_memory_error(case):
    script = _PRELUDE.format(headrooms=HEADROOMS) + textwrap.dedent(_CASES[case])
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RUST_BACKTRACE": "1", "MALLOC_MMAP_THRESHOLD_": str(1 << 17), "MALLOC_ARENA_MAX": "1"},
    )
    lines = out.stdout.split("\n")
    done = [line for line in lines if line]
    assert out.returncode == 0, (
        f"the child ended with {out.returncode} after headrooms {done}",
        out.stderr[-3000:],
    )
    outcomes = dict(line.split() for line in done)
    assert sorted(int(m) for m in outcomes) == sorted(HEADROOMS), done
    # The sweep reaches both ends: the limit bites, and the call works.
    assert "MemoryError" in outcomes.values(), outcomes
    assert outcomes[str(HEADROOMS[-1])] == "result", outcomes


_HUGE = """
import numpy as np, scipy.sparse as sp
from rgbm_rs import RGBMRegressor
X = sp.csr_matrix((np.ones(300), (np.arange(300), np.arange(300) % 7)), shape=(300, 2**31 - 1))
try:
    RGBMRegressor(n_estimators=2).fit(X, np.random.default_rng(0).normal(size=300))
    print("fitted")
except MemoryError as e:
    print(e)
"""


def _available_bytes():
    with open("/proc/meminfo") as f:
        info = dict(line.split(":", 1) for line in f)
    kib = lambda key: int(info.get(key, "0 kB").split()[0])  # noqa: E731
    return (kib("MemAvailable") + kib("SwapFree")) * 1024


def test_billions_of_empty_columns_are_refused_up_front():
    # 2^31 - 1 columns of 64 bytes of binning tables each: 128 GiB, which
    # overcommit would hand out until the OOM killer ends the process.
    if _available_bytes() > (2**31 - 1) * 64:
        pytest.skip("this machine has the memory: the fit would run")
    out = subprocess.run([sys.executable, "-c", _HUGE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    message = out.stdout.strip()
    assert "X has 2147483647 columns" in message, message
    assert "need at least 128.0 GiB, more than the" in message, message
