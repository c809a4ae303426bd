"""Training on a Dask cluster: rgbm_rs.dask against its local fit and xgboost.dask.

Data: compare.py's Higgs-like binary task, ``--rows`` rows x 28 features, in
``--chunks`` equal partitions persisted in turn on the ``--workers`` worker
processes (one thread each) of a ``LocalCluster``, so every worker holds as
many rows (both libraries train on the same partitions; rgbm_rs.dask trains
where the partitions are, so the largest shard sets its pace). Every fit: ``--rounds`` rounds of depth-``--depth`` depth-wise
trees, learning rate 0.1, 255 bins (XGBoost: ``tree_method="hist"``,
``max_bin=256``). The local fits use ``--workers`` threads in this process:
float sums (the default) and exact sums (the model the Dask fit reproduces,
which is checked). rgbm_rs.dask runs twice: with the shards combining
their parts among themselves (the default) and with every exchange relayed
through the client. The five fits alternate within each of ``--reps``
repetitions after one warm-up each; reported: median fit time, the ratio of
medians, the test AUC on 20 % held-out rows, and what rgbm_rs's fit sent
through Dask (exchanges, bytes).

Usage::

    python benches/python/dask_compare.py --write-md BENCHMARKS.md
"""

import argparse
import json
import os
import shlex
import sys
import time
from datetime import datetime, timezone

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _report  # noqa: E402
import compare  # noqa: E402

MARKER = "dask_compare"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()

    import dask.array as da
    import xgboost
    import xgboost.dask
    from distributed import Client, LocalCluster
    from sklearn.metrics import roc_auc_score

    from rgbm_rs import RGBMClassifier
    from rgbm_rs.dask import DaskRGBMClassifier

    started = time.perf_counter()
    X, y = compare.generate_higgs(args.rows, 0)
    cut = int(0.8 * len(y))
    Xtr, ytr, Xte, yte = X[:cut], y[:cut], X[cut:], y[cut:]
    common = dict(n_estimators=args.rounds, max_depth=args.depth, learning_rate=0.1, random_state=0)

    with (
        LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        Client(cluster) as client,
    ):
        rows = -(-len(ytr) // args.chunks)
        client.wait_for_workers(args.workers)
        workers = sorted(client.nthreads())

        def spread(a):  # partition i on worker i mod workers: shards of equal size
            return da.concatenate(
                [client.persist(a.blocks[i], workers=[workers[i % len(workers)]]) for i in range(a.numblocks[0])]
            )

        Xd = spread(da.from_array(Xtr, chunks=(rows, Xtr.shape[1])))
        yd = spread(da.from_array(ytr.astype(np.float64), chunks=rows))

        stats = {}

        def fit_dask(reduce):
            m = DaskRGBMClassifier(**common)
            m._reduce = reduce
            m.fit(Xd, yd)
            stats[reduce] = m.dask_exchanges_
            return m

        fits = {
            "rgbm_rs.dask": lambda: fit_dask("workers"),
            "rgbm_rs.dask, relayed by the client": lambda: fit_dask("client"),
            "rgbm_rs local, exact sums": lambda: RGBMClassifier(n_jobs=args.workers, summation="exact", **common).fit(
                Xtr, ytr
            ),
            "rgbm_rs local, float sums": lambda: RGBMClassifier(n_jobs=args.workers, **common).fit(Xtr, ytr),
            "xgboost.dask": lambda: xgboost.dask.DaskXGBClassifier(tree_method="hist", max_bin=256, **common).fit(
                Xd, yd
            ),
        }
        small = dict(common, n_estimators=3)
        DaskRGBMClassifier(**small).fit(Xd[:20_000], yd[:20_000])  # warm-up
        xgboost.dask.DaskXGBClassifier(tree_method="hist", **small).fit(Xd[:20_000], yd[:20_000])
        times = {k: [] for k in fits}
        models = {}
        for rep in range(args.reps):
            for name, fit in fits.items():
                t0 = time.perf_counter()
                models[name] = fit()
                times[name].append(time.perf_counter() - t0)
                print(f"rep {rep} {name}: {times[name][-1]:.2f} s", flush=True)

        def doc(name):  # the model file but the thread count it was fitted with
            d = json.loads(models[name].get_booster().to_json())
            d["params"].pop("n_jobs")
            return d

        same = doc("rgbm_rs.dask") == doc("rgbm_rs local, exact sums") == doc("rgbm_rs.dask, relayed by the client")
        aucs = {}
        Xte_d = da.from_array(Xte, chunks=(rows, Xte.shape[1]))
        for name, m in models.items():
            p = m.predict_proba(Xte_d if "dask" in name else Xte)
            p = p.compute() if hasattr(p, "compute") else p
            aucs[name] = roc_auc_score(yte, np.asarray(p)[:, 1])

    base = np.median(times["rgbm_rs.dask"])
    table = [
        f"| {name} | {np.median(t):.2f} | {np.median(t) / base:.2f} | {aucs[name]:.5f} |" for name, t in times.items()
    ]
    among, relayed = stats["workers"], stats["client"]
    lines = [
        f"- Command: `python benches/python/dask_compare.py {shlex.join(sys.argv[1:])}` ({len(ytr):,} rows x "
        f"{Xtr.shape[1]} in {args.chunks} partitions, {args.workers} worker processes x 1 thread, {args.rounds} "
        f"rounds of depth-{args.depth} trees, {args.reps} interleaved repetitions, medians)",
        f"- Machine: {_report.cpu_model()}, {os.cpu_count()} CPUs; commit {_report.git_commit()}; "
        f"run {datetime.now(timezone.utc):%Y-%m-%d}, {(time.perf_counter() - started) / 60:.0f} min; "
        f"xgboost {xgboost.__version__}",
        f"- Both Dask models equal the local exact-sum model: {'yes' if same else 'NO'}",
        f"- rgbm_rs.dask's last fit: {among['exchanges']} exchanges ({among['exchanges'] / args.rounds:.1f} per "
        f"round, {among['scattered']} reduce-scattered), {among['bytes_between_workers'] / 2**20:.0f} MiB sent "
        f"among the workers ({among['bytes_between_workers'] / args.workers / args.rounds / 2**20:.1f} MiB per "
        "worker per round); relayed by the client: "
        f"{relayed['bytes_in'] / 2**20:.0f} MiB from the workers and {relayed['bytes_out'] / 2**20:.0f} MiB to them",
        "",
        "| fit | time (s) | time / rgbm_rs.dask | test AUC |",
        "|---|---:|---:|---:|",
        *table,
    ]
    _report.publish("\n".join(lines), args.write_md, MARKER)


if __name__ == "__main__":
    main()
