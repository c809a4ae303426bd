"""Training on a Dask cluster: the model one machine would fit on all rows.

``DaskRGBMRegressor`` and ``DaskRGBMClassifier`` take ``dask.array`` or
``dask.dataframe`` inputs and train where the partitions are: each worker
holding partitions runs one shard (a Dask actor) of the ordinary fit on its
rows. Every sum over rows -- histograms, node and leaf totals, the
gradients' grid -- is combined by the shards among themselves, each sending
its part to the others through Dask's own communication (no sockets, ports
or trackers of rgbm_rs's own); the client takes part once a round, for
callbacks and early stopping. Sums are
exact (``summation="exact"``), so the fitted model is the one a local fit on
the concatenated rows gives, whatever the partitioning and the number of
workers. A shard's worker lost during the fit costs time, not the model:
the partitions are computed again on the workers left and the fit resumes
there from the trees it has (``fit(on_worker_loss=...)``). See DESIGN.md,
"Training on a Dask cluster".

Needs ``dask[distributed]`` (``pip install "rgbm_rs[dask]"``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import numbers
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import CancelledError, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd
    from distributed import default_client, get_worker, wait
    from distributed.protocol import to_serialize
except ImportError as e:  # pragma: no cover - exercised without the extra only
    raise ImportError('rgbm_rs.dask needs dask and distributed: pip install "rgbm_rs[dask]"') from e

from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_consistent_length

from . import _core
from ._base import _checked_callbacks, _class_major, _feature_weights, _init_rows, _metric_functions, _metric_spelling
from ._frames import read_frame
from ._progress import Progress
from ._training import TrainingData
from ._typing import Callback
from ._validation import (
    ZERO_WEIGHTS,
    _feature_names,
    check_regression_target,
    check_weights,
    check_X_y,
    resolve_seed,
    set_categories,
    strings_are_categories,
)
from .sklearn import RGBMClassifier, RGBMRegressor

if TYPE_CHECKING:
    from distributed import Client
    from typing_extensions import Self

    from ._base import RGBMBase as _DaskBase
else:
    _DaskBase = object

__all__ = ["DaskRGBMClassifier", "DaskRGBMRegressor"]

#: Among 3 or more shards, a sum of at least this many values (a batch of
#: histograms) is reduce-scattered; smaller ones (totals, maxima) go whole
#: to every peer, one hop instead of two.
SCATTER_MIN_VALUES = 4096

#: How many times one fit resumes after losing the worker of a shard
#: (``fit(on_worker_loss="resume")``) before it stops with a RuntimeError:
#: a cluster that keeps losing workers is not one to train on.
MAX_RESUMES = 3

#: Seconds a fit waits for the workers at any one step (a round, whose
#: exchanges the workers make among themselves) before it gives up (a hung
#: or lost worker); ``fit(timeout=...)`` overrides it.
DEFAULT_TIMEOUT = 600.0


class _ShardActor:
    """One worker's shard: its partitions' rows and the fit on them.

    The client either relays every exchange (``first``/``reply``), or
    connects the shards to each other (``connect``) and asks each for whole
    rounds (``advance``): the shards then send their parts straight to one
    another (``deposit``) and combine them among themselves: a large sum
    (histograms) by reduce-scatter then all-gather, anything else by each
    shard combining every shard's whole part.
    """

    def __init__(self, params_json, n_total, eval_sets, resume, *parts):
        """`resume`: None, or the records of the rounds trained so far (as
        "round" messages carry them) and whether the client had stopped the
        fit after the last one."""
        xs = [p.x for p in parts]
        ids = np.concatenate([np.arange(p.offset, p.offset + len(p.x), dtype=np.uint64) for p in parts])
        x = np.ascontiguousarray(np.concatenate(xs)) if len(xs) > 1 else np.ascontiguousarray(xs[0])
        y = np.concatenate([p.y for p in parts]).astype(np.float64)
        w = np.concatenate([p.w for p in parts]).astype(np.float64) if parts[0].w is not None else None
        init = _class_major(np.concatenate([p.init for p in parts])) if parts[0].init is not None else None
        self._worker = get_worker()
        threads = self._worker.state.nthreads
        data = TrainingData(x, y, w, init)
        self._shard = _core.Shard(params_json, data, ids, int(n_total), eval_sets or None, threads, resume)
        self._peers, self._peer_ids, self._index, self._timeout = [], [], 0, DEFAULT_TIMEOUT
        self._n_shards = 1
        self._mail, self._seq, self._closed = {}, 0, False
        self._arrived = threading.Condition()
        self._stats = {"exchanges": 0, "scattered": 0, "bytes_out": 0}
        # advance() waits for the peers: not on the worker's one actor
        # thread, which another fit's shard on this worker may need.
        self._driver = ThreadPoolExecutor(1, thread_name_prefix="rgbm-shard")

    def first(self):
        return _portable(self._shard.first())

    def reply(self, kind, values):
        return _portable(self._shard.reply(kind, _writable(kind, values)))

    def connect(self, index, shards, timeout):
        """shards: every shard's (worker address, actor key); this one is `index`."""
        self._index, self._timeout = index, timeout
        self._peers = [s for i, s in enumerate(shards) if i != index]
        self._peer_ids = [i for i in range(len(shards)) if i != index]
        self._n_shards = len(shards)

    async def deposit(self, seq, sender, message):
        with self._arrived:
            self._mail.setdefault(seq, {})[sender] = message
            self._arrived.notify_all()

    async def advance(self, reply):
        """Runs the fit to the end of the next round (or of the fit),
        combining with the peers on the way; that round's message."""
        return await asyncio.get_running_loop().run_in_executor(self._driver, self._advance, reply)

    def _advance(self, reply):
        msg = self._shard.first() if reply is None else self._shard.reply(*reply)
        while msg[0] not in ("round", "done"):
            msg = self._shard.reply(*_writable_reply(self._combined(msg)))
        if msg[0] == "done":
            return (*_portable(msg), self._stats)
        return msg

    def _combined(self, msg):
        """The reply to one exchange, combined with the peers."""
        self._stats["exchanges"] += 1
        if msg[0] == "sum" and self._n_shards >= 3 and len(msg[1]) >= SCATTER_MIN_VALUES:
            return ("values", self._reduce_scatter(msg[1]))
        self._seq += 1
        return _combine([msg, *self._swap((self._seq, 0), [msg] * len(self._peers)).values()])

    def _reduce_scatter(self, values):
        """Every shard's `values` summed: shard k sums every shard's k-th
        slice (of W equal slices) and sends the sum to all the others, so a
        shard sends about twice its part whatever W (sending the whole part
        to every peer is W - 1 times it). The slices' sums are exact on the
        grid in any order, so every shard gets the same values as from the
        whole parts."""
        self._seq += 1
        self._stats["scattered"] += 1
        n, w = len(values), self._n_shards
        cut = [n * k // w for k in range(w + 1)]
        mine = slice(cut[self._index], cut[self._index + 1])
        parts = [("part", n, np.ascontiguousarray(values[cut[k] : cut[k + 1]])) for k in self._peer_ids]
        got = self._swap((self._seq, 0), parts).values()
        if any(m[0] != "part" or m[1] != n or len(m[2]) != mine.stop - mine.start for m in got):
            raise RuntimeError("the shards are out of step (a sum's slices do not match); the fit was stopped")
        summed = np.sum([values[mine], *(m[2] for m in got)], axis=0, dtype=np.float64)
        sums = self._swap((self._seq, 1), [("slice", summed)] * len(self._peers))
        out = np.empty(n, dtype=np.float64)
        out[mine] = summed
        for k, m in sums.items():
            if m[0] != "slice" or len(m[1]) != cut[k + 1] - cut[k]:
                raise RuntimeError("the shards are out of step (a summed slice does not match); the fit was stopped")
            out[cut[k] : cut[k + 1]] = m[1]
        return out

    def _swap(self, seq, msgs):
        """Sends msgs[i] to peer i; every peer's message to this shard, by
        the peer's index. `seq` names the exchange (and its phase)."""
        self._stats["bytes_out"] += sum(getattr(v, "nbytes", 0) for m in msgs for v in m)
        loop = self._worker.loop.asyncio_loop
        sends = [
            asyncio.run_coroutine_threadsafe(self._send(a, k, seq, m), loop) for (a, k), m in zip(self._peers, msgs)
        ]
        deadline = time.monotonic() + self._timeout
        with self._arrived:
            while len(self._mail.get(seq, ())) < len(self._peers):
                # A part that could not be sent would leave its peer waiting:
                # fail this shard now (the client then stops the fit).
                failed = [f.exception() for f in sends if f.done() and f.exception() is not None]
                if failed:
                    raise RuntimeError(f"a shard could not send its part to a peer: {failed[0]!r}") from failed[0]
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise TimeoutError(f"a shard did not hear from its peers within {self._timeout:g} s")
                self._arrived.wait(min(left, 0.25))
            return self._mail.pop(seq, {})

    async def _send(self, address, key, seq, msg):
        # The call an actor handle makes, without a handle (which wants a
        # client on this worker).
        args = [to_serialize(seq), to_serialize(self._index), to_serialize(msg)]
        answer = await self._worker.rpc(address).actor_execute(function="deposit", actor=key, args=args, kwargs={})
        if answer.get("status") != "OK":
            raise answer.get("exception") or RuntimeError(f"the peer shard answered {answer!r}")

    def close(self):
        with self._arrived:
            self._closed = True
            self._arrived.notify_all()
        self._shard.close()
        self._driver.shutdown(wait=False)


def _portable(message):
    """A message the client can receive: a finished fit as its JSON parts."""
    if message[0] != "done":
        return message
    b = message[1]
    return ("done", b.to_json(), b.training_log_json(), b.evals_json(), b.best_iteration)


def _writable(kind, values):
    # Received buffers may be unaligned or read-only views.
    return values if kind == "stop" else np.require(values, requirements=["C", "A", "W"])


def _writable_reply(reply):
    return reply[0], _writable(*reply)


def _combine(msgs):
    """The reply to one exchange: every shard's message combined."""
    kind = msgs[0][0]
    if any(m[0] != kind for m in msgs):
        raise RuntimeError(f"the shards are out of step ({sorted({m[0] for m in msgs})}); the fit was stopped")
    if kind in ("sum", "max"):
        parts = [m[1] for m in msgs]
        if len({len(p) for p in parts}) != 1:
            raise RuntimeError("the shards are out of step (parts of different lengths)")
        # Sums of grid values are exact in any order; fmax ignores NaN as the core's max does.
        combined = np.sum(parts, axis=0) if kind == "sum" else np.fmax.reduce(parts, axis=0)
        return ("values", np.asarray(combined, dtype=np.float64))
    if kind == "limbs":
        return ("limbs", np.sum([m[1] for m in msgs], axis=0, dtype=np.int64))
    if kind == "gather":
        width = msgs[0][1]
        records = np.concatenate([m[2] for m in msgs]).reshape(-1, width)
        order = np.argsort(records[:, 0], kind="stable")
        return ("values", np.ascontiguousarray(records[order]).ravel())
    raise RuntimeError(f"unknown message {kind!r} from a shard")


class _Part(NamedTuple):
    """One checked partition: its first row's index among all rows, its
    rows, float labels, weights (times their class weights) and starting
    scores; ``positive``: whether the sample weights, and the weights times
    the class weights, have a positive one (the fit needs one of each
    among all partitions)."""

    offset: int
    x: np.ndarray
    y: np.ndarray
    w: np.ndarray | None
    init: np.ndarray | None
    positive: list[bool]


def _pack(offset, x, y, w, init, probe, labels):
    """_checked_part's partition, or the error refusing it (raised on the
    client: a refused input is no failure of the worker)."""
    try:
        return _checked_part(offset, x, y, w, init, probe, labels)
    except (ValueError, TypeError) as e:
        return e


def _checked_part(offset, x, y, w, init, probe, labels):
    """One partition (its first row is row `offset`) as a shard reads it,
    checked as the local fit checks its data: X and y by check_X_y, the
    targets by check_regression_target or the labels by the classifier's
    own check, the weights by check_weights, init_score as the local
    init_score. `probe`: an unfitted estimator of the fit's class (for the
    checks' messages); `labels`: None for regression, else (classes, the
    class weights or None). A :class:`_Part`: y as floats (labels as their
    class codes), the weights times their class weights."""
    x, y = check_X_y(probe, x, y, regression=labels is None)
    _check_finite(x, offset)
    if labels is None:
        y = check_regression_target(y)
    else:
        classes, per_class = labels
        probe._classes(y)  # raises as the local fit does
        y = np.searchsorted(classes, y).astype(np.float64)
    w = check_weights(w, x, whole=False)
    positive = [w is None or bool(np.any(w > 0))]
    if labels is not None and per_class is not None:
        by_class = per_class[y.astype(np.intp)]
        w = check_weights(by_class if w is None else w * by_class, x, whole=False)
        positive.append(bool(np.any(w > 0)))
    init = None if init is None else _init_rows(init, len(y), "init_score")
    return _Part(offset, x, y, w, init, positive)


def _check_finite(x, offset):
    """Refuses infinity in a partition's rows, naming the row among all rows
    (as the local fit names it; a shard would count its own rows only)."""
    bad = np.isinf(x)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"non-finite value: X contains infinity at row {offset + int(row)}, column {int(col)} "
            "(NaN is allowed and means missing)"
        )


def _block_classes(probe, y):
    """The classes of one partition's labels and each one's count, the
    labels checked as the local classifier checks them (check_X_y's checks
    of y, then the classifier's; X is checked with the partition's rows);
    or the error refusing them."""
    try:
        _, y = check_X_y(probe, np.zeros((len(y), 1)), y, regression=False)
        classes, codes = probe._classes(y)
    except (ValueError, TypeError) as e:
        return e
    return classes, np.bincount(codes, minlength=len(classes))


def _raise_refusal(results):
    """Raises the first of the partitions' refusals (the local fit's error)."""
    for r in results:
        if isinstance(r, Exception):
            raise r


def _check_timeout(timeout):
    """fit's timeout as float seconds: a finite number > 0."""
    if isinstance(timeout, (bool, np.bool_)) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"timeout must be a number of seconds, got {type(timeout).__name__} {timeout!r}")
    seconds = float(timeout)
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
    return seconds


def _check_on_worker_loss(value):
    """fit's on_worker_loss: "resume" or "raise"."""
    if not isinstance(value, str) or value not in ("resume", "raise"):
        raise ValueError(f"on_worker_loss must be 'resume' or 'raise', got {value!r}")


def _ready(futures, timeout, what, watch=None):
    """Waits for `futures` (`what` they compute); a future's own error
    (a refused partition, say) is raised as itself. `watch`: (client,
    worker addresses) whose loss ends the wait with _WorkerLost."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            wait(futures, timeout=max(min(left, 0.25) if watch else left, 0.001))
            break
        except CancelledError as e:
            # The scheduler cancels a shard whose partitions it lost (a
            # worker gone since they were placed): a loss like any other.
            if not watch:
                raise
            raise _WorkerLost(_lost_workers(*watch, wait=1.0) or []) from e
        except TimeoutError:
            gone = _lost_workers(*watch) if watch else None
            if gone:
                raise _WorkerLost(gone) from None
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"{what} were not ready within timeout={timeout:g} s; the fit was stopped "
                    "(pass a larger fit(timeout=...) for data that takes longer to compute)"
                ) from None
    for f in futures:
        if f.status == "error":
            gone = _lost_workers(*watch, wait=1.0) if watch else None
            if gone:
                raise _WorkerLost(gone)
            f.result()


def _check_data(est, X, y):
    """X (a dask array or dataframe) and y as dask collections of fitting
    shapes (a column vector y raveled with scikit-learn's warning); the
    numbers of rows compared where they are known (a frame's are known once
    it is read)."""
    if not isinstance(X, dd.DataFrame):
        X = _as_array(X, "X", 2)
    y = _as_array(y, "y", (1, 2))
    if y.ndim == 2:
        if y.shape[1] != 1:
            raise ValueError(
                _ONE_OUTPUT.format(
                    est=type(est).__name__,
                    what=f"y of shape {y.shape} has {y.shape[1]} columns (several targets or labels)",
                    local=type(est)._local_class.__name__,
                    given="2-D y",
                )
            )
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape of y to "
            "(n_samples, ), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y[:, 0]
    if X.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required by {type(est).__name__}."
        )
    if isinstance(X, da.Array):
        _check_rows(est, X, y)
    return X, y


#: The refusal of several targets or labels per row: the shards fit one
#: target (one label, or K classes of one).
_ONE_OUTPUT = (
    "{est}: training on a Dask cluster fits one target (one label, or the classes of one label) "
    "per model, but {what}; fit the local estimator {local} for {given}"
)


def _disconnected(client):
    """Whether the client has lost its scheduler: the cluster closed, or the
    connection dropped (the client reconnecting, or given up)."""
    return getattr(client, "status", "running") != "running"


def _connection_lost(client, trained=None):
    """The error of a fit whose cluster went away; `trained`: (rounds trained, rounds asked)."""
    rounds = "" if trained is None else f" with {trained[0]} of {trained[1]} rounds trained"
    return RuntimeError(
        f"the Dask cluster, or the client's connection to its scheduler, was lost{rounds} "
        f"(client status {str(getattr(client, 'status', None))!r}); the fit was stopped and no model "
        "was kept: fit again on a running cluster"
    )


def _check_rows(est, X, y):
    """X's and y's numbers of rows agree, X has rows (scikit-learn's messages)."""
    check_consistent_length(X, y)
    if X.shape[0] == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required by {type(est).__name__}."
        )


def _as_array(v, what, ndim):
    """A dask array with known chunk sizes (frames and series converted);
    `ndim`: its number of dimensions, or a tuple of those allowed."""
    if isinstance(v, (dd.DataFrame, dd.Series)):
        v = v.to_dask_array(lengths=True)
    if not isinstance(v, da.Array):
        raise TypeError(f"{what} must be a dask array or dask dataframe, got {type(v).__name__}")
    if not isinstance(v._meta, np.ndarray):
        raise TypeError(
            f"{what}'s partitions are {type(v._meta).__module__}.{type(v._meta).__name__}, not numpy arrays: "
            f"training on a Dask cluster takes dense partitions ({what}.map_blocks(lambda b: b.toarray()) "
            "for scipy.sparse)"
        )
    if v.ndim not in (ndim if isinstance(ndim, tuple) else (ndim,)):
        raise ValueError(f"{what} must be {ndim}-dimensional, got shape {v.shape}")
    if any(np.isnan(c) for c in v.chunks[0]):
        v = v.compute_chunk_sizes()
    return v


def _encode(part, categories):
    """One partition of a dask dataframe as the float array a local fit reads
    (category values as their codes among the fit's `categories`)."""
    return read_frame(part).to_array(categories=categories, text=True)[0]


def _unpacked(cols, shape):
    """Columns of a packed dask array back to rows of ``shape``."""
    if not shape:
        return cols[:, 0]
    if len(shape) == 1:
        return cols
    return cols.map_blocks(
        lambda c: c.reshape(len(c), *shape),
        chunks=(cols.chunks[0], *((n,) for n in shape)),
        new_axis=list(range(2, len(shape) + 1)),
        dtype=cols.dtype,
    )


def _is_dask(X):
    return isinstance(X, (da.Array, dd.DataFrame))


def _frame_as_array(est, X):
    """A dask dataframe as a dask array, its column names and categories
    recorded on `est` as a local fit on the concatenated frame records them;
    a dask array as itself (any names and categories of an earlier fit dropped)."""
    if not isinstance(X, dd.DataFrame):
        if hasattr(est, "feature_names_in_"):
            del est.feature_names_in_
        set_categories(est, None, [])
        return X
    unknown = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype) and not X[c].cat.known]
    if unknown:
        X = X.categorize(columns=unknown)  # a pass over the data to find the categories
    # The frame's (empty) meta holds the column labels and dtypes, categories included.
    meta = read_frame(X._meta)
    text = strings_are_categories(est)
    empty, categories = meta.to_array(text=text)
    strings = [j for j, col in enumerate(meta.columns) if text and getattr(col, "text", False)]
    if strings:
        # A string column's categories are its distinct values (a pass over them).
        found = dask.compute(*[X[meta.labels[j]].dropna().unique() for j in strings])
        for j, values in zip(strings, found):
            column = pd.DataFrame({meta.labels[j]: pd.Series(values, dtype=X._meta.dtypes.iloc[j])})
            categories[j] = read_frame(column).to_array(text=True)[1][0]
    names = _feature_names(meta.labels)
    if names is not None:
        est.feature_names_in_ = names
    elif hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    set_categories(est, names, categories)
    return X.map_partitions(_encode, categories, meta=empty)


class _WorkerLost(RuntimeError):
    """The workers (addresses) of some of the fit's shards left the cluster."""

    def __init__(self, workers):
        self.workers = sorted(workers)
        super().__init__(f"the worker holding a shard was lost ({self.workers})")


def _lost_workers(client, addresses, wait=0.0):
    """Those of `addresses` the scheduler no longer lists, waiting up to
    `wait` seconds for one to go (a shard may see its peer die a moment
    before the scheduler does)."""
    deadline = time.monotonic() + wait
    while True:
        gone = set(addresses) - set(client.nthreads())
        if gone or time.monotonic() >= deadline:
            return gone
        time.sleep(0.05)


class _Rounds:
    """What the client keeps of a fit's rounds: the record of each (its
    trees and log entry, which a resumed fit replays) and whether the
    callbacks stopped the fit after the last one."""

    def __init__(self, on_round):
        self.on_round, self.records, self.stopped = on_round, [], False

    def end(self, msg):
        """The answer to a round's end ("round", index, results, record):
        stop the fit?"""
        _, index, results, record = msg
        if index != len(self.records):
            raise RuntimeError(
                f"the shards are out of step (round {index} after {len(self.records)}); the fit was stopped"
            )
        self.records.append(record)
        self.stopped = bool(self.on_round(index, results))
        return self.stopped

    def resume(self):
        """A new shard's `resume`: None before the first round's end."""
        return (list(self.records), self.stopped) if self.records else None


class _Exchange:
    """The client's end of a distributed fit: relays the shards' exchanges."""

    def __init__(self, client, actors, holders, timeout, rounds, stats):
        # holders: the futures of the actors (their status follows their workers).
        self.client, self.actors, self.holders = client, actors, holders
        self.timeout, self.rounds, self.stats = timeout, rounds, stats
        self.addresses = {a._address for a in actors}

    def _all(self, method, *args, each=None):
        """Calls `method` on every shard in parallel (with `args`, or with
        `each[i]` for shard i); their answers."""
        started = time.monotonic()
        deadline = started + self.timeout
        each = [args] * len(self.actors) if each is None else each
        self.stats["exchanges"] += 1
        self.stats["bytes_out"] += sum(getattr(v, "nbytes", 0) for a in each for v in a)
        try:
            calls = [getattr(a, method)(*e) for a, e in zip(self.actors, each)]
            out = [None] * len(calls)
            waiting = list(range(len(calls)))
            while waiting:
                # A shard that failed ends the exchange now, even while the
                # others still wait (for its part, among workers).
                for i in [i for i in waiting if calls[i].done()]:
                    out[i] = calls[i].result()
                    waiting.remove(i)
                if not waiting:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                try:
                    out[waiting[0]] = calls[waiting[0]].result(timeout=min(left, 0.25))
                    waiting.pop(0)
                except TimeoutError:
                    # A call to a lost worker may wait instead of failing
                    # (and Dask may already have rebuilt the actor
                    # elsewhere): check that the shards' workers are alive.
                    gone = _lost_workers(self.client, self.addresses)
                    if gone or any(p.status != "finished" for p in self.holders):
                        raise _WorkerLost(gone or self.addresses) from None
            self.stats["seconds"] += time.monotonic() - started
            self.stats["bytes_in"] += sum(getattr(v, "nbytes", 0) for m in out for v in m or ())
            return out
        except TimeoutError:
            raise TimeoutError(
                f"a worker did not answer within {self.timeout:g} s (hung or lost); the fit was stopped"
            ) from None
        except (ValueError, TypeError, MemoryError, KeyboardInterrupt, _WorkerLost):
            raise  # the fit's own error, raised on a worker; a loss seen above
        except Exception as e:
            # A shard that could not reach a lost peer fails a moment before
            # the scheduler drops the peer's worker.
            gone = _lost_workers(self.client, self.addresses, wait=2.0)
            if gone:
                raise _WorkerLost(gone) from e
            raise RuntimeError(
                f"a worker failed during the fit ({type(e).__name__}: {e}); the fit was "
                "stopped and no model was kept: fit again"
            ) from e

    def run(self):
        """Relays every exchange through the client."""
        msgs = self._all("first")
        while True:
            kinds = {m[0] for m in msgs}
            if kinds == {"done"}:
                return msgs[0]
            reply = ("stop", self.rounds.end(msgs[0])) if kinds == {"round"} else _combine(msgs)
            msgs = self._all("reply", *reply)

    def run_among_workers(self):
        """Lets the shards combine among themselves; the client takes part
        once a round (callbacks, stopping)."""
        shards = [(a._address, a.key) for a in self.actors]
        self._all("connect", each=[(i, shards, self.timeout) for i in range(len(shards))])
        self.stats["exchanges"] -= 1
        msgs = self._all("advance", None)
        while True:
            kinds = {m[0] for m in msgs}
            if kinds == {"done"}:
                # Exchanges: the shards' among themselves and the client's calls.
                self.stats["exchanges"] += msgs[0][-1]["exchanges"]
                self.stats["scattered"] += msgs[0][-1]["scattered"]
                self.stats["bytes_between_workers"] += sum(m[-1]["bytes_out"] for m in msgs)
                return msgs[0][:-1]
            if kinds != {"round"}:
                raise RuntimeError(f"the shards are out of step ({sorted(kinds)}); the fit was stopped")
            msgs = self._all("advance", ("stop", self.rounds.end(msgs[0])))


class _Run(NamedTuple):
    """How a fit runs on the cluster: its client, ``timeout`` and
    ``on_worker_loss`` as fit takes them, ``reduce`` where the shards'
    parts are combined ("workers" or "client"), ``on_round`` the client's
    per-round hook, and ``probe`` and ``labels`` as _pack takes them."""

    client: Any
    timeout: float
    on_worker_loss: str
    reduce: str = "workers"
    on_round: Any = None
    probe: Any = None
    labels: Any = None


class _Job(NamedTuple):
    """What every shard of one fit is started with, and where the client
    keeps its rounds and exchange statistics."""

    params_json: str
    n_total: int
    evals: Any
    rounds: _Rounds
    stats: dict


def _aligned(v, X, what):
    """An optional per-row dask collection (weights, starting scores) as a
    dask array chunked as X's rows."""
    if v is None:
        return None
    v = _as_array(v, what, 2 if getattr(v, "ndim", 1) == 2 else 1)
    if v.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but {what} has {v.shape[0]}")
    return v.rechunk((X.chunks[0],) + ((-1,) if v.ndim == 2 else ()))


def _train(params, fit, run):
    """(model JSON, round log, evaluation histories, best round, exchange
    statistics, lost workers) of the fit of ``fit`` (dask collections, and
    its evaluation sets as the core reads them) run as ``run`` says."""
    client = run.client
    X = _as_array(fit.X, "X", 2)
    y = _as_array(fit.y, "y", 1)
    _check_rows(run.probe, X, y)
    X = X.rechunk({1: -1})
    y = y.rechunk((X.chunks[0],))
    w = _aligned(fit.sample_weight, X, "sample_weight")
    init = _aligned(fit.init_score, X, "init_score")
    sizes = X.chunks[0]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    n_total = int(offsets[-1])
    xd, yd = X.to_delayed().ravel(), y.to_delayed().ravel()
    wd, ind = (v.to_delayed().ravel() if v is not None else [None] * len(xd) for v in (w, init))
    parts = [
        dask.delayed(_pack)(int(offsets[i]), xd[i], yd[i], wd[i], ind[i], run.probe, run.labels)
        for i in range(len(xd))
        if sizes[i] > 0
    ]
    futures = client.compute(parts)
    rounds = _Rounds(run.on_round)
    stats = {"exchanges": 0, "scattered": 0, "bytes_in": 0, "bytes_out": 0, "seconds": 0.0}
    if run.reduce == "workers":
        stats["bytes_between_workers"] = 0
    try:
        return _trained(params, fit, run, futures, n_total, rounds, stats, [])
    except Exception as e:
        # Whatever a call to a closed client raised (AttributeError,
        # CommClosedError, a wait timing out), the cause is the lost cluster;
        # a refusal of the data stays as it is.
        if _disconnected(client) and not isinstance(e, (ValueError, TypeError)):
            raise _connection_lost(client, (len(rounds.records), params["n_estimators"])) from e
        raise
    finally:
        # Releasing the futures removes the partitions from the workers.
        try:
            client.cancel(futures)
        except Exception:  # noqa: BLE001 - keep the fit's own error
            pass


def _trained(params, fit, run, futures, n_total, rounds, stats, lost):
    """_train's fit once the packed partitions (`futures`) are computing;
    `lost` collects the workers lost and resumed from."""
    client, resumes = run.client, 0
    _ready(futures, run.timeout, "the partitions of the training data")
    summaries = client.gather([client.submit(_summary, f, pure=False) for f in futures])
    _raise_refusal(summaries)
    # The weights' check across partitions: some row has a positive weight.
    if not np.array(summaries).any(axis=0).all():
        raise ValueError(ZERO_WEIGHTS)
    params_json = json.dumps(params)
    # Every shard evaluates the whole evaluation sets (small by design),
    # so every shard stops in the same round.
    job = _Job(params_json, n_total, _scattered_evals(client, fit), rounds, stats)
    while True:
        try:
            done = _fit_shards(run, futures, job)
            break
        except _WorkerLost as e:
            lost += [a for a in e.workers if a not in lost]
            if _disconnected(client):
                raise  # no scheduler to compute the partitions again
            if run.on_worker_loss == "raise" or resumes == MAX_RESUMES:
                why = (
                    "on_worker_loss='raise'"
                    if run.on_worker_loss == "raise"
                    else f"after {MAX_RESUMES} resume(s), rgbm_rs.dask.MAX_RESUMES"
                )
                raise RuntimeError(
                    f"the worker(s) {lost} holding a shard of the fit were lost with "
                    f"{len(rounds.records)} of {params['n_estimators']} rounds trained; the fit was "
                    f"stopped ({why}) and no model was kept: fit again"
                ) from e
            # Dask computes the lost partitions again on the workers
            # left; the new shards replay the rounds trained so far.
            resumes += 1
            _recomputed(client, futures, run.timeout, lost)
            # Scattered data lost with a worker cannot be computed again
            # (a broadcast may not have reached every worker yet): send the
            # evaluation sets afresh.
            job = job._replace(evals=_scattered_evals(client, fit))
    _, model, log, evals, best = done
    return model, json.loads(log), json.loads(evals), best, stats, lost


def _scattered_evals(client, fit):
    """The evaluation sets on every worker (new keys each time)."""
    return client.scatter(list(fit.evals), broadcast=True, hash=False) if fit.evals else []


def _fit_shards(run, futures, job):
    """A shard on every worker holding packed partitions (`futures`), which
    replays the rounds `job.rounds` holds and trains on: the fit's "done"
    message. Raises _WorkerLost if a shard's worker leaves."""
    client, timeout, rounds = run.client, run.timeout, job.rounds
    who_has = client.who_has(futures)
    by_worker = {}
    for f in futures:
        holders = sorted(who_has.get(f.key, ()))
        if not holders:
            raise _WorkerLost([])  # lost again since it was computed
        by_worker.setdefault(holders[0], []).append(f)
    actors, pending = [], []
    try:
        pending += [
            client.submit(
                _ShardActor,
                job.params_json,
                job.n_total,
                job.evals,
                rounds.resume(),
                *fs,
                actor=True,
                workers=[addr],
                pure=False,
            )
            for addr, fs in sorted(by_worker.items())
        ]
        _ready(pending, timeout, "the shards of the fit", watch=(client, set(by_worker)))
        actors = [p.result() for p in pending]
        exchange = _Exchange(client, actors, pending, timeout, rounds, job.stats)
        return exchange.run_among_workers() if run.reduce == "workers" else exchange.run()
    finally:
        _close(actors)
        del actors
        # Releasing the actors' futures removes them from their workers.
        try:
            client.cancel(pending)
        except Exception:  # noqa: BLE001 - keep the fit's own error
            pass


def _recomputed(client, futures, timeout, lost):
    """Waits until the scheduler holds every packed partition (`futures`)
    again: Dask computes a lost one again from its graph on the workers
    left. A partition that needs data Dask cannot compute again (scattered
    to, or persisted only on, a lost worker) stops the fit."""
    deadline = time.monotonic() + timeout
    keys = [f.key for f in futures]
    while True:
        waiting, missing = client.run_on_scheduler(_partition_states, keys)
        if missing:
            raise RuntimeError(
                f"the lost worker(s) {lost} held data that partitions of the training data need and Dask "
                f"cannot compute again ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}: data "
                "scattered to a worker, or persisted only on workers that are gone); the fit was stopped and "
                "no model was kept: make the data computable again (from its source) and fit again"
            )
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"the partitions lost with worker(s) {lost} were not computed again within timeout={timeout:g} s; "
                "the fit was stopped"
            )
        time.sleep(0.1)


def _partition_states(keys, dask_scheduler=None):
    """On the scheduler: how many of `keys` are not in memory, and the tasks
    they need that cannot be computed (forgotten, as scattered data whose
    worker left is; failed; or restricted to workers that are gone)."""
    tasks = dask_scheduler.tasks
    alive = set(dask_scheduler.workers) | {ws.name for ws in dask_scheduler.workers.values()}
    waiting = sum(1 for k in keys if k not in tasks or tasks[k].state != "memory")
    missing, seen, todo = [], set(), list(keys)
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        ts = tasks.get(key)
        stranded = (
            ts is not None
            and ts.state == "no-worker"
            and bool(ts.worker_restrictions)
            and not ts.loose_restrictions
            and not ts.worker_restrictions & alive
        )
        if ts is None or ts.state == "erred" or stranded:
            missing.append(str(key))
        elif ts.state != "memory":
            todo.extend(d.key for d in ts.dependencies)
    return waiting, missing


def _summary(part):
    """A packed partition's refusal, or whether its weights have a positive one."""
    return part if isinstance(part, Exception) else part.positive


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


def _gathered(v):
    """A dask collection computed (in memory); anything else as it is;
    (X, y) pairs item by item."""
    if isinstance(v, tuple):
        return tuple(_gathered(u) for u in v)
    return v.compute() if isinstance(v, (da.Array, dd.DataFrame, dd.Series)) else v


def _raw_scores(start, X):
    """The raw scores of model `start` on the rows of dask array X, (n,) or
    (n, K), computed where X's partitions are."""
    model = start.to_json()  # a Booster does not pickle; its JSON does
    probe = start.predict_raw(np.zeros((1, X.shape[1]), dtype=X.dtype))
    shape = probe.shape[1:]

    def block(b):
        if len(b) == 0:
            return np.empty((0, *shape))
        return _core.Booster.from_json(model).predict_raw(np.ascontiguousarray(b))

    X = X.rechunk({1: -1})
    if not shape:
        return X.map_blocks(block, drop_axis=1, dtype=np.float64)
    return X.map_blocks(block, chunks=(X.chunks[0], shape), dtype=np.float64)


class _DaskMixin(_DaskBase):
    """What the Dask estimators add to the local ones."""

    _local_class: type[RGBMRegressor] | type[RGBMClassifier]
    #: Where the shards' parts are combined: "workers" (among themselves) or
    #: "client" (relayed through it; kept to measure the two).
    _reduce = "workers"

    def fit(
        self,
        X: Any,
        y: Any = None,
        sample_weight: Any = None,
        eval_set: Sequence[tuple[Any, Any]] | None = None,
        eval_names: Sequence[str] | None = None,
        eval_sample_weight: Sequence[Any] | None = None,
        callbacks: Sequence[Callback] | None = None,
        init_score: Any = None,
        eval_init_score: Sequence[Any] | None = None,
        init_model: Any = None,
        client: Client | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        on_worker_loss: str = "resume",
        *,
        eval_metric: Any = None,
        eval_X: Any = None,
        eval_y: Any = None,
        verbose: bool | int | None = None,
        feature_weights: Any = None,
    ) -> Self:
        """Trains on the cluster (see :class:`DaskRGBMRegressor` for the arguments)."""
        timeout = _check_timeout(timeout)
        _check_on_worker_loss(on_worker_loss)
        if y is None:
            # The local estimators' y=None is for a Dataset, which the cluster does not take.
            raise TypeError("fit needs y: the Dask estimators train on dask collections, not a Dataset")
        # The local fit reads the arguments into the same FitInput and hands
        # it to _fit_given, which trains on the cluster here.
        self._cluster = (client, timeout, on_worker_loss)
        try:
            return super().fit(
                X,
                y,
                sample_weight,
                eval_set,
                eval_names,
                eval_sample_weight,
                callbacks,
                init_score,
                eval_init_score,
                init_model,
                eval_metric=eval_metric,
                eval_X=eval_X,
                eval_y=eval_y,
                verbose=verbose,
                feature_weights=feature_weights,
            )
        finally:
            del self._cluster

    def _fit_given(self, fit):
        client, timeout, on_worker_loss = self._cluster
        X, y = _check_data(self, fit.X, fit.y)
        self.n_features_in_ = int(X.shape[1])
        client = default_client() if client is None else client
        try:
            # Each estimator's _dask_labels: (the core's loss, encode(ye, i)
            # for evaluation set i's labels, the labels' classes and class
            # weights for _pack, None for regression).
            native_loss, encode, labels = self._dask_labels(y, client, timeout)
            fit = dataclasses.replace(fit, X=X, y=y, loss=native_loss, encode=encode)
            run = _Run(client, timeout, on_worker_loss, self._reduce, probe=type(self)(), labels=labels)
            return self._dask_fit(fit, run)
        except Exception as e:
            # Before the rounds (the classes of y, a frame's categories): as in _train.
            if _disconnected(client) and not isinstance(e, (ValueError, TypeError, RuntimeError)):
                raise _connection_lost(client) from e
            raise

    def _dask_fit(self, fit, run):
        """The fit of both estimators: ``fit``'s X and y as given (checked
        and encoded on the workers, ``run.labels`` as _pack takes them),
        ``fit.encode(ye, i)`` checking and encoding evaluation set i's
        labels."""
        if self.validation_fraction is not None:
            raise ValueError(
                "validation_fraction is not available when training on a Dask cluster: pass eval_set instead"
            )
        if callable(self.loss) or _metric_functions(self.eval_metric):
            raise ValueError(
                "a Dask cluster trains with built-in losses and metrics only: a loss or metric function would run "
                "in every worker on its partition alone; fit the local estimator, or pass metric names"
            )
        if self.summation not in (None, "exact"):
            raise ValueError(
                f"summation={self.summation!r}: training on a Dask cluster sums exactly (summation='exact'), "
                "so that the model does not depend on the partitioning"
            )
        callbacks = _checked_callbacks(fit.callbacks)
        X = _frame_as_array(self, fit.X)  # before the parameters: categorical_features may name columns
        start, n_rounds = self._start(fit.init_model, fit.loss)
        if start is not None and n_rounds == 0:
            self.__dict__.update(self._previous)  # warm start, nothing to add
            return self
        params = self._native_params(resolve_seed(self.random_state), fit.loss, n_rounds)
        if fit.feature_weights is not None:
            params["feature_weights"] = _feature_weights(fit.feature_weights, int(self.n_features_in_))
        params["summation"] = "exact"
        # Refused here, not in the workers' logs.
        _core.check_shard_params(json.dumps(params))
        # The shards' X keep float32 (as _pack does); evaluation sets follow.
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        if params["early_stopping_rounds"] is not None and not fit.evals:
            raise ValueError("early_stopping_rounds needs an evaluation set: pass eval_set")
        evals = [
            dataclasses.replace(e, x=_gathered(e.x), y=_gathered(e.y), sample_weight=_gathered(e.sample_weight))
            for e in fit.evals
        ]
        evals = [dataclasses.replace(e, init_score=_gathered(e.init_score)) for e in evals]
        init_score = fit.init_score
        if start is not None:
            # Continue from the model's raw scores on the training rows, where they are.
            raw = _raw_scores(start, X)
            init_score = raw if init_score is None else raw + _as_array(init_score, "init_score", raw.ndim)
        sets = self._checked_evals(dataclasses.replace(fit, evals=evals), dtype, start)
        # Callbacks and logging run here, on the client, after every round.
        progress = Progress(self, callbacks, params["n_estimators"], _metric_spelling(self.eval_metric))
        if progress.before:
            raise ValueError(
                "a Dask cluster runs callbacks after each round only: before-iteration callbacks "
                "(reset_parameter) cannot change the shards' rounds; fit the local estimator"
            )
        try:
            shards = dataclasses.replace(fit, X=X, init_score=init_score, evals=sets)
            model, rounds, evals, best, stats, lost = _train(params, shards, run._replace(on_round=progress))
        finally:
            progress.close()
        self._store_fit(_core.Booster.from_json(model), rounds, evals, best, callbacks, start, sets)
        self.dask_exchanges_ = stats
        self.dask_lost_workers_ = lost
        return self

    def to_local(self) -> Any:
        """The fitted model as the ordinary (local) estimator. Its parameters
        say what the cluster used (``summation="exact"``, which a Dask fit
        always uses), so refitting it locally gives the same model."""
        local = self._local_class(**{**self.get_params(), "summation": "exact"})
        local.__dict__.update({k: v for k, v in vars(self).items() if k.endswith("_") or k == "_booster"})
        return local

    def _map_rows(self, X, method, **kwargs):
        """The local estimator's `method` on X: for a dask collection a dask
        array computed where X's partitions are (rows in, rows out; a dict of
        arrays comes back as a dict of dask arrays, each partition computed
        once for all of them); for in-memory data, what the local estimator
        gives."""
        local = self.to_local()

        def run(b):
            return getattr(local, method)(b, **kwargs)

        if not _is_dask(X):
            return run(X)
        if kwargs.get("init_score") is not None:
            # Offsets are per row: they would have to be split as X's partitions are.
            raise TypeError(
                f"{method} with init_score does not take a dask collection; use to_local() on data in memory"
            )
        # The output's layout, from one row of zeros (which also raises any
        # argument error here rather than on the workers).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a frame-fitted model warns about names
            probe = run(np.zeros((1, self.n_features_in_)))
        names = list(probe) if isinstance(probe, dict) else None
        parts = [probe[k] for k in names] if names is not None else [probe]
        if not all(isinstance(p, np.ndarray) and p.ndim >= 1 for p in parts) or len({p.dtype for p in parts}) > 1:
            raise ValueError(f"{method} with {kwargs} on a dask collection: use to_local() on data in memory")
        widths = [p[0].size for p in parts]
        dtype = parts[0].dtype

        def packed(b):
            # An empty partition gives nothing (the local estimator refuses 0 rows).
            if len(b) == 0:
                return np.empty((0, sum(widths)), dtype=dtype)
            out = run(b)
            out = [out[k] for k in names] if names is not None else [out]
            return np.concatenate([o.reshape(len(b), -1) for o in out], axis=1)

        if isinstance(X, dd.DataFrame):
            # Each partition goes to the local estimator as a frame: its
            # column names are checked and categories encoded as at fit.
            cols = X.map_partitions(packed, meta=np.empty((0, sum(widths)), dtype=dtype))
        else:
            X = _as_array(X, "X", 2).rechunk({1: -1})
            cols = X.map_blocks(packed, chunks=(X.chunks[0], (sum(widths),)), dtype=dtype)
        out, at = [], 0
        for p, w in zip(parts, widths):
            out.append(_unpacked(cols[:, at : at + w], p.shape[1:]))
            at += w
        return dict(zip(names, out)) if names is not None else out[0]

    def predict(self, X: Any, *args: Any, **kwargs: Any) -> Any:
        """The local estimator's predict (``pred_leaf``, ``pred_contrib``,
        the iteration options too): for a dask collection a dask array,
        computed where X's partitions are (``init_score`` only with data in
        memory)."""
        return self._map_rows(X, "predict", **kwargs)

    def apply(self, X: Any, **kwargs: Any) -> Any:
        """Leaf indices per tree, as the local estimator's (mapped over
        partitions; the same iteration options)."""
        return self._map_rows(X, "apply", **kwargs)

    def predict_uncertainty(self, X: Any, n_members: int = 10) -> dict[str, Any]:
        """The local estimator's virtual-ensemble uncertainty: for a dask
        collection a dict of dask arrays, computed where X's partitions are."""
        return self._map_rows(X, "predict_uncertainty", n_members=n_members)

    def _in_memory(self, X, method):
        if _is_dask(X):
            raise TypeError(
                f"{method} does not take a dask collection: it yields every round's predictions for "
                "every row; pass data in memory (for instance a sample, X.compute())"
            )
        return getattr(super(), method)(X)

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """The local estimator's staged_predict, for data in memory only."""
        return self._in_memory(X, "staged_predict")


class DaskRGBMRegressor(_DaskMixin, RGBMRegressor):
    """:class:`rgbm_rs.RGBMRegressor` trained on a Dask cluster (see the module docs).

    ``fit(X, y, sample_weight=None, eval_set=None, eval_names=None,
    eval_sample_weight=None, callbacks=None, init_score=None,
    eval_init_score=None, init_model=None, client=None, timeout=600,
    on_worker_loss="resume")`` takes dask arrays or dataframes (``init_score`` too), and its first ten
    arguments as the local estimator does (``init_model`` and
    ``warm_start`` continue a local or a Dask-trained model); evaluation
    sets (dask or in memory) are gathered and every worker evaluates them
    whole, so keep them small; ``client`` defaults to the current Dask
    client; ``callbacks`` run on the client after every round (losses and
    metrics are built-in ones: a function would see one partition);
    ``timeout`` (seconds, a finite number > 0) bounds every wait of the
    fit -- for the partitions to be computed, the shards to start, the
    workers to answer -- before it stops with a TimeoutError. Each partition
    is checked where it is, as the local fit checks its data, and refused
    with the local fit's error. ``on_worker_loss``: when the worker of a
    shard leaves the cluster (killed, out of memory), ``"resume"`` (the
    default) has Dask compute its partitions again on the workers left,
    rebuilds the shards there and replays the rounds trained so far from
    their trees, so the fit goes on to the model it would have given
    (the model does not depend on where the rows are); after
    ``rgbm_rs.dask.MAX_RESUMES`` (3) resumes, or with ``"raise"`` at the
    first loss, the fit stops with a RuntimeError naming the lost workers
    and the rounds trained. A partition whose data Dask cannot compute
    again (scattered to, or persisted only on, a lost worker) stops the
    fit with a RuntimeError saying so. ``dask_lost_workers_`` lists the
    workers the fit lost and resumed from. ``dask_exchanges_`` records what the fit sent through Dask: exchanges
    (``scattered``: those summed by reduce-scatter among 3 or more workers),
    the bytes the workers sent each other, and the seconds the client
    waited for them.
    """

    _local_class = RGBMRegressor

    def _dask_labels(self, y, client, timeout):
        native_loss = "custom" if callable(self.loss) else self.loss

        def encode(ye, i):
            return np.asarray(ye, dtype=np.float64)

        return native_loss, encode, None


class DaskRGBMClassifier(_DaskMixin, RGBMClassifier):
    """:class:`rgbm_rs.RGBMClassifier` trained on a Dask cluster (see
    :class:`DaskRGBMRegressor` for ``fit``'s arguments)."""

    _local_class = RGBMClassifier

    def _dask_labels(self, y, client, timeout):
        # The labels stay on the workers, each partition checked there;
        # their classes and counts come back.
        probe = type(self)()
        blocks = [b for b, n in zip(y.to_delayed().ravel(), y.chunks[0]) if n > 0]
        futures = client.compute([dask.delayed(_block_classes)(probe, b) for b in blocks])
        try:
            _ready(futures, timeout, "the partitions of y")
            found = client.gather(futures)
        finally:
            client.cancel(futures)
        _raise_refusal(found)
        classes, codes = self._classes(np.concatenate([c for c, _ in found]))
        counts = np.bincount(codes, weights=np.concatenate([n for _, n in found]), minlength=len(classes))
        if len(classes) < 2:
            raise ValueError(
                f"DaskRGBMClassifier needs samples of at least 2 classes, but y contains only one class: {classes[0]!r}"
            )
        self.classes_ = classes
        per_class = None if self.class_weight is None else self._dask_class_weight(counts)

        def encode(ye, i):
            unseen = np.setdiff1d(np.unique(ye), classes)
            if len(unseen):
                raise ValueError(
                    f"eval_set[{i}] has labels not seen in training: {unseen[:10].tolist()}; "
                    f"the classes are {classes.tolist()}"
                )
            return np.searchsorted(classes, ye).astype(np.float64)

        return self._native_loss(len(classes)), encode, (classes, per_class)

    def _dask_class_weight(self, counts):
        """Each class's weight, as the local fit computes them (scikit-learn's
        "balanced": n / (n_classes * count))."""
        self._check_class_weight()
        if self.class_weight == "balanced":
            return counts.sum() / (len(counts) * counts.astype(np.float64))
        if isinstance(self.class_weight, dict):
            return np.array([float(self.class_weight.get(c, 1.0)) for c in self.classes_.tolist()])
        raise ValueError(f"class_weight must be a dict, 'balanced' or None, got {self.class_weight!r}")

    def predict_proba(self, X: Any, **kwargs: Any) -> Any:
        """Class probabilities, (n_samples, n_classes) (mapped over
        partitions; the local estimator's options, ``init_score`` only with
        data in memory)."""
        return self._map_rows(X, "predict_proba", **kwargs)

    def decision_function(self, X: Any, **kwargs: Any) -> Any:
        """Raw scores, as the local estimator's (mapped over partitions; its
        options, ``init_score`` only with data in memory)."""
        return self._map_rows(X, "decision_function", **kwargs)

    def staged_predict_proba(self, X: Any) -> Iterator[np.ndarray]:
        """The local estimator's staged_predict_proba, for data in memory only."""
        return self._in_memory(X, "staged_predict_proba")

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """The local estimator's staged_decision_function, for data in memory only."""
        return self._in_memory(X, "staged_decision_function")
