"""Peak memory of fitting a9a-shaped data from scipy.sparse against the dense float32 matrix.

Each fit runs in a fresh subprocess: the data is loaded (and, for the dense
rows, densified to float32) first, the kernel's peak-RSS counter is reset
(``/proc/self/clear_refs``), then the estimator is fitted and the process's
peak RSS (``VmHWM``) is compared with its RSS just before the fit. Prints a
markdown table.

    python benches/python/sparse_memory.py [--data /work/shared/data/a9a/a9a] [--rounds 100]

Without the a9a file, a random matrix of the same shape and density is used.
Linux only (reads /proc).
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _report import DATA_DIR, PEAK_RSS  # noqa: E402

CHILD = (
    PEAK_RSS
    + r"""
import gc, json, sys
import numpy as np
import scipy.sparse as sp
from rgbm_rs import RGBMClassifier

mode, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])

if path and path != "-":
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(path, n_features=123)
    X = sp.csr_array(X)
else:
    rng = np.random.default_rng(0)
    X = sp.random_array((32561, 123), density=0.11, format="csr", rng=rng, data_sampler=lambda size: np.ones(size))
    y = (np.asarray(X[:, [0, 5, 9]].sum(axis=1)).ravel() + rng.random(32561) > 1).astype(int)
if mode == "dense":
    X = X.toarray().astype(np.float32)
    input_bytes = X.nbytes
    layout = "numpy float32"
else:
    input_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    layout = f"scipy CSR ({X.data.dtype} data, {X.indices.dtype} indices)"
model = RGBMClassifier(n_estimators=rounds, random_state=0, n_jobs=2)
gc.collect()
before = status("VmRSS")
reset_peak()
model.fit(X, y)
peak = status("VmHWM")
print(json.dumps(dict(shape=list(X.shape), nnz=int(X.nnz) if mode != "dense" else None,
                      input=input_bytes, layout=layout, fit_peak=peak - before)))
"""
)


def run(mode, path, rounds):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, path, str(rounds)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(DATA_DIR, "a9a", "a9a"))
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = args.data if os.path.exists(args.data) else "-"
    mib = 1 << 20
    rows = {}
    for mode in ("sparse", "dense"):
        runs = [run(mode, path, args.rounds) for _ in range(args.repeat)]
        rows[mode] = (runs[0], max(r["fit_peak"] for r in runs))
    shape = rows["sparse"][0]["shape"]
    nnz = rows["sparse"][0]["nnz"]
    dense_f32 = shape[0] * shape[1] * 4
    source = "a9a" if path != "-" else "random a9a-shaped"
    print(
        f"{source}: {shape[0]} x {shape[1]}, {nnz} stored entries "
        f"({100 * nnz / (shape[0] * shape[1]):.1f} %), {args.rounds} rounds, "
        f"max of {args.repeat} runs\n"
    )
    print("| input to fit | input size (MiB) | fit peak RSS above pre-fit RSS (MiB) |")
    print("|---|---:|---:|")
    for mode in ("sparse", "dense"):
        first, peak = rows[mode]
        print(f"| {first['layout']} | {first['input'] / mib:.1f} | {peak / mib:.1f} |")
    print(
        f"\nDense float32 matrix: {dense_f32 / mib:.1f} MiB; sparse fit peak / dense float32 size: "
        f"{rows['sparse'][1] / dense_f32:.2f}"
    )


if __name__ == "__main__":
    main()
