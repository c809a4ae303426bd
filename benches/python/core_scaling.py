"""How much a second busy CPU slows the first one on this machine.

On a guest whose two vCPUs are SMT siblings of one physical core, two
compute-bound processes each run far slower than one alone, so no library
gets 2x from 2 threads, and the code with the fewest stalls gains least.
This probe times one fixed single-threaded workload alone, then in two
processes at once, and reports the machine's 2-process throughput relative
to one process (2.0 = two independent cores).

    python benches/python/core_scaling.py [--reps 5]

Workloads: `exp` (numpy, float64 exp over 1M values: compute-bound, like a
loss's gradients) and `scatter` (numpy `np.add.at` into a 256-bin array
with random indices: load/store-bound, like a histogram build).
"""

from __future__ import annotations

import argparse
import os

# One thread per process: the point is two processes on two vCPUs.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import multiprocessing as mp
import statistics
import time

import numpy as np

SECONDS_PER_RUN = 2.0


def _exp_work(state: dict) -> None:
    np.exp(state["x"], out=state["out"])


def _scatter_work(state: dict) -> None:
    state["hist"][:] = 0.0
    np.add.at(state["hist"], state["codes"], state["g"])


WORKLOADS = {"exp": _exp_work, "scatter": _scatter_work}


def _state() -> dict:
    rng = np.random.default_rng(0)
    return {
        "x": rng.standard_normal(1_000_000),
        "out": np.empty(1_000_000),
        "codes": rng.integers(0, 256, 200_000),
        "g": rng.standard_normal(200_000),
        "hist": np.zeros(256),
    }


def _iterations_per_second(name: str, start, result) -> None:
    """Runs `name` for SECONDS_PER_RUN after `start` fires; sends calls per second."""
    work, state = WORKLOADS[name], _state()
    work(state)  # warm up
    start.wait()
    t0 = time.perf_counter()
    calls = 0
    while time.perf_counter() - t0 < SECONDS_PER_RUN:
        work(state)
        calls += 1
    result.put(calls / (time.perf_counter() - t0))


def _run(name: str, processes: int) -> float:
    """Summed calls per second of `processes` concurrent copies of the workload."""
    ctx = mp.get_context("spawn")
    start, result = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_iterations_per_second, args=(name, start, result)) for _ in range(processes)]
    for p in procs:
        p.start()
    time.sleep(1.0)  # every process imported numpy and warmed up
    start.set()
    total = sum(result.get() for _ in procs)
    for p in procs:
        p.join()
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="alternating 1- and 2-process runs (median)")
    args = parser.parse_args()
    if args.reps < 1:
        parser.error("--reps must be >= 1")
    print(f"cpus: {os.cpu_count()}; {SECONDS_PER_RUN:.0f} s per run, {args.reps} reps, medians")
    print("| workload | 1 process (calls/s) | 2 processes (calls/s, summed) | 2-process throughput / 1 |")
    print("|---|---:|---:|---:|")
    for name in WORKLOADS:
        one, two = [], []
        for _ in range(args.reps):
            one.append(_run(name, 1))
            two.append(_run(name, 2))
        m1, m2 = statistics.median(one), statistics.median(two)
        print(f"| {name} | {m1:.1f} | {m2:.1f} | {m2 / m1:.2f} |")


if __name__ == "__main__":
    main()
