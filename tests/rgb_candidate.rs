//! RGB's candidate is its family's best member (Algorithm 1, line 4),
//! checked by brute force on tiny data: over leaf vectors in the λ ball, over
//! every stump, and node by node for greedily grown trees.
mod common;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rgbm_rs::cancel::Cancel;
use rgbm_rs::params::{BoosterKind, BoosterParams, Init, Loss, RgbCandidate, RgbStep};
use rgbm_rs::tree::Tree;
use rgbm_rs::{DenseMatrix, Model};

const P: usize = 3;

/// Row-major integer features in 0..12 (every value its own bin) and a
/// target with a skewed distribution, so leaves get unequal sizes.
fn data(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<f64> = (0..n * P)
        .map(|_| (rng.random::<f64>() * 12.0).floor())
        .collect();
    let y = x
        .chunks(P)
        .map(|r| {
            let spike = if r[0] >= 10.0 { 4.0 } else { 0.0 };
            spike + 0.3 * r[1] - 0.2 * r[2] - 1.5 + rng.random_range(-0.5..0.5)
        })
        .collect();
    (x, y)
}

/// One RGB round from F = 0 on the squared loss (σ = 1, g_i = −y_i) with
/// one family (n splits, radius λ).
fn one_family(splits: usize, lambda: f64, step: RgbStep, candidate: RgbCandidate) -> BoosterParams {
    BoosterParams {
        booster: BoosterKind::Rgb,
        loss: Loss::Squared,
        n_estimators: 1,
        max_depth: None,
        min_samples_leaf: 1,
        init: Init::Zero,
        rgb_nodes: Some(vec![splits]),
        rgb_lambdas: Some(vec![lambda]),
        rgb_candidates: 1,
        rgb_beta: 0.0,
        rgb_step: Some(step),
        rgb_candidate: Some(candidate),
        // Every distinct value a threshold, as the brute-force oracles try.
        min_data_in_bin: Some(1),
        ..Default::default()
    }
}

/// The model and step of `one_family`'s round on (x, y).
fn one_round(
    x: &[f64],
    y: &[f64],
    splits: usize,
    lambda: f64,
    step: RgbStep,
    candidate: RgbCandidate,
) -> (Model, f64) {
    let params = one_family(splits, lambda, step, candidate);
    let m = DenseMatrix::row_major(x, y.len(), P).unwrap();
    let t = common::trained(&params, &m, y, None).unwrap();
    let alpha = t.log[0].step;
    (t.model, alpha)
}

/// Each row's leaf in the model's first tree.
fn leaves(model: &Model, x: &[f64], n: usize) -> Vec<usize> {
    let m = DenseMatrix::row_major(x, n, P).unwrap();
    let idx = model
        .predict_leaves_cancellable(&m, &Cancel::never())
        .unwrap();
    idx.iter()
        .step_by(model.trees.len())
        .map(|&l| l as usize)
        .collect()
}

/// Per-leaf gradient sums G_l and row counts n_l with g_i = −y_i.
fn leaf_sums(tree: &Tree, leaf_of: &[usize], y: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let k = tree.leaf_value.len();
    let (mut g, mut n) = (vec![0.0; k], vec![0.0; k]);
    for (&l, &yi) in leaf_of.iter().zip(y) {
        g[l] -= yi;
        n[l] += 1.0;
    }
    (g, n)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(u, v)| u * v).sum()
}

/// Under the Lipschitz step the leaves sit on the λ sphere along −G, the
/// update is the closed form −λ·G_l/(m·σ), and no leaf vector in the ball
/// (a grid and random points) has a larger first-order decrease |Σ w_l G_l|.
/// The projected Newton tree reaches less.
#[test]
fn lipschitz_leaves_are_the_best_vector_in_the_ball() {
    for seed in 0..4 {
        let n = 60;
        let (x, y) = data(n, seed);
        let lambda = 0.7;
        let (model, alpha) = one_round(&x, &y, 3, lambda, RgbStep::Lipschitz, RgbCandidate::Argmin);
        let tree = &model.trees[0];
        let leaf_of = leaves(&model, &x, n);
        let (g, _) = leaf_sums(tree, &leaf_of, &y);
        let w: Vec<f64> = tree.leaf_value.iter().map(|v| v / alpha).collect();
        let norm = dot(&w, &w).sqrt();
        assert!((norm - lambda).abs() < 1e-12, "‖w‖ = {norm}");
        let gnorm = dot(&g, &g).sqrt();
        for (l, (&wl, &gl)) in w.iter().zip(&g).enumerate() {
            assert!((wl + lambda * gl / gnorm).abs() < 1e-12, "leaf {l}");
            // F_l = α·w_l = −λ·G_l/(m·σ), σ = 1.
            let closed = -lambda * gl / n as f64;
            assert!((tree.leaf_value[l] - closed).abs() < 1e-12, "leaf {l}");
        }
        let best = dot(&w, &g).abs();
        let k = w.len();
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let steps = 16;
        let mut point = vec![0.0; k];
        for code in 0..(2 * steps + 1usize).pow(k as u32) {
            let mut c = code;
            for v in point.iter_mut() {
                *v = lambda * ((c % (2 * steps + 1)) as f64 - steps as f64) / steps as f64;
                c /= 2 * steps + 1;
            }
            if dot(&point, &point) <= lambda * lambda {
                assert!(dot(&point, &g).abs() <= best * (1.0 + 1e-12));
            }
        }
        for _ in 0..20_000 {
            point
                .iter_mut()
                .for_each(|v| *v = rng.random_range(-1.0..1.0));
            let r = lambda * rng.random::<f64>().sqrt() / dot(&point, &point).sqrt();
            point.iter_mut().for_each(|v| *v *= r);
            assert!(dot(&point, &g).abs() <= best * (1.0 + 1e-12));
        }
        // The Newton tree scaled into the ball on the same data.
        let (old, old_alpha) = one_round(
            &x,
            &y,
            3,
            lambda,
            RgbStep::Lipschitz,
            RgbCandidate::Projected,
        );
        let old_leaf = leaves(&old, &x, n);
        let (og, _) = leaf_sums(&old.trees[0], &old_leaf, &y);
        let ow: Vec<f64> = old.trees[0]
            .leaf_value
            .iter()
            .map(|v| v / old_alpha)
            .collect();
        assert!(dot(&ow, &og).abs() < best, "seed {seed}");
    }
}

/// Σ_l G_l² (Lipschitz) or Σ_l G_l²/n_l (exact) of splitting `rows` at
/// every threshold of every feature: the best value, brute force.
fn best_split_score(x: &[f64], y: &[f64], rows: &[usize], step: RgbStep) -> f64 {
    let score = |g: f64, n: f64| match step {
        RgbStep::Lipschitz => g * g,
        RgbStep::Exact => g * g / n,
    };
    let mut best = f64::NEG_INFINITY;
    for f in 0..P {
        for t in 0..12 {
            let (mut gl, mut nl, mut gr, mut nr) = (0.0, 0.0, 0.0, 0.0);
            for &i in rows {
                if x[i * P + f] <= t as f64 + 0.5 {
                    gl -= y[i];
                    nl += 1.0;
                } else {
                    gr -= y[i];
                    nr += 1.0;
                }
            }
            if nl > 0.0 && nr > 0.0 {
                best = best.max(score(gl, nl) + score(gr, nr));
            }
        }
    }
    best
}

/// The rows reaching each node of `tree` (internal nodes by index).
fn node_rows(tree: &Tree, x: &[f64], n: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); tree.feature.len()];
    for i in 0..n {
        let row = &x[i * P..(i + 1) * P];
        let mut node = 0usize;
        loop {
            out[node].push(i);
            let next = if tree.goes_left(node, row[tree.feature[node] as usize]) {
                tree.left[node]
            } else {
                tree.right[node]
            };
            if next < 0 {
                break;
            }
            node = next as usize;
        }
    }
    out
}

/// A stump's split is the best of all splits (brute force) by the family's
/// criterion; a deeper tree is grown greedily by the same criterion: every
/// node's split is the best split of its rows. Under the exact step the
/// leaves are the per-row mean gradients, −G_l/n_l, scaled.
#[test]
fn structures_maximise_the_family_criterion_split_by_split() {
    for step in [RgbStep::Lipschitz, RgbStep::Exact] {
        let mut full_depth = 0;
        for seed in 0..6 {
            let n = 50;
            let (x, y) = data(n, 10 + seed);
            for splits in [1, 4] {
                let (model, alpha) = one_round(&x, &y, splits, 1.3, step, RgbCandidate::Argmin);
                let tree = &model.trees[0];
                assert!(tree.feature.len() <= splits, "{step:?} seed {seed}");
                full_depth += usize::from(splits > 1 && tree.feature.len() == splits);
                let leaf_of = leaves(&model, &x, n);
                let (g, cnt) = leaf_sums(tree, &leaf_of, &y);
                if tree.feature.len() < splits {
                    // Growth stopped early: no leaf has a split that raises the
                    // criterion (under Lipschitz, children whose sums share a
                    // sign lower Σ G_l²).
                    for (l, (&gl, &nl)) in g.iter().zip(&cnt).enumerate() {
                        let rows: Vec<usize> = (0..n).filter(|&i| leaf_of[i] == l).collect();
                        let own = match step {
                            RgbStep::Lipschitz => gl * gl,
                            RgbStep::Exact => gl * gl / nl,
                        };
                        let best = best_split_score(&x, &y, &rows, step);
                        assert!(
                            best <= own * (1.0 + 1e-9) + 1e-12,
                            "leaf {l}: {best} > {own}"
                        );
                    }
                }
                for (node, rows) in node_rows(tree, &x, n).iter().enumerate() {
                    let (mut sides, mut counts) = ([0.0; 2], [0.0; 2]);
                    for &i in rows {
                        let f = tree.feature[node] as usize;
                        let s = usize::from(!tree.goes_left(node, x[i * P + f]));
                        sides[s] -= y[i];
                        counts[s] += 1.0;
                    }
                    let chosen: f64 = match step {
                        RgbStep::Lipschitz => sides.iter().map(|g| g * g).sum(),
                        RgbStep::Exact => (0..2).map(|s| sides[s] * sides[s] / counts[s]).sum(),
                    };
                    let best = best_split_score(&x, &y, rows, step);
                    assert!(
                        chosen >= best * (1.0 - 1e-12),
                        "{step:?} seed {seed} node {node}: {chosen} < {best}"
                    );
                }
                if step == RgbStep::Exact {
                    // w_l ∝ −G_l/n_l with a positive factor.
                    let ratios: Vec<f64> = tree
                        .leaf_value
                        .iter()
                        .zip(g.iter().zip(&cnt))
                        .filter(|(_, (gl, _))| gl.abs() > 1e-9)
                        .map(|(v, (gl, nl))| (v / alpha) / (-gl / nl))
                        .collect();
                    assert!(ratios[0] > 0.0);
                    for r in &ratios {
                        assert!((r - ratios[0]).abs() < 1e-9 * ratios[0], "{ratios:?}");
                    }
                }
            }
        }
        // The node-by-node check saw trees that used their whole budget.
        assert!(full_depth >= 3, "{step:?}: {full_depth} full trees");
    }
}

/// The argmin candidate has its own gain and leaves: the fit's are refused,
/// and the projected candidate still takes them.
#[test]
fn the_argmin_candidate_refuses_gain_leaf_and_l2_settings() {
    let (x, y) = data(40, 1);
    let m = DenseMatrix::row_major(&x, y.len(), P).unwrap();
    let base = BoosterParams {
        booster: BoosterKind::Rgb,
        n_estimators: 2,
        max_depth: None,
        ..Default::default()
    };
    for bad in [
        BoosterParams {
            gain: rgbm_rs::params::Mode::Gradient,
            ..base.clone()
        },
        BoosterParams {
            reg_lambda: 1.0,
            ..base.clone()
        },
    ] {
        let Err(e) = common::trained(&bad, &m, &y, None) else {
            panic!("{bad:?} was accepted");
        };
        assert!(e.to_string().contains("rgb_candidate='projected'"), "{e}");
        let projected = BoosterParams {
            rgb_candidate: Some(RgbCandidate::Projected),
            ..bad
        };
        assert!(common::trained(&projected, &m, &y, None).is_ok());
    }
}

/// The argmin candidate keeps the fit's hessian floor: a stump's split is
/// the best by Σ_l G_l² among the thresholds whose sides both hold a
/// hessian sum of at least `min_child_weight` (brute force; under the
/// squared loss a row's hessian is its weight, normalised to mean 1), and
/// with the floor at 0 the best among all thresholds.
#[test]
fn the_argmin_candidate_honours_the_hessian_floor() {
    let mut floored_elsewhere = 0;
    for seed in 0..8u64 {
        let n = 40;
        let (x, y) = data(n, 40 + seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let w: Vec<f64> = (0..n).map(|_| rng.random_range(0.05..3.0)).collect();
        let mean = w.iter().sum::<f64>() / n as f64;
        let m = DenseMatrix::row_major(&x, n, P).unwrap();
        let mut chosen = Vec::new();
        for floor in [0.0, 8.0] {
            let params = BoosterParams {
                min_child_weight: floor,
                ..one_family(1, 1.0, RgbStep::Lipschitz, RgbCandidate::Argmin)
            };
            let model = common::trained(&params, &m, &y, Some(&w)).unwrap().model;
            let tree = &model.trees[0];
            assert_eq!(tree.feature.len(), 1, "seed {seed} floor {floor}");
            let (f, mut best) = (tree.feature[0] as usize, (f64::NEG_INFINITY, 0, 0.0));
            // Every threshold of every feature, with its sides' sums.
            for feature in 0..P {
                for t in 0..12 {
                    let (mut g, mut h) = ([0.0; 2], [0.0; 2]);
                    for i in 0..n {
                        let s = usize::from(x[i * P + feature] > t as f64 + 0.5);
                        g[s] -= w[i] * y[i];
                        h[s] += w[i] / mean;
                    }
                    if h[0].min(h[1]) >= floor.max(1e-12) {
                        let score = g[0] * g[0] + g[1] * g[1];
                        if score > best.0 {
                            best = (score, feature, t as f64 + 0.5);
                        }
                    }
                }
            }
            let (mut g, mut h) = ([0.0; 2], [0.0; 2]);
            for i in 0..n {
                let s = usize::from(!tree.goes_left(0, x[i * P + f]));
                g[s] -= w[i] * y[i];
                h[s] += w[i] / mean;
            }
            assert!(
                h[0].min(h[1]) >= floor,
                "seed {seed}: sides {h:?} under {floor}"
            );
            let score = g[0] * g[0] + g[1] * g[1];
            assert!(
                (score - best.0).abs() <= 1e-9 * best.0,
                "seed {seed} floor {floor}: {score} vs best {best:?}"
            );
            chosen.push(tree.feature[0] as usize * 100 + tree.threshold[0] as usize);
        }
        floored_elsewhere += usize::from(chosen[0] != chosen[1]);
    }
    // The floor moved some stumps: the test saw it bind.
    assert!(
        floored_elsewhere >= 2,
        "{floored_elsewhere} of 8 stumps moved"
    );
}
