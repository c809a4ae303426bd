"""Threads, fork, memory and determinism.

(a) concurrent predictions on one fitted model equal the serial ones;
(b) fit releases the GIL;
(c) fork safety: a fork-started child can fit and predict;
(d) no leaks over repeated fit/predict/save/load/pickle;
(e) determinism: the same random_state gives the same model for any n_jobs.

Checks that could hang or leak run in a subprocess with a timeout.
"""

import os
import re
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor


def run_script(script, *args, timeout=120):
    """Run a Python script in a fresh interpreter; a hang fails the test instead of hanging CI."""
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"subprocess did not finish within {timeout} s; output so far: {e.stdout!r} {e.stderr!r}")


# ---------------------------------------------------------------------------
# (a) concurrent predictions
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(4000, 6))
    X[rng.random(4000) < 0.05, 2] = np.nan
    yr = np.sin(X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=4000)
    y3 = np.digitize(yr, [-0.7, 0.7])
    kw = dict(n_estimators=25, random_state=0)
    return X, {
        "regressor": RGBMRegressor(**kw).fit(X, yr),
        "gaussian": RGBMRegressor(loss="gaussian", **kw).fit(X, yr),
        "binary": RGBMClassifier(**kw).fit(X, (yr > 0).astype(int)),
        "multiclass": RGBMClassifier(**kw).fit(X, y3),
        "sglb": RGBMRegressor(langevin=True, **kw).fit(X, yr),
    }


def _all_outputs(models, X):
    out = {}
    for name, m in models.items():
        if isinstance(m, RGBMClassifier):
            out[name + ".proba"] = m.predict_proba(X)
            out[name + ".labels"] = m.predict(X)
            out[name + ".raw"] = m.decision_function(X)
        else:
            out[name + ".predict"] = m.predict(X)
        if name == "gaussian":
            out[name + ".std"] = m.predict(X, return_std=True)[1]
        if name == "sglb":
            out[name + ".knowledge"] = m.predict_uncertainty(X, n_members=5)["knowledge"]
            out[name + ".staged"] = np.array(list(m.staged_predict(X[:500])))
    return out


def test_concurrent_predict_equals_serial(fitted):
    X, models = fitted
    want = _all_outputs(models, X)
    n_threads, repeats = 4, 3
    barrier = threading.Barrier(n_threads)
    results = [[] for _ in range(n_threads)]
    errors = []

    def work(i):
        try:
            barrier.wait(timeout=30)
            for _ in range(repeats):
                results[i].append(_all_outputs(models, X))
        except BaseException as e:  # reported below; a thread must not die silently
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a predicting thread hung"
    assert not errors, errors
    for per_thread in results:
        assert len(per_thread) == repeats
        for got in per_thread:
            for key, value in want.items():
                np.testing.assert_array_equal(got[key], value, err_msg=key)


def test_concurrent_predict_while_another_model_fits(fitted):
    """Prediction on one model is unaffected by a fit of another in a second thread."""
    X, models = fitted
    reg = models["regressor"]
    want = reg.predict(X)
    done = threading.Event()
    failures = []

    def fit_other():
        try:
            rng = np.random.default_rng(5)
            Xo = rng.normal(size=(20_000, 8))
            RGBMRegressor(n_estimators=30, random_state=1).fit(Xo, Xo[:, 0])
        except BaseException as e:
            failures.append(e)
        finally:
            done.set()

    t = threading.Thread(target=fit_other)
    t.start()
    rounds = 0
    while not done.is_set() or rounds == 0:
        np.testing.assert_array_equal(reg.predict(X), want)
        rounds += 1
    t.join(timeout=120)
    assert not failures, failures


_CONCURRENT_FITS_SCRIPT = """
import threading
import numpy as np
from rgbm_rs import RGBMClassifier, RGBMRegressor

rng = np.random.default_rng(3)
X = rng.normal(size=(6000, 12))
y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=6000)
seen = []

def fit(i):
    kw = dict(n_estimators=15, n_jobs=2, random_state=i)
    if i % 4 == 0:
        return RGBMRegressor(**kw).fit(X, y)
    if i % 4 == 1:
        return RGBMRegressor(selection="groups", selection_size=3, langevin=True, **kw).fit(X, y)
    if i % 4 == 2:
        # Python runs on a pool worker after every round.
        return RGBMClassifier(**kw).fit(X, (y > 0).astype(int), callbacks=[lambda env: seen.append(i)])
    return RGBMRegressor(max_leaves=15, max_depth=None, subsample=0.7, **kw).fit(X, y)

def outputs(m):
    return m.predict_proba(X) if isinstance(m, RGBMClassifier) else m.predict(X)

n = 8
want = [outputs(fit(i)) for i in range(n)]
got, errors = [None] * n, []
barrier = threading.Barrier(n)

def work(i):
    try:
        barrier.wait(timeout=30)
        got[i] = outputs(fit(i))
    except BaseException as e:
        errors.append(repr(e))

threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
for i in range(n):
    assert np.array_equal(got[i], want[i]), f"fit {i} differs when fitted concurrently"
print("OK", flush=True)
"""


# Fits with the same n_jobs started together from several Python threads all
# finish, each equal to its serial fit.
def test_concurrent_fits_with_the_same_n_jobs_equal_serial_fits():
    out = run_script(_CONCURRENT_FITS_SCRIPT, timeout=180)
    assert out.returncode == 0 and out.stdout.strip() == "OK", (out.returncode, out.stdout, out.stderr[-2000:])


_NESTED_SCRIPT = """
import threading
import numpy as np
from rgbm_rs import RGBMRegressor

rng = np.random.default_rng(0)
X = rng.normal(size=(500, 4))
y = X[:, 0] + 0.1 * rng.normal(size=500)
other = RGBMRegressor(n_estimators=3, n_jobs=1).fit(X, y)
want = other.predict(X)
inner = []

def fit_inside(env):
    # A callback runs on the one worker of the outer fit's pool.
    inner.append(RGBMRegressor(n_estimators=2, n_jobs=1).fit(X, y).predict(X[:5]))
    return False

RGBMRegressor(n_estimators=3, n_jobs=1).fit(X, y, callbacks=[fit_inside])
assert len(inner) == 3, len(inner)

# A prediction from another thread while a one-thread fit is paused in a callback.
started, release = threading.Event(), threading.Event()
def pause(env):
    started.set()
    release.wait(30)
    return True
t = threading.Thread(target=lambda: RGBMRegressor(n_estimators=2, n_jobs=1).fit(X, y, callbacks=[pause]))
t.start()
started.wait(30)
got = other.predict(X)
release.set()
t.join()
assert np.array_equal(got, want)
print("OK", flush=True)
"""


# Default n_jobs in a process pinned to one CPU also means one-thread pools.
_ONE_CPU = "import os\nos.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"


@pytest.mark.parametrize("setup", ["n_jobs=1", "one_cpu"])
def test_fit_inside_a_callback_and_predict_beside_a_paused_fit_finish(setup):
    """A job never waits for the pool of another job, even one on the same thread count."""
    if setup == "one_cpu" and not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs os.sched_setaffinity")
    script = _NESTED_SCRIPT if setup == "n_jobs=1" else _ONE_CPU + _NESTED_SCRIPT.replace("n_jobs=1", "n_jobs=None")
    out = run_script(script, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "OK", (out.returncode, out.stdout, out.stderr[-2000:])


# ---------------------------------------------------------------------------
# (b) the GIL is released during fit
# ---------------------------------------------------------------------------


def test_fit_lets_python_threads_run():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50_000, 10))
    y = X[:, 0] + rng.normal(size=50_000)
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1

    t = threading.Thread(target=count, daemon=True)
    t.start()
    try:
        # Baseline: how fast the counter runs while the main thread waits without the GIL.
        c0, t0 = counter[0], time.perf_counter()
        time.sleep(0.3)
        baseline_rate = (counter[0] - c0) / (time.perf_counter() - t0)

        # Fit repeatedly for at least 0.5 s, so a faster fit does not make the
        # window too short to tell.
        c0, t0 = counter[0], time.perf_counter()
        fits = 0
        while time.perf_counter() - t0 < 0.5:
            RGBMRegressor(n_estimators=60, max_depth=6, random_state=0, n_jobs=1).fit(X, y)
            fits += 1
        elapsed = time.perf_counter() - t0
        during = counter[0] - c0
    finally:
        stop.set()
        t.join(timeout=10)
    # Holding the GIL for the whole fit would leave the counter (nearly) still:
    # at most a switch interval or two of progress.
    assert during > 0.1 * baseline_rate * elapsed, (during, baseline_rate, elapsed, fits)


# ---------------------------------------------------------------------------
# (c) fork safety
# ---------------------------------------------------------------------------

_FORK_SCRIPT = """
import multiprocessing as mp
import sys
import numpy as np
from rgbm_rs import RGBMClassifier, RGBMRegressor

def data(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3000, 5))
    return X, X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=3000)

def child(queue):
    X, y = data(1)
    reg = RGBMRegressor(n_estimators=10, random_state=0).fit(X, y)
    clf = RGBMClassifier(n_estimators=10, random_state=0).fit(X, (y > 0).astype(int))
    queue.put((reg.predict(X).tolist(), clf.predict_proba(X).tolist()))

if __name__ == "__main__":
    parent_predicts = sys.argv[1] == "yes"
    X, y = data(0)
    model = RGBMRegressor(n_estimators=10, random_state=0).fit(X, y)
    if parent_predicts:
        model.predict(X)  # starts the native thread pool used by prediction
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=child, args=(queue,))
    proc.start()
    try:
        got = queue.get(timeout=float(sys.argv[2]))
    except Exception:
        got = None
    proc.join(timeout=10 if got is not None else 1)
    if proc.is_alive():
        proc.kill()
        print("CHILD HUNG", flush=True)
        sys.exit(3)
    if got is None or proc.exitcode != 0:
        print("CHILD FAILED", proc.exitcode, flush=True)
        sys.exit(4)
    # The same computation in the parent, after the child has finished.
    Xc, yc = data(1)
    reg = RGBMRegressor(n_estimators=10, random_state=0).fit(Xc, yc)
    clf = RGBMClassifier(n_estimators=10, random_state=0).fit(Xc, (yc > 0).astype(int))
    assert np.array_equal(np.array(got[0]), reg.predict(Xc)), "child regressor differs"
    assert np.array_equal(np.array(got[1]), clf.predict_proba(Xc)), "child classifier differs"
    print("OK", flush=True)
"""


def test_fork_child_can_fit_and_predict_after_parent_fit():
    out = run_script(_FORK_SCRIPT, "no", 60, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "OK", (out.returncode, out.stdout, out.stderr[-2000:])


# Training and prediction run in a per-process pool: a forked child builds its own.
def test_fork_child_can_predict_after_parent_predict():
    out = run_script(_FORK_SCRIPT, "yes", 10, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "OK", (out.returncode, out.stdout, out.stderr[-2000:])


# ---------------------------------------------------------------------------
# (d) no leaks
# ---------------------------------------------------------------------------

_LEAK_SCRIPT = """
import os, pickle, sys
import numpy as np
from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model

folder = sys.argv[1]
page = os.sysconf("SC_PAGE_SIZE")

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page

def threads():
    return len(os.listdir("/proc/self/task"))

rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 6))
X[rng.random(2000) < 0.05, 3] = np.nan
y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=2000)
y3 = np.digitize(y, [-0.5, 0.5])
path = os.path.join(folder, "model.json")
marks = {}
for cycle in range(1, 31):
    reg = RGBMRegressor(n_estimators=20, random_state=cycle, subsample=0.8).fit(X, y, eval_set=[(X, y)])
    clf = RGBMClassifier(n_estimators=10, random_state=cycle).fit(X, y3)
    sglb = RGBMRegressor(n_estimators=20, langevin=True, random_state=cycle).fit(X, y)
    p = reg.predict(X)
    q = clf.predict_proba(X)
    sglb.predict_uncertainty(X, n_members=5)
    list(sglb.staged_predict(X))
    reg.save_model(path)
    assert np.array_equal(load_model(path).predict(X), p)
    clf.save_model(path)
    assert np.array_equal(load_model(path).predict_proba(X), q)
    assert np.array_equal(pickle.loads(pickle.dumps(reg)).predict(X), p)
    assert np.array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), q)
    try:
        reg.predict(X[:, :2])
    except ValueError:
        pass
    try:
        load_model(path + ".missing")
    except OSError:
        pass
    del reg, clf, sglb
    if cycle in (5, 30):
        marks[cycle] = (rss(), threads())
print(marks[5][0], marks[30][0], marks[5][1], marks[30][1], flush=True)
"""


def test_no_memory_or_thread_leak(tmp_path):
    out = run_script(_LEAK_SCRIPT, tmp_path, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    rss5, rss30, threads5, threads30 = map(int, out.stdout.split())
    growth = (rss30 - rss5) / 2**20
    assert growth < 20, f"RSS grew by {growth:.1f} MiB between cycle 5 and cycle 30"
    assert threads30 <= threads5 + 2, f"threads grew from {threads5} to {threads30}"


# ---------------------------------------------------------------------------
# (e) determinism across thread counts
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def det_data():
    # 20k rows: several row chunks (16k) and histogram chunks, so thread counts matter if anything does.
    rng = np.random.default_rng(42)
    n = 20_000
    X = rng.normal(size=(n, 6))
    X[rng.random(n) < 0.05, 1] = np.nan
    y = 2 * X[:, 0] + np.sin(X[:, 2]) + 0.3 * rng.normal(size=n)
    return X, y


def _normalised_json(est):
    return re.sub(r'"n_jobs":\s*(null|\d+)', '"n_jobs":null', est.get_booster().to_json())


DETERMINISM_CASES = {
    "plain": (RGBMRegressor, {}),
    "subsample": (RGBMRegressor, {"subsample": 0.7}),
    "groups_tree_scope": (
        RGBMRegressor,
        {"selection": "groups", "groups": [[0, 1], [2, 3], [4, 5]], "selection_size": 2},
    ),
    "random_node_scope": (RGBMRegressor, {"selection": "random", "selection_size": 0.3, "selection_scope": "node"}),
    "langevin": (RGBMRegressor, {"langevin": True}),
    "rgb": (RGBMRegressor, {"booster": "rgb", "max_depth": 4}),
    "multiclass": (RGBMClassifier, {}),
    "gaussian": (RGBMRegressor, {"loss": "gaussian"}),
    "line_search": (RGBMRegressor, {"step": "line_search"}),
}


@pytest.mark.parametrize("case", sorted(DETERMINISM_CASES))
def test_same_seed_same_model_for_any_n_jobs(det_data, case):
    X, y = det_data
    cls, params = DETERMINISM_CASES[case]
    target = np.digitize(y, [-1.0, 1.0]) if cls is RGBMClassifier else y
    texts = {}
    for n_jobs in (1, 2, 4):
        est = cls(n_estimators=6, min_samples_leaf=20, random_state=123, n_jobs=n_jobs, **params).fit(X, target)
        texts[n_jobs] = _normalised_json(est)
    assert '"n_jobs":null' in texts[1]
    assert texts[1] == texts[2], f"{case}: n_jobs=1 and n_jobs=2 give different models"
    assert texts[1] == texts[4], f"{case}: n_jobs=1 and n_jobs=4 give different models"
    # ... and a different seed gives a different model where the seed matters.
    if params.get("subsample") or params.get("langevin") or params.get("selection") in ("groups", "random"):
        other = cls(n_estimators=6, min_samples_leaf=20, random_state=124, n_jobs=2, **params).fit(X, target)
        assert _normalised_json(other) != texts[1]
