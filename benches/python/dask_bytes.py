"""Bytes each worker sends per tree when rgbm_rs.dask trains on W workers.

Counts what Dask's TCP comms write on each worker process (every frame a
worker sends: to its peers, and the little it sends the scheduler), over
two fits that differ only in their number of trees, so that the setup
(bin sample, starting score) cancels out: (bytes(T2) - bytes(T1)) / (T2 - T1)
per worker. Byte counts do not depend on the machine's load; no timings.

    python benches/python/dask_bytes.py --workers 2 3 4 8 --write-md BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime, timezone

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

from rgbm_rs.dask import DaskRGBMClassifier

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _report  # noqa: E402

MARKER = "dask_bytes"


def _count_comm_writes(dask_worker):
    """Wraps the worker process's TCP comm writes to count their bytes."""
    from distributed.comm import tcp

    if not hasattr(tcp.TCP, "_rgbm_bytes"):
        write = tcp.TCP.write

        async def counted(self, msg, serializers=None, on_error="message"):
            n = await write(self, msg, serializers=serializers, on_error=on_error)
            tcp.TCP._rgbm_bytes += n
            return n

        tcp.TCP._rgbm_bytes = 0
        tcp.TCP.write = counted
    return 0


def _sent(dask_worker):
    from distributed.comm import tcp

    return tcp.TCP._rgbm_bytes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 3, 4, 8])
    ap.add_argument("--rows", type=int, default=16_000)
    ap.add_argument("--features", type=int, default=28)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--trees", type=int, nargs=2, default=[2, 6])
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    start = time.perf_counter()
    import distributed

    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.rows, args.features))
    X[::7, 1] = np.nan
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=args.rows) > 0).astype(np.float64)
    lines = [
        "| W | Dask comms, mean | Dask comms, max | rgbm_rs payload, mean |",
        "|---:|---:|---:|---:|",
    ]
    for w in args.workers:
        with (
            LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
            Client(cluster) as client,
        ):
            client.wait_for_workers(w)
            client.run(_count_comm_writes)
            workers = sorted(client.nthreads())
            rows = -(-args.rows // (2 * w))

            def spread(a, rows=rows, workers=workers, client=client):
                chunks = (rows,) + a.shape[1:]
                a = da.from_array(a, chunks=chunks)
                blocks = [
                    client.persist(a.blocks[i], workers=[workers[i % len(workers)]]) for i in range(a.numblocks[0])
                ]
                return da.concatenate(blocks)

            Xd, yd = spread(X), spread(y)
            client.run(lambda dask_worker: None)
            sent, payload = [], []
            for trees in args.trees:
                before = client.run(_sent)
                m = DaskRGBMClassifier(n_estimators=trees, max_depth=args.depth, random_state=0).fit(Xd, yd)
                after = client.run(_sent)
                sent.append(np.array([after[k] - before[k] for k in workers], dtype=float))
                payload.append(m.dask_exchanges_["bytes_between_workers"] / w)
            dt = args.trees[1] - args.trees[0]
            per = (sent[1] - sent[0]) / dt
            lines.append(
                f"| {w} | {per.mean() / 2**10:,.0f} KiB | {per.max() / 2**10:,.0f} KiB | "
                f"{(payload[1] - payload[0]) / dt / 2**10:,.0f} KiB |"
            )
            print(lines[-1], flush=True)
    head = [
        f"- Command: `python benches/python/dask_bytes.py --workers {' '.join(map(str, args.workers))} "
        "--write-md BENCHMARKS.md`",
        f"- Machine: {_report.cpu_model()}, {os.cpu_count()} CPUs; commit {_report.git_commit()}; distributed "
        f"{distributed.__version__}; run {datetime.now(timezone.utc):%Y-%m-%d}, {time.perf_counter() - start:.0f} s",
        f"- {args.rows:,} x {args.features} binary, depth-{args.depth} trees, 2 partitions per worker process "
        f"(1 thread each); bytes per worker per tree from fits of {args.trees[1]} and {args.trees[0]} trees",
        "",
    ]
    _report.publish("\n".join(head + lines), args.write_md, MARKER)


if __name__ == "__main__":
    main()
