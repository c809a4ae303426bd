//! RGB: family draws, projection, coordinate step, SRM choice.
mod common;

use rgbm_rs::DenseMatrix;
use rgbm_rs::booster::rgb::coordinate_step;
use rgbm_rs::booster::{TrainingData, Unmonitored, train};
use rgbm_rs::params::{BoosterKind, BoosterParams, Init, Loss, RgbCandidate, RgbPenalty, RgbStep};

fn rgb() -> BoosterParams {
    BoosterParams {
        booster: BoosterKind::Rgb,
        n_estimators: 15,
        max_depth: None,
        min_samples_leaf: 3,
        random_state: 2,
        ..Default::default()
    }
}

#[test]
fn one_unbounded_family_takes_the_exact_coordinate_step() {
    let x = common::features(400, 3, 1);
    let y = common::regression(&x, 3, 2);
    let m = DenseMatrix::row_major(&x, y.len(), 3).unwrap();
    let params = BoosterParams {
        n_estimators: 1,
        rgb_nodes: Some(vec![4]),
        rgb_lambdas: Some(vec![1e9]),
        rgb_beta: 0.0,
        init: Init::Zero,
        rgb_step: Some(RgbStep::Exact),
        ..rgb()
    };
    let model = common::trained(&params, &m, &y, None)
        .map(|t| t.model)
        .unwrap();
    let f = model.predict_raw(&m, None).unwrap();
    // Squared loss (σ = 1) from f = 0: α·h is the least-squares projection of y on h.
    let dot: f64 = f.iter().zip(&y).map(|(fi, yi)| (yi - fi) * fi).sum();
    let norm: f64 = f.iter().map(|v| v * v).sum();
    assert!(norm > 0.0 && dot.abs() < 1e-9 * norm, "{dot} vs {norm}");
    assert!(model.trees[0].n_internal() <= 4);
}

#[test]
fn leaves_respect_the_family_radius_and_node_limit() {
    let x = common::features(600, 4, 3);
    let y = common::binary(&x, 4, 4);
    let m = DenseMatrix::row_major(&x, y.len(), 4).unwrap();
    let params = BoosterParams {
        loss: Loss::Logistic,
        rgb_nodes: Some(vec![1, 3, 7]),
        rgb_lambdas: Some(vec![0.05, 0.3, 2.0]),
        ..rgb()
    };
    let t = common::trained(&params, &m, &y, None).unwrap();
    for (tree, log) in t.model.trees.iter().zip(&t.log) {
        let norm = tree.leaf_value.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(
            norm <= log.step.abs() * log.rgb_lambda.unwrap() * (1.0 + 1e-12),
            "{norm}"
        );
        assert!(tree.n_internal() <= log.rgb_nodes.unwrap());
    }
}

#[test]
fn rgb_is_reproducible_for_any_thread_count() {
    let x = common::features(800, 5, 5);
    let y = common::regression(&x, 5, 6);
    let m = DenseMatrix::row_major(&x, y.len(), 5).unwrap();
    let fit = |p: &BoosterParams| common::trained(p, &m, &y, None).map(|t| t.model).unwrap();
    for s in [1, 4] {
        let p = BoosterParams {
            rgb_candidates: s,
            subsample: 0.8,
            ..rgb()
        };
        assert_eq!(
            fit(&BoosterParams {
                n_jobs: Some(1),
                ..p.clone()
            })
            .trees,
            fit(&BoosterParams {
                n_jobs: Some(2),
                ..p.clone()
            })
            .trees
        );
    }
}

#[test]
fn a_larger_beta_prefers_simpler_families() {
    let x = common::features(1000, 4, 7);
    let y = common::regression(&x, 4, 8);
    let m = DenseMatrix::row_major(&x, y.len(), 4).unwrap();
    let mean_complexity = |beta: f64| {
        let mut total = 0.0;
        for seed in 0..4 {
            let p = BoosterParams {
                rgb_beta: beta,
                rgb_candidates: 6,
                random_state: seed,
                n_estimators: 20,
                ..rgb()
            };
            let t = common::trained(&p, &m, &y, None).unwrap();
            total += t
                .log
                .iter()
                .map(|l| l.rgb_lambda.unwrap() * ((4 * l.rgb_nodes.unwrap() + 2) as f64).sqrt())
                .sum::<f64>();
        }
        total
    };
    let (free, penalised, heavy) = (
        mean_complexity(0.0),
        mean_complexity(0.1),
        mean_complexity(10.0),
    );
    assert!(
        free >= penalised && penalised >= heavy && heavy < free,
        "{free} {penalised} {heavy}"
    );
}

#[test]
fn rgb_refuses_what_it_cannot_do() {
    for p in [
        BoosterParams {
            loss: Loss::Exponential,
            ..rgb()
        },
        BoosterParams {
            langevin: true,
            ..rgb()
        },
        BoosterParams {
            selection: rgbm_rs::params::Selection::Group,
            ..rgb()
        },
        BoosterParams {
            step: rgbm_rs::params::Step::LineSearch,
            ..rgb()
        },
        BoosterParams {
            rgb_candidates: 0,
            ..rgb()
        },
        BoosterParams {
            rgb_lambdas: Some(vec![0.0]),
            ..rgb()
        },
        BoosterParams {
            rgb_nodes: Some(vec![]),
            ..rgb()
        },
        BoosterParams {
            booster: BoosterKind::Gbm,
            rgb_nodes: Some(vec![2]),
            ..rgb()
        },
        BoosterParams {
            booster: BoosterKind::Gbm,
            rgb_step: Some(RgbStep::Exact),
            ..rgb()
        },
        BoosterParams {
            booster: BoosterKind::Gbm,
            rgb_penalty: Some(RgbPenalty::Weighted),
            ..rgb()
        },
    ] {
        assert!(p.validate().is_err(), "{p:?}");
    }
}

#[test]
fn multiclass_rgb_takes_one_coordinate_step_per_class() {
    let (n, p) = (900, 3);
    let x = common::features(n, p, 7);
    // Three classes from the first two features (NaN rows land in class 2).
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let s = x[i * p] + 0.5 * x[i * p + 1];
            if s < -0.5 {
                0.0
            } else if s < 0.5 {
                1.0
            } else {
                2.0
            }
        })
        .collect();
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let params = BoosterParams {
        loss: Loss::Softmax,
        n_classes: Some(3),
        record_train_loss: true,
        rgb_beta: 0.01,
        rgb_step: Some(RgbStep::Exact),
        ..rgb()
    };
    let t = common::trained(&params, &m, &y, None).unwrap();
    assert_eq!(t.model.n_outputs, 3);
    assert_eq!(t.model.trees.len(), 3 * 15);
    let losses: Vec<f64> = t.log.iter().map(|l| l.train_loss.unwrap()).collect();
    // Each class's coordinate step uses the current gradients and minimises a
    // quadratic upper bound of the loss along its tree: the loss never goes up.
    assert!(
        losses.windows(2).all(|w| w[1] <= w[0] + 1e-12),
        "{losses:?}"
    );
    assert!(losses[14] < 0.6 * losses[0]);
    for (r, log) in t.log.iter().enumerate() {
        assert_eq!(log.rgb_families.len(), 3);
        for (k, &(nodes, lambda)) in log.rgb_families.iter().enumerate() {
            let tree = &t.model.trees[r * 3 + k];
            assert!(tree.n_internal() <= nodes);
            assert!(lambda > 0.0);
        }
    }
    let one = TrainingData::new(&m, &y)
        .and_then(|d| {
            train(
                &BoosterParams {
                    n_jobs: Some(1),
                    ..params.clone()
                },
                &d,
                &[],
                &mut Unmonitored,
            )
        })
        .map(|t| t.model)
        .unwrap();
    let two = TrainingData::new(&m, &y)
        .and_then(|d| {
            train(
                &BoosterParams {
                    n_jobs: Some(2),
                    ..params.clone()
                },
                &d,
                &[],
                &mut Unmonitored,
            )
        })
        .map(|t| t.model)
        .unwrap();
    assert_eq!(one.trees, two.trees);
}

#[test]
fn the_step_rules_match_their_closed_forms() {
    // Σ g h = 0.5 + 2 + 1 = 3.5 over 3 rows; Σ h² = 1 + 4 + 0.25 = 5.25.
    let gh = [[0.5, 1.0], [-1.0, 1.0], [2.0, 1.0]];
    let h = [1.0, -2.0, 0.5];
    let lip = coordinate_step(RgbStep::Lipschitz, &gh, &h, None, 0.5, 0.25).unwrap();
    assert!((lip - -(3.5 / 3.0) / (0.5 * 0.25)).abs() < 1e-15, "{lip}");
    let exact = coordinate_step(RgbStep::Exact, &gh, &h, None, 0.5, 0.25).unwrap();
    assert!((exact - -3.5 / (0.25 * 5.25)).abs() < 1e-15, "{exact}");
    // Weights: gh already carries them; the mean gradient divides by Σw = 4.
    let w = [1.0, 2.0, 1.0];
    let lip = coordinate_step(RgbStep::Lipschitz, &gh, &h, Some(&w), 2.0, 1.0).unwrap();
    assert!((lip - -(3.5 / 4.0) / 2.0).abs() < 1e-15, "{lip}");
    let exact = coordinate_step(RgbStep::Exact, &gh, &h, Some(&w), 2.0, 1.0).unwrap();
    assert!((exact - -3.5 / (1.0 + 8.0 + 0.25)).abs() < 1e-15, "{exact}");
}

#[test]
fn lambda_sets_the_step_under_the_lipschitz_rule_only() {
    let x = common::features(800, 4, 9);
    let y = common::binary(&x, 4, 10);
    let m = DenseMatrix::row_major(&x, y.len(), 4).unwrap();
    let predict = |rule: RgbStep, lambda: f64| {
        let p = BoosterParams {
            loss: Loss::Logistic,
            rgb_lambdas: Some(vec![lambda]),
            rgb_step: Some(rule),
            ..rgb()
        };
        let model = common::trained(&p, &m, &y, None).map(|t| t.model).unwrap();
        model.predict_raw(&m, None).unwrap()
    };
    let gap = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(u, v)| (u - v).abs())
            .fold(0.0, f64::max)
    };
    // The exact step undoes the leaves' scale: λ changes nothing.
    let (e_small, e_large) = (predict(RgbStep::Exact, 0.001), predict(RgbStep::Exact, 4.0));
    assert!(
        gap(&e_small, &e_large) < 1e-9,
        "{}",
        gap(&e_small, &e_large)
    );
    // The paper's step moves F_l by −λ·G_l/(m·σ) with the argmin candidate:
    // λ = 4 moves 4000x further than λ = 0.001.
    let (l_small, l_large) = (
        predict(RgbStep::Lipschitz, 0.001),
        predict(RgbStep::Lipschitz, 4.0),
    );
    assert!(gap(&l_small, &l_large) > 0.1, "{}", gap(&l_small, &l_large));
}

/// The Lipschitz step minimises an upper bound of the loss when C_k = λσ
/// bounds σ·mean(h²), which holds whenever λ ≤ 1 (candidate leaves have
/// |h| ≤ λ, so mean(h²) ≤ λ² ≤ λ): the training loss never rises then.
#[test]
fn lipschitz_steps_never_raise_the_loss_for_radii_up_to_one() {
    let x = common::features(700, 4, 11);
    let y = common::binary(&x, 4, 12);
    let m = DenseMatrix::row_major(&x, y.len(), 4).unwrap();
    for seed in 0..4 {
        let p = BoosterParams {
            loss: Loss::Logistic,
            rgb_lambdas: Some(vec![0.01, 0.1, 0.5, 1.0]),
            record_train_loss: true,
            init: Init::Zero,
            random_state: seed,
            n_estimators: 30,
            ..rgb()
        };
        let t = common::trained(&p, &m, &y, None).unwrap();
        let losses: Vec<f64> = t.log.iter().map(|l| l.train_loss.unwrap()).collect();
        assert!(
            losses.windows(2).all(|w| w[1] <= w[0] + 1e-12),
            "{losses:?}"
        );
        assert!(losses.last() < losses.first(), "{losses:?}");
    }
}

#[test]
fn the_weighted_penalty_scales_omega_by_the_step() {
    let x = common::features(800, 5, 13);
    let y = common::regression(&x, 5, 14);
    let m = DenseMatrix::row_major(&x, y.len(), 5).unwrap();
    let fit = |penalty: RgbPenalty, beta: f64| {
        let p = BoosterParams {
            rgb_penalty: Some(penalty),
            rgb_beta: beta,
            rgb_candidates: 6,
            ..rgb()
        };
        common::trained(&p, &m, &y, None)
            .map(|t| t.model)
            .unwrap()
            .trees
    };
    // Without a penalty the two rules agree; with one they choose differently.
    assert_eq!(
        fit(RgbPenalty::PerCandidate, 0.0),
        fit(RgbPenalty::Weighted, 0.0)
    );
    assert_ne!(
        fit(RgbPenalty::PerCandidate, 1.0),
        fit(RgbPenalty::Weighted, 1.0)
    );
}

#[test]
fn a_model_records_its_rgb_rules_and_old_files_read_as_exact() {
    let x = common::features(300, 3, 15);
    let y = common::regression(&x, 3, 16);
    let m = DenseMatrix::row_major(&x, y.len(), 3).unwrap();
    let model = TrainingData::new(&m, &y)
        .and_then(|d| {
            train(
                &BoosterParams {
                    n_estimators: 2,
                    ..rgb()
                },
                &d,
                &[],
                &mut Unmonitored,
            )
        })
        .map(|t| t.model)
        .unwrap();
    assert_eq!(model.params.rgb_step, Some(RgbStep::Lipschitz));
    assert_eq!(model.params.rgb_penalty, Some(RgbPenalty::PerCandidate));
    assert_eq!(model.params.rgb_candidate, Some(RgbCandidate::Argmin));
    let text = model.to_json().unwrap();
    let old = text
        .replace(r#""rgb_step":"lipschitz","#, "")
        .replace(r#""rgb_candidate":"argmin","#, "")
        .replace(r#""rgb_penalty":"per_candidate","#, "");
    assert_eq!(
        old.matches("rgb_").count() + 3,
        text.matches("rgb_").count()
    );
    let loaded = rgbm_rs::Model::from_json(&old).unwrap();
    assert_eq!(loaded.params.rgb_step, Some(RgbStep::Exact));
    assert_eq!(loaded.params.rgb_candidate, Some(RgbCandidate::Projected));
    assert_eq!(loaded.trees, model.trees);
}
