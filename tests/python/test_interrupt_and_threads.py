"""Ctrl-C stops every long phase (binning, rounds, prediction) within a
second or two; concurrent predictions agree with a serial one; the thread
count follows n_jobs and the cores the process may use. (That fit releases
the GIL is checked in test_concurrency_and_leaks.py.)"""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from rgbm_rs import RGBMRegressor

_LONG_FIT = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from rgbm_rs import RGBMRegressor
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200_000, 20)).astype(np.float32)
    y = X[:, 0] + rng.normal(size=200_000)
    reg = RGBMRegressor(n_estimators=100_000, max_depth=8, random_state=0)
    print("fitting", flush=True)
    try:
        reg.fit(X, y)
    except KeyboardInterrupt:
        print("interrupted", hasattr(reg, "_booster"), flush=True)
        sys.exit(0)
    print("finished", flush=True)
    """
)


# One round of several seconds (up to 2**18 leaves on 400k rows): the
# interrupt must not wait for the round to end.
_LONG_ROUND = _LONG_FIT.replace(
    "RGBMRegressor(n_estimators=100_000, max_depth=8, random_state=0)",
    "RGBMRegressor(n_estimators=1, max_depth=None, max_leaves=2**18, min_samples_leaf=1, random_state=0)",
).replace("200_000", "400_000")


def _stops_promptly(script, started="started", delay=0.5, reported="interrupted"):
    """Runs `script` until it prints `started`, sends SIGINT `delay` seconds
    later, checks that it printed `reported` and exited cleanly, and returns
    the seconds it took to stop."""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == started
        time.sleep(delay)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
        waited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out.strip() == reported, out
    assert proc.returncode == 0
    return waited


@pytest.mark.parametrize("script", [_LONG_FIT, _LONG_ROUND], ids=["many_rounds", "one_long_round"])
def test_sigint_stops_fit_promptly(script):
    assert "RGBMRegressor(n_estimators=1," in _LONG_ROUND
    waited = _stops_promptly(script, started="fitting", delay=1.5, reported="interrupted False")
    assert waited < 2.0, f"fit took {waited:.2f}s to stop after SIGINT"


# cv with early stopping trains its folds on threads of their own, which
# see no signals: Ctrl-C must still stop the round being grown, and leave
# no thread behind.
_LONG_CV_ROUND = textwrap.dedent(
    """
    import sys, threading
    import numpy as np
    import rgbm_rs
    from rgbm_rs import Dataset, RGBMRegressor
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400_000, 20)).astype(np.float32)
    ds = Dataset(X, X[:, 0] + rng.normal(size=400_000))
    est = RGBMRegressor(n_estimators=5, max_depth=None, max_leaves=2**18, min_samples_leaf=1, random_state=0)
    print("started", flush=True)
    try:
        rgbm_rs.cv(est, ds, folds=2, early_stopping_rounds=2)
    except KeyboardInterrupt:
        print("interrupted", threading.active_count(), flush=True)
        sys.exit(0)
    print("finished", flush=True)
    """
)


def test_sigint_stops_cv_with_early_stopping_promptly():
    waited = _stops_promptly(_LONG_CV_ROUND, delay=1.5, reported="interrupted 1")
    assert waited < 2.0, f"cv took {waited:.2f}s to stop after SIGINT"


# Binning alone: 6M rows and 65,535 bins per feature take several seconds.
_LONG_BINNING = textwrap.dedent(
    """
    import sys
    import numpy as np
    from rgbm_rs import RGBMRegressor
    X = np.random.default_rng(0).random(size=(6_000_000, 12), dtype=np.float32)
    reg = RGBMRegressor(n_estimators=1, max_depth=1, max_bins=65535)
    print("started", flush=True)
    try:
        reg.fit(X, X[:, 0])
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(0)
    print("finished", flush=True)
    """
)


# One query of 50k rows, every pair kept: a round's gradients take ~10 s.
_LONG_QUERY = textwrap.dedent(
    """
    import sys
    import numpy as np
    from rgbm_rs import RGBMRanker
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50_000, 5))
    label = np.clip(np.floor(X[:, 0] + 2), 0, 4).astype(int)
    ranker = RGBMRanker(n_estimators=5, lambdarank_truncation_level=50_000)
    print("started", flush=True)
    try:
        ranker.fit(X, label, group=[50_000])
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(0)
    print("finished", flush=True)
    """
)


def test_sigint_stops_ranking_gradients_promptly():
    waited = _stops_promptly(_LONG_QUERY, delay=1.5)
    assert waited < 2.0, f"the LambdaRank gradients took {waited:.2f}s to stop after SIGINT"


def test_sigint_stops_binning_promptly():
    waited = _stops_promptly(_LONG_BINNING)
    assert waited < 2.0, f"binning took {waited:.2f}s to stop after SIGINT"


# Runs PHASE, reporting whether Ctrl-C stopped it.
_RUN_PHASE = textwrap.dedent(
    """
    print("started", flush=True)
    try:
        PHASE
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(0)
    print("finished", flush=True)
    """
)

# A 2,000-round SGLB chain over 2M rows: each prediction takes many seconds.
_LONG_PREDICTION = (
    textwrap.dedent(
        """
    import sys
    import numpy as np
    from rgbm_rs import RGBMClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 10))
    clf = RGBMClassifier(n_estimators=2000, max_depth=6, learning_rate=0.01, langevin=True,
                         random_state=0).fit(X, X[:, 0] > 0)
    Xbig = rng.normal(size=(2_000_000, 10))
    """
    )
    + _RUN_PHASE
)


@pytest.mark.parametrize(
    "phase",
    [
        "clf.predict_proba(Xbig)",
        "clf.decision_function(Xbig)",
        "list(clf.staged_predict_proba(Xbig))",
        "clf.predict_uncertainty(Xbig, n_members=10)",
        "clf.predict(Xbig, pred_contrib=True)",
    ],
)
def test_sigint_stops_prediction_promptly(phase):
    waited = _stops_promptly(_LONG_PREDICTION.replace("PHASE", phase))
    assert waited < 2.0, f"{phase} took {waited:.2f}s to stop after SIGINT"


# 300k rows x 3000 trees of up to 256 leaves: a 3.6 GB leaf-index array.
_LONG_LEAF_INDICES = (
    textwrap.dedent(
        """
    import sys
    import numpy as np
    from rgbm_rs import RGBMRegressor
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 20))
    reg = RGBMRegressor(n_estimators=3000, max_depth=8, learning_rate=0.01).fit(X, X[:, 0])
    Xbig = rng.normal(size=(300_000, 20))
    """
    )
    + _RUN_PHASE
)


@pytest.mark.parametrize("phase", ["reg.apply(Xbig)", "reg.predict(Xbig, pred_leaf=True)"])
def test_sigint_stops_leaf_indices_promptly(phase):
    # The output is not zero-filled before the first block: Ctrl-C 0.3 s in
    # is honoured within a block, not after gigabytes of writes.
    waited = _stops_promptly(_LONG_LEAF_INDICES.replace("PHASE", phase), delay=0.3)
    assert waited < 1.5, f"{phase} took {waited:.2f}s to stop after SIGINT"


# A 12,000-tree model of up to 1024 leaves a tree (~390 MB file), written by
# repeating one tree's text; `out` exists and must survive an interrupted save.
_BIG_MODEL_FILE = textwrap.dedent(
    """
    import json, os, sys, tempfile
    import numpy as np
    from rgbm_rs import RGBMRegressor, load_model
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 10))
    small = RGBMRegressor(n_estimators=1, max_depth=10, min_samples_leaf=1).fit(X, rng.normal(size=20_000))
    folder = tempfile.mkdtemp()
    path, out = os.path.join(folder, "big.json"), os.path.join(folder, "out.json")
    small.save_model(path)
    with open(path) as f:
        doc = json.load(f)
    tree = json.dumps(doc["model"]["trees"][0])
    doc["model"]["trees"] = "TREES"
    doc["params"]["n_estimators"] = doc["model"]["params"]["n_estimators"] = 12_000
    with open(path, "w") as f:
        f.write(json.dumps(doc).replace('"TREES"', "[" + ",".join([tree] * 12_000) + "]"))
    with open(out, "w") as f:
        f.write("previous")
    model = load_model(path)
    print("started", flush=True)
    try:
        PHASE
    except KeyboardInterrupt:
        with open(out) as f:
            intact = f.read() == "previous" and sorted(os.listdir(folder)) == ["big.json", "out.json"]
        print("interrupted", intact, flush=True)
        sys.exit(0)
    print("finished", flush=True)
    """
)


@pytest.mark.parametrize("phase", ["load_model(path)", "model.save_model(out)"])
def test_sigint_stops_model_file_io_promptly(phase):
    # An interrupted save leaves the previous file and no temporary one.
    waited = _stops_promptly(_BIG_MODEL_FILE.replace("PHASE", phase), delay=0.4, reported="interrupted True")
    assert waited < 2.0, f"{phase} took {waited:.2f}s to stop after SIGINT"


# A custom loss, metric or callback that computes in Python, sleeps or
# waits for a lock for 15 s: Ctrl-C must interrupt the callable, as it
# would in plain Python (the fit runs it on the thread that called fit).
_LONG_CALLABLE = textwrap.dedent(
    """
    import sys, threading, time
    import numpy as np
    from rgbm_rs import RGBMRegressor
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4))
    y = X[:, 0]
    held = threading.Lock()
    held.acquire()

    def busy(seconds=15):
        if WAIT == "sleep":
            time.sleep(seconds)
        elif WAIT == "lock":
            held.acquire(timeout=seconds)
        t = time.monotonic()
        while WAIT == "compute" and time.monotonic() - t < seconds:
            pass

    def loss(y_true, raw):
        busy()
        return raw - y_true, np.ones_like(raw)

    def metric(y_true, raw):
        busy()
        return "busy", 0.0, False

    def callback(env):
        busy()

    FIT
    """
).replace("FIT", _RUN_PHASE.replace("PHASE", "FIT"))


@pytest.mark.parametrize(
    "fit",
    [
        "RGBMRegressor(loss=loss, n_estimators=3).fit(X, y)",
        "RGBMRegressor(eval_metric=[metric], n_estimators=3).fit(X, y, eval_set=[(X, y)])",
        "RGBMRegressor(n_estimators=3).fit(X, y, callbacks=[callback])",
    ],
    ids=["loss", "metric", "callback"],
)
@pytest.mark.parametrize("wait", ["compute", "sleep", "lock"])
def test_sigint_interrupts_a_running_python_callable(fit, wait):
    script = _LONG_CALLABLE.replace("FIT", fit).replace("WAIT ==", f"{wait!r} ==")
    waited = _stops_promptly(script, delay=1.0)
    assert waited < 1.5, f"{fit} ({wait}) took {waited:.2f}s to stop after SIGINT"


def test_concurrent_predict_matches_serial():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5000, 6))
    y = np.sin(X[:, 0]) + X[:, 1]
    reg = RGBMRegressor(n_estimators=40, random_state=0).fit(X, y)
    want = reg.predict(X)
    results = [None] * 4

    def work(i):
        results[i] = reg.predict(X)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


_AFFINITY_SCRIPT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    from rgbm_rs import RGBMRegressor, _core
    from rgbm_rs._validation import resolve_n_jobs
    cpus = sorted(os.sched_getaffinity(0))[: int(sys.argv[1])]
    os.sched_setaffinity(0, cpus)
    threads = lambda: len(os.listdir("/proc/self/task"))
    X = np.random.default_rng(0).normal(size=(int(sys.argv[3]), 5))
    before = threads()
    RGBMRegressor(n_estimators=3, n_jobs=eval(sys.argv[2])).fit(X, X[:, 0])
    print(_core.available_cores(), resolve_n_jobs(-2), threads() - before)
    """
)


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_setaffinity"), reason="needs Linux affinity masks")
@pytest.mark.parametrize("n_jobs", [-1, None])
def test_all_cores_means_the_cores_the_process_may_use(n_jobs):
    # A process pinned to k cores counts k cores and starts a pool of k threads
    # (the idle pool it keeps afterwards shows how many), however many the machine has.
    import os

    for k in sorted({1, min(2, len(os.sched_getaffinity(0)))}):
        out = subprocess.run(
            [sys.executable, "-c", _AFFINITY_SCRIPT, str(k), repr(n_jobs), "100000"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        cores, minus_two, started = map(int, out.stdout.split())
        assert (cores, minus_two, started) == (k, max(1, k - 1), k)


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_setaffinity"), reason="needs Linux affinity masks")
def test_small_fits_left_to_choose_run_on_one_thread():
    # Below 10,000 input values the fit's parallel regions cost more than they
    # save: n_jobs=None starts one thread; an explicit count is obeyed.
    import os

    k = min(2, len(os.sched_getaffinity(0)))
    for n_jobs, want in [("None", 1), ("-1", 1), (str(k), k)]:
        out = subprocess.run(
            [sys.executable, "-c", _AFFINITY_SCRIPT, str(k), n_jobs, "1000"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert int(out.stdout.split()[2]) == want, n_jobs


_LIMITS_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import numpy as np
    from threadpoolctl import threadpool_info, threadpool_limits
    from rgbm_rs import RGBMRegressor
    ours = lambda: [i for i in threadpool_info() if i["internal_api"] == "rgbm_rs"]
    threads = lambda: len(os.listdir("/proc/self/task"))
    X = np.random.default_rng(0).normal(size=(100000, 5))
    out = {"listed": len(ours()), "default": ours()[0]["num_threads"]}
    before = threads()
    if sys.argv[1] == "limit":
        with threadpool_limits(limits=1):
            out["inside"] = ours()[0]["num_threads"]
            RGBMRegressor(n_estimators=3).fit(X, X[:, 0])
        out["after"] = ours()[0]["num_threads"]
    else:
        RGBMRegressor(n_estimators=3).fit(X, X[:, 0])
    out["started"] = threads() - before
    print(json.dumps(out))
    """
)


@pytest.mark.skipif(
    not hasattr(__import__("os"), "sched_getaffinity") or len(__import__("os").sched_getaffinity(0)) < 2,
    reason="needs Linux and two cores",
)
def test_n_jobs_none_obeys_threadpoolctl_and_omp_num_threads():
    # joblib's workers (GridSearchCV(n_jobs=-1)) set OMP_NUM_THREADS to their
    # share of the cores, and threadpool_limits bounds every registered
    # pool: a fit left to choose its threads (big enough to use several)
    # starts only that many, as HGB and XGBoost do.
    import json
    import os

    cores = len(os.sched_getaffinity(0))
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}

    def run(mode, **extra):
        out = subprocess.run(
            [sys.executable, "-c", _LIMITS_SCRIPT, mode],
            capture_output=True,
            text=True,
            timeout=120,
            env={**env, **extra},
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    plain = run("plain")
    assert plain == {"listed": 1, "default": cores, "started": cores}
    assert run("plain", OMP_NUM_THREADS="1") == {"listed": 1, "default": 1, "started": 1}
    limited = run("limit")
    assert limited == {"listed": 1, "default": cores, "inside": 1, "after": cores, "started": 1}


_SUBSET_THREADS = textwrap.dedent(
    """
    import os, numpy as np
    from rgbm_rs import Dataset, RGBMRegressor
    X = np.random.default_rng(0).normal(size=(400_000, 10))
    ds = Dataset(X, X[:, 0])
    RGBMRegressor(n_estimators=1, n_jobs=1).fit(ds)
    before = len(os.listdir("/proc/self/task"))
    for part in (ds.subset(np.arange(0, 400_000, 2)), Dataset(X[:1000], X[:1000, 0], reference=ds)):
        RGBMRegressor(n_estimators=1, n_jobs=1).fit(part)
    print(len(os.listdir("/proc/self/task")) - before)
    """
)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_a_subset_fit_gathers_on_the_fits_own_threads():
    # A one-thread fit of a subset or a reference Dataset starts no thread
    # beyond the one-thread fit of the full Dataset (rayon's global pool
    # would start one per core).
    out = subprocess.run([sys.executable, "-c", _SUBSET_THREADS], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == 0


_NO_THREADS = textwrap.dedent(
    """
    import resource, sys, numpy as np
    from rgbm_rs import Dataset, RGBMRegressor
    X = np.random.default_rng(0).normal(size=(2000, 5))
    ds = Dataset(X, X[:, 0])
    RGBMRegressor(n_estimators=1, n_jobs=1).fit(ds)
    vm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + 2**20, vm + 2**20))
    try:
        RGBMRegressor(n_estimators=1, n_jobs=2).fit(ds.subset(np.arange(100)))
        print("fitted")
    except RuntimeError as e:
        print("RuntimeError:", e)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="limits the address space with RLIMIT_AS")
def test_threads_that_cannot_start_are_a_runtime_error_naming_the_cause():
    # 1 MiB of address space left: a thread's stack cannot be mapped.
    out = subprocess.run([sys.executable, "-c", _NO_THREADS], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("RuntimeError: cannot start threads: a pool of 2 (n_jobs)"), out.stdout


_PREDICT_THREADS = textwrap.dedent(
    """
    import json, os, numpy as np
    from rgbm_rs import RGBMRegressor
    threads = lambda: len(os.listdir("/proc/self/task"))
    X = np.random.default_rng(0).normal(size=(20_000, 5))
    est = RGBMRegressor(n_estimators=3, n_jobs=1).fit(X, X[:, 0])
    text, want = est.booster_.to_json(), est.predict(X)
    out = {}
    for n_jobs in (2, 3, 1):
        before = threads()
        same = bool(np.array_equal(est.set_params(n_jobs=n_jobs).predict(X), want))
        out[n_jobs] = [threads() - before, same]
    out["text"] = est.booster_.to_json() == text
    print(json.dumps(out))
    """
)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_predict_runs_on_the_current_n_jobs():
    # As LightGBM's predict: set_params(n_jobs=k) after fit starts a pool of
    # k threads for the next prediction (pools are kept per count, so the
    # fit's one-thread pool is reused for n_jobs=1), the predictions and the
    # model text stay the same.
    import json

    out = subprocess.run([sys.executable, "-c", _PREDICT_THREADS], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"2": [2, True], "3": [3, True], "1": [0, True], "text": True}


def test_predict_refuses_n_jobs_zero_set_after_fit():
    X = np.random.default_rng(0).normal(size=(50, 3))
    est = RGBMRegressor(n_estimators=2).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="n_jobs"):
        est.set_params(n_jobs=0).predict(X)
    with pytest.raises(ValueError, match="got 0"):
        est.booster_.set_n_jobs(0)
