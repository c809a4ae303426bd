"""SGLB: the synthetic experiment of Table 1, Adult from Table 2, and a CatBoost cross-check.

Reproduces, with rgbm_rs, parts of the experiments of

    A. Ustimenko, L. Prokhorenkova. "SGLB: Stochastic Gradient Langevin Boosting".
    ICML 2021 (arXiv 2001.07248), section 7.3 (Table 1), 7.4 (Table 2) and Appendix C.2,

and checks rgbm_rs's SGLB against CatBoost's (``langevin=True``).

Part 1 -- Table 1 (synthetic; paper section 7.3)
------------------------------------------------
* data: x ~ N(0, I_3), y~ ~ N(sin(x1 x2 x3), 1), y = 1{y~ > 0}. Each fold draws
  fresh 1000 training and 1000 test rows from ``np.random.default_rng([seed, fold])``
  (--folds, 100 as in the paper).
* weak learners: stumps (``max_depth=1``); CatBoost's ``border_count=5`` (at most 5
  borders per feature) is ``max_bins=6`` here (6 value bins = 5 cut points);
  no leaf-size or hessian limits (``min_samples_leaf=1, min_child_weight=0``);
  f0 = 0 (``init="zero"``; CatBoost's Logloss does not boost from the average either).
* first-order boosting throughout: ``gain="gradient", leaf="gradient"`` (Appendix C.2:
  ``leaf_estimation_method=Gradient``); learning rate 0.1; no L2 on leaves.
* losses: ``loss="logistic"`` (Logloss) or ``loss="sla01", sla_scale=0.1`` (SLA,
  eq. 12, varsigma = 0.1).
* methods: GB = no randomisation; SGB = ``subsample=0.5`` in both semantics:
  ``subsample_for="tree"`` (the sample picks the splits and the leaf values, Friedman's
  SGB) and ``subsample_for="split"`` (the sample picks the splits, leaves from all rows:
  CatBoost's ``bootstrap_type=Bernoulli``, which the paper used); SGLB =
  ``langevin=True, temperature=1e3, shrink_rate=1e-3`` (beta and gamma of the paper, in
  CatBoost's ``diffusion_temperature`` normalisation) without subsampling, with noise in
  the split choice and the leaves ("full"), and with leaf noise only
  (``langevin_split_noise=False``). p-values (two-sided paired t-test over folds,
  ``scipy.stats.ttest_rel``) are relative to SLA + SGLB (full), as in the paper.
* iterations: the paper does not state them; every fit runs --iterations (5000) rounds
  and the test 0-1 loss is read at 1000, 3000 and 5000 trees from the staged predictions
  of the same fit (for every method the first T trees of a longer fit are the T-tree fit).
* extra row, not in the paper: SLA + GB with SGLB's model shrinkage and no noise.
* --reference adds rows from a small numpy SLA stump booster written from the paper's
  Algorithm 2 (same bins, gain G^2/W, leaves -lr G/W, noise scale sqrt(2/(lr beta)),
  shrinkage; its own random numbers), with and without a "child hessian sum >= 0" check.

Part 2 -- Adult (Table 2; paper section 7.4 and Appendix C.2)
--------------------------------------------------------------
* data: ``adult-train.csv`` + ``adult-test.csv`` (48,842 rows, the paper's count), the 6
  numeric columns as they are and the 8 categorical ones as native categorical features
  (``categorical_features="auto"`` on pandas categoricals; '?' is a category of its own);
  one seeded 65/15/20 train/validation/test split.
* SLA loss (varsigma = 0.1) for both methods, gradient gain and leaves, ``max_bins=65``
  (CatBoost's default ``border_count=64``), ``min_samples_leaf=1, min_child_weight=0``,
  f0 = 0.
* random search as in Appendix C.2: --adult-draws (200) draws per method, at most
  --adult-trees (1000) trees. Draw i uses the same learning rate and depth for both
  methods (common random numbers): learning rate log-uniform on [1e-5, 1], depth uniform
  on {6, ..., 10}; SGB: ``reg_lambda`` (l2-leaf-reg) log-uniform on [0.1, 10],
  ``subsample`` uniform on (0, 1), ``subsample_for`` --adult-sgb-subsample-for ("split",
  CatBoost's Bernoulli); SGLB: ``reg_lambda=0``, no subsampling, ``shrink_rate``
  log-uniform on [1e-5, 1e-2], ``temperature`` log-uniform on [1e2, 1e5].
  rgbm_rs grows depth-wise trees, CatBoost oblivious ones: the same depth is a richer tree.
* selection ("use_best_model"): the (draw, number of trees) with the lowest validation
  0-1 loss, earliest on ties; the test 0-1 loss is that model's.
* p-values: a paired t-test over the test rows (per-row 0-1 losses of the two selected
  models), and a paired t-test over --adult-seeds refits of each selected configuration
  with further seeds (best iteration re-chosen on validation each time).

Part 3 -- CatBoost cross-check (synthetic task of part 1, Logloss for both)
---------------------------------------------------------------------------
CatBoost settings: ``depth=1, border_count=5, learning_rate=0.1, iterations=--cb-iterations,
leaf_estimation_method="Gradient", leaf_estimation_iterations=1,
leaf_estimation_backtracking="No", l2_leaf_reg=0, bootstrap_type="No",
random_strength=0, score_function="L2", boosting_type="Plain", boost_from_average=False``;
SGLB adds ``langevin=True, diffusion_temperature=1e3, model_shrink_rate=1e-3``. Two border
settings: each library's own, and "matched" (both fit the same features pre-binned to
integer codes 0..5), where plain GB must agree up to CatBoost's float32 leaf values.

Every finished job (a fold and method of part 1, a draw and method or a refit of part 2,
a fold of part 3) is appended to --results (JSONL) and skipped when the command is run
again, so an interrupted run resumes. --n-jobs runs jobs in parallel processes; every fit
is single-threaded (rgbm_rs ``n_jobs=1``, CatBoost ``thread_count=1``). --time-probe times
one full-size job of each kind and prints the estimated wall time of the full run.

Usage::

    python benches/python/papers/sglb_table1.py --n-jobs 2 --write-md BENCHMARKS.md
    python benches/python/papers/sglb_table1.py --quick --results /tmp/sglb.jsonl
"""

from __future__ import annotations

import argparse
import base64
import functools
import os
import shlex
import sys
import time

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _runs  # noqa: E402

REPO = _runs.REPO
DEFAULT_DATA_DIR = _runs.DATA_DIR
MARKER = "sglb_table1"

LR = 0.1
SLA_SCALE = 0.1
BETA = 1e3
GAMMA = 1e-3
SGB_SUBSAMPLE = 0.5
N_TRAIN = N_TEST = 1000
TABLE1_TREES = (1000, 3000, 5000)

# Table 1 of the paper: mean test 0-1 loss and p-value relative to SLA + SGLB.
PAPER_T1 = {
    "Logloss + GB": (0.482, "2e-8"),
    "SLA + GB": (0.475, "5e-3"),
    "SLA + SGB (split)": (0.474, "7e-3"),
    "SLA + SGLB": (0.470, None),
}
# Table 2, Adult row: 0-1 loss in %, p-value.
PAPER_ADULT = (13.2, 12.8, "0.01")


# ---------------------------------------------------------------- helpers
def log(msg: str) -> None:
    print(msg, flush=True)


def fmt_p(p: float) -> str:
    if not np.isfinite(p):
        return "n/a"
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"


def ttest_p(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or np.all(a == b):
        return float("nan")
    return float(stats.ttest_rel(a, b).pvalue)


md_table = _runs.md_table


def synthetic_fold(seed: int, fold: int):
    rng = np.random.default_rng([seed, fold])

    def draw(n):
        X = rng.standard_normal((n, 3))
        ytil = np.sin(X[:, 0] * X[:, 1] * X[:, 2]) + rng.standard_normal(n)
        return X, (ytil > 0).astype(np.int64)

    X, y = draw(N_TRAIN)
    Xt, yt = draw(N_TEST)
    return X, y, Xt, yt


def rgbm(n_estimators: int, seed: int, **kw):
    from rgbm_rs import RGBMClassifier

    p = dict(
        n_estimators=n_estimators,
        learning_rate=LR,
        max_depth=1,
        max_bins=6,
        min_samples_leaf=1,
        min_child_weight=0.0,
        gain="gradient",
        leaf="gradient",
        init="zero",
        n_jobs=1,
        random_state=seed,
    )
    p.update(kw)
    return RGBMClassifier(**p)


# Part 1 methods: name -> (rgbm keyword arguments, in the paper?)
# Part 1 methods: name -> (rgbm keyword arguments, in the paper?)
SLA = dict(loss="sla01", sla_scale=SLA_SCALE)
SGLB = dict(langevin=True, temperature=BETA, shrink_rate=GAMMA)
METHODS = {
    "Logloss + GB": (dict(loss="logistic"), True),
    "SLA + GB": (dict(SLA), True),
    "SLA + SGB (tree)": (dict(SLA, subsample=SGB_SUBSAMPLE, subsample_for="tree"), True),
    "SLA + SGB (split)": (dict(SLA, subsample=SGB_SUBSAMPLE, subsample_for="split"), True),
    "SLA + SGLB": (dict(SLA, **SGLB), True),
    "SLA + SGLB, leaf noise only": (dict(SLA, langevin_split_noise=False, **SGLB), True),
    "SLA + GB + shrinkage only (gamma=1e-3, no noise)": (dict(SLA, shrink_rate=GAMMA), False),
}
REF = "SLA + SGLB"


def checkpoints(iterations: int):
    return sorted({c for c in (100, 500) + TABLE1_TREES if c < iterations} | {iterations})


# ---------------------------------------------------------------- numpy reference (--reference)
def _greedy_thresholds(x, max_bins=6):
    """Cut points of rgbm_rs's equal-weight binning (unit weights, distinct values)."""
    v = np.unique(x)
    if len(v) != len(x):
        raise RuntimeError("the reference binning assumes distinct values")
    rem, left, acc, th = float(len(v)), max_bins, 0.0, []
    for i in range(len(v) - 1):
        acc += 1.0
        if acc >= rem / left and left > 1:
            th.append(v[i] + (v[i + 1] - v[i]) / 2.0)
            rem -= acc
            acc = 0.0
            left -= 1
    return np.asarray(th)


def reference_sla(
    X, y, Xt, yt, iterations, cps, subsample=1.0, temperature=None, shrink_rate=0.0, seed=0, hessian_check=False
):
    """SLA stumps with gradient gain and leaves, written from the paper's Algorithm 2.

    Same bins, gain G^2/W, leaves -lr*G/W, noise scale sqrt(2/(lr*beta)) and shrinkage as
    rgbm_rs, but its own random numbers. ``hessian_check=True`` also rejects a split whose
    child has a negative hessian sum (what rgbm_rs does); then a round with no allowed split
    adds a single-leaf tree, as rgbm_rs does. Returns (test errors at cps, no-split rounds).
    """
    rng = np.random.default_rng(seed)
    n, d = X.shape
    th = [_greedy_thresholds(X[:, j]) for j in range(d)]
    nb = max(len(t) for t in th) + 1
    C = np.column_stack([np.searchsorted(th[j], X[:, j], side="left") for j in range(d)])
    Ct = np.column_stack([np.searchsorted(th[j], Xt[:, j], side="left") for j in range(d)])
    s = 2.0 * y - 1.0
    F, Ft = np.zeros(n), np.zeros(len(Xt))
    q = 1.0 - shrink_rate * LR
    c = np.sqrt(2.0 / (LR * temperature)) if temperature else 0.0
    out, no_split, j_cp = [], 0, 0
    for r in range(1, iterations + 1):
        pm = 1.0 / (1.0 + np.exp(-s * F / SLA_SCALE))
        g = -s * pm * (1.0 - pm) / SLA_SCALE
        h = -pm * (1.0 - pm) * (1.0 - 2.0 * pm) / SLA_SCALE**2
        rows = np.ones(n, bool) if subsample >= 1.0 else rng.random(n) < subsample
        if not rows.any():
            rows[:] = True
        gs = g + c * rng.standard_normal(n) if c else g
        Gb = np.stack([np.bincount(C[rows, j], gs[rows], minlength=nb) for j in range(d)])
        Wb = np.stack([np.bincount(C[rows, j], minlength=nb) for j in range(d)]).astype(np.float64)
        GL, WL = np.cumsum(Gb, 1)[:, :-1], np.cumsum(Wb, 1)[:, :-1]
        GT, WT = Gb.sum(1, keepdims=True), Wb.sum(1, keepdims=True)
        ok = (WL > 0) & (WT - WL > 0)
        if hessian_check:
            Hb = np.stack([np.bincount(C[rows, j], h[rows], minlength=nb) for j in range(d)])
            HL = np.cumsum(Hb, 1)[:, :-1]
            ok &= (HL >= 0) & (Hb.sum(1, keepdims=True) - HL >= 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(ok, GL**2 / WL + (GT - GL) ** 2 / (WT - WL) - GT**2 / WT, -np.inf)
        F *= q
        Ft *= q
        if not np.isfinite(gain).any() or gain.max() <= 0:
            no_split += 1
            m = rows
            G = g[m].sum() + (c * np.sqrt(m.sum()) * rng.standard_normal() if c else 0.0)
            F += -LR * G / m.sum()
            Ft += -LR * G / m.sum()
        else:
            jf, b = np.unravel_index(int(np.argmax(gain)), gain.shape)
            L, Lt = C[:, jf] <= b, Ct[:, jf] <= b
            vals = []
            for side in (L, ~L):
                m = rows & side
                G = g[m].sum() + (c * np.sqrt(m.sum()) * rng.standard_normal() if c else 0.0)
                vals.append(-LR * G / m.sum())
            F += np.where(L, vals[0], vals[1])
            Ft += np.where(Lt, vals[0], vals[1])
        if r == cps[j_cp]:
            out.append(float(np.mean((Ft > 0) != (yt == 1))))
            j_cp += 1
    return np.asarray(out), no_split


REFERENCE = {
    "numpy reference, no hessian check: SLA + GB": dict(),
    "numpy reference, no hessian check: SLA + SGB": dict(subsample=SGB_SUBSAMPLE),
    "numpy reference, no hessian check: SLA + SGLB": dict(temperature=BETA, shrink_rate=GAMMA),
    "numpy reference, with rgbm_rs's hessian check: SLA + SGLB": dict(
        temperature=BETA, shrink_rate=GAMMA, hessian_check=True
    ),
}


# ---------------------------------------------------------------- part 1
def table1_methods(args):
    return list(METHODS) + (list(REFERENCE) if args.reference else [])


def table1_jobs(args):
    for k in range(args.folds):
        for m in table1_methods(args):
            yield dict(part="table1", fold=k, method=m, iterations=args.iterations, seed=args.seed)


def run_table1_job(key: dict) -> dict:
    X, y, Xt, yt = synthetic_fold(key["seed"], key["fold"])
    cps = checkpoints(key["iterations"])
    seed = key["seed"] * 1_000_003 + key["fold"]
    m = key["method"]
    if m in REFERENCE:
        t = time.perf_counter()
        staged, no_split = reference_sla(X, y, Xt, yt, key["iterations"], cps, seed=seed, **REFERENCE[m])
        return dict(cps=cps, staged=[float(e) for e in staged], fit_s=time.perf_counter() - t, no_split=no_split)
    est = rgbm(key["iterations"], seed=seed, **METHODS[m][0])
    t = time.perf_counter()
    est.fit(X, y)
    fit_s = time.perf_counter() - t
    staged, j = [], 0
    for i, pred in enumerate(est.staged_predict(Xt), start=1):
        if i == cps[j]:
            staged.append(float(np.mean(pred != yt)))
            j += 1
    if staged[-1] != float(np.mean(est.predict(Xt) != yt)):
        raise RuntimeError(f"{m}, fold {key['fold']}: the last staged prediction differs from predict()")
    no_split = sum(r is None for r in est.training_log_["root_feature"])
    return dict(cps=cps, staged=staged, fit_s=fit_s, no_split=no_split)


def table1_results(store, args):
    """method -> (folds x checkpoints) array, fit seconds, no-split rounds; None if incomplete."""
    out = {}
    for m in table1_methods(args):
        recs = [
            store.get(dict(part="table1", fold=k, method=m, iterations=args.iterations, seed=args.seed))
            for k in range(args.folds)
        ]
        if any(r is None for r in recs):
            return None
        out[m] = dict(
            staged=np.array([r["staged"] for r in recs]),
            fit_s=np.array([r["fit_s"] for r in recs]),
            no_split=sum(r["no_split"] for r in recs),
        )
    return out


def claim_verdict(a, b):
    """Claim "a < b" (paired over folds): a sentence from the means and the two-sided p."""
    p, d = ttest_p(a, b), float(np.mean(a) - np.mean(b))
    if d < 0 and np.isfinite(p) and p < 0.05:
        return f"holds ({d:+.4f}, p = {fmt_p(p)})"
    if d < 0:
        return f"direction only ({d:+.4f}, p = {fmt_p(p)})"
    if np.isfinite(p) and p < 0.05:
        return f"**reversed** ({d:+.4f}, p = {fmt_p(p)})"
    return f"**not reproduced** ({d:+.4f}, p = {fmt_p(p)})"


CLAIMS = [  # (a, b): the paper says a has the lower test 0-1 loss
    ("SLA + SGLB", "SLA + GB"),
    ("SLA + SGLB", "SLA + SGB (split)"),
    ("SLA + SGLB", "SLA + SGB (tree)"),
    ("SLA + SGLB", "Logloss + GB"),
    ("SLA + SGB (split)", "SLA + GB"),
    ("SLA + GB", "Logloss + GB"),
]


def table1_md(res, args):
    """(short table for BENCHMARKS.md, full report)."""
    cps = list(checkpoints(args.iterations))
    shown = [c for c in TABLE1_TREES if c in cps] or [cps[-1]]
    rows = []
    for m in table1_methods(args):
        in_paper = METHODS.get(m, (None, False))[1]
        s = res[m]["staged"]
        cells = []
        for c in shown:
            j = cps.index(c)
            e = s[:, j]
            p = "" if m == REF else f", p {fmt_p(ttest_p(e, res[REF]['staged'][:, j]))}"
            cells.append(f"{e.mean():.4f} ± {e.std(ddof=1) / np.sqrt(len(e)):.4f}{p}")
        paper = PAPER_T1.get(m)
        rows.append(
            [m if in_paper else f"*{m}* (extra)"]
            + cells
            + ["–" if paper is None else f"{paper[0]:.3f}" + (f" (p {paper[1]})" if paper[1] else "")]
        )
    short = md_table(["method"] + [f"T = {c}: mean ± SE, p vs SGLB" for c in shown] + ["paper (p)"], rows)
    crow = []
    for a, b in CLAIMS:
        crow.append(
            [f"{a} < {b}"]
            + [claim_verdict(res[a]["staged"][:, cps.index(c)], res[b]["staged"][:, cps.index(c)]) for c in shown]
        )
    claims = md_table(["paper's claim"] + [f"T = {c}" for c in shown], crow)
    full = [short, "", "Claims (difference of means, two-sided paired p over folds):", "", claims, ""]
    full.append("Mean test 0-1 loss at every checkpoint, and median fit ms of the whole fit:")
    full.append("")
    full.append(
        md_table(
            ["method"] + [f"T={c}" for c in cps] + ["fit ms", "no-split rounds"],
            [
                [m]
                + [f"{res[m]['staged'][:, j].mean():.4f}" for j in range(len(cps))]
                + [f"{1e3 * np.median(res[m]['fit_s']):.0f}", res[m]["no_split"]]
                for m in table1_methods(args)
            ],
        )
    )
    return short, claims, "\n".join(full)


# ---------------------------------------------------------------- part 3 (CatBoost)
def catboost_model(iterations: int, seed: int, langevin: bool):
    from catboost import CatBoostClassifier

    kw = dict(
        iterations=iterations,
        learning_rate=LR,
        depth=1,
        border_count=5,
        loss_function="Logloss",
        leaf_estimation_method="Gradient",
        leaf_estimation_iterations=1,
        leaf_estimation_backtracking="No",
        l2_leaf_reg=0,
        bootstrap_type="No",
        random_strength=0,
        score_function="L2",
        boosting_type="Plain",
        boost_from_average=False,
        thread_count=1,
        random_seed=seed,
        verbose=False,
        allow_writing_files=False,
    )
    if langevin:
        kw.update(langevin=True, diffusion_temperature=BETA, model_shrink_rate=GAMMA)
    return CatBoostClassifier(**kw)


def to_codes(X, Xt):
    """Integer bin codes 0..5 at the training quantiles 1/6..5/6 (the same for both libraries)."""
    edges = [np.quantile(X[:, j], np.arange(1, 6) / 6) for j in range(X.shape[1])]

    def enc(A):
        return np.column_stack([np.searchsorted(edges[j], A[:, j], side="left") for j in range(A.shape[1])]).astype(
            np.float64
        )

    return enc(X), enc(Xt)


CB_CONFIGS = [
    # (label, borders, library, langevin)
    ("rgbm_rs GB", "own", "rgbm", False),
    ("CatBoost GB", "own", "cb", False),
    ("rgbm_rs SGLB", "own", "rgbm", True),
    ("CatBoost SGLB", "own", "cb", True),
    ("rgbm_rs GB", "matched", "rgbm", False),
    ("CatBoost GB", "matched", "cb", False),
    ("rgbm_rs SGLB", "matched", "rgbm", True),
    ("CatBoost SGLB", "matched", "cb", True),
]

CB_KEYS = (
    "border_count",
    "feature_border_type",
    "bootstrap_type",
    "score_function",
    "leaf_estimation_method",
    "leaf_estimation_backtracking",
    "boosting_type",
    "boost_from_average",
    "random_strength",
    "l2_leaf_reg",
    "langevin",
    "diffusion_temperature",
    "model_shrink_rate",
    "model_shrink_mode",
    "depth",
    "learning_rate",
    "iterations",
)


def catboost_jobs(args):
    for k in range(args.cb_folds):
        yield dict(part="catboost", fold=k, iterations=args.cb_iterations, seed=args.seed)


def run_catboost_job(key: dict) -> dict:
    import catboost

    X, y, Xt, yt = synthetic_fold(key["seed"], key["fold"])
    C, Ct = to_codes(X, Xt)
    err, fit_s, raw, resolved = {}, {}, {}, {}
    for lab, borders, lib, lang in CB_CONFIGS:
        A, At = (X, Xt) if borders == "own" else (C, Ct)
        seed = key["seed"] * 1_000_003 + key["fold"]
        if lib == "rgbm":
            est = rgbm(key["iterations"], seed, loss="logistic", **(SGLB if lang else {}))
        else:
            est = catboost_model(key["iterations"], seed, lang)
        t = time.perf_counter()
        est.fit(A, y)
        name = f"{lab} | {borders}"
        fit_s[name] = time.perf_counter() - t
        err[name] = float(np.mean(est.predict(At).astype(np.int64) != yt))
        if borders == "matched" and not lang:
            raw[lib] = est.decision_function(At) if lib == "rgbm" else est.predict(At, prediction_type="RawFormulaVal")
        if lib == "cb" and key["fold"] == 0:
            allp = est.get_all_params()
            resolved[lab] = {k: allp.get(k) for k in CB_KEYS}
    return dict(
        err=err,
        fit_s=fit_s,
        max_gb_diff=float(np.max(np.abs(raw["rgbm"] - raw["cb"]))),
        resolved=resolved,
        version=catboost.__version__,
    )


def catboost_md(store, args):
    recs = [store.get(k) for k in catboost_jobs(args)]
    if not recs or any(r is None for r in recs):
        return None
    err = {n: np.array([r["err"][n] for r in recs]) for n in recs[0]["err"]}
    fit = {n: np.array([r["fit_s"][n] for r in recs]) for n in recs[0]["fit_s"]}
    rows = []
    for borders in ("own", "matched"):
        for lab in ("GB", "SGLB"):
            r, c = err[f"rgbm_rs {lab} | {borders}"], err[f"CatBoost {lab} | {borders}"]
            tr, tc = fit[f"rgbm_rs {lab} | {borders}"], fit[f"CatBoost {lab} | {borders}"]
            rows.append(
                [
                    borders,
                    lab,
                    f"{r.mean():.4f}",
                    f"{c.mean():.4f}",
                    fmt_p(ttest_p(r, c)) if np.any(r != c) else "n/a (identical)",
                    f"{1e3 * np.median(tr):.0f}",
                    f"{1e3 * np.median(tc):.0f}",
                ]
            )
    out = [
        md_table(
            ["borders", "Logloss +", "rgbm_rs 0-1", "CatBoost 0-1", "p", "rgbm_rs fit ms", "CatBoost fit ms"], rows
        ),
        "",
        f"{len(recs)} folds, {args.cb_iterations} iterations. Matched borders, plain GB: largest |rgbm_rs − "
        f"CatBoost| raw test score {max(r['max_gb_diff'] for r in recs):.2e} (CatBoost {recs[0]['version']} keeps "
        "float32 leaf values).",
    ]
    within = []
    for borders in ("own", "matched"):
        for lib in ("rgbm_rs", "CatBoost"):
            g, s = err[f"{lib} GB | {borders}"], err[f"{lib} SGLB | {borders}"]
            within.append(f"{lib}/{borders} {np.mean(s - g):+.4f} (p {fmt_p(ttest_p(s, g))})")
    out.append("SGLB − GB within each library: " + "; ".join(within) + ".")
    resolved = "\n".join(f"- {lab}: `{p}`" for lab, p in recs[0]["resolved"].items())
    return "\n".join(out), resolved


# ---------------------------------------------------------------- part 2 (Adult)
ADULT_COLS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
]


@functools.lru_cache(maxsize=1)
def load_adult(data_dir: str):
    """(frame with pandas categoricals, labels)."""
    import pandas as pd

    frames = [
        pd.read_csv(os.path.join(data_dir, "adult", f), header=None, names=ADULT_COLS, skipinitialspace=True)
        for f in ("adult-train.csv", "adult-test.csv")
    ]
    d = pd.concat(frames, ignore_index=True).dropna(subset=["income"])
    y = d.pop("income").str.rstrip(".").map({"<=50K": 0, ">50K": 1})
    if y.isna().any():
        raise RuntimeError("unexpected income labels")
    for c in d.select_dtypes(exclude="number").columns:
        d[c] = d[c].astype("category")
    return d.reset_index(drop=True), y.to_numpy(np.int64)


@functools.lru_cache(maxsize=1)
def adult_split(data_dir: str, seed: int):
    X, y = load_adult(data_dir)
    perm = np.random.default_rng([seed, 2]).permutation(len(y))
    n_tr, n_va = int(round(0.65 * len(y))), int(round(0.15 * len(y)))
    tr, va, te = perm[:n_tr], perm[n_tr : n_tr + n_va], perm[n_tr + n_va :]
    return tuple((X.iloc[i].reset_index(drop=True), y[i]) for i in (tr, va, te))


def adult_draws(args) -> list[dict]:
    """The random-search draws of Appendix C.2 (learning rate and depth shared by both methods)."""
    rng = np.random.default_rng([args.seed, 3])
    lo = np.log10(args.adult_lr_min)
    return [
        dict(
            lr=float(10 ** rng.uniform(lo, 0)),
            depth=int(rng.integers(6, 11)),
            l2=float(10 ** rng.uniform(-1, 1)),
            subsample=max(float(rng.uniform(0, 1)), 1e-3),
            shrink_rate=float(10 ** rng.uniform(-5, -2)),
            temperature=float(10 ** rng.uniform(2, 5)),
        )
        for _ in range(args.adult_draws)
    ]


def adult_estimator(key: dict, seed: int):
    p = key["params"]
    kw = dict(
        SLA,
        max_depth=p["depth"],
        learning_rate=p["lr"],
        max_bins=65,
        categorical_features="auto",
    )
    if key["method"] == "SGB":
        kw.update(reg_lambda=p["l2"], subsample=p["subsample"], subsample_for=key["sgb_subsample_for"])
    else:
        kw.update(langevin=True, temperature=p["temperature"], shrink_rate=p["shrink_rate"])
    return rgbm(key["trees"], seed, **kw)


def adult_base(args, method):
    return dict(
        part="adult",
        method=method,
        trees=args.adult_trees,
        split_seed=args.seed,
        sgb_subsample_for=args.adult_sgb_subsample_for if method == "SGB" else None,
    )


def adult_search_jobs(args):
    for i, p in enumerate(adult_draws(args)):
        for m in ("SGB", "SGLB"):
            yield dict(adult_base(args, m), draw=i, params=p, fit_seed=args.seed * 7919 + i)


def run_adult_job(data_dir: str, key: dict) -> dict:
    """Fit, pick the best number of trees on validation, and keep that model's per-row test losses."""
    (Xtr, ytr), (Xva, yva), (Xte, yte) = adult_split(data_dir, key["split_seed"])
    est = adult_estimator(key, key["fit_seed"])
    t = time.perf_counter()
    est.fit(Xtr, ytr)
    fit_s = time.perf_counter() - t
    best = (np.inf, 0)
    for i, pred in enumerate(est.staged_predict(Xva), start=1):
        e = float(np.mean(pred != yva))
        if e < best[0]:
            best = (e, i)
    for i, pred in enumerate(est.staged_predict(Xte), start=1):
        if i == best[1]:
            wrong = pred != yte
            break
    return dict(
        val=best[0],
        iters=best[1],
        test=float(np.mean(wrong)),
        test_wrong=base64.b64encode(np.packbits(wrong).tobytes()).decode("ascii"),
        fit_s=fit_s,
    )


def unpack_wrong(rec, n):
    return np.unpackbits(np.frombuffer(base64.b64decode(rec["test_wrong"]), dtype=np.uint8))[:n].astype(float)


def adult_selected(store, args):
    """method -> (best record, draw params); None if the search is incomplete."""
    best = {}
    for key in adult_search_jobs(args):
        rec = store.get(key)
        if rec is None:
            return None
        m = key["method"]
        if m not in best or rec["val"] < best[m][0]["val"]:
            best[m] = (rec, key["params"])
    return best


def adult_refit_jobs(store, args):
    best = adult_selected(store, args)
    if best is None:
        return
    for s in range(args.adult_seeds):
        for m in ("SGB", "SGLB"):
            yield dict(adult_base(args, m), draw="refit", params=best[m][1], fit_seed=10_000 + 31 * s + args.seed)


def adult_md(store, args):
    best = adult_selected(store, args)
    if best is None:
        return None
    n_te = len(adult_split(args.data_dir, args.seed)[2][1])
    wrong = {m: unpack_wrong(best[m][0], n_te) for m in best}
    p_rows = ttest_p(wrong["SGB"], wrong["SGLB"])
    refits = {m: [] for m in ("SGB", "SGLB")}
    for key in adult_refit_jobs(store, args):
        rec = store.get(key)
        if rec is not None:
            refits[key["method"]].append(rec["test"])
    rows = []
    for m, paper in (("SGB", PAPER_ADULT[0]), ("SGLB", PAPER_ADULT[1])):
        rec, p = best[m]
        extra = (
            f"l2 {p['l2']:.3g}, subsample {p['subsample']:.2f}"
            if m == "SGB"
            else f"γ {p['shrink_rate']:.3g}, β {p['temperature']:.3g}"
        )
        r = np.asarray(refits[m])
        rows.append(
            [
                m,
                f"{100 * rec['test']:.2f}",
                f"{paper}",
                f"{100 * rec['val']:.2f}",
                rec["iters"],
                f"lr {p['lr']:.3g}, depth {p['depth']}, {extra}",
                f"{100 * r.mean():.2f} ({len(r)})" if len(r) else "–",
            ]
        )
    n_pair = min(len(refits["SGB"]), len(refits["SGLB"]))
    p_seeds = ttest_p(refits["SGB"][:n_pair], refits["SGLB"][:n_pair])
    out = [
        md_table(
            ["method", "test 0-1 %", "paper %", "validation %", "trees", "selected", "refits: mean test % (n)"],
            rows,
        ),
        "",
        f"Paired t-test SGB vs SGLB over the {n_te} test rows: p = {fmt_p(p_rows)}; over the {n_pair} refit seeds: "
        f"p = {fmt_p(p_seeds)} (paper: p = {PAPER_ADULT[2]}, two-tailed). "
        + adult_verdict(best["SGB"][0]["test"], best["SGLB"][0]["test"], p_rows, p_seeds)
        + refit_direction(refits["SGB"][:n_pair], refits["SGLB"][:n_pair]),
    ]
    search = []
    for key in adult_search_jobs(args):
        rec = store.get(key)
        search.append(
            [
                key["draw"],
                key["method"],
                f"{key['params']['lr']:.3g}",
                key["params"]["depth"],
                f"{100 * rec['val']:.2f}",
                rec["iters"],
                f"{rec['fit_s']:.1f}",
            ]
        )
    detail = md_table(["draw", "method", "lr", "depth", "validation %", "trees", "fit s"], search)
    return "\n".join(out), detail


def adult_verdict(sgb, sglb, p_rows, p_seeds):
    if sglb < sgb and np.isfinite(p_rows) and p_rows < 0.05:
        return f"Verdict: SGLB better by {100 * (sgb - sglb):.2f} points and significant over rows: reproduced."
    if sglb < sgb:
        return f"Verdict: SGLB lower by {100 * (sgb - sglb):.2f} points, not significant: not reproduced."
    return f"Verdict: SGLB is not better (SGB − SGLB = {100 * (sgb - sglb):+.2f} points): not reproduced."


def refit_direction(sgb, sglb):
    """Whether the refits of the two selected configurations agree with the test-row direction."""
    if not len(sgb):
        return ""
    a, b = 100 * float(np.mean(sgb)), 100 * float(np.mean(sglb))
    if b < a:
        return f" The refits agree in direction (SGLB {b:.2f} % vs SGB {a:.2f} %)."
    return f" The refits reverse the direction: SGLB {b:.2f} % vs SGB {a:.2f} %."


# ---------------------------------------------------------------- time estimate
FULL_SIZE = {"table1": 5000, "adult": 1000, "catboost": 1000}


def _size(key):
    return key["trees"] if key["part"] == "adult" else key["iterations"]


def estimate(job_s: dict, args, n_workers):
    """Wall time of the full protocol from seconds per job (part -> list, scaled to full size)."""
    n_methods = len(METHODS) + (len(REFERENCE) if args.reference else 0)
    counts = {"table1": 100 * n_methods, "adult": 2 * 200 + 2 * 5, "catboost": 100}
    rows, total = [], 0.0
    for part, ts in job_s.items():
        if ts:
            cpu = float(np.mean(ts)) * counts[part]
            total += cpu
            rows.append([part, f"{np.mean(ts):.2f}", counts[part], _runs.fmt_duration(cpu / n_workers)])
    md = md_table(
        ["part", "s per job (scaled to full size)", "jobs in the full run", f"wall with {n_workers} workers"], rows
    )
    return md + f"\n\nEstimated total: {_runs.fmt_duration(total / n_workers)} with {n_workers} worker(s)."


def job_s_from_store(store) -> dict:
    """Job times of the stored jobs, scaled linearly in the number of trees (small runs overstate it)."""
    out: dict = {p: [] for p in FULL_SIZE}
    for rec in store.records.values():
        k = rec["key"]
        out[k["part"]].append(rec["job_s"] * FULL_SIZE[k["part"]] / _size(k))
    return out


def time_probe(args) -> dict:
    """Time one full-size job of each kind in this process (Adult: depth 8, the middle of 6..10)."""
    out: dict = {p: [] for p in FULL_SIZE}
    jobs = [
        ("table1", run_table1_job, dict(part="table1", fold=0, method=m, iterations=5000, seed=args.seed))
        for m in table1_methods(args)
    ]
    if not args.skip_adult:
        p = dict(lr=0.1, depth=8, l2=1.0, subsample=0.5, shrink_rate=1e-3, temperature=1e3)
        load_adult(args.data_dir)  # not part of a job's time in a long run
        jobs += [
            (
                "adult",
                functools.partial(run_adult_job, args.data_dir),
                dict(adult_base(args, m), trees=1000, draw=0, params=p, fit_seed=0),
            )
            for m in ("SGB", "SGLB")
        ]
    if not args.skip_catboost:
        jobs.append(("catboost", run_catboost_job, dict(part="catboost", fold=0, iterations=1000, seed=args.seed)))
    for part, fn, key in jobs:
        t = time.perf_counter()
        fn(key)
        out[part].append(time.perf_counter() - t)
        log(f"  probe {part} {key.get('method', '')}: {out[part][-1]:.1f} s")
    return out


# ---------------------------------------------------------------- main
def parse(argv):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--folds", type=int, default=100, help="synthetic folds (paper: 100)")
    ap.add_argument("--iterations", type=int, default=5000, help="rounds per synthetic fit (read at 1000/3000/5000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reference", action="store_true", help="add the numpy reference SLA stump boosters")
    ap.add_argument("--cb-folds", type=int, default=100, help="folds for the CatBoost cross-check")
    ap.add_argument("--cb-iterations", type=int, default=1000)
    ap.add_argument("--skip-catboost", action="store_true")
    ap.add_argument("--skip-adult", action="store_true")
    ap.add_argument("--adult-draws", type=int, default=200, help="random-search draws per method (paper: 200)")
    ap.add_argument("--adult-trees", type=int, default=1000, help="maximum trees on Adult (paper: 1000)")
    ap.add_argument("--adult-lr-min", type=float, default=1e-5, help="lower end of the log-uniform learning rate")
    ap.add_argument("--adult-seeds", type=int, default=5, help="refits of each selected configuration")
    ap.add_argument("--adult-sgb-subsample-for", choices=["tree", "split"], default="split")
    ap.add_argument("--quick", action="store_true", help="smoke settings: 2 folds, few rounds, 2 Adult draws")
    _runs.add_run_options(ap, MARKER, DEFAULT_DATA_DIR)
    args = ap.parse_args(argv)
    quick = dict(folds=2, iterations=300, cb_folds=2, cb_iterations=100, adult_draws=2, adult_trees=20, adult_seeds=2)
    return _runs.finish_args(ap, args, quick if args.quick else None)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse(argv)
    if args.time_probe:
        log(estimate(time_probe(args), args, args.n_jobs))
        return
    store = _runs.ResultStore(args.results)
    adult_ok = not args.skip_adult and os.path.exists(os.path.join(args.data_dir, "adult", "adult-train.csv"))
    try:
        import catboost  # noqa: F401

        cb_ok = not args.skip_catboost
    except ImportError:
        cb_ok = False
    with _runs.Launch(store, argv):
        log(f"Part 1: Table 1, {args.folds} folds x {len(table1_methods(args))} methods, {args.iterations} rounds")
        _runs.run_jobs(store, table1_jobs(args), run_table1_job, args.n_jobs, "table 1", log=log)
        if adult_ok:
            log(f"Part 2: Adult, {args.adult_draws} draws per method, <= {args.adult_trees} trees")
            fit = functools.partial(run_adult_job, args.data_dir)
            _runs.run_jobs(store, adult_search_jobs(args), fit, args.n_jobs, "Adult search", log=log)
            _runs.run_jobs(store, list(adult_refit_jobs(store, args)), fit, args.n_jobs, "Adult refits", log=log)
        if cb_ok:
            log(f"Part 3: CatBoost cross-check, {args.cb_folds} folds")
            _runs.run_jobs(store, catboost_jobs(args), run_catboost_job, args.n_jobs, "CatBoost", log=log)

    cmd = "python " + " ".join(shlex.quote(a) for a in ["benches/python/papers/sglb_table1.py"] + argv)
    head = [
        f"- Command: `{cmd}`",
        f"- Commit (at the start of each launch): {store.commits()}; machine: {_runs.machine()}; {args.n_jobs} worker process(es), "
        "every fit single-threaded",
        store.run_time_line(),
        f"- Full report: `{_runs.shown_path(os.path.abspath(args.report))}`"
        if args.report
        else "- Full report: not written",
    ]
    short, full = list(head), ["## SGLB: full report", ""] + head
    res = table1_results(store, args)
    if res is None:
        short.append("- Table 1: incomplete (run interrupted)")
    else:
        t_short, claims, t_full = table1_md(res, args)
        intro = (
            f"Table 1 (synthetic): {args.folds} folds of {N_TRAIN}/{N_TEST} rows, stumps, 5 borders, ν = {LR}, "
            f"ς = {SLA_SCALE}, β = {BETA:g}, γ = {GAMMA:g}, SGB subsample {SGB_SUBSAMPLE}; test 0-1 loss, "
            "two-sided paired p against SLA + SGLB (full). The paper does not state the number of trees."
        )
        short += ["", intro, "", t_short, "", "The paper's claims:", "", claims]
        full += ["", "### Table 1", "", intro, "", t_full]
    if adult_ok:
        ad = adult_md(store, args)
        intro = (
            f"Adult (Table 2), SLA: {args.adult_draws} random-search draws per method (paper: 200), at most "
            f"{args.adult_trees} trees (paper: 1000), learning rate log-uniform on [{args.adult_lr_min:g}, 1], "
            f"native categorical features, SGB subsample_for={args.adult_sgb_subsample_for!r}, 65/15/20 split."
        )
        if ad is None:
            short += ["", "Adult: incomplete (run interrupted)"]
        else:
            short += ["", intro, "", ad[0]]
            full += ["", "### Adult", "", intro, "", ad[0], "", "All draws:", "", ad[1]]
    if cb_ok:
        cb = catboost_md(store, args)
        if cb is None:
            short += ["", "CatBoost cross-check: incomplete (run interrupted)"]
        else:
            intro = "CatBoost cross-check on the synthetic task, Logloss for both libraries:"
            short += ["", intro, "", cb[0]]
            full += [
                "",
                "### CatBoost cross-check",
                "",
                intro,
                "",
                cb[0],
                "",
                "CatBoost's resolved parameters:",
                "",
                cb[1],
            ]
    est = estimate(job_s_from_store(store), args, args.n_jobs)
    md = "\n".join(short) + "\n"
    log("\n" + md)
    log("Estimated wall time of the full protocol on this machine, from this run's job times:\n\n" + est)
    if args.write_md:
        _runs.replace_between_markers(args.write_md, MARKER, md)
        log(f"wrote the {MARKER} section of {args.write_md}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write("\n".join(full) + "\n\n### Time estimate\n\n" + est + "\n")


if __name__ == "__main__":
    # Re-import under the module's own name so that the worker processes can unpickle the job functions.
    import sglb_table1

    try:
        sglb_table1.main()
    except KeyboardInterrupt:
        sys.exit("interrupted: finished jobs are in the results file; run the same command again to resume")
