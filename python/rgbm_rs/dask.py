"""Training on a Dask cluster: the model one machine would fit on all rows.

``DaskRGBMRegressor`` and ``DaskRGBMClassifier`` take ``dask.array`` or
``dask.dataframe`` inputs and train where the partitions are: each worker
holding partitions runs one shard (a Dask actor) of the ordinary fit on its
rows, and every sum over rows -- histograms, node and leaf totals, the
gradients' grid -- is combined by the client and sent back, through Dask's
own communication (no sockets, ports or trackers of rgbm_rs's own). Sums are
exact (``summation="exact"``), so the fitted model is the one a local fit on
the concatenated rows gives, whatever the partitioning and the number of
workers. See DESIGN.md, "Training on a Dask cluster".

Needs ``dask[distributed]`` (``pip install "rgbm_rs[dask]"``).
"""

from __future__ import annotations

import json
import time

import numpy as np

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    from distributed import default_client, get_worker, wait
except ImportError as e:  # pragma: no cover - exercised without the extra only
    raise ImportError('rgbm_rs.dask needs dask and distributed: pip install "rgbm_rs[dask]"') from e

from . import _core
from ._progress import Progress
from ._validation import resolve_seed
from .sklearn import RGBMClassifier, RGBMRegressor

__all__ = ["DaskRGBMClassifier", "DaskRGBMRegressor"]

#: Seconds a fit waits for any one exchange with the workers before it
#: gives up (a hung or lost worker); ``fit(timeout=...)`` overrides it.
DEFAULT_TIMEOUT = 600.0


class _ShardActor:
    """One worker's shard: its partitions' rows and the fit on them."""

    def __init__(self, params_json, n_total, eval_sets, *parts):
        xs = [p[1] for p in parts]
        ids = np.concatenate([np.arange(p[0], p[0] + len(p[1]), dtype=np.uint64) for p in parts])
        weighted = parts[0][3] is not None
        x = np.ascontiguousarray(np.concatenate(xs)) if len(xs) > 1 else np.ascontiguousarray(xs[0])
        y = np.concatenate([p[2] for p in parts]).astype(np.float64)
        w = np.concatenate([p[3] for p in parts]).astype(np.float64) if weighted else None
        threads = get_worker().state.nthreads
        self._shard = _core.Shard(params_json, x, y, ids, int(n_total), w, eval_sets or None, threads)

    def first(self):
        return _portable(self._shard.first())

    def reply(self, kind, values):
        if kind != "stop":
            # Received buffers may be unaligned or read-only views.
            values = np.require(values, requirements=["C", "A", "W"])
        return _portable(self._shard.reply(kind, values))

    def close(self):
        self._shard.close()


def _portable(message):
    """A message the client can receive: a finished fit as its JSON parts."""
    if message[0] != "done":
        return message
    b = message[1]
    return ("done", b.to_json(), b.training_log_json(), b.evals_json(), b.best_iteration)


def _pack(offset, x, y, w):
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    return (offset, x, np.asarray(y, dtype=np.float64), None if w is None else np.asarray(w, dtype=np.float64))


def _as_array(v, what, ndim):
    """A dask array with known chunk sizes (frames and series converted)."""
    if isinstance(v, (dd.DataFrame, dd.Series)):
        v = v.to_dask_array(lengths=True)
    if not isinstance(v, da.Array):
        raise TypeError(f"{what} must be a dask array or dask dataframe, got {type(v).__name__}")
    if v.ndim != ndim:
        raise ValueError(f"{what} must be {ndim}-dimensional, got shape {v.shape}")
    if any(np.isnan(c) for c in v.chunks[0]):
        v = v.compute_chunk_sizes()
    return v


class _Exchange:
    """The client's end of a distributed fit: relays the shards' exchanges."""

    def __init__(self, client, actors, holders, timeout, on_round):
        # holders: the futures of the actors (their status follows their workers).
        self.client, self.actors, self.holders = client, actors, holders
        self.timeout, self.on_round = timeout, on_round
        self.addresses = {a._address for a in actors}
        # What the fit exchanged: count, bytes from and to the shards (all
        # of them), seconds the client waited for them.
        self.stats = {"exchanges": 0, "bytes_in": 0, "bytes_out": 0, "seconds": 0.0}

    def _all(self, method, *args):
        """Calls `method` on every shard in parallel; their answers."""
        started = time.monotonic()
        deadline = started + self.timeout
        self.stats["exchanges"] += 1
        self.stats["bytes_out"] += len(self.actors) * sum(getattr(a, "nbytes", 0) for a in args)
        try:
            calls = [getattr(a, method)(*args) for a in self.actors]
            out = []
            for f in calls:
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError
                    try:
                        out.append(f.result(timeout=min(left, 0.25)))
                        break
                    except TimeoutError:
                        # A call to a lost worker may wait instead of failing
                        # (and Dask may already have rebuilt the actor
                        # elsewhere): check that the shards' workers are alive.
                        gone = self.addresses - set(self.client.scheduler_info()["workers"])
                        if gone or any(p.status != "finished" for p in self.holders):
                            raise RuntimeError(f"the worker holding a shard was lost ({sorted(gone)})") from None
            self.stats["seconds"] += time.monotonic() - started
            self.stats["bytes_in"] += sum(getattr(v, "nbytes", 0) for m in out for v in m)
            return out
        except TimeoutError:
            raise TimeoutError(
                f"a worker did not answer within {self.timeout:g} s (hung or lost); the fit was stopped"
            ) from None
        except (ValueError, TypeError, MemoryError, KeyboardInterrupt):
            raise  # the fit's own error, raised on a worker
        except Exception as e:
            raise RuntimeError(
                f"a worker was lost or failed during the fit ({type(e).__name__}: {e}); the fit was "
                "stopped and no model was kept: fit again"
            ) from e

    def run(self):
        msgs = self._all("first")
        while True:
            kinds = {m[0] for m in msgs}
            if kinds == {"done"}:
                return msgs[0]
            if len(kinds) != 1:
                raise RuntimeError(f"the shards are out of step ({sorted(kinds)}); the fit was stopped")
            kind = msgs[0][0]
            if kind in ("sum", "max"):
                parts = [m[1] for m in msgs]
                if len({len(p) for p in parts}) != 1:
                    raise RuntimeError("the shards are out of step (parts of different lengths)")
                # Sums of grid values are exact in any order; fmax ignores NaN as the core's max does.
                combined = np.sum(parts, axis=0) if kind == "sum" else np.fmax.reduce(parts, axis=0)
                reply = ("values", np.asarray(combined, dtype=np.float64))
            elif kind == "limbs":
                reply = ("limbs", np.sum([m[1] for m in msgs], axis=0, dtype=np.int64))
            elif kind == "gather":
                width = msgs[0][1]
                records = np.concatenate([m[2] for m in msgs]).reshape(-1, width)
                order = np.argsort(records[:, 0], kind="stable")
                reply = ("values", np.ascontiguousarray(records[order]).ravel())
            elif kind == "round":
                reply = ("stop", bool(self.on_round(msgs[0][1], msgs[0][2])))
            else:
                raise RuntimeError(f"unknown message {kind!r} from a shard")
            msgs = self._all("reply", *reply)


def _train(client, params, X, y, w, eval_sets, timeout, on_round):
    """(model JSON, round log, evaluation histories, best round) of the fit."""
    X = _as_array(X, "X", 2)
    y = _as_array(y, "y", 1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}")
    X = X.rechunk({1: -1})
    y = y.rechunk((X.chunks[0],))
    if w is not None:
        w = _as_array(w, "sample_weight", 1)
        if w.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but sample_weight has {w.shape[0]}")
        w = w.rechunk((X.chunks[0],))
    sizes = X.chunks[0]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    n_total = int(offsets[-1])
    if n_total == 0:
        raise ValueError("X has no rows; at least one row is needed")
    xd, yd = X.to_delayed().ravel(), y.to_delayed().ravel()
    wd = w.to_delayed().ravel() if w is not None else [None] * len(xd)
    parts = [dask.delayed(_pack)(int(offsets[i]), xd[i], yd[i], wd[i]) for i in range(len(xd)) if sizes[i] > 0]
    futures = client.compute(parts)
    actors, pending = [], []
    try:
        wait(futures, timeout=timeout)
        who_has = client.who_has(futures)
        by_worker = {}
        for f in futures:
            by_worker.setdefault(sorted(who_has[f.key])[0], []).append(f)
        params_json = json.dumps(params)
        # Every shard evaluates the whole evaluation sets (small by design),
        # so every shard stops in the same round.
        evals = client.scatter(eval_sets, broadcast=True) if eval_sets else []
        pending += [
            client.submit(_ShardActor, params_json, n_total, evals, *fs, actor=True, workers=[addr], pure=False)
            for addr, fs in sorted(by_worker.items())
        ]
        actors = [p.result(timeout=timeout) for p in pending]
        exchange = _Exchange(client, actors, pending, timeout, on_round)
        done = exchange.run()
    finally:
        _close(actors)
        del actors
        # Releasing the actors' futures removes them from their workers.
        try:
            client.cancel(pending + futures)
        except Exception:  # noqa: BLE001 - keep the fit's own error
            pass
    _, model, log, evals, best = done
    return model, json.loads(log), json.loads(evals), best, exchange.stats


def _close(actors, grace=2.0):
    """Stops the shards' fits now (a lost worker's shard is gone already:
    its close is not waited for beyond `grace` seconds)."""
    calls = []
    for a in actors:
        try:
            calls.append(a.close())
        except Exception:  # noqa: BLE001 - the actor's worker is gone
            pass
    deadline = time.monotonic() + grace
    for f in calls:
        try:
            f.result(timeout=max(deadline - time.monotonic(), 0.001))
        except Exception:  # noqa: BLE001 - the same
            pass


def _eval_sets(eval_set, eval_names, dtype, encode):
    """[(name, X, y, sample_weight or None)] in memory (gathered from dask collections)."""
    if eval_set is None:
        return []
    if isinstance(eval_set, tuple):
        eval_set = [eval_set]
    out = []
    for i, pair in enumerate(eval_set):
        if len(pair) not in (2, 3):
            raise ValueError(f"eval_set[{i}] must be an (X, y) or (X, y, sample_weight) tuple")
        Xe, ye, *we = (v.compute() if hasattr(v, "compute") else v for v in pair)
        Xe = np.ascontiguousarray(np.asarray(Xe, dtype=dtype))
        if Xe.ndim != 2:
            raise ValueError(f"eval_set[{i}]: X must be 2-dimensional, got shape {Xe.shape}")
        ye = encode(np.asarray(ye), i)
        w = np.ascontiguousarray(np.asarray(we[0], dtype=np.float64)) if we and we[0] is not None else None
        name = str(eval_names[i]) if eval_names is not None else f"valid_{i}"
        out.append((name, Xe, ye, w))
    return out


class _DaskMixin:
    """What the Dask estimators add to the local ones."""

    _local_class = None

    def _dask_fit(self, X, y, sample_weight, native_loss, callbacks, client, timeout, eval_set, eval_names, encode):
        if self.validation_fraction is not None:
            raise ValueError(
                "validation_fraction is not available when training on a Dask cluster: pass eval_set instead"
            )
        if self.summation not in (None, "exact"):
            raise ValueError(
                f"summation={self.summation!r}: training on a Dask cluster sums exactly (summation='exact'), "
                "so that the model does not depend on the partitioning"
            )
        callbacks = [] if callbacks is None else list(callbacks)
        for cb in callbacks:
            if not callable(cb):
                raise TypeError(f"callbacks must be callables taking a CallbackEnv, got {type(cb).__name__}")
        client = default_client() if client is None else client
        params = self._native_params(resolve_seed(self.random_state), native_loss)
        params["summation"] = "exact"
        # The shards' X keep float32 (as _pack does); evaluation sets follow.
        kinds = set(map(str, X.dtypes)) if isinstance(X, dd.DataFrame) else {str(X.dtype)}
        dtype = np.float32 if kinds == {"float32"} else np.float64
        sets = _eval_sets(eval_set, eval_names, dtype, encode)
        if params["early_stopping_rounds"] is not None and not sets:
            raise ValueError("early_stopping_rounds needs an evaluation set: pass eval_set")
        # Callbacks and logging run here, on the client, after every round.
        progress = Progress(self, callbacks, params["n_estimators"])
        try:
            model, rounds, evals, best, stats = _train(client, params, X, y, sample_weight, sets, timeout, progress)
        finally:
            progress.close()
        self._store_fit(_core.Booster.from_json(model), rounds, evals, best, callbacks, None, sets)
        self.dask_exchanges_ = stats
        return self

    def to_local(self):
        """The fitted model as the ordinary (local) estimator."""
        local = self._local_class(**self.get_params())
        local.__dict__.update({k: v for k, v in vars(self).items() if k.endswith("_") or k == "_booster"})
        return local

    def _map_rows(self, X, fn, dtype, out_cols):
        local = self.to_local()
        if not isinstance(X, (da.Array, dd.DataFrame)):
            return fn(local, X)  # in-memory data: predicted here
        X = _as_array(X, "X", 2).rechunk({1: -1})
        shape = () if out_cols is None else (out_cols,)

        def block(b):
            # An empty partition predicts nothing (the local estimator refuses 0 rows).
            return np.empty((0, *shape), dtype=dtype) if len(b) == 0 else fn(local, b)

        if out_cols is None:
            return X.map_blocks(block, drop_axis=1, dtype=dtype)
        return X.map_blocks(block, chunks=(X.chunks[0], shape), dtype=dtype)

    def predict(self, X):
        """Predictions: for a dask collection a dask array, computed where
        X's partitions are; for in-memory data, what the local estimator gives."""
        return self._map_rows(X, lambda m, b: m.predict(b), self._predict_dtype(), None)


class DaskRGBMRegressor(_DaskMixin, RGBMRegressor):
    """:class:`rgbm_rs.RGBMRegressor` trained on a Dask cluster (see the module docs).

    ``fit(X, y, sample_weight=None, eval_set=None, eval_names=None,
    callbacks=None, client=None, timeout=600)`` takes dask arrays or
    dataframes; evaluation sets (dask or in memory) are gathered and every
    worker evaluates them whole, so keep them small; ``client`` defaults to the current
    Dask client; ``callbacks`` (as for the local estimator) run on the
    client after every round. ``dask_exchanges_`` records what the fit sent
    through Dask: exchanges, bytes from and to the workers, and the seconds
    the client waited for them.
    """

    _local_class = RGBMRegressor

    def fit(
        self,
        X,
        y,
        sample_weight=None,
        eval_set=None,
        eval_names=None,
        callbacks=None,
        client=None,
        timeout=DEFAULT_TIMEOUT,
    ):
        with self._fitting():
            self._validate_params()
            self.n_features_in_ = int(X.shape[1])
            native_loss = "custom" if callable(self.loss) else self.loss

            def encode(ye, i):
                return np.asarray(ye, dtype=np.float64)

            return self._dask_fit(
                X, y, sample_weight, native_loss, callbacks, client, timeout, eval_set, eval_names, encode
            )

    def _predict_dtype(self):
        return np.float64


class DaskRGBMClassifier(_DaskMixin, RGBMClassifier):
    """:class:`rgbm_rs.RGBMClassifier` trained on a Dask cluster (see
    :class:`DaskRGBMRegressor` for ``fit``'s arguments)."""

    _local_class = RGBMClassifier

    def fit(
        self,
        X,
        y,
        sample_weight=None,
        eval_set=None,
        eval_names=None,
        callbacks=None,
        client=None,
        timeout=DEFAULT_TIMEOUT,
    ):
        with self._fitting():
            self._validate_params()
            self.n_features_in_ = int(X.shape[1])
            y = _as_array(y, "y", 1)
            classes = da.unique(y).compute()  # the labels stay on the workers
            if len(classes) < 2:
                raise ValueError(
                    f"DaskRGBMClassifier needs samples of at least 2 classes, but y contains only one class: "
                    f"{classes[0]!r}"
                )
            if self.class_weight is not None:
                raise ValueError("class_weight is not available when training on a Dask cluster yet")
            self.classes_ = classes
            encoded = y.map_blocks(lambda b: np.searchsorted(classes, b).astype(np.float64), dtype=np.float64)
            native_loss = self._native_loss(len(classes))

            def encode(ye, i):
                unseen = np.setdiff1d(np.unique(ye), classes)
                if len(unseen):
                    raise ValueError(
                        f"eval_set[{i}] has labels not seen in training: {unseen[:10].tolist()}; "
                        f"the classes are {classes.tolist()}"
                    )
                return np.searchsorted(classes, ye).astype(np.float64)

            return self._dask_fit(
                X, encoded, sample_weight, native_loss, callbacks, client, timeout, eval_set, eval_names, encode
            )

    def _predict_dtype(self):
        return self.classes_.dtype

    def predict_proba(self, X):
        """Class probabilities as a dask array (n_samples, n_classes)."""
        return self._map_rows(X, lambda m, b: m.predict_proba(b), np.float64, len(self.classes_))
