//! SGLB: Langevin noise, model shrinkage, the smoothed 0-1 loss.
mod common;

use rgbm_rs::cancel::Cancel;
use rgbm_rs::params::{BoosterParams, Init, Loss, Mode, Selection, SelectionSize};
use rgbm_rs::{DenseMatrix, Model};

fn fit(params: &BoosterParams, x: &[f64], p: usize, y: &[f64]) -> Model {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    common::trained(params, &m, y, None)
        .map(|t| t.model)
        .unwrap()
}

fn sglb() -> BoosterParams {
    BoosterParams {
        n_estimators: 12,
        max_depth: Some(3),
        min_samples_leaf: 5,
        loss: Loss::Logistic,
        langevin: true,
        temperature: 1e3,
        random_state: 3,
        ..Default::default()
    }
}

#[test]
fn temperature_does_nothing_without_langevin() {
    let x = common::features(600, 4, 1);
    let y = common::binary(&x, 4, 2);
    let plain = BoosterParams {
        langevin: false,
        ..sglb()
    };
    let a = fit(&plain, &x, 4, &y);
    let b = fit(
        &BoosterParams {
            temperature: 7.0,
            ..plain.clone()
        },
        &x,
        4,
        &y,
    );
    assert_eq!(a.trees, b.trees);
    let noisy = fit(&sglb(), &x, 4, &y);
    assert_ne!(a.trees, noisy.trees);
}

#[test]
fn shrinkage_equals_shrinking_every_earlier_tree() {
    // T+1 rounds = the T-round model with every tree shrunk once more, plus one tree.
    let x = common::features(500, 3, 3);
    let y = common::binary(&x, 3, 4);
    for langevin in [false, true] {
        let params = BoosterParams {
            shrink_rate: Some(0.5),
            learning_rate: 0.2,
            langevin,
            ..sglb()
        };
        let short = fit(
            &BoosterParams {
                n_estimators: 6,
                ..params.clone()
            },
            &x,
            3,
            &y,
        );
        let long = fit(
            &BoosterParams {
                n_estimators: 7,
                ..params.clone()
            },
            &x,
            3,
            &y,
        );
        let q = 1.0 - 0.5 * 0.2;
        for (a, b) in short.trees.iter().zip(&long.trees) {
            assert_eq!(a.feature, b.feature);
            assert_eq!(a.threshold, b.threshold);
            for (u, v) in a.leaf_value.iter().zip(&b.leaf_value) {
                assert!(
                    (u * q - v).abs() <= 1e-14 * u.abs().max(1e-300),
                    "{u} * {q} vs {v}"
                );
            }
        }
        // And the training-time recursion agrees with the folded model.
        let m = DenseMatrix::row_major(&x, y.len(), 3).unwrap();
        let base = long.base_score[0];
        let mut f = vec![base; y.len()];
        let raw: Vec<Model> = (1..=7)
            .map(|k| {
                fit(
                    &BoosterParams {
                        n_estimators: k,
                        ..params.clone()
                    },
                    &x,
                    3,
                    &y,
                )
            })
            .collect();
        assert_eq!(raw.len(), 7);
        for (k, model) in raw.iter().enumerate() {
            // The newest tree of the (k+1)-round model is unshrunk.
            let newest = model.predict_trees(&m, k, k + 1).unwrap();
            for (fi, t) in f.iter_mut().zip(newest) {
                *fi = base + q * (*fi - base) + t;
            }
        }
        let folded = long.predict_raw(&m, None).unwrap();
        assert!(
            f.iter().zip(&folded).all(|(a, b)| (a - b).abs() < 1e-12),
            "langevin={langevin}"
        );
    }
}

#[test]
fn sglb_is_reproducible_for_any_thread_count_and_seed_sensitive() {
    let x = common::features(3000, 6, 5);
    let y = common::binary(&x, 6, 6);
    let variants = [
        sglb(),
        BoosterParams {
            subsample: 0.6,
            max_depth: None,
            max_leaves: Some(9),
            ..sglb()
        },
        BoosterParams {
            selection: Selection::Groups,
            selection_size: Some(SelectionSize::Count(2)),
            ..sglb()
        },
        BoosterParams {
            loss: Loss::Sla01,
            gain: Mode::Gradient,
            leaf: Mode::Gradient,
            init: Init::Zero,
            ..sglb()
        },
    ];
    for params in variants {
        let a = fit(
            &BoosterParams {
                n_jobs: Some(1),
                ..params.clone()
            },
            &x,
            6,
            &y,
        );
        let b = fit(
            &BoosterParams {
                n_jobs: Some(2),
                ..params.clone()
            },
            &x,
            6,
            &y,
        );
        assert_eq!(a.trees, b.trees, "{params:?}");
        let c = fit(
            &BoosterParams {
                random_state: 4,
                ..params.clone()
            },
            &x,
            6,
            &y,
        );
        assert_ne!(a.trees, c.trees);
    }
}

#[test]
fn sla01_learns_and_refuses_newton() {
    let x = common::features(2000, 3, 7);
    let y = common::binary(&x, 3, 8);
    let params = BoosterParams {
        loss: Loss::Sla01,
        gain: Mode::Gradient,
        leaf: Mode::Gradient,
        n_estimators: 60,
        ..sglb()
    };
    let model = fit(&params, &x, 3, &y);
    let m = DenseMatrix::row_major(&x, y.len(), 3).unwrap();
    let f = model.predict_raw(&m, None).unwrap();
    let acc = f
        .iter()
        .zip(&y)
        .filter(|(fi, yi)| (**fi > 0.0) == (**yi > 0.5))
        .count() as f64
        / y.len() as f64;
    assert!(acc > 0.7, "accuracy {acc}");
    let newton = BoosterParams {
        leaf: Mode::Newton,
        ..params.clone()
    };
    let err = common::trained(&newton, &m, &y, None)
        .map(|t| t.model)
        .unwrap_err();
    assert!(err.to_string().contains("gradient"), "{err}");
}

#[test]
fn invalid_sglb_parameters() {
    let bad = [
        BoosterParams {
            temperature: 0.0,
            ..sglb()
        },
        BoosterParams {
            temperature: f64::NAN,
            ..sglb()
        },
        BoosterParams {
            shrink_rate: Some(-1.0),
            ..sglb()
        },
        BoosterParams {
            shrink_rate: Some(10.0),
            learning_rate: 0.1,
            ..sglb()
        },
        BoosterParams {
            step: rgbm_rs::params::Step::LineSearch,
            ..sglb()
        },
        BoosterParams {
            sla_scale: 0.0,
            ..sglb()
        },
    ];
    for p in bad {
        assert!(p.validate().is_err(), "{p:?}");
    }
    assert_eq!(sglb().shrink_rate(), 1e-3);
    assert_eq!(BoosterParams::default().shrink_rate(), 0.0);
}

#[test]
fn virtual_ensemble_members_are_the_chain_at_earlier_rounds() {
    let x = common::features(400, 3, 9);
    let y = common::binary(&x, 3, 10);
    let m = DenseMatrix::row_major(&x, y.len(), 3).unwrap();
    let params = BoosterParams {
        n_estimators: 12,
        shrink_rate: Some(0.3),
        learning_rate: 0.3,
        ..sglb()
    };
    let model = fit(&params, &x, 3, &y);
    // K = 3, period = 12 / 6 = 2: truncations after 8, 10 and 12 trees.
    let members = model.virtual_ensemble(&m, 3, &Cancel::never()).unwrap();
    assert_eq!(members.len(), 3 * y.len());
    for (member, rounds) in members.chunks(y.len()).zip([8, 10, 12]) {
        let earlier = fit(
            &BoosterParams {
                n_estimators: rounds,
                ..params.clone()
            },
            &x,
            3,
            &y,
        );
        let want = earlier.predict_raw(&m, None).unwrap();
        assert!(
            member.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-10),
            "member after {rounds} rounds"
        );
    }
    assert!(model.virtual_ensemble(&m, 1, &Cancel::never()).is_err());
    assert!(model.virtual_ensemble(&m, 7, &Cancel::never()).is_err());
}

#[test]
fn truncated_model_equals_the_shorter_fit() {
    let x = common::features(500, 3, 5);
    let y = common::binary(&x, 3, 6);
    let m = DenseMatrix::row_major(&x, y.len(), 3).unwrap();
    for langevin in [false, true] {
        let params = BoosterParams {
            shrink_rate: Some(0.3),
            learning_rate: 0.2,
            langevin,
            ..sglb()
        };
        let long = fit(
            &BoosterParams {
                n_estimators: 9,
                ..params.clone()
            },
            &x,
            3,
            &y,
        );
        let short = fit(
            &BoosterParams {
                n_estimators: 5,
                ..params.clone()
            },
            &x,
            3,
            &y,
        );
        let cut = long.truncated(5).unwrap();
        assert_eq!(cut.n_rounds(), 5);
        let (a, b) = (
            cut.predict_raw(&m, None).unwrap(),
            short.predict_raw(&m, None).unwrap(),
        );
        assert!(
            a.iter().zip(&b).all(|(u, v)| (u - v).abs() < 1e-12),
            "langevin={langevin}"
        );
        assert!(long.truncated(0).is_err() && long.truncated(10).is_err());
        assert_eq!(long.truncated(9).unwrap().trees, long.trees);
    }
}

#[test]
fn undoing_extreme_shrinkage_is_an_error_not_infinity() {
    // q = 1 - γν = 0.001: undoing hundreds of rounds of shrinkage overflows f64.
    let x = common::features(300, 3, 9);
    let y = common::binary(&x, 3, 10);
    let params = BoosterParams {
        n_estimators: 1000,
        shrink_rate: Some(0.999),
        learning_rate: 1.0,
        max_depth: Some(2),
        ..sglb()
    };
    let model = fit(&params, &x, 3, &y);
    assert!(model.truncated(1).is_err());
    let m = DenseMatrix::row_major(&x, y.len(), 3).unwrap();
    assert!(model.virtual_ensemble(&m, 2, &Cancel::never()).is_err());
    assert!(model.truncated(1000).is_ok());
}
