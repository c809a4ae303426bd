"""A lost Dask worker costs time, not the model: a fit whose shard's worker
dies (between rounds, in the middle of one, while the first round bins the
data, again while it resumes) ends with the model of an uninterrupted local
fit with exact sums, its callbacks run once per round; with
on_worker_loss="raise", too many losses or data Dask cannot compute again it
stops with a clear error. 3 worker processes of 1 thread."""

import json
import os
import signal
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask", reason="the dask extra is not installed")
da = pytest.importorskip("dask.array", reason="the dask extra is not installed")
distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

import rgbm_rs.dask as rdask  # noqa: E402
from rgbm_rs import RGBMClassifier, RGBMRegressor  # noqa: E402
from rgbm_rs.dask import DaskRGBMClassifier, DaskRGBMRegressor  # noqa: E402

N = 1200
CHUNKS = (200,) * 6
#: Every fit's bound on each wait: a test that goes wrong fails, never hangs.
TIMEOUT = 60


@pytest.fixture(scope="module", autouse=True)
def restore_environ():
    # The nannies put their pre-spawn environment into this process for good.
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def client(restore_environ):
    # A cluster per test: a killed worker's nanny starts a new worker, but
    # not always (not while it is starting one), and a test needs all 3.
    cluster = distributed.LocalCluster(
        n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
    )
    with distributed.Client(cluster) as c:
        c.wait_for_workers(3, timeout=120)
        yield c
    cluster.close()


def data(kind="regression", seed=11):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 5))
    X[::9, 3] = np.nan
    r = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.3 * rng.normal(size=N)
    y = r if kind == "regression" else (r > 0.2).astype(int)
    return X, y


def darr(client, v):
    """`v` as a dask array persisted on the workers, its partitions
    computable again from the graph wherever Dask wants."""
    a = client.persist(da.from_array(v, chunks=(CHUNKS,) + v.shape[1:]))
    distributed.wait(a)
    return a


def model_doc(est):
    return json.loads(est.get_booster().to_json())


def shard_workers(client):
    """The addresses of the workers holding a shard of the running fit."""
    counts = client.run(lambda dask_worker: len(dask_worker.state.actors))
    return sorted(a for a, n in counts.items() if n > 0)


def kill(client, address):
    """Kills the worker process at `address` as the OOM killer would."""
    pid = client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)


def _exit_at(kind, count):
    """Makes this worker's shard exit its process at its `count`-th
    exchange of `kind` ("gather": the bin sample, "sum": the sums of a
    round), from then on."""
    from rgbm_rs.dask import _ShardActor

    combined = _ShardActor._combined
    seen = [0]

    def dying(self, msg):
        if msg[0] == kind:
            seen[0] += 1
            if seen[0] >= count:
                os.kill(os.getpid(), signal.SIGKILL)
        return combined(self, msg)

    _ShardActor._combined = dying


def arm(client, address, kind, count=1):
    client.run(_exit_at, kind, count, workers=[address])


def holders(client, a):
    """The workers holding partitions of dask array `a`."""
    return sorted({w for ws in client.who_has(a).values() for w in ws})


class Rounds:
    """A callback recording the rounds it sees; `act(round)` may kill."""

    def __init__(self, act=None):
        self.seen, self.act = [], act

    def __call__(self, env):
        self.seen.append(env.iteration)
        if self.act is not None:
            self.act(env.iteration)


def fit_both(client, params, kind="regression", callback=None, **fit_args):
    """(the Dask fit, the local exact fit's model) on the same rows."""
    X, y = data(kind)
    local_cls, dask_cls = (
        (RGBMRegressor, DaskRGBMRegressor) if kind == "regression" else (RGBMClassifier, DaskRGBMClassifier)
    )
    local_args = {k: v for k, v in fit_args.items() if k == "eval_set"}
    expected = local_cls(summation="exact", **params).fit(X, y, **local_args)
    est = dask_cls(**params).fit(
        darr(client, X), darr(client, y), client=client, timeout=TIMEOUT, callbacks=[callback], **fit_args
    )
    return est, expected


PARAMS = dict(n_estimators=8, max_depth=3, random_state=4)


@pytest.mark.parametrize(
    "kind, extra, at",
    [
        ("regression", {}, 0),
        ("binary", dict(subsample=0.7, selection="groups", selection_size=2, selection_scope="node"), 3),
        ("regression", dict(langevin=True, temperature=100.0), 5),
    ],
)
def test_a_worker_killed_between_rounds_costs_no_model(client, kind, extra, at):
    params = {**PARAMS, **extra}
    killed = []

    def act(r):
        if r == at and not killed:
            killed.append(shard_workers(client)[0])
            kill(client, killed[0])

    rounds = Rounds(act)
    est, expected = fit_both(client, params, kind, rounds)
    assert model_doc(est) == model_doc(expected)
    assert est.dask_lost_workers_ == killed
    # The rounds trained before the loss are replayed, not reported again.
    assert rounds.seen == list(range(params["n_estimators"]))


def test_a_worker_killed_while_binning_or_mid_round_costs_no_model(client):
    X, y = data()
    for kind, count in [("gather", 1), ("sum", 20)]:
        Xd, yd = darr(client, X), darr(client, y)
        victim = holders(client, Xd)[0]
        arm(client, victim, kind, count)
        rounds = Rounds()
        est = DaskRGBMRegressor(**PARAMS).fit(Xd, yd, client=client, timeout=TIMEOUT, callbacks=[rounds])
        expected = RGBMRegressor(summation="exact", **PARAMS).fit(X, y)
        assert model_doc(est) == model_doc(expected), kind
        assert est.dask_lost_workers_ == [victim], kind
        assert rounds.seen == list(range(PARAMS["n_estimators"])), kind


def test_early_stopping_resumes_from_the_same_state(client):
    Xe, ye = data("binary", seed=12)
    params = dict(n_estimators=60, max_depth=4, learning_rate=0.5, early_stopping_rounds=2, random_state=1)
    killed = []

    def act(r):
        if r == 2 and not killed:
            killed.append(shard_workers(client)[0])
            kill(client, killed[0])

    est, expected = fit_both(client, params, "binary", Rounds(act), eval_set=[(Xe[:300], ye[:300])])
    assert expected.best_iteration_ < params["n_estimators"] - 3  # it did stop early, after the kill
    assert model_doc(est) == model_doc(expected)
    assert est.best_iteration_ == expected.best_iteration_
    assert est.evals_result_ == expected.evals_result_
    assert killed and est.dask_lost_workers_ == killed


def test_a_resumed_fit_sends_its_evaluation_sets_again(client, monkeypatch):
    """Scattered data is lost with its worker and Dask cannot compute it
    again; a worker that fetched a replica may have released it, so the
    resumed shards must not depend on the first scatter: the evaluation
    sets are scattered afresh on every resume, and the model is the one
    without a loss."""
    import rgbm_rs.dask as rdask

    Xe, ye = data("binary", seed=12)
    sent, scatter = [], rdask._scattered_evals

    def counted(c, fit):
        sent.append(len(fit.evals))
        return scatter(c, fit)

    monkeypatch.setattr(rdask, "_scattered_evals", counted)
    killed = []

    def act(r):
        if r == 2 and not killed:
            killed.append(shard_workers(client)[0])
            kill(client, killed[0])

    params = dict(n_estimators=8, max_depth=3, random_state=1)
    est, expected = fit_both(client, params, "binary", Rounds(act), eval_set=[(Xe[:300], ye[:300])])
    assert model_doc(est) == model_doc(expected)
    assert est.evals_result_ == expected.evals_result_
    assert est.dask_lost_workers_ == killed
    assert sent == [1, 1]


def test_a_second_loss_while_resuming(client):
    # The first worker dies after round 1; a second one dies while the
    # resumed shards bin the data again.
    killed = []

    def act(r):
        if r == 1 and not killed:
            first, second = shard_workers(client)[:2]
            arm(client, second, "gather")
            killed.extend([first, second])
            kill(client, first)

    rounds = Rounds(act)
    est, expected = fit_both(client, PARAMS, "regression", rounds)
    assert model_doc(est) == model_doc(expected)
    assert est.dask_lost_workers_ == killed
    assert rounds.seen == list(range(PARAMS["n_estimators"]))


def test_raise_stops_with_the_lost_worker_named(client):
    X, y = data()
    killed = []

    def act(r):
        if r == 2 and not killed:
            killed.append(shard_workers(client)[0])
            kill(client, killed[0])

    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"lost with 3 of 8 rounds trained.*on_worker_loss='raise'") as e:
        DaskRGBMRegressor(**PARAMS).fit(
            darr(client, X),
            darr(client, y),
            client=client,
            timeout=TIMEOUT,
            callbacks=[Rounds(act)],
            on_worker_loss="raise",
        )
    assert killed[0] in str(e.value)
    assert time.monotonic() - started < 30

    with pytest.raises(ValueError, match="on_worker_loss must be"):
        DaskRGBMRegressor().fit(darr(client, X), darr(client, y), client=client, on_worker_loss="retry")


def test_a_cluster_closed_mid_fit_stops_it_saying_so(client):
    # Every worker and the scheduler gone: nothing to resume on. The fit
    # says that the cluster was lost and that no model was kept.
    X, y = data()
    Xd, yd = darr(client, X), darr(client, y)

    def act(r):
        if r == 2:
            client.cluster.close(timeout=10)

    est = DaskRGBMRegressor(**PARAMS)
    started = time.monotonic()
    with pytest.raises(
        RuntimeError,
        match=r"cluster, or the client's connection to its scheduler, was lost with 3 of 8 "
        r"rounds trained \(client status '(closed|closing|connecting)'\).*no model was kept",
    ):
        est.fit(Xd, yd, client=client, timeout=TIMEOUT, callbacks=[Rounds(act)])
    assert time.monotonic() - started < 30
    assert not hasattr(est, "_booster")
    assert client.status != "running"


def test_too_many_losses_stop_the_fit(client, monkeypatch):
    # One resume allowed, two losses: the second ends the fit.
    X, y = data()
    monkeypatch.setattr(rdask, "MAX_RESUMES", 1)
    killed = []

    def act_twice(r):
        if r in (1, 4) and len(killed) < (1 if r == 1 else 2):
            killed.append(shard_workers(client)[0])
            kill(client, killed[-1])

    with pytest.raises(RuntimeError, match=r"lost with 5 of 8 rounds trained.*MAX_RESUMES") as e:
        DaskRGBMRegressor(**PARAMS).fit(
            darr(client, X), darr(client, y), client=client, timeout=TIMEOUT, callbacks=[Rounds(act_twice)]
        )
    assert all(w in str(e.value) for w in killed)


@pytest.mark.parametrize("how", ["scattered", "persisted there"])
def test_data_that_cannot_be_computed_again_is_a_clear_error(client, how):
    X, y = data()
    workers = sorted(client.nthreads())
    victim = workers[0]
    Xd = darr(client, X)
    if how == "scattered":
        # Partitions made of data sent to one worker: no graph to compute them from.
        blocks = [client.scatter(b, workers=[victim]) for b in np.array_split(X, 3)]
        Xd = da.concatenate(
            [
                da.from_delayed(dask.delayed(f), shape=(len(b), 5), dtype=float)
                for f, b in zip(blocks, np.array_split(X, 3))
            ]
        )
    else:
        Xd = da.concatenate([client.persist(Xd.blocks[i], workers=[victim]) for i in range(Xd.numblocks[0])])
    killed = []

    def act(r):
        if r == 1 and not killed:
            killed.append(victim)
            kill(client, victim)

    with pytest.raises(RuntimeError, match="cannot compute again"):
        DaskRGBMRegressor(**PARAMS).fit(Xd, darr(client, y), client=client, timeout=TIMEOUT, callbacks=[Rounds(act)])
    assert killed
