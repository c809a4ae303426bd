//! Extreme but accepted inputs and parameters: the fit either gives the
//! model the documentation promises or a clear error, never a silent
//! non-finite or degenerate model.
mod common;

use rgbm_rs::params::{BoosterParams, Loss};
use rgbm_rs::{DenseMatrix, Model, RgbmError};

fn fit(
    params: &BoosterParams,
    x: &[f64],
    p: usize,
    y: &[f64],
    w: Option<&[f64]>,
) -> Result<Model, RgbmError> {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    common::trained(params, &m, y, w).map(|t| t.model)
}

fn params(loss: Loss) -> BoosterParams {
    BoosterParams {
        n_estimators: 10,
        loss,
        min_samples_leaf: 1,
        random_state: 3,
        n_jobs: Some(2),
        ..Default::default()
    }
}

/// A draw that picks no row trains on one random row, not on all of them:
/// each tree is then a single leaf holding ν times that row's residual.
#[test]
fn an_empty_subsample_draw_uses_one_row() {
    let (n, p) = (200, 3);
    let x = common::features(n, p, 1);
    let y = common::regression(&x, p, 2);
    let tiny = BoosterParams {
        subsample: 1e-6,
        ..params(Loss::Squared)
    };
    let model = fit(&tiny, &x, p, &y, None).unwrap();
    let mean = y.iter().sum::<f64>() / n as f64;
    assert!((model.base_score[0] - mean).abs() < 1e-12);
    assert!(model.trees.iter().all(|t| t.n_leaves() == 1));
    let first = model.trees[0].leaf_value[0];
    assert!(
        y.iter().any(|&v| (first - 0.1 * (v - mean)).abs() < 1e-12),
        "the first leaf {first} is not 0.1 x the residual of any row"
    );
    let full = fit(&params(Loss::Squared), &x, p, &y, None).unwrap();
    assert!(full.trees.iter().all(|t| t.n_leaves() > 1));
}

fn predict(model: &Model, x: &[f64], p: usize) -> Vec<f64> {
    let m = DenseMatrix::row_major(x, x.len() / p, p).unwrap();
    model.predict_raw(&m, None).unwrap()
}

/// Weights are normalised to mean 1: c·w gives the model of w, including the
/// parameters measured in weight units (reg_lambda, min_child_weight,
/// min_split_gain) and SGLB's noise. Powers of two give the same JSON.
#[test]
fn models_do_not_depend_on_the_scale_of_the_weights() {
    let (n, p) = (400, 4);
    let x = common::features(n, p, 4);
    let yr = common::regression(&x, p, 5);
    let yb = common::binary(&x, p, 6);
    let w: Vec<f64> = (0..n)
        .map(|i| {
            if i % 17 == 0 {
                0.0
            } else {
                0.2 + (i * 31 % 23) as f64 / 7.0
            }
        })
        .collect();
    let constrained = BoosterParams {
        reg_lambda: 3.0,
        min_child_weight: 4.0,
        min_split_gain: 0.05,
        min_samples_leaf: 2,
        ..params(Loss::Logistic)
    };
    let sglb = BoosterParams {
        langevin: true,
        temperature: 50.0,
        ..params(Loss::Logistic)
    };
    for (name, params, y) in [
        ("squared", params(Loss::Squared), &yr),
        ("constrained logistic", constrained, &yb),
        ("sglb", sglb, &yb),
    ] {
        let reference = fit(&params, &x, p, y, Some(&w)).unwrap();
        let expected = predict(&reference, &x, p);
        assert!(reference.trees.iter().any(|t| t.n_leaves() > 2), "{name}");
        for c in [1e-100, 1e-10, 1e10, 1e160, 1e300] {
            let scaled: Vec<f64> = w.iter().map(|v| v * c).collect();
            let model = fit(&params, &x, p, y, Some(&scaled)).unwrap();
            let got = predict(&model, &x, p);
            for (a, b) in got.iter().zip(&expected) {
                assert!(
                    (a - b).abs() <= 1e-9 * (1.0 + b.abs()),
                    "{name}, c = {c}: {a} vs {b}"
                );
            }
        }
        for k in [-900, -3, 5, 700] {
            let scaled: Vec<f64> = w.iter().map(|v| v * 2f64.powi(k)).collect();
            let model = fit(&params, &x, p, y, Some(&scaled)).unwrap();
            assert_eq!(
                model.to_json().unwrap(),
                reference.to_json().unwrap(),
                "{name}, 2^{k}"
            );
        }
    }
}

/// Weights of mean 1 and the unweighted fit are the same model.
#[test]
fn unit_weights_equal_no_weights() {
    let (n, p) = (300, 3);
    let x = common::features(n, p, 7);
    let y = common::regression(&x, p, 8);
    let ones = vec![1.0; n];
    let a = fit(&params(Loss::Squared), &x, p, &y, None).unwrap();
    let b = fit(&params(Loss::Squared), &x, p, &y, Some(&ones)).unwrap();
    assert_eq!(predict(&a, &x, p), predict(&b, &x, p));
}

/// A binary loss whose rows of one class all weigh 0 has one class: its best
/// constant is infinite (SGLB then drew leaf values of 1e24). Refused.
#[test]
fn a_binary_fit_needs_weight_on_both_classes() {
    let (n, p) = (200, 3);
    let x = common::features(n, p, 9);
    let y = common::binary(&x, p, 10);
    let w = y.clone();
    for langevin in [false, true] {
        let params = BoosterParams {
            langevin,
            ..params(Loss::Logistic)
        };
        let e = fit(&params, &x, p, &y, Some(&w)).unwrap_err();
        assert!(
            e.to_string()
                .contains("class 0 has no rows of positive sample_weight"),
            "{e}"
        );
    }
    let ones = vec![1.0; n];
    let e = fit(&params(Loss::Exponential), &x, p, &ones, None).unwrap_err();
    assert!(e.to_string().contains("class 0 has no rows"), "{e}");
    // Multiclass: a class of zero weight keeps finite scores and is not refused.
    let y3: Vec<f64> = y
        .iter()
        .enumerate()
        .map(|(i, &v)| if i % 5 == 0 { 2.0 } else { v })
        .collect();
    let w3: Vec<f64> = y3
        .iter()
        .map(|&v| if v == 2.0 { 0.0 } else { 1.0 })
        .collect();
    let softmax = BoosterParams {
        n_classes: Some(3),
        ..params(Loss::Softmax)
    };
    let m = fit(&softmax, &x, p, &y3, Some(&w3)).unwrap();
    assert!(
        predict(&m, &x, p)
            .iter()
            .all(|v| v.is_finite() && v.abs() < 100.0)
    );
}

/// Accepted parameters that make the fit diverge raise an error naming the
/// round, never a model with NaN or infinite predictions.
#[test]
fn a_diverging_fit_is_an_error() {
    let (n, p) = (200, 3);
    let x = common::features(n, p, 11);
    let y = common::regression(&x, p, 12);
    for (name, params) in [
        (
            "gaussian lr 1000",
            BoosterParams {
                learning_rate: 1000.0,
                ..params(Loss::Gaussian)
            },
        ),
        (
            "lr 1e100",
            BoosterParams {
                learning_rate: 1e100,
                ..params(Loss::Squared)
            },
        ),
        (
            "huber lr 1e300",
            BoosterParams {
                learning_rate: 1e300,
                ..params(Loss::Huber)
            },
        ),
    ] {
        match fit(&params, &x, p, &y, None) {
            Err(RgbmError::NonFinite(msg)) => {
                assert!(
                    msg.contains("diverged in round") && msg.contains("learning_rate"),
                    "{name}: {msg}"
                )
            }
            Err(e) => panic!("{name}: unexpected error {e}"),
            Ok(m) => panic!(
                "{name}: a model came back, predictions finite: {}",
                predict(&m, &x, p).iter().all(|v| v.is_finite())
            ),
        }
    }
}

/// Regression targets that vary by less than 1e-150 are refused (their
/// squared gradient sums underflowed: models without a split); constant
/// targets are still fine, and so are targets that vary by more.
#[test]
fn targets_too_close_together_are_refused() {
    let (n, p) = (200, 3);
    let x = common::features(n, p, 13);
    let y = common::regression(&x, p, 14);
    for loss in [Loss::Squared, Loss::Huber, Loss::Gaussian] {
        let tiny: Vec<f64> = y.iter().map(|v| v * 1e-200).collect();
        let e = fit(&params(loss), &x, p, &tiny, None).unwrap_err();
        assert!(e.to_string().contains("rescale y"), "{loss:?}: {e}");
        let constant = vec![3.5; n];
        let m = fit(&params(loss), &x, p, &constant, None).unwrap();
        assert!(predict(&m, &x, p).iter().step_by(2).all(|&v| v == 3.5) || loss == Loss::Gaussian);
    }
    let small: Vec<f64> = y.iter().map(|v| v * 1e-120).collect();
    let m = fit(&params(Loss::Squared), &x, p, &small, None).unwrap();
    assert!(m.trees.iter().all(|t| t.n_leaves() > 1));
}

/// step='line_search' damps the exact line minimum: learning_rate > 1 is refused.
#[test]
fn line_search_learning_rate_is_at_most_one() {
    let (n, p) = (200, 3);
    let x = common::features(n, p, 15);
    let y = common::regression(&x, p, 16);
    let ls = |lr| BoosterParams {
        step: rgbm_rs::params::Step::LineSearch,
        learning_rate: lr,
        ..params(Loss::Squared)
    };
    let e = fit(&ls(50.0), &x, p, &y, None).unwrap_err();
    assert!(e.to_string().contains("must be <= 1"), "{e}");
    assert!(fit(&ls(1.0), &x, p, &y, None).is_ok());
}

/// Regression targets beyond ±1e150 are refused (their squared residuals
/// would overflow); up to it the fit stays finite.
#[test]
fn targets_beyond_1e150_are_refused() {
    let (n, p) = (200, 3);
    let x = common::features(n, p, 15);
    let y = common::regression(&x, p, 16);
    let top = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for loss in [Loss::Squared, Loss::Huber, Loss::Gaussian] {
        let huge: Vec<f64> = y.iter().map(|v| v / top * 2e150).collect();
        let e = fit(&params(loss), &x, p, &huge, None).unwrap_err();
        assert!(e.to_string().contains("rescale y"), "{loss:?}: {e}");
        let large: Vec<f64> = y.iter().map(|v| v / top * 1e150).collect();
        let m = fit(&params(loss), &x, p, &large, None).unwrap();
        assert!(predict(&m, &x, p).iter().all(|v| v.is_finite()), "{loss:?}");
    }
    // The message names the loss being fitted and its bound.
    let counts: Vec<f64> = y.iter().map(|v| (v / top).abs() * 2e150 + 1.0).collect();
    for (loss, bound) in [
        (Loss::Squared, "within ±1e150"),
        (Loss::Quantile, "within ±1e150"),
        (Loss::Poisson, "up to 1e150"),
        (Loss::Gamma, "up to 1e150"),
        (Loss::Tweedie, "up to 1e150"),
    ] {
        let e = fit(&params(loss), &x, p, &counts, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("loss='{}' takes targets {bound}", loss.name())),
            "{loss:?}: {e}"
        );
        assert!(!e.contains("squared loss"), "{loss:?}: {e}");
    }
}
