//! Multiclass softmax and evaluation sets with early stopping, end to end.
mod common;

use rgbm_rs::booster::{EvalSet, TrainingData, Unmonitored, train};
use rgbm_rs::params::{BoosterParams, Loss};
use rgbm_rs::{DenseMatrix, Model};

/// Three classes from the first two features (with label noise).
fn three_classes(x: &[f64], p: usize, seed: u64) -> Vec<f64> {
    let noise = common::features(x.len() / p, 1, seed);
    (0..x.len() / p)
        .map(|i| {
            let s = x[i * p] + 0.5 * x[i * p + 1] + 0.3 * noise[i];
            if s < -0.4 {
                0.0
            } else if s < 0.4 {
                1.0
            } else {
                2.0
            }
        })
        .collect()
}

fn softmax(k: usize) -> BoosterParams {
    BoosterParams {
        n_estimators: 15,
        loss: Loss::Softmax,
        n_classes: Some(k),
        max_depth: Some(6),
        min_samples_leaf: 1,
        random_state: 4,
        ..Default::default()
    }
}

fn fit(params: &BoosterParams, x: &[f64], p: usize, y: &[f64], w: Option<&[f64]>) -> Model {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    common::trained(params, &m, y, w).unwrap().model
}

fn accuracy(model: &Model, x: &[f64], p: usize, y: &[f64]) -> f64 {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    let raw = model.predict_raw(&m, None).unwrap();
    let k = model.n_outputs;
    let hits = raw.chunks(k).zip(y).filter(|(r, c)| {
        let arg = (0..k).max_by(|&a, &b| r[a].total_cmp(&r[b])).unwrap();
        arg as f64 == **c
    });
    hits.count() as f64 / y.len() as f64
}

#[test]
fn one_tree_per_class_per_round_and_it_learns() {
    let (n, p) = (1500, 4);
    let x = common::features(n, p, 1);
    let y = three_classes(&x, p, 2);
    let model = fit(
        &BoosterParams {
            n_estimators: 30,
            max_depth: Some(3),
            min_samples_leaf: 10,
            ..softmax(3)
        },
        &x,
        p,
        &y,
        None,
    );
    assert_eq!(model.n_outputs, 3);
    assert_eq!(model.trees.len(), 90);
    assert_eq!(model.n_rounds(), 30);
    let acc = accuracy(&model, &x, p, &y);
    assert!(acc > 0.85, "training accuracy {acc}");
    // The base scores are the log class frequencies.
    for (k, b) in model.base_score.iter().enumerate() {
        let freq = y.iter().filter(|&&c| c == k as f64).count() as f64 / n as f64;
        assert!((b - freq.ln()).abs() < 1e-12);
    }
}

#[test]
fn integer_weights_equal_repeated_rows() {
    // Deep trees on few rows make near-tied splits common: ties must not
    // depend on how the sums were rounded.
    let (n, p) = (30, 3);
    for seed in 0..40u64 {
        let x = common::features(n, p, 100 + seed);
        let y = three_classes(&x, p, 200 + seed);
        let w: Vec<f64> = (0..n).map(|i| ((i as u64 * 7 + seed) % 3) as f64).collect();
        let (mut xr, mut yr) = (Vec::new(), Vec::new());
        for i in 0..n {
            for _ in 0..w[i] as usize {
                xr.extend_from_slice(&x[i * p..(i + 1) * p]);
                yr.push(y[i]);
            }
        }
        // min_data_in_bin counts rows, as LightGBM's does, so only with 1
        // do two copies of a row bin as one row of weight 2.
        let params = BoosterParams {
            min_data_in_bin: Some(1),
            ..softmax(3)
        };
        let a = fit(&params, &x, p, &y, Some(&w));
        let b = fit(&params, &xr, p, &yr, None);
        let m = DenseMatrix::row_major(&x, n, p).unwrap();
        let (fa, fb) = (
            a.predict_raw(&m, None).unwrap(),
            b.predict_raw(&m, None).unwrap(),
        );
        let diff = fa
            .iter()
            .zip(&fb)
            .map(|(u, v)| (u - v).abs())
            .fold(0.0, f64::max);
        assert!(
            diff < 1e-9,
            "seed {seed}: weighted and repeated fits differ by {diff}"
        );
    }
}

#[test]
fn deterministic_across_thread_counts() {
    let (n, p) = (3000, 5);
    let x = common::features(n, p, 7);
    let y = three_classes(&x, p, 8);
    let base = BoosterParams {
        subsample: 0.7,
        langevin: true,
        temperature: 1e3,
        ..softmax(3)
    };
    let one = fit(
        &BoosterParams {
            n_jobs: Some(1),
            ..base.clone()
        },
        &x,
        p,
        &y,
        None,
    );
    let two = fit(
        &BoosterParams {
            n_jobs: Some(2),
            ..base.clone()
        },
        &x,
        p,
        &y,
        None,
    );
    assert!(
        one.trees == two.trees && one.base_score == two.base_score,
        "models differ between 1 and 2 threads"
    );
    let other = fit(
        &BoosterParams {
            random_state: 5,
            ..base.clone()
        },
        &x,
        p,
        &y,
        None,
    );
    assert!(one.trees != other.trees, "the seed must matter");
}

#[test]
fn early_stopping_keeps_the_argmin_of_the_validation_curve() {
    let (n, p) = (600, 4);
    let x = common::features(n, p, 9);
    let y = common::regression(&x, p, 10);
    let (xv, yv) = (
        common::features(400, p, 11),
        common::regression(&common::features(400, p, 11), p, 12),
    );
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let mv = DenseMatrix::row_major(&xv, yv.len(), p).unwrap();
    // Deep trees and a large step overfit quickly.
    let params = BoosterParams {
        n_estimators: 400,
        learning_rate: 0.5,
        max_depth: Some(8),
        min_samples_leaf: 1,
        early_stopping_rounds: Some(5),
        ..Default::default()
    };
    let sets = [EvalSet {
        name: "valid".into(),
        x: mv.into(),
        y: &yv,
        w: None,
        init_score: None,
        queries: None,
    }];
    let trained = TrainingData::new(&m, &y)
        .and_then(|d| train(&params, &d, &sets, &mut Unmonitored))
        .unwrap();
    let curve = &trained.evals[0].values;
    assert!(curve.len() < 400, "stopped after {} rounds", curve.len());
    let argmin = (0..curve.len())
        .min_by(|&a, &b| curve[a].total_cmp(&curve[b]))
        .unwrap();
    assert_eq!(trained.best_iteration, Some(argmin));
    assert_eq!(curve.len(), argmin + 6);
    assert_eq!(trained.model.n_rounds(), argmin + 1);
    // The recorded metric is the kept model's validation loss (mean squared error).
    let pred = trained
        .model
        .predict_raw(&DenseMatrix::row_major(&xv, yv.len(), p).unwrap(), None)
        .unwrap();
    let mse = pred
        .iter()
        .zip(&yv)
        .map(|(f, y)| (f - y).powi(2))
        .sum::<f64>()
        / yv.len() as f64;
    assert!((mse - curve[argmin]).abs() < 1e-9 * mse.max(1.0));
    // Early stopping without evaluation data is refused.
    assert!(common::trained(&params, &m, &y, None).is_err());
}

#[test]
fn gaussian_loss_learns_mean_and_spread() {
    // y = sin(x0) + noise whose scale grows with x1: both outputs must follow.
    let (n, p) = (4000, 2);
    let x = common::features(n, p, 21);
    let z = common::features(n, 1, 22);
    let clean = |i: usize| if x[i * p].is_nan() { 0.5 } else { x[i * p] };
    let scale = |i: usize| 0.1 + 0.4 * (x[i * p + 1] + 2.0);
    let noise = |i: usize| if z[i].is_nan() { 0.0 } else { z[i] / 1.2 };
    let y: Vec<f64> = (0..n)
        .map(|i| clean(i).sin() + scale(i) * noise(i))
        .collect();
    let params = BoosterParams {
        n_estimators: 150,
        loss: Loss::Gaussian,
        max_depth: Some(3),
        min_samples_leaf: 20,
        random_state: 1,
        ..Default::default()
    };
    let model = fit(&params, &x, p, &y, None);
    assert_eq!(model.n_outputs, 2);
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let raw = model.predict_raw(&m, None).unwrap();
    let sigma: Vec<f64> = raw.chunks(2).map(|r| r[1].exp()).collect();
    // Predicted σ grows with x1 (correlation with the true scale), and the mean fits.
    let corr = {
        let s: Vec<f64> = (0..n).map(scale).collect();
        let (ms, mp) = (
            s.iter().sum::<f64>() / n as f64,
            sigma.iter().sum::<f64>() / n as f64,
        );
        let cov: f64 = s.iter().zip(&sigma).map(|(a, b)| (a - ms) * (b - mp)).sum();
        let va: f64 = s.iter().map(|a| (a - ms).powi(2)).sum();
        let vb: f64 = sigma.iter().map(|b| (b - mp).powi(2)).sum();
        cov / (va * vb).sqrt()
    };
    assert!(corr > 0.8, "correlation of predicted and true sigma {corr}");
    let mse = raw
        .chunks(2)
        .enumerate()
        .map(|(i, r)| (r[0] - clean(i).sin()).powi(2))
        .sum::<f64>()
        / n as f64;
    assert!(mse < 0.02, "mean fit {mse}");
    // The constant step has no sigma to use; RGB has no multi-output form.
    assert!(
        BoosterParams {
            step: rgbm_rs::params::Step::Constant,
            leaf: rgbm_rs::params::Mode::Gradient,
            ..params.clone()
        }
        .validate()
        .is_err()
    );
}
