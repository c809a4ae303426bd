"""The papers' diagnostics in training_log_, checked against hand computations."""

import math

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor
from rgbm_rs.theory import type1_theta


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _ratios(leaf, g, h, u, w):
    """gamma, gamma*, cosine of a tree with leaves `leaf`, outputs `u` per
    row, on per-row gradients g, hessians h and weights w (weighted inner
    product; the fit's gradients carry the weight: w*g, w*h)."""
    gw, hw = w * g, w * h
    fit_w = fit_h = inner = norm_u = 0.0
    for lo in np.unique(leaf):
        m = leaf == lo
        G, H, W = gw[m].sum(), hw[m].sum(), w[m].sum()
        fit_w += G * G / W
        fit_h += G * G / H
        inner += u[m][0] * G
        norm_u += u[m][0] ** 2 * W
    total_w = (gw * gw / w).sum()
    total_h = (gw * gw / hw).sum()
    return fit_w / total_w, fit_h / total_h, abs(inner) / math.sqrt(norm_u * total_w)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("gain,leaf", [("newton", "newton"), ("gradient", "newton"), ("gradient", "gradient")])
def test_gamma_gamma_star_and_cosine_match_a_hand_computation(weighted, gain, leaf):
    X, y = _data()
    w = np.random.default_rng(1).uniform(0.2, 3.0, size=len(y)) if weighted else np.ones(len(y))
    est = RGBMClassifier(
        n_estimators=3, max_leaves=6, gain=gain, leaf=leaf, init="zero", min_samples_leaf=5, random_state=0
    ).fit(X, y, sample_weight=w if weighted else None)
    log = est.training_log_
    leaves = est.apply(X)
    staged = [np.zeros(len(y))] + list(est.staged_decision_function(X))
    # Only relative weights matter: the fit normalises them to mean 1.
    w = w / w.mean()
    for r in range(3):
        f = staged[r]
        p = 1.0 / (1.0 + np.exp(-f))
        g, h = p - y, p * (1 - p)
        u = staged[r + 1] - staged[r]  # the round's tree output on each row
        gamma, star, cosine = _ratios(leaves[:, r], g, h, u, w)
        assert log["gamma"][r] == pytest.approx(gamma, rel=1e-9)
        assert log["gamma_star"][r] == pytest.approx(star, rel=1e-9)
        assert log["cosine"][r] == pytest.approx(cosine, rel=1e-9)
        assert 0 < log["gamma"][r] <= 1 and 0 < log["gamma_star"][r] <= 1
    assert log["theta"] == list(np.minimum.accumulate(log["cosine"]))
    if leaf == "gradient":
        # A least-squares tree's cosine is sqrt(gamma).
        np.testing.assert_allclose(np.square(log["cosine"]), log["gamma"], rtol=1e-9)


def test_gamma_star_is_undefined_where_the_hessian_is_not_positive():
    # The SLA loss curves down on rows with margin y*f <= 0 (h = 0 at f = 0):
    # gamma* is then undefined, gamma is not.
    X, y = _data(400, 2)
    X = X[np.abs(X[:, 0]) > 0.3]
    y = (X[:, 0] > 0).astype(int)  # separable: the margins all turn positive
    # min_data_in_bin=1: a bin of its own for every value, so a cut lies in the gap at 0.
    est = RGBMClassifier(
        loss="sla01",
        gain="gradient",
        leaf="gradient",
        n_estimators=40,
        init="zero",
        learning_rate=1.0,
        min_data_in_bin=1,
    ).fit(X, y)
    starts = [np.zeros(len(y))] + list(est.staged_decision_function(X))[:-1]
    curved_down = [bool(np.any((2 * y - 1) * f <= 0)) for f in starts]
    assert curved_down[0] and not curved_down[-1]
    assert [v is None for v in est.training_log_["gamma_star"]] == curved_down
    assert all(v is not None for v in est.training_log_["gamma"])


def test_rgb_reports_omega_and_the_theorem_2_complexity_term():
    X, y = _data(500, 3)
    d, m = X.shape[1], len(y)
    nodes, lambdas = [1, 3, 15], [0.1, 1.0, 4.0]
    est = RGBMClassifier(
        booster="rgb", n_estimators=25, max_depth=None, rgb_nodes=nodes, rgb_lambdas=lambdas, random_state=0
    ).fit(X, y)
    log = est.training_log_

    def bound(n, lam):
        return lam * math.sqrt((4 * n + 2) * math.log2(d + 2) * math.log(m + 1) / m)

    top = max(bound(n, lam) for n in nodes for lam in lambdas)
    for r in range(25):
        n, lam = log["rgb_nodes"][r], log["rgb_lambda"][r]
        assert log["rgb_omega"][r] == pytest.approx(bound(n, lam) / top, rel=1e-12)
        assert log["rgb_complexity"][r] == pytest.approx(abs(log["step"][r]) * bound(n, lam), rel=1e-12)
    assert est.rgb_complexity_ == pytest.approx(sum(log["rgb_complexity"]), rel=1e-12)
    # The argmin candidate's leaves lie on the family's sphere: ||leaf values|| = |alpha| * lambda.
    trees = est._to_document()["model"]["trees"]
    for r in range(25):
        norm = np.linalg.norm(trees[r]["leaf_value"])
        assert norm == pytest.approx(abs(log["step"][r]) * log["rgb_lambda"][r], rel=1e-9)


def test_rgb_complexity_counts_the_kept_rounds_only():
    X, y = _data(600, 4)
    est = RGBMClassifier(
        booster="rgb",
        n_estimators=200,
        max_depth=None,
        rgb_nodes=[7],
        rgb_lambdas=[4.0],
        rgb_beta=0.0,
        early_stopping_rounds=3,
        validation_fraction=0.3,
        random_state=0,
    ).fit(X, y)
    kept = est.best_iteration_
    assert kept < len(est.training_log_["rgb_complexity"])
    assert est.rgb_complexity_ == pytest.approx(sum(est.training_log_["rgb_complexity"][:kept]), rel=1e-12)


def test_sglb_records_the_nonconvex_training_loss_it_descends():
    X, y = _data(400, 5)
    est = RGBMClassifier(
        loss="sla01",
        gain="gradient",
        leaf="gradient",
        langevin=True,
        temperature=1e3,
        learning_rate=0.1,
        n_estimators=20,
        init="zero",
        record_train_loss=True,
        random_state=0,
    ).fit(X, y)
    # SLA loss of the scores the model holds after each round, recomputed.
    scale = 0.1  # sla_scale's default
    for r, f in enumerate(est.staged_decision_function(X)):
        margin = (2 * y - 1) * f
        sla = np.mean(1.0 / (1.0 + np.exp(margin / scale)))
        assert est.training_log_["train_loss"][r] == pytest.approx(sla, rel=1e-9)


def test_type1_theta_matches_formula_18():
    for p in (1, 2, 7, 20):
        for t in range(1, p + 1):
            gamma = [math.comb(p - j, t - 1) / math.comb(p, t) for j in range(1, p + 1)]
            want = min(sum(gamma[:i]) / math.sqrt(i) for i in range(1, p + 1))
            assert type1_theta(p, t) == pytest.approx(want, rel=1e-12)
    assert type1_theta(100, 100) == pytest.approx(0.1)
    assert type1_theta(100, 1) == pytest.approx(0.01)
    # Remark 4.2: about 1/sqrt(p) when p <= t^2, about t/p otherwise.
    assert type1_theta(10_000, 10) < 3 * 10 / 10_000
    with pytest.raises(ValueError, match="t must be in"):
        type1_theta(5, 6)
    with pytest.raises(TypeError, match="p must be an int"):
        type1_theta(5.0, 2)


def test_the_argmin_candidate_is_the_default_and_refuses_newton_settings():
    X, y = _data()
    with pytest.raises(ValueError, match="rgb_candidate='projected'"):
        RGBMClassifier(booster="rgb", gain="gradient", n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="rgb_candidate='projected'"):
        RGBMRegressor(booster="rgb", reg_lambda=1.0, n_estimators=2).fit(X, y)
    old = RGBMClassifier(booster="rgb", rgb_candidate="projected", gain="gradient", n_estimators=3).fit(X, y)
    new = RGBMClassifier(booster="rgb", n_estimators=3).fit(X, y)
    assert not np.array_equal(old.decision_function(X), new.decision_function(X))
    with pytest.raises(ValueError, match="rgb_candidate"):
        RGBMClassifier(rgb_candidate="argmin", n_estimators=2).fit(X, y)


def test_diagnostic_plots_draw_the_logged_values():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from rgbm_rs.plotting import plot_cosine, plot_rgb_families, plot_weak_learnability

    X, y = _data()
    est = RGBMClassifier(n_estimators=15, random_state=0).fit(X, y)
    ax = plot_weak_learnability(est)
    lines = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    np.testing.assert_allclose(lines["gamma"], est.training_log_["gamma"])
    np.testing.assert_allclose(lines["gamma*"], est.training_log_["gamma_star"])
    ax = plot_cosine(est, theta=type1_theta(40, 4))
    lines = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    np.testing.assert_allclose(lines["running minimum"], est.training_log_["theta"])
    assert "reference" in lines
    rgb = RGBMClassifier(booster="rgb", n_estimators=20, max_depth=None, random_state=0).fit(X, y)
    ax = plot_rgb_families(rgb)
    shown = sorted(int(t.get_text()) for t in ax.texts)
    assert shown == sorted(rgb.rgb_family_counts_.values())
    with pytest.raises(ValueError, match="rgb_family_counts_"):
        plot_rgb_families(est)
    with pytest.raises(ValueError, match="fit it first"):
        plot_cosine(RGBMClassifier())
