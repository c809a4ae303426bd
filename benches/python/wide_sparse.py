"""Fit time and peak memory on wide sparse data: rgbm_rs against LightGBM and XGBoost.

The data is TF-IDF-like: ``--rows`` documents over ``--cols`` terms at density
``--density``, the terms drawn with Zipf-like popularity (rank^-1.1, so a few
thousand terms hold most entries and most terms occur a handful of times),
values log(1 + tf) * idf, each row scaled to unit length; a binary label from
a sparse linear score over 200 popular terms plus noise. It is written once to
``--cache`` (an .npz next to nothing in the repository).

Each fit runs in a fresh process: the CSR matrix is loaded, the kernel's
peak-RSS counter is reset (``/proc/self/clear_refs``), the model is fitted, and
the process's peak RSS (``VmHWM``) is compared with its RSS just before the
fit. Libraries and repetitions are interleaved; medians are reported. Every
library gets 2 threads, 100 rounds of 31-leaf trees, learning rate 0.1 and
its default binning; test AUC on held-out rows checks the fits are alike.

    python benches/python/wide_sparse.py [--rows 100000] [--cols 1000000] [--write-md BENCHMARKS.md]

Linux only (reads /proc).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _report import PEAK_RSS, cpu_model, git_commit, publish  # noqa: E402

CHILD = (
    PEAK_RSS
    + r"""
import gc, json, sys, time
import numpy as np
import scipy.sparse as sp

lib, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])

z = np.load(path)
X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
y = z["y"]
n_test = X.shape[0] // 5
Xtr, ytr, Xte, yte = X[n_test:], y[n_test:], X[:n_test], y[:n_test]
del X
common = dict(n_estimators=rounds, learning_rate=0.1, n_jobs=2)
if lib == "rgbm_rs":
    from rgbm_rs import RGBMClassifier
    model = RGBMClassifier(max_leaves=31, max_depth=None, random_state=0, **common)
elif lib == "lightgbm":
    import lightgbm
    model = lightgbm.LGBMClassifier(num_leaves=31, verbose=-1, random_state=0, **common)
elif lib == "xgboost":
    import xgboost
    model = xgboost.XGBClassifier(tree_method="hist", max_depth=0, max_leaves=31, grow_policy="lossguide", random_state=0, **common)
else:
    raise SystemExit(f"unknown library {lib!r}")
gc.collect()
before = status("VmRSS")
reset_peak()
t = time.perf_counter()
model.fit(Xtr, ytr)
fit_s = time.perf_counter() - t
peak = status("VmHWM") - before
from sklearn.metrics import roc_auc_score
auc = roc_auc_score(yte, model.predict_proba(Xte)[:, 1])
print(json.dumps(dict(fit_s=fit_s, peak=peak, auc=auc,
                      csr=int(Xtr.data.nbytes + Xtr.indices.nbytes + Xtr.indptr.nbytes))))
"""
)

LIBS = ("rgbm_rs", "lightgbm", "xgboost")


def make_data(path, rows, cols, density, seed=0):
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    nnz = int(rows * cols * density)
    p = np.arange(1, cols + 1, dtype=np.float64) ** -1.1
    p /= p.sum()
    terms = rng.choice(cols, size=nnz, p=p)
    docs = rng.integers(0, rows, size=nnz)
    X = sp.coo_matrix((np.ones(nnz), (docs, terms)), shape=(rows, cols)).tocsr()
    X.sum_duplicates()
    df = np.bincount(X.indices, minlength=cols)
    idf = np.log((1 + rows) / (1 + df)) + 1
    X.data = np.log1p(X.data) * idf[X.indices]
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1 / np.maximum(norms, 1e-12)) @ X
    X = sp.csr_matrix(X)
    X.sort_indices()
    w = np.zeros(cols)
    w[rng.choice(2000, size=200, replace=False)] = rng.normal(size=200) * 8
    score = X @ w + rng.normal(scale=0.5, size=rows)
    y = (score > np.median(score)).astype(np.int64)
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape), y=y)


def run(lib, path, rounds):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, lib, path, str(rounds)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--cols", type=int, default=1_000_000)
    ap.add_argument("--density", type=float, default=1e-4)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--cache", default="/tmp/wide_sparse_{rows}x{cols}.npz")
    ap.add_argument("--write-md", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    path = args.cache.format(rows=args.rows, cols=args.cols)
    if not os.path.exists(path):
        make_data(path, args.rows, args.cols, args.density)
    libs = args.libs.split(",")
    if unknown := set(libs) - set(LIBS):
        ap.error(f"unknown --libs {sorted(unknown)}; choose from {', '.join(LIBS)}")
    runs = {lib: [] for lib in libs}
    for _ in range(args.repeat):
        for lib in libs:
            runs[lib].append(run(lib, path, args.rounds))
    mib = 1 << 20
    csr = runs[libs[0]][0]["csr"]
    med = {lib: {k: statistics.median(r[k] for r in rs) for k in ("fit_s", "peak", "auc")} for lib, rs in runs.items()}
    ref = med.get("lightgbm")
    lines = [
        f"- Command: `python benches/python/wide_sparse.py --rows {args.rows} --cols {args.cols} "
        f"--density {args.density} --rounds {args.rounds} --repeat {args.repeat}`",
        f"- Machine: {cpu_model()}, {os.cpu_count()} CPUs; commit {git_commit()}",
        f"- Training CSR (float64 data, int32 indices): {csr / mib:.0f} MiB; medians of {args.repeat} interleaved runs",
        "",
        "| library | fit (s) | fit / LightGBM | peak RSS above pre-fit (MiB) | peak / CSR size | peak / LightGBM | test AUC |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for lib in libs:
        m = med[lib]
        rt = f"{m['fit_s'] / ref['fit_s']:.2f}" if ref else "—"
        rp = f"{m['peak'] / ref['peak']:.2f}" if ref else "—"
        lines.append(
            f"| {lib} | {m['fit_s']:.1f} | {rt} | {m['peak'] / mib:.0f} | {m['peak'] / csr:.2f} | {rp} | {m['auc']:.4f} |"
        )
    publish("\n".join(lines), args.write_md, "wide_sparse")


if __name__ == "__main__":
    main()
