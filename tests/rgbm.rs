//! RGBM: selection rules (Type 0-3), scopes and step rules.
mod common;

use proptest::prelude::*;
use rgbm_rs::objective::Objective;
use rgbm_rs::params::{
    BoosterParams, Init, Loss, Mode, Selection, SelectionScope, SelectionSize, Step,
};
use rgbm_rs::{DenseMatrix, Model};

fn fit(params: &BoosterParams, x: &[f64], p: usize, y: &[f64]) -> Model {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    common::trained(params, &m, y, None)
        .map(|t| t.model)
        .unwrap()
}

fn base() -> BoosterParams {
    BoosterParams {
        n_estimators: 15,
        max_depth: Some(3),
        min_samples_leaf: 5,
        random_state: 5,
        ..Default::default()
    }
}

fn data(n: usize, p: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let x = common::features(n, p, seed);
    let y = common::regression(&x, p, seed + 1);
    (x, y)
}

#[test]
fn groups_with_t_equal_p_and_one_big_group_equal_full_selection() {
    let (x, y) = data(600, 5, 1);
    let full = fit(&base(), &x, 5, &y);
    let t_is_p = fit(
        &BoosterParams {
            selection: Selection::Groups,
            selection_size: Some(SelectionSize::Count(5)),
            ..base()
        },
        &x,
        5,
        &y,
    );
    assert_eq!(full.trees, t_is_p.trees);
    let one_group = fit(
        &BoosterParams {
            selection: Selection::Group,
            groups: Some(vec![vec![0, 1, 2, 3, 4]]),
            ..base()
        },
        &x,
        5,
        &y,
    );
    assert_eq!(full.trees, one_group.trees);
    let all_splits = fit(
        &BoosterParams {
            selection: Selection::Random,
            selection_size: Some(SelectionSize::Fraction(1.0)),
            ..base()
        },
        &x,
        5,
        &y,
    );
    assert_eq!(full.trees, all_splits.trees);
}

#[test]
fn group_equals_groups_with_t_one() {
    let (x, y) = data(600, 6, 2);
    let groups = Some(vec![vec![0, 3], vec![1], vec![2, 4, 5]]);
    let a = fit(
        &BoosterParams {
            selection: Selection::Group,
            groups: groups.clone(),
            ..base()
        },
        &x,
        6,
        &y,
    );
    let b = fit(
        &BoosterParams {
            selection: Selection::Groups,
            selection_size: Some(SelectionSize::Count(1)),
            groups,
            ..base()
        },
        &x,
        6,
        &y,
    );
    assert_eq!(a.trees, b.trees);
}

#[test]
fn trees_only_split_on_drawn_features() {
    let (x, y) = data(800, 8, 3);
    let params = BoosterParams {
        selection: Selection::Groups,
        selection_size: Some(SelectionSize::Count(2)),
        ..base()
    };
    let m = DenseMatrix::row_major(&x, y.len(), 8).unwrap();
    let t = common::trained(&params, &m, &y, None).unwrap();
    for (tree, log) in t.model.trees.iter().zip(&t.log) {
        let mut used: Vec<u32> = tree.feature.clone();
        used.sort();
        used.dedup();
        assert!(used.len() <= 2, "{used:?}");
        assert_eq!(log.features_searched, Some(2));
        assert_eq!(log.root_feature, tree.feature.first().map(|&f| f as usize));
    }
    // Type 1: a stump can only use one of the t drawn thresholds.
    let stumps = BoosterParams {
        selection: Selection::Random,
        selection_size: Some(SelectionSize::Count(1)),
        max_depth: Some(1),
        ..base()
    };
    let t = common::trained(&stumps, &m, &y, None).unwrap();
    assert!(t.log.iter().all(|l| l.features_searched == Some(1)));
}

#[test]
fn node_scope_differs_from_tree_scope_and_both_are_reproducible() {
    let (x, y) = data(800, 8, 4);
    let tree = BoosterParams {
        selection: Selection::Groups,
        selection_size: Some(SelectionSize::Count(2)),
        ..base()
    };
    let node = BoosterParams {
        selection_scope: SelectionScope::Node,
        ..tree.clone()
    };
    let a1 = fit(&tree, &x, 8, &y);
    let a2 = fit(
        &BoosterParams {
            n_jobs: Some(1),
            ..tree.clone()
        },
        &x,
        8,
        &y,
    );
    let b1 = fit(&node, &x, 8, &y);
    let b2 = fit(
        &BoosterParams {
            n_jobs: Some(2),
            ..node.clone()
        },
        &x,
        8,
        &y,
    );
    assert_eq!(a1.trees, a2.trees);
    assert_eq!(b1.trees, b2.trees);
    assert_ne!(a1.trees, b1.trees);
    // Under node scope a tree uses more distinct features than one draw holds.
    let distinct = |m: &Model| {
        m.trees
            .iter()
            .map(|t| {
                let mut f = t.feature.clone();
                f.sort();
                f.dedup();
                f.len()
            })
            .max()
            .unwrap()
    };
    assert!(distinct(&a1) <= 2 && distinct(&b1) > 2);
    let other_seed = fit(
        &BoosterParams {
            random_state: 6,
            ..tree
        },
        &x,
        8,
        &y,
    );
    assert_ne!(a1.trees, other_seed.trees);
}

#[test]
fn line_search_is_the_exact_minimiser_for_squared_loss() {
    let (x, y) = data(500, 4, 5);
    let params = BoosterParams {
        n_estimators: 1,
        learning_rate: 1.0,
        step: Step::LineSearch,
        leaf: Mode::Gradient,
        init: Init::Zero,
        reg_lambda: 3.0,
        ..base()
    };
    let m = DenseMatrix::row_major(&x, y.len(), 4).unwrap();
    let model = fit(&params, &x, 4, &y);
    let f = model.predict_raw(&m, None).unwrap();
    // f = ρ*·u: the residual y − f is orthogonal to u (= f / ρ*), and ρ* ≠ 1 because λ shrinks u.
    let dot: f64 = f.iter().zip(&y).map(|(fi, yi)| (yi - fi) * fi).sum();
    let norm: f64 = f.iter().map(|v| v * v).sum();
    assert!(dot.abs() < 1e-9 * norm, "not orthogonal: {dot} vs {norm}");
    let t = common::trained(&params, &m, &y, None).unwrap();
    assert!((t.log[0].step - 1.0).abs() > 1e-3, "step {}", t.log[0].step);
}

#[test]
fn constant_step_is_one_over_sigma_and_refused_without_theory() {
    let (x, _) = data(300, 3, 6);
    let params = BoosterParams {
        n_estimators: 3,
        step: Step::Constant,
        leaf: Mode::Gradient,
        loss: Loss::Logistic,
        logistic_reg: 0.25,
        ..base()
    };
    let yb = common::binary(&x, 3, 7);
    let m = DenseMatrix::row_major(&x, yb.len(), 3).unwrap();
    let t = common::trained(&params, &m, &yb, None).unwrap();
    assert!(t.log.iter().all(|l| (l.step - 2.0).abs() < 1e-15));
    let newton = BoosterParams {
        leaf: Mode::Newton,
        ..params.clone()
    };
    assert!(
        common::trained(&newton, &m, &yb, None)
            .map(|t| t.model)
            .unwrap_err()
            .to_string()
            .contains("gradient leaves")
    );
    let exp = BoosterParams {
        loss: Loss::Exponential,
        logistic_reg: 0.0,
        ..params
    };
    assert!(
        common::trained(&exp, &m, &yb, None)
            .map(|t| t.model)
            .unwrap_err()
            .to_string()
            .contains("smooth")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// RGBM Theorems 4.1-4.2: the 1/σ step with gradient leaves never
    /// increases the training loss of a σ-smooth loss, under any selection rule.
    #[test]
    fn constant_step_never_increases_training_loss(seed in 0u64..10_000, which in 0usize..3, rule in 0usize..3, depth in 1usize..4) {
        let (n, p) = (250, 4);
        let x = common::features(n, p, seed);
        let (loss, y) = match which {
            0 => (Loss::Squared, common::regression(&x, p, seed + 1)),
            1 => (Loss::Huber, common::regression(&x, p, seed + 1).iter().map(|v| 3.0 * v).collect()),
            _ => (Loss::Logistic, common::binary(&x, p, seed + 1)),
        };
        let (selection, selection_size) = match rule {
            0 => (Selection::Full, None),
            1 => (Selection::Random, Some(SelectionSize::Count(5))),
            _ => (Selection::Groups, Some(SelectionSize::Count(2))),
        };
        let params = BoosterParams {
            n_estimators: 10, max_depth: Some(depth), min_samples_leaf: 3, loss, step: Step::Constant,
            leaf: Mode::Gradient, gain: Mode::Gradient, selection, selection_size, init: Init::Zero,
            record_train_loss: true, random_state: seed, ..Default::default()
        };
        let m = DenseMatrix::row_major(&x, n, p).unwrap();
        let t = common::trained(&params, &m, &y, None).unwrap();
        let start = Objective::from_params(&params).mean_loss(&y, &vec![0.0; n], None);
        let mut prev = start;
        for l in &t.log {
            let cur = l.train_loss.unwrap();
            prop_assert!(cur <= prev + 1e-12 * prev.abs().max(1.0), "loss rose {prev} -> {cur}");
            prev = cur;
        }
    }
}
