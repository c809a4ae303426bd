"""Randomized Gradient Boosting Machine: the Figure 5 protocol (Lu & Mazumder).

Reproduces the numerical experiment of

    H. Lu, R. Mazumder. "Randomized Gradient Boosting Machine".
    SIAM J. Optim. 30(4), 2020 (arXiv 1810.10158), section 5, Figure 5

with rgbm_rs on a9a and colon-cancer (as in the paper) and on California
housing (squared loss) in place of YearPredictionMSD, which is not available
here. rcv1 (the paper's fourth dataset) is not run.

Protocol (paper section 5; ALGORITHMS.md section 5; the authors' reference
code as summarised in notes/anchors-features.md section 3):

* data: a9a = the LIBSVM training file only (32,561 x 123, labels +-1 ->
  0/1, densified); colon-cancer = 62 x 2000; California housing =
  20,640 x 8, target in units of $100k. A seeded 80/20 split
  (``train_test_split(test_size=0.2, random_state=s)``, s = 40 as in the
  reference code).
* seeds: --split-seeds s_0 s_1 ... (default: 40 only) repeats the whole
  protocol once per value: the i-th value gives its own 80/20 split and the
  estimators of that repetition get ``random_state = --seed + i`` (so the
  default, and any old single-seed command, fits exactly what it fitted
  before: split 40, random_state 0).
* weak learners: stumps (``max_depth=1``), ``max_bins=100`` (about 100
  quantile candidate splits per feature), no leaf-size or hessian limits
  (``min_samples_leaf=1, min_child_weight=0``), f0 = 0 (``init="zero"``).
* step: the constant 1/sigma step with gradient gain and gradient leaves
  (``step="constant", gain="gradient", leaf="gradient"``): a leaf moves by
  (1/sigma) x mean negative gradient, which is exactly the reference code's
  rho <r, b> b for a unit-norm stump b (rho = 4 for the logistic loss,
  1 for least squares).
* loss: regularized logistic log(1 + e^{-yf}) + (d/2) f^2 with d = 1e-4
  (sigma = 1/4 + d, step 3.9984); squared loss (1/2)(y - f)^2 (step 1).
* selection: Type 3, ``selection="groups", selection_size=t``: t features
  drawn uniformly without replacement per round, best stump among them.
  t on the grid int(p^{k/4}), k = 4, 3, 2, 1, 0 (truncated like the reference
  code's ``np.logspace(..., dtype=int)``); duplicates are dropped
  (California: p = 8 gives 8, 4, 2, 1, 1 -> 8, 4, 2, 1).
* iteration budget: t = p runs T rounds (--rounds, 200 as in the reference
  README); the k-th smaller grid value gets T * p^{k/4} rounds, i.e. the
  budget of t = p multiplied by p^{1/4} once per grid step, so every run
  scans about T * p features (T * p / t before truncation). A duplicated t
  keeps the budget of its last grid position (California t = 1: T * p).
  --max-rounds caps any budget (reported if it bites).
* timing: n_jobs = 1 (the paper used one CPU). The time axis is the
  cumulative per-round time of ``training_log_["seconds"]`` from fits with
  ``record_train_loss=False`` (recording the loss is timed inside each
  round and would add an evaluation pass over the training rows that the
  paper's time axis also contains but that is not part of the algorithm),
  element-wise median over --timing-reps fits. The losses come from one more
  fit with ``record_train_loss=True`` and the same seed; the script checks
  that it grows exactly the same stumps as the timed fits.
* curves: training loss minus the best training loss over all runs of the
  dataset (log scale) and test loss (the same objective on the test rows,
  from ``staged_decision_function`` / ``staged_predict``) against time and
  against passes = rounds * t / p.

The markdown report (--write-md) gives, per dataset and t, for the FIRST
seed only (with its plot): the time and passes to reach two training-loss
levels, the loss at equal time, and the final training loss, test loss and
test error. Across all seeds it gives, per dataset and t, the median and
min..max of the time and passes to level A (each seed's own GBM final
training loss), the test error at A, the final training loss and the final
test error/MSE, and a verdict counted over the seeds: on how many of them
some medium t (1 < t < p) reaches A before t = p (in time; separately in
passes) with a test error/MSE at that point within 1% of GBM's, and which t
is the fastest such t most often.

Usage::

    python benches/python/papers/rgbm_figure5.py \
        [--write-md PATH] [--png-dir bench_out] [--datasets a9a colon-cancer california] \
        [--rounds 200] [--timing-reps 3] [--gap 1e-3] [--split-seeds 40 41 42] [--seed 0] \
        [--max-rounds N] [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import shlex
import subprocess
import sys
import time

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# The benchmark scripts' shared helpers live one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _report  # noqa: E402

D_LOGISTIC = 1e-4


# ---------------------------------------------------------------- data
def load_dataset(name: str, data_dir: str):
    """Returns X, y, task ('classification' | 'regression'), description."""
    if name == "a9a":
        from sklearn.datasets import load_svmlight_file

        path = os.path.join(data_dir, "a9a", "a9a")
        X, y = load_svmlight_file(path, n_features=123)
        X = np.asarray(X.todense(), dtype=np.float64)
        y = (y > 0).astype(np.int64)
        return X, y, "classification", f"{os.path.relpath(path, REPO)} (LIBSVM train file only)"
    if name == "colon-cancer":
        path = os.path.join(data_dir, "colon-cancer", "colon-cancer.libsvm-dense.txt")
        D = np.loadtxt(path)
        return D[:, 1:], (D[:, 0] > 0).astype(np.int64), "classification", os.path.relpath(path, REPO)
    if name == "california":
        import pandas as pd

        path = os.path.join(data_dir, "california-housing", "california_housing.csv")
        df = pd.read_csv(path)
        y = df.pop("target").to_numpy(np.float64)
        return df.to_numpy(np.float64), y, "regression", os.path.relpath(path, REPO)
    raise SystemExit(f"unknown dataset {name!r}")


def t_grid(p: int, rounds: int):
    """[(t, budget)] on the grid int(p^{k/4}); duplicates keep their last budget."""
    out: dict[int, int] = {}
    for k in range(5):
        t = int(p ** ((4 - k) / 4.0) + 1e-9)
        t = max(t, 1)
        out[t] = int(rounds * p ** (k / 4.0) + 1e-9)
    return sorted(out.items(), key=lambda kv: -kv[0])


# ---------------------------------------------------------------- losses
def objective(task, y, f):
    """Per-row objective the booster minimises (mean is the reported loss)."""
    if task == "classification":
        s = 2.0 * y - 1.0
        return np.logaddexp(0.0, -s * f) + 0.5 * D_LOGISTIC * f * f
    return 0.5 * (y - f) ** 2


def make_estimator(task, t, n_rounds, record, seed):
    from rgbm_rs import RGBMClassifier, RGBMRegressor

    common = dict(
        n_estimators=n_rounds,
        max_depth=1,
        max_bins=100,
        min_samples_leaf=1,
        min_child_weight=0.0,
        step="constant",
        gain="gradient",
        leaf="gradient",
        init="zero",
        selection="groups",
        selection_size=int(t),
        record_train_loss=record,
        n_jobs=1,
        random_state=seed,
    )
    if task == "classification":
        return RGBMClassifier(loss="logistic", logistic_reg=D_LOGISTIC, **common)
    return RGBMRegressor(loss="squared", **common)


# ---------------------------------------------------------------- one run
def run_one(task, Xtr, ytr, Xte, yte, t, n_rounds, timing_reps, seed):
    p = Xtr.shape[1]
    # 1) timed fits, no loss recording
    per_round = []
    walls = []
    structure = None
    for _ in range(timing_reps):
        est = make_estimator(task, t, n_rounds, False, seed)
        t0 = time.perf_counter()
        est.fit(Xtr, ytr)
        walls.append(time.perf_counter() - t0)
        log = est.training_log_
        per_round.append(np.asarray(log["seconds"], dtype=np.float64))
        s = (list(log["root_feature"]), list(log["root_threshold"]))
        if structure is None:
            structure = s
        elif s != structure:
            raise RuntimeError(f"t={t}: two fits with the same seed grew different stumps")
    sec = np.median(np.vstack(per_round), axis=0)
    # 2) the loss-recording fit
    est = make_estimator(task, t, n_rounds, True, seed)
    t0 = time.perf_counter()
    est.fit(Xtr, ytr)
    wall_rec = time.perf_counter() - t0
    log = est.training_log_
    if (list(log["root_feature"]), list(log["root_threshold"])) != structure:
        raise RuntimeError(f"t={t}: record_train_loss=True changed the fitted stumps")
    train_loss = np.asarray(log["train_loss"], dtype=np.float64)
    sec_rec = np.asarray(log["seconds"], dtype=np.float64)
    n_done = len(train_loss)
    # sanity: the logged loss equals the objective of the final model
    own = float(np.mean(objective(task, ytr, est.predict(Xtr) if task == "regression" else est.decision_function(Xtr))))
    if not np.isclose(own, train_loss[-1], rtol=1e-9, atol=1e-12):
        raise RuntimeError(f"t={t}: logged final train loss {train_loss[-1]!r} != recomputed {own!r}")
    # 3) test curves
    t0 = time.perf_counter()
    test_loss = np.empty(n_done)
    test_err = np.empty(n_done)
    staged = est.staged_predict(Xte) if task == "regression" else est.staged_decision_function(Xte)
    f = None
    for i, f in enumerate(staged):
        test_loss[i] = np.mean(objective(task, yte, f))
        test_err[i] = np.mean((f > 0) != (yte == 1)) if task == "classification" else np.mean((yte - f) ** 2)
    staged_s = time.perf_counter() - t0
    final_f = est.predict(Xte) if task == "regression" else est.decision_function(Xte)
    if not np.allclose(final_f, f, rtol=1e-9, atol=1e-9):
        raise RuntimeError(f"t={t}: the last staged prediction differs from predict/decision_function")
    if task == "classification":  # plain log-loss, no ridge term
        final_plain = float(np.mean(np.logaddexp(0.0, -(2.0 * yte - 1.0) * final_f)))
    else:
        final_plain = float(test_loss[-1])
    return dict(
        t=int(t),
        rounds=n_done,
        budget=n_rounds,
        p=p,
        seconds=sec,
        cum_time=np.cumsum(sec),
        seconds_rec=sec_rec,
        passes=np.arange(1, n_done + 1) * t / p,
        train_loss=train_loss,
        test_loss=test_loss,
        test_err=test_err,
        fit_wall=float(np.median(walls)),
        fit_wall_rec=wall_rec,
        staged_s=staged_s,
        final_plain_test_loss=final_plain,
        features_searched=np.asarray(log["features_searched"]),
    )


def first_reach(curve, level):
    idx = np.nonzero(curve <= level)[0]
    return None if len(idx) == 0 else int(idx[0])


# ---------------------------------------------------------------- plots
def plot_dataset(name, task, runs, best, png_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    colors = plt.cm.viridis(np.linspace(0.0, 0.9, len(runs)))
    p = runs[0]["p"]
    for r, c in zip(runs, colors):
        gap = r["train_loss"] - best
        gap = np.where(gap > 0, gap, np.nan)
        label = f"t = {r['t']}" + (" (GBM)" if r["t"] == p else "") + f", {r['rounds']} rounds"
        for col, x in enumerate((r["cum_time"], r["passes"])):
            axes[0, col].plot(x, gap, color=c, lw=1.3, label=label)
            axes[1, col].plot(x, r["test_loss"], color=c, lw=1.3, label=label)
    t_gbm = float(next(r for r in runs if r["t"] == p)["cum_time"][-1])
    t_max = max(float(r["cum_time"][-1]) for r in runs)
    if t_max > 2.0 * t_gbm:
        for row in range(2):
            axes[row, 0].set_xlim(0.0, 2.0 * t_gbm)
        axes[0, 0].set_title(
            f"time axis cut at 2x GBM's total time ({2.0 * t_gbm:.3g} s); longest run {t_max:.3g} s", fontsize=9
        )
    gaps = np.concatenate([r["train_loss"] - best for r in runs])
    gaps = gaps[gaps > 0]
    if len(gaps):
        for col in range(2):
            axes[0, col].set_ylim(max(float(gaps.min()), 1e-12 * float(gaps.max())) / 2.0, 2.0 * float(gaps.max()))
    for col in range(2):
        axes[0, col].set_yscale("log")
        axes[0, col].set_ylabel("train loss - best train loss")
        axes[1, col].set_ylabel("test loss" + (" (reg. logistic)" if task == "classification" else " (1/2 MSE)"))
        for row in range(2):
            axes[row, col].set_xlabel("cumulative time (s, n_jobs=1)" if col == 0 else "passes = rounds * t / p")
            axes[row, col].grid(True, which="both", alpha=0.3)
    # test loss axes: clip the first rounds from f0 = 0 so the interesting part is visible
    finals = np.concatenate([r["test_loss"][len(r["test_loss"]) // 20 :] for r in runs])
    lo, hi = float(np.min(finals)), float(np.max(finals))
    pad = 0.1 * (hi - lo + 1e-12)
    for col in range(2):
        axes[1, col].set_ylim(lo - pad, hi + pad)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(
        f"RGBM Figure 5 protocol: {name} (n_train = {runs[0]['n_train']}, p = {p}); best train loss = {best:.6g}"
    )
    fig.tight_layout()
    _report.save_png(fig, png_path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- report
def fmt(x, digits=4):
    if x is None:
        return "-"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if x == 0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def dataset_table(name, task, runs, best, gap):
    p = runs[0]["p"]
    gbm = next(r for r in runs if r["t"] == p)
    level_a = float(gbm["train_loss"][-1])
    level_b = best + gap
    t_gbm = float(gbm["cum_time"][-1])
    err_name = "test error" if task == "classification" else "test MSE"
    obj_name = "test objective (reg. log-loss)" if task == "classification" else "test loss (MSE/2)"
    final_name = "test log-loss" if task == "classification" else "test loss (MSE/2)"
    lines = [
        f"Level A = final training loss of GBM (t = p = {p}) after its {gbm['rounds']} rounds = {level_a:.6g}. "
        f"Level B = best training loss over all runs + {gap:g} = {level_b:.6g}. "
        f'"loss @ GBM time" = training loss of each run after {t_gbm:.3g} s, the time GBM takes for its whole budget.',
        "",
        f"| t | rounds | time s (total) | time to A (s) | passes to A | {obj_name} @ A | {err_name} @ A | time to B (s) | passes to B | train loss @ GBM time | final train loss | final {final_name} | final {err_name} | min {err_name} (round) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = []
    for r in runs:
        ia = first_reach(r["train_loss"], level_a)
        ib = first_reach(r["train_loss"], level_b)
        k = int(np.searchsorted(r["cum_time"], t_gbm, side="right")) - 1
        loss_at_gbm_time = float(r["train_loss"][min(max(k, 0), r["rounds"] - 1)]) if k >= 0 else None
        imin = int(np.argmin(r["test_err"]))
        row = dict(
            t=r["t"],
            rounds=r["rounds"],
            total=float(r["cum_time"][-1]),
            ta=None if ia is None else float(r["cum_time"][ia]),
            pa=None if ia is None else float(r["passes"][ia]),
            tla=None if ia is None else float(r["test_loss"][ia]),
            tea=None if ia is None else float(r["test_err"][ia]),
            tb=None if ib is None else float(r["cum_time"][ib]),
            pb=None if ib is None else float(r["passes"][ib]),
            lgt=loss_at_gbm_time,
            ftl=float(r["train_loss"][-1]),
            fte=float(r["test_loss"][-1]),
            fer=float(r["test_err"][-1]),
            mer=float(r["test_err"][imin]),
            imer=imin + 1,
            final_logloss=float(r["final_plain_test_loss"]),
        )
        rows.append(row)
        suffix = "" if r["rounds"] == r["budget"] else f" (capped from {r['budget']})"
        lines.append(
            f"| {r['t']}{' (GBM)' if r['t'] == p else ''} | {r['rounds']}{suffix} | {fmt(row['total'], 3)} | "
            f"{fmt(row['ta'], 3) if ia is not None else 'not reached'} | {fmt(row['pa'], 3)} | {fmt(row['tla'])} | {fmt(row['tea'])} | "
            f"{fmt(row['tb'], 3) if ib is not None else 'not reached'} | {fmt(row['pb'], 3)} | {fmt(row['lgt'], 6)} | "
            f"{fmt(row['ftl'], 6)} | {fmt(row['final_logloss'])} | {fmt(row['fer'])} | {fmt(row['mer'])} ({row['imer']}) |"
        )
    return lines, rows, level_a, level_b


def verdict(name, task, runs, rows, level_a):
    p = runs[0]["p"]
    gbm = next(row for row in rows if row["t"] == p)
    mids = [row for row in rows if 1 < row["t"] < p]
    faster = [row for row in mids if row["ta"] is not None and row["ta"] < gbm["ta"]]
    if not faster:
        return f"- **{name}: does not hold.** No medium t reached level A ({level_a:.6g}) before GBM ({fmt(gbm['ta'], 3)} s)."
    best = min(faster, key=lambda r: r["ta"])
    err_name = "test error" if task == "classification" else "test MSE"
    d_err = best["tea"] - gbm["tea"]
    rel = d_err / gbm["tea"] if gbm["tea"] else 0.0
    rel_loss = (best["tla"] - gbm["tla"]) / gbm["tla"]
    kind = "holds" if err_ok(best["tea"], gbm["tea"]) else "holds for time, but test quality is worse"
    return (
        f"- **{name}: {kind}.** t = {best['t']} reaches level A in {fmt(best['ta'], 3)} s vs {fmt(gbm['ta'], 3)} s for GBM "
        f"({gbm['ta'] / best['ta']:.2g}x faster, {fmt(best['pa'], 3)} vs {fmt(gbm['pa'], 3)} passes); {err_name} at that point "
        f"{fmt(best['tea'])} vs GBM {fmt(gbm['tea'])} ({100 * rel:+.1f}%), test objective {fmt(best['tla'])} vs {fmt(gbm['tla'])} "
        f"({100 * rel_loss:+.1f}%); final {err_name} {fmt(best['fer'])} vs {fmt(gbm['fer'])}. "
        f"Medium t faster than GBM to A: {', '.join(str(r['t']) for r in faster)}."
    )


def err_ok(err, gbm_err):
    """ "No loss in test error": within 1% of GBM's (relative; exact when GBM's is 0)."""
    return err is not None and gbm_err is not None and err <= 1.01 * gbm_err + 1e-15


def spread(vals, digits=4):
    """'median (min..max)' over the seeds; None (level not reached) counts as +inf."""
    v = np.array([np.inf if x is None else float(x) for x in vals])

    def one(x):
        return "not reached" if not np.isfinite(x) else fmt(float(x), digits)

    if len(v) == 1 or not np.isfinite(v).any():
        return one(v[0])
    return f"{one(np.median(v))} ({one(v.min())}..{one(v.max())})"


def seed_summary(task, seeds):
    """Cross-seed table: seeds = [dict(split_seed, est_seed, rows, level_a, p, ...)], same t grid."""
    p = seeds[0]["p"]
    n = len(seeds)
    err_name = "test error" if task == "classification" else "test MSE"
    lines = [
        f"Over {n} seed{'s' if n > 1 else ''} (split seed / estimator `random_state`: "
        + ", ".join(f"{sd['split_seed']}/{sd['est_seed']}" for sd in seeds)
        + "). Each seed's level A = its own GBM's final training loss: "
        + ", ".join(f"{sd['level_a']:.6g}" for sd in seeds)
        + ". Cells: median (min..max) over the seeds; a seed that does not reach A counts as infinitely slow, "
        f"and the {err_name} @ A is over the seeds that reach it. "
        "\"speed-up\" = GBM's time to A / this t's time to A on the same seed (0 if not reached).",
        "",
        f"| t | reached A | time to A (s) | speed-up vs GBM | passes to A | {err_name} @ A | final train loss | final {err_name} |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in [row["t"] for row in seeds[0]["rows"]]:
        rs = [next(row for row in sd["rows"] if row["t"] == t) for sd in seeds]
        gbms = [next(row for row in sd["rows"] if row["t"] == p) for sd in seeds]
        speed = [0.0 if r["ta"] is None else g["ta"] / r["ta"] for r, g in zip(rs, gbms)]  # not reached: 0
        err_at_a = [r["tea"] for r in rs if r["tea"] is not None]
        lines.append(
            f"| {t}{' (GBM)' if t == p else ''} | {sum(r['ta'] is not None for r in rs)}/{n} | "
            f"{spread([r['ta'] for r in rs], 3)} | "
            f"{'1' if t == p else spread(speed, 2)} | "
            f"{spread([r['pa'] for r in rs], 3)} | {spread(err_at_a) if err_at_a else '-'} | "
            f"{spread([r['ftl'] for r in rs], 6)} | {spread([r['fer'] for r in rs])} |"
        )
    return lines


def cross_verdict(name, task, seeds):
    """The verdict counted over the seeds, from each seed's rows at its own level A."""
    from collections import Counter

    p = seeds[0]["p"]
    n = len(seeds)
    err_name = "test error" if task == "classification" else "test MSE"
    out = {}
    for axis, key in (("time", "ta"), ("passes", "pa")):
        hold, faster_any, fastest, ratios = 0, 0, Counter(), []
        for sd in seeds:
            gbm = next(row for row in sd["rows"] if row["t"] == p)
            mids = [row for row in sd["rows"] if 1 < row["t"] < p and row[key] is not None]
            faster = [row for row in mids if row[key] < gbm[key]]
            ok = [row for row in faster if err_ok(row["tea"], gbm["tea"])]
            faster_any += bool(faster)
            if ok:
                hold += 1
                best = min(ok, key=lambda r: r[key])
                fastest[best["t"]] += 1
                ratios.append(gbm[key] / best[key])
        out[axis] = (hold, faster_any, fastest, ratios)
    hold_t = out["time"][0]
    if hold_t == n:
        kind = f"holds on all {n} seed{'s' if n > 1 else ''}"
    elif hold_t == 0:
        kind = f"does not hold on any of the {n} seed{'s' if n > 1 else ''}"
    else:
        kind = f"holds on {hold_t} of {n} seeds"
    parts = []
    for axis in ("time", "passes"):
        hold, faster_any, fastest, ratios = out[axis]
        txt = (
            f"in {axis}: on {hold}/{n} seeds some medium t reaches A before t = p with {err_name} there within 1% of GBM's "
            f"(before t = p regardless of {err_name}: {faster_any}/{n})"
        )
        if fastest:
            top = fastest.most_common()
            tops = [t for t, c in top if c == top[0][1]]
            txt += (
                f"; fastest such t most often: t = {' / '.join(str(t) for t in sorted(tops, reverse=True))} "
                f"({top[0][1]}/{n} seeds; tally {', '.join(f't = {t}: {c}' for t, c in sorted(fastest.items(), reverse=True))})"
                f"; GBM's {axis} to A / the fastest such t's, on those seeds: {spread(ratios, 2)}"
            )
        parts.append(txt)
    return f"- **{name}: {kind} (time axis).** " + parts[0][0].upper() + "; ".join(parts)[1:] + "."


def git_rev():
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "?"


def run_grid(task, Xtr, ytr, Xte, yte, grid, args, seed):
    """Every t of the grid on one split with one estimator seed (what one seed of the protocol runs)."""
    runs = []
    for t, budget in grid:
        n_rounds = budget if args.max_rounds is None else min(budget, args.max_rounds)
        t0 = time.perf_counter()
        r = run_one(task, Xtr, ytr, Xte, yte, t, n_rounds, args.timing_reps, seed)
        r["budget"] = budget
        r["n_train"] = len(ytr)
        runs.append(r)
        print(
            f"  t = {t:5d}: {r['rounds']:7d} rounds, per-round median {1e3 * np.median(r['seconds']):.3f} ms "
            f"(recorded fit {1e3 * np.median(r['seconds_rec']):.3f} ms), fit wall {r['fit_wall']:.2f} s, "
            f"final train {r['train_loss'][-1]:.6g}, test {r['test_loss'][-1]:.6g}, err {r['test_err'][-1]:.4g}, "
            f"staged {r['staged_s']:.1f} s, total {time.perf_counter() - t0:.1f} s",
            flush=True,
        )
    return runs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["a9a", "colon-cancer", "california"])
    ap.add_argument(
        "--rounds", type=int, default=200, help="budget T of t = p (default 200, as in the reference README)"
    )
    ap.add_argument(
        "--rounds-for", action="append", default=[], metavar="NAME=T", help="per-dataset T, e.g. california=1000"
    )
    ap.add_argument("--timing-reps", type=int, default=3, help="timed fits per run; element-wise median (default 3)")
    ap.add_argument("--gap", type=float, default=1e-3, help="level B = best training loss + GAP")
    seeds_group = ap.add_mutually_exclusive_group()
    seeds_group.add_argument(
        "--split-seeds",
        type=int,
        nargs="+",
        default=None,
        metavar="S",
        help="one repetition of the protocol per value: its own 80/20 split (random_state=S); the i-th value's "
        "estimators get random_state = --seed + i (default: 40 only)",
    )
    seeds_group.add_argument("--split-seed", type=int, default=None, help="same as --split-seeds S (one seed)")
    ap.add_argument("--seed", type=int, default=0, help="random_state of the first seed's estimators (feature draws)")
    ap.add_argument("--max-rounds", type=int, default=None, help="cap on any run's budget")
    ap.add_argument("--data-dir", default=_report.DATA_DIR)
    ap.add_argument("--png-dir", default=os.path.join(REPO, "bench_out"))
    ap.add_argument("--write-md", default=None)
    args = ap.parse_args(argv)
    if args.split_seeds is not None:
        split_seeds = list(args.split_seeds)
    elif args.split_seed is not None:
        split_seeds = [args.split_seed]
    else:
        split_seeds = [40]
    if len(set(split_seeds)) != len(split_seeds):
        ap.error("--split-seeds: repeated value")
    if args.timing_reps < 1:
        ap.error("--timing-reps must be >= 1")
    seed_pairs = [(s, args.seed + i) for i, s in enumerate(split_seeds)]

    from sklearn.model_selection import train_test_split

    start = time.perf_counter()
    load0 = os.getloadavg()
    os.makedirs(args.png_dir, exist_ok=True)
    md = []
    verdicts = []
    capped = False
    rounds_for = {}
    for item in args.rounds_for:
        k, v = item.split("=")
        rounds_for[k] = int(v)
    for name in args.datasets:
        X, y, task, desc = load_dataset(name, args.data_dir)
        p = X.shape[1]
        T = rounds_for.get(name, args.rounds)
        grid = t_grid(p, T)
        seeds = []
        detail = None
        for split_seed, est_seed in seed_pairs:
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=split_seed)
            Xtr, Xte = np.ascontiguousarray(Xtr), np.ascontiguousarray(Xte)
            load_s = os.getloadavg()[0]
            t_seed = time.perf_counter()
            print(
                f"== {name}, split seed {split_seed}, random_state {est_seed}: n_train = {len(ytr)}, "
                f"n_test = {len(yte)}, p = {p}, grid {grid}, load {load_s:.2f}",
                flush=True,
            )
            runs = run_grid(task, Xtr, ytr, Xte, yte, grid, args, est_seed)
            best = float(min(np.min(r["train_loss"]) for r in runs))
            lines, rows, level_a, level_b = dataset_table(name, task, runs, best, args.gap)
            seeds.append(
                dict(
                    split_seed=split_seed,
                    est_seed=est_seed,
                    rows=rows,
                    level_a=level_a,
                    p=p,
                    load=load_s,
                    wall=time.perf_counter() - t_seed,
                )
            )
            print(f"  seed {split_seed} done in {seeds[-1]['wall']:.1f} s", flush=True)
            if detail is None:  # the first seed: detailed table and plot
                png = os.path.join(args.png_dir, f"rgbm_figure5_{name}.png")
                plot_dataset(name, task, runs, best, png)
                print(f"  wrote {png}", flush=True)
                detail = dict(
                    lines=lines,
                    runs=runs,
                    rows=rows,
                    level_a=level_a,
                    png=png,
                    n_train=len(ytr),
                    n_test=len(yte),
                    split_seed=split_seed,
                    est_seed=est_seed,
                )
        n_s = len(seeds)
        capped = capped or any(r["rounds"] < r["budget"] for r in detail["runs"])
        md.append(f"## {name}")
        md.append("")
        md.append(
            f"Data: {desc}; n = {len(y)} -> {detail['n_train']} train / {detail['n_test']} test, p = {p}; task: {task}"
            + (" (regularized logistic, d = 1e-4)" if task == "classification" else " (squared loss, target in $100k)")
            + f". T = {T}. Grid (t, budget): {', '.join(f'{t}: {b}' for t, b in grid)}."
        )
        md.append("")
        md.append(f"### Across seeds ({n_s})")
        md.append("")
        md.extend(seed_summary(task, seeds))
        md.append("")
        md.append(
            "Per seed: "
            + "; ".join(f"{sd['split_seed']}: {sd['wall']:.1f} s wall, load {sd['load']:.2f} at start" for sd in seeds)
            + "."
        )
        md.append("")
        md.append(
            f"### Split seed {detail['split_seed']}, `random_state={detail['est_seed']}`"
            + (" (first seed; detailed table and plot for this seed only)" if n_s > 1 else "")
        )
        md.append("")
        md.extend(detail["lines"])
        md.append("")
        md.append(
            "Per-round time (median over rounds, ms; timed fits without / with `record_train_loss`): "
            + "; ".join(
                f"t = {r['t']}: {1e3 * np.median(r['seconds']):.3g} / {1e3 * np.median(r['seconds_rec']):.3g}"
                for r in detail["runs"]
            )
            + "."
        )
        md.append("")
        png = detail["png"]
        md.append(
            f"![{name}]({os.path.relpath(png, os.path.dirname(os.path.abspath(args.write_md)) if args.write_md else REPO)})"
        )
        md.append("")
        verdicts.append(cross_verdict(name, task, seeds))
        verdicts.append(
            "  - Split seed "
            + str(detail["split_seed"])
            + " in detail: "
            + verdict(name, task, detail["runs"], detail["rows"], detail["level_a"])[2:]
        )
    total = time.perf_counter() - start
    load1 = os.getloadavg()
    cmd = "python " + " ".join(
        shlex.quote(a) for a in [os.path.relpath(os.path.abspath(sys.argv[0]), REPO)] + sys.argv[1:]
    )
    head = (
        [
            "# RGBM (Lu & Mazumder), Figure 5 protocol",
            "",
            f"- Date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
            f"- Command (from the repo root): `{cmd}`",
            f"- rgbm_rs revision: {git_rev()} (working tree, may include uncommitted changes)",
            f"- Seeds: {len(seed_pairs)}; split seeds {', '.join(str(s) for s, _ in seed_pairs)} (each its own 80/20 "
            f"`train_test_split(test_size=0.2, random_state=s)`), estimator `random_state` = --seed + i = "
            f"{', '.join(str(e) for _, e in seed_pairs)}. Timing reps: {args.timing_reps} (element-wise median). "
            f"Detailed tables and plots are for the first seed; the across-seed tables and the verdict use all of them.",
            f'- Settings: stumps (`max_depth=1`), `max_bins=100`, `step="constant"` (1/sigma: 3.9984 logistic, 1 squared), '
            f'`gain="gradient", leaf="gradient"`, `init="zero"`, `min_samples_leaf=1, min_child_weight=0`, '
            f'`selection="groups", selection_size=t`, **`n_jobs=1`**. '
            f"t grid int(p^(k/4)), k = 4..0 (duplicates dropped); budget of t = p: T = {args.rounds} rounds"
            + "".join(f" ({k}: {v})" for k, v in rounds_for.items())
            + "; "
            "the k-th grid value gets T * p^(k/4) rounds (T * p^(1/4) per grid step), so each run scans about T * p features"
            + ("" if args.max_rounds is None else f"; cap {args.max_rounds} rounds")
            + ".",
            f'- Time axis: cumulative `training_log_["seconds"]` of fits with `record_train_loss=False`, element-wise median of '
            f"{args.timing_reps} fit{'s' if args.timing_reps > 1 else ''} (the loss-recording fit, same seed and same stumps, "
            f"adds the loss evaluation to every round). Binning and Python overhead are outside the per-round times.",
            f"- Machine: {os.cpu_count()} cores, shared; load average {load0[0]:.2f} at start, {load1[0]:.2f} at end "
            f"(1-min; other jobs may have been running). Total wall time {total:.0f} s ({total / 60:.1f} min).",
            "- Test loss = the training objective on the test rows (regularized logistic / squared loss /2) in the plots; "
            "the tables' final test loss for classification is the plain log-loss (no ridge term).",
            "",
            '## Verdict: "a medium t reaches a given training loss in less time than t = p, with no loss in test error"',
            "",
            "Checked per seed at level A (that seed's GBM final training loss), for medium t (1 < t < p); "
            '"no loss" = test error/MSE at the point it reaches A within 1% of GBM\'s (GBM reaches A at its last '
            "round). Counted over the seeds on the time axis and, separately, on the timing-independent passes axis "
            "(rounds * t / p).",
            "",
        ]
        + (
            [
                f"**--max-rounds {args.max_rounds} cut some budgets: the smaller t get fewer rounds than the protocol "
                "gives them, so this run does not test the claim.**",
                "",
            ]
            if capped
            else []
        )
        + verdicts
        + [""]
    )
    text = "\n".join(head + md)
    print(text)
    if args.write_md:
        os.makedirs(os.path.dirname(os.path.abspath(args.write_md)), exist_ok=True)
        with open(args.write_md, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        print(f"wrote {args.write_md}")
    print(f"total runtime {total:.1f} s")


if __name__ == "__main__":
    main()
