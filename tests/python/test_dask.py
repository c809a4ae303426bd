"""Training on a Dask cluster (LocalCluster, 2 worker processes of 1 thread):
the model equals the local exact fit for any partitioning; failures end in
clear errors; no actors are left behind."""

import json
import math
import os
import threading
import time
import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask", reason="the dask extra is not installed")
da = pytest.importorskip("dask.array", reason="the dask extra is not installed")
distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

from sklearn.exceptions import DataConversionWarning  # noqa: E402

import rgbm_rs  # noqa: E402
from rgbm_rs import RGBMClassifier, RGBMRegressor  # noqa: E402
from rgbm_rs.dask import DaskRGBMClassifier, DaskRGBMRegressor  # noqa: E402

N = 3000
# Uneven partitions, an empty one among them; 1 partition; many small ones.
CHUNKINGS = [(700, 0, 1500, 800), (N,), (50,) * 20 + (N - 1000,)]


@pytest.fixture(scope="module", autouse=True)
def restore_environ():
    # A LocalCluster's nannies put distributed.nanny.pre-spawn-environ
    # (OMP_NUM_THREADS=1, ...) into this process's environment for good,
    # where later modules' n_jobs=None would obey it.
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="module")
def client(restore_environ):
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    )
    with distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=120)  # the tests place partitions on both
        yield c
    cluster.close()


def shard_pid(client):
    """The process id of a worker that holds a shard of the running fit
    (both partitions may sit on one worker: the other one is idle)."""
    actors = client.run(lambda dask_worker: (len(dask_worker.state.actors), os.getpid()))
    return next(pid for n, pid in actors.values() if n > 0)


def spread(client, a):
    """`a` with its chunks persisted on the workers in turn (so that a fit
    has a shard on every worker)."""
    workers = sorted(client.nthreads())
    blocks = [client.persist(a.blocks[i], workers=[workers[i % len(workers)]]) for i in range(a.numblocks[0])]
    return da.concatenate(blocks)


def _explode(block):
    raise RuntimeError("X was computed")


def shard_counts(client):
    return sorted(client.run(lambda dask_worker: len(dask_worker.state.actors)).values())


@pytest.fixture(autouse=True)
def no_leaked_actors(client):
    yield
    # Released asynchronously: give the scheduler a moment.
    deadline = time.monotonic() + 5
    while True:
        counts = client.run(lambda dask_worker: len(dask_worker.state.actors))
        if all(v == 0 for v in counts.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert all(v == 0 for v in counts.values()), counts


def data(kind="regression"):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(N, 6))
    X[::11, 2] = np.nan
    r = X[:, 0] * X[:, 1] + np.sin(2 * np.nan_to_num(X[:, 2])) + 0.2 * rng.normal(size=N)
    y = {"regression": r, "binary": (r > 0.1).astype(int), "multiclass": np.digitize(r, [-0.5, 0.5])}[kind]
    w = rng.uniform(0.1, 3.0, size=N)
    return X, y, w


def model_doc(est):
    return json.loads(est.get_booster().to_json())


def darr(v, chunks):
    return da.from_array(v, chunks=(chunks,) + v.shape[1:])


SETUPS = [
    ("regression", dict(max_depth=4), True),
    ("regression", dict(max_depth=None, max_leaves=9), False),
    ("binary", dict(max_depth=3, subsample=0.6), True),
    (
        "binary",
        dict(selection="groups", selection_size=3, selection_scope="node", step="constant", leaf="gradient"),
        False,
    ),
    ("multiclass", dict(max_depth=3), True),
    ("regression", dict(langevin=True, temperature=100.0), True),
    ("regression", dict(colsample_bytree=0.8, colsample_bylevel=0.7, colsample_bynode=0.6, extra_trees=True), True),
    ("binary", dict(max_depth=3, use_quantized_grad=True, quant_train_renew_leaf=True), True),
]


@pytest.mark.parametrize("kind,params,weighted", SETUPS)
def test_the_model_is_the_local_exact_fit(client, kind, params, weighted):
    X, y, w = data(kind)
    params = dict(n_estimators=8, random_state=3, summation="exact", **params)
    local_cls, dask_cls = (
        (RGBMRegressor, DaskRGBMRegressor) if kind == "regression" else (RGBMClassifier, DaskRGBMClassifier)
    )
    sw = w if weighted else None
    expected = model_doc(local_cls(**params).fit(X, y, sample_weight=sw))
    for chunks in CHUNKINGS:
        est = dask_cls(**params).fit(
            darr(X, chunks), darr(y, chunks), sample_weight=None if sw is None else darr(sw, chunks)
        )
        assert model_doc(est) == expected, chunks
    # A shard on each worker; parts combined among the workers (the
    # default), and relayed through the client.
    Xs, ys, ws = (spread(client, darr(v, CHUNKINGS[0])) for v in (X, y, w))
    for reduce in ("workers", "client"):
        est, shards = dask_cls(**params), []
        est._reduce = reduce
        est.fit(
            Xs, ys, sample_weight=ws if weighted else None, callbacks=[lambda env: shards.append(shard_counts(client))]
        )
        assert shards[0] == [1, 1]
        assert model_doc(est) == expected, reduce
    local = est.to_local()
    assert type(local) is local_cls
    np.testing.assert_array_equal(est.predict(darr(X, CHUNKINGS[0])).compute(), local.predict(X))
    np.testing.assert_array_equal(est.predict(X), local.predict(X))
    if kind != "regression":
        np.testing.assert_array_equal(est.predict_proba(darr(X, CHUNKINGS[0])).compute(), local.predict_proba(X))


def test_to_local_refits_to_the_clusters_model(client):
    X, y, _ = data("binary")
    # summation left unset: the cluster sums exactly anyway, and says so.
    est = DaskRGBMClassifier(n_estimators=6, max_depth=3, random_state=1).fit(darr(X, 700), darr(y, 700))
    local = est.to_local()
    assert local.get_params()["summation"] == "exact"
    refit = RGBMClassifier(**local.get_params()).fit(X, y)
    assert model_doc(refit) == model_doc(est)


def test_depth_wise_trees_exchange_once_per_level(client):
    X, y, _ = data()
    depth = 5

    def exchanges(rounds):
        est = DaskRGBMRegressor(n_estimators=rounds, max_depth=depth, random_state=0).fit(
            darr(X, (1000, 2000)), darr(y, (1000, 2000))
        )
        return est.dask_exchanges_["exchanges"]

    # Per round: the gradient grid, the root's total and histogram, one
    # batch per deeper level that is searched, the leaf sums, the round's end.
    assert (exchanges(6) - exchanges(1)) / 5 == 3 + (depth - 1) + 2


def test_dataframes_and_one_worker(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, _ = data()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    params = dict(n_estimators=5, max_depth=3, random_state=0)
    expected = model_doc(RGBMRegressor(summation="exact", **params).fit(X, y))
    Xd = dd.from_pandas(frame, npartitions=3)
    yd = dd.from_pandas(pd.Series(y), npartitions=3)
    assert model_doc(DaskRGBMRegressor(**params).fit(Xd, yd)) == expected
    one = [next(iter(client.nthreads()))]
    Xo = client.persist(darr(X, (1000, 2000)), workers=one)
    yo = client.persist(darr(y, (1000, 2000)), workers=one)
    assert model_doc(DaskRGBMRegressor(**params).fit(Xo, yo)) == expected


def test_early_stopping_matches_the_local_fit(client):
    X, y, w = data("binary")
    Xv, yv = X[:600], y[:600]
    Xt, yt, wt = X[600:], y[600:], w[600:]
    params = dict(n_estimators=300, max_depth=4, learning_rate=0.5, early_stopping_rounds=3, random_state=2)
    wv = w[:600]
    local = RGBMClassifier(summation="exact", **params).fit(
        Xt, yt, sample_weight=wt, eval_set=[(Xv, yv)], eval_sample_weight=[wv]
    )
    logged = []
    est = DaskRGBMClassifier(**params).fit(
        darr(Xt, (400, 0, 1000, 1000)),
        darr(yt, (400, 0, 1000, 1000)),
        sample_weight=darr(wt, (400, 0, 1000, 1000)),
        eval_set=[(darr(Xv, (300, 300)), yv)],
        eval_sample_weight=[darr(wv, (300, 300))],
        callbacks=[lambda env: logged.append(env.evaluation_result_list[0][2])],
    )
    assert local.best_iteration_ < 290  # it did stop early
    assert model_doc(est) == model_doc(local)
    assert est.best_iteration_ == local.best_iteration_
    assert est.evals_result_ == local.evals_result_
    assert logged == local.evals_result_["valid_0"]["logloss"]
    with pytest.raises(ValueError, match="not seen in training"):
        DaskRGBMClassifier(**params).fit(darr(Xt, (1200, 1200)), darr(yt, (1200, 1200)), eval_set=[(Xv, yv + 5)])


def test_callbacks_run_on_the_client_and_stop(client):
    X, y, _ = data()
    seen = []

    def stop_after_three(env):
        seen.append(env.iteration)
        return env.iteration == 2

    est = DaskRGBMRegressor(n_estimators=20, random_state=0).fit(
        darr(X, (1000, 2000)), darr(y, (1000, 2000)), callbacks=[stop_after_three]
    )
    assert seen == [0, 1, 2]
    assert est.n_estimators_ == 3 and est.get_booster().n_rounds == 3


def test_refusals_are_clear(client):
    X, y, _ = data()
    Xd, yd = darr(X, (1000, 2000)), darr(y, (1000, 2000))
    with pytest.raises(ValueError, match="summation"):
        DaskRGBMRegressor(summation="float").fit(Xd, yd)
    with pytest.raises(ValueError, match="quantile"):
        DaskRGBMRegressor(loss="quantile").fit(Xd, yd)
    with pytest.raises(ValueError, match="evaluation set"):
        DaskRGBMRegressor(early_stopping_rounds=3).fit(Xd, yd)
    with pytest.raises(ValueError, match="booster='rgb' cannot train on shards"):
        DaskRGBMRegressor(booster="rgb").fit(Xd, yd)
    with pytest.raises(ValueError, match="before-iteration callbacks"):
        DaskRGBMRegressor(n_estimators=3).fit(Xd, yd, callbacks=[rgbm_rs.reset_parameter(learning_rate=[0.1] * 3)])
    with pytest.raises(ValueError, match="step='line_search' cannot train on shards"):
        DaskRGBMRegressor(step="line_search").fit(Xd, yd)
    with pytest.raises(ValueError, match="loss='gaussian' cannot train on shards"):
        DaskRGBMRegressor(loss="gaussian").fit(Xd, yd)
    with pytest.raises(ValueError, match="validation_fraction"):
        DaskRGBMRegressor(validation_fraction=0.2).fit(Xd, yd)
    # The core's rules are checked on the client, before X is computed
    # anywhere (a block that raises when computed would be hit first).
    untouchable = Xd.map_blocks(_explode, dtype=Xd.dtype)
    with pytest.raises(ValueError, match="max_leaves=8 cannot be reached with max_depth=2"):
        DaskRGBMRegressor(max_depth=2, max_leaves=8).fit(untouchable, yd)
    with pytest.raises(ValueError, match="proven for gradient leaves only"):
        DaskRGBMRegressor(step="constant").fit(untouchable, yd)
    # Functions would see one partition each: refused on the client (the
    # metric used to be dropped without a word).
    with pytest.raises(ValueError, match="built-in losses and metrics only"):
        DaskRGBMRegressor(loss=lambda y_true, raw: (raw - y_true, np.ones_like(raw))).fit(Xd, yd)
    with pytest.raises(ValueError, match="built-in losses and metrics only"):
        DaskRGBMClassifier(eval_metric=["auc", lambda y_true, raw: ("m", 1.0, True)]).fit(
            Xd, darr((y > 0).astype(int), (1000, 2000)), eval_set=[(X, (y > 0).astype(int))]
        )
    with pytest.raises(TypeError, match="dask array"):
        DaskRGBMRegressor().fit(X, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples: \\[3000, 2999\\]"):
        DaskRGBMRegressor().fit(Xd, darr(y[:-1], (1000, 1999)))
    # An error raised on the workers (one class only) comes back as itself.
    with pytest.raises(ValueError, match="2 classes"):
        DaskRGBMClassifier().fit(Xd, darr(np.zeros(N, dtype=int), (1000, 2000)))


def test_a_lost_worker_stops_a_fit_that_does_not_resume(client):
    import signal

    X, y, _ = data()
    killed = []

    def kill(env):
        if env.iteration == 2:
            os.kill(shard_pid(client), signal.SIGKILL)  # as the OOM killer would
            killed.append(time.monotonic())

    with pytest.raises(RuntimeError, match="lost"):
        DaskRGBMRegressor(n_estimators=2000, random_state=0).fit(
            darr(X, (1000, 2000)), darr(y, (1000, 2000)), callbacks=[kill], on_worker_loss="raise"
        )
    assert time.monotonic() - killed[0] < 10
    client.wait_for_workers(2, timeout=60)


def _break_shards(method):
    """Makes `method` of the shards on this worker raise."""
    from rgbm_rs.dask import _ShardActor

    def broken(self, *args):
        raise MemoryError("this shard broke")

    async def broken_async(self, *args):
        raise MemoryError("this shard broke")

    _ShardActor._mended = (method, getattr(_ShardActor, method))
    setattr(_ShardActor, method, broken_async if method == "deposit" else broken)


def _mend_shards():
    from rgbm_rs.dask import _ShardActor

    if hasattr(_ShardActor, "_mended"):
        setattr(_ShardActor, *_ShardActor._mended)
        del _ShardActor._mended


@pytest.mark.parametrize(
    "method,error,match",
    [
        # The other shard waits for the broken one's part: the client must not.
        ("_swap", MemoryError, "this shard broke"),
        # A part its peer cannot take: the sender fails, not waits.
        ("deposit", RuntimeError, "could not send its part to a peer"),
    ],
)
def test_a_failing_shard_ends_the_fit_at_once(client, method, error, match):
    X, y, _ = data()
    victim = sorted(client.nthreads())[1]
    client.run(_break_shards, method, workers=[victim])
    try:
        started = time.monotonic()
        with pytest.raises(error, match=match):
            DaskRGBMRegressor(n_estimators=5, random_state=0).fit(
                spread(client, darr(X, (1500, 1500))), spread(client, darr(y, (1500, 1500)))
            )
        assert time.monotonic() - started < 10
    finally:
        client.run(_mend_shards)


def test_concurrent_fits_do_not_interfere(client):
    X, y, _ = data()
    params = dict(n_estimators=30, max_depth=3, random_state=1)
    expected = model_doc(RGBMRegressor(summation="exact", **params).fit(X, y))
    out = [None, None]
    # Both fits have a shard on both workers, each waiting for its peer.
    parts = [(spread(client, darr(X, c)), spread(client, darr(y, c))) for c in (CHUNKINGS[0], CHUNKINGS[2])]

    def run(i):
        out[i] = model_doc(DaskRGBMRegressor(**params).fit(*parts[i]))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert out == [expected, expected]


def test_a_hung_worker_hits_the_timeout(client):
    import signal

    X, y, _ = data()
    stopped = []

    def hang(env):
        if env.iteration == 2:
            stopped.append(shard_pid(client))
            os.kill(stopped[0], signal.SIGSTOP)
            stopped.append(time.monotonic())

    try:
        with pytest.raises(TimeoutError, match="did not answer within 3 s"):
            DaskRGBMRegressor(n_estimators=2000, random_state=0).fit(
                darr(X, (1000, 2000)), darr(y, (1000, 2000)), callbacks=[hang], timeout=3
            )
        assert time.monotonic() - stopped[1] < 10
    finally:
        if stopped:
            os.kill(stopped[0], signal.SIGCONT)


def test_frames_with_categories_and_strings_are_read_as_locally(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, _ = data("binary")
    rng = np.random.default_rng(5)
    city = rng.choice([f"c{i}" for i in range(12)], size=N).astype(object)
    city[::17] = None
    frame = pd.DataFrame(
        {
            "x0": X[:, 0],
            "colour": pd.Categorical(
                rng.choice(["red", "green", "blue"], size=N), categories=["red", "green", "blue", "grey"]
            ),
            "city": city,
            "x1": X[:, 1].astype(np.float32),
        }
    )
    y = ((frame["city"].isin(["c1", "c4", "c7", "c9"])) ^ (frame["colour"] == "green") ^ (X[:, 0] > 0)).astype(int)
    params = dict(n_estimators=6, max_depth=3, random_state=0, categorical_features="auto")
    local = RGBMClassifier(summation="exact", **params).fit(frame, y, eval_set=[(frame[:500], y[:500])])
    Xd = dd.from_pandas(frame, npartitions=3)
    yd = dd.from_pandas(pd.Series(y), npartitions=3)
    est = DaskRGBMClassifier(**params).fit(Xd, yd, eval_set=[(frame[:500], y[:500])])
    assert model_doc(est) == model_doc(local)
    assert '"categories"' in est.get_booster().to_json()  # it splits on category sets
    assert list(est.feature_names_in_) == list(frame.columns)
    assert est.evals_result_ == local.evals_result_
    np.testing.assert_array_equal(est.predict_proba(Xd).compute(), local.predict_proba(frame))
    np.testing.assert_array_equal(est.to_local().predict(frame), local.predict(frame))
    # Unknown categories are found first; a later fit on an array drops the names.
    unknown = Xd.assign(colour=Xd["colour"].astype(str).astype("category"))
    assert not unknown["colour"].cat.known
    relabelled = frame.assign(colour=frame["colour"].astype(str).astype("category"))
    expected = model_doc(RGBMClassifier(summation="exact", **params).fit(relabelled, y))
    assert model_doc(DaskRGBMClassifier(**params).fit(unknown, yd)) == expected
    est.set_params(categorical_features=None).fit(darr(X, (1000, 2000)), darr(y.to_numpy(), (1000, 2000)))
    assert not hasattr(est, "feature_names_in_")
    # By default the categorical dtype is split by category sets, as locally;
    # strings need categorical_features="auto" or their names.
    typed = ["x0", "colour", "x1"]
    default = DaskRGBMClassifier(n_estimators=6, max_depth=3, random_state=0).fit(Xd[typed], yd)
    local = RGBMClassifier(summation="exact", n_estimators=6, max_depth=3, random_state=0).fit(frame[typed], y)
    assert model_doc(default) == model_doc(local)
    assert '"categories"' in default.get_booster().to_json()
    with pytest.raises(TypeError, match=r"'city'.*categorical_features=\"auto\".*categorical_features=\['city'\]"):
        DaskRGBMClassifier(n_estimators=2).fit(Xd, yd)


def test_sparse_partitions_are_refused_clearly(client):
    sp = pytest.importorskip("scipy.sparse")
    X, y, _ = data()
    Xs = darr(np.nan_to_num(X), (1000, 2000)).map_blocks(sp.csr_matrix)
    with pytest.raises(TypeError, match="dense partitions"):
        DaskRGBMRegressor(n_estimators=2).fit(Xs, darr(y, (1000, 2000)))


@pytest.mark.parametrize("class_weight", ["balanced", {0: 0.5, 2: 3.0}])
def test_class_weight_matches_the_local_fit(client, class_weight):
    X, y, w = data("multiclass")
    labels = np.array(["low", "mid", "top"])[y] if isinstance(class_weight, str) else y
    params = dict(n_estimators=5, max_depth=3, random_state=4, class_weight=class_weight)
    local = RGBMClassifier(summation="exact", **params).fit(X, labels, sample_weight=w)
    chunks = CHUNKINGS[0]
    est = DaskRGBMClassifier(**params).fit(darr(X, chunks), darr(labels, chunks), sample_weight=darr(w, chunks))
    assert model_doc(est) == model_doc(local)
    np.testing.assert_array_equal(est.predict(darr(X, chunks)).compute(), local.predict(X))
    with pytest.raises(ValueError, match="not in y"):
        DaskRGBMClassifier(class_weight={7: 1.0}).fit(darr(X, chunks), darr(y, chunks))


def test_an_interrupt_leaves_nothing_on_the_workers(client):
    # Ctrl-C during a fit: the interrupt propagates, the shards are closed
    # (no_leaked_actors checks the workers) and the estimator is not fitted.
    X, y, _ = data()

    def interrupt(env):
        if env.iteration == 2:
            raise KeyboardInterrupt

    est = DaskRGBMRegressor(n_estimators=50, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        est.fit(spread(client, darr(X, (1500, 1500))), spread(client, darr(y, (1500, 1500))), callbacks=[interrupt])
    assert not hasattr(est, "n_estimators_")


def many_workers_data():
    """data()'s regression rows with a categorical column (codes 0..7, some
    missing) after the numeric ones, NaN among the numeric ones."""
    X, r, w = data()
    codes = np.random.default_rng(11).integers(0, 8, size=N).astype(np.float64)
    codes[::13] = np.nan
    r = r + np.isin(codes, [1, 4, 6])
    return np.column_stack([X, codes]), r, w


MANY_WORKERS_SETUPS = [
    # (kind, params, weighted): numeric, categorical and missing values
    # throughout; depth-wise and best-first; RGBM's random feature groups.
    ("regression", dict(max_depth=4), True),
    ("multiclass", dict(max_depth=3, subsample=0.7), True),
    ("binary", dict(max_depth=None, max_leaves=7, selection="groups", selection_size=3, selection_scope="node"), False),
]


@pytest.mark.parametrize("n_workers", [3, 4, 8])
def test_more_workers_give_the_local_model(n_workers):
    # Histograms are reduce-scattered among 3 or more workers; the model is
    # still the local one, for uneven shards (one holding an empty partition).
    X, r, w = many_workers_data()
    sizes = np.diff(np.linspace(0, N, n_workers + 1).astype(int) + np.r_[0, (-1) ** np.arange(n_workers - 1) * 60, 0])
    chunks = (*sizes.tolist(), 0)
    with (
        distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        c.wait_for_workers(n_workers)
        for kind, extra, weighted in MANY_WORKERS_SETUPS:
            y = {"regression": r, "binary": (r > 0.1).astype(int), "multiclass": np.digitize(r, [-0.5, 0.5])}[kind]
            params = dict(n_estimators=3, random_state=6, categorical_features=[X.shape[1] - 1], **extra)
            local_cls, dask_cls = (
                (RGBMRegressor, DaskRGBMRegressor) if kind == "regression" else (RGBMClassifier, DaskRGBMClassifier)
            )
            sw = w if weighted else None
            expected = model_doc(local_cls(summation="exact", **params).fit(X, y, sample_weight=sw))
            assert '"categories"' in json.dumps(expected)
            Xd, yd, wd = (spread(c, darr(v, chunks)) for v in (X, y, w))
            shards = []
            est = dask_cls(**params).fit(
                Xd,
                yd,
                sample_weight=wd if weighted else None,
                client=c,
                callbacks=[lambda env, c=c, shards=shards: shards.append(shard_counts(c))],
            )
            assert shards[0] == [1] * n_workers
            assert est.dask_exchanges_["scattered"] > 0
            assert model_doc(est) == expected, kind


def test_init_scores_match_the_local_fit(client):
    # Per-row starting scores: a Poisson offset, and 3-class raw scores with
    # those of an evaluation set.
    X, y, w = data()
    rng = np.random.default_rng(9)
    exposure = rng.uniform(0.5, 2.0, size=N)
    counts = rng.poisson(exposure * np.exp(0.3 * np.nan_to_num(X[:, 0])))
    params = dict(n_estimators=5, max_depth=3, random_state=2, loss="poisson")
    offset = np.log(exposure)
    local = RGBMRegressor(summation="exact", **params).fit(X, counts, init_score=offset)
    chunks = CHUNKINGS[0]
    est = DaskRGBMRegressor(**params).fit(darr(X, chunks), darr(counts, chunks), init_score=darr(offset, chunks))
    assert model_doc(est) == model_doc(local)
    assert model_doc(est) != model_doc(RGBMRegressor(summation="exact", **params).fit(X, counts))  # the offset acts

    _, yc, _ = data("multiclass")
    init = rng.normal(size=(N, 3))
    Xv, yv, iv = X[:400], yc[:400], init[:400]
    params = dict(n_estimators=4, max_depth=3, random_state=2)
    fit_args = dict(eval_set=[(Xv, yv)], eval_init_score=[iv])
    local = RGBMClassifier(summation="exact", **params).fit(X, yc, init_score=init, **fit_args)
    est = DaskRGBMClassifier(**params).fit(darr(X, chunks), darr(yc, chunks), init_score=darr(init, chunks), **fit_args)
    assert model_doc(est) == model_doc(local)
    assert est.evals_result_ == local.evals_result_
    with pytest.raises(ValueError, match="init_score"):
        DaskRGBMClassifier(**params).fit(darr(X, chunks), darr(yc, chunks), init_score=darr(init[:-1], (N - 1,)))


def test_continued_training_matches_the_local_fit(client):
    # init_model (a local model, or one trained on the cluster) and warm_start.
    X, y, _ = data("binary")
    chunks = CHUNKINGS[0]
    Xd, yd = darr(X, chunks), darr(y, chunks)
    params = dict(max_depth=3, random_state=3, summation="exact")
    first = RGBMClassifier(n_estimators=3, **params).fit(X, y)
    fit_args = dict(eval_set=[(X[:500], y[:500])])
    expected = RGBMClassifier(n_estimators=4, **params).fit(X, y, init_model=first, **fit_args)
    for start in (first, DaskRGBMClassifier(n_estimators=3, **params).fit(Xd, yd)):
        est = DaskRGBMClassifier(n_estimators=4, **params).fit(Xd, yd, init_model=start, **fit_args)
        assert model_doc(est) == model_doc(expected)
        assert est.n_estimators_ == 7 and est.evals_result_ == expected.evals_result_
    local = RGBMClassifier(n_estimators=2, warm_start=True, **params).fit(X, y)
    est = DaskRGBMClassifier(n_estimators=2, warm_start=True, **params).fit(Xd, yd)
    local.set_params(n_estimators=5).fit(X, y)
    est.set_params(n_estimators=5).fit(Xd, yd)
    assert model_doc(est) == model_doc(local)
    with pytest.raises(TypeError, match="init_model is a RGBMRegressor"):
        DaskRGBMClassifier(**params).fit(Xd, yd, init_model=RGBMRegressor(n_estimators=1).fit(X, y))


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_row_wise_methods_map_over_partitions(client, kind):
    X, y, _ = data(kind)
    cls = DaskRGBMRegressor if kind == "regression" else DaskRGBMClassifier
    chunks = CHUNKINGS[0]
    est = cls(n_estimators=3, max_depth=3, random_state=0).fit(darr(X, chunks), darr(y, chunks))
    local = est.to_local()
    calls = [("predict", {}), ("predict", {"pred_contrib": True}), ("predict", {"pred_leaf": True}), ("apply", {})]
    calls += [("predict", {"iteration_range": (1, 3)}), ("apply", {"start_iteration": 1, "num_iteration": 1})]
    if kind != "regression":
        calls += [("predict_proba", {}), ("decision_function", {}), ("decision_function", {"num_iteration": 2})]
    for method, kwargs in calls:
        got = getattr(est, method)(darr(X, chunks), **kwargs)
        assert isinstance(got, da.Array), method
        np.testing.assert_array_equal(got.compute(), getattr(local, method)(X, **kwargs), err_msg=f"{method} {kwargs}")
    # Offsets are per row: with a dask collection they are refused, in memory used.
    with pytest.raises(TypeError, match="init_score does not take a dask collection"):
        est.predict(darr(X, chunks), init_score=np.zeros(len(X)))
    if kind == "regression":
        np.testing.assert_array_equal(est.predict(X, init_score=np.ones(len(X))), local.predict(X) + 1.0)


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_uncertainty_maps_over_partitions_and_staged_wants_memory(client, kind):
    X, y, _ = data(kind)
    cls = DaskRGBMRegressor if kind == "regression" else DaskRGBMClassifier
    params = dict(n_estimators=8, max_depth=3, langevin=True, temperature=100.0, random_state=0)
    chunks = CHUNKINGS[0]
    Xd = darr(X, chunks)
    est = cls(**params).fit(Xd, darr(y, chunks))
    local = est.to_local()
    got = est.predict_uncertainty(Xd, n_members=3)
    want = local.predict_uncertainty(X, n_members=3)
    assert got.keys() == want.keys() and all(isinstance(v, da.Array) for v in got.values())
    (computed,) = dask.compute(got)
    for k in want:
        np.testing.assert_array_equal(computed[k], want[k], err_msg=k)
    with pytest.raises(ValueError, match="n_members"):
        est.predict_uncertainty(Xd, n_members=1)
    staged = ["staged_predict"] + ([] if kind == "regression" else ["staged_predict_proba", "staged_decision_function"])
    for method in staged:
        with pytest.raises(TypeError, match=f"{method} does not take a dask collection"):
            getattr(est, method)(Xd)
        for a, b in zip(getattr(est, method)(X[:50]), getattr(local, method)(X[:50]), strict=True):
            np.testing.assert_array_equal(a, b, err_msg=method)


# The local fit's refusals of bad data (test_hostile_inputs.py,
# test_bad_input.py), each run through the Dask estimator on partitions of
# 25, 0 and 35 rows, the bad value (row 40) in the last one: the same
# exception as the local estimator, with its text (first line) where the last field is
# True (else the Dask fit words it its own way).
_rng = np.random.default_rng(0)
HX = _rng.normal(size=(60, 3))
HY = (HX[:, 0] > 0).astype(int)
HYR = HX[:, 0] + 0.1 * _rng.normal(size=60)


def _at(a, i, value):
    a = np.array(a, dtype=float)
    a[i] = value
    return a


R, C = "regressor", "classifier"
HOSTILE = {
    "y_nan": (R, HX, _at(HYR, 40, np.nan), {}, {}, True),
    "y_inf": (R, HX, _at(HYR, 40, np.inf), {}, {}, True),
    "y_minus_inf": (R, HX, _at(HYR, 40, -np.inf), {}, {}, True),
    "y_strings": (R, HX, np.array(["a", "b"] * 30), {}, {}, True),
    "x_inf": (R, _at(HX, (40, 1), np.inf), HYR, {}, {}, True),
    "x_float32_inf": (C, _at(HX, (40, 1), np.inf).astype(np.float32), HY, {}, {}, True),
    "x_strings": (C, np.full(HX.shape, "abc"), HY, {}, {}, True),
    "x_object_with_str": (C, np.array([[1.0, "a", 2.0]] * 60, dtype=object), HY, {}, {}, True),
    "x_complex": (C, HX + 1j, HY, {}, {}, True),
    "x_3d": (C, HX[:, :, None], HY, {}, {}, False),
    "x_1d": (R, HX[:, 0], HYR, {}, {}, False),
    "no_rows": (R, HX[:0], HYR[:0], {}, {}, True),
    "no_features": (C, HX[:, :0], HY, {}, {}, True),
    "short_y": (C, HX, HY[:-3], {}, {}, True),
    "short_x": (C, HX[:-1], HY, {}, {}, True),
    "w_nan": (R, HX, HYR, {"sample_weight": _at(np.ones(60), 40, np.nan)}, {}, True),
    "w_inf": (R, HX, HYR, {"sample_weight": _at(np.ones(60), 40, np.inf)}, {}, True),
    "w_minus_inf": (R, HX, HYR, {"sample_weight": _at(np.ones(60), 40, -np.inf)}, {}, True),
    "w_negative": (C, HX, HY, {"sample_weight": _at(np.ones(60), 40, -1.0)}, {}, True),
    "w_all_negative": (R, HX, HYR, {"sample_weight": -np.ones(60)}, {}, True),
    "w_all_zero": (C, HX, HY, {"sample_weight": np.zeros(60)}, {}, False),
    "w_2d": (R, HX, HYR, {"sample_weight": np.ones((60, 1))}, {}, False),
    "w_strings": (R, HX, HYR, {"sample_weight": np.array(["a"] * 60)}, {}, True),
    "w_complex": (R, HX, HYR, {"sample_weight": np.ones(60) + 1j}, {}, True),
    "w_short": (C, HX, HY, {"sample_weight": np.ones(59)}, {}, False),
    "init_short": (R, HX, HYR, {"init_score": np.zeros(59)}, {}, False),
    "init_nan": (R, HX, HYR, {"init_score": _at(np.zeros(60), 40, np.nan)}, {}, True),
    "labels_nan": (C, HX, _at(HY, 40, np.nan), {}, {}, True),
    "labels_inf": (C, HX, _at(HY, 40, np.inf), {}, {}, True),
    "labels_minus_inf": (C, HX, _at(HY, 40, -np.inf), {}, {}, True),
    "labels_continuous": (C, HX, np.linspace(0, 1, 60), {}, {}, True),
    "one_class": (C, HX, np.zeros(60), {}, {}, True),
    "one_class_strings": (C, HX, np.array(["spam"] * 60), {}, {}, True),
    "none_among_strings": (C, HX, np.array(["a", None] * 30, dtype=object), {}, {}, True),
    "bytes_labels_object": (C, HX, np.array([b"a", b"b"] * 30, dtype=object), {}, {}, True),
    "bytes_labels_S1": (C, HX, np.array([b"a", b"b"] * 30, dtype="S1"), {}, {}, True),
    "class_weight_negative": (C, HX, HY, {}, {"class_weight": {0: -1.0}}, True),
    "class_weight_nan": (C, HX, HY, {}, {"class_weight": {0: float("nan")}}, True),
    "class_weight_unknown": (C, HX, HY, {}, {"class_weight": {7: 1.0}}, True),
    "class_weight_all_zero": (C, HX, HY, {}, {"class_weight": {0: 0.0, 1: 0.0}}, False),
}


def _hostile_chunks(v):
    n = len(v)
    rows = (min(n, 25), 0, n - min(n, 25)) if n else (0,)
    return da.from_array(v, chunks=(rows,) + v.shape[1:])


@pytest.mark.parametrize("name", list(HOSTILE))
def test_bad_data_is_refused_as_the_local_fit_refuses_it(client, name):
    kind, X, y, fit, params, same_text = HOSTILE[name]
    local_cls, dask_cls = (RGBMRegressor, DaskRGBMRegressor) if kind == R else (RGBMClassifier, DaskRGBMClassifier)
    params = dict(n_estimators=3, min_samples_leaf=5, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ComplexWarning, DataConversionWarning
        with pytest.raises(Exception) as local:
            local_cls(**params).fit(X, y, **fit)
        with pytest.raises(Exception) as remote:
            dask_cls(**params).fit(
                _hostile_chunks(X), _hostile_chunks(y), **{k: _hostile_chunks(v) for k, v in fit.items()}
            )
    assert isinstance(local.value, (ValueError, TypeError)), repr(local.value)
    assert type(remote.value) is type(local.value), (repr(remote.value), repr(local.value))
    assert str(remote.value), repr(remote.value)
    if same_text:  # the first line: a message may go on with the (partition's) values
        assert str(remote.value).replace("DaskRGBM", "RGBM").splitlines()[0] == str(local.value).splitlines()[0]


def test_partitions_need_not_be_valid_fits_on_their_own(client):
    # A partition without weighted rows, or of one class only, and y,
    # weights and init_score chunked unlike X: the local model. A column
    # vector y is raveled with scikit-learn's warning, as locally.
    X, y, w = data("binary")
    w[:700] = 0.0
    order = np.argsort(y, kind="stable")
    X, y, w = X[order], y[order], w[order]
    init = np.linspace(-0.5, 0.5, N)
    params = dict(n_estimators=5, max_depth=3, random_state=2, class_weight="balanced")
    local = RGBMClassifier(summation="exact", **params).fit(X, y, sample_weight=w, init_score=init)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        est = DaskRGBMClassifier(**params).fit(
            darr(X, CHUNKINGS[0]),
            darr(y[:, None], (1000, 1000, 1000)),
            sample_weight=darr(w, (N,)),
            init_score=darr(init, CHUNKINGS[2]),
        )
    assert model_doc(est) == model_doc(local)


@pytest.mark.parametrize(
    "timeout,error",
    [
        (float("nan"), ValueError),
        (-1, ValueError),
        (0, ValueError),
        (math.inf, ValueError),
        ("10", TypeError),
        (None, TypeError),
        (True, TypeError),
    ],
)
def test_bad_timeouts_are_refused(client, timeout, error):
    X, y, _ = data()
    with pytest.raises(error, match=r"^timeout must be a (finite )?number of seconds"):
        DaskRGBMRegressor(n_estimators=2).fit(darr(X, (N,)), darr(y, (N,)), timeout=timeout)
    # A number of seconds that is not a float is one.
    DaskRGBMRegressor(n_estimators=2).fit(darr(X, (N,)), darr(y, (N,)), timeout=np.int64(60))


def _slow(a, seconds):
    time.sleep(seconds)
    return a


@pytest.mark.parametrize("which", ["X", "y"])
def test_partitions_not_ready_in_time_end_the_fit_with_a_timeout_error(client, which):
    X, y, _ = data("binary")  # (binary labels fit both estimators)
    slow = {"X": X, "y": y}[which]
    slow = da.from_delayed(dask.delayed(_slow, pure=False)(slow, 4.0), slow.shape, slow.dtype)
    Xd, yd = (slow, darr(y, (N,))) if which == "X" else (darr(X, (N,)), slow)
    # The classifier reads y's partitions first (their classes), then all.
    what, cls = ("the training data", DaskRGBMRegressor) if which == "X" else ("y", DaskRGBMClassifier)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=rf"the partitions of {what} were not ready within timeout=0.5 s"):
        cls(n_estimators=2).fit(Xd, yd, timeout=0.5)
    assert time.monotonic() - started < 3.5


@pytest.mark.parametrize("classifier", [False, True])
def test_two_dimensional_y_is_a_local_fit_only(client, classifier):
    # Several targets or labels per row (test_multi_output, test_multilabel)
    # are fitted locally; a Dask fit refuses them before any data moves.
    X = da.from_array(HX, chunks=30)
    y = np.c_[HY, HY] if classifier else np.c_[HYR, HYR]
    cls = DaskRGBMClassifier if classifier else DaskRGBMRegressor
    local = "RGBMClassifier" if classifier else "RGBMRegressor"
    with pytest.raises(
        ValueError,
        match=rf"{cls.__name__}: training on a Dask cluster fits one target .* but y of shape \(60, 2\) has 2 "
        rf"columns .*; fit the local estimator {local} for 2-D y",
    ):
        cls(n_estimators=2).fit(X, da.from_array(y, chunks=(30, 2)))
    # The local estimator fits the same 2-D y.
    assert cls._local_class(n_estimators=2).fit(HX, y).predict(HX).shape == (len(HX), 2)
