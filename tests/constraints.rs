//! Monotone and interaction constraints, checked on trained models: the
//! predictions along each constrained feature (the others fixed) never move
//! against its direction, and every root-to-leaf path stays within one
//! interaction set, for every booster.
mod common;

use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rgbm_rs::params::{
    BoosterKind, BoosterParams, Loss, Mode, Selection, SelectionScope, SelectionSize, Step,
};
use rgbm_rs::tree::Tree;
use rgbm_rs::{DenseMatrix, Model};

const P: usize = 4;

fn fit(params: &BoosterParams, x: &[f64], y: &[f64]) -> Model {
    let m = DenseMatrix::row_major(x, y.len(), P).unwrap();
    common::trained(params, &m, y, None)
        .map(|t| t.model)
        .unwrap()
}

/// The boosters and options a constraint must hold under.
const KINDS: usize = 10;

fn kind_name(kind: usize) -> &'static str {
    [
        "newton depth-wise",
        "best-first line search",
        "gradient leaves, constant step",
        "RGBM random selection (tree), subsample",
        "RGBM groups (node)",
        "RGB",
        "SGLB",
        "quantile (renewed leaves)",
        "softmax",
        "logistic, gradient gain",
    ][kind]
}

/// Data and parameters of booster `kind`: the target rises with x0, falls
/// with x1 and is not monotone in x2 (so constraints have work to do).
fn problem(kind: usize, seed: u64) -> (BoosterParams, Vec<f64>, Vec<f64>) {
    let n = 400;
    let x = common::features(n, P, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xabc);
    let signal: Vec<f64> = x
        .chunks(P)
        .map(|r| {
            let v = |j: usize| if r[j].is_nan() { 0.0 } else { r[j] };
            v(0) - 0.7 * v(1) + (2.0 * v(2)).sin() + 0.5 * v(3) * v(0) + rng.random_range(-0.5..0.5)
        })
        .collect();
    let mut p = BoosterParams {
        n_estimators: 12,
        learning_rate: 0.3,
        max_depth: Some(4),
        min_samples_leaf: 5,
        random_state: seed,
        ..Default::default()
    };
    let mut y = signal.clone();
    match kind {
        0 => {}
        1 => {
            (p.max_depth, p.max_leaves, p.step) = (None, Some(12), Step::LineSearch);
        }
        2 => (p.leaf, p.step) = (Mode::Gradient, Step::Constant),
        3 => {
            p.selection = Selection::Random;
            p.selection_size = Some(SelectionSize::Fraction(0.3));
            p.subsample = 0.7;
        }
        4 => {
            p.selection = Selection::Groups;
            p.selection_size = Some(SelectionSize::Count(2));
            p.selection_scope = SelectionScope::Node;
        }
        5 => {
            (p.booster, p.max_depth, p.rgb_nodes) = (BoosterKind::Rgb, None, Some(vec![2, 8, 16]));
        }
        6 => (p.langevin, p.temperature, p.reg_lambda) = (true, 50.0, 1.0),
        7 => (p.loss, p.alpha) = (Loss::Quantile, Some(0.7)),
        8 => {
            (p.loss, p.n_classes) = (Loss::Softmax, Some(3));
            y = signal
                .iter()
                .map(|s| {
                    if *s < -0.5 {
                        0.0
                    } else if *s < 0.5 {
                        1.0
                    } else {
                        2.0
                    }
                })
                .collect();
        }
        _ => {
            (p.loss, p.gain) = (Loss::Logistic, Mode::Gradient);
            y = signal.iter().map(|s| f64::from(*s > 0.0)).collect();
        }
    }
    (p, x, y)
}

/// Every threshold of feature `j` in the model, and a value on either side
/// of it, plus a grid: the prediction is constant between them.
fn grid(model: &Model, j: usize) -> Vec<f64> {
    let mut g: Vec<f64> = (0..=40).map(|k| -2.5 + 5.0 * k as f64 / 40.0).collect();
    for t in &model.trees {
        for k in 0..t.feature.len() {
            if t.feature[k] as usize == j {
                let th = t.threshold[k];
                g.extend([th, th - 1e-9, th + 1e-9]);
            }
        }
    }
    g.sort_by(f64::total_cmp);
    g.dedup();
    g
}

/// For rows of `x` with every other feature fixed, the raw scores of every
/// output along feature j's grid move only in direction `dir`. Exact: leaf
/// values are ordered exactly and sums and positive scalings of ordered
/// numbers round in order.
fn check_monotone(model: &Model, x: &[f64], constraints: &[i8]) -> Result<(), String> {
    let k_out = model.n_outputs;
    for (j, &dir) in constraints.iter().enumerate() {
        if dir == 0 {
            continue;
        }
        let g = grid(model, j);
        for row in x.chunks(P).step_by(13) {
            let mut probe = Vec::with_capacity(g.len() * P);
            for &v in &g {
                let mut r = row.to_vec();
                r[j] = v;
                probe.extend(r);
            }
            let m = DenseMatrix::row_major(&probe, g.len(), P).unwrap();
            let raw = model.predict_raw(&m, None).unwrap();
            for k in 0..k_out {
                for i in 1..g.len() {
                    let (a, b) = (raw[(i - 1) * k_out + k], raw[i * k_out + k]);
                    if f64::from(dir) * (b - a) < 0.0 {
                        return Err(format!(
                            "feature {j} (dir {dir}), output {k}: {a} at {} -> {b} at {}",
                            g[i - 1],
                            g[i]
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    #[test]
    fn predictions_never_move_against_a_monotone_constraint(
        seed in 0u64..10_000,
        kind in 0usize..KINDS,
        dirs in proptest::collection::vec(-1i8..=1, P),
    ) {
        let (mut p, x, y) = problem(kind, seed);
        p.monotone_constraints = Some(dirs.clone());
        let model = fit(&p, &x, &y);
        if let Err(e) = check_monotone(&model, &x, &dirs) {
            return Err(TestCaseError::fail(format!("{}: {e}", kind_name(kind))));
        }
    }
}

/// The check is not vacuous: without constraints the same data gives models
/// that do move against the directions asked for above.
#[test]
fn unconstrained_models_break_the_order() {
    let mut broken = 0;
    for kind in 0..KINDS {
        let (p, x, y) = problem(kind, 7);
        let model = fit(&p, &x, &y);
        broken += usize::from(check_monotone(&model, &x, &[-1, 1, 1, 0]).is_err());
    }
    assert_eq!(broken, KINDS);
}

/// Constraints cost some fit but the constrained directions are learned: a
/// target rising in x0 gives a model rising in x0 (not flat).
#[test]
fn constrained_models_still_learn_the_constrained_feature() {
    let (mut p, x, y) = problem(0, 3);
    p.monotone_constraints = Some(vec![1, -1, 0, 0]);
    let model = fit(&p, &x, &y);
    let lo = [-1.5, 0.0, 0.0, 0.0];
    let hi = [1.5, 0.0, 0.0, 0.0];
    let both: Vec<f64> = lo.iter().chain(&hi).copied().collect();
    let raw = model
        .predict_raw(&DenseMatrix::row_major(&both, 2, P).unwrap(), None)
        .unwrap();
    assert!(raw[1] - raw[0] > 1.5, "{raw:?}");
}

/// All-zero directions are no constraint: the same trees, bit for bit.
#[test]
fn zero_directions_grow_the_unconstrained_trees() {
    for kind in 0..KINDS {
        let (p, x, y) = problem(kind, 21);
        let free = fit(&p, &x, &y);
        let zero = fit(
            &BoosterParams {
                monotone_constraints: Some(vec![0; P]),
                ..p.clone()
            },
            &x,
            &y,
        );
        assert_eq!(free.trees, zero.trees, "{}", kind_name(kind));
        assert_eq!(free.base_score, zero.base_score);
    }
}

/// The features split on along every root-to-leaf path of `tree`.
fn path_features(tree: &Tree) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    if tree.feature.is_empty() {
        return out;
    }
    let mut stack = vec![(0i32, Vec::new())];
    while let Some((node, mut used)) = stack.pop() {
        if node < 0 {
            used.sort_unstable();
            used.dedup();
            out.push(used);
            continue;
        }
        let i = node as usize;
        used.push(tree.feature[i] as usize);
        stack.push((tree.left[i], used.clone()));
        stack.push((tree.right[i], used));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// XGBoost's rule: a path's features lie in one set, or the path splits
    /// on a single feature.
    #[test]
    fn every_path_stays_within_one_interaction_set(
        seed in 0u64..10_000,
        kind in 0usize..KINDS,
        sets in proptest::collection::vec(proptest::collection::btree_set(0usize..P, 1..=3), 1..=3),
    ) {
        let (mut p, x, y) = problem(kind, seed);
        let sets: Vec<Vec<usize>> = sets.into_iter().map(|s| s.into_iter().collect()).collect();
        p.interaction_constraints = Some(sets.clone());
        p.max_depth = p.max_depth.map(|_| 5);
        let model = fit(&p, &x, &y);
        for (t, tree) in model.trees.iter().enumerate() {
            for used in path_features(tree) {
                let ok = used.len() <= 1 || sets.iter().any(|s| used.iter().all(|j| s.contains(j)));
                prop_assert!(ok, "{}: tree {t} path uses {used:?}, sets {sets:?}", kind_name(kind));
            }
        }
    }
}

/// The rule is not vacuous: unconstrained trees on the same data mix
/// features of different sets on one path, and constrained ones still
/// reach depth.
#[test]
fn interaction_constraints_change_the_paths() {
    let (p, x, y) = problem(0, 5);
    let free = fit(&p, &x, &y);
    let mixes = |m: &Model| {
        m.trees
            .iter()
            .flat_map(path_features)
            .any(|u| u.contains(&0) && u.contains(&1))
    };
    assert!(mixes(&free));
    let sets = vec![vec![0, 3], vec![1, 2]];
    let constrained = fit(
        &BoosterParams {
            interaction_constraints: Some(sets),
            ..p
        },
        &x,
        &y,
    );
    assert!(!mixes(&constrained));
    assert!(
        constrained
            .trees
            .iter()
            .flat_map(path_features)
            .any(|u| u.len() == 2)
    );
}

#[test]
fn constraints_must_fit_the_data() {
    let (mut p, x, y) = problem(0, 1);
    p.monotone_constraints = Some(vec![1, 0]);
    let m = DenseMatrix::row_major(&x, y.len(), P).unwrap();
    let e = common::trained(&p, &m, &y, None)
        .map(|t| t.model)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("monotone_constraints") && e.contains("has 2 entries but X has 4"),
        "{e}"
    );
    p.monotone_constraints = None;
    p.interaction_constraints = Some(vec![vec![0, 9]]);
    let e = common::trained(&p, &m, &y, None)
        .map(|t| t.model)
        .unwrap_err()
        .to_string();
    assert!(e.contains("names feature 9"), "{e}");
}

/// Quantile leaves are set from residuals after growth, in other units than
/// the gradient sums the grower's bounds come from: they get bounds of their
/// own, so on a target that is monotone anyway the constraint costs little.
#[test]
fn renewed_leaves_keep_their_fit_under_a_constraint() {
    let n = 2000;
    let x = common::features(n, P, 4);
    let y: Vec<f64> = x
        .chunks(P)
        .map(|r| {
            if r[0].is_nan() {
                0.0
            } else {
                5.0 * r[0] + r[1]
            }
        })
        .collect();
    let p = BoosterParams {
        n_estimators: 30,
        loss: Loss::Quantile,
        alpha: Some(0.5),
        max_depth: Some(3),
        ..Default::default()
    };
    let loss = |m: &Model| {
        let raw = m
            .predict_raw(&DenseMatrix::row_major(&x, n, P).unwrap(), None)
            .unwrap();
        raw.iter().zip(&y).map(|(f, y)| (f - y).abs()).sum::<f64>() / n as f64
    };
    let free = loss(&fit(&p, &x, &y));
    let constrained = BoosterParams {
        monotone_constraints: Some(vec![1, 1, 0, 0]),
        ..p
    };
    let bound = loss(&fit(&constrained, &x, &y));
    assert!(bound < 1.1 * free, "{bound} vs {free}");
}
