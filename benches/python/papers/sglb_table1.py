"""SGLB: the synthetic experiment of Table 1, Adult from Table 2, and a CatBoost cross-check.

Reproduces, with rgbm_rs, parts of the experiments of

    A. Ustimenko, L. Prokhorenkova. "SGB: Stochastic Gradient Langevin Boosting".
    ICML 2021 (arXiv 2001.07248), section 7.3 (Table 1) and 7.4 (Table 2),

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
* first-order boosting throughout: ``gain="gradient", leaf="gradient"`` (the paper's
  Appendix C.2 sets ``leaf_estimation_method=Gradient`` "as our main purpose is to
  compare first order optimization"); learning rate 0.1; no L2 on leaves.
* losses: ``loss="logistic"`` (Logloss) or ``loss="sla01", sla_scale=0.1`` (SLA,
  eq. 12, varsigma = 0.1).
* methods: GB = no randomisation; SGB = ``subsample=0.5`` (per-row Bernoulli, CatBoost's
  ``bootstrap_type=Bernoulli``); SGLB = ``langevin=True, temperature=1e3,
  shrink_rate=1e-3`` (beta and gamma of the paper, beta in CatBoost's
  ``diffusion_temperature`` normalisation) *without* subsampling: the paper sets the
  subsample rate "of SGB" only and contrasts SGB's "standard subsampling" with SGLB's
  "theoretically grounded randomization".
* iterations: the paper does not state them; CatBoost's default, 1000, is used
  (--iterations). Mean test errors at earlier checkpoints come from the staged
  predictions of the same fits.
* reported: mean test 0-1 loss over the folds next to the paper's, and paired t-tests
  (``scipy.stats.ttest_rel``, two-sided, over folds) of each method against SLA+SGLB
  -- the paper's p-values are "relative to SGLB".
* extra rows, not in the paper, to locate the effect: SGLB's model shrinkage without
  the noise; SGLB plus subsample 0.5; SGLB with beta read in the paper's own
  normalisation (noise variance 2N/(eps beta), i.e. ``temperature = beta / N = 1``).
* --reference adds rows from a small numpy SLA stump booster written for this script
  from the paper's Algorithm 2 (same bins, gain G^2/W, leaves -lr G/W, noise scale
  sqrt(2/(lr beta)), shrinkage; its own random numbers): GB, SGB and SGLB without any
  hessian condition, and SGLB with rgbm_rs's "child hessian sum >= 0" condition. With that
  condition and no noise it grows the same stumps as rgbm_rs.

Part 2 -- Adult (Table 2; paper section 7.4 and Appendix C.2)
--------------------------------------------------------------
* data: ``adult-train.csv`` + ``adult-test.csv`` (48,842 rows like the paper's 48,842),
  numeric columns as they are, each categorical column one-hot encoded ('?' is a
  category of its own), 108 columns; one seeded 65/15/20 train/validation/test split.
* SLA loss (varsigma = 0.1) for both methods, gradient gain and leaves,
  ``max_bins=65`` (CatBoost's default ``border_count=64``), ``min_samples_leaf=1,
  min_child_weight=0``.
* random search as in Appendix C.2, shrunk for time: --adult-draws draws per method
  (paper: 200) and at most --adult-trees trees (paper: 1000). Draw i uses the same
  learning rate and depth for both methods (common random numbers); learning rate
  log-uniform on [1e-2, 1] (paper: [1e-5, 1], whose lower part cannot move in a few
  hundred trees), depth uniform on {6, ..., 10}; SGB: ``reg_lambda`` (l2-leaf-reg)
  log-uniform on [0.1, 10] and ``subsample`` uniform on (0, 1); SGLB: ``reg_lambda=0``,
  no subsampling, ``shrink_rate`` log-uniform on [1e-5, 1e-2] and ``temperature``
  log-uniform on [1e2, 1e5].
  Note: rgbm_rs grows ordinary depth-wise trees, CatBoost grows oblivious ones, so
  the same depth is a richer tree here.
* selection ("use_best_model"): the (draw, number of trees) with the lowest validation
  0-1 loss, earliest on ties; the test 0-1 loss is that model's.
* p-values: a paired t-test over the test rows (per-row 0-1 losses of the two
  selected models), and, refitting each selected configuration with --adult-seeds
  further seeds (best iteration re-chosen on validation each time), a paired t-test
  over the seeds.

Part 3 -- CatBoost cross-check (synthetic task of part 1)
----------------------------------------------------------
CatBoost has no smoothed 0-1 loss, so both libraries use **Logloss** here.
CatBoost settings: ``depth=1, border_count=5, learning_rate=0.1, iterations=--iterations,
leaf_estimation_method="Gradient", leaf_estimation_iterations=1,
leaf_estimation_backtracking="No", l2_leaf_reg=0, bootstrap_type="No",
random_strength=0, score_function="L2"`` (split score G^2/W, rgbm_rs's gradient gain),
``boosting_type="Plain", boost_from_average=False``; SGLB adds ``langevin=True,
diffusion_temperature=1e3, model_shrink_rate=1e-3``. Two border settings:
(a) CatBoost's default border selection (GreedyLogSum) on the raw features, rgbm_rs
with its own quantile bins, and (b) "matched borders": both libraries fit the same
features pre-binned to integer codes 0..5 at the training quantiles 1/6, ..., 5/6,
so both see exactly the same 15 candidate stumps; then plain GB must agree up to
CatBoost's float32 leaf values (the largest |raw score difference| is reported).
Fit times are wall-clock ``fit`` calls (median and mean over folds), one thread each.

Threads: ``n_jobs=1`` for rgbm_rs and ``thread_count=1`` for CatBoost (the machine is
shared with other jobs).

Usage::

    python benches/python/papers/sglb_table1.py [--folds 100] [--iterations 1000] \
        [--seed 0] [--adult-draws 10] [--adult-trees 300] [--adult-seeds 5] \
        [--cb-folds N] [--skip-adult] [--skip-catboost] [--reference] [--write-md PATH] \
        [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import shlex
import subprocess
import sys
import time

import numpy as np
from scipy import stats

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEFAULT_DATA_DIR = os.path.abspath(os.path.join(REPO, "..", "shared", "data"))

LR = 0.1
SLA_SCALE = 0.1
BETA = 1e3
GAMMA = 1e-3
SGB_SUBSAMPLE = 0.5
N_TRAIN = N_TEST = 1000

# Table 1 of the paper: mean test 0-1 loss and p-value relative to SLA + SGLB.
PAPER_T1 = {
    "Logloss + GB": (0.482, "2e-8"),
    "SLA + GB": (0.475, "5e-3"),
    "SLA + SGB": (0.474, "7e-3"),
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


def md_table(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def git_commit() -> str:
    try:
        c = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        return c + (" (with uncommitted changes)" if dirty else "")
    except Exception:  # noqa: BLE001
        return "unknown"


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
SLA = dict(loss="sla01", sla_scale=SLA_SCALE)
SGLB = dict(langevin=True, temperature=BETA, shrink_rate=GAMMA)
METHODS = {
    "Logloss + GB": (dict(loss="logistic"), True),
    "SLA + GB": (dict(SLA), True),
    "SLA + SGB": (dict(SLA, subsample=SGB_SUBSAMPLE), True),
    "SLA + SGLB": (dict(SLA, **SGLB), True),
    "SLA + GB + shrinkage only (gamma=1e-3, no noise)": (dict(SLA, shrink_rate=GAMMA), False),
    "SLA + SGLB + subsample 0.5": (dict(SLA, subsample=SGB_SUBSAMPLE, **SGLB), False),
    "SLA + SGLB, beta/N normalisation (temperature=1)": (
        dict(SLA, langevin=True, temperature=BETA / N_TRAIN, shrink_rate=GAMMA),
        False,
    ),
}
REF = "SLA + SGLB"


def checkpoints(iterations: int):
    cps = sorted({c for c in (100, 200, 500, 1000, 2000, 5000) if c < iterations} | {iterations})
    return cps


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


def run_table1(args):
    cps = checkpoints(args.iterations)
    names = table1_methods(args)
    err = {m: np.empty(args.folds) for m in names}
    staged = {m: np.empty((args.folds, len(cps))) for m in names}
    fit_s = {m: np.empty(args.folds) for m in names}
    no_split_rounds = {m: 0 for m in names}
    t0 = time.perf_counter()
    for k in range(args.folds):
        X, y, Xt, yt = synthetic_fold(args.seed, k)
        for m, (kw, _) in METHODS.items():
            est = rgbm(args.iterations, seed=args.seed * 1_000_003 + k, **kw)
            t = time.perf_counter()
            est.fit(X, y)
            fit_s[m][k] = time.perf_counter() - t
            no_split_rounds[m] += sum(r is None for r in est.training_log_["root_feature"])
            err[m][k] = np.mean(est.predict(Xt) != yt)
            j = 0
            for i, pred in enumerate(est.staged_predict(Xt), start=1):
                if i == cps[j]:
                    staged[m][k, j] = np.mean(pred != yt)
                    j += 1
            if staged[m][k, -1] != err[m][k]:
                raise RuntimeError(f"{m}, fold {k}: the last staged prediction differs from predict()")
        for m in names[len(METHODS) :]:
            t = time.perf_counter()
            staged[m][k], ns = reference_sla(
                X, y, Xt, yt, args.iterations, cps, seed=args.seed * 1_000_003 + k, **REFERENCE[m]
            )
            fit_s[m][k] = time.perf_counter() - t
            err[m][k] = staged[m][k, -1]
            no_split_rounds[m] += ns
        if (k + 1) % 10 == 0 or k + 1 == args.folds:
            log(f"  table 1: {k + 1}/{args.folds} folds, {time.perf_counter() - t0:.0f}s")
    return dict(
        err=err, staged=staged, cps=cps, fit_s=fit_s, no_split_rounds=no_split_rounds, seconds=time.perf_counter() - t0
    )


def table1_md(res, args) -> str:
    err = res["err"]
    ref = err[REF]
    rows = []
    for m in table1_methods(args):
        in_paper = METHODS.get(m, (None, False))[1]
        e = err[m]
        paper, paper_p = PAPER_T1.get(m, (None, None))
        if m == REF:
            p_txt, d_txt = "–", "–"
        else:
            p_txt = fmt_p(stats.ttest_rel(e, ref).pvalue)
            d = e - ref
            d_txt = f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(len(d)):.4f}"
        rows.append(
            [
                m if in_paper else f"*{m}* (extra)",
                f"{e.mean():.4f}",
                f"{e.std(ddof=1) / np.sqrt(len(e)):.4f}",
                "–" if paper is None else f"{paper:.3f}",
                d_txt,
                p_txt,
                "–" if paper_p is None else paper_p if in_paper else "–",
                f"{np.median(res['fit_s'][m]) * 1e3:.0f}",
            ]
        )
    header = [
        "method",
        "test 0-1 loss (mean)",
        "SE",
        "paper",
        "diff. vs SLA+SGLB (mean ± SE)",
        "p vs SLA+SGLB (ttest_rel)",
        "paper p",
        "fit ms (median)",
    ]
    out = [md_table(header, rows)]
    # The paper's ordering claims.
    e = {m: err[m].mean() for m in METHODS}
    order = ["Logloss + GB", "SLA + GB", "SLA + SGB", "SLA + SGLB"]
    claims = [
        ("SLA + SGLB < SLA + GB", e["SLA + SGLB"] < e["SLA + GB"], stats.ttest_rel(err["SLA + GB"], ref).pvalue),
        ("SLA + SGLB < SLA + SGB", e["SLA + SGLB"] < e["SLA + SGB"], stats.ttest_rel(err["SLA + SGB"], ref).pvalue),
        (
            "SLA + SGLB < Logloss + GB",
            e["SLA + SGLB"] < e["Logloss + GB"],
            stats.ttest_rel(err["Logloss + GB"], ref).pvalue,
        ),
        (
            "SLA + SGB < SLA + GB",
            e["SLA + SGB"] < e["SLA + GB"],
            stats.ttest_rel(err["SLA + GB"], err["SLA + SGB"]).pvalue,
        ),
        (
            "SLA + GB < Logloss + GB",
            e["SLA + GB"] < e["Logloss + GB"],
            stats.ttest_rel(err["Logloss + GB"], err["SLA + GB"]).pvalue,
        ),
    ]
    out.append("")
    out.append("The paper's claims (the order Logloss+GB > SLA+GB > SLA+SGB > SLA+SGLB in test 0-1 loss):")
    out.append("")
    out.append(
        md_table(
            ["claim", "holds in the means?", "two-sided paired p"],
            [[c, "yes" if ok else "**no**", fmt_p(p)] for c, ok, p in claims],
        )
    )
    ranked = sorted(order, key=lambda m: e[m])
    out.append("")
    out.append("Observed order (best first): " + " < ".join(f"{m} ({e[m]:.4f})" for m in ranked) + ".")
    # staged checkpoints
    cps = res["cps"]
    rows = []
    for m in table1_methods(args):
        in_paper = METHODS.get(m, (None, False))[1]
        rows.append([m if in_paper else f"*{m}*"] + [f"{res['staged'][m][:, j].mean():.4f}" for j in range(len(cps))])
    out.append("")
    out.append("Mean test 0-1 loss after T rounds (staged predictions of the same fits):")
    out.append("")
    out.append(md_table(["method"] + [f"T={c}" for c in cps], rows))
    rows = []
    for j, c in enumerate(cps):
        s = res["staged"]
        rows.append(
            [f"T={c}"]
            + [
                fmt_p(stats.ttest_rel(s[m][:, j], s[REF][:, j]).pvalue)
                for m in ("Logloss + GB", "SLA + GB", "SLA + SGB")
            ]
        )
    out.append("")
    out.append("Paired p-values against SLA + SGLB at each checkpoint:")
    out.append("")
    out.append(md_table(["", "Logloss + GB", "SLA + GB", "SLA + SGB"], rows))
    bad = {m: n for m, n in res["no_split_rounds"].items() if n}
    if bad:
        out.append("")
        out.append(
            f"Rounds that grew no split (a single-leaf tree), out of {args.folds * args.iterations} per method: "
            + ", ".join(f"{m}: {n}" for m, n in bad.items())
            + ". "
            "With the SLA loss the hessian is negative on misclassified rows. Before commit 52fb219 rgbm_rs "
            "rejected any split with a child whose hessian sum was below min_child_weight even with "
            "gain='gradient' (now the check applies to Newton formulas only); a round in which every "
            "candidate is rejected grows a single leaf. The numpy reference rows (--reference) keep that "
            "check, to show its effect."
        )
    return "\n".join(out)


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


def run_catboost(args):
    import catboost

    n = args.cb_folds if args.cb_folds is not None else args.folds
    err = {(lab, b): np.empty(n) for lab, b, _, _ in CB_CONFIGS}
    fit_s = {(lab, b): np.empty(n) for lab, b, _, _ in CB_CONFIGS}
    max_gb_diff = 0.0
    resolved = {}
    t0 = time.perf_counter()
    for k in range(n):
        X, y, Xt, yt = synthetic_fold(args.seed, k)
        C, Ct = to_codes(X, Xt)
        raw = {}
        for lab, borders, lib, lang in CB_CONFIGS:
            A, At = (X, Xt) if borders == "own" else (C, Ct)
            seed = args.seed * 1_000_003 + k
            if lib == "rgbm":
                est = rgbm(args.iterations, seed, loss="logistic", **(SGLB if lang else {}))
            else:
                est = catboost_model(args.iterations, seed, lang)
            t = time.perf_counter()
            est.fit(A, y)
            fit_s[(lab, borders)][k] = time.perf_counter() - t
            err[(lab, borders)][k] = np.mean(est.predict(At).astype(np.int64) != yt)
            if borders == "matched" and not lang:
                raw[lib] = (
                    est.decision_function(At) if lib == "rgbm" else est.predict(At, prediction_type="RawFormulaVal")
                )
            if lib == "cb" and lab not in resolved:
                allp = est.get_all_params()
                keys = (
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
                resolved[lab] = {key: allp.get(key) for key in keys}
        max_gb_diff = max(max_gb_diff, float(np.max(np.abs(raw["rgbm"] - raw["cb"]))))
        if (k + 1) % 10 == 0 or k + 1 == n:
            log(f"  CatBoost cross-check: {k + 1}/{n} folds, {time.perf_counter() - t0:.0f}s")
    return dict(
        err=err,
        fit_s=fit_s,
        n=n,
        max_gb_diff=max_gb_diff,
        resolved=resolved,
        version=catboost.__version__,
        seconds=time.perf_counter() - t0,
    )


def catboost_md(res) -> str:
    err, fit_s = res["err"], res["fit_s"]
    rows = []
    for borders, title in (
        ("own", "own borders (rgbm_rs quantile bins / CatBoost GreedyLogSum)"),
        ("matched", "matched borders (same integer codes)"),
    ):
        for lab in ("GB", "SGLB"):
            r, c = err[(f"rgbm_rs {lab}", borders)], err[(f"CatBoost {lab}", borders)]
            tr, tc = fit_s[(f"rgbm_rs {lab}", borders)], fit_s[(f"CatBoost {lab}", borders)]
            rows.append(
                [
                    title,
                    f"Logloss + {lab}",
                    f"{r.mean():.4f} ± {r.std(ddof=1) / np.sqrt(len(r)):.4f}",
                    f"{c.mean():.4f} ± {c.std(ddof=1) / np.sqrt(len(c)):.4f}",
                    fmt_p(stats.ttest_rel(r, c).pvalue),
                    f"{np.median(tr) * 1e3:.0f} / {tr.mean() * 1e3:.0f}",
                    f"{np.median(tc) * 1e3:.0f} / {tc.mean() * 1e3:.0f}",
                    f"{np.median(tc) / np.median(tr):.1f}x",
                ]
            )
    out = [
        md_table(
            [
                "borders",
                "method",
                "rgbm_rs 0-1 loss (mean ± SE)",
                "CatBoost 0-1 loss (mean ± SE)",
                "p (rgbm vs CatBoost, paired)",
                "rgbm_rs fit ms (median / mean)",
                "CatBoost fit ms (median / mean)",
                "CatBoost / rgbm_rs time",
            ],
            rows,
        )
    ]
    rows = []
    for borders in ("own", "matched"):
        for lib in ("rgbm_rs", "CatBoost"):
            g, s = err[(f"{lib} GB", borders)], err[(f"{lib} SGLB", borders)]
            d = s - g
            rows.append(
                [
                    borders,
                    lib,
                    f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(len(d)):.4f}",
                    fmt_p(stats.ttest_rel(s, g).pvalue),
                ]
            )
    out.append("")
    out.append("Effect of SGLB within each library (Logloss; SGLB minus GB, paired over folds):")
    out.append("")
    out.append(md_table(["borders", "library", "SGLB − GB 0-1 loss (mean ± SE)", "p"], rows))
    out.append("")
    out.append(
        f"Matched borders, plain GB: largest |rgbm_rs − CatBoost| raw test score over all folds = {res['max_gb_diff']:.2e} "
        "(CatBoost stores leaf values as float32; the two GB runs are the same algorithm if this is ~1e-6 and the 0-1 losses coincide)."
    )
    out.append("")
    out.append(f"CatBoost {res['version']}, resolved parameters:")
    out.append("")
    for lab, p in res["resolved"].items():
        out.append(f"- {lab}: `{p}`")
    return "\n".join(out)


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


def load_adult(data_dir: str):
    import pandas as pd

    frames = [
        pd.read_csv(os.path.join(data_dir, "adult", f), header=None, names=ADULT_COLS, skipinitialspace=True)
        for f in ("adult-train.csv", "adult-test.csv")
    ]
    d = pd.concat(frames, ignore_index=True).dropna(subset=["income"])
    y = d.pop("income").str.rstrip(".").map({"<=50K": 0, ">50K": 1})
    if y.isna().any():
        raise RuntimeError("unexpected income labels")
    cat = list(d.select_dtypes(exclude="number").columns)
    X = pd.get_dummies(d, columns=cat, dtype=np.float64).to_numpy(np.float64)
    return X, y.to_numpy(np.int64)


def adult_estimator(method: str, params: dict, trees: int, seed: int):
    kw = dict(SLA, max_depth=params["depth"], learning_rate=params["lr"], max_bins=65)
    if method == "SGB":
        kw.update(reg_lambda=params["l2"], subsample=params["subsample"])
    else:
        kw.update(langevin=True, temperature=params["temperature"], shrink_rate=params["shrink_rate"])
    return rgbm(trees, seed, **kw)


def best_iteration(est, Xv, yv):
    """(validation 0-1 loss, number of trees) of the best truncation, earliest on ties."""
    best = (np.inf, 0)
    for i, pred in enumerate(est.staged_predict(Xv), start=1):
        e = float(np.mean(pred != yv))
        if e < best[0]:
            best = (e, i)
    return best


def predict_at(est, X, n_trees):
    for i, pred in enumerate(est.staged_predict(X), start=1):
        if i == n_trees:
            return pred
    raise RuntimeError("n_trees beyond the model")


def run_adult(args):
    X, y = load_adult(args.data_dir)
    rng = np.random.default_rng([args.seed, 2])
    perm = rng.permutation(len(y))
    n_tr, n_va = int(round(0.65 * len(y))), int(round(0.15 * len(y)))
    tr, va, te = perm[:n_tr], perm[n_tr : n_tr + n_va], perm[n_tr + n_va :]
    Xtr, ytr, Xva, yva, Xte, yte = X[tr], y[tr], X[va], y[va], X[te], y[te]
    draws = []
    for _ in range(args.adult_draws):
        draws.append(
            dict(
                lr=float(10 ** rng.uniform(-2, 0)),
                depth=int(rng.integers(6, 11)),
                l2=float(10 ** rng.uniform(-1, 1)),
                subsample=max(float(rng.uniform(0, 1)), 1e-3),
                shrink_rate=float(10 ** rng.uniform(-5, -2)),
                temperature=float(10 ** rng.uniform(2, 5)),
            )
        )
    t0 = time.perf_counter()
    search = {m: [] for m in ("SGB", "SGLB")}
    best = {}
    for i, p in enumerate(draws):
        for m in ("SGB", "SGLB"):
            est = adult_estimator(m, p, args.adult_trees, seed=args.seed * 7919 + i)
            t = time.perf_counter()
            est.fit(Xtr, ytr)
            fs = time.perf_counter() - t
            ve, it = best_iteration(est, Xva, yva)
            search[m].append(dict(draw=i, val=ve, iters=it, fit_s=fs, **p))
            if m not in best or ve < best[m]["val"]:
                best[m] = dict(draw=i, val=ve, iters=it, est=est, params=p)
        log(
            f"  Adult search: {i + 1}/{len(draws)} draws, {time.perf_counter() - t0:.0f}s "
            f"(best val SGB {best['SGB']['val']:.4f}, SGLB {best['SGLB']['val']:.4f})"
        )
    loss_rows = {}
    for m in ("SGB", "SGLB"):
        pred = predict_at(best[m]["est"], Xte, best[m]["iters"])
        loss_rows[m] = (pred != yte).astype(np.float64)
        best[m]["test"] = float(loss_rows[m].mean())
    p_rows = (
        stats.ttest_rel(loss_rows["SGB"], loss_rows["SGLB"]).pvalue
        if np.any(loss_rows["SGB"] != loss_rows["SGLB"])
        else 1.0
    )
    # Refit the two selected configurations with further seeds.
    seed_err = {m: [] for m in ("SGB", "SGLB")}
    for s in range(args.adult_seeds):
        for m in ("SGB", "SGLB"):
            est = adult_estimator(m, best[m]["params"], args.adult_trees, seed=10_000 + 31 * s + args.seed)
            est.fit(Xtr, ytr)
            _, it = best_iteration(est, Xva, yva)
            seed_err[m].append(float(np.mean(predict_at(est, Xte, it) != yte)))
        log(f"  Adult refits: {s + 1}/{args.adult_seeds} seeds, {time.perf_counter() - t0:.0f}s")
    seed_err = {m: np.asarray(v) for m, v in seed_err.items()}
    p_seeds = stats.ttest_rel(seed_err["SGB"], seed_err["SGLB"]).pvalue if args.adult_seeds >= 2 else float("nan")
    for m in best:
        best[m].pop("est")
    return dict(
        shape=X.shape,
        n=(len(tr), len(va), len(te)),
        draws=draws,
        search=search,
        best=best,
        p_rows=p_rows,
        seed_err=seed_err,
        p_seeds=p_seeds,
        seconds=time.perf_counter() - t0,
    )


def adult_md(res, args) -> str:
    b = res["best"]
    out = [
        f"Data: {res['shape'][0]} rows x {res['shape'][1]} columns (one-hot); train / validation / test = "
        f"{res['n'][0]} / {res['n'][1]} / {res['n'][2]}.",
        "",
    ]
    rows = [
        [
            "SGB",
            f"{100 * b['SGB']['test']:.2f}",
            f"{PAPER_ADULT[0]}",
            f"{100 * b['SGB']['val']:.2f}",
            b["SGB"]["iters"],
            f"lr={b['SGB']['params']['lr']:.3g}, depth={b['SGB']['params']['depth']}, l2={b['SGB']['params']['l2']:.3g}, subsample={b['SGB']['params']['subsample']:.2f}",
        ],
        [
            "SGLB",
            f"{100 * b['SGLB']['test']:.2f}",
            f"{PAPER_ADULT[1]}",
            f"{100 * b['SGLB']['val']:.2f}",
            b["SGLB"]["iters"],
            f"lr={b['SGLB']['params']['lr']:.3g}, depth={b['SGLB']['params']['depth']}, gamma={b['SGLB']['params']['shrink_rate']:.3g}, beta={b['SGLB']['params']['temperature']:.3g}",
        ],
    ]
    out.append(
        md_table(
            [
                "method",
                "test 0-1 loss %",
                "paper %",
                "validation 0-1 loss %",
                "trees (best on validation)",
                "selected parameters",
            ],
            rows,
        )
    )
    out.append("")
    out.append(
        f"- paired t-test over the {res['n'][2]} test rows (per-row 0-1 losses of the two selected models): p = {fmt_p(res['p_rows'])} (paper: p = {PAPER_ADULT[2]})."
    )
    se = res["seed_err"]
    if len(se["SGB"]):
        d = se["SGB"] - se["SGLB"]
        out.append(
            f"- the selected configurations refitted with {len(d)} further seeds: SGB {100 * se['SGB'].mean():.2f}% "
            f"(range {100 * se['SGB'].min():.2f}–{100 * se['SGB'].max():.2f}), SGLB {100 * se['SGLB'].mean():.2f}% "
            f"(range {100 * se['SGLB'].min():.2f}–{100 * se['SGLB'].max():.2f}); SGB − SGLB = {100 * d.mean():+.2f} points, "
            f"paired t-test over seeds p = {fmt_p(res['p_seeds'])}."
        )
    out.append("")
    out.append("All random-search draws (validation 0-1 loss % at the best truncation / trees):")
    out.append("")
    rows = []
    for s_sgb, s_sglb in zip(res["search"]["SGB"], res["search"]["SGLB"]):
        rows.append(
            [
                s_sgb["draw"],
                f"{s_sgb['lr']:.3g}",
                s_sgb["depth"],
                f"{s_sgb['l2']:.3g}",
                f"{s_sgb['subsample']:.2f}",
                f"{100 * s_sgb['val']:.2f} / {s_sgb['iters']}",
                f"{s_sgb['fit_s']:.1f}",
                f"{s_sglb['shrink_rate']:.2g}",
                f"{s_sglb['temperature']:.3g}",
                f"{100 * s_sglb['val']:.2f} / {s_sglb['iters']}",
                f"{s_sglb['fit_s']:.1f}",
            ]
        )
    out.append(
        md_table(
            [
                "draw",
                "lr",
                "depth",
                "SGB l2",
                "SGB subsample",
                "SGB val % / trees",
                "SGB fit s",
                "SGLB gamma",
                "SGLB beta",
                "SGLB val % / trees",
                "SGLB fit s",
            ],
            rows,
        )
    )
    return "\n".join(out)


# ---------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--folds", type=int, default=100, help="synthetic folds (paper: 100)")
    ap.add_argument(
        "--iterations",
        type=int,
        default=1000,
        help="boosting rounds on the synthetic task (not stated in the paper; CatBoost's default)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cb-folds", type=int, default=None, help="folds for the CatBoost cross-check (default: --folds)")
    ap.add_argument("--skip-catboost", action="store_true")
    ap.add_argument("--skip-adult", action="store_true")
    ap.add_argument("--adult-draws", type=int, default=10, help="random-search draws per method (paper: 200)")
    ap.add_argument("--adult-trees", type=int, default=300, help="maximum trees on Adult (paper: 1000)")
    ap.add_argument(
        "--adult-seeds", type=int, default=5, help="refits of each selected configuration with further seeds"
    )
    ap.add_argument(
        "--reference",
        action="store_true",
        help="add numpy reference SLA stump boosters (with and without rgbm_rs's hessian check) to table 1 (~2 min)",
    )
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    ap.add_argument("--write-md", default=None, metavar="PATH", help="write the results as markdown")
    args = ap.parse_args(argv)

    import rgbm_rs

    started = _dt.datetime.now().astimezone()
    commit = git_commit()  # at the start: others may commit while this runs
    t_all = time.perf_counter()
    sections = []

    log(f"Part 1: Table 1, {args.folds} folds x {len(table1_methods(args))} methods, {args.iterations} rounds")
    t1 = run_table1(args)
    sections.append(
        (
            "1. Table 1: synthetic data, SLA (0-1 loss) optimisation",
            f"{args.folds} folds x ({N_TRAIN} train + {N_TEST} test rows), {args.iterations} rounds of stumps, "
            f"learning rate {LR}, varsigma {SLA_SCALE}, beta {BETA:g}, gamma {GAMMA:g}, SGB subsample {SGB_SUBSAMPLE}. "
            f"Part 1 took {t1['seconds']:.0f}s.\n\n" + table1_md(t1, args),
        )
    )
    log(sections[-1][1])

    if not args.skip_adult:
        log(
            f"Part 2: Adult, {args.adult_draws} draws per method, <= {args.adult_trees} trees, {args.adult_seeds} refit seeds"
        )
        ad = run_adult(args)
        sections.append(
            (
                "2. Table 2, Adult row: SLA, SGB vs SGLB",
                f"Random search with {args.adult_draws} draws per method (paper: 200), at most {args.adult_trees} trees "
                f"(paper: 1000), learning rate log-uniform on [1e-2, 1] (paper: [1e-5, 1]); the other ranges as in the paper. "
                f"Part 2 took {ad['seconds']:.0f}s.\n\n" + adult_md(ad, args),
            )
        )
        log(sections[-1][1])

    if not args.skip_catboost:
        try:
            import catboost  # noqa: F401
        except ImportError:
            sections.append(("3. CatBoost cross-check", "skipped: catboost is not installed (`pip install catboost`)."))
        else:
            n_cb = args.cb_folds if args.cb_folds is not None else args.folds
            log(f"Part 3: CatBoost cross-check, {n_cb} folds")
            cb = run_catboost(args)
            sections.append(
                (
                    "3. CatBoost cross-check on the synthetic task (Logloss for both)",
                    f"{cb['n']} folds (the same data as part 1), {args.iterations} rounds, stumps, border count 5, "
                    f"learning rate {LR}; SGLB: diffusion_temperature {BETA:g}, model_shrink_rate {GAMMA:g}. "
                    f"CatBoost has no smoothed 0-1 loss, so both libraries minimise Logloss here. Part 3 took {cb['seconds']:.0f}s.\n\n"
                    + catboost_md(cb),
                )
            )
            log(sections[-1][1])

    total = time.perf_counter() - t_all
    log(f"total {total:.0f}s")
    if args.write_md:
        cmd = "python " + " ".join(
            shlex.quote(a)
            for a in [os.path.relpath(os.path.abspath(__file__), REPO)] + (sys.argv[1:] if argv is None else list(argv))
        )
        head = [
            "# SGLB (Ustimenko & Prokhorenkova, ICML 2021): Table 1, Adult (Table 2) and a CatBoost cross-check",
            "",
            f"- command (from the repository root): `{cmd}`",
            f"- date: {started.strftime('%Y-%m-%d %H:%M %Z')}; total runtime {total:.0f}s",
            f"- rgbm_rs commit {commit} (HEAD when the run started; the installed extension may be an older build); Python {platform.python_version()}, numpy {np.__version__}; "
            f"{os.cpu_count()} CPUs (shared with other jobs); rgbm_rs n_jobs=1, CatBoost thread_count=1",
            f"- rgbm_rs module: `{os.path.relpath(rgbm_rs.__file__, REPO)}`",
            "",
            "## Settings",
            "",
            "```",
            __doc__.strip(),
            "```",
        ]
        body = []
        for title, text in sections:
            body += ["", f"## {title}", "", text]
        path = os.path.abspath(args.write_md)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(head + body) + "\n")
        log(f"wrote {path}")


if __name__ == "__main__":
    main()
